//! The capacity bench's printed reports (Markdown): the measured table, the model's answer for
//! one workload, the headline scenario side by side, and the simulation's check.

use crate::format::{si, usd};
use crate::model::{
    self, Candidate, Costs, Limits, Mode, OpCost, Plan, Policy, Prices, ReplicaCosts, Verdict, WindowRows,
    Work, Workload,
};
use crate::{paths_report, timelines_report};

/// The headline's workload under `mode`, with the delivery paths' mix the command line gives.
/// The headline's workload in `mode`, with the command line's mixes (`base`'s paths and
/// timelines).
fn scenario(mode: Mode, base: &Workload) -> Workload {
    Workload { paths: base.paths, timelines: base.timelines, ..Workload::headline(mode) }
}

/// One row of the headline table: a figure of a plan.
type Column = Box<dyn Fn(&Plan) -> String>;

fn cost_row(name: &str, c: &OpCost) -> String {
    format!(
        "| {name} | {:.2} / {:.1} / {:.2} | {:.2} / {:.1} / {:.2} | {:.2} / {:.1} / {:.2} | {:.2} | {:.2} | {:.1} | {:.1} |",
        c.home.statements,
        c.home.rows_read,
        c.home.rows_written,
        c.other.statements,
        c.other.rows_read,
        c.other.rows_written,
        c.control.statements,
        c.control.rows_read,
        c.control.rows_written,
        c.do_calls,
        c.queue_messages,
        c.subrequests,
        c.cpu_ms,
    )
}

/// The measured cost table.
pub fn costs_table(c: &Costs) -> String {
    let mut out = String::from(
        "| operation | home DB: statements / rows read / rows written | each other DB touched | control DB (DB_0) | DO requests | queue messages | subrequests | Worker ms outside storage |\n|---|---|---|---|---|---|---|---|\n",
    );
    for (name, cost) in [
        ("feed page 1, push (other = per author database)", &c.feed_push_page1),
        ("feed page 2, push", &c.feed_push_page_n),
        ("feed page 1, pull (other = per pulled author database)", &c.feed_pull_page1),
        ("feed page 2, pull", &c.feed_pull_page_n),
        ("publish (request)", &c.publish),
        ("fan-out per post (consumer)", &c.fanout_post),
        ("fan-out per chunk (other = per reader database the chunk touches)", &c.fanout_chunk),
        ("fan-out per delivered reader (home = author, other = reader)", &c.fanout_reader),
        ("like (other = the post's database; its object's commit included)", &c.like),
        ("comment (other = the post's database)", &c.comment),
        ("follow with its mirror (other = the followee's database)", &c.follow),
        ("cron pass (home = each database's own share)", &c.cron_pass),
    ] {
        out.push_str(&cost_row(name, cost));
        out.push('\n');
    }
    out.push_str(&window_rows(&c.window));
    out.push_str(&replica_rows(&c.replica));
    out.push_str(&publish_by_size(c));
    let b = &c.bytes;
    out.push_str(&format!(
        "\nBytes per entity in D1 (indexes included, measured as file growth over 300 of each on a fresh stack): user {:.0}, follow (both copies) {:.0}, post {:.0}, like {:.0}, comment {:.0}; window entry (object storage, from its schema) {:.0}. Consumer batch {} messages; each batch also writes {:.1} statements of figures (to a database picked at random).\n",
        b.user, b.follow, b.post, b.like, b.comment, b.window_entry, c.consumer_batch, c.consumer_flush.statements
    ));
    out.push_str(&format!(
        "\nRows written per read (rate copies): a steady reader's feed read writes {:.2} rows on the other databases in the background (its read rate copied onto the followed authors' edges, only when it crosses a threshold of that author's policy; included in the feed rows above).\n",
        c.rate_copy_rows_per_read
    ));
    out
}

