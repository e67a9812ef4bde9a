//! The home feed read: timeline window first, D1 pull below the window's floor, everything
//! filtered by what the viewer may see *now*.

use std::collections::HashMap;

use futures_util::future::{join, join3};

use super::queue::send::send_job_after_response;
use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::feed::{
    empty_reason, feed_verdict, next_cursor_key, EmptyReason, FeedState, Hidden, LiveState, PageBuilder,
};
use crate::domain::hot::{self, HotRange};
use crate::domain::ids::{PostId, UserId};
use crate::domain::merge::{covered_to, merge_newest_first};
pub use crate::domain::plan::FeedScope;
use crate::domain::plan::{RoundInput, RoundPlan};
use crate::domain::queue::{PolicyJob, QueueMessage};
use crate::domain::window::{Entry, WindowOp, WindowReply};
use crate::error::ApiResult;
use crate::objects::timeline::Windows;
use crate::services::feed_io::{self, Reader};
use crate::services::hot::{self as services_hot, HotSources, Refill};
use crate::services::tally;
use crate::store::feed::{self as pull, Bounds};
use crate::store::posts::PostRow;

#[derive(Debug, Clone)]
pub struct FeedQuery {
    pub viewer: UserId,
    pub limit: usize,
    /// Continue below this key (`?cursor=`).
    pub before: Option<SortKey>,
    /// Only items above this key (`?after=`).
    pub after: Option<SortKey>,
    /// Home (the window), or a group's or list's authors (the pull path alone).
    pub scope: FeedScope,
}

impl FeedQuery {
    /// A read that counts as the reader opening their feed (for their read rate).
    fn read_at(&self, ctx: &Ctx) -> Option<i64> {
        self.before.is_none().then_some(ctx.now)
    }
}

pub struct FeedPage {
    pub items: Vec<PostRow>,
    pub next: Option<SortKey>,
    pub newest: SortKey,
    pub state: FeedState,
    pub gap: Option<bool>,
    pub empty_reason: Option<EmptyReason>,
}

type Page = PageBuilder<PostRow>;

fn verdict(viewer: UserId, row: Option<&PostRow>) -> Result<(), Hidden> {
    feed_verdict(row.map(|p| LiveState {
        relationship: p.relationship(viewer),
        visibility: p.visibility,
        taken_down: p.is_taken_down(),
    }))
}

/// The hot-range cache's part of one read: the usable ranges and their authors, and the time
/// from which D1 answers for those authors (`domain/hot.rs`).
struct Hot {
    in_flight_since: i64,
    ranges: Vec<HotRange>,
    authors: Vec<UserId>,
    /// What the cache lacked: read by the first round's D1 batch, then stored.
    refills: Vec<Refill>,
}

impl Hot {
    fn new(sources: HotSources, in_flight_since: i64, floor: SortKey) -> Self {
        let (ranges, authors, refills) = sources.usable(floor);
        Hot { in_flight_since, ranges, authors, refills }
    }

    /// A round's window entries with the cached candidates in `(lower, upper)` merged in.
    fn with_window(&self, entries: Vec<Entry>, lower: SortKey, upper: SortKey, want: usize) -> Vec<Entry> {
        if self.ranges.is_empty() {
            return entries;
        }
        let cached = hot::candidates(&self.ranges, lower, upper, want);
        let offered = entries.len() + cached.len();
        let merged = merge_newest_first(entries, cached, Entry::key);
        tally::add("feed_duplicates", (offered - merged.len()) as i64);
        merged
    }
}

/// The read's first wave: the reader's window, the reader's edges (their home database) and
/// the hot ranges the read may use, all at once.
async fn first_wave(
    ctx: &Ctx,
    windows: &Windows,
    viewer: UserId,
    op: &WindowOp,
) -> ApiResult<(Option<WindowReply>, Reader, HotSources, i64)> {
    let since = services_hot::boundary_at(ctx.now, ctx.config.in_flight_ms);
    let (reply, reader, sources) = join3(
        open_window(ctx, windows, viewer, op),
        Reader::load(ctx, viewer, &FeedScope::Home),
        services_hot::sources(ctx, viewer, since),
    )
    .await;
    Ok((reply, reader?, sources, since))
}

