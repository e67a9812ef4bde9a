//! One database's outage stays local (issue #29 item 6), black-box on P databases (default
//! 4): with `DB_k` failing every statement (the `db_outage` test hook, which fails them with the
//! error D1 gives when it loses a database), readers on the other databases still get every post
//! not on it, page after page, and each page names the followed authors it left out; users on
//! other databases write; users on `DB_k` (and a like of a post there, committed by its Durable
//! Object) get `503 database_unavailable` with `Retry-After`; an event bound for `DB_k` waits in
//! its outbox, acked rather than dead-lettered by the consumer; after the outage a
//! reconciliation pass delivers it and every user's whole feed equals the oracle (their own posts
//! and those of everyone they follow, newest first, each once).
//!
//! Its own binary: the outage is isolate-wide, so the suite's shared server must never see it.
//! `DB_0` is never the failing one: it is the control database (OAuth, stats, test faults, live
//! leases), whose outage is not local by design.

#[path = "../common/mod.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{json, Value};

use common::*;

const DEADLINE: Duration = Duration::from_secs(90);

/// The database a user's (or post's) id routes to under the even split.
fn home_of(id: &str) -> usize {
    let id: u64 = id.parse().expect("a numeric id");
    (((id >> 3) & 255) as usize) * databases() / 256
}

/// Marks `DB_database` failing (or healthy); the hook's answer.
fn outage(database: usize, failing: bool) -> Value {
    admin("POST", "/v1/admin/test/db_outage", Some(&json!({ "database": database, "failing": failing })))
        .expect(200)
}

/// Round trips the hook has refused on `DB_database` so far (asking touches no database).
fn refused(database: usize) -> u64 {
    let state = admin("POST", "/v1/admin/test/db_outage", Some(&json!({}))).expect(200);
    state["refused"][database.to_string()].as_u64().unwrap_or(0)
}

/// What the test published: (created_at, id, author), and who follows whom.
#[derive(Default)]
struct World {
    posts: Vec<(String, u64, String)>,
    follows: BTreeMap<String, BTreeSet<String>>,
}

impl World {
    fn publish(&mut self, author: &User, body: &str) {
        let post = author.publish(body, "public");
        let created = post["created_at"].as_str().expect("created_at").to_string();
        self.posts.push((created, id_of(&post).parse().expect("numeric id"), author.id.clone()));
    }

    fn follow(&mut self, reader: &User, author: &User) {
        reader.follow(author);
        self.follows.entry(reader.id.clone()).or_default().insert(author.id.clone());
    }

    /// The oracle: `reader`'s own posts and their followed authors', newest first, minus the
    /// authors `without` (left out by an outage).
    fn feed(&self, reader: &str, without: &BTreeSet<String>) -> Vec<String> {
        let followed = self.follows.get(reader).cloned().unwrap_or_default();
        let mut mine: Vec<&(String, u64, String)> = self
            .posts
            .iter()
            .filter(|(_, _, a)| (a == reader || followed.contains(a)) && !without.contains(a))
            .collect();
        mine.sort_by(|x, y| (&y.0, y.1).cmp(&(&x.0, x.1)));
        mine.into_iter().map(|(_, id, _)| id.to_string()).collect()
    }
}

/// Every page of `reader`'s home feed, `limit` at a time: the items' ids and each page's
/// `unavailable.authors` (sorted).
fn scroll(reader: &User, limit: usize) -> (Vec<String>, Vec<BTreeSet<String>>) {
    let (mut items, mut named) = (Vec::new(), Vec::new());
    let mut path = format!("/v1/feed?limit={limit}");
    for _ in 0..1_000 {
        let page = reader.get(&path).expect(200);
        items.extend(ids(page["items"].as_array().expect("items")));
        let authors = page["unavailable"]["authors"].as_array().cloned().unwrap_or_default();
        named.push(authors.iter().filter_map(|a| a.as_str().map(str::to_string)).collect());
        match page["next_cursor"].as_str() {
            Some(c) => path = format!("/v1/feed?limit={limit}&cursor={c}"),
            None => return (items, named),
        }
    }
    panic!("pagination did not end");
}

/// A request answered `503 database_unavailable` with `Retry-After` (sent once: the harness's
/// usual sender hands a 503 back as text).
#[track_caller]
fn expect_unavailable(method: &str, path: &str, token: &str, body: Option<Value>) {
    let auth = format!("Bearer {token}");
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let r = send_once(method, path, &headers, &bytes).expect("a response");
    let (status, retry_after) = (r.status(), r.header("retry-after").map(str::to_string));
    let content_type = r.content_type().to_string();
    let problem: Value = serde_json::from_str(&r.into_string().unwrap_or_default()).unwrap_or(Value::Null);
    assert_eq!(
        (status, problem["code"].as_str()),
        (503, Some("database_unavailable")),
        "{method} {path}: {problem}"
    );
    assert_eq!(content_type, "application/problem+json");
    assert_eq!(retry_after.as_deref(), Some("30"), "{method} {path}");
}

