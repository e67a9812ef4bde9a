//! Pipeline counters and latency samples, for `GET /v1/admin/stats` and the cron pass.

use std::collections::BTreeMap;

use crate::store::SqlStatement;
use serde::Deserialize;

use super::StoreResult;
use super::{all, all_sized, batch, first, int, run, stmt, text, AnyDb, ControlDb, Count, OnDb};

/// Adds `by` to a named counter; a statement so it joins the batch of the change it counts.
pub fn bump<'a>(db: impl OnDb<'a>, name: &str, by: i64) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
        &[text(name), int(by)],
    )
}

const MINUTE_MS: i64 = 60_000;

/// The minute (since the epoch) a time in ms falls in.
pub fn minute_of(at_ms: i64) -> i64 {
    at_ms.div_euclid(MINUTE_MS)
}

/// Adds `by` to a per-minute count (rolling figures); a statement, to join the batch of the
/// change it counts.
pub fn count_minute<'a>(db: impl OnDb<'a>, name: &str, at_ms: i64, by: i64) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "INSERT INTO minute_counts (name, minute, n) VALUES (?1, ?2, ?3) \
         ON CONFLICT (name, minute) DO UPDATE SET n = n + excluded.n",
        &[text(name), int(minute_of(at_ms)), int(by)],
    )
}

/// The per-minute counts of `[from_minute, to_minute)`, summed by name: one index range per
/// name, at most an hour's rows each.
pub async fn minute_sums<'a>(
    db: impl OnDb<'a>,
    from_minute: i64,
    to_minute: i64,
) -> StoreResult<BTreeMap<String, i64>> {
    let rows: Vec<NamedValue> = all(
        db,
        "SELECT name, SUM(n) AS value FROM minute_counts WHERE minute >= ?1 AND minute < ?2 GROUP BY name",
        &[int(from_minute), int(to_minute)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| (r.name, r.value)).collect())
}

/// Drops per-minute counts older than `before_minute`.
pub async fn trim_minutes<'a>(db: impl OnDb<'a>, before_minute: i64) -> StoreResult<usize> {
    run(db, "DELETE FROM minute_counts WHERE minute < ?1", &[int(before_minute)]).await
}

/// Sets a named value (a time mark, not a counter).
pub fn set<'a>(db: impl OnDb<'a>, name: &str, value: i64) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        &[text(name), int(value)],
    )
}

/// Raises a figure to `value` if it is below (a running maximum).
pub fn raise<'a>(db: impl OnDb<'a>, name: &str, value: i64) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = MAX(value, excluded.value)",
        &[text(name), int(value)],
    )
}

pub async fn value<'a>(db: impl OnDb<'a>, name: &str) -> StoreResult<Option<i64>> {
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
    /// The oldest pending event and the latest publish-to-visible samples (the backlog alert
    /// reads the same figures).
    pub lag: LagFigures,
    /// Follow edges by mode: (push, pull, switching).
    pub edges: (i64, i64, i64),
    /// Pulled authors per reader who has any (a sample).
    pub pulled_per_reader: Vec<i64>,
    /// Per-minute counts summed over the last hour (the current minute included).
    pub last_hour: BTreeMap<String, i64>,
}

impl Snapshot {
    /// Adds another database's figures: every database counts the rows it holds, in the same
    /// batches as the changes it counts (so counting stays exact), and the page is their sum
    /// (their most, for a `*_max` figure).
    pub fn merge(&mut self, other: Snapshot) {
        let add = |into: &mut BTreeMap<String, i64>, from: BTreeMap<String, i64>| {
            for (name, n) in from {
                *into.entry(name).or_default() += n;
            }
        };
        // A figure named `*_max` is the most of the databases', not their sum.
        let (maxima, counters): (BTreeMap<String, i64>, BTreeMap<String, i64>) =
            other.counters.into_iter().partition(|(name, _)| name.ends_with("_max"));
        for (name, n) in maxima {
            let kept = self.counters.entry(name).or_default();
            *kept = (*kept).max(n);
        }
        add(&mut self.counters, counters);
        add(&mut self.outbox_by_state, other.outbox_by_state);
        add(&mut self.last_hour, other.last_hour);
        self.lag.merge(other.lag);
        let (a, b) = (self.edges, other.edges);
        self.edges = (a.0 + b.0, a.1 + b.1, a.2 + b.2);
        self.pulled_per_reader.extend(other.pulled_per_reader);
    }

