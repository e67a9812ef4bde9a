//! Hot authors served from replicas (issue #28 item 1), black-box on 4 databases with the
//! threshold lowered (`HOT_REPLICA_FOLLOWERS` 3, one replica per 2 followers, so 2 replicas):
//! a page with a hot author's posts puts no statement on that author's database
//! (`Server-Timing` per database); an edit, a delete, a visibility change, a takedown and a block
//! by the author are exact on every reader's very next read (no polling), also while one
//! replica fails or is slow; a wiped replica rebuilds itself from D1; counts lag by a bound and
//! are never doubled.
//!
//! Its own binary: it needs its own settings (lease, threshold, directory refresh).

#[path = "../common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::*;

const DEADLINE: Duration = Duration::from_secs(60);
const DATABASES: usize = 4;
const LEASE_SECONDS: u64 = 4;
const COUNTS_SECONDS: u64 = 3;
/// The timeline heads' replicas answer from memory this long after a load (the harness's
/// default is 0: a load on every read).
const HEAD_TTL_MS: u64 = 3_000;

fn setup() {
    let vars = [
        ("HOT_REPLICA_FOLLOWERS", "3".to_string()),
        ("HOT_FOLLOWERS_PER_REPLICA", "2".to_string()),
        ("HOT_DIGESTS", "2".to_string()),
        ("REPLICA_LEASE_SECONDS", LEASE_SECONDS.to_string()),
        ("REPLICA_COUNTS_SECONDS", COUNTS_SECONDS.to_string()),
        ("HOT_DIRECTORY_TTL_SECONDS", "0".to_string()),
        ("REPLICA_WRITE_TIMEOUT_MS", "1000".to_string()),
        ("REPLICA_READ_TIMEOUT_MS", "700".to_string()),
        ("TIMELINE_HEAD_TTL_MS", HEAD_TTL_MS.to_string()),
    ];
    let vars = vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    init_server_on(ServerOptions { label: "hot".into(), vars, port: None }, DATABASES, 1);
}

/// The database a user's (or post's) id routes to under the even split.
fn home_of(id: &str) -> usize {
    let id: u64 = id.parse().expect("a numeric id");
    (((id >> 3) & 255) as usize) * DATABASES / 256
}

/// Statements a response's `Server-Timing` counts on `DB_database` (0 when it names none).
fn statements_on(r: &Resp, database: usize) -> u32 {
    let header = r.server_timing.as_deref().expect("a Server-Timing header");
    let tag = format!("d1-{database};desc=\"");
    let Some(start) = header.find(&tag) else { return 0 };
    let digits: String = header[start + tag.len()..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().expect("a statement count")
}

fn replica_hook(author: &User, body: Value) -> Value {
    let mut body = body;
    body["author_id"] = json!(author.id);
    admin("POST", "/v1/admin/test/replica_fault", Some(&body)).expect(200)
}

/// A hot author (not on `DB_0`, the control database) and `n` followers on other databases,
/// promoted by a reconciliation pass once its follower count crossed the threshold, with
/// readers on both of its replicas. Returns the author, its readers and its database.
fn hot_author(prefix: &str, n: usize) -> (User, Vec<User>, usize) {
    let author = (0..50)
        .map(|_| register(&format!("{prefix}_a")))
        .find(|u| home_of(&u.id) != 0)
        .expect("an author off the control database");
    let home = home_of(&author.id);
    let reader_off_home = || loop {
        let r = register(&format!("{prefix}_r"));
        if home_of(&r.id) != home {
            r.follow(&author);
            activate(&r);
            return r;
        }
    };
    let mut readers: Vec<User> = (0..n).map(|_| reader_off_home()).collect();
    poll("the author promoted to replicas", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        replica_hook(&author, json!({}))["replicas"].as_u64()
    });
    // The replica count is fixed at promotion: more readers (until both replicas have one) do
    // not change it.
    let replica_of =
        |r: &User| replica_hook(&author, json!({ "reader_id": r.id }))["reader_replica"].as_u64();
    let mut on: Vec<u64> = readers.iter().filter_map(replica_of).collect();
    while !(on.contains(&0) && on.contains(&1)) {
        assert!(readers.len() < n + 30, "readers on both replicas: {on:?}");
        let r = reader_off_home();
        on.extend(replica_of(&r));
        readers.push(r);
    }
    (author, readers, home)
}

