//! Comment likes (`POST|PUT|DELETE /v1/comments/{id}/like`, Mastodon's favourite on a reply)
//! with exact counts, and top-ordered comments (`?order=top`: a hot score of likes and age,
//! paged by a cursor bound to a score snapshot: `domain/top.rs`).

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::common::*;

fn comments_path(post: &Value) -> String {
    format!("/v1/posts/{}/comments", id_of(post))
}

fn like_path(comment: &str) -> String {
    format!("/v1/comments/{comment}/like")
}

fn comment(user: &User, post: &Value, body: &str) -> String {
    id_of(&user.post(&comments_path(post), json!({ "body": body })).expect(201))
}

/// The comment as `user` sees it in the post's list (oldest first, one page).
fn listed(user: &User, post: &Value, comment: &str) -> Option<Value> {
    let page = user.get(&format!("{}?limit=100", comments_path(post))).expect(200);
    page["items"].as_array().unwrap().iter().find(|c| c["id"] == comment).cloned()
}

fn count_seen_by(user: &User, post: &Value, comment: &str) -> (i64, bool) {
    let c = listed(user, post, comment).expect("the comment is listed");
    (c["like_count"].as_i64().unwrap(), c["liked_by_me"].as_bool().unwrap())
}

#[test]
fn comment_likes_count_exactly_under_duplicates_retries_and_races() {
    let author = register("cl_author");
    let commenter = register("cl_commenter");
    let post = author.publish("likes on comments", "public");
    let c = comment(&commenter, &post, "like me");
    assert_eq!(count_seen_by(&author, &post, &c), (0, false));

    let ann = register("cl_ann");
    let first = ann.post(&like_path(&c), json!({})).expect(200);
    assert_eq!((first["id"].as_str(), first["like_count"].as_i64()), (Some(c.as_str()), Some(1)));
    assert_eq!(first["liked_by_me"], true);
    // A duplicate (and the PUT form) changes nothing.
    assert_eq!(ann.post(&like_path(&c), json!({})).expect(200)["like_count"], 1);
    assert_eq!(ann.put(&like_path(&c), None).expect(200)["like_count"], 1);
    assert_eq!(count_seen_by(&ann, &post, &c), (1, true));
    assert_eq!(count_seen_by(&author, &post, &c), (1, false));

    // One user's retries racing each other: one like.
    let (path, token) = (like_path(&c), register("cl_bob").token);
    let answers = parallel(8, 8, move |_| call("POST", &path, Some(&token), Some(&json!({}))).status);
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");
    assert_eq!(count_seen_by(&author, &post, &c).0, 2);
    // Twelve users at once: twelve more.
    let likers: Vec<String> = (0..12).map(|_| register("cl_many").token).collect();
    let path = like_path(&c);
    let answers = parallel(6, 12, move |i| call("POST", &path, Some(&likers[i]), Some(&json!({}))).status);
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");
    assert_eq!(count_seen_by(&author, &post, &c).0, 14);

    // Unlike, twice: one fewer.
    let gone = ann.delete(&like_path(&c)).expect(200);
    assert_eq!((gone["like_count"].as_i64(), gone["liked_by_me"].as_bool()), (Some(13), Some(false)));
    assert_eq!(ann.delete(&like_path(&c)).expect(200)["like_count"], 13);
    assert_eq!(count_seen_by(&ann, &post, &c), (13, false));

    // A deleted comment's likes go with it: liking it is 404, and so is every later read.
    commenter.delete(&format!("/v1/comments/{c}")).expect(204);
    ann.post(&like_path(&c), json!({})).expect_problem(404, "not_found");
    ann.delete(&like_path(&c)).expect_problem(404, "not_found");
    assert!(listed(&author, &post, &c).is_none());
    assert_eq!(author.get(&format!("/api/v1/statuses/{c}")).status, 404);
    // Junk ids.
    ann.post("/v1/comments/0/like", json!({})).expect_problem(404, "not_found");
    ann.post("/v1/comments/999999999999/like", json!({})).expect_problem(404, "not_found");
}

