//! Posts: publish (and the admin's import), edit, delete, and the checks an act on a post starts
//! with: the viewer may see it (else 404, exactly like a post that does not exist), may act on
//! it (not taken down), wrote it. A change commits with its outbox events and hands them to the
//! fan-out (`services/fanout/`).

use futures_util::future::join;
use sha2::{Digest, Sha256};

use crate::context::{id_seed, Ctx};
use crate::domain::edit::PostEdit;
use crate::domain::ids::{OutboxId, PostId, UserId};
use crate::domain::media::Attachment;
use crate::domain::mentions::Mentioned;
use crate::domain::polls::PollDraft;
use crate::domain::quotes::QuotePolicy;
use crate::domain::replica::Change;
use crate::domain::scheduled::StatusRequest;
use crate::domain::validate::{IdempotencyKey, PostBody};
use crate::domain::visibility::{narrower, Visibility};
use crate::domain::warning::ContentWarning;
use crate::error::{ApiError, ApiResult};
use crate::services::{
    boosts, edits, fanout, media, mentions, originals, quotes, replicas, replies, timelines, users,
};
use crate::store::error::Conflict;
use crate::store::posts::{self, IdempotencyScope, NewPost, PostRow};
use crate::store::StoreError;

/// The post an act on `id` is about, the viewer may see now, or 404 exactly like one that does
/// not exist: a boost's id names its original (a favourite, a bookmark, a reply, the likers of
/// a boost are the original's, as in Mastodon).
pub async fn visible(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    originals::subject(ctx, viewer, id).await
}

/// The row `id` names, boost or post, the viewer may see now (a single status's view, which
/// shows a boost as the booster's entry around its original).
pub async fn entry(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    originals::entry(ctx, viewer, id).await
}

/// A post the viewer may see and act on now (comment, edit): a taken-down post, which only its
/// author still sees, is refused with 409 `taken_down`.
pub async fn open(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    let post = visible(ctx, viewer, id).await?;
    if post.is_taken_down() {
        return Err(ApiError::Conflict {
            code: "taken_down",
            detail: "this post was taken down by a moderator",
        });
    }
    Ok(post)
}

/// A post the viewer may see and also wrote: 404 if hidden, 403 if visible but someone else's.
/// A taken-down post may be deleted by its author, not edited (`open` refuses it with 409).
async fn own(ctx: &Ctx, viewer: UserId, id: PostId, open: bool) -> ApiResult<PostRow> {
    let post = if open { self::open(ctx, viewer, id).await? } else { entry(ctx, viewer, id).await? };
    if post.author_id != viewer {
        return Err(ApiError::Forbidden {
            code: "not_author",
            detail: "only the author may change this post",
        });
    }
    Ok(post)
}

/// Fingerprint of what a publish request asks for, so a reused Idempotency-Key with a
/// different request is refused instead of silently answering with the wrong post.
fn request_hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What an author asks to publish.
pub struct Draft<'a> {
    pub text: &'a PostBody,
    pub visibility: Visibility,
    /// Mastodon's `unlisted` (with `Public`): kept out of the public and tag timelines.
    pub unlisted: bool,
    pub warning: &'a ContentWarning,
    /// Uploads to attach, in order (`domain::media::media_ids`).
    pub media: &'a [i64],
    /// This server's domain, as `@handle@domain` mentions name it (the request's host).
    pub domain: &'a str,
    /// Mastodon's `allowed_mentions`: the only accounts the post may mention (`None`: any).
    pub allowed_mentions: Option<&'a [UserId]>,
    /// The post it quotes (`services/quotes.rs::check`), and who may quote this one.
    pub quote: Option<PostId>,
    pub quote_policy: QuotePolicy,
    /// What it replies to, checked (`services/comments.rs::reply_target`).
    pub reply: Option<replies::Target>,
    /// Its poll, checked (`domain::polls::PollDraft::parse`).
    pub poll: Option<&'a PollDraft>,
}

