//! Repair of the users' denormalized counters (`followers_count`, `following_count`,
//! `posts_count`, kept by triggers) against the relations: the users whose relations changed
//! since the last pass (marked in `count_marks` by triggers, migration 0049), and a slow sweep
//! of every user, a bounded slice per pass, for a counter edited behind the marks' back.

use serde::Deserialize;

use super::StoreResult;
use super::{all, batch, id_list, int, stmt, text, AnyDb, IdRow};

/// What one pass found and fixed, by counter, and what it read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct UserCountRepairs {
    pub followers_count: usize,
    pub following_count: usize,
    pub posts_count: usize,
    /// Users recounted: `marked_users + swept_users`.
    pub users_checked: usize,
    /// Users recounted because their relations changed (their marks cleared).
    pub marked_users: usize,
    /// Users recounted by the sweep's slice.
    pub swept_users: usize,
    /// Rows D1 reported reading for the marked users' recount (the marks, their relations,
    /// their rows) and for the sweep's slice (with its cursor): what the marks keep small.
    pub marked_rows_read: u64,
    pub swept_rows_read: u64,
}

impl UserCountRepairs {
    pub fn add(&mut self, other: UserCountRepairs) {
        self.followers_count += other.followers_count;
        self.following_count += other.following_count;
        self.posts_count += other.posts_count;
        self.users_checked += other.users_checked;
        self.marked_users += other.marked_users;
        self.swept_users += other.swept_users;
        self.marked_rows_read += other.marked_rows_read;
        self.swept_rows_read += other.swept_rows_read;
    }
}

/// Which marked users a pass recounts.
#[derive(Debug, Clone, Copy)]
pub struct MarkedPick {
    /// Now, in seconds (the marks carry D1's clock in seconds).
    pub now_secs: i64,
    pub limit: usize,
    /// A user whose stored counters add up to more than this (a celebrity: a recount reads
    /// that many rows) is recounted only once their mark is `large_delay_secs` old, so a user
    /// followed every minute is not counted every minute.
    pub large: i64,
    pub large_delay_secs: i64,
}

/// The marked users due (oldest marks first): `?1` now, `?2` the limit, `?3` the large sum,
/// `?4` its delay. A mark whose user is not on this database (nothing to count) is due too,
/// and only cleared. Not a user of a shard listed in `frozen_shards` (a move's freeze refuses
/// the recount's writes and the clearing; its marks wait, and a purge takes them away).
const MARKED: &str = "SELECT m.user_id AS id FROM count_marks m LEFT JOIN users u ON u.id = m.user_id \
     WHERE (COALESCE(u.followers_count + u.following_count + u.posts_count, 0) <= ?3 OR m.marked_at <= ?1 - ?4) \
       AND NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((m.user_id >> 3) & 255)) \
     ORDER BY m.marked_at, m.user_id LIMIT ?2";

/// Recounts the marked users that are due and clears their marks, in one batch: a change that
/// commits after it marks its user again. Two round trips (the pick, then the batch); none
/// more when nothing is marked.
pub async fn repair_marked(db: AnyDb<'_>, pick: MarkedPick) -> StoreResult<UserCountRepairs> {
    let params = [int(pick.now_secs), int(pick.limit as i64), int(pick.large), int(pick.large_delay_secs)];
    let marked: Vec<IdRow> = all(db, MARKED, &params).await?;
    if marked.is_empty() {
        return Ok(UserCountRepairs::default());
    }
    let ids: Vec<i64> = marked.iter().map(|r| r.id).collect();
    let list = [text(&id_list(&ids))];
    let mut statements = Vec::new();
    for (column, truth) in COUNTS {
        let sql = format!(
            "UPDATE users SET {column} = {truth} \
             WHERE id IN (SELECT value FROM json_each(?1)) AND {column} <> {truth} RETURNING id"
        );
        statements.push(stmt(db, &sql, &list)?);
    }
    let clear = "DELETE FROM count_marks WHERE user_id IN (SELECT value FROM json_each(?1))";
    statements.push(stmt(db, clear, &list)?);
    let results = batch(db, statements).await?;
    let mut repairs = fixed(&results)?;
    repairs.marked_users = ids.len();
    repairs.users_checked = ids.len();
    Ok(repairs)
}

/// The counters each of the first three results (the `COUNTS` updates) fixed.
fn fixed(results: &[super::SqlResult]) -> StoreResult<UserCountRepairs> {
    let repaired = |i: usize| -> StoreResult<usize> {
        Ok(results.get(i).map(|r| r.results::<IdRow>()).transpose()?.map_or(0, |rows| rows.len()))
    };
    Ok(UserCountRepairs {
        followers_count: repaired(0)?,
        following_count: repaired(1)?,
        posts_count: repaired(2)?,
        ..UserCountRepairs::default()
    })
}

/// The counters as the relations say (each one index range per user, on the user's own side:
/// `followers_count` counts the author-side copies, `following_count` the follower-side rows;
/// a mirror that lags is the graph check's to repair, `services/graph.rs`).
const COUNTS: [(&str, &str); 3] = [
    ("followers_count", "(SELECT COUNT(*) FROM followers f WHERE f.author_id = users.id)"),
    ("following_count", "(SELECT COUNT(*) FROM follows f WHERE f.follower_id = users.id)"),
    ("posts_count", "(SELECT COUNT(*) FROM posts p WHERE p.author_id = users.id AND p.deleted_at IS NULL)"),
];

/// The slice: up to `?2` users after id `?1`.
const SLICE: &str = "SELECT id FROM users WHERE id > ?1 ORDER BY id LIMIT ?2";

/// The sweep: checks up to `limit` users after `after_id` (by id), fixing drifted counters,
/// in one batch; returns what it repaired and where the next slice starts (0 after the last
/// user: the next slice starts over).
pub async fn repair_user_counts(
    db: AnyDb<'_>,
    after_id: i64,
    limit: usize,
) -> StoreResult<(UserCountRepairs, i64)> {
    #[derive(Deserialize)]
    struct Slice {
        last: Option<i64>,
        n: i64,
    }
    let params = [int(after_id), int(limit as i64)];
    let mut statements = Vec::new();
    for (column, truth) in COUNTS {
        let sql = format!(
            "UPDATE users SET {column} = {truth} WHERE id IN ({SLICE}) AND {column} <> {truth} RETURNING id"
        );
        statements.push(stmt(db, &sql, &params)?);
    }
    let range = format!("SELECT MAX(id) AS last, COUNT(*) AS n FROM ({SLICE})");
    statements.push(stmt(db, &range, &params)?);
    let results = batch(db, statements).await?;
    let slice: Option<Slice> =
        results.get(3).map(|r| r.results::<Slice>()).transpose()?.and_then(|s| s.into_iter().next());
    let (last, checked) = slice.map_or((None, 0), |s| (s.last, s.n as usize));
    let repairs = UserCountRepairs { users_checked: checked, swept_users: checked, ..fixed(&results)? };
    // A short slice reached the end: start over next time.
    let next = if checked < limit { 0 } else { last.unwrap_or(0) };
    Ok((repairs, next))
}
