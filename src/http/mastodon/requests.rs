//! Mastodon 4.3's notification policy (`/api/v2/notifications/policy`) and notification
//! requests (`/api/v1/notifications/requests`): a notification whose actor the policy filters is
//! written `filtered` (held out of every list and count) and `drop` never writes it
//! (`store/notifications.rs::policy_sql`); each actor's filtered notifications are one request,
//! named by the actor's account id. Accepting merges them into the lists at once (so `merged`
//! is always true) and lets the actor's later ones pass; dismissing deletes them.

use serde::Serialize;
use worker::Response;

use super::entities::Account;
use super::{accounts_of, json, list};
use crate::domain::ids::UserId;
use crate::domain::mastodon::link_header;
use crate::domain::snowflake::snowflake_time;
use crate::domain::time::format_rfc3339;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::store::notification_requests::{self as store, PolicyFields, PolicyRow, RequestRow};

const NOT_FOUND: ApiError = ApiError::NotFound("Record not found");

/// Mastodon's NotificationPolicy (v2).
#[derive(Serialize)]
struct Policy {
    for_not_following: String,
    for_not_followers: String,
    for_new_accounts: String,
    for_private_mentions: String,
    for_limited_accounts: String,
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    pending_requests_count: i64,
    pending_notifications_count: i64,
}

fn answer_policy(row: Option<PolicyRow>) -> ApiResult<Response> {
    let row = row.ok_or_else(|| ApiError::Internal("the policy read gave no row".into()))?;
    json(&Policy {
        for_not_following: row.for_not_following,
        for_not_followers: row.for_not_followers,
        for_new_accounts: row.for_new_accounts,
        for_private_mentions: row.for_private_mentions,
        for_limited_accounts: row.for_limited_accounts,
        summary: Summary {
            pending_requests_count: row.pending_requests,
            pending_notifications_count: row.pending_notifications,
        },
    })
}

pub async fn policy(app: &App, viewer: UserId) -> ApiResult<Response> {
    answer_policy(store::policy(app.user_db(viewer), viewer).await?)
}

/// One value: `accept`, `filter` or `drop` (422 otherwise); absent or `null` keeps it.
fn value<'a>(body: &'a JsonObject, name: &'static str) -> ApiResult<Option<&'a str>> {
    match body.str(name)? {
        None => Ok(None),
        Some(v @ ("accept" | "filter" | "drop")) => Ok(Some(v)),
        Some(_) => Err(ApiError::field(name, format!("{name} must be accept, filter or drop"))),
    }
}

/// `PUT` or `PATCH /api/v2/notifications/policy`: the values given; the policy as it is now.
pub async fn set_policy(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let body = input.form_or_json(true)?;
    let fields = PolicyFields {
        for_not_following: value(&body, "for_not_following")?,
        for_not_followers: value(&body, "for_not_followers")?,
        for_new_accounts: value(&body, "for_new_accounts")?,
        for_private_mentions: value(&body, "for_private_mentions")?,
        for_limited_accounts: value(&body, "for_limited_accounts")?,
    };
    answer_policy(store::set_policy(app.user_db(viewer), viewer, &fields, app.now).await?)
}

/// Mastodon 4.2's v1 policy: each criterion filters (`filter` or `drop` in v2) or not.
#[derive(Serialize)]
struct V1Policy {
    filter_not_following: bool,
    filter_not_followers: bool,
    filter_new_accounts: bool,
    filter_private_mentions: bool,
    summary: Summary,
}

