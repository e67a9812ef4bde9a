//! Notifications (`/v1/notifications`): a follow, a like of your post and a comment on it each
//! make one, on their transition only; an unfollow, unlike or deleted comment takes it away;
//! blocks, suspensions, deletes and takedowns hide them at read time; the cursor pages them
//! exactly once; the unread count follows the read marker; dismiss and clear.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn notifications(user: &User, query: &str) -> Vec<Value> {
    user.get(&format!("/v1/notifications{query}")).expect(200)["items"].as_array().expect("items").clone()
}

fn kinds(items: &[Value]) -> Vec<String> {
    items.iter().map(|n| n["kind"].as_str().unwrap_or_default().to_string()).collect()
}

/// Waits until the user's notifications are exactly `want` kinds, newest first.
#[track_caller]
fn wait_kinds(user: &User, want: &[&str], what: &str) -> Vec<Value> {
    poll(what, DEADLINE, || {
        let items = notifications(user, "");
        (kinds(&items) == want).then_some(items)
    })
}

fn like(user: &User, post: &str) {
    user.put(&format!("/v1/posts/{post}/like"), None).expect(200);
}

fn unlike(user: &User, post: &str) {
    user.delete(&format!("/v1/posts/{post}/like")).expect(200);
}

fn comment(user: &User, post: &str, body: &str) -> String {
    id_of(&user.post(&format!("/v1/posts/{post}/comments"), json!({ "body": body })).expect(201))
}

fn unread(user: &User) -> Value {
    user.get("/v1/notifications/unread").expect(200)
}

