//! Hot authors served from replicas (#28): how many, and what their replicas serve and cost.

use serde::Serialize;

use super::costs::{
    Costs, Work, MAX_REPLICAS, MIN_REPLICAS, REPLICA_LEASE_SECONDS, REPLICA_REFRESH_SECONDS,
    REPLICA_TARGET_RPS,
};
use super::graph::{graph, PowerLaw};
use super::workload::{Mode, Policy, Workload};

/// The hot authors served from replicas (#28), and what their replicas do. All zero when the
/// policy has no replicas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Hot {
    /// Authors at or above the threshold (the power law's and the named celebrities).
    pub authors: f64,
    /// Replicas in all: per author `ceil(its replica requests/s / REPLICA_TARGET_RPS)`, at
    /// least `MIN_REPLICAS`, at most `MAX_REPLICAS`.
    pub replicas: f64,
    /// Of them, read at least once per lease (resident: their duration is billed throughout).
    pub resident: f64,
    /// Replica requests per feed read for hot authors the reader pulls (every page), and for
    /// pushed hot authors whose posts are on the page (hydration).
    pub pulled_per_read: f64,
    pub hydrated_per_read: f64,
    /// Replica writes per second: each hot author's changes (its posts) to each of its replicas.
    pub writes_per_s: f64,
    /// The leases' and refreshes' D1 work on hot authors' databases, all together, per second.
    pub lease: Work,
    /// The most followed author: its replicas, their requests per second, their D1 work.
    pub top_replicas: f64,
    pub top_requests_per_s: f64,
    pub top_lease: Work,
    /// The most requests per second any one replica serves.
    pub hottest_replica_rps: f64,
    /// The hot authors' posts per second, all together (peak).
    pub posts_per_s: f64,
    /// Whether `replicas` are #40's digests (each holding every hot author) rather than
    /// per-author replicas.
    pub digests: bool,
    /// With digests: the chance a read calls one (it follows at least one hot author).
    pub digest_calls_per_read: f64,
    /// The chance a read calls no hot author's replica: over the hot authors, the product of
    /// each one's chance not to be called (`1 - its calls per read`). A celebrity every user
    /// follows leaves none (the simulation: every page called a digest, 2.0 object calls a page
    /// where the Poisson chance at the mean, 1 - e^-1, gave 1.63).
    pub no_call_share: f64,
}

impl Hot {
    /// Replica requests per feed read: one per hot author it reads, or with digests (#40)
    /// at most one.
    pub fn calls_per_read(&self) -> f64 {
        if self.digests {
            return self.digest_calls_per_read;
        }
        self.pulled_per_read + self.hydrated_per_read
    }
}

/// How a read of one of its followers meets an author with `x` followers posting `per_day`
/// posts a day (mean): the share of those reads that pull it (every page), and the chance a
/// pushed one has a post on the page (its share of the reader's incoming posts, over a page).
pub fn inclusion(w: &Workload, policy: &Policy, x: f64, per_day: f64) -> (f64, f64) {
    let incoming_per_day = w.follows_per_user * w.posts_per_s * 86_400.0 / w.peak_to_mean / w.users;
    let share = (per_day / incoming_per_day.max(1e-9)).min(1.0);
    let on_page = 1.0 - (1.0 - share).powf(policy.page_size.min(w.follows_per_user));
    let pulled = match w.mode {
        Mode::Push => 0.0,
        Mode::Pull => 1.0,
        Mode::Hybrid => (1.0 - policy.push_max_followers / (x * w.weekly_active).max(1e-9)).max(0.0),
    };
    (pulled, on_page)
}

/// One author's replicas: their count for `requests` per second, and the D1 work their
/// leases and refreshes put on its database (a replica read at rate `r` checks at most once
/// per lease and refreshes at most once per refresh period).
pub fn replicas_for(c: &Costs, requests: f64) -> (f64, Work) {
    let n = (requests / REPLICA_TARGET_RPS).ceil().clamp(MIN_REPLICAS, MAX_REPLICAS);
    (n, leases(c, n, requests / n))
}

/// The D1 work `n` replicas of one author, each read at `r` requests/s, put on its database:
/// each checks its lease at most once per lease and refreshes at most once per refresh period.
fn leases(c: &Costs, n: f64, r: f64) -> Work {
    c.replica
        .lease
        .scale(r.min(1.0 / REPLICA_LEASE_SECONDS))
        .plus(c.replica.refresh.scale(r.min(1.0 / REPLICA_REFRESH_SECONDS)))
        .scale(n)
}

