//! Mastodon's filters: v2 (`/api/v2/filters` with keywords and statuses), v1 (`/api/v1/filters`,
//! views on the same rows), and their effect at read time: `warn` marks a status (`filtered`),
//! `hide` leaves it out, on home, lists, account statuses, threads and notifications, with home
//! pages kept full inside the feed read.

use std::collections::HashSet;
use std::time::Duration;

use edgefeed::domain::time::format_rfc3339;
use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn ids_of(page: &Value) -> Vec<String> {
    page.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect()
}

fn home(user: &User) -> Value {
    user.get("/api/v1/timelines/home?limit=40").expect(200)
}

fn status_in<'a>(page: &'a Value, id: &str) -> Option<&'a Value> {
    page.as_array().unwrap().iter().find(|s| s["id"] == id)
}

fn make_filter(user: &User, body: Value) -> Value {
    user.post("/api/v2/filters", body).expect(200)
}

#[test]
fn v2_filters_keywords_and_statuses_round_trip() {
    let user = register("fl_owner");
    let other = register("fl_other");
    let f = make_filter(
        &user,
        json!({ "title": "Filter", "context": ["notifications"], "keywords_attributes": [{ "keyword": "test" }, { "keyword": "test2", "whole_word": false }] }),
    );
    let id = f["id"].as_str().unwrap().to_string();
    assert_eq!(f["title"], "Filter");
    assert_eq!(f["context"], json!(["notifications"]));
    assert_eq!(f["filter_action"], "warn");
    assert_eq!(f["expires_at"], Value::Null);
    assert_eq!(f["keywords"].as_array().unwrap().len(), 2);
    assert_eq!(f["keywords"][0]["whole_word"], true);
    assert_eq!(f["keywords"][1]["whole_word"], false);

    // Update: only the fields given; `_destroy` removes a keyword.
    let kw0 = f["keywords"][0]["id"].as_str().unwrap().to_string();
    let updated = user
        .put(
            &format!("/api/v2/filters/{id}"),
            Some(json!({ "title": "Filter Updated", "keywords_attributes": [{ "id": kw0, "_destroy": true }] })),
        )
        .expect(200);
    assert_eq!(updated["title"], "Filter Updated");
    assert_eq!(updated["context"], json!(["notifications"]));
    assert_eq!(updated["keywords"].as_array().unwrap().len(), 1);
    let fetched = user.get(&format!("/api/v2/filters/{id}")).expect(200);
    assert_eq!(fetched, updated);
    assert!(user.get("/api/v2/filters").expect(200).as_array().unwrap().contains(&fetched));

    // Keywords on their own.
    let kw = user.post(&format!("/api/v2/filters/{id}/keywords"), json!({ "keyword": "third" })).expect(200);
    let kid = kw["id"].as_str().unwrap().to_string();
    let kw2 =
        user.put(&format!("/api/v2/filters/keywords/{kid}"), Some(json!({ "keyword": "test3" }))).expect(200);
    assert_eq!(kw2["keyword"], "test3");
    assert_eq!(user.get(&format!("/api/v2/filters/keywords/{kid}")).expect(200), kw2);
    assert!(user
        .get(&format!("/api/v2/filters/{id}/keywords"))
        .expect(200)
        .as_array()
        .unwrap()
        .contains(&kw2));
    user.delete(&format!("/api/v2/filters/keywords/{kid}")).expect(200);
    assert_eq!(user.get(&format!("/api/v2/filters/keywords/{kid}")).status, 404);

    // Statuses: one the owner may see; the same again answers the same row.
    let status = id_of(&user.post("/api/v1/statuses", json!({ "status": "test" })).expect(200));
    let sf = user.post(&format!("/api/v2/filters/{id}/statuses"), json!({ "status_id": status })).expect(200);
    assert_eq!(sf["status_id"], status.as_str());
    let again =
        user.post(&format!("/api/v2/filters/{id}/statuses"), json!({ "status_id": status })).expect(200);
    assert_eq!(again, sf);
    let sid = sf["id"].as_str().unwrap().to_string();
    assert_eq!(user.get(&format!("/api/v2/filters/statuses/{sid}")).expect(200), sf);
    assert_eq!(user.get(&format!("/api/v2/filters/{id}/statuses")).expect(200), json!([sf.clone()]));
    user.delete(&format!("/api/v2/filters/statuses/{sid}")).expect(200);
    assert_eq!(user.get(&format!("/api/v2/filters/{id}/statuses")).expect(200), json!([]));

    // Someone else's filter, keyword or status filter names nothing.
    assert_eq!(other.get(&format!("/api/v2/filters/{id}")).status, 404);
    assert_eq!(other.put(&format!("/api/v2/filters/{id}"), Some(json!({ "title": "x" }))).status, 404);
    assert_eq!(other.delete(&format!("/api/v2/filters/{id}")).status, 404);
    assert_eq!(other.get("/api/v2/filters").expect(200), json!([]));

    user.delete(&format!("/api/v2/filters/{id}")).expect(200);
    assert_eq!(user.get(&format!("/api/v2/filters/{id}")).status, 404);
    assert_eq!(user.get("/api/v2/filters").expect(200), json!([]));
}

