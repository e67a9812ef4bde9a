//! Pending follow requests to locked accounts (`follow_requests`, migration 0036), on the
//! TARGET's home database: the target pages them there, and a request's notification is written
//! beside it in the same batch. A request is keyed by its pair, so a retried request, authorize,
//! reject or withdrawal changes nothing the second time.

use serde::Deserialize;

use super::shards::Shards;
use super::{all, batch, changed_rows, id_list, int, notifications, stmt, text, StoreResult, UserDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::domain::notifications::Notice;
use crate::store::EdgeKey;

/// Records `requester`'s request to follow `target`, with its `follow_request` notification
/// (only when the request is new). Whether it is new, and what to tell the target (their live
/// socket, their push subscriptions) of the notification it made.
pub async fn request(
    db: UserDb<'_>,
    target: UserId,
    requester: UserId,
    now: i64,
) -> StoreResult<(bool, Option<Notice>)> {
    let statements = vec![
        notifications::on_follow_request(db, target, requester, now)?,
        stmt(
            db,
            "INSERT INTO follow_requests (target_id, requester_id, created_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (target_id, requester_id) DO NOTHING",
            &[int(target), int(requester), int(now)],
        )?,
    ];
    let results = batch(db, statements).await?;
    Ok((changed_rows(results.get(1)) > 0, notifications::notice(results.first(), now)))
}

/// Removes the request (and its notification); whether there was one.
pub async fn remove(db: UserDb<'_>, target: UserId, requester: UserId) -> StoreResult<bool> {
    let statements = vec![
        notifications::off_follow_request(db, target, requester)?,
        stmt(
            db,
            "DELETE FROM follow_requests WHERE target_id = ?1 AND requester_id = ?2",
            &[int(target), int(requester)],
        )?,
    ];
    let results = batch(db, statements).await?;
    Ok(changed_rows(results.get(1)) > 0)
}

/// Whether `requester` has a pending request to `target`.
pub async fn exists(db: UserDb<'_>, target: UserId, requester: UserId) -> StoreResult<bool> {
    Ok(!among(db, target, &[requester]).await?.is_empty())
}

#[derive(Deserialize)]
struct Requester {
    requester_id: UserId,
}

/// Which of `requesters` have a pending request to `target` (on the target's home).
pub async fn among(db: UserDb<'_>, target: UserId, requesters: &[UserId]) -> StoreResult<Vec<UserId>> {
    let rows: Vec<Requester> = all(
        db,
        "SELECT requester_id FROM follow_requests \
         WHERE target_id = ?1 AND requester_id IN (SELECT value FROM json_each(?2))",
        &[int(target), text(&id_list(requesters))],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.requester_id).collect())
}

#[derive(Deserialize)]
struct Target {
    target_id: UserId,
}

/// Which of `targets` `requester` has a pending request to: one statement per targets' home
/// database, side by side.
pub async fn requested(shards: &Shards, requester: UserId, targets: &[UserId]) -> StoreResult<Vec<UserId>> {
    const SQL: &str = "SELECT target_id FROM follow_requests \
                       WHERE requester_id = ?1 AND target_id IN (SELECT value FROM json_each(?2))";
    let groups = shards.users_by_database(targets.iter().copied());
    let found = shards
        .across(groups, |db, ids| async move {
            all::<Target>(db, SQL, &[int(requester), text(&id_list(&ids))]).await
        })
        .await?;
    Ok(found.into_iter().flatten().map(|t| t.target_id).collect())
}

/// A page of `target`'s pending requests, newest first, below `before`.
pub async fn page(
    db: UserDb<'_>,
    target: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<EdgeKey>> {
    let before = before.unwrap_or(SortKey::new(i64::MAX, i64::MAX));
    all(
        db,
        "SELECT requester_id AS other, created_at AS sort_at FROM follow_requests \
         WHERE target_id = ?1 AND (created_at, requester_id) < (?2, ?3) \
         ORDER BY created_at DESC, requester_id DESC LIMIT ?4",
        &[int(target), int(before.primary), int(before.id), int(limit as i64)],
    )
    .await
}

/// How many requests `target` has pending (for `source.follow_requests_count`).
pub async fn count(db: UserDb<'_>, target: UserId) -> StoreResult<i64> {
    #[derive(Deserialize)]
    struct Count {
        n: i64,
    }
    let rows: Vec<Count> =
        all(db, "SELECT COUNT(*) AS n FROM follow_requests WHERE target_id = ?1", &[int(target)]).await?;
    Ok(rows.first().map_or(0, |c| c.n))
}