impl<'a> Draft<'a> {
    /// A checked status request (`POST /api/v1/statuses`, or a scheduled post's) with its
    /// reply's target, checked by the caller, and the domain its mentions name.
    pub fn of(request: &'a StatusRequest, domain: &'a str, reply: Option<replies::Target>) -> Draft<'a> {
        Draft {
            text: &request.text,
            visibility: request.visibility,
            unlisted: request.unlisted,
            warning: &request.warning,
            media: &request.media,
            domain,
            allowed_mentions: request.allowed_mentions.as_deref(),
            quote: request.quote,
            quote_policy: request.quote_policy,
            reply,
            poll: request.poll.as_ref(),
        }
    }
}

/// Publishes `author`'s post now; with `key`, a repeat of the same request answers the same
/// post (and a different request under the key is refused). The post as its author sees it.
pub async fn publish(
    ctx: &Ctx,
    author: UserId,
    draft: &Draft<'_>,
    key: Option<&IdempotencyKey>,
) -> ApiResult<PostRow> {
    publish_as(ctx, author, draft, key, None).await
}

/// Publishes scheduled post `id` (`services/scheduled.rs`) through the same path, under a key of
/// its own, with its row deleted in the publish batch: a second pass, or a retry after a stop,
/// finds the post the first made and publishes nothing.
pub async fn publish_scheduled(ctx: &Ctx, author: UserId, draft: &Draft<'_>, id: i64) -> ApiResult<PostRow> {
    publish_as(ctx, author, draft, Some(&IdempotencyKey::of_scheduled(id)), Some(id)).await
}

/// What a publish checks before it writes (the quote, the uploads, `allowed_mentions`; the
/// reply's target is the caller's), without writing: a scheduled post is checked by the rules
/// it will publish by. The attachments it names.
pub async fn check(ctx: &Ctx, author: UserId, draft: &Draft<'_>) -> ApiResult<Vec<Attachment>> {
    links_of(ctx, author, draft).await?;
    let media = media::for_post(ctx, author, draft.media, None).await?;
    mentions_of(ctx, draft).await?;
    Ok(media)
}

async fn publish_as(
    ctx: &Ctx,
    author: UserId,
    draft: &Draft<'_>,
    key: Option<&IdempotencyKey>,
    scheduled: Option<i64>,
) -> ApiResult<PostRow> {
    let Draft { text, warning, media, .. } = *draft;
    let (quoted, reply) = links_of(ctx, author, draft).await?;
    let visibility = reply.as_ref().map_or(draft.visibility, |r| narrower(draft.visibility, r.widest));
    let idempotency =
        key.map(|key| IdempotencyScope::new(author, "publish", key, fingerprint(draft, quoted)));
    let media = match media::for_post(ctx, author, media, scheduled).await {
        Ok(media) => media,
        // A retry with uploads finds them attached, by the post it made: that post answers it
        // (the key is read only here, or in the store once the batch finds it taken).
        Err(refused) => match &idempotency {
            Some(scope) => match posts::replay(ctx.user_db(author), scope).await.map_err(publish_error)? {
                Some(replayed) => return answer(replayed),
                None => return Err(refused),
            },
            None => return Err(refused),
        },
    };
    let media = &media;
    let mentioned = mentions_of(ctx, draft).await?;
    let column = Mentioned::column(&mentioned);
    let new = NewPost {
        author_id: author,
        body: text.as_str(),
        reblog_of: None,
        mentions: column.as_deref(),
        quote_of: quoted,
        quote_policy: draft.quote_policy,
        reply: reply.map(|r| r.to),
        visibility,
        unlisted: draft.unlisted,
        warning,
        media,
        created_at: ctx.now,
        idempotency,
        poll: draft.poll,
        scheduled,
    };
    // The author is the token's user, confirmed on this request: a post whose author row is gone
    // (its foreign key) means that user is gone meanwhile.
    let post = commit(ctx, new, ApiError::InvalidToken("the token's user does not exist")).await?;
    converge_links(ctx, &post).await?;
    Ok(post)
}

