//! The reconciliation pass (cron trigger and `POST /v1/admin/reconcile`): resend outbox events
//! that stopped making progress, repair drifted counts, and purge what has outlived its purpose.
//!
//! A pass is one *share* per database (everything whose rows live there: its outbox, posts'
//! counts, users' counters, held deliveries, expired rows, inactive readers, orphan handle
//! claims, graph slice; cursors, "since" mark and figures in its own `stats`) and a small
//! control share (live leases, read counters, the pass count). [`run_pass`] runs every share
//! in this invocation (the admin route: synchronous, so callers read the report); [`fan_out`]
//! (the cron) sends one queue message per database and the consumer runs each share in an
//! invocation of its own ([`run_share`]), so no invocation's D1 statements grow with the number
//! of databases (D1 allows 1,000 queries per Worker invocation: docs/operations.md
//! "Reconciliation").

use std::rc::Rc;

use futures_util::future::join_all;
use serde::Serialize;

use super::queue::send::{queue_count, send_batch};
use crate::context::Ctx;
use crate::domain::likes::COUNT_CHECK_MARGIN_MS;
use crate::domain::plan::MAX_PARALLEL_DATABASES;
use crate::domain::queue::{FanoutMessage, ReconcileDatabase};
use crate::error::ApiResult;
use crate::store::counters::{self, MarkedPick, UserCountRepairs};
use crate::store::{batch, engagement, outbox, posts, stats, AnyDb, Io};

/// Events resent per pass; the rest wait for the next pass (the cron runs every minute).
const RESEND_PER_PASS: usize = 200;
const IDEMPOTENCY_TTL_MS: i64 = 24 * 3_600_000;
const DONE_OUTBOX_TTL_MS: i64 = 7 * 24 * 3_600_000;
const LATENCY_SAMPLES_KEPT: i64 = 5_000;
/// When this database's last share started (in its own `stats`; before shares ran apart, one
/// mark on the control database stood for all of them).
const LAST_PASS_MARK: &str = "reconcile_last_started_at";
/// The most D1 statements one share made (on the control database, raised by each share).
const SHARE_STATEMENTS_MAX: &str = "reconcile_share_statements_max";
/// Marked users (their counted relations changed: `count_marks`, migration 0049) whose
/// counters one pass recounts, oldest marks first (each check is one index range per counter);
/// the rest wait for the next pass. Every user is also checked by the sweep, a rolling slice by
/// id of `COUNT_SWEEP_USERS` per pass (the cursor below), for a counter edited behind the
/// marks' back: before the marks the sweep was the whole repair, 500 users a pass.
const MARKED_PER_PASS: usize = 200;
/// A marked user whose counters add up to more than this is recounted only once their mark is
/// [`LARGE_COUNTS_DELAY_SECS`] old: a celebrity followed every minute would otherwise cost a
/// count of all their followers every pass.
const LARGE_COUNTS: i64 = 100_000;
const LARGE_COUNTS_DELAY_SECS: i64 = 3_600;
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
    /// Authors given replicas this pass (they crossed `HOT_REPLICA_FOLLOWERS`).
    pub authors_replicated: usize,
    /// The liker-side check's slice: likes compared with `liked_posts`, and pairs converged.
    pub liked: super::liked::LikedRepairs,
    /// Uploads never attached in time (now gone), and gone ones whose bytes were removed.
    pub media: super::media::MediaSweep,
    /// Comments of the old kind moved into reply posts (migration 0034), with their likes.
    pub comment_moves: super::comment_moves::CommentMoves,
    /// Databases whose discovery rankings (trends, suggestions, directory) were refreshed.
    pub discovery_refreshed: usize,
    /// Ended polls whose author and voters were told this pass (`services/polls.rs`).
    pub polls_ended: usize,
    /// Due scheduled posts published, dropped, left for the next pass (`services/scheduled.rs`).
    pub scheduled: super::scheduled::ScheduledPass,
    /// Database shares this report adds up.
    pub databases: usize,
    /// The most D1 statements one share made, each counted on its own: what one invocation of
    /// the fanned-out pass spends on its database (it does not grow with the databases).
    pub share_statements_max: u32,
}

/// What [`fan_out`] did: one share queued per database, over this many queues.
#[derive(Debug, Serialize)]
pub struct FannedOut {
    pub databases_queued: usize,
    pub queues: usize,
}

