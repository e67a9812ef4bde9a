//! Scheduled posts (`scheduled_statuses`, migrations 0038 and 0043) on their author's home, and
//! the uploads each holds (`media.scheduled_id`, the same database: an upload's id carries its
//! uploader's shard). The rules (times, limits, the params' shape) are `domain/scheduled.rs`.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::snowflake::insert_with_fresh_id;
use super::{all, batch, first, id_list, int, opt_text, stmt, text, AnyDb, Count, StoreResult, UserDb};
use crate::domain::ids::UserId;
use crate::domain::scheduled::{day_of, Full, MAX_PENDING, MAX_PER_DAY};
use crate::domain::snowflake::{shard_of_id, IdSeed, LogicalShard};

/// A scheduled post as its row holds it (`params`: `domain::scheduled::Stored` as JSON).
#[derive(Debug, Clone, Deserialize)]
pub struct ScheduledRow {
    pub user_id: UserId,
    pub id: i64,
    pub scheduled_at: i64,
    pub params: String,
    pub idempotency: Option<String>,
}

const COLUMNS: &str = "user_id, id, scheduled_at, params, idempotency";

/// What a schedule asks to store.
pub struct NewScheduled<'a> {
    pub user: UserId,
    pub scheduled_at: i64,
    pub params: &'a str,
    pub idempotency: Option<&'a str>,
    /// The uploads it holds until it publishes.
    pub media: &'a [i64],
    pub now: i64,
}

/// What a schedule came to.
#[derive(Debug)]
pub enum Scheduled {
    New(ScheduledRow),
    /// The request's key already scheduled this row (a retry; the caller compares the request).
    Keyed(ScheduledRow),
    Full(Full),
}

/// The limits, counted inside the statement that writes (`?1` the user, `?2` `?3` the day,
/// `?4` a row not to count: the one rescheduled), so two schedules at once cannot pass them
/// together (one database applies the statements one at a time).
fn within_limits(pending: bool) -> String {
    let pending = if pending {
        format!("(SELECT COUNT(*) FROM scheduled_statuses WHERE user_id = ?1) < {MAX_PENDING} AND ")
    } else {
        String::new()
    };
    format!(
        "{pending}(SELECT COUNT(*) FROM scheduled_statuses WHERE user_id = ?1 \
           AND scheduled_at >= ?2 AND scheduled_at < ?3 AND id <> ?4) < {MAX_PER_DAY}"
    )
}

fn insert_statements(db: UserDb<'_>, new: &NewScheduled<'_>, id: i64) -> StoreResult<Vec<SqlStatement>> {
    let (day_start, day_end) = day_of(new.scheduled_at);
    let insert = format!(
        "INSERT INTO scheduled_statuses (user_id, id, scheduled_at, params, created_at, idempotency) \
         SELECT ?1, ?4, ?5, ?6, ?7, ?8 WHERE {}",
        within_limits(true)
    );
    Ok(vec![
        stmt(
            db,
            &insert,
            &[
                int(new.user),
                int(day_start),
                int(day_end),
                int(id),
                int(new.scheduled_at),
                text(new.params),
                int(new.now),
                opt_text(new.idempotency),
            ],
        )?,
        // Held only if the row went in; one that cannot be held aborts the batch (0043's trigger).
        stmt(
            db,
            "UPDATE media SET scheduled_id = ?1 WHERE id IN (SELECT value FROM json_each(?3)) AND user_id = ?2 \
               AND EXISTS (SELECT 1 FROM scheduled_statuses WHERE user_id = ?2 AND id = ?1)",
            &[int(id), int(new.user), text(&id_list(new.media))],
        )?,
        stmt(db, &format!("SELECT {COLUMNS} FROM scheduled_statuses WHERE user_id = ?1 AND id = ?2"), &[
            int(new.user),
            int(id),
        ])?,
    ])
}

/// Stores a scheduled post under a fresh id with its uploads held, in one batch, if the user's
/// limits allow; a key already used answers the row it scheduled.
pub async fn insert(db: UserDb<'_>, new: &NewScheduled<'_>, seed: IdSeed) -> StoreResult<Scheduled> {
    let shard = shard_of_id(new.user.get());
    let attempt = |id: i64| async move { batch(db, insert_statements(db, new, id)?).await };
    match insert_with_fresh_id(seed, new.now, shard, "scheduled_statuses.id", attempt).await {
        Ok(results) => {
            let row: Option<ScheduledRow> = match results.last() {
                Some(read) => read.results()?.into_iter().next(),
                None => None,
            };
            match row {
                Some(row) => Ok(Scheduled::New(row)),
                None => Ok(Scheduled::Full(full(db, new.user, new.scheduled_at, 0).await?)),
            }
        }
        // A concurrent request under the same key went first.
        Err(e) if e.is_unique_violation("scheduled_statuses.idempotency") => {
            let row = by_key(db, new.user, new.idempotency.unwrap_or_default()).await?;
            row.map(Scheduled::Keyed).ok_or(e)
        }
        Err(e) => Err(e),
    }
}

