//! Quotes (Mastodon 4.5): checked when a post quoting another is published, mirrored on the
//! quoted post's database with their count and notification (by the request and again by the
//! quote's outbox event, `services/fanout/reads.rs`), listed, and taken back with the quote.
//! What a quote shows a viewer is decided at read time (`services/originals.rs::resolve`).

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::quotes::{may_quote, QuoteMirror, Refusal};
use crate::error::{ApiError, ApiResult};
use crate::services::{originals, streaming, users};
use crate::store::posts::PostRow;
use crate::store::quotes;
use crate::store::users::UserKey;

/// The post `quoter` may quote as `id` (a boost's id names its original, as Mastodon quotes
/// the reblogged post), else `422` on `quoted_status_id`: absent or hidden, not quotable (not
/// public, or direct), or its author's policy leaves the quoter out.
pub async fn check(ctx: &Ctx, quoter: UserId, id: PostId) -> ApiResult<PostRow> {
    let field = |why: &str| ApiError::field("quoted_status_id", why);
    let quoted = originals::subject(ctx, quoter, id).await.map_err(|e| match e {
        ApiError::NotFound(_) => field("no such post"),
        e => e,
    })?;
    if quoted.is_taken_down() {
        return Err(field("no such post"));
    }
    let author = users::get_with_relationship(ctx, quoter, UserKey::Id(quoted.author_id)).await?;
    let rel = author.map(|(_, rel)| rel).unwrap_or_default();
    may_quote(rel, quoted.visibility, quoted.quote_policy()).map_err(|refusal| match refusal {
        Refusal::NotQuotable => field("this post may not be quoted"),
        Refusal::NotAllowed => field("its author does not allow you to quote it"),
    })?;
    Ok(quoted)
}

/// The mirror of `quote` (a quote's row, as it is now: `active` when it is there).
pub fn mirror_of(ctx: &Ctx, quote: &PostRow, active: bool) -> Option<QuoteMirror> {
    Some(QuoteMirror {
        quoted: quote.quote_of?,
        quote: quote.id,
        quoter: quote.author_id,
        created_at: quote.created_at,
        active,
        now: ctx.now,
    })
}

/// Makes the quoted post's mirror agree with the quote, and tells the quoted author's live
/// sockets of a new notification. Idempotent.
pub async fn converge(ctx: &Ctx, mirror: &QuoteMirror) -> ApiResult<()> {
    if let Some(notice) = quotes::converge(ctx.post_db(mirror.quoted), mirror).await? {
        streaming::tell(ctx, notice).await;
    }
    Ok(())
}

/// The quotes of a post the viewer may see (else 404) that they may see now, newest first,
/// strictly below `before`; and the last quote id scanned when more may follow.
pub async fn page(
    ctx: &Ctx,
    viewer: UserId,
    id: PostId,
    before: Option<PostId>,
    limit: usize,
) -> ApiResult<(Vec<PostRow>, Option<PostId>)> {
    let post = originals::subject(ctx, viewer, id).await?;
    let ids = quotes::page(ctx.post_db(post.id), post.id, before, limit).await?;
    let next = ids.last().copied().filter(|_| ids.len() == limit);
    let shown = originals::visible_among(ctx, viewer, &ids).await?;
    let mut rows: Vec<PostRow> =
        ids.iter().filter_map(|id| shown.iter().find(|p| p.id == *id).cloned()).collect();
    rows.retain(|p| p.quote_of == Some(post.id));
    Ok((rows, next))
}