/// A publish by author size, from the per-post, per-chunk and per-reader parts (push: every
/// follower holds a window; chunks of 500).
fn publish_by_size(c: &Costs) -> String {
    let mut out = String::from(
        "\nPublish by author size (push to every follower; the request, then the fan-out in chunks of 500):\n\n| followers | statements on the author's database | statements on readers' databases (per database a chunk touches) | window writes (DO requests) | queue messages | consumer batches |\n|---|---|---|---|---|---|\n",
    );
    for followers in [10.0, 1_000.0, 100_000.0, 10_000_000.0_f64] {
        let chunks = (followers / 500.0).ceil().max(1.0);
        let author = c.publish.home.statements
            + c.fanout_post.home.statements
            + chunks * c.fanout_chunk.home.statements
            + followers * c.fanout_reader.home.statements;
        let messages =
            c.publish.queue_messages + c.fanout_post.queue_messages + chunks * c.fanout_chunk.queue_messages;
        out.push_str(&format!(
            "| {} | {} | {} per chunk and database | {} | {} | {} |\n",
            si(followers),
            si(author),
            si(c.fanout_chunk.other.statements),
            si(followers * c.fanout_reader.do_calls),
            si(messages),
            si((messages / c.consumer_batch.max(1.0)).ceil()),
        ));
    }
    out
}

fn pct(x: f64, of: f64) -> String {
    format!("{:.0}%", 100.0 * x / of)
}

fn shares_line(shares: &[model::Share]) -> String {
    shares
        .iter()
        .filter(|s| s.statements_per_s >= 0.5)
        .take(4)
        .map(|s| format!("{} {}", s.operation, si(s.statements_per_s)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The hot authors' replicas, when the plan has them.
fn replicas_table(p: &Plan) -> String {
    let h = &p.hot;
    if h.replicas <= 0.0 {
        return String::new();
    }
    format!(
        "\n| hot-author replicas | value |\n|---|---|\n\
         | hot authors / replicas (resident) | {} / {} ({}) |\n\
         | replica requests per feed read: pulled / hydrated | {:.2} / {:.2} |\n\
         | replica requests/s: reads / writes (an author's change to each replica) | {} / {} |\n\
         | most followed author: replicas, requests/s each | {}, {} |\n\
         | its database: leases and refreshes | {:.1} statements/s, {} rows read/s |\n\
         | all hot authors' databases: leases and refreshes | {} statements/s |\n",
        si(h.authors),
        si(h.replicas),
        si(h.resident),
        h.pulled_per_read,
        h.hydrated_per_read,
        si(p.replica_requests_per_s - h.writes_per_s),
        si(h.writes_per_s),
        h.top_replicas,
        si(h.top_requests_per_s / h.top_replicas.max(1.0)),
        h.top_lease.statements,
        si(h.top_lease.rows_read),
        si(h.lease.statements),
    )
}

/// The most followed author's post as a burst on its database.
fn burst_line(b: &model::Burst, limits: &Limits) -> String {
    if b.delivered <= 0.0 {
        return "\nA post of the most followed author is pushed to no one (pulled): no fan-out burst.\n\n"
            .into();
    }
    format!(
        "\nA post of the most followed author ({} followers) is a burst: {} window writes in {} chunks, **{} statements on its database at once**. \
         At its whole ~{}/s that is {:.0} s with the database saturated (as built: the consumers take chunks as fast as they run); \
         paced to keep it under {:.0}% beside its steady load it takes {:.0} s (+{:.0} statements/s meanwhile); \
         the queue alone needs {:.1} s and the consumers {:.0} s. Twitter, 2012: up to 300 s for 31M followers.\n\n",
        si(b.followers),
        si(b.delivered),
        si(b.chunks),
        si(b.statements),
        si(limits.d1_statements_per_s),
        b.seconds_at_budget,
        100.0 * limits.query_headroom,
        b.seconds_paced,
        b.added_per_s,
        b.seconds_queue,
        b.seconds_consumers,
    )
}

fn failing_names(p: &Plan, limits: &Limits) -> String {
    // The hand check's bill is the headline's, not this profile's.
    let names: Vec<String> = model::targets(p, limits)
        .into_iter()
        .filter(|t| !t.pass && !t.what.starts_with("bill"))
        .map(|t| format!("{} ({})", t.what, t.figure))
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join("; ")
    }
}

/// The targets of #28, a line each.
pub fn targets_table(p: &Plan, limits: &Limits) -> String {
    let mut out = String::from("| target | | figure |\n|---|---|---|\n");
    for t in model::targets(p, limits) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            t.what,
            if t.pass { "pass" } else { "**FAIL**" },
            t.figure
        ));
    }
    out
}

