//! Live readers' leases (migration 0007): who has an open feed socket, for the fan-out.

use super::shards::Shards;
use super::StoreResult;
use super::{all, exec, id_list, int, text, ControlDb, IdRow, UserDb};
use crate::domain::ids::UserId;

/// Extends the reader's lease to `until` (ms); never shortens it.
pub async fn renew_lease(db: ControlDb<'_>, reader: UserId, until: i64) -> StoreResult<()> {
    const SQL: &str = "INSERT INTO live_readers (user_id, until) VALUES (?1, ?2) \
                       ON CONFLICT (user_id) DO UPDATE SET until = MAX(until, excluded.until)";
    exec(db, SQL, &[int(reader), int(until)]).await
}

/// The reader's last socket closed: they stop counting as live.
pub async fn end_lease(db: ControlDb<'_>, reader: UserId) -> StoreResult<()> {
    exec(db, "DELETE FROM live_readers WHERE user_id = ?1", &[int(reader)]).await
}

/// Leases that lapsed (their object stopped renewing them without ending them).
pub async fn purge_lapsed(db: ControlDb<'_>, now: i64) -> StoreResult<()> {
    exec(db, "DELETE FROM live_readers WHERE until <= ?1", &[int(now)]).await
}

/// The author's followers among the next page of open feed sockets after `after` (in id
/// order, `scan` of them): every follower when `unpushed_only` is false, else only those the
/// fan-out does not push to. The live set (small, on the control database) is paged, and the
/// page is checked against the author's side of the edges (`followers`, on the author's home),
/// so an author's follower count does not matter. Also returns where the next page starts, if
/// this one was full.
pub async fn live_followers(
    shards: &Shards,
    author: UserId,
    after: i64,
    now: i64,
    scan: usize,
    unpushed_only: bool,
) -> StoreResult<(Vec<UserId>, Option<i64>)> {
    let live: Vec<IdRow> = all(
        shards.control(),
        "SELECT user_id AS id FROM live_readers WHERE user_id > ?1 AND until > ?2 ORDER BY user_id LIMIT ?3",
        &[int(after), int(now), int(scan as i64)],
    )
    .await?;
    let next = live.last().filter(|_| live.len() == scan).map(|r| r.id);
    if live.is_empty() {
        return Ok((Vec::new(), next));
    }
    let ids = id_list(&live.iter().map(|r| r.id).collect::<Vec<_>>());
    let unpushed = if unpushed_only { "AND f.push = 0" } else { "" };
    let sql = format!(
        "SELECT value AS id FROM json_each(?2) WHERE EXISTS \
           (SELECT 1 FROM followers f WHERE f.author_id = ?1 AND f.follower_id = value {unpushed})"
    );
    let followers: Vec<IdRow> = all(shards.user(author), &sql, &[int(author), text(&ids)]).await?;
    Ok((followers.into_iter().map(|r| UserId::from_trusted(r.id)).collect(), next))
}

/// Marks on the user's home row that they have a live socket until `until` (ms; never
/// shortened): what notification writes read to know whether to tell a socket (migration 0018).
pub async fn mark_live(db_of_user: UserDb<'_>, user: UserId, until: i64) -> StoreResult<()> {
    const SQL: &str = "UPDATE users SET live_until = MAX(COALESCE(live_until, 0), ?2) WHERE id = ?1";
    exec(db_of_user, SQL, &[int(user), int(until)]).await
}
