//! Boosts (`PUT|DELETE /v1/posts/{id}/repost`, `GET /v1/posts/{id}/reposts`, Mastodon's
//! `reblog`, `unreblog`, `reblogged_by`): a boost reaches the booster's followers through the
//! same fan-out as a post, counts exactly, shows each post once per feed (its earliest entry:
//! `domain/boosts.rs`), and is re-checked through the original at every read.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn repost(user: &User, post: &str) -> Value {
    user.put(&format!("/v1/posts/{post}/repost"), None).expect(200)
}

fn unrepost(user: &User, post: &str) -> Value {
    user.delete(&format!("/v1/posts/{post}/repost")).expect(200)
}

fn feed_items(user: &User) -> Vec<Value> {
    collect_pages(user, "/v1/feed?limit=100")
}

/// The feed's item showing `post`, polled until `check` holds for the whole feed.
#[track_caller]
fn wait_feed(user: &User, what: &str, check: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    poll(what, DEADLINE, || {
        let items = feed_items(user);
        check(&items).then_some(items)
    })
}

fn shown(items: &[Value], post: &str) -> Vec<Value> {
    items.iter().filter(|i| i["id"] == post).cloned().collect()
}

fn reposter(item: &Value) -> Option<String> {
    item["repost"]["by"]["handle"].as_str().map(str::to_string)
}

fn count_of(user: &User, post: &str) -> i64 {
    user.get(&format!("/v1/posts/{post}")).expect(200)["repost_count"].as_i64().unwrap()
}

#[test]
fn a_boost_reaches_the_boosters_followers_and_counts_exactly_under_retries_and_races() {
    let author = register("bo_author");
    let booster = register("bo_booster");
    let reader = register("bo_reader");
    reader.follow(&booster);
    activate(&reader);
    let post = id_of(&author.publish("worth a boost", "public"));

    let first = repost(&booster, &post);
    assert_eq!(first["id"], post.as_str(), "the item shows the original: {first}");
    assert_eq!(reposter(&first).as_deref(), Some(booster.handle.as_str()));
    assert_eq!((first["repost_count"].as_i64(), first["reposted_by_me"].as_bool()), (Some(1), Some(true)));
    let boost_id = first["repost"]["id"].as_str().unwrap().to_string();
    assert_ne!(boost_id, post);
    // A retry answers the same boost; the count does not move.
    let again = repost(&booster, &post);
    assert_eq!(
        (again["repost"]["id"].as_str(), again["repost_count"].as_i64()),
        (Some(boost_id.as_str()), Some(1))
    );

    // The reader follows only the booster: the post reaches them as the booster's boost.
    let items = wait_feed(&reader, "the boost in the reader's feed", |items| shown(items, &post).len() == 1);
    let item = &shown(&items, &post)[0];
    assert_eq!(reposter(item).as_deref(), Some(booster.handle.as_str()), "{item}");
    assert_eq!(item["body"], "worth a boost");
    assert_eq!(item["author"]["handle"], author.handle.as_str());

    // One user's retries racing: one boost. Twelve users at once: twelve more.
    let (path, token) = (format!("/v1/posts/{post}/repost"), register("bo_racer").token);
    let answers = parallel(8, 8, move |_| call("PUT", &path, Some(&token), None).status);
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");
    assert_eq!(count_of(&author, &post), 2);
    let many: Vec<String> = (0..12).map(|_| register("bo_many").token).collect();
    let path = format!("/v1/posts/{post}/repost");
    let answers = parallel(6, 12, move |i| call("PUT", &path, Some(&many[i]), None).status);
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");
    assert_eq!(count_of(&author, &post), 14);

    // Who boosts it, newest first, paged.
    let boosters = collect_pages(&author, &format!("/v1/posts/{post}/reposts?limit=5"));
    assert_eq!(boosters.len(), 14);
    assert_eq!(boosters.last().unwrap()["handle"], booster.handle.as_str(), "the first boost is last");
    let distinct: HashSet<&str> = boosters.iter().filter_map(|u| u["id"].as_str()).collect();
    assert_eq!(distinct.len(), 14);

    // Unboost, twice: one fewer; the reader's feed loses the entry.
    let undone = unrepost(&booster, &post);
    assert_eq!(
        (undone["repost_count"].as_i64(), undone["reposted_by_me"].as_bool()),
        (Some(13), Some(false))
    );
    assert!(undone.get("repost").is_none(), "{undone}");
    assert_eq!(unrepost(&booster, &post)["repost_count"], 13);
    wait_feed(&reader, "the unboosted entry gone", |items| shown(items, &post).is_empty());
    // A boost again is a new boost, counted once.
    let renewed = repost(&booster, &post);
    assert_ne!(renewed["repost"]["id"].as_str(), Some(boost_id.as_str()));
    assert_eq!(renewed["repost_count"], 14);
    wait_feed(&reader, "the new boost in the feed", |items| shown(items, &post).len() == 1);
}

