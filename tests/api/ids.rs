//! Snowflake ids: creation time in the high bits, random low bits, below 2^53.

use std::collections::HashSet;

use serde_json::{json, Value};

use edgefeed::domain::ids::MAX_ID;
use edgefeed::domain::snowflake::snowflake_time;
use edgefeed::domain::time::parse_rfc3339;

use crate::common::*;

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

fn num(v: &Value) -> i64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("not a decimal id string: {v}"))
}

fn created_ms(v: &Value) -> i64 {
    parse_rfc3339(v["created_at"].as_str().unwrap()).unwrap()
}

/// Every id is a valid id whose time bits are the item's `created_at`, and ids sort like
/// `created_at` (ties within one millisecond may go either way).
#[track_caller]
fn assert_time_ordered(items: &[Value]) {
    for item in items {
        let id = num(&item["id"]);
        assert!((1..=MAX_ID).contains(&id), "{id} is below 2^53");
        assert_eq!(snowflake_time(id), created_ms(item), "time bits of {id} are its created_at");
    }
    for a in items {
        for b in items {
            if created_ms(a) < created_ms(b) {
                assert!(num(&a["id"]) < num(&b["id"]), "{} is older than {}", a["id"], b["id"]);
            }
        }
    }
}

#[test]
fn users_registered_back_to_back_get_time_based_non_consecutive_ids() {
    let before = now_ms();
    let users: Vec<User> = (0..4).map(|_| register("snow")).collect();
    let after = now_ms();
    let ids: Vec<i64> = users.iter().map(|u| u.id.parse().unwrap()).collect();
    for (user, id) in users.iter().zip(&ids) {
        assert!((1..=MAX_ID).contains(id));
        let t = snowflake_time(*id);
        assert!(before - 2_000 <= t && t <= after + 2_000, "time bits {t} within [{before}, {after}]");
        assert_eq!(t, created_ms(&user.profile()), "time bits are the user's created_at");
    }
    for pair in ids.windows(2) {
        assert!(pair[0] < pair[1], "later registrations sort later: {ids:?}");
        assert!(pair[1] - pair[0] > 1, "not consecutive, so they cannot be walked: {ids:?}");
    }
}

#[test]
fn post_and_comment_ids_sort_like_their_created_at() {
    let author = register("snow_author");
    let posts: Vec<Value> = (0..6).map(|i| author.publish(&format!("snow {i}"), "public")).collect();
    assert_time_ordered(&posts);
    let post_path = format!("/v1/posts/{}", posts[0]["id"].as_str().unwrap());
    let comments: Vec<Value> = (0..4)
        .map(|i| {
            author.post(&format!("{post_path}/comments"), json!({ "body": format!("c{i}") })).expect(201)
        })
        .collect();
    assert_time_ordered(&comments);
    let listed = collect_pages(&author, &format!("/v1/users/{}/posts?limit=2", author.id));
    // A comment is its author's reply post: listed with their posts.
    let mut expected: Vec<(i64, i64)> =
        posts.iter().chain(&comments).map(|p| (created_ms(p), num(&p["id"]))).collect();
    expected.sort_by(|a, b| b.cmp(a));
    let got: Vec<(i64, i64)> = listed.iter().map(|p| (created_ms(p), num(&p["id"]))).collect();
    assert_eq!(got, expected, "newest first by (created_at, id)");
}

#[test]
fn imported_posts_from_1970_and_1971_get_small_ids_and_page_in_time_order() {
    let author = register("snow_old");
    let reader = register("snow_reader");
    reader.follow(&author);
    let newer: Vec<Value> = (0..2).map(|i| author.publish(&format!("today {i}"), "public")).collect();
    let y1971 = import_post(&author, "from 1971", "public", "1971-01-01T00:00:00.000Z");
    let epoch = import_post(&author, "from the epoch", "public", "1970-01-01T00:00:00.000Z");
    let old_id = num(&y1971["id"]);
    assert_eq!(snowflake_time(old_id), 31_536_000_000);
    assert!(old_id < 1 << 46, "a 1971 id is small: {old_id}");
    assert!((1..2048).contains(&num(&epoch["id"])), "the epoch's millisecond: {}", epoch["id"]);
    assert!(newer.iter().all(|p| num(&p["id"]) > 1 << 50), "today's ids are large");
    assert_time_ordered(&[newer[0].clone(), newer[1].clone(), y1971.clone(), epoch.clone()]);
    let want = vec![
        newer[1]["id"].as_str().unwrap().to_string(),
        newer[0]["id"].as_str().unwrap().to_string(),
        y1971["id"].as_str().unwrap().to_string(),
        epoch["id"].as_str().unwrap().to_string(),
    ];
    let listed = collect_pages(&reader, &format!("/v1/users/{}/posts?limit=1", author.id));
    assert_eq!(ids(&listed), want, "author list, one per page");
    let feed = collect_pages(&reader, "/v1/feed?limit=1");
    assert_eq!(ids(&feed), want, "home feed, one per page");
    // Before 1970 cannot be encoded (and is not accepted): 422, nothing created.
    let body = json!({ "author_id": author.id, "body": "too old", "created_at": "1969-12-31T23:59:59.999Z" });
    admin("POST", "/v1/admin/import/posts", Some(&body)).expect_problem(422, "invalid_field");
    assert_eq!(author.profile()["posts_count"], 4);
    let unique: HashSet<String> = listed.iter().map(|p| p["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(unique.len(), 4);
}
