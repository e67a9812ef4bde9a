//! Test-only state (fault flags) and the views the black-box tests inspect. Reachable only
//! through `/v1/admin/test/*`, which answers 404 unless `TEST_HOOKS` is on.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::StoreResult;
use super::{
    all, batch, exec, first, int, run, stmt, text, AnyDb, ControlDb, Count, IdRow, OutboxDb, PostDb, UserDb,
};
use crate::domain::ids::{MediaId, OutboxId, PostId, UserId};
use crate::domain::outbox::{EventKind, EventState};

thread_local! {
    /// The databases the `db_outage` hook marks failing. Isolate-global on purpose: a flag kept
    /// in D1 would cost every invocation a read (and could not live on the failing database
    /// itself), while locally one isolate runs the Worker's requests, its queue consumer and
    /// its Durable Objects (workerd puts a service's objects in its isolate; the outage test
    /// shows each of them meeting the outage). Only the test route sets it, so in production
    /// it stays empty and the check below is one lookup in an empty set.
    static FAILING: RefCell<BTreeSet<usize>> = const { RefCell::new(BTreeSet::new()) };
    /// Round trips refused so far, per database (a test waits on these to know that some
    /// invocation met the outage).
    static REFUSED: RefCell<BTreeMap<usize, u64>> = const { RefCell::new(BTreeMap::new()) };
}

/// The failing databases and the round trips refused on each so far.
#[derive(Serialize)]
pub struct OutageState {
    pub failing: Vec<usize>,
    pub refused: BTreeMap<usize, u64>,
}

/// Marks database `index` failing (or healthy again) when given; returns the state.
pub fn set_database_failing(change: Option<(usize, bool)>) -> OutageState {
    FAILING.with_borrow_mut(|set| {
        match change {
            Some((index, true)) => set.insert(index),
            Some((index, false)) => set.remove(&index),
            None => false,
        };
        OutageState { failing: set.iter().copied().collect(), refused: REFUSED.with_borrow(Clone::clone) }
    })
}

/// The error every statement on a failing database meets instead of reaching it: the text D1
/// gives when it loses a database, so it is classified like a real outage
/// ([`super::StoreError::Unavailable`]).
pub(super) fn outage(index: usize) -> Option<worker::Error> {
    if !FAILING.with_borrow(|set| set.contains(&index)) {
        return None;
    }
    REFUSED.with_borrow_mut(|refused| *refused.entry(index).or_default() += 1);
    let text = format!("D1_ERROR: Network connection lost. (test hook db_outage: DB_{index})");
    Some(worker::Error::RustError(text))
}

/// The least D1 work there is, sent as the feed's and the likes' statements are (one
/// `batch()`): the `floor_d1` hook's unit.
pub async fn bare_batch(db: AnyDb<'_>) -> StoreResult<()> {
    batch(db, vec![stmt(db, "SELECT 1", &[])?]).await.map(drop)
}

/// Consumes one firing of a test fault; true if it fired.
pub async fn take_fault(db: ControlDb<'_>, name: &str) -> StoreResult<bool> {
    let row: Option<IdRow> = first(
        db,
        "UPDATE test_faults SET remaining = remaining - 1 WHERE name = ?1 AND remaining > 0 RETURNING 1 AS id",
        &[text(name)],
    )
    .await?;
    Ok(row.is_some())
}