/// Durable Object rows per operation, as the bill counts them.
fn object_rows(c: &Costs) -> String {
    let w = &c.window;
    let r = &c.replica;
    format!(
        "| Durable Object operation | requests | rows read | rows written | source |\n|---|---|---|---|---|\n\
         | window: one delivery | 1 | {:.2} | {:.2} | measured (`costs.window`) |\n\
         | window: one page read (page 1; later: {}) | 1 | {:.2} | {:.2} | measured (`costs.window`) |\n\
         | hot replica: one read | {} | {} | 0 | {source} |\n\
         | hot replica: an author's change | {:.2} per replica | 0 | {} per replica | {source} |\n\
         | like serializer: one like | 1 | not measured | not measured | (its commit is D1's, in the like row) |\n",
        w.delivery.rows_read, w.delivery.rows_written,
        w.page_n_read.map_or("not apart".to_string(), |n| format!("{:.2} read, {:.2} written", n.rows_read, n.rows_written)),
        w.page_read.rows_read, w.page_read.rows_written,
        r.read_calls, r.read_rows, r.write_calls, r.write_rows,
        source = if r.measured {
            "requests measured (`costs.replica`); rows: in memory, none (objects/replica.rs)"
        } else {
            "design (#28)"
        },
    )
}

/// One plan in full: databases, objects, queue, subrequests, bill.
pub fn plan_report(p: &Plan, limits: &Limits) -> String {
    let mut out = format!("### P = {} databases\n\n", p.databases);
    out.push_str(&databases_table(p, limits));
    out.push_str(&replicas_table(p));
    out.push_str(&format!("\nBusiest: {}.\n\n", p.busiest));
    out.push_str(&limits_table(p, limits));
    out.push_str(&burst_line(&p.burst, limits));
    out.push_str("| bill line (month, at mean rates) | usage | USD |\n|---|---|---|\n");
    for line in &p.bill {
        out.push_str(&format!("| {} | {} {} | {} |\n", line.item, si(line.usage), line.unit, usd(line.usd)));
    }
    out.push_str(&format!("| **total** | | **{}** |\n", usd(p.monthly_usd)));
    out
}

/// A plan's databases: the load at peak and the size at the horizon of each it names.
fn databases_table(p: &Plan, limits: &Limits) -> String {
    let q = limits.d1_statements_per_s;
    let mut out = String::from(
        "| database | statements/s at peak | share of ~1,000/s | GB at horizon | share of 10 GB | what it is made of |\n|---|---|---|---|---|---|\n",
    );
    let cold = p.largest_cold.map(|(x, load)| {
        let name = format!("largest author's below the hot threshold ({} followers)", si(x));
        let why = vec![model::Share {
            operation: "its even share plus reads that pull or hydrate it from D1",
            statements_per_s: load.work.statements,
        }];
        (name, load, why)
    });
    let mut rows = vec![
        ("typical".to_string(), p.typical, p.typical_shares.clone()),
        ("control (DB_0)".to_string(), p.control, p.control_shares.clone()),
        ("most followed celebrity's".to_string(), p.celebrity, p.celebrity_shares.clone()),
    ];
    rows.extend(cold);
    for (name, load, shares) in &rows {
        out.push_str(&format!(
            "| {name} | {} | {} | {:.2} | {} | {} |\n",
            si(load.work.statements),
            pct(load.work.statements, q),
            load.bytes / 1e9,
            pct(load.bytes, limits.d1_bytes),
            shares_line(shares)
        ));
    }
    out
}

