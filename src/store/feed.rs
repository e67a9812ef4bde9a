//! The feed's pull path: a merge of the followed authors' author-index ranges by the feed's
//! sort key, done by D1. It serves readers without a window, group feeds, and everything below
//! a window's floor, and it is the snapshot a new window is built from.

use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;
use worker::D1PreparedStatement;

use super::posts::{post_columns, post_select, PostRow};
use super::{all, exec, first, int, stmt, text, Count, Db};
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::domain::validate::GroupName;
use crate::domain::window::Entry;
use crate::error::ApiResult;

const HOUR_MS: i64 = 3_600_000;
/// Time slabs the pull widens through. Each query only touches posts inside its slab (through
/// the per-author index), so a page near the cursor costs little even for readers who follow
/// prolific authors; the last slab is unbounded so old content is still found.
const SLABS_MS: [i64; 6] =
    [HOUR_MS, 24 * HOUR_MS, 7 * 24 * HOUR_MS, 30 * 24 * HOUR_MS, 365 * 24 * HOUR_MS, i64::MAX];

/// Whose posts a pull considers.
#[derive(Debug, Clone, Copy)]
pub enum PullAuthors<'a> {
    /// The viewer and everyone they follow (new windows, and below a window's floor).
    All,
    /// One follow group (not the viewer's own posts).
    Group(&'a GroupName),
    /// Beside a window: the authors whose edge is pulled, plus the posts of the viewer and of
    /// pushed authors whose fan-out may not have reached the window yet (from each author's
    /// in-flight horizon: `in_flight_since`, or earlier while that author has unfinished
    /// events, see `in_flight_horizon`). `cached` pulled authors are served below
    /// `in_flight_since` from the hot-range cache (`domain/hot.rs`), so D1 only answers their
    /// posts from that time on.
    Pulled { in_flight_since: i64, cached: &'a [UserId] },
    /// Beside a window in push mode: every followed author's (and the viewer's) posts from
    /// their in-flight horizon (`since` at the latest), which may still be on their way.
    InFlight { since: i64 },
}

/// Which posts the pull considers.
#[derive(Debug, Clone)]
pub struct PullScope<'a> {
    pub viewer: UserId,
    pub authors: PullAuthors<'a>,
    /// Exclusive lower bound (for `?after=`); `None` pulls down to the oldest post.
    pub after: Option<SortKey>,
    /// Request time: slabs are measured from here when the cursor is above it (first page).
    pub now: i64,
}

/// The author condition and its own parameters (`?8`, `?9`), if it has any.
fn authors_sql(authors: PullAuthors<'_>) -> (String, Vec<JsValue>) {
    const FOLLOWED: &str = "SELECT author_id FROM follows WHERE follower_id = ?1";
    const CACHED: &str = "SELECT value FROM json_each(?9)";
    match authors {
        PullAuthors::All => (format!("p.author_id IN (SELECT ?1 UNION ALL {FOLLOWED})"), vec![]),
        PullAuthors::Group(g) => {
            (format!("p.author_id IN ({FOLLOWED} AND group_name = ?8)"), vec![text(g.as_str())])
        }
        // The beside-window scopes are read by `beside_window_statement`; here with the same
        // per-author horizon, so both forms select the same posts.
        PullAuthors::Pulled { in_flight_since, cached } => (
            format!(
                "(p.author_id IN ({FOLLOWED} AND pull = 1 AND author_id NOT IN ({CACHED})) \
                  OR (p.created_at >= CASE WHEN p.author_id IN ({CACHED}) THEN ?8 ELSE {} END \
                      AND p.author_id IN \
                      (SELECT ?1 UNION ALL {FOLLOWED} AND (pull = 0 OR author_id IN ({CACHED})))))",
                in_flight_horizon("p.author_id", "?8")
            ),
            vec![int(in_flight_since), text(&id_list(cached))],
        ),
        PullAuthors::InFlight { since } => (
            format!(
                "(p.created_at >= {} AND p.author_id IN (SELECT ?1 UNION ALL {FOLLOWED}))",
                in_flight_horizon("p.author_id", "?8")
            ),
            vec![int(since)],
        ),
    }
}

