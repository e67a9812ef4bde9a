//! What the model is asked about: the workload (the headline's, the realistic profile), the
//! policy knobs, the platform's limits and its prices.

use serde::{Deserialize, Serialize};

use super::costs::HOT_REPLICA_FOLLOWERS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Push,
    Hybrid,
    Pull,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "push" => Some(Self::Push),
            "hybrid" => Some(Self::Hybrid),
            "pull" => Some(Self::Pull),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Push => "push",
            Self::Hybrid => "hybrid",
            Self::Pull => "pull",
        }
    }
}

/// A group of celebrity authors: `count` of them with `followers` each.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Celebrities {
    pub count: f64,
    pub followers: f64,
}

/// What the product does at its peak hour (rates per second at peak; the bill uses the mean,
/// `peak / peak_to_mean`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub users: f64,
    /// Share of users who read on a given day.
    pub daily_active: f64,
    /// Share of users who read within the hybrid policy's `ACTIVE_DAYS` (pushed to).
    pub weekly_active: f64,
    /// Share of users holding a window object (read within `WINDOW_IDLE_DAYS`): push mode
    /// writes to all of them.
    pub window_holders: f64,
    /// Mean follows per user.
    pub follows_per_user: f64,
    /// Exponent of the follower-count density, `p(x) ~ x^-tail` (about 2 in measured social
    /// graphs), truncated at `users`.
    pub tail: f64,
    /// Authors with millions of followers, on top of the power law.
    pub celebrities: Vec<Celebrities>,
    /// Posts per day by one celebrity.
    pub celebrity_posts_per_day: f64,
    pub posts_per_s: f64,
    pub feed_reads_per_s: f64,
    /// Share of feed reads past page 1.
    pub page_n_share: f64,
    pub likes_per_s: f64,
    pub comments_per_s: f64,
    pub follows_per_s: f64,
    /// Share of readers with a live socket open at peak.
    pub live_share: f64,
    /// Share of all likes that go to the single hottest post at peak.
    pub hottest_post_like_share: f64,
    pub peak_to_mean: f64,
    /// Days of posts, likes and comments kept in D1 (the size horizon).
    pub retention_days: f64,
    /// Reconciliation passes per second (the cron runs one a minute).
    pub cron_passes_per_s: f64,
    pub mode: Mode,
    /// How `posts_per_s` splits into originals and the other paths a status reaches a reader by
    /// (#39: boosts, replies, quotes, direct posts, mentions). A workload saved before them has
    /// none.
    #[serde(default)]
    pub paths: PathMix,
    /// The public and tag timelines (#42): their pages, tags, trends reads, the hottest tag and
    /// the public stream's listeners. A workload saved before them has none.
    #[serde(default)]
    pub timelines: TimelineMix,
}

/// The delivery paths beyond an original post (#39) in the workload: shares of `posts_per_s`
/// (every status a user writes is one of the rate, as Twitter's published rates count every
/// tweet), mentions per status, and how far a reply reaches. Sources in docs/CAPACITY.md.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PathMix {
    /// Boosts' share of statuses: a boost fans out to all the booster's followers.
    pub boost_share: f64,
    /// Replies' share: a reply pages all the replier's followers and reaches `reply_reach` of
    /// them (those who also follow the account replied to, or all for a self-reply).
    pub reply_share: f64,
    /// Quotes' share: a quote fans out to all the quoter's followers.
    pub quote_share: f64,
    /// Direct posts' share: delivered to the mentioned accounts only (`direct_recipients`).
    pub direct_share: f64,
    /// Accounts mentioned per original, reply and quote (beyond a reply's own notification).
    pub mentions_per_post: f64,
    /// Share of the replier's followers a reply reaches.
    pub reply_reach: f64,
    /// Accounts a direct post is addressed to.
    pub direct_recipients: f64,
    /// Share of a post's boosts that come in its first hour (the hot-booster check).
    pub boost_first_hour: f64,
}

