//! The benchmark report: every performance figure of the service from one run, on two fresh
//! local stacks one after the other (each killed before the next starts): `wrangler dev` (what
//! `./scripts/dev` runs: its ProxyWorker in front of the Worker, its inspector proxy beside it)
//! and the direct stack (`scripts/serve-direct.mjs`: the same Worker, config and local D1,
//! Durable Objects and Queues on workerd through Miniflare's API, none of wrangler's layers).
//! Each latency is p50/p99 and a ratio to the health floor measured on the same stack in the
//! same run, each throughput a ratio to health throughput at the same concurrency, so the
//! tooling's share is the difference between two columns. Writes `bench/REPORT.md` and
//! `bench/report.json`.
//!
//! Run: `./scripts/bench` (quick, a few minutes) or `./scripts/bench --full`;
//! `BENCH_STACKS=direct` (or `wrangler`) for one stack only. Progress goes to stderr when it is
//! a terminal.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "report/floors.rs"]
mod floors;
#[path = "report/hot.rs"]
mod hot;
#[path = "support/placement.rs"]
mod placement;

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(300);

/// Sizes of one run.
#[derive(Clone, Copy)]
struct Sizes {
    full: bool,
    /// Authors the feed reader follows, and posts each has (page 50 needs 1,000+).
    feed_authors: usize,
    posts_per_author: usize,
    /// Active push followers of the largest author.
    big_followers: usize,
    /// Requests per latency sample set, and per concurrent throughput run.
    samples: usize,
    throughput_requests: usize,
}

impl Sizes {
    fn new(full: bool) -> Self {
        let mut sizes = Self::preset(full);
        // `BENCH_BIG_FOLLOWERS=n`: another size for the largest author (working on the fan-out).
        if let Some(n) = std::env::var("BENCH_BIG_FOLLOWERS").ok().and_then(|v| v.parse().ok()) {
            sizes.big_followers = n;
        }
        sizes
    }

    fn preset(full: bool) -> Self {
        if full {
            Sizes {
                full,
                feed_authors: 20,
                posts_per_author: 100,
                big_followers: 1500,
                samples: 200,
                throughput_requests: 800,
            }
        } else {
            Sizes {
                full,
                feed_authors: 20,
                posts_per_author: 55,
                big_followers: 300,
                samples: 80,
                throughput_requests: 320,
            }
        }
    }
}

/// Progress on stderr: one line per phase (done/total and rate), rewritten in place on a
/// terminal, silent otherwise.
#[derive(Clone, Copy)]
struct Progress {
    tty: bool,
    started: Instant,
}

/// The phase being shown and when it began (its rate is counted from there).
static PHASE: Mutex<Option<(String, Instant)>> = Mutex::new(None);

impl Progress {
    fn phase(&self, name: &str, done: usize, total: usize) {
        if !self.tty {
            return;
        }
        let phase_started = {
            let mut current = PHASE.lock().unwrap();
            match current.as_ref() {
                Some((shown, at)) if shown == name => *at,
                _ => {
                    let now = Instant::now();
                    *current = Some((name.to_string(), now));
                    now
                }
            }
        };
        let secs = self.started.elapsed().as_secs_f64();
        let rate = done as f64 / phase_started.elapsed().as_secs_f64().max(1e-3);
        eprint!("\r\x1b[2K[{secs:5.0} s] {name}: {done}/{total} ({rate:.0}/s)");
        if done == total {
            eprintln!();
        }
    }
}

/// [`parallel`] with the phase's progress shown as items finish.
fn parallel_phase<T: Send + 'static>(
    p: Progress,
    phase: &'static str,
    threads: usize,
    n: usize,
    work: impl Fn(usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let done = Arc::new(Mutex::new(0usize));
    parallel(threads, n, move |i| {
        let out = work(i);
        let mut finished = done.lock().unwrap();
        *finished += 1;
        p.phase(phase, *finished, n);
        out
    })
}

/// p50/p99 of a sample set, and the ratios to the floor's.
fn latency(samples: &[f64], floor: &Value) -> Value {
    let (p50, p99) = (pct(samples, 50.0), pct(samples, 99.0));
    let f50 = floor["p50"].as_f64().unwrap_or(f64::NAN);
    let f99 = floor["p99"].as_f64().unwrap_or(f64::NAN);
    json!({ "p50": p50, "p99": p99, "x_floor_p50": p50 / f50, "x_floor_p99": p99 / f99, "n": samples.len() })
}

fn health() {
    assert_eq!(call("GET", "/v1/health", None, None).status, 200);
}

/// Sequential storage round trips of a response (`Server-Timing`).
fn trips(r: &Resp) -> f64 {
    r.timing("sequential round trips") as f64
}

