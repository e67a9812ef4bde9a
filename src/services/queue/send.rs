//! The producer side of the queue `edgefeed-fanout`: every message the system sends goes
//! through here (what the messages are: `domain/queue.rs`). Each call is one queue round trip,
//! counted for `Server-Timing` and the consumer's profile.

use crate::context::Ctx;
use crate::domain::queue::QueueMessage;
use crate::error::ApiResult;

pub const FANOUT_QUEUE: &str = "FANOUT";

/// A queue round trip takes at most this many messages (`send_batch`'s limit).
const BATCH_LIMIT: usize = 100;

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

/// Sends messages in as few round trips as the queue allows.
pub async fn send_batch(ctx: &Ctx, messages: impl IntoIterator<Item = QueueMessage>) -> ApiResult<()> {
    let queue = ctx.env.queue(FANOUT_QUEUE)?;
    let messages: Vec<QueueMessage> = messages.into_iter().collect();
    for chunk in messages.chunks(BATCH_LIMIT) {
        count_send(ctx, chunk.len());
        queue.send_batch(chunk.to_vec()).await?;
    }
    Ok(())
}

fn count_send(ctx: &Ctx, messages: usize) {
    ctx.io.queue_sends.set(ctx.io.queue_sends.get() + 1);
    ctx.io.queue_messages.set(ctx.io.queue_messages.get() + messages as u32);
}
