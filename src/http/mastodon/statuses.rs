//! Statuses (posts, and comments as replies), favourites (likes), context, and the home and
//! list timelines (the same feed read as `GET /v1/feed`).

use worker::Response;

use super::accounts::{status_bound, status_links, users_page};
use super::entities::{Accounts, Status};
use super::scheduled::entity;
use super::{accounts_of, filters_for, json, list, statuses_in, statuses_of};
use crate::domain::cursor::SortKey;
use crate::domain::edit::{Dialect, PostEdit};
use crate::domain::filters::{Applied, Context};
use crate::domain::ids::{CommentId, PostId, UserId};
use crate::domain::mastodon::limit;
use crate::domain::params::Endpoint;
use crate::domain::polls::PollDraft;
use crate::domain::quotes::QuotePolicy;
use crate::domain::scheduled::StatusRequest;
use crate::domain::thread::{self, thread_order, Node};
use crate::domain::validate::{CommentBody, PostBody};
use crate::domain::visibility::Visibility;
use crate::domain::warning::ContentWarning;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::http::uploads::{keeps_attachments, media_ids};
use crate::services::feed::{self, FeedQuery, FeedScope};
use crate::services::posts::Draft;
use crate::services::{boosts, comments, likes, mentions, posts, scheduled};
use crate::store::engagement::{self, CommentRow};
use crate::store::posts::PostRow;
use std::rc::Rc;

/// A home timeline read may come back empty while more of the feed remains (a page whose
/// candidates were all hidden). Mastodon clients stop at an empty page, so the read goes on
/// down the feed, at most this many reads, before answering.
const EMPTY_PAGE_READS: usize = 4;
/// Replies listed in a context.
const CONTEXT_REPLIES: usize = 100;
/// How far down `min_id` reads to find the posts just above it: pages, and posts per page.
const MIN_ID_READS: usize = 5;
const MIN_ID_PAGE: usize = 40;

/// What a status id names: a post the viewer may see, or a comment on one.
pub(super) enum Target {
    Post(PostRow),
    /// Boxed: a comment row is twice a post's size.
    Comment(Box<CommentRow>, PostRow),
}

pub(super) async fn target(app: &App, viewer: UserId, id: PostId) -> ApiResult<Target> {
    match posts::visible(app, viewer, id).await {
        Ok(post) => return Ok(Target::Post(post)),
        Err(ApiError::NotFound(_)) => {}
        Err(e) => return Err(e),
    }
    match comments::seen(app, viewer, CommentId::from_trusted(id.get())).await {
        Ok((comment, post)) => Ok(Target::Comment(Box::new(comment), post)),
        Err(ApiError::NotFound(_)) => match moved(app, id).await? {
            Some(reply) => Ok(Target::Post(posts::visible(app, viewer, reply).await?)),
            None => Err(ApiError::NotFound("no such status")),
        },
        Err(e) => Err(e),
    }
}

/// The reply post an old comment's id names since it moved (`services/comment_moves.rs`).
async fn moved(app: &App, id: PostId) -> ApiResult<Option<PostId>> {
    comments::moved(app, CommentId::from_trusted(id.get())).await
}

/// A reply's 404 says "status", as a post's does.
fn as_status(e: ApiError) -> ApiError {
    match e {
        ApiError::NotFound(_) => ApiError::NotFound("no such status"),
        e => e,
    }
}

/// Whether a status id the viewer may see names a reply (a comment) rather than a post.
pub async fn is_reply(app: &App, viewer: UserId, id: PostId) -> ApiResult<bool> {
    Ok(matches!(target(app, viewer, id).await?, Target::Comment(..)))
}

fn authors(target: &Target) -> Vec<UserId> {
    match target {
        Target::Post(p) => vec![p.author_id],
        Target::Comment(c, p) => vec![c.author_id, p.author_id],
    }
}

