//! Operator actions: suspend / reinstate users, take down / restore posts, and the audit log.
//!
//! Nothing is deleted. Reads hide a suspended user's profile, posts, comments and likes-list
//! presence, and a taken-down post, at once (they check the state on every read, whatever the
//! candidate's source); reinstating or restoring shows everything again exactly as it was.
//! Windows: a takedown removes the post from followers' windows and a restore delivers it again
//! (by its `created_at`, so it lands in its original place), through the same state-applied
//! events as deletes and visibility edits. A suspension leaves windows alone (reads filter),
//! and deliveries of the author's posts that are still in flight are held, then released here
//! on reinstatement (and by the reconciliation pass, should this step be cut short).

use super::{fanout, replicas};
use crate::context::{id_seed, Ctx};
use crate::domain::ids::{PostId, UserId};
use crate::domain::moderation::{Action, AuditEntry};
use crate::domain::replica::Change;
use crate::error::{ApiError, ApiResult};
use crate::store::moderation::{self as store, Applied, AuditRow};
use crate::store::outbox;

/// Suspends or reinstates `user` (by `entry.action`); whether anything changed.
pub async fn moderate_user(ctx: &Ctx, user: UserId, entry: &AuditEntry) -> ApiResult<bool> {
    let sent_at = ctx.clock();
    let applied = store::set_suspended(ctx.user_db(user), user, entry, ctx.now, id_seed()?)
        .await?
        .ok_or(ApiError::NotFound("no such user"))?;
    replicas::tell(ctx, applied.bump, sent_at, Change::Reread).await;
    match entry.action {
        // Also when nothing changed: a retried reinstatement finishes a release cut short.
        Action::Reinstate => {
            release_held(ctx, user).await?;
        }
        // Likewise: a retried suspension closes sockets a cut-short one left open.
        Action::Suspend => {
            let every_token = crate::domain::live::Revocation::IssuedUpTo(crate::domain::live::EVERY_TOKEN);
            super::live::close_sockets(ctx, user, every_token).await
        }
        Action::Takedown | Action::Restore => {}
    }
    Ok(applied.changed)
}

/// Takes down or restores `post` (by `entry.action`); whether anything changed.
pub async fn moderate_post(ctx: &Ctx, post: PostId, entry: &AuditEntry) -> ApiResult<bool> {
    let sent_at = ctx.clock();
    let Applied { changed, events, bump } =
        store::set_taken_down(ctx.post_db(post), post, entry, ctx.now, id_seed()?)
            .await?
            .ok_or(ApiError::NotFound("no such post"))?;
    replicas::tell_post(ctx, bump, sent_at, post).await?;
    // A failed send is resent by the reconciliation pass (the events are in the outbox).
    fanout::announce(ctx, UserId::from_trusted(0), &events).await;
    Ok(changed)
}

/// Sends the held deliveries of an author who is not suspended (any more); returns how many.
pub async fn release_held(ctx: &Ctx, author: UserId) -> ApiResult<usize> {
    let released = outbox::release_held(ctx.user_db(author), author, ctx.now).await?;
    fanout::announce(ctx, author, &released).await;
    Ok(released.len())
}

/// The audit log strictly after `after_id`, oldest first: each database's rows (an action's row
/// lives with what it moderated) merged by id, which is time ordered; `limit + 1` rows so the
/// caller can tell whether more exist.
pub async fn audit_page(ctx: &Ctx, after_id: i64, limit: usize) -> ApiResult<Vec<AuditRow>> {
    let pages = ctx.on_every_database(|db| store::audit_page(db, after_id, limit)).await?;
    let mut rows: Vec<AuditRow> = pages.into_iter().flatten().collect();
    rows.sort_by_key(|r| r.id);
    rows.truncate(limit + 1);
    Ok(rows)
}
