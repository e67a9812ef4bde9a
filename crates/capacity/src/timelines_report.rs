//! The headline report's section on the public and tag timelines (#42): the mix the workload
//! gives, what each operation costs (from `costs.timelines`), the bill with and without them
//! line by line, the control database's part (trends reads, the discovery refresh), and the keys
//! that stay on one database (the public stripes, the public listeners, the hottest tag) against
//! a database's headroom, beside the hot author.

use crate::format::{si, usd};
use crate::model::{self, Candidate, Costs, Limits, Plan, Prices, TimelineMix, Work, Workload};

fn work(w: &Work) -> String {
    format!("{:.1} / {:.1} / {:.1}", w.statements, w.rows_read, w.rows_written)
}

/// The workload's mix in a line.
pub fn mix_line(t: &TimelineMix) -> String {
    format!(
        "Timelines: {:.1}% of page reads are public or tag timeline pages ({:.0}% of those tag pages), on top of the home reads; {:.2} tags per public post; {:.1} trends reads per active user a day; the hottest tag takes {:.0}% of the tag pages; {:.1}% of live sockets listen to the public stream.",
        100.0 * t.page_share,
        100.0 * t.tag_share,
        t.tags_per_post,
        t.trends_per_active_day,
        100.0 * t.hottest_tag_share,
        100.0 * t.public_stream_share,
    )
}

/// Each measured operation: its rate at peak, its D1 work as measured on 4 databases, and its
/// statements at P (a page's posts on up to 20 databases).
fn costs_table(c: &Costs, w: &Workload, p: f64) -> String {
    let mut out = format!(
        "| operation | per second at peak | measured (4 databases): statements / rows read / rows written | at P = {p}: statements / rows read / rows written |\n|---|---|---|---|\n"
    );
    for (name, rate, measured, at) in cost_rows(c, w, p) {
        let measured = if measured == Work::default() { "-".to_string() } else { work(&measured) };
        out.push_str(&format!("| {name} | {} | {measured} | {} |\n", si(rate), work(&at)));
    }
    out.push_str(&format!(
        "| a discovery refresh on the control database (its rows replaced) | {} | - | {} |\n",
        si(p / model::DISCOVERY_REFRESH_SECONDS),
        work(&model::refresh_control()),
    ));
    out
}