#[test]
fn a_comment_the_viewer_may_not_see_cannot_be_liked_and_nothing_changes() {
    let author = register("cv_author");
    let follower = register("cv_follower");
    let stranger = register("cv_stranger");
    follower.follow(&author);
    let private = author.publish("followers only", "followers");
    let c = comment(&follower, &private, "among followers");
    // Not a follower: the post is hidden, so is its comment.
    stranger.post(&like_path(&c), json!({})).expect_problem(404, "not_found");
    stranger.delete(&like_path(&c)).expect_problem(404, "not_found");
    assert_eq!(count_seen_by(&author, &private, &c), (0, false));

    // A block either way with the comment's author hides the comment (on a public post).
    let open = author.publish("public", "public");
    let c = comment(&follower, &open, "mine");
    let blocked = register("cv_blocked");
    follower.block(&blocked);
    blocked.post(&like_path(&c), json!({})).expect_problem(404, "not_found");
    let blocker = register("cv_blocker");
    blocker.block(&follower);
    blocker.post(&like_path(&c), json!({})).expect_problem(404, "not_found");
    // The post's author blocking the viewer hides the post and its thread; the comment is the
    // commenter's reply post, which the block does not hide (as a reply in Mastodon).
    let shut_out = register("cv_shut_out");
    author.block(&shut_out);
    shut_out.get(&comments_path(&open)).expect_problem(404, "not_found");
    assert_eq!(shut_out.post(&like_path(&c), json!({})).expect(200)["like_count"], 1);
    assert_eq!(shut_out.delete(&like_path(&c)).expect(200)["like_count"], 0);
    assert_eq!(count_seen_by(&author, &open, &c), (0, false));
    // Someone who may see it can.
    assert_eq!(stranger.post(&like_path(&c), json!({})).expect(200)["like_count"], 1);
    // Without a token: 401, nothing changes.
    assert_eq!(call("POST", &like_path(&c), None, None).status, 401);
    assert_eq!(count_seen_by(&author, &open, &c), (1, false));
}

/// Imports `author`'s comment on `post` made `hours_ago` hours ago.
fn old_comment(author: &User, post: &Value, body: &str, hours_ago: i64) -> String {
    let at = edgefeed::domain::time::format_rfc3339((now_secs() - hours_ago * 3600) * 1000);
    let payload = json!({ "post_id": id_of(post), "author_id": author.id, "body": body, "created_at": at });
    id_of(&admin("POST", "/v1/admin/import/comments", Some(&payload)).expect(201))
}

fn like_by(n: usize, comment: &str) {
    for _ in 0..n {
        register("tp_liker").post(&like_path(comment), json!({})).expect(200);
    }
}

#[test]
fn top_order_weighs_likes_against_age() {
    let author = register("tp_author");
    let post = author.publish("rank my comments", "public");
    // An hour-old comment with 2 likes: 3 / 3^2 = 0.33; a fresh one with none: 1 / 2^2 = 0.25;
    // a ten-hour-old one with 5 likes: 6 / 12^2 = 0.04; a fresh one with 1 like: 2 / 4 = 0.5.
    let hour_old = old_comment(&author, &post, "an hour old, two likes", 1);
    let ten_hours_old = old_comment(&author, &post, "ten hours old, five likes", 10);
    let fresh = comment(&author, &post, "fresh, no likes");
    let fresh_liked = comment(&author, &post, "fresh, one like");
    like_by(2, &hour_old);
    like_by(5, &ten_hours_old);
    like_by(1, &fresh_liked);
    let reader = register("tp_reader");
    let top = collect_pages(&reader, &format!("{}?order=top&limit=2", comments_path(&post)));
    assert_eq!(ids(&top), vec![fresh_liked.clone(), hour_old.clone(), fresh.clone(), ten_hours_old.clone()]);
    assert_eq!(top.iter().map(|c| c["like_count"].as_i64().unwrap()).collect::<Vec<_>>(), vec![1, 2, 0, 5]);
    // Oldest and newest stay exact time orders.
    let oldest = collect_pages(&reader, &format!("{}?order=oldest", comments_path(&post)));
    assert_eq!(
        ids(&oldest),
        vec![ten_hours_old.clone(), hour_old.clone(), fresh.clone(), fresh_liked.clone()]
    );
    let newest = collect_pages(&reader, &format!("{}?order=newest", comments_path(&post)));
    assert_eq!(ids(&newest), vec![fresh_liked, fresh, hour_old, ten_hours_old]);
    // A more-liked older comment goes first among comments of about the same age.
    let post = author.publish("two comments", "public");
    let older = comment(&author, &post, "older, liked");
    let newer = comment(&author, &post, "newer, not liked");
    like_by(1, &older);
    let top = reader.get(&format!("{}?order=top", comments_path(&post))).expect(200);
    assert_eq!(ids(top["items"].as_array().unwrap()), vec![older, newer]);
}

