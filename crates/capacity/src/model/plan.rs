//! The model for P databases: the load on a typical database, on the control database and on
//! the most followed celebrity's, and the figures the limits are checked on.

use super::bill::{bill, stored_bytes};
use super::burst::{burst, burst_to_every_active};
use super::costs::{Costs, OpCost, Work};
use super::cron::{cron_control, cron_recount, cron_share};
use super::design::{design_costs, recount_rows_per_s, CONSUMER_FLUSH_SECONDS};
use super::graph::{graph, Graph};
use super::hot::{hot_authors, inclusion, Hot};
use super::live::{live_work, LiveWork};
use super::page::{page_cost, touched_others, PageCost};
use super::paths;
use super::plan_types::{DbLoad, Plan, Share};
use super::timelines;
use super::workload::{Limits, Mode, Policy, Prices, TimelineMix, Workload};

/// An operation's name and its work per second.
type Part = (&'static str, Work);

/// The per-second rates a plan is made of.
struct Rates {
    reads: f64,
    posts: f64,
    /// Window writes per second.
    deliveries: f64,
    /// Fan-out chunks per second, and the databases one chunk's readers live on.
    chunks: f64,
    chunk_dbs: f64,
    messages: f64,
    consumer_batches: f64,
    /// Writes of the consumers' counters: one a batch before #40, since at most one an
    /// isolate every `CONSUMER_FLUSH_SECONDS` (`services/tally.rs`).
    figure_flushes: f64,
    /// D1 work of the replicas' leases (on hot authors' databases) and of the liker-side rows.
    replica_lease: Work,
    liker_side: Work,
    /// The paths beyond an original post (#39): their extras on every database, on the control
    /// database, and their object calls and Worker CPU ms per second.
    path_parts: Vec<Part>,
    path_calls: f64,
    path_cpu_ms: f64,
    /// The cron's recount of the counters at the horizon's data (#40), all databases.
    recount: Work,
    /// What a delivery reads beside its followers outside push mode ([`live_work`]).
    live: LiveWork,
}

fn rates(c: &Costs, w: &Workload, g: &Graph, hot: &Hot, page: &PageCost, p: f64, batch: f64) -> Rates {
    let (reads, posts) = (w.feed_reads_per_s, w.posts_per_s);
    // Every status is a post of its author's; the paths change how far each is delivered.
    let delivery = paths::delivery(w, g);
    let chunks = delivery.chunks;
    let (path_messages, path_calls, path_cpu_ms) = paths::extra_rates(c, w);
    let messages = posts * c.fanout_post.queue_messages
        + chunks * c.fanout_chunk.queue_messages
        + path_messages
        + w.follows_per_s * c.follow.queue_messages
        + w.comments_per_s * c.comment.queue_messages
        + w.likes_per_s * c.like.queue_messages
        + reads * page.queue_messages
        // The cron sends each database its share as a message, every pass (#40: unbilled before).
        + p * w.cron_passes_per_s;
    Rates {
        reads,
        posts,
        deliveries: delivery.deliveries,
        chunks,
        // The chunk asks each of its readers' databases which of them are active.
        chunk_dbs: touched_others(p, g.readers_per_chunk) + 1.0 - (1.0 - 1.0 / p).powf(g.readers_per_chunk),
        messages,
        consumer_batches: messages / batch.max(1.0),
        figure_flushes: messages / batch.max(1.0),
        replica_lease: hot.lease,
        liker_side: if hot.replicas > 0.0 {
            c.replica.like_home.scale(w.likes_per_s)
        } else {
            Work::default()
        },
        path_parts: paths::spread_parts(c, w, g),
        path_calls,
        path_cpu_ms,
        recount: Work::default(),
        live: LiveWork::default(),
    }
}

/// The deliveries' live pages and rates reads ([`live_work`]), and the messages that continue
/// full live pages (their consumer batches with them).
fn add_live(r: &mut Rates, w: &Workload, g: &Graph, p: f64, batch: f64) {
    r.live = live_work(w, g, p);
    r.messages += r.live.messages;
    r.deliveries += r.live.deliveries;
    r.consumer_batches = r.messages / batch.max(1.0);
    r.figure_flushes = r.consumer_batches;
}

/// What spreads evenly over the databases (a typical one carries `1/P` of it).
fn spread_parts(c: &Costs, w: &Workload, r: &Rates, page: &PageCost, p: f64) -> Vec<Part> {
    let both = |op: &OpCost| op.home.plus(op.other);
    let mut parts = vec![
        ("feed reads", page.home.plus(page.others).scale(r.reads)),
        ("publish", both(&c.publish).scale(r.posts)),
        ("fan-out per post", both(&c.fanout_post).scale(r.posts)),
        (
            "fan-out per chunk",
            c.fanout_chunk.home.plus(c.fanout_chunk.other.scale(r.chunk_dbs)).scale(r.chunks),
        ),
        ("fan-out per delivered reader", both(&c.fanout_reader).scale(r.deliveries)),
        ("likes", both(&c.like).scale(w.likes_per_s)),
        ("comments", both(&c.comment).scale(w.comments_per_s)),
        ("follows", both(&c.follow).scale(w.follows_per_s)),
        ("cron pass", cron_share(c.cron_pass.home, p).scale(p * w.cron_passes_per_s)),
        (CONSUMER_FLUSH_SHARE, c.consumer_flush.scale(r.figure_flushes)),
        ("hot replicas' leases and refreshes", r.replica_lease),
        ("likes' liker-side rows (for hot posts)", r.liker_side),
        ("the cron's recount of the counters (the horizon's data)", r.recount),
        ("deliveries' live marks and authors' rates read (hybrid, pull)", r.live.authors),
        ("open sockets' home-row marks and edge marks", r.live.sockets),
    ];
    parts.extend(r.path_parts.iter().copied());
    parts.extend(timelines::timeline_spread_parts(c, w, p));
    parts
}

/// What stays on the control database, wherever the actors live.
fn control_parts(c: &Costs, w: &Workload, r: &Rates, p: f64) -> Vec<Part> {
    let mut parts = vec![
        ("feed reads", c.feed_push_page1.control.scale(r.reads)),
        ("publish", c.publish.control.scale(r.posts)),
        ("fan-out per post", c.fanout_post.control.scale(r.posts)),
        ("fan-out per chunk", c.fanout_chunk.control.scale(r.chunks)),
        ("fan-out per delivered reader", c.fanout_reader.control.scale(r.deliveries)),
        ("likes", c.like.control.scale(w.likes_per_s)),
        ("comments", c.comment.control.scale(w.comments_per_s)),
        ("follows", c.follow.control.scale(w.follows_per_s)),
        ("cron pass", cron_control(c.cron_pass.control).scale(w.cron_passes_per_s)),
        ("open sockets' leases (hourly)", r.live.control),
    ];
    parts.extend(timelines::timeline_control_parts(c, w, p));
    parts
}

/// What the most followed celebrity's database carries beyond its even share: every read
/// that pulls it or hydrates one of its posts, and its followers paged for its posts. Also
/// returns its follower count.
fn celebrity_parts(
    c: &Costs,
    w: &Workload,
    policy: &Policy,
    (hot, g): (&Hot, &Graph),
    p: f64,
) -> (f64, Vec<Part>) {
    let top = w.celebrities.iter().map(|c| c.followers.min(w.users)).fold(0.0, f64::max);
    let top_posts_per_s = if top > 0.0 { w.celebrity_posts_per_day / 86_400.0 } else { 0.0 };
    let delivered = match w.mode {
        Mode::Push => top * w.window_holders,
        Mode::Hybrid => (top * w.weekly_active).min(policy.push_max_followers),
        Mode::Pull => 0.0,
    };
    let pulled = w.mode == Mode::Pull || (w.mode == Mode::Hybrid && top > policy.push_max_followers);
    // A pulled celebrity is read on every page of its readers; a pushed one only hydrated
    // when one of its posts is on the page: of a reader's incoming posts, its share.
    let incoming_per_day = w.follows_per_user * w.posts_per_s * 86_400.0 / w.peak_to_mean / w.users;
    let share = (w.celebrity_posts_per_day / incoming_per_day.max(1e-9)).min(1.0);
    let on_page = 1.0 - (1.0 - share).powf(policy.page_size);
    let per_read = match (policy.hot_replicas, pulled) {
        (true, true) => c.replica.page_author_db,
        (true, false) => c.replica.page_author_db.scale(on_page),
        (false, true) => c.feed_pull_page1.other,
        (false, false) => c.feed_push_page1.other.scale(on_page),
    };
    let chunks = (delivered / policy.fanout_chunk).ceil();
    let paging = c.fanout_reader.home.scale(delivered).plus(c.fanout_chunk.home.scale(chunks));
    // Its posts' own statements (the request, the post's part of the fan-out) are in the even
    // share at 1/P; they all run on its database.
    let own_posts = c.publish.home.plus(c.fanout_post.home).scale(top_posts_per_s * (1.0 - 1.0 / p.max(1.0)));
    let parts = vec![
        ("reads that pull or hydrate the celebrity", per_read.scale(w.feed_reads_per_s * top / w.users)),
        ("paging its followers for its posts", paging.scale(top_posts_per_s)),
        ("its own posts (the request and the post's fan-out)", own_posts),
        ("the cron recounting its followers", cron_recount(w, top, p)),
        ("its replicas' leases and refreshes", hot.top_lease),
        (
            "boosts, replies and quotes of its posts (mirror rows, notifications, reply checks)",
            paths::answered_work(c, w, g, top, top_posts_per_s).scale(1.0 - 1.0 / p.max(1.0)),
        ),
    ];
    let mut parts = parts;
    if policy.hot_replicas {
        parts.push(("its posts told to its replicas", c.replica.publish_author_db.scale(top_posts_per_s)));
    }
    (top, parts)
}

/// With replicas, the busiest database of an author *below* the threshold: one just under it
/// is still read from D1 by every read that pulls it or hydrates one of its posts. Its
/// followers, and what those reads add to its database (per second).
fn largest_cold(c: &Costs, w: &Workload, policy: &Policy, g: &Graph, p: f64) -> Option<(f64, Work)> {
    if !policy.hot_replicas {
        return None;
    }
    let x = policy.hot_followers.min(w.users);
    let per_day = w.posts_per_s / w.users * 86_400.0 / w.peak_to_mean;
    let (pulled, on_page) = inclusion(w, policy, x, per_day);
    let reads = w.feed_reads_per_s * x / w.users;
    let work = c
        .feed_pull_page1
        .other
        .scale(reads * pulled)
        .plus(c.feed_push_page1.other.scale(reads * (1.0 - pulled) * on_page));
    // The boosts, replies and quotes of its posts, beyond their even share.
    let answered = paths::answered_work(c, w, g, x, w.posts_per_s / w.users).scale(1.0 - 1.0 / p.max(1.0));
    Some((x, work.plus(answered)))
}

/// The name of the consumers' figure flushes in a database's breakdown.
pub const CONSUMER_FLUSH_SHARE: &str = "consumer batches' figures";

/// Bindings the front script holds besides its service bindings: its Durable Object
/// namespaces, queues, the media bucket and rate limiters (wrangler.toml), rounded up.
pub const FRONT_FIXED_BINDINGS: f64 = 32.0;

/// Worker scripts for `p` databases (#40): one script binds them all while they fit in one
/// data script's share; beyond, data scripts of `databases_per_script` each behind the
/// front's service bindings. The scripts, and the most bindings one of them holds.
pub fn scripts(p: f64, policy: &Policy) -> (f64, f64) {
    let per = policy.databases_per_script.max(1.0);
    if p <= per {
        return (1.0, p + FRONT_FIXED_BINDINGS);
    }
    let data = (p / per).ceil();
    (data + 1.0, per.max(data + FRONT_FIXED_BINDINGS))
}

fn total(parts: &[Part]) -> Work {
    parts.iter().fold(Work::default(), |acc, (_, w)| acc.plus(*w))
}

/// A database's breakdown: `parts` and its even share, biggest first.
fn with_even_share(parts: &[Part], even: Work) -> Vec<Share> {
    let mut out = shares(parts.iter().copied());
    out.push(Share {
        operation: "its even share (as a typical database)",
        statements_per_s: even.statements,
    });
    out.sort_by(|a, b| b.statements_per_s.total_cmp(&a.statements_per_s));
    out
}

/// The model for `p` databases.
pub fn plan(c: &Costs, w: &Workload, policy: &Policy, limits: &Limits, prices: &Prices, p: f64) -> Plan {
    let c = &design_costs(c, w, policy);
    let w = &Workload { timelines: TimelineMix { relays: !policy.before_40, ..w.timelines }, ..w.clone() };
    let g = graph(w, policy);
    let hot = hot_authors(c, w, policy);
    let page = page_cost(c, w, &g, &hot, policy, p);
    let batch = if policy.fanout_batch > 0.0 { policy.fanout_batch } else { c.consumer_batch };
    let mut r = rates(c, w, &g, &hot, &page, p, batch);
    r.recount = recount_rows_per_s(w, policy, p);
    add_live(&mut r, w, &g, p, batch);
    if !policy.before_40 {
        let isolates = consumers_busy(&r, &g, policy, limits).max(1.0);
        r.figure_flushes = r.figure_flushes.min(isolates / CONSUMER_FLUSH_SECONDS);
    }
    let (timeline_requests, listener_calls, timeline_cpu_ms) = timelines::requests_and_calls(c, w);
    let http = r.reads + r.posts + w.likes_per_s + w.comments_per_s + w.follows_per_s + timeline_requests;
    let mut result = Plan {
        databases: p,
        graph: g,
        hot,
        databases_touched_per_page: page.touched,
        page_waves: 1.0 + (page.touched / limits.connections).ceil(),
        window_writes_per_s: r.deliveries,
        queue_messages_per_s: r.messages,
        worker_requests_per_s: http + r.consumer_batches,
        ..Plan::default()
    };
    place_loads(&mut result, c, w, policy, (&r, &page));
    count_objects(&mut result, c, w, &r, &page);
    result.object_requests_per_s += listener_calls;
    place_timelines(&mut result, c, w, limits);
    count_invocations(&mut result, c, policy, limits, (&r, &page, batch));
    let on_its_database = (result.celebrity.work.statements, p);
    (result.burst, result.burst_every_active) = (
        burst(c, w, policy, limits, on_its_database),
        burst_to_every_active(c, w, policy, limits, on_its_database),
    );
    (result.scripts, result.bindings_per_script) = scripts(p, policy);
    result.boost_burst = paths::boost_burst(c, w, policy);
    result.path_rates = paths::path_rates(w);
    result.bill = bill(c, w, prices, &result, (page.cpu_ms, r.path_cpu_ms + timeline_cpu_ms), p);
    result.monthly_usd = result.bill.iter().map(|l| l.usd).sum();
    result
}

/// The plan's databases: a typical one, the control database, the most followed celebrity's
/// and (with replicas) the largest cold author's, what makes up each, and the busiest.
fn place_loads(plan: &mut Plan, c: &Costs, w: &Workload, policy: &Policy, (r, page): (&Rates, &PageCost)) {
    let p = plan.databases;
    let spread: Vec<Part> =
        spread_parts(c, w, r, page, p).into_iter().map(|(n, wk)| (n, wk.scale(1.0 / p))).collect();
    let control = control_parts(c, w, r, p);
    let (top, celebrity_extra) = celebrity_parts(c, w, policy, (&plan.hot, &plan.graph), p);
    let typical_work = total(&spread);
    let bytes = stored_bytes(c, w) / p;
    plan.typical = DbLoad { work: typical_work, bytes };
    plan.control = DbLoad { work: typical_work.plus(total(&control)), bytes };
    plan.celebrity = DbLoad {
        work: typical_work.plus(total(&celebrity_extra)),
        bytes: bytes + top * c.bytes.follow / 2.0,
    };
    plan.largest_cold = largest_cold(c, w, policy, &plan.graph, p).map(|(x, work)| {
        (x, DbLoad { work: typical_work.plus(work), bytes: bytes + x * c.bytes.follow / 2.0 })
    });
    plan.typical_shares = shares(spread.iter().copied());
    plan.control_shares = with_even_share(&control, typical_work);
    plan.celebrity_shares = with_even_share(&celebrity_extra, typical_work);
    plan.busiest = [
        ("the control database (DB_0)", plan.control.work.statements),
        ("the most followed celebrity's database", plan.celebrity.work.statements),
        (
            "the largest author's below the hot threshold",
            plan.largest_cold.map_or(0.0, |(_, l)| l.work.statements),
        ),
    ]
    .into_iter()
    .max_by(|a, b| a.1.total_cmp(&b.1))
    .map_or("", |(name, _)| name);
}

/// The plan's Durable Objects: requests to windows and like serializers, to the replicas, and
/// the busiest object of any kind.
fn count_objects(plan: &mut Plan, c: &Costs, w: &Workload, r: &Rates, page: &PageCost) {
    plan.object_requests_per_s = r.reads * page.object_calls
        + r.deliveries * c.fanout_reader.do_calls
        + w.likes_per_s * c.like.do_calls
        + other_object_requests(c, w, r)
        + r.path_calls;
    plan.replica_requests_per_s = r.reads * page.replica_calls + plan.hot.writes_per_s;
    plan.window_requests_per_s =
        r.reads / (w.users * w.daily_active).max(1.0) + r.deliveries / (w.users * w.window_holders).max(1.0);
    plan.like_object_requests_per_s = w.likes_per_s * w.hottest_post_like_share;
    (plan.hottest_object, plan.hottest_object_requests_per_s) = [
        ("the hottest post's like serializer", plan.like_object_requests_per_s),
        ("a hot author's replica", plan.hot.hottest_replica_rps),
        ("a reader's window (mean)", plan.window_requests_per_s),
    ]
    .into_iter()
    .max_by(|a, b| a.1.total_cmp(&b.1))
    .unwrap_or(("", 0.0));
}

/// The public and tag timelines' rates and hot keys, and a public-stream listener's window
/// among the hottest objects.
fn place_timelines(result: &mut Plan, c: &Costs, w: &Workload, limits: &Limits) {
    result.timeline_rates = timelines::timeline_rates(w);
    let ceiling = limits.d1_statements_per_s * limits.query_headroom;
    result.hot_keys = timelines::hot_keys(c, w, result.typical.work.statements, ceiling);
    // A listener's window hears of every public post before #40, of each stripe's flush since.
    let listened = if w.timelines.relays {
        let stripes = timelines::public_stripes(w);
        stripes * (result.timeline_rates.public_posts / stripes).min(1.0 / timelines::RELAY_FLUSH_SECONDS)
    } else {
        result.timeline_rates.public_posts
    };
    let listening = c.timelines.measured && result.timeline_rates.public_listeners > 0.0;
    if listening && listened > result.hottest_object_requests_per_s {
        (result.hottest_object, result.hottest_object_requests_per_s) =
            ("a public-stream listener's window", listened);
    }
}

/// Consumer time a second of fan-out takes: a full chunk's wall time, a smaller one pro rata.
fn consumers_busy(r: &Rates, g: &Graph, policy: &Policy, limits: &Limits) -> f64 {
    r.chunks * limits.chunk_seconds * (g.readers_per_chunk / policy.fanout_chunk).clamp(0.0, 1.0)
}

/// The plan's invocations against their limits: a fan-out consumer batch of full chunks, the
/// consumers busy at once, the cron's invocation, a feed page.
fn count_invocations(
    plan: &mut Plan,
    c: &Costs,
    policy: &Policy,
    limits: &Limits,
    (r, page, batch): (&Rates, &PageCost, f64),
) {
    let p = plan.databases;
    // A full chunk asks each of its readers' databases (up to 500) which readers are active.
    let full = policy.fanout_chunk;
    let full_chunk_dbs = touched_others(p, full) + 1.0 - (1.0 - 1.0 / p).powf(full);
    let chunk_d1 = c.fanout_chunk.home.statements + c.fanout_chunk.other.statements * full_chunk_dbs;
    plan.consumer_subrequests = batch * (full * c.fanout_reader.do_calls + chunk_d1);
    plan.consumer_d1_queries = batch * chunk_d1;
    plan.fanout_batch = batch;
    plan.fanout_batch_that_fits = (limits.d1_queries_per_invocation / chunk_d1.max(1e-9)).floor();
    plan.consumers_busy = consumers_busy(r, &plan.graph, policy, limits);
    plan.figure_flushes_per_s = r.figure_flushes;
    // The cron's own invocation sends a share message per database, 100 to a send.
    plan.cron_subrequests = (p / 100.0).ceil() + c.cron_pass.control.statements.ceil();
    plan.page_subrequests = page.subrequests;
    plan.page_d1_queries = page.home.statements + page.others.statements;
}

/// Object calls of the operations the page, delivery and like terms leave out: a follow
/// backfills the reader's window (one call, measured), a publish and a comment call none
/// today. The simulation (issue #28) found the follows' calls missing from the count.
fn other_object_requests(c: &Costs, w: &Workload, r: &Rates) -> f64 {
    w.follows_per_s * c.follow.do_calls
        + w.comments_per_s * c.comment.do_calls
        + r.posts * (c.publish.do_calls + c.fanout_post.do_calls)
}

fn shares(parts: impl Iterator<Item = (&'static str, Work)>) -> Vec<Share> {
    let mut out: Vec<Share> =
        parts.map(|(operation, w)| Share { operation, statements_per_s: w.statements }).collect();
    out.sort_by(|a, b| b.statements_per_s.total_cmp(&a.statements_per_s));
    out
}
