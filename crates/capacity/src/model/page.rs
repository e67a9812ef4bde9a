//! One feed read's cost on each database, from the measured pages.

use super::costs::{Costs, OpCost, Work};
use super::graph::Graph;
use super::hot::Hot;
use super::workload::{Policy, Workload};

/// Authors per other database in the measured feed pages (`benches/capacity_runs/measure.rs`,
/// `AUTHORS_PER_DB`): the table's rows per other database are that many authors' rows.
pub const MEASURED_AUTHORS_PER_DATABASE: f64 = 6.0;

/// The share of pages that pull at least one author from D1, with `pulled` such authors per
/// reader on average (Poisson): the pull plan's own statements and rows run only there.
pub fn pulls_anything(pulled: f64) -> f64 {
    1.0 - (-pulled.max(0.0)).exp()
}

/// Two measured operations mixed: `b` with weight `k`, `a` with the rest.
pub fn blend_op(a: OpCost, b: OpCost, k: f64) -> OpCost {
    let mix = |x: f64, y: f64| x * (1.0 - k) + y * k;
    let work = |x: Work, y: Work| x.scale(1.0 - k).plus(y.scale(k));
    OpCost {
        home: work(a.home, b.home),
        other: work(a.other, b.other),
        control: work(a.control, b.control),
        do_calls: mix(a.do_calls, b.do_calls),
        do_ms: mix(a.do_ms, b.do_ms),
        queue_messages: mix(a.queue_messages, b.queue_messages),
        subrequests: mix(a.subrequests, b.subrequests),
        cpu_ms: mix(a.cpu_ms, b.cpu_ms),
    }
}

/// Follows of the measured feed reader (`capacity_runs/measure.rs`: `AUTHORS_PER_DB` on each
/// of 3 databases): the table's page rows at home hold its edges statement's rows for that many.
pub const MEASURED_READER_FOLLOWS: f64 = 18.0;
/// Rows the reader's edges statement (`store/feed.rs::edges_statement`, on every page: all the
/// follows with their list, mute and backfill checks) reads per follow, on its home database:
/// the line through the table's reader (18 follows, 32.4 rows of its own) and the simulation's
/// readers following only the hot author (7.3 rows: 12.3 at home less the 5 of its liked-posts
/// check); the simulation's pages alone fit 1.9-2.0 over 1 to 12 follows.
pub const EDGE_ROWS_PER_FOLLOW: f64 = 1.5;

/// A page's work on the reader's own database, for `(pulled, hydrated)` D1 authors per page:
/// the measured reader had [`MEASURED_AUTHORS_PER_DATABASE`] of its authors there too, whose
/// rows are an other database's (`other`); a reader's authors live there only `1/P` of the
/// time. The rest (its own: edges, window bookkeeping) is the push plan's, or the pull plan's
/// on the pages that pull anything ([`pulls_anything`]; the simulation's hybrid pages pulled
/// 0.01 authors from D1, and charging all of them the pull plan's own rows put the model at
/// 2.9x the measured rows).
/// A reader following `follows` reads [`EDGE_ROWS_PER_FOLLOW`] rows more or less per follow than
/// the measured one.
pub fn home_work(
    push: OpCost,
    pull: OpCost,
    (pulled, hydrated, follows): (f64, f64, f64),
    databases: f64,
) -> Work {
    let base = blend_op(push, pull, pulls_anything(pulled));
    let per_author = |op: OpCost| op.other.rows_read / MEASURED_AUTHORS_PER_DATABASE;
    let edges = EDGE_ROWS_PER_FOLLOW * (follows - MEASURED_READER_FOLLOWS);
    let own = (base.home.rows_read - base.other.rows_read + edges).max(0.0);
    // Its statements are the table's whatever authors live there: the reader's batch reads
    // them in statements it runs anyway (the simulation's pages of 2026-12-05: 6 statements at
    // home with 0, 1, 2 or 3 of the page's authors there alike; 5 for a reader with none
    // anywhere but a hot author's replica). Taking an other database's batch (3.2) off the
    // table's 5.4 when no author lives there put a page at 3.4 at home, 5.3 measured.
    Work {
        statements: base.home.statements,
        rows_read: own + (per_author(pull) * pulled + per_author(push) * hydrated) / databases.max(1.0),
        ..base.home
    }
}

