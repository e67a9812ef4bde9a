//! Mastodon 4.3's grouped notifications (`/api/v2/notifications`), which recent clients (Phanpy,
//! Elk) prefer when the instance advertises them: "ana and 4 others liked your post". A post's
//! favourites in one fixed 12-hour window are one group, and so are a window's follows; a
//! mention (a comment on your post) is always alone (`domain/notifications.rs::GroupKey`).
//!
//! A page is `limit` groups (40 by default, at most 80), newest first, each with its count, its
//! 8 newest shown actors and the ids of its rows the page covers; the accounts and statuses the
//! groups name are in the root lists, once each. The same id bounds and filters as `/v1`
//! (`types[]`, `exclude_types[]`), and `grouped_types[]`; `Link` continues below the oldest
//! group's representative (`max_id`) and above the newest (`min_id`), keeping the filters.
//! `expand_accounts=partial_avatars` is accepted and answered with full accounts (clients read
//! `partial_accounts` only when present); `account_id` is not supported on `/v2`.

use std::collections::HashSet;

use serde::Serialize;
use worker::Response;

use super::entities::notification_status as status_of;
use super::entities::{notified_posts, Account, Status};
use super::notifications::{array, bounds, kept, notification_limit, unread_limit, Bounds};
use super::{accounts_and_marks, accounts_of, json, with_link};
use crate::domain::filters::Context;
use crate::domain::ids::{UserId, MAX_ID};
use crate::domain::mastodon::link_header;
use crate::domain::notifications::{grouped_kinds, GroupKey, GroupQuery, KindFilter};
use crate::domain::snowflake::snowflake_time;
use crate::domain::time::format_rfc3339;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::filters::{self, FilterResult};
use crate::services::notification_groups::{self as service, Group, GroupPage};

/// How many accounts `GET .../{group_key}/accounts` answers.
const GROUP_ACCOUNTS: usize = 80;

/// Mastodon's NotificationGroup. `most_recent_notification_id` is a number, as Mastodon sends
/// it (and the community OpenAPI description types it); every other id is a string.
#[derive(Serialize)]
struct NotificationGroup {
    group_key: String,
    notifications_count: i64,
    #[serde(rename = "type")]
    kind: &'static str,
    most_recent_notification_id: i64,
    page_min_id: String,
    page_max_id: String,
    latest_page_notification_at: String,
    sample_account_ids: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_id: Option<String>,
}

/// Mastodon's GroupedNotificationsResults.
#[derive(Serialize)]
struct GroupedResults {
    accounts: Vec<Account>,
    statuses: Vec<Status>,
    notification_groups: Vec<NotificationGroup>,
}

impl NotificationGroup {
    fn new(g: &Group, status_id: Option<String>) -> NotificationGroup {
        NotificationGroup {
            group_key: g.key.to_string(),
            notifications_count: g.count,
            kind: g.latest.kind.mastodon(),
            most_recent_notification_id: g.latest.id,
            page_min_id: g.page_min_id.to_string(),
            page_max_id: g.page_max_id.to_string(),
            latest_page_notification_at: format_rfc3339(snowflake_time(g.page_max_id)),
            sample_account_ids: g.samples.iter().map(|u| u.id.to_string()).collect(),
            status_id,
        }
    }
}