/// Server-side milliseconds of a response (`Server-Timing`): total, D1, Durable Objects.
fn server_ms(r: &Resp) -> [f64; 3] {
    let header = r.server_timing.as_deref().unwrap_or("");
    let dur = |name: &str| {
        header
            .split(", ")
            .find(|part| part.starts_with(&format!("{name};")))
            .and_then(|part| part.rsplit("dur=").next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    [dur("total"), dur("d1"), dur("do")]
}

/// p50 of each of the three server-side figures.
fn breakdown(samples: &[[f64; 3]]) -> Value {
    let col = |i: usize| pct(&samples.iter().map(|s| s[i]).collect::<Vec<_>>(), 50.0);
    json!({ "total_ms_p50": col(0), "d1_ms_p50": col(1), "do_ms_p50": col(2) })
}

struct Feed {
    reader: User,
    /// Cursor to page 50 (of 20 items).
    page50: String,
}

/// A reader following `feed_authors` authors with `posts_per_author` imported posts each, its
/// window built, and the cursor of page 50.
fn feed_setup(s: Sizes, p: &Progress) -> Feed {
    let reader = register("rp_reader");
    let authors: Vec<User> = (0..s.feed_authors).map(|_| register("rp_author")).collect();
    let now = now_secs();
    let total = s.feed_authors * s.posts_per_author;
    let authors = Arc::new(authors);
    let a = authors.clone();
    parallel_phase(*p, "feed setup: posts imported", 8, total, move |i| {
        let (author, k) = (i % a.len(), i / a.len());
        let at = edgefeed::domain::time::format_rfc3339((now - 60 - (i as i64) * 37) * 1000);
        import_post(&a[author], &format!("post {k} of author {author}"), "public", &at);
    });
    for a in authors.iter() {
        reader.follow(a);
    }
    // Every import is a fan-out event: measuring while the consumer still drains them measures
    // the consumer too (one JS thread serves both locally; 25 s of runtime CPU for these imports).
    wait_quiet();
    reader.get("/v1/feed?limit=20").expect(200);
    let mut cursor = String::new();
    for page in 1..50 {
        let path = if cursor.is_empty() {
            "/v1/feed?limit=20".to_string()
        } else {
            format!("/v1/feed?limit=20&cursor={cursor}")
        };
        let body = reader.get(&path).expect(200);
        cursor = body["next_cursor"].as_str().expect("more pages").to_string();
        p.phase("feed setup: cursor to page 50", page + 1, 50);
    }
    Feed { reader, page50: cursor }
}

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    if std::env::var("BENCH_RENDER_ONLY").is_ok_and(|v| v == "1") {
        // Re-renders bench/REPORT.md from bench/report.json (the figures of the last run).
        let saved = std::fs::read_to_string(dir.join("report.json")).expect("bench/report.json");
        let md = render(&serde_json::from_str(&saved).expect("report.json is JSON"));
        std::fs::write(dir.join("REPORT.md"), &md).expect("REPORT.md");
        println!("{md}");
        return;
    }
    let full = std::env::args().any(|a| a == "--full") || std::env::var("BENCH_FULL").is_ok_and(|v| v == "1");
    let s = Sizes::new(full);
    let p = Progress { tty: std::io::stderr().is_terminal(), started: Instant::now() };
    std::env::set_var("EDGEFEED_PROFILE", "bench");
    // `BENCH_ONLY=publish` (or `hot`): the floor and the fan-out (or the hot-author scenario)
    // only, printed (nothing written), for working on it.
    let only = std::env::var("BENCH_ONLY").ok();
    let stacks: Vec<Value> =
        bench_stacks().into_iter().map(|stack| run_stack(stack, s, &p, only.as_deref())).collect();
    let r = json!({
        "full": full,
        "cores": thread::available_parallelism().map_or(0, |n| n.get()),
        "databases": databases(),
        "stacks": stacks,
        "wasm_gz_bytes": wasm_gz_bytes(),
        "total_secs": p.started.elapsed().as_secs_f64(),
    });
    if only.is_some() {
        println!("{}", serde_json::to_string_pretty(&r).unwrap());
        return;
    }
    let md = render(&r);
    std::fs::create_dir_all(&dir).expect("bench/");
    std::fs::write(dir.join("report.json"), serde_json::to_string_pretty(&r).unwrap()).expect("report.json");
    std::fs::write(dir.join("REPORT.md"), &md).expect("REPORT.md");
    println!("{md}");
}

/// One fresh stack, every figure on it, and the machine's load before and after.
fn run_stack(stack: Stack, s: Sizes, p: &Progress, only: Option<&str>) -> Value {
    let server = start_server_with(
        ServerOptions { label: format!("report-{}", stack.key()), vars: server_vars(s.full), port: None },
        databases(),
        stack,
    );
    talk_to(&server);
    let load_before = load_average();
    let measured = measure_stack(s, p, only);
    let load = json!({ "before": load_before, "after": load_average() });
    server.kill();
    json!({ "key": stack.key(), "name": stack.name(), "figures": measured, "load_average": load })
}

/// The machine's 1-minute load average (`/proc/loadavg`): the cores are shared, so the report
/// says how busy they were while each stack ran.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split(' ').next()?.parse().ok()
}

/// Push mode, no abuse limits (the bench registers thousands of users from one address), the
/// hot-author threshold at the hot scenario's follower count (`report/hot.rs`: nothing is
/// promoted before that scenario's reconciliation pass), and `BENCH_VARS=NAME=value,...` on top
/// (trying a setting side by side).
fn server_vars(full: bool) -> Vec<(String, String)> {
    let hot = hot::followers(full).to_string();
    let mut vars: Vec<(String, String)> =
        [("FANOUT_MODE", "push"), ("RATE_LIMITS", "false"), ("HOT_REPLICA_FOLLOWERS", hot.as_str())]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    for pair in std::env::var("BENCH_VARS").unwrap_or_default().split(',').filter(|p| !p.is_empty()) {
        if let Some((k, v)) = pair.split_once('=') {
            vars.push((k.to_string(), v.to_string()));
        }
    }
    vars
}

/// Every figure on the stack the request helpers talk to.
fn measure_stack(s: Sizes, p: &Progress, only: Option<&str>) -> Value {
    let mut r = json!({});
    // Floor: health, one client and 16.
    let floor_samples: Vec<f64> = (0..s.samples)
        .map(|i| {
            p.phase("health floor", i + 1, s.samples);
            let t = Instant::now();
            health();
            ms(t.elapsed())
        })
        .collect();
    let floor = json!({ "p50": pct(&floor_samples, 50.0), "p99": pct(&floor_samples, 99.0) });
    let (health16, _) = concurrent(16, s.throughput_requests, |_| health());
    r["floor"] = json!({ "p50": floor["p50"], "p99": floor["p99"], "rps_16": health16 });
    if only != Some("hot") {
        if only == Some("publish") {
            measure_publish(&mut r, s, p, &floor);
            return r;
        }
        if only == Some("likes") {
            // The floors a like is built of need a reader's: the likes' own stand in.
            measure_likes(&mut r, s, &floor, health16);
            return r;
        }
        let feed = feed_setup(s, p);
        measure_feed(&mut r, &feed, s, p, &floor, health16);
        feed_floors(&mut r, &feed);
        measure_post_reads(&mut r, &feed, s, health16);
        measure_publish(&mut r, s, p, &floor);
        measure_likes(&mut r, s, &floor, health16);
    }
    // Last: its reconciliation pass promotes every author over the threshold.
    let progress = |phase: &'static str, done: usize, total: usize| p.phase(phase, done, total);
    r["hot"] = hot::measure(s.full, s.samples, &floor, &wait_quiet, &progress);
    r
}

fn measure_feed(r: &mut Value, feed: &Feed, s: Sizes, p: &Progress, floor: &Value, health16: f64) {
    let mut page1 = Vec::new();
    let mut page1_trips = Vec::new();
    let mut page1_server = Vec::new();
    let mut page50 = Vec::new();
    let mut page50_trips = Vec::new();
    let mut page50_calls = Vec::new();
    let path50 = format!("/v1/feed?limit=20&cursor={}", feed.page50);
    for i in 0..s.samples {
        p.phase("feed pages 1 and 50", i + 1, s.samples);
        let t = Instant::now();
        let resp = feed.reader.get("/v1/feed?limit=20");
        page1.push(ms(t.elapsed()));
        page1_trips.push(trips(&resp));
        page1_server.push(server_ms(&resp));
        let t = Instant::now();
        let resp = feed.reader.get(&path50);
        page50.push(ms(t.elapsed()));
        page50_trips.push(trips(&resp));
        page50_calls.push(resp.timing("calls") as f64);
    }
    let reader = feed.reader.clone();
    let (rps, lat) = concurrent(16, s.throughput_requests, move |_| {
        reader.get("/v1/feed?limit=20").expect(200);
    });
    r["feed"] = json!({
        "page1": latency(&page1, floor),
        "page1_sequential_trips": { "p50": pct(&page1_trips, 50.0), "p99": pct(&page1_trips, 99.0) },
        "page1_server": breakdown(&page1_server),
        "page50": latency(&page50, floor),
        "page50_x_page1_p50": pct(&page50, 50.0) / pct(&page1, 50.0),
        "page50_sequential_trips": { "p50": pct(&page50_trips, 50.0), "p99": pct(&page50_trips, 99.0) },
        "page50_object_calls_p50": pct(&page50_calls, 50.0),
        "rps_16": rps,
        "x_health_rps_16": rps / health16,
        "latency_16": { "p50": pct(&lat, 50.0), "p99": pct(&lat, 99.0) },
    });
}

