//! Fan-out: the queue producer (announce an outbox event) and the consumer that carries it
//! into timeline windows, one bounded chunk of followers per message.
//!
//! Every step is idempotent: windows dedup by post id, chunk progress is recorded on the outbox
//! row after the chunk is delivered and only moves forward, so any message may be delivered
//! twice or retried after a partial run. A big fan-out continues as a *new* message at the back
//! of the queue after each chunk, so one large author cannot hold the consumer while small
//! authors' posts wait behind it.

use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use worker::{Env, MessageBatch, MessageExt};

use crate::config::Config;
use crate::domain::fanout::{after_chunk, audience, Action, Next};
use crate::error::{ApiError, ApiResult};
use crate::http::app::now_ms;
use crate::store::feed as pull;
use crate::store::outbox::{self, EventKind, OutboxRow};
use crate::store::posts;
use crate::timeline::{Entry, WindowOp, Windows};

pub const FANOUT_QUEUE: &str = "FANOUT";
pub const DEAD_LETTER_QUEUE_NAME: &str = "edgefeed-fanout-dlq";

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct FanoutMessage {
    pub outbox_id: i64,
    /// Resume after this follower id (the outbox row's progress wins if it is further).
    #[serde(default)]
    pub after_follower_id: i64,
}

/// Sends the messages for freshly committed outbox events. A failed send is only logged: the
/// event is durable in the outbox and the reconciliation sweep resends it after the grace period.
pub async fn announce(env: &Env, config: &Config, db: &worker::D1Database, actor: i64, outbox_ids: &[i64]) {
    if outbox_ids.is_empty() || lost_in_test(config, db, actor).await {
        return;
    }
    if let Err(e) =
        send(env, outbox_ids.iter().map(|&id| FanoutMessage { outbox_id: id, after_follower_id: 0 })).await
    {
        worker::console_error!("announce {outbox_ids:?}: {e}; the sweep will resend");
    }
}

/// Applies single-reader events (follow backfill, unfollow/block cleanup) within the request,
/// so the reader's very next read reflects them; any that fail go to the queue instead.
pub async fn apply_inline(
    env: &Env,
    config: &Config,
    db: &worker::D1Database,
    actor: i64,
    outbox_ids: &[i64],
) {
    if outbox_ids.is_empty() || lost_in_test(config, db, actor).await {
        return;
    }
    let mut failed = Vec::new();
    match Pipeline::new(env.clone()) {
        Ok(pipeline) => {
            for &id in outbox_ids {
                if let Err(e) = pipeline.process(FanoutMessage { outbox_id: id, after_follower_id: 0 }).await
                {
                    worker::console_error!("inline outbox {id}: {e}; queueing it");
                    failed.push(id);
                }
            }
        }
        Err(_) => failed.extend_from_slice(outbox_ids),
    }
    if failed.is_empty() {
        return;
    }
    if let Err(e) =
        send(env, failed.iter().map(|&id| FanoutMessage { outbox_id: id, after_follower_id: 0 })).await
    {
        worker::console_error!("queueing {failed:?}: {e}; the sweep will resend");
    }
}

/// Test-only: simulates a crash right after the commit (the event is never sent). Faults are
/// scoped to the acting user so concurrent tests cannot trip each other's.
async fn lost_in_test(config: &Config, db: &worker::D1Database, actor: i64) -> bool {
    config.test_hooks && outbox::take_fault(db, &format!("skip_announce:{actor}")).await.unwrap_or(false)
}

pub async fn send(env: &Env, messages: impl Iterator<Item = FanoutMessage>) -> ApiResult<()> {
    let queue = env.queue(FANOUT_QUEUE)?;
    let messages: Vec<FanoutMessage> = messages.collect();
    // send_batch takes at most 100 messages.
    for chunk in messages.chunks(100) {
        queue.send_batch(chunk.to_vec()).await?;
    }
    Ok(())
}

/// The fan-out steps, shared by the queue consumer and inline application.
pub struct Pipeline {
    env: Env,
    db: worker::D1Database,
    config: Config,
    windows: Windows,
}

