//! The SQL of moving a logical shard between physical databases (`services/shard_move.rs`).
//! Every statement is built from the catalog's constants (`domain/placement.rs`) and bound
//! parameters; rows travel between databases as one JSON array bound as a string and read back
//! with `json_each`, so a page is one statement whatever its size (D1 caps bound parameters at
//! 100 per statement; the catalog's page sizes keep the string far below its size cap).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use wasm_bindgen::JsValue;

use super::StoreResult;
use super::{all, batch, changed_rows, first, int, run, stmt, text, AnyDb};
use crate::domain::placement::{value_columns, KeyValue, Phase, Table};
use crate::domain::snowflake::LogicalShard;

/// A row as read from the source: column -> value.
pub type Row = Map<String, Value>;

fn bind(value: &KeyValue) -> JsValue {
    match value {
        KeyValue::Int(n) => int(*n),
        KeyValue::Text(s) => text(s),
    }
}

fn list(columns: &[&str]) -> String {
    columns.join(", ")
}

/// `json_extract(j.value, '$.col')` for each column: the row's values with their JSON types.
fn extracted(columns: &[&str]) -> String {
    columns.iter().map(|c| format!("json_extract(j.value, '$.{c}')")).collect::<Vec<_>>().join(", ")
}

/// `AND (k1, k2) > (?n, ?n+1)` (or `<=`) for a key, pushing its values onto `params`.
fn key_bound(key: &[&str], op: &str, values: &[KeyValue], params: &mut Vec<JsValue>) -> String {
    if values.is_empty() {
        return String::new();
    }
    let slots: Vec<String> = values
        .iter()
        .map(|v| {
            params.push(bind(v));
            format!("?{}", params.len())
        })
        .collect();
    format!(" AND ({}) {op} ({})", list(key), slots.join(", "))
}

/// `shard = ?n`, the shard's rows of a table, pushing the shard onto `params`.
fn shard_rows(table: &Table, params: &mut Vec<JsValue>, shard: LogicalShard) -> String {
    params.push(int(shard.index() as i64));
    format!("{} = ?{}", table.shard.sql(""), params.len())
}

/// One page of the shard's rows on the source after `after`, in key order.
pub async fn read_page(
    db: AnyDb<'_>,
    table: &Table,
    shard: LogicalShard,
    after: &[KeyValue],
) -> StoreResult<Vec<Row>> {
    let mut params = Vec::new();
    let rows = shard_rows(table, &mut params, shard);
    let bound = key_bound(table.key, ">", after, &mut params);
    let sql = format!(
        "SELECT {} FROM {} WHERE {rows}{bound} ORDER BY {} LIMIT {}",
        list(table.columns),
        table.name,
        list(table.key),
        table.page
    );
    all(db, &sql, &params).await
}

/// What writing one page on the target did.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct PageWrite {
    pub copied: usize,
    /// Rows of the shard on the target, in the page's key range, that the source no longer has.
    pub deleted: usize,
}

/// A page to write: the source's rows of `(after, last]` (`last` `None`: to the end).
pub struct Page<'a> {
    pub shard: LogicalShard,
    pub after: &'a [KeyValue],
    pub last: Option<&'a [KeyValue]>,
    pub rows: &'a [Row],
}

/// Makes the target's rows of the page's key range equal to the source's, in one atomic
/// batch: first deletes the target's rows of the range the page does not have (deleted on the
/// source since an earlier pass), then upserts the page by key (an upsert, not `INSERT OR
/// REPLACE`: a replace would fire the counter triggers' insert side again for a row that is
/// already there). A [`Phase::Counters`] page only overwrites the counters of rows the target
/// has.
pub async fn write_page(db: AnyDb<'_>, table: &Table, page: &Page<'_>) -> StoreResult<PageWrite> {
    let rows = serde_json::to_string(page.rows).map_err(|e| super::StoreError::Internal(e.to_string()))?;
    if table.phase == Phase::Counters {
        return Ok(PageWrite { copied: run(db, &counters(table), &[text(&rows)]).await?, deleted: 0 });
    }
    let statements = vec![delete_extras(db, table, page, &rows)?, upsert(db, table, &rows)?];
    let results = batch(db, statements).await?;
    Ok(PageWrite { deleted: changed_rows(results.first()), copied: changed_rows(results.last()) })
}

