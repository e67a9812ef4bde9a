//! The hot-author replicas' measured costs (`--measure-replicas`, also part of `--measure`):
//! one author on `DB_1` with `FOLLOWERS` followers on `DB_2`/`DB_3`, a threshold at that count
//! and `R` replicas, on a fresh push stack of 4 databases. Every figure is a request's
//! `Server-Timing` (a replica's own D1 work comes back to the page in the object-D1 header, so a
//! lease renewal or a rebuild is counted on the page that caused it), before and after the
//! author's promotion (a reconciliation pass: no local stack fires the cron by itself).
//! - a page: object calls with and without replicas (their difference: replica requests per
//!   page per followed hot author), and the author's database's work on pages read right after
//!   another (within the lease: the design says none);
//! - a lease renewal: a page read once the lease ran out (`REPLICA_LEASE_SECONDS` short here);
//! - a rebuild (as the counts refresh: the same reload): a page read after the replica was
//!   wiped (test hook), the author holding more than the replica's `HOT_RANGE` posts;
//! - a publish: its work on the author's database and its object calls, before and after.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::measure::drained;
use crate::common::*;
use crate::placement::{shard_map, Pool};
use edgefeed_capacity::model::{ReplicaCosts, Work};
use edgefeed_capacity::timing::{timing_of, Timing};

const DATABASES: usize = 4;
const HOME: usize = 1;
const OTHERS: [usize; 2] = [2, 3];
const FOLLOWERS: usize = 8;
/// One replica per 2 followers: 4 replicas, so a publish's replica writes are told from its
/// other object calls.
const FOLLOWERS_PER_REPLICA: usize = 2;
const LEASE_SECONDS: u64 = 3;
/// The author's posts: more than a replica holds (`HOT_RANGE` 200), so a rebuild reads a full
/// range.
const AUTHOR_POSTS: usize = 230;
const SAMPLES: usize = 6;
const DEADLINE: Duration = Duration::from_secs(120);

/// The measuring stack: push, profiling and test hooks on (the hooks' statements land on the
/// control database, never on the author's), a short lease, the counts refresh out of the way
/// (the rebuild is measured by wiping a replica), the directory re-read at once after the
/// promotion (the hook forgets this isolate's copy).
fn start() -> Server {
    let vars = [
        ("FANOUT_MODE", "push".to_string()),
        ("RATE_LIMITS", "false".to_string()),
        ("TEST_HOOKS", "true".to_string()),
        ("PROFILE_IO", "true".to_string()),
        ("FEED_WINDOW", "800".to_string()),
        ("HOT_REPLICA_FOLLOWERS", FOLLOWERS.to_string()),
        ("HOT_FOLLOWERS_PER_REPLICA", FOLLOWERS_PER_REPLICA.to_string()),
        // As many digests as the replicas this bench was written for: a publish's writes are
        // still told from its other object calls.
        ("HOT_DIGESTS", (FOLLOWERS / FOLLOWERS_PER_REPLICA).to_string()),
        ("REPLICA_LEASE_SECONDS", LEASE_SECONDS.to_string()),
        ("REPLICA_COUNTS_SECONDS", "3600".to_string()),
    ];
    let vars = vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let server =
        start_server_on(ServerOptions { label: "capacity-replicas".into(), vars, port: None }, DATABASES);
    talk_to(&server);
    server
}

fn hook(author: &User, body: Value) -> Value {
    let mut body = body;
    body["author_id"] = json!(author.id);
    admin("POST", "/v1/admin/test/replica_fault", Some(&body)).expect(200)
}

fn page(reader: &User) -> Timing {
    let r = reader.get("/v1/feed?limit=20");
    assert_eq!(r.status, 200, "{}", r.body);
    timing_of(r.server_timing.as_deref().unwrap_or(""))
}

