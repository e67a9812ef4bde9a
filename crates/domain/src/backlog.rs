//! The delivery-backlog alert (seed 004 §3.2: a threshold on delivery lag that tells an
//! operator before readers notice). Two figures say how late delivery runs: the age of the
//! oldest unfinished (pending) outbox event, which grows while fan-out is stalled even though
//! nothing completes, and the p99 of publish-to-visible over the samples of the last
//! `lag_window_ms`, which says how late the deliveries that did finish were. The worse of the
//! two is compared with the warn and alert thresholds. A state is left downward only once the
//! figure is below [`CLEAR_SHARE`] of its threshold, so a lag hovering at a threshold does not
//! flap the state (and reset its "since").

use serde::Serialize;

/// Share of a threshold the lag must fall below before its state is left downward.
pub const CLEAR_SHARE: f64 = 0.8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BacklogState {
    Ok,
    Warn,
    Alert,
}

impl BacklogState {
    /// Its code in the `stats` table (a row of integers).
    pub fn code(self) -> i64 {
        match self {
            Self::Ok => 0,
            Self::Warn => 1,
            Self::Alert => 2,
        }
    }

    pub fn from_code(code: i64) -> Option<Self> {
        match code {
            0 => Some(Self::Ok),
            1 => Some(Self::Warn),
            2 => Some(Self::Alert),
            _ => None,
        }
    }
}

/// `BACKLOG_WARN_SECONDS`, `BACKLOG_ALERT_SECONDS`, `BACKLOG_LAG_WINDOW_SECONDS`, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub warn_ms: i64,
    /// Never below `warn_ms` (the config clamps it).
    pub alert_ms: i64,
    /// The publish-to-visible samples of this last stretch make the lag p99.
    pub lag_window_ms: i64,
}

/// The figures the state is decided from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lag {
    /// 0 when nothing is pending.
    pub oldest_unfinished_age_ms: i64,
    /// `None` when no delivery finished within the window.
    pub lag_p99_ms: Option<i64>,
}

impl Lag {
    fn worst(&self) -> i64 {
        self.oldest_unfinished_age_ms.max(self.lag_p99_ms.unwrap_or(0))
    }
}

impl Thresholds {
    /// The state `lag` puts the backlog in, coming from `current`.
    pub fn state(&self, lag: &Lag, current: BacklogState) -> BacklogState {
        let worst = lag.worst();
        let reached = |threshold: i64| worst >= threshold;
        let holds = |threshold: i64| worst as f64 >= threshold as f64 * CLEAR_SHARE;
        let raw = if reached(self.alert_ms) {
            BacklogState::Alert
        } else if reached(self.warn_ms) {
            BacklogState::Warn
        } else {
            BacklogState::Ok
        };
        match current {
            BacklogState::Alert if holds(self.alert_ms) => BacklogState::Alert,
            BacklogState::Alert | BacklogState::Warn if holds(self.warn_ms) => raw.max(BacklogState::Warn),
            _ => raw,
        }
    }
}

/// The state as recorded: what it is and since when (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub state: BacklogState,
    pub since: i64,
}

/// The mark after computing `state` at `now` from the recorded one; `Some` only when it is to
/// be written (a change of state, or nothing recorded yet).
pub fn next_mark(recorded: Option<Mark>, state: BacklogState, now: i64) -> Option<Mark> {
    match recorded {
        Some(mark) if mark.state == state => None,
        _ => Some(Mark { state, since: now }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BacklogState::{Alert, Ok, Warn};

    const T: Thresholds = Thresholds { warn_ms: 10_000, alert_ms: 60_000, lag_window_ms: 300_000 };

    fn lag(oldest: i64, p99: Option<i64>) -> Lag {
        Lag { oldest_unfinished_age_ms: oldest, lag_p99_ms: p99 }
    }

    #[test]
    fn the_worse_figure_against_the_thresholds() {
        // (oldest unfinished age, lag p99, coming from) -> state
        let table = [
            (0, None, Ok, Ok),
            (9_999, Some(500), Ok, Ok),
            (10_000, None, Ok, Warn),        // the stalled event alone
            (0, Some(12_000), Ok, Warn),     // slow deliveries alone
            (59_999, Some(1_000), Ok, Warn), // just under alert
            (60_000, None, Ok, Alert),       // straight to alert
            (1_000, Some(70_000), Warn, Alert),
        ];
        for (oldest, p99, from, expected) in table {
            assert_eq!(T.state(&lag(oldest, p99), from), expected, "{oldest} {p99:?} from {from:?}");
        }
    }

    #[test]
    fn a_state_is_left_downward_only_below_its_clearance() {
        // Alert holds down to 80% of its threshold, then drops to what the lag says.
        assert_eq!(T.state(&lag(50_000, None), Alert), Alert);
        assert_eq!(T.state(&lag(47_999, None), Alert), Warn);
        assert_eq!(T.state(&lag(7_999, None), Alert), Ok, "a recovered backlog goes straight to ok");
        // Warn holds down to 80% of its threshold.
        assert_eq!(T.state(&lag(8_000, Some(8_500)), Warn), Warn);
        assert_eq!(T.state(&lag(7_999, None), Warn), Ok);
        // Coming from ok, the band below a threshold is still ok.
        assert_eq!(T.state(&lag(9_000, None), Ok), Ok);
    }

    #[test]
    fn the_mark_moves_only_when_the_state_changes() {
        assert_eq!(next_mark(None, Ok, 5), Some(Mark { state: Ok, since: 5 }), "first record");
        let warn = Mark { state: Warn, since: 5 };
        assert_eq!(next_mark(Some(warn), Warn, 9), None, "since stays");
        assert_eq!(next_mark(Some(warn), Alert, 9), Some(Mark { state: Alert, since: 9 }));
        assert_eq!(BacklogState::from_code(Alert.code()), Some(Alert));
        assert_eq!(BacklogState::from_code(7), None);
    }
}
