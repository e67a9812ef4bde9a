//! Mastodon 4.3's grouped notifications (`/api/v2/notifications`), driven over HTTP directly
//! (Mastodon.py 1.8.1 has no v2 client): a post's likes are one group with its count and its
//! newest actors, follows group, mentions stay alone, `grouped_types[]` turns grouping off,
//! `Link` pages lose nothing, blocks and suspensions leave counts and samples, dismiss and the
//! unread count of groups.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

/// Groups are fixed 12-hour windows (00:00 and 12:00 UTC): a test whose notifications straddled
/// an edge would see two groups. One that starts within this long of an edge waits it out.
const EDGE_MARGIN_MS: u64 = 120_000;

/// Returns once the next window edge is more than [`EDGE_MARGIN_MS`] away (sleeping past it
/// when it is nearer; not a wait for an effect, so no poll).
fn clear_of_a_window_edge() {
    const WINDOW_MS: u64 = 12 * 3_600_000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let to_edge = WINDOW_MS - now % WINDOW_MS;
    if to_edge < EDGE_MARGIN_MS {
        std::thread::sleep(Duration::from_millis(to_edge + 1_000));
    }
}

fn groups_of(page: &Value) -> Vec<Value> {
    page["notification_groups"].as_array().expect("notification_groups").clone()
}

fn grouped(user: &User, query: &str) -> Value {
    user.get(&format!("/api/v2/notifications{query}")).expect(200)
}

fn like(user: &User, post: &str) {
    user.put(&format!("/v1/posts/{post}/like"), None).expect(200);
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().expect("array").iter().map(|s| s.as_str().expect("string").to_string()).collect()
}

fn ids_in(list: &Value) -> BTreeSet<String> {
    list.as_array().expect("array").iter().map(id_of).collect()
}

fn form(user: &User, path: &str, body: &str) -> Resp {
    let auth = format!("Bearer {}", user.token);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/x-www-form-urlencoded")];
    raw("POST", path, &headers, body.as_bytes())
}

#[test]
fn many_likers_of_one_post_are_one_group_with_its_count_newest_samples_accounts_and_status() {
    clear_of_a_window_edge();
    let author = register("gr_author");
    let post = id_of(&author.publish("liked a lot", "public"));
    let fans: Vec<User> = (0..10).map(|_| register("gr_fan")).collect();
    for fan in &fans {
        like(fan, &post);
    }
    let page = grouped(&author, "");
    let groups = groups_of(&page);
    assert_eq!(groups.len(), 1, "{page}");
    let g = &groups[0];
    assert_eq!((g["type"].clone(), g["notifications_count"].clone()), (json!("favourite"), json!(10)));
    assert!(g["group_key"].as_str().unwrap().starts_with(&format!("favourite-{post}-")), "{g}");
    assert_eq!(g["status_id"], post.as_str());
    assert!(g["most_recent_notification_id"].is_u64(), "a number, as Mastodon sends it: {g}");
    assert_eq!(g["most_recent_notification_id"].to_string(), g["page_max_id"].as_str().unwrap());
    assert!(g["latest_page_notification_at"].as_str().is_some_and(|t| t.ends_with('Z')));
    let newest_first: Vec<String> = fans.iter().rev().take(8).map(|f| f.id.clone()).collect();
    assert_eq!(strings(&g["sample_account_ids"]), newest_first, "the 8 newest likers, newest first");
    let accounts = ids_in(&page["accounts"]);
    assert!(newest_first.iter().all(|id| accounts.contains(id)), "every sample is in accounts");
    assert_eq!(ids_in(&page["statuses"]), BTreeSet::from([post.clone()]));
    // The group alone, and its accounts (all ten, newest first).
    let key = g["group_key"].as_str().unwrap();
    let one = author.get(&format!("/api/v2/notifications/{key}")).expect(200);
    assert_eq!(groups_of(&one)[0]["notifications_count"], 10);
    let listed = author.get(&format!("/api/v2/notifications/{key}/accounts")).expect(200);
    let all: Vec<String> = listed.as_array().unwrap().iter().map(id_of).collect();
    assert_eq!(all, fans.iter().rev().map(|f| f.id.clone()).collect::<Vec<_>>());
    // Someone else has no such group.
    fans[0].get(&format!("/api/v2/notifications/{key}")).expect(404);
    author.get("/api/v2/notifications/favourite-1-x").expect(404);
}

