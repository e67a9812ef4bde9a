//! Scheduled statuses (`services/scheduled.rs`): `GET /api/v1/scheduled_statuses` (by id,
//! `max_id` / `since_id` / `min_id`, `Link`), `GET`, `PUT` (a new `scheduled_at`) and `DELETE`
//! of one. They are made by `POST /api/v1/statuses` with `scheduled_at` (`statuses.rs`).

use worker::Response;

use super::entities::ScheduledStatus;
use super::{json, list};
use crate::domain::ids::{parse_id, ScheduledId, UserId};
use crate::domain::mastodon::{kept_params, limit, link_header};
use crate::domain::scheduled::scheduled_at;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::ScheduledRoute;
use crate::services::scheduled::{self, Shown};
use crate::store::scheduled::Bounds;

pub async fn route(app: &App, input: &Input, viewer: UserId, route: ScheduledRoute) -> ApiResult<Response> {
    match route {
        ScheduledRoute::List => page(app, input, viewer).await,
        ScheduledRoute::Get(id) => json(&entity(&input.origin, &scheduled::get(app, viewer, id).await?)),
        ScheduledRoute::Reschedule(id) => reschedule(app, input, viewer, id).await,
        ScheduledRoute::Cancel(id) => {
            scheduled::cancel(app, viewer, id).await?;
            json(&serde_json::json!({}))
        }
    }
}

/// A scheduled post as Mastodon's entity.
pub(super) fn entity(origin: &str, shown: &Shown) -> ScheduledStatus {
    ScheduledStatus::new(origin, (shown.row.id, shown.row.scheduled_at), &shown.params, &shown.media)
}

/// An id bound of the query: absent (or empty), or an id (else 422).
fn bound(input: &Input, name: &'static str) -> ApiResult<Option<i64>> {
    match input.query(name).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(raw) => parse_id(raw).map(Some).ok_or_else(|| ApiError::field(name, "not an id")),
    }
}

async fn page(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let min_id = bound(input, "min_id")?;
    let bounds = Bounds {
        max: bound(input, "max_id")?,
        min: min_id.or(bound(input, "since_id")?),
        oldest_first: min_id.is_some(),
    };
    let limit = limit(input.query("limit"));
    let mut rows = scheduled::page(app, viewer, bounds, limit).await?;
    let full = rows.len() == limit;
    if bounds.oldest_first {
        rows.reverse();
    }
    let newest = rows.first().map(|s| s.row.id.to_string());
    let oldest = rows.last().map(|s| s.row.id.to_string());
    // Above `min_id` the page is the oldest ones: older ones certainly follow below it.
    let more = full || (bounds.oldest_first && !rows.is_empty());
    let base = format!("{}/api/v1/scheduled_statuses", input.origin);
    let link =
        link_header(&base, &kept_params(input.query("limit")), newest.as_deref(), oldest.as_deref(), more);
    let items: Vec<ScheduledStatus> = rows.iter().map(|s| entity(&input.origin, s)).collect();
    list(&items, link)
}

/// `PUT`: `scheduled_at` moves it (the same bounds as scheduling); without one it is answered
/// unchanged, as Mastodon does.
async fn reschedule(app: &App, input: &Input, viewer: UserId, id: ScheduledId) -> ApiResult<Response> {
    let body = input.form_or_json(true)?;
    let shown = match body.str("scheduled_at")?.map(str::trim) {
        None | Some("") => scheduled::get(app, viewer, id).await?,
        Some(raw) => scheduled::reschedule(app, viewer, id, scheduled_at(raw, app.now)?).await?,
    };
    json(&entity(&input.origin, &shown))
}
