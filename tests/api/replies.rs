//! Replies are statuses (a post of the replier's that knows what it answers): they reach home by
//! Mastodon's rule (followers of the replier who also follow the account replied to; a
//! self-reply thread reaches every follower), checked again at every read; they sit in their
//! thread (`context`, the comments view, `replies_count`) and take favourites, bookmarks and
//! boosts as any post does.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn reply(user: &User, to: &str, text: &str, visibility: &str) -> Value {
    let body = json!({ "status": text, "in_reply_to_id": to, "visibility": visibility });
    user.post("/api/v1/statuses", body).expect(200)
}

fn home_ids(user: &User) -> Vec<String> {
    ids(user.get("/api/v1/timelines/home?limit=40").expect(200).as_array().unwrap())
}

fn context(user: &User, id: &str) -> (Vec<String>, Vec<String>) {
    let c = user.get(&format!("/api/v1/statuses/{id}/context")).expect(200);
    (ids(c["ancestors"].as_array().unwrap()), ids(c["descendants"].as_array().unwrap()))
}

#[test]
fn a_reply_reaches_followers_who_follow_the_account_replied_to_and_leaves_when_they_unfollow_it() {
    let (alice, bob) = (register("rh_alice"), register("rh_bob"));
    let (carol, dave) = (register("rh_carol"), register("rh_dave"));
    carol.follow(&bob);
    carol.follow(&alice);
    dave.follow(&bob);
    activate(&carol);
    activate(&dave);
    let post = id_of(&alice.publish("what do you think?", "public"));
    let answer = reply(&bob, &post, &format!("@{} I agree", alice.handle), "public");
    assert_eq!(answer["in_reply_to_id"], post.as_str(), "{answer}");
    assert_eq!(answer["in_reply_to_account_id"], alice.id.as_str());
    let answer = id_of(&answer);
    let own_post = id_of(&bob.publish("a thread of mine", "public"));
    let own_reply = id_of(&reply(&bob, &own_post, "and more", "public"));

    poll("the reply in carol's home", DEADLINE, || home_ids(&carol).contains(&answer).then_some(()));
    wait_drained(&bob);
    let daves = home_ids(&dave);
    assert!(!daves.contains(&answer), "dave does not follow alice: {daves:?}");
    assert!(
        daves.contains(&own_reply) && daves.contains(&own_post),
        "a self-reply thread reaches every follower"
    );

    // Unfollowing the account replied to hides the reply at once; bob's own thread stays.
    carol.unfollow(&alice);
    let carols = home_ids(&carol);
    assert!(!carols.contains(&answer), "{carols:?}");
    assert!(carols.contains(&own_reply));
    // And following again shows it again (the window kept it; the read decides).
    carol.follow(&alice);
    poll("the reply back in carol's home", DEADLINE, || home_ids(&carol).contains(&answer).then_some(()));
}

/// A reply to the reader by someone they follow is in their home for good: the fan-out writes it
/// into their window (the account replied to is a recipient of its own), not only the read's
/// in-flight merge from D1, which stops after `FEED_IN_FLIGHT_SECONDS` (found when a
/// reinstatement test ran past it under load and the reply was gone).
#[test]
fn a_reply_to_the_reader_by_someone_they_follow_is_written_into_their_window() {
    let (erin, frank) = (register("rw_erin"), register("rw_frank"));
    erin.follow(&frank);
    activate(&erin);
    let post = id_of(&erin.publish("anyone?", "public"));
    let answer = id_of(&reply(&frank, &post, "me", "public"));
    poll("the reply in erin's window", DEADLINE, || window_ids(&erin).contains(&answer).then_some(()));
    wait_drained(&frank);
    assert!(home_ids(&erin).contains(&answer));
}