/// A feed candidate: an entry from the window (to hydrate) or a post pulled from D1.
enum Candidate {
    Pushed(Entry),
    Pulled(PostRow),
}

impl Candidate {
    fn key(&self) -> SortKey {
        match self {
            Candidate::Pushed(e) => e.key(),
            Candidate::Pulled(p) => p.sort_key(),
        }
    }
}

/// Merges window entries and pulled posts (each source newest first) into one candidate
/// stream, by post id once (the pulled copy wins: it is already hydrated), keeping only what
/// every source is complete down to: `covered`.
fn merge_sources(entries: Vec<Entry>, sources: Vec<Vec<PostRow>>, covered: SortKey) -> Vec<Candidate> {
    let offered = entries.len() + sources.iter().map(Vec::len).sum::<usize>();
    let mut merged: Vec<Candidate> = entries.into_iter().map(Candidate::Pushed).collect();
    for rows in sources {
        let pulled = rows.into_iter().map(Candidate::Pulled).collect();
        merged = merge_newest_first(pulled, merged, Candidate::key);
    }
    // The same post from two sources (in flight and already pushed, or across an edge switch).
    tally::add("feed_duplicates", (offered - merged.len()) as i64);
    merged.retain(|c| c.key() >= covered);
    merged
}

/// Offers one round's candidates (window entries and each database's pulled rows, each asked
/// for `want`) down to where all are complete (never below `bound`); returns that key.
fn offer_round(
    viewer: UserId,
    entries: Vec<Entry>,
    rows: feed_io::RoundRows,
    want: usize,
    bound: SortKey,
    page: &mut Page,
) -> SortKey {
    let covered = rows
        .sources
        .iter()
        .map(|source| covered_to(source, want, bound, PostRow::sort_key))
        .fold(covered_to(&entries, want, bound, Entry::key), SortKey::max);
    offer_candidates(viewer, merge_sources(entries, rows.sources, covered), rows.live, page);
    covered
}

fn offer(viewer: UserId, key: SortKey, row: Option<PostRow>, page: &mut Page) -> bool {
    let result = verdict(viewer, row.as_ref()).and_then(|()| row.ok_or(Hidden::Deleted));
    page.offer(key, result)
}

/// Offers merged candidates in order: pulled ones as they are, window entries with the rows
/// hydrated for them (`live`).
fn offer_candidates(
    viewer: UserId,
    candidates: Vec<Candidate>,
    mut live: HashMap<PostId, PostRow>,
    page: &mut Page,
) {
    for candidate in candidates {
        let key = candidate.key();
        let row = match candidate {
            Candidate::Pulled(row) => Some(row),
            Candidate::Pushed(entry) => live.remove(&entry.post_id),
        };
        if !offer(viewer, key, row, page) {
            return;
        }
    }
}

fn offer_rows(viewer: UserId, rows: Vec<PostRow>, page: &mut Page) {
    for row in rows {
        if !offer(viewer, row.sort_key(), Some(row), page) {
            return;
        }
    }
}