/// Ids as a JSON array, bound as one parameter and read with `json_each` (any number of ids
/// in one statement, under D1's 100-parameter limit).
fn id_list(ids: &[UserId]) -> String {
    let items: Vec<String> = ids.iter().map(|id| id.get().to_string()).collect();
    format!("[{}]", items.join(","))
}

/// `extra`: more conditions (`AND ...`) of the select's own tables.
fn scope_sql(authors: &str, extra: &str) -> String {
    // ?1 viewer, ?2/?3 upper key, ?4 slab start, ?5 limit, ?6/?7 lower key, ?8/?9 the authors' own.
    // Every numbered parameter must appear in the SQL (D1 checks the binding count).
    format!(
        "WHERE {authors} AND p.deleted_at IS NULL AND p.taken_down_at IS NULL {extra} \
           AND (p.author_id = ?1 OR p.visibility <> 'private') \
           AND (p.created_at, p.id) < (?2, ?3) AND p.created_at >= ?4 AND (p.created_at, p.id) > (?6, ?7) \
         ORDER BY p.created_at DESC, p.id DESC LIMIT ?5"
    )
}

/// Up to `limit` rows strictly below `before`, newest first, and whether the pull is
/// exhausted (fewer rows exist than asked for).
async fn pull_rows<T: DeserializeOwned>(
    db: &Db,
    (select, conditions): (&str, &str),
    scope: &PullScope<'_>,
    before: SortKey,
    limit: usize,
    key_of: impl Fn(&T) -> SortKey,
) -> ApiResult<(Vec<T>, bool)> {
    let (authors, extra) = authors_sql(scope.authors);
    let sql = format!("{select} {}", scope_sql(&authors, conditions));
    let lower = scope.after.unwrap_or(SortKey::BOTTOM);
    let mut rows: Vec<T> = Vec::new();
    let mut upper = before;
    for span in SLABS_MS {
        let slab_start = upper.primary.min(scope.now).saturating_sub(span).max(lower.primary);
        let unbounded = span == i64::MAX || slab_start <= lower.primary;
        let slab_start = if unbounded { -1 } else { slab_start };
        let mut params: Vec<JsValue> = vec![
            int(scope.viewer),
            int(upper.primary),
            int(upper.id),
            int(slab_start),
            int((limit - rows.len()) as i64),
            int(lower.primary),
            int(lower.id),
        ];
        params.extend(extra.iter().cloned());
        let batch: Vec<T> = all(db, &sql, &params).await?;
        rows.extend(batch);
        if rows.len() >= limit {
            return Ok((rows, false));
        }
        if unbounded {
            return Ok((rows, true));
        }
        // Next slab: everything strictly older than this slab's start.
        upper = SortKey::new(slab_start, 0);
        debug_assert!(rows.last().is_none_or(|r| key_of(r) > upper));
    }
    Ok((rows, true))
}

/// The pull beside a window as one statement (to join the hydration batch): up to `limit`
/// posts in `(scope.after, before)`, newest first. `None` for scopes without a bound of their
/// own (the full pull, served by [`pull_posts`] through time slabs).
///
/// Pulled authors are read as one index range each, cut at `limit` inside the subquery (a
/// top-n per author, then merged), so the cost is bounded by `limit` x pulled authors and
/// never by how far the window's floor reaches back; in-flight posts are bounded by their age.
pub fn beside_window_statement(
    db: &Db,
    scope: &PullScope<'_>,
    before: SortKey,
    limit: usize,
) -> ApiResult<Option<D1PreparedStatement>> {
    let (sql, extra) = match scope.authors {
        PullAuthors::Pulled { in_flight_since, cached } => {
            (pulled_beside_sql(), vec![int(in_flight_since), text(&id_list(cached))])
        }
        PullAuthors::InFlight { since } => (in_flight_beside_sql(), vec![int(since)]),
        PullAuthors::All | PullAuthors::Group(_) => return Ok(None),
    };
    let lower = scope.after.unwrap_or(SortKey::BOTTOM);
    let mut params = vec![
        int(scope.viewer),
        int(before.primary),
        int(before.id),
        int(lower.primary),
        int(lower.id),
        int(limit as i64),
    ];
    params.extend(extra);
    Ok(Some(stmt(db, &sql, &params)?))
}