/// A plan's figures against the platform's limits: connections, objects, queues, invocations.
fn limits_table(p: &Plan, limits: &Limits) -> String {
    let mut out = String::from("| limit | value | against |\n|---|---|---|\n");
    out.push_str(&page_and_object_limit_rows(p, limits));
    out.push_str(&invocation_limit_rows(p, limits));
    out
}

/// Connections per feed page, the busiest Durable Object, window writes and queue messages.
fn page_and_object_limit_rows(p: &Plan, limits: &Limits) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "| databases touched per feed page | {:.1} ({} sequential storage waves at 6 connections) | 6 simultaneous connections |\n",
        p.databases_touched_per_page, p.page_waves
    ));
    out.push_str(&format!(
        "| hottest Durable Object: {} | {} req/s (replica {}, like serializer {}, window {}) | ~{} req/s soft limit ({}) |\n",
        p.hottest_object,
        si(p.hottest_object_requests_per_s),
        si(p.hot.hottest_replica_rps),
        si(p.like_object_requests_per_s),
        si(p.window_requests_per_s),
        si(limits.object_requests_per_s),
        pct(p.hottest_object_requests_per_s, limits.object_requests_per_s)
    ));
    out.push_str(&format!(
        "| window writes | {}/s | (one per delivered reader, across all readers' objects) |\n",
        si(p.window_writes_per_s)
    ));
    out.push_str(&format!(
        "| queue messages | {}/s | {}/s per queue ({}) |\n",
        si(p.queue_messages_per_s),
        si(limits.queue_messages_per_s),
        pct(p.queue_messages_per_s, limits.queue_messages_per_s)
    ));
    out
}

/// Consumers busy at once, and each kind of invocation against its per-invocation limits.
fn invocation_limit_rows(p: &Plan, limits: &Limits) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "| fan-out consumers busy at once (a full chunk ~{} s) | {} | {} per queue |\n",
        limits.chunk_seconds,
        si(p.consumers_busy),
        si(limits.consumer_concurrency)
    ));
    out.push_str(&format!(
        "| subrequests / D1 queries per feed page | {:.0} / {:.0} | {} / {} per invocation |\n",
        p.page_subrequests,
        p.page_d1_queries,
        si(limits.subrequests),
        si(limits.d1_queries_per_invocation)
    ));
    out.push_str(&format!(
        "| subrequests / D1 queries per fan-out consumer batch ({} full chunks) | {} / {} | {} / {} per invocation |\n",
        p.fanout_batch,
        si(p.consumer_subrequests),
        si(p.consumer_d1_queries),
        si(limits.subrequests),
        si(limits.d1_queries_per_invocation)
    ));
    out.push_str(&format!(
        "| subrequests of the cron's invocation (a share message per database, 100 a send) | {} | {} per invocation ({}) |\n",
        si(p.cron_subrequests),
        si(limits.subrequests),
        pct(p.cron_subrequests, limits.subrequests)
    ));
    out.push_str(&format!(
        "| Worker invocations | {}/s | (HTTP and queue consumer) |\n\n",
        si(p.worker_requests_per_s)
    ));
    out
}

fn workload_line(w: &Workload, g: &model::Graph) -> String {
    format!(
        "Workload ({} mode): {} users, {} follows each (density exponent {}), celebrities {}, {} posts/s, {} feed reads/s ({:.0}% past page 1), {} likes/s, {} comments/s, {} follows/s at peak (mean = peak / {:.1}), {} days kept. Derived: {:.1}% of follows point above the push cap, {:.2} follows per user to celebrities, {:.1} pulled authors per reader, {:.1} window writes per post.",
        w.mode.name(),
        si(w.users),
        w.follows_per_user,
        w.tail,
        w.celebrities.iter().map(|c| format!("{}x{}", c.count, si(c.followers))).collect::<Vec<_>>().join(", "),
        si(w.posts_per_s),
        si(w.feed_reads_per_s),
        100.0 * w.page_n_share,
        si(w.likes_per_s),
        si(w.comments_per_s),
        si(w.follows_per_s),
        w.peak_to_mean,
        w.retention_days,
        100.0 * g.share_above_cap,
        g.celebrity_follows,
        g.pulled_per_reader,
        g.deliveries_per_post,
    )
}

