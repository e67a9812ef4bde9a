//! A reader's feed-read activity, kept in their timeline window object (the read path calls it
//! anyway, so tracking costs no D1 round trip) and reported to D1 through the queue only when
//! the policy may care: the first read, a read after a day or more without a report (which also
//! covers a reader coming back after `ACTIVE_DAYS`), or a read rate that moved by more than
//! [`REPORT_FACTOR`] since the last report.
//!
//! Recorded at day granularity (issue 40 item 5): the object's storage is written only when a
//! report is due, so a reader whose rate holds steady costs one row write a day, not one per
//! page-1 read. The reads between are counted in the object's memory (`Recorded::Memory`),
//! so a warm object reports exactly as before; an object evicted from memory forgets only the
//! reads since its last write, each of which moved the rate by less than [`REPORT_FACTOR`],
//! and every day with a read is still counted. What reads the record stays correct:
//! `last_read_at` in D1 is the last report's, as before; the idle check of a cold object takes
//! the stored read plus a day ([`Activity::read_by`]), as no unrecorded read can be later.

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

    /// The latest the reader can have read, knowing only the stored record: a read a day or
    /// more after the last write reports and so writes again (see the module docs).
    pub fn read_by(&self) -> Option<i64> {
        self.last_read_at.map(|t| t.saturating_add(DAY_MS - 1))
    }

    /// Counts a feed read at `now`; returns the report to send, if one is due. The record is
    /// to be written to storage exactly when a report is due ([`Recorded`]).
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

/// Where a read's new record goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Written to the object's storage (a report is due: at most about once a day for a
    /// steady reader, plus the rate's moves).
    Storage,
    /// Kept in the object's memory only.
    Memory,
}

impl Recorded {
    pub fn of(report: &Option<ActivityReport>) -> Self {
        if report.is_some() {
            Self::Storage
        } else {
            Self::Memory
        }
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

    #[test]
    fn a_steady_reader_is_written_about_once_a_day() {
        // Twenty reads a day for two weeks, evenly spaced: after the rate settles, only the
        // daily report writes.
        let mut a = Activity::default();
        let step = DAY_MS / 20;
        let mut writes_per_day = Vec::new();
        for day in 0..14 {
            let writes = (0..20)
                .filter(|i| Recorded::of(&a.on_read(NOW + day * DAY_MS + i * step)) == Recorded::Storage)
                .count();
            writes_per_day.push(writes);
        }
        assert!(writes_per_day[7..].iter().all(|&w| w == 1), "{writes_per_day:?}");
        assert!(writes_per_day.iter().sum::<usize>() <= 14 + 12, "{writes_per_day:?}");
    }

    #[test]
    fn a_second_read_the_same_day_writes_nothing_once_the_rate_holds() {
        let mut a = Activity { read_rate: Rate { per_day: 3.0, at: NOW }, ..Activity::default() };
        assert_eq!(Recorded::of(&a.on_read(NOW)), Recorded::Storage, "the first read reports");
        assert_eq!(Recorded::of(&a.on_read(NOW + 3_600_000)), Recorded::Memory);
        assert_eq!(Recorded::of(&a.on_read(NOW + DAY_MS)), Recorded::Storage, "a day later");
    }

    #[test]
    fn a_cold_records_bound_covers_every_unrecorded_read() {
        let mut stored = Activity::default();
        stored.on_read(NOW);
        let mut warm = stored;
        // Reads that write nothing stay below the stored read plus a day.
        for i in 1..100 {
            let at = NOW + i * (DAY_MS / 100);
            if Recorded::of(&warm.on_read(at)) == Recorded::Storage {
                stored = warm;
            }
            assert!(warm.last_read_at.unwrap() <= stored.read_by().unwrap(), "read {i}");
        }
        assert_eq!(Activity::default().read_by(), None);
    }
}
