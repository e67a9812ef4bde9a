//! Moving a logical shard from one physical database to another (README "Moving a shard"),
//! black-box, the real procedure through its admin steps: bulk copy while live, writes during
//! the copy, a catch-up copy, freeze (a write to the shard answers 503, reads still work), the
//! final copy and verify, a new `SHARD_MAP` deployed (the server restarted with it on the same
//! databases), then the purge of the old rows. Every read the moved user and the others can
//! make is recorded before the switch and must be identical after it and after the purge.
//!
//! Its own binary: it restarts its server with another `SHARD_MAP`, which the suite's shared
//! server must never see. Needs 2+ databases (`EDGEFEED_DATABASES`, default 4).

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::*;

/// The logical shard a user id names (`domain/shard.rs`: 3 random bits below 8 shard bits).
fn shard_of(id: &str) -> usize {
    let id: i64 = id.parse().expect("a numeric id");
    ((id >> 3) & 255) as usize
}

/// `SHARD_MAP` for shard -> database `homes`, ranges merged.
fn spec(homes: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut start = 0;
    for s in 1..=homes.len() {
        if s == homes.len() || homes[s] != homes[start] {
            parts.push(format!("{start}-{}:{}", s - 1, homes[start]));
            start = s;
        }
    }
    parts.join(",")
}

/// One step of the move.
fn step(shard: usize, name: &str, body: Value) -> Resp {
    admin("POST", &format!("/v1/admin/shards/{shard}/{name}"), Some(&body))
}

/// A whole copy pass (every table, page by page); returns how many pages it took.
fn copy_pass(shard: usize, from: usize, to: usize) -> usize {
    let mut after: Option<String> = None;
    for pages in 1..10_000 {
        let mut body = json!({ "from": from, "to": to });
        if let Some(a) = &after {
            body["after"] = json!(a);
        }
        let page = step(shard, "copy", body).expect(200);
        if page["done"] == true {
            return pages;
        }
        after = Some(page["next"].as_str().expect("a next cursor").to_string());
    }
    panic!("the copy did not end");
}

struct World {
    mover: User,
    others: Vec<User>,
    /// The mover's posts, then others[0]'s.
    posts: Vec<String>,
    other_post: String,
    /// The mover's Mastodon list (migration 0016), holding the two users the mover follows.
    list: String,
}

/// Every read the moved user and the others can make of the moved shard's data (and the
/// others' data that mentions it), by name.
fn reads(w: &World) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mover = &w.mover;
    let viewers: Vec<&User> = [mover].into_iter().chain(w.others.iter().take(4)).collect();
    for v in &viewers {
        let tag = &v.handle;
        out.insert(format!("{tag}: me"), v.get("/v1/me").expect(200));
        out.insert(format!("{tag}: profile of mover"), v.get(&format!("/v1/users/{}", mover.id)).expect(200));
        let lists = ["posts", "followers", "following"];
        for list in lists {
            let items = collect_pages(v, &format!("/v1/users/{}/{list}?limit=2", mover.id));
            out.insert(format!("{tag}: mover's {list}"), Value::Array(items));
        }
        out.insert(format!("{tag}: feed"), Value::Array(collect_pages(v, "/v1/feed?limit=3")));
    }
    let list = &w.list;
    for path in [
        "/api/v1/lists".to_string(),
        format!("/api/v1/lists/{list}/accounts?limit=0"),
        format!("/api/v1/timelines/list/{list}?limit=40"),
        format!("/api/v1/accounts/{}/lists", w.others[0].id),
    ] {
        out.insert(format!("mover: {path}"), mover.get(&path).expect(200));
    }
    for post in w.posts.iter().chain([&w.other_post]) {
        for v in [mover, &w.others[0]] {
            let tag = &v.handle;
            let r = v.get(&format!("/v1/posts/{post}"));
            out.insert(format!("{tag}: post {post}"), json!({ "status": r.status, "body": r.body }));
            if r.status == 200 {
                let comments = collect_pages(v, &format!("/v1/posts/{post}/comments?limit=2"));
                out.insert(format!("{tag}: comments of {post}"), Value::Array(comments));
                let likes = collect_pages(v, &format!("/v1/posts/{post}/likes?limit=2"));
                out.insert(format!("{tag}: likes of {post}"), Value::Array(likes));
            }
        }
    }
    out
}

