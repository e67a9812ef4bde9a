//! Hot authors' replicas, the Worker's side (the rule and why it is exact: `domain/replica.rs`,
//! docs/hot-authors.md):
//! - [`tell`]: a change by a replicated author, after its D1 batch committed, goes to every
//!   digest (`HOT_DIGESTS`: each holds a replica of every hot author its readers read) before
//!   the change answers; a digest that did not acknowledge it in time costs the writer the rest
//!   of the lease, so that digest re-reads the author from D1 before answering for it again.
//! - [`directory`]: which authors have replicas, as this isolate last read it (a page reads a
//!   replicated author from its replicas, any other from D1; a stale copy only costs D1 reads,
//!   because an author is never un-replicated).
//! - [`promote_on`]: the reconciliation share gives replicas to authors of its database who
//!   crossed `HOT_REPLICA_FOLLOWERS`, and (re)registers them in the directory.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::replica::digest::DigestSize;
use crate::domain::replica::{replica_count, unacknowledged_wait_until, Applied, Change, Fault, ReplicaOp};
use crate::error::ApiResult;
use crate::objects::replica::{directory as directory_call, DirectoryOp, Replicas};
use crate::services::tally;
use crate::store::replica as store;
use crate::store::replica_bump::Bump;
use crate::store::AnyDb;

/// Clocks of the writer and the replicas may differ by this much (Cloudflare's machines keep
/// NTP time; this covers the rest).
const CLOCK_MARGIN_MS: i64 = 500;
/// Authors promoted per database per reconciliation share.
const PROMOTIONS_PER_SHARE: usize = 8;

pub type Directory = Rc<HashMap<UserId, u32>>;

thread_local! {
    /// This isolate's copy of the directory and when it was read.
    static DIRECTORY: RefCell<Option<(i64, Directory)>> = const { RefCell::new(None) };
}

/// The replicated authors and their replica counts, as this isolate knows them (re-read from
/// the directory object once its copy is older than `HOT_DIRECTORY_TTL_SECONDS`). Any failure
/// is an empty directory: every author read from D1, as without replicas.
pub async fn directory(ctx: &Ctx) -> Directory {
    if !ctx.config.replica.enabled() {
        return Directory::default();
    }
    let now = ctx.clock();
    let cached = DIRECTORY.with(|d| d.borrow().clone());
    if let Some((read_at, known)) = cached {
        if now < read_at + ctx.config.replica.directory_ttl_ms {
            return known;
        }
    }
    match directory_call(&ctx.env, &ctx.io, &DirectoryOp::List).await {
        Ok(list) => {
            // Every hot author is read from the reader's digest: what a page hashes its reader
            // over is the number of digests, whatever the author's recorded replica count.
            let digests = ctx.config.replica.digests;
            let known: Directory = Rc::new(list.into_iter().map(|(author, _)| (author, digests)).collect());
            DIRECTORY.with(|d| *d.borrow_mut() = Some((now, known.clone())));
            known
        }
        Err(e) => {
            worker::console_error!("hot directory unavailable: {e}");
            Directory::default()
        }
    }
}

/// Sends change `bump.seq` of `author` to every replica, then waits until each acknowledged it
/// or could no longer answer without re-reading D1. `sent_at`: the clock before the change's
/// batch was sent. No bump (the author has no replicas): nothing to do.
pub async fn tell(ctx: &Ctx, bump: Option<Bump>, sent_at: i64, change: Change) {
    let Some(Bump { author, seq, .. }) = bump else { return };
    let committed_by = ctx.clock();
    let acknowledged = match Replicas::new(&ctx.env, ctx.io.clone()) {
        Ok(objects) => {
            let op = ReplicaOp::Apply { author, seq, sent_at, change };
            let timeout = ctx.config.replica.write_timeout_ms;
            let writes =
                (0..ctx.config.replica.digests).map(|i| write_one(&objects, author, i, &op, timeout));
            join_all(writes).await.into_iter().all(|ok| ok)
        }
        Err(e) => {
            worker::console_error!("replicas of {author} unreachable: {e}");
            false
        }
    };
    if !acknowledged {
        tally::add("replica_writes_unacknowledged", 1);
        let until = unacknowledged_wait_until(committed_by, ctx.config.replica.lease_ms, CLOCK_MARGIN_MS);
        let wait = (until - ctx.clock()).max(0) as u64;
        worker::Delay::from(Duration::from_millis(wait)).await;
    }
}

/// [`tell`] a post's new state: its row as the replicas hold it, read after the change
/// committed (one statement on the author's database, only for replicated authors), or its
/// absence (deleted).
pub async fn tell_post(ctx: &Ctx, bump: Option<Bump>, sent_at: i64, post: PostId) -> ApiResult<()> {
    if bump.is_none() {
        return Ok(());
    }
    let change = match store::held_post(ctx.post_db(post), post).await? {
        Some(held) => Change::Post(held),
        None => Change::Gone(post),
    };
    tell(ctx, bump, sent_at, change).await;
    Ok(())
}

/// One replica's write, `false` unless acknowledged within `timeout_ms`.
async fn write_one(objects: &Replicas, author: UserId, i: u32, op: &ReplicaOp, timeout_ms: u64) -> bool {
    match objects.call_within::<Applied>(i, op, timeout_ms).await {
        Some(Ok(_)) => true,
        Some(Err(e)) => {
            worker::console_error!("digest {i} not written for {author}: {e}");
            false
        }
        None => {
            worker::console_error!("digest {i} not written for {author} in {timeout_ms} ms");
            false
        }
    }
}

/// Gives replicas to the authors of `db` who crossed the threshold, and registers every
/// replicated author of `db` in the directory (idempotent: a share that stopped between the
/// two is finished by the next). Returns how many were promoted.
pub async fn promote_on(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<usize> {
    let config = ctx.config.replica;
    if !config.enabled() {
        return Ok(0);
    }
    let mut promoted = 0;
    for candidate in store::promotion_candidates(db, config.min_followers, PROMOTIONS_PER_SHARE).await? {
        let replicas = replica_count(candidate.followers_count, config.followers_per_replica);
        promoted += usize::from(store::promote(ctx.user_db(candidate.id), candidate.id, replicas).await?);
    }
    let replicated: Vec<(UserId, u32)> =
        store::replicated(db).await?.into_iter().map(|r| (r.id, r.replicas)).collect();
    if !replicated.is_empty() {
        directory_call(&ctx.env, &ctx.io, &DirectoryOp::Add(replicated)).await?;
    }
    Ok(promoted)
}

/// Test hook: a fault on digest `digest` (every hot author its readers read); what the digest
/// held before it.
pub async fn fault(ctx: &Ctx, digest: u32, fault: Fault) -> ApiResult<DigestSize> {
    Replicas::new(&ctx.env, ctx.io.clone())?.call(digest, &ReplicaOp::Fault { fault }).await
}

/// Test hook: forgets this isolate's copy of the directory (a test that just promoted an
/// author reads it from replicas at once).
pub fn forget_directory() {
    DIRECTORY.with(|d| *d.borrow_mut() = None);
}
