//! A user's saved posts: bookmarks (`bookmarks`) and favourites (`liked_posts`, the liker's side
//! of likes), both on the user's home database, newest first. The rows name posts on other
//! databases; a page reads them there, grouped by database (one statement each, side by side),
//! and shows only what the viewer may see *now*, as a feed does: a deleted or taken-down post,
//! an author blocked either way or suspended, a followers-only post without the follow, are
//! left out (the rows stay: a restored post or a lifted block shows again).

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};
use crate::error::ApiResult;
use crate::services::{originals, posts};
use crate::store::bookmarks::{self, SavedRow};
use crate::store::liked;
use crate::store::posts::PostRow;

/// Reads of the list one page makes at most while the posts it finds are hidden.
const PAGE_READS: usize = 4;

/// Which list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    Bookmarks,
    Favourites,
}

impl Saved {
    /// The name its signed cursors are bound to.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bookmarks => "bookmarks",
            Self::Favourites => "favourites",
        }
    }
}

/// A page of shown posts with when each was saved, and the key of the last row scanned when
/// more may follow (invariant 5: a page whose rows were all hidden still moves on).
pub struct SavedPage {
    pub items: Vec<(PostRow, SortKey)>,
    pub next: Option<SortKey>,
}

/// Bookmarks a post the viewer may see (404 otherwise, like a missing one), or removes the
/// bookmark; idempotent. The post as the viewer sees it.
pub async fn set_bookmark(ctx: &Ctx, viewer: UserId, id: PostId, on: bool) -> ApiResult<PostRow> {
    let post = posts::visible(ctx, viewer, id).await?;
    // shard: the viewer's home, where their bookmarks live.
    bookmarks::set(ctx.user_db(viewer), viewer, post.id, on, ctx.now).await?;
    if on {
        crate::services::search::index::saved(ctx, viewer, &post).await;
    }
    Ok(post)
}

/// Up to `limit` shown posts of the list strictly below `before`, newest saved first.
pub async fn page(
    ctx: &Ctx,
    viewer: UserId,
    which: Saved,
    mut before: Option<SortKey>,
    limit: usize,
) -> ApiResult<SavedPage> {
    let db = ctx.user_db(viewer);
    let mut items = Vec::with_capacity(limit);
    for _ in 0..PAGE_READS {
        let want = limit - items.len();
        let rows = match which {
            Saved::Bookmarks => bookmarks::page(db, viewer, before, want).await?,
            Saved::Favourites => liked::page(db, viewer, before, want).await?,
        };
        let full = rows.len() == want;
        before = rows.last().map(SavedRow::sort_key);
        items.extend(shown(ctx, viewer, &rows).await?);
        if !full || items.len() >= limit {
            return Ok(SavedPage { items, next: before.filter(|_| full) });
        }
    }
    Ok(SavedPage { items, next: before })
}

/// The rows' posts the viewer may see now, in the rows' order, each with its saved key.
async fn shown(ctx: &Ctx, viewer: UserId, rows: &[SavedRow]) -> ApiResult<Vec<(PostRow, SortKey)>> {
    let ids: Vec<PostId> = rows.iter().map(|r| r.post_id).collect();
    let posts = originals::visible_among(ctx, viewer, &ids).await?;
    Ok(rows
        .iter()
        .filter_map(|r| posts.iter().find(|p| p.id == r.post_id).map(|p| (p.clone(), r.sort_key())))
        .collect())
}