#[test]
fn the_original_is_notified_once_and_the_notification_goes_with_the_boost() {
    let author = register("bn_author");
    let booster = register("bn_booster");
    let post = id_of(&author.publish("notify me", "public"));
    repost(&booster, &post);
    repost(&booster, &post);
    let kinds = |u: &User| -> Vec<(String, String)> {
        let items = u.get("/v1/notifications").expect(200)["items"].as_array().unwrap().clone();
        items
            .iter()
            .map(|n| {
                (n["kind"].as_str().unwrap().to_string(), n["actor"]["handle"].as_str().unwrap().to_string())
            })
            .collect()
    };
    assert_eq!(kinds(&author), vec![("reblog".to_string(), booster.handle.clone())]);
    let n = &author.get("/v1/notifications").expect(200)["items"][0];
    assert_eq!(n["post"]["id"], post.as_str());
    // Boosting one's own post notifies nobody.
    repost(&author, &post);
    assert_eq!(kinds(&author).len(), 1);
    unrepost(&booster, &post);
    assert!(kinds(&author).is_empty(), "the unboost takes its notification");
    // Mastodon's type and filter name.
    repost(&booster, &post);
    let masto = author.get("/api/v1/notifications?types[]=reblog").expect(200);
    assert_eq!(masto[0]["type"], "reblog", "{masto}");
    assert_eq!(masto[0]["status"]["id"], post.as_str());
    assert_eq!(masto[0]["account"]["acct"], booster.handle.as_str());
}

