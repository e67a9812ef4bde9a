//! Reconciliation fanned out, and fan-out over more than one queue, black-box against a server
//! of its own: 4 D1 databases and 2 fan-out queues (`scripts/wrangler-config 4 --queues 2`).
//! A binary of its own because its server's config differs from the HTTP suite's (which runs
//! on `EDGEFEED_QUEUES`, 1 by default), and because its tests fire the cron, which runs on
//! every database at once.
//!
//! The cron tests call no synchronous `POST /v1/admin/reconcile`: every repair there is made
//! by the cron's pass, whose shares run one per database in queue consumer invocations. The
//! counter tests (issue 40 item 7: recounts from change marks, and the slow sweep) run passes
//! with it, to read each pass's report.

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::*;

const DATABASES: usize = 4;
const QUEUES: usize = 2;
const DEADLINE: Duration = Duration::from_secs(90);
/// What one database's share of a pass may spend, at most, in D1 statements: a constant (the
/// slices are bounded and so are the probes of other databases), far below D1's 1,000 queries
/// per Worker invocation, whatever the number of databases.
const SHARE_STATEMENTS_BOUND: i64 = 150;

/// Users per database the counters' sweep recounts per pass on this binary's server: narrow,
/// as in production (1 there), but wide enough that a test's drift is swept within seconds.
const SWEEP_USERS: &str = "2";

fn setup() {
    let vars = vec![
        ("FANOUT_MODE".to_string(), "push".to_string()),
        ("COUNT_SWEEP_USERS".to_string(), SWEEP_USERS.to_string()),
    ];
    init_server_on(ServerOptions { label: "reconcile".into(), vars, port: None }, DATABASES, QUEUES);
}

/// The physical database a user's rows live on (the even map: logical shard `s` on database
/// `s * P / 256`; the shard sits above the id's 3 random bits).
fn database_of(user: &User) -> usize {
    let id: i64 = user.id.parse().expect("numeric id");
    (((id >> 3) & 255) as usize) * DATABASES / 256
}

/// The fan-out queue a user's messages ride (their logical shard modulo the queues).
fn queue_of(user: &User) -> usize {
    let id: i64 = user.id.parse().expect("numeric id");
    ((id >> 3) & 255) as usize % QUEUES
}

/// Registers users until one lives on each database.
fn one_per_database(prefix: &str) -> Vec<User> {
    let mut found: Vec<Option<User>> = vec![None; DATABASES];
    for _ in 0..200 {
        if found.iter().all(Option::is_some) {
            break;
        }
        let user = register(prefix);
        let db = database_of(&user);
        found[db].get_or_insert(user);
    }
    found.into_iter().map(|u| u.expect("a user on every database within 200 sign-ups")).collect()
}

/// Fires the cron trigger as the platform would (every minute in production). The direct
/// stack's trigger route (`/cdn-cgi/handler/scheduled`) answers 500 `exception` for this
/// Worker whatever the pass does (main's build too): there the admin route runs the same
/// `reconcile::fan_out` the scheduled handler calls.
fn fire_cron() {
    match server().stack {
        Stack::WranglerDev => {
            let response = send("GET", "/__scheduled?cron=*+*+*+*+*", &[], b"");
            assert_eq!(response.status(), 200, "the cron trigger");
        }
        Stack::Direct => {
            admin("POST", "/v1/admin/reconcile?fanout=true", None).expect(202);
        }
    }
}

fn stats() -> Value {
    admin("GET", "/v1/admin/stats", None).expect(200)
}

fn counter(stats: &Value, name: &str) -> i64 {
    stats["counters"][name].as_i64().unwrap_or(0)
}

#[test]
fn the_cron_pass_repairs_every_database_one_share_per_invocation() {
    setup();
    let authors = one_per_database("rc_author");
    let reader = register("rc_reader");
    activate(&reader);
    // Before the damage: another test's pass may be the one that repairs it.
    let before = stats();
    let mut posts = Vec::new();
    for author in &authors {
        reader.follow(author);
        poll("the follow mirrored on the author's side", DEADLINE, || {
            (author.profile()["followers_count"] == 1).then_some(())
        });
        // Two repairs on the author's database: a drifted counter, and an event whose queue
        // send was lost (it stays pending until a pass resends it).
        // Not read back: the other test's on-demand pass may repair it at once. That every
        // drift was there and got repaired shows in `repaired_by_kind` below.
        admin("POST", "/v1/admin/test/drift", Some(&json!({ "user_id": author.id, "followers_count": 7 })))
            .expect(200);
        lose_next_announce(author);
        posts.push(id_of(&author.publish("resent by its own database's share", "public")));
    }
    let mut fired: Option<Instant> = None;
    poll("every database's repairs, made by cron passes alone", DEADLINE, || {
        // About once a second (the platform's is once a minute): passes may still overlap.
        if fired.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            fire_cron();
            fired = Some(Instant::now());
        }
        let counts_fixed = authors.iter().all(|a| a.profile()["followers_count"] == 1);
        let window: BTreeSet<String> = window_ids(&reader).into_iter().collect();
        (counts_fixed && posts.iter().all(|p| window.contains(p))).then_some(())
    });
    let after = stats();
    let reconcile = &after["reconcile"];
    let shares = reconcile["shares"].as_i64().unwrap() - before["reconcile"]["shares"].as_i64().unwrap();
    assert!(shares >= DATABASES as i64, "one share per database per pass: {reconcile}");
    let by_kind = |s: &Value, kind: &str| s["reconcile"]["repaired_by_kind"][kind].as_i64().unwrap();
    assert!(by_kind(&after, "followers_count") >= by_kind(&before, "followers_count") + DATABASES as i64);
    assert!(by_kind(&after, "resent") >= by_kind(&before, "resent") + DATABASES as i64);
    // Each share is one consumer invocation's D1 work, counted on its own: bounded by a
    // constant, not by the number of databases.
    let max = reconcile["share_statements_max"].as_i64().unwrap();
    assert!((1..=SHARE_STATEMENTS_BOUND).contains(&max), "{reconcile}");
    println!("one share of the fanned-out pass: at most {max} D1 statements ({DATABASES} databases)");
}

