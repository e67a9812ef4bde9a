//! The transactional outbox: events committed with the change they describe, carried out by
//! the fan-out pipeline, swept by reconciliation when they stop making progress.

use crate::store::SqlStatement;
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::shards::Shards;
use super::stats::bump;
use super::StoreResult;
use super::{all, batch, exec, first, id_list, int, run, stmt, text, AnyDb, IdRow, OnDb, OutboxDb, UserDb};
use crate::domain::fanout_segments::Segments;
use crate::domain::ids::{OutboxId, PostId, UserId};
use crate::domain::outbox::{EventKind, EventState};
use crate::domain::snowflake::{shard_of_id, ID_RANDOM_BITS, SHARD_BITS};

#[derive(Debug, Clone, Deserialize)]
pub struct OutboxRow {
    pub id: OutboxId,
    pub kind: EventKind,
    pub post_id: Option<PostId>,
    pub author_id: UserId,
    pub reader_id: Option<UserId>,
    pub post_created_at: Option<i64>,
    pub created_at: i64,
    pub state: EventState,
    pub cursor_follower_id: i64,
    /// A split event's segments (`[start_after, end, cursor, done]` each, JSON), else `None`.
    #[serde(default)]
    pub segments: Option<String>,
}

impl OutboxRow {
    /// The event's segments as the row was read (empty: not split).
    pub fn segments(&self) -> Segments {
        parse_segments(self.segments.as_deref())
    }
}

/// The row's segments; a number written as a real (`12.0`) reads as its integer (ids are exact
/// below 2^53; the last segment's end saturates back to `i64::MAX`).
fn parse_segments(json: Option<&str>) -> Segments {
    let rows: Vec<[serde_json::Value; 4]> =
        json.and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default();
    let int = |v: &serde_json::Value| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)).unwrap_or(0);
    let rows: Vec<[i64; 4]> = rows.iter().map(|r| [int(&r[0]), int(&r[1]), int(&r[2]), int(&r[3])]).collect();
    Segments::from_rows(&rows)
}

pub async fn get(db: OutboxDb<'_>, id: OutboxId) -> StoreResult<Option<OutboxRow>> {
    first(db, &format!("SELECT {ROW_COLUMNS} FROM outbox WHERE id = ?1"), &[int(id)]).await
}

/// [`OutboxRow`]'s columns.
pub const ROW_COLUMNS: &str =
    "id, kind, post_id, author_id, reader_id, post_created_at, created_at, state, cursor_follower_id, segments";

/// The id expression of an `INSERT INTO outbox`: a counter above every id the table holds,
/// times the id space of one counter step, plus the logical shard (bound at `shard_param`) of
/// the user whose database holds the row, where every id keeps its shard (`domain/shard.rs`).
/// So an event routes like that user's id, and ids stay unique when a logical shard's rows
/// arrive from another database (the counter counts them too). `MAX(id)` is the last entry of
/// the primary key: one seek.
pub fn new_id_sql(shard_param: &str) -> String {
    let unit = 1i64 << (SHARD_BITS + ID_RANDOM_BITS);
    let shard_unit = 1i64 << ID_RANDOM_BITS;
    format!(
        "((SELECT COALESCE(MAX(id), 0) FROM outbox) / {unit} + 1) * {unit} + {shard_param} * {shard_unit}"
    )
}

/// The value bound for [`new_id_sql`]'s parameter: the logical shard of `home`'s id.
pub fn shard_param(home: impl Into<i64>) -> JsValue {
    int(shard_of_id(home.into()).index() as i64)
}

/// A reader-scoped event (`remove_author` / `backfill`), for use inside a graph batch on
/// `home`'s database. `only_if_changed` makes the row conditional on the previous statement
/// having changed rows.
#[allow(clippy::too_many_arguments)]
pub fn reader_event(
    db: UserDb<'_>,
    home: UserId,
    kind: EventKind,
    reader: UserId,
    author: UserId,
    now: i64,
    only_if_changed: bool,
) -> StoreResult<SqlStatement> {
    let condition = if only_if_changed { "WHERE changes() > 0" } else { "" };
    stmt(
        db,
        &format!(
            "INSERT INTO outbox (id, kind, author_id, reader_id, created_at) \
             SELECT {}, ?1, ?2, ?3, ?4 {condition} RETURNING id",
            new_id_sql("?5")
        ),
        &[text(kind.as_str()), int(author), int(reader), int(now), shard_param(home)],
    )
}

