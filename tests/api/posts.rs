use std::collections::HashSet;

use serde_json::{json, Value};

use crate::common::*;

#[test]
fn publish_edit_delete_by_author_and_refusal_for_others() {
    let author = register("pa");
    let other = register("po");
    let post = author.publish("  first draft  ", "public");
    assert_eq!(post["body"], "first draft");
    assert_eq!(post["visibility"], "public");
    assert_eq!(post["edited_at"], Value::Null);
    assert_eq!(post["author"]["id"], author.id.as_str());
    assert_eq!((post["like_count"].clone(), post["liked_by_me"].clone()), (json!(0), json!(false)));
    let path = format!("/v1/posts/{}", post["id"].as_str().unwrap());

    other.patch(&path, json!({ "body": "hijack" })).expect_problem(403, "not_author");
    other.delete(&path).expect_problem(403, "not_author");
    let edited = author.patch(&path, json!({ "body": "final" })).expect(200);
    assert_eq!(edited["body"], "final");
    assert!(edited["edited_at"].is_string());
    assert_eq!(other.get(&path).expect(200)["body"], "final");
    author.patch(&path, json!({})).expect_problem(422, "invalid_field");

    assert_eq!(author.profile()["posts_count"], 1);
    assert_eq!(author.delete(&path).status, 204);
    author.get(&path).expect_problem(404, "not_found");
    other.get(&path).expect_problem(404, "not_found");
    author.delete(&path).expect_problem(404, "not_found");
    author.patch(&path, json!({ "body": "zombie" })).expect_problem(404, "not_found");
    assert_eq!(author.profile()["posts_count"], 0);
    assert!(collect_pages(&other, &format!("/v1/users/{}/posts", author.id)).is_empty());
}

#[test]
fn each_visibility_level_from_author_follower_stranger_and_blocked() {
    let author = register("vis_a");
    let follower = register("vis_f");
    let stranger = register("vis_s");
    let blocked = register("vis_b");
    follower.follow(&author);
    blocked.follow(&author);
    let posts: Vec<(String, String)> = ["public", "followers", "private"]
        .iter()
        .map(|v| (v.to_string(), author.publish(&format!("{v} post"), v)["id"].as_str().unwrap().to_string()))
        .collect();
    author.block(&blocked);

    let cases: [(&User, [bool; 3]); 4] = [
        (&author, [true, true, true]),
        (&follower, [true, true, false]),
        (&stranger, [true, false, false]),
        (&blocked, [false, false, false]),
    ];
    for (viewer, expect) in cases {
        for ((level, id), visible) in posts.iter().zip(expect) {
            let r = viewer.get(&format!("/v1/posts/{id}"));
            if visible {
                assert_eq!(r.expect(200)["visibility"], level.as_str());
            } else {
                r.expect_problem(404, "not_found");
            }
        }
        let list = viewer.get(&format!("/v1/users/{}/posts", author.id));
        if viewer.id == blocked.id {
            list.expect_problem(404, "not_found");
        } else {
            let seen: HashSet<String> =
                ids(list.expect(200)["items"].as_array().unwrap()).into_iter().collect();
            let want: HashSet<String> =
                posts.iter().zip(expect).filter(|(_, v)| *v).map(|((_, id), _)| id.clone()).collect();
            assert_eq!(seen, want, "author list for {}", viewer.handle);
        }
    }

    // Switching a post to private hides it from the follower on the very next read.
    let public_id = &posts[0].1;
    author.patch(&format!("/v1/posts/{public_id}"), json!({ "visibility": "private" })).expect(200);
    follower.get(&format!("/v1/posts/{public_id}")).expect_problem(404, "not_found");
    // Unfollowing loses the followers-only post.
    follower.unfollow(&author);
    follower.get(&format!("/v1/posts/{}", posts[1].1)).expect_problem(404, "not_found");
    // Hidden posts refuse edits from non-authors with 404, not 403 (no existence leak).
    stranger
        .patch(&format!("/v1/posts/{}", posts[2].1), json!({ "body": "x" }))
        .expect_problem(404, "not_found");
}

