//! End-to-end figures for the fan-out pipeline and the like serializer, measured over HTTP
//! against a real `wrangler dev` (local workerd, D1, Durable Objects, Queues) with the
//! production FEED_WINDOW / FANOUT_CHUNK. Run: `./scripts/bench` (or `cargo bench --bench pipeline`
//! after `./scripts/build`). Machines are shared and noisy: read the ratios, not the absolutes.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// Registers `n` users who follow `authors` and have read their feed once (active windows).
fn followers(n: usize, authors: &[&User], threads: usize) -> Vec<User> {
    let out = Arc::new(Mutex::new(Vec::new()));
    let per = n.div_ceil(threads);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let out = out.clone();
            let authors: Vec<User> = authors.iter().map(|a| (*a).clone()).collect();
            thread::spawn(move || {
                for _ in (t * per)..((t + 1) * per).min(n) {
                    let u = register("bf");
                    for a in &authors {
                        u.follow(a);
                    }
                    u.get("/v1/feed?limit=1").expect(200);
                    out.lock().unwrap().push(u);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    Arc::try_unwrap(out).unwrap().into_inner().unwrap()
}

/// The author's recent events; retried if local workerd restarts the isolate mid-request.
fn outbox(author: &User) -> Value {
    loop {
        let r = admin("POST", "/v1/admin/test/outbox", Some(&json!({ "author_id": author.id })));
        if r.status == 200 {
            return r.body;
        }
        eprintln!("outbox poll answered {}: {}", r.status, r.body);
        thread::sleep(Duration::from_millis(500));
    }
}

/// Waits for the author's events to finish. Cron triggers do not fire under `wrangler dev`,
/// so this plays the cron's part: every 5 s of waiting it runs the reconciliation pass, which
/// resends events that made no progress for OUTBOX_GRACE_SECONDS (2 s here). The run reports
/// how often that was needed.
fn wait_drained(author: &User) {
    let mut last_sweep = Instant::now();
    while outbox(author)["pending"] != 0 {
        thread::sleep(Duration::from_millis(50));
        if last_sweep.elapsed() > Duration::from_secs(5) {
            admin("POST", "/v1/admin/reconcile", None).expect(200);
            last_sweep = Instant::now();
        }
    }
}

fn window_has(reader: &User, post_id: &str) -> bool {
    let w = admin("POST", "/v1/admin/test/window", Some(&json!({ "reader_id": reader.id }))).expect(200);
    w["post_ids"].as_array().unwrap().iter().any(|v| v == post_id)
}

/// Publishes and returns (post id, publish response time).
fn timed_publish(author: &User, body: &str) -> (String, Duration) {
    let t = Instant::now();
    let post = author.publish(body, "public");
    (post["id"].as_str().unwrap().to_string(), t.elapsed())
}

fn main() {
    std::env::set_var("EDGEFEED_PROFILE", "bench");
    let big_n: usize = std::env::var("BENCH_BIG_FOLLOWERS").ok().and_then(|v| v.parse().ok()).unwrap_or(5000);
    let mid_n: usize = 1000.min(big_n);
    let started = Instant::now();
    server();
    println!("# edgefeed pipeline benchmark (one run; FANOUT_CHUNK=500, FEED_WINDOW=800)\n");

    let big = register("bench_big");
    let mid = register("bench_mid");
    let small = register("bench_small");
    let mid_followers = followers(mid_n, &[&big, &mid], 16);
    let _rest = followers(big_n - mid_n, &[&big], 16);
    let small_reader = followers(1, &[&small], 1).remove(0);
    println!("setup: {} users in {:.0} s\n", big_n + 1, started.elapsed().as_secs_f64());
    let _ = mid_followers;

    // 1. Publish latency by follower count (fan-out is asynchronous).
    let mut publish = Vec::new();
    for (name, author, n) in
        [("1 follower", &small, 15), ("1,000 followers", &mid, 15), ("5,000 followers", &big, 5)]
    {
        let mut t = Vec::new();
        for i in 0..n {
            let (_, d) = timed_publish(author, &format!("latency {i}"));
            t.push(ms(d));
            wait_drained(author);
        }
        publish.push((name, pct(&t, 50.0)));
    }
    println!("## publish response time (p50)");
    for (name, p50) in &publish {
        println!("- author with {name}: {p50:.1} ms ({:.2}x the 1-follower author)", p50 / publish[0].1);
    }

    // 2. Publish-to-visible for a 1,000-follower author (server samples: outbox commit -> last
    //    window written), and deliveries per second through the consumer.
    let before = admin("GET", "/v1/admin/stats", None).expect(200);
    let mut client_side = Vec::new();
    for i in 0..20 {
        let t = Instant::now();
        timed_publish(&mid, &format!("visible {i}"));
        wait_drained(&mid);
        client_side.push(ms(t.elapsed()));
    }
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    // Server side: outbox commit -> the event's last chunk recorded (every window has it).
    let server_side: Vec<f64> = outbox(&mid)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "post")
        .take(20) // newest first: the 20 just published
        .filter_map(|e| Some((e["done_at"].as_i64()? - e["created_at"].as_i64()?) as f64))
        .collect();
    println!("\n## publish-to-visible, 1,000-follower author (20 posts, one at a time)");
    println!(
        "- server (outbox commit -> every follower's window has it): p50 {:.0} ms, p99 {:.0} ms",
        pct(&server_side, 50.0),
        pct(&server_side, 99.0)
    );
    println!(
        "- client (publish -> outbox done, polled every 50 ms): p50 {:.0} ms, p99 {:.0} ms",
        pct(&client_side, 50.0),
        pct(&client_side, 99.0)
    );
    let delivered = stats["deliveries"].as_i64().unwrap() - before["deliveries"].as_i64().unwrap();
    let secs: f64 = client_side.iter().sum::<f64>() / 1000.0;
    println!(
        "- consumer throughput: {delivered} window deliveries in {secs:.1} s = {:.0} deliveries/s",
        delivered as f64 / secs
    );

    let t = Instant::now();
    timed_publish(&big, "big fan-out");
    wait_drained(&big);
    let big_secs = t.elapsed().as_secs_f64();
    println!("- 5,000-follower fan-out: {big_secs:.1} s = {:.0} deliveries/s", (big_n + 1) as f64 / big_secs);

    // 3. Fairness: does a 5,000-follower fan-out delay a small author's post?
    let small_visible = |label: &str| -> f64 {
        let t = Instant::now();
        let (id, _) = timed_publish(&small, label);
        while !window_has(&small_reader, &id) {
            thread::sleep(Duration::from_millis(20));
        }
        ms(t.elapsed())
    };
    let idle: Vec<f64> = (0..5).map(|i| small_visible(&format!("idle {i}"))).collect();
    let mut busy = Vec::new();
    for i in 0..3 {
        timed_publish(&big, &format!("big again {i}"));
        thread::sleep(Duration::from_millis(300));
        busy.push(small_visible(&format!("busy {i}")));
        wait_drained(&big);
    }
    println!("\n## fairness: small author's publish-to-visible (its reader's window has the post)");
    println!("- queue idle: p50 {:.0} ms", pct(&idle, 50.0));
    println!(
        "- during a 5,000-follower fan-out: p50 {:.0} ms ({:.2}x idle; that fan-out alone takes {:.0} ms)",
        pct(&busy, 50.0),
        pct(&busy, 50.0) / pct(&idle, 50.0),
        big_secs * 1000.0
    );

    // 4. Likes on one hot post.
    let hot = big.publish("hot post", "public");
    let path = format!("/v1/posts/{}/like", hot["id"].as_str().unwrap());
    let likers: Vec<User> = (0..100).map(|_| register("bench_liker")).collect();
    let single: Vec<f64> = (0..40)
        .map(|i| {
            let t = Instant::now();
            if i % 2 == 0 {
                likers[0].put(&path, None).expect(200)
            } else {
                likers[0].delete(&path).expect(200)
            };
            ms(t.elapsed())
        })
        .collect();
    let t = Instant::now();
    let burst_likers = Arc::new(likers.clone());
    let burst_path = path.clone();
    let per_user = parallel(likers.len(), likers.len(), move |k| {
        let u = &burst_likers[k];
        (0..10)
            .map(|i| {
                let s = Instant::now();
                if i % 2 == 0 {
                    u.put(&burst_path, None).expect(200)
                } else {
                    u.delete(&burst_path).expect(200)
                };
                ms(s.elapsed())
            })
            .collect::<Vec<f64>>()
    });
    let burst_secs = t.elapsed().as_secs_f64();
    let lat: Vec<f64> = per_user.into_iter().flatten().collect();
    println!("\n## likes on one hot post");
    println!("- one user, sequential: p50 {:.1} ms, p99 {:.1} ms", pct(&single, 50.0), pct(&single, 99.0));
    println!(
        "- 100 users x 10 requests, 100 concurrent: {:.0} like ops/s; p50 {:.1} ms, p99 {:.1} ms ({:.2}x / {:.2}x the sequential p50)",
        lat.len() as f64 / burst_secs,
        pct(&lat, 50.0),
        pct(&lat, 99.0),
        pct(&lat, 50.0) / pct(&single, 50.0),
        pct(&lat, 99.0) / pct(&single, 50.0)
    );
    let final_count =
        big.get(&format!("/v1/posts/{}", hot["id"].as_str().unwrap())).expect(200)["like_count"].clone();
    println!("- final like_count {final_count} (every user ended on unlike: expected 0)");
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    println!(
        "\nreconciliation resent {} stalled outbox events during the run (dead letters: {})",
        stats["reconcile"]["outbox_resent"], stats["fanout"]["dead_letters"]
    );
    println!("total bench time {:.0} s", started.elapsed().as_secs_f64());
}
