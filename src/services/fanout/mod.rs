//! Fan-out: carries outbox events into timeline windows, one bounded chunk of followers per
//! queue message, and announces freshly committed events to the queue.
//!
//! The order of every read and write is the plan's (`domain/fanout_plan.rs`); this module is
//! its interpreter: it runs each step against D1, the window objects and the queue, and feeds
//! the reply back. Every step is idempotent: windows dedup by post id, chunk progress is
//! recorded on the outbox row after the chunk is delivered and only moves forward, so any
//! message may be delivered twice or retried after a partial run. A big fan-out continues as a
//! *new* message at the back of the queue after each chunk, so one large author cannot hold
//! the consumer while small authors' posts wait behind it.

mod reads;

use futures_util::stream::{self, StreamExt};

use super::faults::Faults;
use super::queue::send::send_batch;
use super::{graph, tally};
use crate::context::Ctx;
use crate::domain::fanout::merge_per_reader;
use crate::domain::fanout_plan::{FanoutPlan, Reply, Settings, Step, Work};
use crate::domain::ids::{OutboxId, UserId};
use crate::domain::queue::{FanoutMessage, QueueMessage};
use crate::domain::window::WindowOp;
use crate::error::{ApiError, ApiResult};
use crate::objects::timeline::Windows;
use crate::store::outbox::{self, OutboxRow};

/// Sends the messages for freshly committed outbox events. A failed send is only logged: the
/// event is durable in the outbox and the reconciliation sweep resends it after the grace period.
pub async fn announce(ctx: &Ctx, actor: UserId, events: &[OutboxId]) {
    if events.is_empty() || Faults::of(ctx).announce_lost(actor).await {
        return;
    }
    if let Err(e) = send_batch(ctx, starts(events)).await {
        worker::console_error!("announce {events:?}: {e}; the sweep will resend");
    }
}

/// Applies single-reader events (follow backfill, unfollow/block cleanup) within the request,
/// so the reader's very next read reflects them; any that fail go to the queue instead.
pub async fn apply_inline(ctx: &Ctx, actor: UserId, events: &[OutboxId]) {
    let faults = Faults::of(ctx);
    if events.is_empty() || faults.announce_lost(actor).await {
        return;
    }
    let mut failed = Vec::new();
    match Windows::new(ctx) {
        Ok(windows) => {
            for &id in events {
                if let Err(e) = process(ctx, &windows, &faults, id).await {
                    worker::console_error!("inline outbox {id}: {e}; queueing it");
                    failed.push(id);
                }
            }
        }
        Err(_) => failed.extend_from_slice(events),
    }
    if failed.is_empty() {
        return;
    }
    if let Err(e) = send_batch(ctx, starts(&failed)).await {
        worker::console_error!("queueing {failed:?}: {e}; the sweep will resend");
    }
}

fn starts(events: &[OutboxId]) -> impl Iterator<Item = QueueMessage> + '_ {
    events.iter().map(|&id| FanoutMessage::start(id).into())
}

/// Carries out one outbox event's message inline (single-reader events applied within a
/// request): [`start`], then the chunk's window writes, then [`finish`].
async fn process(ctx: &Ctx, windows: &Windows, faults: &Faults<'_>, id: OutboxId) -> ApiResult<()> {
    let work = Work::Event { message: FanoutMessage::start(id), dead_letter_sent_at: None };
    let Some(pending) = start(ctx, windows, faults, work).await? else { return Ok(()) };
    write_windows(ctx, windows, pending.ops().iter().cloned()).await?;
    finish(ctx, windows, faults, pending).await
}

/// A post chunk whose window writes wait for the consumer batch's other chunks.
pub struct Pending {
    run: Run,
    ops: Vec<(UserId, WindowOp)>,
}

impl Pending {
    pub fn ops(&self) -> &[(UserId, WindowOp)] {
        &self.ops
    }
}

/// One message's plan, and the outbox row once read (marking the event done needs all of it).
struct Run {
    plan: FanoutPlan,
    row: Option<OutboxRow>,
}

/// Carries out one message up to a post chunk's window writes, which are returned so the
/// consumer can write all of a batch's chunks with one call per reader; `None` when the
/// message is done (a single-reader event, a live page, a held or finished event).
pub async fn start(
    ctx: &Ctx,
    windows: &Windows,
    faults: &Faults<'_>,
    work: Work,
) -> ApiResult<Option<Pending>> {
    let settings = Settings {
        policy: ctx.config.policy,
        chunk: ctx.config.fanout_chunk,
        window_cap: ctx.config.feed_window,
        now: ctx.now,
    };
    let run = Run { plan: FanoutPlan::new(work, settings), row: None };
    drive(ctx, windows, faults, run, Reply::Start).await
}