fn delete_extras(
    db: AnyDb<'_>,
    table: &Table,
    page: &Page<'_>,
    rows: &str,
) -> StoreResult<crate::store::SqlStatement> {
    let mut params = Vec::new();
    let of_shard = shard_rows(table, &mut params, page.shard);
    let mut range = key_bound(table.key, ">", page.after, &mut params);
    if let Some(last) = page.last {
        range.push_str(&key_bound(table.key, "<=", last, &mut params));
    }
    params.push(text(rows));
    let sql = format!(
        "DELETE FROM {} WHERE {of_shard}{range} AND ({}) NOT IN (SELECT {} FROM json_each(?{}) j)",
        table.name,
        list(table.key),
        extracted(table.key),
        params.len()
    );
    stmt(db, &sql, &params)
}

fn upsert(db: AnyDb<'_>, table: &Table, rows: &str) -> StoreResult<crate::store::SqlStatement> {
    let set: Vec<String> = value_columns(table).map(|c| format!("{c} = excluded.{c}")).collect();
    let sql = format!(
        "INSERT INTO {} ({}) SELECT {} FROM json_each(?1) j WHERE true ON CONFLICT ({}) DO UPDATE SET {}",
        table.name,
        list(table.columns),
        extracted(table.columns),
        list(table.key),
        set.join(", ")
    );
    stmt(db, &sql, &[text(rows)])
}

/// `UPDATE ... FROM` the page: the counter columns of the rows the target has.
fn counters(table: &Table) -> String {
    let set: Vec<String> = value_columns(table).map(|c| format!("{c} = j.{c}")).collect();
    let columns: Vec<String> =
        table.columns.iter().map(|c| format!("json_extract(value, '$.{c}') AS {c}")).collect();
    let on: Vec<String> = table.key.iter().map(|k| format!("{}.{k} = j.{k}", table.name)).collect();
    format!(
        "UPDATE {} SET {} FROM (SELECT {} FROM json_each(?1)) AS j WHERE {}",
        table.name,
        set.join(", "),
        columns.join(", "),
        on.join(" AND ")
    )
}

/// Handle directory rows without their shard (claimed before migration 0012).
pub async fn unplaced_handles(db: AnyDb<'_>, limit: usize) -> StoreResult<Vec<String>> {
    #[derive(Deserialize)]
    struct Row {
        handle: String,
    }
    let rows: Vec<Row> =
        all(db, "SELECT handle FROM handles WHERE shard IS NULL LIMIT ?1", &[int(limit as i64)]).await?;
    Ok(rows.into_iter().map(|r| r.handle).collect())
}

/// Stores each handle's shard (computed in Rust: `domain/shard.rs::shard_of_handle`).
pub async fn place_handles(db: AnyDb<'_>, placed: &[(String, LogicalShard)]) -> StoreResult<usize> {
    let pairs: Vec<Value> = placed.iter().map(|(h, s)| serde_json::json!([h, s.index()])).collect();
    let pairs = Value::Array(pairs).to_string();
    let sql = "UPDATE handles SET shard = (SELECT json_extract(j.value, '$[1]') FROM json_each(?1) j \
                 WHERE json_extract(j.value, '$[0]') = handles.handle) \
               WHERE shard IS NULL AND handle IN (SELECT json_extract(j.value, '$[0]') FROM json_each(?1) j)";
    run(db, sql, &[text(&pairs)]).await
}

