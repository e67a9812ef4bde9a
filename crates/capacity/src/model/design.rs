//! Issue #40's changes to what operations cost, applied over the measured table
//! (`bench/costs.json`) where the table predates them, each a named figure saying where it
//! comes from; `Policy::before_40` prices the design before them, for the old bill beside the
//! new. The corrections to lines the model mispriced apply to both.

use super::costs::{Costs, Work};
use super::cron::CRON_ROWS_PER_FOLLOWER;
use super::workload::{Policy, Workload};

/// Window rows a page-1 read wrote to record the reader's activity before #40 (one, measured:
/// `costs.window.page_read`); since, only the first read of the reader's day writes it.
pub const ACTIVITY_ROWS_PER_PAGE1: f64 = 1.0;

/// Like notifications grouped at write (migration 0048): a like into its post's group of the
/// window writes its notice id into its own `likes` row and raises the author's highest id (one
/// row) instead of a notification row and its four index entries; the group's first like writes
/// the group row (as many rows as before). Measured by `tests/api/like_groups.rs`'s
/// `Server-Timing`: a later like 4 rows fewer than the first; by the simulation: its statements
/// and reads (below).
pub const LIKE_ROWS_SAVED_IN_GROUP: f64 = 4.0;
pub const LIKE_GROUP_STATEMENTS: f64 = 1.0;
/// What the group costs in reads, which the table never measured: the simulation's likes read
/// 44.7 rows a like on all databases together against the table's 28.9 (11 statements against
/// the 12 priced with 2 group statements: run of 2026-12-05, docs/CAPACITY.md).
pub const LIKE_GROUP_ROWS_READ: f64 = 15.8;
/// A notification row with its four index entries (the like's measured 562 bytes less the like
/// row's and the liker-side row's, about 300); a grouped like adds its 9-byte notice id.
pub const LIKE_NOTIFICATION_BYTES: f64 = 300.0;
pub const LIKE_NOTICE_ID_BYTES: f64 = 9.0;
/// Likes of one post in one group window (12 hours): the workload's likes per post, at least one.
pub fn likes_per_group(w: &Workload) -> f64 {
    (w.likes_per_s / w.posts_per_s.max(1e-9)).max(1.0)
}

/// A fan-out chunk's statements on the author's database (#40, item 3): the event's row, the
/// post and the chunk's page of followers read in one statement (`store/fanout_ahead.rs`),
/// two fewer than the table's three reads; its record one statement, its two counter bumps
/// moved to the batch's counter flush (two statements and rows fewer a chunk on the author's
/// database, two more a batch on the flush's). Measured by `tests/fanout_parallel`.
pub const CHUNK_READS_MERGED: f64 = 2.0;
pub const CHUNK_COUNTS_MOVED: f64 = 2.0;
/// A segment's chunk records its progress every `FANOUT_RECORD_EVERY` (4) chunks, and with its
/// last: a record is one statement (`store/outbox.rs::record_segment`).
pub const SEGMENT_RECORD_EVERY: f64 = 4.0;
pub const RECORD_STATEMENTS: f64 = 1.0;

/// A big post's segment chunk on its author's database: the chain chunk's statements (as the
/// design prices them) with the record every [`SEGMENT_RECORD_EVERY`] chunks.
pub fn segment_chunk_statements(c: &Costs, policy: &Policy) -> f64 {
    let chunk = c.fanout_chunk.home.statements;
    if policy.before_40 {
        return chunk;
    }
    (chunk - RECORD_STATEMENTS * (1.0 - 1.0 / SEGMENT_RECORD_EVERY)).max(0.0)
}

/// A like's group commit writes one figure row, its size's counter, instead of three (commits,
/// requests, the size's bucket: `store/likes.rs`); at these rates a commit holds one like.
pub const LIKE_FIGURE_ROWS_SAVED: f64 = 2.0;

/// A like marks nothing on its post for the count repair (`touched_at`: the post's row and
/// its `posts_by_touched` entry, one statement): the repair finds liked posts by their likes'
/// own `updated_at` (`store/engagement.rs::repair_counts`). Measured by
/// `tests/api/like_groups.rs`'s `Server-Timing`: a post's first like 13 rows -> 11, a later
/// one 9 -> 7.
pub const LIKE_TOUCH_ROWS_SAVED: f64 = 2.0;
pub const LIKE_TOUCH_STATEMENTS_SAVED: f64 = 1.0;
/// What the repair reads instead: each like's `likes_by_update` entry, once per share whose
/// window holds it (a share looks back to its previous share's start less the 10-minute
/// margin: with a share a minute, 11 shares).
pub const LIKE_REPAIR_READS: f64 = 11.0;
/// A queue consumer's isolate writes its counters at most every 10 s (`services/tally.rs`,
/// `CONSUMER_FLUSH_MS`), not after every batch.
pub const CONSUMER_FLUSH_SECONDS: f64 = 10.0;

/// `COUNT_SWEEP_USERS` (#40): users each database's share sweeps a pass, whatever marked them.
pub const RECOUNT_SWEEP_USERS_PER_PASS: f64 = 1.0;