/// Registers users until every database holds `per_database` of them; returns them by home.
fn users_on_every_database(per_database: usize) -> Vec<Vec<User>> {
    let mut by_home: Vec<Vec<User>> = vec![Vec::new(); databases()];
    for _ in 0..400 {
        if by_home.iter().all(|u| u.len() >= per_database) {
            return by_home;
        }
        let u = register("outage");
        let home = home_of(&u.id);
        if by_home[home].len() < per_database {
            by_home[home].push(u);
        }
    }
    panic!("ids did not spread over the databases");
}

/// The reader's follow of `author` as the outbox holds it (its `backfill` event).
fn follow_event(author: &User, reader: &User) -> Value {
    let outbox = outbox_of(author);
    let events = outbox["events"].as_array().cloned().unwrap_or_default();
    events
        .into_iter()
        .find(|e| {
            e["kind"] == "backfill"
                && e["reader_id"].as_i64().map(|r| r.to_string()) == Some(reader.id.clone())
        })
        .unwrap_or_else(|| panic!("no backfill of {} for {}: {outbox}", author.id, reader.id))
}

#[test]
fn an_outage_of_one_database_costs_only_the_data_on_it() {
    if databases() < 3 {
        return; // a reader's database, another healthy one and the failing one
    }
    init_server(ServerOptions { label: "outage".into(), ..ServerOptions::suite() });
    let down = databases() - 1;
    // Per database: two authors and a reader (the failing database's reader is its victim).
    let mut by_home = users_on_every_database(3);
    let readers: Vec<User> = by_home.iter_mut().map(|u| u.remove(0)).collect();
    let authors: Vec<User> = by_home.into_iter().flatten().collect();
    let mut world = World::default();
    for reader in &readers {
        activate(reader);
        for author in &authors {
            world.follow(reader, author);
        }
    }
    for (i, author) in authors.iter().enumerate() {
        for n in 0..3 {
            world.publish(author, &format!("author {i} post {n}"));
        }
    }
    for reader in &readers {
        world.publish(reader, "a reader's own post");
    }
    // One more author on the failing database, followed just before the outage by the first
    // reader, whose follow event's send is lost: it waits in that reader's outbox (healthy) for
    // the sweep, and what it applies is on the failing database.
    let late = register_on(down);
    world.publish(&late, "the late author's post");
    lose_next_announce(&readers[0]);
    world.follow(&readers[0], &late);
    let none = BTreeSet::new();
    for reader in &readers {
        poll("the healthy feed equals the oracle", DEADLINE, || {
            (scroll(reader, 50).0 == world.feed(&reader.id, &none)).then_some(())
        });
    }

    let newcomer = register_on((down + 1) % databases());
    assert_eq!(outage(down, true)["failing"], json!([down]));
    let on_down: BTreeSet<String> =
        authors.iter().chain([&late]).filter(|a| home_of(&a.id) == down).map(|a| a.id.clone()).collect();
    reads_skip_only_the_failing_database(&world, &readers, down, &on_down);
    let healthy_author = authors.iter().find(|a| home_of(&a.id) != down).expect("a healthy author");
    writes_on_healthy_databases_succeed(&mut world, (&readers, &newcomer), healthy_author, &on_down);
    the_failing_databases_users_get_503(&readers[down], &authors, &world, down);
    a_healthy_authors_fanout_finishes(&mut world, healthy_author, &readers[down]);
    the_follow_event_waits_in_its_outbox(&readers[0], &late, down);

    assert_eq!(outage(down, false)["failing"], json!([]));
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    poll("the follow event applied after the outage", DEADLINE, || {
        let event = follow_event(&late, &readers[0]);
        if event["state"] == "pending" {
            admin("POST", "/v1/admin/reconcile", None).expect(200);
        }
        (event["state"] == "done").then_some(())
    });
    let pair = admin(
        "POST",
        "/v1/admin/test/graph",
        Some(&json!({ "user_id": late.id, "other_id": readers[0].id })),
    )
    .expect(200);
    assert!(pair["user"]["follower"] == json!(1) || pair["user"]["follower"] == json!(true), "{pair}");
    // The oracle's check: every user's whole feed, with what the outage wrote meanwhile.
    for user in readers.iter().chain(&authors).chain([&late]) {
        poll("every feed equals the oracle after the outage", DEADLINE, || {
            let (items, named) = scroll(user, 7);
            (items == world.feed(&user.id, &none) && named.iter().all(BTreeSet::is_empty)).then_some(())
        });
    }
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    assert!(stats["counters"]["queue_outage_acks"].as_i64().unwrap_or(0) >= 1, "{}", stats["counters"]);
}

