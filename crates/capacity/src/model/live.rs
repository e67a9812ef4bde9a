//! What open sockets cost beside their frames, and what a delivery reads beside its followers
//! in hybrid and pull mode, which the measured table (push mode) holds none of.
//!
//! The simulation of 2026-12-05 found the old live page: hybrid ran about one statement a
//! status more on `DB_0` than on a typical database (publishes 695 against 404, comments 233
//! against 166, paths 392 against 259: 291, 67 and 133 more for 210, 64 and 112 statuses) and
//! push none (390 against 384). Priced, that page (every open socket's lease on the control
//! database, read for every status) fit no hybrid configuration; the live marks on the
//! authors' databases (migration 0050) replaced it, and this module prices what they cost.

use super::costs::Work;
use super::graph::Graph;
use super::paths::path_rates;
use super::workload::{Mode, Workload};

/// Seconds between two writes of a socket's marks, on its home row (read by notification
/// writes) and its pulled edges (`MARK_LEASE_MS`, 20 minutes, is rewritten at the first review
/// that leaves less than a review, 4 minutes, and a minute: every 16).
pub const MARK_REFRESH_SECONDS: f64 = 960.0;
/// Seconds between two writes of a socket's lease on the control database
/// (`READER_LEASE_MS`, an hour, rewritten by the same rule: every 56 minutes).
pub const READER_LEASE_REFRESH_SECONDS: f64 = 3_360.0;

/// Per second: the live work on the control database, on the authors' databases (the
/// deliveries' mark reads and, in hybrid, the authors' rates), on every database for the
/// sockets (edge marks and home-row marks written), the windows written for live readers, and
/// the messages that continue a full page of marks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveWork {
    pub control: Work,
    pub authors: Work,
    pub sockets: Work,
    pub deliveries: f64,
    pub messages: f64,
}

/// Open sockets at the headline's shape: a share of the daily active users.
fn open_sockets(w: &Workload) -> f64 {
    (w.users * w.daily_active * w.live_share).max(0.0)
}

/// The live work at `p` databases. Every mode: each open socket renews its home-row mark
/// once per mark refresh (one statement, one row) and its control-database lease once an hour
/// (one statement; the row and its `until` index). Outside push mode, each socket also marks its
/// pulled edges (`g.pulled_per_reader`) once per mark refresh: a read of its `follows` on its
/// home and one upsert per database among those authors (a row each: the table has no index),
/// and the first chunk of every delivery to followers reads its author's marks (one
/// primary-key range, a row and an edge probe a mark; a status finds on average the open
/// sockets' marks over every author, statuses drawn evenly over authors) and writes the post
/// into those readers' windows. In hybrid mode the first chunk also reads the author's rates
/// (`edges::author_facts`: one statement, one row). A full page of marks (`fanout_chunk x
/// LIVE_SCAN_PER_CHUNK`) continues as a message; at the average it never fills (a celebrity's
/// post reads its own, 20 pages of 5,000 at 100k of its followers live, 10 times a day).
pub fn live_work(w: &Workload, g: &Graph, p: f64) -> LiveWork {
    let live = open_sockets(w);
    let control = Work { statements: 1.0, rows_read: 1.0, rows_written: 2.0 }
        .scale(live / READER_LEASE_REFRESH_SECONDS);
    let home_marks =
        Work { statements: 1.0, rows_read: 1.0, rows_written: 1.0 }.scale(live / MARK_REFRESH_SECONDS);
    if w.mode == Mode::Push {
        return LiveWork { control, sockets: home_marks, ..LiveWork::default() };
    }
    let marked = g.pulled_per_reader.max(0.0);
    let databases = p.max(1.0) * (1.0 - (1.0 - 1.0 / p.max(1.0)).powf(marked));
    let edge_marks = Work { statements: 1.0 + databases, rows_read: 2.0 * marked, rows_written: marked }
        .scale(live / MARK_REFRESH_SECONDS);
    let r = path_rates(w);
    let statuses = r.originals + r.boosts + r.quotes + r.replies;
    let marks_per_status = live * marked / w.users.max(1.0);
    let rates = if w.mode == Mode::Hybrid {
        Work { statements: 1.0, rows_read: 1.0, rows_written: 0.0 }
    } else {
        Work::default()
    };
    let read_marks = Work { statements: 1.0, rows_read: 2.0 * marks_per_status, rows_written: 0.0 };
    LiveWork {
        control,
        authors: read_marks.plus(rates).scale(statuses),
        sockets: home_marks.plus(edge_marks),
        deliveries: marks_per_status * statuses,
        messages: 0.0,
    }
}
