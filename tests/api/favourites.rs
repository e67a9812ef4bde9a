//! The liker's side of likes (`liked_posts` on the liker's home, converged from the post's
//! `likes`), the favourites and bookmarks lists, and `favourited` / `bookmarked` on statuses.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

/// The liker side of (user, post) as stored: its `liked_at`, or `None`.
fn liker_side(user: &User, post: &str, delete: bool) -> Option<i64> {
    let body = json!({ "user_id": user.id, "post_id": post, "delete": delete });
    admin("POST", "/v1/admin/test/liked", Some(&body)).expect(200)["liked_at"].as_i64()
}

fn like(user: &User, post: &str) -> Value {
    user.put(&format!("/v1/posts/{post}/like"), None).expect(200)
}

#[test]
fn the_liker_side_follows_likes_and_unlikes_and_a_lost_write_is_repaired() {
    let author = register("lp_author");
    let fan = register("lp_fan");
    let post = id_of(&author.publish("like me", "public"));
    assert_eq!(liker_side(&fan, &post, false), None);
    like(&fan, &post);
    let first = liker_side(&fan, &post, false).expect("written with the like");
    // A repeated like keeps the like's start; an unlike removes the row; a new like restarts it.
    like(&fan, &post);
    assert_eq!(liker_side(&fan, &post, false), Some(first));
    fan.delete(&format!("/v1/posts/{post}/like")).expect(200);
    assert_eq!(liker_side(&fan, &post, false), None);
    like(&fan, &post);
    let second = liker_side(&fan, &post, false).expect("liked again");
    assert!(second >= first);
    // A crash between the two sides, as a lost write: the cron's slice walks the likes in the
    // order they changed and converges the liker side from the post's.
    assert_eq!(liker_side(&fan, &post, true), None, "deleted behind the like's back");
    poll("the liker side repaired", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        liker_side(&fan, &post, false)
    });
    assert_eq!(liker_side(&fan, &post, false), Some(second));
    // A like that someone may no longer see (blocked) leaves no liker side.
    let other = id_of(&author.publish("another", "public"));
    author.block(&fan);
    fan.put(&format!("/v1/posts/{other}/like"), None).expect_problem(404, "not_found");
    assert_eq!(liker_side(&fan, &other, false), None);
}

/// A Mastodon list read by following `rel="next"` links from `path`: every page's status ids,
/// and the number of pages.
fn walk(user: &User, path: &str) -> (Vec<String>, Vec<Value>, usize) {
    let auth = format!("Bearer {}", user.token);
    let mut next = Some(path.to_string());
    let (mut ids, mut statuses, mut pages) = (Vec::new(), Vec::new(), 0);
    while let Some(path) = next.take() {
        let r = send("GET", &path, &[("authorization", &auth)], b"");
        assert_eq!(r.status(), 200, "{path}");
        let link = r.header("link").unwrap_or("").to_string();
        let body: Value = r.into_json().unwrap();
        for s in body.as_array().unwrap() {
            ids.push(s["id"].as_str().unwrap().to_string());
            statuses.push(s.clone());
        }
        pages += 1;
        assert!(pages < 30, "paging did not end");
        next = link
            .split(", ")
            .find(|p| p.ends_with("rel=\"next\""))
            .and_then(|p| p.trim_start_matches('<').split('>').next().map(str::to_string))
            .and_then(|url| url.find("/api/").map(|i| url[i..].to_string()));
        if next.is_some() {
            assert!(link.contains("limit=2"), "the link keeps the limit: {link}");
        }
    }
    (ids, statuses, pages)
}

fn status(user: &User, id: &str) -> Value {
    user.get(&format!("/api/v1/statuses/{id}")).expect(200)
}

