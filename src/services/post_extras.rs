//! A post's extras beyond publish, edit and delete (issue 42): its edit history, a viewer's
//! muted conversations and an author's pinned posts. Each act starts from the post as the viewer
//! may see it now (`services/posts.rs::visible`: 404 exactly like a post that does not exist).

use std::collections::HashSet;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::visibility::Visibility;
use crate::error::{ApiError, ApiResult};
use crate::services::{originals, posts};
use crate::store::edits::{self, Version};
use crate::store::post_marks::{self, Pinned};
use crate::store::posts::PostRow;

/// A post the viewer may see now and its earlier versions, oldest first (none: never edited in
/// what it shows). Who may read the post may read its history (Mastodon's rule).
pub async fn history(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<(PostRow, Vec<Version>)> {
    let post = posts::visible(ctx, viewer, id).await?;
    let versions = edits::versions(ctx.post_db(post.id), post.id).await?;
    Ok((post, versions))
}

/// The conversation a post belongs to: its thread's root (a post that replies to nothing is
/// its own root).
pub fn thread_of(post: &PostRow) -> PostId {
    post.thread_id.unwrap_or(post.id)
}

/// Mutes (`on`) or unmutes, for the viewer, the conversation of a post they may see; the post.
pub async fn mute_conversation(ctx: &Ctx, viewer: UserId, id: PostId, on: bool) -> ApiResult<PostRow> {
    let post = posts::visible(ctx, viewer, id).await?;
    post_marks::set_mute(ctx.user_db(viewer), viewer, thread_of(&post), on, ctx.now).await?;
    Ok(post)
}

/// Pins (`on`) or unpins one of the viewer's own posts: not a boost, not a direct post
/// (Mastodon's rules, `422`), at most [`post_marks::MAX_PINS`] (`422` beyond). Unpinning asks
/// only that it is theirs.
pub async fn pin(ctx: &Ctx, viewer: UserId, id: PostId, on: bool) -> ApiResult<PostRow> {
    let post = posts::entry(ctx, viewer, id).await?;
    if post.author_id != viewer {
        return Err(ApiError::field("id", "only one's own posts may be pinned"));
    }
    if on && post.reblog_of.is_some() {
        return Err(ApiError::field("id", "a boost may not be pinned"));
    }
    if on && post.visibility == Visibility::Private {
        return Err(ApiError::field("id", "a direct post may not be pinned"));
    }
    match post_marks::set_pin(ctx.user_db(viewer), viewer, post.id, on, ctx.now).await? {
        Pinned::Yes => Ok(post),
        Pinned::Full => Err(ApiError::field("id", "at most 5 posts may be pinned")),
    }
}

/// The posts `author` pinned that the viewer may see now, most recently pinned first.
pub async fn pinned(ctx: &Ctx, viewer: UserId, author: UserId) -> ApiResult<Vec<PostRow>> {
    let ids = post_marks::pinned(ctx.user_db(author), author).await?;
    let mut rows = originals::visible_among(ctx, viewer, &ids).await?;
    rows.sort_by_key(|p| ids.iter().position(|id| *id == p.id));
    Ok(rows)
}

/// The viewer's marks on a page's posts (each row's shown post): the muted conversations and,
/// of their own posts, the pinned ones.
#[derive(Debug, Default)]
pub struct PostMarks {
    muted_threads: HashSet<PostId>,
    pinned: HashSet<PostId>,
}

impl PostMarks {
    pub fn muted(&self, post: &PostRow) -> bool {
        self.muted_threads.contains(&thread_of(post))
    }

    pub fn pinned(&self, id: PostId) -> bool {
        self.pinned.contains(&id)
    }
}

/// [`PostMarks`] of `rows` for the viewer: one statement on their home.
pub async fn marks(ctx: &Ctx, viewer: UserId, rows: &[PostRow]) -> ApiResult<PostMarks> {
    let shown = rows.iter().map(PostRow::shown);
    let threads: Vec<PostId> = shown.clone().map(thread_of).collect();
    let own: Vec<PostId> = shown.filter(|p| p.author_id == viewer).map(|p| p.id).collect();
    let (muted_threads, pinned) = post_marks::among(ctx.user_db(viewer), viewer, &threads, &own).await?;
    Ok(PostMarks { muted_threads, pinned })
}
