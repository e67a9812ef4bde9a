//! Hybrid fan-out policy, decided per (author, reader) follow edge (after Silberstein et al.,
//! "Feeding Frenzy", SIGMOD 2010): push an edge when the reader reads at least about as often
//! as the author posts, scaled by what a pull costs relative to a push; pull it otherwise.
//!
//! Per unit of time an edge costs `post_rate * C_push` if pushed (one window write per post)
//! and `read_rate * C_pull` if pulled (one share of a D1 read per feed read). Push is cheaper iff
//!
//! ```text
//! read_rate(reader) * PUSH_COST_RATIO >= post_rate(author),   PUSH_COST_RATIO = C_pull / C_push
//! ```
//!
//! with both rates in events per day. The costs are not symmetric on Cloudflare: a push is a
//! request to the reader's own Durable Object (objects scale out with the readers), a pull is a
//! query on one D1 database, which is single-threaded (about 1,000 queries/s in all). So a pull
//! spends the scarcest shared resource and the ratio is well above 1 (default 10: one D1 query
//! is worth ten window writes). Hard rules on top, as production systems use: never push to a
//! reader inactive for `ACTIVE_DAYS`, and an author with more than `PUSH_MAX_FOLLOWERS` pushes
//! only to that many of its most active readers. A hysteresis factor keeps an edge in its mode
//! until the inequality is off by that factor, so edges do not flap.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub const DAY_MS: i64 = 86_400_000;

/// The whole system's fan-out mode (`FANOUT_MODE`), for comparison runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FanoutMode {
    /// Per edge, by the rule above (the default).
    Hybrid,
    /// Every follower with a window is pushed (activity and cap ignored).
    Push,
    /// Nothing is pushed to followers: every read pulls.
    Pull,
}

impl FromStr for FanoutMode {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        match text.trim() {
            "hybrid" => Ok(Self::Hybrid),
            "push" => Ok(Self::Push),
            "pull" => Ok(Self::Pull),
            _ => Err(()),
        }
    }
}

/// How one follow edge is served. Stored on the edge (`follows.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeMode {
    /// New posts are written to the reader's window.
    Push,
    /// The reader's feed reads pull the author's posts from D1.
    Pull,
}

impl EdgeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Push => "push",
            Self::Pull => "pull",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    pub mode: FanoutMode,
    pub push_cost_ratio: f64,
    pub active_days: i64,
    pub push_max_followers: usize,
    /// An edge changes mode only when the rule is off by this factor (>= 1).
    pub hysteresis: f64,
}

/// What the decision for one edge looks at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeFacts {
    /// Reader's feed reads per day (decayed average).
    pub read_rate: f64,
    /// Author's posts per day (decayed average).
    pub post_rate: f64,
    /// When the reader last read their feed (ms), if ever.
    pub last_read_at: Option<i64>,
    /// Whether the reader has a timeline window at all (read at least once).
    pub has_window: bool,
    /// Whether the reader is among the author's `PUSH_MAX_FOLLOWERS` most active readers
    /// (always true for authors under the cap).
    pub within_cap: bool,
    /// The edge's mode now, for hysteresis.
    pub current: EdgeMode,
}

impl Policy {
    pub fn is_active(&self, last_read_at: Option<i64>, now: i64) -> bool {
        last_read_at.is_some_and(|t| now - t <= self.active_days.saturating_mul(DAY_MS))
    }

    /// The mode this edge should be in at `now`.
    pub fn decide(&self, facts: &EdgeFacts, now: i64) -> EdgeMode {
        match self.mode {
            FanoutMode::Push if facts.has_window => return EdgeMode::Push,
            FanoutMode::Push | FanoutMode::Pull => return EdgeMode::Pull,
            FanoutMode::Hybrid => {}
        }
        if !facts.has_window || !self.is_active(facts.last_read_at, now) || !facts.within_cap {
            return EdgeMode::Pull;
        }
        let benefit = facts.read_rate * self.push_cost_ratio;
        // Stay in the current mode inside the band [post_rate / h, post_rate * h].
        let h = self.hysteresis.max(1.0);
        let push = match facts.current {
            EdgeMode::Push => benefit * h >= facts.post_rate,
            EdgeMode::Pull => benefit >= facts.post_rate * h,
        };
        if push {
            EdgeMode::Push
        } else {
            EdgeMode::Pull
        }
    }
}

/// An author's facts that say whether their edges are due a re-decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AuthorRates {
    pub post_rate: Rate,
    /// The posting rate the edges were last decided with.
    pub post_rate_decided: f64,
    pub followers_count: i64,
    /// Stored > 0 exactly when the author is capped (the cap's read-rate threshold).
    pub push_min_read_rate: f64,
}

