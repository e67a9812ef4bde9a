//! The data-plane hop (issue 40, item 1): the same feed workload on one Worker script binding
//! every D1 database and on a front Worker reaching them over service bindings to data scripts
//! (ARCHITECTURE.md "More than one Worker script"), both stacks running at once, requests
//! alternating between them so the machine's load falls on both alike. Per stack: the health
//! floor, feed page 1's latency (p50 / p90, client side and the Worker's own `total` and `d1`
//! durations from `Server-Timing`), its statements, round trips, sequential round trips and
//! rows read; then the ratios.
//!
//! Workload on each stack: a reader following 12 authors (homes spread over the 4 databases by
//! their ids), 5 imported posts each, older than the in-flight horizon, so every page is the
//! window plus one hydration round.
//!
//! Run: `./scripts/bench scripts` (`cargo test --test hop -- --ignored --nocapture`: a test
//! binary, ignored by the suite, so it builds in the test profile; prints a table;
//! `BENCH_SAMPLES=N`, default 60).

#[path = "../common/mod.rs"]
mod common;

use std::time::Instant;

use common::*;

const DATABASES: usize = 4;
const PER_SCRIPT: usize = 2;
const AUTHORS: usize = 12;
const POSTS_PER_AUTHOR: usize = 5;

/// One feed read's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    client_ms: f64,
    total_ms: f64,
    d1_ms: f64,
    statements: u32,
    trips: u32,
    sequential: u32,
    rows_read: u64,
}

/// The number just before `what` in a `Server-Timing` header.
fn count_before(header: &str, what: &str) -> u64 {
    let end = header.find(what).unwrap_or(0);
    let digits: String = header[..end].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
    digits.chars().rev().collect::<String>().parse().unwrap_or(0)
}

/// The `dur=` of the metric named `name` (`total`, `d1`).
fn dur_of(header: &str, name: &str) -> f64 {
    let metric = header.split(", ").find(|m| m.starts_with(&format!("{name};")));
    let dur = metric.and_then(|m| m.split(';').find_map(|p| p.strip_prefix("dur=")));
    dur.and_then(|d| d.parse().ok()).unwrap_or(0.0)
}

fn rows_read(header: &str) -> u64 {
    header
        .split(", ")
        .filter(|m| m.starts_with("d1-") && m.contains("rows read"))
        .map(|m| count_before(m, " rows read"))
        .sum()
}

/// A reader on `server` following authors with posts; returns the reader.
fn workload(server: &Server) -> User {
    talk_to(server);
    let reader = register("hop_reader");
    let created = |i: usize| rfc3339(now_secs() - 600 - i as i64);
    for a in 0..AUTHORS {
        let author = register("hop_author");
        for p in 0..POSTS_PER_AUTHOR {
            import_post(&author, &format!("post {p} of {a}"), "public", &created(a * POSTS_PER_AUTHOR + p));
        }
        reader.follow(&author);
    }
    activate(&reader);
    // Warm: the window built, the isolate's caches filled.
    for _ in 0..5 {
        reader.get("/v1/feed?limit=20").expect(200);
    }
    reader
}

/// RFC 3339 UTC for a Unix time in seconds (no date crate in the tests).
fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3_600, rem / 60 % 60, rem % 60)
}

fn feed_sample(server: &Server, reader: &User) -> Sample {
    talk_to(server);
    let start = Instant::now();
    let resp = reader.get("/v1/feed?limit=20");
    let client_ms = start.elapsed().as_secs_f64() * 1_000.0;
    assert_eq!(resp.status, 200, "feed: {}", resp.body);
    assert!(resp.body["items"].as_array().is_some_and(|items| !items.is_empty()), "an empty feed page");
    let header = resp.server_timing.clone().unwrap_or_default();
    Sample {
        client_ms,
        total_ms: dur_of(&header, "total"),
        d1_ms: dur_of(&header, "d1"),
        statements: count_before(&header, " statements in") as u32,
        trips: count_before(&header, " round trips\"") as u32,
        sequential: count_before(&header, " sequential round trips") as u32,
        rows_read: rows_read(&header),
    }
}

