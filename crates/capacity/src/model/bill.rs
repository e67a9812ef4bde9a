//! The monthly bill, the account's D1 storage, and what a push and a pull cost (the push/pull
//! ratio).

use serde::Serialize;

use super::costs::{Costs, Work, REPLICA_POSTS};
use super::paths::notification_bytes_per_s;
use super::plan_types::{BillLine, Plan};
use super::workload::{Limits, Mode, Prices, Workload, SECONDS_PER_MONTH};

/// When the account's D1 storage cap binds: what the graph holds from day one, what posts,
/// likes and comments add per day at the mean rate, and the day the sum passes the cap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AccountStorage {
    pub graph_bytes: f64,
    pub bytes_per_day: f64,
    /// Of `bytes_per_day`, the likes' part (the biggest at every profile the doc shows).
    pub like_bytes_per_day: f64,
    pub bytes_at_horizon: f64,
    /// `None` if the horizon ends under the cap.
    pub days_to_cap: Option<f64>,
}

pub fn account_storage(c: &Costs, w: &Workload, limits: &Limits) -> AccountStorage {
    let mean_day = 86_400.0 / w.peak_to_mean;
    let graph_bytes = w.users * c.bytes.user + w.users * w.follows_per_user * c.bytes.follow;
    let like_bytes_per_day = w.likes_per_s * mean_day * c.bytes.like;
    let bytes_per_day = w.posts_per_s * mean_day * c.bytes.post
        + like_bytes_per_day
        + w.comments_per_s * mean_day * c.bytes.comment
        + notification_bytes_per_s(c, w) * mean_day;
    let bytes_at_horizon = stored_bytes(c, w);
    let days_to_cap = (bytes_at_horizon > limits.account_d1_bytes)
        .then(|| ((limits.account_d1_bytes - graph_bytes) / bytes_per_day.max(1e-9)).max(0.0));
    AccountStorage { graph_bytes, bytes_per_day, like_bytes_per_day, bytes_at_horizon, days_to_cap }
}

/// Everything D1 holds at the end of the retention horizon (posts, likes and comments grow
/// with time at the mean rate; users and follows are the graph).
pub fn stored_bytes(c: &Costs, w: &Workload) -> f64 {
    let kept = w.retention_days * 86_400.0 / w.peak_to_mean;
    w.users * c.bytes.user
        + w.users * w.follows_per_user * c.bytes.follow
        + w.posts_per_s * kept * c.bytes.post
        + w.likes_per_s * kept * c.bytes.like
        + w.comments_per_s * kept * c.bytes.comment
        + notification_bytes_per_s(c, w) * kept
}

fn over(usage: f64, included: f64) -> f64 {
    (usage - included).max(0.0)
}

