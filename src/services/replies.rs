//! Replies are posts (migration 0033): a reply is a post of the replier's, fanned out through
//! the replier's edges, that knows its parent, the parent's author and its thread's root. The
//! root's thread mirrors it as a row of `comments` (on the root's database), so the comments
//! view, the thread (`context`), `comment_count` and the reply notification see it as they see a
//! comment; the mirror is converged by the request and again by the reply's outbox event
//! (`services/fanout/reads.rs`). Who gets it in their home: Mastodon's rule, a follower of the
//! replier who also follows the account replied to (or every follower, for a reply to oneself),
//! chosen per recipient by the fan-out (`domain/fanout_plan.rs`) and checked again at every
//! read (`domain/replies.rs`).

use crate::context::Ctx;
use crate::domain::visibility::Visibility;
use crate::error::ApiResult;
use crate::services::streaming;
use crate::store::engagement::{self, ReplyMirror};
use crate::store::posts::{PostRow, ReplyTo};

/// What a reply answers, checked for the replier (`services/comments.rs::reply_target`): its
/// place, and the widest visibility it may have (its parent's).
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub to: ReplyTo,
    pub widest: Visibility,
}

/// The thread's mirror of `reply` (a reply post's row as it is now; `active`: it is there), or
/// `None` for a post that replies to nothing.
pub fn mirror_of<'a>(ctx: &Ctx, reply: &'a PostRow, active: bool) -> Option<ReplyMirror<'a>> {
    let root = reply.thread_id?;
    Some(ReplyMirror {
        reply: reply.id,
        root,
        parent: reply.in_reply_to_id.filter(|parent| *parent != root.get()),
        author: reply.author_id,
        body: &reply.body,
        spoiler_text: &reply.spoiler_text,
        sensitive: reply.is_sensitive(),
        created_at: reply.created_at,
        active,
        notify: crate::domain::replies::notifies(reply.created_at, ctx.now),
        mentioned: reply.mentioned().iter().map(|m| m.id).collect(),
        now: ctx.now,
    })
}

/// Makes the root's thread agree with the reply, and tells the root's author's live sockets of
/// a new notification. Idempotent.
pub async fn converge(ctx: &Ctx, mirror: &ReplyMirror<'_>) -> ApiResult<()> {
    if let Some(notice) = engagement::mirror_reply(ctx.post_db(mirror.root), mirror).await? {
        streaming::tell(ctx, notice).await;
    }
    Ok(())
}

/// A reply post's edit, carried to its thread's row.
pub async fn edited(ctx: &Ctx, reply: &PostRow) -> ApiResult<()> {
    let Some(root) = reply.thread_id else { return Ok(()) };
    let warning = (reply.spoiler_text.as_str(), reply.is_sensitive());
    Ok(engagement::mirror_edit(ctx.post_db(root), reply.id, &reply.body, warning, ctx.now).await?)
}