#[test]
fn a_reader_sees_a_post_once_at_its_earliest_entry_across_paths_and_pages() {
    let author = register("bd_author");
    let (b1, b2) = (register("bd_b1"), register("bd_b2"));
    let follows_all = register("bd_all");
    let follows_boosters = register("bd_boosters");
    for u in [&author, &b1, &b2] {
        follows_all.follow(u);
    }
    follows_boosters.follow(&b1);
    follows_boosters.follow(&b2);
    activate(&follows_all);
    activate(&follows_boosters);
    let post = id_of(&author.publish("one entry per post", "public"));
    let filler: Vec<String> = (0..3).map(|i| id_of(&b2.publish(&format!("filler {i}"), "public"))).collect();
    repost(&b1, &post);
    repost(&b2, &post);
    for f in &filler {
        wait_feed(&follows_boosters, "the fillers", |items| !shown(items, f).is_empty());
    }
    wait_drained(&b1);
    wait_drained(&b2);

    // Following the author: the post itself, never a boost of it.
    let items = feed_items(&follows_all);
    let entries = shown(&items, &post);
    assert_eq!(entries.len(), 1, "{items:?}");
    assert!(entries[0].get("repost").is_none(), "{:?}", entries[0]);
    // Following both boosters: the first boost (b1's), once, on pages of every size.
    for limit in [1, 2, 3, 100] {
        let items = collect_pages(&follows_boosters, &format!("/v1/feed?limit={limit}"));
        let entries = shown(&items, &post);
        assert_eq!(entries.len(), 1, "limit {limit}: {items:?}");
        assert_eq!(reposter(&entries[0]).as_deref(), Some(b1.handle.as_str()), "limit {limit}");
        let all = ids(&items);
        assert_eq!(all.iter().collect::<HashSet<_>>().len(), all.len(), "no repeats at limit {limit}");
        assert_eq!(all.len(), 4, "the post and the three fillers at limit {limit}: {all:?}");
    }

    // A third boost while the reader scrolls: the pages after the cursor still show it once,
    // and a fresh read does not show it again on top.
    let page = follows_boosters.get("/v1/feed?limit=2").expect(200);
    let b3 = register("bd_b3");
    follows_boosters.follow(&b3);
    repost(&b3, &post);
    wait_drained(&b3);
    let mut seen = ids(page["items"].as_array().unwrap());
    let mut cursor = page["next_cursor"].as_str().map(str::to_string);
    while let Some(c) = cursor {
        let next = follows_boosters.get(&format!("/v1/feed?limit=2&cursor={c}")).expect(200);
        seen.extend(ids(next["items"].as_array().unwrap()));
        cursor = next["next_cursor"].as_str().map(str::to_string);
    }
    assert_eq!(seen.iter().filter(|id| **id == post).count(), 1, "{seen:?}");
    let fresh = feed_items(&follows_boosters);
    assert_eq!(shown(&fresh, &post).len(), 1);
    assert_eq!(reposter(&shown(&fresh, &post)[0]).as_deref(), Some(b1.handle.as_str()));

    // The first boost undone: the next earliest (b2's) takes its place.
    unrepost(&b1, &post);
    let items = wait_feed(&follows_boosters, "b2's boost shown", |items| {
        shown(items, &post).iter().any(|i| reposter(i).as_deref() == Some(b2.handle.as_str()))
    });
    assert_eq!(shown(&items, &post).len(), 1);
}

#[test]
fn through_a_boost_the_original_is_checked_at_every_read() {
    let booster = register("bv_booster");
    let reader = register("bv_reader");
    reader.follow(&booster);
    activate(&reader);
    let authors: Vec<User> = (0..5).map(|_| register("bv_author")).collect();
    let posts: Vec<String> =
        authors.iter().map(|a| id_of(&a.publish(&format!("by {}", a.handle), "public"))).collect();
    for p in &posts {
        repost(&booster, p);
    }
    wait_feed(&reader, "every boost shown", |items| posts.iter().all(|p| shown(items, p).len() == 1));

    // Deleted; made followers-only; the reader blocked by its author; its author muted by the
    // reader; taken down by an operator.
    authors[0].delete(&format!("/v1/posts/{}", posts[0])).expect(204);
    authors[1].patch(&format!("/v1/posts/{}", posts[1]), json!({ "visibility": "followers" })).expect(200);
    authors[2].block(&reader);
    reader.put(&format!("/v1/me/mutes/{}", authors[3].id), None).expect(200);
    admin(
        "POST",
        &format!("/v1/admin/posts/{}/takedown", posts[4]),
        Some(&json!({ "reason": "test", "operator": "test-op" })),
    )
    .expect(200);
    let items = feed_items(&reader);
    for p in &posts {
        assert!(shown(&items, p).is_empty(), "{p} still shown: {items:?}");
    }
    // Nor on the booster's profile, where the boosts are among their posts.
    let profile = reader.get(&format!("/v1/users/{}/posts?limit=10", booster.id)).expect(200);
    let listed = ids(profile["items"].as_array().unwrap());
    assert!(posts.iter().all(|p| !listed.contains(p)), "{listed:?}");
    // The mute lifted: shown again (the boost was never removed).
    reader.delete(&format!("/v1/me/mutes/{}", authors[3].id)).expect(200);
    assert_eq!(shown(&feed_items(&reader), &posts[3]).len(), 1);
}