/// Post reads leave out suspended authors (`u`, the post's author, is joined).
const SHOWN_AUTHOR: &str = "AND u.suspended_at IS NULL";

/// The in-flight horizon of one pushed author (`author`, an SQL expression) for the viewer
/// `?1`: the time from which the author's posts may be missing from the viewer's window
/// because their fan-out to it has not finished, capped at `since` (the young-post cushion).
///
/// Why merging every post of the author at or above this horizon from D1 makes a read exact
/// (nothing a pushed reader may see is skipped, however late the fan-out): a post P of a
/// pushed author A, above the window's floor, is either in the window or its delivery to this
/// reader has not happened. A delivery happens inside P's `post` event, which is committed
/// atomically with P (or with the edit / restore / import that made P deliverable) and is
/// marked `done` only after its last chunk's window writes returned (`services/fanout.rs`:
/// `finish_chunk`, invariant 2). So while P can be missing, an outbox row of A with
/// `state <> 'done'` and `post_created_at = P.created_at` exists (pending, retrying, dead or
/// held: none of them is finished), and the horizon is at or below P. The other way a pushed
/// author's posts reach a window is the follow backfill: while that event for (viewer, A) is
/// unfinished, all of A's posts may be missing, so the horizon drops to the bottom. Edges
/// switching from pull keep `pull = 1` until their backfill is written (pulled above), new
/// windows are built from a snapshot taken after the reader is activated, and posts below the
/// floor are served by the pull below it. Read in the same statement as the posts, so it is
/// exactly as current as they are: no cache, no extra round trip, no write on the read path.
/// Cost: one probe of the partial index `outbox_unfinished_by_author` (unfinished events only:
/// empty when the pipeline is healthy) per followed author.
fn in_flight_horizon(author: &str, since: &str) -> String {
    format!(
        "MIN({since}, COALESCE((SELECT MIN(CASE o.kind WHEN 'backfill' THEN -1 ELSE o.post_created_at END) \
           FROM outbox o WHERE o.author_id = {author} AND o.state <> 'done' \
             AND (o.kind = 'post' OR (o.kind = 'backfill' AND o.reader_id = ?1))), {since}))"
    )
}

/// Each author of `authors` (rows of `author_id`, `since`)'s top `?6` posts at or above that
/// author's `since` in the bounds: one index range per author, cut at the page inside the
/// subquery, so the cost is bounded by the page (`?6` per author) and never by how old the
/// backlog is.
fn in_flight_posts_sql(authors: &str) -> String {
    let columns = post_columns();
    format!(
        "{columns} FROM ({authors}) a \
           JOIN posts p ON p.id IN ( \
             SELECT q.id FROM posts q WHERE q.author_id = a.author_id AND q.created_at >= a.since \
               AND q.deleted_at IS NULL AND q.taken_down_at IS NULL \
               AND (q.author_id = ?1 OR q.visibility <> 'private') \
               AND (q.created_at, q.id) < (?2, ?3) AND (q.created_at, q.id) > (?4, ?5) \
             ORDER BY q.created_at DESC, q.id DESC LIMIT ?6) \
           JOIN users u ON u.id = p.author_id \
         WHERE 1 = 1 {SHOWN_AUTHOR}"
    )
}

