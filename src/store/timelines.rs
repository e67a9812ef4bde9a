//! The timeline index (`timeline_index`, migration 0039) and the stream listeners beside it
//! (`stream_listeners`, read by the key's stream relay once per flush), on a key's database (`domain::tags::IndexKey`). Entries are ids only:
//! a read loads the posts where they live and checks each for the viewer now.

use futures_util::future::join_all;
use serde::Deserialize;

use super::handles::IndexDb;
use super::shards::Shards;
use crate::store::SqlStatement;

use super::{all, batch, changed_rows, exec, first, int, stmt, text, StoreResult};
use crate::domain::ids::{PostId, UserId};
use crate::domain::snowflake::SNOWFLAKE_RANDOM_BITS;
use crate::domain::tags::IndexKey;
use crate::domain::timeline_head::HeadKey;

/// A post's entry, as written under each of its keys (and as read back: [`IndexRow`]).
pub use crate::domain::timeline_head::HeadEntry as Entry;

/// What an index write found under one key: whether it changed the key's rows (who listens is
/// the key's stream relay's business, read once per flush: [`listeners`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyWrite {
    pub changed: bool,
}

/// Adds the entry under each of `keys` (all on `db`); a repeated add changes nothing.
pub async fn add(db: IndexDb<'_>, keys: &[&IndexKey], entry: &Entry) -> StoreResult<Vec<KeyWrite>> {
    let sql = "INSERT OR IGNORE INTO timeline_index (shard, key, post_id, author_id, flags) \
               VALUES (?1, ?2, ?3, ?4, ?5)";
    let writes = keys
        .iter()
        .map(|key| {
            let params = [
                int(key.shard().index() as i64),
                text(key.as_str()),
                int(entry.post_id),
                int(entry.author_id),
                int(entry.flags),
            ];
            stmt(db, sql, &params)
        })
        .collect::<StoreResult<Vec<_>>>()?;
    write_keys(db, keys, writes).await
}

/// Removes the post's entry under each of `keys`.
pub async fn remove(db: IndexDb<'_>, keys: &[&IndexKey], post: PostId) -> StoreResult<Vec<KeyWrite>> {
    let sql = "DELETE FROM timeline_index WHERE key = ?1 AND post_id = ?2";
    let writes = keys
        .iter()
        .map(|key| stmt(db, sql, &[text(key.as_str()), int(post)]))
        .collect::<StoreResult<Vec<_>>>()?;
    write_keys(db, keys, writes).await
}

#[derive(Deserialize)]
struct Listener {
    user_id: UserId,
}

/// One batch: a write per key (no listener read: the relays read them once per flush).
async fn write_keys(
    db: IndexDb<'_>,
    keys: &[&IndexKey],
    statements: Vec<SqlStatement>,
) -> StoreResult<Vec<KeyWrite>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let results = batch(db, statements).await?;
    Ok((0..keys.len()).map(|i| KeyWrite { changed: changed_rows(results.get(i)) > 0 }).collect())
}

/// Who listens to a key's stream now (their leases not lapsed): a stream relay's flush.
pub async fn listeners(db: IndexDb<'_>, key: &IndexKey, now: i64) -> StoreResult<Vec<UserId>> {
    let sql = "SELECT user_id FROM stream_listeners WHERE key = ?1 AND expires_at > ?2";
    let rows: Vec<Listener> = all(db, sql, &[text(key.as_str()), int(now)]).await?;
    Ok(rows.into_iter().map(|l| l.user_id).collect())
}

/// One index row read back (the head replicas hold the same rows).
pub use crate::domain::timeline_head::{HeadEntry as IndexRow, Range};

pub async fn page(db: IndexDb<'_>, key: &IndexKey, range: Range) -> StoreResult<Vec<IndexRow>> {
    let order = if range.oldest_first { "ASC" } else { "DESC" };
    let sql = format!(
        "SELECT post_id, author_id, flags FROM timeline_index \
         WHERE key = ?1 AND post_id < ?2 AND post_id > ?3 AND (flags & ?4) = 0 AND (flags & ?5) = ?5 \
         ORDER BY post_id {order} LIMIT ?6"
    );
    let params = [
        text(key.as_str()),
        int(range.below),
        int(range.above),
        int(range.without),
        int(range.with),
        int(range.limit as i64),
    ];
    all(db, &sql, &params).await
}