impl Policy {
    /// Whether an author's posting rate has moved enough since their edges were decided (or
    /// they crossed the cap) that the edges should be re-decided.
    pub fn author_needs_rebalance(&self, author: &AuthorRates, now: i64) -> bool {
        let over_cap = author.followers_count > i64::try_from(self.push_max_followers).unwrap_or(i64::MAX);
        let capped_before = author.push_min_read_rate > 0.0;
        author.post_rate.moved_from(author.post_rate_decided, self.hysteresis, now)
            || over_cap != capped_before
    }
}

/// What an author's side compares a reader's copied rate with, as of now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AuthorCuts {
    /// The author's posting rate now (decayed).
    pub post_rate: f64,
    /// The cap's threshold, > 0 exactly when the author is capped.
    pub push_min_read_rate: f64,
    /// More followers than `PUSH_MAX_FOLLOWERS` (capped or about to be).
    pub over_cap: bool,
}

/// A reader's facts as copied on one author-side edge (`followers`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopiedFacts {
    pub read_rate: f64,
    pub last_read_at: Option<i64>,
    pub reader_active: bool,
}

impl Policy {
    /// The lowest reported read rate at which a pulled edge of this author could be decided
    /// push now, or `None` when none can (pull mode). A rate decays from its report, so the
    /// decayed rate the rule uses is at most the reported one: a reader reported below this cut
    /// is pull however the rest of the rule goes (from pull, push needs
    /// `rate * PUSH_COST_RATIO >= post_rate * EDGE_HYSTERESIS`, and a capped author needs the
    /// reader at or above its threshold).
    pub fn push_cut(&self, author: &AuthorCuts) -> Option<f64> {
        let by_rule =
            author.post_rate * self.hysteresis.max(1.0) / self.push_cost_ratio.max(f64::MIN_POSITIVE);
        match self.mode {
            FanoutMode::Pull => None,
            FanoutMode::Push => Some(0.0),
            FanoutMode::Hybrid => Some(by_rule.max(author.push_min_read_rate)),
        }
    }

    /// Whether a reader's new reported rate must be copied onto their edge to this author. The
    /// author's side decides no edge from the copy (its re-decisions read the readers' own
    /// rows); it only *selects* by it: pulled edges at or above [`Self::push_cut`] are the
    /// candidates, and a capped author ranks its active readers (copied `last_read_at` within
    /// `ACTIVE_DAYS`) by copied rate against its threshold. So the copy is due only when one of
    /// those comparisons flips: the reader's first report on the edge, the rate crossing the
    /// cut or the cap's threshold, or, for a capped author, a copied last read that would leave
    /// the activity window before the next report (a reading reader reports at least daily).
    /// An author over the cap whose threshold is not decided yet ranks every reader by rate:
    /// until then every move is copied. A steady reader whose reports move within the bands
    /// copies nothing.
    pub fn copy_due(&self, copy: &CopiedFacts, new_rate: f64, author: &AuthorCuts, now: i64) -> bool {
        let crosses = |t: f64| (copy.read_rate >= t) != (new_rate >= t);
        let capped = author.push_min_read_rate > 0.0;
        let ranking = author.over_cap && !capped && copy.read_rate != new_rate;
        !copy.reader_active
            || ranking
            || self.push_cut(author).is_some_and(crosses)
            || (capped
                && (crosses(author.push_min_read_rate) || !self.is_active(copy.last_read_at, now + DAY_MS)))
    }
}

/// An exponentially decaying event rate in events per day: each event adds `1/tau` and the
/// whole decays by `exp(-dt/tau)`, so a steady rate of r events per day reads as about r.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Rate {
    pub per_day: f64,
    /// When `per_day` was last brought up to date (ms).
    pub at: i64,
}

/// The time constant of every rate: about a week of history.
pub const RATE_TAU_DAYS: f64 = 7.0;

fn decay(dt_ms: i64) -> f64 {
    (-(dt_ms.max(0) as f64) / (RATE_TAU_DAYS * DAY_MS as f64)).exp()
}

impl Rate {
    /// The rate as of `now` (no new event).
    pub fn at(self, now: i64) -> f64 {
        self.per_day * decay(now - self.at)
    }

    /// Counts one event that happened at `when` (<= now), as of `now`.
    pub fn with_event(self, when: i64, now: i64) -> Self {
        let at = now.max(self.at);
        Self { per_day: self.at(at) + decay(at - when) / RATE_TAU_DAYS, at }
    }

