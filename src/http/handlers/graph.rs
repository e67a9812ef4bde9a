use worker::Response;

use super::json;
use crate::domain::ids::UserId;
use crate::domain::validate::GroupName;
use crate::domain::visibility::Relationship;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::fanout;
use crate::store::graph::{self, GroupChange};
use crate::store::users;

/// The target of a graph change: not the viewer, and existing. Unlike reads, a block does not
/// hide it here (you can unblock, and a follow attempt must say `blocked`, not `not_found`).
async fn target(app: &App, viewer: UserId, target: UserId, what: &'static str) -> ApiResult<Relationship> {
    if viewer == target {
        return Err(ApiError::field("user_id", format!("you cannot {what} yourself")));
    }
    crate::services::users::get_with_relationship(app, viewer, users::UserKey::Id(target))
        .await?
        .map(|(_, rel)| rel)
        .ok_or(ApiError::NotFound("no such user"))
}

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
    let group = follow_author(app, viewer, author, || group_change(input)).await?;
    json(200, &serde_json::json!({ "following": true, "group": group }))
}

/// Follows `author` (into the group `group` says); the follow's group.
pub async fn follow_author(
    app: &App,
    viewer: UserId,
    author: UserId,
    group: impl FnOnce() -> ApiResult<GroupChange>,
) -> ApiResult<Option<String>> {
    let relationship = target(app, viewer, author, "follow").await?;
    if relationship.suspended {
        // Hidden from everyone like a missing user (unfollow and blocks still work on them).
        return Err(ApiError::NotFound("no such user"));
    }
    let group = group()?;
    if relationship.blocked {
        return Err(ApiError::BLOCKED);
    }
    let (group, events) = graph::follow(app.user_db(viewer), viewer, author, &group, app.now).await?;
    fanout::apply_inline(app, viewer, &events).await;
    Ok(group)
}

pub async fn unfollow(app: &App, viewer: UserId, author: UserId) -> ApiResult<Response> {
    unfollow_author(app, viewer, author).await?;
    json(200, &serde_json::json!({ "following": false }))
}

pub async fn unfollow_author(app: &App, viewer: UserId, author: UserId) -> ApiResult<()> {
    target(app, viewer, author, "unfollow").await?;
    let events = graph::unfollow(app.user_db(viewer), viewer, author, app.now).await?;
    fanout::apply_inline(app, viewer, &events).await;
    Ok(())
}

pub async fn block(app: &App, viewer: UserId, other: UserId) -> ApiResult<Response> {
    set_block(app, viewer, other, true).await?;
    json(200, &serde_json::json!({ "blocked": true }))
}

pub async fn unblock(app: &App, viewer: UserId, other: UserId) -> ApiResult<Response> {
    set_block(app, viewer, other, false).await?;
    json(200, &serde_json::json!({ "blocked": false }))
}

/// Blocks or unblocks `other` (idempotent).
pub async fn set_block(app: &App, viewer: UserId, other: UserId, block: bool) -> ApiResult<()> {
    if block {
        target(app, viewer, other, "block").await?;
        let events = graph::block(app.user_db(viewer), viewer, other, app.now).await?;
        fanout::apply_inline(app, viewer, &events).await;
    } else {
        target(app, viewer, other, "unblock").await?;
        let events = graph::unblock(app.user_db(viewer), viewer, other, app.now).await?;
        fanout::apply_inline(app, viewer, &events).await;
    }
    Ok(())
}
