use worker::Response;

use super::json;
use crate::domain::ids::UserId;
use crate::domain::mutes::Mute;
use crate::domain::time::format_rfc3339;
use crate::domain::validate::GroupName;
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::views::{Page, UserView};
use crate::services::{follows, mutes};
use crate::store::graph::{EdgeChange, GroupChange};

/// Absent `group` keeps the current group (so a plain retry changes nothing); `"group": null`
/// clears it; a name moves the follow into that group.
fn group_change(input: &Input) -> ApiResult<GroupChange> {
    let body = input.json(true)?;
    if !body.has("group") {
        return Ok(GroupChange::Keep);
    }
    Ok(GroupChange::Set(body.optional("group", GroupName::parse)?))
}

pub async fn follow(app: &App, input: &Input, viewer: UserId, author: UserId) -> ApiResult<Response> {
    match follows::follow(app, viewer, author, || group_change(input)).await? {
        follows::Followed::Following(group) => {
            json(200, &serde_json::json!({ "following": true, "group": group }))
        }
        // A locked account: asked, not followed (docs/contract.md "Follow requests").
        follows::Followed::Requested => {
            json(200, &serde_json::json!({ "following": false, "requested": true, "group": null }))
        }
    }
}

pub async fn unfollow(app: &App, viewer: UserId, author: UserId) -> ApiResult<Response> {
    follows::change_edge(app, viewer, author, EdgeChange::Unfollow).await?;
    json(200, &serde_json::json!({ "following": false }))
}

pub async fn block(app: &App, viewer: UserId, other: UserId) -> ApiResult<Response> {
    follows::change_edge(app, viewer, other, EdgeChange::Block).await?;
    json(200, &serde_json::json!({ "blocked": true }))
}

pub async fn unblock(app: &App, viewer: UserId, other: UserId) -> ApiResult<Response> {
    follows::change_edge(app, viewer, other, EdgeChange::Unblock).await?;
    json(200, &serde_json::json!({ "blocked": false }))
}

/// `PUT /v1/me/mutes/{id}` (optional JSON `notifications`, default true, and `duration` in
/// seconds, 0 or absent: until unmuted): the mute as stored.
pub async fn mute(app: &App, input: &Input, viewer: UserId, other: UserId) -> ApiResult<Response> {
    let body = input.json(true)?;
    let mute = Mute::new(body.flag("notifications")?, body.whole("duration")?, app.now)?;
    mutes::mute(app, viewer, other, mute).await?;
    let expires_at = mute.expires_at.map(format_rfc3339);
    json(
        200,
        &serde_json::json!({ "muted": true, "notifications": mute.notifications, "expires_at": expires_at }),
    )
}

/// `DELETE /v1/me/mutes/{id}` (idempotent).
pub async fn unmute(app: &App, viewer: UserId, other: UserId) -> ApiResult<Response> {
    mutes::unmute(app, viewer, other).await?;
    json(200, &serde_json::json!({ "muted": false }))
}

/// `GET /v1/me/mutes`: the muted users, newest mute first, paged by `cursor`.
pub async fn muted(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let before = input.cursor(&app.cursors, viewer, "mutes")?;
    let (rows, next) = mutes::page(app, viewer, before, limit).await?;
    let items: Vec<UserView> = rows.iter().map(|(u, _)| UserView::from(u)).collect();
    let next_cursor = next.map(|key| app.cursors.encode(viewer, "mutes", key));
    json(200, &Page { items, next_cursor })
}