fn feed(reader: &User) -> (Vec<Value>, Resp) {
    let r = reader.get("/v1/feed?limit=20");
    assert_eq!(r.status, 200, "{}", r.body);
    (r.body["items"].as_array().cloned().unwrap_or_default(), r)
}

fn feed_ids(reader: &User) -> Vec<String> {
    ids(&feed(reader).0)
}

/// Waits until every reader's feed holds `post`.
fn until_everyone_sees(readers: &[User], post: &str) {
    for r in readers {
        poll("the post in the reader's feed", DEADLINE, || {
            feed_ids(r).contains(&post.to_string()).then_some(())
        });
    }
}

fn body_of(reader: &User, post: &str) -> Option<String> {
    feed(reader).0.iter().find(|i| i["id"] == post).and_then(|i| i["body"].as_str().map(str::to_string))
}

#[test]
fn a_page_with_a_hot_author_pushed_or_pulled_puts_no_statement_on_its_database() {
    setup();
    let (author, readers, home) = hot_author("hz", 4);
    // Half the readers pull the author (over a push cap, say), half have it pushed: both kinds
    // of page read the replica, neither the author's database.
    for reader in readers.iter().step_by(2) {
        let body = json!({ "reader_id": reader.id, "author_id": author.id, "mode": "pull" });
        admin("POST", "/v1/admin/test/edge", Some(&body)).expect(200);
    }
    let posts: Vec<String> = (0..3).map(|i| id_of(&author.publish(&format!("hot {i}"), "public"))).collect();
    until_everyone_sees(&readers, &posts[2]);
    for reader in &readers {
        // A read may renew the replica's lease or refresh its counts (this binary refreshes
        // every 3 s): at most a rebuild's 3 statements, counted where they run. A page read
        // right after one costs the author's database nothing (retried should a refresh fall
        // between the two reads).
        let again = poll("a page with no statement on the author's database", DEADLINE, || {
            let (items, r) = feed(reader);
            assert!(statements_on(&r, home) <= 3, "at most a renewal or a rebuild: {:?}", r.server_timing);
            let (again, r2) = feed(reader);
            assert_eq!(ids(&items), ids(&again));
            assert!(statements_on(&r2, home) <= 3, "{:?}", r2.server_timing);
            (statements_on(&r2, home) == 0).then(|| {
                assert!(r2.timing("calls") >= 2, "the window and the replica: {:?}", r2.server_timing);
                again
            })
        });
        for p in &posts {
            assert!(ids(&again).contains(p));
        }
    }
}

#[test]
fn edits_deletes_visibility_and_takedowns_are_exact_on_every_next_read() {
    setup();
    let (author, readers, _) = hot_author("hx", 4);
    let kept = id_of(&author.publish("kept", "public"));
    let edited = id_of(&author.publish("before the edit", "public"));
    let deleted = id_of(&author.publish("to delete", "public"));
    let narrowed = id_of(&author.publish("to narrow", "public"));
    let taken = id_of(&author.publish("to take down", "public"));
    until_everyone_sees(&readers, &taken);

    author.patch(&format!("/v1/posts/{edited}"), json!({ "body": "after the edit" })).expect(200);
    author.delete(&format!("/v1/posts/{deleted}")).expect(204);
    author.patch(&format!("/v1/posts/{narrowed}"), json!({ "visibility": "private" })).expect(200);
    let reason = json!({ "reason": "test", "operator": "test-op" });
    admin("POST", &format!("/v1/admin/posts/{taken}/takedown"), Some(&reason)).expect(200);
    for reader in &readers {
        let items = feed_ids(reader);
        assert!(items.contains(&kept), "{items:?}");
        for gone in [&deleted, &narrowed, &taken] {
            assert!(!items.contains(gone), "{gone} still shown: {items:?}");
        }
        assert_eq!(body_of(reader, &edited).as_deref(), Some("after the edit"));
    }
}

#[test]
fn a_block_either_way_hides_the_hot_author_at_once() {
    setup();
    let (author, readers, _) = hot_author("hb", 4);
    let post = id_of(&author.publish("seen until blocked", "public"));
    until_everyone_sees(&readers, &post);
    author.block(&readers[0]);
    readers[1].block(&author);
    for reader in &readers[..2] {
        assert!(!feed_ids(reader).contains(&post), "blocked: no post of the hot author");
    }
    for reader in &readers[2..] {
        assert!(feed_ids(reader).contains(&post));
    }
}

