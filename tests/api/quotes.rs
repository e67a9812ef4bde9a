//! Quotes (Mastodon 4.5: `quoted_status_id`, `quote_approval_policy`, `quote` with its state;
//! `/v1`'s `quote_of`, `quote_policy` and `quote`): the quoted post re-checked at every read, its
//! `quotes_count` exact under retries, a `quote` notification for its author, and the policy.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn masto_quote(user: &User, quoted: &str, extra: Value) -> Resp {
    let mut body = json!({ "status": "look at this", "quoted_status_id": quoted });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    user.post("/api/v1/statuses", body)
}

fn status(user: &User, id: &str) -> Value {
    user.get(&format!("/api/v1/statuses/{id}")).expect(200)
}

fn quote_notifications(user: &User) -> Vec<Value> {
    user.get("/api/v1/notifications?types[]=quote").expect(200).as_array().unwrap().clone()
}

#[test]
fn a_quote_shows_its_post_counts_exactly_notifies_its_author_and_goes_with_a_delete() {
    let (alice, bob) = (register("qt_alice"), register("qt_bob"));
    let quoted = id_of(&alice.publish("worth quoting", "public"));
    let quote = masto_quote(&bob, &quoted, json!({})).expect(200);
    assert_eq!(quote["quote"]["state"], "accepted", "{quote}");
    assert_eq!(quote["quote"]["quoted_status"]["id"], quoted.as_str());
    assert_eq!(quote["quote"]["quoted_status"]["content"], "<p>worth quoting</p>");
    let quote_id = id_of(&quote);
    assert_eq!(status(&bob, &quoted)["quotes_count"], 1);
    let listed = bob.get(&format!("/api/v1/statuses/{quoted}/quotes")).expect(200);
    assert_eq!(ids(listed.as_array().unwrap()), vec![quote_id.clone()]);
    let notes = quote_notifications(&alice);
    assert_eq!(notes.len(), 1, "{notes:?} {}", alice.get("/v1/notifications").body);
    assert_eq!(
        (notes[0]["status"]["id"].clone(), notes[0]["account"]["id"].clone()),
        (json!(quote_id), json!(bob.id))
    );

    // The quote's event converges the mirror again, and a replay of it: still one, one notification.
    wait_drained(&bob);
    admin("POST", "/v1/admin/test/replay", Some(&json!({ "post_id": quote_id }))).expect(200);
    wait_drained(&bob);
    assert_eq!(status(&alice, &quoted)["quotes_count"], 1);
    assert_eq!(quote_notifications(&alice).len(), 1);
    // On /v1 the same, as an extension.
    let v1 = bob.get(&format!("/v1/posts/{quote_id}")).expect(200);
    assert_eq!((v1["quote"]["id"].clone(), v1["quote"]["state"].clone()), (json!(quoted), json!("accepted")));
    assert_eq!(v1["quote"]["post"]["body"], "worth quoting", "{v1}");

    bob.delete(&format!("/api/v1/statuses/{quote_id}")).expect(200);
    assert_eq!(status(&alice, &quoted)["quotes_count"], 0, "at once, by the delete itself");
    assert!(quote_notifications(&alice).is_empty());
    assert!(bob.get(&format!("/api/v1/statuses/{quoted}/quotes")).expect(200).as_array().unwrap().is_empty());
    wait_drained(&bob);
    assert_eq!(status(&alice, &quoted)["quotes_count"], 0, "the delete's event changes nothing more");
}

