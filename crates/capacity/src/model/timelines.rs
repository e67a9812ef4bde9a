//! The public and tag timelines (#42) in the model: their pages, the index rows a public post
//! writes, the trends reads and the discovery refresh (from the measured `costs.timelines`),
//! their rates in the workload (`TimelineMix`), and the keys that do not spread: the public
//! timeline's four stripes, the public stream's listeners key and the hottest tag, each on one
//! database whatever P is.
//!
//! A page's cost does not grow with P (one range read per key, the page's posts read where they
//! live, grouped by database): the model spreads pages and index rows over the databases as it
//! spreads feed reads and posts. What does not spread is [`hot_keys`]: a key's rows live on the
//! database of its hash. A page reads the key's head from a replicated object, which reads that
//! database at most once per TTL ([`head_loads`]), so a public stripe's and a trending tag's
//! databases take the heads' loads, not every page; every public post still reads the public
//! listeners' key.

use serde::Serialize;

use super::costs::{Costs, Work};
use super::workload::Workload;

/// `domain/tags.rs` `PUBLIC_STRIPES`: the public timeline's keys (4 before #40).
pub const PUBLIC_STRIPES: f64 = 16.0;
pub const PUBLIC_STRIPES_BEFORE_40: f64 = 4.0;
/// `STREAM_RELAY_MS` (#40): a key's relay tells its listeners at most once per flush.
pub const RELAY_FLUSH_SECONDS: f64 = 1.0;

/// The public timeline's stripes in the workload's design.
pub fn public_stripes(w: &Workload) -> f64 {
    if w.timelines.relays {
        PUBLIC_STRIPES
    } else {
        PUBLIC_STRIPES_BEFORE_40
    }
}

/// Flushes per second of one key's relay whose key gets `news` per second (#40).
fn relay_flushes(news: f64) -> f64 {
    news.min(1.0 / RELAY_FLUSH_SECONDS)
}
/// `TIMELINE_HEAD_REPLICAS` and `TIMELINE_HEAD_TTL_MS` (wrangler.toml): a timeline's head is
/// held by this many replicated objects, each reading the key's database again at most once per
/// TTL (`domain/timeline_head.rs`).
pub const HEAD_REPLICAS: f64 = 8.0;
pub const HEAD_TTL_SECONDS: f64 = 1.0;

/// The loads per second a timeline's heads make when its pages come at `pages` per second: a
/// page loads at most once per replica and TTL (and a key read more rarely loads on each page).
pub fn head_loads(pages: f64) -> f64 {
    pages.min(HEAD_REPLICAS / HEAD_TTL_SECONDS)
}
/// `services/discovery.rs` `REFRESH_MS`: a database ranks its rows at most this often.
pub const DISCOVERY_REFRESH_SECONDS: f64 = 600.0;
/// A refresh on its own database (`services/discovery.rs::refresh`): its 5 rankings and the
/// mark it writes (the mark's read is every cron share's, due or not: [`DISCOVERY_CHECK`]).
pub const DISCOVERY_OWN_STATEMENTS: f64 = 6.0;
/// A refresh's statements on the control database: the delete and the insert of its rows.
pub const DISCOVERY_CONTROL_STATEMENTS: f64 = 2.0;
/// Rows a refresh keeps on the control database: 20 for each of its 5 rankings, at most.
pub const DISCOVERY_ROWS: f64 = 100.0;
/// Every cron share reads the refresh mark (one statement, one row) whether the refresh is due.
pub const DISCOVERY_CHECK: Work = Work { statements: 1.0, rows_read: 1.0, rows_written: 0.0 };

/// The timelines' rates per second at peak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TimelineRates {
    pub public_pages: f64,
    pub tag_pages: f64,
    /// Public posts: statuses indexed (originals, replies and quotes; boosts and direct posts
    /// are not), and the tag rows they write.
    pub public_posts: f64,
    pub tag_rows: f64,
    pub trends_reads: f64,
    /// Sockets listening to the public stream, and the window calls the public posts make.
    pub public_listeners: f64,
    pub listener_calls: f64,
}

