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
