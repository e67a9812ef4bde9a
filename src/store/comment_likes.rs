//! Comment likes (migration 0028): one row per (comment, liker) on the comment's post's
//! database, and the comment's `like_count` recomputed from those rows in the same batch.

use serde::Deserialize;

use super::graph::shown_user_page;
use super::shards::Shards;
use super::users::UserRow;
use super::StoreResult;
use super::{all, batch, int, stmt, EdgeKey, PostDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{CommentId, UserId};

#[derive(Deserialize)]
struct Counted {
    like_count: i64,
}

/// Likes (`on`) or unlikes a live comment (on a live post) for `user`, in one transaction: the
/// row is inserted if absent or deleted, then the count is recomputed from the rows, so a
/// retry, a duplicate or two racing requests never count twice. The count after, or `None`
/// when the comment or its post is gone (nothing written).
pub async fn set(
    db: PostDb<'_>,
    comment: CommentId,
    user: UserId,
    on: bool,
    now: i64,
) -> StoreResult<Option<i64>> {
    let write = if on {
        // The SELECT's WHERE also keeps `ON CONFLICT` from parsing as a join constraint.
        stmt(
            db,
            "INSERT INTO comment_likes (comment_id, user_id, post_id, created_at) \
             SELECT c.id, ?2, c.post_id, ?3 FROM comments c JOIN posts p ON p.id = c.post_id \
             WHERE c.id = ?1 AND c.deleted_at IS NULL AND p.deleted_at IS NULL \
             ON CONFLICT (comment_id, user_id) DO NOTHING",
            &[int(comment), int(user), int(now)],
        )?
    } else {
        stmt(
            db,
            "DELETE FROM comment_likes WHERE comment_id = ?1 AND user_id = ?2",
            &[int(comment), int(user)],
        )?
    };
    let count = stmt(
        db,
        "UPDATE comments SET like_count = (SELECT COUNT(*) FROM comment_likes WHERE comment_id = ?1) \
         WHERE id = ?1 AND deleted_at IS NULL \
           AND EXISTS (SELECT 1 FROM posts p WHERE p.id = comments.post_id AND p.deleted_at IS NULL) \
         RETURNING like_count",
        &[int(comment)],
    )?;
    let results = batch(db, vec![write, count]).await?;
    let rows: Vec<Counted> = results.get(1).map(|r| r.results()).transpose()?.unwrap_or_default();
    Ok(rows.first().map(|r| r.like_count))
}

/// Users who like the comment, newest like first, hiding users with a block either way with the
/// viewer and suspended users ([`shown_user_page`]). The likes are read by the primary key and
/// sorted: a comment's likes are few next to a post's, so they have no time index (one index
/// write less per like). Fetches `limit + 1` rows.
pub async fn likers(
    shards: &Shards,
    viewer: UserId,
    comment: CommentId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<UserRow>> {
    let db = shards.comment(comment);
    shown_user_page(shards, viewer, before, limit, |before, want| async move {
        all::<EdgeKey>(
            db,
            "SELECT user_id AS other, created_at AS sort_at FROM comment_likes \
             WHERE comment_id = ?1 AND (created_at, user_id) < (?2, ?3) \
             ORDER BY created_at DESC, user_id DESC LIMIT ?4",
            &[int(comment), int(before.primary), int(before.id), int(want as i64)],
        )
        .await
    })
    .await
}
