//! Hybrid fan-out, black-box against its own `wrangler dev` (FANOUT_MODE=hybrid, a push cap of
//! 5 readers per author): the cap, inactive and returning readers, and edges switching modes
//! while the author posts and the reader scrolls. A binary of its own: its server runs other
//! `[vars]` than the HTTP suite's (which pins push mode to inspect windows).

#[path = "../common/mod.rs"]
mod common;

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use serde_json::json;

use common::*;

const DEADLINE: Duration = Duration::from_secs(90);
const PUSH_CAP: usize = 5;
/// Pulled authors with this many followers are served from the hot-range cache.
const HOT_FOLLOWERS: usize = 3;

/// Every test starts (or joins) this binary's server.
fn setup() {
    let vars = [
        ("FANOUT_MODE", "hybrid".to_string()),
        ("PUSH_MAX_FOLLOWERS", PUSH_CAP.to_string()),
        ("FEED_WINDOW", FEED_WINDOW.to_string()),
        ("FANOUT_CHUNK", FANOUT_CHUNK.to_string()),
        ("HOT_AUTHOR_FOLLOWERS", HOT_FOLLOWERS.to_string()),
    ];
    let vars = vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    init_server(ServerOptions { label: "hybrid".into(), vars, port: None });
}

fn window_ids(reader: &User) -> BTreeSet<String> {
    common::window_ids(reader).into_iter().collect()
}

/// follower id -> (push, pull, read_rate) for the author's edges.
fn edges(author: &User) -> Vec<(String, i64, i64, f64)> {
    let v = admin("POST", "/v1/admin/test/edges", Some(&json!({ "author_id": author.id }))).expect(200);
    v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let id = e["follower_id"].as_u64().unwrap().to_string();
            (id, e["push"].as_i64().unwrap(), e["pull"].as_i64().unwrap(), e["read_rate"].as_f64().unwrap())
        })
        .collect()
}