#[test]
fn bookmarks_list_newest_first_paged_and_filtered_at_read_time() {
    let author = register("bm_author");
    let other = register("bm_other");
    let reader = register("bm_reader");
    let posts: Vec<String> = (0..5).map(|i| id_of(&author.publish(&format!("save {i}"), "public"))).collect();
    let blocker_post = id_of(&other.publish("from someone who blocks later", "public"));
    for id in posts.iter().chain([&blocker_post]) {
        let s = reader.post(&format!("/api/v1/statuses/{id}/bookmark"), json!({})).expect(200);
        assert_eq!((s["id"].as_str(), s["bookmarked"].as_bool()), (Some(id.as_str()), Some(true)));
    }
    // Idempotent: a repeat changes nothing (nor the order).
    reader.post(&format!("/api/v1/statuses/{}/bookmark", posts[0]), json!({})).expect(200);
    let mut newest_first: Vec<String> = posts.iter().rev().cloned().collect();
    newest_first.insert(0, blocker_post.clone());
    let (ids, statuses, pages) = walk(&reader, "/api/v1/bookmarks?limit=2");
    assert_eq!(ids, newest_first);
    assert_eq!(pages, 3 + 1, "three full pages and the empty end");
    assert!(statuses.iter().all(|s| s["bookmarked"] == true && s["favourited"] == false));
    // `bookmarked` on other Statuses: the single status, the author's statuses.
    assert_eq!(status(&reader, &posts[2])["bookmarked"], true);
    assert_eq!(status(&author, &posts[2])["bookmarked"], false, "someone else's bookmark");
    let by_author = reader.get(&format!("/api/v1/accounts/{}/statuses", author.id)).expect(200);
    assert!(by_author.as_array().unwrap().iter().all(|s| s["bookmarked"] == true));
    // Unbookmark; deleted, taken down and blocked posts leave the list at once.
    let s = reader.post(&format!("/api/v1/statuses/{}/unbookmark", posts[2]), json!({})).expect(200);
    assert_eq!(s["bookmarked"], false);
    author.delete(&format!("/v1/posts/{}", posts[3])).expect(204);
    admin("POST", &format!("/v1/admin/posts/{}/takedown", posts[1]), Some(&json!({ "reason": "test" })))
        .expect(200);
    other.block(&reader);
    let (ids, _, _) = walk(&reader, "/api/v1/bookmarks?limit=2");
    assert_eq!(ids, vec![posts[4].clone(), posts[0].clone()]);
    // Bad targets: a hidden or missing post is 404. A comment (the /v1 comments API's) is a
    // reply post, and a reply is bookmarked as any post.
    reader.post(&format!("/api/v1/statuses/{blocker_post}/bookmark"), json!({})).expect(404);
    reader.post("/api/v1/statuses/99999999/bookmark", json!({})).expect(404);
    let comment = reader.post(&format!("/v1/posts/{}/comments", posts[4]), json!({ "body": "a comment" }));
    let comment = id_of(&comment.expect(201));
    let kept = reader.post(&format!("/api/v1/statuses/{comment}/bookmark"), json!({})).expect(200);
    assert_eq!(kept["bookmarked"], true);
    reader.post(&format!("/api/v1/statuses/{comment}/unbookmark"), json!({})).expect(200);
    let reply = reader
        .post("/api/v1/statuses", json!({ "status": "a reply", "in_reply_to_id": posts[4] }))
        .expect(200);
    let kept = reader.post(&format!("/api/v1/statuses/{}/bookmark", id_of(&reply)), json!({})).expect(200);
    assert_eq!(kept["bookmarked"], true);
    reader.post(&format!("/api/v1/statuses/{}/unbookmark", id_of(&reply)), json!({})).expect(200);
    // The /v1 equivalents.
    assert_eq!(
        reader.put(&format!("/v1/posts/{}/bookmark", posts[2]), None).expect(200),
        json!({ "bookmarked": true })
    );
    let page = reader.get("/v1/me/bookmarks?limit=2").expect(200);
    let v1_ids: Vec<&str> =
        page["items"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(v1_ids, vec![posts[2].as_str(), posts[4].as_str()]);
    let all: Vec<String> = collect_pages(&reader, "/v1/me/bookmarks?limit=1").iter().map(id_of).collect();
    assert_eq!(all, vec![posts[2].clone(), posts[4].clone(), posts[0].clone()]);
    assert_eq!(
        reader.delete(&format!("/v1/posts/{}/bookmark", posts[2])).expect(200),
        json!({ "bookmarked": false })
    );
    reader.put("/v1/posts/99999999/bookmark", None).expect_problem(404, "not_found");
}

#[test]
fn notifications_say_whether_their_post_is_bookmarked() {
    let author = register("bn_author");
    let fan = register("bn_fan");
    let (kept, other) =
        (id_of(&author.publish("bookmarked", "public")), id_of(&author.publish("not", "public")));
    author.post(&format!("/api/v1/statuses/{kept}/bookmark"), json!({})).expect(200);
    fan.put(&format!("/v1/posts/{kept}/like"), None).expect(200);
    fan.put(&format!("/v1/posts/{other}/like"), None).expect(200);
    let marks = |statuses: &Value| -> Vec<(String, bool)> {
        let mut got: Vec<(String, bool)> = statuses
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["id"].as_str().unwrap().to_string(), s["bookmarked"].as_bool().unwrap()))
            .collect();
        got.sort();
        got
    };
    let mut want = vec![(kept.clone(), true), (other.clone(), false)];
    want.sort();
    let v1 = author.get("/api/v1/notifications?types[]=favourite").expect(200);
    let statuses: Vec<Value> = v1.as_array().unwrap().iter().map(|n| n["status"].clone()).collect();
    assert_eq!(marks(&Value::Array(statuses)), want, "{v1}");
    let v2 = author.get("/api/v2/notifications?types[]=favourite").expect(200);
    assert_eq!(marks(&v2["statuses"]), want, "{v2}");
}

