//! The feed read's I/O over the Worker's storage: [`StorageIo`] is `domain::read`'s [`FeedIo`],
//! running each step's parts at once (the window call, the hot-range cache lookups, the replica
//! reads and one batch per database, at most `MAX_PARALLEL_DATABASES` at a time). Each
//! statement a step describes becomes SQL on its database (`store` builders), and each answer
//! the rows the read takes back.

use std::cell::OnceCell;

use crate::store::{SqlResult, SqlStatement};
use futures_util::future::{join4, join_all};

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::plan::MAX_PARALLEL_DATABASES;
use crate::domain::read::{
    DbBatch, FeedIo, HotFound, OnFailure, ReplicaCall, ReplicaRows, Replies, Rows, SlabRows, Statement, Step,
};
use crate::domain::replica::{HeldPost, ReplicaAnswer, ReplicaOp, ReplicaQuery};
use crate::domain::window::{WindowOp, WindowReply};
use crate::error::{ApiError, ApiResult};
use crate::objects::replica::Replicas;
use crate::objects::timeline::Windows;
use crate::services::hot as services_hot;
use crate::services::tally;
use crate::store::feed as pull;
use crate::store::liked;
use crate::store::posts::{self, AuthorRelationship, PostRow};
use crate::store::AnyDb;
use crate::store::{batch, conversations};

/// One feed read's I/O, for `viewer`.
pub struct StorageIo<'a> {
    ctx: &'a Ctx,
    viewer: UserId,
    /// The window objects' binding, made by the first step that calls the window.
    windows: OnceCell<Windows>,
}

impl<'a> StorageIo<'a> {
    pub fn new(ctx: &'a Ctx, viewer: UserId) -> Self {
        Self { ctx, viewer, windows: OnceCell::new() }
    }

    fn windows(&self) -> ApiResult<&Windows> {
        if let Some(windows) = self.windows.get() {
            return Ok(windows);
        }
        let windows = Windows::new(self.ctx)?;
        Ok(self.windows.get_or_init(|| windows))
    }
}

impl FeedIo<PostRow> for StorageIo<'_> {
    type Error = ApiError;

    /// Runs everything of one step at once.
    async fn run(&self, step: Step) -> ApiResult<Replies<PostRow>> {
        let windows = if step.window.is_some() { Some(self.windows()?) } else { None };
        run_step(self.ctx, windows, self.viewer, step).await
    }
}

/// Everything of one step at once: the window call, the hot-range lookups, the replica reads
/// and the batches.
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
                if let Ok((Some(reply), _)) = &reply {
                    let written = ctx.io.window_rows_written.get() + reply.rows_written as u64;
                    ctx.io.window_rows_written.set(written);
                    if ctx.config.profile_io {
                        profile_page_read(op, reply);
                    }
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

/// A step's replica reads: one call per digest however many hot authors the step reads (the
/// reader's calls all name the reader's digest), each author's answer back in its call's place.
/// A digest that fails or does not answer within `REPLICA_READ_TIMEOUT_MS` answers `None` for
/// each of its authors, as does an author it could not make current (the read takes those
/// from D1).
async fn run_replicas(ctx: &Ctx, calls: &[ReplicaCall]) -> Vec<Option<ReplicaRows<PostRow>>> {
    if calls.is_empty() {
        return Vec::new();
    }
    let Ok(objects) = Replicas::new(&ctx.env, ctx.io.clone()) else { return vec![None; calls.len()] };
    let timeout = ctx.config.replica.read_timeout_ms;
    let groups = by_digest(calls);
    let answers = join_all(groups.iter().map(|(digest, places)| {
        let reads = places.iter().map(|&i| (calls[i].author, calls[i].query.clone())).collect();
        read_digest(&objects, *digest, reads, timeout)
    }))
    .await;
    let mut out = vec![None; calls.len()];
    for ((_, places), answers) in groups.iter().zip(answers) {
        for (&i, answer) in places.iter().zip(answers) {
            out[i] = answer.and_then(|a| a.map_rows(|post: HeldPost| serde_json::from_str(&post.row).ok()));
        }
    }
    out
}

/// The calls' places grouped by the digest they name, in first-seen order.
fn by_digest(calls: &[ReplicaCall]) -> Vec<(u32, Vec<usize>)> {
    let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        match groups.iter_mut().find(|(digest, _)| *digest == call.replica) {
            Some((_, places)) => places.push(i),
            None => groups.push((call.replica, vec![i])),
        }
    }
    groups
}

