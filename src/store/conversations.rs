//! Conversations (migration 0031): each participant's row of a direct post, on their own home
//! database. The post is read and checked where it lives (`services/direct.rs`); these rows only
//! say who takes part, whether it is unread, and whether its user removed it.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::users::not_blocked_between;
use super::StoreResult;
use super::{all, first, id_list, int, run, stmt, text, UserDb};
use crate::domain::ids::{PostId, UserId};
use crate::domain::snowflake::SNOWFLAKE_RANDOM_BITS;

/// One participant's row of a direct post: `accounts` are the other participants.
pub struct Participation<'a> {
    pub user: UserId,
    pub post: PostId,
    pub author: UserId,
    pub accounts: &'a [UserId],
    /// The author's own row is read; a recipient's starts unread.
    pub unread: bool,
}

/// Records the participation unless it exists (a redelivery changes nothing, and never revives
/// a removed conversation) or a block either way stands between the participant and the author.
/// Returns the row it made with the participant's `live_until`, so the caller knows whom to
/// tell (`store::notifications::notice`'s shape).
pub fn record(db: UserDb<'_>, row: &Participation<'_>, now: i64) -> StoreResult<SqlStatement> {
    let sql = format!(
        "INSERT INTO conversations (user_id, post_id, author_id, accounts, unread, updated_at) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE ?1 = ?3 OR {} \
         ON CONFLICT (user_id, post_id) DO NOTHING \
         RETURNING user_id AS recipient_id, post_id AS id, \
           (SELECT u.live_until FROM users u WHERE u.id = user_id) AS live_until",
        not_blocked_between("?1", "?3")
    );
    let params = [
        int(row.user),
        int(row.post),
        int(row.author),
        text(&id_list(row.accounts)),
        int(i64::from(row.unread)),
        int(now),
    ];
    stmt(db, &sql, &params)
}

/// A conversation as its user has it.
#[derive(Debug, Clone, Deserialize)]
pub struct ConversationRow {
    pub post_id: PostId,
    pub author_id: UserId,
    accounts: String,
    unread: i64,
}

impl ConversationRow {
    /// The other participants.
    pub fn accounts(&self) -> Vec<UserId> {
        serde_json::from_str(&self.accounts).unwrap_or_default()
    }

    pub fn is_unread(&self) -> bool {
        self.unread != 0
    }
}

const COLUMNS: &str = "post_id, author_id, accounts, unread";

/// Bounds of a page of conversations by id: strictly below `max`, strictly above `min`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    pub max: Option<PostId>,
    pub min: Option<PostId>,
    /// Mastodon's `min_id`: the oldest above `min` first (the caller reverses the page).
    pub oldest_first: bool,
}

/// `user`'s conversations not removed, newest first (or oldest first above `min`).
pub async fn page(
    db: UserDb<'_>,
    user: UserId,
    bounds: Bounds,
    limit: usize,
) -> StoreResult<Vec<ConversationRow>> {
    let order = if bounds.oldest_first { "ASC" } else { "DESC" };
    let sql = format!(
        "SELECT {COLUMNS} FROM conversations WHERE user_id = ?1 AND removed = 0 \
           AND post_id < ?2 AND post_id > ?3 ORDER BY post_id {order} LIMIT ?4"
    );
    let max = bounds.max.map_or(i64::MAX, PostId::get);
    let min = bounds.min.map_or(0, PostId::get);
    all(db, &sql, &[int(user), int(max), int(min), int(limit as i64)]).await
}

/// One of `user`'s conversations (not removed).
pub async fn get(db: UserDb<'_>, user: UserId, post: PostId) -> StoreResult<Option<ConversationRow>> {
    let sql =
        format!("SELECT {COLUMNS} FROM conversations WHERE user_id = ?1 AND post_id = ?2 AND removed = 0");
    first(db, &sql, &[int(user), int(post)]).await
}

/// Marks a conversation read or unread; whether it exists (not removed).
pub async fn set_unread(db: UserDb<'_>, user: UserId, post: PostId, unread: bool) -> StoreResult<bool> {
    let sql = "UPDATE conversations SET unread = ?3 WHERE user_id = ?1 AND post_id = ?2 AND removed = 0";
    Ok(run(db, sql, &[int(user), int(post), int(i64::from(unread))]).await? > 0)
}

/// Removes a conversation from its user's list (the row stays, removed, so a redelivered event
/// cannot bring it back); whether it was there.
pub async fn remove(db: UserDb<'_>, user: UserId, post: PostId) -> StoreResult<bool> {
    let sql = "UPDATE conversations SET removed = 1, unread = 0 WHERE user_id = ?1 AND post_id = ?2 AND removed = 0";
    Ok(run(db, sql, &[int(user), int(post)]).await? > 0)
}

/// The newest `limit` direct posts addressed to `user` by others, as window entries (a post's
/// time is its id's: `store/snowflake.rs`), read when their window is built
/// (`domain/read/open.rs`).
pub fn addressed_statement(db: UserDb<'_>, user: UserId, limit: usize) -> StoreResult<SqlStatement> {
    stmt(
        db,
        &format!(
            "SELECT post_id, author_id, post_id >> {SNOWFLAKE_RANDOM_BITS} AS created_at, 0 AS version \
             FROM conversations WHERE user_id = ?1 AND author_id <> ?1 ORDER BY post_id DESC LIMIT ?2"
        ),
        &[int(user), int(limit as i64)],
    )
}
