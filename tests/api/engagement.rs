use edgefeed::domain::time::parse_rfc3339;
use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Value};

use edgefeed::domain::likes::{apply, LikeRequest, LikeState};

use crate::common::*;

fn post_path(post: &Value) -> String {
    format!("/v1/posts/{}", post["id"].as_str().unwrap())
}

fn like(user: &User, post: &Value, seq: Option<i64>) -> Value {
    let q = seq.map(|s| format!("?seq={s}")).unwrap_or_default();
    user.put(&format!("{}/like{q}", post_path(post)), None).expect(200)
}

fn unlike(user: &User, post: &Value, seq: Option<i64>) -> Value {
    let q = seq.map(|s| format!("?seq={s}")).unwrap_or_default();
    user.delete(&format!("{}/like{q}", post_path(post))).expect(200)
}

fn like_count(viewer: &User, post: &Value) -> i64 {
    viewer.get(&post_path(post)).expect(200)["like_count"].as_i64().unwrap()
}

#[test]
fn repeated_likes_count_once_and_unlike_of_unliked_stays_zero() {
    let author = register("lk_author");
    let fan = register("lk_fan");
    let post = author.publish("like me", "public");
    let r = unlike(&fan, &post, None);
    assert_eq!(r, json!({ "liked": false, "like_count": 0, "applied": true }));
    for _ in 0..20 {
        let r = like(&fan, &post, None);
        assert_eq!((r["liked"].clone(), r["like_count"].clone()), (json!(true), json!(1)));
    }
    let seen = fan.get(&post_path(&post)).expect(200);
    assert_eq!(seen["like_count"], 1);
    // The Worker's own storage work is the token check, then the post's object (which checks
    // visibility inside its group commit and writes the liker's side, `liked_posts`, after
    // it): no D1 round trip around the object call. The object's work is the like's too, and
    // its statements are counted with it, the liker side's on the liker's home.
    let r = fan.put(&format!("{}/like", post_path(&post)), None);
    assert_eq!(r.status, 200);
    assert_eq!(r.timing("sequential round trips"), 2, "{:?}", r.server_timing);
    assert_eq!(r.timing("round trips"), 1, "the token check: {:?}", r.server_timing);
    assert!(r.timing("statements") > 2, "the commit's and the liker side's too: {:?}", r.server_timing);
    assert_eq!(seen["liked_by_me"], true);
    assert_eq!(author.get(&post_path(&post)).expect(200)["liked_by_me"], false);
    for _ in 0..3 {
        assert_eq!(unlike(&fan, &post, None)["like_count"], 0);
    }
    assert_eq!(like_count(&author, &post), 0);
}

#[test]
fn stale_seq_is_not_applied() {
    let author = register("seq_author");
    let fan = register("seq_fan");
    let post = author.publish("ordered", "public");
    assert_eq!(unlike(&fan, &post, Some(7)), json!({ "liked": false, "like_count": 0, "applied": true }));
    assert_eq!(like(&fan, &post, Some(5)), json!({ "liked": false, "like_count": 0, "applied": false }));
    assert_eq!(like(&fan, &post, Some(7)), json!({ "liked": false, "like_count": 0, "applied": false }));
    assert_eq!(like(&fan, &post, Some(8)), json!({ "liked": true, "like_count": 1, "applied": true }));
    // A request without seq always applies.
    assert_eq!(unlike(&fan, &post, None), json!({ "liked": false, "like_count": 0, "applied": true }));
    fan.put(&format!("{}/like?seq=abc", post_path(&post)), None).expect_problem(422, "invalid_field");
    fan.put(&format!("{}/like?seq=-1", post_path(&post)), None).expect_problem(422, "invalid_field");
}

/// A tiny deterministic generator, so the burst is the same on every run.
fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

