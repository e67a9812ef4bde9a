//! Discovery (issue 42, part 3): trending tags and statuses, suggestions and the directory,
//! from the rankings each database's reconciliation share keeps on the control database (the
//! admin pass refreshes them at once).

use serde_json::{json, Value};

use crate::common::*;

fn ids(v: &Value) -> Vec<String> {
    v.as_array().unwrap_or_else(|| panic!("an array: {v}")).iter().map(id_of).collect()
}

/// Every entry of a ranking route, paged by `offset` (rankings hold at most 20 per database).
fn all_of(user: &User, path: &str, page: usize) -> Vec<Value> {
    let mut found = Vec::new();
    for offset in (0..200).step_by(page) {
        let items = user.get(&format!("{path}?limit={page}&offset={offset}")).expect(200);
        let items = items.as_array().unwrap().clone();
        let done = items.len() < page;
        found.extend(items);
        if done {
            break;
        }
    }
    found
}

#[test]
fn trends_rank_the_last_days_tags_and_engaged_statuses_for_the_viewer() {
    let author = register("dc_author");
    let fans: Vec<User> = (0..3).map(|_| register("dc_fan")).collect();
    let viewer = register("dc_viewer");
    let tag = format!("DcTrend{}", now_secs() % 100_000);
    let post = author.post("/api/v1/statuses", json!({ "status": format!("look #{tag}") })).expect(200);
    for fan in &fans {
        fan.post("/api/v1/statuses", json!({ "status": format!("me too #{tag}") })).expect(200);
        fan.post(&format!("/api/v1/statuses/{}/favourite", id_of(&post)), json!({})).expect(200);
    }
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    let tags = all_of(&viewer, "/api/v1/trends/tags", 20);
    let ours = tags.iter().find(|t| t["name"] == tag.to_lowercase()).unwrap_or_else(|| panic!("{tags:?}"));
    assert_eq!(
        (ours["history"][0]["accounts"].clone(), ours["history"][0]["uses"].clone()),
        (json!("4"), json!("4"))
    );
    let accounts: Vec<i64> =
        tags.iter().map(|t| t["history"][0]["accounts"].as_str().unwrap().parse().unwrap()).collect();
    assert!(accounts.windows(2).all(|w| w[0] >= w[1]), "most accounts first: {accounts:?}");
    assert_eq!(viewer.get("/api/v1/trends?limit=1").expect(200).as_array().unwrap().len(), 1);
    let statuses = all_of(&viewer, "/api/v1/trends/statuses", 40);
    assert!(statuses.iter().any(|s| s["id"] == id_of(&post).as_str()), "the favourited post trends");
    let scores: Vec<i64> = statuses
        .iter()
        .map(|s| s["favourites_count"].as_i64().unwrap() + s["reblogs_count"].as_i64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "most engaged first: {scores:?}");
    // Checked for the viewer at read: a blocked author's post is not shown.
    viewer.block(&author);
    let statuses = all_of(&viewer, "/api/v1/trends/statuses", 40);
    assert!(!statuses.iter().any(|s| s["id"] == id_of(&post).as_str()));
    assert_eq!(viewer.get("/api/v1/trends/links").expect(200), json!([]));
    viewer.get("/api/v1/trends/tags?limit=zero").expect(422);
    viewer.get("/api/v1/trends/statuses?offset=-1").expect(422);
}

#[test]
fn suggestions_leave_out_the_viewer_and_whom_they_know_and_the_directory_lists_new_accounts() {
    let viewer = register("dc_sugg");
    let newest = register("dc_newest");
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    let v1 = viewer.get("/api/v1/suggestions?limit=80").expect(200);
    let v2 = viewer.get("/api/v2/suggestions?limit=80").expect(200);
    let from_v2: Vec<Value> = v2.as_array().unwrap().iter().map(|s| s["account"].clone()).collect();
    assert_eq!(v1.as_array().unwrap(), &from_v2, "v2 carries the same accounts with their source");
    assert!(v2.as_array().unwrap().iter().all(|s| s["source"] == "global"));
    let suggested = ids(&v1);
    assert!(!suggested.is_empty() && !suggested.contains(&viewer.id));
    let followers: Vec<i64> =
        v1.as_array().unwrap().iter().map(|a| a["followers_count"].as_i64().unwrap()).collect();
    assert!(followers.windows(2).all(|w| w[0] >= w[1]), "most followed first: {followers:?}");
    // Whom the viewer follows or blocks is suggested no more.
    let first = User { id: suggested[0].clone(), handle: String::new(), token: String::new() };
    viewer.follow(&first);
    let second =
        suggested.get(1).map(|id| User { id: id.clone(), handle: String::new(), token: String::new() });
    if let Some(second) = &second {
        viewer.block(second);
    }
    let after = ids(&viewer.get("/api/v1/suggestions?limit=80").expect(200));
    assert!(!after.contains(&first.id));
    assert!(second.is_none_or(|s| !after.contains(&s.id)));
    // The directory: the newest accounts first, and by their newest public post.
    let new = ids(&viewer.get("/api/v1/directory?order=new&limit=80").expect(200));
    assert!(new.contains(&newest.id), "a fresh account is listed");
    let position = |id: &String| new.iter().position(|x| x == id);
    assert!(position(&newest.id) < position(&viewer.id) || position(&viewer.id).is_none());
    let poster = register("dc_poster");
    poster.post("/api/v1/statuses", json!({ "status": "active now" })).expect(200);
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    let active = ids(&viewer.get("/api/v1/directory?order=active&local=true").expect(200));
    assert!(active.contains(&poster.id), "{active:?}");
    viewer.get("/api/v1/directory?order=popular").expect(422);
    viewer.get("/api/v1/suggestions?limit=x").expect(422);
}
