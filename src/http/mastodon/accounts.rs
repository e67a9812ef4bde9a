//! Accounts: profiles, lookup, relationships, an account's statuses, follower lists and the
//! follow / block actions, over the same operations as `/v1`.

use serde::Serialize;
use worker::Response;

use super::entities::{Account, Relationship};
use super::{filters_for, json, list, statuses_in, statuses_of};
use crate::domain::cursor::{page_of, SortKey};
use crate::domain::filters::Context;
use crate::domain::ids::UserId;
use crate::domain::mastodon::{
    acct_handle, domain_of, kept_params, key_of_status, limit, link_header, local_acct,
};
use crate::domain::validate::Handle;
use crate::domain::visibility::visible_levels;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::AccountAction;
use crate::services::follows;
use crate::services::users::visible_with_relationship;
use crate::store::graph::{self, Direction, EdgeChange, GroupChange};
use crate::store::posts::{self, PostRow};
use crate::store::users::{UserKey, UserRow};
use crate::store::{account_marks, follow_requests};

/// The signed-in user, with the `source` block clients edit profiles from and their `role`.
#[derive(Serialize)]
struct CredentialAccount {
    #[serde(flatten)]
    account: Account,
    source: serde_json::Value,
    role: serde_json::Value,
}

pub async fn verify_credentials(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let (user, requests) = futures_util::future::join(
        visible_with_relationship(app, viewer, UserKey::Id(viewer)),
        follow_requests::count(app.user_db(viewer), viewer),
    )
    .await;
    let (user, _) = user?;
    let source = source_of(&user, requests?);
    // Mastodon's built-in "everyone" role (id -99), with no permissions: Mastodon grants it
    // `invite_users` (65536) by default, but there are no invites here, and an app that sees
    // the bit offers an invite screen that cannot work. Nobody is staff through this API.
    let role = serde_json::json!({
        "id": "-99", "name": "", "color": "", "permissions": "0", "highlighted": false,
    });
    json(&CredentialAccount { account: Account::new(&input.origin, &user), source, role })
}

/// `source`: the profile as typed (note and fields as plain text) and the posting defaults.
fn source_of(user: &UserRow, follow_requests: i64) -> serde_json::Value {
    let p = &user.profile;
    let fields: Vec<serde_json::Value> = crate::domain::profile::fields_of(p.fields.as_deref())
        .into_iter()
        .map(|f| serde_json::json!({ "name": f.name, "value": f.value, "verified_at": null }))
        .collect();
    serde_json::json!({
        "privacy": p.post_privacy, "sensitive": p.post_sensitive != 0, "language": p.post_language,
        "note": p.note, "fields": fields, "follow_requests_count": follow_requests, "indexable": p.indexable != 0,
        "discoverable": p.discoverable != 0, "hide_collections": false, "attribution_domains": [],
    })
}

pub async fn get(app: &App, input: &Input, viewer: UserId, id: UserId) -> ApiResult<Response> {
    let (user, _) = visible_with_relationship(app, viewer, UserKey::Id(id)).await?;
    json(&Account::new(&input.origin, &user))
}

/// The handle an `acct` names, case-insensitively (lookups, search, WebFinger).
pub(super) fn handle_of(acct: &str) -> Option<Handle> {
    Handle::parse(&acct_handle(acct).to_ascii_lowercase()).ok()
}

/// [`handle_of`] for an `acct` that may name an account elsewhere: `None` then.
fn local_handle(acct: &str, origin: &str) -> Option<Handle> {
    local_acct(acct, domain_of(origin)).and_then(handle_of)
}

/// `?acct=handle`: the account with that handle, if the viewer may see it.
pub async fn lookup(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let acct = input.query("acct").ok_or_else(|| ApiError::field("acct", "acct is required"))?;
    let handle = local_handle(acct, &input.origin).ok_or(ApiError::NotFound("no such account"))?;
    let (user, _) = visible_with_relationship(app, viewer, UserKey::Handle(&handle)).await?;
    json(&Account::new(&input.origin, &user))
}

/// `?id[]=1&id[]=2` (or `id=`): one Relationship per existing id, in the order asked.
pub async fn relationships(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let ids: Vec<UserId> =
        input.query_all("id[]").chain(input.query_all("id")).filter_map(UserId::parse).take(40).collect();
    json(&relationships_with(app, viewer, &ids).await?)
}

/// The statuses of an account the viewer may see, newest first, paged by `max_id`. With
/// `pinned=true`, the pinned ones: none, as edgefeed has no pinning.
pub async fn statuses(app: &App, input: &Input, viewer: UserId, author: UserId) -> ApiResult<Response> {
    if input.query("pinned").is_some_and(|v| v.trim() == "true" || v.trim() == "1") {
        // The featured posts: those the author pinned that the viewer may see now, all on one
        // page (at most 5), so a page below any of them is empty.
        visible_with_relationship(app, viewer, UserKey::Id(author)).await?;
        let mut rows = crate::services::post_extras::pinned(app, viewer, author).await?;
        if input.query("max_id").is_some_and(|v| !v.is_empty()) {
            rows.clear();
        }
        return list(&statuses_of(app, input, viewer, &rows).await?, None);
    }
    let limit = limit(input.query("limit"));
    let before = status_bound(input, "max_id")?;
    let (visible, applied) = futures_util::future::join(
        visible_with_relationship(app, viewer, UserKey::Id(author)),
        filters_for(app, viewer, Context::Account),
    )
    .await;
    let ((_, rel), applied) = (visible?, applied?);
    let rows =
        posts::author_page(app.user_db(author), viewer, author, visible_levels(rel), before, limit).await?;
    let (rows, more) = page_of(rows, limit, PostRow::sort_key);
    let exclude_reblogs =
        input.query("exclude_reblogs").is_some_and(|v| v.trim() == "true" || v.trim() == "1");
    let shown: Vec<PostRow> =
        rows.iter().filter(|p| !exclude_reblogs || p.reblog_of.is_none()).cloned().collect();
    let items = statuses_in(app, input, viewer, &shown, Some(&applied)).await?;
    // Only `max_id` paging here (no `prev`): an author's list is read top-down.
    let base = format!("{}/api/v1/accounts/{author}/statuses", input.origin);
    let oldest = rows.last().map(|p| p.id.to_string());
    let kept = kept_params(input.query("limit"));
    list(&items, link_header(&base, &kept, None, oldest.as_deref(), more.is_some()))
}

