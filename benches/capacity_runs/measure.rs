//! The measured per-operation cost table (`./scripts/bench capacity --measure` ->
//! `bench/costs.json`): real operations against local stacks on 4 D1 databases, each
//! request's `Server-Timing` (D1 statements, rows read and written per database, object calls,
//! queue messages, round trips) plus the background work it caused in the queue consumer
//! (`PROFILE_IO` counters in the stats, per database, read before and after the fan-out
//! drained). Actors live on `DB_1`, the other party on `DB_2`/`DB_3`, so every figure lands
//! in one role: home, other, control (`DB_0`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;
use crate::placement::{shard_map, Pool};
use edgefeed_capacity::model::{Bytes, Costs, OpCost, PathCosts, WindowRows, Work};
use edgefeed_capacity::timing::{timing_of, Timing};

pub const DATABASES: usize = 4;
const HOME: usize = 1;
const OTHERS: [usize; 2] = [2, 3];
const SAMPLES: usize = 10;
/// Messages per consumer batch (`max_batch_size` in wrangler.toml), for the model.
/// Readers per chunk on the measuring stack: small, so a publish to 32 followers spans
/// several chunks and the per-chunk cost can be told from the per-reader one.
pub const MEASURE_CHUNK: &str = "8";
const CONSUMER_BATCH: usize = 10;
/// Authors of the measured reader, per database it follows on (home and the two others).
const AUTHORS_PER_DB: usize = 6;
const POSTS_PER_AUTHOR: usize = 5;
/// Imported posts are this old: past the in-flight horizon, so a page is window + hydration.
const POST_AGE_SECS: i64 = 600;
/// Entities of each kind created to measure their bytes (D1 files grow in 4 KB pages).
const BYTES_SAMPLE: usize = 300;
const LIKES_PER_POST: usize = 5;
/// Feed reads before the measured ones.
const WARM_UP_READS: usize = 20;
/// The window measurement: a full window (`FEED_WINDOW` 800) and this many deliveries to it,
/// enough for its trims (a block of entries dropped every ~50) to be in the mean.
const WINDOW_CAP: usize = 800;
const WINDOW_DELIVERIES: usize = 150;

/// The consumer's per-database counters (`profile_io` in the stats).
fn profile() -> BTreeMap<String, f64> {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    let map = stats["profile_io"].as_object().cloned().unwrap_or_default();
    map.into_iter().map(|(k, v)| (k, v.as_f64().unwrap_or(0.0))).collect()
}

/// Background work between two profiles.
#[derive(Debug, Clone, Default)]
struct Background {
    /// The batches' own work per database (their flushes of figures taken out).
    per_db: Vec<Work>,
    do_calls: f64,
    queue_messages: f64,
    /// Consumer batches run, and the statements their flushes of figures sent.
    runs: f64,
    flush_statements: f64,
}

