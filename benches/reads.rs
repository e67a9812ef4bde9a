//! Feed reads in the conditions the seeds name, each beside its reference in the same run:
//! - a wide reader (1,000 followed authors, 40% of the edges pulled, some of those hot) against
//!   a narrow one (20 authors, the same mix): page 1 p50, target <= 1.5x (seed 000 §2);
//! - degraded: the narrow reader while its window object fails (the D1 pull alone, seed 002
//!   §5.4): page 1 p50 and 16-client throughput, as multiples of the `/v1/health` floor;
//! - an hour-old backlog: the wide reader while 200 of its pushed authors' fan-out has been
//!   stalled for an hour (the in-flight horizon reaches an hour back): page 1 p50 against the
//!   same reader without it, to show the merge is bounded by the page, not the backlog.
//!
//! One hybrid-mode `wrangler dev` (production window sizes, `HOT_AUTHOR_FOLLOWERS=5` so a few
//! authors of this small graph are hot). Writes `bench/READS.md` and `bench/reads.json`, whose
//! summary `bench/REPORT.md` embeds. Run: `./scripts/bench reads`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Instant;

use common::*;
use serde_json::{json, Value};

const WIDE: usize = 1_000;
const NARROW: usize = 20;
/// Share of each reader's edges forced to pull (the rest are pushed).
const PULLED_SHARE: f64 = 0.4;
/// Authors given extra followers, so that pulled edges to them are served by the hot-range cache.
const HOT_AUTHORS: usize = 10;
const HOT_MIN_FOLLOWERS: usize = 5;
const STALLED_AUTHORS: usize = 200;
const SAMPLES: usize = 60;
const THROUGHPUT_REQUESTS: usize = 320;
const THREADS: usize = 8;

fn edge(reader: &User, author: &User, mode: &str) {
    let body = json!({ "reader_id": reader.id, "author_id": author.id, "mode": mode });
    admin("POST", "/v1/admin/test/edge", Some(&body)).expect(200);
}

/// Page 1 (20 items) once: latency, D1 statements, and the server's D1 milliseconds.
fn page1(reader: &User) -> (f64, f64, f64) {
    let t = Instant::now();
    let r = reader.get("/v1/feed?limit=20");
    let elapsed = ms(t.elapsed());
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["items"].as_array().map_or(0, Vec::len), 20, "a full page: {}", r.body);
    let statements = f64::from(r.timing("statements"));
    let header = r.server_timing.clone().unwrap_or_default();
    let d1 = header
        .split(", ")
        .find(|p| p.starts_with("d1;"))
        .and_then(|p| p.rsplit("dur=").next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN);
    (elapsed, statements, d1)
}

/// `SAMPLES` page-1 reads of each reader, interleaved so both see the same machine.
fn interleaved(a: &User, b: &User) -> (Value, Value) {
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        page1(a);
        page1(b);
    }
    for _ in 0..SAMPLES {
        sa.push(page1(a));
        sb.push(page1(b));
    }
    (summary(&sa), summary(&sb))
}

fn summary(samples: &[(f64, f64, f64)]) -> Value {
    let col = |f: fn(&(f64, f64, f64)) -> f64| samples.iter().map(f).collect::<Vec<_>>();
    json!({
        "p50_ms": pct(&col(|s| s.0), 50.0),
        "p99_ms": pct(&col(|s| s.0), 99.0),
        "statements_p50": pct(&col(|s| s.1), 50.0),
        "d1_ms_p50": pct(&col(|s| s.2), 50.0),
    })
}

fn health_floor() -> (f64, f64) {
    let samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            assert_eq!(call("GET", "/v1/health", None, None).status, 200);
            ms(t.elapsed())
        })
        .collect();
    let started = Instant::now();
    parallel(16, THROUGHPUT_REQUESTS, |_| assert_eq!(call("GET", "/v1/health", None, None).status, 200));
    (pct(&samples, 50.0), THROUGHPUT_REQUESTS as f64 / started.elapsed().as_secs_f64())
}

fn throughput(reader: &User) -> f64 {
    let reader = reader.clone();
    let started = Instant::now();
    parallel(16, THROUGHPUT_REQUESTS, move |_| assert_eq!(reader.get("/v1/feed?limit=20").status, 200));
    THROUGHPUT_REQUESTS as f64 / started.elapsed().as_secs_f64()
}

