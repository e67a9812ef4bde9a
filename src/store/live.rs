//! Live readers' leases (migration 0007): who has an open feed socket, for the fan-out.

use serde::Deserialize;

use super::{all, exec, int, Db};
use crate::domain::ids::UserId;
use crate::error::ApiResult;

/// Extends the reader's lease to `until` (ms); never shortens it.
pub async fn renew_lease(db: &Db, reader: UserId, until: i64) -> ApiResult<()> {
    const SQL: &str = "INSERT INTO live_readers (user_id, until) VALUES (?1, ?2) \
                       ON CONFLICT (user_id) DO UPDATE SET until = MAX(until, excluded.until)";
    exec(db, SQL, &[int(reader), int(until)]).await
}

/// The reader's last socket closed: they stop counting as live.
pub async fn end_lease(db: &Db, reader: UserId) -> ApiResult<()> {
    exec(db, "DELETE FROM live_readers WHERE user_id = ?1", &[int(reader)]).await
}

/// Leases that lapsed (their object stopped renewing them without ending them).
pub async fn purge_lapsed(db: &Db, now: i64) -> ApiResult<()> {
    exec(db, "DELETE FROM live_readers WHERE until <= ?1", &[int(now)]).await
}

/// The author's followers with an open feed socket, after `after` in id order: every one when
/// `unpushed_only` is false, else only those the fan-out does not push to. Driven from the
/// (small) live set, so an author's follower count does not matter.
pub async fn live_followers(
    db: &Db,
    author: UserId,
    after: i64,
    now: i64,
    limit: usize,
    unpushed_only: bool,
) -> ApiResult<Vec<UserId>> {
    #[derive(Deserialize)]
    struct Row {
        user_id: UserId,
    }
    let unpushed = if unpushed_only { "AND f.push = 0" } else { "" };
    let sql = format!(
        "SELECT l.user_id FROM live_readers l \
         JOIN follows f ON f.follower_id = l.user_id AND f.author_id = ?1 \
         WHERE l.user_id > ?2 AND l.until > ?3 {unpushed} ORDER BY l.user_id LIMIT ?4"
    );
    let rows: Vec<Row> = all(db, &sql, &[int(author), int(after), int(now), int(limit as i64)]).await?;
    Ok(rows.into_iter().map(|r| r.user_id).collect())
}
