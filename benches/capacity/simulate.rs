//! The simulation that checks the model (`./scripts/bench capacity --simulate`): a seeded
//! power-law follow graph, scaled down, built and driven through the real API on a local
//! stack with 4 databases (users land on shards by the real id routing), every request's
//! per-database statements from `Server-Timing` and the consumer's from its `PROFILE_IO`
//! counters; then the model, fed the measured cost table and this workload's counts, predicts
//! each phase's statements on the control database and on a typical one, and the two are
//! compared.

use std::time::Instant;

use serde_json::{json, Value};

use super::model::{self, Costs, Limits, Mode, Policy, Prices, Workload};
use super::timing::timing_of;
use crate::common::*;
use crate::placement::{shard_map, Pool};
use crate::rng::Rng;

const DATABASES: usize = 4;
const SEED: u64 = 20_261_201;
const USERS: usize = 400;
/// Follows per user: uniform on 1..=2*MEAN-1.
const MEAN_FOLLOWS: usize = 6;
/// Exponent of the follower-count density the graph is drawn from.
const TAIL: f64 = 2.2;
const HISTORY_POSTS: usize = 2;
const POSTS: usize = 120;
const READS: usize = 300;
const PAGE_N_READS: usize = 100;
const LIKES: usize = 150;
const COMMENTS: usize = 60;
const CRON_PASSES: usize = 3;
/// A phase's measured statements on a database agree with the model when within this share.
pub const TOLERANCE: f64 = 0.25;

/// On `0..n`, uniformly (by scaling, as the committed run drew it).
fn pick(rng: &mut Rng, n: usize) -> usize {
    (rng.unit() * n as f64) as usize % n.max(1)
}

/// Who follows whom: each user's follows drawn without repeats, an author picked with
/// probability proportional to a Pareto weight (shape `TAIL - 1`, so follower counts follow
/// `x^-TAIL`).
fn draw_graph(rng: &mut Rng) -> Vec<Vec<usize>> {
    let weights: Vec<f64> = (0..USERS).map(|_| (1.0 - rng.unit()).powf(-1.0 / (TAIL - 1.0))).collect();
    let total: f64 = weights.iter().sum();
    (0..USERS)
        .map(|me| {
            let want = 1 + pick(rng, 2 * MEAN_FOLLOWS - 1);
            let mut picked = Vec::new();
            while picked.len() < want {
                let mut x = rng.unit() * total;
                let mut author = 0;
                while author + 1 < USERS && x >= weights[author] {
                    x -= weights[author];
                    author += 1;
                }
                if author != me && !picked.contains(&author) {
                    picked.push(author);
                }
            }
            picked
        })
        .collect()
}

/// Per-database statements a phase cost: its requests' and the consumer's.
#[derive(Debug, Clone, Default)]
struct Measured {
    per_db: Vec<f64>,
    requests: usize,
}

impl Measured {
    fn add_request(&mut self, r: &Resp) {
        let t = timing_of(r.server_timing.as_deref().unwrap_or(""));
        for (i, (work, _)) in t.per_db.iter().enumerate().take(DATABASES) {
            self.per_db[i] += work.statements;
        }
        self.requests += 1;
    }
}

fn consumer_statements() -> Vec<f64> {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    (0..DATABASES)
        .map(|i| stats["profile_io"][format!("io_fanout_db{i}_statements")].as_f64().unwrap_or(0.0))
        .collect()
}

use crate::measure::drained;

/// Runs one phase: `requests` returns each request's response; the consumer's statements
/// are what its counters grew by until everything drained.
fn phase(name: &str, requests: impl FnOnce() -> Vec<Resp>) -> (String, Measured) {
    drained();
    let before = consumer_statements();
    let mut m = Measured { per_db: vec![0.0; DATABASES], requests: 0 };
    for r in requests() {
        assert!(r.status < 300, "{name}: {} {}", r.status, r.body);
        m.add_request(&r);
    }
    drained();
    for (i, after) in consumer_statements().into_iter().enumerate() {
        m.per_db[i] += after - before[i];
    }
    (name.to_string(), m)
}

/// What the model predicts for a phase: the control database's statements and a typical
/// database's (the mean of the others), from the workload of that phase alone.
fn predict(costs: &Costs, w: &Workload) -> (f64, f64) {
    let plan =
        model::plan(costs, w, &Policy::default(), &Limits::default(), &Prices::default(), DATABASES as f64);
    (plan.control.work.statements, plan.typical.work.statements)
}

