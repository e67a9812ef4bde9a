//! The report's hot-author scenario (#28, docs/hot-authors.md): followers' first page of a hot
//! author read from its database (before replicas) and from its replicas (after), on one stack.
//!
//! Method: two twin authors on the same database, each with the same number of followers (on
//! the other databases, each also following a few ordinary authors), posts and shape. The
//! stack's `HOT_REPLICA_FOLLOWERS` is that follower count; promotion only happens in a
//! reconciliation pass, and no local stack fires the cron by itself (wrangler dev and the
//! direct stack run it only on `POST /v1/admin/reconcile`). The twin is one follower short at
//! the pass that promotes the hot author, and gets it right after: from then on both have the
//! same followers, one served from replicas and one ("before") from D1, and their followers'
//! pages are sampled alternately, so the machine's load moves both alike. The test hook checks
//! the twin still has no replicas after the samples. The scenario runs last on its stack (its
//! pass also promotes the publish scenario's largest author, after its figures).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;
use crate::placement::{shard_map, Pool};

/// Ordinary (not hot) authors, and how many of them each follower follows (each has fewer
/// followers than the threshold: 2 x followers x 3 / 9).
pub const ORDINARY_AUTHORS: usize = 9;
pub const ORDINARY_FOLLOWED: usize = 3;
const ORDINARY_POSTS: usize = 2;
/// Each twin's posts: older ones imported before the follows (a new window's snapshot takes
/// them), and new ones published after (delivered to every window).
const IMPORTED_POSTS: usize = 40;
const PUBLISHED_POSTS: usize = 5;
pub const AUTHOR_POSTS: usize = IMPORTED_POSTS + PUBLISHED_POSTS;
const DEADLINE: Duration = Duration::from_secs(180);

/// Each twin's followers for a run (the threshold the stack starts with).
pub fn followers(full: bool) -> usize {
    if full {
        120
    } else {
        40
    }
}

/// One page sample: latency and the page's storage figures.
struct Page {
    ms: f64,
    author_db: f64,
    author_db_rows: f64,
    statements: f64,
    do_calls: f64,
}

/// The number before `what` in the `Server-Timing` part named `name` (0 when absent).
fn figure(r: &Resp, name: &str, what: &str) -> f64 {
    let header = r.server_timing.as_deref().unwrap_or("");
    let Some(part) = header.split(", ").find(|p| p.starts_with(&format!("{name};"))) else { return 0.0 };
    let Some(end) = part.find(what) else { return 0.0 };
    let digits: String = part[..end].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
    digits.chars().rev().collect::<String>().parse().unwrap_or(0.0)
}

