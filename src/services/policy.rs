//! Keeps each follow edge in the mode the policy (`domain/policy.rs`) wants, and switches
//! edges so that no post is ever neither pushed nor pulled, nor shown twice.
//!
//! Switch rules (the proof of exactness is in the comments of `switch_to_push` / `to_pull`):
//! - push -> pull: the edge is marked pull at once; entries already in the window stay. Every
//!   read after the mark pulls the author (complete from D1); the read path merges window and
//!   pull by post id, so an entry present in both is shown once.
//! - pull -> push: the edge is first marked *switching* (fan-out pushes, reads still pull), then
//!   the author's recent posts are written to the window, then the edge is marked push.
//!
//! Jobs run from the queue (`PolicyJob`, `domain/queue.rs`), are idempotent (they recompute
//! from current state), and a lost one is redone by the next trigger (the next activity report,
//! the next post).

use super::queue::send::send_job;
use crate::context::Ctx;
use crate::domain::activity::ActivityReport;
use crate::domain::ids::UserId;
use crate::domain::policy::{AuthorCuts, EdgeFacts, EdgeMode, FanoutMode, DAY_MS};
use crate::domain::queue::PolicyJob;
use crate::domain::window::WindowOp;
use crate::error::ApiResult;
use crate::objects::timeline::Windows;
use crate::store::feed as pull;
use crate::store::policy::{self as store, AuthorFacts, EdgeRow, Phase};
use crate::store::AnyDb;

/// Edges of one author decided per job message.
const AUTHOR_EDGES_PER_JOB: usize = 200;

pub async fn run(ctx: &Ctx, windows: &Windows, job: PolicyJob) -> ApiResult<()> {
    match job {
        PolicyJob::ReaderActivity { reader, report } => {
            store::record_activity(ctx.user_db(reader), reader, &report).await?;
            rebalance_reader(ctx, windows, reader, Some(&report)).await
        }
        PolicyJob::AuthorEdges { author, after_follower_id, after_rate } => {
            rebalance_author(ctx, windows, author, (after_rate, after_follower_id)).await
        }
    }
}

/// What the policy wants for one edge now.
fn decide(ctx: &Ctx, edge: &EdgeRow, author: &AuthorFacts) -> EdgeMode {
    let cuts = cuts(ctx, author);
    let facts = EdgeFacts {
        read_rate: edge.read_rate().at(ctx.now),
        post_rate: cuts.post_rate,
        last_read_at: edge.last_read_at,
        has_window: edge.has_window(),
        // Ranked by reported rates, as the threshold was (decay would skew close ranks).
        within_cap: !cuts.over_cap || edge.reported_read_rate() >= cuts.push_min_read_rate,
        current: edge.mode(),
    };
    ctx.config.policy.decide(&facts, ctx.now)
}

/// Re-decides every edge of one reader; with a fresh `report`, first copies the reader's facts
/// onto the author-side edges whose selection it changes ([`copy_crossings`]).
async fn rebalance_reader(
    ctx: &Ctx,
    windows: &Windows,
    reader: UserId,
    report: Option<&ActivityReport>,
) -> ApiResult<()> {
    let (edges, authors) = store::reader_edges(&ctx.shards, reader).await?;
    if let Some(report) = report {
        copy_crossings(ctx, reader, &authors, report).await?;
    }
    let mut to_push = Vec::new();
    let mut to_pull = Vec::new();
    for edge in &edges {
        let Some(author) = authors.iter().find(|a| a.author_id == edge.author_id) else { continue };
        match (decide(ctx, edge, author), edge.mode(), edge.is_switching()) {
            (EdgeMode::Push, EdgeMode::Pull, _) => to_push.push(edge.author_id),
            (EdgeMode::Pull, EdgeMode::Push, _) | (EdgeMode::Pull, _, true) => to_pull.push(edge.author_id),
            _ => {}
        }
    }
    to_pull_mode(ctx, &to_pull.iter().map(|a| (reader, *a)).collect::<Vec<_>>()).await?;
    switch_to_push(ctx, windows, reader, &to_push).await
}