fn quiet_workload(graph: &[Vec<usize>]) -> Workload {
    let follows = graph.iter().map(Vec::len).sum::<usize>() as f64 / USERS as f64;
    Workload {
        users: USERS as f64,
        daily_active: 1.0,
        weekly_active: 1.0,
        window_holders: 1.0,
        follows_per_user: follows,
        tail: TAIL,
        celebrities: Vec::new(),
        celebrity_posts_per_day: 0.0,
        posts_per_s: 0.0,
        feed_reads_per_s: 0.0,
        page_n_share: 0.0,
        likes_per_s: 0.0,
        comments_per_s: 0.0,
        follows_per_s: 0.0,
        live_share: 0.0,
        hottest_post_like_share: 0.0,
        peak_to_mean: 1.0,
        retention_days: 0.0,
        cron_passes_per_s: 0.0,
        mode: Mode::Push,
    }
}

type Users = std::sync::Arc<Vec<User>>;

/// One phase's measured statements and the workload the model is given for it.
struct Ran {
    name: String,
    measured: Measured,
    workload: Workload,
}

fn ran((name, measured): (String, Measured), workload: Workload) -> Ran {
    Ran { name, measured, workload }
}

/// The users registered, two old posts each imported, every window opened; their homes.
fn populate() -> (Users, Vec<usize>) {
    let users: Users = std::sync::Arc::new(parallel(8, USERS, |_| register("sim")));
    let now = now_secs();
    let u = users.clone();
    parallel(8, USERS * HISTORY_POSTS, move |i| {
        let at = edgefeed::domain::time::format_rfc3339((now - 3_600 - i as i64) * 1000);
        import_post(&u[i % USERS], &format!("history {i}"), "public", &at);
    });
    let u = users.clone();
    parallel(8, USERS, move |i| activate(&u[i]));
    let pool = Pool::new(shard_map().1, DATABASES);
    let homes = users.iter().map(|u| pool.home(u)).collect();
    (users, homes)
}

fn follows_phase(users: &Users, graph: &[Vec<usize>], base: &Workload) -> Ran {
    let pairs: Vec<(usize, usize)> =
        graph.iter().enumerate().flat_map(|(me, follows)| follows.iter().map(move |&a| (me, a))).collect();
    let n = pairs.len();
    let (u, p) = (users.clone(), std::sync::Arc::new(pairs));
    let measured = phase("follows", move || {
        parallel(8, p.len(), move |i| u[p[i].0].put(&format!("/v1/me/following/{}", u[p[i].1].id), None))
    });
    ran(measured, Workload { follows_per_s: n as f64, ..base.clone() })
}

fn publish_phase(users: &Users, posters: &[usize], base: &Workload) -> Ran {
    let (u, who) = (users.clone(), std::sync::Arc::new(posters.to_vec()));
    let measured = phase("publishes and their fan-out", move || {
        parallel(4, POSTS, move |i| {
            u[who[i]].post("/v1/posts", json!({ "body": format!("simulated {i}"), "visibility": "public" }))
        })
    });
    ran(measured, Workload { posts_per_s: POSTS as f64, ..base.clone() })
}

/// Page 1 for every reader drawn, and page 2 for the first `PAGE_N_READS` of them.
fn reads_phase(users: &Users, readers: Vec<usize>, base: &Workload) -> Ran {
    let (u, who) = (users.clone(), std::sync::Arc::new(readers));
    let measured = phase("feed reads (page 1 and 2)", move || {
        parallel(8, READS, move |i| {
            let first = u[who[i]].get("/v1/feed?limit=20");
            let mut out = Vec::new();
            if i < PAGE_N_READS {
                if let Some(c) = first.body["next_cursor"].as_str() {
                    out.push(u[who[i]].get(&format!("/v1/feed?limit=20&cursor={c}")));
                }
            }
            out.push(first);
            out
        })
        .into_iter()
        .flatten()
        .collect()
    });
    let page_n = PAGE_N_READS as f64;
    let total = READS as f64 + page_n;
    ran(measured, Workload { feed_reads_per_s: total, page_n_share: page_n / total, ..base.clone() })
}

/// Every poster's newest posts, so the liked posts' databases follow the users'.
fn recent_posts(users: &Users, posters: &[usize]) -> Vec<String> {
    let mut ids = Vec::new();
    for &author in posters {
        let page = users[0].get(&format!("/v1/users/{}/posts?limit=3", users[author].id)).expect(200);
        ids.extend(page["items"].as_array().cloned().unwrap_or_default().iter().map(id_of));
    }
    ids
}

