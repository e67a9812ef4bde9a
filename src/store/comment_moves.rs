//! Moving comments of the old kind into reply posts (migration 0034), one step per statement
//! batch, each idempotent, in the order `services/comment_moves.rs` runs them: the reply post
//! on its author's database, its replies pointed at it, the thread's rows swapped on the
//! post's database, then the likes copied across.

use serde::Deserialize;

use super::{all, batch, changed_rows, first, id_list, int, opt_int, stmt, text, AnyDb, PostDb, UserDb};
use super::{StoreError, StoreResult};
use crate::domain::ids::{PostId, UserId};
use crate::domain::notifications::Kind;
use crate::domain::snowflake::snowflake_time;

/// A comment of the old kind, live, with what its reply post needs.
#[derive(Debug, Clone, Deserialize)]
pub struct OldComment {
    pub id: i64,
    pub post_id: PostId,
    pub author_id: UserId,
    pub body: String,
    pub created_at: i64,
    pub spoiler_text: String,
    pub sensitive: i64,
    pub edited_at: Option<i64>,
    /// The comment it answers (`None`: the post), and where that one moved, if it did.
    pub parent_id: Option<i64>,
    pub parent_moved_to: Option<i64>,
    /// The parent comment's author, or the post's.
    pub parent_author_id: UserId,
    /// The post's visibility (the reply post's), and whether the post is deleted.
    pub visibility: String,
    pub root_deleted: i64,
}

impl OldComment {
    /// What its reply post answers: the parent comment's reply post once that moved, else the
    /// parent (a comment not moved yet is pointed at again when it moves), else the post.
    pub fn answers(&self) -> i64 {
        match (self.parent_moved_to.filter(|to| *to > 0), self.parent_id) {
            (Some(moved), _) => moved,
            (None, Some(parent)) => parent,
            (None, None) => self.post_id.get(),
        }
    }
}

/// Live comments of the old kind on `db`, oldest first (a parent moves before its replies),
/// after the comment at `after` (`created_at`, `id`).
pub async fn unmoved(db: AnyDb<'_>, after: (i64, i64), limit: usize) -> StoreResult<Vec<OldComment>> {
    all(
        db,
        "SELECT c.id, c.post_id, c.author_id, c.body, c.created_at, c.spoiler_text, c.sensitive, c.edited_at, \
           c.parent_id, pc.moved_to AS parent_moved_to, COALESCE(pc.author_id, p.author_id) AS parent_author_id, \
           p.visibility, p.deleted_at IS NOT NULL AS root_deleted \
         FROM comments c INDEXED BY comments_unmoved JOIN posts p ON p.id = c.post_id \
           LEFT JOIN comments pc ON pc.id = c.parent_id \
         WHERE c.reply_post = 0 AND c.deleted_at IS NULL AND c.moved_to IS NULL AND (c.created_at, c.id) > (?1, ?2) \
         ORDER BY c.created_at, c.id LIMIT ?3",
        &[int(after.0), int(after.1), int(limit as i64)],
    )
    .await
}

/// Marks a comment of a deleted post never to move: the deletion hid it for good, and a reply
/// post would outlive the post where the comment did not.
pub async fn retire(db: AnyDb<'_>, comment: i64) -> StoreResult<()> {
    super::exec(db, "UPDATE comments SET moved_to = 0 WHERE id = ?1 AND moved_to IS NULL", &[int(comment)])
        .await
}

#[derive(Deserialize)]
struct MovedFrom {
    moved_from: Option<i64>,
}

