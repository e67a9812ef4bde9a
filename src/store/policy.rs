//! The hybrid fan-out's D1 side: authors' posting rates, readers' reported activity, and the
//! mode of each follow edge (`follows.push`, `follows.pull`; see migration 0005).

use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{all, exec, first, int, run, stmt, Db};
use crate::domain::activity::ActivityReport;
use crate::domain::ids::UserId;
use crate::domain::policy::{EdgeMode, Rate, DAY_MS, RATE_TAU_DAYS};
use crate::error::ApiResult;

/// Brings the author's posting rate up to date with one post made at `created_at` (an import
/// carries its own, older time and counts for less), for the publish batch. Same formula as
/// `Rate::with_event`, in SQL so it costs no extra round trip.
pub fn count_post(db: &Db, author: UserId, created_at: i64, now: i64) -> ApiResult<D1PreparedStatement> {
    let tau_ms = RATE_TAU_DAYS * DAY_MS as f64;
    stmt(
        db,
        "UPDATE users SET \
           post_rate = post_rate * exp(-MAX(?3 - post_rate_at, 0) / ?4) + exp(-MAX(?3 - ?2, 0) / ?4) / ?5, \
           post_rate_at = MAX(post_rate_at, ?3) \
         WHERE id = ?1",
        &[int(author), int(created_at), int(now), tau_ms.into(), RATE_TAU_DAYS.into()],
    )
}

/// Records what a reader's window object reported.
pub async fn record_activity(db: &Db, reader: UserId, report: &ActivityReport) -> ApiResult<()> {
    exec(
        db,
        "UPDATE users SET read_rate = ?2, last_read_at = MAX(COALESCE(last_read_at, 0), ?3) WHERE id = ?1",
        &[int(reader), report.read_rate.into(), int(report.last_read_at)],
    )
    .await
}

/// An author as the policy sees them.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct AuthorFacts {
    pub author_id: UserId,
    post_rate: f64,
    post_rate_at: i64,
    /// The rate the author's edges were last decided with.
    pub post_rate_modes: f64,
    pub followers_count: i64,
    pub push_min_read_rate: f64,
}

impl AuthorFacts {
    pub fn post_rate(&self) -> Rate {
        Rate { per_day: self.post_rate, at: self.post_rate_at }
    }
}

/// A follow edge with what its mode depends on, from either end.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct EdgeRow {
    pub author_id: UserId,
    pub follower_id: UserId,
    push: i64,
    pull: i64,
    read_rate: f64,
    pub last_read_at: Option<i64>,
    has_window: i64,
}

impl EdgeRow {
    /// The mode the edge is in; a switch in progress counts as pull (it is not done).
    pub fn mode(&self) -> EdgeMode {
        if self.push == 1 && self.pull == 0 {
            EdgeMode::Push
        } else {
            EdgeMode::Pull
        }
    }

    pub fn is_switching(&self) -> bool {
        self.push == 1 && self.pull == 1
    }

    pub fn has_window(&self) -> bool {
        self.has_window != 0
    }

    pub fn read_rate(&self) -> Rate {
        Rate { per_day: self.read_rate, at: self.last_read_at.unwrap_or(0) }
    }

    /// The rate as reported (not decayed to now): what the author's cap ranks readers by.
    pub fn reported_read_rate(&self) -> f64 {
        self.read_rate
    }
}

const AUTHOR_FACTS: &str =
    "SELECT id AS author_id, post_rate, post_rate_at, post_rate_modes, followers_count, \
     push_min_read_rate FROM users";

const EDGE_COLUMNS: &str = "f.author_id, f.follower_id, f.push, f.pull, r.read_rate, r.last_read_at, \
     r.feed_active_at IS NOT NULL AS has_window";

pub async fn author_facts(db: &Db, author: UserId) -> ApiResult<Option<AuthorFacts>> {
    first(db, &format!("{AUTHOR_FACTS} WHERE id = ?1"), &[int(author)]).await
}

/// Every author the reader follows, with their facts, and the reader's side of each edge.
pub async fn reader_edges(db: &Db, reader: UserId) -> ApiResult<(Vec<EdgeRow>, Vec<AuthorFacts>)> {
    let edges: Vec<EdgeRow> = all(
        db,
        &format!("SELECT {EDGE_COLUMNS} FROM follows f JOIN users r ON r.id = f.follower_id WHERE f.follower_id = ?1"),
        &[int(reader)],
    )
    .await?;
    let authors: Vec<AuthorFacts> = all(
        db,
        &format!("{AUTHOR_FACTS} WHERE id IN (SELECT author_id FROM follows WHERE follower_id = ?1)"),
        &[int(reader)],
    )
    .await?;
    Ok((edges, authors))
}

