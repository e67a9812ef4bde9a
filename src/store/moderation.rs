//! Moderation writes (suspend / reinstate a user, take down / restore a post) and the audit
//! log. Each action is one atomic batch: the state change, its window event (posts) and its
//! audit row, the last two only if the first changed something (SQLite's `changes()`, read
//! by each statement right after the one before it), so a repeated action is a no-op that
//! logs nothing, and a logged action always happened.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::outbox::returned_events;
use super::replica_bump::{bump_for_post_statement, bump_of, bump_statement, Bump};
use super::snowflake::insert_with_fresh_id;
use super::StoreResult;
use super::{all, batch, first, int, stmt, text, AnyDb, Count, OnDb, PostDb, UserDb};
use crate::domain::ids::{OutboxId, PostId, UserId};
use crate::domain::moderation::{Action, AuditEntry};
use crate::domain::snowflake::{shard_of_id, IdSeed};

/// What one action did: whether it changed anything, and the window events it recorded.
#[derive(Debug, Default)]
pub struct Applied {
    pub changed: bool,
    pub events: Vec<OutboxId>,
    /// The author's replicas to tell (`store/replica.rs`).
    pub bump: Option<Bump>,
}

/// The audit row (id `id`), written only if the statement just before it changed a row. It
/// lives on the database of what was moderated, in the action's own batch, so an action and
/// its row commit together; its id is a snowflake on the subject's shard, so the log reads in
/// time order across databases ([`audit_page`]).
fn audit_statement<'a>(
    db: impl OnDb<'a>,
    id: i64,
    entry: &AuditEntry,
    now: i64,
) -> StoreResult<SqlStatement> {
    let (kind, target) = entry.target.parts();
    stmt(
        db,
        "INSERT INTO audit_log (id, created_at, actor, action, target_kind, target_id, reason) \
         SELECT ?7, ?1, ?2, ?3, ?4, ?5, ?6 WHERE changes() > 0",
        &[
            int(now),
            text(&entry.actor),
            text(entry.action.as_str()),
            text(kind),
            int(target),
            text(&entry.reason),
            int(id),
        ],
    )
}

/// Runs an action's batch (`statements`, then the audit row) with a fresh audit id, again on
/// the rare id collision (the batch is atomic: a failed one changed nothing).
async fn with_audit<'a>(
    db: impl OnDb<'a>,
    subject: i64,
    entry: &AuditEntry,
    now: i64,
    seed: IdSeed,
    statements: impl Fn() -> StoreResult<Vec<SqlStatement>>,
) -> StoreResult<Vec<crate::store::SqlResult>> {
    insert_with_fresh_id(seed, now, shard_of_id(subject), "audit_log.id", |id| {
        let statements = statements().and_then(|mut s| {
            s.push(audit_statement(db, id, entry, now)?);
            Ok(s)
        });
        async move { batch(db, statements?).await }
    })
    .await
}

/// Suspends or reinstates (by `entry.action`) a user; `None` if there is no such user.
pub async fn set_suspended(
    db: UserDb<'_>,
    user: UserId,
    entry: &AuditEntry,
    now: i64,
    seed: IdSeed,
) -> StoreResult<Option<Applied>> {
    let suspend = entry.action == Action::Suspend;
    // The replicas' bump first: the audit row's `changes()` is the update's.
    let update = || {
        Ok(vec![
            bump_statement(db, user)?,
            stmt(
                db,
                "UPDATE users SET suspended_at = CASE WHEN ?2 = 1 THEN ?3 END \
                 WHERE id = ?1 AND (suspended_at IS NULL) = (?2 = 1)",
                &[int(user), int(i64::from(suspend)), int(now)],
            )?,
        ])
    };
    let results = with_audit(db, user.get(), entry, now, seed, update).await?;
    let changed = super::changed_rows(results.get(1)) > 0;
    if !changed && !exists(db, "SELECT COUNT(*) AS n FROM users WHERE id = ?1", user.get()).await? {
        return Ok(None);
    }
    Ok(Some(Applied { changed, events: Vec::new(), bump: bump_of(results.first())? }))
}

/// Takes down or restores (by `entry.action`) a post that is not deleted, with the window
/// event that removes it from (or brings it back to) followers' windows, in its original place;
/// the post's state version moves so an older window write cannot undo it. `None` if there is
/// no such post.
pub async fn set_taken_down(
    db: PostDb<'_>,
    post: PostId,
    entry: &AuditEntry,
    now: i64,
    seed: IdSeed,
) -> StoreResult<Option<Applied>> {
    let take_down = entry.action == Action::Takedown;
    let statements = || {
        let update = stmt(
            db,
            "UPDATE posts SET taken_down_at = CASE WHEN ?2 = 1 THEN ?3 END, state_version = state_version + 1 \
             WHERE id = ?1 AND deleted_at IS NULL AND (taken_down_at IS NULL) = (?2 = 1)",
            &[int(post), int(i64::from(take_down)), int(now)],
        )?;
        let event = stmt(
            db,
            &format!(
                "INSERT INTO outbox (id, kind, post_id, author_id, post_created_at, created_at) \
                 SELECT {}, CASE WHEN ?3 = 1 THEN 'remove_post' ELSE 'post' END, id, author_id, created_at, ?2 \
                 FROM posts WHERE id = ?1 AND changes() > 0 RETURNING id",
                super::outbox::new_id_sql("?4")
            ),
            &[int(post), int(now), int(i64::from(take_down)), super::outbox::shard_param(post)],
        )?;
        // The replicas' bump first: the event's and the audit row's `changes()` stay as they were.
        Ok(vec![bump_for_post_statement(db, post)?, update, event])
    };
    let results = with_audit(db, post.get(), entry, now, seed, statements).await?;
    let changed = super::changed_rows(results.get(1)) > 0;
    let sql = "SELECT COUNT(*) AS n FROM posts WHERE id = ?1 AND deleted_at IS NULL";
    if !changed && !exists(db, sql, post.get()).await? {
        return Ok(None);
    }
    let events = returned_events(results.get(2..3).unwrap_or_default());
    Ok(Some(Applied { changed, events, bump: bump_of(results.first())? }))
}

async fn exists<'a>(db: impl OnDb<'a>, sql: &str, id: i64) -> StoreResult<bool> {
    let row: Option<Count> = first(db, sql, &[int(id)]).await?;
    Ok(row.is_some_and(|c| c.n > 0))
}

/// One audit row as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct AuditRow {
    pub id: i64,
    pub created_at: i64,
    pub actor: String,
    pub action: String,
    pub target_kind: String,
    pub target_id: i64,
    pub reason: String,
}

/// The audit log in the order actions happened, strictly after `after_id`; `limit + 1` rows so
/// the caller can tell whether more exist.
pub async fn audit_page(db: AnyDb<'_>, after_id: i64, limit: usize) -> StoreResult<Vec<AuditRow>> {
    all(
        db,
        "SELECT id, created_at, actor, action, target_kind, target_id, reason FROM audit_log \
         WHERE id > ?1 ORDER BY id LIMIT ?2",
        &[int(after_id), int(limit as i64 + 1)],
    )
    .await
}
