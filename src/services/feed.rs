//! The home feed read: timeline window first, D1 pull below the window's floor, everything
//! filtered by what the viewer may see *now*.

use std::collections::HashMap;

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::feed::{
    empty_reason, feed_verdict, next_cursor_key, EmptyReason, FeedState, Hidden, LiveState, PageBuilder,
};
use crate::domain::ids::{PostId, UserId};
use crate::domain::merge::{merge_newest_first, split_at_key};
use crate::domain::validate::GroupName;
use crate::domain::window::{Entry, WindowOp, WindowReply};
use crate::error::ApiResult;
use crate::objects::timeline::Windows;
use crate::store::feed::{self as pull, PullScope};
use crate::store::posts::{self, PostRow};
use crate::store::{batch, stats};

#[derive(Debug, Clone)]
pub struct FeedQuery {
    pub viewer: UserId,
    pub limit: usize,
    /// Continue below this key (`?cursor=`).
    pub before: Option<SortKey>,
    /// Only items above this key (`?after=`).
    pub after: Option<SortKey>,
    pub group: Option<GroupName>,
}

impl FeedQuery {
    fn scope(&self, now: i64, after: Option<SortKey>) -> PullScope<'_> {
        PullScope { viewer: self.viewer, group: self.group.as_ref(), after, now }
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
    feed_verdict(row.map(|p| LiveState { relationship: p.relationship(viewer), visibility: p.visibility }))
}

/// Offers window entries (in order) to the page, hydrated from D1 in one batched read.
async fn offer_entries(ctx: &Ctx, viewer: UserId, entries: &[Entry], page: &mut Page) -> ApiResult<()> {
    let ids: Vec<PostId> = entries.iter().map(|e| e.post_id).collect();
    let mut live: HashMap<PostId, PostRow> =
        posts::load_live(&ctx.db, viewer, &ids).await?.into_iter().map(|p| (p.id, p)).collect();
    for e in entries {
        let row = live.remove(&e.post_id);
        let result = verdict(viewer, row.as_ref()).and_then(|()| row.ok_or(Hidden::Deleted));
        if !page.offer(e.key(), result) {
            break;
        }
    }
    Ok(())
}

fn offer_rows(viewer: UserId, rows: Vec<PostRow>, page: &mut Page) {
    for row in rows {
        let key = row.sort_key();
        let result = verdict(viewer, Some(&row)).map(|()| row);
        if !page.offer(key, result) {
            break;
        }
    }
}

/// Runs `op` on the reader's window, building the window from D1 first if it does not exist
/// yet. `None` when the window is unavailable: the read then degrades to the pull path alone
/// (state `rebuilding`) instead of failing.
async fn open_window(ctx: &Ctx, windows: &Windows, viewer: UserId, op: &WindowOp) -> Option<WindowReply> {
    let attempt = async {
        let reply = windows.call(viewer, op).await?;
        if reply.initialized {
            return Ok(reply);
        }
        let cap = ctx.config.feed_window;
        pull::activate_reader(&ctx.db, viewer, ctx.now).await?;
        let (entries, complete) =
            pull::pull_entries(&ctx.db, viewer, SortKey::TOP, None, cap, ctx.now).await?;
        windows.call(viewer, &WindowOp::Init { entries, complete, cap }).await?;
        windows.call(viewer, op).await
    };
    match attempt.await {
        Ok(reply) => Some(reply),
        Err(e) => {
            worker::console_error!("timeline window of {viewer} unavailable: {e}");
            None
        }
    }
}

/// Posts younger than this may still be on their way to the window (fan-out is asynchronous,
/// and a big author's chunks can take a while); D1 already has them, so reads merge them in.
/// Without this, a post delivered after a newer one would land below a reader's newest
/// cursor and be skipped by `?after=`.
const IN_FLIGHT_MS: i64 = 120_000;
const IN_FLIGHT_LIMIT: usize = 200;