/// A write refused by the freeze: `503 shard_frozen` (the harness hands a 503 back as text).
#[track_caller]
fn expect_frozen(result: Result<Resp, String>) {
    match result {
        Err(text) => assert!(text.starts_with("503 ") && text.contains("\"shard_frozen\""), "{text}"),
        Ok(r) => panic!("expected 503 shard_frozen, got {} {}", r.status, r.body),
    }
}

#[track_caller]
fn assert_same(what: &str, expected: &BTreeMap<String, Value>, got: &BTreeMap<String, Value>) {
    assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "{what}: the reads");
    for (name, value) in expected {
        assert_eq!(Some(value), got.get(name), "{what}: {name}");
    }
}

fn drain(w: &World) {
    for u in [&w.mover].into_iter().chain(&w.others) {
        wait_drained(u);
    }
}

/// Users, posts, follows both ways across shards, a block, likes, comments and a comment's like, a
/// Mastodon list, read feeds.
fn build(mover: User) -> World {
    let others: Vec<User> = (0..5).map(|i| register(&format!("mv_other{i}"))).collect();
    let mut posts: Vec<String> =
        (0..3).map(|i| id_of(&mover.publish(&format!("mover {i}"), "public"))).collect();
    posts.push(id_of(&mover.publish("mover, followers only", "followers")));
    let other_post = id_of(&others[0].publish("other 0", "public"));
    for o in &others[..2] {
        mover.follow(o);
    }
    for o in [&others[0], &others[2], &others[3]] {
        o.follow(&mover);
    }
    mover.block(&others[4]);
    for (u, p) in
        [(&others[0], &posts[0]), (&others[2], &posts[0]), (&mover, &other_post), (&others[3], &posts[1])]
    {
        u.put(&format!("/v1/posts/{p}/like"), None).expect(200);
    }
    let nice =
        others[0].post(&format!("/v1/posts/{}/comments", posts[0]), json!({ "body": "nice" })).expect(201);
    mover.post(&format!("/v1/posts/{other_post}/comments"), json!({ "body": "thanks" })).expect(201);
    // A comment like (migration 0028) on the moved shard: its row and the comment's count move.
    others[0].post(&format!("/v1/comments/{}/like", id_of(&nice)), json!({})).expect(200);
    for u in [&mover].into_iter().chain(&others) {
        activate(u);
    }
    let list = id_of(&mover.post("/api/v1/lists", json!({ "title": "moved with me" })).expect(200));
    let members: Vec<&str> = others[..2].iter().map(|o| o.id.as_str()).collect();
    mover.post(&format!("/api/v1/lists/{list}/accounts"), json!({ "account_ids": members })).expect(200);
    others[1].publish("other 1, in the mover's list", "public");
    let w = World { mover, others, posts, other_post, list };
    drain(&w);
    w
}

/// The first map: DB_0 holds every shard but the last P - 1, one on each other database (a
/// map must give every database a shard). The moved user is one whose shard is on DB_0, so the
/// move is DB_0 -> DB_1 whatever the draw.
fn first_homes(dbs: usize) -> Vec<usize> {
    (0..256).map(|s| (s + dbs).saturating_sub(256)).collect()
}

