//! The two sides of every follow and block edge (docs/graph.md): the author-side `followers`
//! and blocked-side `blocked_by` mirrors converge to the authoritative sides' current state
//! after follows, unfollows, blocks and unblocks; through a stalled apply, replayed (stale and
//! repeated) events, and a mirror deleted behind the events' back; counters stay exact.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const CONVERGE_DEADLINE: Duration = Duration::from_secs(90);

/// Both sides of the pair as stored (test hook), `user`'s first.
fn pair(user: &User, other: &User) -> Value {
    admin("POST", "/v1/admin/test/graph", Some(&json!({ "user_id": user.id, "other_id": other.id })))
        .expect(200)
}

/// `(user follows other, other's mirror of it, other blocks user, user's mirror of that)`.
fn follow_and_block(user: &User, other: &User) -> (i64, i64, i64, i64) {
    let p = pair(user, other);
    let n = |v: &Value| v.as_i64().unwrap_or_else(|| panic!("not a number in {p}"));
    (
        n(&p["user"]["follows"]),
        n(&p["other"]["follower"]),
        n(&p["other"]["blocks"]),
        n(&p["user"]["blocked_by"]),
    )
}

/// Waits until the pair's facts and mirrors read `want`.
fn converge(user: &User, other: &User, want: (i64, i64, i64, i64), what: &str) {
    poll(what, CONVERGE_DEADLINE, || (follow_and_block(user, other) == want).then_some(()));
}

fn counts(user: &User) -> (i64, i64) {
    let p = user.profile();
    (p["followers_count"].as_i64().unwrap(), p["following_count"].as_i64().unwrap())
}

fn arm(name: String, times: i64) {
    admin("POST", "/v1/admin/test/fault", Some(&json!({ "name": name, "times": times }))).expect(200);
}

