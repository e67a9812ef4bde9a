//! The capacity bench's printed reports (Markdown): the measured table, the model's answer for
//! one workload, the headline scenario side by side, and the simulation's check.

use super::model::{self, Costs, Limits, Mode, OpCost, Plan, Policy, Prices, Verdict, WindowRows, Workload};

/// One row of the headline table: a figure of a plan.
type Column = Box<dyn Fn(&Plan) -> String>;

fn si(x: f64) -> String {
    let a = x.abs();
    if a >= 1e12 {
        format!("{:.2}T", x / 1e12)
    } else if a >= 1e9 {
        format!("{:.2}G", x / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn usd(x: f64) -> String {
    if x >= 1000.0 {
        format!("${}", si(x))
    } else {
        format!("${x:.2}")
    }
}

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

/// One plan in full: databases, objects, queue, subrequests, bill.
pub fn plan_report(p: &Plan, limits: &Limits) -> String {
    let q = limits.d1_statements_per_s;
    let mut out = format!("### P = {} databases\n\n", p.databases);
    out.push_str("| database | statements/s at peak | share of ~1,000/s | GB at horizon | share of 10 GB | what it is made of |\n|---|---|---|---|---|---|\n");
    for (name, load, shares) in [
        ("typical", &p.typical, &p.typical_shares),
        ("control (DB_0)", &p.control, &p.control_shares),
        ("most followed celebrity's", &p.celebrity, &p.celebrity_shares),
    ] {
        out.push_str(&format!(
            "| {name} | {} | {} | {:.2} | {} | {} |\n",
            si(load.work.statements),
            pct(load.work.statements, q),
            load.bytes / 1e9,
            pct(load.bytes, limits.d1_bytes),
            shares_line(shares)
        ));
    }
    out.push_str(&format!("\nBusiest: {}.\n\n", p.busiest));
    out.push_str("| limit | value | against |\n|---|---|---|\n");
    out.push_str(&format!(
        "| databases touched per feed page | {:.1} ({} sequential storage waves at 6 connections) | 6 simultaneous connections |\n",
        p.databases_touched_per_page, p.page_waves
    ));
    out.push_str(&format!(
        "| hottest Durable Object: {} | {} req/s | ~{} req/s soft limit ({}) |\n",
        p.hottest_object,
        si(p.hottest_object_requests_per_s),
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
    out.push_str(&format!(
        "| subrequests per feed page / per consumer batch | {:.0} / {} | {} per invocation |\n",
        p.page_subrequests,
        si(p.consumer_subrequests),
        si(limits.subrequests)
    ));
    out.push_str(&format!(
        "| subrequests of one cron pass (it visits every database) | {} | {} per invocation ({}) |\n",
        si(p.cron_subrequests),
        si(limits.subrequests),
        pct(p.cron_subrequests, limits.subrequests)
    ));
    out.push_str(&format!(
        "| Worker invocations | {}/s | (HTTP and queue consumer) |\n\n",
        si(p.worker_requests_per_s)
    ));
    out.push_str("| bill line (month, at mean rates) | usage | USD |\n|---|---|---|\n");
    for line in &p.bill {
        out.push_str(&format!("| {} | {} {} | {} |\n", line.item, si(line.usage), line.unit, usd(line.usd)));
    }
    out.push_str(&format!("| **total** | | **{}** |\n", usd(p.monthly_usd)));
    out
}

fn workload_line(w: &Workload, g: &model::Graph) -> String {
    format!(
        "Workload ({} mode): {} users, {} follows each (density exponent {}), celebrities {}, {} posts/s, {} feed reads/s ({:.0}% past page 1), {} likes/s, {} comments/s, {} follows/s at peak (mean = peak / {}), {} days kept. Derived: {:.1}% of follows point above the push cap, {:.2} follows per user to celebrities, {:.1} pulled authors per reader, {:.1} window writes per post.",
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
        "{}\n\n{verdict}\n\n{}\n\n{}",
        workload_line(w, &plan.graph),
        storage_line(c, w, limits),
        plan_report(&plan, limits)
    )
}

/// The headline scenario under the three modes, side by side, then each in full.
pub fn headline(c: &Costs, policy: &Policy, limits: &Limits, prices: &Prices) -> String {
    let modes = [Mode::Push, Mode::Hybrid, Mode::Pull];
    let results: Vec<(Workload, Verdict)> = modes
        .iter()
        .map(|&m| {
            let w = Workload::headline(m);
            let r = model::recommend(c, &w, policy, limits, prices);
            (w, r)
        })
        .collect();
    let mut out = String::from("| | push | hybrid (defaults) | pull |\n|---|---|---|---|\n");
    let cell = |r: &Verdict, f: &dyn Fn(&Plan) -> String| match r.why_not {
        None => f(&r.plan),
        Some(_) => format!("{} (at the limit)", f(&r.plan)),
    };
    let rows: Vec<(&str, Column)> = vec![
        ("databases needed", Box::new(|p: &Plan| format!("{}", p.databases))),
        ("window writes/s", Box::new(|p: &Plan| si(p.window_writes_per_s))),
        ("typical database statements/s", Box::new(|p: &Plan| si(p.typical.work.statements))),
        ("control database statements/s", Box::new(|p: &Plan| si(p.control.work.statements))),
        ("celebrity's database statements/s", Box::new(|p: &Plan| si(p.celebrity.work.statements))),
        (
            "databases touched per feed page",
            Box::new(|p: &Plan| format!("{:.1}", p.databases_touched_per_page)),
        ),
        ("queue messages/s", Box::new(|p: &Plan| si(p.queue_messages_per_s))),
        ("cost per month", Box::new(|p: &Plan| usd(p.monthly_usd))),
    ];
    for (name, f) in &rows {
        let cells: Vec<String> = results.iter().map(|(_, r)| cell(r, f.as_ref())).collect();
        out.push_str(&format!("| {name} | {} |\n", cells.join(" | ")));
    }
    let binds: Vec<String> = results
        .iter()
        .map(|(_, r)| match &r.why_not {
            None => format!("fits; busiest: {}", r.plan.busiest),
            Some(why) => format!("no P fits: {why}"),
        })
        .collect();
    out.push_str(&format!("| what binds first | {} |\n", binds.join(" | ")));
    let cached = Policy { celebrity_cache: true, ..*policy };
    let with_cache: Vec<Verdict> =
        modes.iter().map(|&m| model::recommend(c, &Workload::headline(m), &cached, limits, prices)).collect();
    let cells: Vec<String> = with_cache
        .iter()
        .map(|r| match &r.why_not {
            None => format!(
                "{} ({}/month; busiest: {})",
                r.plan.databases,
                usd(r.plan.monthly_usd),
                r.plan.busiest
            ),
            Some(why) => format!("none fits: {why}"),
        })
        .collect();
    out.push_str(&format!(
        "| databases needed if celebrities' reads came from a cache (not built) | {} |\n",
        cells.join(" | ")
    ));
    out.push_str(&format!("\n{}\n", storage_line(c, &Workload::headline(Mode::Push), limits)));
    for (w, r) in &results {
        let plan = &r.plan;
        out.push_str(&format!(
            "\n## {} mode\n\n{}\n\n{}",
            w.mode.name(),
            workload_line(w, &plan.graph),
            plan_report(plan, limits)
        ));
    }
    out
}

/// The window object's own rows (Durable Object SQLite) per delivery and per page read.
pub fn window_rows(w: &WindowRows) -> String {
    format!(
        "\nWindow object rows (its SQL cursors, a full window of 800): per delivery {:.2} statements, {:.2} rows read, {:.2} rows written; per page read {:.2} statements, {:.2} rows read, {:.2} rows written.\n",
        w.delivery.statements,
        w.delivery.rows_read,
        w.delivery.rows_written,
        w.page_read.statements,
        w.page_read.rows_read,
        w.page_read.rows_written
    )
}
