//! The headline report's section on issue #40: the recommended configuration priced with the
//! design before #40 (`Policy::before_40`) and after it, the bill line by line, the targets
//! that changed, and what binds next.

use crate::format::{si, usd};
use crate::model::{self, Candidate, Costs, Limits, Plan, Policy, Prices, Workload};

/// The best candidate for `policy` at the headline's hybrid workload.
fn best_for(c: &Costs, w: &Workload, policy: &Policy, limits: &Limits, prices: &Prices) -> Option<Candidate> {
    model::best(&model::candidates(c, w, policy, limits, prices)).cloned()
}

/// The two bills side by side, a row per line (by its name), and the totals.
fn bills_table(before: &Plan, after: &Plan) -> String {
    let mut out = format!(
        "| bill line (month, at mean rates) | before #40 (P = {}) | after (P = {}) | change |\n|---|---|---|---|\n",
        before.databases, after.databases
    );
    let mut items: Vec<&str> = before.bill.iter().map(|l| l.item).collect();
    for l in &after.bill {
        if !items.contains(&l.item) {
            items.push(l.item);
        }
    }
    let of = |p: &Plan, item: &str| p.bill.iter().find(|l| l.item == item).map_or(0.0, |l| l.usd);
    for item in items {
        let (b, a) = (of(before, item), of(after, item));
        out.push_str(&format!("| {item} | {} | {} | {} |\n", usd(b), usd(a), usd(a - b)));
    }
    out.push_str(&format!(
        "| **total** | **{}** | **{}** | **{}** |\n",
        usd(before.monthly_usd),
        usd(after.monthly_usd),
        usd(after.monthly_usd - before.monthly_usd)
    ));
    out
}

/// The targets whose verdict differs between the two designs, and every one still failing
/// after.
fn targets_table(before: &Plan, after: &Plan, limits: &Limits) -> String {
    let mut out = String::from("| target | before #40 | after |\n|---|---|---|\n");
    let verdict = |pass: bool, figure: &str| format!("{} ({figure})", if pass { "pass" } else { "**FAIL**" });
    for (b, a) in model::targets(before, limits).into_iter().zip(model::targets(after, limits)) {
        if b.pass != a.pass || !a.pass {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                a.what,
                verdict(b.pass, &b.figure),
                verdict(a.pass, &a.figure)
            ));
        }
    }
    out
}

/// The section: both designs' recommended configurations, their bills and targets.
pub fn issue40_section(c: &Costs, w: &Workload, policy: &Policy, limits: &Limits, prices: &Prices) -> String {
    let old = Policy { before_40: true, ..*policy };
    let new = Policy { before_40: false, ..*policy };
    let (Some(before), Some(after)) =
        (best_for(c, w, &old, limits, prices), best_for(c, w, &new, limits, prices))
    else {
        return String::new();
    };
    let (b, a) = (&before.verdict.plan, &after.verdict.plan);
    format!(
        "\n## Issue 40: the bill and the limits before and after\n\nBefore (`--before-40`): {} + replicas, PUSH_MAX_FOLLOWERS {}, HOT_REPLICA_FOLLOWERS {}; after: {} + replicas, PUSH_MAX_FOLLOWERS {}, HOT_REPLICA_FOLLOWERS {}. Both with the corrections (the consumer's figure upserts' rows, a page's CPU, the cron's share messages, R2).\n\n{}\n{}",
        before.mode.name(),
        si(before.policy.push_max_followers),
        si(before.policy.hot_followers),
        after.mode.name(),
        si(after.policy.push_max_followers),
        si(after.policy.hot_followers),
        bills_table(b, a),
        targets_table(b, a, limits),
    )
}
