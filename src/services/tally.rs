//! Counters the read path keeps in memory instead of writing D1 (a read must not write): what
//! feed filtering hid, hot-range cache hits and misses. They are added per isolate and written
//! by work that writes D1 anyway: the end of every queue batch and the cron pass; the stats page
//! first writes what its own isolate holds. An isolate evicted before it flushes loses its
//! counts: these are figures, not data.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::context::Ctx;
use crate::error::ApiResult;
use crate::store::{batch, stats};

thread_local! {
    static PENDING: RefCell<BTreeMap<String, i64>> = const { RefCell::new(BTreeMap::new()) };
    /// Counts a flush is writing, until the write is done (see [`settle`]).
    static IN_FLIGHT: RefCell<BTreeMap<String, i64>> = const { RefCell::new(BTreeMap::new()) };
}

pub fn add(name: &str, by: i64) {
    if by != 0 {
        PENDING.with(|p| *p.borrow_mut().entry(name.to_string()).or_default() += by);
    }
}

/// What this isolate has counted since its last flush (not in D1).
pub fn unwritten() -> BTreeMap<String, i64> {
    PENDING.with(|p| p.borrow().clone())
}

/// Writes what this isolate holds and waits (up to a second) for flushes already under way, so
/// that D1 then holds every count made before the call: a stats read after this is exact for
/// everything counted before it (and adds [`unwritten`] for what came since).
pub async fn settle(ctx: &Ctx) {
    flush(ctx).await;
    for _ in 0..50 {
        if IN_FLIGHT.with(|f| f.borrow().is_empty()) {
            return;
        }
        worker::Delay::from(std::time::Duration::from_millis(20)).await;
    }
}

/// Writes the counts in one batch; on failure they stay pending for the next flush.
pub async fn flush(ctx: &Ctx) {
    let counts = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if counts.is_empty() {
        return;
    }
    IN_FLIGHT.with(|f| {
        let mut f = f.borrow_mut();
        counts.iter().for_each(|(name, by)| *f.entry(name.clone()).or_default() += by);
    });
    let write = async {
        let statements = counts
            .iter()
            .map(|(name, by)| stats::bump(ctx.control(), name, *by))
            .collect::<ApiResult<Vec<_>>>()?;
        batch(ctx.control(), statements).await
    };
    let written = write.await;
    IN_FLIGHT.with(|f| {
        let mut f = f.borrow_mut();
        for (name, by) in &counts {
            if let Some(v) = f.get_mut(name) {
                *v -= by;
            }
        }
        f.retain(|_, v| *v != 0);
    });
    if let Err(e) = written {
        worker::console_error!("read counters not written, kept for the next flush: {e}");
        counts.iter().for_each(|(name, by)| add(name, *by));
    }
}
