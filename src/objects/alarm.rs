//! A Durable Object has one alarm; the TimelineWindow object gives it two jobs (the live
//! sockets' credential review, `objects::live`, and the idle check, `domain::idle`). Each job
//! asks for a wake *no later than* some time, so the alarm is always the earliest of what is
//! due, and the alarm handler runs every job, each asking again for what it still needs.
//!
//! The time set is remembered in memory, so asking for a later time than the one set (every
//! feed read pushes the idle check further out) costs no storage access at all; only the first
//! ask in an instance reads the alarm from storage.

use std::cell::Cell;

use worker::{Result, State};

pub fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

#[derive(Debug, Default)]
pub struct Alarm {
    /// `None`: not known (ask storage); `Some(None)`: none set; `Some(Some(t))`: set for `t`.
    known: Cell<Option<Option<i64>>>,
}

impl Alarm {
    /// Whether an alarm is known to be set (then a later ask is a no-op).
    pub fn is_set(&self) -> bool {
        matches!(self.known.get(), Some(Some(_)))
    }

    /// Makes sure the alarm fires no later than `at` (ms since the epoch; a past time fires it
    /// at once). Sets it only if none is set or the one set is later.
    pub async fn wake_by(&self, state: &State, at: i64) -> Result<()> {
        let storage = state.storage();
        let current = match self.known.get() {
            Some(known) => known,
            None => {
                let stored = storage.get_alarm().await?;
                // Another ask may have set it while this one waited: then that one is set.
                match self.known.get() {
                    Some(known) => known,
                    None => {
                        self.known.set(Some(stored));
                        stored
                    }
                }
            }
        };
        if current.is_some_and(|set| set <= at) {
            return Ok(());
        }
        // Recorded before the write is awaited, so a concurrent ask compares with this one.
        self.known.set(Some(Some(at)));
        // `get_alarm` answers a time; `set_alarm` takes an i64 as an offset from now (ms).
        let written = storage.set_alarm((at - now_ms()).max(0)).await;
        if written.is_err() {
            self.forget();
        }
        written
    }

    /// The alarm fired: none is set until a job asks again.
    pub fn fired(&self) {
        self.known.set(Some(None));
    }

    /// The storage was deleted, alarm included (`deleteAll` with a compatibility date of
    /// 2026-02-24 or later).
    pub fn deleted(&self) {
        self.known.set(Some(None));
    }

    /// What is set is not known any more (a failed handler, which the runtime retries; a
    /// failed write): the next ask reads it from storage.
    pub fn forget(&self) {
        self.known.set(None);
    }
}