/// The table's rows: name, rate, measured, at P.
fn cost_rows(c: &Costs, w: &Workload, p: f64) -> [(&'static str, f64, Work, Work); 9] {
    let (t, r) = (&c.timelines, model::timeline_rates(w));
    let at_p = |x: Work| model::page_work(x, t.hydration, p, model::PAGE_POSTS);
    let refreshes = p / model::DISCOVERY_REFRESH_SECONDS;
    [
        (
            "public timeline page 1 (every database together)",
            r.public_pages,
            t.public_page,
            at_p(t.public_page),
        ),
        ("tag timeline page 1 (every database together)", r.tag_pages, t.tag_page, at_p(t.tag_page)),
        ("of a tag page, on the tag's database (its range reads)", r.tag_pages, t.key_read, t.key_read),
        ("of a tag page, on the database holding its posts", r.tag_pages, t.hydration, t.hydration),
        (
            "a public post's stripe row and listeners' read, beyond a followers-only post",
            r.public_posts,
            t.public_entry,
            t.public_entry,
        ),
        ("each tag of a public post (its row on the tag's database)", r.tag_rows, t.per_tag, t.per_tag),
        (
            "a trends read (tags and statuses), on the control database",
            r.trends_reads,
            t.trends_control,
            t.trends_control,
        ),
        (
            "a trends read, the statuses read where they live",
            r.trends_reads,
            t.trends_other,
            at_p(t.trends_other),
        ),
        (
            "a discovery refresh on its database (from the statements' shapes)",
            refreshes,
            Work::default(),
            model::refresh_own(w, p),
        ),
    ]
}

/// The recommended configuration's bill with the timelines and without (the same policy, each
/// at its own smallest P), line by line, and what they change on the databases.
fn delta_table(without: &Plan, with: &Plan) -> String {
    let mut out = format!(
        "| at peak, or bill line (month, at mean rates) | without the timelines' reads (`--timeline-mix none`, P = {}) | with them (P = {}) | they add |\n|---|---|---|---|\n",
        without.databases, with.databases
    );
    let loads = [
        ("typical database statements/s", without.typical.work.statements, with.typical.work.statements),
        ("control database statements/s", without.control.work.statements, with.control.work.statements),
        (
            "Durable Object requests/s (windows, like serializers)",
            without.object_requests_per_s,
            with.object_requests_per_s,
        ),
    ];
    for (name, a, b) in loads {
        out.push_str(&format!("| {name} | {} | {} | {} |\n", si(a), si(b), si(b - a)));
    }
    for (a, b) in without.bill.iter().zip(&with.bill) {
        if (b.usd - a.usd).abs() >= 0.005 {
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

/// The keys on one database each, against the headroom, with the hot author beside them.
fn hot_keys_table(p: &Plan, limits: &Limits) -> String {
    let k = &p.hot_keys;
    let ceiling = limits.d1_statements_per_s * limits.query_headroom;
    let rows = [
        ("a public stripe's database (the public heads' loads, at most one per replica and TTL; a quarter of the public posts write there)", k.stripe, "more stripes: its writes (3 statements a public post: the publish's row, the fan-out's ignored one, the listeners' read's share) spread over more databases, and the heads read every stripe per load"),
        ("the public listeners' database (every public post reads the key `public`)", k.listeners, "listeners held by an object (one request per post instead of a D1 read), or split over the stripes"),
        ("the hottest tag's database (its heads' loads)", k.hottest_tag, "a hot tag's head on replicated objects (as a hot author's), or its page cached a second"),
    ];
    let mut out = format!(
        "| key's database | its key's statements/s | with a typical database's load | of the {ceiling:.0}/s headroom | binds | what would fix it |\n|---|---|---|---|---|---|\n"
    );
    for (name, key, fix) in rows {
        out.push_str(&format!(
            "| {name} | {} | {} | {:.0}% | {} | {} |\n",
            si(key.work.statements),
            si(key.total_statements),
            100.0 * key.total_statements / ceiling,
            if key.binds { "**yes**" } else { "no" },
            if key.binds { fix } else { "-" },
        ));
    }
    out
}

/// The hottest tag against the hottest author: what each puts on its database per second.
fn hot_tag_line(c: &Costs, w: &Workload, p: &Plan) -> String {
    let k = &p.hot_keys;
    let top = w.celebrities.iter().map(|x| x.followers.min(w.users)).fold(0.0, f64::max);
    let pulled = w.feed_reads_per_s * top / w.users.max(1.0);
    let author_reads = p.celebrity_shares.iter().find(|s| s.operation.starts_with("reads that pull"));
    format!(
        "**A hot tag against a hot author.** The hottest tag's pages ({}/s at peak) each read one key's range ({:.1} statements), but from its head's replicas, which read the tag's database at most once per replica and TTL: {} statements/s there. The most followed author's {} feed reads/s that include it would put {} statements/s on its database pulled from D1 ({:.1} a page); with its replicas they put {} there. A hot tag costs what a hot author costs: its replicas take its pages off its database.\n",
        si(k.hottest_tag_pages),
        c.timelines.key_read.statements,
        si(k.hottest_tag.work.statements),
        si(pulled),
        si(pulled * c.feed_pull_page1.other.statements),
        c.feed_pull_page1.other.statements,
        si(author_reads.map_or(0.0, |s| s.statements_per_s)),
    )
}

/// The section: the mix, the measured operations, the bill with and without, the hot keys.
pub fn timelines_section(
    c: &Costs,
    best: &Candidate,
    w: &Workload,
    limits: &Limits,
    prices: &Prices,
) -> String {
    if !c.timelines.measured {
        return "\n## The public and tag timelines (#42) in the workload\n\nNot measured in this table (`./scripts/bench capacity --measure-timelines`).\n".into();
    }
    let none = Workload { timelines: TimelineMix::default(), ..w.clone() };
    let without = model::candidate(c, &none, &best.policy, limits, prices).verdict.plan;
    let with = &best.verdict.plan;
    format!(
        "\n## The public and tag timelines (#42) in the workload\n\n{}\n\n{}\n{}\n{}\n{}",
        mix_line(&w.timelines),
        costs_table(c, w, with.databases),
        delta_table(&without, with),
        hot_keys_table(with, limits),
        hot_tag_line(c, w, with),
    )
}
