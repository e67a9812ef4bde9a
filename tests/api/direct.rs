//! Direct posts (Mastodon's `direct`, `/v1`'s `private`): read by the author and the accounts
//! the post mentions, nobody else; delivered into the mentioned accounts' homes and
//! notifications, never into followers'; one conversation per participant
//! (`/api/v1/conversations`: list, read, unread, remove), each re-checked at read.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn direct(author: &User, text: &str) -> String {
    let auth = format!("Bearer {}", author.token);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    let body = json!({ "status": text, "visibility": "direct" }).to_string();
    let posted = raw("POST", "/api/v1/statuses", &headers, body.as_bytes());
    assert_eq!(posted.status, 200, "{}", posted.body);
    assert_eq!(posted.body["visibility"], "direct", "{}", posted.body);
    id_of(&posted.body)
}

fn home_ids(user: &User) -> Vec<String> {
    ids(user.get("/api/v1/timelines/home?limit=40").expect(200).as_array().unwrap())
}

fn conversations(user: &User) -> Vec<Value> {
    user.get("/api/v1/conversations").expect(200).as_array().unwrap().clone()
}

fn account_ids(conversation: &Value) -> Vec<String> {
    let mut ids: Vec<String> = conversation["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_direct_post_is_read_by_its_author_and_the_mentioned_alone_and_reaches_only_their_homes() {
    let author = register("dm_author");
    let (bob, follower, stranger) = (register("dm_bob"), register("dm_follower"), register("dm_stranger"));
    follower.follow(&author);
    activate(&bob);
    activate(&follower);
    let id = direct(&author, &format!("@{} just between us", bob.handle));
    let path = format!("/api/v1/statuses/{id}");
    for (who, status) in [(&author, 200), (&bob, 200), (&follower, 404), (&stranger, 404)] {
        assert_eq!(who.get(&path).status, status, "{}", who.handle);
    }
    poll("the direct post in the mentioned's home", DEADLINE, || home_ids(&bob).contains(&id).then_some(()));
    wait_drained(&author);
    assert!(!home_ids(&follower).contains(&id), "never in a follower's home");
    assert!(home_ids(&author).contains(&id), "in the author's own");
    let mentions = bob.get("/api/v1/notifications?types[]=mention").expect(200);
    assert_eq!(mentions[0]["status"]["id"], id.as_str(), "{mentions}");
    assert_eq!(mentions[0]["status"]["visibility"], "direct");

    // The mentioned may favourite it (counted exactly); a follower cannot reach it.
    let liked = bob.post(&format!("{path}/favourite"), json!({})).expect(200);
    assert_eq!(liked["favourites_count"], 1, "{liked}");
    assert_eq!(follower.post(&format!("{path}/favourite"), json!({})).status, 404);
    // Nobody boosts a direct post, not even its author.
    assert_ne!(bob.post(&format!("{path}/reblog"), json!({})).status, 200);
    assert_ne!(author.post(&format!("{path}/reblog"), json!({})).status, 200);

    // A block since hides it from the mentioned everywhere.
    bob.block(&author);
    assert_eq!(bob.get(&path).status, 404);
    assert!(!home_ids(&bob).contains(&id));
    assert!(conversations(&bob).is_empty());
}

#[test]
fn each_participant_has_the_conversation_read_unread_and_removed_for_good() {
    let author = register("dc_author");
    let (bob, carol) = (register("dc_bob"), register("dc_carol"));
    let id = direct(&author, &format!("@{} @{} plans?", bob.handle, carol.handle));
    let of = |user: &User| -> Value {
        let list = conversations(user);
        assert_eq!(list.len(), 1, "{}: {list:?}", user.handle);
        list[0].clone()
    };
    let bobs = of(&bob);
    assert_eq!(bobs["id"], id.as_str());
    assert_eq!(bobs["last_status"]["id"], id.as_str());
    assert_eq!(bobs["unread"], true);
    let mut expect = vec![author.id.clone(), carol.id.clone()];
    expect.sort();
    assert_eq!(account_ids(&bobs), expect);
    let authors = of(&author);
    assert_eq!(authors["unread"], false, "the author's own is read");
    let mut expect = vec![bob.id.clone(), carol.id.clone()];
    expect.sort();
    assert_eq!(account_ids(&authors), expect);

    let read = bob.post(&format!("/api/v1/conversations/{id}/read"), json!({})).expect(200);
    assert_eq!((read["id"].clone(), read["unread"].clone()), (json!(id), json!(false)));
    assert_eq!(of(&bob)["unread"], false);
    let unread = bob.post(&format!("/api/v1/conversations/{id}/unread"), json!({})).expect(200);
    assert_eq!(unread["unread"], true);

    // Removed for bob alone, and the post's redelivered event does not bring it back.
    assert_eq!(bob.delete(&format!("/api/v1/conversations/{id}")).expect(200), json!({}));
    assert!(conversations(&bob).is_empty());
    wait_drained(&author);
    admin("POST", "/v1/admin/test/replay", Some(&json!({ "post_id": id }))).expect(200);
    wait_drained(&author);
    assert!(conversations(&bob).is_empty(), "a redelivery never revives a removed conversation");
    assert_eq!(bob.post(&format!("/api/v1/conversations/{id}/read"), json!({})).status, 404);
    assert_eq!(bob.delete(&format!("/api/v1/conversations/{id}")).status, 404);
    assert_eq!(of(&carol)["id"], id.as_str());
    // Someone else's conversation id is nobody's business.
    assert_eq!(bob.post("/api/v1/conversations/12345/read", json!({})).status, 404);

    // The post deleted: the conversation goes from every list.
    author.delete(&format!("/api/v1/statuses/{id}")).expect(200);
    assert!(conversations(&carol).is_empty());
    assert!(conversations(&author).is_empty());
}

#[test]
fn conversations_page_newest_first_by_link() {
    let author = register("dp_author");
    let bob = register("dp_bob");
    let ids: Vec<String> = (0..3).map(|i| direct(&author, &format!("@{} number {i}", bob.handle))).collect();
    let auth = [("authorization", format!("Bearer {}", bob.token))];
    let auth: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let first = send("GET", "/api/v1/conversations?limit=2", &auth, b"");
    let link = first.header("link").unwrap_or("").to_string();
    let first: Value = first.into_json().unwrap();
    let page: Vec<String> =
        first.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().into()).collect();
    assert_eq!(page, vec![ids[2].clone(), ids[1].clone()]);
    let next = link.split(", ").find(|l| l.ends_with("rel=\"next\"")).expect("a next link");
    let next = next.trim_start_matches('<').split('>').next().unwrap();
    let path = next.split_once("://").map(|(_, rest)| &rest[rest.find('/').unwrap()..]).unwrap();
    let rest = bob.get(path).expect(200);
    assert_eq!(rest.as_array().unwrap().len(), 1, "{rest}");
    assert_eq!(rest[0]["id"], ids[0].as_str());
    let newer = bob.get(&format!("/api/v1/conversations?min_id={}", ids[0])).expect(200);
    let newer: Vec<&str> = newer.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(newer, vec![ids[2].as_str(), ids[1].as_str()]);
    let refused = bob.get("/api/v1/conversations?max_id=abc");
    assert_eq!((refused.status, refused.body["error"].clone()), (422, json!("not an id")));
}