/// The queue handler. It acks or retries each message itself and never returns an error
/// (an `Err` from a queue handler aborts the isolate).
pub async fn consume(batch: MessageBatch<serde_json::Value>, env: Env) {
    let dead_letters = batch.queue() == DEAD_LETTER_QUEUE_NAME;
    let consumer = match Pipeline::new(env) {
        Ok(c) => c,
        Err(e) => {
            worker::console_error!("fan-out consumer unavailable: {e}");
            batch.retry_all();
            return;
        }
    };
    let messages = match batch.messages() {
        Ok(m) => m,
        Err(e) => {
            worker::console_error!("unreadable queue batch: {e}");
            batch.retry_all();
            return;
        }
    };
    for message in messages {
        let Ok(body) = serde_json::from_value::<FanoutMessage>(message.body().clone()) else {
            worker::console_error!("dropping malformed fan-out message: {}", message.body());
            message.ack();
            continue;
        };
        let result = if dead_letters {
            outbox::mark_dead(&consumer.db, body.outbox_id).await
        } else {
            consumer.process(body).await
        };
        match result {
            Ok(()) => message.ack(),
            Err(e) => {
                worker::console_error!("fan-out of outbox {} failed, will retry: {e}", body.outbox_id);
                message.retry();
            }
        }
    }
}

impl Pipeline {
    pub fn new(env: Env) -> ApiResult<Self> {
        Ok(Self { db: env.d1("DB")?, config: Config::from_env(&env), windows: Windows::new(&env)?, env })
    }

    pub async fn process(&self, msg: FanoutMessage) -> ApiResult<()> {
        let Some(row) = outbox::get(&self.db, msg.outbox_id).await? else {
            return Ok(());
        };
        if row.state != "pending" {
            return Ok(());
        }
        match row.kind {
            EventKind::Post | EventKind::RemovePost => self.fan_out_chunk(&row, msg.after_follower_id).await,
            EventKind::RemoveAuthor => {
                self.single_reader(&row, WindowOp::RemoveAuthor { author_id: row.author_id }).await
            }
            EventKind::Backfill => {
                let reader = row.reader_id.unwrap_or(0);
                let entries =
                    pull::backfill_entries(&self.db, reader, row.author_id, self.config.feed_window).await?;
                self.single_reader(&row, WindowOp::Deliver { entries, cap: self.config.feed_window }).await
            }
        }
    }

    async fn single_reader(&self, row: &OutboxRow, op: WindowOp) -> ApiResult<()> {
        let reader = row.reader_id.ok_or_else(|| ApiError::Internal("reader event without reader".into()))?;
        // A reader without a window has nothing to clean or fill; it is built fresh on first read.
        if pull::is_active_reader(&self.db, reader).await? {
            self.windows.call(reader, &op).await?;
        }
        outbox::mark_done(&self.db, row, now_ms()).await
    }

    /// Delivers one chunk of followers (plus the author's own window with the first chunk),
    /// records progress, and either continues with a new message or finishes the event.
    async fn fan_out_chunk(&self, row: &OutboxRow, after: i64) -> ApiResult<()> {
        let post_id = row.post_id.ok_or_else(|| ApiError::Internal("post event without post".into()))?;
        let start = after.max(row.cursor_follower_id);
        let (action, op) = match row.kind {
            EventKind::Post => {
                let entry =
                    Entry { created_at: row.post_created_at.unwrap_or(0), post_id, author_id: row.author_id };
                (Action::Deliver, WindowOp::Deliver { entries: vec![entry], cap: self.config.feed_window })
            }
            _ => (Action::Remove, WindowOp::RemovePost { post_id }),
        };
        let visibility = posts::visibility_of(&self.db, post_id).await?;
        let Some(audience) = audience(action, visibility, start == 0) else {
            return outbox::mark_done(&self.db, row, now_ms()).await;
        };
        let followers = if audience.followers {
            outbox::follower_chunk(&self.db, row.author_id, start, self.config.fanout_chunk).await?
        } else {
            Vec::new()
        };
        let mut readers = followers.clone();
        if audience.author && pull::is_active_reader(&self.db, row.author_id).await? {
            readers.push(row.author_id);
        }

        let results: Vec<ApiResult<()>> = stream::iter(readers.iter().copied())
            .map(|reader| {
                let op = &op;
                async move { self.windows.call(reader, op).await.map(|_| ()) }
            })
            .buffer_unordered(self.config.fanout_concurrency)
            .collect()
            .await;
        if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
            return Err(e);
        }
        let (progress, next) = after_chunk(start, &followers, self.config.fanout_chunk);
        if self.config.test_hooks
            && next != Next::Done
            && outbox::take_fault(&self.db, &format!("fanout_after_chunk:{}", row.author_id)).await?
        {
            return Err(ApiError::Internal("injected fault after delivering a chunk".into()));
        }
        let now = now_ms();
        outbox::record_chunk(&self.db, row.id, progress, readers.len(), now).await?;
        match next {
            Next::Continue { after_follower_id } => {
                send(&self.env, std::iter::once(FanoutMessage { outbox_id: row.id, after_follower_id })).await
            }
            Next::Done => outbox::mark_done(&self.db, row, now).await,
        }
    }
}
