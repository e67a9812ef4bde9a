//! Repair of the users' denormalized counters (`followers_count`, `following_count`,
//! `posts_count`, kept by triggers) against the relations, a bounded slice of users per pass.

use serde::Deserialize;

use super::StoreResult;
use super::{batch, int, stmt, AnyDb, IdRow};

/// What one slice found and fixed, by counter.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct UserCountRepairs {
    pub followers_count: usize,
    pub following_count: usize,
    pub posts_count: usize,
    pub users_checked: usize,
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

/// Checks up to `limit` users after `after_id` (by id), fixing drifted counters, in one batch;
/// returns what it repaired and where the next slice starts (0 after the last user: the next
/// pass starts over).
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
    let repaired = |i: usize| -> StoreResult<usize> {
        Ok(results.get(i).map(|r| r.results::<IdRow>()).transpose()?.map_or(0, |rows| rows.len()))
    };
    let slice: Option<Slice> =
        results.get(3).map(|r| r.results::<Slice>()).transpose()?.and_then(|s| s.into_iter().next());
    let (last, checked) = slice.map_or((None, 0), |s| (s.last, s.n as usize));
    let repairs = UserCountRepairs {
        followers_count: repaired(0)?,
        following_count: repaired(1)?,
        posts_count: repaired(2)?,
        users_checked: checked,
    };
    // A short slice reached the end: start over next time.
    let next = if checked < limit { 0 } else { last.unwrap_or(0) };
    Ok((repairs, next))
}
