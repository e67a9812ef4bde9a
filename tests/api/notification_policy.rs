//! Mastodon 4.3's notification policy and requests: a notification from an actor the policy
//! filters is held out of the lists and counts, grouped into one request per actor; accepting
//! merges them and lets the actor's later ones pass; dismissing drops them; `drop` never
//! stores them.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);
/// A resent event waits behind the shared queue's backlog of every other module's events.
const QUEUE_DEADLINE: Duration = Duration::from_secs(150);

fn mention(author: &User, recipient: &User, text: &str) -> String {
    id_of(
        &author
            .post("/api/v1/statuses", json!({ "status": format!("@{} {text}", recipient.handle) }))
            .expect(200),
    )
}

/// The status ids of the user's mention notifications, newest first.
fn mentions(user: &User) -> Vec<String> {
    let page = user.get("/api/v1/notifications?types[]=mention").expect(200);
    page.as_array().unwrap().iter().map(|n| n["status"]["id"].as_str().unwrap().to_string()).collect()
}

fn requests(user: &User) -> Value {
    user.get("/api/v1/notifications/requests").expect(200)
}

fn wait_requests(user: &User, n: usize) -> Value {
    poll("the filtered notifications' requests", DEADLINE, || {
        let r = requests(user);
        (r.as_array().unwrap().len() == n).then_some(r)
    })
}

#[test]
fn the_policy_is_read_and_changed_with_put_or_patch() {
    let alice = register("np_policy");
    let p = alice.get("/api/v2/notifications/policy").expect(200);
    assert_eq!(p["for_not_following"], "accept");
    assert_eq!(p["summary"], json!({ "pending_requests_count": 0, "pending_notifications_count": 0 }));
    let body = json!({
        "for_new_accounts": "drop", "for_not_followers": "filter", "for_not_following": "drop",
        "for_private_mentions": "filter", "for_limited_accounts": "drop",
    });
    let updated = alice.put("/api/v2/notifications/policy", Some(body.clone())).expect(200);
    for (k, v) in body.as_object().unwrap() {
        assert_eq!(&updated[k], v, "{k}");
    }
    let patched =
        alice.patch("/api/v2/notifications/policy", json!({ "for_not_following": "accept" })).expect(200);
    assert_eq!(patched["for_not_following"], "accept");
    assert_eq!(patched["for_not_followers"], "filter", "only the values given change");
    // A bad value: 422, nothing changed.
    let r = alice.patch("/api/v2/notifications/policy", json!({ "for_not_following": "maybe" }));
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(alice.get("/api/v2/notifications/policy").expect(200), patched);
    assert_eq!(alice.get("/api/v1/notifications/requests/merged").expect(200), json!({ "merged": true }));
    // Mastodon 4.2's v1 policy: booleans over the same row.
    let v1 = alice.get("/api/v1/notifications/policy").expect(200);
    assert_eq!(
        (v1["filter_not_following"].clone(), v1["filter_not_followers"].clone()),
        (json!(false), json!(true))
    );
    let v1 = alice
        .put(
            "/api/v1/notifications/policy",
            Some(json!({ "filter_not_following": true, "filter_not_followers": false })),
        )
        .expect(200);
    assert_eq!(
        (v1["filter_not_following"].clone(), v1["filter_not_followers"].clone()),
        (json!(true), json!(false))
    );
    let v2 = alice.get("/api/v2/notifications/policy").expect(200);
    assert_eq!(
        (v2["for_not_following"].clone(), v2["for_not_followers"].clone()),
        (json!("filter"), json!("accept"))
    );
    assert_eq!(v2["for_new_accounts"], "drop", "a value v1 does not name stays");
    let r = alice.put("/api/v1/notifications/policy", Some(json!({ "filter_not_following": "perhaps" })));
    assert_eq!(r.status, 422, "{}", r.body);
}