fn health_ms(server: &Server) -> f64 {
    talk_to(server);
    let start = Instant::now();
    call("GET", "/v1/health", None, None).expect(200);
    start.elapsed().as_secs_f64() * 1_000.0
}

fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

struct Figures {
    floor_p50: f64,
    client_p50: f64,
    client_p90: f64,
    total_p50: f64,
    d1_p50: f64,
    statements: f64,
    trips: f64,
    sequential: f64,
    rows_read: f64,
}

fn figures(samples: &[Sample], floor: &[f64]) -> Figures {
    let pick = |f: fn(&Sample) -> f64| samples.iter().map(f).collect::<Vec<_>>();
    let mean = |f: fn(&Sample) -> f64| samples.iter().map(f).sum::<f64>() / samples.len().max(1) as f64;
    Figures {
        floor_p50: percentile(floor, 0.5),
        client_p50: percentile(&pick(|s| s.client_ms), 0.5),
        client_p90: percentile(&pick(|s| s.client_ms), 0.9),
        total_p50: percentile(&pick(|s| s.total_ms), 0.5),
        d1_p50: percentile(&pick(|s| s.d1_ms), 0.5),
        statements: mean(|s| f64::from(s.statements)),
        trips: mean(|s| f64::from(s.trips)),
        sequential: mean(|s| f64::from(s.sequential)),
        rows_read: mean(|s| s.rows_read as f64),
    }
}

#[test]
#[ignore = "a measurement: ./scripts/bench scripts"]
fn the_data_plane_hop_per_feed_page() {
    let samples: usize = std::env::var("BENCH_SAMPLES").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let started = Instant::now();
    let one = start_server_scripts(ServerOptions::suite(), DATABASES, None);
    let split = start_server_scripts(ServerOptions::suite(), DATABASES, Some(PER_SCRIPT));
    eprintln!("[{:4.0} s] both stacks up", started.elapsed().as_secs_f64());
    let readers = [workload(&one), workload(&split)];
    eprintln!("[{:4.0} s] workloads ready", started.elapsed().as_secs_f64());
    let stacks = [&one, &split];
    let mut feed: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    let mut floor: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for i in 0..samples {
        // Alternate which stack goes first, so neither always follows the other.
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for s in order {
            floor[s].push(health_ms(stacks[s]));
            feed[s].push(feed_sample(stacks[s], &readers[s]));
        }
    }
    let [a, b] = [figures(&feed[0], &floor[0]), figures(&feed[1], &floor[1])];
    println!(
        "\nFeed page 1 (limit 20, {AUTHORS} followed authors, {DATABASES} D1 databases), {samples} reads per stack, alternating:\n"
    );
    println!(
        "| | one script ({DATABASES} D1 bindings) | front + {} data scripts ({PER_SCRIPT} each) | ratio |",
        DATABASES / PER_SCRIPT
    );
    println!("|---|---:|---:|---:|");
    let row = |name: &str, x: f64, y: f64| {
        let ratio = if x > 0.0 { format!("{:.2}", y / x) } else { "-".into() };
        println!("| {name} | {x:.1} | {y:.1} | {ratio} |");
    };
    row("health floor p50 (ms, client)", a.floor_p50, b.floor_p50);
    row("feed p50 (ms, client)", a.client_p50, b.client_p50);
    row("feed p90 (ms, client)", a.client_p90, b.client_p90);
    row("feed p50 (ms, Worker total)", a.total_p50, b.total_p50);
    row("feed p50 (ms, D1 round trips summed)", a.d1_p50, b.d1_p50);
    row("feed p50 minus floor (ms, client)", a.client_p50 - a.floor_p50, b.client_p50 - b.floor_p50);
    row("D1 statements / page", a.statements, b.statements);
    row("D1 round trips / page", a.trips, b.trips);
    row("sequential storage round trips / page", a.sequential, b.sequential);
    row("D1 rows read / page", a.rows_read, b.rows_read);
    eprintln!("[{:4.0} s] done", started.elapsed().as_secs_f64());
    one.kill();
    split.kill();
}
