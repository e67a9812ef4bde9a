//! The delivery paths beyond an original post (#39) in the model: what a boost, a reply, a quote,
//! a mention and a direct post add to a post of the actor's (from the measured `costs.paths`),
//! their rates in the workload (`PathMix`), how far each is delivered, what they put on the
//! database of the author they answer, and one hot author's post boosted by hot boosters.
//!
//! A boost, a reply and a quote are posts of the actor's: the model costs each as a post (the
//! request, the post's part of the fan-out, a chunk per 500 followers paged, a window write per
//! delivered reader) plus its [`extra`]. A direct post is a post to its recipients only (one
//! chunk, a window write for a recipient holding a window); a mention adds its [`extra`] to the
//! post that makes it.

use serde::Serialize;

use super::costs::{Costs, OpCost, Work};
use super::graph::Graph;
use super::workload::{Mode, Policy, Workload};

/// Bytes a comment took before notifications came (docs/CAPACITY.md, the measured table): the
/// comment's measured bytes less this are its notification row with its indexes, the figure a
/// path's notification is charged.
pub const COMMENT_BYTES_BEFORE_NOTIFICATIONS: f64 = 82.0;
/// The recount window of a boost burst: an hour (the first-hour share is the workload's).
const BOOST_HOUR_SECONDS: f64 = 3_600.0;

fn minus(a: Work, b: Work) -> Work {
    Work {
        statements: (a.statements - b.statements).max(0.0),
        rows_read: (a.rows_read - b.rows_read).max(0.0),
        rows_written: (a.rows_written - b.rows_written).max(0.0),
    }
}

/// What the measured paths' figures include of a post: the publish request, the post's part of
/// the fan-out and one chunk's part on the author's database. The paths were measured with an
/// actor without followers, and their drained event read and wrote on its database what the
/// post's part and one chunk do (a boost's 53.7 rows read and 26 written at home against the
/// request's 32.8 and 13, the rest 20.9 and 13: a post's part and a chunk's, 20.0 and 13); that
/// chunk had no readers, so no reader database.
pub fn post_equivalent(c: &Costs) -> OpCost {
    OpCost {
        home: c.publish.home.plus(c.fanout_post.home).plus(c.fanout_chunk.home),
        other: Work::default(),
        control: c.publish.control.plus(c.fanout_post.control).plus(c.fanout_chunk.control),
        do_calls: c.publish.do_calls + c.fanout_post.do_calls,
        do_ms: 0.0,
        queue_messages: c.publish.queue_messages + c.fanout_post.queue_messages,
        subrequests: c.publish.subrequests,
        cpu_ms: c.publish.cpu_ms + c.fanout_post.cpu_ms,
    }
}

/// What a path's measured request and event add to a post of the actor's: the measured figure
/// less [`post_equivalent`], every figure at least 0 (`other`, on the one other database, is all
/// of it). A table without paths measured adds nothing.
pub fn extra(c: &Costs, measured: &OpCost) -> OpCost {
    if measured.home.statements <= 0.0 {
        return OpCost::default();
    }
    let post = post_equivalent(c);
    OpCost {
        home: minus(measured.home, post.home),
        other: measured.other,
        control: minus(measured.control, post.control),
        do_calls: (measured.do_calls - post.do_calls).max(0.0),
        do_ms: measured.do_ms,
        queue_messages: (measured.queue_messages - post.queue_messages).max(0.0),
        subrequests: (measured.subrequests - post.subrequests).max(0.0),
        cpu_ms: (measured.cpu_ms - post.cpu_ms).max(0.0),
    }
}

/// Statuses per second by path (the workload's `posts_per_s` split by its `PathMix`), and the
/// mentions the originals, replies and quotes make.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PathRates {
    pub originals: f64,
    pub boosts: f64,
    pub replies: f64,
    pub quotes: f64,
    pub directs: f64,
    pub mentions: f64,
}

impl PathRates {
    /// What a boost, a reply or a quote can be of: originals, replies and quotes.
    pub fn targets(&self) -> f64 {
        self.originals + self.replies + self.quotes
    }
}

pub fn path_rates(w: &Workload) -> PathRates {
    let (m, posts) = (&w.paths, w.posts_per_s);
    let (originals, replies, quotes) =
        (posts * m.original_share(), posts * m.reply_share, posts * m.quote_share);
    PathRates {
        originals,
        boosts: posts * m.boost_share,
        replies,
        quotes,
        directs: posts * m.direct_share,
        mentions: (originals + replies + quotes) * m.mentions_per_post,
    }
}

