//! Pipeline counters and latency samples, for `GET /v1/admin/stats` and the cron pass.

use std::collections::BTreeMap;

use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{all, first, int, run, stmt, text, Count, Db};
use crate::error::ApiResult;

/// Adds `by` to a named counter; a statement so it joins the batch of the change it counts.
pub fn bump(db: &Db, name: &str, by: i64) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
        &[text(name), int(by)],
    )
}

/// Sets a named value (a time mark, not a counter).
pub fn set(db: &Db, name: &str, value: i64) -> ApiResult<D1PreparedStatement> {
    stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        &[text(name), int(value)],
    )
}

pub async fn value(db: &Db, name: &str) -> ApiResult<Option<i64>> {
    let row: Option<Count> = first(db, "SELECT value AS n FROM stats WHERE name = ?1", &[text(name)]).await?;
    Ok(row.map(|r| r.n))
}

#[derive(Deserialize)]
struct NamedValue {
    name: String,
    value: i64,
}

/// What the stats page is computed from.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub counters: BTreeMap<String, i64>,
    pub outbox_by_state: BTreeMap<String, i64>,
    /// Creation time of the oldest pending outbox event, if any.
    pub oldest_pending_at: Option<i64>,
    /// The latest publish-to-visible samples (ms), newest first.
    pub publish_to_visible_ms: Vec<i64>,
    /// Follow edges by mode: (push, pull, switching).
    pub edges: (i64, i64, i64),
    /// Pulled authors per reader who has any (a sample).
    pub pulled_per_reader: Vec<i64>,
}

pub async fn snapshot(db: &Db) -> ApiResult<Snapshot> {
    let named = |rows: Vec<NamedValue>| rows.into_iter().map(|c| (c.name, c.value)).collect();
    let counters = named(all(db, "SELECT name, value FROM stats ORDER BY name", &[]).await?);
    let outbox_by_state =
        named(all(db, "SELECT state AS name, COUNT(*) AS value FROM outbox GROUP BY state", &[]).await?);
    let oldest: Option<Count> =
        first(db, "SELECT MIN(created_at) AS n FROM outbox WHERE state = 'pending' HAVING COUNT(*) > 0", &[])
            .await?;
    let samples: Vec<Count> = all(
        db,
        "SELECT ms AS n FROM latency_samples WHERE kind = 'publish_to_visible' ORDER BY id DESC LIMIT 1000",
        &[],
    )
    .await?;
    let pulled: Vec<Count> =
        all(db, "SELECT COUNT(*) AS n FROM follows WHERE pull = 1 GROUP BY follower_id LIMIT 10000", &[])
            .await?;
    Ok(Snapshot {
        edges: super::policy::edge_modes(db).await?,
        pulled_per_reader: pulled.into_iter().map(|c| c.n).collect(),
        counters,
        outbox_by_state,
        oldest_pending_at: oldest.map(|o| o.n),
        publish_to_visible_ms: samples.into_iter().map(|s| s.n).collect(),
    })
}

/// Keeps the newest `keep` latency samples.
pub async fn trim_samples(db: &Db, keep: i64) -> ApiResult<usize> {
    run(
        db,
        "DELETE FROM latency_samples WHERE id <= (SELECT MAX(id) FROM latency_samples) - ?1",
        &[int(keep)],
    )
    .await
}