#[test]
fn a_direct_reply_reaches_the_home_of_everyone_it_addresses() {
    let (alice, bob, carol) = (register("dr_alice"), register("dr_bob"), register("dr_carol"));
    activate(&bob);
    let dm = direct(&alice, &format!("@{} @{} hi both", bob.handle, carol.handle));
    // Carol answers both; bob follows nobody, alice included (the account replied to).
    let body = json!({
        "status": format!("@{} @{} hello", alice.handle, bob.handle),
        "visibility": "direct",
        "in_reply_to_id": dm,
    });
    let reply = carol.post("/api/v1/statuses", body).expect(200);
    assert_eq!((reply["visibility"].clone(), reply["in_reply_to_id"].clone()), (json!("direct"), json!(dm)));
    let id = id_of(&reply);
    poll("the direct reply in bob's home", DEADLINE, || home_ids(&bob).contains(&id).then_some(()));
    assert!(home_ids(&bob).contains(&dm), "and the post it answers");
    assert_eq!(alice.get(&format!("/api/v1/statuses/{id}")).status, 200);
}

/// A direct post to someone whose home is not built yet (never read, or gone idle) is in it when
/// they come back: the new window's snapshot takes the posts addressed to them beside their
/// follows' (found in the Phanpy trial: the first direct message of a new account was missing).
#[test]
fn a_direct_post_waits_in_the_home_of_a_reader_who_was_away() {
    let (author, carol) = (register("dm_away_author"), register("dm_away_carol"));
    let followed = register("dm_away_followed");
    carol.follow(&followed);
    let id = direct(&author, &format!("@{} welcome back", carol.handle));
    let newer = id_of(&followed.publish("from someone followed", "public"));
    wait_drained(&author);
    wait_drained(&followed);
    // The first read builds the window: both paths are in it, newest first.
    let home = home_ids(&carol);
    assert_eq!(home, vec![newer.clone(), id.clone()], "{home:?}");
    // It is the window's now: later pages agree, and the post's rules still hold at read.
    assert_eq!(home_ids(&carol), vec![newer, id.clone()]);
    carol.block(&author);
    assert!(!home_ids(&carol).contains(&id));
}
