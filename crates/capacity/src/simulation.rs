//! The model's side of the simulation that checks it (`./scripts/bench capacity --simulate`:
//! `benches/capacity_runs/simulate.rs` drives a seeded graph with a hot author through local
//! stacks and measures every phase): what the model predicts for a phase, the predictions of a
//! saved run made again by the model as it is now (`--simulate-replay`, no stack), and the
//! check's table, measured against predicted.

use serde_json::{json, Value};

use crate::model::{self, Burst, Costs, Limits, Mode, PathMix, Policy, Prices, TimelineMix, Work, Workload};

/// Databases of each simulated stack (users land on them by the real id routing).
pub const DATABASES: usize = 16;
/// Databases each data-plane script binds (#40, `scripts/wrangler-config P --per-script M`):
/// the simulated stacks are a front Worker and two data scripts of 8 databases.
pub const SCRIPT_DATABASES: usize = 8;
/// `FANOUT_SEGMENT_SECONDS` and `FANOUT_CHUNK_SECONDS` on the simulated stacks: one chunk a
/// segment, so the hot author's 2,000 pushed followers (push mode) fan out as 4 segments of one
/// chunk of 500 side by side (`domain/fanout_segments.rs::segments_for`), as a 10M-follower
/// post's 20,000 chunks run as segments at the production vars.
pub const FANOUT_SEGMENT_SECONDS: &str = "1";
pub const FANOUT_CHUNK_SECONDS: &str = "1";
/// Above it: `HOT_AUTHOR_FOLLOWERS` (the hot-range cache) and `HOT_REPLICA_FOLLOWERS` (the
/// replicas, where built) on the simulated stacks.
pub const HOT_THRESHOLD: &str = "1000";
/// `PUSH_MAX_FOLLOWERS` on the simulated stacks: under the hot author's followers, so hybrid
/// pulls it for most of them as the headline's celebrities are pulled (push mode ignores it).
pub const PUSH_CAP: usize = 500;
/// A phase's measured figure on a database agrees with the model when within this share...
pub const TOLERANCE: f64 = 0.20;
/// ... or within this many units over the whole phase (a handful of rows is noise).
pub const FLOOR: f64 = 5.0;

/// What the model predicts for a phase, in the measured shape.
pub struct Predicted {
    pub control: Work,
    pub typical: Work,
    pub hot: Work,
    pub do_calls: f64,
    pub window: Work,
    /// The hot author's post as the model's burst (statements on its database, chunks,
    /// seconds) at the phase's workload: beside the measured parallel fan-out.
    pub burst: Burst,
}

/// `secs`: how long the phase ran. The model is given a phase's counts as one second's rates,
/// but the replicas' leases and refreshes go by time (at most one of each per lease and
/// refresh period, while reads come): over the feed reads they are the model's per-second
/// figure times the phase's seconds.
pub fn predict(costs: &Costs, w: &Workload, secs: f64) -> Predicted {
    predict_run(costs, w, secs, None)
}

/// [`predict`] with the consumer batches the phase ran, when measured (the figures' flushes
/// follow them: [`profiled_flushes`]); `None` estimates them at [`LOCAL_MESSAGES_PER_BATCH`].
pub fn predict_run(costs: &Costs, w: &Workload, secs: f64, batches: Option<f64>) -> Predicted {
    // The simulation drives no public or tag timeline page, whatever defaults its workloads were
    // built from. Its delivery paths are the workload's: none but in the paths phase, which
    // sets the drawn mix (a run saved before that phase carried the headline's mix on every
    // phase while driving none: `replay` clears it).
    let w = &Workload { timelines: TimelineMix::default(), ..w.clone() };
    // The hot author is served from replicas (promoted by the setup's reconciliation pass).
    let hot_followers = HOT_THRESHOLD.parse().unwrap_or(1_000.0);
    let policy = Policy {
        push_max_followers: PUSH_CAP as f64,
        hot_replicas: true,
        hot_followers,
        databases_per_script: SCRIPT_DATABASES as f64,
        ..Policy::default()
    };
    let plan = model::plan(costs, w, &policy, &Limits::default(), &Prices::default(), DATABASES as f64);
    // The window objects' rows: per delivery and per page read, as the bill counts them
    // (pull pages call no window), from the table as the design prices it (#40's activity at
    // day granularity: a page-1 read no longer writes the window's row but the reader's first
    // of the day; the raw table's row a page predicted 304 rows written where 0 were).
    let reads = if w.mode == Mode::Pull { 0.0 } else { w.feed_reads_per_s };
    let rows = model::design_costs(costs, w, &policy).window;
    let window = rows.delivery.scale(plan.window_writes_per_s).plus(rows.page(w.page_n_share).scale(reads));
    let leases = if w.feed_reads_per_s > 0.0 {
        plan.hot.top_lease.scale((secs - 1.0).max(0.0))
    } else {
        Work::default()
    };
    let (own, control) = if costs.timelines.measured { discovery_as_driven(w) } else { Default::default() };
    let own = own.plus(profiled_flushes(costs, &plan, batches));
    Predicted {
        control: plan.control.work.plus(own).plus(control),
        typical: plan.typical.work.plus(own),
        hot: plan.celebrity.work.plus(leases).plus(own),
        do_calls: plan.object_requests_per_s + plan.replica_requests_per_s,
        window,
        burst: plan.burst,
    }
}