fn status_of(input: &Input, accounts: &Accounts, target: &Target) -> Status {
    match target {
        Target::Post(p) => Status::of_post(&input.origin, accounts, p),
        Target::Comment(c, p) => Status::of_comment(&input.origin, accounts, c, p),
    }
}

pub(super) async fn answer(app: &App, input: &Input, viewer: UserId, target: &Target) -> ApiResult<Response> {
    if let Target::Post(post) = target {
        let statuses = statuses_of(app, input, viewer, std::slice::from_ref(post)).await?;
        return json(&statuses.first());
    }
    let accounts = accounts_of(app, input, authors(target)).await?;
    json(&status_of(input, &accounts, target))
}

/// `POST /api/v1/statuses`: a post, or with `in_reply_to_id` a reply (a post of the viewer's
/// in the thread of the status it answers: `services/replies.rs`); with `scheduled_at`, the
/// same request checked and kept to publish then (a ScheduledStatus: `http/mastodon/scheduled.rs`).
pub async fn post(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    input.check_params(Endpoint::Publish)?;
    let body = input.form_or_json(false)?;
    let request = status_request(input, &body)?;
    let scheduled_at = match body.str("scheduled_at")?.map(str::trim) {
        None | Some("") => None,
        Some(raw) => Some(crate::domain::scheduled::scheduled_at(raw, app.now)?),
    };
    let reply = match request.in_reply_to {
        Some(id) => Some(comments::reply_target(app, viewer, id).await.map_err(as_status)?),
        None => None,
    };
    let key = input.idempotency_key()?;
    let draft = Draft::of(&request, crate::domain::mastodon::domain_of(&input.origin), reply);
    if let Some(refused) = unexpected_mentions(app, input, &draft).await? {
        return Ok(refused);
    }
    if let Some(at) = scheduled_at {
        let shown = scheduled::schedule(app, viewer, (&request, &draft), at, key.as_ref()).await?;
        return json(&entity(&input.origin, &shown));
    }
    let post = posts::publish(app, viewer, &draft, key.as_ref()).await?;
    answer(app, input, viewer, &Target::Post(post)).await
}

/// A status request's fields, checked (the reply's target is checked apart: it needs I/O).
fn status_request(input: &Input, body: &JsonObject) -> ApiResult<StatusRequest> {
    let media = media_ids(input)?;
    let text = match body.str("status")? {
        Some(text) => text,
        None if !media.is_empty() => "",
        None => body.required_str("status")?,
    };
    let warning = ContentWarning::parse(body.str("spoiler_text")?, body.flag("sensitive")?)?;
    let in_reply_to = status_id(body, "in_reply_to_id")?;
    let text = PostBody::parse_beside_media(text, !media.is_empty())
        .map_err(|e| ApiError::field("status", e.reason))?;
    let visibility = body.optional("visibility", |v| Dialect::Mastodon.visibility(v))?;
    let allowed_mentions = allowed_mentions(input)?;
    let (quote, quote_policy) = quote_fields(body)?;
    let unlisted = body.str("visibility")?.is_some_and(|v| v.trim() == "unlisted");
    let poll = input.poll()?.map(|raw| PollDraft::parse(&raw)).transpose()?;
    Ok(StatusRequest {
        text,
        visibility: visibility.unwrap_or(Visibility::Public),
        unlisted,
        warning,
        media,
        in_reply_to,
        poll,
        quote,
        quote_policy,
        allowed_mentions,
    })
}