#[test]
fn only_public_posts_and_ones_own_followers_only_posts_can_be_boosted() {
    let author = register("bp_author");
    let follower = register("bp_follower");
    let stranger = register("bp_stranger");
    follower.follow(&author);
    let followers_only = id_of(&author.publish("for followers", "followers"));
    let private = id_of(&author.publish("for me", "private"));
    follower.put(&format!("/v1/posts/{followers_only}/repost"), None).expect_problem(403, "not_boostable");
    stranger.put(&format!("/v1/posts/{followers_only}/repost"), None).expect_problem(404, "not_found");
    follower.put(&format!("/v1/posts/{private}/repost"), None).expect_problem(404, "not_found");
    author.put(&format!("/v1/posts/{private}/repost"), None).expect_problem(403, "not_boostable");
    // The author may boost their own followers-only post: it reaches their followers only.
    let own = repost(&author, &followers_only);
    assert_eq!(own["repost_count"], 1);
    assert_eq!(count_of(&follower, &followers_only), 1);
    // Junk and missing ids.
    follower.put("/v1/posts/0/repost", None).expect_problem(404, "not_found");
    follower.put("/v1/posts/abc/repost", None).expect_problem(404, "not_found");
    follower.put("/v1/posts/999999999999/repost", None).expect_problem(404, "not_found");
    follower.get("/v1/posts/999999999999/reposts").expect_problem(404, "not_found");

    // A boost of a boost is a boost of the original; a like of a boost likes the original.
    let public = id_of(&author.publish("public", "public"));
    let first = repost(&follower, &public);
    let boost_id = first["repost"]["id"].as_str().unwrap().to_string();
    let second = repost(&stranger, &boost_id);
    assert_eq!((second["id"].as_str(), second["repost_count"].as_i64()), (Some(public.as_str()), Some(2)));
    assert_eq!(stranger.put(&format!("/v1/posts/{boost_id}/like"), None).expect(200)["like_count"], 1);
    assert_eq!(author.get(&format!("/v1/posts/{public}")).expect(200)["like_count"], 1);
    // Deleting a boost by its id is an unboost.
    follower.delete(&format!("/v1/posts/{boost_id}")).expect(204);
    assert_eq!(count_of(&author, &public), 1);
    // Someone else's boost is not theirs to delete.
    let theirs = repost(&follower, &public)["repost"]["id"].as_str().unwrap().to_string();
    stranger.delete(&format!("/v1/posts/{theirs}")).expect_problem(403, "not_author");
    assert_eq!(count_of(&author, &public), 2);
}

