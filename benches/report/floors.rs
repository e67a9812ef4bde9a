//! The floors a page, a like and a fan-out are made of (issue 38 item 3), measured on the stack
//! under test in the same run as what they floor: the hop into the Worker (`GET /v1/health`,
//! the report's floor), a bare Durable Object call, and bare D1 batches (`SELECT 1`) on one
//! database and on every database at once. The last three are timed inside the Worker by the
//! `floor_object` and `floor_d1` test hooks (`src/http/handlers/floors.rs`), so no HTTP hop is
//! in them: each figure is the median of a few series' means (a series: many calls one after
//! another in one request; the Worker's clock only moves between I/O, so one call alone would
//! read 0 or 1 ms).

use serde_json::{json, Value};

use crate::common::*;
use crate::placement::{shard_map, Pool};

/// Calls per series, and series per figure (the median is kept).
const SERIES: usize = 40;
const REPEATS: usize = 5;
/// Bare batches in series for the likes' comparison (a rate, so a longer run).
const RATE_SERIES: usize = 200;
/// Passes over the fan-out's readers for the object-call rate.
const RATE_ROUNDS: usize = 3;

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// One run of a floor hook: its answer.
fn hook(name: &str, body: &Value) -> Value {
    admin("POST", &format!("/v1/admin/test/{name}"), Some(body)).expect(200)
}

/// The calls (or batches) of a hook's answer and the milliseconds they took, as the median of
/// `REPEATS` runs' milliseconds per call.
fn ms_per_unit(name: &str, body: Value) -> f64 {
    let runs: Vec<f64> = (0..REPEATS)
        .map(|_| {
            let r = hook(name, &body);
            let units = num(&r["calls"]).max(num(&r["batches"]).max(1.0));
            num(&r["elapsed_ms"]) / units
        })
        .collect();
    pct(&runs, 50.0)
}

/// The physical database a user (and so each of its posts) lives on.
pub fn home_of(user: &User) -> usize {
    let (_, map) = shard_map();
    Pool::new(map, databases()).home(user)
}

/// The single-call floors around `reader`'s page: a bare call to its window object, a bare
/// batch on its home database, and one on every database at once (as a page's hydration
/// batches run, in the same waves). `hop_ms`: the stack's health p50.
pub fn single(reader: &User, hop_ms: f64) -> Value {
    let object = json!({ "reader_ids": [reader.id], "concurrency": 1, "rounds": SERIES });
    let one = json!({ "batches": SERIES, "database": home_of(reader) });
    json!({
        "hop_ms": hop_ms,
        "object_ms": ms_per_unit("floor_object", object),
        "d1_one_ms": ms_per_unit("floor_d1", one),
        "d1_all_ms": ms_per_unit("floor_d1", json!({ "batches": SERIES, "all": true })),
        "databases": databases(),
        "series": SERIES,
        "repeats": REPEATS,
    })
}

/// Bare one-statement batches one after another on database `db`, per second (the likes'
/// group commit is such a chain, one batch per group): the median of three runs.
pub fn batches_per_s(db: usize) -> f64 {
    let body = json!({ "batches": RATE_SERIES, "database": db });
    let runs: Vec<f64> =
        (0..3).map(|_| RATE_SERIES as f64 * 1000.0 / num(&hook("floor_d1", &body)["elapsed_ms"])).collect();
    pct(&runs, 50.0)
}

/// Bare calls to `readers`' window objects per second with the fan-out's concurrency in flight
/// (`FANOUT_CONCURRENCY`, the hook's default), and that concurrency: the median of three runs.
pub fn object_calls_per_s(readers: &[User]) -> (f64, u64) {
    let ids: Vec<&str> = readers.iter().map(|u| u.id.as_str()).collect();
    let body = json!({ "reader_ids": ids, "rounds": RATE_ROUNDS });
    let mut concurrency = 0;
    let runs: Vec<f64> = (0..3)
        .map(|_| {
            let r = hook("floor_object", &body);
            concurrency = r["concurrency"].as_u64().unwrap_or(0);
            num(&r["calls"]) * 1000.0 / num(&r["elapsed_ms"])
        })
        .collect();
    (pct(&runs, 50.0), concurrency)
}

/// Page 1's composite floor: the hop, its first wave (the window call beside the edges batch
/// on the reader's home, so the longer of a bare object call and a bare batch) and its
/// hydration (one batch on every database at once).
pub fn page1(f: &Value) -> f64 {
    num(&f["hop_ms"]) + num(&f["object_ms"]).max(num(&f["d1_one_ms"])) + num(&f["d1_all_ms"])
}

/// Page 50's (below the window: its cursor goes straight to the full pull after the reader's
/// edges, no window call): the hop, the edges batch, the pull on every database at once.
pub fn page50(f: &Value) -> f64 {
    num(&f["hop_ms"]) + num(&f["d1_one_ms"]) + num(&f["d1_all_ms"])
}

/// A like's: the hop, the token's revocation read on the liker's home, the post object's
/// call and its group commit (one batch), and the liker-side write: one object call and
/// three one-database batches in series.
pub fn like(f: &Value) -> f64 {
    num(&f["hop_ms"]) + num(&f["object_ms"]) + 3.0 * num(&f["d1_one_ms"])
}