/// Messages a consumer batch carried on the simulated stacks (wrangler dev's local queue), for
/// a run that did not save its batches: the hot posts, each alone, ran 4 chunks in 2 batches
/// (push) and 2 in 2 (hybrid); the run of 2026-12-05's phases, their statements beyond the
/// model less the 4 a chunk that `design.rs` takes off (the run predates that change), fit
/// 2.4 to 5 messages a batch.
pub const LOCAL_MESSAGES_PER_BATCH: f64 = 3.0;

/// The figures' flushes as the simulated stacks run them: with `PROFILE_IO` every consumer
/// batch flushes its counters (`services/queue/mod.rs::flush_figures`; in production at most
/// one an isolate every `CONSUMER_FLUSH_SECONDS`, as the plan charges), a statement each on a
/// database picked at random (`services/tally.rs::spread_database`): on every database
/// alike, `consumer_flush` a batch over P, less the plan's own share of them. Uncharged, the
/// publishes were 128 statements a database over the model in push (384 / 256) and the
/// comments 26 (141 / 115), with the chunks' 4 statements that `design.rs` takes off
/// (the run predates it: 54 and 16 a database) the rest of it.
fn profiled_flushes(costs: &Costs, plan: &model::Plan, batches: Option<f64>) -> Work {
    let batches = batches.unwrap_or(plan.queue_messages_per_s / LOCAL_MESSAGES_PER_BATCH);
    let charged = plan
        .typical_shares
        .iter()
        .find(|s| s.operation == model::CONSUMER_FLUSH_SHARE)
        .map_or(0.0, |s| s.statements_per_s);
    let flushes = costs.consumer_flush.scale(batches / DATABASES as f64);
    Work { statements: flushes.statements - charged, ..flushes }
}

/// The discovery refresh as the simulation drives it, against the model's steady rate: what to
/// add on each database and on the control database. The model prices the refresh by time (each
/// database's rankings every `DISCOVERY_REFRESH_SECONDS`, reading a day of public posts at the
/// workload's rate), but a phase's counts are given as one second's rates: a day at 210 posts
/// a second is 18M posts, and the publish phase was predicted 3,780 rows read a database that
/// nothing reads (no cron runs in it; measured 1,784 in all). The simulation's cron phase
/// drives the admin pass (`POST /v1/admin/reconcile`), which refreshes every database at once
/// (`Refresh::Now`), every pass: a refresh per database per pass, each replacing the
/// database's rows on the control database.
fn discovery_as_driven(w: &Workload) -> (Work, Work) {
    let p = DATABASES as f64;
    let steady_own = model::refresh_own(w, p).scale(1.0 / model::DISCOVERY_REFRESH_SECONDS);
    let steady_control = model::refresh_control().scale(p / model::DISCOVERY_REFRESH_SECONDS);
    let passes = w.cron_passes_per_s;
    let own = model::refresh_own(w, p).scale(passes).plus(steady_own.scale(-1.0));
    let control = model::refresh_control().scale(p * passes).plus(steady_control.scale(-1.0));
    (own, control)
}

/// A figure of D1 work as the saved run holds it.
pub fn work_json(w: Work) -> Value {
    json!({ "statements": w.statements, "rows_read": w.rows_read, "rows_written": w.rows_written })
}

/// A phase's prediction as the saved run holds it (beside its measurement).
pub fn predicted_json(p: &Predicted) -> Value {
    json!({
        "control": work_json(p.control),
        "typical": work_json(p.typical),
        "hot": work_json(p.hot),
        "do_calls": p.do_calls,
        "window_rows": work_json(p.window),
        "burst": p.burst,
    })
}

/// The predictions of a saved run made again by the model as it is now, the measurements
/// kept (`./scripts/bench capacity --simulate-replay`: no stack).
pub fn replay(costs: &Costs, sim: &mut Value) {
    // Runs before the paths phase drove originals only but saved the headline's path mix.
    let drives_paths = sim["drives_paths"].as_bool().unwrap_or(false);
    for m in sim["modes"].as_array_mut().into_iter().flatten() {
        for phase in m["phases"].as_array_mut().into_iter().flatten() {
            let mut w: Workload =
                serde_json::from_value(phase["workload"].clone()).expect("a saved workload");
            if !drives_paths {
                w.paths = PathMix::default();
            }
            // Runs before phases were timed: one second.
            let secs = phase["measured"]["secs"].as_f64().unwrap_or(1.0);
            // Runs before the batches were saved: estimated.
            let batches = phase["measured"]["batches"].as_f64();
            phase["predicted"] = predicted_json(&predict_run(costs, &w, secs, batches));
        }
    }
}

fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// Whether a measured figure and its prediction agree (within the share or the floor).
pub fn within(m: f64, p: f64) -> bool {
    (m - p).abs() <= (TOLERANCE * m.abs().max(p.abs())).max(FLOOR)
}

/// The simulation's check, per mode: per phase and figure, measured / predicted on the
/// control, a typical and the hot author's database, and the Durable Object calls and rows.
pub fn table(sim: &Value) -> String {
    let mut out = String::new();
    for m in sim["modes"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\n### {} mode\n\nSeed {}, {} users on {} databases ({:?} each), {} follows, hot author on DB_{} with {} followers, {:.0} s.\n\n\
             | phase | figure | control DB | typical DB | hot author's DB | Durable Objects | within {:.0}% |\n|---|---|---|---|---|---|---|\n",
            m["mode"].as_str().unwrap_or("?"),
            sim["seed"],
            m["users"],
            sim["databases"],
            m["users_per_db"].as_array().map_or_else(Vec::new, |a| a.iter().map(|v| v.as_u64().unwrap_or(0)).collect()),
            m["follows"],
            m["hot_db"],
            m["hot_followers"],
            m["secs"].as_f64().unwrap_or(0.0),
            100.0 * TOLERANCE,
        ));
        for phase in m["phases"].as_array().into_iter().flatten() {
            out.push_str(&phase_rows(phase));
        }
        for phase in m["phases"].as_array().into_iter().flatten() {
            out.push_str(&details(phase));
        }
    }
    out
}

/// The hot author's measured fan-outs beside the model's burst, and the paths phase's draw.
fn details(phase: &Value) -> String {
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut out = String::new();
    let burst = &phase["predicted"]["burst"];
    for (i, h) in phase["details"]["hot_fanouts"].as_array().into_iter().flatten().enumerate() {
        out.push_str(&format!(
            "\nHot post {}: {:.1} s to the last window ({:.2} s the request), {} segments planned, {} chunks in {} \
             consumer batches, {} deliveries; the author's database: {} statements by the request, {} by the \
             consumer ({:.1} a chunk). Model's burst: {} chunks, {} delivered, {:.0} statements there, {:.2} s.\n",
            i + 1,
            f(&h["secs_to_last_window"]),
            f(&h["request_secs"]),
            h["segments_planned"],
            f(&h["chunks"]),
            f(&h["batches"]),
            f(&h["deliveries"]),
            f(&h["request_on_author_db"]["statements"]),
            f(&h["consumer_on_author_db"]["statements"]),
            f(&h["author_db_statements_per_chunk"]),
            f(&burst["chunks"]),
            f(&burst["delivered"]),
            f(&burst["statements"]),
            f(&burst["seconds"]),
        ));
    }
    let d = &phase["details"];
    if d["boosts"].is_number() {
        out.push_str(&format!(
            "\nPaths phase: {} boosts, {} replies (their repliers' {} followers, {} of whom follow the account \
             replied to: reach {:.2}), {} posts with a mention; {} deliveries, {} chunks.\n",
            d["boosts"], d["replies"], d["repliers_followers"], d["reply_reached"], f(&d["reply_reach"]),
            d["mentions"], f(&phase["measured"]["deliveries"]), f(&phase["measured"]["chunks"]),
        ));
    }
    out
}

fn phase_rows(phase: &Value) -> String {
    let (me, pr) = (&phase["measured"], &phase["predicted"]);
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut out = String::new();
    for (i, figure) in ["statements", "rows_read", "rows_written"].iter().enumerate() {
        let mut ok = true;
        let mut cell = |m: f64, p: f64| {
            ok &= within(m, p);
            format!("{} / {}", num(m), num(p))
        };
        let dbs: Vec<String> = ["control", "typical", "hot"]
            .iter()
            .map(|db| cell(f(&me[db][figure]), f(&pr[db][figure])))
            .collect();
        // Object calls beside statements; the window objects' rows beside D1's.
        let objects = match *figure {
            "statements" => cell(f(&me["do_calls"]), f(&pr["do_calls"])) + " calls",
            other => cell(f(&me["window_rows"][other]), f(&pr["window_rows"][other])) + " window rows",
        };
        let name = if i == 0 {
            format!("{} ({})", phase["phase"].as_str().unwrap_or("?"), phase["requests"])
        } else {
            String::new()
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {objects} | {} |\n",
            figure.replace('_', " "),
            dbs[0],
            dbs[1],
            dbs[2],
            if ok { "yes" } else { "**no**" }
        ));
    }
    out
}