/// Authors with a few imported posts each (spread over the last days), and a reader following
/// the first `n` of them with the edge mix; its window is built at the end.
fn follow_with_mix(reader: &User, authors: &Arc<Vec<User>>, n: usize) {
    let (r, a) = (reader.clone(), authors.clone());
    parallel(THREADS, n, move |i| r.follow(&a[i]));
    let (r, a) = (reader.clone(), authors.clone());
    let pulled = (n as f64 * PULLED_SHARE) as usize;
    // The hot authors are among the pulled ones (a cache serves only pulled edges).
    parallel(THREADS, n, move |i| edge(&r, &a[i], if i < pulled { "pull" } else { "push" }));
    reader.get("/v1/feed?limit=20").expect(200);
}

fn setup() -> (User, User, Arc<Vec<User>>) {
    let authors: Vec<User> = parallel(THREADS, WIDE, |_| register("rd_author"));
    let authors = Arc::new(authors);
    let now = now_secs();
    let a = authors.clone();
    eprintln!("[reads] importing posts");
    parallel(THREADS, WIDE * 3, move |i| {
        let at = edgefeed::domain::time::format_rfc3339((now - 120 - (i as i64) * 53) * 1000);
        import_post(&a[i % WIDE], &format!("post {i}"), "public", &at);
    });
    eprintln!("[reads] hot authors' followers");
    let a = authors.clone();
    parallel(THREADS, HOT_AUTHORS * HOT_MIN_FOLLOWERS, move |i| {
        register("rd_fan").follow(&a[i / HOT_MIN_FOLLOWERS]);
    });
    let (wide, narrow) = (register("rd_wide"), register("rd_narrow"));
    eprintln!("[reads] follows and edge modes");
    follow_with_mix(&wide, &authors, WIDE);
    follow_with_mix(&narrow, &authors, NARROW);
    (wide, narrow, authors)
}

/// Stalls the fan-out of `STALLED_AUTHORS` pushed authors of the wide reader, each publishing
/// one post that is then aged an hour: an hour-old backlog the horizon must cover.
fn hour_old_backlog(authors: &Arc<Vec<User>>) {
    let first_pushed = (WIDE as f64 * PULLED_SHARE) as usize;
    let a = authors.clone();
    parallel(THREADS, STALLED_AUTHORS, move |i| {
        let author = &a[first_pushed + i];
        let fault = json!({ "name": format!("stall_fanout:{}", author.id), "times": 1000 });
        admin("POST", "/v1/admin/test/fault", Some(&fault)).expect(200);
        let post = author.publish("stalled for an hour", "public");
        let age = json!({ "post_id": id_of(&post), "seconds": 3600 });
        admin("POST", "/v1/admin/test/age_post", Some(&age)).expect(200);
    });
}

/// The reader's page 1 and 16-client throughput while its window object fails (and the
/// healthy throughput just before): page summary, degraded req/s, healthy req/s.
fn degraded(reader: &User) -> (Value, f64, f64) {
    let healthy_rps = throughput(reader);
    let fault = |times: u32| {
        let body = json!({ "reader_id": reader.id, "times": times });
        admin("POST", "/v1/admin/test/window_fault", Some(&body)).expect(200);
    };
    fault(10_000);
    let probe = reader.get("/v1/feed?limit=20").expect(200);
    assert_eq!(probe["state"], "rebuilding", "the fault holds: {probe}");
    let degraded_rps = throughput(reader);
    let samples: Vec<_> = (0..SAMPLES).map(|_| page1(reader)).collect();
    fault(0);
    (summary(&samples), degraded_rps, healthy_rps)
}