/// The floors around the feed reader's page, measured right after its pages, and pages 1 and 50
/// as multiples of the composite floors they are built of (`report/floors.rs`).
fn feed_floors(r: &mut Value, feed: &Feed) {
    let f = floors::single(&feed.reader, num(&r["floor"]["p50"]));
    let (page1, page50) = (floors::page1(&f), floors::page50(&f));
    let feed = &mut r["feed"];
    feed["page1_composite_ms"] = json!(page1);
    feed["page1_x_composite"] = json!(num(&feed["page1"]["p50"]) / page1);
    feed["page50_composite_ms"] = json!(page50);
    feed["page50_x_composite"] = json!(num(&feed["page50"]["p50"]) / page50);
    r["floors"] = f;
}

fn measure_post_reads(r: &mut Value, feed: &Feed, s: Sizes, health16: f64) {
    let body = feed.reader.get("/v1/feed?limit=1").expect(200);
    let id = body["items"][0]["id"].as_str().unwrap().to_string();
    let reader = feed.reader.clone();
    let (rps, _) = concurrent(16, s.throughput_requests, move |_| {
        reader.get(&format!("/v1/posts/{id}")).expect(200);
    });
    r["post_read"] = json!({ "rps_16": rps, "x_health_rps_16": rps / health16 });
}

/// Until the outbox has no pending event, twice in a row (an event can be sent between a
/// consumer's ack and the next count).
fn wait_quiet() {
    let mut quiet = 0;
    poll("the outbox to drain", DEADLINE, || {
        let stats = admin("GET", "/v1/admin/stats", None).expect(200);
        quiet = if stats["outbox"]["pending"] == 0 { quiet + 1 } else { 0 };
        (quiet == 2).then_some(())
    });
}

/// Active push followers of one author: registered, following, window built.
fn active_followers(author: &User, n: usize, p: &Progress) -> Vec<User> {
    let author = author.clone();
    parallel_phase(*p, "publish setup: active followers", 8, n, move |_| {
        let u = register("rp_fan");
        u.follow(&author);
        u.get("/v1/feed?limit=1").expect(200);
        u
    })
}

fn outbox_event(author: &User, post: &str) -> Option<Value> {
    let o = admin("POST", "/v1/admin/test/outbox", Some(&json!({ "author_id": author.id }))).expect(200);
    o["events"]
        .as_array()?
        .iter()
        .find(|e| e["post_id"].as_u64().map(|n| n.to_string()).as_deref() == Some(post))
        .cloned()
}

/// Publishes and waits for the post's fan-out; returns (publish ms, outbox commit -> done ms).
fn publish_and_wait(author: &User, body: &str) -> (f64, f64) {
    let t = Instant::now();
    let post = author.post("/v1/posts", json!({ "body": body, "visibility": "public" })).expect(201);
    let publish_ms = ms(t.elapsed());
    let id = post["id"].as_str().unwrap().to_string();
    let done = poll("the post's fan-out", DEADLINE, || {
        let e = outbox_event(author, &id)?;
        Some((e["done_at"].as_i64()? - e["created_at"].as_i64()?) as f64)
    });
    (publish_ms, done)
}

/// The fan-out's profile counters (`fanout_*`, see `services/queue/mod.rs::profile_batch`).
fn fanout_counters() -> Value {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    let counters = stats["counters"].as_object().cloned().unwrap_or_default();
    counters.into_iter().filter(|(k, _)| k.starts_with("fanout_") || k == "deliveries").collect()
}

/// Where one window write's time goes: the profile counters' growth over the big author's
/// fan-outs, per window write (`deliveries`) and as a share of the consumer's wall time.
fn per_write_split(before: &Value, after: &Value) -> Value {
    let grew = |k: &str| num(&after[k]) - num(&before[k]);
    let writes = grew("deliveries").max(1.0);
    let wall = grew("fanout_prepare_ms") + grew("fanout_deliver_ms") + grew("fanout_record_ms");
    json!({
        "window_writes": writes,
        "batches": grew("fanout_batches"),
        "consumer_wall_ms": wall,
        "queue_wait_ms_per_batch": grew("fanout_queue_wait_ms") / grew("fanout_batches").max(1.0),
        "prepare_ms": grew("fanout_prepare_ms"),
        "deliver_ms": grew("fanout_deliver_ms"),
        "record_ms": grew("fanout_record_ms"),
        "window_call_ms_per_write": grew("fanout_window_ms") / writes,
        "window_calls_per_write": grew("fanout_window_calls") / writes,
        "window_statements_per_write": grew("fanout_window_statements") / writes,
        "d1_statements_per_write": grew("fanout_d1_statements") / writes,
        "writes_per_s_of_consumer_wall": writes / (wall / 1000.0).max(1e-9),
    })
}

fn measure_publish(r: &mut Value, s: Sizes, p: &Progress, floor: &Value) {
    let small = register("rp_small");
    let big = register("rp_big");
    let small_reader = active_followers(&small, 1, p).remove(0);
    let big_readers = active_followers(&big, s.big_followers, p);
    wait_quiet();
    let rounds = if s.full { 10 } else { 5 };
    let (mut small_pub, mut big_pub, mut big_done) = (Vec::new(), Vec::new(), Vec::new());
    let mut split = Vec::new();
    for i in 0..rounds {
        p.phase("publish: 1 follower vs the largest author", i + 1, rounds);
        small_pub.push(publish_and_wait(&small, &format!("small {i}")).0);
        let before = fanout_counters();
        let (publish, done) = publish_and_wait(&big, &format!("big {i}"));
        split.push(per_write_split(&before, &fanout_counters()));
        big_pub.push(publish);
        big_done.push(done);
    }
    let during = small_during_big(&small, &small_reader, &big, rounds, p);
    // The same readers' objects, warm from the fan-outs, called bare at the fan-out's concurrency.
    let (object_rate, concurrency) = floors::object_calls_per_s(&big_readers);
    let writes_per_s = s.big_followers as f64 / (pct(&big_done, 50.0) / 1000.0);
    r["publish"] = json!({
        "object_calls_per_s": object_rate,
        "object_concurrency": concurrency,
        "x_object_rate": writes_per_s / object_rate,
        "followers_big": s.big_followers,
        "small": latency(&small_pub, floor),
        "big": latency(&big_pub, floor),
        "big_x_small_p50": pct(&big_pub, 50.0) / pct(&small_pub, 50.0),
        "big_fanout_done_ms": { "p50": pct(&big_done, 50.0), "p99": pct(&big_done, 99.0) },
        "window_writes_per_s": writes_per_s,
        "split": split.get(split.len() / 2).cloned().unwrap_or(Value::Null),
        "small_visible_during_big_ms": { "p50": pct(&during, 50.0), "p99": pct(&during, 99.0) },
    });
}