#[test]
fn mastodon_reblog_unreblog_reblogged_by_and_the_home_timeline() {
    let author = register("bm_author");
    let booster = register("bm_booster");
    let reader = register("bm_reader");
    reader.follow(&booster);
    activate(&reader);
    let post = id_of(&author.publish("reblog me", "public"));
    let auth = |u: &User| format!("Bearer {}", u.token);
    let masto = |u: &User, method: &str, path: &str| {
        let r = send(method, path, &[("authorization", &auth(u))], b"");
        assert_eq!(r.status(), 200, "{method} {path}");
        r.into_json::<Value>().unwrap()
    };
    let reblog = masto(&booster, "POST", &format!("/api/v1/statuses/{post}/reblog"));
    assert_eq!(reblog["reblog"]["id"], post.as_str(), "{reblog}");
    assert_eq!(reblog["account"]["acct"], booster.handle.as_str());
    assert_eq!(reblog["reblog"]["account"]["acct"], author.handle.as_str());
    assert_eq!(
        (reblog["reblog"]["reblogs_count"].as_i64(), reblog["reblog"]["reblogged"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(reblog["content"], "");
    // The boost's own id shows the boost.
    let by_id = masto(&reader, "GET", &format!("/api/v1/statuses/{}", reblog["id"].as_str().unwrap()));
    assert_eq!(by_id["reblog"]["id"], post.as_str());
    // The original, to the booster, says it is boosted.
    let original = masto(&booster, "GET", &format!("/api/v1/statuses/{post}"));
    assert_eq!((original["reblogged"].as_bool(), original["reblogs_count"].as_i64()), (Some(true), Some(1)));

    let home = poll("the reblog in the reader's home timeline", DEADLINE, || {
        let home = masto(&reader, "GET", "/api/v1/timelines/home?limit=40");
        home.as_array().unwrap().iter().any(|s| s["reblog"]["id"] == post.as_str()).then_some(home)
    });
    let entry = home.as_array().unwrap().iter().find(|s| s["reblog"]["id"] == post.as_str()).unwrap();
    assert_eq!(entry["id"], reblog["id"]);
    assert_eq!(entry["reblog"]["content"], "<p>reblog me</p>");

    let by = masto(&author, "GET", &format!("/api/v1/statuses/{post}/reblogged_by"));
    assert_eq!(by.as_array().unwrap().len(), 1);
    assert_eq!(by[0]["acct"], booster.handle.as_str());

    let undone = masto(&booster, "POST", &format!("/api/v1/statuses/{post}/unreblog"));
    assert_eq!((undone["id"].as_str(), undone["reblogged"].as_bool()), (Some(post.as_str()), Some(false)));
    assert_eq!(undone["reblogs_count"], 0);
    assert_eq!(masto(&author, "GET", &format!("/api/v1/statuses/{post}/reblogged_by")), json!([]));
    // Profiles list the booster's boosts, unless asked to exclude them.
    repost(&booster, &post);
    let profile = masto(&reader, "GET", &format!("/api/v1/accounts/{}/statuses", booster.id));
    assert_eq!(profile[0]["reblog"]["id"], post.as_str(), "{profile}");
    let without =
        masto(&reader, "GET", &format!("/api/v1/accounts/{}/statuses?exclude_reblogs=true", booster.id));
    assert_eq!(without, json!([]));
}

fn arm(fault: &str) {
    admin("POST", "/v1/admin/test/fault", Some(&json!({ "name": fault }))).expect(200);
}

fn boosters_of(user: &User, post: &str) -> Vec<String> {
    ids(&collect_pages(user, &format!("/v1/posts/{post}/reposts?limit=50")))
}

#[test]
fn a_crash_between_the_boosters_database_and_the_originals_is_repaired_by_the_outbox() {
    let author = register("bc_author");
    let post = id_of(&author.publish("crash me", "public"));

    // The request stops after the booster's batch: the boost's own event converges the
    // original's side when the queue delivers it.
    let booster = register("bc_booster");
    arm(&format!("boost_mirror_lost:{}", booster.id));
    assert_eq!(booster.put(&format!("/v1/posts/{post}/repost"), None).status, 500);
    poll("the event to converge the original's side", DEADLINE, || {
        (count_of(&author, &post) == 1).then_some(())
    });
    assert_eq!(boosters_of(&author, &post), vec![booster.id.clone()]);
    assert_eq!(repost(&booster, &post)["repost_count"], 1, "the retry finds the same boost");

    // The queue send lost too: only the reconciliation's resend can repair it, and does.
    let late = register("bc_late");
    lose_next_announce(&late);
    arm(&format!("boost_mirror_lost:{}", late.id));
    assert_eq!(late.put(&format!("/v1/posts/{post}/repost"), None).status, 500);
    assert_eq!(count_of(&author, &post), 1, "the original's side has not heard of it");
    assert!(!boosters_of(&author, &post).contains(&late.id));
    poll("the sweep to resend the boost's event", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        (count_of(&author, &post) == 2).then_some(())
    });
    assert!(boosters_of(&author, &post).contains(&late.id));
    let notified = author.get("/v1/notifications").expect(200);
    let actors: Vec<&str> =
        notified["items"].as_array().unwrap().iter().filter_map(|n| n["actor"]["id"].as_str()).collect();
    assert!(actors.contains(&late.id.as_str()), "the repair notifies too: {notified}");

    // The same crash on the unboost.
    lose_next_announce(&late);
    arm(&format!("boost_mirror_lost:{}", late.id));
    assert_eq!(late.delete(&format!("/v1/posts/{post}/repost")).status, 500);
    poll("the sweep to resend the unboost's event", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        (count_of(&author, &post) == 1).then_some(())
    });
    assert_eq!(boosters_of(&author, &post), vec![booster.id.clone()]);
}

/// What the oracle test did: live posts (id -> author, and for a reply the account it
/// answers), live boosts (boost id -> booster, original) and follows (reader -> authors).
#[derive(Default)]
struct Model {
    posts: std::collections::BTreeMap<u64, (String, Option<String>)>,
    boosts: std::collections::BTreeMap<u64, (String, u64)>,
    follows: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl Model {
    /// A reader's whole feed as (shown post id, booster id if it came as a boost), newest entry
    /// first: their own and followed authors' posts (a reply only if it answers its author, the
    /// reader or someone the reader follows: Mastodon's rule), and boosts by them, each post once
    /// at its earliest entry. Ids are snowflakes, so an entry's id orders it as its full key does.
    fn feed(&self, reader: &str) -> Vec<(String, Option<String>)> {
        let mut sources = self.follows.get(reader).cloned().unwrap_or_default();
        sources.insert(reader.to_string());
        let shows = |author: &String, to: &Option<String>| {
            sources.contains(author) && to.as_ref().is_none_or(|to| to == author || sources.contains(to))
        };
        let mut entries: Vec<(u64, u64, Option<String>)> = self
            .posts
            .iter()
            .filter(|(_, (author, to))| shows(author, to))
            .map(|(id, _)| (*id, *id, None))
            .collect();
        entries.extend(
            self.boosts
                .iter()
                .filter(|(_, (booster, _))| sources.contains(booster))
                .map(|(id, (booster, original))| (*id, *original, Some(booster.clone()))),
        );
        entries.sort();
        let mut seen = HashSet::new();
        let mut shown: Vec<(String, Option<String>)> = entries
            .into_iter()
            .filter(|(_, original, _)| seen.insert(*original))
            .map(|(_, original, by)| (original.to_string(), by))
            .collect();
        shown.reverse();
        shown
    }
}

/// Every page of the reader's feed, `limit` at a time, as the model states it.
fn scrolled(reader: &User, limit: usize) -> Vec<(String, Option<String>)> {
    collect_pages(reader, &format!("/v1/feed?limit={limit}"))
        .iter()
        .map(|i| (id_of(i), i["repost"]["by"]["id"].as_str().map(str::to_string)))
        .collect()
}

#[test]
fn feed_oracle_with_boosts_unboosts_replies_follows_and_unfollows_in_the_churn() {
    let users: Vec<User> = (0..6).map(|_| register("bo_oracle")).collect();
    let mut model = Model::default();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for u in &users {
        activate(u);
        for i in 0..2 {
            let post = u.publish(&format!("{} #{i}", u.handle), "public");
            model.posts.insert(id_of(&post).parse().unwrap(), (u.id.clone(), None));
        }
    }
    let check = |model: &Model, round: usize| {
        for (r, reader) in users.iter().enumerate() {
            let want = model.feed(&reader.id);
            let limit = 1 + (r + round) % 4;
            poll(&format!("round {round}: {}'s feed equals the model", reader.handle), DEADLINE, || {
                (scrolled(reader, limit) == want).then_some(())
            });
        }
    };
    for round in 0..4 {
        for _ in 0..10 {
            let (a, b) = (next(users.len()), next(users.len()));
            let (actor, other) = (&users[a], &users[b]);
            match next(8) {
                0 => {
                    let post = actor.publish("churn", "public");
                    model.posts.insert(id_of(&post).parse().unwrap(), (actor.id.clone(), None));
                }
                6 | 7 => {
                    // A reply to any live post (a reply too), to another's or one's own.
                    let posts: Vec<u64> = model.posts.keys().copied().collect();
                    let parent = posts[next(posts.len())];
                    let body = json!({ "body": "a reply", "in_reply_to": parent.to_string() });
                    let reply = actor.post("/v1/posts", body).expect(201);
                    let to = model.posts[&parent].0.clone();
                    model.posts.insert(id_of(&reply).parse().unwrap(), (actor.id.clone(), Some(to)));
                }
                1 | 2 => {
                    let posts: Vec<u64> = model.posts.keys().copied().collect();
                    let original = posts[next(posts.len())];
                    let answer = repost(actor, &original.to_string());
                    let boost: u64 = answer["repost"]["id"].as_str().unwrap().parse().unwrap();
                    model.boosts.insert(boost, (actor.id.clone(), original));
                }
                3 => {
                    let mine: Vec<(u64, u64)> = model
                        .boosts
                        .iter()
                        .filter(|(_, (by, _))| *by == actor.id)
                        .map(|(id, (_, original))| (*id, *original))
                        .collect();
                    if let Some(&(boost, original)) = mine.first() {
                        unrepost(actor, &original.to_string());
                        model.boosts.remove(&boost);
                    }
                }
                4 if a != b => {
                    actor.follow(other);
                    model.follows.entry(actor.id.clone()).or_default().insert(other.id.clone());
                }
                _ if a != b => {
                    actor.unfollow(other);
                    model.follows.entry(actor.id.clone()).or_default().remove(&other.id);
                }
                _ => {}
            }
        }
        check(&model, round);
    }
    assert!(model.boosts.len() >= 3, "the churn boosted: {}", model.boosts.len());
    let replies =
        model.posts.values().filter(|(author, to)| to.as_ref().is_some_and(|to| to != author)).count();
    assert!(replies >= 3, "the churn replied to others: {replies}");
}

/// What a boost costs, through `Server-Timing` (the figures the note and docs quote).
#[test]
fn a_boost_and_a_page_holding_one_wait_the_round_trips_stated() {
    const SEQUENTIAL: &str = "sequential round trips";
    let author = register("bt_author");
    let booster = register("bt_booster");
    let reader = register("bt_reader");
    reader.follow(&booster);
    activate(&reader);
    let post = id_of(&author.publish("cost me", "public"));
    let boost = booster.put(&format!("/v1/posts/{post}/repost"), None);
    assert_eq!(boost.status, 200);
    // Measured 7: the token's user and its revocation, the post read, the booster's batch (the
    // row, its event, the rates, the replicas' number, read back), the test-fault check (test
    // hooks only), the original's batch (its notification, the mirror row), the original read
    // back.
    assert!(boost.timing(SEQUENTIAL) <= 7, "{:?}", boost.server_timing);
    eprintln!("boost: {:?}", boost.server_timing);
    wait_drained(&booster);
    let page = reader.get("/v1/feed?limit=5");
    assert_eq!(shown(page.body["items"].as_array().unwrap(), &post).len(), 1);
    // A page inside the window waits two (tests/api/budgets.rs); its boosts' originals one more.
    assert_eq!(page.timing(SEQUENTIAL), 3, "{:?}", page.server_timing);
    eprintln!("page with a boost: {:?}", page.server_timing);
    let undo = booster.delete(&format!("/v1/posts/{post}/repost"));
    assert_eq!(undo.status, 200);
    // Measured 8: as a boost, with the booster's live boost looked up after the post read.
    assert!(undo.timing(SEQUENTIAL) <= 8, "{:?}", undo.server_timing);
    eprintln!("unboost: {:?}", undo.server_timing);
}