/// A page of an author's edges, in follower order after `after`.
pub async fn author_edges(db: &Db, author: UserId, after: i64, limit: usize) -> ApiResult<Vec<EdgeRow>> {
    all(
        db,
        &format!(
            "SELECT {EDGE_COLUMNS} FROM follows f JOIN users r ON r.id = f.follower_id \
             WHERE f.author_id = ?1 AND f.follower_id > ?2 ORDER BY f.follower_id LIMIT ?3"
        ),
        &[int(author), int(after), int(limit as i64)],
    )
    .await
}

/// For an author over the cap: the read rate of the `cap`-th most active reader (active since
/// `active_since`, with a window), or 0 when fewer readers than that are active.
pub async fn cap_threshold(db: &Db, author: UserId, cap: usize, active_since: i64) -> ApiResult<f64> {
    #[derive(Deserialize)]
    struct Row {
        read_rate: f64,
    }
    let row: Option<Row> = first(
        db,
        "SELECT r.read_rate FROM follows f JOIN users r ON r.id = f.follower_id \
         WHERE f.author_id = ?1 AND r.feed_active_at IS NOT NULL AND r.last_read_at >= ?2 \
         ORDER BY r.read_rate DESC LIMIT 1 OFFSET ?3",
        &[int(author), int(active_since), int(cap.saturating_sub(1) as i64)],
    )
    .await?;
    Ok(row.map_or(0.0, |r| r.read_rate))
}

/// Remembers what the author's edges were decided with.
pub async fn record_author_decision(
    db: &Db,
    author: &AuthorFacts,
    threshold: f64,
    now: i64,
) -> ApiResult<()> {
    exec(
        db,
        "UPDATE users SET post_rate_modes = ?2, push_min_read_rate = ?3 WHERE id = ?1",
        &[int(author.author_id), author.post_rate().at(now).into(), threshold.into()],
    )
    .await
}

/// Which flags an edge in a given phase carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// push = 0, pull = 1.
    Pull,
    /// push = 1, pull = 1: fan-out pushes, reads still pull, until the backfill is written.
    Switching,
    /// push = 1, pull = 0 (only from `Switching`, so a switch is never skipped).
    Push,
}

/// Moves edges (one reader, many authors; or one author, many readers) into `phase`.
pub async fn set_phase(db: &Db, edges: &[(UserId, UserId)], phase: Phase) -> ApiResult<usize> {
    let (sql, guard) = match phase {
        Phase::Pull => ("UPDATE follows SET push = 0, pull = 1", ""),
        Phase::Switching => ("UPDATE follows SET push = 1, pull = 1", ""),
        Phase::Push => ("UPDATE follows SET push = 1, pull = 0", " AND push = 1"),
    };
    let mut changed = 0;
    // 2 parameters an edge, at most 100 a statement.
    for chunk in edges.chunks(45) {
        let pairs: Vec<String> =
            (0..chunk.len()).map(|i| format!("(?{}, ?{})", 2 * i + 1, 2 * i + 2)).collect();
        let params: Vec<_> =
            chunk.iter().flat_map(|(follower, author)| [int(*follower), int(*author)]).collect();
        let statement =
            format!("{sql} WHERE (follower_id, author_id) IN (VALUES {}){guard}", pairs.join(", "));
        changed += run(db, &statement, &params).await?;
    }
    Ok(changed)
}

/// Readers who have not read for `ACTIVE_DAYS` stop being pushed (at most `limit` readers a
/// pass, only readers who still have pushed edges, so passes make progress). Readers from
/// before activity was reported fall back to when their window was made.
pub async fn sweep_inactive(db: &Db, cutoff: i64, limit: usize) -> ApiResult<usize> {
    run(
        db,
        "UPDATE follows SET push = 0, pull = 1 WHERE push = 1 AND follower_id IN ( \
           SELECT u.id FROM users u WHERE u.feed_active_at IS NOT NULL \
             AND COALESCE(u.last_read_at, u.feed_active_at) < ?1 \
             AND EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = u.id AND f.push = 1) LIMIT ?2)",
        &[int(cutoff), int(limit as i64)],
    )
    .await
}

/// Edges by mode, for the stats: (push, pull, switching).
pub async fn edge_modes(db: &Db) -> ApiResult<(i64, i64, i64)> {
    #[derive(Deserialize)]
    struct Row {
        push: i64,
        pull: i64,
        n: i64,
    }
    let rows: Vec<Row> =
        all(db, "SELECT push, pull, COUNT(*) AS n FROM follows GROUP BY push, pull", &[]).await?;
    let count = |push, pull| rows.iter().filter(|r| r.push == push && r.pull == pull).map(|r| r.n).sum();
    Ok((count(1, 0), count(0, 1), count(1, 1)))
}

/// Test hook: moves a reader's last read back by `days`, as if they had been away.
pub async fn age_reader(db: &Db, reader: UserId, days: i64) -> ApiResult<()> {
    exec(
        db,
        "UPDATE users SET last_read_at = COALESCE(last_read_at, feed_active_at) - ?2, \
           feed_active_at = feed_active_at - ?2 WHERE id = ?1",
        &[int(reader), int(days * DAY_MS)],
    )
    .await
}
