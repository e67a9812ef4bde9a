//! The viewer's private notes on accounts (`POST /api/v1/accounts/{id}/note`) and endorsements
//! (`POST .../endorse|unendorse`, the older `pin|unpin`; `GET /api/v1/endorsements` and
//! `GET /api/v1/accounts/{id}/endorsements`). Writes answer the Relationship after them.

use worker::Response;

use super::accounts::{relationship_of, users_page};
use crate::domain::ids::UserId;
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::account_marks as service;

/// Endorsement lists: Mastodon's default page size and its largest.
const DEFAULT_LIMIT: usize = 40;
const MAX_LIMIT: usize = 80;

pub async fn note(app: &App, input: &Input, viewer: UserId, id: UserId) -> ApiResult<Response> {
    let body = input.form_or_json(true)?;
    service::set_note(app, viewer, id, body.str("comment")?.unwrap_or("")).await?;
    relationship_of(app, viewer, id).await
}

pub async fn endorse(app: &App, viewer: UserId, id: UserId, on: bool) -> ApiResult<Response> {
    if on {
        service::endorse(app, viewer, id).await?;
    } else {
        service::unendorse(app, viewer, id).await?;
    }
    relationship_of(app, viewer, id).await
}

/// `user`'s endorsements (the viewer's own for `GET /api/v1/endorsements`), newest first, with
/// `Link` paging by a signed cursor.
pub async fn endorsements(
    app: &App,
    input: &Input,
    viewer: UserId,
    user: UserId,
    own: bool,
) -> ApiResult<Response> {
    let limit = input.query("limit").and_then(|l| l.trim().parse::<usize>().ok()).unwrap_or(DEFAULT_LIMIT);
    let limit = limit.clamp(1, MAX_LIMIT);
    let cursor_list = format!("mastodon:endorsements:{user}");
    let before = input.cursor_named("max_id", &app.cursors, viewer, &cursor_list)?;
    let rows = service::endorsed(app, viewer, user, before, limit).await?;
    let base = if own {
        format!("{}/api/v1/endorsements", input.origin)
    } else {
        format!("{}/api/v1/accounts/{user}/endorsements", input.origin)
    };
    users_page(app, input, viewer, rows, limit, &base, &cursor_list)
}