/// One pass, every share in this invocation (waves of databases side by side). `replay_dead`
/// first returns dead-lettered events to pending (after the cause of their failures is fixed),
/// so this same pass resends them.
pub async fn run_pass(ctx: &Ctx, replay_dead: bool) -> ApiResult<ReconcileReport> {
    let mut report = ReconcileReport::default();
    let indexes: Vec<usize> = (0..ctx.databases().len()).collect();
    for wave in indexes.chunks(MAX_PARALLEL_DATABASES) {
        let shares = wave.iter().map(|&index| share_counted(ctx, index, replay_dead, Refresh::Now));
        for share in join_all(shares).await {
            report.add(share?);
        }
    }
    control_share(ctx).await?;
    Ok(report)
}

/// One pass, fanned out: one queue message per database (their queues chosen by database
/// index), then the control share here. Each share runs in a consumer invocation of its own.
pub async fn fan_out(ctx: &Ctx, replay_dead: bool) -> ApiResult<FannedOut> {
    let databases = ctx.databases().len();
    let shares = (0..databases).map(|i| {
        ReconcileDatabase { reconcile_database: i, replay_dead, comment_moves: false, scheduled: false }
            .into()
    });
    send_batch(ctx, shares).await?;
    control_share(ctx).await?;
    Ok(FannedOut { databases_queued: databases, queues: queue_count(ctx) })
}

/// The queue consumer's handler of one share ([`ReconcileDatabase`]).
pub async fn run_share(ctx: &Ctx, job: ReconcileDatabase) -> ApiResult<()> {
    if job.comment_moves {
        let Some(db) = ctx.shards.database(job.reconcile_database) else { return Ok(()) };
        return super::comment_moves::chain_step(ctx, db).await;
    }
    if job.scheduled {
        let Some(db) = ctx.shards.database(job.reconcile_database) else { return Ok(()) };
        return super::scheduled::chain_step(ctx, db).await;
    }
    let report = share_counted(ctx, job.reconcile_database, job.replay_dead, Refresh::WhenDue).await?;
    worker::console_log!("reconcile DB_{}: {report:?}", job.reconcile_database);
    Ok(())
}

/// One database's share with its own I/O tally (shares run side by side, in a pass or a
/// queue batch). A database no longer bound (a message sent before a config with fewer) has
/// nothing to do.
async fn share_counted(
    ctx: &Ctx,
    index: usize,
    replay_dead: bool,
    discovery: Refresh,
) -> ApiResult<ReconcileReport> {
    let own = Ctx::with_io(ctx.env.clone(), Rc::new(Io::default()))?;
    let Some(db) = own.shards.database(index) else {
        return Ok(ReconcileReport::default());
    };
    let report = database_share(&own, db, replay_dead, discovery).await?;
    // The request's Server-Timing and the consumer's profile count the share where it ran.
    ctx.io.absorb(&own.io);
    Ok(report)
}

/// Everything of a pass whose rows live on `db`, then its figures and its "since" mark.
/// Whether a share refreshes its discovery rankings at once (the admin pass, which callers
/// read right after) or when they are due (the cron's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refresh {
    Now,
    WhenDue,
}

async fn database_share(
    ctx: &Ctx,
    db: AnyDb<'_>,
    replay_dead: bool,
    discovery: Refresh,
) -> ApiResult<ReconcileReport> {
    let since = since(ctx, db).await?;
    let mut report = database_pass(ctx, db, replay_dead, since).await?;
    report.scheduled = super::scheduled::publish_due(ctx, db).await?;
    report.inactive_edges_unpushed = super::policy::sweep_inactive(ctx, db).await?;
    report.orphan_handles_released = super::users::release_orphan_claims(ctx, db).await?;
    report.graph = super::graph::repair_slice(ctx, db).await?;
    report.authors_replicated = super::replicas::promote_on(ctx, db).await?;
    report.liked = super::liked::repair_slice(ctx, db).await?;
    report.media = super::media::sweep(ctx, db).await?;
    report.comment_moves = super::comment_moves::move_slice(ctx, db).await?;
    let refreshed = super::discovery::refresh(ctx, db, discovery == Refresh::Now).await?;
    report.discovery_refreshed = usize::from(refreshed);
    report.polls_ended = super::polls::tell_ended(ctx, db).await?;
    report.databases = 1;
    let mut figures = share_statements(ctx, db, &report)?;
    // The share's statement count, this last batch and the raise itself included, raised into
    // [`SHARE_STATEMENTS_MAX`] on its own database (the stats page takes the most of them):
    // on the control database it would be one statement per database per pass there, the one
    // term of the cron that grew with the number of databases.
    report.share_statements_max = ctx.io.d1_statements.get() + figures.len() as u32 + 1;
    figures.push(stats::raise(db, SHARE_STATEMENTS_MAX, i64::from(report.share_statements_max))?);
    batch(db, figures).await?;
    Ok(report)
}