/// After a publish: what the new post names on other databases, each made to agree with it
/// (its mentions' notifications and conversations, a quote's mirror, a reply's thread row); its
/// outbox event does the same again, so a stop between the databases loses nothing.
async fn converge_links(ctx: &Ctx, post: &PostRow) -> ApiResult<()> {
    let thread = post.thread_id.unwrap_or(post.id);
    mentions::notify(ctx, (post.id, thread, post.author_id, post.visibility), &post.mentioned(), true)
        .await?;
    if let Some(mirror) = quotes::mirror_of(ctx, post, true) {
        quotes::converge(ctx, &mirror).await?;
    }
    if let Some(mirror) = replies::mirror_of(ctx, post, true) {
        replies::converge(ctx, &mirror).await?;
    }
    Ok(())
}

/// What a publish request asks for, as [`request_hash`] takes it.
fn fingerprint(draft: &Draft<'_>, quoted: Option<PostId>) -> String {
    let Draft { text, visibility, warning, media, .. } = *draft;
    let sensitive = if warning.sensitive { "sensitive" } else { "" };
    let media_ids: Vec<String> = media.iter().map(i64::to_string).collect();
    let mut parts = vec![visibility.as_str(), text.as_str(), &warning.spoiler_text, sensitive];
    parts.extend(media_ids.iter().map(String::as_str));
    // A request without a warning or media keeps the fingerprint it had before they existed.
    if *warning == ContentWarning::default() && media.is_empty() {
        parts.truncate(2);
    }
    let quote = quoted.map(|id| format!("quote:{id}:{}", draft.quote_policy.as_str()));
    parts.extend(quote.as_deref());
    parts.extend(draft.unlisted.then_some("unlisted"));
    let reply = draft.reply.map(|r| format!("reply:{}", r.to.parent));
    parts.extend(reply.as_deref());
    let poll = draft
        .poll
        .map(|p| format!("poll:{}:{}:{}:{}", p.options_json(), p.expires_in_secs, p.multiple, p.hide_totals));
    parts.extend(poll.as_deref());
    request_hash(&parts)
}

/// The post the draft quotes (checked before anything is written; a boost's id names its
/// original) and what it replies to (checked by the caller); `None` for none.
async fn links_of(
    ctx: &Ctx,
    author: UserId,
    draft: &Draft<'_>,
) -> ApiResult<(Option<PostId>, Option<replies::Target>)> {
    let quoted = match draft.quote {
        Some(id) => Some(quotes::check(ctx, author, id).await?.id),
        None => None,
    };
    Ok((quoted, draft.reply))
}

/// The accounts the draft mentions; `422` when `allowed_mentions` leaves one out (Mastodon's
/// rule: the post is refused, not trimmed).
async fn mentions_of(ctx: &Ctx, draft: &Draft<'_>) -> ApiResult<Vec<Mentioned>> {
    let mentioned = mentions::resolve(ctx, draft.text.as_str(), draft.domain).await?;
    if let Some(allowed) = draft.allowed_mentions {
        let unexpected: Vec<String> =
            mentioned.iter().filter(|m| !allowed.contains(&m.id)).map(|m| m.id.to_string()).collect();
        if !unexpected.is_empty() {
            return Err(ApiError::field(
                "allowed_mentions",
                format!("the post mentions accounts allowed_mentions leaves out: {}", unexpected.join(", ")),
            ));
        }
    }
    Ok(mentioned)
}

