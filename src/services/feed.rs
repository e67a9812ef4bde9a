//! The home feed read (and group and list feeds): `domain::read` decides every storage I/O of
//! a page, step by step, and runs each through [`StorageIo`] (`services/feed_io.rs`: the window
//! call, the hot-range cache lookups, the replica reads and one batch per database, at once);
//! this module configures the read and does what follows the page.

use super::queue::send::send_job_after_response;
use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::feed::{EmptyReason, FeedState, Hidden};
use crate::domain::ids::UserId;
pub use crate::domain::plan::FeedScope;
use crate::domain::queue::{PolicyJob, QueueMessage};
pub use crate::domain::read::FeedQuery;
use crate::domain::read::{self, Finished, ReadConfig};
use crate::error::ApiResult;
use crate::services::feed_io::StorageIo;
use crate::services::hot as services_hot;
use crate::services::replicas::{self, Directory};
use crate::services::{filters, originals, tally};
use crate::store::posts::{PostRow, IDS_PER_QUERY};

pub struct FeedPage {
    pub items: Vec<PostRow>,
    pub next: Option<SortKey>,
    /// `next` lies below the window's floor: its cursor says so ([`FeedQuery::below_floor`]).
    pub next_below_floor: bool,
    pub newest: SortKey,
    pub state: FeedState,
    pub gap: Option<bool>,
    pub empty_reason: Option<EmptyReason>,
    /// Authors whose posts this page left out: their database was unavailable.
    pub unavailable: Vec<UserId>,
}

fn config(ctx: &Ctx, replicated: Directory) -> ReadConfig {
    ReadConfig {
        mode: ctx.config.policy.mode,
        window_cap: ctx.config.feed_window,
        scan_budget: ctx.config.feed_scan_budget,
        in_flight_ms: ctx.config.in_flight_ms,
        ids_per_statement: IDS_PER_QUERY,
        hot_range_len: ctx.config.hot_range_len,
        map: ctx.shard_map().clone(),
        replicated,
    }
}

/// Reads beyond the first a page may take to make up for boosts hidden after it (their
/// originals are checked once the read has chosen its candidates: `services/boosts.rs`).
const TOP_UP_READS: usize = 2;

pub async fn read(ctx: &Ctx, q: &FeedQuery) -> ApiResult<FeedPage> {
    let replicated = replicas::directory(ctx).await;
    let io = StorageIo::new(ctx, q.viewer);
    let one = |query: FeedQuery| {
        let config = config(ctx, replicated.clone());
        let io = &io;
        async move { resolved(ctx, &query, read::read(io, query.clone(), ctx.now, config).await?).await }
    };
    let (mut done, mut hid) = one(q.clone()).await?;
    // Going down, a page short by the boosts it hid continues from its own cursor, exactly where
    // a client's next request would, so what it adds is what that request would have shown. (A
    // page short because the read spent its scan budget stays short: that is its contract.)
    for _ in 0..TOP_UP_READS {
        let (Some(next), None, true) = (done.next, q.after, hid) else { break };
        if done.items.len() >= q.limit {
            break;
        }
        let rest = q.limit - done.items.len();
        let (more, more_hid) = one(FeedQuery {
            limit: rest,
            before: Some(next),
            below_floor: done.next_below_floor,
            ..q.clone()
        })
        .await?;
        (done, hid) = (joined(done, more), more_hid);
    }
    if done.items.is_empty() && done.empty_reason.is_none() {
        done.empty_reason = Some(EmptyReason::AllFiltered);
    }
    Ok(finish(ctx, q, done).await)
}

/// A read's page with its boosts resolved: each shown around its original, or hidden (and
/// counted with the other hidden candidates); and whether it hid any.
async fn resolved(
    ctx: &Ctx,
    q: &FeedQuery,
    mut done: Finished<PostRow>,
) -> ApiResult<(Finished<PostRow>, bool)> {
    let rows = std::mem::take(&mut done.items);
    let sources = originals::FeedSources { authors: &done.sources, tags: &done.followed_tags };
    let (mut items, mut hidden) = originals::resolve(ctx, q.viewer, rows, Some(sources)).await?;
    // A boost's original is matched once resolved (the read matched the posts themselves).
    if let Some(applied) = &q.filters {
        let before = items.len();
        items.retain(|p| p.reblog_of.is_none() || !filters::hides(applied, q.viewer, p));
        hidden.extend(std::iter::repeat_n(Hidden::Filtered, before - items.len()));
    }
    done.items = items;
    let hid = !hidden.is_empty();
    done.hidden.extend(hidden);
    Ok((done, hid))
}

/// A page and the read that continued it: the second's items after the first's, its cursor.
fn joined(mut first: Finished<PostRow>, second: Finished<PostRow>) -> Finished<PostRow> {
    first.items.extend(second.items);
    first.next = second.next;
    first.next_below_floor = second.next_below_floor;
    first.scanned += second.scanned;
    first.hidden.extend(second.hidden);
    first.short = second.short;
    first.duplicates += second.duplicates;
    first.report = first.report.or(second.report);
    first.hot_fills.extend(second.hot_fills);
    first.unavailable.extend(second.unavailable);
    first.unavailable.sort_unstable();
    first.unavailable.dedup();
    if !first.items.is_empty() {
        first.empty_reason = None;
    }
    first
}

/// What follows the page: its tally, the reader's due activity report (through the queue,
/// after the answer: never a D1 write or a queue wait on the read path; a lost report is made
/// again by the next due read) and the hot-range refills.
async fn finish(ctx: &Ctx, q: &FeedQuery, done: Finished<PostRow>) -> FeedPage {
    record_page(&done);
    if let Some(report) = done.report {
        let job = PolicyJob::ReaderActivity { reader: q.viewer, report };
        send_job_after_response(ctx, QueueMessage::Policy(job)).await;
    }
    services_hot::store(ctx, done.hot_fills).await;
    FeedPage {
        items: done.items,
        next: done.next,
        next_below_floor: done.next_below_floor,
        newest: done.newest,
        state: done.state,
        gap: done.gap,
        empty_reason: done.empty_reason,
        unavailable: done.unavailable,
    }
}

/// Counts what a page scanned and what read-time filtering hid, by reason, for the admin
/// stats (in memory: a read writes nothing to D1; see `services/tally.rs`). A page is short
/// when it has fewer items than asked though more may exist (a cursor follows): filtering
/// spent its scan budget.
fn record_page(done: &Finished<PostRow>) {
    tally::add("feed_duplicates", done.duplicates);
    for reason in Hidden::ALL {
        let n = done.hidden.iter().filter(|h| **h == reason).count();
        tally::add(&format!("filtered_{}", reason.as_str()), n as i64);
    }
    tally::add("feed_pages", 1);
    tally::add("feed_candidates", done.scanned as i64);
    tally::add("feed_pages_short", i64::from(done.short));
}