/// A small author's post during a big fan-out: until it is in the small author's reader's feed,
/// once per round (each waits for the big fan-out to finish before the next).
fn small_during_big(small: &User, small_reader: &User, big: &User, rounds: usize, p: &Progress) -> Vec<f64> {
    let mut during = Vec::new();
    for i in 0..rounds {
        p.phase("publish: small author during a big fan-out", i + 1, rounds);
        big.post("/v1/posts", json!({ "body": format!("big again {i}"), "visibility": "public" }))
            .expect(201);
        let t = Instant::now();
        let post = small
            .post("/v1/posts", json!({ "body": format!("during {i}"), "visibility": "public" }))
            .expect(201);
        let id = post["id"].as_str().unwrap().to_string();
        poll("the small author's post in its reader's feed", DEADLINE, || {
            let f = small_reader.get("/v1/feed?limit=5").expect(200);
            ids(f["items"].as_array()?).contains(&id).then_some(())
        });
        during.push(ms(t.elapsed()));
        poll("the big fan-out to finish", DEADLINE, || {
            let o = admin("POST", "/v1/admin/test/outbox", Some(&json!({ "author_id": big.id }))).expect(200);
            (o["pending"] == 0).then_some(())
        });
    }
    during
}

fn measure_likes(r: &mut Value, s: Sizes, floor: &Value, health16: f64) {
    let author = register("rp_hot");
    let post = author.publish("hot post", "public");
    let path = format!("/v1/posts/{}/like", post["id"].as_str().unwrap());
    let likers: Arc<Vec<User>> = Arc::new((0..16).map(|_| register("rp_liker")).collect());
    let before = admin("GET", "/v1/admin/stats", None).expect(200)["likes"].clone();
    let (ls, pth) = (likers.clone(), path.clone());
    // Each client alternates like/unlike and ends on like (an even number of requests each).
    let per = (s.throughput_requests / 16) & !1;
    let (rps, lat) = concurrent(16, per * 16, move |i| {
        let (user, k) = (&ls[i % 16], i / 16);
        if k % 2 == 1 {
            user.put(&pth, None).expect(200)
        } else {
            user.delete(&pth).expect(200)
        };
    });
    // The group commit's own limit, right after: bare batches in series on the post's database.
    let series = floors::batches_per_s(floors::home_of(&author));
    let count =
        author.get(&format!("/v1/posts/{}", post["id"].as_str().unwrap())).expect(200)["like_count"].clone();
    let after = admin("GET", "/v1/admin/stats", None).expect(200)["likes"].clone();
    let delta = |k: &str| after[k].as_i64().unwrap_or(0) - before[k].as_i64().unwrap_or(0);
    r["likes"] = json!({
        "rps_16": rps,
        "x_health_rps_16": rps / health16,
        "series_batches_per_s": series,
        "x_series": rps / series,
        "latency_16": { "p50": pct(&lat, 50.0), "p99": pct(&lat, 99.0) },
        "final_count": count,
        "expected_count": 16,
        "group_commits": delta("group_commits"),
        "requests_committed": delta("requests_committed"),
    });
    measure_like_single(r, &likers[0], &path, s, floor);
}

/// One client liking and unliking, and its composite floor measured right after
/// (`report/floors.rs`: the liker's window object and home database stand in for the post's).
fn measure_like_single(r: &mut Value, one: &User, path: &str, s: Sizes, floor: &Value) {
    let mut server = Vec::new();
    let single: Vec<f64> = (0..s.samples / 2)
        .map(|i| {
            let t = Instant::now();
            let resp = if i % 2 == 0 { one.delete(path) } else { one.put(path, None) };
            let took = ms(t.elapsed());
            assert_eq!(resp.status, 200, "{}", resp.body);
            server.push(server_ms(&resp));
            took
        })
        .collect();
    let f = floors::single(one, num(&floor["p50"]));
    let composite = floors::like(&f);
    let likes = &mut r["likes"];
    likes["single"] = latency(&single, floor);
    likes["single_server"] = breakdown(&server);
    likes["single_composite_ms"] = json!(composite);
    likes["single_x_composite"] = json!(pct(&single, 50.0) / composite);
    likes["floors"] = f;
}

fn wasm_gz_bytes() -> Option<usize> {
    let wasm = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("build/index_bg.wasm");
    let out = std::process::Command::new("gzip").arg("-9c").arg(&wasm).output().ok()?;
    out.status.success().then_some(out.stdout.len())
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "**not met**"
    }
}

/// The headline of the modes comparison (`bench/modes.json`, from `./scripts/bench modes`).
fn modes_summary() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/modes.json");
    let Some(m) = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return "No `bench/modes.json` yet: run `./scripts/bench modes`.".into();
    };
    let by = |mode: &str| m["modes"].as_array().and_then(|a| a.iter().find(|r| r["mode"] == mode).cloned());
    let (Some(push), Some(hybrid)) = (by("push"), by("hybrid")) else {
        return "`bench/modes.json` lacks the push or hybrid run.".into();
    };
    let floor_multiple = |r: &Value| num(&r["feed_ms"]["p50"]) / num(&r["health_ms"]["p50"]);
    format!(
        "From `bench/MODES.md` ({} users, a separate run of `./scripts/bench modes`): hybrid writes {:.1}% of \
         push-only's deliveries per post ({:.1} vs {:.1}); feed page-1 p50 {:.2}x push-only's as multiples of \
         each mode's own floor ({:.2}x in raw milliseconds, modes measured minutes apart).",
        m["users"],
        100.0 * num(&hybrid["deliveries_per_post"]) / num(&push["deliveries_per_post"]),
        num(&hybrid["deliveries_per_post"]),
        num(&push["deliveries_per_post"]),
        floor_multiple(&hybrid) / floor_multiple(&push),
        num(&hybrid["feed_ms"]["p50"]) / num(&push["feed_ms"]["p50"]),
    )
}