pub async fn set_fault(db: ControlDb<'_>, name: &str, times: i64) -> StoreResult<()> {
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
pub async fn reset_event(db: OutboxDb<'_>, event: OutboxId, now: i64) -> StoreResult<Vec<OutboxId>> {
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
pub async fn reset_for_replay(db: PostDb<'_>, post: PostId, now: i64) -> StoreResult<Vec<OutboxId>> {
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
    sent_at: Option<i64>,
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
    /// Databases left out: in an outage (the `db_outage` hook).
    pub unavailable: Vec<usize>,
}

/// An author's recent events (post events, and reader events about them: those live on the
/// reader's database) on one database, and how many of them are pending there.
pub async fn author_outbox_on(db: AnyDb<'_>, author: UserId) -> StoreResult<(Vec<OutboxView>, i64)> {
    let events: Vec<OutboxView> = all(
        db,
        "SELECT id, kind, post_id, reader_id, state, sent_at, cursor_follower_id, delivered, created_at, done_at \
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
pub async fn faults_of(control: ControlDb<'_>, user: UserId) -> StoreResult<BTreeMap<String, i64>> {
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
    pub fn merged(
        parts: Vec<(Vec<OutboxView>, i64)>,
        faults: BTreeMap<String, i64>,
        unavailable: Vec<usize>,
    ) -> Self {
        let pending = parts.iter().map(|(_, n)| n).sum();
        let mut events: Vec<OutboxView> = parts.into_iter().flat_map(|(e, _)| e).collect();
        events.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
        events.truncate(100);
        Self { pending, events, faults, unavailable }
    }
}

/// Moves a post, its outbox events and its poll's end `ms` into the past, as if it had been published (and
/// its fan-out stalled) that long ago, so a test need not wait for the in-flight horizon.
pub async fn age_post(db: PostDb<'_>, post: PostId, ms: i64) -> StoreResult<usize> {
    let statements = vec![
        stmt(db, "UPDATE posts SET created_at = created_at - ?2 WHERE id = ?1", &[int(post), int(ms)])?,
        stmt(
            db,
            "UPDATE outbox SET created_at = created_at - ?2, post_created_at = post_created_at - ?2 \
             WHERE post_id = ?1",
            &[int(post), int(ms)],
        )?,
        // Its poll's end moves with it (a poll's time is its post's).
        stmt(db, "UPDATE polls SET expires_at = expires_at - ?2 WHERE post_id = ?1", &[int(post), int(ms)])?,
    ];
    let results = batch(db, statements).await?;
    Ok(super::changed_rows(results.first()))
}

/// Moves an upload's times `ms` into the past; whether its row exists and is gone.
pub async fn age_media(db: UserDb<'_>, media: MediaId, ms: i64) -> StoreResult<(bool, bool)> {
    #[derive(serde::Deserialize)]
    struct Gone {
        gone: i64,
    }
    let statements = vec![
        stmt(
            db,
            "UPDATE media SET created_at = created_at - ?2, gone_at = gone_at - ?2 WHERE id = ?1",
            &[int(media), int(ms)],
        )?,
        stmt(db, "SELECT gone_at IS NOT NULL AS gone FROM media WHERE id = ?1", &[int(media)])?,
    ];
    let results = batch(db, statements).await?;
    let row: Option<Gone> =
        results.get(1).map(|r| r.results()).transpose()?.and_then(|rows| rows.into_iter().next());
    Ok((row.is_some(), row.is_some_and(|r| r.gone != 0)))
}

/// Moves a scheduled post's time to `at` (a test makes one due without waiting 5 minutes);
/// whether the row exists.
pub async fn move_scheduled(db: UserDb<'_>, user: UserId, id: i64, at: i64) -> StoreResult<bool> {
    let sql = "UPDATE scheduled_statuses SET scheduled_at = ?3 WHERE user_id = ?1 AND id = ?2";
    Ok(run(db, sql, &[int(user), int(id), int(at)]).await? > 0)
}

/// Ends a sign-in throttle key's window (`domain::throttle`) as if its period had passed.
pub async fn end_sign_in_window(db: ControlDb<'_>, key: &str) -> StoreResult<usize> {
    run(db, "UPDATE sign_in_failures SET expires_at = 0 WHERE key = ?1", &[text(key)]).await
}

/// Overwrites some of a user's counters (`column` is one of the three counter names, from a
/// fixed list in the caller: never client text).
pub async fn set_user_counts(db: UserDb<'_>, user: UserId, set: &[(&'static str, i64)]) -> StoreResult<()> {
    for (column, value) in set {
        debug_assert!(["followers_count", "following_count", "posts_count"].contains(column));
        exec(db, &format!("UPDATE users SET {column} = ?2 WHERE id = ?1"), &[int(user), int(*value)]).await?;
    }
    Ok(())
}

/// Drifts a post's like count, marking it for the repair (`touched_at`) unless `unmarked`
/// (then only its likes' own times lead the repair to it).
pub async fn set_like_count(
    db: PostDb<'_>,
    post: PostId,
    like_count: i64,
    now: i64,
    unmarked: bool,
) -> StoreResult<()> {
    exec(
        db,
        "UPDATE posts SET like_count = ?2, touched_at = CASE WHEN ?4 THEN touched_at ELSE ?3 END WHERE id = ?1",
        &[int(post), int(like_count), int(now), int(i64::from(unmarked))],
    )
    .await
}

/// The favourite notification rows of a post on its author's home: all of them, and the
/// group rows among them (migration 0048).
pub async fn favourite_rows(db: PostDb<'_>, post: PostId) -> StoreResult<(i64, i64)> {
    #[derive(Deserialize)]
    struct Counts {
        rows: i64,
        groups: i64,
    }
    let sql = "SELECT COUNT(*) AS rows, COALESCE(SUM(n.actor_id = 0), 0) AS groups FROM notifications n \
               WHERE n.recipient_id = (SELECT author_id FROM posts WHERE id = ?1) AND n.kind = 'favourite' \
               AND n.post_id = ?1";
    let counts: Vec<Counts> = all(db, sql, &[int(post)]).await?;
    Ok(counts.first().map_or((0, 0), |c| (c.rows, c.groups)))
}

#[derive(Deserialize, Serialize)]
pub struct EdgeView {
    follower_id: UserId,
    push: i64,
    pull: i64,
    read_rate: f64,
    last_read_at: Option<i64>,
    /// The reader's live mark on the edge (`live_edges`), if any: until when (ms).
    live_until: Option<i64>,
}

/// An author's edges with their modes, the readers' reported activity and live marks, as the
/// author's side holds them (`followers`: the copies fan-out and the author's policy read).
pub async fn author_edges(db_of_author: UserDb<'_>, author: UserId) -> StoreResult<Vec<EdgeView>> {
    all(
        db_of_author,
        "SELECT f.follower_id, f.push, f.pull, f.read_rate, f.last_read_at, m.until AS live_until \
         FROM followers f LEFT JOIN live_edges m ON m.author_id = f.author_id AND m.reader_id = f.follower_id \
         WHERE f.author_id = ?1 ORDER BY f.follower_id LIMIT 1000",
        &[int(author)],
    )
    .await
}

/// A comment of the old kind, as comments were written before replies were posts (a row on the
/// post's database, with the post author's `reply` notification), now.
pub async fn old_comment(
    db: PostDb<'_>,
    (post, author, parent): (PostId, UserId, Option<PostId>),
    body: &str,
    now: i64,
    mut seed: crate::domain::snowflake::IdSeed,
) -> StoreResult<i64> {
    let shard = crate::domain::snowflake::shard_of_id(post.get());
    let id = crate::domain::snowflake::snowflake_in(now, shard, seed.next_bits())
        .ok_or_else(|| super::StoreError::Internal("no id for now".into()))?;
    let insert = stmt(
        db,
        "INSERT INTO comments (id, post_id, author_id, body, created_at, parent_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &[int(id), int(post), int(author), text(body), int(now), parent.map_or(worker::wasm_bindgen::JsValue::NULL, int)],
    )?;
    let notify = super::notifications::on_comment(db, id, (post, author), &[], now)?;
    batch(db, vec![notify, insert]).await?;
    Ok(id)
}
