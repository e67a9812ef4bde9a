//! Comments: added on a post the viewer may see and act on, removed by the comment's author or
//! the post's, and the admin's import with an original time. A comment lives on its post's
//! database, where its notification for the post's author commits in the same batch.

use crate::context::{id_seed, Ctx};
use crate::domain::ids::{CommentId, PostId, UserId};
use crate::domain::validate::CommentBody;
use crate::domain::warning::{ContentWarning, WarningEdit};
use crate::error::{ApiError, ApiResult};
use crate::services::{posts, streaming, users};
use crate::store::engagement::{self as store, CommentRow};

/// A live comment on a live post, or 404.
pub async fn get(ctx: &Ctx, id: CommentId) -> ApiResult<CommentRow> {
    store::get(&ctx.shards, id).await?.ok_or(ApiError::NotFound("no such comment"))
}

/// Comments on a post the viewer may see and act on, as a reply to the post or to `parent`, one
/// of its comments (the caller found it on this post); the new comment.
pub async fn add(
    ctx: &Ctx,
    viewer: UserId,
    post: PostId,
    parent: Option<CommentId>,
    text: &CommentBody,
    warning: &ContentWarning,
) -> ApiResult<CommentRow> {
    posts::open(ctx, viewer, post).await?;
    let content = (text, warning);
    let db = ctx.post_db(post);
    let (id, notice) =
        store::create(db, post, parent, viewer, content, ctx.now, ctx.now, true, id_seed()?).await?;
    if let Some(notice) = notice {
        streaming::tell(ctx, notice).await;
    }
    get(ctx, id).await
}

/// Changes the viewer's own comment (text and/or warning) on a post they may still see and act
/// on; the comment as it is now. Someone else's is 403, as for posts.
pub async fn edit(
    ctx: &Ctx,
    viewer: UserId,
    id: CommentId,
    text: Option<&CommentBody>,
    warning: &WarningEdit,
) -> ApiResult<CommentRow> {
    let comment = get(ctx, id).await?;
    posts::open(ctx, viewer, comment.post_id).await.map_err(|e| match e {
        ApiError::NotFound(_) => ApiError::NotFound("no such comment"),
        e => e,
    })?;
    if comment.author_id != viewer {
        return Err(ApiError::Forbidden {
            code: "not_author",
            detail: "only the author may change this reply",
        });
    }
    store::edit(ctx.comment_db(id), id, text, warning, ctx.now).await?;
    get(ctx, id).await
}

/// By the comment's author (always, also once the post above is gone) or the post's author;
/// others who can see it get 403. The comment as it was.
pub async fn remove(ctx: &Ctx, viewer: UserId, id: CommentId) -> ApiResult<CommentRow> {
    let comment = store::get_own(&ctx.shards, id).await?.ok_or(ApiError::NotFound("no such comment"))?;
    // Its author and the post's author may always clean up; anyone else must still see the post.
    if comment.post_author_id != viewer && comment.author_id != viewer {
        posts::visible(ctx, viewer, comment.post_id)
            .await
            .map_err(|_| ApiError::NotFound("no such comment"))?;
        if comment.author_id != viewer {
            return Err(ApiError::Forbidden {
                code: "not_author",
                detail: "only the comment's author or the post's author may delete it",
            });
        }
    }
    store::delete(ctx.comment_db(comment.id), &comment, ctx.now).await?;
    Ok(comment)
}

/// Admin: imports `author`'s comment on `post` with its original time (no notification). The
/// author must exist and see the post (else a 422 on `author_id` or `post_id`).
pub async fn import(
    ctx: &Ctx,
    post: PostId,
    author: UserId,
    text: &CommentBody,
    created_at: i64,
) -> ApiResult<CommentRow> {
    users::visible(ctx, author, author).await.map_err(|_| ApiError::field("author_id", "no such user"))?;
    posts::visible(ctx, author, post).await.map_err(|_| ApiError::field("post_id", "no such post"))?;
    let content = (text, &ContentWarning::default());
    let (id, _) =
        store::create(ctx.post_db(post), post, None, author, content, created_at, ctx.now, false, id_seed()?)
            .await?;
    get(ctx, id).await
}
