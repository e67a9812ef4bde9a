//! The liker's side of likes (`liked_posts`, migration 0023): which posts a user likes, on the
//! liker's home database. A mirror of the post side's `likes` (the truth, written only by the
//! post's `PostLikes` object), converged by current state in `services/liked.rs`.
//!
//! Each function takes the database of the one side it touches; no statement joins the two.

use crate::store::{SqlResult, SqlStatement};
use serde::Deserialize;

use super::bookmarks::{saved_page, PostIdRow, SavedRow};
use super::StoreResult;
use super::{all, batch, first, int, stmt, text, AnyDb, OnDb, PostDb, UserDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};

#[derive(Deserialize)]
struct LikedAt {
    liked_at: i64,
}

/// The post side of one (post, user) like: `Some(liked_at)` while it is liked.
pub async fn post_side(db_of_post: PostDb<'_>, post: PostId, user: UserId) -> StoreResult<Option<i64>> {
    let row: Option<LikedAt> = first(
        db_of_post,
        "SELECT liked_at FROM likes WHERE post_id = ?1 AND user_id = ?2 AND liked = 1",
        &[int(post), int(user)],
    )
    .await?;
    Ok(row.map(|r| r.liked_at))
}

/// The liker side of one like, as stored.
pub async fn liker_side(db_of_user: UserDb<'_>, user: UserId, post: PostId) -> StoreResult<Option<i64>> {
    let row: Option<LikedAt> = first(
        db_of_user,
        "SELECT liked_at FROM liked_posts WHERE user_id = ?1 AND post_id = ?2",
        &[int(user), int(post)],
    )
    .await?;
    Ok(row.map(|r| r.liked_at))
}

/// The statement that sets the liker side of (`user`, `post`) to `state` (a row with that
/// `liked_at`, or none): idempotent.
fn side_statement<'a>(
    db: impl OnDb<'a>,
    user: UserId,
    post: PostId,
    state: Option<i64>,
) -> StoreResult<SqlStatement> {
    match state {
        Some(liked_at) => stmt(
            db,
            "INSERT INTO liked_posts (user_id, post_id, liked_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (user_id, post_id) DO UPDATE SET liked_at = excluded.liked_at \
             WHERE liked_posts.liked_at <> excluded.liked_at",
            &[int(user), int(post), int(liked_at)],
        ),
        None => {
            stmt(db, "DELETE FROM liked_posts WHERE user_id = ?1 AND post_id = ?2", &[int(user), int(post)])
        }
    }
}

/// Sets the liker side to `state` (a row with that `liked_at`, or none): idempotent.
pub async fn write_liker_side(
    db_of_user: UserDb<'_>,
    user: UserId,
    post: PostId,
    state: Option<i64>,
) -> StoreResult<()> {
    batch(db_of_user, vec![side_statement(db_of_user, user, post, state)?]).await.map(drop)
}

/// One liker side as the post's object writes it after its group commit: (user, post, state).
pub type LikerSide = (UserId, PostId, Option<i64>);

/// The liker sides of several likes in one batch, every user at home on `db` (the post's
/// `PostLikes` object writes its committed group's: `objects/post_likes.rs`). Returns each
/// statement's rows read and written, in order.
pub async fn write_liker_sides(db: AnyDb<'_>, sides: &[LikerSide]) -> StoreResult<Vec<(u64, u64)>> {
    let statements = sides
        .iter()
        .map(|&(user, post, state)| side_statement(db, user, post, state))
        .collect::<StoreResult<_>>()?;
    let results = batch(db, statements).await?;
    let rows = |r: &SqlResult| {
        r.meta()
            .ok()
            .flatten()
            .map_or((0, 0), |m| (m.rows_read.unwrap_or(0) as u64, m.rows_written.unwrap_or(0) as u64))
    };
    Ok(results.iter().map(rows).collect())
}

/// The viewer's likes among posts with ids in `lo..=hi` (a time range: ids carry their time),
/// one statement on the viewer's home: `liked_by_me` of the rows a hot author's replica served
/// (`domain/read`, `Statement::LikedIn`). Capped: a page's range holds few likes of one reader.
pub fn liked_in_statement(
    db_of_user: UserDb<'_>,
    user: UserId,
    (lo, hi): (i64, i64),
) -> StoreResult<SqlStatement> {
    stmt(
        db_of_user,
        "SELECT post_id FROM liked_posts WHERE user_id = ?1 AND post_id BETWEEN ?2 AND ?3 LIMIT 2000",
        &[int(user), int(lo), int(hi)],
    )
}

/// What [`liked_in_statement`] answered.
pub fn liked_of(result: &SqlResult) -> StoreResult<Vec<PostId>> {
    Ok(result.results::<PostIdRow>()?.into_iter().map(|r| r.post_id).collect())
}

/// `user`'s liked posts, newest like first, strictly below `before` (`(liked_at, post_id)`).
pub async fn page(
    db_of_user: UserDb<'_>,
    user: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<SavedRow>> {
    saved_page(db_of_user, ("liked_posts", "liked_at"), user, before, limit).await
}

/// A like on the post side, as the repair slice walks them.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct LikeChange {
    pub post_id: PostId,
    pub user_id: UserId,
    pub liked: i64,
    pub liked_at: i64,
    pub updated_at: i64,
}

impl LikeChange {
    /// What the liker side should hold.
    pub fn want(&self) -> Option<i64> {
        (self.liked != 0).then_some(self.liked_at)
    }
}

/// The likes on `db` changed after `after` (`(updated_at, post_id, user_id)`) and before
/// `until`, oldest change first (the `likes_by_update` index).
pub async fn changed_likes(
    db: AnyDb<'_>,
    after: (i64, i64, i64),
    until: i64,
    limit: usize,
) -> StoreResult<Vec<LikeChange>> {
    all(
        db,
        "SELECT post_id, user_id, liked, liked_at, updated_at FROM likes \
         WHERE (updated_at, post_id, user_id) > (?1, ?2, ?3) AND updated_at < ?4 \
         ORDER BY updated_at, post_id, user_id LIMIT ?5",
        &[int(after.0), int(after.1), int(after.2), int(until), int(limit as i64)],
    )
    .await
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct LikerRow {
    pub user_id: UserId,
    pub post_id: PostId,
    pub liked_at: i64,
}

/// The liker-side rows of `pairs` (`(user, post)`, all users at home on `db`): one statement.
pub async fn liker_rows(db: AnyDb<'_>, pairs: &[(UserId, PostId)]) -> StoreResult<Vec<LikerRow>> {
    let list: Vec<String> = pairs.iter().map(|(u, p)| format!("[{u},{p}]")).collect();
    all(
        db,
        "SELECT l.user_id, l.post_id, l.liked_at FROM json_each(?1) e JOIN liked_posts l \
           ON l.user_id = json_extract(e.value, '$[0]') AND l.post_id = json_extract(e.value, '$[1]')",
        &[text(&format!("[{}]", list.join(",")))],
    )
    .await
}