/// Feed reads per daily-active reader per day, at the mean rate.
pub fn reads_per_active_day(w: &Workload) -> f64 {
    let mean_day = 86_400.0 / w.peak_to_mean;
    w.feed_reads_per_s * mean_day / (w.users * w.daily_active).max(1.0)
}

/// The table as the design prices it: the measured one with #40's changes where the table
/// predates them, and the consumer's figure upserts billed (the table counted their
/// statements but no rows: each writes one).
pub fn design_costs(measured: &Costs, w: &Workload, policy: &Policy) -> Costs {
    let mut c = *measured;
    let flush = &mut c.consumer_flush;
    flush.rows_written = flush.rows_written.max(flush.statements);
    if policy.before_40 {
        return c;
    }
    // Activity at day granularity: one page-1 read a day writes (and reports) it.
    let skipped = 1.0 - 1.0 / reads_per_active_day(w).max(1.0);
    let page = &mut c.window.page_read;
    page.rows_written = (page.rows_written - ACTIVITY_ROWS_PER_PAGE1 * skipped).max(0.0);
    for page1 in [&mut c.feed_push_page1, &mut c.feed_pull_page1] {
        page1.queue_messages *= 1.0 - skipped;
    }
    // A chunk's reads merged and its counts moved to the batch's flush; the paths' measured
    // figures hold one such chunk (`paths::post_equivalent`), which moves with it.
    let p = &mut c.paths;
    for chunk in [&mut c.fanout_chunk.home, &mut p.boost.home, &mut p.reply.home, &mut p.quote.home]
        .into_iter()
        .chain([&mut p.mention.home, &mut p.direct.home])
        .filter(|w| w.statements > 0.0)
    {
        chunk.statements = (chunk.statements - CHUNK_READS_MERGED - CHUNK_COUNTS_MOVED).max(0.0);
        chunk.rows_written = (chunk.rows_written - CHUNK_COUNTS_MOVED).max(0.0);
    }
    c.consumer_flush.statements += CHUNK_COUNTS_MOVED;
    c.consumer_flush.rows_written += CHUNK_COUNTS_MOVED;
    // Like notifications grouped at write: all but a group's first like save the row.
    let grouped = 1.0 - 1.0 / likes_per_group(w);
    let like = &mut c.like.other;
    like.rows_written = (like.rows_written - LIKE_ROWS_SAVED_IN_GROUP * grouped).max(0.0);
    like.statements += LIKE_GROUP_STATEMENTS - LIKE_FIGURE_ROWS_SAVED;
    like.rows_read += LIKE_GROUP_ROWS_READ;
    like.rows_written = (like.rows_written - LIKE_FIGURE_ROWS_SAVED).max(0.0);
    like.statements = (like.statements - LIKE_TOUCH_STATEMENTS_SAVED).max(0.0);
    like.rows_written = (like.rows_written - LIKE_TOUCH_ROWS_SAVED).max(0.0);
    like.rows_read += LIKE_REPAIR_READS;
    c.bytes.like = (c.bytes.like - LIKE_NOTIFICATION_BYTES * grouped + LIKE_NOTICE_ID_BYTES).max(0.0);
    c
}

/// Rows one user's counters cover at the end of the retention horizon: the follows either way
/// (`CRON_ROWS_PER_FOLLOWER` a follower, as the simulation measured), their posts, the likes
/// and comments on them.
pub fn counted_rows_per_user(w: &Workload) -> f64 {
    let kept = w.retention_days * 86_400.0 / w.peak_to_mean / w.users.max(1.0);
    w.follows_per_user * CRON_ROWS_PER_FOLLOWER + (w.posts_per_s + w.likes_per_s + w.comments_per_s) * kept
}

/// The recount's D1 rows read per second over all databases at the horizon's data. Before
/// #40 each database's share visited 500 users a pass and recounted every row of theirs;
/// since, a pass recounts the owners a change marked (each counter's own rows: a changed
/// follow or post recounts one user's, a like one post's) and each share sweeps
/// `RECOUNT_SWEEP_USERS_PER_PASS` users (a cycle of every user in users-per-database passes).
pub fn recount_rows_per_s(w: &Workload, policy: &Policy, p: f64) -> Work {
    let per_user = counted_rows_per_user(w);
    if policy.before_40 {
        let visited = (500.0 * p).min(w.users) * w.cron_passes_per_s;
        return Work { rows_read: visited * per_user, ..Work::default() };
    }
    let kept = w.retention_days * 86_400.0 / w.peak_to_mean / w.users.max(1.0);
    let likes_per_post = w.likes_per_s * kept / (w.posts_per_s * kept).max(1.0);
    let mean = 1.0 / w.peak_to_mean;
    let marked = mean
        * (w.follows_per_s * 2.0 * w.follows_per_user * CRON_ROWS_PER_FOLLOWER
            + w.posts_per_s * w.posts_per_s * kept
            + (w.likes_per_s + w.comments_per_s) * likes_per_post);
    let sweep = (RECOUNT_SWEEP_USERS_PER_PASS * p).min(w.users) * w.cron_passes_per_s * per_user;
    Work { statements: 0.0, rows_read: marked + sweep, rows_written: 0.0 }
}
