//! Fan-out: the queue producer (announce an outbox event) and the consumer that carries it
//! into timeline windows, one bounded chunk of followers per message.
//!
//! Every step is idempotent: windows dedup by post id, chunk progress is recorded on the outbox
//! row after the chunk is delivered and only moves forward, so any message may be delivered
//! twice or retried after a partial run. A big fan-out continues as a *new* message at the back
//! of the queue after each chunk, so one large author cannot hold the consumer while small
//! authors' posts wait behind it.

use futures_util::future::{join, join_all};
use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use worker::{Env, MessageBatch, MessageExt};

use super::policy::{self, PolicyJob};
use crate::context::Ctx;
use crate::domain::fanout::{
    after_chunk, merge_per_reader, plan, split_lookahead, Direction, Next, Plan, PostNow,
};
use crate::domain::ids::{OutboxId, PostId, UserId};
use crate::domain::outbox::{EventKind, EventState};
use crate::domain::policy::FanoutMode;
use crate::domain::window::{Entry, WindowOp};
use crate::error::{ApiError, ApiResult};
use crate::objects::timeline::Windows;
use crate::services::tally;
use crate::store::outbox::{self, OutboxRow};
use crate::store::policy as edges;
use crate::store::posts::{self, PostState};
use crate::store::{feed as pull, live, test_hooks};

pub const FANOUT_QUEUE: &str = "FANOUT";
pub const DEAD_LETTER_QUEUE_NAME: &str = "edgefeed-fanout-dlq";

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct FanoutMessage {
    pub outbox_id: OutboxId,
    /// Resume after this follower id (the outbox row's progress wins if it is further).
    #[serde(default)]
    pub after_follower_id: i64,
}

impl FanoutMessage {
    pub fn start(outbox_id: OutboxId) -> Self {
        Self { outbox_id, after_follower_id: 0 }
    }
}

/// Everything the queue carries: fan-out steps, and the hybrid policy's jobs. Untagged, so
/// fan-out messages keep the shape they always had.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QueueMessage {
    Fanout(FanoutMessage),
    Policy(PolicyJob),
    Live(LiveReach),
}

/// The next page of a post's live readers among the followers it is not pushed to (see
/// [`live_page`]). Best effort, like the socket itself: if it is lost, those readers find the
/// post on their next read, as pulled readers always do.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LiveReach {
    pub live_post_id: PostId,
    pub after_reader: i64,
}

/// Sends one job after the answer (see [`Ctx::after_response`]); for jobs whose loss costs
/// nothing but a delay, because their next trigger makes them again. Failures are logged.
pub async fn send_job_after_response(ctx: &Ctx, message: QueueMessage) {
    let queue = match ctx.env.queue(FANOUT_QUEUE) {
        Ok(queue) => queue,
        Err(e) => return worker::console_error!("queue binding missing: {e}"),
    };
    count_send(ctx, 1);
    ctx.after_response(async move {
        if let Err(e) = queue.send(message).await {
            worker::console_error!("job {message:?} not sent: {e}");
        }
    })
    .await;
}

/// Sends one job (a failure is the caller's to handle: jobs are redone by their next trigger).
pub async fn send_job(ctx: &Ctx, message: QueueMessage) -> ApiResult<()> {
    let queue = ctx.env.queue(FANOUT_QUEUE)?;
    count_send(ctx, 1);
    queue.send(message).await?;
    Ok(())
}

fn count_send(ctx: &Ctx, messages: usize) {
    ctx.io.queue_sends.set(ctx.io.queue_sends.get() + 1);
    ctx.io.queue_messages.set(ctx.io.queue_messages.get() + messages as u32);
}

/// Sends the messages for freshly committed outbox events. A failed send is only logged: the
/// event is durable in the outbox and the reconciliation sweep resends it after the grace period.
pub async fn announce(ctx: &Ctx, actor: UserId, events: &[OutboxId]) {
    if events.is_empty() || lost_in_test(ctx, actor).await {
        return;
    }
    if let Err(e) = send(ctx, events.iter().map(|&id| FanoutMessage::start(id))).await {
        worker::console_error!("announce {events:?}: {e}; the sweep will resend");
    }
}

