//! Follow requests (issue 42): a locked account's new follows are requests (no follow, no counts,
//! nothing followers-only shown), listed and answered by the account, withdrawn by an unfollow,
//! removed by a block, and let in all at once when the account unlocks.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;
use crate::profiles::update_form;

fn follow(user: &User, other: &User) -> Value {
    user.post(&format!("/api/v1/accounts/{}/follow", other.id), json!({})).expect(200)
}

fn relationship(user: &User, other: &User) -> Value {
    user.get(&format!("/api/v1/accounts/relationships?id[]={}", other.id)).expect(200)[0].clone()
}

fn requests(user: &User) -> Vec<String> {
    ids(user.get("/api/v1/follow_requests").expect(200).as_array().unwrap())
}

fn lock(user: &User, locked: bool) {
    let account = update_form(user, &format!("locked={locked}")).expect(200);
    assert_eq!(account["locked"], locked);
}

fn counts(user: &User) -> (i64, i64) {
    let me = user.get("/api/v1/accounts/verify_credentials").expect(200);
    (me["followers_count"].as_i64().unwrap(), me["following_count"].as_i64().unwrap())
}

#[test]
fn a_locked_accounts_new_follows_are_requests_until_authorized() {
    let alice = register("fr_alice");
    let bob = register("fr_bob");
    lock(&alice, true);
    // Others see the lock on the account.
    assert_eq!(bob.get(&format!("/api/v1/accounts/{}", alice.id)).expect(200)["locked"], true);
    let secret =
        alice.post("/api/v1/statuses", json!({ "status": "for followers", "visibility": "private" }));
    let secret = secret.expect(200)["id"].as_str().unwrap().to_string();
    // The follow asks; a retry asks once.
    for _ in 0..2 {
        let asked = follow(&bob, &alice);
        assert_eq!((asked["following"].as_bool(), asked["requested"].as_bool()), (Some(false), Some(true)));
    }
    assert_eq!(requests(&alice), vec![bob.id.clone()]);
    assert_eq!(relationship(&alice, &bob)["requested_by"], true);
    assert_eq!(relationship(&bob, &alice)["requested"], true);
    assert_eq!(
        alice.get("/api/v1/accounts/verify_credentials").expect(200)["source"]["follow_requests_count"],
        1
    );
    assert_eq!(alice.get(&format!("/api/v1/follow_requests/{}", bob.id)).expect(200)["id"], bob.id.as_str());
    // No follow: no counts, and nothing followers-only reaches the requester.
    assert_eq!((counts(&alice).0, counts(&bob).1), (0, 0));
    assert_eq!(bob.get(&format!("/api/v1/statuses/{secret}")).status, 404);
    let listed = bob.get(&format!("/api/v1/accounts/{}/statuses", alice.id)).expect(200);
    assert!(listed.as_array().unwrap().is_empty(), "{listed}");
    // The locked account is told, once.
    let told = alice.get("/api/v1/notifications?types[]=follow_request").expect(200);
    let told: Vec<&Value> =
        told.as_array().unwrap().iter().filter(|n| n["account"]["id"] == bob.id.as_str()).collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["type"], "follow_request");
    // Authorized: the real follow (counts, the post), the request gone; again answers the same.
    for _ in 0..2 {
        let answered =
            alice.post(&format!("/api/v1/follow_requests/{}/authorize", bob.id), json!({})).expect(200);
        assert_eq!(
            (answered["followed_by"].as_bool(), answered["requested_by"].as_bool()),
            (Some(true), Some(false))
        );
    }
    assert!(requests(&alice).is_empty());
    let now = relationship(&bob, &alice);
    assert_eq!((now["following"].as_bool(), now["requested"].as_bool()), (Some(true), Some(false)));
    assert_eq!((counts(&alice).0, counts(&bob).1), (1, 1));
    bob.get(&format!("/api/v1/statuses/{secret}")).expect(200);
    poll("the followers-only post in the new follower's home", Duration::from_secs(60), || {
        let home = bob.get("/api/v1/timelines/home").expect(200);
        home.as_array().unwrap().iter().any(|s| s["id"] == secret.as_str()).then_some(())
    });
    // A follower already in stays in when following again.
    assert_eq!(follow(&bob, &alice)["following"], true);
    // Nothing to authorize: 404.
    let nobody = register("fr_nobody");
    assert_eq!(
        alice.post(&format!("/api/v1/follow_requests/{}/authorize", nobody.id), json!({})).status,
        404
    );
    assert_eq!(alice.get(&format!("/api/v1/follow_requests/{}", nobody.id)).status, 404);
}

#[test]
fn requests_are_rejected_withdrawn_blocked_and_let_in_by_unlocking() {
    let alice = register("fr_locked");
    let (bob, carol, dave, erin) = (register("fr_b"), register("fr_c"), register("fr_d"), register("fr_e"));
    lock(&alice, true);
    for requester in [&bob, &carol, &dave, &erin] {
        assert_eq!(follow(requester, &alice)["requested"], true);
    }
    let mut waiting = requests(&alice);
    waiting.sort();
    let mut expected = vec![bob.id.clone(), carol.id.clone(), dave.id.clone(), erin.id.clone()];
    expected.sort();
    assert_eq!(waiting, expected);
    // Paged newest first, with a Link to the rest.
    let first = alice.get("/api/v1/follow_requests?limit=2").expect(200);
    assert_eq!(ids(first.as_array().unwrap()), vec![erin.id.clone(), dave.id.clone()]);
    // Rejected (twice: the same answer), withdrawn by an unfollow, removed by a block.
    for _ in 0..2 {
        let rejected =
            alice.post(&format!("/api/v1/follow_requests/{}/reject", bob.id), json!({})).expect(200);
        assert_eq!(rejected["requested_by"], false);
    }
    assert_eq!(relationship(&bob, &alice)["requested"], false);
    carol.post(&format!("/api/v1/accounts/{}/unfollow", alice.id), json!({})).expect(200);
    assert_eq!(relationship(&carol, &alice)["requested"], false);
    alice.post(&format!("/api/v1/accounts/{}/block", dave.id), json!({})).expect(200);
    alice.post(&format!("/api/v1/accounts/{}/unblock", dave.id), json!({})).expect(200);
    assert_eq!(requests(&alice), vec![erin.id.clone()]);
    let told = alice.get("/api/v1/notifications?types[]=follow_request").expect(200);
    assert_eq!(ids(told.as_array().unwrap()).len(), 1, "only erin's request is still told: {told}");
    // Unlocking lets the one waiting in; new follows are follows again.
    lock(&alice, false);
    assert!(requests(&alice).is_empty());
    assert_eq!(relationship(&erin, &alice)["following"], true);
    assert_eq!(follow(&bob, &alice)["following"], true);
    assert_eq!(counts(&alice).0, 2);
    // /v1's follow says it asked.
    lock(&alice, true);
    let v1 = carol.put(&format!("/v1/me/following/{}", alice.id), None).expect(200);
    assert_eq!((v1["following"].as_bool(), v1["requested"].as_bool()), (Some(false), Some(true)));
}
