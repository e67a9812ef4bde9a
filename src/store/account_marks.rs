//! What a user keeps about other accounts on their own home (migration 0036): private notes
//! (`account_notes`, Relationship `note`) and endorsements (`endorsements`, the accounts featured
//! on their profile, Relationship `endorsed`), and the one read that brings both, with the
//! pending follow requests of those accounts to the user, beside a Relationship.

use serde::Deserialize;

use super::{all, exec, id_list, int, text, StoreResult, UserDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::store::EdgeKey;

/// The user's marks on one account.
#[derive(Debug, Clone, Deserialize)]
pub struct Marks {
    pub id: UserId,
    pub note: Option<String>,
    endorsed: i64,
    requested_by: i64,
}

impl Marks {
    pub fn endorsed(&self) -> bool {
        self.endorsed != 0
    }

    /// The account asked to follow the user (a pending request).
    pub fn requested_by(&self) -> bool {
        self.requested_by != 0
    }
}

/// The user's marks on each of `accounts`: one statement on the user's home.
pub async fn of(db: UserDb<'_>, user: UserId, accounts: &[UserId]) -> StoreResult<Vec<Marks>> {
    all(
        db,
        "SELECT a.value AS id, \
           (SELECT comment FROM account_notes WHERE user_id = ?1 AND account_id = a.value) AS note, \
           EXISTS (SELECT 1 FROM endorsements WHERE user_id = ?1 AND account_id = a.value) AS endorsed, \
           EXISTS (SELECT 1 FROM follow_requests WHERE target_id = ?1 AND requester_id = a.value) AS requested_by \
         FROM json_each(?2) a",
        &[int(user), text(&id_list(accounts))],
    )
    .await
}

/// Sets the user's note on `account` (an empty one removes it).
pub async fn set_note(
    db: UserDb<'_>,
    user: UserId,
    account: UserId,
    comment: &str,
    now: i64,
) -> StoreResult<()> {
    if comment.is_empty() {
        return exec(
            db,
            "DELETE FROM account_notes WHERE user_id = ?1 AND account_id = ?2",
            &[int(user), int(account)],
        )
        .await;
    }
    exec(
        db,
        "INSERT INTO account_notes (user_id, account_id, comment, updated_at) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (user_id, account_id) DO UPDATE SET comment = excluded.comment, updated_at = excluded.updated_at",
        &[int(user), int(account), text(comment), int(now)],
    )
    .await
}

/// Endorses `account` if the user follows it (checked in the same statement); whether the
/// endorsement stands after it.
pub async fn endorse(db: UserDb<'_>, user: UserId, account: UserId, now: i64) -> StoreResult<bool> {
    exec(
        db,
        "INSERT INTO endorsements (user_id, account_id, created_at) \
         SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM follows WHERE follower_id = ?1 AND author_id = ?2) \
         ON CONFLICT (user_id, account_id) DO NOTHING",
        &[int(user), int(account), int(now)],
    )
    .await?;
    Ok(of(db, user, &[account]).await?.first().is_some_and(Marks::endorsed))
}

pub async fn unendorse(db: UserDb<'_>, user: UserId, account: UserId) -> StoreResult<()> {
    exec(db, "DELETE FROM endorsements WHERE user_id = ?1 AND account_id = ?2", &[int(user), int(account)])
        .await
}

/// A page of the user's endorsements, newest first, below `before`.
pub async fn endorsed_page(
    db: UserDb<'_>,
    user: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<EdgeKey>> {
    let before = before.unwrap_or(SortKey::new(i64::MAX, i64::MAX));
    all(
        db,
        "SELECT account_id AS other, created_at AS sort_at FROM endorsements \
         WHERE user_id = ?1 AND (created_at, account_id) < (?2, ?3) \
         ORDER BY created_at DESC, account_id DESC LIMIT ?4",
        &[int(user), int(before.primary), int(before.id), int(limit as i64)],
    )
    .await
}