/// What an author's side compares copied rates with now.
fn cuts(ctx: &Ctx, author: &AuthorFacts) -> AuthorCuts {
    let cap = i64::try_from(ctx.config.policy.push_max_followers).unwrap_or(i64::MAX);
    AuthorCuts {
        post_rate: author.post_rate().at(ctx.now),
        push_min_read_rate: author.push_min_read_rate,
        over_cap: author.followers_count > cap,
    }
}

/// Copies a report onto the edges of the authors whose comparisons with the copy it flips
/// (`Policy::copy_due`): the copies there are read (one statement per database), and only the
/// due ones written. So a steady reader's reports write nothing on other databases.
async fn copy_crossings(
    ctx: &Ctx,
    reader: UserId,
    authors: &[AuthorFacts],
    report: &ActivityReport,
) -> ApiResult<usize> {
    let ids: Vec<UserId> = authors.iter().map(|a| a.author_id).collect();
    let copies = store::copied_facts(&ctx.shards, reader, &ids).await?;
    let due: Vec<UserId> = copies
        .iter()
        .filter(|(author, copy)| {
            let Some(facts) = authors.iter().find(|a| a.author_id == *author) else { return false };
            ctx.config.policy.copy_due(copy, report.read_rate, &cuts(ctx, facts), ctx.now)
        })
        .map(|(author, _)| *author)
        .collect();
    if due.is_empty() {
        return Ok(0);
    }
    Ok(store::copy_reader_facts(&ctx.shards, reader, &due, report).await?)
}

/// push -> pull. The reader side is marked pull first (every read after it pulls the author
/// from D1: complete), and only then the author side stops pushing, so the edge is pushed or
/// pulled at every moment; a post whose fan-out read the author side as push before its mark
/// lands in the window as well: shown once, by the merge's dedup. A crash between the two
/// marks leaves the edge pushed and pulled (correct, dearer) until the next decision.
async fn to_pull_mode(ctx: &Ctx, edges: &[(UserId, UserId)]) -> ApiResult<usize> {
    if edges.is_empty() {
        return Ok(0);
    }
    let changed = store::set_reader_phase(&ctx.shards, edges, Phase::Pull).await?;
    store::set_author_phase(&ctx.shards, edges, Phase::Pull).await?;
    Ok(changed.len())
}

/// pull -> push for one reader and some authors. Exact: the author side (what fan-out reads)
/// is marked switching first; a post P of such an author either committed before that mark,
/// and then the backfill (read after the mark) has it; or after, and then P's fan-out (which
/// reads the author side after P commits) sees the mark and pushes it. The reader side stops
/// pulling only after the backfill is written, and only for edges whose author side really is
/// pushing (a missing mirror, not applied yet, keeps the edge pulled). A crash between the
/// steps leaves the edge switching (pushed and pulled: correct, just both costs) until the
/// next decision finishes or reverts it.
async fn switch_to_push(ctx: &Ctx, windows: &Windows, reader: UserId, authors: &[UserId]) -> ApiResult<()> {
    if authors.is_empty() {
        return Ok(());
    }
    let edges: Vec<(UserId, UserId)> = authors.iter().map(|a| (reader, *a)).collect();
    store::set_author_phase(&ctx.shards, &edges, Phase::Switching).await?;
    store::set_reader_phase(&ctx.shards, &edges, Phase::Switching).await?;
    let cap = ctx.config.feed_window;
    let entries = pull::authors_entries(&ctx.shards, reader, authors, cap).await?;
    windows.call(reader, &WindowOp::Deliver { entries, cap }).await?;
    let pushing = store::set_author_phase(&ctx.shards, &edges, Phase::Push).await?;
    store::set_reader_phase(&ctx.shards, &pushing, Phase::Push).await?;
    Ok(())
}