/// Registers users until one lives on `database`.
fn register_on(database: usize) -> User {
    for _ in 0..400 {
        let u = register("outage_late");
        if home_of(&u.id) == database {
            return u;
        }
    }
    panic!("no user landed on DB_{database}");
}

/// Readers on healthy databases scroll their whole feed: every post not on the failing
/// database, in order, each once; every page names exactly the followed authors living there.
fn reads_skip_only_the_failing_database(
    world: &World,
    readers: &[User],
    down: usize,
    on_down: &BTreeSet<String>,
) {
    for reader in readers.iter().filter(|r| home_of(&r.id) != down) {
        let followed = world.follows.get(&reader.id).cloned().unwrap_or_default();
        let missing: BTreeSet<String> = on_down.intersection(&followed).cloned().collect();
        assert!(!missing.is_empty());
        for limit in [4, 50] {
            let (items, named) = scroll(reader, limit);
            assert_eq!(items, world.feed(&reader.id, on_down), "limit {limit}");
            assert!(named.iter().all(|n| *n == missing), "limit {limit}: {named:?} vs {missing:?}");
        }
    }
}

/// A healthy reader publishes, follows a healthy author anew (`newcomer`, signed up before:
/// a sign-up may draw the failing database) and likes a healthy post; a follow of an author on
/// the failing database needs that author's row: 503.
fn writes_on_healthy_databases_succeed(
    world: &mut World,
    (readers, newcomer): (&[User], &User),
    healthy_author: &User,
    on_down: &BTreeSet<String>,
) {
    let down = home_of(on_down.iter().next().expect("an author on the failing database"));
    let reader = readers.iter().find(|r| home_of(&r.id) != down).expect("a healthy reader");
    world.publish(reader, "written during the outage");
    world.follow(reader, newcomer);
    world.publish(newcomer, "a new author's post during the outage");
    let post = world.posts.iter().rev().find(|(_, _, a)| *a == healthy_author.id).expect("a post").1;
    let liked = reader.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    assert_eq!(liked["liked"], true);
    let (items, _) = scroll(reader, 50);
    assert_eq!(items, world.feed(&reader.id, on_down), "the outage's own writes are read back");
    let someone_down = on_down.iter().next().expect("an author there");
    expect_unavailable("PUT", &format!("/v1/me/following/{someone_down}"), &readers[0].token, None);
}

/// The failing database's own reader cannot even authenticate (the token check reads their
/// row); its authors cannot publish; a like of a post there fails in the post's object.
fn the_failing_databases_users_get_503(victim: &User, authors: &[User], world: &World, down: usize) {
    expect_unavailable("GET", "/v1/feed", &victim.token, None);
    expect_unavailable("GET", "/v1/me", &victim.token, None);
    let author = authors.iter().find(|a| home_of(&a.id) == down).expect("an author there");
    expect_unavailable("POST", "/v1/posts", &author.token, Some(json!({ "body": "lost?" })));
    let healthy = authors.iter().find(|a| home_of(&a.id) != down).expect("a healthy author");
    let post = world.posts.iter().find(|(_, _, a)| *a == author.id).expect("a post there").1;
    expect_unavailable("PUT", &format!("/v1/posts/{post}/like"), &healthy.token, None);
}

/// A healthy author's fan-out reaches every follower's window, the failing database's reader's
/// too (windows are objects, not D1), and finishes: it does not wait for the outage.
fn a_healthy_authors_fanout_finishes(world: &mut World, author: &User, victim: &User) {
    world.publish(author, "fanned out during the outage");
    let post = world.posts.last().expect("the post").1.to_string();
    wait_drained(author);
    poll("the post in the window of a reader on the failing database", DEADLINE, || {
        window_ids(victim).contains(&post).then_some(())
    });
}

/// The sweep resends the event and the consumer meets the outage: the event stays pending on
/// the reader's (healthy) database, not dead-lettered.
fn the_follow_event_waits_in_its_outbox(reader: &User, late: &User, down: usize) {
    let event = follow_event(late, reader);
    assert_eq!(event["state"], "pending", "{event}");
    let first_sent = event["sent_at"].clone();
    // Each pass answers 503 (its share on the failing database fails, after the others'
    // resends): one refused round trip there, and one for the outbox view's share.
    let before = refused(down);
    let mut own_refusals = 0;
    poll("the sweep to resend the follow event", DEADLINE, || {
        let _ = try_call("POST", "/v1/admin/reconcile", Some(ADMIN_TOKEN), None);
        own_refusals += 2;
        (follow_event(late, reader)["sent_at"] != first_sent).then_some(())
    });
    poll("the consumer to meet the outage", DEADLINE, || {
        (refused(down) > before + own_refusals).then_some(())
    });
    let outbox = outbox_of(late);
    assert_eq!(outbox["unavailable"], json!([down]), "{outbox}");
    let event = follow_event(late, reader);
    assert_eq!(event["state"], "pending", "acked, not dead-lettered: {event}");
}