/// Which reader reads replica `i`.
fn reader_on<'a>(author: &User, readers: &'a [User], i: u64) -> &'a User {
    readers
        .iter()
        .find(|r| replica_hook(author, json!({ "reader_id": r.id }))["reader_replica"] == i)
        .expect("a reader on that replica")
}

#[test]
fn a_failing_replica_costs_the_writer_the_lease_and_no_reader_sees_a_stale_post() {
    setup();
    let (author, readers, _) = hot_author("hf", 4);
    let post = id_of(&author.publish("to delete while a replica fails", "public"));
    until_everyone_sees(&readers, &post);
    replica_hook(&author, json!({ "replica": 0, "fault": "failing" }));
    let started = Instant::now();
    author.delete(&format!("/v1/posts/{post}")).expect(204);
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(LEASE_SECONDS), "the delete waited out the lease: {took:?}");
    for reader in &readers {
        assert!(!feed_ids(reader).contains(&post), "the readers of the failing replica read D1");
    }
    // The replica comes back having missed the delete: its lease ran out, so it re-reads D1.
    replica_hook(&author, json!({ "replica": 0, "fault": "none" }));
    let back = reader_on(&author, &readers, 0);
    let (items, _) = feed(back);
    assert!(!ids(&items).contains(&post));
}

#[test]
fn a_slow_replica_is_read_around_and_never_answers_stale() {
    setup();
    let (author, readers, home) = hot_author("hs", 4);
    let post = id_of(&author.publish("before", "public"));
    until_everyone_sees(&readers, &post);
    replica_hook(&author, json!({ "replica": 1, "fault": "slow", "ms": 1500 }));
    author.patch(&format!("/v1/posts/{post}"), json!({ "body": "after" })).expect(200);
    let slow = reader_on(&author, &readers, 1);
    let (_, r) = feed(slow);
    assert!(statements_on(&r, home) > 0, "past the read timeout the page reads D1: {:?}", r.server_timing);
    for reader in &readers {
        assert_eq!(body_of(reader, &post).as_deref(), Some("after"));
    }
    replica_hook(&author, json!({ "replica": 1, "fault": "none" }));
    assert_eq!(body_of(slow, &post).as_deref(), Some("after"), "the slow replica caught up, not stale");
}

#[test]
fn a_wiped_replica_rebuilds_itself_from_d1() {
    setup();
    let (author, readers, home) = hot_author("hw", 4);
    let post = id_of(&author.publish("survives a wipe", "public"));
    until_everyone_sees(&readers, &post);
    let reader = reader_on(&author, &readers, 0);
    replica_hook(&author, json!({ "replica": 0, "fault": "wipe" }));
    let (items, r) = feed(reader);
    assert!(ids(&items).contains(&post));
    assert!(statements_on(&r, home) > 0, "the rebuild read D1: {:?}", r.server_timing);
    // Rebuilt: the next pages cost its database nothing (but a counts refresh, every 3 s here).
    poll("a page from the rebuilt replica", DEADLINE, || {
        let (again, r) = feed(reader);
        assert_eq!(ids(&items), ids(&again));
        (statements_on(&r, home) == 0).then_some(())
    });
}

#[test]
fn counts_on_hot_posts_lag_by_a_bound_and_are_never_doubled() {
    setup();
    let (author, readers, _) = hot_author("hc", 4);
    let post = id_of(&author.publish("like me", "public"));
    until_everyone_sees(&readers, &post);
    let count = |reader: &User| {
        feed(reader).0.iter().find(|i| i["id"] == post.as_str()).and_then(|i| i["like_count"].as_i64())
    };
    let liked = Instant::now();
    readers[0].put(&format!("/v1/posts/{post}/like"), None).expect(200);
    readers[0].put(&format!("/v1/posts/{post}/like"), None).expect(200);
    let bound = Duration::from_secs(COUNTS_SECONDS + LEASE_SECONDS + 2);
    for reader in &readers {
        poll("the like counted on the hot post", bound + Duration::from_secs(5), || {
            let n = count(reader)?;
            assert!(n <= 1, "never doubled: {n}");
            (n == 1).then_some(())
        });
    }
    assert!(liked.elapsed() <= bound + Duration::from_secs(5), "within the stated bound");
}

