//! A post whose fan-out is late stays in the feed for as long as it is late: the read merges it
//! from D1 from its author's in-flight horizon (`store/feed.rs`, `in_flight_horizon`), not for a
//! fixed time. The suite's server sets that fixed cushion to `IN_FLIGHT` (production: 120 s), so
//! "longer than the old horizon" takes seconds here; an hour-old stall is simulated by moving
//! the post and its event an hour into the past.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

/// Every attempt at the author's post fan-out fails (the queue retries, then dead-letters it),
/// until [`release`]: an outage of the pipeline for this author only.
fn stall(author: &User) {
    let name = format!("stall_fanout:{}", author.id);
    admin("POST", "/v1/admin/test/fault", Some(&json!({ "name": name, "times": 1000 }))).expect(200);
}

/// Ends the outage and delivers the stalled post late (a replay, as an operator's would).
fn release(author: &User, post: &Value) {
    let name = format!("stall_fanout:{}", author.id);
    admin("POST", "/v1/admin/test/fault", Some(&json!({ "name": name, "times": 0 }))).expect(200);
    admin("POST", "/v1/admin/test/replay", Some(&json!({ "post_id": id_of(post) }))).expect(200);
}

fn post_event_state(author: &User, post: &Value) -> String {
    let outbox = outbox_of(author);
    let events = outbox["events"].as_array().expect("events");
    let event = events.iter().find(|e| e["kind"] == "post" && e["post_id"] == post["id"]);
    event.map_or_else(String::new, |e| e["state"].as_str().unwrap_or("").to_string())
}

fn whole_feed(reader: &User, limit: usize) -> Vec<String> {
    ids(&collect_pages(reader, &format!("/v1/feed?limit={limit}")))
}

fn after(reader: &User, cursor: &str) -> Vec<String> {
    ids(reader.get(&format!("/v1/feed?after={cursor}")).expect(200)["items"].as_array().unwrap())
}

fn wait_in_window(reader: &User, post: &Value) {
    poll("the late post in the reader's window", DEADLINE, || {
        window_ids(reader).contains(&id_of(post)).then_some(())
    });
}

/// Reader follows two authors and has a window; `b` has one delivered post.
fn setup(prefix: &str) -> (User, User, User, Value) {
    let a = register(&format!("{prefix}_a"));
    let b = register(&format!("{prefix}_b"));
    let reader = register(&format!("{prefix}_r"));
    reader.follow(&a);
    reader.follow(&b);
    activate(&reader);
    let b1 = b.publish("delivered before the outage", "public");
    wait_in_window(&reader, &b1);
    (a, b, reader, b1)
}

#[test]
fn a_stalled_post_stays_in_the_feed_past_the_old_horizon_for_reads_after_and_the_socket() {
    let (a, b, reader, b1) = setup("ifl");
    let mut socket = live_connect(&reader);
    let before = reader.get("/v1/feed").expect(200);
    assert_eq!(ids(before["items"].as_array().unwrap()), vec![id_of(&b1)]);
    let newest_before = before["newest_cursor"].as_str().unwrap().to_string();

    stall(&a);
    let stalled = a.publish("published during the outage", "public");
    let published = Instant::now();
    assert_eq!(whole_feed(&reader, 10), vec![id_of(&stalled), id_of(&b1)], "in the feed at once");
    // Older than the fixed cushion, and still not delivered.
    poll("the stalled post older than the old horizon", DEADLINE, || {
        (published.elapsed() > IN_FLIGHT * 3).then_some(())
    });
    assert_ne!(post_event_state(&a, &stalled), "done");
    assert!(!window_ids(&reader).contains(&id_of(&stalled)), "the fault stalled the fan-out");
    assert_eq!(whole_feed(&reader, 10), vec![id_of(&stalled), id_of(&b1)], "still there, once");
    assert_eq!(whole_feed(&reader, 1), vec![id_of(&stalled), id_of(&b1)], "scrolling one by one");
    assert_eq!(after(&reader, &newest_before), vec![id_of(&stalled)], "?after= does not skip it");

    // A later post is delivered and announced; reading after the event's cursor brings both.
    let b2 = b.publish("delivered while the other is stalled", "public");
    let event = socket.next_event(DEADLINE);
    assert_eq!(event["type"], "new_posts", "{event}");
    let cursor = event["newest_cursor"].as_str().unwrap();
    assert_eq!(
        after(&reader, cursor),
        vec![id_of(&b2), id_of(&stalled)],
        "the socket's cursor skips nothing"
    );
    assert_eq!(after(&reader, &newest_before), vec![id_of(&b2), id_of(&stalled)]);

    // The late delivery changes nothing the reader sees: once, in order.
    release(&a, &stalled);
    wait_in_window(&reader, &stalled);
    let expected = vec![id_of(&b2), id_of(&stalled), id_of(&b1)];
    assert_eq!(whole_feed(&reader, 10), expected);
    assert_eq!(whole_feed(&reader, 1), expected);
    assert_eq!(after(&reader, &newest_before), vec![id_of(&b2), id_of(&stalled)]);
    let window = window_ids(&reader);
    assert_eq!(window.iter().filter(|id| **id == id_of(&stalled)).count(), 1, "{window:?}");
}

#[test]
fn an_hour_old_stall_is_still_merged_in_order_and_once() {
    let (a, b, reader, b1) = setup("ifh");
    let b2 = b.publish("second delivered", "public");
    wait_in_window(&reader, &b2);
    stall(&a);
    let stalled = a.publish("stalled for an hour", "public");
    let aged = admin(
        "POST",
        "/v1/admin/test/age_post",
        Some(&json!({ "post_id": id_of(&stalled), "seconds": 3600 })),
    )
    .expect(200);
    assert_eq!(aged["aged"], 1, "{aged}");
    // Now the oldest post of the feed, an hour below everything else.
    let expected = vec![id_of(&b2), id_of(&b1), id_of(&stalled)];
    for limit in [1, 2, 10] {
        assert_eq!(whole_feed(&reader, limit), expected, "pages of {limit}");
    }
    let first = reader.get("/v1/feed?limit=2").expect(200);
    assert_eq!(first["state"], "ok");
    assert_ne!(post_event_state(&a, &stalled), "done");

    release(&a, &stalled);
    wait_in_window(&reader, &stalled);
    for limit in [1, 2, 10] {
        assert_eq!(whole_feed(&reader, limit), expected, "after the late delivery, pages of {limit}");
    }
}
