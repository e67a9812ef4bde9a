//! The follow graph the model derives from the workload: a power law of follower counts, plus
//! the named celebrities.

use serde::Serialize;

use super::workload::{Mode, Policy, Workload};

/// The shape of the follow graph the model derives from the workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Graph {
    /// Share of all follow edges that point at authors above the push cap (power-law part).
    pub share_above_cap: f64,
    /// Follows per user that point at celebrities.
    pub celebrity_follows: f64,
    /// Edges an active reader pulls on every read, by mode.
    pub pulled_per_reader: f64,
    /// Followers a post is written to (window writes per post), averaged over all posts.
    pub deliveries_per_post: f64,
    /// Fan-out chunks per post, averaged over all posts (a post with any reader takes one).
    pub chunks_per_post: f64,
    /// Readers in an average chunk.
    pub readers_per_chunk: f64,
}

/// `∫ x^k x^-tail dx` over `[a, b]` (an unnormalized partial moment of the power law).
pub fn moment(tail: f64, k: f64, a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let e = k + 1.0 - tail;
    if e.abs() < 1e-9 {
        (b / a).ln()
    } else {
        (b.powf(e) - a.powf(e)) / e
    }
}

/// The follower-count law: `p(x) ~ x^-tail` on `[x_min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PowerLaw {
    pub tail: f64,
    pub x_min: f64,
    pub max: f64,
}

impl PowerLaw {
    /// The law whose mean is `mean` (bisection on `x_min`: the mean grows with it).
    pub fn with_mean(tail: f64, mean: f64, max: f64) -> Self {
        let (mut lo, mut hi) = (1e-6_f64, mean.clamp(1e-6, max));
        for _ in 0..200 {
            let mid = (lo * hi).sqrt();
            if (Self { tail, x_min: mid, max }).mean() < mean {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Self { tail, x_min: (lo * hi).sqrt(), max }
    }

    fn norm(&self) -> f64 {
        moment(self.tail, 0.0, self.x_min, self.max)
    }

    pub fn mean(&self) -> f64 {
        moment(self.tail, 1.0, self.x_min, self.max) / self.norm()
    }

    /// `E[x; a <= x <= b]` and `P(a <= x <= b)`, clipped to the law's range.
    pub(super) fn partial(&self, a: f64, b: f64) -> (f64, f64) {
        let (a, b) = (a.max(self.x_min), b.min(self.max));
        (moment(self.tail, 1.0, a, b) / self.norm(), moment(self.tail, 0.0, a, b) / self.norm())
    }

    /// `E[min(x * active, cap)]`: window writes per post when an author pushes to its active
    /// followers, at most `cap` of them.
    pub fn capped_deliveries(&self, active: f64, cap: f64) -> f64 {
        let knee = cap / active.max(1e-12);
        let (below, _) = self.partial(self.x_min, knee);
        let (_, p_above) = self.partial(knee, self.max);
        below * active + cap * p_above
    }

    /// Of an active reader's follows, how many its authors' caps leave pulled: an author
    /// with `x` followers pushes to `cap` of its `x * active` active ones.
    pub fn pulled_per_reader(&self, follows: f64, active: f64, cap: f64) -> f64 {
        let knee = cap / active.max(1e-12);
        let (mass, p) = self.partial(knee, self.max);
        follows * (mass - knee * p) / self.mean()
    }
}

pub fn graph(w: &Workload, policy: &Policy) -> Graph {
    let chunks = |readers: f64| if readers > 0.0 { (readers / policy.fanout_chunk).max(1.0) } else { 0.0 };
    let celebrity_edges: f64 = w.celebrities.iter().map(|c| c.count * c.followers.min(w.users)).sum();
    let celebrity_follows = celebrity_edges / w.users;
    // The power law carries the follows the celebrities do not.
    let tail_mean = (w.follows_per_user - celebrity_follows).max(1e-9);
    let law = PowerLaw::with_mean(w.tail, tail_mean, w.users);
    let cap = policy.push_max_followers;
    let (above_mass, _) = law.partial(cap, law.max);
    let share_above_cap = above_mass / law.mean();
    let celebrity_count: f64 = w.celebrities.iter().map(|c| c.count).sum();
    let celebrity_posts_per_s = celebrity_count * w.celebrity_posts_per_day / 86_400.0;
    let celebrity_share = (celebrity_posts_per_s / w.posts_per_s.max(1e-9)).min(1.0);
    let celebrity_mean = |f: &dyn Fn(f64) -> f64| {
        let total: f64 = w.celebrities.iter().map(|c| c.count * f(c.followers.min(w.users))).sum();
        if celebrity_count > 0.0 {
            total / celebrity_count
        } else {
            0.0
        }
    };
    let (ordinary, celebrity, pulled) = match w.mode {
        Mode::Push => (tail_mean * w.window_holders, celebrity_mean(&|x| x * w.window_holders), 0.0),
        Mode::Hybrid => {
            let active = w.weekly_active;
            let pulled_celebrity: f64 = w
                .celebrities
                .iter()
                .map(|c| {
                    let x = c.followers.min(w.users);
                    c.count * x / w.users * (1.0 - cap / (x * active)).max(0.0)
                })
                .sum();
            (
                law.capped_deliveries(active, cap),
                celebrity_mean(&|x| (x * active).min(cap)),
                law.pulled_per_reader(tail_mean, active, cap) + pulled_celebrity,
            )
        }
        Mode::Pull => (0.0, 0.0, w.follows_per_user),
    };
    Graph {
        share_above_cap,
        celebrity_follows,
        pulled_per_reader: pulled,
        deliveries_per_post: ordinary * (1.0 - celebrity_share) + celebrity * celebrity_share,
        chunks_per_post: chunks(ordinary) * (1.0 - celebrity_share) + chunks(celebrity) * celebrity_share,
        readers_per_chunk: ordinary.min(policy.fanout_chunk),
    }
}
