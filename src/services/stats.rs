//! The operator's figures (`GET /v1/admin/stats`), computed from counters kept as the system
//! runs and the latest latency samples.

use std::collections::BTreeMap;

use futures_util::future::{join, join_all};
use serde_json::{json, Value};

use super::reconcile::REPAIR_KINDS;
use crate::context::Ctx;
use crate::domain::feed::{percentile, Hidden};
use crate::domain::outbox::EventKind;
use crate::error::ApiResult;
use crate::store::likes::LIKE_COMMIT_SIZE_PREFIX;
use crate::store::shards::binding;
use crate::store::stats::{self, count, Migrations, Snapshot};

pub async fn pipeline_stats(ctx: &Ctx) -> ApiResult<Value> {
    // Everything this isolate's reads counted so far goes to D1 first (`services/tally.rs`).
    super::tally::settle(ctx).await;
    let snapshots = ctx.on_every_database(|db| stats::snapshot(db, ctx.now));
    let (snapshots, databases) = join(snapshots, databases(ctx)).await;
    let mut snapshot = Snapshot::default();
    for part in snapshots? {
        snapshot.merge(part);
    }
    for (name, by) in super::tally::unwritten() {
        *snapshot.counters.entry(name).or_default() += by;
    }
    let mut page = render(&snapshot, ctx.now);
    // From the figures just read for the page, not a second read of every database.
    page["backlog"] = json!(super::backlog::refresh_from(ctx, &snapshot.lag).await?);
    // Background work per database (`PROFILE_IO`), for the capacity bench.
    let profiled: BTreeMap<&String, &i64> =
        snapshot.counters.iter().filter(|(name, _)| name.starts_with("io_")).collect();
    page["profile_io"] = json!(profiled);
    page["shard_map"] = json!(ctx.shards.map().describe());
    page["d1_storage"] = d1_storage(&databases);
    page["databases"] = json!(databases);
    page["migrations_drift"] = json!(!drifting(&databases).is_empty());
    page["migrations_drifting"] = json!(drifting(&databases));
    Ok(page)
}

/// One physical database on the stats page.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct Database {
    index: usize,
    binding: String,
    /// Its logical shards as merged ranges (`0-63`); empty when it holds none.
    shards: String,
    /// `null` when its `d1_migrations` could not be read (never migrated, or unreachable).
    last_migration: Option<String>,
    migrations_applied: i64,
    /// Its size in bytes, indexes included (`null` when unreadable).
    size_bytes: Option<u64>,
}

/// Every database's shards and applied migrations, read from all of them at once.
async fn databases(ctx: &Ctx) -> Vec<Database> {
    let reads = ctx.shards.all().map(stats::migrations);
    let found = join_all(reads).await;
    found
        .into_iter()
        .enumerate()
        .map(|(index, migrations)| {
            // An unreadable table is shown as such (and as drift) rather than failing the page.
            let Migrations { last, applied, size_bytes } = migrations.unwrap_or_default();
            Database {
                index,
                binding: binding(index),
                shards: ctx.shards.describe_database(index),
                last_migration: last,
                migrations_applied: applied,
                size_bytes,
            }
        })
        .collect()
}

/// D1 stores at most this much per account, every database together (Workers Paid; raised by
/// request: docs/CAPACITY.md "Storage beyond 1 TB per account"). It binds long before any one
/// database's 10 GB, since sharding spreads the rows evenly.
const D1_ACCOUNT_LIMIT_BYTES: u64 = 1_000_000_000_000;

/// Every database's size summed, against the account's storage limit: the figure an operator
/// watches to ask for the increase in time.
fn d1_storage(databases: &[Database]) -> Value {
    let bytes: u64 = databases.iter().filter_map(|d| d.size_bytes).sum();
    json!({
        "bytes": bytes,
        "account_limit_bytes": D1_ACCOUNT_LIMIT_BYTES,
        "share_of_limit": bytes as f64 / D1_ACCOUNT_LIMIT_BYTES as f64,
    })
}

/// The databases whose newest migration is not that of the most migrated one (empty: no
/// drift). Every database gets every migration (`scripts/dev`, `scripts/deploy`, the test
/// harness), so a difference means one was missed or is mid-apply.
fn drifting(databases: &[Database]) -> Vec<&Database> {
    let newest = databases.iter().max_by_key(|d| d.migrations_applied).map(|d| &d.last_migration);
    databases.iter().filter(|d| Some(&d.last_migration) != newest).collect()
}