impl BillLine {
    /// `usage` beyond `included`, at `usd_per_million` a million.
    fn per_million(
        item: &'static str,
        (usage, unit): (f64, &'static str),
        included: f64,
        usd_per_million: f64,
    ) -> Self {
        Self { item, usage, unit, usd: over(usage, included) / 1e6 * usd_per_million }
    }

    /// `usage` beyond `included`, at `usd_each` a unit.
    fn per_unit(
        item: &'static str,
        (usage, unit): (f64, &'static str),
        included: f64,
        usd_each: f64,
    ) -> Self {
        Self { item, usage, unit, usd: over(usage, included) * usd_each }
    }
}

/// What a month uses, at mean rates (peak / `peak_to_mean`), per bill line.
struct Usage {
    requests: f64,
    cpu_ms: f64,
    rows_read: f64,
    rows_written: f64,
    gb: f64,
    object_requests: f64,
    gb_s: f64,
    window_rows_read: f64,
    window_rows_written: f64,
    window_gb: f64,
    queue_ops: f64,
}

/// `cpu_ms`: a feed page's, and the paths' beyond their posts' per second.
fn usage(c: &Costs, w: &Workload, pr: &Prices, plan: &Plan, cpu_ms: (f64, f64), p: f64) -> Usage {
    let (page_cpu_ms, path_cpu_ms) = cpu_ms;
    let month = SECONDS_PER_MONTH / w.peak_to_mean;
    let reads = w.feed_reads_per_s;
    let posts = w.posts_per_s;
    let deliveries = plan.window_writes_per_s;
    let cpu = (reads * page_cpu_ms
        + posts * (c.publish.cpu_ms + c.fanout_post.cpu_ms)
        + deliveries * c.fanout_reader.cpu_ms
        + w.likes_per_s * c.like.cpu_ms
        + w.comments_per_s * c.comment.cpu_ms
        + w.follows_per_s * c.follow.cpu_ms
        + path_cpu_ms)
        * month;
    let d1 = plan.typical.work.scale(p).plus(plan.control.work.plus(plan.typical.work.scale(-1.0)));
    let do_ms = reads * plan_page_do_ms(c, w)
        + deliveries * c.fanout_reader.do_ms * c.fanout_reader.do_calls
        + w.likes_per_s * c.like.do_ms * c.like.do_calls;
    // Window storage: every holder's window full; its rows as measured per delivery and per
    // page read (a table from before they were measured: two rows written per delivery).
    let (window_reads, window_rows) = window_rows(c, w, deliveries);
    Usage {
        requests: plan.worker_requests_per_s * month,
        cpu_ms: cpu,
        rows_read: d1.rows_read * month,
        rows_written: d1.rows_written * month,
        gb: plan.typical.bytes * p / 1e9,
        object_requests: plan.object_requests_per_s * month,
        gb_s: do_ms / 1000.0 * pr.do_object_gb * month,
        window_rows_read: window_reads * month,
        window_rows_written: window_rows * month,
        window_gb: w.users * w.window_holders * 800.0 * c.bytes.window_entry / 1e9,
        queue_ops: plan.queue_messages_per_s * pr.queue_ops_per_message * month,
    }
}

/// The monthly bill at mean rates (peak / `peak_to_mean`), line by line.
pub(super) fn bill(
    c: &Costs,
    w: &Workload,
    pr: &Prices,
    plan: &Plan,
    cpu_ms: (f64, f64),
    p: f64,
) -> Vec<BillLine> {
    let u = usage(c, w, pr, plan, cpu_ms, p);
    let mut lines =
        vec![BillLine { item: "Workers Paid base", usage: 1.0, unit: "month", usd: pr.workers_base }];
    lines.extend(workers_and_d1_lines(&u, pr, p));
    lines.extend(object_and_queue_lines(&u, pr));
    if plan.hot.replicas > 0.0 {
        lines.extend(replica_lines(c, w, pr, plan));
    }
    lines.extend(media_lines(w));
    lines
}

/// Media in R2 (#40: the model left it out). Assumptions, not measurements: a share of the
/// posts carries one image of `MEDIA_BYTES`; a page shows its statuses' images, served by
/// the CDN, which misses `MEDIA_CACHE_MISS` of them (each miss one R2 read, class B).
pub const MEDIA_POST_SHARE: f64 = 0.2;
pub const MEDIA_BYTES: f64 = 150_000.0;
pub const MEDIA_CACHE_MISS: f64 = 0.05;
/// R2 prices: storage a GB-month, class A (writes) and class B (reads) a million.
pub const R2_PER_GB_MONTH: f64 = 0.015;
pub const R2_PER_M_CLASS_A: f64 = 4.50;
pub const R2_PER_M_CLASS_B: f64 = 0.36;

fn media_lines(w: &Workload) -> [BillLine; 3] {
    let month = SECONDS_PER_MONTH / w.peak_to_mean;
    let uploads = w.posts_per_s * MEDIA_POST_SHARE;
    let kept = w.retention_days * 86_400.0 / w.peak_to_mean;
    let gb = uploads * kept * MEDIA_BYTES / 1e9;
    let reads = w.feed_reads_per_s * 20.0 * MEDIA_POST_SHARE * MEDIA_CACHE_MISS * month;
    [
        BillLine {
            item: "R2 storage (media, end of horizon)",
            usage: gb,
            unit: "GB-month",
            usd: gb * R2_PER_GB_MONTH,
        },
        BillLine {
            item: "R2 writes (media uploads, class A)",
            usage: uploads * month,
            unit: "operations",
            usd: uploads * month / 1e6 * R2_PER_M_CLASS_A,
        },
        BillLine {
            item: "R2 reads (media the CDN misses, class B)",
            usage: reads,
            unit: "operations",
            usd: reads / 1e6 * R2_PER_M_CLASS_B,
        },
    ]
}

fn workers_and_d1_lines(u: &Usage, pr: &Prices, p: f64) -> [BillLine; 6] {
    [
        BillLine::per_million(
            "Workers requests (HTTP and queue consumer invocations)",
            (u.requests, "requests"),
            pr.workers_requests_included,
            pr.workers_per_m_requests,
        ),
        BillLine::per_million(
            "Workers CPU",
            (u.cpu_ms, "CPU-ms"),
            pr.workers_cpu_ms_included,
            pr.workers_per_m_cpu_ms,
        ),
        BillLine::per_million(
            "D1 rows read",
            (u.rows_read, "rows"),
            pr.d1_rows_read_included,
            pr.d1_per_m_rows_read,
        ),
        BillLine::per_million(
            "D1 rows written",
            (u.rows_written, "rows"),
            pr.d1_rows_written_included,
            pr.d1_per_m_rows_written,
        ),
        BillLine::per_unit(
            "D1 storage (end of horizon)",
            (u.gb, "GB-month"),
            pr.d1_gb_included,
            pr.d1_per_gb_month,
        ),
        BillLine::per_unit(
            "D1 databases (100,000 included)",
            (p, "databases"),
            pr.d1_databases_included,
            pr.d1_per_database_month,
        ),
    ]
}

fn object_and_queue_lines(u: &Usage, pr: &Prices) -> [BillLine; 6] {
    [
        BillLine::per_million(
            "Durable Object requests (windows, like serializers)",
            (u.object_requests, "requests"),
            pr.do_requests_included,
            pr.do_per_m_requests,
        ),
        BillLine::per_million(
            "Durable Object duration (windows, like serializers)",
            (u.gb_s, "GB-s"),
            pr.do_gb_s_included,
            pr.do_per_m_gb_s,
        ),
        BillLine::per_million(
            "Durable Object storage rows read (windows)",
            (u.window_rows_read, "rows"),
            pr.do_rows_read_included,
            pr.do_per_m_rows_read,
        ),
        BillLine::per_million(
            "Durable Object storage rows written (windows)",
            (u.window_rows_written, "rows"),
            pr.do_rows_written_included,
            pr.do_per_m_rows_written,
        ),
        BillLine::per_unit(
            "Durable Object stored data (windows)",
            (u.window_gb, "GB-month"),
            pr.do_gb_included,
            pr.do_per_gb_month,
        ),
        BillLine::per_million(
            "Queues operations (write, read, delete per message)",
            (u.queue_ops, "operations"),
            pr.queue_ops_included,
            pr.queue_per_m_ops,
        ),
    ]
}

/// The hot-author replicas' own lines (the allowances are taken by the windows' lines). A
/// replica read at least once per lease stays in memory, so its duration is billed all month.
fn replica_lines(c: &Costs, w: &Workload, pr: &Prices, plan: &Plan) -> [BillLine; 5] {
    let month = SECONDS_PER_MONTH / w.peak_to_mean;
    let hot = &plan.hot;
    let requests = plan.replica_requests_per_s * month;
    let gb_s = hot.resident * pr.do_object_gb * SECONDS_PER_MONTH
        + (plan.replica_requests_per_s * c.replica.do_ms / 1000.0) * pr.do_object_gb * month;
    let rows_read = w.feed_reads_per_s * hot.calls_per_read() * c.replica.read_rows * month;
    let rows_written = hot.writes_per_s * c.replica.write_rows * month;
    let gb = hot.replicas * REPLICA_POSTS * c.replica.post_bytes / 1e9;
    [
        BillLine {
            item: "Durable Object requests (hot replicas: reads, writes)",
            usage: requests,
            unit: "requests",
            usd: requests / 1e6 * pr.do_per_m_requests,
        },
        BillLine {
            item: "Durable Object duration (hot replicas, resident)",
            usage: gb_s,
            unit: "GB-s",
            usd: gb_s / 1e6 * pr.do_per_m_gb_s,
        },
        BillLine {
            item: "Durable Object storage rows read (hot replicas: from memory)",
            usage: rows_read,
            unit: "rows",
            usd: rows_read / 1e6 * pr.do_per_m_rows_read,
        },
        BillLine {
            item: "Durable Object storage rows written (hot replicas)",
            usage: rows_written,
            unit: "rows",
            usd: rows_written / 1e6 * pr.do_per_m_rows_written,
        },
        BillLine {
            item: "Durable Object stored data (hot replicas)",
            usage: gb,
            unit: "GB-month",
            usd: gb * pr.do_per_gb_month,
        },
    ]
}

/// Window rows read and written per second: deliveries, and the page reads of window holders
/// (none in pull mode, where reads do not call a window).
fn window_rows(c: &Costs, w: &Workload, deliveries: f64) -> (f64, f64) {
    let measured = c.window.delivery.rows_written > 0.0;
    let delivery = if measured { c.window.delivery } else { Work { rows_written: 2.0, ..Work::default() } };
    let reads = if w.mode == Mode::Pull { 0.0 } else { w.feed_reads_per_s };
    let page = c.window.page(w.page_n_share);
    (
        deliveries * delivery.rows_read + reads * page.rows_read,
        deliveries * delivery.rows_written + reads * page.rows_written,
    )
}

fn plan_page_do_ms(c: &Costs, w: &Workload) -> f64 {
    let k = w.page_n_share;
    let first = c.feed_push_page1.do_ms * c.feed_push_page1.do_calls;
    let later = c.feed_push_page_n.do_ms * c.feed_push_page_n.do_calls;
    first * (1.0 - k) + later * k
}

/// `PUSH_COST_RATIO` from the measured costs: the rule pushes an edge iff
/// `read_rate * ratio >= post_rate`, which is cheapest when `ratio = c_pull / c_push` (a pull is
/// paid per read, a push per post). USD per operation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PushCost {
    /// One window write: its request, rows written and read.
    pub push: f64,
    /// Pulling one author from D1 on one read: the rows it reads beyond hydration, and the
    /// statements' share of a database (a database at its headroom, $0.10 a month beyond
    /// 100,000).
    pub pull_d1: f64,
    /// Pulling one hot author from a replica: the request and its duration.
    pub pull_replica: f64,
    /// At the workload's means: feed reads per active reader per day, posts per author per day.
    pub reads_per_day: f64,
    pub posts_per_day: f64,
}

pub fn push_cost(c: &Costs, w: &Workload, limits: &Limits, pr: &Prices) -> PushCost {
    let m = 1e-6;
    let push = c.fanout_reader.do_calls * pr.do_per_m_requests * m
        + c.window.delivery.rows_written * pr.do_per_m_rows_written * m
        + c.window.delivery.rows_read * pr.do_per_m_rows_read * m;
    let extra_rows = (c.feed_pull_page1.other.rows_read - c.feed_push_page1.other.rows_read).max(0.0);
    let statement =
        pr.d1_per_database_month / (limits.d1_statements_per_s * limits.query_headroom * SECONDS_PER_MONTH);
    let pull_d1 = extra_rows * pr.d1_per_m_rows_read * m + c.feed_pull_page1.other.statements * statement;
    let pull_replica = c.replica.read_calls
        * (pr.do_per_m_requests * m + c.replica.do_ms / 1000.0 * pr.do_object_gb * pr.do_per_m_gb_s * m);
    let mean_day = 86_400.0 / w.peak_to_mean;
    PushCost {
        push,
        pull_d1,
        pull_replica,
        reads_per_day: w.feed_reads_per_s * mean_day / (w.users * w.daily_active).max(1.0),
        posts_per_day: w.posts_per_s * mean_day / w.users,
    }
}
