//! Likes: only a viewer who may see a post can like it; the post's `PostLikes` object then
//! serializes the write (see `objects/post_likes.rs`).

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::likes::{LikeOp, LikeReply};
use crate::error::{ApiError, ApiResult};
use crate::objects::post_likes::Likes;
use crate::store::posts;

pub async fn set_like(
    ctx: &Ctx,
    viewer: UserId,
    post_id: PostId,
    like: bool,
    seq: Option<i64>,
) -> ApiResult<LikeReply> {
    posts::get_visible(&ctx.db, viewer, post_id).await?.ok_or(ApiError::NotFound("no such post"))?;
    Likes::new(ctx)?.set(LikeOp { post_id, user_id: viewer, like, seq, now: ctx.now }).await
}