/// A page's work on the other databases it touches: statements per database touched (one batch
/// each, whatever it holds), rows read per author read there (hydration and relationships read
/// each author's rows: the simulation found rows per database 4-8x the table's where a database
/// holds one of the page's authors, not six). `(per database, databases, authors)` for the
/// databases that pull and for those that only hydrate.
pub fn other_databases_work(pull: (Work, f64, f64), hydrate: (Work, f64, f64)) -> Work {
    let part = |(work, databases, authors): (Work, f64, f64)| Work {
        statements: work.statements * databases,
        rows_read: work.rows_read / MEASURED_AUTHORS_PER_DATABASE * authors.max(databases),
        rows_written: work.rows_written * databases,
    };
    part(pull).plus(part(hydrate))
}

/// Expected number of `databases` (other than the reader's) holding at least one of `n`
/// authors placed uniformly at random.
pub fn touched_others(databases: f64, n: f64) -> f64 {
    if databases <= 1.0 {
        return 0.0;
    }
    (databases - 1.0) * (1.0 - (1.0 - 1.0 / databases).powf(n))
}

/// One feed read's cost on each database, by mode.
pub(super) struct PageCost {
    pub(super) home: Work,
    /// Summed over the other databases it touches.
    pub(super) others: Work,
    pub(super) touched: f64,
    pub(super) object_calls: f64,
    /// Requests to hot authors' replicas.
    pub(super) replica_calls: f64,
    /// Jobs a read queues (activity and policy updates).
    pub(super) queue_messages: f64,
    pub(super) subrequests: f64,
    pub(super) cpu_ms: f64,
}

/// A page's Worker CPU, ms: an estimate (#40 found the model charging none). The table's
/// figure is a request's local wall time less its storage waits, which for a page, whose waits
/// overlap its work, rounds to zero; decoding ~200 rows and rendering 20 statuses in wasm is a
/// few milliseconds.
pub const PAGE_CPU_MS: f64 = 3.0;

pub(super) fn page_cost(c: &Costs, w: &Workload, g: &Graph, hot: &Hot, policy: &Policy, p: f64) -> PageCost {
    let mix = |first: OpCost, later: OpCost| blend_op(first, later, w.page_n_share);
    let push = mix(c.feed_push_page1, c.feed_push_page_n);
    let pull = mix(c.feed_pull_page1, c.feed_pull_page_n);
    // A page's items come from about `page_size` distinct authors (fewer if one follows fewer).
    // Hot authors are pulled and hydrated from their replicas (a request each), not from D1:
    // a pulled one is no D1 author of the page either (the simulation's hybrid readers, who pull
    // the hot author from its replica, were charged it as one).
    let page_authors =
        (policy.page_size.min(w.follows_per_user) - hot.hydrated_per_read - hot.pulled_per_read).max(0.0);
    let pulled = (g.pulled_per_reader - hot.pulled_per_read).max(0.0);
    let pull_dbs = touched_others(p, pulled);
    let all_dbs = touched_others(p, pulled + page_authors);
    let hydrate_only = (all_dbs - pull_dbs).max(0.0);
    // The share of a page's authors that live on another database than the reader's.
    let elsewhere = 1.0 - 1.0 / p.max(1.0);
    // The pull plan's object calls, messages and subrequests on the pages that pull anything.
    let base = blend_op(push, pull, pulls_anything(pulled));
    let calls = hot.calls_per_read();
    PageCost {
        // Liked-by-viewer for hot posts: one statement more in the reader's home batch.
        home: home_work(push, pull, (pulled, page_authors, w.follows_per_user), p)
            .plus(c.replica.liked_home.scale(calls.min(1.0))),
        others: other_databases_work(
            (pull.other, pull_dbs, pulled * elsewhere),
            (push.other, hydrate_only, page_authors * elsewhere),
        ),
        touched: all_dbs + 1.0,
        object_calls: base.do_calls,
        replica_calls: calls,
        queue_messages: base.queue_messages,
        // For feed pages the table holds the subrequests besides the other databases' batches
        // (the window, the reader's database, the cache): one more per other database, and
        // one per replica asked.
        subrequests: base.subrequests + all_dbs + calls,
        cpu_ms: base.cpu_ms.max(PAGE_CPU_MS),
    }
}