/// When the account's D1 storage cap (every database together) binds, and what fills it.
pub fn storage_line(c: &Costs, w: &Workload, limits: &Limits) -> String {
    let s = model::account_storage(c, w, limits);
    let cap = format!("{} TB", limits.account_d1_bytes / 1e12);
    let when = match s.days_to_cap {
        Some(days) => format!("the {cap} account cap is reached after **{days:.0} days**"),
        None => format!(
            "the horizon ends under the {cap} account cap ({})",
            pct(s.bytes_at_horizon, limits.account_d1_bytes)
        ),
    };
    format!(
        "D1 storage for the whole account: {:.2} TB at the end of the {} days kept ({:.0} GB of graph, then {:.1} GB a day, {:.0}% of it likes); {when}.",
        s.bytes_at_horizon / 1e12,
        w.retention_days,
        s.graph_bytes / 1e9,
        s.bytes_per_day / 1e9,
        100.0 * s.like_bytes_per_day / s.bytes_per_day.max(1e-9),
    )
}

/// The model's answer for one workload: at `databases` if given, else at the smallest P that
/// fits (or at the account's limit, with why nothing fits).
pub fn model_report(
    c: &Costs,
    w: &Workload,
    databases: Option<f64>,
    policy: &Policy,
    limits: &Limits,
    prices: &Prices,
) -> String {
    let (plan, verdict) = match databases {
        Some(p) => {
            let plan = model::plan(c, w, policy, limits, prices, p);
            let verdict = match model::fits(&plan, limits) {
                Ok(()) => format!(
                    "P = {p} keeps every database under 50% of its query ceiling and 60% of its size."
                ),
                Err(why) => format!("P = {p} does not fit: {why}."),
            };
            (plan, verdict)
        }
        None => {
            let verdict = model::recommend(c, w, policy, limits, prices);
            let text = match &verdict.why_not {
                None => format!(
                    "Smallest P that keeps every database under 50% of its query ceiling and 60% of its size at peak: **{}**.",
                    verdict.plan.databases
                ),
                Some(why) => format!("**No P up to {} fits**: {why}.", limits.databases_per_account),
            };
            (verdict.plan, text)
        }
    };
    format!(
        "{}\n\n{verdict}\n\n{}\n\n{}\n{}",
        workload_line(w, &plan.graph),
        storage_line(c, w, limits),
        targets_table(&plan, limits),
        plan_report(&plan, limits)
    )
}

/// The headline scenario: as built under the three modes and with hot authors on replicas,
/// side by side; the replicated candidates; the recommended one in full with its targets; the
/// push/pull ratio from the costs; and the realistic profile.
pub fn headline(c: &Costs, base: &Workload, policy: &Policy, limits: &Limits, prices: &Prices) -> String {
    let candidates = model::candidates(c, &scenario(Mode::Hybrid, base), policy, limits, prices);
    let best = model::best(&candidates);
    let mut out = side_by_side(&headline_columns(c, base, policy, limits, prices, best));
    out.push_str(&format!("\n{}\n", storage_line(c, &scenario(Mode::Push, base), limits)));
    out.push_str("\n## Hot authors on replicas: the candidates\n\n");
    out.push_str(&candidates_table(&candidates, limits));
    if let Some(best) = best {
        out.push_str(&recommended_section(c, best, base, limits, prices));
    }
    out.push_str(&crate::issue40_report::issue40_section(
        c,
        &scenario(Mode::Hybrid, base),
        policy,
        limits,
        prices,
    ));
    out
}

