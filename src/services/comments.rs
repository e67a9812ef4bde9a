//! Comments: the `/v1` comments API as a view of a post's replies. A comment written now is a
//! reply post (`services/replies.rs`): the commenter's post, with its parent's visibility,
//! addressed to the account it answers, listed in its thread's rows (`store/engagement.rs`).
//! Comments of the old kind (rows on the commented post's database, written before replies
//! were posts) are still read, liked and deleted here until they are moved into posts.
//!
//! An old comment's like notifies nobody: its recipient (the comment's author) lives on their
//! own home database, not the post's, so the notification could not commit in the like's batch
//! (ARCHITECTURE invariant 13); a reply post's like notifies as any post's.

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::ids::{CommentId, PostId, UserId};
use crate::domain::quotes::QuotePolicy;
use crate::domain::validate::{CommentBody, IdempotencyKey, PostBody};
use crate::domain::visibility::may_see_author;
use crate::domain::warning::{ContentWarning, WarningEdit};
use crate::error::{ApiError, ApiResult};
use crate::services::posts::Draft;
use crate::services::{likes, posts, replies, users};
use crate::store::engagement::{self as store, CommentRow};
use crate::store::posts::{PostRow, ReplyTo};
use crate::store::users::{UserKey, UserRow};
use crate::store::{comment_likes, comment_moves};

const NO_SUCH_COMMENT: ApiError = ApiError::NotFound("no such comment");

/// A live comment on a live post (as `viewer` sees it: whether they like it), or 404. A row
/// that mirrors a reply post is no comment to act on: the post is (`/v1/posts/{id}`).
pub async fn get(ctx: &Ctx, viewer: UserId, id: CommentId) -> ApiResult<CommentRow> {
    store::get(&ctx.shards, viewer, id).await?.filter(|c| !c.reply_post).ok_or(NO_SUCH_COMMENT)
}

/// A comment's post hidden from the viewer hides the comment: the same 404 as a missing one.
fn hidden(e: ApiError) -> ApiError {
    match e {
        ApiError::NotFound(_) => NO_SUCH_COMMENT,
        e => e,
    }
}

/// A comment the viewer may see, with its post: the post visible to them and the comment's
/// author someone they may see (no block either way, not suspended), as in the post's comment
/// list; else 404 as if it did not exist.
pub async fn seen(ctx: &Ctx, viewer: UserId, id: CommentId) -> ApiResult<(CommentRow, PostRow)> {
    let comment = get(ctx, viewer, id).await?;
    let post = posts::visible(ctx, viewer, comment.post_id).await.map_err(hidden)?;
    let author = users::get_with_relationship(ctx, viewer, UserKey::Id(comment.author_id)).await?;
    if !author.is_some_and(|(_, rel)| may_see_author(rel)) {
        return Err(NO_SUCH_COMMENT);
    }
    Ok((comment, post))
}

/// Who likes a comment the viewer may see (else 404), newest like first, after `before`.
pub async fn likers(
    ctx: &Ctx,
    viewer: UserId,
    id: CommentId,
    before: Option<SortKey>,
    limit: usize,
) -> ApiResult<Vec<UserRow>> {
    seen(ctx, viewer, id).await?;
    Ok(comment_likes::likers(&ctx.shards, viewer, id, before, limit).await?)
}

/// Likes (`on`) or unlikes a comment the viewer may see (idempotent: the like is one row); the
/// comment with its exact count, and its post.
pub async fn set_like(
    ctx: &Ctx,
    viewer: UserId,
    id: CommentId,
    on: bool,
) -> ApiResult<(CommentRow, PostRow)> {
    let (comment, post) = seen(ctx, viewer, id).await?;
    let count =
        comment_likes::set(ctx.comment_db(id), id, viewer, on, ctx.now).await?.ok_or(NO_SUCH_COMMENT)?;
    Ok((CommentRow { like_count: count, liked_by_me: on, ..comment }, post))
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
    let comment = get(ctx, viewer, id).await?;
    posts::open(ctx, viewer, comment.post_id).await.map_err(hidden)?;
    if comment.author_id != viewer {
        return Err(ApiError::Forbidden {
            code: "not_author",
            detail: "only the author may change this reply",
        });
    }
    store::edit(ctx.comment_db(id), id, text, warning, ctx.now).await?;
    get(ctx, viewer, id).await
}