impl PathMix {
    /// The defaults (docs/CAPACITY.md, "The delivery paths in the workload"): boosts and
    /// replies from Mastodon's public activity over 13 days (FediLive, Nov 22 - Dec 4 2024:
    /// 1,361,708 original posts, 2,628,018 interactions of which 31.9% boosts and 2.5%
    /// replies, so of 2,265,746 statuses 37.0% boosts and 2.9% replies); mentions from
    /// Twitter (boyd, Golder and Lotan, HICSS 2010: 36% of tweets mention an account); a
    /// retweet's timing from Sysomos (2010: 92.4% in the first hour). Quotes, direct posts and a
    /// reply's reach are assumptions (no public figure found).
    pub fn mastodon() -> Self {
        Self {
            boost_share: 838_338.0 / 2_265_746.0,
            reply_share: 65_700.0 / 2_265_746.0,
            quote_share: 0.02,
            direct_share: 0.02,
            mentions_per_post: 0.36,
            reply_reach: 0.25,
            direct_recipients: 1.0,
            boost_first_hour: 0.924,
        }
    }

    /// Twitter's mix (Pew Research Center, "Sizing Up Twitter Users", 2019: of the tweets of
    /// the top 25% of U.S. adult tweeters, 97% of all, 14% original, 49% retweets, 33%
    /// replies; the other 4% taken as quotes), the rest as [`PathMix::mastodon`].
    pub fn twitter() -> Self {
        Self {
            boost_share: 0.49,
            reply_share: 0.33,
            quote_share: 0.04,
            direct_share: 0.0,
            ..Self::mastodon()
        }
    }

    /// Originals' share of statuses: what the paths leave.
    pub fn original_share(&self) -> f64 {
        (1.0 - self.boost_share - self.reply_share - self.quote_share - self.direct_share).max(0.0)
    }
}

impl Workload {
    /// The headline: 10M users, 1,000 posts/s, 100k feed reads/s.
    pub fn headline(mode: Mode) -> Self {
        Self {
            users: 10_000_000.0,
            daily_active: 0.2,
            weekly_active: 0.4,
            window_holders: 0.5,
            follows_per_user: 200.0,
            tail: 2.2,
            celebrities: vec![
                Celebrities { count: 1.0, followers: 10_000_000.0 },
                Celebrities { count: 10.0, followers: 1_000_000.0 },
            ],
            celebrity_posts_per_day: 10.0,
            posts_per_s: 1_000.0,
            feed_reads_per_s: 100_000.0,
            page_n_share: 0.3,
            likes_per_s: 5_000.0,
            comments_per_s: 500.0,
            follows_per_s: 100.0,
            live_share: 0.05,
            hottest_post_like_share: 0.01,
            peak_to_mean: 2.0,
            retention_days: 365.0,
            cron_passes_per_s: 1.0 / 60.0,
            mode,
            paths: PathMix::mastodon(),
            timelines: TimelineMix::mastodon(),
        }
    }
}

/// The policy knobs the model needs (the service's defaults, `src/config.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// `PUSH_MAX_FOLLOWERS`: an author pushes to at most this many readers.
    pub push_max_followers: f64,
    /// `FEED_WINDOW`: post ids a window keeps.
    pub feed_window: f64,
    /// Items on a feed page.
    pub page_size: f64,
    /// `FANOUT_CHUNK`: readers per fan-out chunk (one queue message each).
    pub fanout_chunk: f64,
    /// Hot authors (at least `hot_followers` followers, and every named celebrity) served
    /// from replicated Durable Objects (#28): their reads put no statement on their database.
    pub hot_replicas: bool,
    /// `HOT_REPLICA_FOLLOWERS`.
    pub hot_followers: f64,
    /// Messages per fan-out consumer batch (`max_batch_size`); 0: the measured table's.
    pub fanout_batch: f64,
    /// A pushed hot author's replica is read only when one of its posts is on the page
    /// (hydration), not on every page: the next step, not built (`--replica-hydrate-only`; as
    /// built the replica is also the author's in-flight source, read on every page).
    pub replica_hydrate_only: bool,
    /// The design before issue #40 (`--before-40`): a replica call per followed hot author
    /// per page, a window row written per page-1 read, a notification row per like, the
    /// recount re-reading every counted row, a post's chunks one after another. The model
    /// prices it to put the old bill beside the new (`model::design`).
    pub before_40: bool,
    /// D1 databases one data-plane Worker script binds (#40: `scripts/wrangler-config P
    /// --per-script M`); the front script binds a service binding per data script.
    pub databases_per_script: f64,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            push_max_followers: 10_000.0,
            feed_window: 800.0,
            page_size: 20.0,
            fanout_chunk: 500.0,
            hot_replicas: false,
            hot_followers: HOT_REPLICA_FOLLOWERS,
            fanout_batch: 0.0,
            replica_hydrate_only: false,
            before_40: false,
            databases_per_script: DATABASES_PER_SCRIPT,
        }
    }
}