/// Re-decides a page of an author's edges; continues with a new message until done. Only the
/// edges whose mode can change are read, from the author's side: the pushed ones, then the
/// pulled ones whose reader's copied rate reaches the lowest rate that could be pushed
/// ([`push_cut`]). So a re-decision costs about the readers the author pushes to, not the
/// follower count. The first page records the rate the edges were decided with (so the next
/// trigger needs a real move) and the cap's threshold.
async fn rebalance_author(
    ctx: &Ctx,
    windows: &Windows,
    author: UserId,
    cursor: (Option<f64>, i64),
) -> ApiResult<()> {
    // Facts, cap and edges: all on the author's side, their home.
    let db = ctx.user_db(author);
    let Some(mut facts) = store::author_facts(db, author).await? else { return Ok(()) };
    if cursor == (None, 0) {
        decide_cap(ctx, &mut facts).await?;
    }
    let edges = match cursor {
        (None, after) => store::pushed_edges(db, author, after, AUTHOR_EDGES_PER_JOB).await?,
        (Some(rate), after) => {
            let Some(cut) = push_cut(ctx, &facts) else { return Ok(()) };
            store::push_candidates(db, author, cut, (rate, after), AUTHOR_EDGES_PER_JOB).await?
        }
    };
    let mut to_pull = Vec::new();
    for edge in &with_readers_facts(ctx, &edges).await? {
        match (decide(ctx, edge, &facts), edge.mode()) {
            (EdgeMode::Push, EdgeMode::Pull) => {
                switch_to_push(ctx, windows, edge.follower_id, &[author]).await?
            }
            (EdgeMode::Pull, EdgeMode::Push) => to_pull.push((edge.follower_id, author)),
            _ => {}
        }
    }
    to_pull_mode(ctx, &to_pull).await?;
    let next = match (cursor.0, edges.last()) {
        (rate, Some(last)) if edges.len() == AUTHOR_EDGES_PER_JOB => {
            Some((rate.map(|_| last.reported_read_rate()), last.follower_id.get()))
        }
        // The pushed edges are done: on to the candidates, from the top.
        (None, _) => Some((Some(f64::MAX), 0)),
        (Some(_), _) => None,
    };
    let Some((after_rate, after_follower_id)) = next else { return Ok(()) };
    let job = PolicyJob::AuthorEdges { author, after_follower_id, after_rate };
    send_job(ctx, job.into()).await
}

/// The edges with their readers' facts read from the readers' own rows: the copies on the
/// author's side only select the edges (they are kept on the right side of the author's cuts,
/// not fresh: [`copy_crossings`]), so each edge is decided on the same facts the reader's own
/// re-decision uses. One statement per database the page's readers live on.
async fn with_readers_facts(ctx: &Ctx, edges: &[EdgeRow]) -> ApiResult<Vec<EdgeRow>> {
    let ids: Vec<UserId> = edges.iter().map(|e| e.follower_id).collect();
    let readers = store::readers_facts(&ctx.shards, &ids).await?;
    let fresh = |e: &EdgeRow| readers.iter().find(|r| r.id == e.follower_id).map_or(*e, |r| e.with_reader(r));
    Ok(edges.iter().map(fresh).collect())
}

/// For an author over the cap, the read rate of the cap-th most active reader (an index seek
/// on the author's side); recorded with the posting rate the edges are now decided with.
async fn decide_cap(ctx: &Ctx, facts: &mut AuthorFacts) -> ApiResult<()> {
    let cap = ctx.config.policy.push_max_followers;
    let active_since = ctx.now - ctx.config.policy.active_days * DAY_MS;
    let over = facts.followers_count > i64::try_from(cap).unwrap_or(i64::MAX);
    // Stored > 0 exactly when the author is capped (see `Policy::author_needs_rebalance`).
    facts.push_min_read_rate = if over {
        store::cap_threshold(ctx.user_db(facts.author_id), facts.author_id, cap, active_since)
            .await?
            .max(f64::MIN_POSITIVE)
    } else {
        0.0
    };
    Ok(store::record_author_decision(ctx.user_db(facts.author_id), facts, facts.push_min_read_rate, ctx.now)
        .await?)
}