pub fn timeline_rates(w: &Workload) -> TimelineRates {
    let t = &w.timelines;
    let share = t.page_share.clamp(0.0, 0.99);
    let pages = w.feed_reads_per_s * share / (1.0 - share);
    let m = &w.paths;
    let public_posts = w.posts_per_s * (m.original_share() + m.reply_share + m.quote_share);
    let active = w.users * w.daily_active;
    let listeners = active * w.live_share * t.public_stream_share;
    TimelineRates {
        public_pages: pages * (1.0 - t.tag_share),
        tag_pages: pages * t.tag_share,
        public_posts,
        tag_rows: public_posts * t.tags_per_post.min(10.0),
        trends_reads: active * t.trends_per_active_day * w.peak_to_mean / 86_400.0,
        public_listeners: listeners,
        listener_calls: listener_calls(w, public_posts, listeners, public_posts * t.tags_per_post.min(10.0)),
    }
}

/// Window calls the public stream makes per second. Before #40 each public post called every
/// listener's window; since, a post calls its keys' relays (its stripe's and its tags') and each
/// stripe's relay calls each listener once per flush (a public listener listens to every stripe).
fn listener_calls(w: &Workload, public_posts: f64, listeners: f64, tag_rows: f64) -> f64 {
    if !w.timelines.relays {
        return public_posts * listeners;
    }
    let stripes = public_stripes(w);
    public_posts + tag_rows + listeners * stripes * relay_flushes(public_posts / stripes)
}

/// A public stripe's listener reads per second and what they read: one a post before #40, one
/// a relay flush since (`(statements, rows read)` on the stripe's database).
fn listener_reads(w: &Workload, r: &TimelineRates) -> Work {
    let reads =
        if w.timelines.relays { relay_flushes(r.public_posts / public_stripes(w)) } else { r.public_posts };
    Work { statements: reads, rows_read: reads * r.public_listeners, rows_written: 0.0 }
}

/// Expected databases holding at least one of `n` items placed uniformly over `p` databases.
pub fn databases_holding(p: f64, n: f64) -> f64 {
    let p = p.max(1.0);
    p * (1.0 - (1.0 - 1.0 / p).powf(n.max(0.0)))
}

/// A measured page (or trends read) at `p` databases: its posts, measured on one database,
/// read from [`databases_holding`] `p` databases for `posts` posts of as many authors, one
/// hydration batch's statements each (the rows follow the posts, not the databases).
pub fn page_work(measured: Work, hydration: Work, p: f64, posts: f64) -> Work {
    let databases = databases_holding(p, posts);
    Work { statements: measured.statements + hydration.statements * (databases - 1.0), ..measured }
}

/// Posts on a timeline page or in the trending statuses (Mastodon's default `limit`, 20), each
/// taken to be by a different author.
pub const PAGE_POSTS: f64 = 20.0;

/// The discovery refresh on one database, per refresh: its rankings read the last day's tag
/// rows, the last day's public posts (twice: statuses and active accounts) and its users (the
/// suggestions' ranking has no index on followers), from the statements' shapes.
pub fn refresh_own(w: &Workload, p: f64) -> Work {
    let day = 86_400.0 / w.peak_to_mean;
    let r = timeline_rates(w);
    let per_db = |x: f64| x / p.max(1.0);
    let rows = per_db(r.tag_rows * day) + 2.0 * per_db(r.public_posts * day) + per_db(w.users) + 20.0;
    Work { statements: DISCOVERY_OWN_STATEMENTS, rows_read: rows, rows_written: 1.0 }
}

/// A refresh's writes on the control database: its old rows deleted and its new ones inserted.
pub fn refresh_control() -> Work {
    Work { statements: DISCOVERY_CONTROL_STATEMENTS, rows_read: 0.0, rows_written: 2.0 * DISCOVERY_ROWS }
}

/// The timelines' work on every database per second (what spreads evenly), a part each.
pub fn timeline_spread_parts(c: &Costs, w: &Workload, p: f64) -> Vec<(&'static str, Work)> {
    let t = &c.timelines;
    if !t.measured {
        return Vec::new();
    }
    let r = timeline_rates(w);
    // The public listeners' reads return a row per listener; before #40 a public post's entry
    // held the read's statement, since a relay's flush makes it (on each stripe's database).
    let listeners = listener_reads(w, &r);
    let (per_post, listeners_spread) = if w.timelines.relays {
        (1.0, listeners.scale(public_stripes(w)))
    } else {
        (0.0, Work { statements: 0.0, ..listeners })
    };
    let entry = Work { statements: (t.public_entry.statements - per_post).max(0.0), ..t.public_entry };
    let at_p = |measured: Work| page_work(measured, t.hydration, p, PAGE_POSTS);
    // A public page's four range reads are its heads' loads (measured with a load on every
    // read), made at most once per replica and TTL; a tag page is counted with its range read
    // (most tags are read less often than their heads' TTL).
    let stripes = t.key_read.scale(public_stripes(w));
    let public_page = Work {
        statements: (t.public_page.statements - stripes.statements).max(0.0),
        rows_read: (t.public_page.rows_read - stripes.rows_read).max(0.0),
        ..t.public_page
    };
    vec![
        (
            "public timeline pages",
            at_p(public_page).scale(r.public_pages).plus(stripes.scale(head_loads(r.public_pages))),
        ),
        ("tag timeline pages", at_p(t.tag_page).scale(r.tag_pages)),
        ("public posts' index rows (stripe, listeners)", entry.scale(r.public_posts).plus(listeners_spread)),
        ("tags' index rows", t.per_tag.scale(r.tag_rows)),
        ("trends reads (the posts where they live)", at_p(t.trends_other).scale(r.trends_reads)),
        (
            "discovery refresh (each database's own rankings)",
            refresh_own(w, p)
                .scale(p / DISCOVERY_REFRESH_SECONDS)
                .plus(DISCOVERY_CHECK.scale(p * w.cron_passes_per_s)),
        ),
    ]
}

