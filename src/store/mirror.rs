//! The two sides of each follow and block edge (migration 0010): what one user's side holds
//! about another user, read and written on that side alone. The rule deciding the writes is
//! `domain/graph.rs`; the event that applies it is `services/graph.rs`.
//!
//! Every function takes the database of the one side it touches (`db_of_user`: the home shard
//! of `user`), and no statement reads the other user's rows.

use serde::{Deserialize, Serialize};

use super::shards::Shards;
use super::StoreResult;
use super::{all, batch, first, int, notifications, stmt, text, AnyDb, UserDb};
use crate::domain::graph::{SideFacts, SideWrites};
use crate::domain::ids::UserId;
use crate::domain::notifications::Notice;

/// The follower-side row of `user`'s follow of the other, with what its author-side copy carries:
/// the edge's time and mode flags, and the follower's read facts (their own users row).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct EdgeCopy {
    pub created_at: i64,
    push: i64,
    pull: i64,
    read_rate: f64,
    last_read_at: Option<i64>,
    reader_active: i64,
}

/// What one user's side says about the pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SideRead {
    pub facts: SideFacts,
    /// The user's follow of the other, when it exists.
    pub edge: Option<EdgeCopy>,
}

#[derive(Deserialize)]
struct SideRow {
    follows: i64,
    blocks: i64,
    created_at: Option<i64>,
    push: Option<i64>,
    pull: Option<i64>,
    read_rate: f64,
    last_read_at: Option<i64>,
    reader_active: i64,
}

/// `user`'s authoritative facts about `other` (their follow and block of them), and the follow's
/// copy for the other side, in one statement on `user`'s side.
pub async fn read_side(db_of_user: UserDb<'_>, user: UserId, other: UserId) -> StoreResult<SideRead> {
    let row: Option<SideRow> = first(
        db_of_user,
        "SELECT f.follower_id IS NOT NULL AS follows, f.created_at, f.push, f.pull, \
           EXISTS (SELECT 1 FROM blocks WHERE blocker_id = ?1 AND blocked_id = ?2) AS blocks, \
           u.read_rate, u.last_read_at, u.feed_active_at IS NOT NULL AS reader_active \
         FROM users u LEFT JOIN follows f ON f.follower_id = u.id AND f.author_id = ?2 WHERE u.id = ?1",
        &[int(user), int(other)],
    )
    .await?;
    let Some(row) = row else {
        return Ok(SideRead { facts: SideFacts::default(), edge: None });
    };
    let edge = match (row.follows != 0, row.created_at) {
        (true, Some(created_at)) => Some(EdgeCopy {
            created_at,
            push: row.push.unwrap_or(1),
            pull: row.pull.unwrap_or(0),
            read_rate: row.read_rate,
            last_read_at: row.last_read_at,
            reader_active: row.reader_active,
        }),
        _ => None,
    };
    Ok(SideRead { facts: SideFacts { follows: edge.is_some(), blocks: row.blocks != 0 }, edge })
}

/// Brings `user`'s side to `writes` in one batch: the `blocked_by` mirror, the drop of the
/// user's own follow when a block stands (conditional on the side's own block facts, just
/// written), and the `followers` mirror of the other's follow (`other_edge`, read on their
/// side). An existing mirror keeps its mode flags (the policy moves them, in a safe order:
/// `services/policy.rs`) unless it is left over from an earlier incarnation of the edge (another
/// `created_at`); the reader's facts are refreshed.
pub async fn write_side(
    db_of_user: UserDb<'_>,
    user: UserId,
    other: UserId,
    writes: SideWrites,
    other_edge: Option<EdgeCopy>,
    now: i64,
) -> StoreResult<Option<Notice>> {
    let db = db_of_user;
    let pair = [int(user), int(other)];
    let mut statements = vec![if writes.blocked_by {
        stmt(
            db,
            "INSERT OR IGNORE INTO blocked_by (blocked_id, blocker_id, created_at) VALUES (?1, ?2, ?3)",
            &[int(user), int(other), int(now)],
        )?
    } else {
        stmt(db, "DELETE FROM blocked_by WHERE blocked_id = ?1 AND blocker_id = ?2", &pair)?
    }];
    if writes.drop_follow {
        statements.push(stmt(
            db,
            "DELETE FROM follows WHERE follower_id = ?1 AND author_id = ?2 \
               AND (EXISTS (SELECT 1 FROM blocks WHERE blocker_id = ?1 AND blocked_id = ?2) \
                 OR EXISTS (SELECT 1 FROM blocked_by WHERE blocked_id = ?1 AND blocker_id = ?2))",
            &pair,
        )?);
    }
    // The follow notification goes with the mirror: made before the upsert, which it reads
    // to tell a new follow from one already held (`store/notifications.rs::on_follow`).
    let mut made_at = None;
    match (writes.follower, other_edge) {
        (true, Some(edge)) => {
            made_at = Some(statements.len());
            statements.push(notifications::on_follow(db, user, other, edge.created_at, now)?);
            statements.push(upsert_follower(db, user, other, &edge)?);
        }
        _ => {
            statements.push(stmt(
                db,
                "DELETE FROM followers WHERE author_id = ?1 AND follower_id = ?2",
                &pair,
            )?);
            statements.push(notifications::off_follow(db, user, other)?);
        }
    }
    let results = batch(db, statements).await?;
    Ok(made_at.and_then(|i| notifications::notice(results.get(i), now)))
}