/// After a chunk's windows are written: records its progress, and either continues the event
/// with a new message (at the back of the queue) or finishes it.
pub async fn finish(ctx: &Ctx, windows: &Windows, faults: &Faults<'_>, pending: Pending) -> ApiResult<()> {
    match drive(ctx, windows, faults, pending.run, Reply::Ok).await? {
        None => Ok(()),
        Some(_) => Err(ApiError::Internal("fan-out plan: a chunk wrote twice".into())),
    }
}

async fn drive(
    ctx: &Ctx,
    windows: &Windows,
    faults: &Faults<'_>,
    mut run: Run,
    mut reply: Reply,
) -> ApiResult<Option<Pending>> {
    loop {
        reply = match run.plan.next(reply) {
            Step::Done => return Ok(None),
            Step::Fail(why) => return Err(ApiError::Internal(why.into())),
            Step::WriteWithBatch(ops) => return Ok(Some(Pending { run, ops })),
            Step::ReadEvent(id) => {
                let (row, reply) = reads::event(ctx, id).await?;
                run.row = row;
                reply
            }
            step => perform(ctx, windows, faults, run.row.as_ref(), step).await?,
        };
    }
}

/// Runs one step's I/O; its reply for the plan.
async fn perform(
    ctx: &Ctx,
    windows: &Windows,
    faults: &Faults<'_>,
    row: Option<&OutboxRow>,
    step: Step,
) -> ApiResult<Reply> {
    let row = || row.ok_or_else(|| ApiError::Internal("fan-out plan: an event step before the event".into()));
    match step {
        Step::MarkDead { event, sent_at } => outbox::mark_dead(ctx.outbox_db(event), event, sent_at).await?,
        Step::FaultPoint(point) => faults.at(point).await?,
        Step::ReadPost(post) => return reads::post(ctx, post).await,
        Step::Hold => return Ok(Reply::Held(outbox::hold(ctx.outbox_db(row()?.id), row()?.id).await?)),
        Step::ConvergePair { reader, author } => graph::converge_pair(ctx, reader, author).await?,
        Step::ReadReader { reader, backfill } => return reads::reader(ctx, reader, backfill).await,
        Step::WriteWindow { reader, op } => windows.call(reader, &op).await.map(|_| ())?,
        Step::ReadChunk(reads) => return reads::chunk(ctx, reads).await,
        Step::Send(messages) => send_batch(ctx, messages).await?,
        Step::WriteWindows(ops) => write_windows(ctx, windows, ops.into_iter()).await?,
        Step::RecordChunk { progress, delivered } => {
            let id = row()?.id;
            outbox::record_chunk(ctx.outbox_db(id), id, progress, delivered, ctx.clock()).await?
        }
        Step::MarkDone => outbox::mark_done(ctx.outbox_db(row()?.id), row()?, ctx.clock()).await?,
        Step::ReadEvent(_) | Step::WriteWithBatch(_) | Step::Done | Step::Fail(_) => {
            return Err(ApiError::Internal(format!("fan-out plan: {step:?} is the driver's")))
        }
    }
    Ok(Reply::Ok)
}

/// Runs the operations on the readers' windows, `fanout_concurrency` readers at a time, with
/// one call per reader: a reader's deliveries (from any number of posts) travel as one
/// `Deliver`; other operations follow in order. Fails if any call failed.
pub async fn write_windows(
    ctx: &Ctx,
    windows: &Windows,
    ops: impl Iterator<Item = (UserId, WindowOp)>,
) -> ApiResult<()> {
    let per_reader = merge_per_reader(ops);
    let results: Vec<ApiResult<()>> = stream::iter(per_reader)
        .map(|(reader, ops)| async move {
            for op in &ops {
                let reply = windows.call(reader, op).await?;
                tally::add("fanout_window_statements", reply.statements as i64);
                if ctx.config.profile_io {
                    // The cost table's window rows (a statement each in every flush).
                    tally::add("fanout_window_ops", 1);
                    tally::add("fanout_window_rows_read", reply.rows_read as i64);
                    tally::add("fanout_window_rows_written", reply.rows_written as i64);
                }
            }
            Ok(())
        })
        .buffer_unordered(ctx.config.fanout_concurrency)
        .collect()
        .await;
    results.into_iter().collect()
}