    /// A named counter (0 if never written).
    pub fn counter(&self, name: &str) -> i64 {
        count(&self.counters, name)
    }
}

/// A named count of a figures map (0 when absent).
pub fn count(counts: &BTreeMap<String, i64>, name: &str) -> i64 {
    counts.get(name).copied().unwrap_or(0)
}

pub async fn snapshot(db: AnyDb<'_>, now: i64) -> StoreResult<Snapshot> {
    let named = |rows: Vec<NamedValue>| rows.into_iter().map(|c| (c.name, c.value)).collect();
    let counters = named(all(db, "SELECT name, value FROM stats ORDER BY name", &[]).await?);
    // Only the unfinished states: an index range as long as the backlog, never the done rows.
    let outbox_by_state = named(
        all(
            db,
            "SELECT state AS name, COUNT(*) AS value FROM outbox WHERE state IN ('pending', 'dead', 'held') \
             GROUP BY state",
            &[],
        )
        .await?,
    );
    let lag = lag_figures(db).await?;
    // Per-reader counters kept by triggers (migration 0010): a bounded sample, not a GROUP BY.
    let pulled: Vec<Count> =
        all(db, "SELECT pulled_count AS n FROM users WHERE pulled_count > 0 LIMIT 10000", &[]).await?;
    let minute = minute_of(now);
    Ok(Snapshot {
        last_hour: minute_sums(db, minute - 59, minute + 1).await?,
        edges: edge_modes(db).await?,
        pulled_per_reader: pulled.into_iter().map(|c| c.n).collect(),
        counters,
        outbox_by_state,
        lag,
    })
}

/// Edges by mode, for the stats: (push, pull, switching), from the counters the author side's
/// triggers keep (migration 0010), not a count over the edges.
pub async fn edge_modes(db: AnyDb<'_>) -> StoreResult<(i64, i64, i64)> {
    let count = |name| value(db, name);
    let (push, pull, switching) =
        futures_util::future::join3(count("edges_mode_10"), count("edges_mode_01"), count("edges_mode_11"))
            .await;
    Ok((push?.unwrap_or(0), pull?.unwrap_or(0), switching?.unwrap_or(0)))
}

/// What wrangler recorded as applied on one database (its `d1_migrations` table): the newest
/// migration's file name and how many are applied.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Migrations {
    pub last: Option<String>,
    pub applied: i64,
    /// The database's size in bytes (indexes included), as D1 reports it after the read.
    #[serde(default)]
    pub size_bytes: Option<u64>,
}

/// One database's applied migrations: one statement. Wrangler numbers its rows in the order
/// it applied them, so the highest id is the newest.
pub async fn migrations(db: AnyDb<'_>) -> StoreResult<Migrations> {
    let (rows, size_bytes) = all_sized::<Migrations>(
        db,
        "SELECT (SELECT name FROM d1_migrations ORDER BY id DESC LIMIT 1) AS last, COUNT(*) AS applied \
         FROM d1_migrations",
        &[],
    )
    .await?;
    Ok(Migrations { size_bytes, ..rows.into_iter().next().unwrap_or_default() })
}

/// Keeps the newest `keep` latency samples.
pub async fn trim_samples<'a>(db: impl OnDb<'a>, keep: i64) -> StoreResult<usize> {
    run(
        db,
        "DELETE FROM latency_samples WHERE id <= (SELECT MAX(id) FROM latency_samples) - ?1",
        &[int(keep)],
    )
    .await
}