#[test]
fn a_reply_is_a_status_in_its_thread_that_takes_favourites_bookmarks_and_boosts() {
    let (alice, bob, carol) = (register("rt_alice"), register("rt_bob"), register("rt_carol"));
    let post = id_of(&alice.publish("root", "public"));
    let first = id_of(&reply(&bob, &post, "first", "public"));
    let second = id_of(&reply(&carol, &first, "second", "public"));
    assert_eq!(context(&carol, &post), (vec![], vec![first.clone(), second.clone()]));
    assert_eq!(context(&carol, &first), (vec![post.clone()], vec![second.clone()]));
    assert_eq!(context(&alice, &second), (vec![post.clone(), first.clone()], vec![]));
    // The thread's own view and count see them as comments.
    let comments = alice.get(&format!("/v1/posts/{post}/comments")).expect(200);
    let listed: Vec<String> = comments["items"].as_array().unwrap().iter().map(id_of).collect();
    assert_eq!(listed, vec![first.clone(), second.clone()]);
    assert_eq!(alice.get(&format!("/api/v1/statuses/{post}")).expect(200)["replies_count"], 2);
    // The root's author is told (Mastodon's `mention`), once.
    let told = alice.get("/api/v1/notifications?types[]=mention").expect(200);
    assert_eq!(told.as_array().unwrap().len(), 2, "{told}");

    let path = format!("/api/v1/statuses/{first}");
    assert_eq!(alice.post(&format!("{path}/favourite"), json!({})).expect(200)["favourites_count"], 1);
    assert_eq!(alice.post(&format!("{path}/bookmark"), json!({})).expect(200)["bookmarked"], true);
    let boost = alice.post(&format!("{path}/reblog"), json!({})).expect(200);
    assert_eq!(boost["reblog"]["id"], first.as_str(), "{boost}");
    let edited = bob.put(&path, Some(json!({ "status": "first, edited" }))).expect(200);
    assert_eq!(edited["content"], "<p>first, edited</p>");
    let comments = alice.get(&format!("/v1/posts/{post}/comments")).expect(200);
    assert_eq!(comments["items"][0]["body"], "first, edited", "the thread's row follows the edit");

    // Deleted: out of the thread and the count; its own reply stays in the thread.
    bob.delete(&path).expect(200);
    assert_eq!(context(&carol, &post), (vec![], vec![second.clone()]));
    assert_eq!(alice.get(&format!("/api/v1/statuses/{post}")).expect(200)["replies_count"], 1);
    wait_drained(&bob);
    assert_eq!(
        alice.get(&format!("/api/v1/statuses/{post}")).expect(200)["replies_count"],
        1,
        "its event agrees"
    );
}

#[test]
fn a_reply_is_never_wider_than_what_it_answers_and_a_narrow_one_is_hidden_from_the_thread() {
    let (alice, bob, follower, stranger) =
        (register("rv_alice"), register("rv_bob"), register("rv_follower"), register("rv_stranger"));
    follower.follow(&bob);
    let post = id_of(&alice.publish("open to all", "public"));
    let narrow = id_of(&reply(&bob, &post, "for my followers", "private"));
    let wide = id_of(&reply(&bob, &post, "for everyone", "public"));
    assert_eq!(context(&follower, &post).1, vec![narrow.clone(), wide.clone()]);
    assert_eq!(context(&stranger, &post).1, vec![wide.clone()]);
    let listed = stranger.get(&format!("/v1/posts/{post}/comments")).expect(200);
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(stranger.get(&format!("/api/v1/statuses/{narrow}")).status, 404);
    // A reply to a followers-only post is followers-only whatever it asks.
    let inner = id_of(&alice.publish("inner", "followers"));
    bob.follow(&alice);
    let answer = reply(&bob, &inner, "ok", "public");
    assert_eq!(answer["visibility"], "private", "{answer}");
    // A reply to what one may not see is 404, as a missing status.
    let hidden = id_of(&alice.publish("hidden", "followers"));
    let refused = stranger.post("/api/v1/statuses", json!({ "status": "hi", "in_reply_to_id": hidden }));
    assert_eq!(refused.status, 404);
}

fn comments_of(user: &User, post: &str) -> Vec<String> {
    ids(user.get(&format!("/v1/posts/{post}/comments")).expect(200)["items"].as_array().unwrap())
}

fn kinds_for(user: &User, post: &str) -> Vec<String> {
    let notes = user.get("/api/v1/notifications?limit=40").expect(200);
    notes
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["status"]["id"] == post)
        .map(|n| n["type"].as_str().unwrap().to_owned())
        .collect()
}