#[test]
fn favourites_list_newest_like_first_and_leaves_hidden_posts_out() {
    let author = register("fv_author");
    let reader = register("fv_reader");
    let posts: Vec<String> = (0..4).map(|i| id_of(&author.publish(&format!("fav {i}"), "public"))).collect();
    for id in &posts {
        reader.post(&format!("/api/v1/statuses/{id}/favourite"), json!({})).expect(200);
    }
    reader.post(&format!("/api/v1/statuses/{}/bookmark", posts[1]), json!({})).expect(200);
    let (ids, statuses, _) = walk(&reader, "/api/v1/favourites?limit=2");
    assert_eq!(ids, posts.iter().rev().cloned().collect::<Vec<_>>());
    assert!(statuses.iter().all(|s| s["favourited"] == true));
    let marked: Vec<bool> = statuses.iter().map(|s| s["bookmarked"].as_bool().unwrap()).collect();
    assert_eq!(marked, vec![false, false, true, false]);
    // Liking again moves nothing; unliking and a deleted post take them out.
    reader.post(&format!("/api/v1/statuses/{}/favourite", posts[0]), json!({})).expect(200);
    reader.post(&format!("/api/v1/statuses/{}/unfavourite", posts[2]), json!({})).expect(200);
    author.delete(&format!("/v1/posts/{}", posts[3])).expect(204);
    let (ids, _, _) = walk(&reader, "/api/v1/favourites?limit=2");
    assert_eq!(ids, vec![posts[1].clone(), posts[0].clone()]);
    let v1: Vec<String> = collect_pages(&reader, "/v1/me/likes?limit=1").iter().map(id_of).collect();
    assert_eq!(v1, vec![posts[1].clone(), posts[0].clone()]);
    // A suspended author's posts leave it too, and come back with the reinstatement.
    admin("POST", &format!("/v1/admin/users/{}/suspend", author.id), Some(&json!({ "reason": "test" })))
        .expect(200);
    assert_eq!(walk(&reader, "/api/v1/favourites").0, Vec::<String>::new());
    admin("POST", &format!("/v1/admin/users/{}/reinstate", author.id), Some(&json!({ "reason": "test" })))
        .expect(200);
    assert_eq!(walk(&reader, "/api/v1/favourites").0.len(), 2);
}
