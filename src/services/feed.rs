//! The home feed read (and group and list feeds): the interpreter of `domain::read`, which
//! decides every storage I/O of a page, step by step. Each step runs here at once: the window
//! call, the hot-range cache lookups and one batch per database (at most
//! `MAX_PARALLEL_DATABASES` at a time); the replies go back to the machine until it hands over
//! the page. Statements and rows are mapped in `services/feed_io.rs`.

use futures_util::future::{join4, join_all};

use super::queue::send::send_job_after_response;
use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::feed::{EmptyReason, FeedState, Hidden};
use crate::domain::ids::UserId;
pub use crate::domain::plan::FeedScope;
use crate::domain::plan::MAX_PARALLEL_DATABASES;
use crate::domain::queue::{PolicyJob, QueueMessage};
pub use crate::domain::read::FeedQuery;
use crate::domain::read::{
    DbBatch, FeedRead, Finished, HotFound, Next, OnFailure, ReadConfig, ReplicaCall, ReplicaRows, Replies,
    Rows, Step,
};
use crate::domain::replica::{HeldPost, ReplicaAnswer, ReplicaOp};
use crate::domain::window::{WindowOp, WindowReply};
use crate::error::{ApiError, ApiResult};
use crate::objects::replica::Replicas;
use crate::objects::timeline::Windows;
use crate::services::feed_io;
use crate::services::hot as services_hot;
use crate::services::replicas::{self, Directory};
use crate::services::tally;
use crate::store::batch;
use crate::store::posts::{PostRow, IDS_PER_QUERY};

pub struct FeedPage {
    pub items: Vec<PostRow>,
    pub next: Option<SortKey>,
    /// `next` lies below the window's floor: its cursor says so ([`FeedQuery::below_floor`]).
    pub next_below_floor: bool,
    pub newest: SortKey,
    pub state: FeedState,
    pub gap: Option<bool>,
    pub empty_reason: Option<EmptyReason>,
    /// Authors whose posts this page left out: their database was unavailable.
    pub unavailable: Vec<UserId>,
}

fn config(ctx: &Ctx, replicated: Directory) -> ReadConfig {
    ReadConfig {
        mode: ctx.config.policy.mode,
        window_cap: ctx.config.feed_window,
        scan_budget: ctx.config.feed_scan_budget,
        in_flight_ms: ctx.config.in_flight_ms,
        ids_per_statement: IDS_PER_QUERY,
        hot_range_len: ctx.config.hot_range_len,
        map: ctx.shard_map().clone(),
        replicated,
    }
}

pub async fn read(ctx: &Ctx, q: &FeedQuery) -> ApiResult<FeedPage> {
    let replicated = replicas::directory(ctx).await;
    let (mut read, mut next) = FeedRead::start(q.clone(), ctx.now, config(ctx, replicated));
    let mut windows = None;
    loop {
        next = match next {
            Next::Io(step) => {
                if step.window.is_some() && windows.is_none() {
                    windows = Some(Windows::new(ctx)?);
                }
                read.resume(run_step(ctx, windows.as_ref(), q.viewer, step).await?)
            }
            Next::Done(done) => return Ok(finish(ctx, q, done).await),
            Next::Stalled => return Err(ApiError::Internal("the feed read stalled".into())),
        };
    }
}

/// Runs everything of one step at once.
async fn run_step(
    ctx: &Ctx,
    windows: Option<&Windows>,
    viewer: UserId,
    step: Step,
) -> ApiResult<Replies<PostRow>> {
    let window = async {
        match (&step.window, windows) {
            (Some((op, on_failure)), Some(windows)) => {
                let reply = call_window(windows, viewer, op, *on_failure).await;
                if let (Ok((Some(reply), _)), true) = (&reply, ctx.config.profile_io) {
                    profile_page_read(op, reply);
                }
                reply
            }
            _ => Ok((None, false)),
        }
    };
    let hot = async {
        match step.hot_lookup {
            Some(below) => services_hot::sources(ctx, viewer, below).await,
            None => HotFound::default(),
        }
    };
    let replica_reads = run_replicas(ctx, &step.replicas);
    let (window, hot, batches, replicas) =
        join4(window, hot, run_batches(ctx, viewer, &step.batches), replica_reads).await;
    let ((window, window_failed), Answers { rows: batches, failed, unavailable }) = (window?, batches?);
    Ok(Replies { window, hot, batches, failed: window_failed || failed, unavailable, replicas })
}

/// A step's replica reads, all at once; each that fails or is not answered within
/// `REPLICA_READ_TIMEOUT_MS` answers `None` (the read takes that author from D1).
async fn run_replicas(ctx: &Ctx, calls: &[ReplicaCall]) -> Vec<Option<ReplicaRows<PostRow>>> {
    if calls.is_empty() {
        return Vec::new();
    }
    let Ok(objects) = Replicas::new(&ctx.env, ctx.io.clone()) else { return vec![None; calls.len()] };
    let timeout = ctx.config.replica.read_timeout_ms;
    join_all(calls.iter().map(|call| read_replica(&objects, call, timeout))).await
}

