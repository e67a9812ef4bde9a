//! Likes: the post's `PostLikes` object serializes the writes and commits them in groups (see
//! `objects/post_likes.rs`); whether the viewer may see the post is checked inside that commit,
//! and the liker's side (`liked_posts`) is written by the object too, so the Worker makes no
//! D1 round trip of its own around the object call.

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::likes::{LikeOp, LikeReply};
use crate::error::{ApiError, ApiResult};
use crate::objects::post_likes::Likes;
use crate::services::{originals, streaming};

pub async fn set_like(
    ctx: &Ctx,
    viewer: UserId,
    post_id: PostId,
    like: bool,
    seq: Option<i64>,
) -> ApiResult<LikeReply> {
    let op = LikeOp { post_id, user_id: viewer, like, seq, now: ctx.now };
    let (answer, liked) = match Likes::new(ctx)?.set(op).await? {
        Some(answer) => (answer, post_id),
        // A boost's id likes its original (as Mastodon): looked up only once the like missed.
        None => match originals::entry(ctx, viewer, post_id).await?.reblog_of {
            Some(original) => {
                let op = LikeOp { post_id: original, ..op };
                (Likes::new(ctx)?.set(op).await?.ok_or(ApiError::NotFound("no such post"))?, original)
            }
            None => return Err(ApiError::NotFound("no such post")),
        },
    };
    if let Some(notice) = answer.notice {
        streaming::tell(ctx, notice).await;
    }
    if answer.reply.applied && answer.reply.liked {
        index_favourite(ctx, viewer, liked).await;
    }
    Ok(answer.reply)
}

/// The favourite joins the liker's search scope after the answer, so the like waits no round
/// trip for it (best effort: a lost write costs only that search hit).
async fn index_favourite(ctx: &Ctx, viewer: UserId, post: PostId) {
    let env = ctx.env.clone();
    ctx.after_response(async move {
        let Ok(ctx) = Ctx::new(env) else { return };
        if let Ok(post) = originals::subject(&ctx, viewer, post).await {
            crate::services::search::index::saved(&ctx, viewer, &post).await;
        }
    })
    .await;
}