#[test]
fn a_logical_shard_moves_to_another_database_without_losing_or_duplicating_a_row() {
    let started = Instant::now();
    let dbs = databases();
    if dbs < 2 {
        eprintln!("skipped: moving a shard needs 2+ databases (EDGEFEED_DATABASES={dbs})");
        return;
    }
    let mut homes = first_homes(dbs);
    let server = init_server(ServerOptions {
        label: "shard-move".into(),
        vars: vec![("SHARD_MAP".into(), spec(&homes)), ("FANOUT_MODE".into(), "push".into())],
        port: None,
    });
    let mover = std::iter::repeat_with(|| register("mv_mover")).find(|u| homes[shard_of(&u.id)] == 0);
    let w = build(mover.expect("a user on DB_0"));
    let (shard, from, to) = (shard_of(&w.mover.id), 0, 1);
    let before = reads(&w);

    // 1. Bulk copy while live, then writes the copy has not seen: a post, a delete, an
    //    unfollow, an unlike; the catch-up pass must bring them (and drop what was deleted).
    let pages = copy_pass(shard, from, to);
    let fresh = id_of(&w.mover.publish("written during the copy", "public"));
    w.mover.delete(&format!("/v1/posts/{}", w.posts[2])).expect(204);
    w.mover.unfollow(&w.others[1]);
    w.others[2].delete(&format!("/v1/posts/{}/like", w.posts[0])).expect(200);
    drain(&w);
    copy_pass(shard, from, to);

    // 2. Freeze: the shard's writes get a retryable 503, its reads still answer.
    step(shard, "freeze", json!({ "database": from })).expect(200);
    let refused = json!({ "body": "refused", "visibility": "public" });
    expect_frozen(try_call("POST", "/v1/posts", Some(&w.mover.token), Some(&refused)));
    let like = format!("/v1/posts/{}/like", w.posts[1]);
    expect_frozen(try_call("PUT", &like, Some(&w.others[0].token), None));
    w.mover.get(&format!("/v1/users/{}", w.mover.id)).expect(200);

    // 3. The final copy (with the deletes) and verify: equal, frozen, no unfinished event.
    let verified = poll("verify ok", Duration::from_secs(60), || {
        copy_pass(shard, from, to);
        let v = step(shard, "verify", json!({ "from": from, "to": to })).expect(200);
        (v["ok"] == true).then_some(v)
    });
    let expected = reads(&w);
    assert_ne!(before, expected, "the writes during the copy show");
    let mover_posts = &expected[&format!("{}: mover's posts", w.mover.handle)];
    let listed: Vec<String> = mover_posts.as_array().map(|a| ids(a)).unwrap_or_default();
    assert!(listed.contains(&fresh) && !listed.contains(&w.posts[2]), "{listed:?}");

    // 4. The switch: the new map deployed (the server restarted on the same databases).
    server.kill();
    homes[shard] = to;
    server.restart_with(&[("SHARD_MAP", &spec(&homes))]);
    admin("POST", "/v1/admin/reconcile?replay_dead=true", None).expect(200);
    assert_same("after the switch", &expected, &reads(&w));
    step(shard, "purge", json!({ "database": to })).expect_problem(409, "shard_still_home");
    step(shard, "copy", json!({ "from": from, "to": to })).expect_problem(409, "shard_not_home");
    // The old rows stay frozen: a stale map's write there is refused, never lost.
    step(shard, "unfreeze", json!({ "database": from })).expect_problem(409, "shard_not_home");

    // 5. The purge of the old rows: nothing of the shard left on the old database.
    let mut purge_pages = 0;
    poll("the purge", Duration::from_secs(60), || {
        purge_pages += 1;
        let p = step(shard, "purge", json!({ "database": from })).expect(200);
        (p["done"] == true).then_some(())
    });
    assert_same("after the purge", &expected, &reads(&w));
    let left = step(shard, "verify", json!({ "from": from, "to": to })).expect(200);
    for t in left["tables"].as_array().expect("tables") {
        assert_eq!(t["source"]["rows"], 0, "{} left on the old database: {t}", t["table"]);
    }
    assert_eq!(left["tables"].as_array().map(|t| t.len()), verified["tables"].as_array().map(|t| t.len()));

    // 6. The shard lives on its new database: its writes are taken and read back.
    let after_move = id_of(&w.mover.publish("after the move", "public"));
    let listed = ids(&collect_pages(&w.mover, &format!("/v1/users/{}/posts", w.mover.id)));
    assert_eq!(listed.first(), Some(&after_move));
    eprintln!(
        "shard {shard} moved DB_{from} -> DB_{to}: first pass {pages} pages, purge {purge_pages}, \
         {} reads identical, {:.1} s",
        expected.len(),
        started.elapsed().as_secs_f64()
    );
}
