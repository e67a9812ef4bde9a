//! The fan-out consumer within its D1 budget per invocation, black-box against a server of its
//! own with a lowered budget (`FANOUT_INVOCATION_STATEMENTS`, the platform allows 1,000 D1
//! queries per invocation) and small chunks: a batch with more work than the budget still
//! delivers every post exactly once, and no invocation spent more than the budget. A binary of
//! its own because its server's `[vars]` differ from the HTTP suite's.

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::*;

const DEADLINE: Duration = Duration::from_secs(120);
/// A lowered budget: one chunk reserves 61 statements and the batch's flush 40, so an
/// invocation runs 4 chunks and re-sends the rest of its batch.
const BUDGET: i64 = 300;
const CHUNK: usize = 3;

fn setup() {
    let vars = [
        ("FANOUT_MODE", "push".to_string()),
        ("FANOUT_CHUNK", CHUNK.to_string()),
        ("FANOUT_INVOCATION_STATEMENTS", BUDGET.to_string()),
    ];
    let vars = vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    init_server(ServerOptions { label: "fanout".into(), vars, port: None });
}

fn counter(name: &str) -> i64 {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    stats["counters"][name].as_i64().unwrap_or(0)
}

/// The author's post events by post id: `(state, delivered)`.
fn events(author: &User) -> Vec<(String, String, i64)> {
    let outbox = outbox_of(author);
    let rows = outbox["events"].as_array().cloned().unwrap_or_default();
    rows.iter()
        .filter(|e| e["kind"] == "post")
        .map(|e: &Value| {
            let post = e["post_id"].as_u64().map(|n| n.to_string()).unwrap_or_default();
            (post, e["state"].as_str().unwrap_or("").to_string(), e["delivered"].as_i64().unwrap_or(-1))
        })
        .collect()
}

#[test]
fn a_batch_over_the_budget_delivers_everything_once_and_no_invocation_exceeds_it() {
    setup();
    let readers: Vec<User> = parallel(6, 10, |_| {
        let reader = register("fb_reader");
        activate(&reader);
        reader
    });
    let authors: Vec<User> = (0..4).map(|_| register("fb_author")).collect();
    for author in &authors {
        for reader in &readers {
            reader.follow(author);
        }
        poll("the follows mirrored on the author's side", DEADLINE, || {
            (author.profile()["followers_count"] == readers.len()).then_some(())
        });
    }
    let deferred_before = counter("fanout_deferred");
    // Eight posts at once: 8 events of 4 chunks each (10 followers, chunks of 3), far more
    // work queued together than one invocation's budget allows.
    let posts: Vec<String> = parallel(8, 8, {
        let authors = authors.clone();
        move |i| id_of(&authors[i % authors.len()].publish("over the budget", "public"))
    });
    let started = Instant::now();
    poll("every post in every follower's window", DEADLINE, || {
        readers
            .iter()
            .all(|r| {
                let window: BTreeSet<String> = window_ids(r).into_iter().collect();
                posts.iter().all(|p| window.contains(p))
            })
            .then_some(())
    });
    println!("8 posts x 10 followers, chunks of {CHUNK}: last window after {:?}", started.elapsed());
    for author in &authors {
        wait_drained(author);
        for (post, state, delivered) in events(author) {
            assert_eq!(state, "done", "{post}");
            // Each chunk adds its readers once: a chunk run twice would count them twice.
            assert_eq!(delivered, readers.len() as i64, "post {post} delivered exactly once per follower");
        }
    }
    for reader in &readers {
        let window = window_ids(reader);
        let unique: BTreeSet<&String> = window.iter().collect();
        assert_eq!(unique.len(), window.len(), "no post twice in a window");
    }
    let max = counter("fanout_invocation_statements_max");
    assert!((1..=BUDGET).contains(&max), "the most one invocation spent: {max}");
    let deferred = counter("fanout_deferred") - deferred_before;
    assert!(deferred > 0, "batches over the budget handed messages back: {deferred}");
    println!("budget {BUDGET}: at most {max} D1 statements per invocation; {deferred} messages re-sent");
}
