//! Mutes: `POST /api/v1/accounts/{id}/mute|unmute` (the Relationship after it) and
//! `GET /api/v1/mutes` (`services/mutes.rs`).

use worker::Response;

use super::entities::{Account, Relationship};
use super::{json, list};
use crate::domain::ids::UserId;
use crate::domain::mastodon::{kept_params, limit};
use crate::domain::mutes::Mute;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::mutes;
use crate::store::graph;

/// `POST .../mute` with `notifications` and `duration` (form or JSON): the Relationship after it.
pub async fn mute(app: &App, input: &Input, viewer: UserId, id: UserId) -> ApiResult<Response> {
    let body = input.form_or_json(true)?;
    let mute = Mute::new(body.flag("notifications")?, body.whole("duration")?, app.now)?;
    mutes::mute(app, viewer, id, mute).await?;
    relationship(app, viewer, id).await
}

pub async fn unmute(app: &App, viewer: UserId, id: UserId) -> ApiResult<Response> {
    mutes::unmute(app, viewer, id).await?;
    relationship(app, viewer, id).await
}

async fn relationship(app: &App, viewer: UserId, id: UserId) -> ApiResult<Response> {
    let mutuals = graph::mutuals(&app.shards, viewer, &[id]).await?;
    json(&Relationship::from(mutuals.first().ok_or(ApiError::NotFound("no such account"))?))
}

/// The muted accounts, newest mute first; `Link` `next` carries a signed cursor in `max_id`.
pub async fn muted_accounts(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let before = input.cursor_named("max_id", &app.cursors, viewer, "mastodon:mutes")?;
    let (rows, next) = mutes::page(app, viewer, before, limit).await?;
    let items: Vec<Account> = rows.iter().map(|(u, _)| Account::new(&input.origin, u)).collect();
    let kept = kept_params(input.query("limit"));
    let link = next.map(|key| {
        let cursor = app.cursors.encode(viewer, "mastodon:mutes", key);
        let sep = if kept.is_empty() { String::new() } else { format!("&{kept}") };
        format!("<{}/api/v1/mutes?max_id={cursor}{sep}>; rel=\"next\"", input.origin)
    });
    list(&items, link)
}