/// Admin: imports `author`'s post (or, with `reply`, their reply, checked by the caller) with
/// its original time, through the same pipeline. The author must exist (else a 422 on
/// `author_id`), which is checked before `key` is read.
pub async fn import(
    ctx: &Ctx,
    author: UserId,
    (text, visibility): (&PostBody, Visibility),
    created_at: i64,
    reply: Option<replies::Target>,
    key: impl FnOnce() -> ApiResult<Option<IdempotencyKey>>,
) -> ApiResult<PostRow> {
    users::visible(ctx, author, author).await.map_err(|_| ApiError::field("author_id", "no such user"))?;
    let mut parts = vec![visibility.as_str().to_owned(), text.as_str().to_owned(), created_at.to_string()];
    parts.extend(reply.map(|r| format!("reply:{}", r.to.parent)));
    let fingerprint = request_hash(&parts.iter().map(String::as_str).collect::<Vec<_>>());
    let idempotency = key()?.map(|key| IdempotencyScope::new(author, "import", &key, fingerprint));
    let warning = &ContentWarning::default();
    let post = NewPost {
        author_id: author,
        body: text.as_str(),
        reblog_of: None,
        mentions: None,
        quote_of: None,
        quote_policy: QuotePolicy::default(),
        reply: reply.map(|r| r.to),
        visibility: reply.map_or(visibility, |r| narrower(visibility, r.widest)),
        unlisted: false,
        warning,
        media: &[],
        created_at,
        idempotency,
        poll: None,
        scheduled: None,
    };
    // The author row checked above, gone meanwhile: answered as that check would have.
    let post = commit(ctx, post, ApiError::field("author_id", "no such user")).await?;
    // An old reply's row notifies nobody (`domain/replies.rs::notifies`): an import is old news.
    if let Some(mirror) = replies::mirror_of(ctx, &post, true) {
        replies::converge(ctx, &mirror).await?;
    }
    Ok(post)
}

/// Commits a post with its outbox event (or finds the one an earlier request under its key
/// made), tells the author's replicas (if any) and announces the fan-out; the post as its
/// author sees it, read back in the commit's own round trip. `author_gone` answers a post whose
/// author row is missing (what that means is the caller's to say).
async fn commit(ctx: &Ctx, post: NewPost<'_>, author_gone: ApiError) -> ApiResult<PostRow> {
    let author = post.author_id;
    let sent_at = ctx.clock();
    let mut published = match posts::publish(ctx.user_db(author), post, ctx.now, id_seed()?).await {
        Ok(published) => published,
        Err(StoreError::MissingReference { .. }) => return Err(author_gone),
        Err(e) => return Err(publish_error(e)),
    };
    if let Some((bump, held)) = published.bump.take() {
        replicas::tell(ctx, Some(bump), sent_at, Change::Post(held)).await;
    }
    // The timeline index is written beside the announcement (its test-hook check and the
    // queue send), so a public post costs the publish no sequential round trip of its own.
    let events: Vec<OutboxId> = published.outbox_id.into_iter().collect();
    let new_post = published.post.as_ref().filter(|_| !published.replayed);
    join(fanout::announce(ctx, author, &events), async {
        if let Some(post) = new_post {
            index(ctx, Some(post), None).await;
        }
    })
    .await;
    answer(published)
}

/// Brings the post's public and tag timeline entries and its search rows to its state at once,
/// side by side (best effort: the post's fan-out event does both again for a public post, so
/// a failure here only delays them; the search read re-checks every hit).
async fn index(ctx: &Ctx, post: Option<&PostRow>, was: Option<&PostRow>) {
    let timeline = async {
        if let Err(e) = timelines::converge(ctx, post, was).await {
            worker::console_error!(
                "timeline index of {:?}: {e}; the fan-out event retries",
                post.or(was).map(|p| p.id)
            );
        }
    };
    join(timeline, crate::services::search::index::post(ctx, post, was)).await;
}

/// The post a publish (or its replay) answers with: 404, exactly like a post that does not
/// exist, if a replayed one was deleted or hidden since.
fn answer(published: posts::Published) -> ApiResult<PostRow> {
    published.post.ok_or(ApiError::NotFound("no such post"))
}

/// A publish's (or an import's) store failure as its author sees it.
fn publish_error(e: StoreError) -> ApiError {
    match e {
        StoreError::Conflict { reason: Conflict::KeyReused, .. } => ApiError::Conflict {
            code: "idempotency_key_reused",
            detail: "this Idempotency-Key was already used for a different request",
        },
        StoreError::Conflict { reason: Conflict::MediaAttached, .. } => ApiError::field(
            "media_ids",
            "media_ids: an upload named is attached to another status or has expired: upload it again",
        ),
        other => other.into(),
    }
}