fn tag_page(reader: &User, tag: &str) -> (Vec<String>, Resp) {
    let r = reader.get(&format!("/api/v1/timelines/tag/{tag}?limit=10"));
    assert_eq!(r.status, 200, "{:?}", r.body);
    let ids =
        r.body.as_array().expect("a list").iter().map(|s| s["id"].as_str().unwrap().to_string()).collect();
    (ids, r)
}

#[test]
fn a_hot_tags_pages_read_its_head_replica_and_its_database_once_per_ttl() {
    setup();
    let author = register("hk_author");
    let reader = register("hk_reader");
    let tag = format!("hotkey{}", &reader.id[reader.id.len() - 6..]);
    let first = id_of(&author.publish(&format!("the first of #{tag}"), "public"));
    let (seen, _) = poll("the post in the tag timeline", DEADLINE, || {
        let (ids, r) = tag_page(&reader, &tag);
        ids.contains(&first).then_some((ids, r))
    });
    assert_eq!(seen, vec![first.clone()]);
    // Right after a read that loaded the head (it read the tag's database), the next reads
    // within the TTL are answered from memory: one statement fewer (the range read), the same
    // page. Reads keep going until one loads (the TTL ran out), then the next must not.
    let (loaded, cached) = poll("a load, then a read from memory", DEADLINE, || {
        let (a, ra) = tag_page(&reader, &tag);
        let (b, rb) = tag_page(&reader, &tag);
        assert_eq!(a, b, "the same page either way");
        (ra.timing("statements") > rb.timing("statements")).then_some((ra, rb))
    });
    assert_eq!(
        loaded.timing("statements"),
        cached.timing("statements") + 1,
        "a load is the tag's one range read: {:?} vs {:?}",
        loaded.server_timing,
        cached.server_timing
    );
    assert!(cached.timing("calls") >= 1, "the replica: {:?}", cached.server_timing);
    // The author sees their next post at once (their index write told their replica); any
    // reader within the TTL.
    let second = id_of(&author.publish(&format!("the second of #{tag}"), "public"));
    let (own, _) = tag_page(&author, &tag);
    assert_eq!(own.first(), Some(&second), "the author's own post at once: {own:?}");
    let started = Instant::now();
    poll("the second post for the reader", DEADLINE, || {
        tag_page(&reader, &tag).0.contains(&second).then_some(())
    });
    assert!(
        started.elapsed() < Duration::from_millis(HEAD_TTL_MS) + Duration::from_secs(5),
        "a reader waits at most about the TTL: {:?}",
        started.elapsed()
    );
    // A delete shows at once for everyone: every entry's post is read again on each page.
    author.delete(&format!("/v1/posts/{second}")).expect(204);
    assert!(!tag_page(&reader, &tag).0.contains(&second), "a deleted post never shows from a head");
}

/// `n` hot authors all followed by `reader` (and by two more users, so each crosses this
/// binary's threshold of 3), promoted by reconciliation passes.
fn hot_authors_of(prefix: &str, reader: &User, n: usize) -> Vec<User> {
    let others = [register(&format!("{prefix}_f")), register(&format!("{prefix}_g"))];
    let authors: Vec<User> = (0..n).map(|_| register(&format!("{prefix}_a"))).collect();
    for author in &authors {
        reader.follow(author);
        for other in &others {
            other.follow(author);
        }
    }
    activate(reader);
    for author in &authors {
        poll("the author promoted to replicas", DEADLINE, || {
            admin("POST", "/v1/admin/reconcile", None).expect(200);
            replica_hook(author, json!({}))["replicas"].as_u64()
        });
    }
    authors
}

/// Every page of `reader`'s feed, `limit` at a time, following `next_cursor` to the end: each
/// page's items and its response.
fn all_pages(reader: &User, limit: usize) -> Vec<(Vec<Value>, Resp)> {
    let mut pages = Vec::new();
    let mut path = format!("/v1/feed?limit={limit}");
    loop {
        let r = reader.get(&path);
        assert_eq!(r.status, 200, "{}", r.body);
        let items = r.body["items"].as_array().cloned().unwrap_or_default();
        let next = r.body["next_cursor"].as_str().map(str::to_string);
        pages.push((items, r));
        match next {
            Some(cursor) => path = format!("/v1/feed?limit={limit}&cursor={cursor}"),
            None => return pages,
        }
        assert!(pages.len() < 100, "pagination did not end");
    }
}

