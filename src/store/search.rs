//! The search index (`search_terms`, migration 0041; rules: `domain/search.rs`). Every row is
//! on the database of its term's stored shard: the caller groups rows by database and hands
//! each group here on its own handle. Rows travel as one JSON parameter, so a write of any
//! number of rows is one statement (D1 binds at most 100 parameters).

use serde::Deserialize;
use serde_json::json;

use super::{all, batch, int, stmt, text, AnyDb, StoreResult};
use crate::domain::search::Row;

fn rows_json(rows: &[Row]) -> String {
    let list: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| json!([r.term.shard().index(), r.term.key(), r.word, r.item, r.owner, r.name]))
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Adds `add` and removes `remove` (all on `db`) in one batch; repeating it changes nothing.
pub async fn write(db: AnyDb<'_>, add: &[Row], remove: &[Row]) -> StoreResult<()> {
    let mut statements = Vec::new();
    if !remove.is_empty() {
        let sql = "DELETE FROM search_terms WHERE (term, word, item) IN \
                   (SELECT json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]') \
                    FROM json_each(?1))";
        statements.push(stmt(db, sql, &[text(&rows_json(remove))])?);
    }
    if !add.is_empty() {
        let sql = "INSERT OR IGNORE INTO search_terms (shard, term, word, item, owner, name) \
                   SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
                     json_extract(value, '$[3]'), json_extract(value, '$[4]'), json_extract(value, '$[5]') \
                   FROM json_each(?1)";
        statements.push(stmt(db, sql, &[text(&rows_json(add))])?);
    }
    if statements.is_empty() {
        return Ok(());
    }
    batch(db, statements).await.map(drop)
}

/// A whole word found under a prefix bucket.
#[derive(Debug, Clone, Deserialize)]
pub struct WordHit {
    pub word: String,
    pub item: i64,
    pub name: String,
}

/// The first `limit` rows of `term` whose word is in `[low, high)`, in word order.
pub async fn prefix(
    db: AnyDb<'_>,
    term: &str,
    (low, high): (&str, &str),
    limit: usize,
) -> StoreResult<Vec<WordHit>> {
    let sql = "SELECT word, item, name FROM search_terms WHERE term = ?1 AND word >= ?2 AND word < ?3 \
               ORDER BY word, item LIMIT ?4";
    all(db, sql, &[text(term), text(low), text(high), int(limit as i64)]).await
}

/// A status found under every term asked.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ItemHit {
    pub item: i64,
    pub owner: i64,
}

/// Which statuses a read takes: ids strictly between `above` and `below`, by `owner` only
/// when it is not 0, the newest first (the oldest first with `oldest_first`: Mastodon's
/// `min_id`), at most `limit`.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub below: i64,
    pub above: i64,
    pub owner: i64,
    pub oldest_first: bool,
    pub limit: usize,
}

/// The statuses listed under every one of `terms` (all on `db`) in the range.
pub async fn items(db: AnyDb<'_>, terms: &[String], range: Range) -> StoreResult<Vec<ItemHit>> {
    let order = if range.oldest_first { "ASC" } else { "DESC" };
    let sql = format!(
        "SELECT item, MAX(owner) AS owner FROM search_terms \
         WHERE term IN (SELECT value FROM json_each(?1)) AND word = '' AND item < ?2 AND item > ?3 \
           AND (?4 = 0 OR owner = ?4) \
         GROUP BY item HAVING COUNT(*) = ?5 ORDER BY item {order} LIMIT ?6"
    );
    let terms_json = serde_json::Value::from(terms.to_vec()).to_string();
    let params = [
        text(&terms_json),
        int(range.below),
        int(range.above),
        int(range.owner),
        int(terms.len() as i64),
        int(range.limit as i64),
    ];
    all(db, &sql, &params).await
}