fn page(reader: &User, author_db: usize) -> Page {
    let t = Instant::now();
    let r = reader.get("/v1/feed?limit=20");
    let took = ms(t.elapsed());
    assert_eq!(r.status, 200, "{}", r.body);
    let db = format!("d1-{author_db}");
    Page {
        ms: took,
        author_db: figure(&r, &db, "statements"),
        author_db_rows: figure(&r, &db, "rows read"),
        statements: figure(&r, "d1", "statements"),
        do_calls: figure(&r, "do", "calls"),
    }
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// A side's figures: latency against the stack's floor, and the storage figures per page. On
/// the author's database a replica-served page's statements are 0 (from memory), 1 (the
/// replica renewed its lease), 3 or 4 (it re-read its rows: a rebuild or the counts refresh,
/// after a renewal that saw the counter move) or anything else (the page read the author from
/// D1); on the twin read from D1 the same counts mean nothing (its hydration).
fn summary(pages: &[Page], floor: &Value) -> Value {
    let col = |f: fn(&Page) -> f64| pages.iter().map(f).collect::<Vec<f64>>();
    let (lat, on_author) = (col(|p| p.ms), col(|p| p.author_db));
    let count = |f: fn(f64) -> bool| on_author.iter().filter(|s| f(**s)).count();
    let (p50, p99) = (pct(&lat, 50.0), pct(&lat, 99.0));
    json!({
        "n": pages.len(),
        "p50": p50, "p99": p99,
        "x_floor_p50": p50 / num(&floor["p50"]), "x_floor_p99": p99 / num(&floor["p99"]),
        "author_db_statements": {
            "mean": mean(on_author.iter().copied()),
            "p50": pct(&on_author, 50.0),
            "max": on_author.iter().copied().fold(0.0, f64::max),
            "zero": count(|s| s == 0.0),
            "lease_renewals": count(|s| s == 1.0),
            "reloads": count(|s| s == 3.0 || s == 4.0),
            "other": count(|s| s != 0.0 && s != 1.0 && s != 3.0 && s != 4.0),
        },
        "author_db_rows_read_mean": mean(pages.iter().map(|p| p.author_db_rows)),
        "statements": { "mean": mean(pages.iter().map(|p| p.statements)), "p50": pct(&col(|p| p.statements), 50.0) },
        "do_calls": { "mean": mean(pages.iter().map(|p| p.do_calls)), "p50": pct(&col(|p| p.do_calls), 50.0) },
    })
}

/// The author's replica count as the directory has it (`null`: none).
fn replicas_of(author: &User) -> Value {
    let body = json!({ "author_id": author.id });
    admin("POST", "/v1/admin/test/replica_fault", Some(&body)).expect(200)["replicas"].clone()
}

/// One twin: the author and its followers.
struct Twin {
    author: User,
    followers: Arc<Vec<User>>,
}

/// Both twins on the actors' database, with their older posts; their followers and the
/// ordinary authors on the others (so every statement counted on the twins' database is a
/// twin's). Every follower follows its twin (but the second twin's last) and 3 ordinary
/// authors, and holds a window; then the twins and the ordinary authors publish.
fn setup(n: usize, quiet: &dyn Fn()) -> Option<(usize, Twin, Twin)> {
    let (_, map) = shard_map();
    let mut pool = Pool::new(map, databases());
    if pool.placed.len() < 2 {
        return None;
    }
    let author_db = pool.actor_home();
    let others: Vec<usize> = pool.placed.iter().copied().filter(|d| *d != author_db).collect();
    let homes = |k: usize| (0..k).map(|i| others[i % others.len()]).collect::<Vec<usize>>();
    let twins = Arc::new(pool.users_on(&[author_db, author_db]));
    let ordinary = Arc::new(pool.users_on(&homes(ORDINARY_AUTHORS)));
    let followers = Arc::new(pool.users_on(&homes(2 * n)));
    let now = now_secs();
    let t = twins.clone();
    parallel(8, 2 * IMPORTED_POSTS, move |i| {
        let at = edgefeed::domain::time::format_rfc3339((now - 600 - (i as i64 / 2) * 60) * 1000);
        import_post(&t[i % 2], &format!("older post {}", i / 2), "public", &at);
    });
    let (f, o, t) = (followers.clone(), ordinary.clone(), twins.clone());
    parallel(8, 2 * n, move |i| {
        if i != 2 * n - 1 {
            f[i].follow(&t[i / n]);
        }
        for k in 0..ORDINARY_FOLLOWED {
            f[i].follow(&o[(i + k * 3) % ORDINARY_AUTHORS]);
        }
        activate(&f[i]);
    });
    for i in 0..PUBLISHED_POSTS {
        for twin in twins.iter() {
            twin.publish(&format!("a twin's post {i}"), "public");
        }
    }
    for (k, o) in ordinary.iter().enumerate() {
        for i in 0..ORDINARY_POSTS {
            o.publish(&format!("ordinary author {k}'s post {i}"), "public");
        }
    }
    quiet();
    let twin = |i: usize| Twin {
        author: twins[i].clone(),
        followers: Arc::new(followers[i * n..(i + 1) * n].to_vec()),
    };
    Some((author_db, twin(0), twin(1)))
}

/// Promotes the hot twin (a reconciliation pass), then gives the other its last follower, and
/// waits until every hot follower's page is served by a replica (a replica's first read after
/// promotion builds it; the next puts nothing on the author's database).
fn promote(author_db: usize, hot: &Twin, cold: &Twin, quiet: &dyn Fn()) -> (Value, Value) {
    let replicas = poll("the hot author promoted to replicas", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        replicas_of(&hot.author).as_u64()
    });
    let cold_at_pass = replicas_of(&cold.author);
    cold.followers[cold.followers.len() - 1].follow(&cold.author);
    quiet();
    for reader in hot.followers.iter() {
        poll("the follower's page served by a replica", DEADLINE, || {
            (page(reader, author_db).author_db == 0.0).then_some(())
        });
    }
    (json!(replicas), cold_at_pass)
}