/// The lowest copied read rate a pulled edge needs to be a push candidate (`Policy::push_cut`).
fn push_cut(ctx: &Ctx, facts: &AuthorFacts) -> Option<f64> {
    ctx.config.policy.push_cut(&cuts(ctx, facts))
}

/// Readers (with a window) whose activity one sweep pass checks at most, and inactive readers
/// whose edges it moves: a rolling slice by id (wrapping round within the pass), so every
/// reader is checked once per `readers / SWEEP_READERS_PER_PASS` passes and no pass scans the
/// whole table.
const SWEEP_READERS_PER_PASS: usize = 1_000;
const SWEEP_MOVES_PER_PASS: usize = 100;
const SWEEP_CURSOR: &str = "sweep_inactive_cursor";

/// Cron: readers inactive for `ACTIVE_DAYS` stop being pushed (both copies of each edge, in
/// the safe order of [`to_pull_mode`]). Only in hybrid mode: push and pull mode ignore the
/// edges' flags, which would then only mislead the stats. One database's readers (each
/// database's reconciliation share runs its own). Returns the edges moved.
pub async fn sweep_inactive(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<usize> {
    if ctx.config.policy.mode != FanoutMode::Hybrid {
        return Ok(0);
    }
    sweep_database(ctx, db).await
}

/// One database's slice of readers (their rows live there; its cursor in its own `stats`).
async fn sweep_database(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<usize> {
    let cutoff = ctx.now - ctx.config.policy.active_days * DAY_MS;
    let start = crate::store::stats::value(db, SWEEP_CURSOR).await?.unwrap_or(0);
    let (mut after, mut checked, mut moved, mut wrapped) = (start, 0, 0, false);
    loop {
        let budget = SWEEP_READERS_PER_PASS - checked;
        let slice = store::reader_slice(db, after, cutoff, budget).await?;
        checked += slice.len();
        let (next, edges) = sweep_slice(ctx, &slice).await?;
        moved += edges;
        if let Some(next) = next {
            after = next; // stopped at the move budget: go on from there next pass
            break;
        }
        match slice.last() {
            Some(&(last, _)) if slice.len() == budget => {
                after = last.get();
                break;
            }
            // A short slice reached the last reader: go round once from the first.
            _ if wrapped || start == 0 || checked >= SWEEP_READERS_PER_PASS => {
                after = 0;
                break;
            }
            _ => (after, wrapped) = (0, true),
        }
    }
    crate::store::batch(db, vec![crate::store::stats::set(db, SWEEP_CURSOR, after)?]).await?;
    Ok(moved)
}

/// Moves the pushed edges of the slice's inactive readers to pull, at most
/// `SWEEP_MOVES_PER_PASS` readers: `(where to stop if the budget ran out, edges moved)`.
async fn sweep_slice(ctx: &Ctx, slice: &[(UserId, bool)]) -> ApiResult<(Option<i64>, usize)> {
    let mut moved = 0;
    for (i, &(reader, _)) in slice.iter().filter(|(_, sweep)| *sweep).enumerate() {
        if i == SWEEP_MOVES_PER_PASS {
            return Ok((Some(reader.get() - 1), moved));
        }
        let authors = store::pushed_authors(ctx.user_db(reader), reader).await?;
        let edges: Vec<_> = authors.into_iter().map(|a| (reader, a)).collect();
        moved += to_pull_mode(ctx, &edges).await?;
    }
    Ok((None, moved))
}

/// Test hook: puts one edge into `mode` through the real switch protocol.
pub async fn force_edge(ctx: &Ctx, reader: UserId, author: UserId, mode: EdgeMode) -> ApiResult<()> {
    let windows = Windows::new(ctx)?;
    match mode {
        EdgeMode::Push => switch_to_push(ctx, &windows, reader, &[author]).await,
        EdgeMode::Pull => to_pull_mode(ctx, &[(reader, author)]).await.map(|_| ()),
    }
}