/// The timelines' work on the control database per second: the trends reads and every
/// database's refresh writes (2 statements per database per 10 minutes).
pub fn timeline_control_parts(c: &Costs, w: &Workload, p: f64) -> Vec<(&'static str, Work)> {
    let t = &c.timelines;
    if !t.measured {
        return Vec::new();
    }
    let r = timeline_rates(w);
    vec![
        ("trends reads (one statement)", t.trends_control.scale(r.trends_reads)),
        (
            "discovery refresh (every database's rows replaced)",
            refresh_control().scale(p / DISCOVERY_REFRESH_SECONDS),
        ),
    ]
}

/// One key's database beyond its even share, per second at peak: what its key's reads and
/// writes put there, against the headroom.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HotKey {
    pub work: Work,
    /// With a typical database's load (a key's database is one of them).
    pub total_statements: f64,
    pub binds: bool,
}

/// The keys that do not spread: a public stripe's database (every public page reads each
/// stripe; a quarter of the public posts write there), the public listeners' (every public
/// post reads its listeners) and the hottest tag's (its share of the tag pages, its posts'
/// rows). Empty figures for a table without the timelines measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HotKeys {
    pub stripe: HotKey,
    pub listeners: HotKey,
    pub hottest_tag: HotKey,
    /// Of the tag pages, the hottest tag's per second.
    pub hottest_tag_pages: f64,
}

/// The hot keys for a typical database doing `typical` statements/s, against `ceiling`.
pub fn hot_keys(c: &Costs, w: &Workload, typical: f64, ceiling: f64) -> HotKeys {
    let t = &c.timelines;
    if !t.measured {
        return HotKeys::default();
    }
    let r = timeline_rates(w);
    let key = |work: Work| HotKey {
        work,
        total_statements: typical + work.statements,
        binds: typical + work.statements > ceiling,
    };
    // A stripe's part of a public post's extra: its row (the publish's insert, the fan-out's
    // ignored one); the listeners' read is the listeners key's.
    let read = if w.timelines.relays { 1.0 } else { 0.0 };
    let row = Work { statements: (t.public_entry.statements - 1.0 - read).max(0.0), ..t.public_entry };
    let stripe =
        t.key_read.scale(head_loads(r.public_pages)).plus(row.scale(r.public_posts / public_stripes(w)));
    let listeners = listener_reads(w, &r);
    let hottest_pages = r.tag_pages * w.timelines.hottest_tag_share;
    let tag = t.key_read.scale(head_loads(hottest_pages));
    HotKeys {
        stripe: key(stripe),
        listeners: key(listeners),
        hottest_tag: key(tag),
        hottest_tag_pages: hottest_pages,
    }
}

/// Per second, the timelines' Worker requests (pages and trends reads: two requests each) and
/// object calls (each public post to each public-stream listener's window; each page to its
/// heads' replica, each public post and tag row to its author's replica of the head).
pub fn requests_and_calls(c: &Costs, w: &Workload) -> (f64, f64, f64) {
    if !c.timelines.measured {
        return (0.0, 0.0, 0.0);
    }
    let r = timeline_rates(w);
    let requests = r.public_pages + r.tag_pages + 2.0 * r.trends_reads;
    let cpu = (r.public_pages + r.tag_pages) * c.timelines.page_cpu_ms;
    let heads = r.public_pages + r.tag_pages + r.public_posts + r.tag_rows;
    (requests, r.listener_calls + heads, cpu)
}
