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
//! Jobs run from the queue (`PolicyJob`), are idempotent (they recompute from current state),
//! and a lost one is redone by the next trigger (the next activity report, the next post).

use serde::{Deserialize, Serialize};

use super::fanout::{send_job, QueueMessage};
use crate::context::Ctx;
use crate::domain::activity::ActivityReport;
use crate::domain::ids::UserId;
use crate::domain::policy::{EdgeFacts, EdgeMode, FanoutMode, DAY_MS};
use crate::domain::window::WindowOp;
use crate::error::ApiResult;
use crate::objects::timeline::Windows;
use crate::store::feed as pull;
use crate::store::policy::{self as store, AuthorFacts, EdgeRow, Phase};

/// Edges of one author decided per job message.
const AUTHOR_EDGES_PER_JOB: usize = 200;

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(tag = "job", rename_all = "snake_case")]
pub enum PolicyJob {
    /// A reader's window reported their activity: record it, re-decide their edges.
    ReaderActivity { reader: UserId, report: ActivityReport },
    /// Re-decide an author's edges, a page of followers at a time.
    AuthorEdges { author: UserId, after_follower_id: i64 },
}

pub async fn run(ctx: &Ctx, windows: &Windows, job: PolicyJob) -> ApiResult<()> {
    match job {
        PolicyJob::ReaderActivity { reader, report } => {
            store::record_activity(&ctx.db, reader, &report).await?;
            rebalance_reader(ctx, windows, reader).await
        }
        PolicyJob::AuthorEdges { author, after_follower_id } => {
            rebalance_author(ctx, windows, author, after_follower_id).await
        }
    }
}

/// What the policy wants for one edge now.
fn decide(ctx: &Ctx, edge: &EdgeRow, author: &AuthorFacts) -> EdgeMode {
    let policy = &ctx.config.policy;
    let read_rate = edge.read_rate().at(ctx.now);
    let over_cap = author.followers_count > i64::try_from(policy.push_max_followers).unwrap_or(i64::MAX);
    let facts = EdgeFacts {
        read_rate,
        post_rate: author.post_rate().at(ctx.now),
        last_read_at: edge.last_read_at,
        has_window: edge.has_window(),
        // Ranked by reported rates, as the threshold was (decay would skew close ranks).
        within_cap: !over_cap || edge.reported_read_rate() >= author.push_min_read_rate,
        current: edge.mode(),
    };
    policy.decide(&facts, ctx.now)
}

