//! What a delivery reads beside its followers in hybrid and pull mode, which the measured
//! table (push mode) holds none of: the live page on the control database and, in hybrid, the
//! author's rates. The simulation of 2026-12-05 found both: hybrid ran about one statement a
//! status more on `DB_0` than on a typical database (publishes 695 against 404, comments 233
//! against 166, paths 392 against 259: 291, 67 and 133 more for 210, 64 and 112 statuses) and
//! push none (390 against 384).

use super::costs::Work;
use super::paths::path_rates;
use super::workload::{Mode, Policy, Workload};

/// Open sockets one live page checks per fan-out chunk (`domain/fanout_plan.rs`,
/// `LIVE_SCAN_PER_CHUNK`): a page is `fanout_chunk` times this many leases.
pub const LIVE_SCAN_PER_CHUNK: f64 = 10.0;

/// Per second: the live pages' work on the control database and on the authors' databases,
/// the rates read by the first chunk (hybrid, the authors' databases), and the messages that
/// continue a full live page (`LiveReach`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveWork {
    pub control: Work,
    pub authors: Work,
    pub messages: f64,
}

/// The first chunk of every delivery to followers (originals, boosts, quotes, replies; not
/// push mode, where every window is pushed) pages the live set (`store/live.rs`,
/// `live_followers`): one statement on the control database walking `live_readers` in id
/// order, whatever the author's followers, so a status reads every lease, a page of
/// `fanout_chunk x LIVE_SCAN_PER_CHUNK` at a time, each full page continued by a message; a
/// page holding any lease is checked against the author's side of the edges (one statement on
/// the author's database, an index probe a lease). In hybrid mode the first chunk also reads
/// the author's rates (`edges::author_facts`: one statement, one row) to see whether its edges
/// are due a re-decision. The re-decisions themselves (`PolicyJob::AuthorEdges`) run only when
/// a rate moves past the hysteresis, which a steady author's does not.
pub fn live_work(w: &Workload, policy: &Policy) -> LiveWork {
    if w.mode == Mode::Push {
        return LiveWork::default();
    }
    let r = path_rates(w);
    let statuses = r.originals + r.boosts + r.quotes + r.replies;
    let live = (w.users * w.daily_active * w.live_share).max(0.0);
    let scan = (policy.fanout_chunk * LIVE_SCAN_PER_CHUNK).max(1.0);
    let full_pages = (live / scan).floor();
    let checked_pages = (live / scan).ceil();
    let rates = if w.mode == Mode::Hybrid {
        Work { statements: 1.0, rows_read: 1.0, rows_written: 0.0 }
    } else {
        Work::default()
    };
    LiveWork {
        control: Work { statements: full_pages + 1.0, rows_read: live, rows_written: 0.0 }.scale(statuses),
        authors: Work { statements: checked_pages, rows_read: live, rows_written: 0.0 }
            .plus(rates)
            .scale(statuses),
        messages: full_pages * statuses,
    }
}