/// The read rows of `bench/READS.md` (a separate run of `./scripts/bench reads`), if it exists.
fn reads_rows() -> Vec<(String, String, bool)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/reads.json");
    let Some(x) = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return Vec::new();
    };
    let (d, b) = (&x["degraded"], &x["backlog"]);
    vec![
        (
            format!(
                "wide reader ({} follows) vs narrow ({}): page-1 p50 (<= 1.5x; `bench/READS.md`)",
                x["wide"]["follows"], x["narrow"]["follows"]
            ),
            format!(
                "{:.1} ms vs {:.1} ms = {:.2}x",
                num(&x["wide"]["page1"]["p50_ms"]),
                num(&x["narrow"]["page1"]["p50_ms"]),
                num(&x["wide_x_narrow_p50"])
            ),
            num(&x["wide_x_narrow_p50"]) <= 1.5,
        ),
        (
            "degraded read (window object failing), page 1 and 16 clients (`bench/READS.md`)".into(),
            format!(
                "p50 {:.1} ms = {:.2}x floor (healthy {:.2}x); {:.0} req/s = {:.2}x health",
                num(&d["page1"]["p50_ms"]),
                num(&d["x_floor_p50"]),
                num(&d["healthy_x_floor_p50"]),
                num(&d["rps_16"]),
                num(&d["x_health_rps_16"])
            ),
            true,
        ),
        (
            format!(
                "wide reader with {} authors' fan-out stalled an hour: page-1 p50 (`bench/READS.md`)",
                b["stalled_authors"]
            ),
            format!(
                "{:.1} ms = {:.2}x the same reader without the backlog",
                num(&b["page1"]["p50_ms"]),
                num(&b["x_before_p50"])
            ),
            true,
        ),
    ]
}

/// One row of the side-by-side table: its name (with the target in parentheses, if any) and
/// how one stack's figures read, with the verdict when the row has a target.
struct Row {
    name: String,
    cell: Box<Cell>,
}

/// A stack's figures -> the cell's text and, for a row with a target, whether it is met.
type Cell = dyn Fn(&Value) -> (String, Option<bool>);

fn row(name: impl Into<String>, cell: impl Fn(&Value) -> (String, Option<bool>) + 'static) -> Row {
    Row { name: name.into(), cell: Box::new(cell) }
}

fn lat(v: &Value) -> String {
    format!(
        "p50 {:.1} ms ({:.2}x floor), p99 {:.1} ms ({:.2}x floor)",
        num(&v["p50"]),
        num(&v["x_floor_p50"]),
        num(&v["p99"]),
        num(&v["x_floor_p99"])
    )
}

fn split(v: &Value) -> String {
    format!(
        "total {:.1} ms: D1 {:.1} ms, Durable Objects {:.1} ms",
        num(&v["total_ms_p50"]),
        num(&v["d1_ms_p50"]),
        num(&v["do_ms_p50"])
    )
}

fn feed_rows() -> Vec<Row> {
    vec![
        row("health floor, 1 client / 16 clients", |f| {
            let fl = &f["floor"];
            (
                format!(
                    "p50 {:.1} ms, p99 {:.1} ms; {:.0} req/s",
                    num(&fl["p50"]),
                    num(&fl["p99"]),
                    num(&fl["rps_16"])
                ),
                None,
            )
        }),
        row("feed page 1, 1 client (p50 <= 2.5x floor)", |f| {
            let p1 = &f["feed"]["page1"];
            (lat(p1), Some(num(&p1["x_floor_p50"]) <= 2.5))
        }),
        row("feed page 1: sequential storage round trips", |f| {
            let t = &f["feed"]["page1_sequential_trips"];
            (format!("p50 {}, p99 {}", t["p50"], t["p99"]), None)
        }),
        row("feed page 1: where the time goes (server p50)", |f| (split(&f["feed"]["page1_server"]), None)),
        row("feed page 50, 1 client (p50 <= 1.2x page 1)", |f| {
            let x = num(&f["feed"]["page50_x_page1_p50"]);
            (format!("{} = {x:.2}x page 1", lat(&f["feed"]["page50"])), Some(x <= 1.2))
        }),
        row("feed page 50: sequential storage round trips", |f| {
            let t = &f["feed"]["page50_sequential_trips"];
            (format!("p50 {}, p99 {}", t["p50"], t["p99"]), None)
        }),
        row("feed reads, 16 clients", |f| {
            let feed = &f["feed"];
            (
                format!("{:.0} req/s = {:.2}x health", num(&feed["rps_16"]), num(&feed["x_health_rps_16"])),
                None,
            )
        }),
        row("one post `GET /v1/posts/{id}`, 16 clients", |f| {
            let pr = &f["post_read"];
            (format!("{:.0} req/s = {:.2}x health", num(&pr["rps_16"]), num(&pr["x_health_rps_16"])), None)
        }),
    ]
}

/// The hot author's followers' page 1 before and after its replicas (`report/hot.rs`).
fn hot_rows() -> Vec<Row> {
    vec![
        row("hot author's followers, page 1, before replicas (its twin, read from D1)", |f| {
            (hot::cells(f).0, None)
        }),
        row(
            "the same pages from its replicas (0 statements on its database but a replica's own lease \
             renewal or reload; p50 <= 1.5x before)",
            |f| {
                let (_, after, ok) = hot::cells(f);
                (after, ok)
            },
        ),
    ]
}

fn like_rows() -> Vec<Row> {
    vec![
        row("hot-post like/unlike, 16 clients (>= 0.5x health, count exact)", |f| {
            let likes = &f["likes"];
            let exact = likes["final_count"] == likes["expected_count"];
            let figure = format!(
                "{:.0} ops/s = {:.2}x health; count {} (expected {}); {} requests in {} group commits",
                num(&likes["rps_16"]),
                num(&likes["x_health_rps_16"]),
                likes["final_count"],
                likes["expected_count"],
                likes["requests_committed"],
                likes["group_commits"]
            );
            (figure, Some(num(&likes["x_health_rps_16"]) >= 0.5 && exact))
        }),
        row("like, 1 client", |f| (lat(&f["likes"]["single"]), None)),
        row("like: where the time goes (server p50)", |f| (split(&f["likes"]["single_server"]), None)),
    ]
}

/// Pages, likes and the fan-out as multiples of the floors they are built of
/// (`report/floors.rs`): the floors and the pages against theirs.
fn floor_read_rows() -> Vec<Row> {
    vec![
        row(
            "floors inside the Worker (no hop): a bare object call; a bare D1 batch on one database; one on every \
             database at once (the hop: the health floor)",
            |f| {
                let fl = &f["floors"];
                let figure = format!(
                    "object call {:.2} ms; D1 batch {:.2} ms; on all {} at once {:.2} ms; hop {:.2} ms",
                    num(&fl["object_ms"]),
                    num(&fl["d1_one_ms"]),
                    fl["databases"],
                    num(&fl["d1_all_ms"]),
                    num(&fl["hop_ms"])
                );
                (figure, None)
            },
        ),
        row(
            "feed page 1 / its composite floor: hop + the longer of a window call and a batch (the first wave) \
             + a batch on every database (p50 <= 1.5x)",
            |f| {
                let x = num(&f["feed"]["page1_x_composite"]);
                let c = num(&f["feed"]["page1_composite_ms"]);
                (format!("p50 {:.1} ms = {x:.2}x {c:.1} ms", num(&f["feed"]["page1"]["p50"])), Some(x <= 1.5))
            },
        ),
        row("feed page 50 / its composite floor: hop + a batch + a batch on every database (no window call)", |f| {
            let feed = &f["feed"];
            let figure = format!(
                "p50 {:.1} ms = {:.2}x {:.1} ms; {} object calls (p50)",
                num(&feed["page50"]["p50"]),
                num(&feed["page50_x_composite"]),
                num(&feed["page50_composite_ms"]),
                feed["page50_object_calls_p50"]
            );
            (figure, None)
        }),
    ]
}

