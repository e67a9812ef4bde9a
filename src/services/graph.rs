//! The cross-shard half of every follow, unfollow, block and unblock: the mirror side, applied
//! by the authoritative sides' *current* state (invariant 8), never by what the event says.
//!
//! A graph change commits on its authoritative side with an outbox event in one batch
//! (`store/graph.rs`); the event (`backfill`, `remove_author`, `graph_mirror`) runs
//! [`converge_pair`] when it is carried out, inline right after the commit (best effort) or
//! from the queue (the guarantee), and again whenever it is redelivered. Reconciliation walks a
//! bounded slice of edges per pass and converges any pair whose mirror is missing
//! ([`repair_slice`]). See docs/graph.md.

use futures_util::future::join;
use serde::Serialize;

use crate::context::Ctx;
use crate::domain::graph::{mirror_writes, same_mirrors};
use crate::domain::ids::UserId;
use crate::domain::shard::prefix_within_databases;
use crate::domain::snowflake::shard_of_id;
use crate::error::{ApiError, ApiResult};
use crate::services::streaming;
use crate::store::mirror::{self, EdgeTable, Pair, SideRead};
use crate::store::{stats, test_hooks, AnyDb};

/// Rounds of write-then-check before the apply gives up (and its message is retried).
const CONVERGE_ROUNDS: usize = 3;

/// Brings both users' mirrors of each other to what their authoritative sides say now.
/// Idempotent and order-free: it reads both sides, writes each side from that read, then reads
/// again and goes round while the read moved. The re-read is what makes concurrent applies
/// safe: whichever apply writes last has read after that write, so a change committed before
/// its check is seen and written, and one committed after runs its own apply later still.
pub async fn converge_pair(ctx: &Ctx, a: UserId, b: UserId) -> ApiResult<()> {
    if stalled_in_test(ctx, a, b).await? {
        return Err(ApiError::Internal("injected fault: graph mirror stalled".into()));
    }
    let mut read = read_pair(ctx, a, b).await?;
    for _ in 0..CONVERGE_ROUNDS {
        let (wa, wb) = mirror_writes(read.0.facts, read.1.facts);
        let now = ctx.clock();
        let (da, db) = (ctx.user_db(a), ctx.user_db(b));
        let (ra, rb) = join(
            mirror::write_side(da, a, b, wa, read.1.edge, now),
            mirror::write_side(db, b, a, wb, read.0.edge, now),
        )
        .await;
        // A follow notification made for a user with a live socket open is told to it.
        for notice in [ra?, rb?].into_iter().flatten() {
            streaming::tell(ctx, notice).await;
        }
        let again = read_pair(ctx, a, b).await?;
        if settled(&read, &again) {
            return Ok(());
        }
        read = again;
    }
    Err(ApiError::Internal(format!("graph pair ({a}, {b}) kept changing; retrying")))
}

/// Both sides of the pair, read side by side.
async fn read_pair(ctx: &Ctx, a: UserId, b: UserId) -> ApiResult<(SideRead, SideRead)> {
    let (ra, rb) =
        join(mirror::read_side(ctx.user_db(a), a, b), mirror::read_side(ctx.user_db(b), b, a)).await;
    Ok((ra?, rb?))
}

/// The mirrors written from `before` are still right for `after`: same mirror decisions, same
/// incarnations of the follows (their `created_at`).
fn settled(before: &(SideRead, SideRead), after: &(SideRead, SideRead)) -> bool {
    let times = |r: &(SideRead, SideRead)| (r.0.edge.map(|e| e.created_at), r.1.edge.map(|e| e.created_at));
    same_mirrors((before.0.facts, before.1.facts), (after.0.facts, after.1.facts))
        && times(before) == times(after)
}

/// Test-only: the mirror apply of a pair with either user fails while the fault is armed
/// (`stall_mirror:<user id>`), as an outage of the other side's database would.
async fn stalled_in_test(ctx: &Ctx, a: UserId, b: UserId) -> ApiResult<bool> {
    if !ctx.config.test_hooks {
        return Ok(false);
    }
    Ok(test_hooks::take_fault(ctx.control(), &format!("stall_mirror:{a}")).await?
        || test_hooks::take_fault(ctx.control(), &format!("stall_mirror:{b}")).await?)
}

