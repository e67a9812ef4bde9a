//! The screens an app shows besides home (issue 42, first part): the instance's sub-resources
//! (`/api/v1/instance/peers|activity|languages|translation_languages|extended_description|rules`,
//! public), account search by handle prefix (`/api/v1/accounts/search`), the blocks list
//! (`/api/v1/blocks`), `remove_from_followers` and familiar followers.

use serde_json::{json, Value};

use crate::common::*;

fn ids_of(v: &Value) -> Vec<String> {
    v.as_array().expect("an array").iter().map(id_of).collect()
}

fn relationship(user: &User, other: &User) -> Value {
    user.get(&format!("/api/v1/accounts/relationships?id[]={}", other.id)).expect(200)[0].clone()
}

#[test]
fn the_instance_sub_resources_answer_without_a_token() {
    register("inst_joiner");
    let get = |path: &str| raw("GET", path, &[], &[]);
    assert_eq!(get("/api/v1/instance/peers").expect(200), json!([]));
    assert_eq!(get("/api/v1/instance/translation_languages").expect(200), json!({}));
    assert_eq!(get("/api/v1/instance/rules").expect(200), json!([]));
    // No extended description was written: Mastodon's answer for that (what clients test).
    let described = get("/api/v1/instance/extended_description").expect(200);
    assert_eq!(described, json!({ "updated_at": null, "content": "" }));
    let languages = get("/api/v1/instance/languages").expect(200);
    assert!(languages.as_array().unwrap().contains(&json!({ "code": "en", "name": "English" })));
    // Twelve weeks, this week first, every figure a string; this week has the sign-up above.
    let weeks = get("/api/v1/instance/activity").expect(200);
    let weeks = weeks.as_array().unwrap();
    assert_eq!(weeks.len(), 12);
    let starts: Vec<i64> = weeks.iter().map(|w| w["week"].as_str().unwrap().parse().unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] - w[1] == 7 * 86_400), "{starts:?}");
    assert!(starts[0] <= now_secs() && now_secs() < starts[0] + 7 * 86_400);
    let this_week: i64 = weeks[0]["registrations"].as_str().unwrap().parse().unwrap();
    assert!(this_week >= 1, "{:?}", weeks[0]);
    assert!(weeks.iter().all(|w| w["statuses"] == "0" && w["logins"] == "0"));
    // The instance documents carry the same rules; a write is not a route.
    assert_eq!(get("/api/v2/instance").expect(200)["rules"], json!([]));
    assert_eq!(raw("POST", "/api/v1/instance/peers", &[], b"").status, 405);
}

#[test]
fn account_search_finds_handles_by_prefix_that_the_viewer_may_see() {
    let viewer = register("acsearch");
    let friend = register("acsearch");
    let other = register("acsearch");
    let blocked = register("acsearch");
    let blocker = register("acsearch");
    viewer.follow(&friend);
    viewer.block(&blocked);
    blocker.block(&viewer);
    let search = |query: &str| viewer.get(&format!("/api/v1/accounts/search?{query}")).expect(200);
    let mut expected = vec![viewer.id.clone(), friend.id.clone(), other.id.clone()];
    let found = ids_of(&search("q=acsearch&limit=80"));
    // Handle order, so every found one of ours, and neither block direction.
    let ours: Vec<String> = found.iter().filter(|id| expected.contains(id)).cloned().collect();
    expected
        .sort_by_key(|id| [&viewer, &friend, &other].iter().find(|u| &u.id == id).unwrap().handle.clone());
    assert_eq!(ours, expected);
    assert!(!found.contains(&blocked.id) && !found.contains(&blocker.id), "{found:?}");
    // An exact handle comes first, in any case, with @ and our domain or without.
    let exact = search(&format!("q=@{}", friend.handle.to_uppercase()));
    assert_eq!(exact[0]["id"], friend.id.as_str(), "{exact}");
    assert_eq!(exact[0]["acct"], friend.handle.as_str());
    assert_eq!(ids_of(&search(&format!("q={}&following=true", "acsearch"))), vec![friend.id.clone()]);
    assert_eq!(search("q=acsearch&limit=1").as_array().unwrap().len(), 1);
    let second = search("q=acsearch&limit=1&offset=1");
    assert_eq!(ids_of(&second), found[1..2].to_vec());
    // Nothing elsewhere, no wildcards, nothing for no handle.
    assert_eq!(search("q=acsearch@mastodon.example"), json!([]));
    assert_eq!(search("q=%25"), json!([]));
    assert_eq!(search("q=acs_rch_none&resolve=true"), json!([]));
    // Bad input.
    viewer.get("/api/v1/accounts/search").expect(422);
    viewer.get("/api/v1/accounts/search?q=%20").expect(422);
    viewer.get("/api/v1/accounts/search?q=a&following=maybe").expect(422);
    viewer.get("/api/v1/accounts/search?q=a&limit=many").expect(422);
    assert_eq!(call("GET", "/api/v1/accounts/search?q=a", None, None).status, 401);
}