/// Platform limits (sources in docs/CAPACITY.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub d1_statements_per_s: f64,
    pub d1_bytes: f64,
    pub object_requests_per_s: f64,
    pub queue_messages_per_s: f64,
    pub subrequests: f64,
    pub connections: f64,
    pub databases_per_account: f64,
    /// D1 queries one Worker invocation may make (the D1 limits page: "Queries per Worker
    /// invocation (read subrequest limits)").
    pub d1_queries_per_invocation: f64,
    /// Consumer invocations a queue runs at once.
    pub consumer_concurrency: f64,
    /// Wall seconds one fan-out chunk takes in the consumer (500 window writes and up to 500
    /// readers' databases asked, 6 connections at a time, ~10 ms each: an estimate, not measured).
    pub chunk_seconds: f64,
    /// D1 storage per account (every database together; raised by request).
    pub account_d1_bytes: f64,
    /// Shares of a database's ceilings the recommendation allows at peak.
    pub query_headroom: f64,
    pub size_headroom: f64,
    /// Bindings one Worker script may hold (D1 limits page: "approximately 5,000"), and
    /// Worker scripts per account (Workers limits page: 500 on Workers Paid).
    pub bindings_per_script: f64,
    pub scripts_per_account: f64,
    /// Seconds within which a 10M-follower post is in every active follower's window (#40).
    pub fanout_seconds_target: f64,
    /// The account's D1 storage cap as the plan asks Cloudflare to raise it (the limits page
    /// marks the 1 TB cap as raisable): #40's storage plan for a year of the headline.
    pub account_d1_bytes_raised: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            d1_statements_per_s: 1_000.0,
            d1_bytes: 10e9,
            object_requests_per_s: 1_000.0,
            queue_messages_per_s: 5_000.0,
            subrequests: 10_000.0,
            connections: 6.0,
            databases_per_account: 1_000_000.0,
            d1_queries_per_invocation: 1_000.0,
            consumer_concurrency: 250.0,
            chunk_seconds: 1.0,
            account_d1_bytes: 1e12,
            query_headroom: 0.5,
            size_headroom: 0.6,
            bindings_per_script: 5_000.0,
            scripts_per_account: 500.0,
            fanout_seconds_target: 60.0,
            account_d1_bytes_raised: 40e12,
        }
    }
}

/// Unit prices, USD (sources and dates in docs/CAPACITY.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub workers_base: f64,
    pub workers_requests_included: f64,
    pub workers_per_m_requests: f64,
    pub workers_cpu_ms_included: f64,
    pub workers_per_m_cpu_ms: f64,
    pub d1_rows_read_included: f64,
    pub d1_per_m_rows_read: f64,
    pub d1_rows_written_included: f64,
    pub d1_per_m_rows_written: f64,
    pub d1_gb_included: f64,
    pub d1_per_gb_month: f64,
    pub d1_databases_included: f64,
    pub d1_per_database_month: f64,
    pub do_requests_included: f64,
    pub do_per_m_requests: f64,
    pub do_gb_s_included: f64,
    pub do_per_m_gb_s: f64,
    pub do_object_gb: f64,
    pub do_rows_read_included: f64,
    pub do_per_m_rows_read: f64,
    pub do_rows_written_included: f64,
    pub do_per_m_rows_written: f64,
    pub do_gb_included: f64,
    pub do_per_gb_month: f64,
    pub queue_ops_included: f64,
    pub queue_per_m_ops: f64,
    pub queue_ops_per_message: f64,
}