/// Delivery-lag figures (one database's, or merged): what the stats page shows of the backlog
/// and what the backlog alert (`domain/backlog.rs`) is computed from.
#[derive(Debug, Default)]
pub struct LagFigures {
    /// Creation time of the oldest pending outbox event, if any.
    pub oldest_pending_at: Option<i64>,
    /// The latest publish-to-visible samples, newest first per database.
    pub samples: Vec<LagSample>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct LagSample {
    pub ms: i64,
    pub created_at: i64,
}

impl LagFigures {
    pub fn merge(&mut self, other: LagFigures) {
        self.oldest_pending_at = match (self.oldest_pending_at, other.oldest_pending_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.samples.extend(other.samples);
    }
}

/// The oldest pending event (index `outbox_by_state`: a range over the pending rows only)
/// and the newest 1,000 samples (the head of the `latency_samples_by_kind` range).
pub async fn lag_figures(db: AnyDb<'_>) -> StoreResult<LagFigures> {
    let oldest: Option<Count> =
        first(db, "SELECT MIN(created_at) AS n FROM outbox WHERE state = 'pending' HAVING COUNT(*) > 0", &[])
            .await?;
    let samples: Vec<LagSample> = all(
        db,
        "SELECT ms, created_at FROM latency_samples WHERE kind = 'publish_to_visible' \
         ORDER BY id DESC LIMIT 1000",
        &[],
    )
    .await?;
    Ok(LagFigures { oldest_pending_at: oldest.map(|o| o.n), samples })
}

const BACKLOG_STATE: &str = "backlog_state";
const BACKLOG_SINCE: &str = "backlog_since";

/// The backlog state recorded on the control database: `(state code, since ms)`.
pub async fn backlog_mark(db: ControlDb<'_>) -> StoreResult<Option<(i64, i64)>> {
    #[derive(Deserialize)]
    struct Row {
        state: i64,
        since: i64,
    }
    let row: Option<Row> = first(
        db,
        "SELECT s.value AS state, t.value AS since FROM stats s JOIN stats t ON t.name = ?2 WHERE s.name = ?1",
        &[text(BACKLOG_STATE), text(BACKLOG_SINCE)],
    )
    .await?;
    Ok(row.map(|r| (r.state, r.since)))
}

/// Records a new backlog state and since when, only if the recorded state is still `was`
/// (`None`: nothing recorded): two concurrent readers that saw the same change write it once,
/// and a stale one never overwrites a newer mark. One batch (a transaction): both rows or none.
pub async fn set_backlog_mark(
    db: ControlDb<'_>,
    was: Option<i64>,
    state: i64,
    since: i64,
) -> StoreResult<()> {
    let was = was.unwrap_or(-1);
    let since = stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value \
         WHERE COALESCE((SELECT value FROM stats WHERE name = ?3), -1) = ?4",
        &[text(BACKLOG_SINCE), int(since), text(BACKLOG_STATE), int(was)],
    )?;
    let state = stmt(
        db,
        "INSERT INTO stats (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value \
         WHERE stats.value = ?3",
        &[text(BACKLOG_STATE), int(state), int(was)],
    )?;
    batch(db, vec![since, state]).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn databases_figures_add_up_but_a_maximum_is_the_most_of_them() {
        let part = |shares: i64, max: i64| Snapshot {
            counters: [
                ("reconcile_shares".to_string(), shares),
                ("reconcile_share_statements_max".to_string(), max),
            ]
            .into_iter()
            .collect(),
            ..Snapshot::default()
        };
        let mut all = Snapshot::default();
        for (shares, max) in [(3, 70), (2, 91), (4, 64)] {
            all.merge(part(shares, max));
        }
        assert_eq!(all.counter("reconcile_shares"), 9);
        assert_eq!(all.counter("reconcile_share_statements_max"), 91);
    }
}