/// Mastodon's refusal of a post that mentions someone `allowed_mentions` leaves out: `422` with
/// the accounts in `unexpected_accounts` (what clients show), before anything is written.
async fn unexpected_mentions(app: &App, input: &Input, draft: &Draft<'_>) -> ApiResult<Option<Response>> {
    let Some(allowed) = draft.allowed_mentions else { return Ok(None) };
    let mentioned = mentions::resolve(app, draft.text.as_str(), draft.domain).await?;
    let unexpected: Vec<UserId> = mentioned.iter().map(|m| m.id).filter(|id| !allowed.contains(id)).collect();
    if unexpected.is_empty() {
        return Ok(None);
    }
    let accounts = accounts_of(app, input, unexpected.clone()).await?;
    let listed: Vec<_> = unexpected.iter().filter_map(|id| accounts.get(id)).collect();
    let body = serde_json::json!({
        "error": "Validation failed: the post mentions accounts allowed_mentions leaves out",
        "unexpected_accounts": listed,
    });
    Ok(Some(Response::from_json(&body)?.with_status(422)))
}

/// A status id field (absent or empty: none; else a status id, or 422 on it).
fn status_id(body: &JsonObject, field: &'static str) -> ApiResult<Option<PostId>> {
    match body.str(field)? {
        None | Some("") => Ok(None),
        Some(id) => PostId::parse(id).map(Some).ok_or_else(|| ApiError::field(field, "not a status id")),
    }
}

/// Mastodon 4.5's `quoted_status_id` (a status id, else 422) and `quote_approval_policy`
/// (`public`, `followers`, `nobody`; default `public`).
fn quote_fields(body: &JsonObject) -> ApiResult<(Option<PostId>, QuotePolicy)> {
    let quote = status_id(body, "quoted_status_id")?;
    let policy = match body.str("quote_approval_policy")? {
        None | Some("") => QuotePolicy::default(),
        Some(p) => QuotePolicy::parse(p)
            .ok_or_else(|| ApiError::field("quote_approval_policy", "one of public, followers, nobody"))?,
    };
    Ok((quote, policy))
}

/// A boost's id shows the boost (the booster's status around the original), as in Mastodon.
/// `allowed_mentions[]`: account ids (`None` when not given).
fn allowed_mentions(input: &Input) -> ApiResult<Option<Vec<UserId>>> {
    let given = input.values_of("allowed_mentions")?;
    if given.is_empty() {
        // `allowed_mentions: []` allows nobody; only a list left out allows anyone.
        return Ok(input.names("allowed_mentions")?.then(Vec::new));
    }
    let ids = given.iter().map(|id| {
        UserId::parse(id)
            .ok_or_else(|| ApiError::field("allowed_mentions", "allowed_mentions: not an account id"))
    });
    Ok(Some(ids.collect::<ApiResult<Vec<_>>>()?))
}

pub async fn get(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    match posts::entry(app, viewer, id).await {
        Ok(row) if row.reblog_of.is_some() => answer(app, input, viewer, &Target::Post(row)).await,
        Ok(_) | Err(ApiError::NotFound(_)) => {
            answer(app, input, viewer, &target(app, viewer, id).await?).await
        }
        Err(e) => Err(e),
    }
}

/// `PUT /api/v1/statuses/{id}`: a post's or reply's text and content warning (and, beyond
/// Mastodon, a post's visibility; a reply's is its post's).
pub async fn edit(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    input.check_params(Endpoint::Edit)?;
    let body = input.form_or_json(false)?;
    let edit = PostEdit::parse(Dialect::Mastodon, |name| body.string(name), |name| body.boolean(name))?;
    let (comment, post) = match target(app, viewer, id).await? {
        Target::Post(post) => {
            keeps_attachments(&media_ids(input)?, &post)?;
            let edited = posts::edit(app, viewer, post.id, &edit).await?;
            return answer(app, input, viewer, &Target::Post(edited)).await;
        }
        Target::Comment(comment, post) => (comment, post),
    };
    if edit.visibility.is_some() {
        return Err(ApiError::field("visibility", "a reply has its post's visibility"));
    }
    let text = edit.text.map(|t| CommentBody::parse(t.as_str())).transpose()?;
    let comment = comments::edit(app, viewer, comment.id, text.as_ref(), &edit.warning).await?;
    answer(app, input, viewer, &Target::Comment(Box::new(comment), post)).await
}