/// Hybrid: each pulled (and not cached) author's top `?6` in the bounds, plus the in-flight
/// posts of the viewer and pushed authors (from their horizon, `?7` at the latest) and of
/// cached pulled authors (from `?7`, where their cached range ends; `?8`, a JSON id list).
fn pulled_beside_sql() -> String {
    let columns = post_columns();
    let viewer = in_flight_horizon("?1", "?7");
    let pushed = in_flight_horizon("f.author_id", "?7");
    let in_flight = in_flight_posts_sql(&format!(
        "SELECT ?1 AS author_id, {viewer} AS since \
         UNION ALL SELECT f.author_id, \
           CASE WHEN f.pull = 1 THEN ?7 ELSE {pushed} END \
         FROM follows f WHERE f.follower_id = ?1 \
           AND (f.pull = 0 OR f.author_id IN (SELECT value FROM json_each(?8)))"
    ));
    format!(
        "SELECT * FROM ( \
           {columns} FROM follows e \
             JOIN posts p ON p.id IN ( \
               SELECT q.id FROM posts q WHERE q.author_id = e.author_id AND q.deleted_at IS NULL \
                 AND q.taken_down_at IS NULL \
                 AND q.visibility <> 'private' AND (q.created_at, q.id) < (?2, ?3) \
                 AND (q.created_at, q.id) > (?4, ?5) \
               ORDER BY q.created_at DESC, q.id DESC LIMIT ?6) \
             JOIN users u ON u.id = p.author_id \
           WHERE e.follower_id = ?1 AND e.pull = 1 AND e.author_id NOT IN (SELECT value FROM json_each(?8)) \
             {SHOWN_AUTHOR} \
           UNION ALL {in_flight}) \
         ORDER BY created_at DESC, id DESC LIMIT ?6"
    )
}

/// Push: the in-flight posts of the viewer and everyone followed, each from their horizon.
fn in_flight_beside_sql() -> String {
    let viewer = in_flight_horizon("?1", "?7");
    let followed = in_flight_horizon("f.author_id", "?7");
    let in_flight = in_flight_posts_sql(&format!(
        "SELECT ?1 AS author_id, {viewer} AS since \
         UNION ALL SELECT f.author_id, {followed} FROM follows f WHERE f.follower_id = ?1"
    ));
    format!("SELECT * FROM ({in_flight}) ORDER BY created_at DESC, id DESC LIMIT ?6")
}

pub async fn pull_posts(
    db: &Db,
    scope: &PullScope<'_>,
    before: SortKey,
    limit: usize,
) -> ApiResult<(Vec<PostRow>, bool)> {
    // Posts of suspended authors are left out here rather than filtered after (which would
    // spend the page's scan budget on them); window entries keep them, for reinstatement.
    pull_rows(db, (&post_select(), SHOWN_AUTHOR), scope, before, limit, PostRow::sort_key).await
}

/// Keys only (for building a window, or merging recent posts into it), strictly between
/// `after` and `before`, newest first.
pub async fn pull_entries(
    db: &Db,
    viewer: UserId,
    before: SortKey,
    after: Option<SortKey>,
    limit: usize,
    now: i64,
) -> ApiResult<(Vec<Entry>, bool)> {
    let scope = PullScope { viewer, authors: PullAuthors::All, after, now };
    let select = "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p";
    pull_rows(db, (select, ""), &scope, before, limit, Entry::key).await
}

/// Marks the reader's window as live so fan-out starts delivering to it. Must happen before
/// the window's snapshot is read: a post committed after this is delivered, one committed
/// before is in the snapshot (or both, which the window dedups).
pub async fn activate_reader(db: &Db, reader: UserId, now: i64) -> ApiResult<()> {
    const ACTIVATE: &str = "UPDATE users SET feed_active_at = ?2 WHERE id = ?1 AND feed_active_at IS NULL";
    exec(db, ACTIVATE, &[int(reader), int(now)]).await
}

