//! Round-trip budgets, asserted through `Server-Timing`: on Cloudflare every sequential round
//! trip to D1 or a Durable Object is a network hop, so a change that adds one fails here rather
//! than in a benchmark nobody runs. (This suite runs `FANOUT_MODE=push`; the hybrid binary
//! checks the same budget for pulled authors.)

use std::time::Duration;

use crate::common::*;

const SEQUENTIAL: &str = "sequential round trips";

fn page_ids(resp: &Resp) -> Vec<String> {
    ids(resp.body["items"].as_array().unwrap())
}

#[test]
fn a_feed_page_inside_the_window_waits_two_round_trips_and_writes_nothing() {
    let author = register("rt_author");
    let reader = register("rt_reader");
    reader.follow(&author);
    reader.get("/v1/feed?limit=5").expect(200); // builds the window
    let posts: Vec<String> = (0..8)
        .map(|k| author.publish(&format!("budget {k}"), "public")["id"].as_str().unwrap().to_string())
        .collect();
    poll("the posts in the reader's feed", Duration::from_secs(60), || {
        (page_ids(&reader.get("/v1/feed?limit=8")).len() == 8).then_some(())
    });

    let first = reader.get("/v1/feed?limit=5");
    assert_eq!(first.status, 200);
    assert_eq!(page_ids(&first), posts.iter().rev().take(5).cloned().collect::<Vec<_>>());
    // The window's Durable Object (with the token's revocation check beside it), then one D1
    // batch that pulls what is beside the window and hydrates everything.
    assert_eq!(first.timing(SEQUENTIAL), 2, "{:?}", first.server_timing);
    assert_eq!(first.timing("calls"), 1, "one window call: {:?}", first.server_timing);
    let cursor = first.body["next_cursor"].as_str().unwrap();
    let second = reader.get(&format!("/v1/feed?limit=5&cursor={cursor}"));
    assert_eq!(page_ids(&second), posts.iter().rev().skip(5).cloned().collect::<Vec<_>>());
    assert!(second.timing(SEQUENTIAL) <= 3, "page 2 may refill below the window: {:?}", second.server_timing);

    // Filtering counts nothing to D1 on the read path: a page with a deleted candidate still
    // waits the same two round trips.
    author.delete(&format!("/v1/posts/{}", posts[7])).expect(204);
    let filtered = reader.get("/v1/feed?limit=5");
    assert!(!page_ids(&filtered).contains(&posts[7]));
    assert_eq!(filtered.timing(SEQUENTIAL), 2, "{:?}", filtered.server_timing);
}

#[test]
fn a_new_readers_first_page_builds_the_window_in_the_waves_the_read_machine_states() {
    let author = register("rt_new_author");
    let post = author.publish("before the reader came", "public");
    let reader = register("rt_new_reader");
    reader.follow(&author);
    let first = reader.get("/v1/feed?limit=5");
    assert_eq!(page_ids(&first), vec![post["id"].as_str().unwrap().to_string()]);
    // `domain/read` table, "new reader: window built": the first wave (with the token check
    // beside it), the activation and the edges in one batch, the snapshot's six slabs (the
    // reader has no posts of their own, so their database widens to the bottom), `Init`, the
    // window call again, the round beside the window.
    assert_eq!(first.timing("calls"), 3, "{:?}", first.server_timing);
    assert_eq!(first.timing(SEQUENTIAL), 11, "{:?}", first.server_timing);
}

