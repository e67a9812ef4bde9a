//! Mastodon's notifications (`/api/v1/notifications`) on edgefeed's: `follow`, `favourite`
//! (a like of your post) and `mention` (a comment on your post: edgefeed's replies), with
//! Mastodon's id bounds and `Link` paging, `types[]` / `exclude_types[]`, dismiss and clear.

use worker::Response;

use super::entities::{notified_posts, Notification};
use super::{accounts_and_marks, filters_for, json, list};
use crate::domain::filters::Context;
use crate::domain::ids::{parse_id, NotificationId, UserId};
use crate::domain::mastodon::link_header;
use crate::domain::notifications::KindFilter;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::filters;
use crate::services::notifications::{self as service, Hydrated};
use crate::store::notifications::Range;

/// Mastodon's limits for notifications: 40 by default, at most 80 (clamped, not refused).
pub(super) fn notification_limit(raw: Option<&str>) -> usize {
    raw.and_then(|v| v.trim().parse::<i64>().ok()).map_or(40, |n| n.clamp(1, 80) as usize)
}

/// Mastodon's unread count: 100 by default, at most 1000.
pub(super) fn unread_limit(raw: Option<&str>) -> usize {
    raw.and_then(|v| v.trim().parse::<i64>().ok()).map_or(100, |n| n.clamp(1, 1000) as usize)
}

async fn render(app: &App, input: &Input, viewer: UserId, rows: &[Hydrated]) -> ApiResult<Vec<Notification>> {
    let mut ids: Vec<UserId> = rows.iter().map(|n| n.actor.id).collect();
    ids.push(viewer);
    let posts = notified_posts(rows);
    let (page, applied) = futures_util::future::join(
        accounts_and_marks(app, input, viewer, ids, &posts),
        filters_for(app, viewer, Context::Notifications),
    )
    .await;
    let ((accounts, marked), applied) = (page?, applied?);
    Ok(rows
        .iter()
        .filter_map(|n| {
            let filtered = filters::of_notification(&applied, viewer, n)?;
            Some(Notification::new(&input.origin, &accounts, n, &marked).filtered(filtered))
        })
        .collect())
}

fn bound(input: &Input, name: &'static str) -> ApiResult<Option<i64>> {
    match input.query(name) {
        None | Some("") => Ok(None),
        Some(id) => {
            parse_id(id).map(Some).ok_or_else(|| ApiError::field(name, format!("{name} must be an id")))
        }
    }
}

/// Mastodon's id bounds, strict: below `max_id`, above the higher of `since_id` and `min_id`;
/// `min_id` reads upward from it (the oldest first).
pub(super) struct Bounds {
    pub below: Option<i64>,
    pub above: Option<i64>,
    pub oldest_first: bool,
}

pub(super) fn bounds(input: &Input) -> ApiResult<Bounds> {
    let min = bound(input, "min_id")?;
    let above = match bound(input, "since_id")? {
        Some(since) => Some(min.map_or(since, |m| m.max(since))),
        None => min,
    };
    Ok(Bounds { below: bound(input, "max_id")?, above, oldest_first: min.is_some() })
}

/// `types[]` (or `types`) values, as Mastodon clients send arrays.
pub(super) fn array(input: &Input, name: &str) -> Vec<String> {
    let bracketed = format!("{name}[]");
    input.query_all(&bracketed).chain(input.query_all(name)).map(str::to_string).collect()
}

/// The query parameters a `Link` keeps: `limit`, the `arrays` (`types[]`, `exclude_types[]`
/// and, grouped, `grouped_types[]`), `account_id`.
pub(super) fn kept(input: &Input, arrays: &[&str]) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    if let Some(limit) = input.query("limit") {
        out.append_pair("limit", limit);
    }
    for name in arrays {
        for value in array(input, name) {
            out.append_pair(&format!("{name}[]"), &value);
        }
    }
    if let Some(account) = input.query("account_id") {
        out.append_pair("account_id", account);
    }
    out.finish()
}

/// `GET /api/v1/notifications`: `max_id` / `since_id` / `min_id` bound the ids strictly (any
/// combination answers what lies between); `min_id` reads upward from it (the oldest first,
/// answered newest first), the others down from the top.
pub async fn list_all(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = notification_limit(input.query("limit"));
    let kinds = KindFilter::from_mastodon(&array(input, "types"), &array(input, "exclude_types"));
    let actor = bound(input, "account_id")?.map(UserId::from_trusted);
    let Bounds { below, above, oldest_first } = bounds(input)?;
    let range = Range { kinds: &kinds, actor, below, above, oldest_first };
    let mut rows =
        if kinds.kinds().is_empty() { Vec::new() } else { service::page(app, viewer, &range, limit).await? };
    let more = rows.len() > limit;
    rows.truncate(limit);
    if oldest_first {
        rows.reverse();
    }
    let items = render(app, input, viewer, &rows).await?;
    let newest = rows.first().map(|n| n.id.to_string());
    let oldest = rows.last().map(|n| n.id.to_string());
    let base = format!("{}/api/v1/notifications", input.origin);
    let link = link_header(
        &base,
        &kept(input, &["types", "exclude_types"]),
        newest.as_deref(),
        oldest.as_deref(),
        more || oldest_first,
    );
    list(&items, link)
}

/// `GET /api/v1/notifications/{id}`: 404 for one that is not the viewer's or is hidden now.
pub async fn get(app: &App, input: &Input, viewer: UserId, id: NotificationId) -> ApiResult<Response> {
    let found = service::one(app, viewer, id.get()).await?.ok_or(ApiError::NotFound("Record not found"))?;
    let mut rendered = render(app, input, viewer, std::slice::from_ref(&found)).await?;
    json(&rendered.pop())
}

pub async fn clear(app: &App, viewer: UserId) -> ApiResult<Response> {
    service::clear(app, viewer).await?;
    json(&serde_json::json!({}))
}

pub async fn dismiss(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    if !service::dismiss(app, viewer, id).await? {
        return Err(ApiError::NotFound("Record not found"));
    }
    json(&serde_json::json!({}))
}

/// `POST /api/v1/notifications/dismiss` with `id` in the body (Mastodon before 3.1).
pub async fn dismiss_legacy(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let id = input.form_or_json(false)?.required_id("id", parse_id)?;
    dismiss(app, viewer, id).await
}

/// `GET /api/v1/notifications/unread_count`: above the `notifications` marker.
pub async fn unread_count(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let kinds = KindFilter::from_mastodon(&array(input, "types"), &array(input, "exclude_types"));
    let cap = unread_limit(input.query("limit"));
    let (count, _) =
        if kinds.kinds().is_empty() { (0, false) } else { service::unread(app, viewer, &kinds, cap).await? };
    json(&serde_json::json!({ "count": count }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::notifications::Kind;

    #[test]
    fn limits_clamp_like_mastodon() {
        assert_eq!(notification_limit(None), 40);
        assert_eq!(notification_limit(Some("500")), 80);
        assert_eq!(notification_limit(Some("0")), 1);
        assert_eq!(unread_limit(None), 100);
        assert_eq!(unread_limit(Some("5000")), 1000);
    }

    #[test]
    fn every_kind_has_a_mastodon_type() {
        let types: Vec<&str> = Kind::all().map(Kind::mastodon).collect();
        let expected = [
            "follow",
            "favourite",
            "mention",
            "reblog",
            "mention",
            "quote",
            "follow_request",
            "poll",
            "update",
        ];
        assert_eq!(types, expected);
    }
}
