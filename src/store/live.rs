//! Live readers' leases (migration 0007): who has an open feed socket, for the fan-out.

use super::shards::Shards;
use super::StoreResult;
use super::{all, exec, id_list, int, text, AnyDb, ControlDb, IdRow, UserDb};
use crate::domain::ids::UserId;
use crate::domain::live::MarkedEdges;

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
/// fan-out does not push to. The live set (on the control database) is paged, and the page is
/// checked against the author's side of the edges (`followers`, on the author's home), so an
/// author's follower count does not matter. Also returns where the next page starts, if this
/// one was full. An edit's frames use it (they go to pushed followers too, which carry no
/// mark); a delivery reads [`marked_followers`] instead, which costs no control-database read.
pub async fn live_followers_by_lease(
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

/// A live reader's edges that carry marks ([`MarkedEdges`]): the authors, read on the reader's
/// home (`follows`, whose `pull` flag is what their feed reads pull), at most
/// [`MARKED_EDGES_MAX`] of them.
pub async fn marked_authors(
    db_of_reader: UserDb<'_>,
    reader: UserId,
    edges: MarkedEdges,
) -> StoreResult<Vec<UserId>> {
    let pulled = match edges {
        MarkedEdges::None => return Ok(Vec::new()),
        MarkedEdges::Pulled => "AND pull = 1",
        MarkedEdges::All => "",
    };
    let sql = format!("SELECT author_id AS id FROM follows WHERE follower_id = ?1 {pulled} LIMIT ?2");
    let rows: Vec<IdRow> = all(db_of_reader, &sql, &[int(reader), int(MARKED_EDGES_MAX as i64)]).await?;
    Ok(rows.into_iter().map(|r| UserId::from_trusted(r.id)).collect())
}

/// At most this many of a reader's edges are marked: one statement's JSON list per database,
/// and more than Mastodon's follow limit (7,500) of pulled edges is no live reader's. Past it,
/// the unmarked authors' posts reach the reader at their next read, as for a closed socket.
pub const MARKED_EDGES_MAX: usize = 8_000;

/// Marks the reader live on their edges to `authors` (all homed on `db`) until `until` (ms;
/// never shortened). An author whose shard is frozen for a move is left out rather than
/// failing the statement (its triggers refuse the write): the move carries the marks it has.
pub async fn mark_edges(db: AnyDb<'_>, reader: UserId, authors: &[UserId], until: i64) -> StoreResult<()> {
    const SQL: &str = "INSERT INTO live_edges (author_id, reader_id, until) \
                       SELECT value, ?1, ?2 FROM json_each(?3) \
                       WHERE NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((value >> 3) & 255)) \
                       ON CONFLICT (author_id, reader_id) DO UPDATE SET until = MAX(until, excluded.until)";
    exec(db, SQL, &[int(reader), int(until), text(&id_list(authors))]).await
}

/// The author's live followers a delivery reaches beside its pushed ones: the readers whose
/// marks on their edges to `author` hold at `now`, after `after` (in id order, `scan` of them),
/// whose edge still stands (and, with `unpushed_only`, is not pushed: a mark outlives a switch
/// to push by at most a lease, and a pushed reader already gets the post). One primary-key
/// range on the author's home, however many sockets are open elsewhere. Also returns where the
/// next page starts, if this one was full.
pub async fn marked_followers(
    db_of_author: UserDb<'_>,
    author: UserId,
    (after, now): (i64, i64),
    scan: usize,
    unpushed_only: bool,
) -> StoreResult<(Vec<UserId>, Option<i64>)> {
    let unpushed = if unpushed_only { "AND f.push = 0" } else { "" };
    let sql = format!(
        "SELECT m.reader_id AS id FROM live_edges m \
         WHERE m.author_id = ?1 AND m.reader_id > ?2 AND m.until > ?3 \
           AND EXISTS (SELECT 1 FROM followers f WHERE f.author_id = ?1 AND f.follower_id = m.reader_id {unpushed}) \
         ORDER BY m.reader_id LIMIT ?4"
    );
    let rows: Vec<IdRow> =
        all(db_of_author, &sql, &[int(author), int(after), int(now), int(scan as i64)]).await?;
    let next = rows.last().filter(|_| rows.len() == scan).map(|r| r.id);
    Ok((rows.into_iter().map(|r| UserId::from_trusted(r.id)).collect(), next))
}

/// Marks that lapsed (their reader's sockets closed, or their object stopped rewriting them).
/// A scan: the table holds only open sockets' marks (migration 0050 says why no index).
pub async fn purge_lapsed_marks(db: AnyDb<'_>, now: i64) -> StoreResult<()> {
    exec(db, "DELETE FROM live_edges WHERE until <= ?1", &[int(now)]).await
}
