//! Bookmarks (`bookmarks`, migration 0024): a user's saved posts, on the user's home database.
//! The posts themselves are read from their own databases and checked there
//! (`services/saved.rs`).

use std::collections::HashSet;

use serde::Deserialize;

use super::StoreResult;
use super::{all, exec, id_list, int, text, UserDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};

/// Bookmarks `post` (`on`) or removes the bookmark: idempotent (a repeat keeps the first time).
pub async fn set(db_of_user: UserDb<'_>, user: UserId, post: PostId, on: bool, now: i64) -> StoreResult<()> {
    if on {
        exec(
            db_of_user,
            "INSERT INTO bookmarks (user_id, post_id, created_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (user_id, post_id) DO NOTHING",
            &[int(user), int(post), int(now)],
        )
        .await
    } else {
        exec(db_of_user, "DELETE FROM bookmarks WHERE user_id = ?1 AND post_id = ?2", &[int(user), int(post)])
            .await
    }
}

/// One saved post of a user's list (a bookmark, or a like from `liked_posts`) and when.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct SavedRow {
    pub post_id: PostId,
    pub at: i64,
}

impl SavedRow {
    pub fn sort_key(&self) -> SortKey {
        SortKey::new(self.at, self.post_id.get())
    }
}

/// `user`'s bookmarks newest first, strictly below `before`.
pub async fn page(
    db_of_user: UserDb<'_>,
    user: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<SavedRow>> {
    saved_page(db_of_user, ("bookmarks", "created_at"), user, before, limit).await
}

/// One page of a user's saved posts (`table`: bookmarks or the liker side of likes, keyed by
/// `(user_id, post_id)` with the time saved in `at`), newest first, strictly below `before`.
/// Both names are this module's constants, never input.
pub(super) async fn saved_page(
    db_of_user: UserDb<'_>,
    (table, at): (&'static str, &'static str),
    user: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<SavedRow>> {
    let (at_before, id_before) = before.map_or((i64::MAX >> 11, i64::MAX >> 11), |k| (k.primary, k.id));
    let sql = format!(
        "SELECT post_id, {at} AS at FROM {table} WHERE user_id = ?1 AND ({at}, post_id) < (?2, ?3) \
         ORDER BY {at} DESC, post_id DESC LIMIT ?4"
    );
    all(db_of_user, &sql, &[int(user), int(at_before), int(id_before), int(limit as i64)]).await
}

/// A row of post ids (`SELECT post_id ...`).
#[derive(Deserialize)]
pub(super) struct PostIdRow {
    pub post_id: PostId,
}

/// [`among`] as a set, with no statement for no ids.
pub async fn marked(
    db_of_user: UserDb<'_>,
    user: UserId,
    post_ids: &[PostId],
) -> StoreResult<HashSet<PostId>> {
    if post_ids.is_empty() {
        return Ok(HashSet::new());
    }
    Ok(among(db_of_user, user, post_ids).await?.into_iter().collect())
}

/// Which of `post_ids` `user` bookmarked, one statement on the user's home.
pub async fn among(db_of_user: UserDb<'_>, user: UserId, post_ids: &[PostId]) -> StoreResult<Vec<PostId>> {
    let rows: Vec<PostIdRow> = all(
        db_of_user,
        "SELECT b.post_id FROM json_each(?2) e JOIN bookmarks b ON b.user_id = ?1 AND b.post_id = e.value",
        &[int(user), text(&id_list(post_ids))],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.post_id).collect())
}