/// The headline's columns: push, hybrid and pull as built, push with hot authors on replicas,
/// and the recommended candidate.
fn headline_columns(
    c: &Costs,
    base: &Workload,
    policy: &Policy,
    limits: &Limits,
    prices: &Prices,
    best: Option<&Candidate>,
) -> Vec<(String, Verdict)> {
    let as_built = Policy { hot_replicas: false, ..*policy };
    let mut columns: Vec<(String, Verdict)> = [Mode::Push, Mode::Hybrid, Mode::Pull]
        .iter()
        .map(|&m| {
            (
                format!("{} as built", m.name()),
                model::recommend(c, &scenario(m, base), &as_built, limits, prices),
            )
        })
        .collect();
    let replicated = Policy { hot_replicas: true, ..*policy };
    let push = model::candidate(c, &scenario(Mode::Push, base), &replicated, limits, prices);
    columns.push((format!("push + replicas ({} followers)", si(replicated.hot_followers)), push.verdict));
    if let Some(best) = best {
        columns.push((
            format!(
                "**recommended**: {} + replicas, PUSH_MAX_FOLLOWERS {}",
                best.mode.name(),
                si(best.policy.push_max_followers)
            ),
            best.verdict.clone(),
        ));
    }
    columns
}

/// The columns side by side, a row per figure, and what binds first in each.
fn side_by_side(columns: &[(String, Verdict)]) -> String {
    let mut out = format!(
        "| | {} |\n|---|{}\n",
        columns.iter().map(|c| c.0.as_str()).collect::<Vec<_>>().join(" | "),
        "---|".repeat(columns.len())
    );
    let cell = |r: &Verdict, f: &dyn Fn(&Plan) -> String| match r.why_not {
        None => f(&r.plan),
        Some(_) => format!("{} (at the limit)", f(&r.plan)),
    };
    let rows: Vec<(&str, Column)> = vec![
        ("databases needed", Box::new(|p: &Plan| format!("{}", p.databases))),
        ("window writes/s", Box::new(|p: &Plan| si(p.window_writes_per_s))),
        ("typical database statements/s", Box::new(|p: &Plan| si(p.typical.work.statements))),
        ("celebrity's database statements/s", Box::new(|p: &Plan| si(p.celebrity.work.statements))),
        (
            "largest author's below the hot threshold, statements/s",
            Box::new(|p: &Plan| p.largest_cold.map_or("-".into(), |(_, l)| si(l.work.statements))),
        ),
        (
            "databases touched per feed page",
            Box::new(|p: &Plan| format!("{:.1}", p.databases_touched_per_page)),
        ),
        ("replica requests/s", Box::new(|p: &Plan| si(p.replica_requests_per_s))),
        ("queue messages/s", Box::new(|p: &Plan| si(p.queue_messages_per_s))),
        ("cost per month", Box::new(|p: &Plan| usd(p.monthly_usd))),
    ];
    for (name, f) in &rows {
        let cells: Vec<String> = columns.iter().map(|(_, r)| cell(r, f.as_ref())).collect();
        out.push_str(&format!("| {name} | {} |\n", cells.join(" | ")));
    }
    let binds: Vec<String> = columns
        .iter()
        .map(|(_, r)| match &r.why_not {
            None => format!("fits; busiest: {}", r.plan.busiest),
            Some(why) => format!("no P fits: {why}"),
        })
        .collect();
    out.push_str(&format!("| what binds first | {} |\n", binds.join(" | ")));
    out
}