fn on_author(t: &Timing) -> Work {
    t.per_db[HOME].0
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn mean_work(v: &[Work]) -> Work {
    Work {
        statements: mean(v.iter().map(|w| w.statements)),
        rows_read: mean(v.iter().map(|w| w.rows_read)),
        rows_written: mean(v.iter().map(|w| w.rows_written)),
    }
}

fn publishes(author: &User, label: &str) -> Vec<Timing> {
    (0..SAMPLES)
        .map(|i| {
            let r =
                author.post("/v1/posts", json!({ "body": format!("{label} {i}"), "visibility": "public" }));
            assert_eq!(r.status, 201, "{}", r.body);
            drained();
            timing_of(r.server_timing.as_deref().unwrap_or(""))
        })
        .collect()
}

/// The author (with its older posts imported before anyone follows) and its followers, each
/// with a window.
fn setup(pool: &mut Pool) -> (User, Vec<User>) {
    let author = Arc::new(pool.users_on(&[HOME]).remove(0));
    let now = now_secs();
    let a = author.clone();
    parallel(8, AUTHOR_POSTS, move |i| {
        let at = edgefeed::domain::time::format_rfc3339((now - 600 - (i as i64) * 30) * 1000);
        import_post(&a, &format!("older post {i}"), "public", &at);
    });
    let homes: Vec<usize> = (0..FOLLOWERS).map(|i| OTHERS[i % 2]).collect();
    let followers = pool.users_on(&homes);
    for f in &followers {
        f.follow(&author);
        activate(f);
    }
    drained();
    ((*author).clone(), followers)
}

/// Pages of every follower, `rounds` each.
fn pages(followers: &[User], rounds: usize) -> Vec<Timing> {
    (0..rounds).flat_map(|_| followers.iter().map(page).collect::<Vec<_>>()).collect()
}

/// Each replica some follower reads, with one such follower (readers are spread by a hash of
/// their id, so with few followers a replica may have none).
fn readers_by_replica<'a>(author: &User, followers: &'a [User]) -> Vec<(u64, &'a User)> {
    let mut out: Vec<(u64, &User)> = Vec::new();
    for f in followers {
        let Some(i) = hook(author, json!({ "reader_id": f.id }))["reader_replica"].as_u64() else { continue };
        if !out.iter().any(|(j, _)| *j == i) {
            out.push((i, f));
        }
    }
    out
}

/// Promotes the author and waits until every follower's page reads its replica (the first read
/// of each replica builds it). Returns the replica count and those first reads.
fn promote(author: &User, followers: &[User]) -> (u64, Vec<Timing>) {
    let replicas = poll("the author promoted", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        hook(author, json!({}))["replicas"].as_u64()
    });
    let firsts = followers
        .iter()
        .map(|f| {
            let first = page(f);
            poll("the follower's page served by its replica", DEADLINE, || {
                (on_author(&page(f)).statements == 0.0).then_some(())
            });
            first
        })
        .collect();
    (replicas, firsts)
}

/// Pages read right after another page of the same reader (its replica just answered, so within
/// its lease): their work on the author's database.
fn within_lease(followers: &[User]) -> Vec<Timing> {
    followers
        .iter()
        .flat_map(|f| {
            page(f);
            [page(f), page(f)]
        })
        .collect()
}

/// A page read once the reader's replica's lease ran out: polled (one page every 300 ms) until
/// a page renews it, i.e. puts statements on the author's database.
fn renewals(followers: &[User]) -> Vec<Work> {
    (0..SAMPLES.min(followers.len()))
        .map(|i| {
            poll("a lease renewal", Duration::from_secs(4 * LEASE_SECONDS + 10), || {
                std::thread::sleep(Duration::from_millis(150));
                let w = on_author(&page(&followers[i]));
                (w.statements > 0.0).then_some(w)
            })
        })
        .collect()
}

/// A page read right after its replica was wiped: the replica rebuilds from D1.
fn rebuilds(author: &User, followers: &[User]) -> Vec<Work> {
    let on = readers_by_replica(author, followers);
    assert!(!on.is_empty(), "a follower on some replica");
    (0..SAMPLES)
        .map(|k| {
            let (i, reader) = on[k % on.len()];
            page(reader);
            hook(author, json!({ "replica": i, "fault": "wipe" }));
            on_author(&page(reader))
        })
        .collect()
}

