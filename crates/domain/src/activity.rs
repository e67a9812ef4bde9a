//! A reader's feed-read activity, kept in their timeline window object (the read path calls it
//! anyway, so tracking costs no D1 round trip) and reported to D1 through the queue only when
//! the policy may care: the first read, a read after a day or more without a report (which also
//! covers a reader coming back after `ACTIVE_DAYS`), or a read rate that moved by more than
//! [`REPORT_FACTOR`] since the last report.

use serde::{Deserialize, Serialize};

use super::policy::{Rate, DAY_MS};

/// Smaller than the policy's hysteresis, so every move the policy would act on is reported.
pub const REPORT_FACTOR: f64 = 1.5;

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Activity {
    pub read_rate: Rate,
    pub last_read_at: Option<i64>,
    /// The rate and time last reported to D1.
    pub reported_rate: f64,
    pub reported_at: Option<i64>,
}

/// What D1 learns about a reader (the edges' policy inputs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ActivityReport {
    /// Feed reads per day (decayed average) as of `last_read_at`.
    pub read_rate: f64,
    pub last_read_at: i64,
}

impl Activity {
    /// Moves everything recorded `ms` into the past (a test hook's "the reader was away").
    pub fn age(&mut self, ms: i64) {
        self.read_rate.at -= ms;
        self.last_read_at = self.last_read_at.map(|t| t - ms);
        self.reported_at = self.reported_at.map(|t| t - ms);
    }

    /// Counts a feed read at `now`; returns the report to send, if one is due.
    pub fn on_read(&mut self, now: i64) -> Option<ActivityReport> {
        self.read_rate = self.read_rate.with_event(now, now);
        self.last_read_at = Some(now);
        let stale = self.reported_at.is_none_or(|t| now - t >= DAY_MS);
        if !stale && !self.read_rate.moved_from(self.reported_rate, REPORT_FACTOR, now) {
            return None;
        }
        let read_rate = self.read_rate.at(now);
        self.reported_rate = read_rate;
        self.reported_at = Some(now);
        Some(ActivityReport { read_rate, last_read_at: now })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    #[test]
    fn reports_first_read_then_moves_and_daily() {
        let mut a = Activity::default();
        assert!(a.on_read(NOW).is_some(), "first read");
        assert!(a.on_read(NOW + 60_000).is_some(), "the rate doubled");
        let quiet: Vec<bool> = (2..6).map(|i| a.on_read(NOW + i * 60_000).is_some()).collect();
        assert!(quiet.iter().filter(|r| **r).count() <= 2, "only real moves report: {quiet:?}");
        let next_day = a.on_read(NOW + DAY_MS + 1);
        assert!(next_day.is_some_and(|r| r.last_read_at == NOW + DAY_MS + 1), "daily");
        let back = a.on_read(NOW + 30 * DAY_MS);
        assert!(back.is_some_and(|r| r.read_rate < 1.0), "a returning reader is reported at once");
    }
}
