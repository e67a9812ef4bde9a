//! Whether a plan fits, the smallest P that does, issue #28's targets, and the candidate
//! configurations the report weighs.

use super::costs::Costs;
use super::plan::plan;
use super::plan_types::{Plan, Share};
use super::workload::{Limits, Mode, Policy, Prices, Workload};

/// Whether a plan keeps every database under the headroom, and if not, what breaks it.
pub fn fits(plan: &Plan, limits: &Limits) -> Result<(), String> {
    let ceiling = limits.d1_statements_per_s * limits.query_headroom;
    let size = limits.d1_bytes * limits.size_headroom;
    // Every database over a headroom, as (how far over, why); the worst one is reported.
    let mut over = Vec::new();
    let cold = plan.largest_cold.map(|(_, load)| load);
    let cold_blame =
        vec![Share { operation: "reads that pull or hydrate it from D1", statements_per_s: 0.0 }];
    let mut databases = vec![
        ("a typical database", &plan.typical, &plan.typical_shares),
        ("the control database (DB_0)", &plan.control, &plan.control_shares),
        ("the most followed celebrity's database", &plan.celebrity, &plan.celebrity_shares),
    ];
    if let Some(load) = cold.as_ref() {
        databases.push(("the largest author's below the hot threshold", load, &cold_blame));
    }
    for (name, load, shares) in databases {
        if load.work.statements > ceiling {
            let blame = shares.first().map_or("?", |s| s.operation);
            let why = format!(
                "{name}: {:.0} statements/s > {ceiling:.0} (most of it: {blame})",
                load.work.statements
            );
            over.push((load.work.statements / ceiling, why));
        }
        if load.bytes > size {
            over.push((
                load.bytes / size,
                format!("{name}: {:.1} GB > {:.1} GB", load.bytes / 1e9, size / 1e9),
            ));
        }
    }
    over.extend(burst_checks(plan, ceiling));
    match over.into_iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
        Some((_, why)) => Err(why),
        None => Ok(()),
    }
}

/// The most followed author's database beside its bursts: its post's fan-out paced to reach
/// every follower within the bound, and its post's first hour of boosts (each booster's fan-out
/// is on the booster's own database). Each over the headroom as (how far over, why).
fn burst_checks(plan: &Plan, ceiling: f64) -> Vec<(f64, String)> {
    let mut over = Vec::new();
    let b = &plan.burst;
    let paced = plan.celebrity.work.statements + b.statements / FANOUT_SECONDS_BOUND;
    if b.delivered > 0.0 && paced > ceiling && plan.celebrity.work.statements <= ceiling {
        let why = format!(
            "the most followed celebrity's database: {:.0} statements/s with its post's fan-out paced over {FANOUT_SECONDS_BOUND:.0} s > {ceiling:.0} (most of it: paging its followers)",
            paced
        );
        over.push((paced / ceiling, why));
    }
    // Its post boosted by its readers, hot boosters among them: the boosts' first hour on its
    // database beside its steady load (each booster's fan-out is on the booster's own).
    let boosted = plan.celebrity.work.statements + plan.boost_burst.first_hour_per_s;
    if boosted > ceiling && plan.celebrity.work.statements <= ceiling {
        let why = format!(
            "the most followed celebrity's database: {boosted:.0} statements/s in its post's first hour of boosts > {ceiling:.0}"
        );
        over.push((boosted / ceiling, why));
    }
    over
}

/// The recommendation: the smallest P that fits, or the account's limit and why even that
/// does not.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub plan: Plan,
    /// `None` when `plan` fits.
    pub why_not: Option<String>,
}

/// The smallest P (up to the account's database limit) that fits, or why none does: the
/// reason the largest P still fails.
pub fn recommend(c: &Costs, w: &Workload, policy: &Policy, limits: &Limits, prices: &Prices) -> Verdict {
    let at = |p: f64| plan(c, w, policy, limits, prices, p);
    let max = limits.databases_per_account;
    // Load per database falls as P grows (each term is over P, or fixed), but the cron probes
    // and some fixed terms need not be monotone: find a count that fits on a grid 5% apart,
    // then bisect below it.
    let grid = std::iter::successors(Some(1.0_f64), |p| (*p < max).then(|| (p * 1.05).ceil().min(max)));
    let mut below = 0.0_f64;
    let mut found = None;
    for p in grid {
        if fits(&at(p), limits).is_ok() {
            found = Some(p);
            break;
        }
        below = p;
    }
    let Some(fitting) = found else {
        return Verdict { plan: at(max), why_not: fits(&at(max), limits).err() };
    };
    let (mut lo, mut hi) = (below, fitting);
    while hi - lo > 1.0 {
        let mid = ((lo + hi) / 2.0).floor();
        if fits(&at(mid.max(1.0)), limits).is_ok() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Verdict { plan: at(hi.max(1.0)), why_not: None }
}

/// One target of issue #28 at a plan: what, whether it holds, the figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub what: &'static str,
    pub pass: bool,
    pub figure: String,
}

