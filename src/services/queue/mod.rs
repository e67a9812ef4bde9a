//! The fan-out queues (`edgefeed-fanout`, `edgefeed-fanout-1`, ...: README "Queues") and
//! their one shared dead-letter queue: one consumer for everything they carry
//! (`domain/queue.rs`), dispatching each message to its handler (the fan-out, the policy's
//! jobs, a database's share of reconciliation), with a deadline per message, ack or retry per
//! message, and the batch's figures. Sending is [`send`]; handlers send through it and never import this file.
//!
//! A new message: a variant in `domain/queue.rs` (untagged: its fields must not parse as an
//! earlier variant), an arm in [`dispatch`] (also saying what its dead letter does), and its
//! handler in its own service.

pub mod send;

use futures_util::future::join_all;
use worker::{Env, Message, MessageBatch, MessageExt};

use super::deadline::within;
use super::fanout::{self, Pending};
use super::faults::Faults;
use super::{policy, push, reconcile, tally};
use crate::context::Ctx;
use crate::domain::fanout_budget::{self, plan_batch, BatchPlan, MessageCost};
use crate::domain::fanout_plan::Work;
use crate::domain::queue::QueueMessage;
use crate::error::{ApiError, ApiResult};
use crate::objects::timeline::Windows;

pub const DEAD_LETTER_QUEUE_NAME: &str = "edgefeed-fanout-dlq";

/// How long one message's reads and decisions may take before it is given back to the queue.
/// A storage call that never answers must not hold the whole batch, and with it the queue
/// (locally the consumer gets the next batch only when this one is done).
const MESSAGE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);

/// How long a message that met a frozen shard waits before its next attempt.
const FROZEN_RETRY_SECONDS: u32 = 10;

type Received = Message<serde_json::Value>;

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
    let faults = Faults::of(&ctx);
    let mut parsed = parse(messages);
    let plan = budget(&ctx, &parsed, dead_letters);
    defer(&ctx, parsed.split_off(plan.admitted.min(parsed.len())), dead_letters).await;
    let started = ctx.clock();
    let waited: i64 = parsed.iter().map(|(m, _)| started - m.timestamp().as_millis() as i64).sum();
    // The batch's messages start together: each is a few D1 reads, independent of the others.
    let results = join_all(parsed.iter().map(|(message, body)| {
        let dead_letter_sent_at = dead_letters.then(|| message.timestamp().as_millis() as i64);
        let databases = plan.databases_per_chunk;
        within(MESSAGE_DEADLINE, dispatch(&ctx, &windows, &faults, *body, dead_letter_sent_at, databases))
    }))
    .await;
    let prepared = ctx.clock();
    // Which queue carried the batch (each fan-out queue has this same consumer).
    tally::add(&format!("queue_batches_{}", batch.queue()), 1);
    let mut chunks = Vec::new();
    for ((message, body), result) in parsed.into_iter().zip(results) {
        match result {
            Ok(Some(chunk)) => chunks.push((message, chunk)),
            Ok(None) => message.ack(),
            Err(e) => {
                worker::console_error!("queue message {body:?} failed: {e}");
                retry(&message, &e);
            }
        }
    }
    let delivered = deliver_chunks(&ctx, &windows, chunks).await;
    profile_batch(&ctx, waited, [prepared - started, delivered - prepared, ctx.clock() - delivered]);
    // The invocation's D1 statements, its flush's included (its counters, this figure).
    let spent = ctx.io.d1_statements.get() as usize + tally::pending_statements() + 1;
    tally::raise(INVOCATION_STATEMENTS_MAX, spent as i64);
    flush_figures(&ctx).await;
}

/// The most D1 statements one consumer invocation spent (`GET /v1/admin/stats` counters).
const INVOCATION_STATEMENTS_MAX: &str = "fanout_invocation_statements_max";