/// The `/v1` comments API is a view of a post's replies: a comment is the commenter's reply
/// post, as wide as the post and addressed to its author; liked, bookmarked and deleted as a
/// post (its like notifies its author), also by the post's author; an import notifies nobody.
#[test]
fn a_comment_is_a_reply_post_seen_by_whom_its_visibility_allows() {
    let (author, fan, both, outsider) =
        (register("cv_author"), register("cv_fan"), register("cv_both"), register("cv_outsider"));
    fan.follow(&author);
    both.follow(&author);
    both.follow(&fan);
    outsider.follow(&author);
    let post = id_of(&author.publish("followers only", "followers"));
    let comment = fan.post(&format!("/v1/posts/{post}/comments"), json!({ "body": "seen by whom?" }));
    let comment = id_of(&comment.expect(201));
    let status = fan.get(&format!("/api/v1/statuses/{comment}")).expect(200);
    assert_eq!(status["in_reply_to_id"], post.as_str(), "{status}");
    assert_eq!(status["visibility"], "private", "as wide as the post it answers");
    // Its author sees it though not following the commenter (it answers them); a follower of
    // both does; a follower of the post's author only does not, in the thread or by its id.
    author.get(&format!("/api/v1/statuses/{comment}")).expect(200);
    assert_eq!(comments_of(&author, &post), vec![comment.clone()]);
    assert_eq!(comments_of(&both, &post), vec![comment.clone()]);
    assert!(comments_of(&outsider, &post).is_empty());
    outsider.get(&format!("/api/v1/statuses/{comment}")).expect(404);
    assert_eq!(kinds_for(&author, &comment), vec!["mention"], "Mastodon shows a reply as a mention");

    // Liked through the comments API: the post's like, notifying the commenter.
    let liked = author.post(&format!("/v1/comments/{comment}/like"), json!({})).expect(200);
    assert_eq!((liked["like_count"].as_i64(), liked["liked_by_me"].as_bool()), (Some(1), Some(true)));
    author.post(&format!("/v1/comments/{comment}/like"), json!({})).expect(200);
    let status = author.get(&format!("/api/v1/statuses/{comment}")).expect(200);
    assert_eq!((status["favourites_count"].as_i64(), status["favourited"].as_bool()), (Some(1), Some(true)));
    poll("the commenter's favourite notification", DEADLINE, || {
        kinds_for(&fan, &comment).contains(&"favourite".to_owned()).then_some(())
    });
    // The post's author deletes it from their thread: the reply post is gone for everyone.
    outsider.delete(&format!("/v1/comments/{comment}")).expect_problem(404, "not_found");
    both.delete(&format!("/v1/comments/{comment}")).expect_problem(403, "not_author");
    assert_eq!(author.delete(&format!("/v1/comments/{comment}")).status, 204);
    fan.get(&format!("/api/v1/statuses/{comment}")).expect(404);
    assert!(comments_of(&author, &post).is_empty());
    assert_eq!(author.get(&format!("/v1/posts/{post}")).expect(200)["comment_count"], 0);

    // An imported comment is a reply post at its original time, and old news: no notification.
    let at = "2026-01-02T03:04:05.000Z";
    let body = json!({ "post_id": post, "author_id": fan.id, "body": "from the archive", "created_at": at });
    let imported = id_of(&admin("POST", "/v1/admin/import/comments", Some(&body)).expect(201));
    let status = fan.get(&format!("/api/v1/statuses/{imported}")).expect(200);
    assert_eq!(status["created_at"], at);
    assert_eq!(status["in_reply_to_id"], post.as_str());
    assert_eq!(comments_of(&author, &post), vec![imported.clone()]);
    wait_drained(&fan);
    assert!(kinds_for(&author, &imported).is_empty(), "{:?}", kinds_for(&author, &imported));
}

/// A reply that mentions the account it answers (as every Mastodon client writes one) notifies
/// it once, as Mastodon does: the mention's notification, not a second one for the reply; a
/// reply without the mention notifies it as a `mention` all the same, whose status is the reply
/// post itself (its mentions, its thread, bookmarkable).
#[test]
fn a_reply_notifies_the_account_it_answers_once_with_the_reply_as_its_status() {
    let (alice, bob) = (register("rn_alice"), register("rn_bob"));
    let post = id_of(&alice.publish("ask me anything", "public"));
    let with_mention = id_of(&reply(&bob, &post, &format!("@{} here is one", alice.handle), "public"));
    let without = id_of(&reply(&bob, &post, "and another", "public"));
    wait_drained(&bob);
    assert_eq!(kinds_for(&alice, &with_mention), vec!["mention"]);
    assert_eq!(kinds_for(&alice, &without), vec!["mention"]);
    let notes = alice.get("/api/v1/notifications?limit=40").expect(200);
    let status = notes.as_array().unwrap().iter().find(|n| n["status"]["id"] == with_mention).unwrap();
    let status = &status["status"];
    assert_eq!(status["in_reply_to_id"], post.as_str(), "{status}");
    assert_eq!(status["mentions"][0]["id"], alice.id.as_str(), "{status}");
    let plain = notes.as_array().unwrap().iter().find(|n| n["status"]["id"] == without).unwrap();
    assert_eq!(plain["status"]["in_reply_to_id"], post.as_str(), "{plain}");
    assert_eq!(plain["status"]["bookmarked"], false, "{plain}");
}