/// The hand check's estimate for the replicated design at the headline (#28), USD a month.
pub const HAND_CHECK_USD: (f64, f64) = (700_000.0, 800_000.0);
/// #40's goal for the headline's bill, USD a month, and for the realistic profile's per
/// million users.
pub const BILL_TARGET_USD: f64 = 500_000.0;
pub const PER_MILLION_USERS_TARGET_USD: f64 = 25_000.0;
/// Twitter 2012: its 31M-follower author's post took up to 5 minutes to reach every follower.
pub const FANOUT_SECONDS_BOUND: f64 = 300.0;

/// The targets: every database under its headroom at peak (the hottest author's included),
/// the hottest author's post delivered within the bound without passing it, no
/// per-invocation limit crossed, every Durable Object under its soft limit, the account's
/// database count, and the bill against the hand check.
pub fn targets(plan: &Plan, limits: &Limits) -> Vec<Target> {
    let mut out = database_targets(plan, limits);
    out.extend(timeline_keys_target(plan, limits));
    out.extend(invocation_targets(plan, limits));
    out.extend(object_and_account_targets(plan, limits));
    out.extend(platform_targets(plan, limits));
    out
}

/// The databases' targets: the busiest and the hottest author's under the headroom at peak,
/// and that author's post delivered within the bound.
fn database_targets(plan: &Plan, limits: &Limits) -> Vec<Target> {
    let ceiling = limits.d1_statements_per_s * limits.query_headroom;
    let pct = |x: f64| format!("{:.0}%", 100.0 * x / limits.d1_statements_per_s);
    let mut dbs = vec![
        ("typical", plan.typical.work.statements),
        ("control", plan.control.work.statements),
        ("hottest author's", plan.celebrity.work.statements),
    ];
    if let Some((_, load)) = plan.largest_cold {
        dbs.push(("largest below the hot threshold", load.work.statements));
    }
    let worst = dbs.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(("", 0.0));
    let b = &plan.burst;
    vec![
        Target {
            what: "every database under 50% of its statements at peak",
            pass: worst.1 <= ceiling,
            figure: format!("busiest: the {} database, {:.0}/s ({})", worst.0, worst.1, pct(worst.1)),
        },
        Target {
            what: "the hottest author's database under 50% at peak",
            pass: plan.celebrity.work.statements <= ceiling,
            figure: format!(
                "{:.0}/s ({})",
                plan.celebrity.work.statements,
                pct(plan.celebrity.work.statements)
            ),
        },
        Target {
            what: "its post reaches every follower within 5 minutes, its database under 50% (paced)",
            pass: b.seconds <= FANOUT_SECONDS_BOUND && plan.celebrity.work.statements < ceiling,
            figure: format!(
                "{:.0} statements in {:.0} s (+{:.0}/s meanwhile); unpaced: {:.0} s at 100%",
                b.statements, b.seconds, b.added_per_s, b.seconds_at_budget
            ),
        },
        boost_target(plan, ceiling),
    ]
}

/// The public and tag timelines' keys (#42), each on one database whatever P is: a public
/// stripe's, the public listeners', the hottest tag's, with a typical database's load. Not a
/// term of `fits` (no P moves them); none for a table without the timelines measured.
fn timeline_keys_target(plan: &Plan, limits: &Limits) -> Option<Target> {
    let k = &plan.hot_keys;
    if *k == super::timelines::HotKeys::default() {
        return None;
    }
    let keys = [
        ("a public stripe's", k.stripe),
        ("the public listeners'", k.listeners),
        ("the hottest tag's", k.hottest_tag),
    ];
    let (name, worst) = keys.iter().max_by(|a, b| a.1.total_statements.total_cmp(&b.1.total_statements))?;
    Some(Target {
        what: "the public and tag timelines' keys' databases under 50% at peak (no P spreads them)",
        pass: keys.iter().all(|(_, key)| !key.binds),
        figure: format!(
            "busiest: {name} database, {:.0}/s ({:.0}%)",
            worst.total_statements,
            100.0 * worst.total_statements / limits.d1_statements_per_s
        ),
    })
}

