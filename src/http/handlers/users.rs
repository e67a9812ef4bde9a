use worker::Response;

use super::{json, page};
use crate::context::random_bytes;
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::domain::live::Revocation;
use crate::domain::password;
use crate::domain::validate::{DisplayName, Handle, Invalid};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::views::UserView;
use crate::services::users as service;
use crate::store::graph::{self, Direction};
use crate::store::users::{self, UserKey, UserRow};

pub async fn register(app: &App, input: &Input) -> ApiResult<Response> {
    if !app.config.open_registration {
        return Err(ApiError::Forbidden {
            code: "registration_closed",
            detail: "registration is switched off",
        });
    }
    let body = input.json(false)?;
    let handle = body.required("handle", Handle::parse)?;
    let display_name = body.optional("display_name", DisplayName::parse)?;
    let display_name = display_name.unwrap_or_else(|| DisplayName::from_handle(&handle));
    let password = body.optional("password", |p: &str| {
        password::acceptable(p).map(|()| p.to_owned()).map_err(|reason| Invalid::new("password", reason))
    })?;
    let hash = password.map(|p| hash_password(&p)).transpose()?;
    let user = service::sign_up(app, &handle, &display_name, hash.as_deref()).await?;
    let token = app.issue_token(user.id);
    json(201, &serde_json::json!({ "user": UserView::from(&user), "token": token }))
}

/// The stored form of a new password, with a fresh salt.
pub fn hash_password(password: &str) -> ApiResult<String> {
    Ok(password::hash(password, &random_bytes()?, password::ITERATIONS))
}

/// `POST /v1/me/logout`: revokes every token of the caller issued up to this second.
pub async fn logout(app: &App, viewer: UserId) -> ApiResult<Response> {
    let now_secs = app.now.div_euclid(1000);
    users::revoke_tokens(app.user_db(viewer), viewer, now_secs).await?;
    crate::services::live::close_sockets(app, viewer, Revocation::IssuedUpTo(now_secs)).await;
    Ok(Response::empty()?.with_status(204))
}

/// `GET /v1/me` and `GET /v1/users/{id}`; another user's profile also says whether the viewer
/// follows them.
pub async fn get(app: &App, viewer: UserId, id: UserId) -> ApiResult<Response> {
    profile(app, viewer, UserKey::Id(id)).await
}

/// `GET /v1/users?handle=NAME`: the user with that handle, as `GET /v1/users/{id}` shows them.
pub async fn lookup(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let handle =
        input.query_as("handle", Handle::parse)?.ok_or_else(|| ApiError::field("handle", "required"))?;
    profile(app, viewer, UserKey::Handle(&handle)).await
}

async fn profile(app: &App, viewer: UserId, key: UserKey<'_>) -> ApiResult<Response> {
    let (user, rel) = service::visible_with_relationship(app, viewer, key).await?;
    json(200, &UserView { following: (!rel.is_self).then_some(rel.follows), ..UserView::from(&user) })
}

pub async fn follow_list(
    app: &App,
    input: &Input,
    viewer: UserId,
    id: UserId,
    direction: Direction,
) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = match direction {
        Direction::Followers => format!("followers:{id}"),
        Direction::Following => format!("following:{id}"),
    };
    let before = input.cursor(&app.cursors, viewer, &list)?;
    service::visible(app, viewer, id).await?;
    let rows = graph::follow_list(&app.shards, viewer, id, direction, before, limit).await?;
    let key = |u: &UserRow| SortKey::new(u.sort_at, u.id.get());
    json(200, &page(rows, limit, key, |u| UserView::from(u), &app.cursors, viewer, &list))
}