/// Which limit a write that the limits held back met (read after it: a row published or
/// cancelled meanwhile may have made room, which the day's limit then names).
async fn full(db: UserDb<'_>, user: UserId, at: i64, except: i64) -> StoreResult<Full> {
    #[derive(Deserialize)]
    struct Counts {
        pending: i64,
        on_day: i64,
    }
    let (start, end) = day_of(at);
    let counts: Option<Counts> = first(
        db,
        "SELECT (SELECT COUNT(*) FROM scheduled_statuses WHERE user_id = ?1) AS pending, \
           (SELECT COUNT(*) FROM scheduled_statuses WHERE user_id = ?1 AND scheduled_at >= ?2 \
              AND scheduled_at < ?3 AND id <> ?4) AS on_day",
        &[int(user), int(start), int(end), int(except)],
    )
    .await?;
    let counts = counts.unwrap_or(Counts { pending: 0, on_day: MAX_PER_DAY });
    Ok(Full::of(counts.pending, counts.on_day).unwrap_or(Full::Day))
}

/// Bounds of a page by id: strictly below `max`, strictly above `min`; `oldest_first` for
/// Mastodon's `min_id` (the caller reverses the page).
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    pub max: Option<i64>,
    pub min: Option<i64>,
    pub oldest_first: bool,
}

/// The user's scheduled posts by id (newest scheduling first, or oldest first above `min`).
pub async fn page(
    db: UserDb<'_>,
    user: UserId,
    bounds: Bounds,
    limit: usize,
) -> StoreResult<Vec<ScheduledRow>> {
    let order = if bounds.oldest_first { "ASC" } else { "DESC" };
    let sql = format!(
        "SELECT {COLUMNS} FROM scheduled_statuses WHERE user_id = ?1 AND id < ?2 AND id > ?3 \
         ORDER BY id {order} LIMIT ?4"
    );
    let max = bounds.max.unwrap_or(i64::MAX);
    all(db, &sql, &[int(user), int(max), int(bounds.min.unwrap_or(0)), int(limit as i64)]).await
}

pub async fn get(db: UserDb<'_>, user: UserId, id: i64) -> StoreResult<Option<ScheduledRow>> {
    let sql = format!("SELECT {COLUMNS} FROM scheduled_statuses WHERE user_id = ?1 AND id = ?2");
    first(db, &sql, &[int(user), int(id)]).await
}

/// The row a request under `key` scheduled, if it is still there.
pub async fn by_key(db: UserDb<'_>, user: UserId, key: &str) -> StoreResult<Option<ScheduledRow>> {
    let sql = format!("SELECT {COLUMNS} FROM scheduled_statuses WHERE user_id = ?1 AND idempotency = ?2");
    first(db, &sql, &[int(user), text(key)]).await
}

/// What a reschedule came to.
#[derive(Debug)]
pub enum Rescheduled {
    Done(ScheduledRow),
    Missing,
    Full(Full),
}

/// Moves a scheduled post to `at`, if that day's limit allows (the row itself not counted).
pub async fn reschedule(db: UserDb<'_>, user: UserId, id: i64, at: i64) -> StoreResult<Rescheduled> {
    let (start, end) = day_of(at);
    let update = format!(
        "UPDATE scheduled_statuses SET scheduled_at = ?5 WHERE user_id = ?1 AND id = ?4 AND {}",
        within_limits(false)
    );
    let read = format!("SELECT {COLUMNS} FROM scheduled_statuses WHERE user_id = ?1 AND id = ?2");
    let results = batch(
        db,
        vec![
            stmt(db, &update, &[int(user), int(start), int(end), int(id), int(at)])?,
            stmt(db, &read, &[int(user), int(id)])?,
        ],
    )
    .await?;
    let row: Option<ScheduledRow> = match results.get(1) {
        Some(read) => read.results()?.into_iter().next(),
        None => None,
    };
    match row {
        None => Ok(Rescheduled::Missing),
        Some(row) if row.scheduled_at == at => Ok(Rescheduled::Done(row)),
        Some(_) => Ok(Rescheduled::Full(full(db, user, at, id).await?)),
    }
}