/// A like, hot-post likes and the fan-out against theirs.
fn floor_write_rows() -> Vec<Row> {
    vec![
        row("like, 1 client / its composite floor: hop + an object call + 3 batches in series", |f| {
            let l = &f["likes"];
            let figure = format!(
                "p50 {:.1} ms = {:.2}x {:.1} ms",
                num(&l["single"]["p50"]),
                num(&l["single_x_composite"]),
                num(&l["single_composite_ms"])
            );
            (figure, None)
        }),
        row("hot-post likes, 16 clients / bare D1 batches in series on the post's database (>= 0.5x)", |f| {
            let l = &f["likes"];
            let x = num(&l["x_series"]);
            let figure =
                format!("{:.0} ops/s = {x:.2}x {:.0} batches/s", num(&l["rps_16"]), num(&l["series_batches_per_s"]));
            (figure, Some(x >= 0.5 && l["final_count"] == l["expected_count"]))
        }),
        row(
            "fan-out window writes/s / bare calls to the same readers' objects at FANOUT_CONCURRENCY (>= 0.5x)",
            |f| {
                let p = &f["publish"];
                let x = num(&p["x_object_rate"]);
                let figure = format!(
                    "{:.0}/s = {x:.2}x {:.0} calls/s ({} in flight)",
                    num(&p["window_writes_per_s"]),
                    num(&p["object_calls_per_s"]),
                    p["object_concurrency"]
                );
                (figure, Some(x >= 0.5))
            },
        ),
    ]
}

fn publish_rows() -> Vec<Row> {
    vec![
        row("publish, 1 follower", |f| (lat(&f["publish"]["small"]), None)),
        row("publish, largest author (flat: <= 1.3x the 1-follower p50)", |f| {
            let p = &f["publish"];
            let x = num(&p["big_x_small_p50"]);
            (format!("{} = {x:.2}x the 1-follower p50", lat(&p["big"])), Some(x <= 1.3))
        }),
        row("fan-out: window writes/s to the largest author's active readers (>= 3,000/s)", |f| {
            let p = &f["publish"];
            let rate = num(&p["window_writes_per_s"]);
            let done = &p["big_fanout_done_ms"];
            let figure = format!(
                "{rate:.0}/s to {} readers (outbox commit -> last window p50 {:.0} ms, p99 {:.0} ms)",
                p["followers_big"],
                num(&done["p50"]),
                num(&done["p99"])
            );
            (figure, Some(rate >= 3000.0))
        }),
        row("fan-out: where the time goes (median big fan-out)", |f| {
            (fanout_split(&f["publish"]["split"]), None)
        }),
        row("small author's post visible during a big fan-out", |f| {
            let d = &f["publish"]["small_visible_during_big_ms"];
            (format!("p50 {:.0} ms, p99 {:.0} ms", num(&d["p50"]), num(&d["p99"])), None)
        }),
    ]
}

fn fanout_split(sp: &Value) -> String {
    format!(
        "{:.0} writes in {:.0} consumer batches: queue wait {:.0} ms per batch; read and decide {:.0} ms, window \
         writes {:.0} ms, record progress {:.0} ms; {:.2} object calls and {:.1} SQL statements per write in the \
         object, {:.2} D1 statements per write; one call {:.1} ms with FANOUT_CONCURRENCY in flight",
        num(&sp["window_writes"]),
        num(&sp["batches"]),
        num(&sp["queue_wait_ms_per_batch"]),
        num(&sp["prepare_ms"]),
        num(&sp["deliver_ms"]),
        num(&sp["record_ms"]),
        num(&sp["window_calls_per_write"]),
        num(&sp["window_statements_per_write"]),
        num(&sp["d1_statements_per_write"]),
        num(&sp["window_call_ms_per_write"]),
    )
}

/// The side-by-side table: one column per stack, the verdict taken on the direct stack (the
/// issue's targets are for the stack without wrangler's proxies) or the only stack run.
fn side_by_side(r: &Value) -> String {
    let stacks = r["stacks"].as_array().cloned().unwrap_or_default();
    let judged = stacks.iter().rposition(|s| s["key"] == "direct").unwrap_or(0);
    let mut md = String::from("| scenario (target) |");
    for s in &stacks {
        md.push_str(&format!(" {} |", s["name"].as_str().unwrap_or("?")));
    }
    md.push_str(" target |\n|---|");
    md.push_str(&"---|".repeat(stacks.len() + 1));
    md.push('\n');
    let rows = feed_rows().into_iter().chain(hot_rows()).chain(like_rows()).chain(publish_rows());
    for row in rows.chain(floor_read_rows()).chain(floor_write_rows()) {
        md.push_str(&format!("| {} |", row.name));
        let mut verdict_cell = "";
        for (i, s) in stacks.iter().enumerate() {
            let (figure, ok) = (row.cell)(&s["figures"]);
            md.push_str(&format!(" {figure} |"));
            if i == judged {
                verdict_cell = ok.map_or("", verdict);
            }
        }
        md.push_str(&format!(" {verdict_cell} |\n"));
    }
    md
}

/// How busy the machine was while each stack ran (1-minute load average, before and after).
fn load_line(r: &Value) -> String {
    let stacks = r["stacks"].as_array().cloned().unwrap_or_default();
    let each: Vec<String> = stacks
        .iter()
        .map(|s| {
            let l = &s["load_average"];
            format!(
                "{} {:.1} -> {:.1}",
                s["name"].as_str().unwrap_or("?"),
                num(&l["before"]),
                num(&l["after"])
            )
        })
        .collect();
    format!(
        "Machine load (1-minute load average on {} cores, before -> after): {}.\n\n",
        r["cores"],
        each.join(", ")
    )
}

/// A stack's figures by key (`wrangler`, `direct`).
fn figures<'a>(r: &'a Value, key: &str) -> Option<&'a Value> {
    r["stacks"].as_array()?.iter().find(|s| s["key"] == key).map(|s| &s["figures"])
}

/// The tooling's share: each of a few headline figures on wrangler dev as a multiple of the
/// direct stack's, from the same run.
fn tooling_share(r: &Value) -> String {
    let (Some(w), Some(d)) = (figures(r, "wrangler"), figures(r, "direct")) else {
        return String::new();
    };
    let ratio = |path: &[&str]| {
        let get = |v: &Value| path.iter().fold(v.clone(), |v, k| v[*k].clone());
        num(&get(w)) / num(&get(d))
    };
    format!(
        "\n**The tooling's share** (wrangler dev as a multiple of the direct stack, same run): health p50 {:.2}x, \
         feed page 1 p50 {:.2}x, feed reads with 16 clients {:.2}x the throughput, like p50 {:.2}x, hot-post \
         likes {:.2}x the throughput, fan-out {:.2}x the window writes/s.\n",
        ratio(&["floor", "p50"]),
        ratio(&["feed", "page1", "p50"]),
        ratio(&["feed", "rps_16"]),
        ratio(&["likes", "single", "p50"]),
        ratio(&["likes", "rps_16"]),
        ratio(&["publish", "window_writes_per_s"]),
    )
}