/// Every sample of one run.
struct Measured {
    replicas: u64,
    cold_pages: Vec<Timing>,
    cold_publish: Vec<Timing>,
    firsts: Vec<Timing>,
    warm_pages: Vec<Timing>,
    renewed: Vec<Work>,
    rebuilt: Vec<Work>,
    hot_publish: Vec<Timing>,
}

fn calls(t: &[Timing]) -> f64 {
    pct(&t.iter().map(|t| t.do_calls).collect::<Vec<_>>(), 50.0)
}

fn author_work(t: &[Timing]) -> Work {
    mean_work(&t.iter().map(on_author).collect::<Vec<_>>())
}

fn costs(m: &Measured) -> ReplicaCosts {
    let do_ms = |t: &[Timing]| mean(t.iter().map(|t| t.do_ms));
    let read_calls = calls(&m.warm_pages) - calls(&m.cold_pages);
    let publish_calls =
        mean(m.hot_publish.iter().map(|t| t.do_calls)) - mean(m.cold_publish.iter().map(|t| t.do_calls));
    ReplicaCosts {
        measured: true,
        read_calls,
        do_ms: ((do_ms(&m.warm_pages) - do_ms(&m.cold_pages)) / read_calls.max(1.0)).max(0.0),
        // In memory only (objects/replica.rs writes no storage): as built, not a counter.
        read_rows: 0.0,
        write_rows: 0.0,
        lease: mean_work(&m.renewed),
        refresh: mean_work(&m.rebuilt),
        page_author_db: author_work(&m.warm_pages),
        publish_author_db: author_work(&m.hot_publish).plus(author_work(&m.cold_publish).scale(-1.0)),
        write_calls: publish_calls / m.replicas as f64,
        ..ReplicaCosts::default()
    }
}

fn raw(m: &Measured) -> Value {
    let max_warm = m.warm_pages.iter().map(|t| on_author(t).statements).fold(0.0, f64::max);
    json!({
        "followers": FOLLOWERS,
        "replicas": m.replicas,
        "lease_seconds": LEASE_SECONDS,
        "author_posts": AUTHOR_POSTS,
        "page_do_calls_p50": { "before": calls(&m.cold_pages), "after": calls(&m.warm_pages) },
        "page_author_db_before": author_work(&m.cold_pages),
        "page_author_db_within_lease": author_work(&m.warm_pages),
        "page_author_db_within_lease_max": max_warm,
        "first_read_after_promotion": author_work(&m.firsts),
        "lease_renewals": m.renewed,
        "rebuilds": m.rebuilt,
        "publish_author_db": { "before": author_work(&m.cold_publish), "after": author_work(&m.hot_publish) },
        "publish_do_calls": {
            "before": mean(m.cold_publish.iter().map(|t| t.do_calls)),
            "after": mean(m.hot_publish.iter().map(|t| t.do_calls)),
        },
        "samples": {
            "pages_before": m.cold_pages.len(),
            "pages_within_lease": m.warm_pages.len(),
            "publishes": SAMPLES,
        },
    })
}

/// Measures on its own stack; returns the replica costs and the raw figures.
pub fn run() -> (ReplicaCosts, Value) {
    let server = start();
    let (_, map) = shard_map();
    let mut pool = Pool::new(map, DATABASES);
    let (author, followers) = setup(&mut pool);
    assert!(hook(&author, json!({}))["replicas"].is_null(), "not promoted before the pass");
    let cold_pages = pages(&followers, 2);
    let cold_publish = publishes(&author, "before promotion");
    let (replicas, firsts) = promote(&author, &followers);
    let warm_pages = within_lease(&followers);
    let renewed = renewals(&followers);
    let rebuilt = rebuilds(&author, &followers);
    let hot_publish = publishes(&author, "from a hot author");
    server.kill();
    let m =
        Measured { replicas, cold_pages, cold_publish, firsts, warm_pages, renewed, rebuilt, hot_publish };
    (costs(&m), raw(&m))
}
