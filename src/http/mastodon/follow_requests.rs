//! Follow requests to the viewer's locked account: `GET /api/v1/follow_requests` (newest first,
//! `Link` paging with a signed cursor as the follow lists), `GET /api/v1/follow_requests/{id}`,
//! and `POST .../{id}/authorize|reject` (answer: the Relationship after it).

use worker::Response;

use super::accounts::{relationship_of, users_page};
use super::entities::Account;
use super::json;
use crate::domain::ids::UserId;
use crate::domain::mastodon::limit;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::follows;
use crate::store::{follow_requests, graph};

pub async fn list(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let cursor_list = format!("mastodon:follow_requests:{viewer}");
    let before = input.cursor_named("max_id", &app.cursors, viewer, &cursor_list)?;
    let edges = follow_requests::page(app.user_db(viewer), viewer, before, limit + 1).await?;
    let rows = graph::shown_edges(&app.shards, viewer, &edges).await?;
    let base = format!("{}/api/v1/follow_requests", input.origin);
    users_page(app, input, viewer, rows, limit, &base, &cursor_list)
}

/// The account of one pending request, or `404`.
pub async fn get(app: &App, input: &Input, viewer: UserId, id: UserId) -> ApiResult<Response> {
    let missing = || ApiError::NotFound("no such follow request");
    if !follow_requests::exists(app.user_db(viewer), viewer, id).await? {
        return Err(missing());
    }
    let edge = crate::store::EdgeKey { other: id, sort_at: 0 };
    let rows = graph::shown_edges(&app.shards, viewer, &[edge]).await?;
    json(&Account::new(&input.origin, rows.first().ok_or_else(missing)?))
}

pub async fn authorize(app: &App, viewer: UserId, id: UserId) -> ApiResult<Response> {
    follows::authorize(app, viewer, id).await?;
    relationship_of(app, viewer, id).await
}

/// Idempotent: rejecting a request already gone answers the same Relationship.
pub async fn reject(app: &App, viewer: UserId, id: UserId) -> ApiResult<Response> {
    follows::drop_request(app, viewer, id).await?;
    relationship_of(app, viewer, id).await
}
