//! Fan-out: carries outbox events into timeline windows, one bounded chunk of followers per
//! queue message, and announces freshly committed events to the queue.
//!
//! The order of every read and write is the plan's (`domain/fanout_plan.rs`, an async function
//! over `FanoutIo`); this module is that I/O: it runs each step against D1, the window objects
//! and the queue, and answers its reply. Every step is idempotent: windows dedup by post id, chunk progress is
//! recorded on the outbox row after the chunk is delivered and only moves forward, so any
//! message may be delivered twice or retried after a partial run. A big fan-out continues as a
//! *new* message at the back of the queue after each chunk, so one large author cannot hold
//! the consumer while small authors' posts wait behind it.

mod reads;

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{join_all, select, Either};
use futures_util::stream::{self, StreamExt};

use super::deadline::within;
use super::faults::Faults;
use super::queue::send::{queue_count, send_batch};
use super::{graph, tally};
use crate::context::Ctx;
use crate::domain::fanout::merge_per_reader;
use crate::domain::fanout_plan::{carry, FanoutIo, Reply, Settings, Step, Stop, Work};
use crate::domain::fanout_segments::SegmentTarget;
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
/// request): a post chunk's window writes, if any, are made at once.
async fn process(ctx: &Ctx, windows: &Windows, faults: &Faults<'_>, id: OutboxId) -> ApiResult<()> {
    let work = Work::Event { message: FanoutMessage::start(id), dead_letter_sent_at: None };
    // A request's own budget: a chunk spans at most as many databases as it has readers.
    let io = Storage::new(ctx, windows, faults, ChunkWrites::Now, ctx.config.fanout_chunk);
    carry_out(&io, work).await
}

/// A post chunk whose window writes wait for the consumer batch's other chunks: its message's
/// plan, parked at [`Step::WriteWithBatch`] until [`finish`] says they are written.
pub struct Pending<'a> {
    ops: Vec<(UserId, WindowOp)>,
    written: oneshot::Sender<()>,
    plan: Pin<Box<dyn Future<Output = ApiResult<()>> + 'a>>,
}

/// Carries out one message up to a post chunk's window writes, which are returned (with the
/// plan parked) so the consumer can write all of a batch's chunks with one call per reader;
/// `None` when the message is done (a single-reader event, a live page, a held or finished
/// event). A chunk's (or tag page's) readers span at most `databases` databases: the batch's
/// D1 budget (`domain/fanout_budget.rs`).
pub async fn start<'a>(
    ctx: &'a Ctx,
    windows: &'a Windows,
    faults: &'a Faults<'a>,
    work: Work,
    databases: usize,
) -> ApiResult<Option<Pending<'a>>> {
    let (handover, parked) = oneshot::channel();
    let writes = ChunkWrites::ToBatch(RefCell::new(Some(handover)));
    let io = Storage::new(ctx, windows, faults, writes, databases);
    let plan: Pin<Box<dyn Future<Output = ApiResult<()>> + 'a>> =
        Box::pin(async move { carry_out(&io, work).await });
    match select(plan, parked).await {
        Either::Left((done, _)) => done.map(|()| None),
        Either::Right((Ok(Parked { ops, written }), plan)) => Ok(Some(Pending { ops, written, plan })),
        // The plan let its handover go without parking: it is ending on its own.
        Either::Right((Err(oneshot::Canceled), plan)) => plan.await.map(|()| None),
    }
}

/// Delivers a consumer batch's parked chunks: all their window writes with one call per reader
/// ([`write_windows`]), then each chunk's plan goes on ([`finish`]). Each stage has `limit`.
/// Answers when the writes were done, and `Err` if they failed (nothing recorded: every chunk
/// is retried, and windows dedup by post id and version, so the readers already written lose
/// nothing), else each chunk's outcome in order.
pub async fn deliver(
    ctx: &Ctx,
    windows: &Windows,
    chunks: Vec<Pending<'_>>,
    limit: Duration,
) -> (i64, ApiResult<Vec<ApiResult<()>>>) {
    if chunks.is_empty() {
        return (ctx.clock(), Ok(Vec::new()));
    }
    let ops = chunks.iter().flat_map(|chunk| chunk.ops.iter().cloned());
    let written = within(limit, write_windows(ctx, windows, ops)).await;
    let written_at = ctx.clock();
    if let Err(e) = written {
        return (written_at, Err(e));
    }
    (written_at, Ok(join_all(chunks.into_iter().map(|chunk| within(limit, finish(chunk)))).await))
}