#[test]
fn follows_group_and_mentions_stay_alone() {
    clear_of_a_window_edge();
    let author = register("grf_author");
    let post = id_of(&author.publish("talk to me", "public"));
    let followers: Vec<User> = (0..3).map(|_| register("grf_fan")).collect();
    for f in &followers {
        f.follow(&author);
    }
    let replies: Vec<String> = (0..2)
        .map(|i| {
            let body = json!({ "body": format!("reply {i}") });
            id_of(&followers[0].post(&format!("/v1/posts/{post}/comments"), body).expect(201))
        })
        .collect();
    let page = poll("the follows to arrive", DEADLINE, || {
        let page = grouped(&author, "");
        let follows = groups_of(&page).into_iter().find(|g| g["type"] == "follow")?;
        (follows["notifications_count"] == 3).then_some(page)
    });
    let groups = groups_of(&page);
    let follow = groups.iter().find(|g| g["type"] == "follow").unwrap();
    assert!(follow["group_key"].as_str().unwrap().starts_with("follow-"));
    assert_eq!(follow.get("status_id"), None, "a follow is about no status");
    let mut samples = strings(&follow["sample_account_ids"]);
    samples.sort();
    let mut want: Vec<String> = followers.iter().map(|f| f.id.clone()).collect();
    want.sort();
    assert_eq!(samples, want);
    let mentions: Vec<&Value> = groups.iter().filter(|g| g["type"] == "mention").collect();
    assert_eq!(mentions.len(), 2, "each reply alone: {page}");
    for m in &mentions {
        assert!(m["group_key"].as_str().unwrap().starts_with("ungrouped-"), "{m}");
        assert_eq!(m["notifications_count"], 1);
    }
    let status_ids: BTreeSet<String> =
        mentions.iter().map(|m| m["status_id"].as_str().unwrap().into()).collect();
    assert_eq!(status_ids, replies.iter().cloned().collect());
    assert!(replies.iter().all(|r| ids_in(&page["statuses"]).contains(r)));
    // types[] filters as in v1.
    let only = grouped(&author, "?types[]=mention");
    assert!(groups_of(&only).iter().all(|g| g["type"] == "mention") && groups_of(&only).len() == 2);
}

#[test]
fn grouped_types_limits_which_kinds_group_and_the_link_keeps_it() {
    clear_of_a_window_edge();
    let author = register("grt_author");
    let post = id_of(&author.publish("one by one", "public"));
    let fans: Vec<User> = (0..3).map(|_| register("grt_fan")).collect();
    for fan in &fans {
        like(fan, &post);
    }
    let page = grouped(&author, "?grouped_types[]=follow");
    let groups = groups_of(&page);
    assert_eq!(groups.len(), 3, "favourites do not group: {page}");
    for g in &groups {
        assert_eq!((g["type"].clone(), g["notifications_count"].clone()), (json!("favourite"), json!(1)));
        assert!(g["group_key"].as_str().unwrap().starts_with("ungrouped-"));
    }
    assert_eq!(groups_of(&grouped(&author, "?grouped_types[]=favourite")).len(), 1);
    let auth = format!("Bearer {}", author.token);
    let paged =
        send("GET", "/api/v2/notifications?limit=1&grouped_types[]=follow", &[("authorization", &auth)], b"");
    let link = paged.header("link").unwrap_or_default().to_string();
    assert!(link.contains("limit=1") && link.contains("grouped_types%5B%5D=follow"), "{link}");
}

/// Follows every `rel="next"` from `path`; each page's groups.
fn walk_links(user: &User, path: &str) -> Vec<Value> {
    let auth = format!("Bearer {}", user.token);
    let mut url = format!("{}{path}", server().base);
    let mut groups = Vec::new();
    for _ in 0..50 {
        let resp = ureq::get(&url).set("authorization", &auth).call().expect("page");
        let link = resp.header("link").unwrap_or_default().to_string();
        let page: Value = resp.into_json().expect("json");
        let got = groups_of(&page);
        if got.is_empty() {
            return groups;
        }
        groups.extend(got);
        let next = link.split(", ").find(|l| l.ends_with("rel=\"next\""));
        match next.and_then(|l| l.strip_prefix('<')).and_then(|l| l.split('>').next()) {
            Some(next) => url = next.to_string(),
            None => return groups,
        }
    }
    panic!("more than 50 pages");
}