#[test]
fn bad_filters_are_refused_and_change_nothing() {
    let user = register("fl_bad");
    let bad = [
        json!({ "context": ["home"] }),
        json!({ "title": "t" }),
        json!({ "title": "t", "context": ["everywhere"] }),
        json!({ "title": "t", "context": [] }),
        json!({ "title": "t", "context": ["home"], "filter_action": "delete" }),
        json!({ "title": "t", "context": ["home"], "expires_in": -5 }),
        json!({ "title": " ", "context": ["home"] }),
        json!({ "title": "t", "context": ["home"], "keywords_attributes": [{ "keyword": "" }] }),
        json!({ "title": "t", "context": ["home"], "keywords_attributes": "nope" }),
    ];
    for body in bad {
        let r = user.post("/api/v2/filters", body.clone());
        assert_eq!(r.status, 422, "{body}: {}", r.body);
        assert!(r.body["error"].is_string(), "{}", r.body);
    }
    assert_eq!(user.get("/api/v2/filters").expect(200), json!([]));
    let f = make_filter(&user, json!({ "title": "t", "context": ["home"] }));
    let id = f["id"].as_str().unwrap();
    let r = user.put(&format!("/api/v2/filters/{id}"), Some(json!({ "filter_action": "nope" })));
    assert_eq!(r.status, 422);
    assert_eq!(user.get(&format!("/api/v2/filters/{id}")).expect(200), f);
    let r = user.post(&format!("/api/v2/filters/{id}/statuses"), json!({ "status_id": "999999999" }));
    assert_eq!(r.status, 404);
    assert_eq!(user.get("/api/v2/filters/nope").status, 404);
    assert_eq!(user.post("/api/v1/filters", json!({ "context": ["home"] })).status, 422);
}

#[test]
fn v1_filters_are_views_on_v2_keywords() {
    let user = register("fl_v1");
    let f = user.post("/api/v1/filters", json!({ "phrase": "test1", "context": ["home"] })).expect(200);
    let id = f["id"].as_str().unwrap().to_string();
    assert_eq!((f["phrase"].clone(), f["irreversible"].clone()), (json!("test1"), json!(false)));
    assert_eq!(f["whole_word"], true);
    user.put(
        &format!("/api/v1/filters/{id}"),
        Some(json!({ "phrase": "test1", "context": ["home", "notifications"], "irreversible": true })),
    )
    .expect(200);
    let fetched = user.get(&format!("/api/v1/filters/{id}")).expect(200);
    assert_eq!(fetched["phrase"], "test1");
    assert_eq!(fetched["context"], json!(["home", "notifications"]));
    assert_eq!(fetched["irreversible"], true);
    assert!(user.get("/api/v1/filters").expect(200).as_array().unwrap().contains(&fetched));
    // The same row as a v2 filter with one keyword.
    let v2 = user.get("/api/v2/filters").expect(200);
    assert_eq!(v2[0]["filter_action"], "hide");
    assert_eq!(v2[0]["keywords"][0]["id"], id.as_str());
    user.delete(&format!("/api/v1/filters/{id}")).expect(200);
    assert_eq!(user.get(&format!("/api/v1/filters/{id}")).status, 404);
    assert_eq!(user.get("/api/v2/filters").expect(200), json!([]));
}