/// Runs `op` on the reader's window, building the window from D1 first if it does not exist
/// yet (a new reader, or one whose idle window's storage was deleted: `domain::idle`). `None`
/// when the window is unavailable: the read then degrades to the pull path alone (state
/// `rebuilding`) instead of failing.
async fn open_window(ctx: &Ctx, windows: &Windows, viewer: UserId, op: &WindowOp) -> Option<WindowReply> {
    let attempt = async {
        let first = windows.call(viewer, op).await?;
        if first.initialized {
            return Ok(first);
        }
        let cap = ctx.config.feed_window;
        pull::activate_reader(ctx.user_db(viewer), viewer, ctx.now).await?;
        // Read after the activation: a follow made meanwhile is then in the snapshot or its
        // backfill delivers to the now active window.
        let reader = Reader::load(ctx, viewer, &FeedScope::Home).await?;
        let (entries, complete) = feed_io::window_snapshot(ctx, &reader, cap).await?;
        windows.call(viewer, &WindowOp::Init { entries, complete, cap }).await?;
        // The first call counted the read (and may have made a report due); this one only reads.
        let mut reply = windows.call(viewer, &without_read(op)).await?;
        reply.report = first.report;
        Ok::<_, crate::error::ApiError>(reply)
    };
    match attempt.await {
        Ok(reply) => {
            report_activity(ctx, viewer, &reply).await;
            Some(reply)
        }
        Err(e) => {
            worker::console_error!("timeline window of {viewer} unavailable: {e}");
            None
        }
    }
}

fn without_read(op: &WindowOp) -> WindowOp {
    match op.clone() {
        WindowOp::Older { before, limit, .. } => WindowOp::Older { before, limit, read_at: None },
        WindowOp::Newer { after, limit, .. } => WindowOp::Newer { after, limit, read_at: None },
        other => other,
    }
}

/// Hands a due activity report to the policy (through the queue, after the answer: never a
/// D1 write or a queue wait on the read path). A lost report is made again by the next due read.
async fn report_activity(ctx: &Ctx, reader: UserId, reply: &WindowReply) {
    let Some(report) = reply.report else { return };
    send_job_after_response(ctx, QueueMessage::Policy(PolicyJob::ReaderActivity { reader, report })).await;
}

/// How many candidates to ask for next: the room left plus a margin for filtered ones,
/// within what is left of the scan budget.
fn batch_size(page: &Page, budget: usize) -> usize {
    (page.room() + page.room() / 2 + 4).min(budget.saturating_sub(page.scanned)).max(1)
}

/// Where the window part of a read-down ended.
enum WindowPart {
    /// The page is done (full, or the scan budget is spent).
    Done,
    /// Continue from D1 below this key.
    PullFrom(SortKey, FeedState),
}

/// One round beside the window: the pulled and in-flight posts in `(lower, cursor)`, the rows
/// of the window's entries, the viewer's relationship to each author, and what the hot-range
/// cache lacked (`refills`, stored after): one batch per database, all at once. In pull mode
/// for the whole system the full pull runs beside it.
async fn round(
    ctx: &Ctx,
    reader: &Reader,
    hot: &Hot,
    bounds: Bounds,
    entries: &[Entry],
    refills: &[Refill],
) -> ApiResult<feed_io::RoundRows> {
    let candidates: Vec<(PostId, UserId)> = entries.iter().map(|e| (e.post_id, e.author_id)).collect();
    let input = RoundInput {
        viewer: reader.viewer,
        mode: ctx.config.policy.mode,
        edges: &reader.edges,
        cached: &hot.authors,
        in_flight_since: hot.in_flight_since,
        candidates: &candidates,
    };
    let plan = RoundPlan::beside_window(&input, ctx.shard_map());
    if ctx.config.policy.mode != crate::domain::policy::FanoutMode::Pull {
        return feed_io::run_round(ctx, reader, &plan, bounds, refills).await;
    }
    let range = (Some(bounds.after), bounds.before, bounds.limit);
    let (pulled, rows) = join(
        feed_io::full_pull(ctx, reader, &FeedScope::Home, range),
        feed_io::run_round(ctx, reader, &plan, bounds, refills),
    )
    .await;
    let mut rows = rows?;
    rows.sources.push(pulled?.0);
    Ok(rows)
}

