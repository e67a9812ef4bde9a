//! Mutes (`/api/v1/accounts/{id}/mute|unmute`, `/api/v1/mutes`, `/v1/me/mutes`): a muted
//! account's posts leave the muter's home and list timelines, and its notifications, at once,
//! without unfollowing; a timed mute ends by itself; `notifications=false` keeps them.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn home(user: &User) -> Vec<String> {
    let page = user.get("/api/v1/timelines/home?limit=40").expect(200);
    page.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect()
}

fn feed(user: &User) -> Vec<String> {
    let page = user.get("/v1/feed?limit=50").expect(200);
    page["items"].as_array().unwrap().iter().map(id_of).collect()
}

/// The accounts of the user's notifications, newest first.
fn notifiers(user: &User) -> Vec<String> {
    let page = user.get("/api/v1/notifications").expect(200);
    page.as_array().unwrap().iter().map(|n| n["account"]["id"].as_str().unwrap().to_string()).collect()
}

fn relationship(user: &User, other: &User) -> Value {
    let r = user.get(&format!("/api/v1/accounts/relationships?id[]={}", other.id)).expect(200);
    r[0].clone()
}

fn mute(user: &User, other: &User, body: Value) -> Value {
    user.post(&format!("/api/v1/accounts/{}/mute", other.id), body).expect(200)
}

#[test]
fn a_mute_hides_posts_and_notifications_at_once_without_unfollowing() {
    let author = register("mu_author");
    let friend = register("mu_friend");
    let reader = register("mu_reader");
    reader.follow(&author);
    reader.follow(&friend);
    let before = id_of(&author.publish("before the mute", "public"));
    poll("the author's post in the home timeline", DEADLINE, || {
        home(&reader).contains(&before).then_some(())
    });
    let mine = id_of(&reader.publish("like this", "public"));
    author.put(&format!("/v1/posts/{mine}/like"), None).expect(200);
    assert!(notifiers(&reader).contains(&author.id));
    let list = id_of(&reader.post("/api/v1/lists", json!({ "title": "l" })).expect(200));
    reader.post(&format!("/api/v1/lists/{list}/accounts"), json!({ "account_ids": [author.id] })).expect(200);

    let r = mute(&reader, &author, json!({}));
    assert_eq!((r["muting"].clone(), r["muting_notifications"].clone()), (json!(true), json!(true)), "{r}");
    assert_eq!(r["following"], true, "a mute does not unfollow");
    // At once, on every read: home (Mastodon and /v1), the list timeline, notifications.
    assert!(!home(&reader).contains(&before));
    assert!(!feed(&reader).contains(&before));
    let listed = reader.get(&format!("/api/v1/timelines/list/{list}")).expect(200);
    assert_eq!(listed, json!([]));
    assert!(!notifiers(&reader).contains(&author.id));
    // Later posts too, while a followed friend's still arrive.
    let during = id_of(&author.publish("during the mute", "public"));
    let friendly = id_of(&friend.publish("not muted", "public"));
    poll("the friend's post", DEADLINE, || home(&reader).contains(&friendly).then_some(()));
    assert!(!home(&reader).contains(&during));
    // The list of mutes, both dialects.
    let muted = reader.get("/api/v1/mutes").expect(200);
    assert_eq!(muted.as_array().unwrap().iter().map(id_of).collect::<Vec<_>>(), vec![author.id.clone()]);
    let v1 = reader.get("/v1/me/mutes").expect(200);
    assert_eq!(v1["items"][0]["id"], author.id.as_str());

    let r = reader.post(&format!("/api/v1/accounts/{}/unmute", author.id), json!({})).expect(200);
    assert_eq!((r["muting"].clone(), r["following"].clone()), (json!(false), json!(true)));
    let back = home(&reader);
    assert!(back.contains(&before) && back.contains(&during), "{back:?}");
    assert!(notifiers(&reader).contains(&author.id));
    assert_eq!(reader.get("/api/v1/mutes").expect(200), json!([]));
}

#[test]
fn a_timed_mute_ends_by_itself_and_notifications_false_keeps_them() {
    let author = register("mt_author");
    let reader = register("mt_reader");
    reader.follow(&author);
    let post = id_of(&author.publish("timed", "public"));
    poll("the post in the home timeline", DEADLINE, || home(&reader).contains(&post).then_some(()));
    let mine = id_of(&reader.publish("like this", "public"));
    author.put(&format!("/v1/posts/{mine}/like"), None).expect(200);
    // A form, as apps send it: posts hidden, notifications kept.
    let headers = [
        ("authorization", format!("Bearer {}", reader.token)),
        ("content-type", "application/x-www-form-urlencoded".to_string()),
    ];
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let form = raw(
        "POST",
        &format!("/api/v1/accounts/{}/mute", author.id),
        &headers,
        b"notifications=false&duration=3",
    );
    assert_eq!(form.status, 200, "{}", form.body);
    assert_eq!(
        (form.body["muting"].clone(), form.body["muting_notifications"].clone()),
        (json!(true), json!(false))
    );
    assert!(!home(&reader).contains(&post));
    assert!(notifiers(&reader).contains(&author.id), "notifications=false keeps them");
    // Ends by itself: the post is back, and the relationship says so.
    poll("the timed mute to end", DEADLINE, || home(&reader).contains(&post).then_some(()));
    assert_eq!(relationship(&reader, &author)["muting"], false);
    // /v1: a mute with its end; bad input changes nothing.
    let r = reader.put(&format!("/v1/me/mutes/{}", author.id), Some(json!({ "duration": 3600 }))).expect(200);
    assert_eq!((r["muted"].clone(), r["notifications"].clone()), (json!(true), json!(true)));
    assert!(r["expires_at"].is_string(), "{r}");
    assert_eq!(relationship(&reader, &author)["muting"], true);
    reader
        .put(&format!("/v1/me/mutes/{}", author.id), Some(json!({ "duration": -1 })))
        .expect_problem(422, "invalid_field");
    reader.put(&format!("/v1/me/mutes/{}", reader.id), None).expect_problem(422, "invalid_field");
    reader.put("/v1/me/mutes/99999999", None).expect_problem(404, "not_found");
    assert_eq!(reader.delete(&format!("/v1/me/mutes/{}", author.id)).expect(200), json!({ "muted": false }));
    assert_eq!(relationship(&reader, &author)["muting"], false);
    let bad = reader.post(&format!("/api/v1/accounts/{}/mute", author.id), json!({ "duration": "soon" }));
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert_eq!(relationship(&reader, &author)["muting"], false);
}