#[test]
fn warn_marks_and_hide_removes_on_home_account_and_thread() {
    let author = register("fl_author");
    let reader = register("fl_reader");
    reader.follow(&author);
    let spoiled =
        id_of(&author.post("/api/v1/statuses", json!({ "status": "Big SPOILER here" })).expect(200));
    let warned_cw = id_of(
        &author
            .post("/api/v1/statuses", json!({ "status": "calm text", "spoiler_text": "spoiler inside" }))
            .expect(200),
    );
    let partial =
        id_of(&author.post("/api/v1/statuses", json!({ "status": "spoilers everywhere" })).expect(200));
    let hidden = id_of(&author.post("/api/v1/statuses", json!({ "status": "a hateful word" })).expect(200));
    let plain = id_of(&author.post("/api/v1/statuses", json!({ "status": "nothing to see" })).expect(200));
    poll("the posts in the reader's home", DEADLINE, || {
        ids_of(&home(&reader)).contains(&plain).then_some(())
    });
    let warn = make_filter(
        &reader,
        json!({ "title": "Spoilers", "context": ["home", "account", "thread"], "keywords_attributes": [{ "keyword": "spoiler", "whole_word": true }] }),
    );
    make_filter(
        &reader,
        json!({ "title": "Hate", "context": ["home", "account", "thread"], "filter_action": "hide", "keywords_attributes": [{ "keyword": "hateful" }] }),
    );
    let check = |page: &Value, what: &str| {
        let ids = ids_of(page);
        assert!(!ids.contains(&hidden), "{what}: hide leaves it out: {ids:?}");
        for id in [&spoiled, &warned_cw] {
            let s = status_in(page, id).unwrap_or_else(|| panic!("{what}: {id} shown"));
            assert_eq!(s["filtered"][0]["filter"]["id"], warn["id"], "{what}: {s}");
            assert_eq!(s["filtered"][0]["keyword_matches"], json!(["spoiler"]), "{what}");
            assert_eq!(s["filtered"][0]["status_matches"], Value::Null, "{what}");
        }
        // Whole word: "spoilers" is not "spoiler".
        assert_eq!(status_in(page, &partial).unwrap()["filtered"], json!([]), "{what}");
        assert_eq!(status_in(page, &plain).unwrap()["filtered"], json!([]), "{what}");
    };
    check(&home(&reader), "home");
    check(&reader.get(&format!("/api/v1/accounts/{}/statuses", author.id)).expect(200), "account");
    // The author's own reads are not the reader's filters.
    assert!(ids_of(&home(&author)).contains(&hidden));
    // A thread: replies from the author under the reader's post.
    let root = id_of(&reader.post("/api/v1/statuses", json!({ "status": "root" })).expect(200));
    let bad_reply = id_of(
        &author
            .post("/api/v1/statuses", json!({ "status": "hateful reply", "in_reply_to_id": root }))
            .expect(200),
    );
    let ok_reply = id_of(
        &author
            .post("/api/v1/statuses", json!({ "status": "a spoiler reply", "in_reply_to_id": root }))
            .expect(200),
    );
    let ctx = reader.get(&format!("/api/v1/statuses/{root}/context")).expect(200);
    let descendants = ids_of(&ctx["descendants"]);
    assert!(descendants.contains(&ok_reply) && !descendants.contains(&bad_reply), "{ctx}");
    assert_eq!(
        status_in(&ctx["descendants"], &ok_reply).unwrap()["filtered"][0]["keyword_matches"],
        json!(["spoiler"])
    );
    // A status filter by id hides exactly that one.
    let by_id = make_filter(&reader, json!({ "title": "One", "context": ["home"], "filter_action": "hide" }));
    let fid = by_id["id"].as_str().unwrap();
    reader.post(&format!("/api/v2/filters/{fid}/statuses"), json!({ "status_id": plain })).expect(200);
    assert!(!ids_of(&home(&reader)).contains(&plain));
    // Another context is not filtered by a home-only filter.
    assert!(
        ids_of(&reader.get(&format!("/api/v1/accounts/{}/statuses", author.id)).expect(200)).contains(&plain)
    );
}