async fn read_replica(
    objects: &Replicas,
    call: &ReplicaCall,
    timeout_ms: u64,
) -> Option<ReplicaRows<PostRow>> {
    let op = ReplicaOp::Read { author: call.author, query: call.query.clone() };
    let answer = match objects.call_within::<ReplicaAnswer>(call.author, call.replica, &op, timeout_ms).await
    {
        Some(Ok(answer)) => answer,
        Some(Err(e)) => {
            worker::console_error!("replica {} of {} unavailable: {e}", call.replica, call.author);
            return None;
        }
        None => {
            tally::add("replica_reads_timed_out", 1);
            return None;
        }
    };
    tally::add("replica_reads", 1);
    answer.map_rows(|post: HeldPost| serde_json::from_value(post.row).ok())
}

/// With `PROFILE_IO`: the object's own statements and rows per page read (the cost table's
/// window figures; each counter is a statement in every flush, so only when profiling).
fn profile_page_read(op: &WindowOp, reply: &WindowReply) {
    if matches!(op, WindowOp::Older { .. } | WindowOp::Newer { .. }) {
        tally::add("feed_window_reads", 1);
        tally::add("feed_window_statements", reply.statements as i64);
        tally::add("feed_window_rows_read", reply.rows_read as i64);
        tally::add("feed_window_rows_written", reply.rows_written as i64);
    }
}

/// A window call; a failure the step may degrade on is logged and answered `(None, true)`.
async fn call_window(
    windows: &Windows,
    viewer: UserId,
    op: &WindowOp,
    on_failure: OnFailure,
) -> ApiResult<(Option<WindowReply>, bool)> {
    match windows.call(viewer, op).await {
        Ok(reply) => Ok((Some(reply), false)),
        Err(e) => degraded(viewer, on_failure, e).map(|()| (None, true)),
    }
}

fn degraded(viewer: UserId, on_failure: OnFailure, e: ApiError) -> ApiResult<()> {
    match on_failure {
        OnFailure::Fail | OnFailure::Omit => Err(e),
        OnFailure::Degrade => {
            worker::console_error!("timeline window of {viewer} unavailable: {e}");
            Ok(())
        }
    }
}

/// A step's batches' answers.
#[derive(Default)]
struct Answers {
    rows: Vec<Vec<Rows<PostRow>>>,
    /// A batch the step may degrade on failed.
    failed: bool,
    /// Databases whose omissible batch met an outage.
    unavailable: Vec<usize>,
}

/// Every database's batch of a step, at most [`MAX_PARALLEL_DATABASES`] at once (an
/// invocation holds only 6 connections). A failed batch answers nothing: an outage of its
/// database where the step may leave it out ([`OnFailure::Omit`]; any other error still fails
/// the read), any failure where the step may degrade.
async fn run_batches(ctx: &Ctx, viewer: UserId, batches: &[DbBatch]) -> ApiResult<Answers> {
    let mut out = Answers { rows: Vec::with_capacity(batches.len()), ..Answers::default() };
    for group in batches.chunks(MAX_PARALLEL_DATABASES) {
        let done = join_all(group.iter().map(|b| run_batch(ctx, viewer, b))).await;
        for (b, done) in group.iter().zip(done) {
            match (done, b.on_failure) {
                (Ok(rows), _) => out.rows.push(rows),
                (Err(e), OnFailure::Omit) if e.unavailable_database().is_some() => {
                    worker::console_error!("feed of {viewer}: leaving DB_{} out: {e}", b.database);
                    out.unavailable.push(b.database);
                    out.rows.push(Vec::new());
                }
                (Err(e), on_failure) => {
                    degraded(viewer, on_failure, e)?;
                    out.failed = true;
                    out.rows.push(Vec::new());
                }
            }
        }
    }
    Ok(out)
}

async fn run_batch(ctx: &Ctx, viewer: UserId, b: &DbBatch) -> ApiResult<Vec<Rows<PostRow>>> {
    let db = ctx.database(b.database);
    let statements =
        b.statements.iter().map(|s| feed_io::prepare(ctx, db, viewer, s)).collect::<ApiResult<Vec<_>>>()?;
    let results = batch(db, statements).await?;
    b.statements.iter().zip(&results).map(|(s, r)| feed_io::rows(s, r)).collect()
}

/// What follows the page: its tally, the reader's due activity report (through the queue,
/// after the answer: never a D1 write or a queue wait on the read path; a lost report is made
/// again by the next due read) and the hot-range refills.
async fn finish(ctx: &Ctx, q: &FeedQuery, done: Finished<PostRow>) -> FeedPage {
    record_page(&done);
    if let Some(report) = done.report {
        let job = PolicyJob::ReaderActivity { reader: q.viewer, report };
        send_job_after_response(ctx, QueueMessage::Policy(job)).await;
    }
    services_hot::store(ctx, done.hot_fills).await;
    FeedPage {
        items: done.items,
        next: done.next,
        next_below_floor: done.next_below_floor,
        newest: done.newest,
        state: done.state,
        gap: done.gap,
        empty_reason: done.empty_reason,
        unavailable: done.unavailable,
    }
}

/// Counts what a page scanned and what read-time filtering hid, by reason, for the admin
/// stats (in memory: a read writes nothing to D1; see `services/tally.rs`). A page is short
/// when it has fewer items than asked though more may exist (a cursor follows): filtering
/// spent its scan budget.
fn record_page(done: &Finished<PostRow>) {
    tally::add("feed_duplicates", done.duplicates);
    for reason in Hidden::ALL {
        let n = done.hidden.iter().filter(|h| **h == reason).count();
        tally::add(&format!("filtered_{}", reason.as_str()), n as i64);
    }
    tally::add("feed_pages", 1);
    tally::add("feed_candidates", done.scanned as i64);
    tally::add("feed_pages_short", i64::from(done.short));
}
