//! Test-only state (fault flags) and the views the black-box tests inspect. Reachable only
//! through `/v1/admin/test/*`, which answers 404 unless `TEST_HOOKS` is on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    all, batch, exec, first, int, stmt, text, AnyDb, ControlDb, Count, IdRow, OutboxDb, PostDb, UserDb,
};
use crate::domain::ids::{OutboxId, PostId, UserId};
use crate::domain::outbox::{EventKind, EventState};
use crate::error::ApiResult;

/// Consumes one firing of a test fault; true if it fired.
pub async fn take_fault(db: ControlDb<'_>, name: &str) -> ApiResult<bool> {
    let row: Option<IdRow> = first(
        db,
        "UPDATE test_faults SET remaining = remaining - 1 WHERE name = ?1 AND remaining > 0 RETURNING 1 AS id",
        &[text(name)],
    )
    .await?;
    Ok(row.is_some())
}

pub async fn set_fault(db: ControlDb<'_>, name: &str, times: i64) -> ApiResult<()> {
    exec(
        db,
        "INSERT INTO test_faults (name, remaining) VALUES (?1, ?2) \
         ON CONFLICT (name) DO UPDATE SET remaining = excluded.remaining",
        &[text(name), int(times)],
    )
    .await
}

/// Makes one outbox event (of any kind, done or not) pending from the start again, as a
/// redelivery of a stale or duplicated message would find it.
pub async fn reset_event(db: OutboxDb<'_>, event: OutboxId, now: i64) -> ApiResult<Vec<OutboxId>> {
    let rows: Vec<IdRow> = all(
        db,
        "UPDATE outbox SET state = 'pending', cursor_follower_id = 0, done_at = NULL, sent_at = ?2 \
         WHERE id = ?1 RETURNING id",
        &[int(event), int(now)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| OutboxId::from_trusted(r.id)).collect())
}

/// Makes a post's fan-out events pending from the start again (a new attempt: `sent_at` is
/// renewed, so a dead letter of an earlier one cannot kill it).
pub async fn reset_for_replay(db: PostDb<'_>, post: PostId, now: i64) -> ApiResult<Vec<OutboxId>> {
    let rows: Vec<IdRow> = all(
        db,
        "UPDATE outbox SET state = 'pending', cursor_follower_id = 0, done_at = NULL, sent_at = ?2 \
         WHERE post_id = ?1 AND kind = 'post' RETURNING id",
        &[int(post), int(now)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| OutboxId::from_trusted(r.id)).collect())
}

#[derive(Deserialize, Serialize)]
pub struct OutboxView {
    id: OutboxId,
    kind: EventKind,
    post_id: Option<PostId>,
    reader_id: Option<UserId>,
    state: EventState,
    cursor_follower_id: i64,
    delivered: i64,
    created_at: i64,
    done_at: Option<i64>,
}

#[derive(Serialize)]
pub struct AuthorOutbox {
    pub pending: i64,
    pub events: Vec<OutboxView>,
    pub faults: BTreeMap<String, i64>,
}

/// An author's recent events (post events, and reader events about them: those live on the
/// reader's database) on one database, and how many of them are pending there.
pub async fn author_outbox_on(db: AnyDb<'_>, author: UserId) -> ApiResult<(Vec<OutboxView>, i64)> {
    let events: Vec<OutboxView> = all(
        db,
        "SELECT id, kind, post_id, reader_id, state, cursor_follower_id, delivered, created_at, done_at \
         FROM outbox WHERE author_id = ?1 ORDER BY id DESC LIMIT 100",
        &[int(author)],
    )
    .await?;
    let pending: Option<Count> = first(
        db,
        "SELECT COUNT(*) AS n FROM outbox WHERE author_id = ?1 AND state = 'pending'",
        &[int(author)],
    )
    .await?;
    Ok((events, pending.map_or(0, |p| p.n)))
}

/// The faults scoped to a user (`name:<id>`), from the control database.
pub async fn faults_of(control: ControlDb<'_>, user: UserId) -> ApiResult<BTreeMap<String, i64>> {
    #[derive(Deserialize)]
    struct Fault {
        name: String,
        remaining: i64,
    }
    let faults: Vec<Fault> = all(
        control,
        "SELECT name, remaining FROM test_faults WHERE name LIKE '%:' || CAST(?1 AS INTEGER)",
        &[int(user)],
    )
    .await?;
    Ok(faults.into_iter().map(|f| (f.name, f.remaining)).collect())
}

impl AuthorOutbox {
    /// Every database's share, newest first.
    pub fn merged(parts: Vec<(Vec<OutboxView>, i64)>, faults: BTreeMap<String, i64>) -> Self {
        let pending = parts.iter().map(|(_, n)| n).sum();
        let mut events: Vec<OutboxView> = parts.into_iter().flat_map(|(e, _)| e).collect();
        events.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
        events.truncate(100);
        Self { pending, events, faults }
    }
}

/// Moves a post and its outbox events `ms` into the past, as if it had been published (and
/// its fan-out stalled) that long ago, so a test need not wait for the in-flight horizon.
pub async fn age_post(db: PostDb<'_>, post: PostId, ms: i64) -> ApiResult<usize> {
    let statements = vec![
        stmt(db, "UPDATE posts SET created_at = created_at - ?2 WHERE id = ?1", &[int(post), int(ms)])?,
        stmt(
            db,
            "UPDATE outbox SET created_at = created_at - ?2, post_created_at = post_created_at - ?2 \
             WHERE post_id = ?1",
            &[int(post), int(ms)],
        )?,
    ];
    let results = batch(db, statements).await?;
    Ok(super::changed_rows(results.first()))
}

/// Overwrites some of a user's counters (`column` is one of the three counter names, from a
/// fixed list in the caller: never client text).
pub async fn set_user_counts(db: UserDb<'_>, user: UserId, set: &[(&'static str, i64)]) -> ApiResult<()> {
    for (column, value) in set {
        debug_assert!(["followers_count", "following_count", "posts_count"].contains(column));
        exec(db, &format!("UPDATE users SET {column} = ?2 WHERE id = ?1"), &[int(user), int(*value)]).await?;
    }
    Ok(())
}

pub async fn set_like_count(db: PostDb<'_>, post: PostId, like_count: i64, now: i64) -> ApiResult<()> {
    exec(
        db,
        "UPDATE posts SET like_count = ?2, touched_at = ?3 WHERE id = ?1",
        &[int(post), int(like_count), int(now)],
    )
    .await
}

#[derive(Deserialize, Serialize)]
pub struct EdgeView {
    follower_id: UserId,
    push: i64,
    pull: i64,
    read_rate: f64,
    last_read_at: Option<i64>,
}

/// An author's edges with their modes and the readers' reported activity, as the author's
/// side holds them (`followers`: the copies fan-out and the author's policy read).
pub async fn author_edges(db_of_author: UserDb<'_>, author: UserId) -> ApiResult<Vec<EdgeView>> {
    all(
        db_of_author,
        "SELECT follower_id, push, pull, read_rate, last_read_at FROM followers \
         WHERE author_id = ?1 ORDER BY follower_id LIMIT 1000",
        &[int(author)],
    )
    .await
}