#[test]
fn an_expired_filter_matches_nothing() {
    let author = register("fl_exp_author");
    let reader = register("fl_exp_reader");
    reader.follow(&author);
    let post = id_of(&author.post("/api/v1/statuses", json!({ "status": "ephemeral word" })).expect(200));
    poll("the post in home", DEADLINE, || ids_of(&home(&reader)).contains(&post).then_some(()));
    let f = make_filter(
        &reader,
        json!({ "title": "Soon", "context": ["home"], "filter_action": "hide", "expires_in": 2, "keywords_attributes": [{ "keyword": "ephemeral" }] }),
    );
    assert!(f["expires_at"].is_string());
    assert!(!ids_of(&home(&reader)).contains(&post));
    poll("the filter expired", DEADLINE, || ids_of(&home(&reader)).contains(&post).then_some(()));
}

#[test]
fn hide_keeps_home_pages_full_and_the_cursor_exact() {
    let author = register("fl_bulk_author");
    let reader = register("fl_bulk_reader");
    reader.follow(&author);
    make_filter(
        &reader,
        json!({ "title": "Spam", "context": ["home"], "filter_action": "hide", "keywords_attributes": [{ "keyword": "spam" }] }),
    );
    // 48 posts, three in four hidden: pages of 4 must each read 16 candidates.
    let now = now_secs();
    let mut kept = Vec::new();
    for k in 0..48 {
        let at = format_rfc3339((now - 900 + k * 5) * 1000);
        let body = if k % 4 == 0 { format!("good {k}") } else { format!("buy spam {k}") };
        let id = id_of(&import_post(&author, &body, "public", &at));
        if k % 4 == 0 {
            kept.push(id);
        }
    }
    kept.reverse();
    wait_drained(&author);
    poll("the posts in the window", DEADLINE, || {
        let all = reader.get("/v1/feed?limit=50").expect(200);
        (all["items"].as_array().unwrap().len() >= 48).then_some(())
    });
    let mut seen = Vec::new();
    let mut path = "/api/v1/timelines/home?limit=4".to_string();
    for _ in 0..10 {
        let page = ids_of(&reader.get(&path).expect(200));
        if page.is_empty() {
            break;
        }
        if seen.len() + 4 <= kept.len() {
            assert_eq!(page.len(), 4, "a full page though most candidates are hidden: {page:?}");
        }
        path = format!("/api/v1/timelines/home?limit=4&max_id={}", page.last().unwrap());
        seen.extend(page);
    }
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no repeats");
    assert_eq!(seen, kept, "nothing skipped, nothing hidden shown");
}

#[test]
fn notifications_follow_the_notifications_context() {
    let author = register("fl_note_author");
    let reader = register("fl_note_reader");
    let mine = id_of(&reader.publish("my post", "public"));
    make_filter(
        &reader,
        json!({ "title": "Rude", "context": ["notifications"], "filter_action": "hide", "keywords_attributes": [{ "keyword": "rude" }] }),
    );
    make_filter(
        &reader,
        json!({ "title": "Meh", "context": ["notifications"], "keywords_attributes": [{ "keyword": "meh" }] }),
    );
    let rude = id_of(
        &author
            .post("/api/v1/statuses", json!({ "status": format!("@{} rude words", reader.handle) }))
            .expect(200),
    );
    let meh = id_of(
        &author.post("/api/v1/statuses", json!({ "status": format!("@{} meh", reader.handle) })).expect(200),
    );
    author.put(&format!("/v1/posts/{mine}/like"), None).expect(200);
    let notes = poll("the mention and the like", DEADLINE, || {
        let page = reader.get("/api/v1/notifications").expect(200);
        let kinds: Vec<String> =
            page.as_array().unwrap().iter().map(|n| n["type"].as_str().unwrap().into()).collect();
        (kinds.contains(&"favourite".to_string()) && kinds.contains(&"mention".to_string())).then_some(page)
    });
    let statuses: Vec<&Value> = notes.as_array().unwrap().iter().map(|n| &n["status"]).collect();
    assert!(statuses.iter().all(|s| s["id"] != rude.as_str()), "hide leaves the notification out: {notes}");
    let warned = statuses.iter().find(|s| s["id"] == meh.as_str()).expect("the warned mention");
    assert_eq!(warned["filtered"][0]["keyword_matches"], json!(["meh"]));
    let grouped = reader.get("/api/v2/notifications").expect(200);
    let grouped_ids: Vec<&Value> = grouped["statuses"].as_array().unwrap().iter().map(|s| &s["id"]).collect();
    assert!(!grouped_ids.contains(&&json!(rude)), "{grouped}");
}