#[test]
fn top_order_pages_an_unchanged_thread_exactly_once_and_its_cursor_is_its_own() {
    let author = register("tq_author");
    let post = author.publish("a busy thread", "public");
    let commenters: Vec<User> = (0..3).map(|_| register("tq_commenter")).collect();
    let mut made = Vec::new();
    for i in 0..23 {
        made.push(comment(&commenters[i % 3], &post, &format!("comment {i}")));
    }
    // Likes in ties: every third comment 2 likes, every other 1, the rest none.
    let likers: Vec<User> = (0..2).map(|_| register("tq_liker")).collect();
    for (i, c) in made.iter().enumerate() {
        let n = if i % 3 == 0 { 2 } else { i % 2 };
        for liker in &likers[..n] {
            liker.post(&like_path(c), json!({})).expect(200);
        }
    }
    let reader = register("tq_reader");
    for limit in [1, 4, 7, 23, 100] {
        let top = collect_pages(&reader, &format!("{}?order=top&limit={limit}", comments_path(&post)));
        let got = ids(&top);
        assert_eq!(got.len(), 23, "limit {limit}: every comment");
        assert_eq!(got.iter().collect::<HashSet<_>>().len(), 23, "limit {limit}: each once");
        // Comments made seconds apart: likes decide, then the newer (higher id) first.
        let mut expected: Vec<(i64, u64)> = top
            .iter()
            .map(|c| (c["like_count"].as_i64().unwrap(), c["id"].as_str().unwrap().parse().unwrap()))
            .collect();
        expected.sort_by(|a, b| b.cmp(a));
        let expected: Vec<String> = expected.iter().map(|(_, id)| id.to_string()).collect();
        assert_eq!(got, expected, "limit {limit}: by score");
    }
    // A like between pages: the cursor keeps its snapshot and the page still answers.
    let page = reader.get(&format!("{}?order=top&limit=5", comments_path(&post))).expect(200);
    let cursor = page["next_cursor"].as_str().unwrap().to_string();
    likers[0].post(&like_path(&made[22]), json!({})).expect(200);
    let next = reader.get(&format!("{}?order=top&limit=5&cursor={cursor}", comments_path(&post))).expect(200);
    assert_eq!(next["items"].as_array().unwrap().len(), 5);
    // A top cursor is refused by the other orders and by another reader, and theirs by top.
    for other in ["oldest", "newest"] {
        reader
            .get(&format!("{}?order={other}&cursor={cursor}", comments_path(&post)))
            .expect_problem(400, "invalid_cursor");
    }
    author
        .get(&format!("{}?order=top&cursor={cursor}", comments_path(&post)))
        .expect_problem(400, "invalid_cursor");
    let oldest = reader.get(&format!("{}?limit=5", comments_path(&post))).expect(200);
    let plain = oldest["next_cursor"].as_str().unwrap();
    reader
        .get(&format!("{}?order=top&cursor={plain}", comments_path(&post)))
        .expect_problem(400, "invalid_cursor");
    // An unknown order is still 422.
    for bad in ["hot", "TOP", "sideways"] {
        reader.get(&format!("{}?order={bad}", comments_path(&post))).expect_problem(422, "invalid_field");
    }
}

