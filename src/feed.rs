//! The home feed read: timeline window first, D1 pull below the window's floor, everything
//! filtered by what the viewer may see *now*.

use std::collections::HashMap;

use crate::domain::cursor::SortKey;
use crate::domain::feed::{feed_verdict, next_cursor_key, Hidden, LiveState, PageBuilder};
use crate::domain::merge::{merge_newest_first, split_at_key};
use crate::error::ApiResult;
use crate::http::app::App;
use crate::store::batch;
use crate::store::feed::{self as pull, PullScope};
use crate::store::outbox::bump;
use crate::store::posts::{self, PostRow};
use crate::timeline::{Entry, WindowOp, WindowReply, Windows};

#[derive(Debug, Clone)]
pub struct FeedQuery {
    pub viewer: i64,
    pub limit: usize,
    /// Continue below this key (`?cursor=`).
    pub before: Option<SortKey>,
    /// Only items above this key (`?after=`).
    pub after: Option<SortKey>,
    pub group: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedState {
    Ok,
    /// The reader's window could not be built; the page came from D1 alone.
    Rebuilding,
}

pub struct FeedPage {
    pub items: Vec<PostRow>,
    pub next: Option<SortKey>,
    pub newest: SortKey,
    pub state: FeedState,
    pub gap: Option<bool>,
    pub empty_reason: Option<&'static str>,
}

fn verdict(viewer: i64, row: Option<&PostRow>) -> Result<(), Hidden> {
    feed_verdict(row.map(|p| LiveState { relationship: p.relationship(viewer), visibility: p.visibility }))
}

/// Offers window entries (in order) to the page, hydrated from D1 in one batched read.
async fn offer_entries(
    app: &App,
    viewer: i64,
    entries: &[Entry],
    page: &mut PageBuilder<PostRow>,
) -> ApiResult<()> {
    let ids: Vec<i64> = entries.iter().map(|e| e.post_id).collect();
    let mut live: HashMap<i64, PostRow> =
        posts::load_live(&app.db, viewer, &ids).await?.into_iter().map(|p| (p.id, p)).collect();
    for e in entries {
        let row = live.remove(&e.post_id);
        let result = verdict(viewer, row.as_ref()).and_then(|()| row.ok_or(Hidden::Deleted));
        if !page.offer(e.key(), result) {
            break;
        }
    }
    Ok(())
}

fn offer_rows(viewer: i64, rows: Vec<PostRow>, page: &mut PageBuilder<PostRow>) {
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
async fn open_window(app: &App, windows: &Windows, viewer: i64, op: &WindowOp) -> Option<WindowReply> {
    let attempt = async {
        let reply = windows.call(viewer, op).await?;
        if reply.initialized {
            return Ok(reply);
        }
        let cap = app.config.feed_window;
        pull::activate_reader(&app.db, viewer, app.now).await?;
        let (entries, complete) =
            pull::pull_entries(&app.db, viewer, SortKey::TOP, None, cap, app.now).await?;
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
    app: &App,
    viewer: i64,
    before: SortKey,
    after: Option<SortKey>,
    floor: SortKey,
) -> ApiResult<Vec<Entry>> {
    let horizon = SortKey::new(app.now - IN_FLIGHT_MS, 0);
    if before <= horizon {
        return Ok(Vec::new());
    }
    let lower = after.map_or(horizon, |a| a.max(horizon));
    let (entries, _) =
        pull::pull_entries(&app.db, viewer, before, Some(lower), IN_FLIGHT_LIMIT, app.now).await?;
    Ok(entries.into_iter().filter(|e| e.key() >= floor).collect())
}

/// Older-than-cursor page: window entries at or above the floor, then the pull below it.
async fn read_down(
    app: &App,
    q: &FeedQuery,
    page: &mut PageBuilder<PostRow>,
) -> ApiResult<(bool, FeedState)> {
    let before = q.before.unwrap_or(SortKey::TOP);
    let budget = app.config.feed_scan_budget;
    let scope = PullScope { viewer: q.viewer, group: q.group.as_deref(), after: None, now: app.now };
    // Over-fetch a little: some candidates will be filtered out.
    let batch_size = |page: &PageBuilder<PostRow>| {
        (page.room() + page.room() / 2 + 4).min(budget.saturating_sub(page.scanned)).max(1)
    };
    let (pull_from, state) = if q.group.is_some() {
        // Group feeds are served by the pull path: one indexed query over the group's authors.
        (before, FeedState::Ok)
    } else {
        let windows = Windows::new(&app.env)?;
        let want = batch_size(page);
        match open_window(app, &windows, q.viewer, &WindowOp::Older { before, limit: want }).await {
            None => (before, FeedState::Rebuilding),
            Some(first) => {
                let floor = first.floor.unwrap_or(SortKey::TOP);
                let mut recent = in_flight(app, q.viewer, before, None, floor).await?;
                let (mut reply, mut want) = (first, want);
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
                    offer_entries(app, q.viewer, &candidates, page).await?;
                    if page.is_full() || page.scanned >= budget {
                        return Ok((false, FeedState::Ok));
                    }
                    if window_exhausted {
                        break;
                    }
                    let cursor = page.last_scanned.unwrap_or(before);
                    want = batch_size(page);
                    reply = windows.call(q.viewer, &WindowOp::Older { before: cursor, limit: want }).await?;
                }
                (before.min(floor), FeedState::Ok)
            }
        }
    };
    let mut cursor = pull_from;
    loop {
        let want = (page.room() + 1).min(budget.saturating_sub(page.scanned)).max(1);
        let (rows, exhausted) = pull::pull_posts(&app.db, &scope, cursor, want).await?;
        offer_rows(q.viewer, rows, page);
        if page.is_full() || exhausted || page.scanned >= budget {
            return Ok((exhausted, state));
        }
        cursor = page.last_scanned.unwrap_or(cursor);
    }
}

/// Newer-than-cursor read for `?after=`: up to `limit + 1` visible items above the key.
async fn read_up(
    app: &App,
    q: &FeedQuery,
    after: SortKey,
    page: &mut PageBuilder<PostRow>,
) -> ApiResult<FeedState> {
    let budget = app.config.feed_scan_budget;
    let scope = PullScope { viewer: q.viewer, group: q.group.as_deref(), after: Some(after), now: app.now };
    let mut state = FeedState::Ok;
    let mut pull_from = SortKey::TOP;
    if q.group.is_none() {
        let windows = Windows::new(&app.env)?;
        match open_window(app, &windows, q.viewer, &WindowOp::Newer { after, limit: budget }).await {
            None => state = FeedState::Rebuilding,
            Some(reply) => {
                let floor = reply.floor.unwrap_or(SortKey::TOP);
                let recent = in_flight(app, q.viewer, SortKey::TOP, Some(after), floor).await?;
                offer_entries(app, q.viewer, &merge_newest_first(reply.entries, recent, Entry::key), page)
                    .await?;
                if page.is_full() || after >= floor {
                    return Ok(state);
                }
                pull_from = floor;
            }
        }
    }
    let (rows, _) = pull::pull_posts(&app.db, &scope, pull_from, page.room()).await?;
    offer_rows(q.viewer, rows, page);
    Ok(state)
}

/// Counts what read-time filtering hid, by reason, for the admin stats (one batch, only
/// when something was hidden).
async fn record_hidden(app: &App, hidden: &[Hidden]) -> ApiResult<()> {
    let mut statements = Vec::new();
    for reason in Hidden::ALL {
        let n = hidden.iter().filter(|h| **h == reason).count();
        if n > 0 {
            statements.push(bump(&app.db, &format!("filtered_{}", reason.as_str()), n as i64)?);
        }
    }
    if !statements.is_empty() {
        batch(&app.db, statements).await?;
    }
    Ok(())
}

pub async fn read(app: &App, q: &FeedQuery) -> ApiResult<FeedPage> {
    let (mut page, next, gap, state) = match q.after {
        Some(after) => {
            let mut page = PageBuilder::new(q.limit + 1);
            let state = read_up(app, q, after, &mut page).await?;
            let gap = page.items.len() > q.limit;
            page.items.truncate(q.limit);
            let next = if gap { page.items.last().map(PostRow::sort_key) } else { None };
            (page, next, Some(gap), state)
        }
        None => {
            let mut page = PageBuilder::new(q.limit);
            let (exhausted, state) = read_down(app, q, &mut page).await?;
            let next = next_cursor_key(&page, exhausted);
            (page, next, None, state)
        }
    };
    record_hidden(app, &page.hidden).await?;
    let newest = page.items.first().map(PostRow::sort_key).or(q.after).unwrap_or(SortKey::BOTTOM);
    let empty_reason = if !page.items.is_empty() {
        None
    } else if page.scanned > 0 {
        Some("all_filtered")
    } else if state == FeedState::Rebuilding {
        Some("rebuilding")
    } else if pull::follow_count(&app.db, q.viewer, q.group.as_deref()).await? == 0 && q.after.is_none() {
        Some("no_follows")
    } else {
        Some("no_posts")
    };
    Ok(FeedPage { items: std::mem::take(&mut page.items), next, newest, state, gap, empty_reason })
}