#[test]
fn what_a_quote_shows_is_the_quoted_post_as_the_reader_may_see_it_now() {
    let (alice, bob, carol) = (register("qs_alice"), register("qs_bob"), register("qs_carol"));
    carol.follow(&bob);
    let gone = id_of(&alice.publish("soon deleted", "public"));
    let narrowed = id_of(&alice.publish("soon followers-only", "public"));
    let quote_gone = id_of(&bob.post("/v1/posts", json!({ "body": "q1", "quote_of": gone })).expect(201));
    let quote_narrowed =
        id_of(&bob.post("/v1/posts", json!({ "body": "q2", "quote_of": narrowed })).expect(201));
    alice.delete(&format!("/v1/posts/{gone}")).expect(204);
    alice.patch(&format!("/v1/posts/{narrowed}"), json!({ "visibility": "followers" })).expect(200);
    let shown = status(&carol, &quote_gone);
    assert_eq!(
        (shown["quote"]["state"].clone(), shown["quote"]["quoted_status"].clone()),
        (json!("deleted"), Value::Null)
    );
    let shown = status(&carol, &quote_narrowed);
    assert_eq!(shown["quote"]["state"], "unauthorized", "{shown}");
    assert_eq!(shown["quote"]["quoted_status"], Value::Null);
    // Its author still sees their own post inside it.
    assert_eq!(status(&alice, &quote_narrowed)["quote"]["state"], "accepted");

    // A block between the reader and the quoted author: the quote stays, empty, and says so.
    let open = id_of(&alice.publish("open", "public"));
    let quote_open = id_of(&bob.post("/v1/posts", json!({ "body": "q3", "quote_of": open })).expect(201));
    alice.block(&carol);
    assert_eq!(status(&carol, &quote_open)["quote"]["state"], "blocked_account");
    // In the reader's home the same, through the feed read.
    let in_home = poll("the quote in carol's home", DEADLINE, || {
        let home = carol.get("/api/v1/timelines/home?limit=40").expect(200);
        home.as_array().unwrap().iter().find(|s| s["id"] == quote_open.as_str()).cloned()
    });
    assert_eq!(in_home["quote"]["state"], "blocked_account", "{in_home}");
}

#[test]
fn only_what_the_policy_and_visibility_allow_may_be_quoted_and_a_refusal_posts_nothing() {
    let (alice, follower, stranger) =
        (register("qp_alice"), register("qp_follower"), register("qp_stranger"));
    follower.follow(&alice);
    let followers_only = id_of(&alice.publish("inner circle", "followers"));
    let direct = id_of(&alice.publish("just me", "private"));
    let no_quotes =
        id_of(&alice.post("/v1/posts", json!({ "body": "no", "quote_policy": "nobody" })).expect(201));
    let by_followers =
        id_of(&alice.post("/v1/posts", json!({ "body": "fans", "quote_policy": "followers" })).expect(201));
    for (who, quoted) in [
        (&follower, &followers_only),
        (&stranger, &no_quotes),
        (&follower, &no_quotes),
        (&stranger, &by_followers),
    ] {
        let refused = masto_quote(who, quoted, json!({}));
        assert_eq!(refused.status, 422, "{}: {}", who.handle, refused.body);
    }
    assert_eq!(masto_quote(&stranger, &direct, json!({})).status, 422, "hidden: as if absent");
    assert_eq!(masto_quote(&alice, &direct, json!({})).status, 422, "a direct post is never quoted");
    assert_eq!(masto_quote(&stranger, "12345", json!({})).status, 422);
    assert_eq!(masto_quote(&stranger, "nope", json!({})).status, 422);
    let bad_policy = masto_quote(&stranger, &by_followers, json!({ "quote_approval_policy": "friends" }));
    assert_eq!(bad_policy.status, 422);
    for who in [&follower, &stranger] {
        let posts = who.get(&format!("/v1/users/{}/posts", who.id)).expect(200);
        assert!(posts["items"].as_array().unwrap().is_empty(), "a refusal posts nothing: {posts}");
    }
    assert_eq!(masto_quote(&follower, &by_followers, json!({})).status, 200);
    assert_eq!(masto_quote(&alice, &no_quotes, json!({})).status, 200, "its author may");
    assert_eq!(masto_quote(&alice, &followers_only, json!({})).status, 200, "its author may");
    let approval = status(&stranger, &by_followers)["quote_approval"].clone();
    assert_eq!(approval["automatic"], json!(["followers"]), "{approval}");
}