/// An event about an existing post (`post`: deliver it, `remove_post`: take it out), for use
/// inside the batch that changes the post.
pub fn post_event<'a>(
    db: impl OnDb<'a>,
    kind: EventKind,
    post: PostId,
    now: i64,
) -> StoreResult<SqlStatement> {
    stmt(
        db,
        &format!(
            "INSERT INTO outbox (id, kind, post_id, author_id, post_created_at, created_at) \
             SELECT {}, ?3, id, author_id, created_at, ?2 FROM posts WHERE id = ?1 RETURNING id",
            new_id_sql("?4")
        ),
        &[int(post), int(now), text(kind.as_str()), shard_param(post)],
    )
}

/// Outbox ids returned by the `RETURNING id` statements of a batch.
pub fn returned_events(results: &[crate::store::SqlResult]) -> Vec<OutboxId> {
    super::returned_ids(results).into_iter().map(OutboxId::from_trusted).collect()
}

/// An author's followers after `after`, in follower-id order, from the author's side alone
/// (`followers`): only those whose edge is pushed (`pushed_only`, hybrid mode) or all of them
/// (push mode). Which of them have a window is their own rows' to say ([`active_among`]).
pub async fn follower_chunk(
    db_of_author: UserDb<'_>,
    author: UserId,
    (after, until): (i64, i64),
    limit: usize,
    pushed_only: bool,
) -> StoreResult<Vec<UserId>> {
    #[derive(Deserialize)]
    struct Row {
        follower_id: UserId,
    }
    let rows: Vec<Row> = all(
        db_of_author,
        &follower_page_sql("?1", Some("?4"), pushed_only),
        &[int(author), int(after), int(limit as i64), int(until)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.follower_id).collect())
}

/// [`follower_chunk`]'s query: the followers of `author` (an expression) after `?2`, up to
/// `until` (an expression, or none), `?3` of them. One text for the chunk's own read and the
/// event's read-ahead (`store/fanout_ahead.rs`), whose page stands in for it.
pub(super) fn follower_page_sql(author: &str, until: Option<&str>, pushed_only: bool) -> String {
    let pushed = if pushed_only { "AND push = 1" } else { "" };
    let until = until.map(|u| format!("AND follower_id <= {u} ")).unwrap_or_default();
    format!(
        "SELECT follower_id FROM followers WHERE author_id = {author} {pushed} AND follower_id > ?2 \
         {until}ORDER BY follower_id LIMIT ?3"
    )
}

/// Which of `readers` have a timeline window (read exactly when the fan-out runs: a reader
/// activated before a post's fan-out reads this gets the post; one activated after has it in
/// the snapshot their window is built from). Their own rows, by primary key. Readers on a
/// database in an outage count as active: a delivery to a window never built is kept and
/// merged by its build (ARCHITECTURE invariant 11), while failing here would hold the author's
/// whole fan-out, every database's readers, until that one is back.
pub async fn active_among(shards: &Shards, readers: &[UserId]) -> StoreResult<Vec<UserId>> {
    let groups = shards.users_by_database(readers.iter().copied());
    let found = shards
        .across(groups, |db, group| async move {
            let list = id_list(&group);
            let read = all::<IdRow>(
                db,
                "SELECT id FROM users WHERE id IN (SELECT value FROM json_each(?1)) AND feed_active_at IS NOT NULL",
                &[text(&list)],
            )
            .await;
            match read {
                Err(e) if e.unavailable_database().is_some() => {
                    Ok(group.into_iter().map(|id| IdRow { id: id.get() }).collect())
                }
                read => read,
            }
        })
        .await?;
    let active: std::collections::HashSet<i64> = found.into_iter().flatten().map(|r| r.id).collect();
    Ok(readers.iter().copied().filter(|r| active.contains(&r.get())).collect())
}

