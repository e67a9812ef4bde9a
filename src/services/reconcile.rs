//! The reconciliation pass (cron trigger and `POST /v1/admin/reconcile`): resend outbox events
//! that stopped making progress, repair drifted counts, and purge what has outlived its purpose.

use serde::Serialize;

use super::queue::send::send_batch;
use crate::context::Ctx;
use crate::domain::queue::FanoutMessage;
use crate::error::ApiResult;
use crate::store::counters::{self, UserCountRepairs};
use crate::store::{batch, engagement, outbox, posts, stats, AnyDb};

/// Events resent per pass; the rest wait for the next pass (the cron runs every minute).
const RESEND_PER_PASS: usize = 200;
const IDEMPOTENCY_TTL_MS: i64 = 24 * 3_600_000;
const DONE_OUTBOX_TTL_MS: i64 = 7 * 24 * 3_600_000;
const LATENCY_SAMPLES_KEPT: i64 = 5_000;
const COUNT_CHECK_MARGIN_MS: i64 = 10 * 60_000;
const LAST_PASS_MARK: &str = "reconcile_last_started_at";
/// Users whose counters one pass checks (each check is one index range per counter): a rolling
/// slice by id, so every user is checked once per `users / USERS_PER_PASS` passes and no pass
/// ever scans the whole table.
const USERS_PER_PASS: usize = 500;
const USER_CURSOR: &str = "reconcile_user_cursor";
/// Held deliveries of authors reinstated without their release (a cut-short request).
const HELD_AUTHORS_PER_PASS: usize = 50;
/// Per-minute counts kept (the figures use the last hour).
const MINUTES_KEPT: i64 = 120;

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
    /// Users' counters checked and fixed this pass, by counter.
    pub user_counts: UserCountRepairs,
    /// Held deliveries sent for authors no longer suspended.
    pub held_released: usize,
    /// Handle claims released because their sign-up crashed before writing the user.
    pub orphan_handles_released: usize,
    /// The graph check's slice: edges checked, and mirrors found missing or stale (and converged).
    pub graph: super::graph::GraphRepairs,
}

/// One pass. `replay_dead` first returns dead-lettered events to pending (after the cause of
/// their failures is fixed), so this same pass resends them. The per-user work runs on every
/// database (each its own slice, cursors in its own `stats`), the rest on the control one.
pub async fn run_pass(ctx: &Ctx, replay_dead: bool) -> ApiResult<ReconcileReport> {
    let control = ctx.control();
    // Recount posts touched since the previous pass (with a margin for clock skew and passes
    // that overlap); the first pass ever checks everything.
    let since = stats::value(control, LAST_PASS_MARK).await?.map_or(0, |t| t - COUNT_CHECK_MARGIN_MS);
    let mut report = ReconcileReport::default();
    for part in ctx.on_every_database(|db| database_pass(ctx, db, replay_dead, since)).await? {
        report.add(part);
    }
    report.inactive_edges_unpushed = super::policy::sweep_inactive(ctx).await?;
    report.orphan_handles_released = super::users::release_orphan_claims(ctx).await?;
    report.graph = super::graph::repair_slice(ctx).await?;
    stats::trim_samples(control, LATENCY_SAMPLES_KEPT).await?;
    stats::trim_minutes(control, stats::minute_of(ctx.now) - MINUTES_KEPT).await?;
    crate::store::live::purge_lapsed(control, ctx.now).await?;
    super::tally::flush(ctx).await;
    batch(control, record_statements(ctx, &report)?).await?;
    Ok(report)
}

