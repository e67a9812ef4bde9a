use sha2::{Digest, Sha256};
use worker::Response;

use super::users::{visible_user, visible_user_with_relationship};
use super::{json, page};
use crate::domain::validate::{self, MAX_BODY_CHARS};
use crate::domain::visibility::{visible_levels, window_change, Visibility};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{cursor_key, Input, JsonObject};
use crate::http::views::PostView;
use crate::store::posts::{self, NewPost, PostRow};

fn body_field(body: &JsonObject) -> ApiResult<Option<String>> {
    body.str("body")?
        .map(|b| validate::text_body(b, MAX_BODY_CHARS).map_err(|m| ApiError::field("body", m)))
        .transpose()
}

fn visibility_field(body: &JsonObject) -> ApiResult<Option<Visibility>> {
    body.str("visibility")?
        .map(|v| {
            Visibility::parse(v).ok_or_else(|| {
                ApiError::field("visibility", "visibility must be public, followers or private")
            })
        })
        .transpose()
}

/// Fingerprint of what a publish request asks for, so a reused Idempotency-Key with a
/// different request is refused instead of silently answering with the wrong post.
pub fn request_hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Loads a post the viewer (its author here) just wrote; it exists unless deleted meanwhile.
async fn created_post(app: &App, viewer: i64, post_id: i64) -> ApiResult<PostRow> {
    posts::get_visible(&app.db, viewer, post_id).await?.ok_or(ApiError::NotFound("no such post"))
}

pub async fn publish(app: &App, input: &Input, viewer: i64) -> ApiResult<Response> {
    let body = input.json(false)?;
    let text = body_field(&body)?.ok_or_else(|| ApiError::field("body", "body is required"))?;
    let visibility = visibility_field(&body)?.unwrap_or(Visibility::Public);
    let idempotency = input
        .idempotency_key()?
        .map(|key| (viewer, format!("publish:{key}"), request_hash(&[visibility.as_str(), &text])));
    let new_post = NewPost { author_id: viewer, body: &text, visibility, created_at: app.now, idempotency };
    let published = posts::publish(&app.db, new_post, app.now).await?;
    app.announce(viewer, &published.outbox_id.into_iter().collect::<Vec<_>>()).await;
    json(201, &PostView::from(&created_post(app, viewer, published.post_id).await?))
}

pub async fn get(app: &App, viewer: i64, id: i64) -> ApiResult<Response> {
    let post = posts::get_visible(&app.db, viewer, id).await?.ok_or(ApiError::NotFound("no such post"))?;
    json(200, &PostView::from(&post))
}

/// A post the viewer may see and also wrote: 404 if hidden, 403 if visible but someone else's.
async fn own_post(app: &App, viewer: i64, id: i64) -> ApiResult<PostRow> {
    let post = posts::get_visible(&app.db, viewer, id).await?.ok_or(ApiError::NotFound("no such post"))?;
    if post.author_id != viewer {
        return Err(ApiError::Forbidden {
            code: "not_author",
            detail: "only the author may change this post",
        });
    }
    Ok(post)
}

pub async fn edit(app: &App, input: &Input, viewer: i64, id: i64) -> ApiResult<Response> {
    let body = input.json(false)?;
    let text = body_field(&body)?;
    let visibility = visibility_field(&body)?;
    if text.is_none() && visibility.is_none() {
        return Err(ApiError::field("body", "give body and/or visibility to change"));
    }
    let post = own_post(app, viewer, id).await?;
    let change = visibility.and_then(|new| window_change(post.visibility, new));
    let events = posts::edit(&app.db, id, text.as_deref(), visibility, change, app.now).await?;
    app.announce(viewer, &events).await;
    json(200, &PostView::from(&created_post(app, viewer, id).await?))
}

pub async fn delete(app: &App, viewer: i64, id: i64) -> ApiResult<Response> {
    own_post(app, viewer, id).await?;
    let events = posts::delete(&app.db, id, app.now).await?;
    app.announce(viewer, &events).await;
    Ok(Response::empty()?.with_status(204))
}

pub async fn author_posts(app: &App, input: &Input, viewer: i64, author: i64) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = format!("posts:{author}");
    let before = cursor_key(input, &app.cursors, viewer, &list)?;
    let (_, rel) = visible_user_with_relationship(app, viewer, author).await?;
    let rows = posts::author_page(&app.db, viewer, author, visible_levels(rel), before, limit).await?;
    json(200, &page(rows, limit, PostRow::sort_key, |p| PostView::from(p), &app.cursors, viewer, &list))
}

pub async fn import(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.json(false)?;
    let author = body.required_id("author_id")?;
    let text = body_field(&body)?.ok_or_else(|| ApiError::field("body", "body is required"))?;
    let visibility = visibility_field(&body)?.unwrap_or(Visibility::Public);
    let created_raw = body.required_str("created_at")?;
    let created_at = crate::domain::time::parse_rfc3339(created_raw)
        .ok_or_else(|| ApiError::field("created_at", "created_at must be an RFC 3339 time"))?;
    // A post from the future would sit on top of every feed until its time came.
    if created_at > app.now + 60_000 {
        return Err(ApiError::field("created_at", "created_at must not be in the future"));
    }
    visible_user(app, author, author).await.map_err(|_| ApiError::field("author_id", "no such user"))?;
    let idempotency = input.idempotency_key()?.map(|key| {
        (
            author,
            format!("import:{key}"),
            request_hash(&[visibility.as_str(), &text, &created_at.to_string()]),
        )
    });
    let new_post = NewPost { author_id: author, body: &text, visibility, created_at, idempotency };
    let published = posts::publish(&app.db, new_post, app.now).await?;
    app.announce(author, &published.outbox_id.into_iter().collect::<Vec<_>>()).await;
    json(201, &PostView::from(&created_post(app, author, published.post_id).await?))
}
