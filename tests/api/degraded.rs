//! Degraded reads: when the reader's window object fails, the feed answers from D1 alone (the
//! pull path), complete and in order, with `state: "rebuilding"`, and its cursors keep working
//! once the window is back. Also the empty-feed reasons that need a failure or a filter to show.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

/// The reader's window object fails its next `times` feed reads (`0` heals it).
fn window_fault(reader: &User, times: u32) {
    let body = json!({ "reader_id": reader.id, "times": times });
    admin("POST", "/v1/admin/test/window_fault", Some(&body)).expect(200);
}

fn page(reader: &User, query: &str) -> Value {
    reader.get(&format!("/v1/feed{query}")).expect(200)
}

fn items(page: &Value) -> Vec<String> {
    ids(page["items"].as_array().expect("items"))
}

#[test]
fn a_full_scroll_through_a_failed_window_is_complete_and_its_cursor_works_when_it_is_back() {
    let authors: Vec<User> = (0..3).map(|_| register("dg_author")).collect();
    let reader = register("dg_reader");
    for a in &authors {
        reader.follow(a);
    }
    activate(&reader);
    let mut published = Vec::new();
    for i in 0..25 {
        published.push(id_of(&authors[i % 3].publish(&format!("post {i}"), "public")));
    }
    poll("every post in the reader's window", DEADLINE, || {
        (window_ids(&reader).len() == published.len()).then_some(())
    });
    let expected: Vec<String> = published.iter().rev().cloned().collect();
    assert_eq!(ids(&collect_pages(&reader, "/v1/feed?limit=10")), expected, "healthy scroll");

    window_fault(&reader, 1_000);
    // The whole scroll while the window is down: from D1 alone, complete, in order.
    let mut seen = Vec::new();
    let mut query = "?limit=7".to_string();
    loop {
        let p = page(&reader, &query);
        assert_eq!(p["state"], "rebuilding", "{p}");
        seen.extend(items(&p));
        match p["next_cursor"].as_str() {
            Some(c) => query = format!("?limit=7&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, expected, "degraded scroll");
    // Newer-than reads degrade the same way.
    let oldest_cursor = page(&reader, "?limit=20")["next_cursor"].as_str().unwrap().to_string();
    let up = page(&reader, &format!("?after={oldest_cursor}&limit=30"));
    assert_eq!(up["state"], "rebuilding");
    assert_eq!(items(&up), expected[..19].to_vec(), "strictly above the 20th");

    // Two pages while down, then the window is back: the degraded cursor continues exactly.
    let first = page(&reader, "?limit=10");
    let second = page(&reader, &format!("?limit=10&cursor={}", first["next_cursor"].as_str().unwrap()));
    assert_eq!(second["state"], "rebuilding");
    window_fault(&reader, 0);
    let third = page(&reader, &format!("?limit=10&cursor={}", second["next_cursor"].as_str().unwrap()));
    assert_eq!(third["state"], "ok", "{third}");
    let mut joined = items(&first);
    joined.extend(items(&second));
    joined.extend(items(&third));
    assert_eq!(joined, expected);
    assert_eq!(third["next_cursor"], Value::Null);
}

#[test]
fn an_empty_page_says_rebuilding_when_the_window_is_down_and_nothing_else_answers() {
    let reader = register("dg_empty");
    activate(&reader);
    window_fault(&reader, 1);
    let p = page(&reader, "");
    assert_eq!(
        (p["state"].clone(), p["empty_reason"].clone()),
        (json!("rebuilding"), json!("rebuilding")),
        "{p}"
    );
    // Healed (the fault fired once): the same reader's empty feed is for the usual reason.
    let p = page(&reader, "");
    assert_eq!((p["state"].clone(), p["empty_reason"].clone()), (json!("ok"), json!("no_follows")), "{p}");
}

#[test]
fn an_empty_page_says_all_filtered_when_every_candidate_was_hidden() {
    let author = register("dg_hidden_author");
    let reader = register("dg_hidden_reader");
    reader.follow(&author);
    activate(&reader);
    let posts: Vec<String> =
        (0..3).map(|i| id_of(&author.publish(&format!("soon hidden {i}"), "public"))).collect();
    poll("the posts in the reader's window", DEADLINE, || {
        posts.iter().all(|p| window_ids(&reader).contains(p)).then_some(())
    });
    // A suspension keeps the window entries (for reinstatement); reads hide them.
    let body = json!({ "reason": "spam", "operator": "test-op" });
    admin("POST", &format!("/v1/admin/users/{}/suspend", author.id), Some(&body)).expect(200);
    let p = page(&reader, "?limit=10");
    assert_eq!(p["items"], json!([]), "{p}");
    assert_eq!(p["empty_reason"], "all_filtered", "{p}");
    assert_eq!(p["state"], "ok");
}