/// `DELETE /api/v1/statuses/{id}`: a post, or a reply (comment); the status as it was, with its
/// text.
pub async fn delete(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    let gone = match target(app, viewer, id).await {
        Ok(Target::Post(post)) => Target::Post(posts::delete(app, viewer, post.id).await?),
        Ok(Target::Comment(c, post)) => {
            Target::Comment(Box::new(comments::remove(app, viewer, c.id).await?), post)
        }
        // A reply whose post is hidden from the viewer (taken down, narrowed, a block): its
        // author may still delete it. A deleted post's replies are 404 (`comments::remove`).
        Err(ApiError::NotFound(_)) => {
            let reply =
                comments::remove(app, viewer, CommentId::from_trusted(id.get())).await.map_err(as_status)?;
            let accounts = accounts_of(app, input, vec![reply.author_id]).await?;
            return json(&Status::of_orphan_reply(&input.origin, &accounts, &reply).with_text(&reply.body));
        }
        Err(e) => return Err(e),
    };
    let accounts = accounts_of(app, input, authors(&gone)).await?;
    let text = match &gone {
        Target::Post(p) => &p.body,
        Target::Comment(c, _) => &c.body,
    };
    json(&status_of(input, &accounts, &gone).with_text(text))
}

/// Favourite / unfavourite: like / unlike (idempotent); the status with its exact count. A
/// post's like goes to its object first (the common case: no read before it); an id no post
/// the viewer may see answers to is tried as a reply (a comment's like, `comments::set_like`).
pub async fn favourite(
    app: &App,
    input: &Input,
    viewer: UserId,
    id: PostId,
    on: bool,
) -> ApiResult<Response> {
    match likes::set_like(app, viewer, id, on, None).await {
        Ok(_) => answer(app, input, viewer, &Target::Post(posts::visible(app, viewer, id).await?)).await,
        Err(ApiError::NotFound(_)) => {
            match comments::set_like(app, viewer, CommentId::from_trusted(id.get()), on).await {
                Ok((reply, post)) => {
                    answer(app, input, viewer, &Target::Comment(Box::new(reply), post)).await
                }
                Err(ApiError::NotFound(_)) => {
                    let Some(moved) = moved(app, id).await? else {
                        return Err(ApiError::NotFound("no such status"));
                    };
                    likes::set_like(app, viewer, moved, on, None).await?;
                    answer(app, input, viewer, &Target::Post(posts::visible(app, viewer, moved).await?)).await
                }
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// `POST .../reblog`: the boost (Mastodon's reblog status, the original inside); `.../unreblog`:
/// the original. A reply (a comment) is not a post of its own here yet: 404, as for any id the
/// viewer may not boost. `visibility` is not taken: a boost has its original's reach
/// (`domain/boosts.rs::boost_visibility`).
pub async fn reblog(app: &App, input: &Input, viewer: UserId, id: PostId, on: bool) -> ApiResult<Response> {
    let row =
        if on { boosts::boost(app, viewer, id).await? } else { boosts::unboost(app, viewer, id).await? };
    answer(app, input, viewer, &Target::Post(row)).await
}

/// `GET .../reblogged_by`: who boosts the post now, newest first.
pub async fn reblogged_by(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let cursor_list = format!("mastodon:reblogs:{id}");
    let before = input.cursor_named("max_id", &app.cursors, viewer, &cursor_list)?;
    let rows = boosts::boosters(app, viewer, id, before, limit).await?;
    let base = format!("{}/api/v1/statuses/{id}/reblogged_by", input.origin);
    users_page(app, input, viewer, rows, limit, &base, &cursor_list)
}

/// `GET .../quotes`: the statuses quoting a post the viewer may see that they may see now,
/// newest first; `Link` `next` by the last quote's id (`max_id`), keeping `limit`.
pub async fn quotes(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let before = match input.query("max_id").filter(|v| !v.is_empty()) {
        None => None,
        Some(raw) => Some(PostId::parse(raw).ok_or_else(|| ApiError::field("max_id", "not a status id"))?),
    };
    let (rows, next) = crate::services::quotes::page(app, viewer, id, before, limit).await?;
    let items = statuses_of(app, input, viewer, &rows).await?;
    let kept = crate::domain::mastodon::kept_params(input.query("limit"));
    let sep = if kept.is_empty() { String::new() } else { format!("&{kept}") };
    let link =
        next.map(|n| format!("<{}/api/v1/statuses/{id}/quotes?max_id={n}{sep}>; rel=\"next\"", input.origin));
    list(&items, link)
}

/// `GET .../favourited_by`: a post's likers, or a reply's (a comment's).
pub async fn favourited_by(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let cursor_list = format!("mastodon:likes:{id}");
    let before = input.cursor_named("max_id", &app.cursors, viewer, &cursor_list)?;
    let rows = match posts::visible(app, viewer, id).await {
        Ok(_) => engagement::likers(&app.shards, viewer, id, before, limit).await?,
        Err(ApiError::NotFound(_)) => match moved(app, id).await? {
            Some(post) => {
                posts::visible(app, viewer, post).await?;
                engagement::likers(&app.shards, viewer, post, before, limit).await?
            }
            None => {
                let reply = CommentId::from_trusted(id.get());
                comments::likers(app, viewer, reply, before, limit).await.map_err(as_status)?
            }
        },
        Err(e) => return Err(e),
    };
    let base = format!("{}/api/v1/statuses/{id}/favourited_by", input.origin);
    users_page(app, input, viewer, rows, limit, &base, &cursor_list)
}

/// `GET .../context`, in thread order (`domain/thread.rs`: depth first, each level oldest
/// first) over the post's first [`CONTEXT_REPLIES`] comments the viewer may see: for a post,
/// its replies as descendants; for a reply, the post and the replies above it as ancestors
/// (root first) and the replies below it as descendants.
pub async fn context(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    let (target, applied) =
        futures_util::future::join(target(app, viewer, id), filters_for(app, viewer, Context::Thread)).await;
    let applied = applied?;
    let (focus, post) = match target? {
        // A reply post sits in its root's thread, as a comment does.
        Target::Post(reply) if reply.thread_id.is_some() => {
            let root = reply.thread_id.unwrap_or(reply.id);
            (
                Some(CommentId::from_trusted(reply.id.get())),
                posts::visible(app, viewer, root).await.map_err(as_status)?,
            )
        }
        Target::Post(post) => (None, post),
        Target::Comment(comment, post) => (Some(comment.id), post),
    };
    let order = crate::domain::top::CommentOrder::Time(crate::domain::cursor::Order::OldestFirst);
    let mut rows = engagement::list(&app.shards, viewer, post.id, order, None, CONTEXT_REPLIES).await?;
    rows.truncate(CONTEXT_REPLIES);
    let (rows, mut posts) = comments::visible_rows(app, viewer, rows).await?;
    let nodes: Vec<Node> = rows
        .iter()
        .map(|c| Node { id: c.id, parent: c.parent_id, key: (c.created_at, c.id.get()) })
        .collect();
    let (above, below) = match focus {
        None => (Vec::new(), thread_order(&nodes).into_iter().map(|(i, _)| i).collect()),
        Some(id) => (thread::ancestors(&nodes, id), thread::descendants(&nodes, id)),
    };
    let reply = |i: &usize| Target::Comment(Box::new(rows[*i].clone()), post.clone());
    let descendants: Vec<Target> = below.iter().map(reply).collect();
    let mut ancestors: Vec<Target> = above.iter().map(reply).collect();
    if focus.is_some() {
        ancestors.insert(0, Target::Post(post.clone()));
    }
    posts.push(post);
    let (ancestors, descendants) =
        thread_statuses(app, input, (viewer, &applied), (&ancestors, &descendants), &posts).await?;
    json(&serde_json::json!({ "ancestors": ancestors, "descendants": descendants }))
}

/// A thread's statuses in order: a post (the root, a reply post, whose comment row mirrors it)
/// as the post itself shows (the Status its author got when posting it), from `posts`, the ones
/// already read and checked; a comment of the old kind from its row.
async fn thread_statuses(
    app: &App,
    input: &Input,
    (viewer, applied): (UserId, &Applied),
    (ancestors, descendants): (&[Target], &[Target]),
    posts: &[PostRow],
) -> ApiResult<(Vec<serde_json::Value>, Vec<serde_json::Value>)> {
    let all: Vec<&Target> = ancestors.iter().chain(descendants).collect();
    let post_of = |t: &Target| match t {
        Target::Post(p) => Some(p.id),
        Target::Comment(c, _) if c.reply_post => Some(PostId::from_trusted(c.id.get())),
        Target::Comment(..) => None,
    };
    let in_order: Vec<PostRow> = all
        .iter()
        .filter_map(|t| post_of(t))
        .filter_map(|id| posts.iter().find(|p| p.id == id).cloned())
        .collect();
    // The thread's posts a `hide` filter matches are left out (`statuses_in` drops them).
    let in_order: Vec<PostRow> =
        in_order.into_iter().filter(|p| !crate::services::filters::hides(applied, viewer, p)).collect();
    let rendered = statuses_in(app, input, viewer, &in_order, Some(applied)).await?;
    let rendered: Vec<(PostId, serde_json::Value)> = in_order
        .iter()
        .zip(rendered)
        .map(|(p, s)| (p.id, serde_json::to_value(s).unwrap_or_default()))
        .collect();
    let comments: Vec<&Target> = all.iter().copied().filter(|t| post_of(t).is_none()).collect();
    let accounts = accounts_of(app, input, comments.iter().flat_map(|t| authors(t)).collect()).await?;
    let shown = |targets: &[Target]| -> Vec<serde_json::Value> {
        targets
            .iter()
            .filter_map(|t| match post_of(t) {
                Some(id) => rendered.iter().find(|(p, _)| *p == id).map(|(_, status)| status.clone()),
                None => Some(serde_json::to_value(status_of(input, &accounts, t)).unwrap_or_default()),
            })
            .collect()
    };
    Ok((shown(ancestors), shown(descendants)))
}

/// The feed a timeline reads: the viewer's, home or one of their lists.
pub struct Feed<'a> {
    pub viewer: UserId,
    pub scope: &'a FeedScope,
    /// The viewer's filters (home context), loaded once by [`timeline`].
    pub filters: Option<Rc<Applied>>,
}

impl Feed<'_> {
    fn query(&self, limit: usize, before: Option<SortKey>, after: Option<SortKey>) -> FeedQuery {
        let scope = self.scope.clone();
        FeedQuery {
            viewer: self.viewer,
            limit,
            before,
            below_floor: false,
            after,
            scope,
            filters: self.filters.clone(),
        }
    }
}

/// `GET /api/v1/timelines/home`.
pub async fn home(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    timeline(app, input, &Feed { viewer, scope: &FeedScope::Home, filters: None }, "timelines/home").await
}

/// A timeline (home, a list's): the feed read. `max_id` continues below a status; `since_id`
/// answers the newest posts above one; `min_id` the posts just above one (see [`just_above`]).
/// `max_id` with `since_id` or `min_id` answers only the posts strictly between them, newest
/// first (how Tusky fills a gap). `path` is the route below `/api/v1/`, for `Link`.
pub async fn timeline(app: &App, input: &Input, source: &Feed<'_>, path: &str) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    // Mastodon applies the home context to list timelines too.
    let applied = filters_for(app, source.viewer, Context::Home).await?;
    let source = &Feed { viewer: source.viewer, scope: source.scope, filters: Some(applied.clone()) };
    let max = status_bound(input, "max_id")?;
    let low = match status_bound(input, "since_id")? {
        Some(since) => Some(since),
        None => status_bound(input, "min_id")?,
    };
    let (rows, more) = if let (Some(max), Some(low)) = (max, low) {
        between(app, source, limit, max, low).await?
    } else if let Some(min) = status_bound(input, "min_id")? {
        (just_above(app, source, limit, min).await?, true)
    } else if let Some(since) = status_bound(input, "since_id")? {
        (feed::read(app, &source.query(limit, None, Some(since))).await?.items, true)
    } else {
        below(app, source, limit, max).await?
    };
    let items = statuses_in(app, input, source.viewer, &rows, Some(&applied)).await?;
    let base = format!("{}/api/v1/{path}", input.origin);
    list(&items, status_links(&base, input, &rows, more && !rows.is_empty()))
}

/// A page below `before` (the top without it), and whether more may follow. A page whose
/// candidates were all hidden reads on (clients stop at an empty page).
async fn below(
    app: &App,
    source: &Feed<'_>,
    limit: usize,
    before: Option<SortKey>,
) -> ApiResult<(Vec<PostRow>, bool)> {
    let mut query = source.query(limit, before, None);
    let mut page = feed::read(app, &query).await?;
    for _ in 1..EMPTY_PAGE_READS {
        match page.next {
            Some(next) if page.items.is_empty() => {
                query.before = Some(next);
                page = feed::read(app, &query).await?;
            }
            _ => break,
        }
    }
    Ok((page.items, page.next.is_some()))
}

/// The newest `limit` posts strictly between `low` and `high`, and whether more lie between:
/// read down from `high` until a page reaches `low` (pages whose candidates were hidden read
/// on, as [`below`] does).
async fn between(
    app: &App,
    source: &Feed<'_>,
    limit: usize,
    high: SortKey,
    low: SortKey,
) -> ApiResult<(Vec<PostRow>, bool)> {
    let mut query = source.query(limit, Some(high), None);
    let mut rows = Vec::new();
    for _ in 0..EMPTY_PAGE_READS {
        let page = feed::read(app, &query).await?;
        rows.extend(page.items.into_iter().filter(|p| p.sort_key() > low));
        match page.next.filter(|next| *next > low) {
            Some(next) if rows.len() < limit => query.before = Some(next),
            next => {
                rows.truncate(limit);
                return Ok((rows, next.is_some()));
            }
        }
    }
    rows.truncate(limit);
    Ok((rows, true))
}

/// Mastodon's `min_id`: the `limit` posts just above `min` (the oldest of the newer ones),
/// newest first, so a client paging up by `min_id` skips nothing. The feed reads newest first,
/// so this reads down from the top until it reaches `min`, at most [`MIN_ID_READS`] pages of
/// [`MIN_ID_PAGE`]; if `min` is further down than that it answers the newest posts above it
/// (like `since_id`), which a client sees as a jump, not as a silent skip of what it missed.
async fn just_above(app: &App, source: &Feed<'_>, limit: usize, min: SortKey) -> ApiResult<Vec<PostRow>> {
    let mut query = source.query(MIN_ID_PAGE, None, Some(min));
    let first = feed::read(app, &query).await?;
    let (mut above, mut cursor) = (first.items, first.next);
    query.after = None;
    for _ in 0..MIN_ID_READS {
        let Some(before) = cursor.filter(|key| *key > min) else { break };
        query.before = Some(before);
        let page = feed::read(app, &query).await?;
        above.extend(page.items.into_iter().filter(|p| p.sort_key() > min));
        cursor = page.next;
    }
    if cursor.is_some_and(|key| key > min) {
        above.truncate(limit);
        return Ok(above);
    }
    Ok(above.split_off(above.len().saturating_sub(limit)))
}