/// One database's share of a pass: its outbox, its posts' counts, its users' counters, its
/// held deliveries and its expired rows (the figures tables live beside the rows they count,
/// so they are trimmed there too).
async fn database_pass(
    ctx: &Ctx,
    db: AnyDb<'_>,
    replay_dead: bool,
    since: i64,
) -> ApiResult<ReconcileReport> {
    let mut report = ReconcileReport::default();
    if replay_dead {
        report.dead_letters_revived = outbox::revive_dead(db).await?;
    }
    let stuck = outbox::claim_stuck(db, ctx.now, ctx.config.outbox_grace_ms, RESEND_PER_PASS).await?;
    // The message resumes from the progress recorded on the row, not from the start.
    send_batch(ctx, stuck.iter().map(|&id| FanoutMessage::start(id).into())).await?;
    report.outbox_resent = stuck.len();
    report.counts_repaired = engagement::repair_counts(db, since).await?.len();
    report.idempotency_keys_purged = posts::purge_idempotency_keys(db, ctx.now - IDEMPOTENCY_TTL_MS).await?;
    report.outbox_rows_purged = outbox::purge_done(db, ctx.now - DONE_OUTBOX_TTL_MS).await?;
    report.user_counts = repair_user_counts(db).await?;
    report.held_released = release_held(ctx, db).await?;
    stats::trim_samples(db, LATENCY_SAMPLES_KEPT).await?;
    stats::trim_minutes(db, stats::minute_of(ctx.now) - MINUTES_KEPT).await?;
    crate::store::oauth::purge_expired(db, ctx.now).await?;
    Ok(report)
}

impl ReconcileReport {
    /// Adds one database's share.
    fn add(&mut self, part: ReconcileReport) {
        self.dead_letters_revived += part.dead_letters_revived;
        self.outbox_resent += part.outbox_resent;
        self.counts_repaired += part.counts_repaired;
        self.idempotency_keys_purged += part.idempotency_keys_purged;
        self.outbox_rows_purged += part.outbox_rows_purged;
        self.held_released += part.held_released;
        let (mine, theirs) = (&mut self.user_counts, part.user_counts);
        mine.followers_count += theirs.followers_count;
        mine.following_count += theirs.following_count;
        mine.posts_count += theirs.posts_count;
        mine.users_checked += theirs.users_checked;
    }
}

/// What a pass found and repaired, by kind: the names of `reconcile_repaired_*` and
/// `reconcile_last_*` (`GET /v1/admin/stats` reads them by this list), in the order of
/// [`ReconcileReport::repairs`].
pub const REPAIR_KINDS: [&str; 8] = [
    "resent",
    "post_counts",
    "followers_count",
    "following_count",
    "posts_count",
    "held_released",
    "follower_mirrors",
    "block_mirrors",
];

impl ReconcileReport {
    fn repairs(&self) -> [usize; 8] {
        [
            self.outbox_resent,
            self.counts_repaired,
            self.user_counts.followers_count,
            self.user_counts.following_count,
            self.user_counts.posts_count,
            self.held_released,
            self.graph.follower_mirrors,
            self.graph.block_mirrors,
        ]
    }
}

/// The pass's figures: running totals by kind, and this pass's own (`reconcile_last_*`).
fn record_statements(ctx: &Ctx, report: &ReconcileReport) -> ApiResult<Vec<worker::D1PreparedStatement>> {
    let db = ctx.control();
    let found = REPAIR_KINDS.into_iter().zip(report.repairs());
    let mut statements = vec![
        stats::bump(db, "reconcile_runs", 1)?,
        stats::bump(db, "reconcile_resent", report.outbox_resent as i64)?,
        stats::bump(db, "reconcile_counts_repaired", report.counts_repaired as i64)?,
        stats::set(db, LAST_PASS_MARK, ctx.now)?,
    ];
    for (kind, n) in found {
        statements.push(stats::bump(db, &format!("reconcile_repaired_{kind}"), n as i64)?);
        statements.push(stats::set(db, &format!("reconcile_last_{kind}"), n as i64)?);
    }
    Ok(statements)
}

/// The next slice of one database's users' counters (see [`USERS_PER_PASS`]).
async fn repair_user_counts(db: AnyDb<'_>) -> ApiResult<UserCountRepairs> {
    let after = stats::value(db, USER_CURSOR).await?.unwrap_or(0);
    let (repairs, next) = counters::repair_user_counts(db, after, USERS_PER_PASS).await?;
    batch(db, vec![stats::set(db, USER_CURSOR, next)?]).await?;
    Ok(repairs)
}

async fn release_held(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<usize> {
    let mut released = 0;
    for author in outbox::released_authors_pending(db, HELD_AUTHORS_PER_PASS).await? {
        released += super::moderation::release_held(ctx, author).await?;
    }
    Ok(released)
}
