//! Likes and comments. Only viewers who may see a post can like it, list its likers, comment
//! on it or read its comments; everyone else gets 404, as if it did not exist.

use worker::Response;

use super::users::visible_user;
use super::{json, page};
use crate::domain::cursor::{Order, SortKey};
use crate::domain::ids::MAX_ID;
use crate::domain::time::parse_rfc3339;
use crate::domain::validate::{self, MAX_COMMENT_CHARS};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{cursor_key, Input};
use crate::http::views::{CommentView, UserView};
use crate::post_likes::{LikeOp, Likes};
use crate::store::engagement::{self as store, CommentRow};
use crate::store::posts::{self, PostRow};
use crate::store::users::UserRow;

async fn visible_post(app: &App, viewer: i64, post_id: i64) -> ApiResult<PostRow> {
    posts::get_visible(&app.db, viewer, post_id).await?.ok_or(ApiError::NotFound("no such post"))
}

/// `PUT` / `DELETE /v1/posts/{id}/like[?seq=N]`.
pub async fn set_like(
    app: &App,
    input: &Input,
    viewer: i64,
    post_id: i64,
    like: bool,
) -> ApiResult<Response> {
    let seq = input
        .query("seq")
        .map(|s| s.parse::<i64>().ok().filter(|n| (0..=MAX_ID).contains(n)))
        .map(|s| s.ok_or_else(|| ApiError::field("seq", "seq must be an integer from 0 to 2^53-1")))
        .transpose()?;
    visible_post(app, viewer, post_id).await?;
    let reply =
        Likes::new(&app.env)?.set(LikeOp { post_id, user_id: viewer, like, seq, now: app.now }).await?;
    json(200, &reply)
}

pub async fn likers(app: &App, input: &Input, viewer: i64, post_id: i64) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = format!("likes:{post_id}");
    let before = cursor_key(input, &app.cursors, viewer, &list)?;
    visible_post(app, viewer, post_id).await?;
    let rows = store::likers(&app.db, viewer, post_id, before, limit).await?;
    let key = |u: &UserRow| SortKey::new(u.sort_at, u.id);
    json(200, &page(rows, limit, key, |u| UserView::from(u), &app.cursors, viewer, &list))
}

fn comment_body(input: &Input) -> ApiResult<(crate::http::input::JsonObject, String)> {
    let body = input.json(false)?;
    let text = validate::text_body(body.required_str("body")?, MAX_COMMENT_CHARS)
        .map_err(|m| ApiError::field("body", m))?;
    Ok((body, text))
}

async fn created(app: &App, id: i64) -> ApiResult<Response> {
    let comment = store::get(&app.db, id).await?.ok_or(ApiError::NotFound("no such comment"))?;
    json(201, &CommentView::from(&comment))
}

pub async fn create_comment(app: &App, input: &Input, viewer: i64, post_id: i64) -> ApiResult<Response> {
    let (_, text) = comment_body(input)?;
    visible_post(app, viewer, post_id).await?;
    let id = store::create(&app.db, post_id, viewer, &text, app.now, app.now).await?;
    created(app, id).await
}

pub async fn list_comments(app: &App, input: &Input, viewer: i64, post_id: i64) -> ApiResult<Response> {
    let limit = input.limit()?;
    let (order, name) = match input.query("order") {
        None | Some("oldest") => (Order::OldestFirst, "oldest"),
        Some("newest") => (Order::NewestFirst, "newest"),
        Some(_) => return Err(ApiError::field("order", "order must be oldest or newest")),
    };
    let list = format!("comments:{post_id}:{name}");
    let cursor = cursor_key(input, &app.cursors, viewer, &list)?;
    visible_post(app, viewer, post_id).await?;
    let rows = store::list(&app.db, viewer, post_id, order, cursor, limit).await?;
    json(200, &page(rows, limit, CommentRow::sort_key, |c| CommentView::from(c), &app.cursors, viewer, &list))
}

/// By the comment's author or the post's author; others who can see it get 403.
pub async fn delete_comment(app: &App, viewer: i64, comment_id: i64) -> ApiResult<Response> {
    let comment = store::get(&app.db, comment_id).await?.ok_or(ApiError::NotFound("no such comment"))?;
    // The post's author may always clean their post; anyone else must still see the post.
    if comment.post_author_id != viewer {
        visible_post(app, viewer, comment.post_id)
            .await
            .map_err(|_| ApiError::NotFound("no such comment"))?;
        if comment.author_id != viewer {
            return Err(ApiError::Forbidden {
                code: "not_author",
                detail: "only the comment's author or the post's author may delete it",
            });
        }
    }
    store::delete(&app.db, &comment, app.now).await?;
    Ok(Response::empty()?.with_status(204))
}

/// Admin: import a comment with its original time.
pub async fn import_comment(app: &App, input: &Input) -> ApiResult<Response> {
    let (body, text) = comment_body(input)?;
    let post_id = body.required_id("post_id")?;
    let author = body.required_id("author_id")?;
    let created_at =
        parse_rfc3339(body.required_str("created_at")?).filter(|t| *t <= app.now + 60_000).ok_or_else(
            || ApiError::field("created_at", "created_at must be an RFC 3339 time, not in the future"),
        )?;
    visible_user(app, author, author).await.map_err(|_| ApiError::field("author_id", "no such user"))?;
    visible_post(app, author, post_id).await.map_err(|_| ApiError::field("post_id", "no such post"))?;
    let id = store::create(&app.db, post_id, author, &text, created_at, app.now).await?;
    created(app, id).await
}
