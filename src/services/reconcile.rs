//! The reconciliation pass (cron trigger and `POST /v1/admin/reconcile`): resend outbox events
//! that stopped making progress, repair drifted counts, and purge what has outlived its purpose.

use serde::Serialize;

use super::fanout::{self, FanoutMessage};
use crate::context::Ctx;
use crate::error::ApiResult;
use crate::store::{batch, engagement, outbox, posts, stats};

/// Events resent per pass; the rest wait for the next pass (the cron runs every minute).
const RESEND_PER_PASS: usize = 200;
const IDEMPOTENCY_TTL_MS: i64 = 24 * 3_600_000;
const DONE_OUTBOX_TTL_MS: i64 = 7 * 24 * 3_600_000;
const LATENCY_SAMPLES_KEPT: i64 = 5_000;
const COUNT_CHECK_MARGIN_MS: i64 = 10 * 60_000;
const LAST_PASS_MARK: &str = "reconcile_last_started_at";

#[derive(Debug, Default, Serialize)]
pub struct ReconcileReport {
    pub dead_letters_revived: usize,
    pub outbox_resent: usize,
    /// Posts whose like or comment count had drifted from the relations and was fixed.
    pub counts_repaired: usize,
    pub idempotency_keys_purged: usize,
    pub outbox_rows_purged: usize,
    /// Edges moved to pull because their reader has not read for `ACTIVE_DAYS`.
    pub inactive_edges_unpushed: usize,
}

/// One pass. `replay_dead` first returns dead-lettered events to pending (after the cause of
/// their failures is fixed), so this same pass resends them.
pub async fn run_pass(ctx: &Ctx, replay_dead: bool) -> ApiResult<ReconcileReport> {
    let db = &ctx.db;
    let mut report = ReconcileReport::default();
    if replay_dead {
        report.dead_letters_revived = outbox::revive_dead(db).await?;
    }
    let stuck = outbox::claim_stuck(db, ctx.now, ctx.config.outbox_grace_ms, RESEND_PER_PASS).await?;
    // The message resumes from the progress recorded on the row, not from the start.
    fanout::send(ctx, stuck.iter().map(|&id| FanoutMessage::start(id))).await?;
    report.outbox_resent = stuck.len();

    // Recount posts touched since the previous pass (with a margin for clock skew and passes
    // that overlap); the first pass ever checks everything.
    let since = stats::value(db, LAST_PASS_MARK).await?.map_or(0, |t| t - COUNT_CHECK_MARGIN_MS);
    report.counts_repaired = engagement::repair_counts(db, since).await?.len();

    report.idempotency_keys_purged = posts::purge_idempotency_keys(db, ctx.now - IDEMPOTENCY_TTL_MS).await?;
    report.outbox_rows_purged = outbox::purge_done(db, ctx.now - DONE_OUTBOX_TTL_MS).await?;
    stats::trim_samples(db, LATENCY_SAMPLES_KEPT).await?;
    report.inactive_edges_unpushed = super::policy::sweep_inactive(ctx).await?;
    super::tally::flush(ctx).await;
    batch(
        db,
        vec![
            stats::bump(db, "reconcile_runs", 1)?,
            stats::bump(db, "reconcile_resent", report.outbox_resent as i64)?,
            stats::bump(db, "reconcile_counts_repaired", report.counts_repaired as i64)?,
            stats::set(db, LAST_PASS_MARK, ctx.now)?,
        ],
    )
    .await?;
    Ok(report)
}