/// Writes the comment's reply post as `id` on its author's database unless that id is taken;
/// whether the row there now is the comment's (made now or by an earlier attempt).
pub async fn place(db: UserDb<'_>, comment: &OldComment, id: i64) -> StoreResult<bool> {
    let insert = stmt(
        db,
        "INSERT INTO posts (id, author_id, body, visibility, created_at, edited_at, spoiler_text, sensitive, \
           in_reply_to_id, in_reply_to_account_id, thread_id, moved_from) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (id) DO NOTHING",
        &[
            int(id),
            int(comment.author_id),
            text(&comment.body),
            text(&comment.visibility),
            int(snowflake_time(id)),
            opt_int(comment.edited_at),
            text(&comment.spoiler_text),
            int(comment.sensitive),
            int(comment.answers()),
            int(comment.parent_author_id),
            int(comment.post_id),
            int(comment.id),
        ],
    )?;
    let read = stmt(db, "SELECT moved_from FROM posts WHERE id = ?1", &[int(id)])?;
    let results = batch(db, vec![insert, read]).await?;
    let row: Vec<MovedFrom> = results.get(1).map(|r| r.results()).transpose()?.unwrap_or_default();
    Ok(row.first().and_then(|r| r.moved_from) == Some(comment.id))
}

#[derive(Deserialize)]
struct IdRow {
    id: PostId,
}