#[test]
fn a_follow_a_like_and_a_reply_each_notify_the_author_once_and_your_own_actions_never() {
    let author = register("nt_author");
    let fan = register("nt_fan");
    let post = id_of(&author.publish("notice me", "public"));
    fan.follow(&author);
    like(&fan, &post);
    let reply = comment(&fan, &post, "noticed");
    // Your own like and comment notify nobody.
    like(&author, &post);
    comment(&author, &post, "me too");
    let items = wait_kinds(&author, &["reply", "favourite", "follow"], "the three notifications");
    for n in &items {
        assert_eq!(n["actor"]["id"], fan.id.as_str(), "{n}");
        assert!(n["created_at"].as_str().is_some_and(|t| t.ends_with('Z')), "{n}");
    }
    assert_eq!(items[0]["comment"]["id"], reply.as_str());
    assert_eq!(items[0]["post"]["id"], post.as_str());
    assert_eq!(items[1]["post"]["id"], post.as_str());
    assert_eq!(items[1]["comment"], Value::Null);
    assert_eq!((items[2]["post"].clone(), items[2]["comment"].clone()), (Value::Null, Value::Null));
    let ids: Vec<u64> = items.iter().map(|n| n["id"].as_str().unwrap().parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first, ids increasing with time: {ids:?}");
    assert!(notifications(&fan, "").is_empty(), "the fan was notified of nothing");
}

#[test]
fn repeated_likes_leave_one_an_unlike_removes_it_and_a_new_like_is_a_new_notification() {
    let author = register("ntl_author");
    let fan = register("ntl_fan");
    let post = id_of(&author.publish("like me", "public"));
    for _ in 0..3 {
        like(&fan, &post);
    }
    let first = wait_kinds(&author, &["favourite"], "one favourite");
    unlike(&fan, &post);
    unlike(&fan, &post);
    assert!(notifications(&author, "").is_empty(), "the unlike removed it");
    like(&fan, &post);
    let again = wait_kinds(&author, &["favourite"], "the new favourite");
    let (old, new): (u64, u64) = (
        first[0]["id"].as_str().unwrap().parse().unwrap(),
        again[0]["id"].as_str().unwrap().parse().unwrap(),
    );
    assert!(new > old, "a new notification, newer than the removed one");
    // A dismissed notification stays dismissed while the like stays on.
    author.delete(&format!("/v1/notifications/{new}")).expect(204);
    like(&fan, &post);
    assert!(notifications(&author, "").is_empty());
}

#[test]
fn deleting_the_comment_or_the_post_and_unfollowing_take_them_away() {
    let author = register("ntd_author");
    let fan = register("ntd_fan");
    let kept = id_of(&author.publish("kept", "public"));
    let doomed = id_of(&author.publish("doomed", "public"));
    fan.follow(&author);
    let reply = comment(&fan, &kept, "a reply");
    like(&fan, &doomed);
    wait_kinds(&author, &["favourite", "reply", "follow"], "three notifications");
    fan.delete(&format!("/v1/comments/{reply}")).expect(204);
    author.delete(&format!("/v1/posts/{doomed}")).expect(204);
    assert_eq!(kinds(&notifications(&author, "")), ["follow"]);
    fan.unfollow(&author);
    wait_kinds(&author, &[], "the unfollow to take the follow away");
}

#[test]
fn blocks_either_way_suspension_and_takedown_hide_them_and_lifting_shows_them_again() {
    let author = register("ntb_author");
    let fan = register("ntb_fan");
    let other = register("ntb_other");
    let post = id_of(&author.publish("watched", "public"));
    let other_post = id_of(&author.publish("another", "public"));
    like(&fan, &post);
    like(&other, &other_post);
    wait_kinds(&author, &["favourite", "favourite"], "two favourites");
    let actors = |user: &User| -> Vec<String> {
        notifications(user, "").iter().map(|n| n["actor"]["handle"].as_str().unwrap().to_string()).collect()
    };
    // The author blocks the fan: hidden; unblocked: back (the like stayed on).
    author.block(&fan);
    assert_eq!(actors(&author), vec![other.handle.as_str()]);
    author.delete(&format!("/v1/me/blocks/{}", fan.id)).expect(200);
    poll("the unblock to show it again", DEADLINE, || (actors(&author).len() == 2).then_some(()));
    // The fan blocks the author: hidden from the author's side once the mirror applies.
    fan.block(&author);
    poll("the fan's block to hide it", DEADLINE, || {
        (actors(&author) == [other.handle.clone()]).then_some(())
    });
    fan.delete(&format!("/v1/me/blocks/{}", author.id)).expect(200);
    poll("the unblock to show it again", DEADLINE, || (actors(&author).len() == 2).then_some(()));
    // A suspended actor and a taken-down post.
    let reason = json!({ "reason": "test", "operator": "test-op" });
    admin("POST", &format!("/v1/admin/users/{}/suspend", other.id), Some(&reason)).expect(200);
    assert_eq!(actors(&author), vec![fan.handle.as_str()]);
    admin("POST", &format!("/v1/admin/posts/{post}/takedown"), Some(&reason)).expect(200);
    assert!(actors(&author).is_empty());
    assert_eq!(unread(&author)["count"], 0, "hidden ones are not unread either");
    admin("POST", &format!("/v1/admin/users/{}/reinstate", other.id), Some(&reason)).expect(200);
    admin("POST", &format!("/v1/admin/posts/{post}/restore"), Some(&reason)).expect(200);
    assert_eq!(actors(&author).len(), 2);
}

#[test]
fn the_cursor_pages_every_notification_once_and_kinds_filter() {
    let author = register("ntp_author");
    let post = id_of(&author.publish("popular", "public"));
    let fans: Vec<User> = (0..9).map(|_| register("ntp_fan")).collect();
    for fan in &fans {
        like(fan, &post);
    }
    comment(&fans[0], &post, "first!");
    let all = collect_pages(&author, "/v1/notifications?limit=4");
    assert_eq!(all.len(), 10);
    let mut ids: Vec<String> = all.iter().map(id_of).collect();
    ids.dedup();
    assert_eq!(ids.len(), 10, "each once");
    let favourites = collect_pages(&author, "/v1/notifications?limit=3&kinds=favourite");
    assert_eq!(favourites.len(), 9);
    assert!(kinds(&favourites).iter().all(|k| k == "favourite"));
    assert_eq!(kinds(&notifications(&author, "?kinds=reply,follow")), ["reply"]);
    author.get("/v1/notifications?kinds=boost").expect_problem(422, "invalid_field");
    // A cursor is bound to its filter.
    let page = author.get("/v1/notifications?limit=3&kinds=favourite").expect(200);
    let cursor = page["next_cursor"].as_str().expect("more");
    assert_eq!(author.get(&format!("/v1/notifications?cursor={cursor}")).status, 400);
}

#[test]
fn unread_follows_the_marker_and_dismiss_and_clear_are_the_recipients_own() {
    let author = register("ntu_author");
    let fan = register("ntu_fan");
    let post = id_of(&author.publish("count me", "public"));
    fan.follow(&author);
    like(&fan, &post);
    comment(&fan, &post, "one");
    let items = wait_kinds(&author, &["reply", "favourite", "follow"], "three notifications");
    assert_eq!(unread(&author), json!({ "count": 3, "capped": false, "last_read_id": null }));
    assert_eq!(author.get("/v1/notifications/unread?limit=2").expect(200)["capped"], true);
    let middle = id_of(&items[1]);
    let marker = author.put("/v1/notifications/marker", Some(json!({ "last_read_id": middle }))).expect(200);
    assert_eq!((marker["last_read_id"].clone(), marker["version"].clone()), (json!(middle), json!(1)));
    let u = unread(&author);
    assert_eq!((u["count"].clone(), u["last_read_id"].clone()), (json!(1), json!(middle)));
    let again = author.put("/v1/notifications/marker", Some(json!({ "last_read_id": id_of(&items[0]) })));
    assert_eq!(again.expect(200)["version"], 2);
    assert_eq!(unread(&author)["count"], 0);
    author
        .put("/v1/notifications/marker", Some(json!({ "last_read_id": "x" })))
        .expect_problem(422, "invalid_field");
    // Someone else's notification is no one's to dismiss.
    fan.delete(&format!("/v1/notifications/{}", id_of(&items[0]))).expect_problem(404, "not_found");
    author.delete(&format!("/v1/notifications/{}", id_of(&items[0]))).expect(204);
    author.delete(&format!("/v1/notifications/{}", id_of(&items[0]))).expect_problem(404, "not_found");
    assert_eq!(notifications(&author, "").len(), 2);
    author.delete("/v1/notifications").expect(204);
    assert!(notifications(&author, "").is_empty());
}

#[test]
fn a_repeated_convergence_or_a_repaired_mirror_makes_no_second_follow_notification() {
    let author = register("ntr_author");
    let fan = register("ntr_fan");
    fan.follow(&author);
    wait_kinds(&author, &["follow"], "the follow");
    // Lose the author-side mirror behind the events' back, then let reconciliation repair it
    // (the same convergence a redelivered event runs).
    let body = json!({ "user_id": author.id, "other_id": fan.id, "delete_mirror": "followers" });
    admin("POST", "/v1/admin/test/graph", Some(&body)).expect(200);
    admin(
        "POST",
        "/v1/admin/test/graph",
        Some(&json!({ "user_id": fan.id, "other_id": author.id, "rewind": true })),
    )
    .expect(200);
    poll("reconciliation to restore the mirror", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        let pair = json!({ "user_id": fan.id, "other_id": author.id });
        let sides = admin("POST", "/v1/admin/test/graph", Some(&pair)).expect(200);
        (sides["other"]["follower"] == 1).then_some(())
    });
    assert_eq!(kinds(&notifications(&author, "")), ["follow"], "still exactly one");
}