#[test]
fn limit_1_paging_through_link_loses_no_notification() {
    clear_of_a_window_edge();
    let author = register("grp_author");
    let a = id_of(&author.publish("a", "public"));
    let b = id_of(&author.publish("b", "public"));
    let fans: Vec<User> = (0..3).map(|_| register("grp_fan")).collect();
    // Interleaved, so a group's older rows lie below another group's newest.
    for fan in &fans {
        like(fan, &a);
        like(fan, &b);
    }
    fans[0].post(&format!("/v1/posts/{a}/comments"), json!({ "body": "hi" })).expect(201);
    let all: BTreeSet<String> = ids_in(&author.get("/api/v1/notifications?limit=80").expect(200));
    assert_eq!(all.len(), 7);
    let groups = walk_links(&author, "/api/v2/notifications?limit=1");
    let covered: BTreeSet<String> =
        groups.iter().map(|g| g["page_max_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(covered, all, "every notification is some page's group");
    // min_id reads upward: the group just above the oldest notification, and `prev` above it.
    let sorted: Vec<u64> =
        all.iter().map(|id| id.parse().unwrap()).collect::<BTreeSet<u64>>().into_iter().collect();
    let auth = format!("Bearer {}", author.token);
    let up = send(
        "GET",
        &format!("/api/v2/notifications?limit=1&min_id={}", sorted[0]),
        &[("authorization", &auth)],
        b"",
    );
    let link = up.header("link").unwrap_or_default().to_string();
    let page: Value = up.into_json().unwrap();
    let just_above = &groups_of(&page)[0];
    assert_eq!(just_above["page_max_id"], sorted[1].to_string(), "{page}");
    assert!(link.contains(&format!("min_id={}", sorted[1])), "{link}");
    // The first page of each group counts it whole.
    let first_of = |prefix: &str| {
        groups.iter().find(|g| g["group_key"].as_str().unwrap().starts_with(prefix)).unwrap().clone()
    };
    assert_eq!(first_of(&format!("favourite-{a}-"))["notifications_count"], 3);
    assert_eq!(first_of(&format!("favourite-{b}-"))["notifications_count"], 3);
    // And by pages of 2, no group is lost either.
    let keys: BTreeSet<String> = walk_links(&author, "/api/v2/notifications?limit=2")
        .iter()
        .map(|g| g["group_key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
}

#[test]
fn a_suspended_or_blocked_liker_leaves_the_count_and_samples_and_a_takedown_the_group() {
    clear_of_a_window_edge();
    let author = register("grs_author");
    let post = id_of(&author.publish("watched", "public"));
    let fans: Vec<User> = (0..4).map(|_| register("grs_fan")).collect();
    for fan in &fans {
        like(fan, &post);
    }
    let group = |user: &User| groups_of(&grouped(user, "")).first().cloned();
    assert_eq!(group(&author).unwrap()["notifications_count"], 4);
    author.block(&fans[3]);
    let reason = json!({ "reason": "test", "operator": "test-op" });
    admin("POST", &format!("/v1/admin/users/{}/suspend", fans[2].id), Some(&reason)).expect(200);
    let page = grouped(&author, "");
    let g = &groups_of(&page)[0];
    assert_eq!(g["notifications_count"], 2, "{g}");
    assert_eq!(strings(&g["sample_account_ids"]), [fans[1].id.clone(), fans[0].id.clone()]);
    let accounts = ids_in(&page["accounts"]);
    assert!(!accounts.contains(&fans[3].id) && !accounts.contains(&fans[2].id), "{accounts:?}");
    assert_eq!(g["most_recent_notification_id"].to_string(), g["page_max_id"].as_str().unwrap());
    let key = g["group_key"].as_str().unwrap().to_string();
    let listed = author.get(&format!("/api/v2/notifications/{key}/accounts")).expect(200);
    assert_eq!(
        listed.as_array().unwrap().iter().map(id_of).collect::<Vec<_>>(),
        [fans[1].id.clone(), fans[0].id.clone()]
    );
    assert_eq!(author.get("/api/v2/notifications/unread_count").expect(200)["count"], 1);
    // A taken-down post takes its group away; restored, lifted and reinstated, all is back.
    admin("POST", &format!("/v1/admin/posts/{post}/takedown"), Some(&reason)).expect(200);
    assert!(group(&author).is_none());
    author.get(&format!("/api/v2/notifications/{key}")).expect(404);
    admin("POST", &format!("/v1/admin/posts/{post}/restore"), Some(&reason)).expect(200);
    admin("POST", &format!("/v1/admin/users/{}/reinstate", fans[2].id), Some(&reason)).expect(200);
    author.delete(&format!("/v1/me/blocks/{}", fans[3].id)).expect(200);
    poll("the unblock to show the like again", DEADLINE, || {
        (group(&author)?["notifications_count"] == 4).then_some(())
    });
}

#[test]
fn dismissing_a_group_removes_its_notifications() {
    clear_of_a_window_edge();
    let author = register("grd_author");
    let a = id_of(&author.publish("a", "public"));
    let b = id_of(&author.publish("b", "public"));
    let fans: Vec<User> = (0..3).map(|_| register("grd_fan")).collect();
    for fan in &fans {
        like(fan, &a);
    }
    like(&fans[0], &b);
    let reply = id_of(&fans[1].post(&format!("/v1/posts/{b}/comments"), json!({ "body": "x" })).expect(201));
    let groups = groups_of(&grouped(&author, ""));
    assert_eq!(groups.len(), 3);
    let key_of = |groups: &[Value], prefix: &str| {
        groups.iter().map(|g| g["group_key"].as_str().unwrap().to_string()).find(|k| k.starts_with(prefix))
    };
    let a_key = key_of(&groups, &format!("favourite-{a}-")).unwrap();
    assert_eq!(form(&author, &format!("/api/v2/notifications/{a_key}/dismiss"), "").expect(200), json!({}));
    assert_eq!(author.get("/api/v1/notifications").expect(200).as_array().map(Vec::len), Some(2));
    author.get(&format!("/api/v2/notifications/{a_key}")).expect(404);
    // Someone else's dismiss dismisses nothing of the author's.
    let left = groups_of(&grouped(&author, ""));
    let mention = left.iter().find(|g| g["status_id"] == reply.as_str()).unwrap();
    let m_key = mention["group_key"].as_str().unwrap();
    form(&fans[0], &format!("/api/v2/notifications/{m_key}/dismiss"), "").expect(200);
    assert_eq!(groups_of(&grouped(&author, "")).len(), 2);
    form(&author, &format!("/api/v2/notifications/{m_key}/dismiss"), "").expect(200);
    let last = groups_of(&grouped(&author, ""));
    assert_eq!(last.len(), 1);
    assert!(last[0]["group_key"].as_str().unwrap().starts_with(&format!("favourite-{b}-")));
}

#[test]
fn v2_unread_count_counts_groups_above_the_marker() {
    clear_of_a_window_edge();
    let author = register("gru_author");
    let a = id_of(&author.publish("a", "public"));
    let b = id_of(&author.publish("b", "public"));
    let fans: Vec<User> = (0..5).map(|_| register("gru_fan")).collect();
    for fan in &fans {
        like(fan, &a);
    }
    let last_a = id_of(&author.get("/api/v1/notifications?limit=1").expect(200)[0]);
    like(&fans[0], &b);
    like(&fans[1], &b);
    fans[2].post(&format!("/v1/posts/{b}/comments"), json!({ "body": "y" })).expect(201);
    let count = |query: &str| {
        author.get(&format!("/api/v2/notifications/unread_count{query}")).expect(200)["count"].clone()
    };
    assert_eq!(count(""), 3, "a's likes, b's likes and the mention");
    assert_eq!(author.get("/api/v1/notifications/unread_count").expect(200)["count"], 8);
    assert_eq!(count("?grouped_types[]=follow"), 8, "nothing groups");
    assert_eq!(count("?limit=2"), 2);
    assert_eq!(count("?types[]=favourite"), 2);
    form(&author, "/api/v1/markers", &format!("notifications[last_read_id]={last_a}")).expect(200);
    assert_eq!(count(""), 2, "b's likes and the mention are above the marker");
}

#[test]
fn no_grouped_type_reads_every_kind_ungrouped() {
    let author = register("gu_author");
    let fan = register("gu_fan");
    let post = id_of(&author.publish(&format!("hello @{}", fan.handle), "public"));
    like(&fan, &post);
    fan.put(&format!("/v1/posts/{post}/repost"), None).expect(200);
    for user in [&author, &fan] {
        let page = grouped(user, "?grouped_types[]=");
        let groups = groups_of(&page);
        let types: Vec<&str> = groups.iter().filter_map(|g| g["type"].as_str()).collect();
        let keys: Vec<String> = groups.iter().map(|g| g["group_key"].as_str().unwrap().to_string()).collect();
        assert!(keys.iter().all(|k| k.starts_with("ungrouped-")), "{page}");
        if user.id == author.id {
            assert_eq!(types, ["reblog", "favourite"], "{page}");
        } else {
            assert_eq!(types, ["mention"], "{page}");
        }
        let count = user.get("/api/v2/notifications/unread_count?grouped_types[]=").expect(200);
        assert_eq!(count["count"], if user.id == author.id { 2 } else { 1 }, "{count}");
    }
}