pub async fn is_active_reader(db: &Db, reader: UserId) -> ApiResult<bool> {
    let row: Option<Count> = first(
        db,
        "SELECT COUNT(*) AS n FROM users WHERE id = ?1 AND feed_active_at IS NOT NULL",
        &[int(reader)],
    )
    .await?;
    Ok(row.is_some_and(|c| c.n > 0))
}

/// How many authors the viewer follows (in a group, if given): tells `no_follows` apart.
pub async fn follow_count(db: &Db, viewer: UserId, group: Option<&GroupName>) -> ApiResult<i64> {
    let row: Option<Count> = first(
        db,
        "SELECT COUNT(*) AS n FROM follows WHERE follower_id = ?1 AND (?2 IS NULL OR group_name = ?2)",
        &[int(viewer), group.map_or(JsValue::NULL, |g| text(g.as_str()))],
    )
    .await?;
    Ok(row.map_or(0, |c| c.n))
}

/// The newest posts of some followed authors the reader may see, for the window of a reader
/// whose edges to them switch from pull to push.
pub async fn authors_entries(
    db: &Db,
    reader: UserId,
    authors: &[UserId],
    limit: usize,
) -> ApiResult<Vec<Entry>> {
    let mut entries = Vec::new();
    // 2 fixed parameters, at most 100 a statement.
    for chunk in authors.chunks(90) {
        let list: Vec<String> = (0..chunk.len()).map(|i| format!("?{}", i + 3)).collect();
        let sql = format!(
            "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p \
             WHERE p.author_id IN ({}) AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
               AND p.visibility <> 'private' \
               AND p.author_id IN (SELECT author_id FROM follows WHERE follower_id = ?1) \
             ORDER BY p.created_at DESC, p.id DESC LIMIT ?2",
            list.join(", ")
        );
        let mut params = vec![int(reader), int(limit as i64)];
        params.extend(chunk.iter().map(|a| int(*a)));
        entries.extend(all::<Entry>(db, &sql, &params).await?);
    }
    Ok(entries)
}

/// An author's newest posts a new follower may see, for backfilling the follower's window.
pub async fn backfill_entries(
    db: &Db,
    reader: UserId,
    author: UserId,
    limit: usize,
) -> ApiResult<Vec<Entry>> {
    all(
        db,
        "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p \
         WHERE p.author_id = ?2 AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
           AND p.visibility <> 'private' \
           AND EXISTS (SELECT 1 FROM follows WHERE follower_id = ?1 AND author_id = ?2) \
         ORDER BY p.created_at DESC, p.id DESC LIMIT ?3",
        &[int(reader), int(author), int(limit as i64)],
    )
    .await
}

/// An author's newest posts strictly below `below` (ms), in any state but deleted: a hot range
/// shared by many readers, so visibility is left to each reader's hydration. A statement, to
/// join the batch of the read that found it missing from the cache.
pub fn hot_range(db: &Db, author: UserId, below: i64, limit: usize) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p \
         WHERE p.author_id = ?1 AND p.created_at < ?2 AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
         ORDER BY p.created_at DESC, p.id DESC LIMIT ?3",
        &[int(author), int(below), int(limit as i64)],
    )
}

/// The reader's pulled authors with at least `min_followers` followers (rows of `id`): whose
/// recent ranges the reader takes from the hot-range cache.
pub fn hot_pulled_authors(db: &Db, reader: UserId, min_followers: i64) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "SELECT f.author_id AS id FROM follows f JOIN users u ON u.id = f.author_id \
         WHERE f.follower_id = ?1 AND f.pull = 1 AND u.followers_count >= ?2 AND u.suspended_at IS NULL \
         ORDER BY u.followers_count DESC LIMIT 32",
        &[int(reader), int(min_followers)],
    )
}
