use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const FANOUT_DEADLINE: Duration = Duration::from_secs(60);

fn feed(user: &User, query: &str) -> Value {
    user.get(&format!("/v1/feed{query}")).expect(200)
}

fn feed_ids(user: &User) -> Vec<String> {
    ids(&collect_pages(user, "/v1/feed?limit=100"))
}

fn wait_in_feed(reader: &User, post_id: &str) {
    poll(&format!("post {post_id} in {}'s feed", reader.handle), FANOUT_DEADLINE, || {
        feed_ids(reader).iter().any(|id| id == post_id).then_some(())
    });
}

fn wait_in_window(reader: &User, post_id: &str) {
    poll(&format!("post {post_id} in {}'s window", reader.handle), FANOUT_DEADLINE, || {
        window_ids(reader).iter().any(|id| id == post_id).then_some(())
    });
}

#[test]
fn follower_sees_new_post_after_fanout_and_stranger_does_not() {
    let author = register("fa_author");
    let follower = register("fa_follower");
    let stranger = register("fa_stranger");
    follower.follow(&author);
    activate(&follower);
    activate(&stranger);
    let post = author.publish("hello followers", "public");
    wait_in_window(&follower, &id_of(&post));
    assert!(feed_ids(&follower).contains(&id_of(&post)));
    wait_drained(&author);
    assert!(!feed_ids(&stranger).contains(&id_of(&post)));
    // The author's own post is in the author's own feed.
    assert!(feed_ids(&author).contains(&id_of(&post)));
    let page = feed(&follower, "?limit=5");
    assert_eq!(page["state"], "ok");
    assert_eq!(page["items"][0]["author"]["handle"], author.handle.as_str());
}

#[test]
fn new_reader_gets_existing_posts_from_pull_and_empty_reasons() {
    let lonely = register("fa_lonely");
    let page = feed(&lonely, "");
    assert_eq!(page["items"], json!([]));
    assert_eq!(page["empty_reason"], "no_follows");
    assert_eq!(page["next_cursor"], Value::Null);
    assert!(page["newest_cursor"].is_string());

    let author = register("fa_quiet");
    let reader = register("fa_late");
    reader.follow(&author);
    assert_eq!(feed(&reader, "")["empty_reason"], "no_posts");
    let author2 = register("fa_old");
    let old = author2.publish("written before the follow", "followers");
    let reader2 = register("fa_new");
    reader2.follow(&author2);
    // First read builds the window from D1: the existing post is there at once.
    assert_eq!(feed_ids(&reader2), vec![id_of(&old)]);
}

#[test]
fn redelivered_fanout_event_leaves_one_entry_per_reader() {
    let author = register("rd_author");
    let readers: Vec<User> = (0..3).map(|_| register("rd_reader")).collect();
    for r in &readers {
        r.follow(&author);
        activate(r);
    }
    let post = author.publish("deliver me twice", "public");
    for r in &readers {
        wait_in_window(r, &id_of(&post));
    }
    wait_drained(&author);
    let replay =
        admin("POST", "/v1/admin/test/replay", Some(&json!({ "post_id": id_of(&post) }))).expect(200);
    assert_eq!(replay["replayed"], 1);
    wait_drained(&author);
    for r in readers.iter().chain([&author]) {
        let ids = feed_ids(r);
        assert_eq!(ids.iter().filter(|id| **id == id_of(&post)).count(), 1, "{}: {ids:?}", r.handle);
        let window = window_ids(r);
        assert_eq!(window.iter().filter(|id| **id == id_of(&post)).count(), 1, "{}: {window:?}", r.handle);
    }
}

#[test]
fn consumer_failure_after_first_chunk_retries_to_exactly_once() {
    let author = register("ch_author");
    // 2.x chunks of FANOUT_CHUNK followers.
    let followers: Vec<User> = (0..FANOUT_CHUNK * 2 + 5).map(|_| register("ch_fol")).collect();
    for f in &followers {
        f.follow(&author);
        activate(f);
    }
    admin(
        "POST",
        "/v1/admin/test/fault",
        Some(&json!({ "name": format!("fanout_after_chunk:{}", author.id) })),
    )
    .expect(200);
    let post = author.publish("survives a crash", "public");
    wait_drained(&author);
    let events = outbox_of(&author);
    let event = events["events"].as_array().unwrap().iter().find(|e| e["kind"] == "post").unwrap().clone();
    assert_eq!(event["state"], "done");
    assert_eq!(events["faults"][format!("fanout_after_chunk:{}", author.id)], 0, "the fault fired: {events}");
    assert_eq!(event["cursor_follower_id"], followers.last().unwrap().id.parse::<i64>().unwrap());
    for f in &followers {
        let window = window_ids(f);
        assert_eq!(window.iter().filter(|id| **id == id_of(&post)).count(), 1, "{}: {window:?}", f.handle);
    }
}