/// The reader's live mark on their edge to `author` (`live_edges`): until when (ms), if any.
fn live_mark(author: &User, reader: &User) -> Option<i64> {
    let v = admin("POST", "/v1/admin/test/edges", Some(&json!({ "author_id": author.id }))).expect(200);
    let edges = v["edges"].as_array().unwrap();
    let edge =
        edges.iter().find(|e| e["follower_id"].as_u64().map(|n| n.to_string()) == Some(reader.id.clone()));
    edge.expect("the edge exists")["live_until"].as_i64()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

fn edge_of(author: &User, reader: &User) -> (i64, i64) {
    edges(author).into_iter().find(|e| e.0 == reader.id).map(|e| (e.1, e.2)).expect("the edge exists")
}

fn feed_scroll(reader: &User, limit: usize) -> Vec<String> {
    ids(&collect_pages(reader, &format!("/v1/feed?limit={limit}")))
}

fn delivered_for(author: &User, post: &str) -> i64 {
    let outbox = outbox_of(author);
    let event = outbox["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["post_id"].as_u64().map(|n| n.to_string()).as_deref() == Some(post));
    event.expect("the post's event")["delivered"].as_i64().unwrap()
}

fn force(reader: &User, author: &User, mode: &str) {
    let body = json!({ "reader_id": reader.id, "author_id": author.id, "mode": mode });
    admin("POST", "/v1/admin/test/edge", Some(&body)).expect(200);
}

#[test]
fn an_author_over_the_cap_pushes_only_to_its_most_active_readers() {
    setup();
    let author = register("cap_author");
    let readers: Vec<User> = (0..12).map(|_| register("cap_reader")).collect();
    for r in &readers {
        r.follow(&author);
        r.get("/v1/feed?limit=1").expect(200);
    }
    // The first five read a lot more: their read rates rank above the others'.
    for r in &readers[..PUSH_CAP] {
        for _ in 0..6 {
            r.get("/v1/feed?limit=1").expect(200);
        }
    }
    let keen: HashSet<String> = readers[..PUSH_CAP].iter().map(|r| r.id.clone()).collect();
    poll("every reader's activity recorded", DEADLINE, || {
        let e = edges(&author);
        let top = e.iter().filter(|x| keen.contains(&x.0)).map(|x| x.3).fold(f64::MAX, f64::min);
        let rest = e.iter().filter(|x| !keen.contains(&x.0)).map(|x| x.3).fold(0.0, f64::max);
        (e.len() == 12 && rest > 0.0 && top > rest).then_some(())
    });
    let first = id_of(&author.publish("crosses the cap", "public"));
    poll("the author's edges re-decided by the cap", DEADLINE, || {
        let e = edges(&author);
        e.iter()
            .all(|x| if keen.contains(&x.0) { (x.1, x.2) == (1, 0) } else { (x.1, x.2) == (0, 1) })
            .then_some(())
    });
    wait_drained(&author);
    let capped = id_of(&author.publish("after the cap", "public"));
    wait_drained(&author);
    assert_eq!(delivered_for(&author, &capped), PUSH_CAP as i64, "deliveries only to the capped set");
    for r in &readers {
        let in_window = window_ids(r).contains(&capped);
        assert_eq!(in_window, keen.contains(&r.id), "pushed only to the most active readers");
        let feed = feed_scroll(r, 10);
        assert!(feed.contains(&capped) && feed.contains(&first), "every follower sees both posts");
    }
}

#[test]
fn an_inactive_reader_gets_no_deliveries_then_returns_to_a_complete_feed() {
    setup();
    let author = register("idle_author");
    let other = register("idle_other");
    let reader = register("idle_reader");
    reader.follow(&author);
    reader.follow(&other);
    reader.get("/v1/feed?limit=1").expect(200);
    let mut expected = vec![id_of(&author.publish("before the break", "public"))];
    wait_drained(&author);
    assert!(window_ids(&reader).contains(&expected[0]), "an active reader is pushed");
    admin("POST", "/v1/admin/test/age_reader", Some(&json!({ "reader_id": reader.id, "days": 8 })))
        .expect(200);
    let swept = admin("POST", "/v1/admin/reconcile", None).expect(200);
    // The sweep moves what is still pushed: the edge to `other` (who never posts) may already
    // have gone pull by the policy's own decision after the first read, queued meanwhile.
    assert!(swept["inactive_edges_unpushed"].as_u64().unwrap() >= 1, "{swept}");
    assert_eq!(edge_of(&author, &reader), (0, 1), "an inactive reader's edges are pulled");
    assert_eq!(edge_of(&other, &reader), (0, 1), "every edge of an inactive reader is pulled");
    for i in 0..6 {
        let by = if i % 2 == 0 { &author } else { &other };
        let post = id_of(&by.publish(&format!("while away {i}"), "public"));
        wait_drained(by);
        assert_eq!(delivered_for(by, &post), 0, "no deliveries to an inactive reader");
        expected.push(post);
    }
    assert!(expected[1..].iter().all(|p| !window_ids(&reader).contains(p)));
    // Back: the very first read is complete (pulled), in order, each post once.
    let scroll = feed_scroll(&reader, 4);
    expected.reverse();
    assert_eq!(scroll, expected, "every post of the people followed, newest first, once");
    poll("the returning reader pushed again", DEADLINE, || {
        (edge_of(&author, &reader) == (1, 0)).then_some(())
    });
    let fresh = id_of(&author.publish("welcome back", "public"));
    wait_drained(&author);
    assert!(window_ids(&reader).contains(&fresh), "pushed again after coming back");
}

#[test]
fn edges_switching_push_pull_push_while_posting_and_scrolling_hold_every_post_once() {
    setup();
    let author = register("flip_author");
    let steady = register("flip_steady");
    let reader = register("flip_reader");
    reader.follow(&author);
    reader.follow(&steady);
    reader.get("/v1/feed?limit=1").expect(200);
    let mut posted: Vec<String> = Vec::new();
    for step in 0..24 {
        if step % 4 == 1 {
            force(&reader, &author, if step % 8 == 1 { "pull" } else { "push" });
        }
        let by = if step % 3 == 0 { &steady } else { &author };
        posted.push(id_of(&by.publish(&format!("step {step}"), "public")));
        // No waiting for fan-out: every read must be complete whatever the edge's mode.
        let scroll = feed_scroll(&reader, 5);
        let unique: HashSet<&String> = scroll.iter().collect();
        assert_eq!(unique.len(), scroll.len(), "step {step}: a post shown twice: {scroll:?}");
        let mut expected = posted.clone();
        expected.reverse();
        assert_eq!(scroll, expected, "step {step}: every post, newest first, once");
    }
    wait_drained(&author);
    force(&reader, &author, "push");
    let window = window_ids(&reader);
    let of_author: Vec<&String> =
        posted.iter().enumerate().filter(|(i, _)| i % 3 != 0).map(|(_, p)| p).collect();
    assert!(
        of_author.iter().all(|p| window.contains(*p)),
        "back to push: the window holds the author's posts"
    );
}

#[test]
fn pulled_readers_of_a_hot_author_share_its_cached_range_and_still_see_only_what_they_may() {
    setup();
    let author = register("hot_author");
    // Older than the in-flight horizon, so the cached range (not D1) answers for them; imported
    // first, so the author's post rate keeps the policy from pushing to these light readers.
    let now = now_secs();
    let at = |k: i64| edgefeed::domain::time::format_rfc3339((now - 600 - k * 60) * 1000);
    let posts: Vec<String> =
        (0..6).map(|k| id_of(&import_post(&author, &format!("hot {k}"), "public", &at(k)))).collect();
    wait_drained(&author);
    let readers: Vec<User> = (0..HOT_FOLLOWERS + 1).map(|_| register("hot_reader")).collect();
    for r in &readers {
        r.follow(&author);
    }
    for r in &readers {
        force(r, &author, "pull");
    }
    let hits = || {
        let s = admin("GET", "/v1/admin/stats", None).expect(200);
        s["hybrid"]["hot_range_cache"]["hits"].as_i64().unwrap()
    };
    let before = hits();
    for (i, r) in readers.iter().enumerate() {
        assert_eq!(
            feed_scroll(r, 4),
            posts,
            "reader {i}: every cached post once, newest first, across pages"
        );
    }
    assert!(hits() >= before + 2, "readers after the first share the cached range ({before} -> {})", hits());
    // With the cache warm, a pulled reader's page waits the window call (cache lookups beside
    // it), then one D1 batch.
    let warm = readers[1].get("/v1/feed?limit=4");
    assert!(warm.timing("sequential round trips") <= 2, "{:?}", warm.server_timing);

    // The cache never decides visibility: a deleted post and a reader who unfollowed are
    // filtered at hydration even while the cached range (and the reader's list) still hold them.
    author.delete(&format!("/v1/posts/{}", posts[2])).expect(204);
    let leaver = &readers[0];
    leaver.unfollow(&author);
    for r in &readers[1..] {
        let expected: Vec<String> = posts.iter().filter(|p| **p != posts[2]).cloned().collect();
        assert_eq!(feed_scroll(r, 4), expected, "the deleted post is gone");
    }
    assert!(feed_scroll(leaver, 4).is_empty(), "nothing of an unfollowed author");
}

#[test]
fn a_pulled_readers_open_socket_still_hears_of_the_authors_posts() {
    setup();
    let author = register("live_pull_author");
    let live = register("live_pull_reader");
    let offline = register("live_pull_offline");
    for reader in [&live, &offline] {
        reader.follow(&author);
        reader.get("/v1/feed?limit=1").expect(200);
    }
    // The reads' activity reports re-decide the edges: let them land before forcing pull.
    poll("both readers' activity recorded", DEADLINE, || {
        let e = edges(&author);
        (e.len() == 2 && e.iter().all(|x| x.3 > 0.0)).then_some(())
    });
    for reader in [&live, &offline] {
        force(reader, &author, "pull");
    }
    let opened = now_ms();
    let mut socket = live_connect(&live);
    assert_eq!(edge_of(&author, &live), (0, 1), "the live reader's edge is pulled when the author posts");
    assert_eq!(edge_of(&author, &offline), (0, 1));
    // The socket marked the pulled edge on the author's side (a 20-minute lease): what the
    // delivery reads instead of every open socket's lease; the offline reader has none.
    let mark = live_mark(&author, &live).expect("the live reader's pulled edge is marked");
    assert!(
        mark >= opened + 19 * 60_000 && mark <= now_ms() + 20 * 60_000 + 5_000,
        "a 20-minute mark: {mark}"
    );
    assert_eq!(live_mark(&author, &offline), None);
    let post = id_of(&author.publish("pulled, but live", "public"));
    let event = socket.next_event(DEADLINE);
    assert_eq!((event["type"].as_str(), event["count"].as_i64()), (Some("new_posts"), Some(1)), "{event}");
    let cursor = event["newest_cursor"].as_str().unwrap();
    let page = live.get(&format!("/v1/feed?after={cursor}")).expect(200);
    assert_eq!(ids(page["items"].as_array().unwrap()), vec![post.clone()]);
    wait_drained(&author);
    // The live reader was reached through its lease; a pulled reader without a socket gets
    // nothing in their window and reads the post from D1. (The author's first post moves its
    // rate, so the policy may re-decide the offline edge back to push meanwhile: a switch sets
    // `push` before it backfills, so a window holding the post means a pushed edge by then.)
    assert!(window_ids(&live).contains(&post), "reached through its live lease");
    let in_window = window_ids(&offline).contains(&post);
    assert!(!in_window || edge_of(&author, &offline).0 == 1, "a pulled reader's window got the post");
    assert!(feed_scroll(&offline, 10).contains(&post));
}

#[test]
fn a_live_mark_is_written_once_per_lease_and_reaches_only_a_reader_still_following() {
    setup();
    let author = register("mark_author");
    let reader = register("mark_reader");
    reader.follow(&author);
    reader.get("/v1/feed?limit=1").expect(200);
    author.get("/v1/feed?limit=1").expect(200); // a window, which the author's posts go into
    poll("the reader's activity recorded", DEADLINE, || {
        edges(&author).iter().all(|x| x.3 > 0.0).then_some(())
    });
    force(&reader, &author, "pull");
    let _first = live_connect(&reader);
    let mark = live_mark(&author, &reader).expect("marked by the first socket");
    // A second socket within the lease writes nothing: the marks are rewritten once per lease,
    // not per socket or review.
    let _second = live_connect(&reader);
    assert_eq!(live_mark(&author, &reader), Some(mark), "the second socket rewrote the mark");
    // A mark outlives an unfollow (it is a lease), but a delivery checks the edge itself.
    reader.unfollow(&author);
    poll("the unfollow reached the author's side", DEADLINE, || {
        edges(&author).iter().all(|e| e.0 != reader.id).then_some(())
    });
    let post = id_of(&author.publish("after the unfollow", "public"));
    wait_drained(&author);
    assert!(!window_ids(&reader).contains(&post), "a stale mark delivered to a reader who unfollowed");
    assert!(window_ids(&author).contains(&post), "the delivery ran (the author's own window)");
}

/// The reader's rate as copied on their edge to `author` (the author's side), and the rate
/// their own row holds (the last report).
fn copied_and_own_rate(author: &User, reader: &User) -> (Option<f64>, Option<f64>) {
    let body = json!({ "author_id": author.id, "reader_id": reader.id });
    let v = admin("POST", "/v1/admin/test/edges", Some(&body)).expect(200);
    let edge = v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["follower_id"].as_u64().map(|n| n.to_string()) == Some(reader.id.clone()));
    (edge.and_then(|e| e["read_rate"].as_f64()), v["reader"]["read_rate"].as_f64())
}

fn near(rate: Option<f64>, expected: f64) -> bool {
    rate.is_some_and(|r| (r - expected).abs() < 0.02)
}

#[test]
fn a_readers_rate_is_copied_to_an_author_only_when_it_crosses_that_authors_cut() {
    setup();
    // A silent author's cut is 0 (nothing crosses it); 14 posts make about 2 a day, a cut of
    // 2 * EDGE_HYSTERESIS / PUSH_COST_RATIO = 0.4 reads a day.
    let quiet = register("copy_quiet");
    let busy = register("copy_busy");
    for i in 0..14 {
        busy.publish(&format!("busy {i}"), "public");
    }
    let reader = register("copy_reader");
    reader.follow(&quiet);
    reader.follow(&busy);
    poll("both mirrors applied", DEADLINE, || {
        (copied_and_own_rate(&quiet, &reader).0.is_some() && copied_and_own_rate(&busy, &reader).0.is_some())
            .then_some(())
    });
    // Reads back to back: the rate is about n/7 a day after n; reports at 1, 2 and 4 (a 1.5x move).
    let read = || reader.get("/v1/feed?limit=1").expect(200);
    read();
    poll("the first report copied to both authors", DEADLINE, || {
        (near(copied_and_own_rate(&quiet, &reader).0, 1.0 / 7.0)
            && near(copied_and_own_rate(&busy, &reader).0, 1.0 / 7.0))
        .then_some(())
    });
    read();
    poll("the second report recorded on the reader's side", DEADLINE, || {
        near(copied_and_own_rate(&quiet, &reader).1, 2.0 / 7.0).then_some(())
    });
    for author in [&quiet, &busy] {
        let (copy, own) = copied_and_own_rate(author, &reader);
        assert!(near(copy, 1.0 / 7.0), "no cut crossed: nothing copied ({copy:?}, reader {own:?})");
    }
    read();
    read();
    // The third read reports too when the reads' spacing lets its rate pass 1.5x the second's
    // (the rate decays between reads), and then the fourth does not: either report crosses the
    // busy author's cut (0.4 reads a day) and is the last one sent.
    let crossed = |rate: Option<f64>| near(rate, 3.0 / 7.0) || near(rate, 4.0 / 7.0);
    let reported =
        poll("a later read's report crosses the busy author's cut: copied there", DEADLINE, || {
            let (copy, own) = copied_and_own_rate(&busy, &reader);
            (crossed(copy) && copy == own).then_some(own)
        });
    let (copy, own) = copied_and_own_rate(&quiet, &reader);
    assert!(own == reported && near(copy, 1.0 / 7.0), "the quiet author's copy untouched: {copy:?}, {own:?}");
    // The decision is the rule's on the reader's facts: 3/7 * 10 or 4/7 * 10 >= 2 * 2, so push.
    poll("the busy author's edge pushed", DEADLINE, || (edge_of(&busy, &reader) == (1, 0)).then_some(()));
}