#[test]
fn idempotency_key_makes_publish_retries_return_the_first_post() {
    let user = register("idem");
    let auth = format!("Bearer {}", user.token);
    let headers = [("authorization", auth.as_str()), ("idempotency-key", "retry-123")];
    let body = json!({ "body": "only once" }).to_string();
    let first = raw("POST", "/v1/posts", &headers, body.as_bytes()).expect(201);
    let second = raw("POST", "/v1/posts", &headers, body.as_bytes()).expect(201);
    assert_eq!(first["id"], second["id"]);
    assert_eq!(user.profile()["posts_count"], 1);
    // Same key, different request: refused, nothing created.
    let other = json!({ "body": "something else" }).to_string();
    raw("POST", "/v1/posts", &headers, other.as_bytes()).expect_problem(409, "idempotency_key_reused");
    // Concurrent retries with a fresh key still create exactly one post.
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let auth = auth.clone();
            std::thread::spawn(move || {
                let h = [("authorization", auth.as_str()), ("idempotency-key", "burst-key")];
                raw("POST", "/v1/posts", &h, br#"{"body":"burst"}"#).expect(201)["id"].clone()
            })
        })
        .collect();
    let ids: HashSet<String> =
        handles.into_iter().map(|h| h.join().unwrap().as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 1, "one post for one key: {ids:?}");
    assert_eq!(user.profile()["posts_count"], 2);
}

/// Sort key of a Post as the API shows it.
fn key(post: &Value) -> (String, u64) {
    (post["created_at"].as_str().unwrap().to_string(), post["id"].as_str().unwrap().parse().unwrap())
}

#[test]
fn author_list_of_250_posts_with_shared_timestamps_pages_exactly_once() {
    let author = register("pager");
    // 260 posts over 20 distinct milliseconds: 13 posts share each created_at.
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let author = author.clone();
            std::thread::spawn(move || {
                (0..65)
                    .map(|i| {
                        let n = t * 65 + i;
                        let at = format!("2025-06-01T12:00:00.{:03}Z", n % 20);
                        import_post(&author, &format!("post {n}"), "public", &at)["id"]
                            .as_str()
                            .unwrap()
                            .to_string()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let created: HashSet<String> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    assert_eq!(created.len(), 260);
    // A newer native post sits on top.
    let newest = author.publish("newest", "public");

    let viewer = register("reader");
    let items = collect_pages(&viewer, &format!("/v1/users/{}/posts?limit=7", author.id));
    assert_eq!(items.len(), 261);
    assert_eq!(items[0]["id"], newest["id"]);
    let keys: Vec<(String, u64)> = items.iter().map(key).collect();
    assert!(keys.windows(2).all(|w| w[0] > w[1]), "strictly (created_at, id) descending");
    let seen: HashSet<String> = ids(&items).into_iter().collect();
    assert_eq!(seen.len(), 261);
    assert!(created.is_subset(&seen));
    // The newest imported time (a millisecond full on the author's shard moves later rows on).
    assert!(items[1]["created_at"].as_str().unwrap() >= "2025-06-01T12:00:00.019Z");
}

#[test]
fn tampered_and_foreign_cursors_are_400_invalid_cursor() {
    let author = register("cur_a");
    for i in 0..5 {
        author.publish(&format!("p{i}"), "public");
    }
    let reader = register("cur_r");
    let other = register("cur_o");
    let path = format!("/v1/users/{}/posts?limit=2", author.id);
    let page = reader.get(&path).expect(200);
    let cursor = page["next_cursor"].as_str().unwrap().to_string();
    reader.get(&format!("{path}&cursor={cursor}")).expect(200);

    let mut tampered = cursor.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    reader.get(&format!("{path}&cursor={tampered}")).expect_problem(400, "invalid_cursor");
    other.get(&format!("{path}&cursor={cursor}")).expect_problem(400, "invalid_cursor");
    // A cursor of one list is refused by another list of the same viewer.
    reader
        .get(&format!("/v1/users/{}/posts?cursor={cursor}", reader.id))
        .expect_problem(400, "invalid_cursor");
    reader.get(&format!("{path}&cursor=garbage")).expect_problem(400, "invalid_cursor");
}

#[test]
fn import_validates_input() {
    let author = register("imp");
    let bad = [
        json!({ "author_id": author.id, "body": "x", "created_at": "yesterday" }),
        json!({ "author_id": author.id, "body": "x", "created_at": "2999-01-01T00:00:00Z" }),
        json!({ "author_id": "999999999", "body": "x", "created_at": "2025-01-01T00:00:00Z" }),
        json!({ "author_id": author.id, "body": "", "created_at": "2025-01-01T00:00:00Z" }),
    ];
    for body in bad {
        admin("POST", "/v1/admin/import/posts", Some(&body)).expect_problem(422, "invalid_field");
    }
    let post = import_post(&author, "from the archive", "followers", "2024-02-29T23:59:59.5+02:00");
    assert_eq!(post["created_at"], "2024-02-29T21:59:59.500Z");
    assert_eq!(author.profile()["posts_count"], 1);
}