    /// Whether the rate moved by more than `factor` (either way) from `reported`.
    pub fn moved_from(self, reported: f64, factor: f64, now: i64) -> bool {
        let now_rate = self.at(now);
        let (lo, hi) = (reported / factor.max(1.0), reported * factor.max(1.0));
        now_rate < lo || now_rate > hi || (reported == 0.0) != (now_rate == 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn policy() -> Policy {
        Policy {
            mode: FanoutMode::Hybrid,
            push_cost_ratio: 10.0,
            active_days: 7,
            push_max_followers: 10_000,
            hysteresis: 2.0,
        }
    }

    fn facts(
        read_rate: f64,
        post_rate: f64,
        days_idle: Option<i64>,
        within_cap: bool,
        current: EdgeMode,
    ) -> EdgeFacts {
        EdgeFacts {
            read_rate,
            post_rate,
            last_read_at: days_idle.map(|d| NOW - d * DAY_MS),
            has_window: days_idle.is_some(),
            within_cap,
            current,
        }
    }

    #[test]
    fn decisions_for_rates_activity_and_cap() {
        use EdgeMode::{Pull, Push};
        // (read/day, posts/day, days since last read, within cap, current) -> mode
        let table = [
            (1.0, 1.0, Some(0), true, Pull, Push), // reads as often as the author posts
            (0.2, 1.0, Some(1), true, Pull, Push), // 0.2 * 10 = 2 >= 1 * 2 (hysteresis)
            (0.1, 1.0, Some(1), true, Pull, Pull), // 1 < 1 * 2: not enough to switch
            (0.1, 5.0, Some(1), true, Pull, Pull), // prolific author, rare reader
            (0.1, 5.0, Some(1), true, Push, Pull), // ... leaves push even with hysteresis
            (0.4, 5.0, Some(1), true, Push, Push), // 4 * 2 >= 5: stays push (hysteresis)
            (0.4, 5.0, Some(1), true, Pull, Pull), // 4 < 5 * 2: stays pull (hysteresis)
            (50.0, 100.0, Some(0), true, Pull, Push), // 500 >= 200
            (1.0, 0.0, Some(3), true, Pull, Push), // a silent author costs nothing to push
            (9.0, 0.1, Some(8), true, Push, Pull), // inactive past ACTIVE_DAYS
            (9.0, 0.1, Some(7), true, Pull, Push), // exactly ACTIVE_DAYS is still active
            (9.0, 0.1, None, true, Pull, Pull),    // never read: no window to push to
            (9.0, 0.1, Some(0), false, Push, Pull), // outside the author's cap
        ];
        let p = policy();
        for (read, post, idle, cap, current, expected) in table {
            let got = p.decide(&facts(read, post, idle, cap, current), NOW);
            assert_eq!(
                got, expected,
                "read {read}/day, post {post}/day, idle {idle:?}, cap {cap}, {current:?}"
            );
        }
    }

    #[test]
    fn whole_system_modes_override_the_rule() {
        let mut p = policy();
        let rare = facts(0.0, 100.0, Some(30), false, EdgeMode::Pull);
        p.mode = FanoutMode::Push;
        assert_eq!(p.decide(&rare, NOW), EdgeMode::Push, "push mode: every reader with a window");
        assert_eq!(p.decide(&facts(1.0, 0.0, None, true, EdgeMode::Pull), NOW), EdgeMode::Pull);
        p.mode = FanoutMode::Pull;
        assert_eq!(p.decide(&facts(99.0, 0.0, Some(0), true, EdgeMode::Push), NOW), EdgeMode::Pull);
        assert_eq!("hybrid".parse(), Ok(FanoutMode::Hybrid));
        assert!("both".parse::<FanoutMode>().is_err());
    }

    #[test]
    fn rates_track_a_steady_event_rate_and_decay() {
        // One event a day for eight weeks reads as about one per day.
        let mut rate = Rate::default();
        for day in 0..56 {
            let t = NOW + day * DAY_MS;
            rate = rate.with_event(t, t);
        }
        let last = NOW + 55 * DAY_MS;
        assert!((rate.at(last) - 1.0).abs() < 0.15, "{}", rate.at(last));
        // A week of silence divides it by e.
        let week = rate.at(last + 7 * DAY_MS);
        assert!((week * std::f64::consts::E - rate.at(last)).abs() < 1e-9);
        // An old event counts for less than a new one (imports carry their own time).
        let fresh = Rate::default().with_event(NOW, NOW).at(NOW);
        let old = Rate::default().with_event(NOW - 14 * DAY_MS, NOW).at(NOW);
        assert!(old < fresh / 7.0 && old > 0.0);
    }

    #[test]
    fn moves_are_measured_by_factor() {
        let rate = Rate { per_day: 4.0, at: NOW };
        assert!(!rate.moved_from(3.0, 2.0, NOW));
        assert!(rate.moved_from(1.5, 2.0, NOW));
        assert!(rate.moved_from(9.0, 2.0, NOW));
        assert!(rate.moved_from(0.0, 2.0, NOW));
    }

    #[test]
    fn rate_copies_only_on_crossings() {
        let p = policy();
        let copied = CopiedFacts { read_rate: 1.0, last_read_at: Some(NOW - DAY_MS), reader_active: true };
        // Authors of a reader whose copy says 1.0/day: (posts/day, cap threshold).
        // Cuts: 0.2 * 2 / 10 = 0.04; 5 -> 1.0 (the copy sits on it); 12 -> 2.4; capped at 1.5.
        let authors = [(0.2, 0.0), (5.0, 0.0), (12.0, 0.0), (0.2, 1.5), (0.0, 0.0)];
        let due = |new_rate: f64, copy: &CopiedFacts| -> Vec<usize> {
            let cuts = authors.map(|(post_rate, min)| AuthorCuts {
                post_rate,
                push_min_read_rate: min,
                over_cap: min > 0.0,
            });
            (0..authors.len()).filter(|&i| p.copy_due(copy, new_rate, &cuts[i], NOW)).collect()
        };
        // A steady reader: reports move within every band: nothing is written.
        for rate in [1.0, 1.2, 1.4] {
            assert_eq!(due(rate, &copied), Vec::<usize>::new(), "{rate}/day");
        }
        // Below 1.0 flips the second author's cut only; up past 1.5 the capped author's
        // threshold; up past 2.4 the third author's cut as well.
        assert_eq!(due(0.9, &copied), vec![1]);
        assert_eq!(due(1.6, &copied), vec![3]);
        assert_eq!(due(2.5, &copied), vec![2, 3]);
        // A copy that never saw the reader active is due everywhere (the edge becomes selectable).
        let fresh = CopiedFacts { reader_active: false, ..copied };
        assert_eq!(due(1.0, &fresh), vec![0, 1, 2, 3, 4]);
        // A capped author's ranking counts readers active by the copy: refreshed before the
        // copied last read leaves ACTIVE_DAYS (a day ahead: the next report may be a day away).
        let aging = CopiedFacts { last_read_at: Some(NOW - 6 * DAY_MS - 1), ..copied };
        assert_eq!(due(1.0, &aging), vec![3]);
        // Over the cap before its threshold is decided: every move counts for the ranking.
        let undecided = AuthorCuts { post_rate: 0.0, push_min_read_rate: 0.0, over_cap: true };
        assert!(p.copy_due(&copied, 1.2, &undecided, NOW));
        assert!(!p.copy_due(&copied, 1.0, &undecided, NOW));
        // Pull mode selects nothing; push mode everything with a window.
        let plain = AuthorCuts { post_rate: 1.0, push_min_read_rate: 0.0, over_cap: false };
        assert!(!Policy { mode: FanoutMode::Pull, ..p }.copy_due(&copied, 9.0, &plain, NOW));
        assert!(!Policy { mode: FanoutMode::Push, ..p }.copy_due(&copied, 0.01, &plain, NOW));
    }

    #[test]
    fn an_author_is_re_decided_when_the_rate_moves_or_the_cap_is_crossed() {
        let p = Policy { push_max_followers: 100, ..policy() };
        let author = |per_day: f64, decided: f64, followers: i64, threshold: f64| AuthorRates {
            post_rate: Rate { per_day, at: NOW },
            post_rate_decided: decided,
            followers_count: followers,
            push_min_read_rate: threshold,
        };
        assert!(!p.author_needs_rebalance(&author(4.0, 3.0, 10, 0.0), NOW), "within the hysteresis");
        assert!(p.author_needs_rebalance(&author(4.0, 1.5, 10, 0.0), NOW), "the rate moved");
        assert!(p.author_needs_rebalance(&author(4.0, 3.0, 101, 0.0), NOW), "crossed the cap");
        assert!(!p.author_needs_rebalance(&author(4.0, 3.0, 101, 0.5), NOW), "capped already");
        assert!(p.author_needs_rebalance(&author(4.0, 3.0, 100, 0.5), NOW), "back under the cap");
    }
}