/// A hot author's post boosted by hot boosters: each boost is delivered by the booster's own
/// edges from the booster's database (and replicas); the original's database takes only the
/// mirror row and the notification, so no second celebrity-sized burst lands on it.
fn boost_target(plan: &Plan, ceiling: f64) -> Target {
    let (k, load) = (&plan.boost_burst, plan.celebrity.work.statements);
    Target {
        what: "its post boosted by hot boosters: no second celebrity-sized burst on one database",
        pass: load + k.first_hour_per_s <= ceiling && k.booster_statements <= k.original_statements,
        figure: format!(
            "{:.0} boosts: {:.0} statements on its database (+{:.1}/s in the first hour, {:.0}/s with its load) against its own post's {:.0}; a {:.0}-follower booster's fan-out: {:.0} statements on the booster's database",
            k.boosts,
            k.statements,
            k.first_hour_per_s,
            load + k.first_hour_per_s,
            k.original_statements,
            k.booster_followers,
            k.booster_statements,
        ),
    }
}

/// The per-invocation limits: a feed page, a fan-out consumer batch, the queues, the cron.
fn invocation_targets(plan: &Plan, limits: &Limits) -> Vec<Target> {
    let q = limits.d1_queries_per_invocation;
    vec![
        Target {
            what: "feed page: subrequests and D1 queries per invocation",
            pass: plan.page_subrequests <= limits.subrequests && plan.page_d1_queries <= q,
            figure: format!(
                "{:.0} / {:.0} (limits {:.0} / {q:.0})",
                plan.page_subrequests, plan.page_d1_queries, limits.subrequests
            ),
        },
        Target {
            what: "fan-out consumer invocation (full chunks): subrequests and D1 queries",
            pass: plan.consumer_subrequests <= limits.subrequests && plan.consumer_d1_queries <= q,
            figure: format!(
                "{:.0} / {:.0} at {} messages a batch (largest batch under {q:.0} D1 queries: {})",
                plan.consumer_subrequests,
                plan.consumer_d1_queries,
                plan.fanout_batch,
                plan.fanout_batch_that_fits
            ),
        },
        Target {
            what: "queues: messages and fan-out consumers within the queues built (Q = 2)",
            pass: queues_needed(plan, limits) <= 2.0,
            figure: format!(
                "{:.0} messages/s, {:.0} consumers busy: {} queues needed",
                plan.queue_messages_per_s,
                plan.consumers_busy,
                queues_needed(plan, limits)
            ),
        },
        Target {
            what: "cron invocation: subrequests",
            pass: plan.cron_subrequests <= limits.subrequests,
            figure: format!("{:.0}", plan.cron_subrequests),
        },
    ]
}

/// Every Durable Object under its soft limit, the account's database count, the bill.
fn object_and_account_targets(plan: &Plan, limits: &Limits) -> Vec<Target> {
    vec![
        Target {
            what: "every Durable Object under ~1,000 requests/s",
            pass: plan.hottest_object_requests_per_s <= limits.object_requests_per_s,
            figure: format!(
                "hottest: {} at {:.0}/s (replica {:.0}, like serializer {:.0}, window {:.2})",
                plan.hottest_object,
                plan.hottest_object_requests_per_s,
                plan.hot.hottest_replica_rps,
                plan.like_object_requests_per_s,
                plan.window_requests_per_s
            ),
        },
        Target {
            what: "databases within the account's limit",
            pass: plan.databases <= limits.databases_per_account,
            figure: format!("{} of {}", plan.databases, limits.databases_per_account),
        },
        Target {
            what: "bill at or under $500k a month",
            pass: plan.monthly_usd <= BILL_TARGET_USD,
            figure: format!("${:.0}k a month", plan.monthly_usd / 1e3),
        },
    ]
}