/// How the batch runs within `FANOUT_INVOCATION_STATEMENTS`: which messages, and how many
/// databases a chunk's readers may span (`domain/fanout_budget.rs`).
fn budget(ctx: &Ctx, parsed: &[(Received, QueueMessage)], dead_letters: bool) -> BatchPlan {
    let costs: Vec<MessageCost> = parsed.iter().map(|(_, body)| cost_of(body, dead_letters)).collect();
    let databases = ctx.databases().count();
    plan_batch(&costs, ctx.config.fanout_invocation_statements, databases, ctx.config.fanout_chunk)
}

/// A message's worst case in D1 statements, as the budget reserves it.
fn cost_of(body: &QueueMessage, dead_letter: bool) -> MessageCost {
    match body {
        _ if dead_letter => MessageCost::Fixed(fanout_budget::DEAD_LETTER_COST),
        QueueMessage::Fanout(_) => MessageCost::Chunk,
        QueueMessage::Tag(_) => MessageCost::TagPage,
        QueueMessage::Policy(_) => MessageCost::Policy,
        QueueMessage::Live(_) => MessageCost::Fixed(fanout_budget::LIVE_COST),
        QueueMessage::Reconcile(_) => MessageCost::Fixed(fanout_budget::RECONCILE_COST),
        QueueMessage::Push(_) => MessageCost::Fixed(fanout_budget::PUSH_COST),
    }
}

/// Hands back the messages past the batch's budget as fresh messages, then acks them: a
/// `retry` would spend one of their `max_retries` attempts each time a busy batch passed them
/// over, and a message passed over five times would be dead-lettered without ever failing.
/// They go to the back of their queue (as a chunk's continuation does). If the send fails they
/// are retried (an attempt spent, as for any failure). Dead letters are never re-sent (that
/// would make them live again): they are retried, and they are cheap enough to be taken first.
async fn defer(ctx: &Ctx, deferred: Vec<(Received, QueueMessage)>, dead_letters: bool) {
    if deferred.is_empty() {
        return;
    }
    tally::add("fanout_deferred", deferred.len() as i64);
    let sent = if dead_letters {
        Err(ApiError::Internal("dead letters are retried, never re-sent".into()))
    } else {
        send::send_batch(ctx, deferred.iter().map(|(_, body)| *body)).await
    };
    match sent {
        Ok(()) => deferred.iter().for_each(|(message, _)| message.ack()),
        Err(e) => {
            worker::console_error!(
                "re-sending {} deferred messages failed: {e}; retrying them",
                deferred.len()
            );
            deferred.iter().for_each(|(message, _)| message.retry());
        }
    }
}

/// The batch's messages with their bodies; a malformed one is acked (it can never succeed).
fn parse(messages: Vec<Received>) -> Vec<(Received, QueueMessage)> {
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
    parsed
}

/// One message to its handler: a policy job, a fan-out message (done, or a post chunk with its
/// window writes returned), a live page. `dead_letter_sent_at`: the message is a dead letter,
/// first sent at that time.
async fn dispatch<'a>(
    ctx: &'a Ctx,
    windows: &'a Windows,
    faults: &'a Faults<'a>,
    body: QueueMessage,
    dead_letter_sent_at: Option<i64>,
    databases: usize,
) -> ApiResult<Option<Pending<'a>>> {
    match (body, dead_letter_sent_at) {
        // A dead fan-out message marks its attempt dead (the operator's figure, replayable).
        (QueueMessage::Fanout(message), dead_letter_sent_at) => {
            let work = Work::Event { message, dead_letter_sent_at };
            fanout::start(ctx, windows, faults, work, databases).await
        }
        // A policy job that keeps failing is dropped: its next trigger redoes it. So is a live
        // page (its readers find the post on their next read), a tag page (its readers find the
        // post under the tag, not in home: best effort, as Mastodon's), a reconciliation share
        // (the next minute's pass does that database again) and a push its service kept refusing
        // (the notification stays in the lists).
        (
            QueueMessage::Policy(_)
            | QueueMessage::Live(_)
            | QueueMessage::Tag(_)
            | QueueMessage::Reconcile(_)
            | QueueMessage::Push(_),
            Some(_),
        ) => Ok(None),
        (QueueMessage::Push(job), None) => push::deliver(ctx, job).await.map(|()| None),
        (QueueMessage::Policy(job), None) => policy::run(ctx, windows, job).await.map(|()| None),
        (QueueMessage::Live(reach), None) => {
            fanout::start(ctx, windows, faults, Work::Live(reach), databases).await
        }
        (QueueMessage::Tag(reach), None) => {
            fanout::start(ctx, windows, faults, Work::Tag(reach), databases).await
        }
        (QueueMessage::Reconcile(job), None) => reconcile::run_share(ctx, job).await.map(|()| None),
    }
}