#[test]
fn outbox_event_whose_send_was_lost_is_delivered_by_reconciliation() {
    let author = register("lost_author");
    let follower = register("lost_follower");
    follower.follow(&author);
    activate(&follower);
    wait_drained(&author);
    lose_next_announce(&author);
    let post = author.publish("the queue never heard of me", "public");
    let pending = outbox_of(&author);
    assert_eq!(pending["pending"], 1, "the event is committed but unsent: {pending}");
    assert_eq!(pending["faults"][format!("skip_announce:{}", author.id)], 0);
    assert!(!window_ids(&follower).contains(&id_of(&post)), "no fan-out happened");
    // Reads already show it (recent posts are merged from D1 while fan-out catches up)...
    assert!(feed_ids(&follower).contains(&id_of(&post)));
    // ...and after the grace period the sweep resends the event, which fills the window.
    poll("reconciliation to deliver the lost event", FANOUT_DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        window_ids(&follower).contains(&id_of(&post)).then_some(())
    });
    wait_drained(&author);
}

#[test]
fn imported_old_post_lands_in_its_time_position() {
    let author = register("imp_author");
    let reader = register("imp_reader");
    reader.follow(&author);
    activate(&reader);
    let a = author.publish("newer a", "public");
    let b = author.publish("newer b", "public");
    let old = import_post(&author, "from 2025", "public", "2025-03-01T10:00:00.000Z");
    wait_in_window(&reader, &id_of(&old));
    wait_in_window(&reader, &id_of(&b));
    assert_eq!(window_ids(&reader), vec![id_of(&b), id_of(&a), id_of(&old)], "the window is in time order");
    assert_eq!(feed_ids(&reader), vec![id_of(&b), id_of(&a), id_of(&old)]);
}

#[test]
fn delete_private_unfollow_and_block_hide_on_the_very_next_read() {
    let reader = register("hide_reader");
    let authors: Vec<User> = (0..4).map(|_| register("hide_author")).collect();
    for a in &authors {
        reader.follow(a);
    }
    activate(&reader);
    let posts: Vec<String> = authors.iter().map(|a| id_of(&a.publish("soon hidden", "public"))).collect();
    for p in &posts {
        wait_in_feed(&reader, p);
    }
    assert_eq!(authors[0].delete(&format!("/v1/posts/{}", posts[0])).status, 204);
    assert!(!feed_ids(&reader).contains(&posts[0]), "deleted");
    authors[1].patch(&format!("/v1/posts/{}", posts[1]), json!({ "visibility": "private" })).expect(200);
    assert!(!feed_ids(&reader).contains(&posts[1]), "made private");
    wait_drained(&authors[1]);
    assert!(feed_ids(&authors[1]).contains(&posts[1]), "the author still sees their private post");
    reader.unfollow(&authors[2]);
    assert!(!feed_ids(&reader).contains(&posts[2]), "unfollowed");
    authors[3].block(&reader);
    assert!(!feed_ids(&reader).contains(&posts[3]), "blocked");
}

#[test]
fn page_stays_full_when_most_window_candidates_are_filtered() {
    let reader = register("full_reader");
    let noisy = register("full_noisy");
    let quiet = register("full_quiet");
    reader.follow(&noisy);
    reader.follow(&quiet);
    activate(&reader);
    let quiet_posts: Vec<String> = (0..10)
        .map(|i| {
            id_of(&import_post(&quiet, &format!("q{i}"), "public", &format!("2026-01-01T00:00:{i:02}Z")))
        })
        .collect();
    for i in 0..50 {
        import_post(&noisy, &format!("n{i}"), "public", &format!("2026-02-01T00:00:{:02}.{i:03}Z", i % 60));
    }
    wait_drained(&quiet);
    wait_drained(&noisy);
    assert_eq!(feed_ids(&reader).len(), 60);
    let before =
        admin("GET", "/v1/admin/stats", None).expect(200)["feed_filtered"]["unfollowed"].as_i64().unwrap();
    // Keep the window stale: the cleanup event for this unfollow is not sent.
    lose_next_announce(&reader);
    reader.unfollow(&noisy);
    let page = feed(&reader, "?limit=10");
    let mut expected = quiet_posts.clone();
    expected.reverse();
    assert_eq!(ids(page["items"].as_array().unwrap()), expected, "a full page of what is still visible");
    assert!(page["next_cursor"].is_string());
    let after =
        admin("GET", "/v1/admin/stats", None).expect(200)["feed_filtered"]["unfollowed"].as_i64().unwrap();
    assert!(
        after >= before + 50,
        "the 50 stale window entries were scanned and filtered ({before} -> {after})"
    );
    let rest = feed(&reader, &format!("?limit=10&cursor={}", page["next_cursor"].as_str().unwrap()));
    assert_eq!(rest["items"], json!([]));
    assert_eq!(rest["next_cursor"], Value::Null);
}