/// By the comment's author (also once its post is taken down or hidden from them) or the post's
/// author; others who can see it get 403. The comment as it was. A deleted post's comments are
/// 404 for this as for every other operation on them, and stay as they are.
pub async fn remove(ctx: &Ctx, viewer: UserId, id: CommentId) -> ApiResult<CommentRow> {
    // A post deleted between this read and the batch orders this delete before it, which
    // nobody can tell apart: the post's deletion hides its comments and touches none.
    let comment = get(ctx, viewer, id).await?;
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

/// What a comment id names: a reply post (every comment since replies are posts), or a comment
/// of the old kind.
pub enum Comment {
    Reply(PostRow),
    Old(CommentRow),
}

/// Comments on a post (or reply, or old comment) the viewer may see and act on: their reply
/// post, as wide as what it answers (and no wider), its mentions parsed with `domain`.
pub async fn add(
    ctx: &Ctx,
    viewer: UserId,
    on: PostId,
    text: &PostBody,
    domain: &str,
    key: Option<&IdempotencyKey>,
) -> ApiResult<PostRow> {
    let target = reply_target(ctx, viewer, on).await?;
    let draft = Draft {
        text,
        visibility: target.widest,
        unlisted: false,
        warning: &ContentWarning::default(),
        media: &[],
        domain,
        allowed_mentions: None,
        quote: None,
        quote_policy: QuotePolicy::default(),
        reply: Some(target),
        poll: None,
    };
    posts::publish(ctx, viewer, &draft, key).await
}

/// The comment `id` names as the viewer may see it now (an old comment: as it is, for the
/// caller's own checks), or 404. A post that is no reply, or a boost, is no comment.
async fn named(ctx: &Ctx, viewer: UserId, id: CommentId) -> ApiResult<Comment> {
    let as_reply = |post: PostRow| match post.thread_id.is_some() && post.reblog_of.is_none() {
        true => Ok(Comment::Reply(post)),
        false => Err(NO_SUCH_COMMENT),
    };
    match posts::entry(ctx, viewer, PostId::from_trusted(id.get())).await {
        Ok(post) => as_reply(post),
        Err(ApiError::NotFound(_)) => match get(ctx, viewer, id).await {
            Err(ApiError::NotFound(_)) => match moved(ctx, id).await? {
                Some(reply) => as_reply(posts::entry(ctx, viewer, reply).await?),
                None => Err(NO_SUCH_COMMENT),
            },
            old => Ok(Comment::Old(old?)),
        },
        Err(e) => Err(e),
    }
}

/// Where a comment of the old kind moved (its reply post, `services/comment_moves.rs`), if it
/// did: ids clients held before the move still name it.
pub async fn moved(ctx: &Ctx, id: CommentId) -> ApiResult<Option<PostId>> {
    Ok(comment_moves::moved_to(ctx.comment_db(id), id.get()).await?)
}

/// Likes (`on`) or unlikes a comment the viewer may see (idempotent); the comment with its
/// exact count.
pub async fn like(ctx: &Ctx, viewer: UserId, id: CommentId, on: bool) -> ApiResult<Comment> {
    match named(ctx, viewer, id).await? {
        Comment::Reply(mut reply) => {
            let now = likes::set_like(ctx, viewer, reply.id, on, None).await?;
            (reply.like_count, reply.liked_by_me) = (now.like_count, i64::from(now.liked));
            Ok(Comment::Reply(reply))
        }
        Comment::Old(old) => Ok(Comment::Old(set_like(ctx, viewer, old.id, on).await?.0)),
    }
}

/// Deletes a comment: by its author, or by the author of the post it comments on (a reply
/// post: the thread's root), as the comments API always allowed.
pub async fn delete(ctx: &Ctx, viewer: UserId, id: CommentId) -> ApiResult<()> {
    match named(ctx, viewer, id).await? {
        Comment::Reply(reply) if reply.author_id == viewer => {
            posts::delete(ctx, viewer, reply.id).await?;
        }
        Comment::Reply(reply) => {
            posts::delete_in_own_thread(ctx, viewer, reply).await?;
        }
        Comment::Old(old) => {
            remove(ctx, viewer, old.id).await?;
        }
    }
    Ok(())
}

/// Admin: imports `author`'s comment on `post` with its original time: their reply post (no
/// notification: `domain/replies.rs::notifies`). The author must exist and be able to reply
/// to the post (else a 422 on `author_id` or `post_id`).
pub async fn import(
    ctx: &Ctx,
    post: PostId,
    author: UserId,
    text: &PostBody,
    created_at: i64,
) -> ApiResult<PostRow> {
    users::visible(ctx, author, author).await.map_err(|_| ApiError::field("author_id", "no such user"))?;
    let target = reply_target(ctx, author, post).await.map_err(|e| match e {
        ApiError::NotFound(_) => ApiError::field("post_id", "no such post"),
        e => e,
    })?;
    let reply = Some(target);
    posts::import(ctx, author, (text, target.widest), created_at, reply, || Ok(None)).await
}

/// The status `id` names as a reply's parent, which the viewer must see and may act on (else
/// 404, as a missing one): a post (a boost's id names its original), a reply post, or a comment
/// of the old kind.
pub async fn reply_target(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<replies::Target> {
    match posts::open(ctx, viewer, id).await {
        Ok(post) => return post_target(ctx, viewer, post).await,
        Err(ApiError::NotFound(_)) => {}
        Err(e) => return Err(e),
    }
    let old = CommentId::from_trusted(id.get());
    let (comment, post) = match seen(ctx, viewer, old).await {
        Err(ApiError::NotFound(_)) => match moved(ctx, old).await? {
            Some(reply) => return post_target(ctx, viewer, posts::open(ctx, viewer, reply).await?).await,
            None => return Err(NO_SUCH_COMMENT),
        },
        seen => seen?,
    };
    posts::open(ctx, viewer, post.id).await?;
    let to = ReplyTo { parent: comment.id.get(), parent_author: comment.author_id, root: post.id };
    Ok(replies::Target { to, widest: post.visibility })
}

/// A post (or reply post) the viewer may act on, as a reply's parent.
async fn post_target(ctx: &Ctx, viewer: UserId, post: PostRow) -> ApiResult<replies::Target> {
    let root = post.thread_id.unwrap_or(post.id);
    if root != post.id {
        // The thread's root takes the reply's row: it must still take replies.
        posts::open(ctx, viewer, root).await?;
    }
    let to = ReplyTo { parent: post.id.get(), parent_author: post.author_id, root };
    Ok(replies::Target { to, widest: post.visibility })
}

/// The rows the viewer may see: a row that mirrors a reply post is shown only if the reply post
/// is visible to the viewer now (it may be narrower than its thread, or its author blocked), and
/// as the post is now (its text, warning and likes are the post's). With them, the reply posts
/// shown (for a caller that renders them as posts). One read across the databases of the page's
/// reply posts, none without any.
pub async fn visible_rows(
    ctx: &Ctx,
    viewer: UserId,
    rows: Vec<CommentRow>,
) -> ApiResult<(Vec<CommentRow>, Vec<PostRow>)> {
    let ids: Vec<PostId> =
        rows.iter().filter(|c| c.reply_post).map(|c| PostId::from_trusted(c.id.get())).collect();
    if ids.is_empty() {
        return Ok((rows, Vec::new()));
    }
    let shown = crate::services::originals::visible_among(ctx, viewer, &ids).await?;
    let rows = rows
        .into_iter()
        .filter_map(|c| {
            if !c.reply_post {
                return Some(c);
            }
            let post = shown.iter().find(|p| p.id.get() == c.id.get())?;
            Some(CommentRow {
                body: post.body.clone(),
                spoiler_text: post.spoiler_text.clone(),
                sensitive: post.is_sensitive(),
                edited_at: post.edited_at,
                like_count: post.like_count,
                liked_by_me: post.liked_by_me != 0,
                ..c
            })
        })
        .collect();
    Ok((rows, shown))
}
