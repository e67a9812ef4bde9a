//! The reconciliation pass (cron trigger and `POST /v1/admin/reconcile`): resend outbox events
//! that stopped making progress, and purge what has outlived its purpose.

use serde::Serialize;
use worker::{D1Database, Env};

use crate::config::Config;
use crate::error::ApiResult;
use crate::fanout::{self, FanoutMessage};
use crate::store::outbox::{self, bump};
use crate::store::{batch, int, run};

/// Events resent per pass; the rest wait for the next pass (the cron runs every minute).
const RESEND_PER_PASS: usize = 200;
const IDEMPOTENCY_TTL_MS: i64 = 24 * 3_600_000;
const DONE_OUTBOX_TTL_MS: i64 = 7 * 24 * 3_600_000;
const LATENCY_SAMPLES_KEPT: i64 = 5_000;

#[derive(Debug, Default, Serialize)]
pub struct ReconcileReport {
    pub dead_letters_revived: usize,
    pub outbox_resent: usize,
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
    batch(db, vec![bump(db, "reconcile_runs", 1)?, bump(db, "reconcile_resent", stuck.len() as i64)?])
        .await?;
    Ok(report)
}