fn render(r: &Value) -> String {
    let wasm_kb = r["wasm_gz_bytes"].as_f64().map_or(f64::NAN, |b| b / 1024.0);
    let sizes = Sizes::new(r["full"] == true);
    let mut md = String::from("# edgefeed benchmark report\n\n");
    md.push_str(&format!(
        "Command: `{}`. One run, two fresh local stacks one after the other on {} D1 databases (each killed \
         before the next starts): `wrangler dev` (what `./scripts/dev` runs) and the direct stack \
         (`scripts/serve-direct.mjs`: the same Worker, config, local D1, Durable Objects and Queues on workerd \
         through Miniflare's API, without wrangler's proxies). {} cores shared with other work, \
         `FANOUT_MODE=push`, production `FEED_WINDOW`/`FANOUT_CHUNK`/`FANOUT_CONCURRENCY`, rate limits off; \
         {:.0} s in all. Every latency is also given as a multiple of its own stack's health floor (`GET \
         /v1/health`, same client, same run). Feed: one reader following {} authors, {} posts, pages of 20 \
         (page 50 is below the {}-entry window). Hot author: two twin authors on one database, {} followers \
         each on the others (each follower also following {} of {} ordinary authors), {} posts each, \
         `HOT_REPLICA_FOLLOWERS` at that count (production lease and counts refresh); one reconciliation pass \
         promotes one twin while the other is a follower short (no local stack fires the cron), the other gets \
         it right after, and their followers' page 1 is sampled alternately: \"before\" is the twin read from \
         D1, \"after\" the one from its replicas. Targets are judged on the direct stack.\n\n",
        if r["full"] == true { "./scripts/bench --full" } else { "./scripts/bench" },
        r["databases"],
        r["cores"],
        num(&r["total_secs"]),
        sizes.feed_authors,
        sizes.feed_authors * sizes.posts_per_author,
        800,
        hot::followers(sizes.full),
        hot::ORDINARY_FOLLOWED,
        hot::ORDINARY_AUTHORS,
        hot::AUTHOR_POSTS,
    ));
    md.push_str(&load_line(r));
    md.push_str(&side_by_side(r));
    md.push_str(&tooling_share(r));
    md.push_str(&format!("\nwasm, gzipped (< 500 KB): {wasm_kb:.0} KB, {}.\n", verdict(wasm_kb < 500.0)));
    let reads = reads_rows();
    if !reads.is_empty() {
        md.push_str("\nFrom `bench/READS.md` (a separate run of `./scripts/bench reads`):\n\n| scenario | measured |\n|---|---|\n");
        for (name, figure, _) in reads {
            md.push_str(&format!("| {name} | {figure} |\n"));
        }
    }
    md.push_str(&load_summary());
    md.push_str(&unmet_notes(r));
    md.push_str(&floor_notes(r));
    md.push_str(&format!("\nFan-out modes: {}\n", modes_summary()));
    md.push_str("\nRaw figures: `bench/report.json`.\n");
    md
}

/// The mixed load and the soak side by side (`bench/load.json`, from `./scripts/bench load` and
/// `./scripts/bench load --soak`, separate runs), if they exist.
fn load_summary() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/load.json");
    let Some(x) = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return String::new();
    };
    let mut md = String::from(
        "\nFrom `bench/LOAD.md` (separate runs of `./scripts/bench load` and `--soak`, 4 databases; targets: \
         no 5xx, p99 < 1 s, >= 78 req/s, feeds exact):\n\n\
         | run | stack | throughput | p50 / p99 | 5xx | exact afterwards | resident before -> after |\n|---|---|---|---|---|---|---|\n",
    );
    for (mode, label) in [("load", "mixed load"), ("soak", "soak")] {
        let run = &x[mode];
        let sizes = &run["sizes"];
        for s in run["stacks"].as_array().into_iter().flatten() {
            md.push_str(&format!(
                "| {label}, {} clients, {} s | {} | {:.1} req/s | {:.0} / {:.0} ms | {} | feeds {}/{}, likes {}/{} | {:.0} -> {:.0} MiB |\n",
                sizes["clients"],
                sizes["secs"],
                s["stack"].as_str().unwrap_or("?"),
                num(&s["rps"]),
                num(&s["all"]["p50_ms"]),
                num(&s["all"]["p99_ms"]),
                s["server_errors"],
                s["feeds"]["exact"],
                s["feeds"]["checked"],
                s["likes"]["exact"],
                s["likes"]["checked"],
                num(&s["rss"]["before"]["total_kib"]) / 1024.0,
                num(&s["rss"]["after"]["total_kib"]) / 1024.0,
            ));
        }
    }
    md
}

/// For every target not met on the direct stack: where the time goes, measured (the runtime
/// profile behind these notes: docs/operations.md "Where the local runtime's time goes").
fn unmet_notes(r: &Value) -> String {
    let Some(d) = figures(r, "direct").or_else(|| r["stacks"][0].get("figures")) else {
        return String::new();
    };
    let mut notes = Vec::new();
    notes.extend(page1_note(d));
    notes.extend(likes_note(d));
    notes.extend(fanout_note(d));
    if notes.is_empty() {
        return String::new();
    }
    format!("\n## Targets not met on the direct stack: where the time goes\n\n{}\n", notes.join("\n\n"))
}

fn page1_note(d: &Value) -> Option<String> {
    let feed = &d["feed"];
    (num(&feed["page1"]["x_floor_p50"]) > 2.5).then(|| {
        let server = &feed["page1_server"];
        format!(
            "**Feed page 1** ({:.2}x a {:.1} ms floor). Without wrangler's proxy the floor is a bare HTTP hop \
             into workerd, so 2.5x leaves under {:.1} ms for a page that must read the reader's window object \
             and then hydrate on every database holding one of its posts: {} sequential storage round trips. \
             The Worker's own measure is {:.1} ms (D1 {:.1} ms summed over the databases read in parallel, the \
             window {:.1} ms). Locally every D1 query is a call into a Durable Object that runs SQLite behind \
             JavaScript glue on the runtime's one thread, so each round trip costs milliseconds of runtime CPU \
             whatever the query; the profile puts the Worker's own compiled code under a tenth of the \
             runtime's samples. What would close it is not on this machine: in production D1 and the window \
             objects run beside, not inside, the Worker's thread.",
            num(&feed["page1"]["x_floor_p50"]),
            num(&d["floor"]["p50"]),
            2.5 * num(&d["floor"]["p50"]),
            feed["page1_sequential_trips"]["p50"],
            num(&server["total_ms_p50"]),
            num(&server["d1_ms_p50"]),
            num(&server["do_ms_p50"]),
        )
    })
}