/// The scenario's figures (`r["hot"]`): `floor` is the stack's health floor; `quiet` waits
/// for the fan-out to drain; `progress(phase, done, total)`.
pub fn measure(
    full: bool,
    samples: usize,
    floor: &Value,
    quiet: &dyn Fn(),
    progress: &dyn Fn(&'static str, usize, usize),
) -> Value {
    let n = followers(full);
    let Some((author_db, hot, cold)) = setup(n, quiet) else {
        return json!({ "skipped": "needs at least 2 databases" });
    };
    let before_pass = [replicas_of(&hot.author), replicas_of(&cold.author)];
    let (replicas, cold_at_pass) = promote(author_db, &hot, &cold, quiet);
    let (mut from_d1, mut from_replicas) = (Vec::new(), Vec::new());
    for i in 0..samples {
        progress("hot author: followers' page 1, from D1 and from replicas", i + 1, samples);
        // Alternating which goes first, so neither always follows the other.
        if i % 2 == 0 {
            from_d1.push(page(&cold.followers[i % n], author_db));
            from_replicas.push(page(&hot.followers[i % n], author_db));
        } else {
            from_replicas.push(page(&hot.followers[i % n], author_db));
            from_d1.push(page(&cold.followers[i % n], author_db));
        }
    }
    let cold_after = replicas_of(&cold.author);
    let (b, a) = (summary(&from_d1, floor), summary(&from_replicas, floor));
    json!({
        "followers": n,
        "ordinary_authors": ORDINARY_AUTHORS,
        "ordinary_followed": ORDINARY_FOLLOWED,
        "author_posts": AUTHOR_POSTS,
        "author_db": author_db,
        "replicas_before_pass": before_pass,
        "replicas": replicas,
        "twin_replicas_at_pass": cold_at_pass,
        "twin_replicas_after_samples": cold_after,
        "after_x_before_p50": num(&a["p50"]) / num(&b["p50"]),
        "before": b,
        "after": a,
    })
}

/// Latency of one side, against the stack's floor.
fn lat(p: &Value) -> String {
    format!(
        "p50 {:.1} ms ({:.2}x floor), p99 {:.1} ms ({:.2}x floor)",
        num(&p["p50"]),
        num(&p["x_floor_p50"]),
        num(&p["p99"]),
        num(&p["x_floor_p99"])
    )
}

/// Rows read on the author's database, statements in all and object calls, per page.
fn storage(p: &Value) -> String {
    format!(
        "{:.1} rows read; {:.1} statements in all; {:.1} object calls",
        num(&p["author_db_rows_read_mean"]),
        num(&p["statements"]["mean"]),
        num(&p["do_calls"]["mean"]),
    )
}

/// The verdict: neither twin had replicas before the pass, the twin read from D1 had none
/// through the samples and its pages read the author's database; the replicated author's pages
/// put 0 statements there but a replica's own lease renewal or reload (none read the author
/// from D1), and their p50 is at most 1.5x the twin's.
fn verdict(h: &Value) -> bool {
    let (on_b, on_a) = (&h["before"]["author_db_statements"], &h["after"]["author_db_statements"]);
    let unpromoted = |v: &Value| v.is_null();
    h["replicas_before_pass"].as_array().is_some_and(|v| v.iter().all(unpromoted))
        && unpromoted(&h["twin_replicas_at_pass"])
        && unpromoted(&h["twin_replicas_after_samples"])
        && num(&on_b["p50"]) > 0.0
        && on_a["p50"] == 0.0
        && on_a["other"] == 0
        && num(&h["after_x_before_p50"]) <= 1.5
}

/// The scenario's two table rows' cells for one stack's figures: (before, after, verdict).
pub fn cells(f: &Value) -> (String, String, Option<bool>) {
    let h = &f["hot"];
    if h.is_null() || h.get("skipped").is_some() {
        let why = h["skipped"].as_str().unwrap_or("not run").to_string();
        return (why.clone(), why, None);
    }
    let (b, a) = (&h["before"], &h["after"]);
    let (on_b, on_a) = (&b["author_db_statements"], &a["author_db_statements"]);
    let before = format!(
        "{}; on the author's database {:.2} statements per page (p50 {}), {}",
        lat(b),
        num(&on_b["mean"]),
        on_b["p50"],
        storage(b)
    );
    let after = format!(
        "{}; on the author's database {:.2} statements per page (0 on {}/{} pages, {} lease renewals, {} \
         reloads, {} D1 reads), {}; {} replicas; p50 {:.2}x before's",
        lat(a),
        num(&on_a["mean"]),
        on_a["zero"],
        a["n"],
        on_a["lease_renewals"],
        on_a["reloads"],
        on_a["other"],
        storage(a),
        h["replicas"],
        num(&h["after_x_before_p50"]),
    );
    (before, after, Some(verdict(h)))
}