#[test]
fn mastodon_favourites_a_reply_with_exact_counts() {
    let author = register("mf_author");
    let replier = register("mf_replier");
    let fan = register("mf_fan");
    let post = id_of(&author.post("/api/v1/statuses", json!({ "status": "root" })).expect(200));
    let reply = author.post("/api/v1/statuses", json!({ "status": "a reply", "in_reply_to_id": post }));
    let reply = id_of(&reply.expect(200));
    let theirs = id_of(
        &replier.post("/api/v1/statuses", json!({ "status": "mine", "in_reply_to_id": reply })).expect(200),
    );
    let s = fan.get(&format!("/api/v1/statuses/{theirs}")).expect(200);
    assert_eq!((s["favourites_count"].as_i64(), s["favourited"].as_bool()), (Some(0), Some(false)));
    for _ in 0..2 {
        let s = fan.post(&format!("/api/v1/statuses/{theirs}/favourite"), json!({})).expect(200);
        assert_eq!(s["id"], theirs.as_str());
        assert_eq!((s["favourites_count"].as_i64(), s["favourited"].as_bool()), (Some(1), Some(true)));
        assert_eq!(s["in_reply_to_id"], reply.as_str(), "still a reply to its parent");
    }
    author.post(&format!("/api/v1/statuses/{theirs}/favourite"), json!({})).expect(200);
    let seen = replier.get(&format!("/api/v1/statuses/{theirs}")).expect(200);
    assert_eq!((seen["favourites_count"].as_i64(), seen["favourited"].as_bool()), (Some(2), Some(false)));
    // The context carries each reply's count and the viewer's favourite.
    let ctx = fan.get(&format!("/api/v1/statuses/{post}/context")).expect(200);
    let listed = ctx["descendants"].as_array().unwrap().iter().find(|s| s["id"] == theirs.as_str()).cloned();
    let listed = listed.expect("the reply in the context");
    assert_eq!((listed["favourites_count"].as_i64(), listed["favourited"].as_bool()), (Some(2), Some(true)));
    // The same like through /v1.
    let comments = fan.get(&format!("/v1/posts/{post}/comments")).expect(200);
    let row = comments["items"].as_array().unwrap().iter().find(|c| c["id"] == theirs.as_str()).cloned();
    assert_eq!(
        row.map(|c| (c["like_count"].clone(), c["liked_by_me"].clone())),
        Some((json!(2), json!(true)))
    );
    // Who favourited it, newest first.
    let by = fan.get(&format!("/api/v1/statuses/{theirs}/favourited_by")).expect(200);
    assert_eq!(ids(by.as_array().unwrap()), vec![author.id.clone(), fan.id.clone()]);
    // Unfavourite, twice.
    for _ in 0..2 {
        let s = fan.post(&format!("/api/v1/statuses/{theirs}/unfavourite"), json!({})).expect(200);
        assert_eq!((s["favourites_count"].as_i64(), s["favourited"].as_bool()), (Some(1), Some(false)));
    }
    // A reply the viewer may not see: 404 and nothing changes.
    let outsider = register("mf_outsider");
    replier.block(&outsider);
    outsider.post(&format!("/api/v1/statuses/{theirs}/favourite"), json!({})).expect(404);
    outsider.get(&format!("/api/v1/statuses/{theirs}/favourited_by")).expect(404);
    let by = replier.get(&format!("/api/v1/statuses/{theirs}/favourited_by")).expect(200);
    assert_eq!(ids(by.as_array().unwrap()), vec![author.id.clone()]);
    let seen = author.get(&format!("/api/v1/statuses/{theirs}")).expect(200);
    assert_eq!((seen["favourites_count"].as_i64(), seen["favourited"].as_bool()), (Some(1), Some(true)));
    // Posts' favourites are unchanged: the root's count is its own.
    let root = fan.post(&format!("/api/v1/statuses/{post}/favourite"), json!({})).expect(200);
    assert_eq!(root["favourites_count"], 1);
}