impl Default for Prices {
    fn default() -> Self {
        Self {
            workers_base: 5.0,
            workers_requests_included: 10e6,
            workers_per_m_requests: 0.30,
            workers_cpu_ms_included: 30e6,
            workers_per_m_cpu_ms: 0.02,
            d1_rows_read_included: 25e9,
            d1_per_m_rows_read: 0.001,
            d1_rows_written_included: 50e6,
            d1_per_m_rows_written: 1.00,
            d1_gb_included: 5.0,
            d1_per_gb_month: 0.75,
            d1_databases_included: 100_000.0,
            d1_per_database_month: 0.10,
            do_requests_included: 1e6,
            do_per_m_requests: 0.15,
            do_gb_s_included: 400_000.0,
            do_per_m_gb_s: 12.50,
            do_object_gb: 0.128,
            do_rows_read_included: 25e9,
            do_per_m_rows_read: 0.001,
            do_rows_written_included: 50e6,
            do_per_m_rows_written: 1.00,
            do_gb_included: 5.0,
            do_per_gb_month: 0.20,
            queue_ops_included: 1e6,
            queue_per_m_ops: 0.40,
            queue_ops_per_message: 3.0,
        }
    }
}

pub const SECONDS_PER_MONTH: f64 = 30.0 * 86_400.0;

impl Workload {
    /// The realistic profile beside the stress headline: Twitter, November 2012 (about 300k
    /// home-timeline reads/s and 4,600 posts/s on average, 12k at peak, for about 150M active
    /// users: 2,000 reads/s and 31 posts/s per million active users at the mean; its largest
    /// author had 31M followers, a fifth of them). Peak = mean x 2.6 (12k / 4.6k); likes,
    /// comments and follows at the headline's ratios (5 and 0.5 per post, 10/s per million).
    pub fn realistic(users: f64, mode: Mode) -> Self {
        let per_million = users / 1e6;
        let peak_to_mean = 12_000.0 / 4_600.0;
        let posts = 31.0 * per_million * peak_to_mean;
        Self {
            users,
            celebrities: vec![Celebrities { count: 1.0, followers: users * 31.0 / 150.0 }],
            posts_per_s: posts,
            feed_reads_per_s: 2_000.0 * per_million * peak_to_mean,
            likes_per_s: 5.0 * posts,
            comments_per_s: 0.5 * posts,
            follows_per_s: 10.0 * per_million,
            peak_to_mean,
            ..Self::headline(mode)
        }
    }
}

/// The public and tag timelines in the workload: how many pages, how many tags, how many trends
/// reads, how hot the hottest tag, how many listen to the public stream. Sources in
/// docs/CAPACITY.md ("The public and tag timelines in the workload"). A workload saved before
/// them has none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineMix {
    /// Of every page read (home, public, tag), the share that are public or tag timeline pages;
    /// the home reads stay the workload's `feed_reads_per_s`, these come on top.
    pub page_share: f64,
    /// Of the timeline pages, the share that are tag pages (the rest public or local).
    pub tag_share: f64,
    /// Tags per public post (each an index row on its tag's database, at most 10).
    pub tags_per_post: f64,
    /// Trends reads (the explore tab: trending tags and statuses) per daily active user a day.
    pub trends_per_active_day: f64,
    /// Of the tag pages, the share that read the single hottest tag at peak.
    pub hottest_tag_share: f64,
    /// Of the live sockets, the share subscribed to the public stream: every public post is
    /// sent to each one's window object.
    pub public_stream_share: f64,
    /// #40: a post's stream news goes to its key's relay object, which tells each listener's
    /// window once per flush, and the public timeline has 16 stripes; set by the plan from
    /// `Policy::before_40` (before: every listener's window per post, 4 stripes).
    #[serde(default)]
    pub relays: bool,
}

impl TimelineMix {
    /// The defaults, assumptions stated in docs/CAPACITY.md: 5% of page reads are public or tag
    /// pages, half of them tags; 0.25 tags per public post; one trends read per active user a
    /// day; the hottest tag takes 10% of the tag pages at peak; 1% of live sockets listen to the
    /// public stream.
    pub fn mastodon() -> Self {
        Self {
            page_share: 0.05,
            tag_share: 0.5,
            tags_per_post: 0.25,
            trends_per_active_day: 1.0,
            hottest_tag_share: 0.1,
            public_stream_share: 0.01,
            relays: true,
        }
    }
}

/// Databases per data-plane script by default: under the ~5,000 bindings a script may hold,
/// with room for the few other bindings a data script carries (its vars are not bindings).
pub const DATABASES_PER_SCRIPT: f64 = 4_000.0;