/// Records a finished chunk: progress only moves forward, so a stale retry cannot rewind it.
/// `sent_at` doubles as the lease the reconciliation sweep checks before resending. One
/// statement: the chunk's counts are the caller's (`services/tally.rs`), not a write on the
/// author's database, which a big post's every chunk records on.
pub async fn record_chunk(
    db: OutboxDb<'_>,
    id: OutboxId,
    last_follower: i64,
    delivered: usize,
    now: i64,
) -> StoreResult<()> {
    exec(
        db,
        "UPDATE outbox SET cursor_follower_id = MAX(cursor_follower_id, ?2), delivered = delivered + ?3, \
         sent_at = ?4, attempts = attempts + 1 WHERE id = ?1",
        &[int(id), int(last_follower), int(delivered as i64), int(now)],
    )
    .await
}

/// The follower ids ending each segment but the last of an author's followers split `segments`
/// ways, `step` followers apart: one walk down the author's side of the edges (an index range,
/// no row of the followers' own), in one statement.
pub async fn segment_ends(
    db_of_author: UserDb<'_>,
    author: UserId,
    pushed_only: bool,
    step: u64,
    segments: usize,
) -> StoreResult<Vec<i64>> {
    let pushed = if pushed_only { "AND push = 1" } else { "" };
    let rows: Vec<IdRow> = all(
        db_of_author,
        &format!(
            "WITH RECURSIVE b(k, id) AS (SELECT 0, 0 UNION ALL \
               SELECT k + 1, (SELECT follower_id FROM followers WHERE author_id = ?1 {pushed} \
                 AND follower_id > b.id ORDER BY follower_id LIMIT 1 OFFSET ?2) \
               FROM b WHERE k < ?3 AND b.id IS NOT NULL) \
             SELECT id FROM b WHERE k > 0 AND id IS NOT NULL"
        ),
        &[int(author), int(step.saturating_sub(1) as i64), int(segments.saturating_sub(1) as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Splits a pending event into `segments` unless it was split already (the first split wins:
/// a redelivered first message finds the same segments), and answers the row's segments.
pub async fn split(db: OutboxDb<'_>, id: OutboxId, segments: &Segments) -> StoreResult<Segments> {
    #[derive(Deserialize)]
    struct Row {
        segments: Option<String>,
    }
    let json = serde_json::to_string(&segments.to_rows()).unwrap_or_default();
    let results = batch(
        db,
        vec![
            stmt(
                db,
                "UPDATE outbox SET segments = ?2 WHERE id = ?1 AND segments IS NULL AND state = 'pending'",
                &[int(id), text(&json)],
            )?,
            stmt(db, "SELECT segments FROM outbox WHERE id = ?1", &[int(id)])?,
        ],
    )
    .await?;
    let row =
        results.get(1).map(|r| r.results::<Row>()).transpose()?.and_then(|rows| rows.into_iter().next());
    Ok(parse_segments(row.and_then(|r| r.segments).as_deref()))
}

/// Records a segment's chunk on the event's row: the segment's progress (forward only) and,
/// with its chain's last chunk, that it is done (never undone), in place in the row's JSON,
/// so segments recording side by side never overwrite each other. Answers how many of the
/// event's segments are still unfinished (read in the same transaction: of two segments
/// finishing together, the later sees none left).
pub async fn record_segment(
    db: OutboxDb<'_>,
    id: OutboxId,
    (segment, progress, last): (u16, i64, bool),
    delivered: usize,
    now: i64,
) -> StoreResult<usize> {
    #[derive(Deserialize)]
    struct Unfinished {
        n: i64,
    }
    // One statement (the count in RETURNING reads the row as this update left it).
    let left: Option<Unfinished> = first(
        db,
        "UPDATE outbox SET segments = json_set(segments, \
           ?2, MAX(json_extract(segments, ?2), CAST(?3 AS INTEGER)), \
           ?7, MAX(json_extract(segments, ?7), CAST(?4 AS INTEGER))), \
         delivered = delivered + ?5, sent_at = ?6, attempts = attempts + 1 \
         WHERE id = ?1 AND segments IS NOT NULL \
         RETURNING (SELECT COUNT(*) FROM json_each(segments) j WHERE json_extract(j.value, '$[3]') = 0) AS n",
        &[
            int(id),
            // The JSON paths are written here, and the numbers cast: D1 binds a number
            // as a real (`$[1.0]` is no path; `1.0` in the JSON no integer).
            text(&format!("$[{segment}][2]")),
            int(progress),
            int(i64::from(last)),
            int(delivered as i64),
            int(now),
            text(&format!("$[{segment}][3]")),
        ],
    )
    .await?;
    Ok(left.map_or(0, |c| c.n.max(0) as usize))
}

/// Marks an event done; a `post` event also leaves a publish-to-visible latency sample.
pub async fn mark_done(db: OutboxDb<'_>, row: &OutboxRow, now: i64) -> StoreResult<()> {
    let mut statements = vec![stmt(
        db,
        "UPDATE outbox SET state = 'done', done_at = ?2 WHERE id = ?1 AND state <> 'done'",
        &[int(row.id), int(now)],
    )?];
    if row.kind == EventKind::Post {
        // Right after the UPDATE, so changes() tells whether this call finished the event (this
        // insert then writes exactly one row, so the next statement can ask again).
        statements.push(stmt(
            db,
            "INSERT INTO latency_samples (kind, ms, created_at) SELECT 'publish_to_visible', ?1, ?2 \
             WHERE changes() > 0",
            &[int(now - row.created_at), int(now)],
        )?);
        // The fan-out health figure: right after the sample, whose changes() says the same.
        // Counted by the minute the event was created, beside `published` of that minute, and
        // only for a new post's own event (created with the post: not an import's, an edit's
        // or a restore's), the same events `published` counts.
        let elapsed = now - row.created_at;
        let new_post = row.post_created_at == Some(row.created_at);
        statements.push(stmt(
            db,
            "INSERT INTO minute_counts (name, minute, n) \
             SELECT name, ?1, 1 FROM (SELECT 'fanout_done' AS name \
               UNION ALL SELECT 'fanout_done_10s' WHERE ?2 <= 10000 \
               UNION ALL SELECT 'fanout_done_60s' WHERE ?2 <= 60000) \
             WHERE changes() > 0 AND ?3 = 1 \
             ON CONFLICT (name, minute) DO UPDATE SET n = n + 1",
            &[int(super::stats::minute_of(row.created_at)), int(elapsed), int(i64::from(new_post))],
        )?);
        // The followers this post was not written to (pulled edges, readers without a window):
        // from counters already at hand, not a count over the follower list.
        statements.push(stmt(
            db,
            "INSERT INTO stats (name, value) \
             SELECT 'deliveries_avoided', MAX(u.followers_count - o.delivered, 0) FROM users u, outbox o \
             WHERE u.id = ?1 AND o.id = ?2 \
             ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
            &[int(row.author_id), int(row.id)],
        )?);
    }
    statements.push(bump(db, &format!("events_done_{}", row.kind.as_str()), 1)?);
    batch(db, statements).await?;
    Ok(())
}

/// Marks an event dead for a message the queue gave up on, first sent at `message_sent_at`.
/// Only that attempt is over: an event resent (by the sweep or a replay, which renew
/// `sent_at`) or making progress (chunks renew it) after that message was sent belongs to a
/// newer attempt, which a late dead letter of the old one must not kill.
pub async fn mark_dead(db: OutboxDb<'_>, id: OutboxId, message_sent_at: i64) -> StoreResult<()> {
    batch(
        db,
        vec![
            stmt(
                db,
                "UPDATE outbox SET state = 'dead' WHERE id = ?1 AND state = 'pending' \
                   AND COALESCE(sent_at, created_at) <= ?2",
                &[int(id), int(message_sent_at)],
            )?,
            bump(db, "dead_letters", 1)?,
        ],
    )
    .await?;
    Ok(())
}

/// Parks a delivery of a suspended author's post until reinstatement ([`release_held`]), if
/// the author is still suspended as the write commits; false if not (a reinstatement came
/// between the read and this write: the caller must not drop the event).
pub async fn hold(db: OutboxDb<'_>, id: OutboxId) -> StoreResult<bool> {
    let changed = run(
        db,
        "UPDATE outbox SET state = 'held' WHERE id = ?1 AND state = 'pending' \
           AND EXISTS (SELECT 1 FROM users u WHERE u.id = outbox.author_id AND u.suspended_at IS NOT NULL)",
        &[int(id)],
    )
    .await?;
    Ok(changed > 0)
}

/// Held events of an author who is not suspended (any more), back to pending (their progress
/// kept), to be sent.
pub async fn release_held(db: UserDb<'_>, author: UserId, now: i64) -> StoreResult<Vec<OutboxId>> {
    let rows: Vec<IdRow> = all(
        db,
        "UPDATE outbox SET state = 'pending', sent_at = ?2 WHERE state = 'held' AND author_id = ?1 \
           AND NOT EXISTS (SELECT 1 FROM users WHERE id = ?1 AND suspended_at IS NOT NULL) RETURNING id",
        &[int(author), int(now)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| OutboxId::from_trusted(r.id)).collect())
}

/// Authors with held events who are no longer suspended (a reinstatement cut short before its
/// release), at most `limit`: the held set is small, so this reads only it.
pub async fn released_authors_pending(db: AnyDb<'_>, limit: usize) -> StoreResult<Vec<UserId>> {
    let rows: Vec<IdRow> = all(
        db,
        "SELECT DISTINCT o.author_id AS id FROM outbox o JOIN users u ON u.id = o.author_id \
         WHERE o.state = 'held' AND u.suspended_at IS NULL LIMIT ?1",
        &[int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| UserId::from_trusted(r.id)).collect())
}

/// Returns dead-lettered events to pending (after the cause of their failures is fixed).
pub async fn revive_dead(db: AnyDb<'_>) -> StoreResult<usize> {
    run(db, "UPDATE outbox SET state = 'pending', sent_at = NULL WHERE state = 'dead'", &[]).await
}

/// Pending events with no progress for `grace_ms`: the sender died, or a chain broke.
/// Their lease is renewed here so two sweeps do not resend the same event back to back.
pub async fn claim_stuck(db: AnyDb<'_>, now: i64, grace_ms: i64, limit: usize) -> StoreResult<Vec<OutboxId>> {
    let rows: Vec<IdRow> = all(
        db,
        "UPDATE outbox SET sent_at = ?1 WHERE id IN (SELECT id FROM outbox WHERE state = 'pending' \
           AND COALESCE(sent_at, created_at) < ?2 ORDER BY id LIMIT ?3) RETURNING id",
        &[int(now), int(now - grace_ms), int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| OutboxId::from_trusted(r.id)).collect())
}

/// Drops finished events older than `before` (they only matter while they can be replayed).
pub async fn purge_done(db: AnyDb<'_>, before: i64) -> StoreResult<usize> {
    run(db, "DELETE FROM outbox WHERE state = 'done' AND done_at < ?1", &[int(before)]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_read_back_whether_sqlite_wrote_integers_or_reals() {
        let written = parse_segments(Some("[[0,10,0,0],[10,9223372036854775807,10,0]]"));
        assert_eq!(written.to_rows(), vec![[0, 10, 0, 0], [10, i64::MAX, 10, 0]]);
        let recorded = parse_segments(Some("[[0,10,10.0,1.0],[10,9.223372036854776e18,12.0,0]]"));
        assert_eq!(recorded.to_rows(), vec![[0, 10, 10, 1], [10, i64::MAX, 12, 0]]);
        assert!(parse_segments(None).0.is_empty() && parse_segments(Some("junk")).0.is_empty());
    }
}