/// Posts touched since this database's previous share are recounted (with a margin for clock
/// skew and shares that overlap: a mark is only ever a completed share's start, so whichever
/// of two overlapping shares writes last, nothing touched after it goes unchecked). A database
/// without a mark of its own takes the control database's (the one mark kept before shares
/// ran apart); the first pass ever checks everything.
async fn since(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<i64> {
    let mark = match stats::value(db, LAST_PASS_MARK).await? {
        Some(mark) => Some(mark),
        None => stats::value(ctx.control(), LAST_PASS_MARK).await?,
    };
    Ok(mark.map_or(0, |t| t - COUNT_CHECK_MARGIN_MS))
}

/// The part of a pass that is not per database: lapsed live leases, this isolate's read
/// counters, the pass count (the control database's own rows are its share's).
async fn control_share(ctx: &Ctx) -> ApiResult<()> {
    let control = ctx.control();
    crate::store::live::purge_lapsed(control, ctx.now).await?;
    super::tally::flush(ctx).await;
    batch(control, vec![stats::bump(control, "reconcile_runs", 1)?]).await?;
    Ok(())
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
    report.user_counts = repair_user_counts(ctx, db).await?;
    report.held_released = release_held(ctx, db).await?;
    stats::trim_samples(db, LATENCY_SAMPLES_KEPT).await?;
    stats::trim_minutes(db, stats::minute_of(ctx.now) - MINUTES_KEPT).await?;
    crate::store::oauth::purge_expired(db, ctx.now).await?;
    crate::store::mutes::purge_expired(db, ctx.now).await?;
    crate::store::live::purge_lapsed_marks(db, ctx.now).await?;
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
        self.inactive_edges_unpushed += part.inactive_edges_unpushed;
        self.held_released += part.held_released;
        self.orphan_handles_released += part.orphan_handles_released;
        self.authors_replicated += part.authors_replicated;
        self.user_counts.add(part.user_counts);
        self.graph.edges_checked += part.graph.edges_checked;
        self.graph.follower_mirrors += part.graph.follower_mirrors;
        self.graph.block_mirrors += part.graph.block_mirrors;
        self.liked.add(part.liked);
        self.media.expired += part.media.expired;
        self.media.removed += part.media.removed;
        self.comment_moves.add(part.comment_moves);
        self.discovery_refreshed += part.discovery_refreshed;
        self.polls_ended += part.polls_ended;
        self.scheduled.add(part.scheduled);
        self.databases += part.databases;
        self.share_statements_max = self.share_statements_max.max(part.share_statements_max);
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

/// One share's figures, in its own database's `stats` (the stats page sums every database's):
/// running totals by kind, and this share's own (`reconcile_last_*`: summed over the
/// databases, the latest share of each), and its "since" mark.
fn share_statements(
    ctx: &Ctx,
    db: AnyDb<'_>,
    report: &ReconcileReport,
) -> ApiResult<Vec<crate::store::SqlStatement>> {
    let found = REPAIR_KINDS.into_iter().zip(report.repairs());
    let mut statements = vec![
        stats::bump(db, "reconcile_shares", 1)?,
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

/// One database's users' counters: the users marked since the last pass (their relations
/// changed), then the sweep's next slice of every user (see [`MARKED_PER_PASS`]).
async fn repair_user_counts(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<UserCountRepairs> {
    let rows_read = || ctx.io.d1_rows_read.get();
    let start = rows_read();
    let pick = MarkedPick {
        now_secs: ctx.now / 1000,
        limit: MARKED_PER_PASS,
        large: LARGE_COUNTS,
        large_delay_secs: LARGE_COUNTS_DELAY_SECS,
    };
    let mut repairs = counters::repair_marked(db, pick).await?;
    repairs.marked_rows_read = rows_read() - start;
    let sweep = ctx.config.count_sweep_users;
    if sweep > 0 {
        let start = rows_read();
        let after = stats::value(db, USER_CURSOR).await?.unwrap_or(0);
        let (swept, next) = counters::repair_user_counts(db, after, sweep).await?;
        batch(db, vec![stats::set(db, USER_CURSOR, next)?]).await?;
        repairs.add(UserCountRepairs { swept_rows_read: rows_read() - start, ..swept });
    }
    Ok(repairs)
}

async fn release_held(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<usize> {
    let mut released = 0;
    for author in outbox::released_authors_pending(db, HELD_AUTHORS_PER_PASS).await? {
        released += super::moderation::release_held(ctx, author).await?;
    }
    Ok(released)
}
