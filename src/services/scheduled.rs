//! Scheduled posts (Mastodon's `scheduled_at`, issue 42): schedule (checked by the rules a
//! publish checks, the uploads held), list, reschedule, cancel, and the cron's publish of the
//! due ones through the ordinary publish (`services/posts.rs::publish_scheduled`: the same
//! fan-out, notifications, mentions, polls and tags). Rules: `domain/scheduled.rs`; rows:
//! `store/scheduled.rs`.

use std::collections::HashMap;

use serde::Serialize;

use crate::context::{id_seed, Ctx};
use crate::domain::ids::{ScheduledId, UserId};
use crate::domain::media::Attachment;
use crate::domain::queue::ReconcileDatabase;
use crate::domain::scheduled::{StatusParams, StatusRequest, Stored};
use crate::domain::validate::IdempotencyKey;
use crate::error::{ApiError, ApiResult};
use crate::services::comments;
use crate::services::posts::{self, Draft};
use crate::services::slice_chain::SliceChain;
use crate::store::error::Conflict;
use crate::store::media as media_rows;
use crate::store::scheduled::{
    self as store, Bounds, DueRow, NewScheduled, Rescheduled, Scheduled, ScheduledRow,
};
use crate::store::{AnyDb, StoreError};

/// Due scheduled posts one slice publishes: each is a publish (~15 D1 statements with its
/// checks), so a slice stays well inside a share's statement bound and a queue batch of slices
/// inside D1's 1,000 statements per invocation. The cron share publishes one slice; a full one
/// (a backlog) starts a chain of slices on the queue, each its own invocation, until the due
/// ones are published: a post is late by up to the cron's minute, plus the chain's pace.
pub const PUBLISH_PER_SLICE: usize = 5;
/// The chain of slices a backlog of due posts runs on the queue.
const CHAIN: SliceChain =
    SliceChain { mark: "scheduled_chain_at", stale_ms: 2 * 60_000, message: chain_message };

fn chain_message(database: usize) -> ReconcileDatabase {
    ReconcileDatabase {
        reconcile_database: database,
        replay_dead: false,
        comment_moves: false,
        scheduled: true,
    }
}

const NOT_FOUND: ApiError = ApiError::NotFound("no such scheduled status");

/// A scheduled post as the API shows it: its row and the request it keeps.
pub struct Shown {
    pub row: ScheduledRow,
    pub params: StatusParams,
    /// The uploads it holds, in the request's order.
    pub media: Vec<Attachment>,
}