fn upsert_follower(
    db: UserDb<'_>,
    author: UserId,
    follower: UserId,
    e: &EdgeCopy,
) -> StoreResult<crate::store::SqlStatement> {
    stmt(
        db,
        "INSERT INTO followers (author_id, follower_id, created_at, push, pull, read_rate, last_read_at, reader_active) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
         ON CONFLICT (author_id, follower_id) DO UPDATE SET \
           push = CASE WHEN created_at <> excluded.created_at THEN excluded.push ELSE push END, \
           pull = CASE WHEN created_at <> excluded.created_at THEN excluded.pull ELSE pull END, \
           created_at = excluded.created_at, read_rate = excluded.read_rate, \
           last_read_at = excluded.last_read_at, reader_active = MAX(reader_active, excluded.reader_active)",
        &[
            int(author),
            int(follower),
            int(e.created_at),
            int(e.push),
            int(e.pull),
            e.read_rate.into(),
            e.last_read_at.map_or(wasm_bindgen::JsValue::NULL, int),
            int(e.reader_active),
        ],
    )
}

/// A pair of user ids, as the reconciliation pages edges.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub struct Pair {
    pub a: i64,
    pub b: i64,
}

/// Which authoritative table a reconciliation slice walks, and where its counterpart is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeTable {
    /// `follows (a = follower, b = author)`; counterpart `followers` on b's side.
    Follows,
    /// `followers (a = author, b = follower)`; counterpart `follows` on b's side.
    Followers,
    /// `blocks (a = blocker, b = blocked)`; counterpart `blocked_by` on b's side.
    Blocks,
    /// `blocked_by (a = blocked, b = blocker)`; counterpart `blocks` on b's side.
    BlockedBy,
}

impl EdgeTable {
    pub const ALL: [EdgeTable; 4] = [Self::Follows, Self::Followers, Self::Blocks, Self::BlockedBy];

    /// (table, column a, column b) of this table, and of the counterpart (keyed the other way).
    fn columns(
        self,
    ) -> ((&'static str, &'static str, &'static str), (&'static str, &'static str, &'static str)) {
        let follows = ("follows", "follower_id", "author_id");
        let followers = ("followers", "author_id", "follower_id");
        let blocks = ("blocks", "blocker_id", "blocked_id");
        let blocked_by = ("blocked_by", "blocked_id", "blocker_id");
        match self {
            Self::Follows => (follows, followers),
            Self::Followers => (followers, follows),
            Self::Blocks => (blocks, blocked_by),
            Self::BlockedBy => (blocked_by, blocks),
        }
    }

    pub fn name(self) -> &'static str {
        self.columns().0 .0
    }
}

/// The next `limit` rows of one table after `after` in its primary-key order, on one side
/// (each shard walks its own rows).
pub async fn edge_slice(
    db_of_side: AnyDb<'_>,
    table: EdgeTable,
    after: Pair,
    limit: usize,
) -> StoreResult<Vec<Pair>> {
    let ((name, a, b), _) = table.columns();
    let sql = format!(
        "SELECT {a} AS a, {b} AS b FROM {name} WHERE ({a}, {b}) > (?1, ?2) ORDER BY {a}, {b} LIMIT ?3"
    );
    all(db_of_side, &sql, &[int(after.a), int(after.b), int(limit as i64)]).await
}