/// Authors at or above the hot threshold, in groups of like ones: `(authors, followers each,
/// posts/s at peak each, posts/day at the mean each)`. The named celebrities, then the power
/// law's authors above the threshold in 60 log-spaced bins, each at its mean follower count.
fn hot_groups(w: &Workload, policy: &Policy) -> Vec<(f64, f64, f64, f64)> {
    let g = graph(w, policy);
    let tail_mean = (w.follows_per_user - g.celebrity_follows).max(1e-9);
    let law = PowerLaw::with_mean(w.tail, tail_mean, w.users);
    let celebrity_posts_per_s: f64 =
        w.celebrities.iter().map(|c| c.count).sum::<f64>() * w.celebrity_posts_per_day / 86_400.0;
    let ordinary_posts_per_s = (w.posts_per_s - celebrity_posts_per_s).max(0.0) / w.users;
    let ordinary_per_day = ordinary_posts_per_s * 86_400.0 / w.peak_to_mean;
    let mut groups: Vec<(f64, f64, f64, f64)> = w
        .celebrities
        .iter()
        .map(|k| {
            (
                k.count,
                k.followers.min(w.users),
                w.celebrity_posts_per_day / 86_400.0,
                w.celebrity_posts_per_day,
            )
        })
        .collect();
    let (lo, hi) = (policy.hot_followers.max(law.x_min), law.max);
    if hi > lo {
        let bins = 60;
        let step = (hi / lo).powf(1.0 / bins as f64);
        for i in 0..bins {
            let (a, b) = (lo * step.powi(i), lo * step.powi(i + 1));
            let (mass, prob) = law.partial(a, b);
            if prob > 0.0 {
                groups.push((w.users * prob, mass / prob, ordinary_posts_per_s, ordinary_per_day));
            }
        }
    }
    groups
}

/// Sums, over the hot authors ([`hot_groups`]), what their replicas serve and cost.
pub fn hot_authors(c: &Costs, w: &Workload, policy: &Policy) -> Hot {
    let mut hot = Hot { no_call_share: 1.0, ..Hot::default() };
    if !policy.hot_replicas {
        return hot;
    }
    let groups = hot_groups(w, policy);
    let top = groups.iter().map(|g| g.1).fold(0.0, f64::max);
    for (count, x, posts_per_s, per_day) in groups {
        let (pulled, on_page) = inclusion(w, policy, x, per_day);
        // As built (`domain/plan.rs`), a pushed hot author's replica is also its in-flight
        // source (posts its fan-out has not delivered yet), so it is read on every page of a
        // follower, not only when one of its posts is on the page.
        let on_page = if policy.replica_hydrate_only { on_page } else { 1.0 };
        let followers_reads = x / w.users;
        let requests = w.feed_reads_per_s * followers_reads * (pulled + (1.0 - pulled) * on_page);
        let (n, lease) = replicas_for(c, requests);
        hot.authors += count;
        hot.replicas += count * n;
        if requests / n >= 1.0 / REPLICA_LEASE_SECONDS {
            hot.resident += count * n;
        }
        hot.pulled_per_read += count * followers_reads * pulled * c.replica.read_calls;
        hot.hydrated_per_read += count * followers_reads * (1.0 - pulled) * on_page * c.replica.read_calls;
        let called = followers_reads * (pulled + (1.0 - pulled) * on_page) * c.replica.read_calls;
        hot.no_call_share *= (1.0 - called.min(1.0)).powf(count);
        hot.writes_per_s += count * posts_per_s * n * c.replica.write_calls;
        hot.lease = hot.lease.plus(lease.scale(count));
        hot.hottest_replica_rps = hot.hottest_replica_rps.max(requests / n);
        if x >= top {
            (hot.top_replicas, hot.top_requests_per_s, hot.top_lease) = (n, requests, lease);
        }
        hot.posts_per_s += count * posts_per_s;
    }
    if policy.before_40 {
        return hot;
    }
    digests(c, w, hot)
}

/// #40: one replica call per page. A page calls one digest, picked by the reader's hash,
/// which holds every hot author's recent posts; a reader following no hot author calls none
/// (the chance of at least one, over the hot authors: `Hot::no_call_share`; for many hot
/// authors each followed by few, the Poisson chance at the mean number followed). Digests
/// are added until each serves `REPLICA_TARGET_RPS`; every hot author's change is written to
/// each, and each digest leases and refreshes every hot author on the author's database.
fn digests(c: &Costs, w: &Workload, per_author: Hot) -> Hot {
    let calls = per_author.calls_per_read();
    if calls <= 0.0 {
        return per_author;
    }
    let per_read = 1.0 - per_author.no_call_share.clamp(0.0, 1.0);
    let requests = w.feed_reads_per_s * per_read;
    let n = (requests / REPLICA_TARGET_RPS).ceil().max(MIN_REPLICAS);
    let r = requests / n;
    let one_author = leases(c, n, r);
    Hot {
        authors: per_author.authors,
        replicas: n,
        resident: if r >= 1.0 / REPLICA_LEASE_SECONDS { n } else { 0.0 },
        pulled_per_read: per_author.pulled_per_read,
        hydrated_per_read: per_author.hydrated_per_read,
        writes_per_s: per_author.posts_per_s * n * c.replica.write_calls,
        lease: one_author.scale(per_author.authors),
        top_replicas: n,
        top_requests_per_s: per_author.top_requests_per_s,
        top_lease: one_author,
        hottest_replica_rps: r,
        posts_per_s: per_author.posts_per_s,
        digests: true,
        digest_calls_per_read: per_read,
        no_call_share: per_author.no_call_share,
    }
}