#[test]
fn filtered_mentions_become_a_request_that_accept_merges() {
    let alice = register("np_alice");
    let bob = register("np_bob");
    let carol = register("np_carol");
    alice.follow(&carol);
    alice.patch("/api/v2/notifications/policy", json!({ "for_not_following": "filter" })).expect(200);
    let held = mention(&bob, &alice, "hello");
    let held2 = mention(&bob, &alice, "again");
    let passed = mention(&carol, &alice, "I am followed");
    poll("the followed account's mention", DEADLINE, || mentions(&alice).contains(&passed).then_some(()));
    let r = wait_requests(&alice, 1);
    assert_eq!(r[0]["account"]["id"], bob.id.as_str());
    assert_eq!(r[0]["notifications_count"], "2");
    let id = r[0]["id"].as_str().unwrap().to_string();
    assert_eq!(alice.get(&format!("/api/v1/notifications/requests/{id}")).expect(200), r[0]);
    // Held out of the list, the unread count and the grouped list.
    let listed = mentions(&alice);
    assert!(!listed.contains(&held) && !listed.contains(&held2), "{listed:?}");
    let grouped = alice.get("/api/v2/notifications").expect(200);
    assert!(grouped["accounts"].as_array().unwrap().iter().all(|a| a["id"] != bob.id.as_str()), "{grouped}");
    assert_eq!(alice.get("/api/v1/notifications/unread_count").expect(200)["count"], 1);
    let policy = alice.get("/api/v2/notifications/policy").expect(200);
    assert_eq!(policy["summary"], json!({ "pending_requests_count": 1, "pending_notifications_count": 2 }));

    alice.post(&format!("/api/v1/notifications/requests/{id}/accept"), json!({})).expect(200);
    let listed = mentions(&alice);
    assert!(listed.contains(&held) && listed.contains(&held2), "merged at once: {listed:?}");
    assert_eq!(requests(&alice), json!([]));
    assert_eq!(alice.get(&format!("/api/v1/notifications/requests/{id}")).status, 404);
    // Later ones from the accepted actor pass.
    let later = mention(&bob, &alice, "after accepting");
    poll("the accepted actor's new mention", DEADLINE, || mentions(&alice).contains(&later).then_some(()));
    assert_eq!(requests(&alice), json!([]));
}

#[test]
fn dismiss_drops_a_request_and_drop_never_stores() {
    let alice = register("np_dis_alice");
    let bob = register("np_dis_bob");
    let dave = register("np_dis_dave");
    alice.patch("/api/v2/notifications/policy", json!({ "for_not_following": "filter" })).expect(200);
    // Bob's post event is lost: the request's own write makes the notification, and the event's
    // second write of it comes only when the sweep resends it, after the dismiss.
    lose_next_announce(&bob);
    let held = mention(&bob, &alice, "hi");
    mention(&dave, &alice, "hey");
    let r = wait_requests(&alice, 2);
    // Bulk dismiss of one of them by `id[]`; an id that names no request changes nothing.
    alice.post("/api/v1/notifications/requests/dismiss", json!({ "id": [bob.id, "12345"] })).expect(200);
    poll("bob's resent post event", QUEUE_DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        (outbox_of(&bob)["pending"] == 0).then_some(())
    });
    let left = requests(&alice);
    assert_eq!(left.as_array().unwrap().len(), 1, "a late write brings nothing back: {left} (was {r})");
    assert_eq!(left[0]["account"]["id"], dave.id.as_str());
    assert!(!mentions(&alice).contains(&held), "dismissed ones are gone, not merged");
    // Bulk accept of the rest.
    alice.post("/api/v1/notifications/requests/accept", json!({ "id": [dave.id] })).expect(200);
    assert_eq!(requests(&alice), json!([]));
    assert_eq!(mentions(&alice).len(), 1);
    // Unknown request: 404.
    assert_eq!(
        alice.post(&format!("/api/v1/notifications/requests/{}/dismiss", bob.id), json!({})).status,
        404
    );

    // `drop`: never stored, not even as a request.
    let erin = register("np_dis_erin");
    alice.patch("/api/v2/notifications/policy", json!({ "for_not_following": "drop" })).expect(200);
    let dropped = mention(&erin, &alice, "into the void");
    // A followed account's mention after it is the marker that the dropped one was processed.
    let frank = register("np_dis_frank");
    alice.follow(&frank);
    let marker = mention(&frank, &alice, "followed");
    poll("the followed account's mention", DEADLINE, || mentions(&alice).contains(&marker).then_some(()));
    assert!(!mentions(&alice).contains(&dropped));
    assert_eq!(requests(&alice), json!([]));
    let summary = alice.get("/api/v2/notifications/policy").expect(200)["summary"].clone();
    assert_eq!(summary, json!({ "pending_requests_count": 0, "pending_notifications_count": 0 }));
}

#[test]
fn not_followers_filters_likes_from_strangers_but_not_from_followers() {
    let alice = register("np_nf_alice");
    let fan = register("np_nf_fan");
    let stranger = register("np_nf_stranger");
    fan.follow(&alice);
    alice.patch("/api/v2/notifications/policy", json!({ "for_not_followers": "filter" })).expect(200);
    let post = id_of(&alice.publish("like me", "public"));
    stranger.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    fan.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    let likers = |u: &User| -> Vec<String> {
        let page = u.get("/api/v1/notifications?types[]=favourite").expect(200);
        page.as_array().unwrap().iter().map(|n| n["account"]["id"].as_str().unwrap().to_string()).collect()
    };
    poll("the follower's like", DEADLINE, || likers(&alice).contains(&fan.id).then_some(()));
    assert!(!likers(&alice).contains(&stranger.id));
    let r = wait_requests(&alice, 1);
    assert_eq!(r[0]["account"]["id"], stranger.id.as_str());
}
