use worker::Response;

use super::json;
use crate::domain::ids::UserId;
use crate::domain::validate::GroupName;
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::follows;
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
    let group = follows::follow(app, viewer, author, || group_change(input)).await?;
    json(200, &serde_json::json!({ "following": true, "group": group }))
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