/// Applies single-reader events (follow backfill, unfollow/block cleanup) within the request,
/// so the reader's very next read reflects them; any that fail go to the queue instead.
pub async fn apply_inline(ctx: &Ctx, actor: UserId, events: &[OutboxId]) {
    if events.is_empty() || lost_in_test(ctx, actor).await {
        return;
    }
    let mut failed = Vec::new();
    match Windows::new(ctx) {
        Ok(windows) => {
            for &id in events {
                if let Err(e) = process(ctx, &windows, FanoutMessage::start(id)).await {
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
    if let Err(e) = send(ctx, failed.iter().map(|&id| FanoutMessage::start(id))).await {
        worker::console_error!("queueing {failed:?}: {e}; the sweep will resend");
    }
}

/// Test-only: simulates a crash right after the commit (the event is never sent). Faults are
/// scoped to the acting user so concurrent tests cannot trip each other's.
async fn lost_in_test(ctx: &Ctx, actor: UserId) -> bool {
    ctx.config.test_hooks
        && test_hooks::take_fault(ctx.control(), &format!("skip_announce:{actor}")).await.unwrap_or(false)
}

pub async fn send(ctx: &Ctx, messages: impl Iterator<Item = FanoutMessage>) -> ApiResult<()> {
    let queue = ctx.env.queue(FANOUT_QUEUE)?;
    let messages: Vec<FanoutMessage> = messages.collect();
    // send_batch takes at most 100 messages.
    for chunk in messages.chunks(100) {
        count_send(ctx, chunk.len());
        queue.send_batch(chunk.to_vec()).await?;
    }
    Ok(())
}

/// The queue handler. It acks or retries each message itself and never returns an error
/// (an `Err` from a queue handler aborts the isolate). Post chunks of the whole batch are
/// delivered together: one window call per reader for all the batch's posts (see
/// [`deliver_chunks`]).
pub async fn consume(batch: MessageBatch<serde_json::Value>, env: Env) {
    let dead_letters = batch.queue() == DEAD_LETTER_QUEUE_NAME;
    let setup = Ctx::new(env).and_then(|ctx| Ok((Windows::new(&ctx)?, ctx)));
    let ((windows, ctx), messages) = match (setup, batch.messages()) {
        (Ok(setup), Ok(messages)) => (setup, messages),
        (Err(e), _) => return retry_all(&batch, &e.to_string()),
        (_, Err(e)) => return retry_all(&batch, &e.to_string()),
    };
    let mut parsed = Vec::new();
    for message in messages {
        match serde_json::from_value::<QueueMessage>(message.body().clone()) {
            Ok(body) => parsed.push((message, body)),
            Err(_) => {
                worker::console_error!("dropping malformed queue message: {}", message.body());
                message.ack();
            }
        }
    }
    let started = ctx.clock();
    let waited: i64 = parsed.iter().map(|(m, _)| started - m.timestamp().as_millis() as i64).sum();
    // The batch's messages start together: each is a few D1 reads, independent of the others.
    let results = join_all(parsed.iter().map(|(message, body)| {
        let dead_letter_sent_at = dead_letters.then(|| message.timestamp().as_millis() as i64);
        within(MESSAGE_DEADLINE, run(&ctx, &windows, *body, dead_letter_sent_at))
    }))
    .await;
    let prepared = ctx.clock();
    let mut chunks = Vec::new();
    for ((message, body), result) in parsed.into_iter().zip(results) {
        match result {
            Ok(Some(chunk)) => chunks.push((message, chunk)),
            Ok(None) => message.ack(),
            Err(e) => {
                worker::console_error!("queue message {body:?} failed, will retry: {e}");
                retry(&message, &e);
            }
        }
    }
    let delivered = deliver_chunks(&ctx, &windows, chunks).await;
    profile_batch(&ctx, waited, [prepared - started, delivered - prepared, ctx.clock() - delivered]);
    flush_figures(&ctx).await;
}

/// This batch wrote D1 anyway: the read counters this isolate holds go with it. With
/// `PROFILE_IO`, the batch's storage work is counted per database first, and the flush's own
/// statements where they ran and apart, so the capacity bench can tell them from the work.
async fn flush_figures(ctx: &Ctx) {
    if ctx.config.profile_io {
        tally::add_io("fanout", &ctx.io);
    }
    let (flushed, on) = tally::flush(ctx).await;
    if ctx.config.profile_io {
        tally::add(&tally::io_counter("fanout", on, "statements"), flushed as i64);
        tally::add(&tally::io_counter("fanout", on, "flush_statements"), flushed as i64);
    }
}

/// How long one message's reads and decisions may take before it is given back to the queue.
/// A storage call that never answers must not hold the whole batch, and with it the queue
/// (locally the consumer gets the next batch only when this one is done).
const MESSAGE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);

/// `work`, or an error once `limit` has passed (the work is dropped; whatever it committed
/// stands, and its message is retried, which events applied by current state allow).
async fn within<T>(
    limit: std::time::Duration,
    work: impl std::future::Future<Output = ApiResult<T>>,
) -> ApiResult<T> {
    let work = std::pin::pin!(work);
    let timer = std::pin::pin!(worker::Delay::from(limit));
    match futures_util::future::select(work, timer).await {
        futures_util::future::Either::Left((done, _)) => done,
        futures_util::future::Either::Right(_) => {
            Err(ApiError::Internal(format!("still running after {limit:?}: given back to the queue")))
        }
    }
}

/// Where a consumer batch's time went, as counters (`GET /v1/admin/stats`; the bench reads
/// them around a big fan-out): the queue wait of its messages, then the wall time of its three
/// phases (read and decide, window writes, record progress), its window calls and their SQL
/// statements, its D1 statements. Kept in memory and written with the batch's own writes.
fn profile_batch(ctx: &Ctx, queue_wait_ms: i64, [prepare, deliver, record]: [i64; 3]) {
    tally::add("fanout_batches", 1);
    tally::add("fanout_queue_wait_ms", queue_wait_ms);
    tally::add("fanout_prepare_ms", prepare);
    tally::add("fanout_deliver_ms", deliver);
    tally::add("fanout_record_ms", record);
    tally::add("fanout_d1_statements", i64::from(ctx.io.d1_statements.get()));
    tally::add("fanout_window_calls", i64::from(ctx.io.do_calls.get()));
    tally::add("fanout_window_ms", ctx.io.do_ms.get() as i64);
}

/// One message: a policy job, a reader event, or the first half of a post chunk (returned).
/// `dead_letter_sent_at`: the message is a dead letter, first sent at that time.
async fn run(
    ctx: &Ctx,
    windows: &Windows,
    body: QueueMessage,
    dead_letter_sent_at: Option<i64>,
) -> ApiResult<Option<Chunk>> {
    match (body, dead_letter_sent_at) {
        (QueueMessage::Fanout(m), Some(sent_at)) => {
            outbox::mark_dead(ctx.outbox_db(m.outbox_id), m.outbox_id, sent_at).await.map(|()| None)
        }
        (QueueMessage::Fanout(m), None) => start(ctx, windows, m).await,
        // A policy job that keeps failing is dropped: its next trigger redoes it.
        (QueueMessage::Policy(_), Some(_)) => Ok(None),
        (QueueMessage::Policy(job), None) => policy::run(ctx, windows, job).await.map(|()| None),
        (QueueMessage::Live(_), Some(_)) => Ok(None),
        (QueueMessage::Live(reach), None) => continue_live_reach(ctx, windows, reach).await.map(|()| None),
    }
}

/// Writes the prepared chunks' window operations, one call per reader for all of them, then
/// records each chunk's progress. If a window write fails, every chunk of the batch is retried
/// (windows dedup by post id and version, so the readers already written lose nothing).
/// Returns when the window writes were done (the rest is recording progress).
async fn deliver_chunks(
    ctx: &Ctx,
    windows: &Windows,
    chunks: Vec<(worker::Message<serde_json::Value>, Chunk)>,
) -> i64 {
    if chunks.is_empty() {
        return ctx.clock();
    }
    let ops = chunks.iter().flat_map(|(_, chunk)| chunk.ops.iter().cloned());
    let written = within(MESSAGE_DEADLINE, deliver_merged(ctx, windows, ops)).await;
    let delivered = ctx.clock();
    if let Err(e) = written {
        worker::console_error!("fan-out of {} chunks failed, will retry: {e}", chunks.len());
        chunks.iter().for_each(|(message, _)| message.retry());
        return delivered;
    }
    let (messages, chunks): (Vec<_>, Vec<_>) = chunks.into_iter().unzip();
    let finished =
        join_all(chunks.into_iter().map(|chunk| within(MESSAGE_DEADLINE, finish_chunk(ctx, chunk)))).await;
    for (message, result) in messages.into_iter().zip(finished) {
        match result {
            Ok(()) => message.ack(),
            Err(e) => {
                worker::console_error!("recording a fan-out chunk failed, will retry: {e}");
                message.retry();
            }
        }
    }
    delivered
}

/// Gives a message back to the queue: at once, except while its shard is frozen for a move
/// (README "Moving a shard"), which lasts a final copy: immediate retries would spend the
/// message's attempts in seconds and dead-letter it.
fn retry(message: &worker::Message<serde_json::Value>, why: &ApiError) {
    if why.is_frozen_shard() {
        let later = worker::QueueRetryOptionsBuilder::new().with_delay_seconds(FROZEN_RETRY_SECONDS).build();
        message.retry_with_options(&later);
    } else {
        message.retry();
    }
}

/// How long a message that met a frozen shard waits before its next attempt.
const FROZEN_RETRY_SECONDS: u32 = 10;

fn retry_all(batch: &MessageBatch<serde_json::Value>, why: &str) {
    worker::console_error!("fan-out consumer unavailable: {why}");
    batch.retry_all();
}

/// Carries out one message of an outbox event inline (single-reader events applied within a
/// request, and tests): [`start`], then the chunk's window writes and progress.
async fn process(ctx: &Ctx, windows: &Windows, msg: FanoutMessage) -> ApiResult<()> {
    let Some(chunk) = start(ctx, windows, msg).await? else { return Ok(()) };
    deliver_merged(ctx, windows, chunk.ops.iter().cloned()).await?;
    finish_chunk(ctx, chunk).await
}

/// Carries out one message of an outbox event, except a post chunk's window writes: those are
/// returned, so the consumer can write all of a batch's chunks with one call per reader.
async fn start(ctx: &Ctx, windows: &Windows, msg: FanoutMessage) -> ApiResult<Option<Chunk>> {
    let Some(row) = outbox::get(ctx.outbox_db(msg.outbox_id), msg.outbox_id).await? else {
        return Ok(None);
    };
    if row.state != EventState::Pending {
        return Ok(None);
    }
    match row.kind {
        EventKind::Post if stalled_in_test(ctx, row.author_id).await? => {
            Err(ApiError::Internal("injected fault: fan-out stalled".into()))
        }
        EventKind::Post | EventKind::RemovePost => prepare_chunk(ctx, row, msg.after_follower_id).await,
        // Reader-scoped events carry their outbox id: the window applies only the newest one
        // per author, so a late or repeated unfollow cannot undo a later follow (and back).
        // Each first converges the pair's mirrors on both sides by current state.
        EventKind::RemoveAuthor => {
            let reader = event_reader(&row)?;
            super::graph::converge_pair(ctx, reader, row.author_id).await?;
            let op = WindowOp::RemoveAuthor { author_id: row.author_id, event: row.id.get() };
            single_reader(ctx, windows, &row, op).await.map(|()| None)
        }
        EventKind::Backfill => {
            let reader = event_reader(&row)?;
            // The mirror first: once the backfill is done the feed stops pulling this author
            // for the reader (the in-flight horizon), so fan-out must already page the new
            // follower: a post committed after this backfill's read is pushed by its own
            // fan-out, one committed before is in the backfill.
            super::graph::converge_pair(ctx, reader, row.author_id).await?;
            let cap = ctx.config.feed_window;
            // Read now: only posts the reader may see *now*, from an author still followed.
            let entries =
                pull::backfill_entries(ctx.user_db(row.author_id), reader, row.author_id, cap).await?;
            let op = WindowOp::Backfill { author_id: row.author_id, event: row.id.get(), entries, cap };
            single_reader(ctx, windows, &row, op).await.map(|()| None)
        }
        EventKind::GraphMirror => {
            super::graph::converge_pair(ctx, event_reader(&row)?, row.author_id).await?;
            outbox::mark_done(ctx.outbox_db(row.id), &row, ctx.clock()).await.map(|()| None)
        }
    }
}

fn event_reader(row: &OutboxRow) -> ApiResult<UserId> {
    row.reader_id.ok_or_else(|| ApiError::Internal("reader event without reader".into()))
}

async fn single_reader(ctx: &Ctx, windows: &Windows, row: &OutboxRow, op: WindowOp) -> ApiResult<()> {
    let reader = event_reader(row)?;
    // A reader without a window has nothing to clean or fill; it is built fresh on first read.
    if pull::is_active_reader(ctx.user_db(reader), reader).await? {
        windows.call(reader, &op).await?;
    }
    outbox::mark_done(ctx.outbox_db(row.id), row, ctx.clock()).await
}

/// The window operation that brings a follower's window to the post's current state.
fn post_op(ctx: &Ctx, post_id: PostId, post: &PostState, direction: Direction) -> WindowOp {
    let version = post.state_version;
    match direction {
        Direction::Deliver => {
            let entry = Entry { created_at: post.created_at, post_id, author_id: post.author_id, version };
            WindowOp::Deliver { entries: vec![entry], cap: ctx.config.feed_window }
        }
        Direction::Remove => WindowOp::RemovePost { post_id, version, created_at: post.created_at },
    }
}

/// What the fan-out plan needs of a post's state.
fn post_now(p: &PostState) -> PostNow {
    PostNow {
        visibility: p.visibility,
        deleted: p.is_deleted(),
        taken_down: p.is_taken_down(),
        author_suspended: p.author_is_suspended(),
    }
}

/// What this chunk of a post event does, decided by the post's state read now.
async fn chunk_plan(
    ctx: &Ctx,
    row: &OutboxRow,
    post_id: PostId,
    first: bool,
) -> ApiResult<(Plan, Option<PostState>)> {
    let direction = if row.kind == EventKind::Post { Direction::Deliver } else { Direction::Remove };
    let post = posts::state(ctx.post_db(post_id), post_id).await?;
    Ok((plan(direction, post.as_ref().map(post_now), first), post))
}

/// One chunk of a post event, decided by the post's state read now, with its window writes
/// not yet made.
pub struct Chunk {
    row: OutboxRow,
    ops: Vec<(UserId, WindowOp)>,
    start: i64,
    /// The followers scanned (progress moves past them all).
    followers: Vec<i64>,
    /// Those of them written to (the ones with a window).
    delivered: usize,
    /// More followers come after this chunk (the page's lookahead row).
    more: bool,
    author_active: bool,
}

/// Reads and decides one chunk of followers (plus the author's own window with the first
/// chunk); `None` when the event has nothing (more) to do and was marked done.
async fn prepare_chunk(ctx: &Ctx, row: OutboxRow, after: i64) -> ApiResult<Option<Chunk>> {
    let post_id = row.post_id.ok_or_else(|| ApiError::Internal("post event without post".into()))?;
    let start = after.max(row.cursor_follower_id);
    let (plan, post) = chunk_plan(ctx, &row, post_id, start == 0).await?;
    if plan.hold {
        if outbox::hold(ctx.outbox_db(row.id), row.id).await? {
            return Ok(None);
        }
        // Reinstated since the read: the retried message reads the state again and delivers.
        return Err(ApiError::Internal("author reinstated while holding the event; retrying".into()));
    }
    let (Some(post), false) = (post, plan.is_nothing()) else {
        outbox::mark_done(ctx.outbox_db(row.id), &row, ctx.clock()).await?;
        return Ok(None);
    };
    let followers = chunk_followers(ctx, plan, start, &post);
    let reaches_live = start == 0 && plan.followers == Some(Direction::Deliver);
    let live = async {
        match reaches_live {
            true => live_page(ctx, post_id, &post, 0).await,
            false => Ok(Vec::new()),
        }
    };
    let (followers, live) = join(followers, live).await;
    let ((scanned, active, more), live) = (followers?, live?);
    let mut ops = Vec::with_capacity(active.len() + live.len() + 1);
    if let Some(direction) = plan.followers {
        let op = post_op(ctx, post_id, &post, direction);
        ops.extend(active.iter().chain(&live).map(|&reader| (reader, op.clone())));
    }
    let author_active =
        plan.author && pull::is_active_reader(ctx.user_db(post.author_id), post.author_id).await?;
    if author_active {
        ops.push((post.author_id, post_op(ctx, post_id, &post, Direction::Deliver)));
    }
    let followers = scanned.iter().map(|f| f.get()).collect();
    let delivered = active.len();
    Ok(Some(Chunk { row, ops, start, followers, delivered, more, author_active }))
}

/// The chunk's page of followers from the author's side (with one row of lookahead), and
/// those of them with a window (from their own rows): `(scanned, active, more)`. Progress
/// moves by the scanned page, so followers without a window are passed over, not revisited.
async fn chunk_followers(
    ctx: &Ctx,
    plan: Plan,
    start: i64,
    post: &PostState,
) -> ApiResult<(Vec<UserId>, Vec<UserId>, bool)> {
    let Some(pushed_only) = recipients(ctx, plan, start == 0, post.author_id).await? else {
        return Ok((Vec::new(), Vec::new(), false));
    };
    let chunk_size = ctx.config.fanout_chunk;
    let page = outbox::follower_chunk(
        ctx.user_db(post.author_id),
        post.author_id,
        start,
        chunk_size + 1,
        pushed_only,
    )
    .await?;
    let (scanned, more) = split_lookahead(page, chunk_size);
    let active = outbox::active_among(&ctx.shards, &scanned).await?;
    Ok((scanned, active, more))
}

/// After a chunk's windows are written: records its progress, and either continues the event
/// with a new message (at the back of the queue) or finishes it.
async fn finish_chunk(ctx: &Ctx, chunk: Chunk) -> ApiResult<()> {
    let Chunk { row, start, followers, delivered, more, author_active, .. } = chunk;
    let (progress, next) = after_chunk(start, &followers, more);
    if next != Next::Done && injected_chunk_fault(ctx, row.author_id).await? {
        return Err(ApiError::Internal("injected fault after delivering a chunk".into()));
    }
    let now = ctx.clock();
    let delivered = delivered + usize::from(author_active);
    outbox::record_chunk(ctx.outbox_db(row.id), row.id, progress, delivered, now).await?;
    match next {
        Next::Continue { after_follower_id } => {
            send(ctx, std::iter::once(FanoutMessage { outbox_id: row.id, after_follower_id })).await
        }
        Next::Done => outbox::mark_done(ctx.outbox_db(row.id), &row, now).await,
    }
}

/// Open sockets one live page checks per fan-out chunk of followers: the live set is paged
/// and filtered by the author's side of the edges, most of it following someone else.
const LIVE_SCAN_PER_CHUNK: usize = 10;

/// One page of the author's followers with an open feed socket whom the fan-out does not push
/// to (pulled edges in hybrid mode, everyone in pull mode): the post goes into their windows as
/// if pushed, which is what tells their sockets. Their reads would find it anyway (pulled); the
/// window only adds an entry reads dedup. A full page queues the next one ([`LiveReach`]), so a
/// big author's live readers are reached a page at a time, like its pushed followers.
async fn live_page(ctx: &Ctx, post_id: PostId, post: &PostState, after: i64) -> ApiResult<Vec<UserId>> {
    let unpushed_only = match ctx.config.policy.mode {
        FanoutMode::Push => return Ok(Vec::new()), // every reader with a window is pushed to
        FanoutMode::Pull => false,
        FanoutMode::Hybrid => true,
    };
    let scan = ctx.config.fanout_chunk * LIVE_SCAN_PER_CHUNK;
    let (readers, next) =
        live::live_followers(&ctx.shards, post.author_id, after, ctx.now, scan, unpushed_only).await?;
    if let Some(last) = next {
        let next = LiveReach { live_post_id: post_id, after_reader: last };
        send_job(ctx, QueueMessage::Live(next)).await?;
    }
    Ok(readers)
}

/// A later page of live readers: the post's state is read again, so a post deleted, hidden or
/// taken down meanwhile reaches nobody.
async fn continue_live_reach(ctx: &Ctx, windows: &Windows, reach: LiveReach) -> ApiResult<()> {
    let post = posts::state(ctx.post_db(reach.live_post_id), reach.live_post_id).await?;
    let now = post.as_ref().map(post_now);
    let (Some(post), Some(Direction::Deliver)) = (post, plan(Direction::Deliver, now, false).followers)
    else {
        return Ok(());
    };
    let readers = live_page(ctx, reach.live_post_id, &post, reach.after_reader).await?;
    let op = post_op(ctx, reach.live_post_id, &post, Direction::Deliver);
    deliver_merged(ctx, windows, readers.into_iter().map(|reader| (reader, op.clone()))).await
}

/// Which followers a chunk writes to: `Some(true)` only pushed edges, `Some(false)` every
/// reader with a window, `None` nobody. Deliveries follow the system mode and each edge's mode;
/// removals reach every window (any may hold the post from a time its edge was pushed).
/// The first chunk of a delivery also re-decides the author's edges when their rate moved.
async fn recipients(ctx: &Ctx, plan: Plan, first: bool, author: UserId) -> ApiResult<Option<bool>> {
    let Some(direction) = plan.followers else { return Ok(None) };
    if direction == Direction::Remove {
        return Ok(Some(false));
    }
    match ctx.config.policy.mode {
        FanoutMode::Pull => Ok(None),
        FanoutMode::Push => Ok(Some(false)),
        FanoutMode::Hybrid => {
            if first {
                review_author(ctx, author).await?;
            }
            Ok(Some(true))
        }
    }
}

/// Queues a re-decision of the author's edges when their posting rate moved (or they crossed
/// the cap).
async fn review_author(ctx: &Ctx, author: UserId) -> ApiResult<()> {
    if let Some(facts) = edges::author_facts(ctx.user_db(author), author).await? {
        if policy::author_needs_rebalance(ctx, &facts) {
            let job = PolicyJob::AuthorEdges { author, after_follower_id: 0, after_rate: None };
            send_job(ctx, QueueMessage::Policy(job)).await?;
        }
    }
    Ok(())
}

/// Runs the operations on the readers' windows, `fanout_concurrency` readers at a time, with
/// one call per reader: a reader's deliveries (from any number of posts) travel as one
/// `Deliver`; other operations follow in order. Fails if any call failed.
async fn deliver_merged(
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
            }
            Ok(())
        })
        .buffer_unordered(ctx.config.fanout_concurrency)
        .collect()
        .await;
    results.into_iter().collect()
}

/// Test-only: an outage of the author's post fan-out (each attempt fails and is retried, until
/// the queue dead-letters it), for as many attempts as the fault is armed.
async fn stalled_in_test(ctx: &Ctx, author: UserId) -> ApiResult<bool> {
    Ok(ctx.config.test_hooks
        && test_hooks::take_fault(ctx.control(), &format!("stall_fanout:{author}")).await?)
}

/// Test-only: a crash after delivering a chunk, before its progress is recorded.
async fn injected_chunk_fault(ctx: &Ctx, author: UserId) -> ApiResult<bool> {
    Ok(ctx.config.test_hooks
        && test_hooks::take_fault(ctx.control(), &format!("fanout_after_chunk:{author}")).await?)
}