/// The freeze of a shard on this database: `None`, `frozen` or (only inside a purge batch)
/// `purging`.
pub async fn freeze_mode(db: AnyDb<'_>, shard: LogicalShard) -> StoreResult<Option<String>> {
    #[derive(Deserialize)]
    struct Row {
        mode: String,
    }
    let row: Option<Row> =
        first(db, "SELECT mode FROM frozen_shards WHERE shard = ?1", &[int(shard.index() as i64)]).await?;
    Ok(row.map(|r| r.mode))
}

/// Freezes the shard here unless an unplaced handle would then be unplaceable (atomic with
/// that check); false when it was refused for that (or was frozen already: check first).
pub async fn freeze(db: AnyDb<'_>, shard: LogicalShard, now: i64) -> StoreResult<bool> {
    let sql = "INSERT INTO frozen_shards (shard, mode, since) SELECT ?1, 'frozen', ?2 \
               WHERE NOT EXISTS (SELECT 1 FROM handles WHERE shard IS NULL) ON CONFLICT (shard) DO NOTHING";
    Ok(run(db, sql, &[int(shard.index() as i64), int(now)]).await? > 0)
}

pub async fn unfreeze(db: AnyDb<'_>, shard: LogicalShard) -> StoreResult<usize> {
    run(db, "DELETE FROM frozen_shards WHERE shard = ?1", &[int(shard.index() as i64)]).await
}

/// Deletes one page of the shard's rows of a table here, inside the purge's own window of the
/// freeze (set `purging`, delete, set `frozen` again, one transaction); returns how many.
pub async fn purge_page(db: AnyDb<'_>, table: &Table, shard: LogicalShard) -> StoreResult<usize> {
    let s = int(shard.index() as i64);
    let mut params = Vec::new();
    let rows = shard_rows(table, &mut params, shard);
    let key = list(table.key);
    let delete = format!(
        "DELETE FROM {t} WHERE ({key}) IN (SELECT {key} FROM {t} WHERE {rows} ORDER BY {key} LIMIT {n})",
        t = table.name,
        n = table.page
    );
    let mode = "UPDATE frozen_shards SET mode = ?2 WHERE shard = ?1";
    let results = batch(
        db,
        vec![
            stmt(db, mode, &[s.clone(), text("purging")])?,
            stmt(db, &delete, &params)?,
            stmt(db, mode, &[s, text("frozen")])?,
        ],
    )
    .await?;
    Ok(changed_rows(results.get(1)))
}

/// A cheap fingerprint of the shard's rows of one table on one side: how many, a sum over
/// their keys, and a sum over every column's value (integers as they are, reals to 1e-6,
/// texts by length and first character), each position weighted, all modulo a prime so the
/// sums stay integers. Equal on both sides: the same rows, as far as a sum can tell.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub rows: i64,
    pub keys: i64,
    pub values: i64,
}

fn weighted(columns: &[&str]) -> String {
    let term = |(i, c): (usize, &&str)| {
        format!(
            "{w} * (CASE typeof({c}) WHEN 'integer' THEN {c} % 1000000007 \
             WHEN 'real' THEN CAST(round({c} * 1000000) AS INTEGER) % 1000000007 \
             WHEN 'text' THEN length({c}) * 7 + unicode({c}) ELSE 0 END)",
            w = i + 1
        )
    };
    columns.iter().enumerate().map(term).collect::<Vec<_>>().join(" + ")
}

/// The fingerprint of a table's rows of the shard here.
pub async fn fingerprint(db: AnyDb<'_>, table: &Table, shard: LogicalShard) -> StoreResult<Fingerprint> {
    let mut params = Vec::new();
    let rows = shard_rows(table, &mut params, shard);
    let sql = format!(
        "SELECT COUNT(*) AS \"rows\", COALESCE(SUM(({}) % 1000000007), 0) AS \"keys\", \
         COALESCE(SUM(({}) % 1000000007), 0) AS \"values\" FROM {} WHERE {rows}",
        weighted(table.key),
        weighted(table.columns),
        table.name
    );
    Ok(first(db, &sql, &params).await?.unwrap_or_default())
}