/// The recommended candidate at the headline in full, with its targets; the push/pull ratio
/// from the costs; and the realistic profile at that configuration.
fn recommended_section(
    c: &Costs,
    best: &Candidate,
    base: &Workload,
    limits: &Limits,
    prices: &Prices,
) -> String {
    let w = scenario(best.mode, base);
    let mut out = format!(
        "\n## Recommended: {} mode, PUSH_MAX_FOLLOWERS = {}, HOT_REPLICA_FOLLOWERS = {}, fan-out batch {}\n\n{}\n\n{}\n\n{}\n{}\n",
        best.mode.name(),
        si(best.policy.push_max_followers),
        si(best.policy.hot_followers),
        best.verdict.plan.fanout_batch,
        workload_line(&w, &best.verdict.plan.graph),
        targets_table(&best.verdict.plan, limits),
        object_rows(c),
        plan_report(&best.verdict.plan, limits),
    );
    out.push_str(&ratio_section(c, &w, limits, prices));
    out.push_str(&paths_report::paths_section(c, best, &w, limits, prices));
    out.push_str(&timelines_report::timelines_section(c, best, &w, limits, prices));
    out.push_str(&realistic_section(c, best, base, limits, prices));
    out
}

fn candidates_table(candidates: &[Candidate], limits: &Limits) -> String {
    let mut out = String::from(
        "| mode | PUSH_MAX_FOLLOWERS | HOT_REPLICA_FOLLOWERS | databases | touched per page (waves) | hot authors / replicas | busiest database | the celebrity's post (paced) | fan-out batch | cost per month | failing targets |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for k in candidates {
        let p = &k.verdict.plan;
        let busiest = [Some(p.typical), Some(p.control), Some(p.celebrity), p.largest_cold.map(|(_, l)| l)]
            .into_iter()
            .flatten()
            .map(|l| l.work.statements)
            .fold(0.0, f64::max);
        out.push_str(&format!(
            "| {} | {} | {} | {}{} | {:.1} ({}) | {} / {} | {} | {:.0} s | {} | {} | {} |\n",
            k.mode.name(),
            if k.mode == Mode::Push { "-".into() } else { si(k.policy.push_max_followers) },
            si(k.policy.hot_followers),
            p.databases,
            if k.verdict.why_not.is_some() { " (none fits)" } else { "" },
            p.databases_touched_per_page,
            p.page_waves,
            si(p.hot.authors),
            si(p.hot.replicas),
            pct(busiest, limits.d1_statements_per_s),
            p.burst.seconds,
            p.fanout_batch,
            usd(p.monthly_usd),
            k.failing,
        ));
    }
    out
}

/// `PUSH_COST_RATIO` from the measured costs.
fn ratio_section(c: &Costs, w: &Workload, limits: &Limits, prices: &Prices) -> String {
    let k = model::push_cost(c, w, limits, prices);
    format!(
        "\n## PUSH_COST_RATIO from the costs\n\n| | USD per million |\n|---|---|\n| a push: one window write (request, {:.2} rows written, {:.1} read) | {:.3} |\n| a pull from D1: one author on one read ({:.0} rows read beyond hydration, {:.1} statements of a database's headroom) | {:.4} |\n| a pull from a hot author's replica (request and duration) | {:.3} |\n\nThe rule pushes iff `read_rate * ratio >= post_rate`; the cheaper side wins at `ratio = c_pull / c_push`: **{:.2}** for a D1 pull, **{:.2}** for a replica pull. At this workload's means an active reader reads {:.0} pages a day and an author posts {:.2} posts a day, so every active edge is pushed at any ratio above {:.4}.\n",
        c.window.delivery.rows_written,
        c.window.delivery.rows_read,
        k.push * 1e6,
        (c.feed_pull_page1.other.rows_read - c.feed_push_page1.other.rows_read).max(0.0),
        c.feed_pull_page1.other.statements,
        k.pull_d1 * 1e6,
        k.pull_replica * 1e6,
        k.pull_d1 / k.push,
        k.pull_replica / k.push,
        k.reads_per_day,
        k.posts_per_day,
        k.posts_per_day / k.reads_per_day.max(1e-9),
    )
}

/// #40's target for the realistic profile at 10M users, a line.
fn per_million_line(per_million: f64) -> String {
    format!(
        "\nTarget (#40): at most {} a month per million users on the realistic profile at 10M users: **{}** ({}).\n",
        usd(model::PER_MILLION_USERS_TARGET_USD),
        if per_million <= model::PER_MILLION_USERS_TARGET_USD { "pass" } else { "FAIL" },
        usd(per_million)
    )
}

