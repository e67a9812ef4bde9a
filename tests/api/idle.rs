//! Idle windows: a reader who has not read for `WINDOW_IDLE_DAYS` (30 by default) has their
//! window object's storage deleted by its alarm; their next read rebuilds the window from D1,
//! with no gap and no duplicate.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn window(reader: &User) -> Value {
    admin("POST", "/v1/admin/test/window", Some(&json!({ "reader_id": reader.id }))).expect(200)
}

fn age(reader: &User, days: u64) {
    admin("POST", "/v1/admin/test/age_reader", Some(&json!({ "reader_id": reader.id, "days": days })))
        .expect(200);
}

fn run_alarm(reader: &User) -> Value {
    admin("POST", "/v1/admin/test/window_alarm", Some(&json!({ "reader_id": reader.id }))).expect(200)
}

fn entries(w: &Value) -> usize {
    w["post_ids"].as_array().map_or(0, Vec::len)
}

/// A reader following one author who published `posts` posts, with their window built by a
/// first read; returns the posts, newest first.
fn reader_with_window(prefix: &str, posts: usize) -> (User, User, Vec<String>) {
    let author = register(&format!("{prefix}_author"));
    let reader = register(&format!("{prefix}_reader"));
    reader.follow(&author);
    let mut ids: Vec<String> =
        (0..posts).map(|i| id_of(&author.publish(&format!("{prefix} {i}"), "public"))).collect();
    ids.reverse();
    wait_drained(&author);
    reader.get("/v1/feed?limit=10").expect(200);
    let w = window(&reader);
    assert_eq!(w["initialized"], true, "{w}");
    assert_eq!(entries(&w), posts, "{w}");
    (author, reader, ids)
}

#[test]
fn an_idle_readers_window_is_deleted_and_rebuilt_from_d1_on_return() {
    let (author, reader, mut expected) = reader_with_window("idle", 30);
    let full_bytes = window(&reader)["database_bytes"].as_u64().unwrap();

    age(&reader, 31);
    let evicted = poll("the idle window's storage to be deleted", DEADLINE, || {
        let w = window(&reader);
        (w["initialized"] == false && entries(&w) == 0).then_some(w)
    });
    let left_bytes = evicted["database_bytes"].as_u64().unwrap();
    eprintln!("idle window of 30 entries: {full_bytes} bytes before eviction, {left_bytes} after");
    assert!(left_bytes < full_bytes, "{left_bytes} < {full_bytes}");

    // Fan-out keeps reaching the evicted window (push mode): kept until a rebuild merges them.
    let newer: Vec<String> =
        (0..2).map(|i| id_of(&author.publish(&format!("while away {i}"), "public"))).collect();
    wait_drained(&author);
    let refilled = window(&reader);
    assert_eq!(refilled["initialized"], false, "{refilled}");
    let mut kept: Vec<String> = newer.iter().rev().cloned().collect();
    assert_eq!(refilled["post_ids"], json!(kept), "deliveries into the evicted window are kept");
    eprintln!("  with 2 deliveries since (schema made again): {} bytes", refilled["database_bytes"]);
    kept.append(&mut expected);
    let expected = kept;

    let items = collect_pages(&reader, "/v1/feed?limit=10");
    assert_eq!(ids(&items), expected, "every post exactly once, newest first");
    let seen: HashSet<String> = ids(&items).into_iter().collect();
    assert_eq!(seen.len(), 32);
    let rebuilt = window(&reader);
    assert_eq!(rebuilt["initialized"], true, "{rebuilt}");
    assert_eq!(rebuilt["post_ids"].as_array().unwrap().len(), 32, "{rebuilt}");
    // The rebuilt window is checked again a whole period after this read: not idle now.
    let report = run_alarm(&reader);
    assert_eq!(report["evicted"], false, "{report}");
}

#[test]
fn a_reader_away_for_less_than_the_idle_period_keeps_their_window() {
    let (_author, reader, expected) = reader_with_window("away", 12);
    let before = window(&reader);
    age(&reader, 10);
    let report = run_alarm(&reader);
    assert_eq!(report["evicted"], false, "{report}");
    let wake_at = report["wake_at"].as_i64().expect("the next check is scheduled");
    let day_ms = 86_400_000;
    let in_days = (wake_at - now_secs() * 1000) as f64 / day_ms as f64;
    assert!((19.9..=20.1).contains(&in_days), "the next check in ~20 days, not {in_days:.2}");
    let after = window(&reader);
    assert_eq!((&after["initialized"], &after["post_ids"]), (&before["initialized"], &before["post_ids"]));
    assert_eq!(ids(&collect_pages(&reader, "/v1/feed?limit=5")), expected);
}

/// The storage an idle reader's window frees: a full window (`FEED_WINDOW` entries: 300 on the
/// suite's server, the production 800 with `EDGEFEED_PROFILE=bench`) before and after eviction.
/// Prints the figures (run with `--nocapture`).
#[test]
fn a_full_idle_window_frees_its_storage() {
    let cap = if std::env::var("EDGEFEED_PROFILE").as_deref() == Ok("bench") { 800 } else { FEED_WINDOW };
    let author = register("full_idle_author");
    let reader = register("full_idle_reader");
    reader.follow(&author);
    let posts = cap + 20;
    let imported = parallel(6, posts, {
        let author = author.clone();
        move |i| {
            let at = format!("2026-02-01T{:02}:{:02}:{:02}.000Z", i / 3600, (i / 60) % 60, i % 60);
            id_of(&import_post(&author, &format!("full {i}"), "public", &at))
        }
    });
    assert_eq!(imported.len(), posts);
    wait_drained(&author);
    reader.get("/v1/feed?limit=10").expect(200);
    let full = window(&reader);
    assert_eq!(entries(&full), cap, "a full window");
    let full_bytes = full["database_bytes"].as_u64().unwrap();

    age(&reader, 31);
    let evicted = poll("the idle window's storage to be deleted", DEADLINE, || {
        let w = window(&reader);
        (w["initialized"] == false).then_some(w)
    });
    let left_bytes = evicted["database_bytes"].as_u64().unwrap();
    eprintln!(
        "idle window of {cap} entries: {full_bytes} bytes before eviction, {left_bytes} after \
         ({} bytes freed)",
        full_bytes - left_bytes
    );
    assert!(left_bytes * 4 < full_bytes, "{left_bytes} bytes left of {full_bytes}");
    // The feed is whole again on return.
    assert_eq!(collect_pages(&reader, "/v1/feed?limit=100").len(), posts);
    assert_eq!(entries(&window(&reader)), cap);
}

#[test]
fn an_open_live_socket_and_its_valid_ticket_keep_an_idle_window() {
    let (_author, reader, _) = reader_with_window("idle_live", 3);
    let socket = live_connect(&reader);
    let connected_at = now_secs();
    age(&reader, 31);
    let report = run_alarm(&reader);
    assert_eq!(report["evicted"], false, "a socket is open: {report}");
    assert_eq!(window(&reader)["initialized"], true);
    drop(socket);
    // Once the socket is gone the ticket it used (valid for 60 s) still keeps the window: it
    // must not be forgotten while it could be used again. The check then comes when it expires.
    let report = poll("the closed socket to be gone", DEADLINE, || {
        let report = run_alarm(&reader);
        let wake_at = report["wake_at"].as_i64()?;
        (wake_at <= (connected_at + 61) * 1000).then_some(report)
    });
    assert_eq!(report["evicted"], false, "{report}");
    assert_eq!(window(&reader)["initialized"], true);
}