#[test]
fn burst_of_500_like_requests_from_100_users_ends_exact() {
    let likes_stats = || admin("GET", "/v1/admin/stats", None).expect(200)["likes"].clone();
    let before = likes_stats();
    let author = register("burst_author");
    let post = Arc::new(author.publish("hot post", "public"));
    let users: Vec<User> = {
        let threads: Vec<_> = (0..10)
            .map(|_| std::thread::spawn(|| (0..10).map(|_| register("burst")).collect::<Vec<_>>()))
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    };
    let mut rng = 42u64;
    // Each user's five actions. The first 50 users send theirs one after another without seq
    // (the last one sent is the last applied); the other 50 send all five at once with seq
    // 1..=5, so they arrive in any order and only seq decides.
    let plans: Vec<Vec<bool>> =
        users.iter().map(|_| (0..5).map(|_| lcg(&mut rng) % 2 == 0).collect()).collect();
    let mut threads = Vec::new();
    for (i, (user, plan)) in users.iter().zip(&plans).enumerate() {
        if i < 50 {
            let (user, plan, post) = (user.clone(), plan.clone(), post.clone());
            threads.push(std::thread::spawn(move || {
                for want in plan {
                    let r = if want { like(&user, &post, None) } else { unlike(&user, &post, None) };
                    assert_eq!(r["applied"], true);
                    assert_eq!(r["liked"], want);
                }
            }));
        } else {
            for (k, want) in plan.iter().copied().enumerate() {
                let (user, post) = (user.clone(), post.clone());
                threads.push(std::thread::spawn(move || {
                    let seq = Some(k as i64 + 1);
                    if want {
                        like(&user, &post, seq)
                    } else {
                        unlike(&user, &post, seq)
                    };
                }));
            }
        }
    }
    for t in threads {
        t.join().unwrap();
    }
    // Expected final state per user, from the pure like state machine.
    let expected_likers: HashSet<String> = users
        .iter()
        .zip(&plans)
        .enumerate()
        .filter(|(i, (_, plan))| {
            let mut state: Option<LikeState> = None;
            for (k, want) in plan.iter().enumerate() {
                let seq = (*i >= 50).then_some(k as i64 + 1);
                state = Some(apply(state, LikeRequest { like: *want, seq }).state);
            }
            state.unwrap_or_default().liked
        })
        .map(|(_, (u, _))| u.id.clone())
        .collect();
    assert!(!expected_likers.is_empty() && expected_likers.len() < 100);
    assert_eq!(like_count(&author, &post) as usize, expected_likers.len());
    let likers = collect_pages(&author, &format!("{}/likes?limit=7", post_path(&post)));
    let liker_ids: HashSet<String> = ids(&likers).into_iter().collect();
    assert_eq!(likers.len(), liker_ids.len(), "no liker twice");
    assert_eq!(liker_ids, expected_likers);
    // Group commit: the burst's requests were committed in fewer batches than requests.
    let after = likes_stats();
    let delta = |k: &str| after[k].as_i64().unwrap() - before[k].as_i64().unwrap();
    assert!(delta("requests_committed") >= 500, "{before} -> {after}");
    assert!(delta("group_commits") < delta("requests_committed"), "{before} -> {after}");
}

#[test]
fn drifted_count_is_repaired_by_reconciliation() {
    let author = register("drift_author");
    let fans: Vec<User> = (0..3).map(|_| register("drift_fan")).collect();
    let post = author.publish("count me", "public");
    for f in &fans {
        like(f, &post, None);
    }
    assert_eq!(like_count(&author, &post), 3);
    admin("POST", "/v1/admin/test/drift", Some(&json!({ "post_id": post["id"], "like_count": 42 })))
        .expect(200);
    assert_eq!(like_count(&author, &post), 42, "drift injected");
    let report = admin("POST", "/v1/admin/reconcile", None).expect(200);
    assert!(report["counts_repaired"].as_i64().unwrap() >= 1, "{report}");
    assert_eq!(like_count(&author, &post), 3);
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    assert!(stats["reconcile"]["counts_repaired"].as_i64().unwrap() >= 1);
}

/// A like marks nothing on its post: the repair finds a post liked since its previous share
/// by the likes' own times. The drift here leaves the post unmarked (`touched_at` untouched),
/// so only the likes lead the pass to it.
#[test]
fn a_drifted_count_of_a_liked_post_is_repaired_without_a_mark_on_the_post() {
    let author = register("drift_unmarked_author");
    let fans: Vec<User> = (0..2).map(|_| register("drift_unmarked_fan")).collect();
    let post = author.publish("count me without a mark", "public");
    for f in &fans {
        like(f, &post, None);
    }
    let body = json!({ "post_id": post["id"], "like_count": 9, "unmarked": true });
    admin("POST", "/v1/admin/test/drift", Some(&body)).expect(200);
    assert_eq!(like_count(&author, &post), 9, "drift injected");
    let report = admin("POST", "/v1/admin/reconcile", None).expect(200);
    assert!(report["counts_repaired"].as_i64().unwrap() >= 1, "{report}");
    assert_eq!(like_count(&author, &post), 2, "the likes led the repair to the post: {report}");
}