/// How the statuses are delivered, per second: window writes, fan-out chunks (queue messages),
/// and the chunks of replies (each asks the account replied to's database which of the chunk's
/// readers follow it: one statement, `domain/fanout` `also_following`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Delivery {
    pub deliveries: f64,
    pub chunks: f64,
    pub reply_chunks: f64,
}

/// Originals, boosts and quotes reach what a post reaches; a reply pages the same followers and
/// reaches `reply_reach` of them; a direct post is one chunk to its recipients, a window write
/// for each holding a window (none in pull mode, where nothing is pushed). Every status also
/// goes into its author's own window, if the author holds one (the first chunk's write: the
/// simulation counted 2,001 deliveries for a post to 2,000 followers).
pub fn delivery(w: &Workload, g: &Graph) -> Delivery {
    let r = path_rates(w);
    let paged = r.originals + r.boosts + r.quotes + r.replies;
    let reached = r.originals + r.boosts + r.quotes + r.replies * w.paths.reply_reach;
    let direct_reach = if w.mode == Mode::Pull { 0.0 } else { w.paths.direct_recipients * w.window_holders };
    let own = (paged + r.directs) * w.window_holders;
    Delivery {
        deliveries: reached * g.deliveries_per_post + r.directs * direct_reach + own,
        chunks: paged * g.chunks_per_post + r.directs,
        reply_chunks: r.replies * g.chunks_per_post,
    }
}

/// One reply chunk's question on the account replied to's database: one statement (counted),
/// and an index probe per reader of the chunk (derived from the statement's shape, `followers_among`:
/// not measured at a full chunk; the measured reply's chunk had no readers).
pub fn reply_check(g: &Graph) -> Work {
    Work { statements: 1.0, rows_read: g.readers_per_chunk, rows_written: 0.0 }
}

/// Each path's measured extra and its rate, with the name the load breakdown shows.
pub fn extras(c: &Costs, w: &Workload) -> [(&'static str, OpCost, f64); 5] {
    let (r, p) = (path_rates(w), &c.paths);
    [
        ("boosts (the original's mirror, its notification)", extra(c, &p.boost), r.boosts),
        ("replies (the thread's row, its notification)", extra(c, &p.reply), r.replies),
        ("quotes (the quoted post's mirror, its notification)", extra(c, &p.quote), r.quotes),
        ("mentions (the mentioned account's notification)", extra(c, &p.mention), r.mentions),
        ("direct posts (the notification, both conversations)", extra(c, &p.direct), r.directs),
    ]
}

/// The paths' work on every database per second (home, other and what the measurement saw on
/// `DB_0`), a part per path: what spreads evenly, as a post's own work does. The reply checks
/// are with the replies. A mention's and a direct post's one statement on `DB_0` in the
/// measurement (a row read) is the mentioned handle's lookup (`services/mentions.rs::resolve`
/// -> `users::resolve`, on the handle's database, a hash of the handle), which the measured
/// handle happened to hash to there: no path touches the control database itself, so at P
/// databases it spreads with the rest (the model charged it to `DB_0`, 240 statements/s at
/// the headline, until 2026-12-05).
pub fn spread_parts(c: &Costs, w: &Workload, g: &Graph) -> Vec<(&'static str, Work)> {
    let checks = reply_check(g).scale(delivery(w, g).reply_chunks);
    extras(c, w)
        .into_iter()
        .enumerate()
        .map(|(i, (name, op, rate))| {
            let work = op.home.plus(op.other).plus(op.control).scale(rate);
            (name, if i == 1 { work.plus(checks) } else { work })
        })
        .collect()
}

/// Per second, the paths' queue messages, object calls and Worker CPU milliseconds beyond a
/// post's (the measured requests sent none and called none: 0 unless re-measured).
pub fn extra_rates(c: &Costs, w: &Workload) -> (f64, f64, f64) {
    extras(c, w).iter().fold((0.0, 0.0, 0.0), |acc, (_, op, rate)| {
        (acc.0 + op.queue_messages * rate, acc.1 + op.do_calls * rate, acc.2 + op.cpu_ms * rate)
    })
}

/// Bytes the paths add to D1 per second at peak beyond their statuses' post rows: a
/// notification each (boost, reply, quote, mention, direct), at a comment's notification's
/// measured bytes. The mirror and conversation rows are not measured in bytes (left out).
pub fn notification_bytes_per_s(c: &Costs, w: &Workload) -> f64 {
    let r = path_rates(w);
    let notification = (c.bytes.comment - COMMENT_BYTES_BEFORE_NOTIFICATIONS).max(0.0);
    (r.boosts + r.replies + r.quotes + r.mentions + r.directs) * notification
}

/// Of the boosts, replies and quotes, the share that answer one author's posts: they pick their
/// targets in proportion to the readers a target reached (a boost comes from one of them), and
/// a status reaches `follows_per_user` readers on average.
pub fn answered_share(w: &Workload, followers: f64, posts_per_s: f64) -> f64 {
    let targets = path_rates(w).targets() * w.follows_per_user;
    if targets <= 0.0 {
        return 0.0;
    }
    (posts_per_s * followers / targets).min(1.0)
}

/// What the boosts, replies and quotes of one author's posts put on its database per second
/// (their `other` work: the mirror rows, the thread's rows, the notifications; and the replies'
/// chunk checks), for an author with `followers` posting `posts_per_s`.
pub fn answered_work(c: &Costs, w: &Workload, g: &Graph, followers: f64, posts_per_s: f64) -> Work {
    let share = answered_share(w, followers, posts_per_s);
    let [boost, reply, quote, _, _] = extras(c, w);
    let checks = reply_check(g).scale(reply.2 * g.chunks_per_post);
    [boost, reply, quote]
        .iter()
        .fold(checks, |acc, (_, op, rate)| acc.plus(op.other.scale(*rate)))
        .scale(share)
}

/// One post of the most followed author, boosted by its readers (hot boosters among them): what
/// lands on the original's database, against what a booster's own fan-out puts on the booster's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct BoostBurst {
    /// Boosts the post gets (its followers times the boosts per reader a status reached).
    pub boosts: f64,
    /// Statements they put on the original's database (its mirror row, the notification each).
    pub statements: f64,
    /// Per second in the first hour (the workload's first-hour share of the boosts).
    pub first_hour_per_s: f64,
    /// The largest named booster besides the author: its followers, and its boost's fan-out
    /// statements, all on the booster's own database (as a post of its own: its replicas too).
    pub booster_followers: f64,
    pub booster_statements: f64,
    /// The author's own post's fan-out statements on its database (the celebrity-sized burst).
    pub original_statements: f64,
}