/// #40's platform targets: bindings per Worker script and scripts per account; a 10M-follower
/// post in every active follower's window within the bound; a year's D1 storage under the
/// account's cap as raised.
fn platform_targets(plan: &Plan, limits: &Limits) -> Vec<Target> {
    let b = &plan.burst_every_active;
    let year = plan.typical.bytes * plan.databases;
    vec![
        Target {
            what: "bindings per Worker script within ~5,000, scripts within 500",
            pass: plan.bindings_per_script <= limits.bindings_per_script
                && plan.scripts <= limits.scripts_per_account,
            figure: format!(
                "{:.0} scripts (the front and {:.0} data scripts), at most {:.0} bindings in one",
                plan.scripts,
                (plan.scripts - 1.0).max(0.0),
                plan.bindings_per_script
            ),
        },
        Target {
            what: "a 10M-follower post in every active follower's window within 60 s",
            pass: b.followers <= 0.0 || b.seconds <= limits.fanout_seconds_target,
            figure: format!(
                "{:.0} windows, {:.0} chunks: {:.0} s (its database paced under 50%: {:.0} s; the consumers: {:.0} s; the queue: {:.1} s)",
                b.delivered, b.chunks, b.seconds, b.seconds_paced, b.seconds_consumers, b.seconds_queue
            ),
        },
        Target {
            what: "a year's D1 storage within the account's cap (raised on request)",
            pass: year <= limits.account_d1_bytes_raised,
            figure: format!(
                "{:.1} TB against {:.0} TB requested (the default cap is {:.0} TB)",
                year / 1e12,
                limits.account_d1_bytes_raised / 1e12,
                limits.account_d1_bytes / 1e12
            ),
        },
    ]
}

/// Queues (`./scripts/wrangler-config P --queues Q`) the fan-out needs: each carries ~5,000
/// messages/s and runs `consumer_concurrency` consumers at once.
pub fn queues_needed(plan: &Plan, limits: &Limits) -> f64 {
    (plan.queue_messages_per_s / limits.queue_messages_per_s)
        .max(plan.consumers_busy / limits.consumer_concurrency)
        .ceil()
        .max(1.0)
}

/// One candidate configuration and the model's answer for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub mode: Mode,
    pub policy: Policy,
    pub verdict: Verdict,
    /// Targets that fail (the bill's excepted).
    pub failing: usize,
}

/// The smallest P for `policy`, its fan-out batch lowered to what keeps a consumer invocation
/// under the D1 query limit.
pub fn candidate(c: &Costs, w: &Workload, policy: &Policy, limits: &Limits, prices: &Prices) -> Candidate {
    let mut verdict = recommend(c, w, policy, limits, prices);
    let mut policy = *policy;
    // A smaller P only lowers a chunk's databases, so the lowered batch still fits there.
    if verdict.plan.consumer_d1_queries > limits.d1_queries_per_invocation {
        policy.fanout_batch = verdict.plan.fanout_batch_that_fits.max(1.0);
        verdict = recommend(c, w, &policy, limits, prices);
    }
    let t = targets(&verdict.plan, limits);
    let failing = t.iter().filter(|t| !t.pass && !t.what.starts_with("bill")).count();
    Candidate { mode: w.mode, policy, verdict, failing }
}

/// The candidates the report weighs: push and hybrid with hot authors on replicas, over
/// `PUSH_MAX_FOLLOWERS` and `HOT_REPLICA_FOLLOWERS`; the recommended one is the cheapest with
/// no failing target (else the one with fewest).
pub fn candidates(
    c: &Costs,
    w: &Workload,
    given: &Policy,
    limits: &Limits,
    prices: &Prices,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for hot in [10_000.0, 30_000.0, 50_000.0, 100_000.0] {
        let base = Policy {
            hot_replicas: true,
            hot_followers: hot,
            replica_hydrate_only: given.replica_hydrate_only,
            before_40: given.before_40,
            databases_per_script: given.databases_per_script,
            ..Policy::default()
        };
        out.push(candidate(c, &Workload { mode: Mode::Push, ..w.clone() }, &base, limits, prices));
        for cap in [10_000.0, 100_000.0, 1_000_000.0, 10_000_000.0] {
            let policy = Policy { push_max_followers: cap, ..base };
            out.push(candidate(c, &Workload { mode: Mode::Hybrid, ..w.clone() }, &policy, limits, prices));
        }
    }
    out
}

/// The cheapest candidate with the fewest failing targets; of those within 1% of its bill, the
/// one with the fewest databases (each binding counts against a script's ~5,000).
pub fn best(candidates: &[Candidate]) -> Option<&Candidate> {
    let failing = candidates.iter().map(|k| k.failing).min()?;
    let ok: Vec<&Candidate> = candidates.iter().filter(|k| k.failing == failing).collect();
    let cheapest = ok.iter().map(|k| k.verdict.plan.monthly_usd).fold(f64::INFINITY, f64::min);
    ok.into_iter()
        .filter(|k| k.verdict.plan.monthly_usd <= cheapest * 1.01)
        .min_by(|a, b| a.verdict.plan.databases.total_cmp(&b.verdict.plan.databases))
}