#[test]
fn three_hundred_comments_claiming_one_millisecond_page_exactly_once_both_ways() {
    let author = register("cm_author");
    let post = author.publish("discuss", "public");
    let commenters: Vec<User> = (0..3).map(|_| register("cm_user")).collect();
    let at = "2026-06-01T00:00:00.123Z";
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (commenters, post_id) = (commenters.clone(), post["id"].clone());
            std::thread::spawn(move || {
                (0..50)
                    .map(|i| {
                        let body = json!({ "post_id": post_id, "author_id": commenters[i % 3].id, "body": format!("c{t}-{i}"), "created_at": at });
                        let c = admin("POST", "/v1/admin/import/comments", Some(&body)).expect(201);
                        // A millisecond holds 8 ids per shard: rows beyond that move a little later
                        // (store/snowflake.rs), never earlier.
                        let kept = parse_rfc3339(c["created_at"].as_str().unwrap()).unwrap();
                        let asked = parse_rfc3339(at).unwrap();
                        assert!((asked..asked + 1_024).contains(&kept), "{} for {at}", c["created_at"]);
                        c["id"].as_str().unwrap().to_string()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let created: HashSet<String> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert_eq!(created.len(), 300);
    let reader = register("cm_reader");
    let oldest = collect_pages(&reader, &format!("{}/comments?limit=9", post_path(&post)));
    let newest = collect_pages(&reader, &format!("{}/comments?order=newest&limit=9", post_path(&post)));
    for (list, ascending) in [(&oldest, true), (&newest, false)] {
        let nums: Vec<u64> = ids(list).iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(nums.len(), 300);
        assert_eq!(nums.iter().map(|n| n.to_string()).collect::<HashSet<_>>(), created);
        let sorted = nums.windows(2).all(|w| if ascending { w[0] < w[1] } else { w[0] > w[1] });
        assert!(sorted, "ties on created_at are broken by id");
    }
    assert_eq!(reader.get(&post_path(&post)).expect(200)["comment_count"], 300);
    // A cursor of one order is refused by the other.
    let page = reader.get(&format!("{}/comments?limit=9", post_path(&post))).expect(200);
    let c = page["next_cursor"].as_str().unwrap();
    reader
        .get(&format!("{}/comments?order=newest&cursor={c}", post_path(&post)))
        .expect_problem(400, "invalid_cursor");
    reader.get(&format!("{}/comments?order=sideways", post_path(&post))).expect_problem(422, "invalid_field");
}

#[test]
fn comments_create_and_delete_rules() {
    let author = register("cd_author");
    let commenter = register("cd_commenter");
    let other = register("cd_other");
    let post = author.publish("comment here", "public");
    let path = format!("{}/comments", post_path(&post));
    let c1 = commenter.post(&path, json!({ "body": "  first!  " })).expect(201);
    assert_eq!(c1["body"], "first!");
    assert_eq!(c1["post_id"], post["id"]);
    assert_eq!(c1["author"]["id"], commenter.id.as_str());
    let c2 = commenter.post(&path, json!({ "body": "second" })).expect(201);
    commenter.post(&path, json!({ "body": "" })).expect_problem(422, "invalid_field");
    commenter.post(&path, json!({ "body": "x".repeat(5001) })).expect_problem(422, "invalid_field");
    assert_eq!(other.get(&post_path(&post)).expect(200)["comment_count"], 2);

    let c1_path = format!("/v1/comments/{}", c1["id"].as_str().unwrap());
    let c2_path = format!("/v1/comments/{}", c2["id"].as_str().unwrap());
    other.delete(&c1_path).expect_problem(403, "not_author");
    assert_eq!(commenter.delete(&c1_path).status, 204);
    assert_eq!(author.delete(&c2_path).status, 204, "the post's author may delete any comment");
    commenter.delete(&c2_path).expect_problem(404, "not_found");
    assert_eq!(other.get(&post_path(&post)).expect(200)["comment_count"], 0);
    assert!(collect_pages(&other, &path).is_empty());

    // Deleting the post hides its comments and likes.
    let c3 = commenter.post(&path, json!({ "body": "third" })).expect(201);
    like(&commenter, &post, None);
    assert_eq!(author.delete(&post_path(&post)).status, 204);
    commenter.get(&path).expect_problem(404, "not_found");
    commenter.get(&format!("{}/likes", post_path(&post))).expect_problem(404, "not_found");
    commenter.put(&format!("{}/like", post_path(&post)), None).expect_problem(404, "not_found");
    // Its comments are reply posts, which outlive it: only their own author still deletes them.
    let c3_path = format!("/v1/comments/{}", c3["id"].as_str().unwrap());
    other.delete(&c3_path).expect_problem(404, "not_found");
    author.delete(&c3_path).expect_problem(404, "not_found");
    assert_eq!(commenter.delete(&c3_path).status, 204);
}

/// A comment is a reply post (issue 39), and replies outlive the post they answer (as in
/// Mastodon): once the post is deleted its author can no longer act on its comments (its thread
/// is gone: 404), while each comment's own author still deletes it, on `/v1` and as a Mastodon
/// status, whatever the post's visibility; a comment on a live post beside them still deletes.
#[test]
fn a_deleted_posts_comments_stay_their_authors_to_delete() {
    let author = register("dd_author");
    let fan = register("dd_fan");
    fan.follow(&author);
    for visibility in ["public", "followers", "private"] {
        let post = author.publish(&format!("{visibility} post"), visibility);
        let live = author.publish(&format!("{visibility} post that stays"), visibility);
        // Only the author sees a private post, so only they comment on it.
        let commenter = if visibility == "private" { &author } else { &fan };
        let comment = |post: &Value| {
            let path = format!("{}/comments", post_path(post));
            id_of(&commenter.post(&path, json!({ "body": "a comment" })).expect(201))
        };
        let (c, on_live) = (comment(&post), comment(&live));
        let reply = json!({ "status": "a reply", "in_reply_to_id": id_of(&post) });
        let r = id_of(&commenter.post("/api/v1/statuses", reply).expect(200));
        commenter.put(&format!("/v1/comments/{c}/like"), None).expect(200);
        assert_eq!(author.delete(&post_path(&post)).status, 204);
        author.get(&format!("{}/comments", post_path(&post))).expect_problem(404, "not_found");
        if commenter.id != author.id {
            author.delete(&format!("/v1/comments/{c}")).expect_problem(404, "not_found");
        }
        // The comment outlives its post, still liked, until its author deletes it.
        assert_eq!(commenter.get(&format!("/api/v1/statuses/{c}")).expect(200)["favourites_count"], 1);
        assert_eq!(commenter.delete(&format!("/v1/comments/{c}")).status, 204, "{visibility}");
        commenter.delete(&format!("/v1/comments/{c}")).expect_problem(404, "not_found");
        commenter.get(&format!("/api/v1/statuses/{c}")).expect(404);
        // A Mastodon reply is the same kind of thing: a comment to the /v1 API.
        commenter.get(&format!("/api/v1/statuses/{r}")).expect(200);
        assert_eq!(commenter.delete(&format!("/v1/comments/{r}")).status, 204, "{visibility}");
        commenter.delete(&format!("/api/v1/statuses/{r}")).expect(404);
        assert_eq!(commenter.delete(&format!("/v1/comments/{on_live}")).status, 204, "{visibility}");
        assert_eq!(author.get(&post_path(&live)).expect(200)["comment_count"], 0, "{visibility}");
    }
}

#[test]
fn strangers_blocked_and_non_followers_get_404_on_followers_only_posts() {
    let author = register("fo_author");
    let follower = register("fo_follower");
    let stranger = register("fo_stranger");
    let blocked = register("fo_blocked");
    follower.follow(&author);
    blocked.follow(&author);
    let post = author.publish("followers only", "followers");
    author.block(&blocked);
    let p = post_path(&post);
    for outsider in [&stranger, &blocked] {
        outsider.put(&format!("{p}/like"), None).expect_problem(404, "not_found");
        outsider.delete(&format!("{p}/like")).expect_problem(404, "not_found");
        outsider.get(&format!("{p}/likes")).expect_problem(404, "not_found");
        outsider.post(&format!("{p}/comments"), json!({ "body": "hi" })).expect_problem(404, "not_found");
        outsider.get(&format!("{p}/comments")).expect_problem(404, "not_found");
    }
    // The follower can do all of it.
    assert_eq!(like(&follower, &post, None)["like_count"], 1);
    follower.post(&format!("{p}/comments"), json!({ "body": "hi" })).expect(201);
    assert_eq!(ids(&collect_pages(&follower, &format!("{p}/likes"))), vec![follower.id.clone()]);
    let seen = author.get(&p).expect(200);
    assert_eq!((seen["like_count"].clone(), seen["comment_count"].clone()), (json!(1), json!(1)));
    // Public posts: a blocked user still cannot interact.
    let public = author.publish("public", "public");
    blocked.put(&format!("{}/like", post_path(&public)), None).expect_problem(404, "not_found");
}

#[test]
fn counts_and_liked_by_me_show_in_lists_and_feed() {
    let author = register("ct_author");
    let fan = register("ct_fan");
    fan.follow(&author);
    let post = author.publish("everywhere", "public");
    like(&fan, &post, None);
    fan.post(&format!("{}/comments", post_path(&post)), json!({ "body": "nice" })).expect(201);
    let listed = fan.get(&format!("/v1/users/{}/posts", author.id)).expect(200)["items"][0].clone();
    let in_feed = collect_pages(&fan, "/v1/feed").into_iter().find(|p| p["id"] == post["id"]).unwrap();
    for p in [listed, in_feed] {
        assert_eq!(
            (p["like_count"].clone(), p["comment_count"].clone(), p["liked_by_me"].clone()),
            (json!(1), json!(1), json!(true))
        );
    }
}
