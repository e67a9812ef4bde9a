//! `/v1/notifications`: the viewer's notifications (follows, likes of and comments on their
//! posts), newest first with a signed cursor, the unread count above their read marker, and
//! dismiss and clear. What is hidden now (blocks, suspensions, deleted or taken-down posts,
//! deleted comments) is never listed, however old the row.

use worker::Response;

use super::{json, page};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{parse_id, NotificationId, UserId, MAX_ID};
use crate::domain::notifications::{Kind, KindFilter};
use crate::domain::snowflake::snowflake_time;
use crate::domain::validate::Invalid;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::views::{MarkerView, NotificationView, UnreadView};
use crate::services::notifications::{self as service, Hydrated};
use crate::store::markers::{self, Timeline};
use crate::store::notifications::Range;

/// The most an unread count counts (`?limit=`, default 100): a badge says "99+" long before.
const MAX_UNREAD: usize = 1000;
const DEFAULT_UNREAD: usize = 100;

fn kinds(input: &Input) -> ApiResult<KindFilter> {
    match input.query("kinds") {
        None => Ok(KindFilter::default()),
        Some(list) => KindFilter::parse_v1(list).ok_or_else(|| {
            ApiError::from(Invalid::new(
                "kinds",
                format!("kinds is a comma-separated list of {}", Kind::v1_names()),
            ))
        }),
    }
}

fn key(n: &Hydrated) -> SortKey {
    SortKey::new(snowflake_time(n.id), n.id)
}

/// `GET /v1/notifications?kinds=&limit=&cursor=`.
pub async fn list(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let kinds = kinds(input)?;
    let list = format!("notifications:{}", kinds.key());
    let before = input.cursor(&app.cursors, viewer, &list)?;
    let range =
        Range { kinds: &kinds, actor: None, below: before.map(|k| k.id), above: None, oldest_first: false };
    let rows = service::page(app, viewer, &range, limit).await?;
    json(200, &page(rows, limit, key, |n| NotificationView::from(n), &app.cursors, viewer, &list))
}

fn parse_cap(text: &str) -> Result<usize, Invalid> {
    text.parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_UNREAD).contains(n) && !text.starts_with('+'))
        .ok_or_else(|| Invalid::new("limit", "limit must be an integer from 1 to 1000"))
}

/// `GET /v1/notifications/unread?kinds=&limit=`.
pub async fn unread(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let cap = input.query_as("limit", parse_cap)?.unwrap_or(DEFAULT_UNREAD);
    let kinds = kinds(input)?;
    let (unread, marker) = futures_util::future::join(
        service::unread(app, viewer, &kinds, cap),
        markers::get(app.user_db(viewer), viewer, &[Timeline::Notifications]),
    )
    .await;
    let (count, capped) = unread?;
    let last_read_id = marker?.first().map(|m| m.last_read_id.to_string());
    json(200, &UnreadView { count, capped, last_read_id })
}

/// `PUT /v1/notifications/marker {"last_read_id": "..."}`: where the viewer stopped reading.
pub async fn set_marker(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let id = input.json(false)?.required_id("last_read_id", parse_id)?;
    let stored =
        markers::set(app.user_db(viewer), viewer, &[(Timeline::Notifications, id.min(MAX_ID))], app.now)
            .await?;
    let marker = stored.first().ok_or_else(|| ApiError::Internal("marker write returned nothing".into()))?;
    json(200, &MarkerView::from(marker))
}

/// `DELETE /v1/notifications/{id}`: 204, or 404 when the viewer has no such notification.
pub async fn dismiss(app: &App, viewer: UserId, id: NotificationId) -> ApiResult<Response> {
    if !service::dismiss(app, viewer, id.get()).await? {
        return Err(ApiError::NotFound("no such notification"));
    }
    Ok(Response::empty()?.with_status(204))
}

/// `DELETE /v1/notifications`: clears them all.
pub async fn clear(app: &App, viewer: UserId) -> ApiResult<Response> {
    service::clear(app, viewer).await?;
    Ok(Response::empty()?.with_status(204))
}
