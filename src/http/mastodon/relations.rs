//! The viewer's relations as lists: `GET /api/v1/blocks`, `POST .../remove_from_followers` and
//! `GET /api/v1/accounts/familiar_followers` (`services/follows.rs`).

use serde::Serialize;
use worker::Response;

use super::entities::{Account, Relationship};
use super::{json, list};
use crate::domain::ids::UserId;
use crate::domain::mastodon::{kept_params, limit};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::follows;
use crate::store::graph;

/// The blocked accounts, newest block first; `Link` `next` carries a signed cursor in `max_id`
/// (blocks have no ids of their own), as the mutes list does.
pub async fn blocked_accounts(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let before = input.cursor_named("max_id", &app.cursors, viewer, "mastodon:blocks")?;
    let (rows, next) = follows::blocked_page(app, viewer, before, limit).await?;
    let items: Vec<Account> = rows.iter().map(|u| Account::new(&input.origin, u)).collect();
    let kept = kept_params(input.query("limit"));
    let link = next.map(|key| {
        let cursor = app.cursors.encode(viewer, "mastodon:blocks", key);
        let sep = if kept.is_empty() { String::new() } else { format!("&{kept}") };
        format!("<{}/api/v1/blocks?max_id={cursor}{sep}>; rel=\"next\"", input.origin)
    });
    list(&items, link)
}

/// `POST /api/v1/accounts/{id}/remove_from_followers`: the Relationship after it.
pub async fn remove_from_followers(app: &App, viewer: UserId, id: UserId) -> ApiResult<Response> {
    follows::remove_follower(app, viewer, id).await?;
    let mutuals = graph::mutuals(&app.shards, viewer, &[id]).await?;
    json(&Relationship::from(mutuals.first().ok_or(ApiError::NotFound("no such account"))?))
}

/// Mastodon's `FamiliarFollowers` entity.
#[derive(Serialize)]
struct Familiar {
    id: String,
    accounts: Vec<Account>,
}

/// The most ids one familiar-followers request asks about (as `relationships`).
const MAX_IDS: usize = 40;

/// `?id[]=1&id[]=2` (or `id=`): for each well-formed id, in the order asked (repeats once), the
/// accounts the viewer follows that follow it. Ids that do not parse are left out.
pub async fn familiar_followers(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let mut ids: Vec<UserId> = Vec::new();
    for id in input.query_all("id[]").chain(input.query_all("id")).filter_map(UserId::parse) {
        if !ids.contains(&id) && ids.len() < MAX_IDS {
            ids.push(id);
        }
    }
    let found = follows::familiar_followers(app, viewer, &ids).await?;
    let answer: Vec<Familiar> = found
        .iter()
        .map(|(id, users)| Familiar {
            id: id.to_string(),
            accounts: users.iter().map(|u| Account::new(&input.origin, u)).collect(),
        })
        .collect();
    json(&answer)
}