/// `GET` and `PUT /api/v1/notifications/policy`: booleans over the same row (`true` sets
/// `filter`, `false` `accept`).
pub async fn v1_policy(app: &App, input: &Input, viewer: UserId, put: bool) -> ApiResult<Response> {
    let db = app.user_db(viewer);
    let row = if put {
        let body = input.form_or_json(true)?;
        let flag = |name: &'static str| -> ApiResult<Option<&'static str>> {
            Ok(body.flag(name)?.map(|on| if on { "filter" } else { "accept" }))
        };
        let fields = PolicyFields {
            for_not_following: flag("filter_not_following")?,
            for_not_followers: flag("filter_not_followers")?,
            for_new_accounts: flag("filter_new_accounts")?,
            for_private_mentions: flag("filter_private_mentions")?,
            for_limited_accounts: None,
        };
        store::set_policy(db, viewer, &fields, app.now).await?
    } else {
        store::policy(db, viewer).await?
    };
    let row = row.ok_or_else(|| ApiError::Internal("the policy read gave no row".into()))?;
    json(&V1Policy {
        filter_not_following: row.for_not_following != "accept",
        filter_not_followers: row.for_not_followers != "accept",
        filter_new_accounts: row.for_new_accounts != "accept",
        filter_private_mentions: row.for_private_mentions != "accept",
        summary: Summary {
            pending_requests_count: row.pending_requests,
            pending_notifications_count: row.pending_notifications,
        },
    })
}

/// Mastodon's NotificationRequest (without `last_status`, which Mastodon marks optional).
#[derive(Serialize)]
struct Request {
    id: String,
    created_at: String,
    updated_at: String,
    account: Account,
    /// A string, as Mastodon answers it.
    notifications_count: String,
}

async fn render(app: &App, input: &Input, rows: &[RequestRow]) -> ApiResult<Vec<Request>> {
    let accounts = accounts_of(app, input, rows.iter().map(|r| r.actor_id).collect()).await?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            let at = format_rfc3339(snowflake_time(r.last_id));
            Some(Request {
                id: r.actor_id.to_string(),
                created_at: at.clone(),
                updated_at: at,
                account: accounts.get(&r.actor_id)?.clone(),
                notifications_count: r.count.to_string(),
            })
        })
        .collect())
}

/// `GET /api/v1/notifications/requests`: newest first, paged by `max_id` (a request's newest
/// notification id, as `Link` gives it).
pub async fn requests(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = super::notifications::notification_limit(input.query("limit"));
    let below = input.query("max_id").and_then(crate::domain::ids::parse_id);
    let mut rows = store::requests(app.user_db(viewer), viewer, None, (below, limit + 1)).await?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let items = render(app, input, &rows).await?;
    let base = format!("{}/api/v1/notifications/requests", input.origin);
    let oldest = rows.last().map(|r| r.last_id.to_string());
    let kept = input.query("limit").map(|l| format!("limit={l}")).unwrap_or_default();
    list(&items, link_header(&base, &kept, None, oldest.as_deref(), more))
}

pub async fn request(app: &App, input: &Input, viewer: UserId, actor: UserId) -> ApiResult<Response> {
    let rows = store::requests(app.user_db(viewer), viewer, Some(actor), (None, 1)).await?;
    let mut items = render(app, input, &rows).await?;
    json(&items.pop().ok_or(NOT_FOUND)?)
}

/// Accepts or dismisses one request (404 when there is none).
pub async fn answer(app: &App, viewer: UserId, actor: UserId, accept: bool) -> ApiResult<Response> {
    let db = app.user_db(viewer);
    if store::requests(db, viewer, Some(actor), (None, 1)).await?.is_empty() {
        return Err(NOT_FOUND);
    }
    answer_all(app, viewer, &[actor], accept).await
}

/// `POST .../requests/accept` and `.../dismiss` with `id[]`: the ones named (ids that name no
/// request change nothing).
pub async fn answer_many(app: &App, input: &Input, viewer: UserId, accept: bool) -> ApiResult<Response> {
    let mut actors: Vec<UserId> = input.values_of("id")?.iter().filter_map(|v| UserId::parse(v)).collect();
    actors.truncate(100);
    answer_all(app, viewer, &actors, accept).await
}

async fn answer_all(app: &App, viewer: UserId, actors: &[UserId], accept: bool) -> ApiResult<Response> {
    let db = app.user_db(viewer);
    if accept {
        store::accept(db, viewer, actors, app.now).await?;
    } else {
        store::dismiss(db, viewer, actors).await?;
    }
    json(&serde_json::json!({}))
}