/// The answer for these groups: each sample actor and status author once in `accounts`, each
/// status once in `statuses`.
async fn results(app: &App, input: &Input, viewer: UserId, groups: &[Group]) -> ApiResult<GroupedResults> {
    let mut ids: Vec<UserId> = groups.iter().flat_map(|g| g.samples.iter().map(|u| u.id)).collect();
    ids.push(viewer);
    let posts = notified_posts(groups.iter().map(|g| &g.latest));
    let (page, applied) = futures_util::future::join(
        accounts_and_marks(app, input, viewer, ids, &posts),
        super::filters_for(app, viewer, Context::Notifications),
    )
    .await;
    let ((accounts, marked), applied) = (page?, applied?);
    // A group whose status a `hide` filter matches is left out.
    let shown: Vec<(&Group, Vec<FilterResult>)> = groups
        .iter()
        .filter_map(|g| Some((g, filters::of_notification(&applied, viewer, &g.latest)?)))
        .collect();
    let groups: Vec<&Group> = shown.iter().map(|(g, _)| *g).collect();
    let mut statuses = Vec::new();
    let mut seen = HashSet::new();
    let mut notification_groups = Vec::with_capacity(groups.len());
    for (g, filtered) in shown {
        let status = status_of(&input.origin, &accounts, &g.latest, &marked).map(|s| s.filtered(filtered));
        let status_id = g.latest.comment.as_ref().map(|c| c.id.to_string());
        let status_id = status_id.or_else(|| g.latest.post.as_ref().map(|p| p.id.to_string()));
        if let (Some(status), Some(id)) = (status, &status_id) {
            if seen.insert(id.clone()) {
                statuses.push(status);
            }
        }
        notification_groups.push(NotificationGroup::new(g, status_id));
    }
    let mut named: Vec<&Account> = Vec::new();
    let mut wanted: Vec<UserId> = groups.iter().flat_map(|g| g.samples.iter().map(|u| u.id)).collect();
    if !statuses.is_empty() {
        wanted.push(viewer);
    }
    let mut listed = HashSet::new();
    for id in wanted {
        if let Some(account) = accounts.get(&id).filter(|_| listed.insert(id)) {
            named.push(account);
        }
    }
    Ok(GroupedResults { accounts: named.into_iter().cloned().collect(), statuses, notification_groups })
}

fn query(input: &Input) -> ApiResult<GroupQuery> {
    let Bounds { below, above, oldest_first } = bounds(input)?;
    Ok(GroupQuery {
        kinds: KindFilter::from_mastodon(&array(input, "types"), &array(input, "exclude_types")),
        grouped: grouped_kinds(&array(input, "grouped_types")),
        below: below.unwrap_or(MAX_ID),
        above: above.unwrap_or(0),
        oldest_first,
    })
}

/// `GET /api/v2/notifications`.
pub async fn list(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = notification_limit(input.query("limit"));
    let q = query(input)?;
    let page = if q.kinds.kinds().is_empty() {
        GroupPage::default()
    } else {
        service::page(app, viewer, &q, limit).await?
    };
    let body = results(app, input, viewer, &page.groups).await?;
    let base = format!("{}/api/v2/notifications", input.origin);
    let kept = kept(input, &["types", "exclude_types", "grouped_types"]);
    let (newest, oldest) = (page.prev_min.map(|i| i.to_string()), page.next_max.map(|i| i.to_string()));
    let more = page.more || q.oldest_first;
    with_link(&body, link_header(&base, &kept, newest.as_deref(), oldest.as_deref(), more))
}

/// `GET /api/v2/notifications/{group_key}`: the whole group; 404 when nothing of it is shown.
pub async fn get(app: &App, input: &Input, viewer: UserId, key: GroupKey) -> ApiResult<Response> {
    let group = service::group(app, viewer, key).await?.ok_or(ApiError::NotFound("Record not found"))?;
    json(&results(app, input, viewer, std::slice::from_ref(&group)).await?)
}

/// `GET /api/v2/notifications/{group_key}/accounts`: its shown actors, newest first.
pub async fn accounts(app: &App, input: &Input, viewer: UserId, key: GroupKey) -> ApiResult<Response> {
    let users = service::accounts(app, viewer, key, GROUP_ACCOUNTS)
        .await?
        .ok_or(ApiError::NotFound("Record not found"))?;
    let accounts = accounts_of(app, input, users.iter().map(|u| u.id).collect()).await?;
    let ordered: Vec<&Account> = users.iter().filter_map(|u| accounts.get(&u.id)).collect();
    json(&ordered)
}

/// `POST /api/v2/notifications/{group_key}/dismiss`: `{}`, whether or not there was one.
pub async fn dismiss(app: &App, viewer: UserId, key: GroupKey) -> ApiResult<Response> {
    service::dismiss(app, viewer, key).await?;
    json(&serde_json::json!({}))
}

/// `GET /api/v2/notifications/unread_count`: groups above the `notifications` marker.
pub async fn unread_count(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let q = query(input)?;
    let cap = unread_limit(input.query("limit"));
    let count = if q.kinds.kinds().is_empty() {
        0
    } else {
        service::unread(app, viewer, &q.kinds, q.grouped, cap).await?
    };
    json(&serde_json::json!({ "count": count }))
}