/// Changes the viewer's own post; the post as it is now.
pub async fn edit(ctx: &Ctx, viewer: UserId, id: PostId, edit: &PostEdit) -> ApiResult<PostRow> {
    // A boost's id names its original here (`visible`): a boost has no text of its own to edit.
    let post = own(ctx, viewer, id, true).await?;
    if post.id != id {
        return Err(ApiError::NotFound("no such post"));
    }
    // A reply is never seen more widely than what it answers: its visibility only narrows.
    let widens = edit.visibility.is_some_and(|v| narrower(v, post.visibility) != v);
    if post.in_reply_to_id.is_some() && widens {
        return Err(ApiError::field("visibility", "a reply's visibility may only narrow"));
    }
    let sent_at = ctx.clock();
    let (events, bump, changed) = posts::edit(ctx.post_db(id), (id, viewer), edit, ctx.now).await?;
    replicas::tell_post(ctx, bump, sent_at, id).await?;
    fanout::announce(ctx, viewer, &events).await;
    let was = post;
    if changed {
        edits::tell_boosters(ctx, (id, viewer)).await?;
    }
    edits::tell_live_followers(ctx, (id, viewer)).await;
    let post = visible(ctx, viewer, id).await?;
    index(ctx, Some(&post), Some(&was)).await;
    replies::edited(ctx, &post).await?;
    Ok(post)
}

/// Deletes the viewer's own post; the post as it was.
pub async fn delete(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    let post = own(ctx, viewer, id, false).await?;
    // Deleting one's boost is an unboost: its mirror turns off with it.
    if let Some(original) = post.reblog_of {
        boosts::remove(ctx, &post, original).await?;
        return Ok(post);
    }
    retract(ctx, post).await
}

/// Deletes a reply the viewer may see in a thread they own (the `/v1` comments API lets a
/// post's author delete any comment on it, and a comment is a reply post): as its author would.
pub async fn delete_in_own_thread(ctx: &Ctx, viewer: UserId, reply: PostRow) -> ApiResult<PostRow> {
    let root = reply.thread_id.ok_or(ApiError::NotFound("no such comment"))?;
    if visible(ctx, viewer, root).await?.author_id != viewer {
        return Err(ApiError::Forbidden {
            code: "not_author",
            detail: "only the comment's author or the post's author may delete it",
        });
    }
    retract(ctx, reply).await
}

/// Deletes a post (not a boost) whoever asked: its windows, replicas and mirrors follow.
async fn retract(ctx: &Ctx, post: PostRow) -> ApiResult<PostRow> {
    let (id, author) = (post.id, post.author_id);
    let sent_at = ctx.clock();
    let (events, bump) = posts::delete(ctx.post_db(id), (id, author), ctx.now).await?;
    replicas::tell(ctx, bump, sent_at, Change::Gone(id)).await;
    fanout::announce(ctx, author, &events).await;
    index(ctx, None, Some(&post)).await;
    // A quote's count drops at once; its event converges the mirror again if this stops here.
    if let Some(mirror) = quotes::mirror_of(ctx, &post, false) {
        quotes::converge(ctx, &mirror).await?;
    }
    // Likewise a reply's row in its thread.
    if let Some(mirror) = replies::mirror_of(ctx, &post, false) {
        replies::converge(ctx, &mirror).await?;
    }
    Ok(post)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_hashes_tell_the_parts_apart() {
        let hash = request_hash(&["public", "hello"]);
        assert_eq!(hash.len(), 64);
        assert_eq!(hash, request_hash(&["public", "hello"]));
        // Each part is length-prefixed, so moving a boundary changes the fingerprint.
        assert_ne!(hash, request_hash(&["publich", "ello"]));
        assert_ne!(request_hash(&["ab", "c"]), request_hash(&["a", "bc"]));
        assert_ne!(hash, request_hash(&["public", "hello", "0"]));
    }
}