/// The realistic profile at the recommended configuration: bill per million users.
fn realistic_section(
    c: &Costs,
    best: &Candidate,
    base: &Workload,
    limits: &Limits,
    prices: &Prices,
) -> String {
    let mut out = String::from(
        "\n## The realistic profile (Twitter, November 2012)\n\n| users | feed reads/s / posts/s at peak | databases | cost per month | per million users | busiest database | failing targets |\n|---|---|---|---|---|---|---|\n",
    );
    for users in [1e6, 10e6, 100e6] {
        let w = Workload {
            paths: base.paths,
            timelines: base.timelines,
            ..Workload::realistic(users, best.mode)
        };
        let k = model::candidate(c, &w, &best.policy, limits, prices);
        let p = &k.verdict.plan;
        let busiest = [p.typical, p.control, p.celebrity]
            .iter()
            .chain(p.largest_cold.iter().map(|(_, l)| l))
            .map(|l| l.work.statements)
            .fold(0.0, f64::max);
        out.push_str(&format!(
            "| {} | {} / {} | {}{} | {} | {} | {} ({}) | {} |\n",
            si(users),
            si(w.feed_reads_per_s),
            si(w.posts_per_s),
            p.databases,
            if k.verdict.why_not.is_some() { " (none fits)" } else { "" },
            usd(p.monthly_usd),
            usd(p.monthly_usd / (users / 1e6)),
            si(busiest),
            pct(busiest, limits.d1_statements_per_s),
            failing_names(p, limits),
        ));
    }
    let w = Workload { paths: base.paths, timelines: base.timelines, ..Workload::realistic(10e6, best.mode) };
    let k = model::candidate(c, &w, &best.policy, limits, prices);
    out.push_str(&per_million_line(k.verdict.plan.monthly_usd / (w.users / 1e6)));
    out.push_str(&format!(
        "\n### 10M users, realistic, in full\n\n{}\n\n{}\n{}",
        workload_line(&w, &k.verdict.plan.graph),
        targets_table(&k.verdict.plan, limits),
        plan_report(&k.verdict.plan, limits)
    ));
    out
}

/// The window object's own rows (Durable Object SQLite) per delivery and per page read.
pub fn window_rows(w: &WindowRows) -> String {
    format!(
        "\nWindow object rows (its SQL cursors, a full window of 800): per delivery {:.2} statements, {:.2} rows read, {:.2} rows written; per page 1 read {:.2} statements, {:.2} rows read, {:.2} rows written; per later page {}.\n",
        w.delivery.statements,
        w.delivery.rows_read,
        w.delivery.rows_written,
        w.page_read.statements,
        w.page_read.rows_read,
        w.page_read.rows_written,
        w.page_n_read.map_or("not measured apart (the page 1 figure is the mean of both)".to_string(), |n| {
            format!("{:.2} statements, {:.2} rows read, {:.2} rows written", n.statements, n.rows_read, n.rows_written)
        })
    )
}

/// The hot-author replicas' costs (`costs.replica`), measured or the design's.
pub fn replica_rows(r: &ReplicaCosts) -> String {
    let w = |w: &Work| {
        format!(
            "{:.2} statements, {:.1} rows read, {:.1} rows written",
            w.statements, w.rows_read, w.rows_written
        )
    };
    format!(
        "\nHot-author replicas ({}): a page with a hot author makes {:.2} replica requests per hot author ({:.1} ms each) \
         and puts {} on its database within the lease; a lease renewal {}; a rebuild or counts refresh {}; a publish by \
         a hot author adds {} on its database and {:.2} object requests per replica.\n",
        if r.measured { "measured, `costs.replica`" } else { "the design's figures, not measured" },
        r.read_calls,
        r.do_ms,
        w(&r.page_author_db),
        w(&r.lease),
        w(&r.refresh),
        w(&r.publish_author_db),
        r.write_calls,
    )
}