/// The window part of a read-down: window entries at or above the floor merged with what is
/// pulled beside the window, round by round until the page is done or the window is exhausted.
async fn window_down(
    ctx: &Ctx,
    q: &FeedQuery,
    before: SortKey,
    page: &mut Page,
) -> ApiResult<(WindowPart, Reader)> {
    let budget = ctx.config.feed_scan_budget;
    let windows = Windows::new(ctx)?;
    let mut want = batch_size(page, budget);
    let first = WindowOp::Older { before, limit: want, read_at: q.read_at(ctx) };
    let (opened, reader, sources, since) = first_wave(ctx, &windows, q.viewer, &first).await?;
    let Some(mut reply) = opened else {
        return Ok((WindowPart::PullFrom(before, FeedState::Rebuilding), reader));
    };
    let floor = reply.floor.unwrap_or(SortKey::TOP);
    let hot = Hot::new(sources, since, floor);
    let mut cursor = before;
    let mut refills = hot.refills.as_slice();
    loop {
        let entries = hot.with_window(reply.entries, floor, cursor, want);
        let bounds = Bounds { before: cursor, after: floor, limit: want };
        let rows = round(ctx, &reader, &hot, bounds, &entries, refills).await?;
        refills = &[];
        let covered = offer_round(q.viewer, entries, rows, want, floor, page);
        if page.is_full() || page.scanned >= budget {
            return Ok((WindowPart::Done, reader));
        }
        if covered <= floor {
            return Ok((WindowPart::PullFrom(before.min(floor), FeedState::Ok), reader));
        }
        cursor = page.last_scanned.unwrap_or(covered).min(cursor);
        want = batch_size(page, budget);
        reply =
            windows.call(q.viewer, &WindowOp::Older { before: cursor, limit: want, read_at: None }).await?;
    }
}

/// Older-than-cursor page: the window (home feed) or nothing (group and list feeds, served by
/// the pull path: one indexed query per database over their authors), then the D1 pull below it.
/// Returns whether every source is exhausted, the page's state and the reader's edges.
async fn read_down(ctx: &Ctx, q: &FeedQuery, page: &mut Page) -> ApiResult<(bool, FeedState, Reader)> {
    let before = q.before.unwrap_or(SortKey::TOP);
    let budget = ctx.config.feed_scan_budget;
    let (mut cursor, state, reader) = if q.scope != FeedScope::Home {
        (before, FeedState::Ok, Reader::load(ctx, q.viewer, &q.scope).await?)
    } else {
        match window_down(ctx, q, before, page).await? {
            (WindowPart::Done, reader) => return Ok((false, FeedState::Ok, reader)),
            (WindowPart::PullFrom(key, state), reader) => (key, state, reader),
        }
    };
    loop {
        let want = (page.room() + 1).min(budget.saturating_sub(page.scanned)).max(1);
        let (rows, exhausted) = feed_io::full_pull(ctx, &reader, &q.scope, (None, cursor, want)).await?;
        offer_rows(q.viewer, rows, page);
        if page.is_full() || exhausted || page.scanned >= budget {
            return Ok((exhausted, state, reader));
        }
        cursor = page.last_scanned.unwrap_or(cursor);
    }
}

/// Newer-than-cursor read for `?after=`: up to `limit + 1` visible items above the key: the
/// newest window entries and pulled posts above it (and above the floor), then, if the page
/// still has room and `after` is below the floor, everything followed in `(after, floor)`.
async fn read_up(
    ctx: &Ctx,
    q: &FeedQuery,
    after: SortKey,
    page: &mut Page,
) -> ApiResult<(FeedState, Reader)> {
    if q.scope != FeedScope::Home {
        let reader = Reader::load(ctx, q.viewer, &q.scope).await?;
        read_up_pull(ctx, q, &reader, after, SortKey::TOP, page).await?;
        return Ok((FeedState::Ok, reader));
    }
    let windows = Windows::new(ctx)?;
    let want = ctx.config.feed_scan_budget;
    let op = WindowOp::Newer { after, limit: want, read_at: q.read_at(ctx) };
    let (opened, reader, sources, since) = first_wave(ctx, &windows, q.viewer, &op).await?;
    let Some(reply) = opened else {
        read_up_pull(ctx, q, &reader, after, SortKey::TOP, page).await?;
        return Ok((FeedState::Rebuilding, reader));
    };
    let floor = reply.floor.unwrap_or(SortKey::TOP);
    let lower = after.max(floor);
    let hot = Hot::new(sources, since, lower);
    let entries = hot.with_window(reply.entries, lower, SortKey::TOP, want);
    let bounds = Bounds { before: SortKey::TOP, after: lower, limit: want };
    let rows = round(ctx, &reader, &hot, bounds, &entries, &hot.refills).await?;
    offer_round(q.viewer, entries, rows, want, lower, page);
    if !page.is_full() && after < floor {
        read_up_pull(ctx, q, &reader, after, floor, page).await?;
    }
    Ok((FeedState::Ok, reader))
}