/// The outbox event of `kind` about `author` for `reader`, newest first.
fn event_of(author: &User, reader: &User, kind: &str) -> Value {
    let outbox = outbox_of(author);
    outbox["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == kind && e["reader_id"].to_string().trim_matches('"') == reader.id)
        .cloned()
        .unwrap_or_else(|| panic!("no {kind} event for {} in {outbox}", reader.id))
}

fn replay(event: &Value) {
    admin("POST", "/v1/admin/test/replay", Some(&json!({ "outbox_id": event["id"] }))).expect(200);
}

fn wait_done(author: &User, id: &Value) {
    poll("the replayed event to be carried out", CONVERGE_DEADLINE, || {
        let outbox = outbox_of(author);
        let e = outbox["events"].as_array().unwrap().iter().find(|e| &e["id"] == id).cloned();
        (e.is_some_and(|e| e["state"] == "done")).then_some(())
    });
}

#[test]
fn mirrors_follow_follows_unfollows_blocks_and_unblocks() {
    let a = register("mir_a");
    let b = register("mir_b");
    a.follow(&b);
    converge(&a, &b, (1, 1, 0, 0), "b's side to list a as a follower");
    assert_eq!((counts(&a).1, counts(&b).0), (1, 1), "following / followers counted once");
    a.unfollow(&b);
    converge(&a, &b, (0, 0, 0, 0), "the follower mirror to go");
    assert_eq!((counts(&a).1, counts(&b).0), (0, 0));
    // b follows a, then a blocks b: b's follow (on b's side) and its mirror (on a's) both go.
    a.follow(&b);
    b.follow(&a);
    a.block(&b);
    converge(&b, &a, (0, 0, 1, 1), "b's follow dropped and the block mirrored on b's side");
    converge(&a, &b, (0, 0, 0, 0), "a's follow of b gone with its mirror");
    assert_eq!(counts(&a), (0, 0));
    assert_eq!(counts(&b), (0, 0));
    a.delete(&format!("/v1/me/blocks/{}", b.id)).expect(200);
    converge(&b, &a, (0, 0, 0, 0), "the block mirror to go with the unblock");
    b.follow(&a);
    converge(&b, &a, (1, 1, 0, 0), "a new follow after the unblock");
}

#[test]
fn a_stalled_mirror_apply_is_retried_and_reads_miss_nothing_meanwhile() {
    let reader = register("mst_reader");
    let author = register("mst_author");
    activate(&reader);
    let before = id_of(&author.publish("before the follow", "public"));
    // The inline apply and the next two queued attempts fail: the follow stands on the
    // reader's side only, and its backfill event (which applies the mirror first) stays owed.
    arm(format!("stall_mirror:{}", reader.id), 3);
    reader.follow(&author);
    let feed = reader.get("/v1/feed").expect(200);
    assert!(ids(feed["items"].as_array().unwrap()).contains(&before), "pulled while the backfill is owed");
    converge(&reader, &author, (1, 1, 0, 0), "the queued retries to write the mirror");
    wait_drained(&author);
    assert_eq!(counts(&author).0, 1);
    // Once the mirror is there, fan-out pages the new follower: a new post reaches the window.
    let after = id_of(&author.publish("after the mirror", "public"));
    poll("the new post in the window", CONVERGE_DEADLINE, || {
        window_ids(&reader).contains(&after).then_some(())
    });
    let feed = reader.get("/v1/feed").expect(200);
    assert_eq!(ids(feed["items"].as_array().unwrap()), vec![after, before]);
}

#[test]
fn replayed_and_reordered_graph_events_converge_to_the_current_state() {
    let a = register("mrp_a");
    let b = register("mrp_b");
    a.follow(&b);
    let followed = event_of(&b, &a, "backfill");
    a.unfollow(&b);
    let unfollowed = event_of(&b, &a, "remove_author");
    converge(&a, &b, (0, 0, 0, 0), "the unfollow applied");
    // The follow's event again, after the unfollow: the follow is gone now, so no mirror.
    replay(&followed);
    wait_done(&b, &followed["id"]);
    assert_eq!(follow_and_block(&a, &b), (0, 0, 0, 0), "a stale follow event adds nothing");
    a.follow(&b);
    converge(&a, &b, (1, 1, 0, 0), "the second follow applied");
    // The old unfollow's event, twice, after the new follow: the follow stands, the mirror stays.
    for _ in 0..2 {
        replay(&unfollowed);
        wait_done(&b, &unfollowed["id"]);
    }
    assert_eq!(follow_and_block(&a, &b), (1, 1, 0, 0), "a stale unfollow event removes nothing");
    assert_eq!((counts(&a).1, counts(&b).0), (1, 1), "counters exact through the replays");
    // The same for a block: an old unblock event replayed while a new block stands.
    b.block(&a);
    b.delete(&format!("/v1/me/blocks/{}", a.id)).expect(200);
    let unblocked = event_of(&a, &b, "graph_mirror");
    b.block(&a);
    converge(&a, &b, (0, 0, 1, 1), "the second block mirrored");
    replay(&unblocked);
    wait_done(&a, &unblocked["id"]);
    assert_eq!(follow_and_block(&a, &b), (0, 0, 1, 1), "a stale unblock event removes no block");
    assert_eq!(counts(&a), (0, 0));
}

#[test]
fn reconciliation_repairs_mirrors_deleted_behind_the_events_back() {
    let a = register("mrc_a");
    let b = register("mrc_b");
    let c = register("mrc_c");
    a.follow(&b);
    c.block(&a);
    converge(&a, &b, (1, 1, 0, 0), "the follow mirrored");
    converge(&a, &c, (0, 0, 1, 1), "the block mirrored");
    // Lose both mirror rows (the followers count moves with its row, as a lost write's would).
    let lost = |user: &User, other: &User, table: &str| {
        let body = json!({ "user_id": user.id, "other_id": other.id, "delete_mirror": table });
        admin("POST", "/v1/admin/test/graph", Some(&body)).expect(200)["deleted"].as_i64().unwrap()
    };
    // (D1 counts the trigger's writes too: at least the row itself.)
    assert!(lost(&b, &a, "followers") >= 1);
    assert!(lost(&a, &c, "blocked_by") >= 1);
    assert_eq!(follow_and_block(&a, &b), (1, 0, 0, 0));
    assert_eq!(counts(&b).0, 0);
    // Point the graph check at a's edges (other passes may run too: they only move on).
    admin(
        "POST",
        "/v1/admin/test/graph",
        Some(&json!({ "user_id": a.id, "other_id": b.id, "rewind": true })),
    )
    .expect(200);
    poll("reconciliation to restore both mirrors", CONVERGE_DEADLINE, || {
        let pass = admin("POST", "/v1/admin/reconcile", None).expect(200);
        assert!(pass["graph"]["edges_checked"].as_u64().is_some(), "{pass}");
        (follow_and_block(&a, &b) == (1, 1, 0, 0) && follow_and_block(&a, &c) == (0, 0, 1, 1)).then_some(())
    });
    assert_eq!(counts(&b).0, 1, "the restored mirror counts again");
    assert_eq!(counts(&a).1, 1);
}
