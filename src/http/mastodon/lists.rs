//! Lists: named sets of followed accounts, each with its timeline (the feed read over the
//! list's members: `services/feed.rs`, `FeedScope::List`). Many-to-many, unlike `/v1` follow
//! groups (one name per follow); both stay. All on the owner's home database; a list id is
//! only ever looked up with its owner, so someone else's list is 404 like a missing one.

use serde::Serialize;
use worker::Response;

use super::accounts::users_page;
use super::statuses::{timeline as read_timeline, Feed};
use super::{json, list};
use crate::domain::ids::{ListId, UserId};
use crate::domain::lists::{RepliesPolicy, MAX_LIST_ACCOUNTS};
use crate::domain::mastodon::limit;
use crate::domain::validate::{Invalid, ListTitle};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::services::feed::FeedScope;
use crate::services::lists::{self as service, LIST_FULL, NOT_FOUND};
use crate::services::users::visible_with_relationship;
use crate::store::graph::shown_user_page;
use crate::store::lists::{self as store, ListFields, ListRow};
use crate::store::users::UserKey;

/// Mastodon's List entity.
#[derive(Serialize)]
struct List {
    id: String,
    title: String,
    replies_policy: String,
    exclusive: bool,
}

impl From<&ListRow> for List {
    fn from(row: &ListRow) -> Self {
        let ListRow { id, title, replies_policy, exclusive } = row;
        Self {
            id: id.to_string(),
            title: title.clone(),
            replies_policy: replies_policy.clone(),
            exclusive: *exclusive != 0,
        }
    }
}

fn answer(row: &ListRow) -> ApiResult<Response> {
    json(&List::from(row))
}

fn parse_policy(text: &str) -> Result<RepliesPolicy, Invalid> {
    RepliesPolicy::parse(text)
        .ok_or_else(|| Invalid::new("replies_policy", "replies_policy must be followed, list or none"))
}

/// A create's or update's fields (form or JSON); a create needs the title.
fn fields(body: &JsonObject, creating: bool) -> ApiResult<ListFields> {
    let title = match body.str("title")? {
        None if !creating => None,
        text => Some(ListTitle::parse(text.unwrap_or(""))?),
    };
    let replies_policy = body.optional("replies_policy", parse_policy)?;
    Ok(ListFields { title, replies_policy, exclusive: body.flag("exclusive")? })
}

pub async fn all(app: &App, viewer: UserId) -> ApiResult<Response> {
    let rows = store::all_of(app.user_db(viewer), viewer).await?;
    json(&rows.iter().map(List::from).collect::<Vec<_>>())
}

pub async fn create(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let fields = fields(&input.form_or_json(false)?, true)?;
    answer(&service::create(app, viewer, &fields).await?)
}

pub async fn get(app: &App, viewer: UserId, id: ListId) -> ApiResult<Response> {
    answer(&service::owned(app, viewer, id).await?)
}

pub async fn update(app: &App, input: &Input, viewer: UserId, id: ListId) -> ApiResult<Response> {
    let fields = fields(&input.form_or_json(true)?, false)?;
    answer(&service::update(app, viewer, id, &fields).await?)
}

pub async fn delete(app: &App, viewer: UserId, id: ListId) -> ApiResult<Response> {
    service::delete(app, viewer, id).await?;
    json(&serde_json::json!({}))
}

/// `account_ids[]` of an add or remove: ids that do not parse name no account the viewer
/// follows (404, as Mastodon's lookup among the followed).
fn account_ids(input: &Input) -> ApiResult<Vec<UserId>> {
    let values = input.values_of("account_ids")?;
    if values.is_empty() {
        return Err(ApiError::field("account_ids", "account_ids is required"));
    }
    if values.len() > MAX_LIST_ACCOUNTS {
        return Err(LIST_FULL);
    }
    values.iter().map(|v| UserId::parse(v).ok_or(NOT_FOUND)).collect()
}

/// Adds followed accounts, all or none (see [`service::add_accounts`]).
pub async fn add_accounts(app: &App, input: &Input, viewer: UserId, id: ListId) -> ApiResult<Response> {
    service::add_accounts(app, viewer, id, &account_ids(input)?).await?;
    json(&serde_json::json!({}))
}

pub async fn remove_accounts(app: &App, input: &Input, viewer: UserId, id: ListId) -> ApiResult<Response> {
    let asked: Vec<UserId> =
        input.values_of("account_ids")?.iter().filter_map(|v| UserId::parse(v)).collect();
    service::remove_accounts(app, viewer, id, &asked).await?;
    json(&serde_json::json!({}))
}

/// The list's members the viewer may see, newest membership first; `max_id` carries the
/// list's signed cursor (as follower lists do); `limit=0` answers all of them at once.
pub async fn accounts(app: &App, input: &Input, viewer: UserId, id: ListId) -> ApiResult<Response> {
    let every = input.query("limit").is_some_and(|l| l.trim() == "0");
    let limit = if every { MAX_LIST_ACCOUNTS } else { limit(input.query("limit")) };
    let cursor_list = format!("mastodon:list:{id}");
    let before = input.cursor_named("max_id", &app.cursors, viewer, &cursor_list)?;
    service::owned(app, viewer, id).await?;
    let db = app.user_db(viewer);
    let rows = shown_user_page(&app.shards, viewer, before, limit, |before, want| {
        store::member_page(db, viewer, id, before, want)
    })
    .await?;
    let base = format!("{}/api/v1/lists/{id}/accounts", input.origin);
    users_page(app, input, viewer, rows, limit, &base, &cursor_list)
}

/// `GET /api/v1/timelines/list/{id}`: the feed read over the list's members (not the viewer's
/// own posts), with the home timeline's paging.
pub async fn timeline(app: &App, input: &Input, viewer: UserId, id: ListId) -> ApiResult<Response> {
    service::owned(app, viewer, id).await?;
    let feed = Feed { viewer, scope: &FeedScope::List(id), filters: None };
    read_timeline(app, input, &feed, &format!("timelines/list/{id}")).await
}

/// `GET /api/v1/accounts/{id}/lists`: the viewer's lists that hold the account.
pub async fn holding(app: &App, viewer: UserId, account: UserId) -> ApiResult<Response> {
    visible_with_relationship(app, viewer, UserKey::Id(account)).await?;
    let rows = store::holding(app.user_db(viewer), viewer, account).await?;
    list(&rows.iter().map(List::from).collect::<Vec<_>>(), None)
}
