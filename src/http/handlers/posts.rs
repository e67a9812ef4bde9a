use worker::Response;

use super::json;
use crate::domain::cursor::page_of;
use crate::domain::edit::{Dialect, PostEdit};
use crate::domain::ids::{PostId, UserId};
use crate::domain::params::Endpoint;
use crate::domain::quotes::QuotePolicy;
use crate::domain::time::parse_rfc3339;
use crate::domain::validate::{Invalid, PostBody};
use crate::domain::visibility::{visible_levels, Visibility};
use crate::domain::warning::ContentWarning;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::http::uploads::{keeps_attachments, media_ids};
use crate::http::views::{Page, PostView};
use crate::services::posts::{self as service, Draft};
use crate::services::{comments, originals, replies, users};
use crate::store::posts::{self, PostRow};
use crate::store::users::UserKey;

/// A new post from a request body: `body` (required, but may be blank beside attachments),
/// `visibility` (default public).
fn new_post(body: &JsonObject, has_media: bool) -> ApiResult<(PostBody, Visibility)> {
    let text = match body.string("body")? {
        Some(text) => PostBody::parse_beside_media(text, has_media)?,
        None if has_media => PostBody::parse_beside_media("", true)?,
        None => body.required("body", PostBody::parse)?,
    };
    let visibility = body.optional("visibility", |v| Dialect::V1.visibility(v))?;
    Ok((text, visibility.unwrap_or(Visibility::Public)))
}

/// A new post's content warning (`spoiler_text`, `sensitive`: the Mastodon fields, an extension).
fn new_warning(body: &JsonObject) -> ApiResult<ContentWarning> {
    Ok(ContentWarning::parse(body.str("spoiler_text")?, body.flag("sensitive")?)?)
}

fn created(post: &PostRow) -> ApiResult<Response> {
    json(201, &PostView::from(post))
}

/// `quote_of` (a post id) and `quote_policy` (an extension: Mastodon 4.5's quotes).
fn quote_fields(body: &JsonObject) -> ApiResult<(Option<PostId>, QuotePolicy)> {
    let quote =
        body.optional("quote_of", |v| PostId::parse(v).ok_or(Invalid::new("quote_of", "not a post id")))?;
    let quote_policy = body.optional("quote_policy", |v| {
        QuotePolicy::parse(v).ok_or(Invalid::new("quote_policy", "one of public, followers, nobody"))
    })?;
    Ok((quote, quote_policy.unwrap_or_default()))
}

/// `in_reply_to` (an extension: a post, reply post or comment id the viewer may see and act on,
/// else 422), checked.
async fn reply_of(app: &App, viewer: UserId, body: &JsonObject) -> ApiResult<Option<replies::Target>> {
    let id = body
        .optional("in_reply_to", |v| PostId::parse(v).ok_or(Invalid::new("in_reply_to", "not a post id")))?;
    let Some(id) = id else { return Ok(None) };
    comments::reply_target(app, viewer, id).await.map(Some).map_err(|e| match e {
        ApiError::NotFound(_) => ApiError::field("in_reply_to", "no such post or comment"),
        e => e,
    })
}

pub async fn publish(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    input.check_params(Endpoint::V1Publish)?;
    // Polls are Mastodon's (`POST /api/v1/statuses`): refused here, never dropped.
    if input.poll()?.is_some() {
        return Err(ApiError::field("poll", "poll: make polls through POST /api/v1/statuses"));
    }
    let body = input.json(false)?;
    let media = media_ids(input)?;
    let (text, visibility) = new_post(&body, !media.is_empty())?;
    let warning = new_warning(&body)?;
    let key = input.idempotency_key()?;
    let (quote, quote_policy) = quote_fields(&body)?;
    let draft = Draft {
        text: &text,
        visibility,
        unlisted: false,
        warning: &warning,
        media: &media,
        domain: crate::domain::mastodon::domain_of(&input.origin),
        allowed_mentions: None,
        quote,
        quote_policy,
        reply: reply_of(app, viewer, &body).await?,
        poll: None,
    };
    let post = service::publish(app, viewer, &draft, key.as_ref()).await?;
    created(&resolved(app, viewer, post).await?)
}

pub async fn get(app: &App, viewer: UserId, id: PostId) -> ApiResult<Response> {
    json(200, &PostView::from(&resolved(app, viewer, service::visible(app, viewer, id).await?).await?))
}

/// A post as a single answer shows it: a quote with what it shows the viewer now.
async fn resolved(app: &App, viewer: UserId, post: PostRow) -> ApiResult<PostRow> {
    let (rows, _) = originals::resolve(app, viewer, vec![post.clone()], None).await?;
    Ok(rows.into_iter().next().unwrap_or(post))
}

pub async fn edit(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    input.check_params(Endpoint::Edit)?;
    let body = input.json(false)?;
    let edit = PostEdit::parse(Dialect::V1, |name| body.string(name), |name| body.boolean(name))?;
    let media = media_ids(input)?;
    if !media.is_empty() {
        keeps_attachments(&media, &service::visible(app, viewer, id).await?)?;
    }
    json(200, &PostView::from(&service::edit(app, viewer, id, &edit).await?))
}

pub async fn delete(app: &App, viewer: UserId, id: PostId) -> ApiResult<Response> {
    service::delete(app, viewer, id).await?;
    Ok(Response::empty()?.with_status(204))
}

pub async fn author_posts(app: &App, input: &Input, viewer: UserId, author: UserId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let list = format!("posts:{author}");
    let before = input.cursor(&app.cursors, viewer, &list)?;
    let (_, rel) = users::visible_with_relationship(app, viewer, UserKey::Id(author)).await?;
    let rows =
        posts::author_page(app.user_db(author), viewer, author, visible_levels(rel), before, limit).await?;
    // The author's boosts are among their posts, each shown around its original (left out if
    // the viewer may not see that now); the cursor is the last row's, shown or not.
    let (rows, last) = page_of(rows, limit, PostRow::sort_key);
    let (rows, _) = originals::resolve(app, viewer, rows, None).await?;
    let items = rows.iter().map(PostView::from).collect::<Vec<_>>();
    json(200, &Page { items, next_cursor: last.map(|k| app.cursors.encode(viewer, &list, k)) })
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
    let (text, visibility) = new_post(&body, false)?;
    let created_at = import_time(app, &body)?;
    let key = || input.idempotency_key();
    created(&service::import(app, author, (&text, visibility), created_at, None, key).await?)
}
