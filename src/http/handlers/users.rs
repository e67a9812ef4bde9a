use worker::Response;

use super::{json, page};
use crate::domain::cursor::SortKey;
use crate::domain::validate;
use crate::domain::visibility::{may_see_author, Relationship};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{cursor_key, Input};
use crate::http::views::UserView;
use crate::store::graph::{self, Direction};
use crate::store::users::{self, UserRow};

pub async fn register(app: &App, input: &Input) -> ApiResult<Response> {
    if !app.config.open_registration {
        return Err(ApiError::Forbidden {
            code: "registration_closed",
            detail: "registration is switched off",
        });
    }
    let body = input.json(false)?;
    let handle = validate::handle(body.required_str("handle")?).map_err(|m| ApiError::field("handle", m))?;
    let display_name = match body.str("display_name")? {
        Some(name) => validate::display_name(name).map_err(|m| ApiError::field("display_name", m))?,
        None => handle.clone(),
    };
    let user = users::create(&app.db, &handle, &display_name, app.now).await?;
    let token = app.issue_token(user.id);
    json(201, &serde_json::json!({ "user": UserView::from(&user), "token": token }))
}

/// A user the viewer may see (exists, no block either way) and what the viewer is to them,
/// or 404.
pub async fn visible_user_with_relationship(
    app: &App,
    viewer: i64,
    id: i64,
) -> ApiResult<(UserRow, Relationship)> {
    match users::get_with_relationship(&app.db, viewer, id).await? {
        Some((user, rel)) if may_see_author(rel) => Ok((user, rel)),
        _ => Err(ApiError::NotFound("no such user")),
    }
}

pub async fn visible_user(app: &App, viewer: i64, id: i64) -> ApiResult<UserRow> {
    Ok(visible_user_with_relationship(app, viewer, id).await?.0)
}

pub async fn me(app: &App, viewer: i64) -> ApiResult<Response> {
    json(200, &UserView::from(&visible_user(app, viewer, viewer).await?))
}

pub async fn get(app: &App, viewer: i64, id: i64) -> ApiResult<Response> {
    json(200, &UserView::from(&visible_user(app, viewer, id).await?))
}

pub async fn follow_list(
    app: &App,
    input: &Input,
    viewer: i64,
    id: i64,
    direction: Direction,
) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = match direction {
        Direction::Followers => format!("followers:{id}"),
        Direction::Following => format!("following:{id}"),
    };
    let before = cursor_key(input, &app.cursors, viewer, &list)?;
    visible_user(app, viewer, id).await?;
    let rows = graph::follow_list(&app.db, viewer, id, direction, before, limit).await?;
    let key = |u: &UserRow| SortKey::new(u.sort_at, u.id);
    json(200, &page(rows, limit, key, |u| UserView::from(u), &app.cursors, viewer, &list))
}