/// After a chunk's windows are written: lets its plan go on, which records the chunk's
/// progress and either continues the event with a new message (at the back of the queue) or
/// finishes it.
async fn finish(pending: Pending<'_>) -> ApiResult<()> {
    let Pending { written, plan, .. } = pending;
    // The receiver is the parked plan's, alive as long as `plan`.
    let _ = written.send(());
    plan.await
}

/// The plan, with its settings, over `io`; a step the plan refuses is an internal error (the
/// message is retried).
async fn carry_out(io: &Storage<'_>, work: Work) -> ApiResult<()> {
    let ctx = io.ctx;
    let settings = Settings {
        policy: ctx.config.policy,
        chunk: ctx.config.fanout_chunk,
        window_cap: ctx.config.feed_window,
        now: ctx.now,
        segments: segment_target(ctx),
        record_every: ctx.config.fanout_record_every,
    };
    carry(io, work, settings).await.map_err(|stop| match stop {
        Stop::Io(e) => e,
        Stop::Fail(why) => ApiError::Internal(why.into()),
    })
}

/// How a big post splits into chains side by side: each finishes within
/// `FANOUT_SEGMENT_SECONDS` at `FANOUT_CHUNK_SECONDS` a chunk, at most `FANOUT_MAX_SEGMENTS`
/// of them (by default the consumer invocations that run at once: 250 per queue). `None`
/// (one chain) when at most one is allowed.
fn segment_target(ctx: &Ctx) -> Option<SegmentTarget> {
    let c = &ctx.config;
    let max_segments = c.fanout_max_segments.unwrap_or(CONCURRENCY_PER_QUEUE * queue_count(ctx));
    (max_segments > 1).then_some(SegmentTarget {
        chunk: c.fanout_chunk,
        within_s: c.fanout_segment_seconds,
        chunk_s: c.fanout_chunk_seconds,
        max_segments,
    })
}

/// Consumer invocations one queue runs at once (Cloudflare's maximum concurrency).
const CONCURRENCY_PER_QUEUE: usize = 250;

/// Where a post chunk's window writes go.
enum ChunkWrites {
    /// To the windows at once (a message applied inline).
    Now,
    /// To the consumer batch (a queue message), once: the plan waits until the batch wrote them.
    ToBatch(RefCell<Option<oneshot::Sender<Parked>>>),
}

/// A post chunk's window writes handed to the consumer batch, and where the batch says it
/// wrote them.
struct Parked {
    ops: Vec<(UserId, WindowOp)>,
    written: oneshot::Sender<()>,
}

/// The fan-out plan's I/O for one message.
struct Storage<'a> {
    ctx: &'a Ctx,
    windows: &'a Windows,
    faults: &'a Faults<'a>,
    /// The outbox row once read (marking the event done needs all of it).
    row: RefCell<Option<OutboxRow>>,
    /// What the event's read brought for the steps after it.
    ahead: RefCell<reads::Ahead>,
    chunk_writes: ChunkWrites,
    /// The most databases a chunk's readers may span (one window-check statement each).
    databases: usize,
}

impl<'a> Storage<'a> {
    fn new(
        ctx: &'a Ctx,
        windows: &'a Windows,
        faults: &'a Faults<'a>,
        chunk_writes: ChunkWrites,
        databases: usize,
    ) -> Self {
        Self {
            ctx,
            windows,
            faults,
            row: RefCell::new(None),
            ahead: RefCell::default(),
            chunk_writes,
            databases,
        }
    }

    fn row(&self) -> ApiResult<OutboxRow> {
        let row = self.row.borrow().clone();
        row.ok_or_else(|| ApiError::Internal("fan-out plan: an event step before the event".into()))
    }

    /// The event's row, and what was read with it for the steps after.
    async fn read_event(&self, message: FanoutMessage) -> ApiResult<Reply> {
        let (row, reply, ahead) = reads::event(self.ctx, message).await?;
        *self.row.borrow_mut() = row;
        *self.ahead.borrow_mut() = ahead;
        Ok(reply)
    }