/// A post's fan-out statements on its author's database, for an author with `followers`: the
/// request, the post's part, a chunk per `fanout_chunk` delivered readers, the readers' paging.
/// Returns `(delivered, chunks, statements)`.
pub fn fanout_statements(c: &Costs, w: &Workload, policy: &Policy, followers: f64) -> (f64, f64, f64) {
    let delivered = match w.mode {
        Mode::Push => followers * w.window_holders,
        Mode::Hybrid => (followers * w.weekly_active).min(policy.push_max_followers),
        Mode::Pull => 0.0,
    };
    let chunks = (delivered / policy.fanout_chunk).ceil();
    let statements = c.publish.home.statements
        + c.fanout_post.home.statements
        + chunks * c.fanout_chunk.home.statements
        + delivered * c.fanout_reader.home.statements;
    (delivered, chunks, statements)
}

pub fn boost_burst(c: &Costs, w: &Workload, policy: &Policy) -> BoostBurst {
    let mut sizes: Vec<f64> = w.celebrities.iter().map(|k| k.followers.min(w.users)).collect();
    sizes.sort_by(|a, b| b.total_cmp(a));
    let top = sizes.first().copied().unwrap_or(0.0);
    let booster = sizes.iter().copied().find(|x| *x < top).unwrap_or(top);
    let r = path_rates(w);
    let per_reader = if r.targets() > 0.0 { r.boosts / (r.targets() * w.follows_per_user) } else { 0.0 };
    let boosts = per_reader * top;
    let mirror = extra(c, &c.paths.boost).other.statements;
    let boost_home = extra(c, &c.paths.boost).home.statements;
    BoostBurst {
        boosts,
        statements: boosts * mirror,
        first_hour_per_s: boosts * w.paths.boost_first_hour * mirror / BOOST_HOUR_SECONDS,
        booster_followers: booster,
        booster_statements: fanout_statements(c, w, policy, booster).2 + boost_home,
        original_statements: fanout_statements(c, w, policy, top).2,
    }
}