/// Everything followed in `(after, below)`, newest first, into the page's room.
async fn read_up_pull(
    ctx: &Ctx,
    q: &FeedQuery,
    reader: &Reader,
    after: SortKey,
    below: SortKey,
    page: &mut Page,
) -> ApiResult<()> {
    let (rows, _) = feed_io::full_pull(ctx, reader, &q.scope, (Some(after), below, page.room())).await?;
    offer_rows(q.viewer, rows, page);
    Ok(())
}

/// Counts what a page scanned and what read-time filtering hid, by reason, for the admin
/// stats (in memory: a read writes nothing to D1; see `services/tally.rs`). A page is short
/// when it has fewer items than asked though more may exist (a cursor follows): filtering
/// spent its scan budget.
fn record_page(page: &Page, limit: usize, more: bool) {
    for reason in Hidden::ALL {
        let n = page.hidden.iter().filter(|h| **h == reason).count();
        tally::add(&format!("filtered_{}", reason.as_str()), n as i64);
    }
    tally::add("feed_pages", 1);
    tally::add("feed_candidates", page.scanned as i64);
    tally::add("feed_pages_short", i64::from(page.items.len() < limit && more));
}

/// One feed page: newer than `after` (with `gap`), or older than `before`.
struct ReadPage {
    page: Page,
    next: Option<SortKey>,
    gap: Option<bool>,
    state: FeedState,
    reader: Reader,
}

async fn read_page(ctx: &Ctx, q: &FeedQuery) -> ApiResult<ReadPage> {
    let Some(after) = q.after else {
        let mut page = PageBuilder::new(q.limit);
        let (exhausted, state, reader) = read_down(ctx, q, &mut page).await?;
        let next = next_cursor_key(&page, exhausted);
        return Ok(ReadPage { page, next, gap: None, state, reader });
    };
    let mut page = PageBuilder::new(q.limit + 1);
    let (state, reader) = read_up(ctx, q, after, &mut page).await?;
    let gap = page.items.len() > q.limit;
    page.items.truncate(q.limit);
    let next = if gap { page.items.last().map(PostRow::sort_key) } else { None };
    Ok(ReadPage { page, next, gap: Some(gap), state, reader })
}

pub async fn read(ctx: &Ctx, q: &FeedQuery) -> ApiResult<FeedPage> {
    let ReadPage { mut page, next, gap, state, reader } = read_page(ctx, q).await?;
    record_page(&page, q.limit, next.is_some());
    let newest = page.items.first().map(PostRow::sort_key).or(q.after).unwrap_or(SortKey::BOTTOM);
    let empty_reason = page.items.is_empty().then(|| {
        // The reader's edges are known from the first wave: no extra read.
        let ask = page.scanned == 0 && state == FeedState::Ok && q.after.is_none();
        let follows_anyone = ask.then(|| reader.follows_anyone(&q.scope));
        empty_reason(page.scanned, state, follows_anyone)
    });
    Ok(FeedPage { items: std::mem::take(&mut page.items), next, newest, state, gap, empty_reason })
}