/// Durable Object calls other than the replicas' on a feed page in this binary: the directory
/// (re-read on every page: `HOT_DIRECTORY_TTL_SECONDS` is 0 here) and the reader's window.
const PAGE_CALLS_BESIDE_REPLICAS: u32 = 2;

#[test]
fn a_page_makes_one_replica_call_whatever_the_number_of_hot_authors_and_pages_exactly() {
    setup();
    const AUTHORS: usize = 5;
    let reader = register("hd_r");
    let authors = hot_authors_of("hd", &reader, AUTHORS);
    // Posts sharing timestamps across authors: each author publishes once, then every author
    // imports two more posts at each of those posts' exact times.
    let times: Vec<String> = authors
        .iter()
        .map(|a| {
            let r = a.post(
                "/v1/posts",
                json!({ "body": format!("live by {}", a.handle), "visibility": "public" }),
            );
            eprintln!("a hot author's publish: {:?}", r.server_timing);
            r.expect(201)["created_at"].as_str().unwrap().to_string()
        })
        .collect();
    let mut posts: Vec<String> = Vec::new();
    for (i, at) in times.iter().enumerate() {
        for (j, author) in authors.iter().enumerate() {
            for k in 0..2 {
                posts.push(id_of(&import_post(author, &format!("shared {i} {j} {k}"), "public", at)));
            }
        }
    }
    let expected = AUTHORS + posts.len();
    let seen_all = || {
        let pages = all_pages(&reader, 7);
        let got: Vec<String> = pages.iter().flat_map(|(items, _)| ids(items)).collect();
        (got.len() >= expected && posts.iter().all(|p| got.contains(p))).then_some((pages, got))
    };
    let (pages, got) = poll("every post in the reader's pages", DEADLINE, seen_all);
    let mut unique = got.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), got.len(), "no post on two pages: {got:?}");
    assert_eq!(got.len(), expected, "every post once: {got:?}");
    for (items, r) in &pages {
        let calls = r.timing("calls");
        eprintln!("page of {} items from {AUTHORS} hot authors: {:?}", items.len(), r.server_timing);
        assert!(
            calls <= PAGE_CALLS_BESIDE_REPLICAS + 1,
            "one replica call for {AUTHORS} hot authors: {:?}",
            r.server_timing
        );
    }
    // The reader's digest holds every one of them (and whatever other tests' readers on it read).
    let digest = replica_hook(&authors[0], json!({ "reader_id": reader.id }))["reader_replica"].clone();
    let held = replica_hook(&authors[0], json!({ "replica": digest, "fault": "none" }))["digest"].clone();
    eprintln!("the reader's digest holds {held}");
    assert!(held["authors"].as_u64().unwrap() >= AUTHORS as u64, "{held}");
    assert!(held["posts"].as_u64().unwrap() >= expected as u64, "{held}");

    // Every read re-checks what the viewer may see now: a delete, a takedown and a block by an
    // author are hidden on the very next read, also on the pages the cursor walks.
    let deleted = &posts[4];
    let taken = &posts[3];
    authors[2].delete(&format!("/v1/posts/{deleted}")).expect(204);
    let reason = json!({ "reason": "test", "operator": "test-op" });
    admin("POST", &format!("/v1/admin/posts/{taken}/takedown"), Some(&reason)).expect(200);
    authors[4].block(&reader);
    let after: Vec<String> = all_pages(&reader, 7).iter().flat_map(|(items, _)| ids(items)).collect();
    assert!(!after.contains(deleted) && !after.contains(taken), "{after:?}");
    let by_blocker = |id: &String| got.iter().any(|g| g == id) && !after.contains(id);
    let blocker_posts: Vec<&String> =
        posts.iter().enumerate().filter(|(n, _)| (n / 2) % AUTHORS == 4).map(|(_, p)| p).collect();
    assert!(blocker_posts.iter().all(|p| by_blocker(p)), "the blocking author's posts hidden: {after:?}");
    assert_eq!(after.len(), expected - 2 - blocker_posts.len() - 1, "the rest still shown once: {after:?}");
}