/// Schedules `author`'s checked request (`draft` is it with its reply target checked) for `at`
/// (`domain::scheduled::scheduled_at`). With `key`, a retry answers the row the first made.
pub async fn schedule(
    ctx: &Ctx,
    author: UserId,
    (request, draft): (&StatusRequest, &Draft<'_>),
    at: i64,
    key: Option<&IdempotencyKey>,
) -> ApiResult<Shown> {
    let stored = Stored { params: StatusParams::of(request), domain: draft.domain.to_owned() }.to_json();
    // A retry finds its row before the checks, which the first request's held uploads would fail.
    if let Some(row) = keyed(ctx, author, key).await? {
        return replayed(ctx, row, &stored).await;
    }
    posts::check(ctx, author, draft).await?;
    let new = NewScheduled {
        user: author,
        scheduled_at: at,
        params: &stored,
        idempotency: key.map(IdempotencyKey::as_str),
        media: &request.media,
        now: ctx.now,
    };
    match store::insert(ctx.user_db(author), &new, id_seed()?).await {
        Ok(Scheduled::New(row)) => shown(ctx, row).await,
        Ok(Scheduled::Keyed(row)) => replayed(ctx, row, &stored).await,
        Ok(Scheduled::Full(full)) => Err(full.refusal().into()),
        Err(StoreError::Conflict { reason: Conflict::MediaAttached, .. }) => Err(ApiError::field(
            "media_ids",
            "media_ids: an upload named is attached to another status or has expired: upload it again",
        )),
        Err(e) => Err(e.into()),
    }
}

async fn keyed(ctx: &Ctx, author: UserId, key: Option<&IdempotencyKey>) -> ApiResult<Option<ScheduledRow>> {
    match key {
        Some(key) => Ok(store::by_key(ctx.user_db(author), author, key.as_str()).await?),
        None => Ok(None),
    }
}

/// The row an earlier request under the same key scheduled: the same request is answered by
/// it (as it is now), another one refused as a publish under a reused key is.
async fn replayed(ctx: &Ctx, row: ScheduledRow, stored: &str) -> ApiResult<Shown> {
    if row.params != stored {
        return Err(ApiError::Conflict {
            code: "idempotency_key_reused",
            detail: "this Idempotency-Key was already used for a different request",
        });
    }
    shown(ctx, row).await
}

/// One of the viewer's scheduled posts, or 404 (also for anyone else's id).
pub async fn get(ctx: &Ctx, viewer: UserId, id: ScheduledId) -> ApiResult<Shown> {
    let row = store::get(ctx.user_db(viewer), viewer, id.get()).await?.ok_or(NOT_FOUND)?;
    shown(ctx, row).await
}

/// A page of the viewer's scheduled posts by id, newest scheduling first (oldest first above
/// `min` with `oldest_first`, which the caller reverses).
pub async fn page(ctx: &Ctx, viewer: UserId, bounds: Bounds, limit: usize) -> ApiResult<Vec<Shown>> {
    let rows = store::page(ctx.user_db(viewer), viewer, bounds, limit).await?;
    with_media(ctx, viewer, rows).await
}

/// Moves one of the viewer's scheduled posts to `at` (checked as a schedule's time is, and
/// against that day's limit).
pub async fn reschedule(ctx: &Ctx, viewer: UserId, id: ScheduledId, at: i64) -> ApiResult<Shown> {
    match store::reschedule(ctx.user_db(viewer), viewer, id.get(), at).await? {
        Rescheduled::Done(row) => shown(ctx, row).await,
        Rescheduled::Missing => Err(NOT_FOUND),
        Rescheduled::Full(full) => Err(full.refusal().into()),
    }
}

/// Cancels one of the viewer's scheduled posts; its uploads are theirs to attach again.
pub async fn cancel(ctx: &Ctx, viewer: UserId, id: ScheduledId) -> ApiResult<()> {
    if store::remove(ctx.user_db(viewer), viewer, id.get()).await? {
        Ok(())
    } else {
        Err(NOT_FOUND)
    }
}

async fn shown(ctx: &Ctx, row: ScheduledRow) -> ApiResult<Shown> {
    let user = row.user_id;
    let mut shown = with_media(ctx, user, vec![row]).await?;
    shown.pop().ok_or(NOT_FOUND)
}

/// The rows with their params and held uploads (one read for all of them).
async fn with_media(ctx: &Ctx, user: UserId, rows: Vec<ScheduledRow>) -> ApiResult<Vec<Shown>> {
    let parsed: Vec<(ScheduledRow, StatusParams)> = rows
        .into_iter()
        .filter_map(|row| Some((Stored::from_json(&row.params)?.params, row)))
        .map(|(params, row)| (row, params))
        .collect();
    let wanted: Vec<i64> = parsed.iter().flat_map(|(_, p)| media_ids(p)).collect();
    let held: HashMap<i64, _> = match wanted.is_empty() {
        true => HashMap::new(),
        false => media_rows::of_user(ctx.user_db(user), user, &wanted)
            .await?
            .into_iter()
            .map(|m| (m.id.get(), m))
            .collect(),
    };
    let mut shown = Vec::with_capacity(parsed.len());
    for (row, params) in parsed {
        let media = media_ids(&params)
            .filter_map(|id| held.get(&id).filter(|m| m.scheduled_id == Some(row.id)))
            .map(|m| m.attachment())
            .collect::<Result<Vec<_>, _>>()?;
        shown.push(Shown { row, params, media });
    }
    Ok(shown)
}

fn media_ids(params: &StatusParams) -> impl Iterator<Item = i64> + '_ {
    params.media_ids.iter().flatten().filter_map(|id| id.parse().ok())
}

