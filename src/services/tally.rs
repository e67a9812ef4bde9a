//! Counters the read path keeps in memory instead of writing D1 (a read must not write): what
//! feed filtering hid, hot-range cache hits and misses. They are added per isolate and written
//! by work that writes D1 anyway: the end of every queue batch and the cron pass. The stats page
//! adds what its own isolate holds unwritten. An isolate evicted before it flushes loses its
//! counts: these are figures, not data.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::context::Ctx;
use crate::error::ApiResult;
use crate::store::{batch, stats};

thread_local! {
    static PENDING: RefCell<BTreeMap<String, i64>> = const { RefCell::new(BTreeMap::new()) };
}

pub fn add(name: &str, by: i64) {
    if by != 0 {
        PENDING.with(|p| *p.borrow_mut().entry(name.to_string()).or_default() += by);
    }
}

/// What this isolate has counted and not yet written.
pub fn unwritten() -> BTreeMap<String, i64> {
    PENDING.with(|p| p.borrow().clone())
}

/// Writes the counts in one batch; on failure they stay pending for the next flush.
pub async fn flush(ctx: &Ctx) {
    let counts = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if counts.is_empty() {
        return;
    }
    let write = async {
        let statements =
            counts.iter().map(|(name, by)| stats::bump(&ctx.db, name, *by)).collect::<ApiResult<Vec<_>>>()?;
        batch(&ctx.db, statements).await
    };
    if let Err(e) = write.await {
        worker::console_error!("read counters not written, kept for the next flush: {e}");
        counts.iter().for_each(|(name, by)| add(name, *by));
    }
}
