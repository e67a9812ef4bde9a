//! Likes and comments. Only viewers who may see a post can like it, list its likers, comment
//! on it or read its comments; everyone else gets 404, as if it did not exist.

use worker::Response;

use super::posts::import_time;
use super::users::visible_user;
use super::{json, open_post, page, visible_post};
use crate::context::id_seed;
use crate::domain::cursor::{Order, SortKey};
use crate::domain::ids::{CommentId, PostId, UserId, MAX_ID};
use crate::domain::validate::{CommentBody, Invalid};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::views::{CommentView, UserView};
use crate::services::{likes, streaming};
use crate::store::engagement::{self as store, CommentRow};
use crate::store::users::UserRow;

fn parse_seq(text: &str) -> Result<i64, Invalid> {
    text.parse::<i64>()
        .ok()
        .filter(|n| (0..=MAX_ID).contains(n))
        .ok_or_else(|| Invalid::new("seq", "seq must be an integer from 0 to 2^53-1"))
}

/// `PUT` / `DELETE /v1/posts/{id}/like[?seq=N]`.
pub async fn set_like(
    app: &App,
    input: &Input,
    viewer: UserId,
    post: PostId,
    like: bool,
) -> ApiResult<Response> {
    let seq = input.query_as("seq", parse_seq)?;
    json(200, &likes::set_like(app, viewer, post, like, seq).await?)
}

pub async fn likers(app: &App, input: &Input, viewer: UserId, post: PostId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = format!("likes:{post}");
    let before = input.cursor(&app.cursors, viewer, &list)?;
    visible_post(app, viewer, post).await?;
    let rows = store::likers(&app.shards, viewer, post, before, limit).await?;
    let key = |u: &UserRow| SortKey::new(u.sort_at, u.id.get());
    json(200, &page(rows, limit, key, |u| UserView::from(u), &app.cursors, viewer, &list))
}

async fn created(app: &App, id: CommentId) -> ApiResult<Response> {
    json(201, &CommentView::from(&comment(app, id).await?))
}

pub async fn comment(app: &App, id: CommentId) -> ApiResult<CommentRow> {
    store::get(&app.shards, id).await?.ok_or(ApiError::NotFound("no such comment"))
}

pub async fn create_comment(app: &App, input: &Input, viewer: UserId, post: PostId) -> ApiResult<Response> {
    let text = input.json(false)?.required("body", CommentBody::parse)?;
    json(201, &CommentView::from(&add_comment(app, viewer, post, &text).await?))
}

/// Comments on a post the viewer may see and act on; the new comment.
pub async fn add_comment(
    app: &App,
    viewer: UserId,
    post: PostId,
    text: &CommentBody,
) -> ApiResult<CommentRow> {
    open_post(app, viewer, post).await?;
    let (id, notice) =
        store::create(app.post_db(post), post, viewer, text, app.now, app.now, true, id_seed()?).await?;
    if let Some(notice) = notice {
        streaming::tell(app, notice).await;
    }
    comment(app, id).await
}

fn parse_order(text: &str) -> Result<(Order, &'static str), Invalid> {
    match text {
        "oldest" => Ok((Order::OldestFirst, "oldest")),
        "newest" => Ok((Order::NewestFirst, "newest")),
        _ => Err(Invalid::new("order", "order must be oldest or newest")),
    }
}

pub async fn list_comments(app: &App, input: &Input, viewer: UserId, post: PostId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let (order, name) = input.query_as("order", parse_order)?.unwrap_or((Order::OldestFirst, "oldest"));
    let list = format!("comments:{post}:{name}");
    let cursor = input.cursor(&app.cursors, viewer, &list)?;
    visible_post(app, viewer, post).await?;
    let rows = store::list(&app.shards, viewer, post, order, cursor, limit).await?;
    json(200, &page(rows, limit, CommentRow::sort_key, |c| CommentView::from(c), &app.cursors, viewer, &list))
}

pub async fn delete_comment(app: &App, viewer: UserId, id: CommentId) -> ApiResult<Response> {
    remove_comment(app, viewer, id).await?;
    Ok(Response::empty()?.with_status(204))
}

/// By the comment's author or the post's author; others who can see it get 403. The comment as
/// it was.
pub async fn remove_comment(app: &App, viewer: UserId, id: CommentId) -> ApiResult<CommentRow> {
    let comment = comment(app, id).await?;
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
    store::delete(app.comment_db(comment.id), &comment, app.now).await?;
    Ok(comment)
}

/// Admin: import a comment with its original time.
pub async fn import_comment(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.json(false)?;
    let text = body.required("body", CommentBody::parse)?;
    let post = body.required_id("post_id", PostId::parse)?;
    let author = body.required_id("author_id", UserId::parse)?;
    let created_at = import_time(app, &body)?;
    visible_user(app, author, author).await.map_err(|_| ApiError::field("author_id", "no such user"))?;
    visible_post(app, author, post).await.map_err(|_| ApiError::field("post_id", "no such post"))?;
    let (id, _) =
        store::create(app.post_db(post), post, author, &text, created_at, app.now, false, id_seed()?).await?;
    created(app, id).await
}