/// What one cron share did with the due scheduled posts of its database.
#[derive(Debug, Default, Serialize)]
pub struct ScheduledPass {
    pub published: usize,
    /// Not published: the author suspended or gone, or the request refused now (its parent
    /// deleted, an upload gone, a block): the row deleted, its uploads let go.
    pub dropped: usize,
    /// Left for the next pass (a storage failure, a frozen shard).
    pub waiting: usize,
    /// The slice was full: more may be due.
    #[serde(skip)]
    pub more: bool,
}

impl ScheduledPass {
    pub fn add(&mut self, other: ScheduledPass) {
        self.published += other.published;
        self.dropped += other.dropped;
        self.waiting += other.waiting;
    }
}

enum Outcome {
    Published,
    Dropped,
    /// Gone before this pass got to it: published by another pass, or cancelled.
    Gone,
}

/// The cron share's step: one slice of `db`'s due posts; a full one starts a chain of slices
/// on the queue if none runs.
pub async fn publish_due(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<ScheduledPass> {
    let pass = slice(ctx, db).await?;
    CHAIN.start_if_full(ctx, db, pass.more).await?;
    Ok(pass)
}

/// A chain's message: one slice, and the next message while due posts remain.
pub async fn chain_step(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<()> {
    let pass = slice(ctx, db).await?;
    worker::console_log!("scheduled posts on DB_{}: {pass:?}", db.index());
    CHAIN.continue_if_full(ctx, db, pass.more).await
}

/// Up to [`PUBLISH_PER_SLICE`] due posts of `db`, the longest due first, one after another.
async fn slice(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<ScheduledPass> {
    let held = ctx.shard_map().shards_on(db.index());
    let due = store::due(db, ctx.now, &held, PUBLISH_PER_SLICE).await?;
    let mut pass = ScheduledPass::default();
    for row in &due {
        match publish_one(ctx, db, row).await {
            Ok(Outcome::Published) => pass.published += 1,
            Ok(Outcome::Dropped) => pass.dropped += 1,
            Ok(Outcome::Gone) => {}
            Err(e) => {
                worker::console_error!("scheduled status {}: {e}; the next pass retries", row.id);
                pass.waiting += 1;
            }
        }
    }
    // More may be due; a slice that only met failures waits for the next pass instead.
    pass.more = due.len() == PUBLISH_PER_SLICE && pass.waiting < due.len();
    Ok(pass)
}

async fn publish_one(ctx: &Ctx, db: AnyDb<'_>, row: &DueRow) -> ApiResult<Outcome> {
    let author = row.user_id;
    let stored = Stored::from_json(&row.params);
    let request = stored.as_ref().map(|s| s.params.request());
    let (Some(stored), Some(Ok(request)), true) = (&stored, request, row.author_may_post()) else {
        return dropped(db, row, "its author is suspended or gone, or its params unreadable").await;
    };
    let published = async {
        let reply = match request.in_reply_to {
            Some(id) => Some(comments::reply_target(ctx, author, id).await?),
            None => None,
        };
        let draft = Draft::of(&request, &stored.domain, reply);
        posts::publish_scheduled(ctx, author, &draft, row.id).await
    };
    match published.await {
        Ok(_) => Ok(Outcome::Published),
        Err(e) if refused(&e) => dropped(db, row, &e.to_string()).await,
        // The publish batch aborts when the row went meanwhile (another pass published it, or
        // its author cancelled it): that is no failure. Anything else waits for the next pass.
        Err(e) => match store::exists(ctx.user_db(author), author, row.id).await? {
            true => Err(e),
            false => Ok(Outcome::Gone),
        },
    }
}

async fn dropped(db: AnyDb<'_>, row: &DueRow, why: &str) -> ApiResult<Outcome> {
    if !store::drop_due(db, row.user_id, row.id).await? {
        return Ok(Outcome::Gone);
    }
    worker::console_log!("scheduled status {} of {} not published: {why}", row.id, row.user_id);
    Ok(Outcome::Dropped)
}

/// Whether a publish's failure is a refusal of the request as things are now (it will not
/// pass later either), rather than a failure to store it.
fn refused(e: &ApiError) -> bool {
    matches!(
        e,
        ApiError::InvalidField { .. }
            | ApiError::InvalidJson(_)
            | ApiError::NotFound(_)
            | ApiError::Forbidden { .. }
            | ApiError::Conflict { .. }
            | ApiError::InvalidToken(_)
            | ApiError::Suspended
    )
}