/// Recently committed candidates in `(after, before)` at or above the window floor.
async fn in_flight(
    ctx: &Ctx,
    viewer: UserId,
    before: SortKey,
    after: Option<SortKey>,
    floor: SortKey,
) -> ApiResult<Vec<Entry>> {
    let horizon = SortKey::new(ctx.now - IN_FLIGHT_MS, 0);
    if before <= horizon {
        return Ok(Vec::new());
    }
    let lower = after.map_or(horizon, |a| a.max(horizon));
    let (entries, _) =
        pull::pull_entries(&ctx.db, viewer, before, Some(lower), IN_FLIGHT_LIMIT, ctx.now).await?;
    Ok(entries.into_iter().filter(|e| e.key() >= floor).collect())
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

/// The window part of a read-down: window entries at or above the floor, merged with posts
/// still in flight, batch by batch until the page is done or the window is exhausted.
async fn window_down(ctx: &Ctx, q: &FeedQuery, before: SortKey, page: &mut Page) -> ApiResult<WindowPart> {
    let budget = ctx.config.feed_scan_budget;
    let windows = Windows::new(&ctx.env)?;
    let mut want = batch_size(page, budget);
    let Some(mut reply) =
        open_window(ctx, &windows, q.viewer, &WindowOp::Older { before, limit: want }).await
    else {
        return Ok(WindowPart::PullFrom(before, FeedState::Rebuilding));
    };
    let floor = reply.floor.unwrap_or(SortKey::TOP);
    let mut recent = in_flight(ctx, q.viewer, before, None, floor).await?;
    loop {
        let window_exhausted = reply.entries.len() < want;
        // Recent posts merge into this batch only within the key range it covers.
        let covered_down_to = match reply.entries.last() {
            Some(last) if !window_exhausted => last.key(),
            _ => floor,
        };
        let (recent_here, recent_later) =
            split_at_key(std::mem::take(&mut recent), covered_down_to, Entry::key);
        recent = recent_later;
        let candidates = merge_newest_first(reply.entries, recent_here, Entry::key);
        offer_entries(ctx, q.viewer, &candidates, page).await?;
        if page.is_full() || page.scanned >= budget {
            return Ok(WindowPart::Done);
        }
        if window_exhausted {
            return Ok(WindowPart::PullFrom(before.min(floor), FeedState::Ok));
        }
        want = batch_size(page, budget);
        let cursor = page.last_scanned.unwrap_or(before);
        reply = windows.call(q.viewer, &WindowOp::Older { before: cursor, limit: want }).await?;
    }
}

/// Older-than-cursor page: the window (home feed) or nothing (group feeds, served by the pull
/// path: one indexed query over the group's authors), then the D1 pull below it. Returns
/// whether every source is exhausted, and the page's state.
async fn read_down(ctx: &Ctx, q: &FeedQuery, page: &mut Page) -> ApiResult<(bool, FeedState)> {
    let before = q.before.unwrap_or(SortKey::TOP);
    let budget = ctx.config.feed_scan_budget;
    let (mut cursor, state) = if q.group.is_some() {
        (before, FeedState::Ok)
    } else {
        match window_down(ctx, q, before, page).await? {
            WindowPart::Done => return Ok((false, FeedState::Ok)),
            WindowPart::PullFrom(key, state) => (key, state),
        }
    };
    let scope = q.scope(ctx.now, None);
    loop {
        let want = (page.room() + 1).min(budget.saturating_sub(page.scanned)).max(1);
        let (rows, exhausted) = pull::pull_posts(&ctx.db, &scope, cursor, want).await?;
        offer_rows(q.viewer, rows, page);
        if page.is_full() || exhausted || page.scanned >= budget {
            return Ok((exhausted, state));
        }
        cursor = page.last_scanned.unwrap_or(cursor);
    }
}

/// Newer-than-cursor read for `?after=`: up to `limit + 1` visible items above the key.
async fn read_up(ctx: &Ctx, q: &FeedQuery, after: SortKey, page: &mut Page) -> ApiResult<FeedState> {
    let mut state = FeedState::Ok;
    let mut pull_from = SortKey::TOP;
    if q.group.is_none() {
        let windows = Windows::new(&ctx.env)?;
        let op = WindowOp::Newer { after, limit: ctx.config.feed_scan_budget };
        match open_window(ctx, &windows, q.viewer, &op).await {
            None => state = FeedState::Rebuilding,
            Some(reply) => {
                let floor = reply.floor.unwrap_or(SortKey::TOP);
                let recent = in_flight(ctx, q.viewer, SortKey::TOP, Some(after), floor).await?;
                let candidates = merge_newest_first(reply.entries, recent, Entry::key);
                offer_entries(ctx, q.viewer, &candidates, page).await?;
                if page.is_full() || after >= floor {
                    return Ok(state);
                }
                pull_from = floor;
            }
        }
    }
    let (rows, _) = pull::pull_posts(&ctx.db, &q.scope(ctx.now, Some(after)), pull_from, page.room()).await?;
    offer_rows(q.viewer, rows, page);
    Ok(state)
}

/// Counts what read-time filtering hid, by reason, for the admin stats (one batch, only
/// when something was hidden).
async fn record_hidden(ctx: &Ctx, hidden: &[Hidden]) -> ApiResult<()> {
    let mut statements = Vec::new();
    for reason in Hidden::ALL {
        let n = hidden.iter().filter(|h| **h == reason).count();
        if n > 0 {
            statements.push(stats::bump(&ctx.db, &format!("filtered_{}", reason.as_str()), n as i64)?);
        }
    }
    if !statements.is_empty() {
        batch(&ctx.db, statements).await?;
    }
    Ok(())
}

/// One feed page: newer than `after` (with `gap`), or older than `before`.
async fn read_page(ctx: &Ctx, q: &FeedQuery) -> ApiResult<(Page, Option<SortKey>, Option<bool>, FeedState)> {
    let Some(after) = q.after else {
        let mut page = PageBuilder::new(q.limit);
        let (exhausted, state) = read_down(ctx, q, &mut page).await?;
        let next = next_cursor_key(&page, exhausted);
        return Ok((page, next, None, state));
    };
    let mut page = PageBuilder::new(q.limit + 1);
    let state = read_up(ctx, q, after, &mut page).await?;
    let gap = page.items.len() > q.limit;
    page.items.truncate(q.limit);
    let next = if gap { page.items.last().map(PostRow::sort_key) } else { None };
    Ok((page, next, Some(gap), state))
}

pub async fn read(ctx: &Ctx, q: &FeedQuery) -> ApiResult<FeedPage> {
    let (mut page, next, gap, state) = read_page(ctx, q).await?;
    record_hidden(ctx, &page.hidden).await?;
    let newest = page.items.first().map(PostRow::sort_key).or(q.after).unwrap_or(SortKey::BOTTOM);
    let empty_reason = if page.items.is_empty() {
        // Only this case needs to know whether the viewer follows anyone.
        let ask = page.scanned == 0 && state == FeedState::Ok && q.after.is_none();
        let follows_anyone =
            if ask { Some(pull::follow_count(&ctx.db, q.viewer, q.group.as_ref()).await? > 0) } else { None };
        Some(empty_reason(page.scanned, state, follows_anyone))
    } else {
        None
    };
    Ok(FeedPage { items: std::mem::take(&mut page.items), next, newest, state, gap, empty_reason })
}
