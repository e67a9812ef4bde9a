//! Mastodon 4.3's notification policy and requests (migration 0037), on the recipient's home.
//! The policy is read by each notification's own insert (`notifications.rs::policy_sql`), which
//! sets `filtered`; a request is the filtered notifications of one actor, named by the actor's
//! id. Accepting clears their flag and lets the actor's future ones pass; dismissing turns them
//! into tombstones (`super::notifications::DISMISSED`, migration 0044).

use serde::Deserialize;

use super::notifications::DISMISSED;
use super::StoreResult;
use super::{all, batch, first, id_list, int, opt_text, stmt, text, UserDb};
use crate::domain::ids::UserId;

/// The policy's five values (`accept` when there is no row) and its summary.
#[derive(Debug, Clone, Deserialize)]
pub struct PolicyRow {
    pub for_not_following: String,
    pub for_not_followers: String,
    pub for_new_accounts: String,
    pub for_private_mentions: String,
    pub for_limited_accounts: String,
    pub pending_requests: i64,
    pub pending_notifications: i64,
}

/// A policy change: `None` keeps a value.
#[derive(Default)]
pub struct PolicyFields<'a> {
    pub for_not_following: Option<&'a str>,
    pub for_not_followers: Option<&'a str>,
    pub for_new_accounts: Option<&'a str>,
    pub for_private_mentions: Option<&'a str>,
    pub for_limited_accounts: Option<&'a str>,
}

const POLICY_SQL: &str = "SELECT COALESCE(p.for_not_following, 'accept') AS for_not_following, \
       COALESCE(p.for_not_followers, 'accept') AS for_not_followers, \
       COALESCE(p.for_new_accounts, 'accept') AS for_new_accounts, \
       COALESCE(p.for_private_mentions, 'accept') AS for_private_mentions, \
       COALESCE(p.for_limited_accounts, 'accept') AS for_limited_accounts, \
       (SELECT COUNT(DISTINCT n.actor_id) FROM notifications n WHERE n.recipient_id = ?1 AND n.filtered = 1) \
         AS pending_requests, \
       (SELECT COUNT(*) FROM notifications n WHERE n.recipient_id = ?1 AND n.filtered = 1) AS pending_notifications \
     FROM (SELECT ?1 AS id) u LEFT JOIN notification_policies p ON p.user_id = u.id";

pub async fn policy(db: UserDb<'_>, user: UserId) -> StoreResult<Option<PolicyRow>> {
    first(db, POLICY_SQL, &[int(user)]).await
}

/// Changes what `fields` gives, then reads the policy back: one batch.
pub async fn set_policy(
    db: UserDb<'_>,
    user: UserId,
    fields: &PolicyFields<'_>,
    now: i64,
) -> StoreResult<Option<PolicyRow>> {
    let upsert = "INSERT INTO notification_policies (user_id, for_not_following, for_not_followers, \
           for_new_accounts, for_private_mentions, for_limited_accounts, updated_at) \
         VALUES (?1, COALESCE(?2, 'accept'), COALESCE(?3, 'accept'), COALESCE(?4, 'accept'), \
           COALESCE(?5, 'accept'), COALESCE(?6, 'accept'), ?7) \
         ON CONFLICT (user_id) DO UPDATE SET for_not_following = COALESCE(?2, for_not_following), \
           for_not_followers = COALESCE(?3, for_not_followers), for_new_accounts = COALESCE(?4, for_new_accounts), \
           for_private_mentions = COALESCE(?5, for_private_mentions), \
           for_limited_accounts = COALESCE(?6, for_limited_accounts), updated_at = ?7";
    let params = [
        int(user),
        opt_text(fields.for_not_following),
        opt_text(fields.for_not_followers),
        opt_text(fields.for_new_accounts),
        opt_text(fields.for_private_mentions),
        opt_text(fields.for_limited_accounts),
        int(now),
    ];
    let results = batch(db, vec![stmt(db, upsert, &params)?, stmt(db, POLICY_SQL, &[int(user)])?]).await?;
    let rows: Vec<PolicyRow> = results.get(1).map(|r| r.results()).transpose()?.unwrap_or_default();
    Ok(rows.into_iter().next())
}

/// One request: an actor's filtered notifications, how many, and the newest.
#[derive(Debug, Clone, Deserialize)]
pub struct RequestRow {
    pub actor_id: UserId,
    pub count: i64,
    pub last_id: i64,
}

/// The recipient's requests, the newest notification first, below `below` (a notification id)
/// and at most `limit`; or only `actor`'s.
pub async fn requests(
    db: UserDb<'_>,
    user: UserId,
    actor: Option<UserId>,
    (below, limit): (Option<i64>, usize),
) -> StoreResult<Vec<RequestRow>> {
    let sql = "SELECT actor_id, COUNT(*) AS count, MAX(id) AS last_id FROM notifications \
               WHERE recipient_id = ?1 AND filtered = 1 AND (?2 = 0 OR actor_id = ?2) \
               GROUP BY actor_id HAVING MAX(id) < ?3 ORDER BY last_id DESC LIMIT ?4";
    let params = [
        int(user),
        int(actor.map_or(0, UserId::get)),
        int(below.unwrap_or(crate::domain::ids::MAX_ID)),
        int(limit as i64),
    ];
    all(db, sql, &params).await
}

/// Accepts the actors' requests: their notifications join the lists, and later ones pass.
pub async fn accept(db: UserDb<'_>, user: UserId, actors: &[UserId], now: i64) -> StoreResult<()> {
    if actors.is_empty() {
        return Ok(());
    }
    let mut statements = vec![stmt(
        db,
        "UPDATE notifications SET filtered = 0 WHERE recipient_id = ?1 AND filtered = 1 \
         AND actor_id IN (SELECT value FROM json_each(?2))",
        &[int(user), text(&id_list(actors))],
    )?];
    for actor in actors {
        statements.push(stmt(
            db,
            "INSERT INTO notification_accepted (user_id, actor_id, created_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT DO NOTHING",
            &[int(user), int(*actor), int(now)],
        )?);
    }
    batch(db, statements).await?;
    Ok(())
}

/// Dismisses the actors' requests: their filtered notifications become tombstones, so a late
/// write of the same notification (a mention's outbox event) finds them and adds nothing.
pub async fn dismiss(db: UserDb<'_>, user: UserId, actors: &[UserId]) -> StoreResult<()> {
    if actors.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE notifications SET filtered = {DISMISSED} WHERE recipient_id = ?1 AND filtered = 1 \
         AND actor_id IN (SELECT value FROM json_each(?2))"
    );
    let sql = sql.as_str();
    batch(db, vec![stmt(db, sql, &[int(user), text(&id_list(actors))])?]).await?;
    Ok(())
}