/// Edges one reconciliation pass checks per table (each one primary-key probe on the other
/// side): a rolling slice, so every edge is checked once per `edges / EDGES_PER_PASS` passes
/// and no pass scans a whole table.
pub const EDGES_PER_PASS: usize = 250;
/// Pairs converged per pass at most (each is a few statements); the rest wait for a later pass.
const REPAIRS_PER_PASS: usize = 50;
/// Other databases one table's slice probes at most (the slice stops before the edge that
/// would name one more).
const PROBED_DATABASES: usize = 16;

/// What one pass of the graph check found, by table walked.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct GraphRepairs {
    pub edges_checked: usize,
    /// Follows without their `followers` mirror, and `followers` rows without their follow.
    pub follower_mirrors: usize,
    /// Blocks without their `blocked_by` mirror, and `blocked_by` rows without their block.
    pub block_mirrors: usize,
}

fn cursor_names(table: EdgeTable) -> (String, String) {
    let name = table.name();
    (format!("reconcile_graph_{name}_a"), format!("reconcile_graph_{name}_b"))
}

/// The next slice of every edge table on one database (each database's reconciliation share
/// runs its own): pairs whose counterpart on the other side is missing are converged by
/// current state (which repairs a missing mirror, removes a stale one, or finishes a block's
/// removal of a follow).
pub async fn repair_slice(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<GraphRepairs> {
    let (report, broken) = check_slice(ctx, db).await?;
    for pair in broken.into_iter().take(REPAIRS_PER_PASS) {
        // One pair's failure (its other side unavailable) must not cost the rest of the pass:
        // the pair stays broken and a later pass (or its own pending event) converges it.
        let (a, b) = (UserId::from_trusted(pair.a), UserId::from_trusted(pair.b));
        if let Err(e) = converge_pair(ctx, a, b).await {
            worker::console_error!("graph check: converging ({a}, {b}) failed: {e}");
        }
    }
    Ok(report)
}

/// One database's slice of each edge table (its cursors live in its own `stats`), and the
/// pairs whose counterpart is missing on the other user's home.
async fn check_slice(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<(GraphRepairs, Vec<Pair>)> {
    let mut report = GraphRepairs::default();
    let mut broken = Vec::new();
    for table in EdgeTable::ALL {
        let (ca, cb) = cursor_names(table);
        let after = Pair {
            a: stats::value(db, &ca).await?.unwrap_or(0),
            b: stats::value(db, &cb).await?.unwrap_or(0),
        };
        let fetched = mirror::edge_slice(db, table, after, EDGES_PER_PASS).await?;
        // Cut where the other sides span PROBED_DATABASES databases: one probe each, so the
        // share's statements do not grow with the number of databases.
        let homes = fetched.iter().map(|p| shard_of_id(p.b));
        let kept = prefix_within_databases(ctx.shard_map(), homes, PROBED_DATABASES);
        let slice = &fetched[..kept];
        report.edges_checked += slice.len();
        let missing = mirror::missing_counterparts(&ctx.shards, table, slice).await?;
        match table {
            EdgeTable::Follows | EdgeTable::Followers => report.follower_mirrors += missing.len(),
            EdgeTable::Blocks | EdgeTable::BlockedBy => report.block_mirrors += missing.len(),
        }
        broken.extend(missing);
        // A short slice reached the end: start over next time.
        let next = match slice.last() {
            Some(last) if kept < fetched.len() || fetched.len() == EDGES_PER_PASS => *last,
            _ => Pair { a: 0, b: 0 },
        };
        crate::store::batch(db, vec![stats::set(db, &ca, next.a)?, stats::set(db, &cb, next.b)?]).await?;
    }
    Ok((report, broken))
}

/// Test hook: points the graph check's cursors just before `user`'s edges, so the next pass
/// checks them (other passes may run meanwhile: the cursors only move on from there).
pub async fn rewind_to(ctx: &Ctx, user: UserId) -> ApiResult<()> {
    let mut statements = Vec::new();
    for table in EdgeTable::ALL {
        let (ca, cb) = cursor_names(table);
        statements.push(stats::set(ctx.user_db(user), &ca, user.get() - 1)?);
        statements.push(stats::set(ctx.user_db(user), &cb, i64::MAX >> 11)?);
    }
    crate::store::batch(ctx.user_db(user), statements).await?;
    Ok(())
}