#[test]
fn the_blocks_list_pages_newest_first_and_forgets_an_unblock() {
    let viewer = register("bl_viewer");
    let first = register("bl_first");
    let second = register("bl_second");
    let third = register("bl_third");
    for u in [&first, &second, &third] {
        viewer.post(&format!("/api/v1/accounts/{}/block", u.id), json!({})).expect(200);
    }
    let all = viewer.get("/api/v1/blocks").expect(200);
    assert_eq!(ids_of(&all), vec![third.id.clone(), second.id.clone(), first.id.clone()]);
    // Paged by the Link header, one at a time, each exactly once.
    let auth = format!("Bearer {}", viewer.token);
    let (mut next, mut seen) = (Some("/api/v1/blocks?limit=1".to_string()), Vec::new());
    while let Some(path) = next.take() {
        let r = send("GET", &path, &[("authorization", &auth)], b"");
        let link = r.header("link").unwrap_or("").to_string();
        seen.extend(ids_of(&r.into_json::<Value>().unwrap()));
        assert!(seen.len() <= 3, "{seen:?}");
        next = link.split('<').nth(1).and_then(|l| l.split('>').next()).and_then(|url| {
            assert!(url.contains("limit=1"), "{url}");
            url.find("/api/").map(|i| url[i..].to_string())
        });
    }
    assert_eq!(seen, ids_of(&all));
    viewer.post(&format!("/api/v1/accounts/{}/unblock", second.id), json!({})).expect(200);
    assert_eq!(ids_of(&viewer.get("/api/v1/blocks").expect(200)), vec![third.id.clone(), first.id.clone()]);
    // Someone else's blocks are theirs; a forged cursor is refused.
    assert_eq!(first.get("/api/v1/blocks").expect(200), json!([]));
    assert_eq!(viewer.get("/api/v1/blocks?max_id=forged").status, 400);
}

#[test]
fn remove_from_followers_ends_their_follow_of_the_viewer() {
    let viewer = register("rf_viewer");
    let fan = register("rf_fan");
    fan.follow(&viewer);
    viewer.follow(&fan);
    assert_eq!(relationship(&viewer, &fan)["followed_by"], true);
    let r = viewer.post(&format!("/api/v1/accounts/{}/remove_from_followers", fan.id), json!({})).expect(200);
    assert_eq!((r["followed_by"].clone(), r["following"].clone()), (json!(false), json!(true)), "{r}");
    // Both sides agree at once: the fan's follows, the viewer's followers and counts.
    assert_eq!(relationship(&fan, &viewer)["following"], false);
    let followers = viewer.get(&format!("/api/v1/accounts/{}/followers", viewer.id)).expect(200);
    assert_eq!(followers, json!([]));
    let following = fan.get(&format!("/api/v1/accounts/{}/following", fan.id)).expect(200);
    assert!(!ids_of(&following).contains(&viewer.id));
    assert_eq!(viewer.profile()["followers_count"], 0);
    // Idempotent; self and nobody refused.
    viewer.post(&format!("/api/v1/accounts/{}/remove_from_followers", fan.id), json!({})).expect(200);
    viewer.post(&format!("/api/v1/accounts/{}/remove_from_followers", viewer.id), json!({})).expect(422);
    viewer.post("/api/v1/accounts/99999999/remove_from_followers", json!({})).expect(404);
}

#[test]
fn familiar_followers_are_the_followed_accounts_that_follow_each_one() {
    let viewer = register("ff_viewer");
    let (a, b, stranger) = (register("ff_a"), register("ff_b"), register("ff_stranger"));
    let (target, lonely) = (register("ff_target"), register("ff_lonely"));
    viewer.follow(&a);
    viewer.follow(&b);
    for u in [&a, &b, &stranger] {
        u.follow(&target);
    }
    let path = format!("/api/v1/accounts/familiar_followers?id[]={}&id[]={}&id[]=nope", target.id, lonely.id);
    let answer = viewer.get(&path).expect(200);
    assert_eq!(answer.as_array().unwrap().len(), 2, "{answer}");
    assert_eq!(answer[0]["id"], target.id.as_str());
    let mut familiar = ids_of(&answer[0]["accounts"]);
    familiar.sort();
    let mut expected = vec![a.id.clone(), b.id.clone()];
    expected.sort();
    assert_eq!(familiar, expected);
    assert_eq!(answer[1], json!({ "id": lonely.id, "accounts": [] }));
    // A block ends the viewer's follow: that one is no longer familiar. No ids, no answers.
    viewer.block(&b);
    let after = viewer.get(&format!("/api/v1/accounts/familiar_followers?id={}", target.id)).expect(200);
    assert_eq!(ids_of(&after[0]["accounts"]), vec![a.id.clone()]);
    assert_eq!(viewer.get("/api/v1/accounts/familiar_followers").expect(200), json!([]));
}