fn background(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> Background {
    let delta =
        |name: &str| after.get(name).copied().unwrap_or(0.0) - before.get(name).copied().unwrap_or(0.0);
    let flush = |i: usize| delta(&format!("io_fanout_db{i}_flush_statements"));
    let per_db = (0..DATABASES)
        .map(|i| Work {
            statements: delta(&format!("io_fanout_db{i}_statements")) - flush(i),
            rows_read: delta(&format!("io_fanout_db{i}_rows_read")),
            rows_written: delta(&format!("io_fanout_db{i}_rows_written")),
        })
        .collect();
    Background {
        per_db,
        do_calls: delta("io_fanout_do_calls"),
        queue_messages: delta("io_fanout_queue_messages"),
        runs: delta("io_fanout_runs"),
        flush_statements: (0..DATABASES).map(flush).sum(),
    }
}

/// Waits until no outbox event is pending on any database.
pub fn drained() {
    // The cron does not fire under `wrangler dev`: reconcile every 20 s while waiting, as it
    // would, so an event whose message was lost is resent.
    let started = Instant::now();
    let mut kicked = 0;
    poll("every outbox drained", Duration::from_secs(120), || {
        let stats = admin("GET", "/v1/admin/stats", None).expect(200);
        if started.elapsed() > Duration::from_secs(20 * (kicked + 1)) {
            kicked += 1;
            admin("POST", "/v1/admin/reconcile", None).expect(200);
        }
        (stats["outbox"]["pending"] == 0).then_some(())
    });
}

/// An operation's samples: request figures and the background each caused.
#[derive(Default)]
pub struct Samples {
    pub requests: Vec<Timing>,
    background: Vec<Background>,
}

impl Samples {
    /// Runs `op` (which returns its response) with the fan-out it causes drained after it.
    pub fn run(&mut self, op: impl FnOnce() -> Resp) {
        let before = profile();
        let r = op();
        assert!(r.status < 300, "measured request failed: {} {}", r.status, r.body);
        self.requests.push(timing_of(r.server_timing.as_deref().unwrap_or("")));
        drained();
        self.background.push(background(&before, &profile()));
    }

    pub fn mean(values: impl Iterator<Item = f64>) -> f64 {
        let v: Vec<f64> = values.collect();
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    }

    fn mean_work(items: impl Iterator<Item = Work> + Clone) -> Work {
        Work {
            statements: Self::mean(items.clone().map(|w| w.statements)),
            rows_read: Self::mean(items.clone().map(|w| w.rows_read)),
            rows_written: Self::mean(items.map(|w| w.rows_written)),
        }
    }

    /// Mean work per database, request and background summed.
    pub fn per_db(&self, with_background: bool) -> Vec<Work> {
        (0..DATABASES)
            .map(|i| {
                let request = Self::mean_work(self.requests.iter().map(|t| t.per_db[i].0));
                let bg = Self::mean_work(self.background.iter().map(|b| b.per_db[i]));
                if with_background {
                    request.plus(bg)
                } else {
                    request
                }
            })
            .collect()
    }

    /// The operation's cost by role: home `DB_1`, other `DB_2`/`DB_3` (their mean, per
    /// database touched), control `DB_0`. `others_touched`: how many of the two it touches.
    fn cost(&self, others_touched: f64, with_background: bool) -> OpCost {
        let per_db = self.per_db(with_background);
        let others = OTHERS.iter().fold(Work::default(), |acc, &i| acc.plus(per_db[i]));
        let other = if others_touched > 0.0 { others.scale(1.0 / others_touched) } else { Work::default() };
        let bg_calls =
            if with_background { Self::mean(self.background.iter().map(|b| b.do_calls)) } else { 0.0 };
        let bg_messages =
            if with_background { Self::mean(self.background.iter().map(|b| b.queue_messages)) } else { 0.0 };
        // Wall time less the waits: the databases run side by side (the slowest one's time)
        // and object calls mostly beside them, so this is a rough upper bound on CPU.
        let mut cpu: Vec<f64> =
            self.requests.iter().map(|t| (t.total_ms - t.slowest_db_ms - t.do_ms).max(0.0)).collect();
        cpu.sort_by(f64::total_cmp);
        let do_calls = Self::mean(self.requests.iter().map(|t| t.do_calls));
        // The consumer's own statements on the control database are its batches' flushes of
        // figures, which the model charges per batch (`consumer_flush`): only the request's
        // count here.
        OpCost {
            home: per_db[HOME],
            other,
            control: self.per_db(false)[0],
            do_calls: do_calls + bg_calls,
            do_ms: Self::mean(self.requests.iter().map(|t| t.do_ms)) / do_calls.max(1.0),
            queue_messages: Self::mean(self.requests.iter().map(|t| t.queue_messages)) + bg_messages,
            subrequests: Self::mean(self.requests.iter().map(|t| t.subrequests)),
            cpu_ms: cpu.get(cpu.len() / 2).copied().unwrap_or(0.0),
        }
    }

    /// Raw means per database, for the JSON.
    pub fn raw(&self) -> Value {
        let per = |bg: bool| -> Vec<Value> {
            self.per_db(bg).iter().map(|w| json!([w.statements, w.rows_read, w.rows_written])).collect()
        };
        json!({
            "n": self.requests.len(),
            "request_per_db_statements_rows_read_rows_written": per(false),
            "with_background_per_db": per(true),
        })
    }
}

/// The reader on `DB_1` and its authors on `DB_1`..`DB_3`, posts imported and followed.
fn feed_setup(pool: &mut Pool, prefix: &str) -> User {
    let reader = pool.users_on(&[HOME]).remove(0);
    let homes: Vec<usize> =
        [HOME, OTHERS[0], OTHERS[1]].iter().flat_map(|&db| [db; AUTHORS_PER_DB]).collect();
    let authors = std::sync::Arc::new(pool.users_on(&homes));
    let now = now_secs();
    let a = authors.clone();
    let n = authors.len();
    let label = prefix.to_string();
    parallel(8, n * POSTS_PER_AUTHOR, move |i| {
        let at = edgefeed::domain::time::format_rfc3339((now - POST_AGE_SECS - (i as i64) * 37) * 1000);
        import_post(&a[i % n], &format!("{label} {i}"), "public", &at);
    });
    activate(&reader);
    for author in authors.iter() {
        reader.follow(author);
    }
    drained();
    reader
}

/// Page 1 and page 2 of the reader's feed, `SAMPLES` each.
fn measure_feed(reader: &User) -> (OpCost, OpCost, Value) {
    // A new reader's first reads move its read rate (copied onto its edges); a steady
    // reader's rarely. Measure the steady one.
    for _ in 0..WARM_UP_READS {
        reader.get("/v1/feed?limit=20").expect(200);
    }
    drained();
    let (mut first, mut later) = (Samples::default(), Samples::default());
    for _ in 0..SAMPLES {
        let mut cursor = String::new();
        first.run(|| {
            let r = reader.get("/v1/feed?limit=20");
            cursor = r.body["next_cursor"].as_str().unwrap_or_default().to_string();
            r
        });
        later.run(|| reader.get(&format!("/v1/feed?limit=20&cursor={cursor}")));
    }
    let fixed = |s: &Samples| {
        // The table keeps a page's subrequests besides the other databases' batches (the
        // model adds one per other database a page touches).
        let mut cost = s.cost(2.0, true);
        let other_trips =
            Samples::mean(s.requests.iter().map(|t| OTHERS.iter().map(|&i| t.per_db[i].1).sum::<f64>()));
        cost.subrequests -= other_trips;
        cost
    };
    // The reader's rate copies are background rows written on the authors' databases (the
    // other databases' share of it: the reads themselves write nothing there).
    let copies = |s: &Samples| -> Vec<f64> {
        s.background.iter().map(|b| OTHERS.iter().map(|&i| b.per_db[i].rows_written).sum()).collect()
    };
    let copied: Vec<f64> = copies(&first).into_iter().chain(copies(&later)).collect();
    let rate_copy_rows = Samples::mean(copied.into_iter());
    let raw =
        json!({ "page1": first.raw(), "page2": later.raw(), "rate_copy_rows_per_read": rate_copy_rows });
    (fixed(&first), fixed(&later), raw)
}

fn publish_with_followers(pool: &mut Pool, followers: usize) -> Samples {
    let author = pool.users_on(&[HOME]).remove(0);
    let homes: Vec<usize> = (0..followers).map(|i| OTHERS[i % 2]).collect();
    for reader in pool.users_on(&homes) {
        activate(&reader);
        reader.follow(&author);
    }
    drained();
    let mut samples = Samples::default();
    for i in 0..SAMPLES / 2 {
        samples.run(|| {
            author.post("/v1/posts", json!({ "body": format!("measured {i}"), "visibility": "public" }))
        });
    }
    samples
}

/// A publish's background work per database, and its object calls and queue messages.
fn background_of(s: &Samples) -> (Vec<Work>, f64, f64) {
    let (all, request) = (s.per_db(true), s.per_db(false));
    let per_db = all.iter().zip(&request).map(|(a, r)| a.plus(r.scale(-1.0))).collect();
    let calls = Samples::mean(s.background.iter().map(|b| b.do_calls));
    let messages = Samples::mean(s.background.iter().map(|b| b.queue_messages));
    (per_db, calls, messages)
}

/// `a - b * k`, database by database, with the calls and messages.
fn minus(a: &(Vec<Work>, f64, f64), b: &(Vec<Work>, f64, f64), k: f64) -> (Vec<Work>, f64, f64) {
    let per_db = a.0.iter().zip(&b.0).map(|(x, y)| x.plus(y.scale(-k))).collect();
    (per_db, a.1 - b.1 * k, a.2 - b.2 * k)
}

fn scaled(a: &(Vec<Work>, f64, f64), k: f64) -> (Vec<Work>, f64, f64) {
    (a.0.iter().map(|w| w.scale(k)).collect(), a.1 * k, a.2 * k)
}

/// By role: the author's database is home; the readers' (`DB_2`, `DB_3`) are summed and
/// divided by `others`.
fn by_role(a: &(Vec<Work>, f64, f64), others: f64) -> OpCost {
    let readers = OTHERS.iter().fold(Work::default(), |acc, &i| acc.plus(a.0[i]));
    OpCost {
        home: a.0[HOME],
        other: readers.scale(1.0 / others),
        control: a.0[0],
        do_calls: a.1,
        queue_messages: a.2,
        ..OpCost::default()
    }
}

/// Publish, and its fan-out split three ways (with `MEASURE_CHUNK` readers per chunk): per
/// delivered reader (4 against 8 followers, one chunk each), per chunk (8 against 32, one
/// chunk against four) and per post (what 4 followers cost beyond those).
fn measure_publish(pool: &mut Pool) -> (OpCost, OpCost, OpCost, OpCost, Work, Value) {
    let [four, eight, many] = [4usize, 8, 32].map(|k| publish_with_followers(pool, k));
    let request = eight.cost(0.0, false);
    let [b4, b8, b32] = [&four, &eight, &many].map(background_of);
    let reader = scaled(&minus(&b8, &b4, 1.0), 1.0 / 4.0);
    let chunk = scaled(&minus(&minus(&b32, &b8, 1.0), &reader, 24.0), 1.0 / 3.0);
    let mut post = minus(&minus(&b4, &reader, 4.0), &chunk, 1.0);
    post.0[0] = Work::default(); // its batches' flushes: `consumer_flush`
                                 // A reader is on one of the two readers' databases; a chunk of 8 touches both.
    let per_reader = OpCost { subrequests: 1.0, control: Work::default(), ..by_role(&reader, 1.0) };
    let per_chunk = by_role(&chunk, 2.0);
    let per_post = OpCost { queue_messages: post.2 + request.queue_messages, ..by_role(&post, 1.0) };
    let raw = json!({ "followers_4": four.raw(), "followers_8": eight.raw(), "followers_32": many.raw() });
    // Every batch flushes the figures it counted, on a database picked at random.
    let (flushed, runs) = [&four, &eight, &many]
        .iter()
        .flat_map(|s| s.background.iter())
        .fold((0.0, 0.0), |acc, b| (acc.0 + b.flush_statements, acc.1 + b.runs));
    let flush = Work { statements: flushed / runs.max(1.0), ..Work::default() };
    (request, per_post, per_chunk, per_reader, flush, raw)
}

/// Posts by an author on `DB_2`, for likes and comments.
fn posts_on_other(pool: &mut Pool, n: usize) -> Vec<String> {
    let author = pool.users_on(&[OTHERS[0]]).remove(0);
    (0..n).map(|i| id_of(&author.publish(&format!("to engage with {i}"), "public"))).collect()
}

fn measure_like_and_comment(pool: &mut Pool) -> (OpCost, OpCost, Value) {
    let posts = posts_on_other(pool, SAMPLES);
    drained();
    let fan = pool.users_on(&[HOME]).remove(0);
    let (mut likes, mut comments) = (Samples::default(), Samples::default());
    for post in &posts {
        likes.run(|| fan.put(&format!("/v1/posts/{post}/like"), None));
        comments.run(|| fan.post(&format!("/v1/posts/{post}/comments"), json!({ "body": "measured" })));
    }
    // The post's database is the only other one touched (DB_2): `cost` halves the sum of
    // DB_2 and DB_3, so ask for one database touched.
    (
        likes.cost(1.0, true),
        comments.cost(1.0, true),
        json!({ "like": likes.raw(), "comment": comments.raw() }),
    )
}

/// The delivery paths beyond an original post (#39): a boost, a reply, a quote of a post on
/// `DB_2`, and a post mentioning (publicly, or directly) an account on `DB_2`, each by a user
/// on `HOME`. Each touches the one other database, as a like does.
fn measure_paths(pool: &mut Pool) -> (PathCosts, Value) {
    let posts = posts_on_other(pool, SAMPLES * 3);
    let mentioned = pool.users_on(&[OTHERS[0]]).remove(0);
    drained();
    let actor = pool.users_on(&[HOME]).remove(0);
    let mut samples: [Samples; 5] = Default::default();
    let [boosts, replies, quotes, mentions, directs] = &mut samples;
    for i in 0..SAMPLES {
        let (a, b, c) = (&posts[3 * i], &posts[3 * i + 1], &posts[3 * i + 2]);
        boosts.run(|| actor.put(&format!("/v1/posts/{a}/repost"), None));
        replies.run(|| actor.post("/v1/posts", json!({ "body": "measured reply", "in_reply_to": b })));
        quotes.run(|| actor.post("/v1/posts", json!({ "body": "measured quote", "quote_of": c })));
        let text = format!("hello @{} ({i})", mentioned.handle);
        mentions.run(|| actor.post("/v1/posts", json!({ "body": text, "visibility": "public" })));
        directs.run(|| actor.post("/v1/posts", json!({ "body": text, "visibility": "private" })));
    }
    let paths = PathCosts {
        boost: boosts.cost(1.0, true),
        reply: replies.cost(1.0, true),
        quote: quotes.cost(1.0, true),
        mention: mentions.cost(1.0, true),
        direct: directs.cost(1.0, true),
    };
    let raw = json!({
        "boost": boosts.raw(),
        "reply": replies.raw(),
        "quote": quotes.raw(),
        "mention": mentions.raw(),
        "direct": directs.raw(),
    });
    (paths, raw)
}

fn measure_follow(pool: &mut Pool) -> (OpCost, Value) {
    let followers = pool.users_on(&[HOME; SAMPLES]);
    let authors = pool.users_on(&[OTHERS[0]; SAMPLES]);
    let now = now_secs();
    for (i, author) in authors.iter().enumerate() {
        let at = edgefeed::domain::time::format_rfc3339((now - POST_AGE_SECS - i as i64) * 1000);
        import_post(author, "followed author's post", "public", &at);
    }
    let mut follows = Samples::default();
    for (follower, author) in followers.iter().zip(&authors) {
        activate(follower);
        follows.run(|| follower.put(&format!("/v1/me/following/{}", author.id), None));
    }
    (follows.cost(1.0, true), json!({ "follow": follows.raw() }))
}

fn measure_cron() -> (OpCost, Value) {
    let mut passes = Samples::default();
    for _ in 0..SAMPLES / 2 {
        passes.run(|| admin_resp("POST", "/v1/admin/reconcile"));
    }
    let per_db = passes.per_db(false);
    let each = [HOME, OTHERS[0], OTHERS[1]]
        .iter()
        .fold(Work::default(), |acc, &i| acc.plus(per_db[i]))
        .scale(1.0 / 3.0);
    let extra = per_db[0].plus(each.scale(-1.0));
    let clamp = |x: f64| x.max(0.0);
    let control = Work {
        statements: clamp(extra.statements),
        rows_read: clamp(extra.rows_read),
        rows_written: clamp(extra.rows_written),
    };
    // Subrequests per database visited (the model multiplies by P).
    let all = passes.cost(2.0, false);
    let cost = OpCost { home: each, control, subrequests: all.subrequests / DATABASES as f64, ..all };
    (cost, json!({ "cron_pass": passes.raw() }))
}

pub fn admin_resp(method: &str, path: &str) -> Resp {
    call(method, path, Some(ADMIN_TOKEN), None)
}

/// The total D1 size over every database (bytes).
fn total_size() -> f64 {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    stats["databases"]
        .as_array()
        .map_or(0.0, |dbs| dbs.iter().map(|d| d["size_bytes"].as_f64().unwrap_or(0.0)).sum())
}

/// Bytes per stored entity: the databases' growth over `n` of each, created in bulk.
fn measure_bytes(pool: &mut Pool) -> (Bytes, Value) {
    let n = BYTES_SAMPLE;
    let grow = |what: &str, count: usize, work: &mut dyn FnMut()| {
        drained();
        let before = total_size();
        work();
        drained();
        let grown = (total_size() - before) / count as f64;
        eprintln!("  bytes per {what}: {grown:.0}");
        grown
    };
    let homes: Vec<usize> = (0..n).map(|i| [HOME, OTHERS[0], OTHERS[1]][i % 3]).collect();
    let mut users = Vec::new();
    let user = grow("user", n, &mut || users = pool.users_on(&homes));
    let users = std::sync::Arc::new(users);
    let u = users.clone();
    let follow = grow("follow", n, &mut || {
        parallel(8, n, {
            let u = u.clone();
            move |i| u[i].follow(&u[(i + 1) % n])
        });
    });
    let mut posts = Vec::new();
    let u = users.clone();
    let post = grow("post", n, &mut || {
        let now = now_secs();
        let u = u.clone();
        posts = parallel(8, n, move |i| {
            let at = edgefeed::domain::time::format_rfc3339((now - POST_AGE_SECS - i as i64) * 1000);
            id_of(&import_post(
                &u[i],
                &format!("a post of about the length people write, number {i}"),
                "public",
                &at,
            ))
        });
    });
    let posts = std::sync::Arc::new(posts);
    let (u, p) = (users.clone(), posts.clone());
    // Small rows: five likes per post, so the growth spans enough pages to read.
    let like = grow("like", LIKES_PER_POST * n, &mut || {
        parallel(8, LIKES_PER_POST * n, {
            let (u, p) = (u.clone(), p.clone());
            move |i| {
                u[(i / n + 1 + i % n) % n].put(&format!("/v1/posts/{}/like", p[i % n]), None).expect(200);
            }
        });
    });
    let (u, p) = (users.clone(), posts.clone());
    let comment = grow("comment", n, &mut || {
        parallel(8, n, {
            let (u, p) = (u.clone(), p.clone());
            move |i| {
                u[(i + 3) % n]
                    .post(&format!("/v1/posts/{}/comments", p[i]), json!({ "body": "a short reply" }))
                    .expect(201);
            }
        });
    });
    // A window entry (post id, sort key, author, version) in the object's SQLite table with
    // its index: from the schema (objects/window_sql.rs); object storage is not visible here.
    let window_entry = 64.0;
    let bytes = Bytes { user, follow, post, like, comment, window_entry };
    (bytes, json!({ "entities_each": n }))
}

/// A fresh stack on 4 databases in `mode`, profiling on, test hooks off (they would add a
/// statement per announce), production window and chunk sizes, no rate limits.
pub fn start(label: &str, mode: &str, chunk: &str) -> Server {
    let vars = [
        ("FANOUT_MODE", mode),
        ("RATE_LIMITS", "false"),
        ("TEST_HOOKS", "false"),
        ("PROFILE_IO", "true"),
        ("FEED_WINDOW", "800"),
        ("FANOUT_CHUNK", chunk),
    ];
    let vars = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let server = start_server_on(ServerOptions { label: label.into(), vars, port: None }, DATABASES);
    talk_to(&server);
    server
}

/// The stats' counters (the Worker's tallies, written by the stats read itself).
fn counters() -> BTreeMap<String, f64> {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    let map = stats["counters"].as_object().cloned().unwrap_or_default();
    map.into_iter().map(|(k, v)| (k, v.as_f64().unwrap_or(0.0))).collect()
}

/// Rows a full window's object reads and writes per delivery and per page read, from the
/// object's SQL cursors (each reply carries its op's counts; the Worker tallies them with
/// `PROFILE_IO`, which the measuring stack sets). The reader follows one author with more
/// posts than the cap, so its first read builds a full window; then the author publishes
/// [`WINDOW_DELIVERIES`] posts.
pub fn measure_window(pool: &mut Pool) -> (WindowRows, Value) {
    let author = std::sync::Arc::new(pool.users_on(&[HOME]).remove(0));
    let reader = pool.users_on(&[OTHERS[0]]).remove(0);
    let now = now_secs();
    let a = author.clone();
    parallel(8, WINDOW_CAP + 20, move |i| {
        let at = edgefeed::domain::time::format_rfc3339((now - POST_AGE_SECS - (i as i64) * 7) * 1000);
        import_post(&a, &format!("window {i}"), "public", &at);
    });
    reader.follow(&author);
    drained();
    reader.get("/v1/feed?limit=20").expect(200); // builds the window: a full snapshot
    let before = counters();
    for i in 0..WINDOW_DELIVERIES {
        author
            .post("/v1/posts", json!({ "body": format!("delivered {i}"), "visibility": "public" }))
            .expect(201);
    }
    drained();
    let middle = counters();
    type Counts = BTreeMap<String, f64>;
    fn grew(from: &Counts, to: &Counts, k: &str) -> f64 {
        to.get(k).copied().unwrap_or(0.0) - from.get(k).copied().unwrap_or(0.0)
    }
    fn per(from: &Counts, to: &Counts, prefix: &str, n: f64) -> Work {
        Work {
            statements: grew(from, to, &format!("{prefix}_statements")) / n,
            rows_read: grew(from, to, &format!("{prefix}_rows_read")) / n,
            rows_written: grew(from, to, &format!("{prefix}_rows_written")) / n,
        }
    }
    // Page 1 (which records the reader's read) and page 2 apart, each between two counts.
    let (mut first, mut later, mut reads) = (Work::default(), Work::default(), [0.0; 2]);
    for _ in 0..SAMPLES {
        let start = counters();
        let page = reader.get("/v1/feed?limit=20").expect(200);
        let between = counters();
        let cursor = page["next_cursor"].as_str().unwrap_or_default().to_string();
        reader.get(&format!("/v1/feed?limit=20&cursor={cursor}")).expect(200);
        let end = counters();
        first = first.plus(per(&start, &between, "feed_window", 1.0));
        later = later.plus(per(&between, &end, "feed_window", 1.0));
        reads[0] += grew(&start, &between, "feed_window_reads");
        reads[1] += grew(&between, &end, "feed_window_reads");
    }
    let ops = grew(&before, &middle, "fanout_window_ops").max(1.0);
    let rows = WindowRows {
        delivery: per(&before, &middle, "fanout_window", ops),
        page_read: first.scale(1.0 / reads[0].max(1.0)),
        page_n_read: Some(later.scale(1.0 / reads[1].max(1.0))),
    };
    (rows, json!({ "window_ops": ops, "page_reads": reads[0], "page_n_reads": reads[1], "cap": WINDOW_CAP }))
}

/// Measures the window alone on a fresh push stack (`--measure-window`).
pub fn run_window() -> (WindowRows, Value) {
    let server = start("capacity-window", "push", MEASURE_CHUNK);
    let (_, map) = shard_map();
    let measured = measure_window(&mut Pool::new(map, DATABASES));
    server.kill();
    measured
}

/// Only the delivery paths' requests (`--measure-paths`), on a push stack of their own.
pub fn run_paths() -> (PathCosts, Value) {
    let server = start("capacity-paths", "push", MEASURE_CHUNK);
    let (_, map) = shard_map();
    let measured = measure_paths(&mut Pool::new(map, DATABASES));
    server.kill();
    measured
}

/// Measures every operation; returns the table and the raw figures.
pub fn run() -> (Costs, Value) {
    let started = Instant::now();
    let phase = |what: &str| eprintln!("[{:5.0} s] {what}", started.elapsed().as_secs_f64());
    phase("push stack: starting");
    let server = start("capacity-push", "push", MEASURE_CHUNK);
    let (_, map) = shard_map();
    let mut pool = Pool::new(map, DATABASES);
    phase("bytes per entity (first: a fresh database has no free pages to fill)");
    let (bytes, bytes_raw) = measure_bytes(&mut pool);
    phase("feed pages (push)");
    let reader = feed_setup(&mut pool, "push");
    let (push1, push_n, feed_raw) = measure_feed(&reader);
    phase("publish and fan-out");
    let (publish, fanout_post, fanout_chunk, fanout_reader, consumer_flush, publish_raw) =
        measure_publish(&mut pool);
    phase("likes and comments");
    let (like, comment, engage_raw) = measure_like_and_comment(&mut pool);
    phase("boosts, replies, quotes, mentions, direct posts");
    let (paths, paths_raw) = measure_paths(&mut pool);
    phase("follows");
    let (follow, follow_raw) = measure_follow(&mut pool);
    phase("cron pass");
    let (cron_pass, cron_raw) = measure_cron();
    phase("window rows");
    let (window, window_raw) = measure_window(&mut pool);
    server.kill();
    phase("pull stack: starting");
    let server = start("capacity-pull", "pull", "500");
    let (_, map) = shard_map();
    let mut pool = Pool::new(map, DATABASES);
    phase("feed pages (pull)");
    let reader = feed_setup(&mut pool, "pull");
    let (pull1, pull_n, pull_raw) = measure_feed(&reader);
    server.kill();
    phase("replicas stack: a hot author's pages, lease renewals, rebuilds, publishes");
    let (replica, replica_raw) = super::replicas::run();
    phase("timelines stack: public and tag pages, index writes, trends, refreshes");
    let (timelines, timelines_raw) = super::timelines::run();
    phase("done");
    let costs = Costs {
        feed_push_page1: push1,
        feed_push_page_n: push_n,
        feed_pull_page1: pull1,
        feed_pull_page_n: pull_n,
        publish,
        fanout_post,
        fanout_chunk,
        fanout_reader,
        like,
        comment,
        follow,
        cron_pass,
        bytes,
        consumer_batch: CONSUMER_BATCH as f64,
        consumer_flush,
        rate_copy_rows_per_read: feed_raw["rate_copy_rows_per_read"].as_f64().unwrap_or(0.0),
        window,
        replica,
        paths,
        timelines,
    };
    let raw = json!({
        "feed_push": feed_raw,
        "feed_pull": pull_raw,
        "publish": publish_raw,
        "engagement": engage_raw,
        "paths": paths_raw,
        "follow": follow_raw,
        "cron": cron_raw,
        "bytes": bytes_raw,
        "window": window_raw,
        "replica": replica_raw,
        "timelines": timelines_raw,
        "secs": started.elapsed().as_secs_f64(),
    });
    (costs, raw)
}
