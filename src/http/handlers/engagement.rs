//! Likes and comments. Only viewers who may see a post can like it, list its likers, comment
//! on it or read its comments; everyone else gets 404, as if it did not exist.

use worker::Response;

use super::posts::import_time;
use super::{json, page};
use crate::domain::cursor::{page_of, Order, SortKey};
use crate::domain::ids::{CommentId, PostId, UserId, MAX_ID};
use crate::domain::top::CommentOrder;
use crate::domain::validate::{Invalid, PostBody};
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::views::{CommentView, Page, PostView, UserView};
use crate::services::saved::{self, Saved};
use crate::services::{boosts, comments as service, likes, posts};
use crate::store::engagement as store;
use crate::store::posts::PostRow;
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
    posts::visible(app, viewer, post).await?;
    let rows = store::likers(&app.shards, viewer, post, before, limit).await?;
    let key = |u: &UserRow| SortKey::new(u.sort_at, u.id.get());
    json(200, &page(rows, limit, key, |u| UserView::from(u), &app.cursors, viewer, &list))
}

/// `PUT` / `DELETE /v1/posts/{id}/bookmark`: `{"bookmarked": bool}` (idempotent).
pub async fn bookmark(app: &App, viewer: UserId, post: PostId, on: bool) -> ApiResult<Response> {
    saved::set_bookmark(app, viewer, post, on).await?;
    json(200, &serde_json::json!({ "bookmarked": on }))
}

/// `GET /v1/me/bookmarks` and `/v1/me/likes`: the viewer's saved posts they may see now,
/// newest bookmark (like) first, paged by `cursor`.
pub async fn saved(app: &App, input: &Input, viewer: UserId, which: Saved) -> ApiResult<Response> {
    let limit = input.limit()?;
    let before = input.cursor(&app.cursors, viewer, which.name())?;
    let page = saved::page(app, viewer, which, before, limit).await?;
    let items: Vec<PostView> = page.items.iter().map(|(post, _)| PostView::from(post)).collect();
    let next_cursor = page.next.map(|key| app.cursors.encode(viewer, which.name(), key));
    json(200, &Page { items, next_cursor })
}

fn created(reply: &PostRow) -> ApiResult<Response> {
    json(201, &CommentView::of_reply(reply))
}

/// `POST /v1/posts/{id}/comments` `{"body"}`: the viewer's reply post, as a Comment. Takes an
/// `Idempotency-Key` as a publish does.
pub async fn create_comment(app: &App, input: &Input, viewer: UserId, post: PostId) -> ApiResult<Response> {
    let text = input.json(false)?.required("body", PostBody::parse)?;
    let key = input.idempotency_key()?;
    let domain = crate::domain::mastodon::domain_of(&input.origin);
    created(&service::add(app, viewer, post, &text, domain, key.as_ref()).await?)
}

/// The `order` parameter (default `oldest`) and the `cursor`'s key; a `top` cursor brings the
/// snapshot its first page was scored at (`domain/top.rs`), a first page takes now.
fn comment_order(
    app: &App,
    input: &Input,
    viewer: UserId,
    post: PostId,
) -> ApiResult<(CommentOrder, Option<SortKey>, String)> {
    let order = match input.query("order") {
        None => CommentOrder::Time(Order::OldestFirst),
        Some(text) => CommentOrder::parse(text, app.now)
            .ok_or_else(|| Invalid::new("order", "order must be oldest, newest or top"))?,
    };
    let list = format!("comments:{post}:{}", order.name());
    match (order, input.query("cursor")) {
        (CommentOrder::Top { .. }, Some(cursor)) => {
            let (key, snapshot) = app.cursors.decode_at(viewer, &list, cursor)?;
            Ok((CommentOrder::Top { snapshot }, Some(key), list))
        }
        _ => Ok((order, input.cursor(&app.cursors, viewer, &list)?, list)),
    }
}

/// `GET /v1/posts/{id}/comments?order=oldest|newest|top`.
pub async fn list_comments(app: &App, input: &Input, viewer: UserId, post: PostId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let (order, cursor, list) = comment_order(app, input, viewer, post)?;
    posts::visible(app, viewer, post).await?;
    let rows = store::list(&app.shards, viewer, post, order, cursor, limit).await?;
    let (rows, last) = page_of(rows, limit, |c| c.key(order));
    // The cursor moves by what was scanned; hidden reply posts only leave the page shorter.
    let (rows, _) = service::visible_rows(app, viewer, rows).await?;
    let next_cursor = last.map(|key| match order {
        CommentOrder::Top { snapshot } => app.cursors.encode_at(viewer, &list, key, snapshot),
        CommentOrder::Time(_) => app.cursors.encode(viewer, &list, key),
    });
    json(200, &Page { items: rows.iter().map(CommentView::from).collect::<Vec<_>>(), next_cursor })
}

/// `POST` (or `PUT`) / `DELETE /v1/comments/{id}/like`: the comment with its exact count.
pub async fn like_comment(app: &App, viewer: UserId, id: CommentId, on: bool) -> ApiResult<Response> {
    json(200, &CommentView::from(&service::like(app, viewer, id, on).await?))
}

pub async fn delete_comment(app: &App, viewer: UserId, id: CommentId) -> ApiResult<Response> {
    service::delete(app, viewer, id).await?;
    Ok(Response::empty()?.with_status(204))
}

/// Admin: import a comment (a reply post) with its original time.
pub async fn import_comment(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.json(false)?;
    let text = body.required("body", PostBody::parse)?;
    let post = body.required_id("post_id", PostId::parse)?;
    let author = body.required_id("author_id", UserId::parse)?;
    let created_at = import_time(app, &body)?;
    created(&service::import(app, post, author, &text, created_at).await?)
}

/// `PUT` / `DELETE /v1/posts/{id}/repost`: boost (idempotent: a repeat answers the same boost),
/// unboost (nothing to undo is no error). The boost as a feed item (the original, with
/// `repost`), or after an unboost the original.
pub async fn repost(app: &App, viewer: UserId, post: PostId, on: bool) -> ApiResult<Response> {
    let row =
        if on { boosts::boost(app, viewer, post).await? } else { boosts::unboost(app, viewer, post).await? };
    json(200, &PostView::from(&row))
}

/// `GET /v1/posts/{id}/reposts`: who boosts the post now, newest boost first.
pub async fn reposters(app: &App, input: &Input, viewer: UserId, post: PostId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = format!("reposts:{post}");
    let before = input.cursor(&app.cursors, viewer, &list)?;
    let rows = boosts::boosters(app, viewer, post, before, limit).await?;
    let key = |u: &UserRow| SortKey::new(u.sort_at, u.id.get());
    json(200, &page(rows, limit, key, |u| UserView::from(u), &app.cursors, viewer, &list))
}