/// One digest's answers to `reads`, in order (all `None` when it fails or is too slow).
async fn read_digest(
    objects: &Replicas,
    digest: u32,
    reads: Vec<(UserId, ReplicaQuery)>,
    timeout_ms: u64,
) -> Vec<Option<ReplicaAnswer>> {
    let n = reads.len();
    let op = ReplicaOp::Read { reads };
    match objects.call_within::<Vec<Option<ReplicaAnswer>>>(digest, &op, timeout_ms).await {
        Some(Ok(answers)) if answers.len() == n => {
            tally::add("replica_reads", 1);
            answers
        }
        Some(Ok(answers)) => {
            worker::console_error!("digest {digest} answered {} of {n} reads", answers.len());
            vec![None; n]
        }
        Some(Err(e)) => {
            worker::console_error!("digest {digest} unavailable: {e}");
            vec![None; n]
        }
        None => {
            tally::add("replica_reads_timed_out", 1);
            vec![None; n]
        }
    }
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
        b.statements.iter().map(|s| prepare(ctx, db, viewer, s)).collect::<ApiResult<Vec<_>>>()?;
    let results = batch(db, statements).await?;
    b.statements.iter().zip(&results).map(|(s, r)| rows(s, r)).collect()
}

/// The statement `statement` describes, on `db`, for `viewer`. The reader's own rows (edges,
/// activation) are on their home database, which the read's plan puts them in the batch of.
fn prepare(ctx: &Ctx, db: AnyDb<'_>, viewer: UserId, statement: &Statement) -> ApiResult<SqlStatement> {
    Ok(match statement {
        Statement::Edges { list, tags } => pull::edges_statement(ctx.user_db(viewer), viewer, *list, *tags),
        Statement::Activate => pull::activate_statement(ctx.user_db(viewer), viewer, ctx.now),
        Statement::Addressed { limit } => {
            conversations::addressed_statement(ctx.user_db(viewer), viewer, *limit)
        }
        Statement::Pulled { authors, bounds } => pull::pulled_statement(db, viewer, authors, *bounds),
        Statement::InFlight { reads, bounds } => pull::in_flight_statement(db, viewer, reads, *bounds),
        Statement::Hydrate { ids } => posts::feed_live_statement(db, viewer, ids),
        Statement::Relationships { authors } => posts::relationships(db, viewer, authors),
        Statement::HotAuthors { authors } => {
            pull::hot_authors_among(db, authors, ctx.config.hot_min_followers)
        }
        Statement::HotRange { author, below } => {
            pull::hot_range(db, *author, *below, ctx.config.hot_range_len)
        }
        Statement::Slab(slab) => pull::slab_statement(db, viewer, slab),
        Statement::LikedIn { lo, hi } => liked::liked_in_statement(ctx.user_db(viewer), viewer, (*lo, *hi)),
    }?)
}

#[derive(serde::Deserialize)]
struct HotAuthor {
    id: UserId,
    n: i64,
}

/// What `statement` answered.
fn rows(statement: &Statement, result: &SqlResult) -> ApiResult<Rows<PostRow>> {
    Ok(match statement {
        Statement::Edges { .. } => {
            let (edges, tags) = pull::edges_of(result)?;
            Rows::Edges(edges, tags)
        }
        Statement::Activate => Rows::Done,
        Statement::Pulled { .. } | Statement::InFlight { .. } | Statement::Hydrate { .. } => {
            Rows::Posts(result.results()?)
        }
        Statement::Slab(slab) if slab.rows == SlabRows::Posts => Rows::Posts(result.results()?),
        Statement::Slab(_) | Statement::HotRange { .. } | Statement::Addressed { .. } => {
            Rows::Entries(result.results()?)
        }
        Statement::Relationships { .. } => Rows::Relationships(
            result.results::<AuthorRelationship>()?.iter().map(AuthorRelationship::relation).collect(),
        ),
        Statement::LikedIn { .. } => Rows::Liked(liked::liked_of(result)?),
        Statement::HotAuthors { .. } => {
            Rows::HotAuthors(result.results::<HotAuthor>()?.into_iter().map(|a| (a.id, a.n)).collect())
        }
    })
}
