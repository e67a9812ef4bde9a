//! Comments of the old kind move into reply posts (migration 0034), a bounded slice of each
//! database per reconciliation share (and, while a backlog lasts, a chain of slices on the
//! queue), so a deployment that had comments before replies were
//! posts ends with replies only: each old comment becomes its author's reply post (on their
//! database, at the comment's time, as visible as its post, answering what the comment
//! answered), with its likes, its place and count in the thread and its author's
//! notification; old ids held by clients are redirected to it (`services/comments.rs`).
//!
//! Each step is idempotent and ordered so that a pass stopped anywhere is finished by the next:
//! the post first (found again by `posts.moved_from`), the replies that answered the comment
//! pointed at it, then the thread's rows swapped in one batch (only while the comment is live:
//! a comment deleted meanwhile takes its post back), then the likes, page by page (a moved
//! comment refuses new likes, and one with likes left is found again by `comments_moving`).
//! The moved reply is old news: no fan-out, no notification.

use serde::Serialize;

use crate::context::Ctx;
use crate::domain::comment_moves::candidates;
use crate::domain::ids::PostId;
use crate::domain::queue::ReconcileDatabase;
use crate::domain::snowflake::shard_of_id;
use crate::error::ApiResult;
use crate::services::slice_chain::SliceChain;
use crate::store::comment_moves::{self as store, Moving, OldComment};
use crate::store::{engagement, AnyDb};

/// Comments moved per slice, and moved comments whose likes are copied per slice (a page of
/// likes each): about 35 D1 statements, so a reconciliation share stays under its bound
/// (`tests/reconcile`) with a slice in it.
const MOVES_PER_SLICE: usize = 2;
const LIKES_PER_SLICE: usize = 2;
const LIKES_PER_STEP: usize = 500;
/// The chain of slices a backlog of old comments runs on the queue.
const CHAIN: SliceChain =
    SliceChain { mark: "comment_moves_chain_at", stale_ms: 5 * 60_000, message: chain_message };

fn chain_message(database: usize) -> ReconcileDatabase {
    ReconcileDatabase {
        reconcile_database: database,
        replay_dead: false,
        comment_moves: true,
        scheduled: false,
    }
}

#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct CommentMoves {
    /// Comments moved into reply posts this pass.
    pub moved: usize,
    /// Comments of deleted posts marked never to move.
    pub retired: usize,
    /// Likes copied to the reply posts.
    pub likes_moved: usize,
    /// A slice was full: more may wait (a chain of slices drains them).
    #[serde(skip)]
    pub full: bool,
}

impl CommentMoves {
    pub fn add(&mut self, other: CommentMoves) {
        self.moved += other.moved;
        self.retired += other.retired;
        self.likes_moved += other.likes_moved;
        self.full |= other.full;
    }
}

/// One database's slice: its oldest unmoved comments, then the likes of moved ones. A full
/// slice (a backlog) starts a chain of slices on the queue if none runs.
pub async fn move_slice(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<CommentMoves> {
    let report = slice(ctx, db).await?;
    CHAIN.start_if_full(ctx, db, report.full).await?;
    Ok(report)
}

/// A chain's message: one slice, and the next message while the backlog lasts.
pub async fn chain_step(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<()> {
    let report = slice(ctx, db).await?;
    worker::console_log!("comment moves on DB_{}: {report:?}", db.index());
    CHAIN.continue_if_full(ctx, db, report.full).await
}

async fn slice(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<CommentMoves> {
    let mut report = CommentMoves::default();
    let (mut met, mut after) = (0, (i64::MIN, i64::MIN));
    // One at a time, each read fresh (a move re-points the comments answering the one moved,
    // which the next move must see), each after the last (one that failed is passed by).
    while met < MOVES_PER_SLICE {
        let Some(comment) = store::unmoved(db, after, 1).await?.into_iter().next() else { break };
        let comment = &comment;
        (met, after) = (met + 1, (comment.created_at, comment.id));
        if comment.root_deleted != 0 {
            store::retire(db, comment.id).await?;
            report.retired += 1;
        } else {
            // One comment that cannot move now (its author's database down) holds up no other,
            // nor the rest of the share; it is tried again by the next slice.
            match move_one(ctx, comment).await {
                Ok(moved) => report.moved += usize::from(moved),
                Err(e) => worker::console_error!("comment {} not moved: {e}", comment.id),
            }
        }
    }
    let moving = store::moving(db, LIKES_PER_SLICE).await?;
    for &comment in &moving {
        report.likes_moved += move_likes(ctx, db, comment).await?;
    }
    // A chain goes on while slices come back full and move something: one that moved nothing
    // (every comment it met failing) waits for the next pass instead of spinning.
    let progress = report.moved + report.retired + report.likes_moved > 0;
    report.full = progress && (met == MOVES_PER_SLICE || moving.len() == LIKES_PER_SLICE);
    Ok(report)
}

/// Moves one comment; whether it moved (not: it was deleted meanwhile, or every id its post
/// may take is taken, which a later pass tries again).
async fn move_one(ctx: &Ctx, comment: &OldComment) -> ApiResult<bool> {
    let Some(reply) = place(ctx, comment).await? else {
        worker::console_error!("comment {} not moved: its reply post's ids are taken", comment.id);
        return Ok(false);
    };
    let thread = ctx.post_db(comment.post_id);
    for answer in store::replies_to(thread, comment.post_id, comment.id).await? {
        store::repoint(ctx.post_db(answer), answer, comment.id, reply.get()).await?;
    }
    if !store::swap(thread, comment, reply.get(), ctx.now).await? {
        // Deleted meanwhile (or moved by an overlapping pass, which made this same post).
        if store::moved_to(thread, comment.id).await? != Some(reply) {
            store::unplace(ctx.user_db(comment.author_id), comment.id, reply.get(), ctx.now).await?;
        }
        return Ok(false);
    }
    Ok(true)
}

/// The comment's reply post, written (or found, written by an earlier attempt) under the first
/// of its candidate ids not taken by another post.
async fn place(ctx: &Ctx, comment: &OldComment) -> ApiResult<Option<PostId>> {
    let home = ctx.user_db(comment.author_id);
    for id in candidates(comment.id, shard_of_id(comment.author_id.get())) {
        if store::place(home, comment, id).await? {
            return Ok(Some(PostId::from_trusted(id)));
        }
    }
    Ok(None)
}

/// Copies a page of a moved comment's likes to its reply post and drops them from the comment;
/// the thread row's copy of the count follows. The likes copied.
async fn move_likes(ctx: &Ctx, db: AnyDb<'_>, moving: Moving) -> ApiResult<usize> {
    let likes = store::likes_of(db, moving.id, LIKES_PER_STEP).await?;
    let reply = moving.moved_to;
    let count = store::copy_likes(ctx.post_db(reply), reply, &likes, ctx.now).await?;
    store::drop_likes(db, moving.id, &likes).await?;
    let thread = crate::domain::ids::CommentId::from_trusted(moving.id);
    engagement::mirror_like_count(ctx.comment_db(thread), reply, count).await?;
    Ok(likes.len())
}