/// Deletes a scheduled post and lets its uploads go (unattached again: the sweep's, or another
/// post's), in one batch; whether it was there.
pub async fn remove(db: UserDb<'_>, user: UserId, id: i64) -> StoreResult<bool> {
    let results = batch(
        db,
        vec![
            stmt(db, "DELETE FROM scheduled_statuses WHERE user_id = ?1 AND id = ?2", &[int(user), int(id)])?,
            release_statement(db.any(), user, id)?,
        ],
    )
    .await?;
    Ok(super::changed_rows(results.first()) > 0)
}

/// The statement that lets a scheduled post's uploads go.
fn release_statement(db: AnyDb<'_>, user: UserId, id: i64) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "UPDATE media SET scheduled_id = NULL WHERE scheduled_id = ?2 AND user_id = ?1",
        &[int(user), int(id)],
    )
}

/// The publish batch's statements for scheduled post `id` (`store/posts.rs::publish`): the
/// row goes in the batch that makes its post, so the two never exist apart. They follow the
/// idempotency key's insert, whose `request_hash` [`guard_sql`] reads from the row.
pub fn consume_statement(db: UserDb<'_>, user: UserId, id: i64) -> StoreResult<SqlStatement> {
    stmt(db, "DELETE FROM scheduled_statuses WHERE user_id = ?1 AND id = ?2", &[int(user), int(id)])
}

/// The idempotency key's `request_hash` (parameter `hash`) when scheduled post `id` (parameter
/// `id`; the user is `?1`) is still there and due, else NULL, which the key's NOT NULL refuses:
/// a post cancelled, rescheduled or published by another pass between the cron's read and its
/// publish aborts the whole batch instead of publishing.
pub fn guard_sql(hash: &str, id: &str, now: &str) -> String {
    format!(
        "(SELECT {hash} FROM scheduled_statuses WHERE user_id = ?1 AND id = {id} AND scheduled_at <= {now})"
    )
}

/// A due scheduled post with its author's state (their row is on the same database).
#[derive(Debug, Clone, Deserialize)]
pub struct DueRow {
    pub user_id: UserId,
    pub id: i64,
    pub params: String,
    /// 1 when the author's row is gone, or suspended.
    author_gone: i64,
    author_suspended: i64,
}

impl DueRow {
    pub fn author_may_post(&self) -> bool {
        self.author_gone == 0 && self.author_suspended == 0
    }
}

/// Up to `limit` scheduled posts due at `now` on this database, the longest due first, of the
/// logical shards `held` (the ones the map puts here: a moved shard's rows wait on its old
/// database for the purge, and its new one publishes them).
pub async fn due(db: AnyDb<'_>, now: i64, held: &[LogicalShard], limit: usize) -> StoreResult<Vec<DueRow>> {
    let held: Vec<i64> = held.iter().map(|s| s.index() as i64).collect();
    all(
        db,
        "SELECT s.user_id, s.id, s.params, u.id IS NULL AS author_gone, \
           COALESCE(u.suspended_at IS NOT NULL, 0) AS author_suspended \
         FROM scheduled_statuses s LEFT JOIN users u ON u.id = s.user_id \
         WHERE s.scheduled_at <= ?1 AND ((s.user_id >> 3) & 255) IN (SELECT value FROM json_each(?3)) \
         ORDER BY s.scheduled_at LIMIT ?2",
        &[int(now), int(limit as i64), text(&id_list(&held))],
    )
    .await
}

/// Drops a scheduled post that will not publish (its author suspended or gone, or its request
/// refused now), letting its uploads go; whether it was there.
pub async fn drop_due(db: AnyDb<'_>, user: UserId, id: i64) -> StoreResult<bool> {
    let results = batch(
        db,
        vec![
            stmt(db, "DELETE FROM scheduled_statuses WHERE user_id = ?1 AND id = ?2", &[int(user), int(id)])?,
            release_statement(db, user, id)?,
        ],
    )
    .await?;
    Ok(super::changed_rows(results.first()) > 0)
}

/// Whether the row is still there (the cron's re-read after a publish failed).
pub async fn exists(db: UserDb<'_>, user: UserId, id: i64) -> StoreResult<bool> {
    let row: Option<Count> = first(
        db,
        "SELECT COUNT(*) AS n FROM scheduled_statuses WHERE user_id = ?1 AND id = ?2",
        &[int(user), int(id)],
    )
    .await?;
    Ok(row.is_some_and(|c| c.n > 0))
}
