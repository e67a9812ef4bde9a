use worker::Response;

use super::json;
use crate::domain::validate;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::store::graph::{self, GroupChange};
use crate::store::users;

fn not_self(viewer: i64, target: i64, what: &'static str) -> ApiResult<()> {
    if viewer == target {
        return Err(ApiError::field("user_id", format!("you cannot {what} yourself")));
    }
    Ok(())
}

/// The target must exist; unlike reads, a block does not hide it here (you can unblock, and
/// a follow attempt must say `blocked`, not `not_found`).
async fn existing(app: &App, viewer: i64, target: i64) -> ApiResult<crate::domain::visibility::Relationship> {
    users::get_with_relationship(&app.db, viewer, target)
        .await?
        .map(|(_, rel)| rel)
        .ok_or(ApiError::NotFound("no such user"))
}

pub async fn follow(app: &App, input: &Input, viewer: i64, author: i64) -> ApiResult<Response> {
    not_self(viewer, author, "follow")?;
    let body = input.json(true)?;
    // Absent `group` keeps the current group (so a plain retry changes nothing);
    // `"group": null` clears it; a name moves the follow into that group.
    let group = if body.has("group") {
        let name =
            body.str("group")?.map(validate::group).transpose().map_err(|m| ApiError::field("group", m))?;
        GroupChange::Set(name)
    } else {
        GroupChange::Keep
    };
    if existing(app, viewer, author).await?.blocked {
        return Err(ApiError::Forbidden {
            code: "blocked",
            detail: "a block between you and this user prevents following",
        });
    }
    let (group, events) = graph::follow(&app.db, viewer, author, &group, app.now).await?;
    app.apply_inline(viewer, &events).await;
    json(200, &serde_json::json!({ "following": true, "group": group }))
}

pub async fn unfollow(app: &App, viewer: i64, author: i64) -> ApiResult<Response> {
    not_self(viewer, author, "unfollow")?;
    existing(app, viewer, author).await?;
    let events = graph::unfollow(&app.db, viewer, author, app.now).await?;
    app.apply_inline(viewer, &events).await;
    json(200, &serde_json::json!({ "following": false }))
}

pub async fn block(app: &App, viewer: i64, target: i64) -> ApiResult<Response> {
    not_self(viewer, target, "block")?;
    existing(app, viewer, target).await?;
    let events = graph::block(&app.db, viewer, target, app.now).await?;
    app.apply_inline(viewer, &events).await;
    json(200, &serde_json::json!({ "blocked": true }))
}

pub async fn unblock(app: &App, viewer: i64, target: i64) -> ApiResult<Response> {
    not_self(viewer, target, "unblock")?;
    existing(app, viewer, target).await?;
    graph::unblock(&app.db, viewer, target).await?;
    json(200, &serde_json::json!({ "blocked": false }))
}