#[test]
fn a_boost_is_matched_by_its_original_on_home_and_lists() {
    let author = register("fl_boost_author");
    let booster = register("fl_boost_booster");
    let reader = register("fl_boost_reader");
    reader.follow(&booster);
    let list = id_of(&reader.post("/api/v1/lists", json!({ "title": "boosters" })).expect(200));
    reader
        .post(&format!("/api/v1/lists/{list}/accounts"), json!({ "account_ids": [booster.id] }))
        .expect(200);
    let hidden = id_of(&author.post("/api/v1/statuses", json!({ "status": "cheap pills" })).expect(200));
    let warned = id_of(&author.post("/api/v1/statuses", json!({ "status": "mild gossip" })).expect(200));
    let hidden_boost =
        id_of(&booster.post(&format!("/api/v1/statuses/{hidden}/reblog"), json!({})).expect(200));
    let warned_boost =
        id_of(&booster.post(&format!("/api/v1/statuses/{warned}/reblog"), json!({})).expect(200));
    poll("both boosts in home", DEADLINE, || {
        let ids = ids_of(&home(&reader));
        (ids.contains(&hidden_boost) && ids.contains(&warned_boost)).then_some(())
    });
    let hide = json!({ "title": "Pills", "context": ["home"], "filter_action": "hide", "keywords_attributes": [{ "keyword": "pills" }] });
    make_filter(&reader, hide);
    let warn =
        json!({ "title": "Gossip", "context": ["home"], "keywords_attributes": [{ "keyword": "gossip" }] });
    make_filter(&reader, warn);
    let list_page = reader.get(&format!("/api/v1/timelines/list/{list}")).expect(200);
    for (page, what) in [(home(&reader), "home"), (list_page, "list")] {
        let ids = ids_of(&page);
        assert!(!ids.contains(&hidden_boost), "{what}: a boost of a hidden post is hidden: {ids:?}");
        let boost = status_in(&page, &warned_boost).unwrap_or_else(|| panic!("{what}: the warned boost"));
        assert_eq!(boost["filtered"][0]["keyword_matches"], json!(["gossip"]), "{what}: {boost}");
        assert_eq!(boost["reblog"]["filtered"][0]["keyword_matches"], json!(["gossip"]), "{what}");
    }
}

#[test]
fn the_public_context_filters_the_public_timeline() {
    let author = register("fl_pub_author");
    let reader = register("fl_pub_reader");
    let hidden =
        id_of(&author.post("/api/v1/statuses", json!({ "status": "zorbleflax for sale" })).expect(200));
    let warned = id_of(&author.post("/api/v1/statuses", json!({ "status": "quibblewort news" })).expect(200));
    // The page just at a status's id: whether it shows and how.
    let at = |id: &str| -> Option<Value> {
        let n: i64 = id.parse().unwrap();
        let page = reader.get(&format!("/api/v1/timelines/public?max_id={}&limit=1", n + 1)).expect(200);
        page.as_array().unwrap().first().filter(|s| s["id"] == id).cloned()
    };
    poll("both in the public timeline", DEADLINE, || {
        (at(&hidden).is_some() && at(&warned).is_some()).then_some(())
    });
    make_filter(
        &reader,
        json!({ "title": "Z", "context": ["public"], "filter_action": "hide", "keywords_attributes": [{ "keyword": "zorbleflax" }] }),
    );
    make_filter(
        &reader,
        json!({ "title": "Q", "context": ["public"], "keywords_attributes": [{ "keyword": "quibblewort" }] }),
    );
    assert!(at(&hidden).is_none(), "hide leaves it out of the public timeline");
    let shown = at(&warned).expect("the warned status");
    assert_eq!(shown["filtered"][0]["keyword_matches"], json!(["quibblewort"]));
    // Home-only readers are not affected: the author sees both.
    assert!(
        author
            .get(&format!("/api/v1/timelines/public?max_id={}&limit=1", hidden.parse::<i64>().unwrap() + 1))
            .expect(200)[0]["id"]
            == hidden.as_str()
    );
}