#[test]
fn a_page_below_the_windows_floor_waits_no_more_round_trips_than_page_one() {
    // Four authors (spread over the databases) with more posts than a window holds, a minute
    // apart: the reader's first read builds a window of the newest FEED_WINDOW, so later pages
    // of 20 lie below its floor and come from the full pull.
    let authors: Vec<User> = (0..4).map(|_| register("rt_deep_author")).collect();
    let total = FEED_WINDOW + 60;
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let authors = authors.clone();
            std::thread::spawn(move || {
                (t..total)
                    .step_by(4)
                    .map(|n| {
                        let at = format!("2026-03-05T{:02}:{:02}:00Z", 23 - n / 60, 59 - n % 60);
                        (n, id_of(&import_post(&authors[n % 4], &format!("deep {n}"), "public", &at)))
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut posts: Vec<(usize, String)> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    posts.sort();
    let newest_first: Vec<String> = posts.into_iter().map(|(_, id)| id).collect();
    let reader = register("rt_deep_reader");
    for a in &authors {
        reader.follow(a);
    }
    for a in &authors {
        wait_drained(a);
    }
    activate(&reader); // builds the window: the page-1 budget is a warm window's

    let first = reader.get("/v1/feed?limit=20");
    assert_eq!(page_ids(&first), newest_first[..20].to_vec());
    let page_one = first.timing(SEQUENTIAL);
    assert_eq!(page_one, 2, "{:?}", first.server_timing);
    let mut cursor = first.body["next_cursor"].as_str().unwrap().to_string();
    let mut seen = page_ids(&first);
    let pages = total / 20;
    for page in 2..=pages + 1 {
        let resp = reader.get(&format!("/v1/feed?limit=20&cursor={cursor}"));
        assert_eq!(resp.status, 200);
        seen.extend(page_ids(&resp));
        // The last pages are left out: with fewer posts left than a page and one, the pull
        // widens through every slab to the bottom to know it has them all (the domain read's
        // "every slab" rows).
        let below = (page - 1) * 20 >= FEED_WINDOW && page * 20 < total;
        if below {
            // The full pull: one slab on every database at once, the rows with the viewer's
            // relationships, after the reader's edges (the first page below the floor still
            // asks the window, the next ones are told by their cursor that it holds nothing).
            assert!(resp.timing(SEQUENTIAL) <= page_one, "page {page}: {:?}", resp.server_timing);
            let calls = if (page - 1) * 20 == FEED_WINDOW { 1 } else { 0 };
            assert!(resp.timing("calls") <= calls, "page {page}: {:?}", resp.server_timing);
        }
        match resp.body["next_cursor"].as_str() {
            Some(next) => cursor = next.to_string(),
            None => break,
        }
    }
    assert_eq!(seen, newest_first, "every post once, in order, across the floor");
}

#[test]
fn reading_one_post_waits_one_round_trip() {
    let author = register("rt_post");
    let post = author.publish("one post", "public");
    let id = post["id"].as_str().unwrap();
    let resp = author.get(&format!("/v1/posts/{id}"));
    assert_eq!(resp.status, 200);
    // The post's row and the token's revocation check, side by side.
    assert_eq!(resp.timing(SEQUENTIAL), 1, "{:?}", resp.server_timing);
}

#[test]
fn publishing_waits_three_round_trips_with_or_without_a_key_and_a_retry_no_more() {
    let author = register("rt_publish");
    let auth = format!("Bearer {}", author.token);
    let keyed = [("authorization", auth.as_str()), ("idempotency-key", "rt-publish-1")];
    let send = |headers: &[(&str, &str)]| raw("POST", "/v1/posts", headers, br#"{"body":"timed"}"#);
    let plain = send(&[("authorization", auth.as_str())]);
    assert_eq!(plain.status, 201, "{}", plain.body);
    // The token check, the batch (the post, its event, its key, and the post read back), and
    // the test hooks' check before the fan-out's announcement: the key is not read first.
    assert_eq!(plain.timing(SEQUENTIAL), 3, "{:?}", plain.server_timing);
    let first = send(&keyed);
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.timing(SEQUENTIAL), 3, "the key costs no trip: {:?}", first.server_timing);
    // A retry: its batch finds the key taken, then one trip reads the key and its post.
    let retry = send(&keyed);
    assert_eq!((retry.status, &retry.body["id"]), (201, &first.body["id"]), "{}", retry.body);
    assert_eq!(retry.timing(SEQUENTIAL), 3, "{:?}", retry.server_timing);
}

#[test]
fn a_revoked_token_is_refused_on_reads_even_though_its_check_runs_beside_them() {
    let user = register("rt_revoked");
    user.get("/v1/feed").expect(200);
    user.post("/v1/me/logout", serde_json::json!({})).expect(204);
    for path in ["/v1/feed".to_string(), "/v1/me".to_string(), format!("/v1/users/{}/posts", user.id)] {
        let r = user.get(&path);
        r.expect_problem(401, "unauthorized");
        assert_eq!(r.body["detail"], "the token was revoked by a logout", "{path}");
    }
}