/// Likes, then comments, by drawn users on drawn recent posts.
fn engagement_phases(users: &Users, targets: Vec<(usize, String)>, base: &Workload) -> [Ran; 2] {
    let (u, t) = (users.clone(), std::sync::Arc::new(targets));
    let likes = phase("likes", {
        let (u, t) = (u.clone(), t.clone());
        move || parallel(8, LIKES, move |i| u[t[i].0].put(&format!("/v1/posts/{}/like", t[i].1), None))
    });
    let comments = phase("comments", move || {
        parallel(8, COMMENTS, move |i| {
            let (who, post) = &t[LIKES + i];
            u[*who].post(&format!("/v1/posts/{post}/comments"), json!({ "body": "simulated reply" }))
        })
    });
    [
        ran(likes, Workload { likes_per_s: LIKES as f64, ..base.clone() }),
        ran(comments, Workload { comments_per_s: COMMENTS as f64, ..base.clone() }),
    ]
}

fn cron_phase(base: &Workload) -> Ran {
    let measured = phase("cron passes", || {
        (0..CRON_PASSES).map(|_| call("POST", "/v1/admin/reconcile", Some(ADMIN_TOKEN), None)).collect()
    });
    ran(measured, Workload { cron_passes_per_s: CRON_PASSES as f64, ..base.clone() })
}

/// Each phase measured beside the model's prediction, and the totals.
fn compare(costs: &Costs, runs: &[Ran]) -> (Vec<Value>, Value) {
    let rows: Vec<Value> = runs
        .iter()
        .map(|r| {
            let (control, typical) = predict(costs, &r.workload);
            let m = &r.measured;
            json!({
                "phase": r.name,
                "requests": m.requests,
                "measured_per_db": m.per_db,
                "measured_control": m.per_db[0],
                "measured_typical": m.per_db[1..].iter().sum::<f64>() / (DATABASES - 1) as f64,
                "predicted_control": control,
                "predicted_typical": typical,
            })
        })
        .collect();
    let total = |key: &str| rows.iter().map(|r| r[key].as_f64().unwrap_or(0.0)).sum::<f64>();
    let totals = json!({
        "measured_control": total("measured_control"),
        "predicted_control": total("predicted_control"),
        "measured_typical": total("measured_typical"),
        "predicted_typical": total("predicted_typical"),
    });
    (rows, totals)
}

/// Runs the simulation against a fresh stack; `costs` is the measured table. The draws are
/// made in a fixed order (graph, posters, readers, likes and comments), so a seed is a run.
pub fn run(costs: &Costs) -> Value {
    let started = Instant::now();
    let say = |what: &str| eprintln!("[{:5.0} s] {what}", started.elapsed().as_secs_f64());
    let mut rng = Rng(SEED);
    let graph = draw_graph(&mut rng);
    say("starting a push-mode stack on 4 databases");
    let server = super::measure::start("capacity-sim", "push", "500");
    say("registering, importing history, opening every window");
    let (users, homes) = populate();
    let base = quiet_workload(&graph);
    say("follows");
    let mut runs = vec![follows_phase(&users, &graph, &base)];
    say("publishes");
    let posters: Vec<usize> = (0..POSTS).map(|_| pick(&mut rng, USERS)).collect();
    runs.push(publish_phase(&users, &posters, &base));
    say("feed reads");
    let readers = (0..READS).map(|_| pick(&mut rng, USERS)).collect();
    runs.push(reads_phase(&users, readers, &base));
    say("likes and comments");
    let recent = recent_posts(&users, &posters);
    let targets = (0..LIKES + COMMENTS)
        .map(|_| (pick(&mut rng, USERS), recent[pick(&mut rng, recent.len())].clone()))
        .collect();
    runs.extend(engagement_phases(&users, targets, &base));
    say("cron passes");
    runs.push(cron_phase(&base));
    server.kill();
    let (rows, totals) = compare(costs, &runs);
    json!({
        "seed": SEED,
        "users": USERS,
        "follows": graph.iter().map(Vec::len).sum::<usize>(),
        "users_per_db": (0..DATABASES).map(|db| homes.iter().filter(|&&h| h == db).count()).collect::<Vec<_>>(),
        "tolerance": TOLERANCE,
        "phases": rows,
        "totals": totals,
        "secs": started.elapsed().as_secs_f64(),
    })
}
