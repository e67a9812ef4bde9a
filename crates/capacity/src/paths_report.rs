//! The headline report's section on the delivery paths beyond an original post (#39): the mix
//! the workload gives, what each path adds to a post (from `costs.paths`), the bill with and
//! without them line by line, one hot author's post boosted by hot boosters, and Twitter's mix.

use crate::format::{si, usd};
use crate::model::{self, Candidate, Costs, Limits, PathMix, Plan, Prices, Work, Workload};

fn work(w: &Work) -> String {
    format!("{:.1} / {:.1} / {:.1}", w.statements, w.rows_read, w.rows_written)
}

/// The workload's mix in a line.
pub fn mix_line(m: &PathMix) -> String {
    format!(
        "Statuses: {:.1}% originals, {:.1}% boosts, {:.1}% replies (reaching {:.0}% of the replier's followers), {:.1}% quotes, {:.1}% direct posts (to {} account each); {:.2} mentions per original, reply and quote; {:.1}% of a post's boosts in its first hour.",
        100.0 * m.original_share(),
        100.0 * m.boost_share,
        100.0 * m.reply_share,
        100.0 * m.reply_reach,
        100.0 * m.quote_share,
        100.0 * m.direct_share,
        m.direct_recipients,
        m.mentions_per_post,
        100.0 * m.boost_first_hour,
    )
}

/// Each path: its rate at peak and what one adds to a post of the actor's.
fn extras_table(c: &Costs, w: &Workload) -> String {
    let mut out = String::from(
        "| path | statuses/s at peak | added to a post: home statements / rows read / rows written | the other database | control | measured request's subrequests |\n|---|---|---|---|---|---|\n",
    );
    let p = &c.paths;
    let measured = [p.boost, p.reply, p.quote, p.mention, p.direct];
    for ((name, op, rate), m) in model::extras(c, w).iter().zip(measured) {
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {:.0} |\n",
            si(*rate),
            work(&op.home),
            work(&op.other),
            work(&op.control),
            m.subrequests,
        ));
    }
    out
}

/// The recommended configuration's bill with the paths and without (the same policy, each at its
/// own smallest P), line by line.
fn delta_table(without: &Plan, with: &Plan) -> String {
    let mut out = format!(
        "| bill line (month, at mean rates) | without the paths (P = {}) | with them (P = {}) | the paths add |\n|---|---|---|---|\n",
        without.databases, with.databases
    );
    for (a, b) in without.bill.iter().zip(&with.bill) {
        if a.usd.max(b.usd) >= 0.005 {
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                b.item,
                usd(a.usd),
                usd(b.usd),
                usd(b.usd - a.usd)
            ));
        }
    }
    out.push_str(&format!(
        "| **total** | **{}** | **{}** | **{}** |\n",
        usd(without.monthly_usd),
        usd(with.monthly_usd),
        usd(with.monthly_usd - without.monthly_usd)
    ));
    out
}

/// What the paths change on the databases and in the delivery, without and with.
fn load_table(without: &Plan, with: &Plan) -> String {
    let cold = |p: &Plan| p.largest_cold.map_or("-".to_string(), |(_, l)| si(l.work.statements));
    let rows: [(&str, String, String); 6] = [
        ("window writes/s", si(without.window_writes_per_s), si(with.window_writes_per_s)),
        ("queue messages/s", si(without.queue_messages_per_s), si(with.queue_messages_per_s)),
        (
            "typical database statements/s",
            si(without.typical.work.statements),
            si(with.typical.work.statements),
        ),
        (
            "celebrity's database statements/s",
            si(without.celebrity.work.statements),
            si(with.celebrity.work.statements),
        ),
        ("largest author's below the hot threshold, statements/s", cold(without), cold(with)),
        ("D1 rows written/s (all databases)", si(rows_written(without)), si(rows_written(with))),
    ];
    let mut out = String::from("| at peak | without the paths | with them |\n|---|---|---|\n");
    for (name, a, b) in rows {
        out.push_str(&format!("| {name} | {a} | {b} |\n"));
    }
    out
}

fn rows_written(p: &Plan) -> f64 {
    p.typical.work.rows_written * p.databases + p.control.work.rows_written - p.typical.work.rows_written
}

/// One post of the most followed author boosted by its readers.
fn boost_line(p: &Plan) -> String {
    let k = &p.boost_burst;
    format!(
        "**A hot author's post boosted by hot boosters.** A post of the most followed author reaches its followers and is boosted {} times (the boosts per reader a status reached, {:.5}, times its {} followers); each boost is a post of its booster's, delivered by the booster's edges from the booster's database (and its replicas, when the booster is hot). The original's database takes each boost's mirror row and notification: {} statements for all of them, {:.1}/s over the first hour, {:.0}/s with its steady load ({:.0}% of its ~1,000/s), against the {} statements of the author's own post. The largest named booster ({} followers) puts {} statements on its own database, the size of a post of its own. No second celebrity-sized burst lands on one database.\n",
        si(k.boosts),
        k.boosts / top_followers(p).max(1.0),
        si(top_followers(p)),
        si(k.statements),
        k.first_hour_per_s,
        p.celebrity.work.statements + k.first_hour_per_s,
        100.0 * (p.celebrity.work.statements + k.first_hour_per_s) / 1_000.0,
        si(k.original_statements),
        si(k.booster_followers),
        si(k.booster_statements),
    )
}

fn top_followers(p: &Plan) -> f64 {
    p.burst.followers
}

/// The section: the mix, each path's extra, the bill with and without, the hot-booster check,
/// and the recommended policy under Twitter's mix.
pub fn paths_section(c: &Costs, best: &Candidate, w: &Workload, limits: &Limits, prices: &Prices) -> String {
    let none = Workload { paths: PathMix::default(), ..w.clone() };
    let without = model::candidate(c, &none, &best.policy, limits, prices).verdict.plan;
    let with = &best.verdict.plan;
    let twitter = Workload { paths: PathMix::twitter(), ..w.clone() };
    let tw = model::candidate(c, &twitter, &best.policy, limits, prices);
    format!(
        "\n## The delivery paths (#39) in the workload\n\n{}\n\n{}\n{}\n{}\n{}\nWith Twitter's mix instead (`--path-mix twitter`: {}) the same policy needs {} databases{} and costs {} a month ({} against no paths).\n",
        mix_line(&w.paths),
        extras_table(c, w),
        load_table(&without, with),
        delta_table(&without, with),
        boost_line(with),
        mix_line(&PathMix::twitter()),
        tw.verdict.plan.databases,
        if tw.verdict.why_not.is_some() { " (none fits)" } else { "" },
        usd(tw.verdict.plan.monthly_usd),
        usd(tw.verdict.plan.monthly_usd - without.monthly_usd),
    )
}
