//! Comments of the old kind (written before replies were posts) move into reply posts
//! (migration 0034, `services/comment_moves.rs`): each reconciliation pass moves a bounded slice
//! of every database's, each into its author's reply post with its likes, its place and count
//! in the thread and its notification, old ids redirected; a deleted post's comments, and a
//! comment deleted before its move, stay gone.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn old_comment(post: &str, author: &User, body: &str, parent: Option<&str>) -> String {
    let mut payload = json!({ "post_id": post, "author_id": author.id, "body": body });
    if let Some(parent) = parent {
        payload["parent_id"] = json!(parent);
    }
    let made = admin("POST", "/v1/admin/test/old_comment", Some(&payload)).expect(200);
    made["id"].as_str().unwrap().to_owned()
}

/// Runs passes until the old comment's id names a post of another id (its reply post).
fn moved(viewer: &User, old: &str) -> Value {
    poll(&format!("comment {old} moved"), DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        let status = viewer.get(&format!("/api/v1/statuses/{old}")).expect(200);
        (status["id"] != old).then_some(status)
    })
}

fn thread(viewer: &User, post: &str) -> Vec<String> {
    ids(viewer.get(&format!("/v1/posts/{post}/comments")).expect(200)["items"].as_array().unwrap())
}

fn comment_count(viewer: &User, post: &str) -> i64 {
    viewer.get(&format!("/v1/posts/{post}")).expect(200)["comment_count"].as_i64().unwrap()
}

#[test]
fn old_comments_move_into_reply_posts_with_their_likes_thread_and_notifications() {
    let (author, ann, bob) = (register("mv_author"), register("mv_ann"), register("mv_bob"));
    let (carol, fan) = (register("mv_carol"), register("mv_fan"));
    let post = id_of(&author.publish("an old thread", "public"));
    let first = old_comment(&post, &ann, "first", None);
    let second = old_comment(&post, &bob, "answering ann", Some(&first));
    for liker in [&carol, &fan] {
        liker.post(&format!("/v1/comments/{first}/like"), json!({})).expect(200);
    }
    let answer = json!({ "status": "a reply post to an old comment", "in_reply_to_id": first });
    let reply_post = id_of(&carol.post("/api/v1/statuses", answer).expect(200));
    // Passes run beside this test (the other tests', and chains on the queue), so the comments
    // may be moving already: what is asserted before holds either way.
    assert_eq!(thread(&author, &post).len(), 3);
    assert_eq!(comment_count(&author, &post), 3);

    let moved_first = moved(&ann, &first);
    let moved_second = moved(&bob, &second);
    let (p1, p2) = (id_of(&moved_first), id_of(&moved_second));
    // Each is its author's reply post, at the comment's time, answering what the comment did.
    assert_eq!(moved_first["account"]["id"], ann.id.as_str(), "{moved_first}");
    assert_eq!(moved_first["in_reply_to_id"], post.as_str());
    assert_eq!(moved_first["in_reply_to_account_id"], author.id.as_str());
    assert_eq!(moved_first["visibility"], "public");
    assert_eq!(moved_second["in_reply_to_id"], p1.as_str(), "{moved_second}");
    assert_eq!(moved_second["in_reply_to_account_id"], ann.id.as_str());
    let reply = carol.get(&format!("/api/v1/statuses/{reply_post}")).expect(200);
    assert_eq!(reply["in_reply_to_id"], p1.as_str(), "a reply to the comment answers its post now");
    // The thread holds the reply posts in the comments' places, counted once.
    assert_eq!(thread(&author, &post), vec![p1.clone(), p2.clone(), reply_post.clone()]);
    assert_eq!(comment_count(&author, &post), 3);
    // The likes came along (the likers' own sides follow with the liker-side check).
    assert_eq!(author.get(&format!("/api/v1/statuses/{p1}")).expect(200)["favourites_count"], 2);
    poll("carol's favourite of the moved comment", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        (carol.get(&format!("/api/v1/statuses/{p1}")).expect(200)["favourited"] == true).then_some(())
    });
    // Old ids act on the reply post: a like again counts once, a favourite too.
    let again = carol.post(&format!("/v1/comments/{first}/like"), json!({})).expect(200);
    assert_eq!((again["id"].as_str(), again["like_count"].as_i64()), (Some(p1.as_str()), Some(2)));
    let favourite = fan.post(&format!("/api/v1/statuses/{first}/favourite"), json!({})).expect(200);
    assert_eq!(
        (favourite["id"].as_str(), favourite["favourites_count"].as_i64()),
        (Some(p1.as_str()), Some(2))
    );
    // A post in every respect: on its author's profile, bookmarkable.
    let profile =
        ids(ann.get(&format!("/api/v1/accounts/{}/statuses", ann.id)).expect(200).as_array().unwrap());
    assert!(profile.contains(&p1), "{profile:?}");
    fan.post(&format!("/api/v1/statuses/{p1}/bookmark"), json!({})).expect(200);
    // The post's author's notifications name the reply posts now.
    let notes = author.get("/api/v1/notifications?types[]=mention&limit=40").expect(200);
    let about: Vec<String> =
        notes.as_array().unwrap().iter().map(|n| n["status"]["id"].as_str().unwrap().to_owned()).collect();
    assert!(about.contains(&p1) && about.contains(&p2), "{about:?}");
    assert!(!about.contains(&first), "{about:?}");

    // More passes change nothing.
    for _ in 0..2 {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
    }
    assert_eq!(thread(&author, &post), vec![p1.clone(), p2, reply_post]);
    assert_eq!(comment_count(&author, &post), 3);
    assert_eq!(author.get(&format!("/api/v1/statuses/{p1}")).expect(200)["favourites_count"], 2);
}

#[test]
fn a_deleted_posts_comments_and_a_deleted_comment_never_move() {
    let (author, ann) = (register("mg_author"), register("mg_ann"));
    let gone = id_of(&author.publish("to be deleted", "public"));
    let hidden = old_comment(&gone, &ann, "under a deleted post", None);
    let kept = id_of(&author.publish("stays", "public"));
    let deleted = old_comment(&kept, &ann, "deleted by its author", None);
    let live = old_comment(&kept, &ann, "moves", None);
    author.delete(&format!("/v1/posts/{gone}")).expect(204);
    assert_eq!(ann.delete(&format!("/v1/comments/{deleted}")).status, 204);
    let moved_live = id_of(&moved(&ann, &live));
    for _ in 0..2 {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
    }
    for old in [&hidden, &deleted] {
        ann.get(&format!("/api/v1/statuses/{old}")).expect(404);
        ann.delete(&format!("/v1/comments/{old}")).expect_problem(404, "not_found");
    }
    let profile = ann.get(&format!("/api/v1/accounts/{}/statuses", ann.id)).expect(200);
    let bodies: Vec<&str> =
        profile.as_array().unwrap().iter().map(|s| s["content"].as_str().unwrap()).collect();
    assert_eq!(ids(profile.as_array().unwrap()), vec![moved_live.clone()], "{bodies:?}");
    assert_eq!(thread(&author, &kept), vec![moved_live]);
    assert_eq!(comment_count(&author, &kept), 1);
}
