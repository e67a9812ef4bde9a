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

fn poll_status(user: &User, poll: Value) -> Resp {
    user.post("/api/v1/statuses", json!({ "status": "Which fruits do you like?", "poll": poll }))
}

fn statuses_count(user: &User) -> i64 {
    user.get("/api/v1/accounts/verify_credentials").expect(200)["statuses_count"].as_i64().unwrap()
}

fn vote(user: &User, poll: &str, choices: Value) -> Resp {
    user.post(&format!("/api/v1/polls/{poll}/votes"), json!({ "choices": choices }))
}

#[test]
fn a_poll_is_made_with_its_status_voted_once_and_read_as_the_viewer_sees_it() {
    let (alice, bob, carol, stranger) =
        (register("pl_alice"), register("pl_bob"), register("pl_carol"), register("pl_stranger"));
    // masto.js's case: a multiple-choice poll, two choices.
    let made = poll_status(
        &alice,
        json!({ "options": ["Apple", "Banana", "Orange"], "multiple": true, "expires_in": 86400 }),
    )
    .expect(200);
    let poll = made["poll"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["poll"]["options"][1], json!({ "title": "Banana", "votes_count": 0 }));
    assert_eq!(
        (made["poll"]["voted"].as_bool(), made["poll"]["expired"].as_bool()),
        (Some(true), Some(false))
    );
    let voted = vote(&bob, &poll, json!([0, 1])).expect(200);
    assert_eq!((voted["votes_count"].as_i64(), voted["voters_count"].as_i64()), (Some(2), Some(1)));
    let seen = bob.get(&format!("/api/v1/polls/{poll}")).expect(200);
    assert_eq!((seen["own_votes"].clone(), seen["voted"].clone()), (json!([0, 1]), json!(true)));
    assert_eq!(carol.get(&format!("/api/v1/polls/{poll}")).expect(200)["voted"], false);
    let shown = bob.get(&format!("/api/v1/statuses/{}", id_of(&made))).expect(200);
    assert_eq!(shown["poll"]["own_votes"], json!([0, 1]), "{shown}");

    // A second vote, one's own poll, a choice that is not an option, two on a single-choice
    // poll: 422, and nothing counted.
    assert_eq!(vote(&bob, &poll, json!([2])).status, 422);
    assert_eq!(vote(&alice, &poll, json!([2])).status, 422);
    assert_eq!(vote(&carol, &poll, json!([3])).status, 422);
    assert_eq!(vote(&carol, &poll, json!([])).status, 422);
    let single = poll_status(&alice, json!({ "options": ["yes", "no"], "expires_in": 300 })).expect(200);
    let single = single["poll"]["id"].as_str().unwrap().to_owned();
    assert_eq!(vote(&carol, &single, json!([0, 1])).status, 422);
    assert_eq!(vote(&carol, &single, json!(["1"])).expect(200)["options"][1]["votes_count"], 1);
    let after = alice.get(&format!("/api/v1/polls/{poll}")).expect(200);
    assert_eq!((after["votes_count"].as_i64(), after["voters_count"].as_i64()), (Some(2), Some(1)));

    // A followers-only poll is nobody else's to read or vote in.
    let narrow = alice.post(
        "/api/v1/statuses",
        json!({ "status": "friends only", "visibility": "private", "poll": { "options": ["a", "b"], "expires_in": 600 } }),
    );
    let narrow = narrow.expect(200)["poll"]["id"].as_str().unwrap().to_owned();
    assert_eq!(stranger.get(&format!("/api/v1/polls/{narrow}")).status, 404);
    assert_eq!(vote(&stranger, &narrow, json!([0])).status, 404);
    // A status without a poll has none to read.
    let plain = status(&alice, "no poll here", "public");
    assert_eq!(bob.get(&format!("/api/v1/polls/{plain}")).status, 404);

    // hide_totals: the counts are hidden from voters while it runs, not from its author.
    let hidden =
        poll_status(&alice, json!({ "options": ["x", "y"], "expires_in": 600, "hide_totals": true }))
            .expect(200);
    let hidden = hidden["poll"]["id"].as_str().unwrap().to_owned();
    let told = vote(&bob, &hidden, json!([1])).expect(200);
    assert_eq!(told["options"][1]["votes_count"], Value::Null, "{told}");
    assert_eq!(alice.get(&format!("/api/v1/polls/{hidden}")).expect(200)["options"][1]["votes_count"], 1);
}

