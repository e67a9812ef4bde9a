//! Likers and comments: the lists, comment writes, and count reconciliation.

use serde::Deserialize;

use super::snowflake::insert_with_fresh_id;
use super::users::{shown_to_viewer, UserRow, USER_COLUMNS};
use super::{all, batch, first, first_id, int, stmt, text, Db, IdRow};
use crate::domain::cursor::{Order, SortKey};
use crate::domain::ids::snowflake_time;
use crate::domain::ids::{CommentId, PostId, UserId};
use crate::domain::shard::shard_of_id;
use crate::domain::validate::CommentBody;
use crate::error::ApiResult;

/// Users who like the post now, newest like first, hiding users with a block either way with
/// the viewer. Fetches `limit + 1` rows.
pub async fn likers(
    db: &Db,
    viewer: UserId,
    post: PostId,
    before: Option<SortKey>,
    limit: usize,
) -> ApiResult<Vec<UserRow>> {
    let before = before.unwrap_or(SortKey::TOP);
    let sql = format!(
        "SELECT {USER_COLUMNS}, l.liked_at AS sort_at FROM likes l JOIN users u ON u.id = l.user_id \
         WHERE l.post_id = ?2 AND l.liked = 1 AND (l.liked_at, l.user_id) < (?3, ?4) AND {} \
         ORDER BY l.liked_at DESC, l.user_id DESC LIMIT ?5",
        shown_to_viewer("u.id")
    );
    all(db, &sql, &[int(viewer), int(post), int(before.primary), int(before.id), int(limit as i64 + 1)]).await
}

#[derive(Debug, Clone, Deserialize)]
pub struct CommentRow {
    pub id: CommentId,
    pub post_id: PostId,
    pub author_id: UserId,
    pub handle: String,
    pub display_name: String,
    pub body: String,
    pub created_at: i64,
    /// The commented post's author (who may delete any comment on it).
    pub post_author_id: UserId,
}

impl CommentRow {
    pub fn sort_key(&self) -> SortKey {
        SortKey::new(self.created_at, self.id.get())
    }
}

const COMMENT_SELECT: &str =
    "SELECT c.id, c.post_id, c.author_id, u.handle, u.display_name, c.body, c.created_at, \
     p.author_id AS post_author_id \
     FROM comments c JOIN users u ON u.id = c.author_id JOIN posts p ON p.id = c.post_id";

/// Adds a comment (a snowflake id from `created_at`) and marks the post for the count check,
/// atomically.
pub async fn create(
    db: &Db,
    post: PostId,
    author: UserId,
    body: &CommentBody,
    created_at: i64,
    now: i64,
) -> ApiResult<CommentId> {
    let insert = |id: i64| async move {
        let created_at = snowflake_time(id);
        let statements = vec![
            stmt(
                db,
                "INSERT INTO comments (id, post_id, author_id, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5) \
                 RETURNING id",
                &[int(id), int(post), int(author), text(body.as_str()), int(created_at)],
            )?,
            stmt(db, "UPDATE posts SET touched_at = ?2 WHERE id = ?1", &[int(post), int(now)])?,
        ];
        first_id(batch(db, statements).await?.first())
    };
    Ok(CommentId::from_trusted(
        insert_with_fresh_id(created_at, shard_of_id(post.get()), "comments.id", insert).await?,
    ))
}

/// A live comment (not deleted, on a live post).
pub async fn get(db: &Db, id: CommentId) -> ApiResult<Option<CommentRow>> {
    let sql = format!("{COMMENT_SELECT} WHERE c.id = ?1 AND c.deleted_at IS NULL AND p.deleted_at IS NULL");
    first(db, &sql, &[int(id)]).await
}

/// One page of a post's comments in `order`, strictly after `cursor`; hides comments by users
/// with a block either way with the viewer. Fetches `limit + 1` rows.
pub async fn list(
    db: &Db,
    viewer: UserId,
    post: PostId,
    order: Order,
    cursor: Option<SortKey>,
    limit: usize,
) -> ApiResult<Vec<CommentRow>> {
    let (cmp, dir, start) = match order {
        Order::OldestFirst => (">", "ASC", SortKey::BOTTOM),
        Order::NewestFirst => ("<", "DESC", SortKey::TOP),
    };
    let cursor = cursor.unwrap_or(start);
    let sql = format!(
        "{COMMENT_SELECT} WHERE c.post_id = ?2 AND c.deleted_at IS NULL AND (c.created_at, c.id) {cmp} (?3, ?4) \
         AND {} ORDER BY c.created_at {dir}, c.id {dir} LIMIT ?5",
        shown_to_viewer("c.author_id")
    );
    all(db, &sql, &[int(viewer), int(post), int(cursor.primary), int(cursor.id), int(limit as i64 + 1)]).await
}

pub async fn delete(db: &Db, comment: &CommentRow, now: i64) -> ApiResult<()> {
    batch(
        db,
        vec![
            stmt(
                db,
                "UPDATE comments SET deleted_at = ?2 WHERE id = ?1 AND deleted_at IS NULL",
                &[int(comment.id), int(now)],
            )?,
            stmt(db, "UPDATE posts SET touched_at = ?2 WHERE id = ?1", &[int(comment.post_id), int(now)])?,
        ],
    )
    .await?;
    Ok(())
}

/// Recomputes like and comment counts from the relations for posts touched since `since`
/// and fixes any that drifted; returns the ids it repaired.
pub async fn repair_counts(db: &Db, since: i64) -> ApiResult<Vec<i64>> {
    const LIKES: &str = "(SELECT COUNT(*) FROM likes l WHERE l.post_id = posts.id AND l.liked = 1)";
    const COMMENTS: &str =
        "(SELECT COUNT(*) FROM comments c WHERE c.post_id = posts.id AND c.deleted_at IS NULL)";
    let sql = format!(
        "UPDATE posts SET like_count = {LIKES}, comment_count = {COMMENTS} \
         WHERE touched_at >= ?1 AND (like_count <> {LIKES} OR comment_count <> {COMMENTS}) RETURNING id"
    );
    let rows: Vec<IdRow> = all(db, &sql, &[int(since)]).await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}