    /// A post chunk's window writes: made now (inline), or handed to the consumer batch, which
    /// lets the plan go on once it wrote every chunk's.
    async fn write_with_batch(&self, ops: Vec<(UserId, WindowOp)>) -> ApiResult<()> {
        let delivered = ops.len();
        let handover = match &self.chunk_writes {
            ChunkWrites::Now => {
                write_windows(self.ctx, self.windows, ops.into_iter()).await?;
                count_chunk(delivered);
                return Ok(());
            }
            ChunkWrites::ToBatch(handover) => handover,
        };
        let twice = || ApiError::Internal("fan-out plan: a chunk wrote twice".into());
        let batch = handover.borrow_mut().take().ok_or_else(twice)?;
        let (written, wait) = oneshot::channel();
        batch.send(Parked { ops, written }).map_err(|_| twice())?;
        wait.await.map_err(|_| ApiError::Internal("fan-out: the batch did not write the chunk".into()))?;
        count_chunk(delivered);
        Ok(())
    }
}

impl FanoutIo for Storage<'_> {
    type Error = ApiError;

    /// Runs one step's I/O; its reply for the plan.
    async fn run(&self, step: Step) -> ApiResult<Reply> {
        let ctx = self.ctx;
        match step {
            Step::MarkDead { event, sent_at } => {
                outbox::mark_dead(ctx.outbox_db(event), event, sent_at).await?
            }
            Step::ReadEvent(message) => return self.read_event(message).await,
            Step::FaultPoint(point) => self.faults.at(point).await?,
            Step::ReadPost { post, converge } => {
                let ahead = self.ahead.borrow_mut().post.take();
                let ahead = ahead.filter(|(id, _)| *id == post).map(|(_, read)| read);
                return reads::post(ctx, post, converge, ahead).await;
            }
            Step::ReadTagged(post) => return reads::tagged(ctx, post).await,
            Step::ReadTagFollowers(page) => return reads::tag_followers(ctx, page, self.databases).await,
            Step::Hold => {
                let id = self.row()?.id;
                return Ok(Reply::Held(outbox::hold(ctx.outbox_db(id), id).await?));
            }
            Step::ConvergePair { reader, author } => graph::converge_pair(ctx, reader, author).await?,
            Step::ReadReader { reader, backfill } => return reads::reader(ctx, reader, backfill).await,
            Step::WriteWindow { reader, op } => self.windows.call(reader, &op).await.map(|_| ())?,
            Step::ReadChunk(reads) => {
                return reads::chunk(ctx, reads, self.databases, self.ahead.take().page).await;
            }
            Step::Send(messages) => send_batch(ctx, messages).await?,
            Step::WriteWindows(ops) => write_windows(ctx, self.windows, ops.into_iter()).await?,
            Step::WriteWithBatch(ops) => self.write_with_batch(ops).await?,
            Step::RecordChunk { progress, delivered } => {
                let id = self.row()?.id;
                outbox::record_chunk(ctx.outbox_db(id), id, progress, delivered, ctx.clock()).await?
            }
            Step::Segments { split } => return reads::segments(ctx, &self.row()?, split).await,
            Step::RecordSegment { segment, progress, last, delivered } => {
                let id = self.row()?.id;
                let step = (segment, progress, last);
                let left =
                    outbox::record_segment(ctx.outbox_db(id), id, step, delivered, ctx.clock()).await?;
                return Ok(Reply::Unfinished(left));
            }
            Step::MarkDone => {
                let row = self.row()?;
                outbox::mark_done(ctx.outbox_db(row.id), &row, ctx.clock()).await?
            }
        }
        Ok(Reply::Ok)
    }
}

/// A chunk's windows written, in the stats' figures: counted in memory and written with the
/// batch's other counts (on a database of its own choosing), not on the author's database,
/// which every chunk of a big post would otherwise write.
fn count_chunk(delivered: usize) {
    tally::add("deliveries", delivered as i64);
    tally::add("fanout_chunks", 1);
}

/// Runs the operations on the readers' windows, `fanout_concurrency` readers at a time, with
/// one call per reader: a reader's deliveries (from any number of posts) travel as one
/// `Deliver`; other operations follow in order. Fails if any call failed.
async fn write_windows(
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
