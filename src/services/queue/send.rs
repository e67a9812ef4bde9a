//! The producer side of the fan-out queues: every message the system sends goes through here
//! (what the messages are and which queue each goes to: `domain/queue.rs`). Each call is one
//! queue round trip per queue it sends to, counted for `Server-Timing` and the consumer's
//! profile.
//!
//! The queues are the bindings `FANOUT` (queue 0, `edgefeed-fanout`), `FANOUT_1`, `FANOUT_2`,
//! ... that exist, counted once per isolate (a deploy starts new isolates), as the D1 bindings
//! are: how many there are is whatever the deployed config binds, and no var can disagree.

use std::cell::Cell;

use worker::Queue;

use crate::context::Ctx;
use crate::domain::queue::QueueMessage;
use crate::domain::snowflake::LOGICAL_SHARDS;
use crate::error::ApiResult;

pub const FANOUT_QUEUE: &str = "FANOUT";

/// A queue round trip takes at most this many messages (`send_batch`'s limit).
const BATCH_LIMIT: usize = 100;

thread_local! {
    /// The fan-out queue bindings of this isolate's config (0: not counted yet).
    static QUEUES: Cell<usize> = const { Cell::new(0) };
}

/// The binding of fan-out queue `index`: `FANOUT` for the first (the name it always had).
pub fn queue_binding(index: usize) -> String {
    if index == 0 {
        FANOUT_QUEUE.to_string()
    } else {
        format!("{FANOUT_QUEUE}_{index}")
    }
}

/// How many fan-out queues are bound: `FANOUT`, `FANOUT_1`, ... up to the first one missing
/// (at least one: a config without `FANOUT` fails at the first send, as it always did).
pub fn queue_count(ctx: &Ctx) -> usize {
    let known = QUEUES.with(Cell::get);
    if known > 0 {
        return known;
    }
    let count =
        (1..LOGICAL_SHARDS).find(|&i| ctx.env.queue(&queue_binding(i)).is_err()).unwrap_or(LOGICAL_SHARDS);
    QUEUES.with(|q| q.set(count));
    count
}

/// The queue that carries `message`.
fn queue_for(ctx: &Ctx, message: &QueueMessage) -> ApiResult<Queue> {
    Ok(ctx.env.queue(&queue_binding(message.queue_index(queue_count(ctx))))?)
}

/// Sends one job after the answer (see [`Ctx::after_response`]); for jobs whose loss costs
/// nothing but a delay, because their next trigger makes them again. Failures are logged.
pub async fn send_job_after_response(ctx: &Ctx, message: QueueMessage) {
    let queue = match queue_for(ctx, &message) {
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
    let queue = queue_for(ctx, &message)?;
    count_send(ctx, 1);
    queue.send(message).await?;
    Ok(())
}

/// Sends messages in as few round trips as the queues allow: each queue's share in batches.
pub async fn send_batch(ctx: &Ctx, messages: impl IntoIterator<Item = QueueMessage>) -> ApiResult<()> {
    let queues = queue_count(ctx);
    let mut by_queue: Vec<Vec<QueueMessage>> = vec![Vec::new(); queues];
    for message in messages {
        by_queue[message.queue_index(queues)].push(message);
    }
    for (index, messages) in by_queue.into_iter().enumerate().filter(|(_, m)| !m.is_empty()) {
        let queue = ctx.env.queue(&queue_binding(index))?;
        for chunk in messages.chunks(BATCH_LIMIT) {
            count_send(ctx, chunk.len());
            queue.send_batch(chunk.to_vec()).await?;
        }
    }
    Ok(())
}

fn count_send(ctx: &Ctx, messages: usize) {
    ctx.io.queue_sends.set(ctx.io.queue_sends.get() + 1);
    ctx.io.queue_messages.set(ctx.io.queue_messages.get() + messages as u32);
}