#[test]
fn mastodon_py_reads_filters_pages_dismisses_and_clears_notifications_and_sets_markers() {
    let stdout = crate::mastodon::run_client("mastodon_notifications", "mnot", &[]);
    assert!(stdout.contains("mastodon.py notifications flow ok"), "{stdout}");
}

fn form(user: &User, path: &str, body: &str) -> Resp {
    let auth = format!("Bearer {}", user.token);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/x-www-form-urlencoded")];
    raw("POST", path, &headers, body.as_bytes())
}

#[test]
fn mastodon_unread_count_follows_the_marker_and_form_markers_and_legacy_dismiss_work() {
    let author = register("mnu_author");
    let fans: Vec<User> = (0..3).map(|_| register("mnu_fan")).collect();
    let post = id_of(&author.publish("count", "public"));
    for fan in &fans {
        like(fan, &post);
    }
    let items = author.get("/api/v1/notifications").expect(200);
    let ids: Vec<String> = items.as_array().unwrap().iter().map(id_of).collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(author.get("/api/v1/notifications/unread_count").expect(200), json!({ "count": 3 }));
    assert_eq!(author.get("/api/v1/notifications/unread_count?limit=2").expect(200), json!({ "count": 2 }));
    // Form markers, as most clients send them.
    let set =
        form(&author, "/api/v1/markers", &format!("notifications[last_read_id]={}", ids[1])).expect(200);
    assert_eq!(set["notifications"]["last_read_id"], ids[1].as_str());
    assert_eq!(author.get("/api/v1/notifications/unread_count").expect(200), json!({ "count": 1 }));
    let got = author.get("/api/v1/markers?timeline[]=notifications&timeline[]=home").expect(200);
    assert_eq!(got.as_object().map(|o| o.len()), Some(1), "only the set marker: {got}");
    assert_eq!(author.get("/api/v1/markers").expect(200), json!({}));
    form(&author, "/api/v1/markers", "notifications[last_read_id]=nope").expect(422);
    form(&author, "/api/v1/markers", "").expect(422);
    // The pre-3.1 dismiss, and the current one; someone else's is 404.
    form(&author, "/api/v1/notifications/dismiss", &format!("id={}", ids[0])).expect(200);
    form(&fans[0], &format!("/api/v1/notifications/{}/dismiss", ids[1]), "").expect(404);
    form(&author, &format!("/api/v1/notifications/{}/dismiss", ids[1]), "").expect(200);
    assert_eq!(author.get("/api/v1/notifications").expect(200).as_array().map(Vec::len), Some(1));
    let auth = format!("Bearer {}", author.token);
    let paged =
        send("GET", "/api/v1/notifications?limit=1&types[]=favourite", &[("authorization", &auth)], b"");
    let link = paged.header("link").unwrap_or_default().to_string();
    assert!(
        link.contains("limit=1") && link.contains("types%5B%5D=favourite"),
        "Link keeps the filter: {link}"
    );
    assert_eq!(author.get("/api/v1/notifications/requests").expect(200), json!([]));
    assert_eq!(author.get("/api/v2/notifications/policy").expect(200)["for_not_following"], "accept");
    form(&author, "/api/v1/notifications/clear", "").expect(200);
    assert_eq!(author.get("/api/v1/notifications").expect(200), json!([]));
}