fn render(s: &Snapshot, now: i64) -> Value {
    let state = |name: &str| count(&s.outbox_by_state, name);
    let ms: Vec<i64> = s.lag.samples.iter().map(|sample| sample.ms).collect();
    let done: i64 = EventKind::ALL.iter().map(|k| s.counter(&format!("events_done_{}", k.as_str()))).sum();
    json!({
        "outbox": {
            "pending": state("pending"),
            "done": done,
            "dead": state("dead"),
            "held": state("held"),
            "oldest_pending_age_ms": s.lag.oldest_pending_at.map_or(0, |t| (now - t).max(0)),
        },
        "fanout_health": fanout_health(&s.last_hour),
        "feed_quality": feed_quality(s),
        "deliveries": s.counter("deliveries"),
        "fanout": {
            "chunks": s.counter("fanout_chunks"),
            "posts_done": s.counter("events_done_post"),
            "removals_done": s.counter("events_done_remove_post"),
            "author_cleanups_done": s.counter("events_done_remove_author"),
            "backfills_done": s.counter("events_done_backfill"),
            "dead_letters": s.counter("dead_letters"),
        },
        "publish_to_visible_ms": {
            "samples": ms.len(),
            "p50": percentile(&ms, 50.0),
            "p99": percentile(&ms, 99.0),
            "max": ms.iter().max(),
        },
        "feed_filtered": by_reason(|reason| json!(s.counter(&format!("filtered_{reason}")))),
        "likes": likes(s),
        "reconcile": reconcile(s),
        "hybrid": hybrid(s),
        "counters": s.counters,
    })
}

/// Seed 004's headline figure: of the posts published in the last hour, the share whose
/// fan-out finished within 10 s and within 60 s (a post still in flight counts as not yet).
fn fanout_health(last_hour: &BTreeMap<String, i64>) -> Value {
    let get = |name: &str| count(last_hour, name);
    let published = get("published");
    json!({
        "window_minutes": 60,
        "published": published,
        "finished": get("fanout_done"),
        "within_10s": mean(get("fanout_done_10s"), published),
        "within_60s": mean(get("fanout_done_60s"), published),
    })
}

/// What readers get: pages cut short by filtering (fewer items than asked while more
/// existed: the scan budget ran out on hidden candidates), hidden candidates by reason, and
/// candidates offered twice at merge (window and pull, or window and hot-range cache).
fn feed_quality(s: &Snapshot) -> Value {
    let (pages, candidates) = (s.counter("feed_pages"), s.counter("feed_candidates"));
    let filtered = by_reason(|reason| json!(mean(s.counter(&format!("filtered_{reason}")), candidates)));
    json!({
        "pages": pages,
        "short_pages": s.counter("feed_pages_short"),
        "short_page_rate": mean(s.counter("feed_pages_short"), pages),
        "candidates": candidates,
        "filtered_rate_by_reason": filtered,
        "duplicate_candidates": s.counter("feed_duplicates"),
        "duplicate_rate": mean(s.counter("feed_duplicates"), candidates),
    })
}

/// One figure per reason a feed candidate is hidden (`filtered_{reason}` counters).
fn by_reason(figure: impl Fn(&str) -> Value) -> Value {
    Value::Object(Hidden::ALL.iter().map(|h| (h.as_str().to_string(), figure(h.as_str()))).collect())
}

/// Reconciliation: running totals of what passes found and repaired, by kind, and the last
/// pass's own figures.
fn reconcile(s: &Snapshot) -> Value {
    let by = |prefix: &str| -> serde_json::Map<String, Value> {
        REPAIR_KINDS.iter().map(|k| (k.to_string(), json!(s.counter(&format!("{prefix}{k}"))))).collect()
    };
    json!({
        "runs": s.counter("reconcile_runs"),
        // Database shares run (one per database per pass), and the most D1 statements one made.
        "shares": s.counter("reconcile_shares"),
        "share_statements_max": s.counter("reconcile_share_statements_max"),
        "outbox_resent": s.counter("reconcile_resent"),
        "counts_repaired": s.counter("reconcile_counts_repaired"),
        "repaired_by_kind": by("reconcile_repaired_"),
        "last_pass": by("reconcile_last_"),
    })
}

fn likes(s: &Snapshot) -> Value {
    let figures = LikeCommits::of(&s.counters);
    json!({
        "group_commits": figures.commits,
        "requests_committed": figures.requests,
        "mean_group_size": mean(figures.requests, figures.commits),
        "groups_by_size": {
            "1": figures.buckets[0],
            "2-4": figures.buckets[1],
            "5-16": figures.buckets[2],
            "17+": figures.buckets[3],
        },
    })
}