/// A status id in the query (`max_id`, `since_id`, `min_id`) as a feed position.
pub fn status_bound(input: &Input, name: &'static str) -> ApiResult<Option<SortKey>> {
    match input.query(name) {
        None | Some("") => Ok(None),
        Some(id) => crate::domain::ids::parse_id(id)
            .map(|id| Some(key_of_status(id)))
            .ok_or_else(|| ApiError::field(name, format!("{name} must be a status id"))),
    }
}

/// `Link` for a page of posts: `next` below the oldest, `prev` above the newest, keeping the
/// request's `limit`.
pub fn status_links(base: &str, input: &Input, rows: &[PostRow], more: bool) -> Option<String> {
    let newest = rows.first().map(|p| p.id.to_string());
    let oldest = rows.last().map(|p| p.id.to_string());
    link_header(base, &kept_params(input.query("limit")), newest.as_deref(), oldest.as_deref(), more)
}

/// Followers or followees, newest follow first. Follows have no ids of their own, so `max_id`
/// carries the list's signed cursor (clients pass `Link` values back as they got them).
pub async fn follow_list(
    app: &App,
    input: &Input,
    viewer: UserId,
    id: UserId,
    followers: bool,
) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let (direction, name) =
        if followers { (Direction::Followers, "followers") } else { (Direction::Following, "following") };
    let cursor_list = format!("mastodon:{name}:{id}");
    let before = input.cursor_named("max_id", &app.cursors, viewer, &cursor_list)?;
    visible_with_relationship(app, viewer, UserKey::Id(id)).await?;
    let rows = graph::follow_list(&app.shards, viewer, id, direction, before, limit).await?;
    let base = format!("{}/api/v1/accounts/{id}/{name}", input.origin);
    users_page(app, input, viewer, rows, limit, &base, &cursor_list)
}

/// A page of users with a `next` link carrying the signed cursor of the last one.
pub fn users_page(
    app: &App,
    input: &Input,
    viewer: UserId,
    rows: Vec<UserRow>,
    limit: usize,
    base: &str,
    cursor_list: &str,
) -> ApiResult<Response> {
    let (rows, last) = page_of(rows, limit, |u: &UserRow| SortKey::new(u.sort_at, u.id.get()));
    let next = last.map(|key| app.cursors.encode(viewer, cursor_list, key));
    let link = next.map(|cursor| format!("<{base}?max_id={cursor}>; rel=\"next\""));
    let items: Vec<Account> = rows.iter().map(|u| Account::new(&input.origin, u)).collect();
    list(&items, link)
}

/// Follow, unfollow, block, unblock; the Relationship after it.
pub async fn act(
    app: &App,
    input: &Input,
    viewer: UserId,
    id: UserId,
    action: AccountAction,
) -> ApiResult<Response> {
    match action {
        AccountAction::Follow => {
            // `notify` and `languages` are refused, not dropped (`domain::params`).
            input.check_params(crate::domain::params::Endpoint::Follow)?;
            follows::follow(app, viewer, id, || Ok(GroupChange::Keep)).await.map(drop)?
        }
        AccountAction::Unfollow => follows::change_edge(app, viewer, id, EdgeChange::Unfollow).await?,
        AccountAction::Block => follows::change_edge(app, viewer, id, EdgeChange::Block).await?,
        AccountAction::Unblock => follows::change_edge(app, viewer, id, EdgeChange::Unblock).await?,
    }
    relationship_of(app, viewer, id).await
}

/// The viewer's Relationship to one account, as an answer (`404` if there is no such account).
pub(super) async fn relationship_of(app: &App, viewer: UserId, id: UserId) -> ApiResult<Response> {
    let found = relationships_with(app, viewer, &[id]).await?;
    json(found.first().ok_or(ApiError::NotFound("no such account"))?)
}

/// One Relationship per existing id, in the order asked: the graph from the viewer's side, and
/// the follow requests either way (the viewer's on the others' homes, theirs on the viewer's)
/// and the viewer's notes and endorsements, read side by side.
pub(super) async fn relationships_with(
    app: &App,
    viewer: UserId,
    ids: &[UserId],
) -> ApiResult<Vec<Relationship>> {
    let (mutuals, requested, marks) = futures_util::future::join3(
        graph::mutuals(&app.shards, viewer, ids),
        follow_requests::requested(&app.shards, viewer, ids),
        account_marks::of(app.user_db(viewer), viewer, ids),
    )
    .await;
    let (mutuals, requested, marks) = (mutuals?, requested?, marks?);
    Ok(ids
        .iter()
        .filter_map(|id| mutuals.iter().find(|m| m.id == *id))
        .map(|m| {
            let mark = marks.iter().find(|k| k.id == m.id);
            Relationship::from(m)
                .with_requests(requested.contains(&m.id), mark.is_some_and(|k| k.requested_by()))
                .with_marks(mark.and_then(|k| k.note.as_deref()), mark.is_some_and(|k| k.endorsed()))
        })
        .collect())
}