#[test]
fn a_bad_poll_refuses_the_status_and_a_form_poll_is_read() {
    let alice = register("pb_alice");
    let before = statuses_count(&alice);
    let long = "x".repeat(51);
    for bad in [
        json!({ "options": ["only one"], "expires_in": 300 }),
        json!({ "options": ["a", "b", "c", "d", "e"], "expires_in": 300 }),
        json!({ "options": ["a", long], "expires_in": 300 }),
        json!({ "options": ["a", "b"], "expires_in": 299 }),
        json!({ "options": ["a", "b"], "expires_in": 2_629_747 }),
        json!({ "options": ["a", "b"] }),
        json!({ "options": "a", "expires_in": 300 }),
    ] {
        let r = poll_status(&alice, bad.clone());
        assert_eq!(r.status, 422, "{bad}: {}", r.body);
    }
    assert_eq!(statuses_count(&alice), before, "nothing was published");
    // An edit cannot change a poll.
    let made = poll_status(&alice, json!({ "options": ["a", "b"], "expires_in": 300 })).expect(200);
    let edit = alice.put(
        &format!("/api/v1/statuses/{}", id_of(&made)),
        Some(json!({ "status": "x", "poll": { "options": ["c", "d"], "expires_in": 300 } })),
    );
    assert_eq!(edit.status, 422);
    // A form's brackets.
    let auth = format!("Bearer {}", alice.token);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/x-www-form-urlencoded")];
    let form = "status=form+poll&poll%5Boptions%5D%5B%5D=one&poll%5Boptions%5D%5B%5D=two&poll%5Bexpires_in%5D=600&poll%5Bmultiple%5D=true";
    let r = raw("POST", "/api/v1/statuses", &headers, form.as_bytes());
    assert_eq!(r.status, 200, "{}", r.body);
    let made = r.body;
    assert_eq!(
        (made["poll"]["options"][1]["title"].as_str(), made["poll"]["multiple"].as_bool()),
        (Some("two"), Some(true))
    );
}

#[test]
fn concurrent_votes_count_exactly_and_an_ended_poll_notifies_once() {
    let alice = register("pc_alice");
    let status =
        poll_status(&alice, json!({ "options": ["a", "b", "c"], "multiple": true, "expires_in": 300 }))
            .expect(200);
    let poll = status["poll"]["id"].as_str().unwrap().to_owned();
    let voters: Vec<User> = (0..12).map(|i| register(&format!("pc_v{i}"))).collect();
    let tokens: Vec<String> = voters.iter().map(|u| u.token.clone()).collect();
    // Every voter sends the same vote three times at once: one vote each counts.
    let path = format!("/api/v1/polls/{poll}/votes");
    let answers = parallel(12, 36, move |i| {
        let choices = if i % 12 < 6 { json!([0]) } else { json!([1, 2]) };
        call("POST", &path, Some(&tokens[i % 12]), Some(&json!({ "choices": choices }))).status
    });
    assert_eq!(answers.iter().filter(|s| **s == 200).count(), 12, "{answers:?}");
    assert!(answers.iter().all(|s| *s == 200 || *s == 422), "{answers:?}");
    let read = alice.get(&format!("/api/v1/polls/{poll}")).expect(200);
    let counts: Vec<i64> =
        read["options"].as_array().unwrap().iter().map(|o| o["votes_count"].as_i64().unwrap()).collect();
    assert_eq!(counts, vec![6, 6, 6]);
    assert_eq!((read["voters_count"].as_i64(), read["votes_count"].as_i64()), (Some(12), Some(18)));

    // Ended (its time moved back past its end): no more votes; the cron tells the author and
    // every voter once, however many passes run.
    let late = register("pc_late");
    admin("POST", "/v1/admin/test/age_post", Some(&json!({ "post_id": id_of(&status), "seconds": 301 })))
        .expect(200);
    assert_eq!(vote(&late, &poll, json!([0])).status, 422);
    assert_eq!(alice.get(&format!("/api/v1/polls/{poll}")).expect(200)["expired"], true);
    let poll_notes = |u: &User| {
        let notes = u.get("/api/v1/notifications?types[]=poll").expect(200);
        notes.as_array().unwrap().iter().filter(|n| n["status"]["id"] == poll.as_str()).count()
    };
    for _ in 0..2 {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
    }
    assert_eq!(poll_notes(&alice), 1);
    for v in &voters {
        assert_eq!(poll_notes(v), 1, "{}", v.handle);
    }
    assert_eq!(poll_notes(&late), 0);
}

#[test]
fn an_edit_tells_the_accounts_that_boost_the_post() {
    let (alice, bob, carol) = (register("pu_alice"), register("pu_bob"), register("pu_carol"));
    let post = status(&alice, "boost this", "public");
    bob.post(&format!("/api/v1/statuses/{post}/reblog"), json!({})).expect(200);
    let updates = |u: &User| {
        let notes = u.get("/api/v1/notifications?types[]=update").expect(200);
        notes
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["status"]["id"] == post.as_str())
            .cloned()
            .collect::<Vec<_>>()
    };
    let path = format!("/api/v1/statuses/{post}");
    alice.put(&path, Some(json!({ "status": "boost this, edited" }))).expect(200);
    let told = updates(&bob);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["account"]["id"], alice.id.as_str());
    assert_eq!(told[0]["status"]["content"], "<p>boost this, edited</p>");
    // A retry changes nothing and tells nothing new; a later edit replaces the notification.
    let first_id = told[0]["id"].clone();
    alice.put(&path, Some(json!({ "status": "boost this, edited" }))).expect(200);
    assert_eq!(updates(&bob)[0]["id"], first_id);
    alice.put(&path, Some(json!({ "spoiler_text": "now with a warning" }))).expect(200);
    let again = updates(&bob);
    assert_eq!(again.len(), 1);
    assert_ne!(again[0]["id"], first_id);
    // Who does not boost it is not told, nor is its author.
    assert!(updates(&carol).is_empty() && updates(&alice).is_empty());
}