/// The like group commits' figures, summed from the per-size counters (one per commit,
/// `store/likes.rs`).
#[derive(Debug, Default, PartialEq)]
struct LikeCommits {
    commits: i64,
    requests: i64,
    /// Sizes 1, 2-4, 5-16, 17 and up.
    buckets: [i64; 4],
}

impl LikeCommits {
    fn of(counters: &BTreeMap<String, i64>) -> Self {
        let mut figures = Self::default();
        let sized = counters.iter().filter_map(|(name, &commits)| {
            let size = name.strip_prefix(LIKE_COMMIT_SIZE_PREFIX)?.parse::<i64>().ok()?;
            Some((size, commits))
        });
        for (size, commits) in sized {
            figures.commits += commits;
            figures.requests += size * commits;
            let bucket = match size {
                ..=1 => 0,
                2..=4 => 1,
                5..=16 => 2,
                _ => 3,
            };
            figures.buckets[bucket] += commits;
        }
        figures
    }
}

fn hybrid(s: &Snapshot) -> Value {
    json!({
        "edges": { "push": s.edges.0, "pull": s.edges.1, "switching": s.edges.2 },
        "deliveries_written": s.counter("deliveries"),
        "deliveries_avoided_by_pull": s.counter("deliveries_avoided"),
        "pulled_authors_per_reader": {
            "readers": s.pulled_per_reader.len(),
            "p50": percentile(&s.pulled_per_reader, 50.0),
            "p99": percentile(&s.pulled_per_reader, 99.0),
        },
        "hot_range_cache": hot_cache(s.counter("hot_cache_hits"), s.counter("hot_cache_misses")),
    })
}

fn mean(total: i64, count: i64) -> Option<f64> {
    (count > 0).then(|| total as f64 / count as f64)
}

/// Hits and misses of the hot-range cache (`services/hot.rs`); the rate is `null` before the
/// first lookup.
fn hot_cache(hits: i64, misses: i64) -> Value {
    let lookups = hits + misses;
    let rate = mean(hits, lookups);
    json!({ "hits": hits, "misses": misses, "hit_rate": rate })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::stats::{LagFigures, LagSample};

    #[test]
    fn drift_names_the_databases_behind_the_most_migrated_one() {
        let db = |index: usize, last: Option<&str>, applied: i64| Database {
            index,
            binding: binding(index),
            shards: String::new(),
            last_migration: last.map(str::to_string),
            migrations_applied: applied,
            size_bytes: None,
        };
        let same = [db(0, Some("0009_x.sql"), 9), db(1, Some("0009_x.sql"), 9)];
        assert!(drifting(&same).is_empty());
        let apart = [db(0, Some("0009_x.sql"), 9), db(1, Some("0008_y.sql"), 8), db(2, None, 0)];
        let behind: Vec<usize> = drifting(&apart).iter().map(|d| d.index).collect();
        assert_eq!(behind, vec![1, 2]);
        assert!(drifting(&[]).is_empty());
    }

    #[test]
    fn like_commits_are_summed_from_one_counter_a_size() {
        let counters: BTreeMap<String, i64> = [
            ("like_commit_size_1", 5),
            ("like_commit_size_3", 2),
            ("like_commit_size_20", 1),
            ("likes_x", 9),
        ]
        .into_iter()
        .map(|(name, n)| (name.to_string(), n))
        .collect();
        let figures = LikeCommits::of(&counters);
        assert_eq!(figures, LikeCommits { commits: 8, requests: 5 + 6 + 20, buckets: [5, 2, 0, 1] });
    }

    #[test]
    fn renders_counters_states_and_percentiles() {
        let mut s = Snapshot::default();
        s.counters.insert("deliveries".into(), 7);
        s.outbox_by_state.insert("pending".into(), 2);
        let sample = |ms| LagSample { ms, created_at: 0 };
        s.lag =
            LagFigures { oldest_pending_at: Some(1_000), samples: vec![sample(30), sample(10), sample(20)] };
        let v = render(&s, 1_500);
        assert_eq!(v["deliveries"], 7);
        assert_eq!(v["outbox"]["pending"], 2);
        assert_eq!(v["outbox"]["dead"], 0);
        assert_eq!(v["outbox"]["oldest_pending_age_ms"], 500);
        assert_eq!(v["publish_to_visible_ms"]["p50"], 20);
        assert_eq!(v["publish_to_visible_ms"]["max"], 30);
        assert_eq!(v["hybrid"]["hot_range_cache"]["hit_rate"], Value::Null, "no lookups yet");
        assert_eq!(hot_cache(3, 1)["hit_rate"], 0.75);
    }
}