fn likes_note(d: &Value) -> Option<String> {
    let likes = &d["likes"];
    (num(&likes["x_health_rps_16"]) < 0.5).then(|| {
        format!(
            "**Hot-post likes, 16 clients** ({:.2}x health; the count is exact). Every request here changes \
             the like state, so each must reach D1; the post's object commits them in groups ({} requests in \
             {} commits), one D1 batch each, serialized per post, and writes the likers' sides after each. \
             {:.0} ops/s is bound by each request's own round trips on the runtime's one thread, not by that \
             chain (\"Against their floors\" below; a single like's server time: {}). Health, which touches \
             nothing, runs {:.0} req/s on the same thread. Write-behind from the object's own storage would \
             lift it and is ruled out: D1 is the truth.",
            num(&likes["x_health_rps_16"]),
            likes["requests_committed"],
            likes["group_commits"],
            num(&likes["rps_16"]),
            split(&likes["single_server"]),
            num(&d["floor"]["rps_16"]),
        )
    })
}

fn fanout_note(d: &Value) -> Option<String> {
    let publish = &d["publish"];
    let rate = num(&publish["window_writes_per_s"]);
    (rate < 3000.0).then(|| {
        let sp = &publish["split"];
        format!(
            "**Fan-out** ({rate:.0} window writes/s). One write is one call to the reader's window object \
             ({:.1} SQL statements and a commit in it) and the consumer keeps FANOUT_CONCURRENCY calls in \
             flight: {:.0} writes took {:.0} ms of window calls, one call {:.1} ms with the others queued \
             behind it on the runtime's single thread, i.e. about {:.2} ms of runtime CPU per write. The \
             SQLite reference (10,600 single-row transactions/s on one core) is the storage alone; here each \
             write also crosses an object boundary (serialization, the JavaScript glue, workerd's RPC) and \
             the profile puts SQLite at under a tenth of the runtime's samples. The window's statements per \
             delivery are issue 29's (one row per delivery); on Cloudflare the objects run on many machines \
             and the rate scales with the consumers.",
            num(&sp["window_statements_per_write"]),
            num(&sp["window_writes"]),
            num(&sp["deliver_ms"]),
            num(&sp["window_call_ms_per_write"]),
            num(&sp["deliver_ms"]) / num(&sp["window_writes"]).max(1.0),
        )
    })
}

/// Where a page, a like and the fan-out stand against the floors they are built of, on the
/// direct stack (the figures' rows: "floors inside the Worker" and below).
fn floor_notes(r: &Value) -> String {
    let Some(d) = figures(r, "direct").or_else(|| r["stacks"][0].get("figures")) else {
        return String::new();
    };
    if d["floors"].is_null() {
        return String::new();
    }
    let notes = [pages_floor_note(d), likes_floor_note(d), fanout_floor_note(d)];
    format!("\n## Against their floors (direct stack)\n\n{}\n", notes.join("\n\n"))
}

fn pages_floor_note(d: &Value) -> String {
    let (f, feed) = (&d["floors"], &d["feed"]);
    let server = &feed["page1_server"];
    format!(
        "**Pages.** Page 1 is {:.2}x its composite floor of {:.1} ms: the hop ({:.2} ms), the first wave (a bare \
         window call {:.2} ms beside a bare batch on the reader's database {:.2} ms) and a bare batch on all {} \
         databases at once ({:.2} ms). Page 50 (the pull below the window, no object call) is {:.2}x its {:.1} ms. \
         The storage round trips are the floor's (2 in series); what sits above it is their contents: the \
         page's server time is {:.0} ms, its D1 batches {:.0} ms summed over the databases (a bare round on \
         every database: {:.2} ms) and its window call {:.0} ms (a bare one: {:.2} ms). Real statements (the \
         window's entries, the posts and their authors' relations hydrated on each database) cost the \
         runtime's one thread several times a `SELECT 1`, and local D1 and object storage commit to the \
         persist directory's disk (docs/operations.md, \"Where the local runtime's time goes\").",
        num(&feed["page1_x_composite"]),
        num(&feed["page1_composite_ms"]),
        num(&f["hop_ms"]),
        num(&f["object_ms"]),
        num(&f["d1_one_ms"]),
        f["databases"],
        num(&f["d1_all_ms"]),
        num(&feed["page50_x_composite"]),
        num(&feed["page50_composite_ms"]),
        num(&server["total_ms_p50"]),
        num(&server["d1_ms_p50"]),
        num(&f["d1_all_ms"]),
        num(&server["do_ms_p50"]),
        num(&f["object_ms"]),
    )
}

fn likes_floor_note(d: &Value) -> String {
    let likes = &d["likes"];
    let rps = num(&likes["rps_16"]);
    let commits_per_s = rps * num(&likes["group_commits"]) / num(&likes["requests_committed"]).max(1.0);
    let series = num(&likes["series_batches_per_s"]);
    format!(
        "**Likes.** 16 clients on one post make {rps:.0} likes/s, {:.2}x the {series:.0} bare batches/s the \
         post's database takes in series. The chain of group commits is not what binds: {} commits for {} \
         requests is {commits_per_s:.0} commits/s, {:.2}x that rate. Every like also costs the Worker the \
         token check's D1 read and the object call, and its group a share of the commit and of one liker-side \
         batch per liker database; locally all of it runs on the one thread the 16 clients share, so the \
         requests' own round trips set the rate. A like alone is {:.2}x its composite floor of {:.1} ms (the \
         hop, an object call, three batches in series: the token check, the commit, the liker side).",
        num(&likes["x_series"]),
        likes["group_commits"],
        likes["requests_committed"],
        commits_per_s / series,
        num(&likes["single_x_composite"]),
        num(&likes["single_composite_ms"]),
    )
}

fn fanout_floor_note(d: &Value) -> String {
    let p = &d["publish"];
    let sp = &p["split"];
    let calls = num(&p["object_calls_per_s"]);
    format!(
        "**Fan-out.** {:.0} window writes/s is {:.2}x the {calls:.0} bare calls/s the same {} readers' objects \
         take with {} in flight: a bare call costs the runtime about {:.2} ms, a window write about {:.2} ms \
         ({:.0} ms of window calls for {:.0} writes). The difference is the write itself: {:.1} SQL statements \
         in the object and its storage commit, which locally goes to the persist directory's disk (on tmpfs \
         a window write takes about half as long: docs/operations.md).",
        num(&p["window_writes_per_s"]),
        num(&p["x_object_rate"]),
        p["followers_big"],
        p["object_concurrency"],
        1000.0 / calls,
        num(&sp["deliver_ms"]) / num(&sp["window_writes"]).max(1.0),
        num(&sp["deliver_ms"]),
        num(&sp["window_writes"]),
        num(&sp["window_statements_per_write"]),
    )
}