/// A timeline head's range read from its keys' databases side by side (a public head's
/// stripes, a tag's one key), unmerged; whether one of them filled the range.
pub async fn head_page(shards: &Shards, key: &HeadKey, range: Range) -> StoreResult<(Vec<IndexRow>, bool)> {
    let keys = key.index_keys();
    let mut rows = Vec::new();
    let mut filled = false;
    for read in join_all(keys.iter().map(|k| page(shards.index(k), k, range))).await {
        let read = read?;
        filled |= read.len() == range.limit;
        rows.extend(read);
    }
    Ok((rows, filled))
}

/// A tag's uses per day since `since_ms`: (day number since the epoch, posts, accounts).
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct DayUses {
    pub day: i64,
    pub uses: i64,
    pub accounts: i64,
}

pub async fn uses_by_day(db: IndexDb<'_>, key: &IndexKey, since_ms: i64) -> StoreResult<Vec<DayUses>> {
    let sql = format!(
        "SELECT (post_id >> {SNOWFLAKE_RANDOM_BITS}) / 86400000 AS day, COUNT(*) AS uses, \
           COUNT(DISTINCT author_id) AS accounts \
         FROM timeline_index WHERE key = ?1 AND post_id >= ?2 GROUP BY day ORDER BY day DESC"
    );
    all(db, &sql, &[text(key.as_str()), int(since_ms << SNOWFLAKE_RANDOM_BITS)]).await
}

/// How many of an author's posts a key holds, and the newest one.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct AuthorUses {
    pub uses: i64,
    pub newest: Option<i64>,
}

pub async fn author_uses(db: IndexDb<'_>, key: &IndexKey, author: UserId) -> StoreResult<AuthorUses> {
    let sql = "SELECT COUNT(*) AS uses, MAX(post_id) AS newest FROM timeline_index \
               WHERE key = ?1 AND author_id = ?2";
    let found: Option<AuthorUses> = first(db, sql, &[text(key.as_str()), int(author)]).await?;
    Ok(found.unwrap_or(AuthorUses { uses: 0, newest: None }))
}

/// Starts or renews `user`'s lease on a key's stream until `until`.
pub async fn listen(db: IndexDb<'_>, key: &IndexKey, user: UserId, until: i64) -> StoreResult<()> {
    let sql = "INSERT INTO stream_listeners (shard, key, user_id, expires_at) VALUES (?1, ?2, ?3, ?4) \
               ON CONFLICT (key, user_id) DO UPDATE SET expires_at = MAX(expires_at, excluded.expires_at)";
    let shard = key.shard().index() as i64;
    exec(db, sql, &[int(shard), text(key.as_str()), int(user), int(until)]).await
}

/// Ends `user`'s lease on a key's stream.
pub async fn unlisten(db: IndexDb<'_>, key: &IndexKey, user: UserId) -> StoreResult<()> {
    let sql = "DELETE FROM stream_listeners WHERE key = ?1 AND user_id = ?2";
    exec(db, sql, &[text(key.as_str()), int(user)]).await
}

/// Adds or removes `user` among a tag key's followers; idempotent.
pub async fn set_tag_follower(db: IndexDb<'_>, key: &IndexKey, user: UserId, on: bool) -> StoreResult<()> {
    if on {
        let sql = "INSERT OR IGNORE INTO tag_followers (shard, key, user_id) VALUES (?1, ?2, ?3)";
        exec(db, sql, &[int(key.shard().index() as i64), text(key.as_str()), int(user)]).await
    } else {
        let sql = "DELETE FROM tag_followers WHERE key = ?1 AND user_id = ?2";
        exec(db, sql, &[text(key.as_str()), int(user)]).await
    }
}

/// Up to `limit` of a tag key's followers after `after` (by id).
pub async fn tag_followers(
    db: IndexDb<'_>,
    key: &IndexKey,
    after: i64,
    limit: usize,
) -> StoreResult<Vec<UserId>> {
    let sql = "SELECT user_id FROM tag_followers WHERE key = ?1 AND user_id > ?2 ORDER BY user_id LIMIT ?3";
    let rows: Vec<Listener> = all(db, sql, &[text(key.as_str()), int(after), int(limit as i64)]).await?;
    Ok(rows.into_iter().map(|r| r.user_id).collect())
}
