//! Discovery screens: trends (`/api/v1/trends/tags|statuses|links`), suggestions
//! (`/api/v1/suggestions`, `/api/v2/suggestions`) and the profile directory
//! (`/api/v1/directory`), from the rankings `services/discovery.rs` keeps.

use serde_json::{json, Value};
use worker::Response;

use super::entities::Account;
use super::{json, statuses_of};
use crate::domain::ids::UserId;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::DiscoveryRoute;
use crate::services::discovery;
use crate::store::discovery::Ranking;
use crate::store::users::UserRow;

pub async fn route(app: &App, input: &Input, viewer: UserId, route: DiscoveryRoute) -> ApiResult<Response> {
    match route {
        DiscoveryRoute::TrendingTags => {
            let (offset, limit) = (offset(input)?, bounded(input, 10, 20)?);
            let day = (app.now / 86_400_000 * 86_400).to_string();
            let tags = discovery::tags(app, offset, limit).await?;
            let items: Vec<Value> = tags
                .iter()
                .map(|t| {
                    let history = [json!({ "day": day, "uses": t.extra.to_string(), "accounts": t.score.to_string() })];
                    json!({ "id": t.name, "name": t.name, "url": format!("{}/tags/{}", input.origin, t.name), "history": history, "following": false })
                })
                .collect();
            json(&items)
        }
        DiscoveryRoute::TrendingStatuses => {
            let (offset, limit) = (offset(input)?, bounded(input, 20, 40)?);
            let posts = discovery::statuses(app, viewer, offset, limit).await?;
            json(&statuses_of(app, input, viewer, &posts).await?)
        }
        DiscoveryRoute::TrendingLinks => json(&Vec::<Value>::new()),
        DiscoveryRoute::Suggestions { v2 } => {
            let limit = bounded(input, 40, 80)?;
            let users = discovery::accounts(app, viewer, Ranking::Popular, 0, limit, true).await?;
            let accounts = entities(input, &users);
            if !v2 {
                return json(&accounts);
            }
            let items: Vec<Value> = accounts
                .into_iter()
                .map(
                    |account| json!({ "source": "global", "sources": ["most_followed"], "account": account }),
                )
                .collect();
            json(&items)
        }
        DiscoveryRoute::Directory => {
            let ranking = match input.query("order").map(str::trim) {
                None | Some("") | Some("active") => Ranking::Active,
                Some("new") => Ranking::Newest,
                Some(_) => return Err(ApiError::field("order", "order must be active or new")),
            };
            let (offset, limit) = (offset(input)?, bounded(input, 40, 80)?);
            json(&entities(input, &discovery::accounts(app, viewer, ranking, offset, limit, false).await?))
        }
    }
}

fn entities(input: &Input, users: &[UserRow]) -> Vec<Account> {
    users.iter().map(|u| Account::new(&input.origin, u)).collect()
}

/// `limit`: `default` when absent, refused outside 1..=`max` (a number that is no number too).
fn bounded(input: &Input, default: usize, max: usize) -> ApiResult<usize> {
    match input.query("limit").map(str::trim) {
        None | Some("") => Ok(default),
        Some(raw) => raw
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .map(|n| n.min(max))
            .ok_or_else(|| ApiError::field("limit", "limit must be a positive number")),
    }
}

/// `offset`: how many of the ranking to skip (at most 1,000: rankings are short).
fn offset(input: &Input) -> ApiResult<usize> {
    match input.query("offset").map(str::trim) {
        None | Some("") => Ok(0),
        Some(raw) => raw
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= 1_000)
            .ok_or_else(|| ApiError::field("offset", "offset must be a number from 0 to 1000")),
    }
}