/// The reply posts (their thread rows) that answer `comment`.
pub async fn replies_to(db: PostDb<'_>, post: PostId, comment: i64) -> StoreResult<Vec<PostId>> {
    let rows: Vec<IdRow> = all(
        db,
        "SELECT id FROM comments WHERE post_id = ?1 AND parent_id = ?2 AND reply_post = 1",
        &[int(post), int(comment)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Points a reply post that answered the comment at the comment's reply post.
pub async fn repoint(db: PostDb<'_>, reply: PostId, from: i64, to: i64) -> StoreResult<()> {
    super::exec(
        db,
        "UPDATE posts SET in_reply_to_id = ?3 WHERE id = ?1 AND in_reply_to_id = ?2",
        &[int(reply), int(from), int(to)],
    )
    .await
}

/// Swaps the comment's row for its reply post's in one batch on the post's database, if the
/// comment is still live and unmoved: the reply post's row (its count moves by trigger), the
/// post author's notification and the replies pointed at it, then the comment's row marked
/// moved and deleted (which takes the count back). Whether this moved it.
pub async fn swap(db: PostDb<'_>, comment: &OldComment, reply: i64, now: i64) -> StoreResult<bool> {
    let live = "EXISTS (SELECT 1 FROM comments WHERE id = ?1 AND deleted_at IS NULL AND moved_to IS NULL)";
    let params = [
        int(comment.id),
        int(reply),
        int(snowflake_time(reply)),
        int(comment.answers()),
        int(comment.post_id),
    ];
    let parent = if comment.parent_id.is_some() { "?4" } else { "NULL" };
    let statements = vec![
        stmt(
            db,
            &format!(
                "INSERT INTO comments (id, post_id, author_id, body, created_at, spoiler_text, sensitive, parent_id, \
                   edited_at, reply_post) \
                 SELECT ?2, post_id, author_id, body, ?3, spoiler_text, sensitive, {parent}, edited_at, 1 \
                 FROM comments WHERE id = ?1 AND post_id = ?5 AND deleted_at IS NULL AND moved_to IS NULL \
                 ON CONFLICT (id) DO NOTHING"
            ),
            &params,
        )?,
        stmt(
            db,
            &format!(
                "UPDATE notifications SET comment_id = ?2 \
                 WHERE recipient_id = (SELECT author_id FROM posts WHERE id = ?5) AND kind = '{}' \
                   AND post_id = ?5 AND comment_id = ?1 AND {live}",
                Kind::Reply.as_str()
            ),
            &params,
        )?,
        stmt(db, &format!("UPDATE comments SET parent_id = ?2 WHERE post_id = ?5 AND parent_id = ?1 AND {live}"), &params)?,
        stmt(
            db,
            "UPDATE comments SET moved_to = ?2, deleted_at = ?6 WHERE id = ?1 AND deleted_at IS NULL AND moved_to IS NULL",
            &[params.to_vec(), vec![int(now)]].concat(),
        )?,
    ];
    let results = batch(db, statements).await?;
    Ok(changed_rows(results.get(3)) == 1)
}

/// Takes back a reply post made for a comment deleted before it could move (never one that is
/// not the comment's).
pub async fn unplace(db: UserDb<'_>, comment: i64, reply: i64, now: i64) -> StoreResult<()> {
    super::exec(
        db,
        "UPDATE posts SET deleted_at = ?3 WHERE id = ?2 AND moved_from = ?1 AND deleted_at IS NULL",
        &[int(comment), int(reply), int(now)],
    )
    .await
}

#[derive(Deserialize)]
struct MovedTo {
    moved_to: Option<i64>,
}

/// Where a comment moved (its reply post), if it did.
pub async fn moved_to(db: PostDb<'_>, comment: i64) -> StoreResult<Option<PostId>> {
    let row: Option<MovedTo> =
        first(db, "SELECT moved_to FROM comments WHERE id = ?1 AND moved_to > 0", &[int(comment)]).await?;
    Ok(row.and_then(|r| r.moved_to).map(PostId::from_trusted))
}

/// A moved comment whose likes are still to copy.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Moving {
    pub id: i64,
    pub moved_to: PostId,
}

pub async fn moving(db: AnyDb<'_>, limit: usize) -> StoreResult<Vec<Moving>> {
    all(
        db,
        "SELECT id, moved_to FROM comments INDEXED BY comments_moving WHERE moved_to > 0 AND like_count > 0 LIMIT ?1",
        &[int(limit as i64)],
    )
    .await
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct OldLike {
    pub user_id: UserId,
    pub created_at: i64,
}

/// A page of a moved comment's likes (they are refused once it moved, so none comes in).
pub async fn likes_of(db: AnyDb<'_>, comment: i64, limit: usize) -> StoreResult<Vec<OldLike>> {
    all(
        db,
        "SELECT user_id, created_at FROM comment_likes WHERE comment_id = ?1 ORDER BY user_id LIMIT ?2",
        &[int(comment), int(limit as i64)],
    )
    .await
}

#[derive(Deserialize)]
struct LikeCount {
    like_count: i64,
}

/// Copies likes to the reply post (a like it has already, or an unlike since, stays as it is:
/// the later act wins); its like count after. `updated_at` now puts them in the liker-side
/// check's walk (`services/liked.rs::repair_slice`), which writes each liker's side.
pub async fn copy_likes(db: PostDb<'_>, reply: PostId, likes: &[OldLike], now: i64) -> StoreResult<i64> {
    let rows: Vec<[i64; 2]> = likes.iter().map(|l| [l.user_id.get(), l.created_at]).collect();
    let rows = serde_json::to_string(&rows).map_err(|e| StoreError::Internal(e.to_string()))?;
    let statements = vec![
        stmt(
            db,
            "INSERT INTO likes (post_id, user_id, liked, seq, updated_at, liked_at) \
             SELECT ?1, json_extract(value, '$[0]'), 1, NULL, ?2, json_extract(value, '$[1]') FROM json_each(?3) \
             WHERE 1 ON CONFLICT (post_id, user_id) DO NOTHING",
            &[int(reply), int(now), text(&rows)],
        )?,
        super::engagement::touch(db, reply, now)?,
        stmt(db, "SELECT like_count FROM posts WHERE id = ?1", &[int(reply)])?,
    ];
    let results = batch(db, statements).await?;
    let count: Vec<LikeCount> = results.get(2).map(|r| r.results()).transpose()?.unwrap_or_default();
    Ok(count.first().map_or(0, |c| c.like_count))
}

/// Drops copied likes from the moved comment, its count recomputed from what is left.
pub async fn drop_likes(db: AnyDb<'_>, comment: i64, likes: &[OldLike]) -> StoreResult<()> {
    let users: Vec<UserId> = likes.iter().map(|l| l.user_id).collect();
    let statements = vec![
        stmt(
            db,
            "DELETE FROM comment_likes WHERE comment_id = ?1 AND user_id IN (SELECT value FROM json_each(?2))",
            &[int(comment), text(&id_list(&users))],
        )?,
        stmt(
            db,
            "UPDATE comments SET like_count = (SELECT COUNT(*) FROM comment_likes WHERE comment_id = ?1) WHERE id = ?1",
            &[int(comment)],
        )?,
    ];
    batch(db, statements).await?;
    Ok(())
}
