//! The reconciliation pass (cron trigger and `POST /v1/admin/reconcile`): resend outbox events
//! that stopped making progress, and purge what has outlived its purpose.

use serde::Serialize;
use worker::{D1Database, Env};

use crate::config::Config;
use crate::error::ApiResult;
use crate::fanout::{self, FanoutMessage};
use crate::store::outbox::{self, bump};
use crate::store::{batch, first, int, run, stmt, Count};

/// Events resent per pass; the rest wait for the next pass (the cron runs every minute).
const RESEND_PER_PASS: usize = 200;
const IDEMPOTENCY_TTL_MS: i64 = 24 * 3_600_000;
const DONE_OUTBOX_TTL_MS: i64 = 7 * 24 * 3_600_000;
const LATENCY_SAMPLES_KEPT: i64 = 5_000;
const COUNT_CHECK_MARGIN_MS: i64 = 10 * 60_000;

async fn last_pass_started(db: &D1Database) -> ApiResult<Option<i64>> {
    let row: Option<Count> =
        first(db, "SELECT value AS n FROM stats WHERE name = 'reconcile_last_started_at'", &[]).await?;
    Ok(row.map(|r| r.n))
}

#[derive(Debug, Default, Serialize)]
pub struct ReconcileReport {
    pub dead_letters_revived: usize,
    pub outbox_resent: usize,
    /// Posts whose like or comment count had drifted from the relations and was fixed.
    pub counts_repaired: usize,
    pub idempotency_keys_purged: usize,
    pub outbox_rows_purged: usize,
}

/// One pass. `replay_dead` first returns dead-lettered events to pending (after the cause of
/// their failures is fixed), so this same pass resends them.
pub async fn run_pass(
    env: &Env,
    db: &D1Database,
    config: &Config,
    now: i64,
    replay_dead: bool,
) -> ApiResult<ReconcileReport> {
    let mut report = ReconcileReport::default();
    if replay_dead {
        report.dead_letters_revived =
            run(db, "UPDATE outbox SET state = 'pending', sent_at = NULL WHERE state = 'dead'", &[]).await?;
    }
    let stuck = outbox::claim_stuck(db, now, config.outbox_grace_ms, RESEND_PER_PASS).await?;
    // The message resumes from the progress recorded on the row, not from the start.
    fanout::send(env, stuck.iter().map(|&id| FanoutMessage { outbox_id: id, after_follower_id: 0 })).await?;
    report.outbox_resent = stuck.len();

    // Recount posts touched since the previous pass (with a margin for clock skew and passes
    // that overlap); the first pass ever checks everything.
    let since = last_pass_started(db).await?.map_or(0, |t| t - COUNT_CHECK_MARGIN_MS);
    let repaired = crate::store::engagement::repair_counts(db, since).await?;
    report.counts_repaired = repaired.len();

    report.idempotency_keys_purged =
        run(db, "DELETE FROM idempotency_keys WHERE created_at < ?1", &[int(now - IDEMPOTENCY_TTL_MS)])
            .await?;
    report.outbox_rows_purged =
        run(db, "DELETE FROM outbox WHERE state = 'done' AND done_at < ?1", &[int(now - DONE_OUTBOX_TTL_MS)])
            .await?;
    run(
        db,
        "DELETE FROM latency_samples WHERE id <= (SELECT MAX(id) FROM latency_samples) - ?1",
        &[int(LATENCY_SAMPLES_KEPT)],
    )
    .await?;
    batch(
        db,
        vec![
            bump(db, "reconcile_runs", 1)?,
            bump(db, "reconcile_resent", stuck.len() as i64)?,
            bump(db, "reconcile_counts_repaired", repaired.len() as i64)?,
            stmt(
                db,
                "INSERT INTO stats (name, value) VALUES ('reconcile_last_started_at', ?1) \
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                &[int(now)],
            )?,
        ],
    )
    .await?;
    Ok(report)
}