#[test]
fn after_cursor_returns_newer_items_with_gap() {
    let author = register("aft_author");
    let reader = register("aft_reader");
    reader.follow(&author);
    let first = author.publish("seen", "public");
    let page = feed(&reader, "?limit=5");
    assert_eq!(ids(page["items"].as_array().unwrap()), vec![id_of(&first)]);
    let newest = page["newest_cursor"].as_str().unwrap().to_string();
    let newer: Vec<String> = (0..3).map(|i| id_of(&author.publish(&format!("new {i}"), "public"))).collect();
    let up = poll("three newer posts via ?after=", FANOUT_DEADLINE, || {
        let up = feed(&reader, &format!("?limit=5&after={newest}"));
        (up["items"].as_array().unwrap().len() == 3).then_some(up)
    });
    let mut expect = newer.clone();
    expect.reverse();
    assert_eq!(ids(up["items"].as_array().unwrap()), expect);
    assert_eq!(up["gap"], false);
    let small = feed(&reader, &format!("?limit=2&after={newest}"));
    assert_eq!(ids(small["items"].as_array().unwrap()), expect[..2].to_vec());
    assert_eq!(small["gap"], true);
    // The after-cursor is bound to this reader like every cursor.
    author.get(&format!("/v1/feed?after={newest}")).expect_problem(400, "invalid_cursor");
}

#[test]
fn group_feed_narrows_to_one_follow_group() {
    let reader = register("grp_reader");
    let friend = register("grp_friend");
    let other = register("grp_other");
    reader.put(&format!("/v1/me/following/{}", friend.id), Some(json!({ "group": "friends" }))).expect(200);
    reader.follow(&other);
    let f = friend.publish("from a friend", "public");
    let o = other.publish("from someone else", "public");
    assert_eq!(ids(&collect_pages(&reader, "/v1/feed?group=friends")), vec![id_of(&f)]);
    let all: HashSet<String> = feed_ids(&reader).into_iter().collect();
    assert!(all.contains(&id_of(&f)) && all.contains(&id_of(&o)));
    // A group cursor does not work on the home feed.
    let page = feed(&reader, "?group=friends&limit=1");
    assert_eq!(feed(&reader, "?group=nobody")["empty_reason"], "no_follows");
    if let Some(c) = page["next_cursor"].as_str() {
        reader.get(&format!("/v1/feed?cursor={c}")).expect_problem(400, "invalid_cursor");
    }
    reader.get("/v1/feed?group=Bad%20Name").expect_problem(422, "invalid_field");
}

/// Sort key of a Post as the API shows it.
fn key(post: &Value) -> (String, u64) {
    (post["created_at"].as_str().unwrap().to_string(), post["id"].as_str().unwrap().parse().unwrap())
}

#[test]
fn thousand_item_feed_pages_across_the_window_seam_exactly_once() {
    let reader = register("seam_reader");
    let authors: Vec<User> = (0..4).map(|_| register("seam_author")).collect();
    for a in &authors {
        reader.follow(a);
    }
    activate(&reader);
    // 1,020 posts over 30 distinct milliseconds (34 share each), imported concurrently so they
    // arrive out of order; the window (cap FEED_WINDOW) keeps the newest, the rest come from D1.
    let total = 1_020;
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let authors = authors.clone();
            std::thread::spawn(move || {
                (t..total)
                    .step_by(6)
                    .map(|n| {
                        let at = format!("2026-03-01T00:00:00.{:03}Z", (n * 7) % 30);
                        id_of(&import_post(&authors[n % 4], &format!("seam {n}"), "public", &at))
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let created: HashSet<String> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert_eq!(created.len(), total);
    for a in &authors {
        wait_drained(a);
    }
    assert!(FEED_WINDOW < total);
    let items = collect_pages(&reader, "/v1/feed?limit=20");
    let keys: Vec<(String, u64)> = items.iter().map(key).collect();
    assert!(keys.windows(2).all(|w| w[0] > w[1]), "strictly (created_at, id) descending across the seam");
    let seen: HashSet<String> = ids(&items).into_iter().collect();
    assert_eq!(items.len(), total, "every item exactly once");
    assert_eq!(seen, created);
}

#[test]
fn follow_backfills_and_unfollow_cleans_the_window_at_once() {
    let reader = register("bf_reader");
    let author = register("bf_author");
    let old: Vec<String> = (0..3).map(|i| id_of(&author.publish(&format!("before {i}"), "public"))).collect();
    activate(&reader);
    reader.follow(&author);
    // The very next read has the author's existing posts (window backfilled by the follow).
    let mut expect = old.clone();
    expect.reverse();
    assert_eq!(feed_ids(&reader), expect);
    reader.unfollow(&author);
    assert!(feed_ids(&reader).is_empty());
    wait_drained(&author);
}

#[test]
fn a_private_post_made_public_reaches_followers_windows() {
    let author = register("widen_author");
    let follower = register("widen_follower");
    follower.follow(&author);
    activate(&follower);
    activate(&author);
    let post = id_of(&author.publish("for me only, for now", "private"));
    wait_drained(&author);
    assert!(!window_ids(&follower).contains(&post));
    assert!(!feed_ids(&follower).contains(&post));
    assert!(window_ids(&author).contains(&post));
    author.patch(&format!("/v1/posts/{post}"), json!({ "visibility": "public" })).expect(200);
    wait_in_window(&follower, &post);
    assert!(feed_ids(&follower).contains(&post));
}