/// Re-decides every edge of one reader.
async fn rebalance_reader(ctx: &Ctx, windows: &Windows, reader: UserId) -> ApiResult<()> {
    let (edges, authors) = store::reader_edges(&ctx.db, reader).await?;
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

/// push -> pull. Exact because reads pull every edge marked pull, from D1 (complete), and a
/// post whose fan-out read the edge as push before the mark lands in the window as well:
/// shown once, by the merge's dedup.
async fn to_pull_mode(ctx: &Ctx, edges: &[(UserId, UserId)]) -> ApiResult<()> {
    if !edges.is_empty() {
        store::set_phase(&ctx.db, edges, Phase::Pull).await?;
    }
    Ok(())
}

/// pull -> push for one reader and some authors. Exact: a post P of such an author either
/// committed before the edge was marked switching, and then the backfill (read after the mark)
/// has it; or after, and then P's fan-out (which reads edges after P commits) sees the mark
/// and pushes it. Until the backfill is written the edge stays pulled, so reads miss nothing
/// meanwhile; a crash between the steps leaves it switching (pushed and pulled: correct, just
/// both costs) until the next decision finishes or reverts it.
async fn switch_to_push(ctx: &Ctx, windows: &Windows, reader: UserId, authors: &[UserId]) -> ApiResult<()> {
    if authors.is_empty() {
        return Ok(());
    }
    let edges: Vec<(UserId, UserId)> = authors.iter().map(|a| (reader, *a)).collect();
    store::set_phase(&ctx.db, &edges, Phase::Switching).await?;
    let cap = ctx.config.feed_window;
    let entries = pull::authors_entries(&ctx.db, reader, authors, cap).await?;
    windows.call(reader, &WindowOp::Deliver { entries, cap }).await?;
    store::set_phase(&ctx.db, &edges, Phase::Push).await?;
    Ok(())
}

/// Re-decides a page of an author's edges; continues with a new message until done, then
/// records the rate the edges were decided with (so the next trigger needs a real move).
async fn rebalance_author(ctx: &Ctx, windows: &Windows, author: UserId, after: i64) -> ApiResult<()> {
    let Some(mut facts) = store::author_facts(&ctx.db, author).await? else { return Ok(()) };
    let cap = ctx.config.policy.push_max_followers;
    if after == 0 {
        let active_since = ctx.now - ctx.config.policy.active_days * DAY_MS;
        let over = facts.followers_count > i64::try_from(cap).unwrap_or(i64::MAX);
        // Stored > 0 exactly when the author is capped (see `author_needs_rebalance`).
        facts.push_min_read_rate = if over {
            store::cap_threshold(&ctx.db, author, cap, active_since).await?.max(f64::MIN_POSITIVE)
        } else {
            0.0
        };
        store::record_author_decision(&ctx.db, &facts, facts.push_min_read_rate, ctx.now).await?;
    }
    let edges = store::author_edges(&ctx.db, author, after, AUTHOR_EDGES_PER_JOB).await?;
    let mut to_pull = Vec::new();
    for edge in &edges {
        match (decide(ctx, edge, &facts), edge.mode()) {
            (EdgeMode::Push, EdgeMode::Pull) => {
                switch_to_push(ctx, windows, edge.follower_id, &[author]).await?
            }
            (EdgeMode::Pull, EdgeMode::Push) => to_pull.push((edge.follower_id, author)),
            _ => {}
        }
    }
    to_pull_mode(ctx, &to_pull).await?;
    match edges.last() {
        Some(last) if edges.len() == AUTHOR_EDGES_PER_JOB => {
            let next = PolicyJob::AuthorEdges { author, after_follower_id: last.follower_id.get() };
            send_job(ctx, QueueMessage::Policy(next)).await
        }
        _ => Ok(()),
    }
}

/// Whether an author's posting rate has moved enough since their edges were decided (or they
/// crossed the cap) that the edges should be re-decided.
pub fn author_needs_rebalance(ctx: &Ctx, facts: &AuthorFacts) -> bool {
    let policy = &ctx.config.policy;
    let over_cap = facts.followers_count > i64::try_from(policy.push_max_followers).unwrap_or(i64::MAX);
    let capped_before = facts.push_min_read_rate > 0.0;
    facts.post_rate().moved_from(facts.post_rate_modes, policy.hysteresis, ctx.now)
        || over_cap != capped_before
}

/// Cron: readers inactive for `ACTIVE_DAYS` stop being pushed. Only in hybrid mode: push and
/// pull mode ignore the edges' flags, which would then only mislead the stats.
pub async fn sweep_inactive(ctx: &Ctx) -> ApiResult<usize> {
    if ctx.config.policy.mode != FanoutMode::Hybrid {
        return Ok(0);
    }
    let cutoff = ctx.now - ctx.config.policy.active_days * DAY_MS;
    store::sweep_inactive(&ctx.db, cutoff, 500).await
}

/// Test hook: puts one edge into `mode` through the real switch protocol.
pub async fn force_edge(ctx: &Ctx, reader: UserId, author: UserId, mode: EdgeMode) -> ApiResult<()> {
    let windows = Windows::new(ctx)?;
    match mode {
        EdgeMode::Push => switch_to_push(ctx, &windows, reader, &[author]).await,
        EdgeMode::Pull => to_pull_mode(ctx, &[(reader, author)]).await,
    }
}
