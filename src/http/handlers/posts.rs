use sha2::{Digest, Sha256};
use worker::Response;

use super::users::{visible_user, visible_user_with_relationship};
use super::{json, open_post, page, visible_post};
use crate::context::id_seed;
use crate::domain::ids::{PostId, UserId};
use crate::domain::time::parse_rfc3339;
use crate::domain::validate::{Invalid, PostBody};
use crate::domain::visibility::{visible_levels, Visibility};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::http::views::PostView;
use crate::services::fanout;
use crate::store::posts::{self, IdempotencyScope, NewPost, PostRow};
use crate::store::users::UserKey;

pub fn parse_visibility(text: &str) -> Result<Visibility, Invalid> {
    Visibility::parse(text)
        .ok_or_else(|| Invalid::new("visibility", "visibility must be public, followers or private"))
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

/// A new post from a request body: `body` (required), `visibility` (default public).
fn new_post(body: &JsonObject) -> ApiResult<(PostBody, Visibility)> {
    let text = body.required("body", PostBody::parse)?;
    Ok((text, body.optional("visibility", parse_visibility)?.unwrap_or(Visibility::Public)))
}

/// Commits a post with its outbox event and announces the fan-out; the post as its author sees it.
pub async fn publish_post(app: &App, post: NewPost<'_>) -> ApiResult<PostRow> {
    let author = post.author_id;
    let published = posts::publish(app.user_db(author), post, app.now, id_seed()?).await?;
    fanout::announce(app, author, &published.outbox_id.into_iter().collect::<Vec<_>>()).await;
    visible_post(app, author, published.post_id).await
}

async fn publish_as(app: &App, post: NewPost<'_>) -> ApiResult<Response> {
    json(201, &PostView::from(&publish_post(app, post).await?))
}

pub async fn publish(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let (text, visibility) = new_post(&input.json(false)?)?;
    let idempotency = input.idempotency_key()?.map(|key| {
        IdempotencyScope::new(viewer, "publish", &key, request_hash(&[visibility.as_str(), text.as_str()]))
    });
    let post = NewPost { author_id: viewer, body: &text, visibility, created_at: app.now, idempotency };
    publish_as(app, post).await
}

pub async fn get(app: &App, viewer: UserId, id: PostId) -> ApiResult<Response> {
    json(200, &PostView::from(&visible_post(app, viewer, id).await?))
}

/// A post the viewer may see and also wrote: 404 if hidden, 403 if visible but someone else's.
/// A taken-down post may be deleted by its author, not edited (`open` refuses it with 409).
pub async fn own_post(app: &App, viewer: UserId, id: PostId, open: bool) -> ApiResult<PostRow> {
    let post = if open { open_post(app, viewer, id).await? } else { visible_post(app, viewer, id).await? };
    if post.author_id != viewer {
        return Err(ApiError::Forbidden {
            code: "not_author",
            detail: "only the author may change this post",
        });
    }
    Ok(post)
}

pub async fn edit(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    let body = input.json(false)?;
    let text = body.optional("body", PostBody::parse)?;
    let visibility = body.optional("visibility", parse_visibility)?;
    if text.is_none() && visibility.is_none() {
        return Err(ApiError::field("body", "give body and/or visibility to change"));
    }
    json(200, &PostView::from(&edit_post(app, viewer, id, text.as_ref(), visibility).await?))
}

/// Changes the viewer's own post; the post as it is now.
pub async fn edit_post(
    app: &App,
    viewer: UserId,
    id: PostId,
    text: Option<&PostBody>,
    visibility: Option<Visibility>,
) -> ApiResult<PostRow> {
    own_post(app, viewer, id, true).await?;
    let events = posts::edit(app.post_db(id), id, text, visibility, app.now).await?;
    fanout::announce(app, viewer, &events).await;
    visible_post(app, viewer, id).await
}

pub async fn delete(app: &App, viewer: UserId, id: PostId) -> ApiResult<Response> {
    delete_post(app, viewer, id).await?;
    Ok(Response::empty()?.with_status(204))
}

/// Deletes the viewer's own post; the post as it was.
pub async fn delete_post(app: &App, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    let post = own_post(app, viewer, id, false).await?;
    let events = posts::delete(app.post_db(id), id, app.now).await?;
    fanout::announce(app, viewer, &events).await;
    Ok(post)
}

pub async fn author_posts(app: &App, input: &Input, viewer: UserId, author: UserId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = format!("posts:{author}");
    let before = input.cursor(&app.cursors, viewer, &list)?;
    let (_, rel) = visible_user_with_relationship(app, viewer, UserKey::Id(author)).await?;
    let rows =
        posts::author_page(app.user_db(author), viewer, author, visible_levels(rel), before, limit).await?;
    json(200, &page(rows, limit, PostRow::sort_key, |p| PostView::from(p), &app.cursors, viewer, &list))
}

/// An imported item's original time: RFC 3339, not in the future (a post from the future would
/// sit on top of every feed until its time came).
pub fn import_time(app: &App, body: &JsonObject) -> ApiResult<i64> {
    let created_at = parse_rfc3339(body.required_str("created_at")?)
        .ok_or_else(|| ApiError::field("created_at", "created_at must be an RFC 3339 time"))?;
    if created_at > app.now + 60_000 {
        return Err(ApiError::field("created_at", "created_at must not be in the future"));
    }
    Ok(created_at)
}

/// Admin: import a post with its original time; it goes through the same pipeline.
pub async fn import(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.json(false)?;
    let author = body.required_id("author_id", UserId::parse)?;
    let (text, visibility) = new_post(&body)?;
    let created_at = import_time(app, &body)?;
    visible_user(app, author, author).await.map_err(|_| ApiError::field("author_id", "no such user"))?;
    let fingerprint = request_hash(&[visibility.as_str(), text.as_str(), &created_at.to_string()]);
    let idempotency =
        input.idempotency_key()?.map(|key| IdempotencyScope::new(author, "import", &key, fingerprint));
    publish_as(app, NewPost { author_id: author, body: &text, visibility, created_at, idempotency }).await
}