#[test]
fn fan_out_rides_both_queues_by_the_authors_shard() {
    setup();
    let reader = register("rq_reader");
    activate(&reader);
    // An author whose messages ride each queue.
    let mut authors: Vec<Option<User>> = vec![None; QUEUES];
    for _ in 0..100 {
        if authors.iter().all(Option::is_some) {
            break;
        }
        let author = register("rq_author");
        let queue = queue_of(&author);
        authors[queue].get_or_insert(author);
    }
    let authors: Vec<User> = authors.into_iter().map(|a| a.expect("an author per queue")).collect();
    let before = stats();
    let mut posts = Vec::new();
    for author in &authors {
        reader.follow(author);
        posts.push(id_of(&author.publish("over my shard's queue", "public")));
    }
    poll("both authors' posts delivered", DEADLINE, || {
        let window: BTreeSet<String> = window_ids(&reader).into_iter().collect();
        posts.iter().all(|p| window.contains(p)).then_some(())
    });
    let after = stats();
    for queue in ["edgefeed-fanout", "edgefeed-fanout-1"] {
        let name = format!("queue_batches_{queue}");
        assert!(
            counter(&after, &name) > counter(&before, &name),
            "{queue} carried no batch: {}",
            after["counters"]
        );
    }
    // The fanned-out pass on demand: one share per database, over both queues.
    let queued = admin("POST", "/v1/admin/reconcile?fanout=true", None).expect(202);
    assert_eq!(queued, json!({ "databases_queued": DATABASES, "queues": QUEUES }));
}

/// One synchronous pass (every database's share); its report's `user_counts`.
fn pass() -> Value {
    admin("POST", "/v1/admin/reconcile", None).expect(200)["user_counts"].clone()
}

fn followers_count(user: &User) -> i64 {
    user.profile()["followers_count"].as_i64().unwrap()
}

fn drift_followers(user: &User, to: i64) {
    admin("POST", "/v1/admin/test/drift", Some(&json!({ "user_id": user.id, "followers_count": to })))
        .expect(200);
}

#[test]
fn a_counter_drifted_on_a_user_whose_relations_changed_is_repaired_by_the_next_pass() {
    setup();
    let author = register("mark_author");
    let (first, second) = (register("mark_first"), register("mark_second"));
    first.follow(&author);
    poll("the first follow mirrored", DEADLINE, || (followers_count(&author) == 1).then_some(()));
    drift_followers(&author, 7);
    // The second follow's mirror marks the author (a trigger, in the mirror's own batch).
    second.follow(&author);
    poll("the second follow mirrored", DEADLINE, || {
        // 8: the drift plus the trigger's +1; 2: another test's pass already recounted it.
        matches!(followers_count(&author), 8 | 2).then_some(())
    });
    let report = pass();
    assert_eq!(followers_count(&author), 2, "recounted from its mark by the next pass: {report}");
}

#[test]
fn a_counter_drifted_behind_the_marks_back_is_repaired_by_the_sweep() {
    setup();
    let author = register("sweep_author");
    register("sweep_reader").follow(&author);
    poll("the follow mirrored", DEADLINE, || (followers_count(&author) == 1).then_some(()));
    // This pass recounts the author from the follow's mark and clears it: nothing of theirs
    // changes after, so only the sweep can find the drift.
    pass();
    drift_followers(&author, 7);
    let mut swept = 0;
    poll("the drift found by the sweep", Duration::from_secs(120), || {
        swept += pass()["swept_users"].as_i64().unwrap();
        (followers_count(&author) == 1).then_some(())
    });
    assert!(swept > 0, "the sweep ran");
    println!("drift behind the marks' back repaired by the sweep after {swept} users swept");
}

#[test]
fn a_pass_with_nothing_marked_reads_almost_nothing_for_the_marks() {
    setup();
    // Other tests' writes mark users meanwhile: wait for a pass that found nothing marked.
    let quiet = poll("a pass with nothing marked", DEADLINE, || {
        let report = pass();
        (report["marked_users"] == 0).then_some(report)
    });
    let marked_read = quiet["marked_rows_read"].as_u64().unwrap();
    // The pick's one statement on each database's empty marks table (D1 counts 2 rows read
    // for it), where one user's recount by the sweep reads about twenty.
    assert!(marked_read <= 3 * DATABASES as u64, "{quiet}");
    let (swept, swept_read) =
        (quiet["swept_users"].as_u64().unwrap(), quiet["swept_rows_read"].as_u64().unwrap());
    println!(
        "a pass with nothing marked ({DATABASES} databases): {marked_read} rows read for the marks; \
         the sweep read {swept_read} rows for {swept} users"
    );
    // And a marked user costs about its own rows.
    let author = register("cost_author");
    register("cost_reader").follow(&author);
    poll("the follow mirrored", DEADLINE, || (followers_count(&author) == 1).then_some(()));
    let report = pass();
    println!("a pass after one follow: {report}");
}
