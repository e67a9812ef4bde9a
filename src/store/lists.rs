//! Mastodon lists and their members (migration 0016), on the owner's home database beside the
//! owner's `follows`. Every statement names the owner (`user_id`), so a list id never reaches
//! another user's list. A member counts only while the owner follows it, and has since before
//! the membership was made ([`MEMBER`]): a stale row left by a follow dropped elsewhere (a block
//! converged from the other side) never shows, even after a new follow.

use serde::Deserialize;

use super::snowflake::insert_with_fresh_id;
use super::StoreResult;
use super::{all, batch, changed_rows, first, id_list, int, opt_text, stmt, text, Count, EdgeKey, UserDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{ListId, UserId};
use crate::domain::lists::{Candidate, RepliesPolicy, MAX_LISTS, MAX_LIST_ACCOUNTS};
use crate::domain::snowflake::{shard_of_id, IdSeed};
use crate::domain::validate::ListTitle;

#[derive(Debug, Clone, Deserialize)]
pub struct ListRow {
    pub id: ListId,
    pub title: String,
    pub replies_policy: String,
    pub exclusive: i64,
}

const COLUMNS: &str = "id, title, replies_policy, exclusive";

/// `la` is a member row of `f`'s follower: it counts while that follow stands and is older.
pub const MEMBER: &str =
    "la.user_id = f.follower_id AND la.account_id = f.author_id AND la.created_at >= f.created_at";

/// A list's settings as a create or an update gives them (`None`: keep, or the default).
pub struct ListFields {
    pub title: Option<ListTitle>,
    pub replies_policy: Option<RepliesPolicy>,
    pub exclusive: Option<bool>,
}

/// Counting members of list `?2` of owner `?1`.
fn members_count() -> String {
    format!(
        "SELECT COUNT(*) FROM list_accounts la JOIN follows f ON {MEMBER} WHERE la.user_id = ?1 AND la.list_id = ?2"
    )
}

/// Creates a list, unless the owner already has [`MAX_LISTS`] (`None`): the cap is checked in
/// the insert itself, so two creates racing cannot pass it together.
pub async fn create(
    db: UserDb<'_>,
    owner: UserId,
    fields: &ListFields,
    now: i64,
    seed: IdSeed,
) -> StoreResult<Option<ListRow>> {
    let title = fields.title.as_ref().map(ListTitle::as_str);
    let policy = fields.replies_policy.unwrap_or(RepliesPolicy::List).as_str();
    let exclusive = i64::from(fields.exclusive.unwrap_or(false));
    let sql = format!(
        "INSERT INTO lists (user_id, id, title, replies_policy, exclusive, created_at) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT COUNT(*) FROM lists WHERE user_id = ?1) < {MAX_LISTS} \
         RETURNING {COLUMNS}"
    );
    let insert = |id: i64| {
        let params = [int(owner), int(id), opt_text(title), text(policy), int(exclusive), int(now)];
        let sql = &sql;
        async move { first::<ListRow>(db, sql, &params).await }
    };
    insert_with_fresh_id(seed, now, shard_of_id(owner.get()), "lists.id", insert).await
}

/// The owner's lists, oldest first (as Mastodon lists them).
pub async fn all_of(db: UserDb<'_>, owner: UserId) -> StoreResult<Vec<ListRow>> {
    let sql = format!("SELECT {COLUMNS} FROM lists WHERE user_id = ?1 ORDER BY id");
    all(db, &sql, &[int(owner)]).await
}

pub async fn get(db: UserDb<'_>, owner: UserId, id: ListId) -> StoreResult<Option<ListRow>> {
    let sql = format!("SELECT {COLUMNS} FROM lists WHERE user_id = ?1 AND id = ?2");
    first(db, &sql, &[int(owner), int(id)]).await
}

/// Changes what `fields` gives; `None` when the owner has no such list.
pub async fn update(
    db: UserDb<'_>,
    owner: UserId,
    id: ListId,
    fields: &ListFields,
) -> StoreResult<Option<ListRow>> {
    let sql = format!(
        "UPDATE lists SET title = COALESCE(?3, title), replies_policy = COALESCE(?4, replies_policy), \
           exclusive = COALESCE(?5, exclusive) WHERE user_id = ?1 AND id = ?2 RETURNING {COLUMNS}"
    );
    let exclusive = fields.exclusive.map_or(wasm_bindgen::JsValue::NULL, |e| int(i64::from(e)));
    let params = [
        int(owner),
        int(id),
        opt_text(fields.title.as_ref().map(ListTitle::as_str)),
        opt_text(fields.replies_policy.map(RepliesPolicy::as_str)),
        exclusive,
    ];
    first(db, &sql, &params).await
}

/// Deletes the list and its members in one batch; whether there was such a list.
pub async fn delete(db: UserDb<'_>, owner: UserId, id: ListId) -> StoreResult<bool> {
    let key = [int(owner), int(id)];
    let results = batch(
        db,
        vec![
            stmt(db, "DELETE FROM list_accounts WHERE user_id = ?1 AND list_id = ?2", &key)?,
            stmt(db, "DELETE FROM lists WHERE user_id = ?1 AND id = ?2", &key)?,
        ],
    )
    .await?;
    Ok(changed_rows(results.get(1)) > 0)
}

/// For each account asked for: whether the owner follows it and whether it is in the list
/// already (as a counting member); and how many members the list has. One batch.
pub async fn candidates(
    db: UserDb<'_>,
    owner: UserId,
    id: ListId,
    accounts: &[UserId],
) -> StoreResult<(Vec<Candidate>, usize)> {
    #[derive(Deserialize)]
    struct Row {
        account: UserId,
        followed: i64,
        member: i64,
    }
    let asked = format!(
        "SELECT j.value AS account, f.author_id IS NOT NULL AS followed, \
           EXISTS (SELECT 1 FROM list_accounts la WHERE la.list_id = ?2 AND {MEMBER}) AS member \
         FROM json_each(?3) j LEFT JOIN follows f ON f.follower_id = ?1 AND f.author_id = j.value"
    );
    let count = format!("SELECT ({}) AS n", members_count());
    let params = [int(owner), int(id), text(&id_list(accounts))];
    let results = batch(db, vec![stmt(db, &asked, &params)?, stmt(db, &count, &params[..2])?]).await?;
    let rows: Vec<Row> = results.first().map(|r| r.results()).transpose()?.unwrap_or_default();
    let counted: Vec<Count> = results.get(1).map(|r| r.results()).transpose()?.unwrap_or_default();
    let candidates = rows.into_iter().map(|r| Candidate {
        account: r.account,
        followed: r.followed != 0,
        member: r.member != 0,
    });
    Ok((candidates.collect(), counted.first().map_or(0, |c| c.n as usize)))
}

/// Adds followed accounts to the list (a stale row of an account is replaced). The follow, the
/// list and the cap are checked in the statement itself, so a racing unfollow, delete or add
/// cannot slip past them. A member's time is never before its follow's ([`MEMBER`]).
pub async fn add(
    db: UserDb<'_>,
    owner: UserId,
    id: ListId,
    accounts: &[UserId],
    now: i64,
) -> StoreResult<usize> {
    let sql = format!(
        "INSERT INTO list_accounts (user_id, list_id, account_id, created_at) \
         SELECT ?1, ?2, f.author_id, MAX(?4, f.created_at) FROM json_each(?3) j \
           JOIN follows f ON f.follower_id = ?1 AND f.author_id = j.value \
         WHERE EXISTS (SELECT 1 FROM lists WHERE user_id = ?1 AND id = ?2) \
           AND ({count}) + json_array_length(?3) <= {MAX_LIST_ACCOUNTS} \
         ON CONFLICT (user_id, list_id, account_id) DO UPDATE SET created_at = excluded.created_at",
        count = members_count()
    );
    let results =
        batch(db, vec![stmt(db, &sql, &[int(owner), int(id), text(&id_list(accounts)), int(now)])?]).await?;
    Ok(changed_rows(results.first()))
}

pub async fn remove(db: UserDb<'_>, owner: UserId, id: ListId, accounts: &[UserId]) -> StoreResult<()> {
    let sql = "DELETE FROM list_accounts WHERE user_id = ?1 AND list_id = ?2 \
               AND account_id IN (SELECT value FROM json_each(?3))";
    batch(db, vec![stmt(db, sql, &[int(owner), int(id), text(&id_list(accounts))])?]).await.map(drop)
}

/// A page of the list's counting members, newest membership first, below `before`.
pub async fn member_page(
    db: UserDb<'_>,
    owner: UserId,
    id: ListId,
    before: SortKey,
    limit: usize,
) -> StoreResult<Vec<EdgeKey>> {
    let sql = format!(
        "SELECT la.account_id AS other, la.created_at AS sort_at FROM list_accounts la JOIN follows f ON {MEMBER} \
         WHERE la.user_id = ?1 AND la.list_id = ?2 AND (la.created_at, la.account_id) < (?3, ?4) \
         ORDER BY la.created_at DESC, la.account_id DESC LIMIT ?5"
    );
    let params = [int(owner), int(id), int(before.primary), int(before.id), int(limit as i64)];
    all(db, &sql, &params).await
}

/// The owner's lists that hold `account` as a counting member, oldest list first.
pub async fn holding(db: UserDb<'_>, owner: UserId, account: UserId) -> StoreResult<Vec<ListRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM lists l WHERE l.user_id = ?1 AND EXISTS (SELECT 1 FROM list_accounts la \
           JOIN follows f ON {MEMBER} WHERE la.user_id = ?1 AND la.list_id = l.id AND la.account_id = ?2) \
         ORDER BY l.id"
    );
    all(db, &sql, &[int(owner), int(account)]).await
}

/// The statement that takes `author` out of every list of `owner`, for the batch of an unfollow
/// or a block on the owner's side. It goes after the batch's outbox events: an unfollow's event
/// is conditional on the `changes()` of the follow's delete just before it.
pub fn leave_all(db: UserDb<'_>, owner: UserId, author: UserId) -> StoreResult<crate::store::SqlStatement> {
    stmt(db, "DELETE FROM list_accounts WHERE user_id = ?1 AND account_id = ?2", &[int(owner), int(author)])
}
