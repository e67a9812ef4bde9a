//! Discovery rankings (`discovery`, migration 0039): each database ranks its own rows (the
//! last day's tags and statuses, its accounts) and replaces its share of the control
//! database's table, which every discovery read takes in one statement.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::handles::{AnyDb, ControlDb};
use super::{all, int, stmt, text, StoreResult};
use crate::domain::snowflake::SNOWFLAKE_RANDOM_BITS;

/// What a ranking ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    /// Tags by accounts using them in the last day, then by uses.
    Tags,
    /// Public posts of the last day by favourites and boosts.
    Statuses,
    /// Accounts by followers (suggestions).
    Popular,
    /// Accounts by their newest public post (the directory's `active`).
    Active,
    /// The newest accounts (the directory's `new`).
    Newest,
}

impl Ranking {
    pub const ALL: [Ranking; 5] = [Self::Tags, Self::Statuses, Self::Popular, Self::Active, Self::Newest];

    fn kind(self) -> &'static str {
        match self {
            Self::Tags => "tag",
            Self::Statuses => "status",
            Self::Popular => "popular",
            Self::Active => "active",
            Self::Newest => "newest",
        }
    }

    /// The ranking query on one database (`?1`: the first id of the last day, `?2`: how many).
    fn sql(self) -> String {
        match self {
            Self::Tags => "SELECT 0 AS item, substr(key, 5) AS name, COUNT(DISTINCT author_id) AS score, \
                             COUNT(*) AS extra FROM timeline_index \
                           WHERE post_id >= ?1 AND key LIKE 'tag:%' \
                           GROUP BY key ORDER BY score DESC, extra DESC LIMIT ?2"
                .into(),
            Self::Statuses => {
                "SELECT id AS item, '' AS name, like_count + reblog_count AS score, id AS extra \
                               FROM posts WHERE id >= ?1 AND visibility = 'public' AND unlisted = 0 AND reblog_of IS NULL \
                                 AND deleted_at IS NULL AND taken_down_at IS NULL \
                                 AND like_count + reblog_count > 0 \
                               ORDER BY score DESC, id DESC LIMIT ?2"
                    .into()
            }
            Self::Popular => {
                "SELECT id AS item, '' AS name, followers_count AS score, id AS extra FROM users \
                              WHERE suspended_at IS NULL AND ?1 >= 0 \
                              ORDER BY followers_count DESC, id DESC LIMIT ?2"
                    .into()
            }
            Self::Active => {
                "SELECT p.author_id AS item, '' AS name, MAX(p.id) AS score, 0 AS extra FROM posts p \
                             WHERE p.id >= ?1 AND p.visibility = 'public' AND p.unlisted = 0 AND p.deleted_at IS NULL \
                             GROUP BY p.author_id ORDER BY score DESC LIMIT ?2"
                    .into()
            }
            Self::Newest => "SELECT id AS item, '' AS name, id AS score, 0 AS extra FROM users \
                             WHERE suspended_at IS NULL AND ?1 >= 0 ORDER BY id DESC LIMIT ?2"
                .into(),
        }
    }
}

/// One ranked row.
#[derive(Debug, Clone, Deserialize)]
pub struct Ranked {
    pub item: i64,
    pub name: String,
    pub score: i64,
    pub extra: i64,
}

/// A database's top `limit` of a ranking, counting posts from `since_ms` on.
pub async fn rank(db: AnyDb<'_>, ranking: Ranking, since_ms: i64, limit: usize) -> StoreResult<Vec<Ranked>> {
    all(db, &ranking.sql(), &[int(since_ms << SNOWFLAKE_RANDOM_BITS), int(limit as i64)]).await
}

/// The two statements that replace database `db_index`'s rows of every ranking with `rows`
/// (one insert of them all, from JSON: a share's statements stay few).
pub fn replace(
    control: ControlDb<'_>,
    db_index: usize,
    rows: &[(Ranking, Ranked)],
    now: i64,
) -> StoreResult<Vec<SqlStatement>> {
    let json: Vec<serde_json::Value> = rows
        .iter()
        .map(|(ranking, r)| serde_json::json!([ranking.kind(), r.item, r.name, r.score, r.extra]))
        .collect();
    // Each kind named, so the delete seeks the primary key (kind, db, ...) once a kind: by `db`
    // alone it scanned every database's rows, a read that grew with P per database's refresh
    // (P squared on the control database; found by the capacity simulation).
    let kinds: Vec<String> = Ranking::ALL.iter().map(|r| format!("'{}'", r.kind())).collect();
    let delete = stmt(
        control,
        &format!("DELETE FROM discovery WHERE kind IN ({}) AND db = ?1", kinds.join(", ")),
        &[int(db_index as i64)],
    )?;
    let insert = stmt(
        control,
        "INSERT OR REPLACE INTO discovery (kind, db, item, name, score, extra, computed_at) \
         SELECT value ->> 0, ?1, value ->> 1, value ->> 2, value ->> 3, value ->> 4, ?2 FROM json_each(?3)",
        &[int(db_index as i64), int(now), text(&serde_json::Value::Array(json).to_string())],
    )?;
    Ok(vec![delete, insert])
}

/// A ranking across every database, best first, from `offset`, at most `limit`.
pub async fn ranked(
    control: ControlDb<'_>,
    ranking: Ranking,
    offset: usize,
    limit: usize,
) -> StoreResult<Vec<Ranked>> {
    let sql = "SELECT item, name, score, extra FROM discovery WHERE kind = ?1 \
               ORDER BY score DESC, extra DESC, db, item LIMIT ?2 OFFSET ?3";
    all(control, sql, &[text(ranking.kind()), int(limit as i64), int(offset as i64)]).await
}
