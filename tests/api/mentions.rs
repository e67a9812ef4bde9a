//! Mentions (`@handle` in a post): resolved when the post is published, listed on the post
//! (`mentions` on `/v1` and on the Mastodon Status), and one `mention` notification for each
//! account named (a mention lets it see the post), none for one that blocks or mutes the author; Mastodon's
//! `allowed_mentions` refuses a post naming anyone else.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);
/// A resent event waits behind the shared queue's backlog of every other module's events.
const QUEUE_DEADLINE: Duration = Duration::from_secs(150);

fn mentions_from(user: &User, author: &User) -> Vec<Value> {
    let items = user.get("/v1/notifications").expect(200)["items"].as_array().unwrap().clone();
    items.into_iter().filter(|n| n["kind"] == "mention" && n["actor"]["id"] == author.id.as_str()).collect()
}

fn masto_post(user: &User, form: &str) -> Resp {
    let auth = format!("Bearer {}", user.token);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/x-www-form-urlencoded")];
    raw("POST", "/api/v1/statuses", &headers, form.as_bytes())
}

#[test]
fn a_mention_lists_the_account_and_notifies_it_once() {
    let author = register("mn_author");
    let bob = register("mn_bob");
    let text = format!(
        "hi @{} and @{} again, @nobody_at_all, @{}@other.example",
        bob.handle,
        bob.handle.to_uppercase(),
        bob.handle
    );
    let post = author.publish(&text, "public");
    assert_eq!(post["mentions"], json!([{ "id": bob.id, "handle": bob.handle }]), "{post}");
    let status = author.get(&format!("/api/v1/statuses/{}", id_of(&post))).expect(200);
    assert_eq!(status["mentions"][0]["acct"], bob.handle.as_str(), "{status}");
    assert_eq!(status["mentions"][0]["id"], bob.id.as_str());
    assert_eq!(status["mentions"].as_array().unwrap().len(), 1);

    let made = mentions_from(&bob, &author);
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(made[0]["post"]["id"], id_of(&post).as_str());
    // The post's own event makes it again, idempotently: still one.
    wait_drained(&author);
    assert_eq!(mentions_from(&bob, &author).len(), 1);
    // Mastodon: a `mention` with the status; `types[]=mention` finds it.
    let masto = bob.get("/api/v1/notifications?types[]=mention").expect(200);
    assert_eq!(masto[0]["type"], "mention", "{masto}");
    assert_eq!(masto[0]["status"]["id"], id_of(&post).as_str());
    // Mentioning oneself notifies nobody.
    author.publish(&format!("note to @{}", author.handle), "public");
    assert!(author.get("/v1/notifications").expect(200)["items"].as_array().unwrap().is_empty());

    // The post deleted: its notification goes with it.
    author.delete(&format!("/v1/posts/{}", id_of(&post))).expect(204);
    poll("the mention's notification gone", DEADLINE, || {
        mentions_from(&bob, &author).is_empty().then_some(())
    });
}

#[test]
fn every_account_named_is_notified_whatever_the_visibility_unless_it_blocks_or_mutes_the_author() {
    let author = register("mv_author");
    let (blocker, muter, stranger, follower) =
        (register("mv_blocker"), register("mv_muter"), register("mv_stranger"), register("mv_follower"));
    blocker.block(&author);
    muter.put(&format!("/v1/me/mutes/{}", author.id), None).expect(200);
    follower.follow(&author);
    let all = [&blocker, &muter, &stranger, &follower].map(|u| format!("@{}", u.handle)).join(" ");
    author.publish(&format!("public: {all}"), "public");
    author.publish(&format!("followers: {all}"), "followers");
    author.publish(&format!("private: {all}"), "private");
    wait_drained(&author);
    assert!(mentions_from(&blocker, &author).is_empty());
    assert!(mentions_from(&muter, &author).is_empty());
    let bodies = |u: &User| -> Vec<String> {
        mentions_from(u, &author).iter().map(|n| n["post"]["body"].as_str().unwrap().to_string()).collect()
    };
    // A mention opens a followers-only or direct post to its account (Mastodon's rule).
    let every = vec![format!("private: {all}"), format!("followers: {all}"), format!("public: {all}")];
    assert_eq!(bodies(&stranger), every);
    assert_eq!(bodies(&follower), every);
}

#[test]
fn allowed_mentions_refuses_a_post_naming_anyone_else_and_too_many_mentions_are_refused() {
    let author = register("ma_author");
    let (bob, carol) = (register("ma_bob"), register("ma_carol"));
    let text = format!("hello @{} @{}", bob.handle, carol.handle);
    let form = |allowed: &[&User]| {
        let mut form = format!("status={}", text.replace('@', "%40").replace(' ', "+"));
        for u in allowed {
            form.push_str(&format!("&allowed_mentions[]={}", u.id));
        }
        form
    };
    let refused = masto_post(&author, &form(&[&bob]));
    assert_eq!(refused.status, 422, "{}", refused.body);
    let unexpected: Vec<&str> = refused.body["unexpected_accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(unexpected, vec![carol.id.as_str()], "Mastodon's shape: {}", refused.body);
    // An empty list allows nobody (JSON `[]`), as Mastodon.
    let json_post = author.post("/api/v1/statuses", json!({ "status": text, "allowed_mentions": [] }));
    assert_eq!(json_post.status, 422, "{}", json_post.body);
    assert_eq!(json_post.body["unexpected_accounts"].as_array().unwrap().len(), 2);
    assert!(mentions_from(&bob, &author).is_empty(), "nothing was posted");
    let posted = masto_post(&author, &form(&[&bob, &carol]));
    assert_eq!(posted.status, 200, "{}", posted.body);
    let status = posted.body;
    assert_eq!(status["mentions"].as_array().unwrap().len(), 2, "{status}");
    assert_eq!(mentions_from(&carol, &author).len(), 1);

    let many: Vec<String> = (0..21).map(|i| format!("@someone_{i}")).collect();
    author
        .post("/v1/posts", json!({ "body": many.join(" "), "visibility": "public" }))
        .expect_problem(422, "invalid_field");
}

#[test]
fn a_dismissed_or_cleared_mention_stays_gone_when_the_posts_event_writes_it_again() {
    let author = register("mn_dis_author");
    let bob = register("mn_dis_bob");
    // The post's event is lost, so its second write of the notification comes after the dismiss.
    lose_next_announce(&author);
    let first = id_of(&author.publish(&format!("@{} one", bob.handle), "public"));
    let made = mentions_from(&bob, &author);
    assert_eq!(made.len(), 1, "{made:?}");
    bob.post(&format!("/api/v1/notifications/{}/dismiss", made[0]["id"].as_str().unwrap()), json!({}))
        .expect(200);
    lose_next_announce(&author);
    let second = id_of(&author.publish(&format!("@{} two", bob.handle), "public"));
    assert_eq!(mentions_from(&bob, &author).len(), 1);
    bob.post("/api/v1/notifications/clear", json!({})).expect(200);
    poll("the author's resent post events", QUEUE_DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        (outbox_of(&author)["pending"] == 0).then_some(())
    });
    assert!(mentions_from(&bob, &author).is_empty(), "neither {first} nor {second} comes back");
    // A new post mentioning bob notifies as before.
    let third = id_of(&author.publish(&format!("@{} three", bob.handle), "public"));
    let made = mentions_from(&bob, &author);
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(made[0]["post"]["id"], third.as_str());
}
