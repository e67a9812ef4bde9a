//! A status's extras (issue 42): edit history and source, conversation mutes, pins (and the
//! featured statuses of a profile), polls, scheduled statuses.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn status(user: &User, text: &str, visibility: &str) -> String {
    id_of(&user.post("/api/v1/statuses", json!({ "status": text, "visibility": visibility })).expect(200))
}

fn reply(user: &User, to: &str, text: &str) -> String {
    id_of(&user.post("/api/v1/statuses", json!({ "status": text, "in_reply_to_id": to })).expect(200))
}

fn contents(history: &Value) -> Vec<String> {
    history.as_array().unwrap().iter().map(|v| v["content"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn history_lists_every_version_oldest_first_and_a_retry_adds_none() {
    let (alice, bob, stranger) = (register("ph_alice"), register("ph_bob"), register("ph_stranger"));
    bob.follow(&alice);
    let post = status(&alice, "first words", "private");
    let path = format!("/api/v1/statuses/{post}");
    // Never edited: one version, the post itself; no edited_at.
    let history = bob.get(&format!("{path}/history")).expect(200);
    assert_eq!(contents(&history), vec!["<p>first words</p>"]);
    assert_eq!(alice.get(&path).expect(200)["edited_at"], Value::Null);

    let edited = alice.put(&path, Some(json!({ "status": "second words" }))).expect(200);
    assert!(edited["edited_at"].is_string(), "{edited}");
    // A retry of the same edit stores no version.
    alice.put(&path, Some(json!({ "status": "second words" }))).expect(200);
    alice.put(&path, Some(json!({ "spoiler_text": "careful" }))).expect(200);
    let history = bob.get(&format!("{path}/history")).expect(200);
    assert_eq!(contents(&history), vec!["<p>first words</p>", "<p>second words</p>", "<p>second words</p>"]);
    let spoilers: Vec<&str> =
        history.as_array().unwrap().iter().map(|v| v["spoiler_text"].as_str().unwrap()).collect();
    assert_eq!(spoilers, ["", "", "careful"]);
    assert_eq!(history[2]["sensitive"], true, "a warning makes it sensitive");
    assert_eq!(history[0]["account"]["id"], alice.id.as_str());
    let times: Vec<&str> =
        history.as_array().unwrap().iter().map(|v| v["created_at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "oldest first: {times:?}");
    assert_eq!(times[2], alice.get(&path).expect(200)["edited_at"].as_str().unwrap());

    // The source: the plain text and the warning, for whoever may read it.
    let source = bob.get(&format!("{path}/source")).expect(200);
    assert_eq!(source, json!({ "id": post, "text": "second words", "spoiler_text": "careful" }));
    // Who may not read the post may read neither: 404 as for a status that does not exist.
    assert_eq!(stranger.get(&format!("{path}/history")).status, 404);
    assert_eq!(stranger.get(&format!("{path}/source")).status, 404);
    assert_eq!(bob.get("/api/v1/statuses/123/history").status, 404);
    // Deleted: gone for everyone.
    alice.delete(&path).expect(200);
    assert_eq!(alice.get(&format!("{path}/history")).status, 404);
}

fn mentions_of(user: &User, thread_post: &str) -> usize {
    let notes = user.get("/api/v1/notifications?limit=40").expect(200);
    notes.as_array().unwrap().iter().filter(|n| n["status"]["id"] == thread_post).count()
}

#[test]
fn a_muted_conversation_notifies_no_more_until_unmuted() {
    let (alice, bob) = (register("pm_alice"), register("pm_bob"));
    let root = status(&alice, "a thread", "public");
    let first = reply(&bob, &root, "a reply");
    poll("the first reply's notification", DEADLINE, || (mentions_of(&alice, &first) == 1).then_some(()));

    let muted = alice.post(&format!("/api/v1/statuses/{first}/mute"), json!({})).expect(200);
    assert_eq!(muted["muted"], true, "{muted}");
    // The mute is the thread's: its root shows it muted too, for alice only.
    assert_eq!(alice.get(&format!("/api/v1/statuses/{root}")).expect(200)["muted"], true);
    assert_eq!(bob.get(&format!("/api/v1/statuses/{root}")).expect(200)["muted"], false);
    // Idempotent.
    alice.post(&format!("/api/v1/statuses/{root}/mute"), json!({})).expect(200);

    let quiet = reply(&bob, &first, &format!("@{} hello again", alice.handle));
    let quieter = reply(&bob, &root, "and again");
    wait_drained(&bob);
    assert_eq!((mentions_of(&alice, &quiet), mentions_of(&alice, &quieter)), (0, 0));
    // Another thread still notifies.
    let other = status(&alice, "elsewhere", "public");
    let loud = reply(&bob, &other, "over here");
    poll("a reply in another thread notifies", DEADLINE, || (mentions_of(&alice, &loud) == 1).then_some(()));

    let unmuted = alice.post(&format!("/api/v1/statuses/{root}/unmute"), json!({})).expect(200);
    assert_eq!(unmuted["muted"], false);
    let heard = reply(&bob, &root, "heard now");
    poll("unmuted: a reply notifies again", DEADLINE, || (mentions_of(&alice, &heard) == 1).then_some(()));
    // A status one may not see cannot be muted.
    let hidden = status(&bob, "only mine", "direct");
    assert_eq!(alice.post(&format!("/api/v1/statuses/{hidden}/mute"), json!({})).status, 404);
}

fn featured(viewer: &User, author: &User) -> Vec<String> {
    ids(viewer
        .get(&format!("/api/v1/accounts/{}/statuses?pinned=true", author.id))
        .expect(200)
        .as_array()
        .unwrap())
}

#[test]
fn pins_are_the_authors_own_up_to_five_and_show_by_visibility() {
    let (alice, bob, follower) = (register("pp_alice"), register("pp_bob"), register("pp_follower"));
    follower.follow(&alice);
    let open = status(&alice, "pin me", "public");
    let narrow = status(&alice, "followers only", "private");
    let direct = status(&alice, "direct one", "direct");
    let pin = |user: &User, id: &str| user.post(&format!("/api/v1/statuses/{id}/pin"), json!({}));

    let pinned = pin(&alice, &open).expect(200);
    assert_eq!(pinned["pinned"], true, "{pinned}");
    pin(&alice, &open).expect(200);
    pin(&alice, &narrow).expect(200);
    // Someone else's post, a direct post, a boost: 422; a post one cannot see: 404.
    assert_eq!(pin(&bob, &open).status, 422);
    assert_eq!(pin(&alice, &direct).status, 422);
    let boost = id_of(&alice.post(&format!("/api/v1/statuses/{open}/reblog"), json!({})).expect(200));
    assert_eq!(pin(&alice, &boost).status, 422);
    assert_eq!(pin(&bob, &direct).status, 404);
    // `pinned` is the author's to see.
    assert_eq!(alice.get(&format!("/api/v1/statuses/{open}")).expect(200)["pinned"], true);
    assert_eq!(bob.get(&format!("/api/v1/statuses/{open}")).expect(200)["pinned"], false);

    // The featured statuses, most recently pinned first, as each viewer may see them.
    assert_eq!(featured(&follower, &alice), vec![narrow.clone(), open.clone()]);
    assert_eq!(featured(&bob, &alice), vec![open.clone()]);
    assert_eq!(featured(&alice, &bob), Vec::<String>::new());
    let page_two = format!("/api/v1/accounts/{}/statuses?pinned=true&max_id={open}", alice.id);
    assert_eq!(bob.get(&page_two).expect(200), json!([]));

    // Five at most: a sixth is refused and changes nothing.
    let more: Vec<String> = (0..3).map(|i| status(&alice, &format!("more {i}"), "public")).collect();
    for id in &more {
        pin(&alice, id).expect(200);
    }
    let sixth = status(&alice, "one too many", "unlisted");
    assert_eq!(pin(&alice, &sixth).status, 422);
    assert_eq!(featured(&alice, &alice).len(), 5);
    // Unpinned, or deleted: off the profile.
    let unpinned = alice.post(&format!("/api/v1/statuses/{open}/unpin"), json!({})).expect(200);
    assert_eq!(unpinned["pinned"], false);
    alice.delete(&format!("/api/v1/statuses/{narrow}")).expect(200);
    assert_eq!(featured(&follower, &alice), more.iter().rev().cloned().collect::<Vec<_>>());
    pin(&alice, &sixth).expect(200);
    assert_eq!(featured(&bob, &alice)[0], sixth);
}
