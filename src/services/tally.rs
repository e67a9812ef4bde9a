//! Counters the read path keeps in memory instead of writing D1 (a read must not write): what
//! feed filtering hid, hot-range cache hits and misses. They are added per isolate and written
//! by work that writes D1 anyway: the end of every queue batch and the cron pass; the stats page
//! first writes what its own isolate holds. An isolate evicted before it flushes loses its
//! counts: these are figures, not data.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::context::Ctx;
use crate::store::{batch, stats, StoreResult};

thread_local! {
    static PENDING: RefCell<BTreeMap<String, i64>> = const { RefCell::new(BTreeMap::new()) };
    /// Counts a flush is writing, until the write is done (see [`settle`]).
    static IN_FLIGHT: RefCell<BTreeMap<String, i64>> = const { RefCell::new(BTreeMap::new()) };
    /// `*_max` figures to raise with the next flush (the stats page takes the most of them).
    static MAXIMA: RefCell<BTreeMap<String, i64>> = const { RefCell::new(BTreeMap::new()) };
    /// When this isolate last flushed (ms), for [`flush_due`].
    static LAST_FLUSH: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// How often a queue consumer's isolate writes its counts: a batch ends every few ms at scale.
pub const CONSUMER_FLUSH_MS: i64 = 10_000;

/// Whether this isolate's counts are due for a write at `now` (ms): none written for
/// [`CONSUMER_FLUSH_MS`].
pub fn flush_due(now: i64) -> bool {
    now - LAST_FLUSH.with(|t| t.get()) >= CONSUMER_FLUSH_MS
}

pub fn add(name: &str, by: i64) {
    if by != 0 {
        PENDING.with(|p| *p.borrow_mut().entry(name.to_string()).or_default() += by);
    }
}

/// Raises the `*_max` figure `name` to `value` with the next flush.
pub fn raise(name: &str, value: i64) {
    MAXIMA.with(|m| {
        let mut m = m.borrow_mut();
        let slot = m.entry(name.to_string()).or_insert(value);
        *slot = (*slot).max(value);
    });
}

/// The statements the next flush will send (one per counter and per maximum).
pub fn pending_statements() -> usize {
    PENDING.with(|p| p.borrow().len()) + MAXIMA.with(|m| m.borrow().len())
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

/// Writes the counts in one batch; on failure they stay pending for the next flush. Returns
/// the statements it sent (one per counter) that a run without profiling would send too
/// (the `io_*` counters are profiling's own), so profiling can count them, and the index of
/// the database it wrote.
pub async fn flush(ctx: &Ctx) -> (usize, usize) {
    LAST_FLUSH.with(|t| t.set(ctx.clock()));
    let counts = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    let maxima = MAXIMA.with(|m| std::mem::take(&mut *m.borrow_mut()));
    if counts.is_empty() && maxima.is_empty() {
        return (0, 0);
    }
    IN_FLIGHT.with(|f| {
        let mut f = f.borrow_mut();
        counts.iter().for_each(|(name, by)| *f.entry(name.clone()).or_default() += by);
    });
    let db = spread_database(ctx);
    let write = async {
        let bumps = counts.iter().map(|(name, by)| stats::bump(db, name, *by));
        let raises = maxima.iter().map(|(name, value)| stats::raise(db, name, *value));
        batch(db, bumps.chain(raises).collect::<StoreResult<Vec<_>>>()?).await
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
        maxima.iter().for_each(|(name, value)| raise(name, *value));
    }
    (counts.keys().filter(|name| !name.starts_with("io_")).count() + maxima.len(), db.index())
}

/// Where a flush writes: any database, picked at random. The stats page sums every
/// database's counters, and every queue batch flushes, so one fixed database (the control
/// one) would carry a statement per counter per batch for the whole system: at scale more
/// than a database's ceiling (docs/CAPACITY.md).
fn spread_database(ctx: &Ctx) -> crate::store::AnyDb<'_> {
    let count = ctx.databases().count().max(1);
    let pick = crate::context::random_bytes::<2>().map_or(0, |b| usize::from(u16::from_le_bytes(b)));
    ctx.database(pick % count)
}

/// The name of a per-database profiling counter: `io_<job>_db<i>_<what>`.
pub fn io_counter(job: &str, database: usize, what: &str) -> String {
    format!("io_{job}_db{database}_{what}")
}

/// Counts one background run's storage work per database (`PROFILE_IO`; see
/// [`crate::config::Config::profile_io`]): its statements and rows on each database it
/// touched, its Durable Object calls and queue messages.
pub fn add_io(job: &str, io: &crate::store::Io) {
    add(&format!("io_{job}_runs"), 1);
    add(&format!("io_{job}_do_calls"), i64::from(io.do_calls.get()));
    add(&format!("io_{job}_queue_messages"), i64::from(io.queue_messages.get()));
    for (index, db) in io.databases_touched() {
        add(&io_counter(job, index, "statements"), i64::from(db.statements));
        add(&io_counter(job, index, "rows_read"), db.rows_read as i64);
        add(&io_counter(job, index, "rows_written"), db.rows_written as i64);
    }
}