/// Delivers the batch's post chunks together ([`fanout::deliver`]) and acks or retries each
/// chunk's message by its outcome; every one is retried when the window writes failed.
/// Returns when the window writes were done (the rest is recording progress).
async fn deliver_chunks(ctx: &Ctx, windows: &Windows, chunks: Vec<(Received, Pending<'_>)>) -> i64 {
    let (messages, chunks): (Vec<_>, Vec<_>) = chunks.into_iter().unzip();
    let (written_at, outcomes) = fanout::deliver(ctx, windows, chunks, MESSAGE_DEADLINE).await;
    let outcomes = match outcomes {
        Ok(outcomes) => outcomes,
        Err(e) => {
            worker::console_error!("fan-out of {} chunks failed, will retry: {e}", messages.len());
            messages.iter().for_each(|message| message.retry());
            return written_at;
        }
    };
    for (message, outcome) in messages.into_iter().zip(outcomes) {
        match outcome {
            Ok(()) => message.ack(),
            Err(e) => {
                worker::console_error!("recording a fan-out chunk failed: {e}");
                retry(&message, &e);
            }
        }
    }
    written_at
}

/// Gives a message back to the queue: at once, except while its shard is frozen for a move
/// (README "Moving a shard"), which lasts a final copy: immediate retries would spend the
/// message's attempts in seconds and dead-letter it. A message that met a database outage is
/// acked instead: an outage can outlast every retry, and a dead letter would need an operator's
/// replay. What it carries waits where it is kept: a fan-out message's outbox event stays
/// pending with its progress and the sweep resends it each pass until the database is back (a
/// crash between steps is the same case); a policy job or a live page is made again by its
/// next trigger, as their dead letters are (see `dispatch`).
fn retry(message: &Received, why: &ApiError) {
    if let Some(database) = why.unavailable_database() {
        tally::add("queue_outage_acks", 1);
        worker::console_error!("DB_{database} is unavailable: the message waits for the sweep");
        message.ack();
    } else if why.is_frozen_shard() {
        let later = worker::QueueRetryOptionsBuilder::new().with_delay_seconds(FROZEN_RETRY_SECONDS).build();
        message.retry_with_options(&later);
    } else {
        message.retry();
    }
}

fn retry_all(batch: &MessageBatch<serde_json::Value>, why: &str) {
    worker::console_error!("fan-out consumer unavailable: {why}");
    batch.retry_all();
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

/// This batch wrote D1 anyway: the read counters this isolate holds go with it, at most every
/// [`tally::CONSUMER_FLUSH_MS`] (each counter is a row written, and at scale a few hundred
/// batches a second would write them: docs/CAPACITY.md). With `PROFILE_IO`, every batch
/// flushes, its storage work counted per database first, and the flush's own statements where
/// they ran and apart, so the capacity bench can tell them from the work.
async fn flush_figures(ctx: &Ctx) {
    if ctx.config.profile_io {
        tally::add_io("fanout", &ctx.io);
    } else if !tally::flush_due(ctx.clock()) {
        return;
    }
    let (flushed, on) = tally::flush(ctx).await;
    if ctx.config.profile_io {
        tally::add(&tally::io_counter("fanout", on, "statements"), flushed as i64);
        tally::add(&tally::io_counter("fanout", on, "flush_statements"), flushed as i64);
    }
}