fn main() {
    std::env::set_var("EDGEFEED_PROFILE", "bench");
    let vars = [
        ("FANOUT_MODE", "hybrid"),
        ("RATE_LIMITS", "false"),
        ("HOT_AUTHOR_FOLLOWERS", &HOT_MIN_FOLLOWERS.to_string()),
    ];
    let vars = vars.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    init_server(ServerOptions { label: "reads".into(), vars, port: None });
    let started = Instant::now();
    let (wide, narrow, authors) = setup();

    eprintln!("[reads] wide vs narrow");
    let (floor_p50, floor_rps) = health_floor();
    let (wide_page, narrow_page) = interleaved(&wide, &narrow);

    eprintln!("[reads] degraded");
    let (degraded, degraded_rps, healthy_rps) = degraded(&narrow);

    eprintln!("[reads] hour-old backlog");
    let (before, _) = interleaved(&wide, &narrow);
    hour_old_backlog(&authors);
    let (backlog, _) = interleaved(&wide, &narrow);

    let n = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let r = json!({
        "floor": { "p50_ms": floor_p50, "rps_16": floor_rps },
        "wide": { "follows": WIDE, "page1": wide_page },
        "narrow": { "follows": NARROW, "page1": narrow_page },
        "wide_x_narrow_p50": n(&wide_page["p50_ms"]) / n(&narrow_page["p50_ms"]),
        "degraded": {
            "page1": degraded,
            "x_floor_p50": n(&degraded["p50_ms"]) / floor_p50,
            "healthy_x_floor_p50": n(&narrow_page["p50_ms"]) / floor_p50,
            "rps_16": degraded_rps,
            "healthy_rps_16": healthy_rps,
            "x_health_rps_16": degraded_rps / floor_rps,
        },
        "backlog": {
            "stalled_authors": STALLED_AUTHORS,
            "page1": backlog,
            "before": before,
            "x_before_p50": n(&backlog["p50_ms"]) / n(&before["p50_ms"]),
        },
        "total_secs": started.elapsed().as_secs_f64(),
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    std::fs::write(dir.join("reads.json"), serde_json::to_string_pretty(&r).unwrap()).expect("reads.json");
    let md = render(&r);
    std::fs::write(dir.join("READS.md"), &md).expect("READS.md");
    println!("{md}");
}

fn render(r: &Value) -> String {
    let n = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let met = |ok: bool| if ok { "met" } else { "**not met**" };
    let page = |p: &Value| {
        format!(
            "p50 {:.1} ms, p99 {:.1} ms; {:.0} D1 statements, D1 {:.1} ms (server p50)",
            n(&p["p50_ms"]),
            n(&p["p99_ms"]),
            n(&p["statements_p50"]),
            n(&p["d1_ms_p50"])
        )
    };
    let ratio = n(&r["wide_x_narrow_p50"]);
    let d = &r["degraded"];
    let b = &r["backlog"];
    format!(
        "# Feed reads: wide readers, degraded windows, an hour-old backlog\n\n\
         Command: `./scripts/bench reads`. One run, one hybrid-mode local stack (`wrangler dev`), 2 shared \
         cores, production window sizes; {:.0} s in all. Floor: `GET /v1/health` p50 {:.1} ms, {:.0} req/s \
         with 16 clients. Each reader's edges: 40% pulled (10 of the wide reader's pulled authors are hot, \
         served by the hot-range cache), the rest pushed. Pages of 20.\n\n\
         | scenario (target) | measured | target |\n|---|---|---|\n\
         | wide reader, {} follows: page 1 | {} |  |\n\
         | narrow reader, {} follows: page 1 | {} |  |\n\
         | wide / narrow page-1 p50 (<= 1.5x) | {:.2}x | {} |\n\
         | degraded (window object failing): page 1 | {} = {:.2}x floor (healthy: {:.2}x) |  |\n\
         | degraded: 16 clients | {:.0} req/s = {:.2}x health (healthy: {:.0} req/s) |  |\n\
         | wide reader, {} pushed authors stalled for an hour: page 1 | {} = {:.2}x the same reader without the backlog |  |\n",
        n(&r["total_secs"]),
        n(&r["floor"]["p50_ms"]),
        n(&r["floor"]["rps_16"]),
        r["wide"]["follows"],
        page(&r["wide"]["page1"]),
        r["narrow"]["follows"],
        page(&r["narrow"]["page1"]),
        ratio,
        met(ratio <= 1.5),
        page(&d["page1"]),
        n(&d["x_floor_p50"]),
        n(&d["healthy_x_floor_p50"]),
        n(&d["rps_16"]),
        n(&d["x_health_rps_16"]),
        n(&d["healthy_rps_16"]),
        b["stalled_authors"],
        page(&b["page1"]),
        n(&b["x_before_p50"]),
    )
}
