//! The transactional outbox, pipeline counters and test-only fault flags.

use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{all, batch, first, int, run, stmt, text};
use crate::error::ApiResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A post to fan out to the author's followers' windows (and the author's own).
    Post,
    /// A deleted or narrowed post to remove from those windows.
    RemovePost,
    /// Drop one author's entries from one reader's window (unfollow, block).
    RemoveAuthor,
    /// Copy one author's recent posts into one reader's window (new follow).
    Backfill,
}

#[derive(Debug, Clone, Deserialize)]
pub struct OutboxRow {
    pub id: i64,
    pub kind: EventKind,
    pub post_id: Option<i64>,
    pub author_id: i64,
    pub reader_id: Option<i64>,
    pub post_created_at: Option<i64>,
    pub created_at: i64,
    pub state: String,
    pub cursor_follower_id: i64,
}

#[derive(Deserialize)]
struct IdRow {
    id: i64,
}

pub async fn get(db: &D1Database, id: i64) -> ApiResult<Option<OutboxRow>> {
    first(
        db,
        "SELECT id, kind, post_id, author_id, reader_id, post_created_at, created_at, state, cursor_follower_id \
         FROM outbox WHERE id = ?1",
        &[int(id)],
    )
    .await
}

/// A reader-scoped event (`remove_author` / `backfill`), for use inside a graph batch.
/// `only_if_changed` makes the row conditional on the previous statement having changed rows.
pub fn reader_event(
    db: &D1Database,
    kind: &str,
    reader: i64,
    author: i64,
    now: i64,
    only_if_changed: bool,
) -> ApiResult<D1PreparedStatement> {
    let condition = if only_if_changed { "WHERE changes() > 0" } else { "" };
    stmt(
        db,
        &format!(
            "INSERT INTO outbox (kind, author_id, reader_id, created_at) SELECT ?1, ?2, ?3, ?4 {condition} RETURNING id"
        ),
        &[text(kind), int(author), int(reader), int(now)],
    )
}

/// Ids returned by `RETURNING id` statements of a batch.
pub fn returned_ids(results: &[worker::D1Result]) -> Vec<i64> {
    results.iter().filter_map(|r| r.results::<IdRow>().ok()).flatten().map(|r| r.id).collect()
}

/// Active readers among an author's followers after `after`, in follower-id order.
pub async fn follower_chunk(db: &D1Database, author: i64, after: i64, limit: usize) -> ApiResult<Vec<i64>> {
    #[derive(Deserialize)]
    struct Row {
        follower_id: i64,
    }
    let rows: Vec<Row> = all(
        db,
        "SELECT f.follower_id FROM follows f JOIN users u ON u.id = f.follower_id \
         WHERE f.author_id = ?1 AND f.follower_id > ?2 AND u.feed_active_at IS NOT NULL \
         ORDER BY f.follower_id LIMIT ?3",
        &[int(author), int(after), int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.follower_id).collect())
}

pub fn bump(db: &D1Database, name: &str, by: i64) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
        &[text(name), int(by)],
    )
}

/// Records a finished chunk: progress only moves forward, so a stale retry cannot rewind it.
/// `sent_at` doubles as the lease the reconciliation sweep checks before resending.
pub async fn record_chunk(
    db: &D1Database,
    id: i64,
    last_follower: i64,
    delivered: usize,
    now: i64,
) -> ApiResult<()> {
    batch(
        db,
        vec![
            stmt(
                db,
                "UPDATE outbox SET cursor_follower_id = MAX(cursor_follower_id, ?2), delivered = delivered + ?3, \
                 sent_at = ?4, attempts = attempts + 1 WHERE id = ?1",
                &[int(id), int(last_follower), int(delivered as i64), int(now)],
            )?,
            bump(db, "deliveries", delivered as i64)?,
            bump(db, "fanout_chunks", 1)?,
        ],
    )
    .await?;
    Ok(())
}

/// Marks an event done; a `post` event also leaves a publish-to-visible latency sample.
pub async fn mark_done(db: &D1Database, row: &OutboxRow, now: i64) -> ApiResult<()> {
    let mut statements = vec![stmt(
        db,
        "UPDATE outbox SET state = 'done', done_at = ?2 WHERE id = ?1 AND state <> 'done'",
        &[int(row.id), int(now)],
    )?];
    if row.kind == EventKind::Post {
        // Right after the UPDATE, so changes() tells whether this call finished the event.
        statements.push(stmt(
            db,
            "INSERT INTO latency_samples (kind, ms, created_at) SELECT 'publish_to_visible', ?1, ?2 \
             WHERE changes() > 0",
            &[int(now - row.created_at), int(now)],
        )?);
    }
    statements.push(bump(db, &format!("events_done_{}", kind_name(row.kind)), 1)?);
    batch(db, statements).await?;
    Ok(())
}

pub fn kind_name(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Post => "post",
        EventKind::RemovePost => "remove_post",
        EventKind::RemoveAuthor => "remove_author",
        EventKind::Backfill => "backfill",
    }
}

pub async fn mark_dead(db: &D1Database, id: i64) -> ApiResult<()> {
    batch(
        db,
        vec![
            stmt(db, "UPDATE outbox SET state = 'dead' WHERE id = ?1 AND state = 'pending'", &[int(id)])?,
            bump(db, "dead_letters", 1)?,
        ],
    )
    .await?;
    Ok(())
}

/// Pending events with no progress for `grace_ms`: the sender died, or a chain broke.
/// Their lease is renewed here so two sweeps do not resend the same event back to back.
pub async fn claim_stuck(db: &D1Database, now: i64, grace_ms: i64, limit: usize) -> ApiResult<Vec<i64>> {
    let rows: Vec<IdRow> = all(
        db,
        "UPDATE outbox SET sent_at = ?1 WHERE id IN (SELECT id FROM outbox WHERE state = 'pending' \
           AND COALESCE(sent_at, created_at) < ?2 ORDER BY id LIMIT ?3) RETURNING id",
        &[int(now), int(now - grace_ms), int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Test hook: makes a post's fan-out events pending from the start again.
pub async fn reset_for_replay(db: &D1Database, post_id: i64) -> ApiResult<Vec<i64>> {
    let rows: Vec<IdRow> = all(
        db,
        "UPDATE outbox SET state = 'pending', cursor_follower_id = 0, done_at = NULL \
         WHERE post_id = ?1 AND kind = 'post' RETURNING id",
        &[int(post_id)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Consumes one firing of a test fault; true if it fired.
pub async fn take_fault(db: &D1Database, name: &str) -> ApiResult<bool> {
    let row: Option<IdRow> = first(
        db,
        "UPDATE test_faults SET remaining = remaining - 1 WHERE name = ?1 AND remaining > 0 RETURNING 1 AS id",
        &[text(name)],
    )
    .await?;
    Ok(row.is_some())
}

pub async fn set_fault(db: &D1Database, name: &str, times: i64) -> ApiResult<()> {
    run(
        db,
        "INSERT INTO test_faults (name, remaining) VALUES (?1, ?2) \
         ON CONFLICT (name) DO UPDATE SET remaining = excluded.remaining",
        &[text(name), int(times)],
    )
    .await?;
    Ok(())
}