/// Of `pairs` (rows of `table`, each `(a, b)`), those whose counterpart is missing on the b
/// side: primary-key probes on b's home, one statement per database, all sent at once.
pub async fn missing_counterparts(
    shards: &Shards,
    table: EdgeTable,
    pairs: &[Pair],
) -> StoreResult<Vec<Pair>> {
    let by_home = shards.users_by_database(pairs.iter().map(|p| UserId::from_trusted(p.b)));
    let groups = by_home
        .into_iter()
        .map(|(db, bs)| (db, pairs.iter().filter(|p| bs.iter().any(|b| b.get() == p.b)).copied().collect()))
        .collect();
    let found = shards
        .across(groups, |db, group: Vec<Pair>| async move { missing_on(db, table, &group).await })
        .await?;
    Ok(found.into_iter().flatten().collect())
}

async fn missing_on(db_of_b: AnyDb<'_>, table: EdgeTable, pairs: &[Pair]) -> StoreResult<Vec<Pair>> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let (_, (name, cb, ca)) = table.columns();
    let list =
        serde_json::to_string(&pairs.iter().map(|p| [p.a, p.b]).collect::<Vec<_>>()).unwrap_or_default();
    let sql = format!(
        "SELECT a, b FROM (SELECT json_extract(value, '$[0]') AS a, json_extract(value, '$[1]') AS b \
           FROM json_each(?1)) WHERE NOT EXISTS (SELECT 1 FROM {name} WHERE {cb} = b AND {ca} = a)"
    );
    all(db_of_b, &sql, &[text(&list)]).await
}

/// Test hook: deletes one mirror row behind the events' back (`followers(user, other)` or
/// `blocked_by(user, other)` on `user`'s side), as a lost write would. The counter trigger
/// moves with it, as it would with any lost mirror.
pub async fn delete_mirror(
    db_of_user: UserDb<'_>,
    user: UserId,
    other: UserId,
    blocked_by: bool,
) -> StoreResult<usize> {
    let sql = if blocked_by {
        "DELETE FROM blocked_by WHERE blocked_id = ?1 AND blocker_id = ?2"
    } else {
        "DELETE FROM followers WHERE author_id = ?1 AND follower_id = ?2"
    };
    let results = batch(db_of_user, vec![stmt(db_of_user, sql, &[int(user), int(other)])?]).await?;
    Ok(super::changed_rows(results.first()))
}

/// What one user's side holds about another, for the tests: their own facts and the mirrors.
#[derive(Debug, Serialize, Deserialize)]
pub struct SideView {
    pub follows: i64,
    pub blocks: i64,
    /// The other follows this user (author-side mirror).
    pub follower: i64,
    /// The other blocks this user (mirror).
    pub blocked_by: i64,
    pub follower_push: Option<i64>,
    pub follower_pull: Option<i64>,
    pub follower_read_rate: Option<f64>,
}

pub async fn side_view(db_of_user: UserDb<'_>, user: UserId, other: UserId) -> StoreResult<Option<SideView>> {
    first(
        db_of_user,
        "SELECT EXISTS (SELECT 1 FROM follows WHERE follower_id = ?1 AND author_id = ?2) AS follows, \
           EXISTS (SELECT 1 FROM blocks WHERE blocker_id = ?1 AND blocked_id = ?2) AS blocks, \
           EXISTS (SELECT 1 FROM followers WHERE author_id = ?1 AND follower_id = ?2) AS follower, \
           EXISTS (SELECT 1 FROM blocked_by WHERE blocked_id = ?1 AND blocker_id = ?2) AS blocked_by, \
           (SELECT push FROM followers WHERE author_id = ?1 AND follower_id = ?2) AS follower_push, \
           (SELECT pull FROM followers WHERE author_id = ?1 AND follower_id = ?2) AS follower_pull, \
           (SELECT read_rate FROM followers WHERE author_id = ?1 AND follower_id = ?2) AS follower_read_rate",
        &[int(user), int(other)],
    )
    .await
}
