//! Web Push subscriptions (migration 0040), on the user's home database: one per access token,
//! the delivery's reads (who is subscribed, whether each token still stands, whether each
//! policy admits the actor) and its dedup claim.

use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::{all, first, int, opt_int, run, text, UserDb};
use super::{StoreError, StoreResult};
use crate::domain::ids::UserId;
use crate::domain::push::{Alerts, Policy, PushData, SENT_MEMORY};

const COLUMNS: &str = "id, endpoint, alerts, policy";

/// A subscription as its entity shows it.
#[derive(Debug, Clone, Deserialize)]
pub struct SubscriptionRow {
    pub id: i64,
    pub endpoint: String,
    alerts: i64,
    policy: String,
}

impl SubscriptionRow {
    pub fn data(&self) -> PushData {
        PushData {
            alerts: Alerts::from_bits(self.alerts),
            policy: Policy::parse(&self.policy).unwrap_or_default(),
        }
    }
}

/// What a new subscription stores: its push endpoint and keys (base64url), its data, and the
/// access token it belongs to.
#[derive(Debug, Clone)]
pub struct NewSubscription<'a> {
    pub user: UserId,
    pub token_id: i64,
    pub id: i64,
    pub endpoint: &'a str,
    pub p256dh: &'a str,
    pub auth: &'a str,
    pub data: PushData,
    pub access_token: &'a str,
    pub origin: &'a str,
    pub token_issued_at: Option<i64>,
    pub token_expires_at: i64,
}

/// Stores the token's subscription, replacing the one it had (a new id, nothing remembered as
/// sent): Mastodon's `POST` does the same.
pub async fn replace(db: UserDb<'_>, new: &NewSubscription<'_>, now: i64) -> StoreResult<SubscriptionRow> {
    let sql = format!(
        "INSERT INTO push_subscriptions (user_id, token_id, id, endpoint, p256dh, auth, alerts, policy, \
           access_token, origin, token_issued_at, token_expires_at, sent, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, '[]', ?13) \
         ON CONFLICT (user_id, token_id) DO UPDATE SET id = excluded.id, endpoint = excluded.endpoint, \
           p256dh = excluded.p256dh, auth = excluded.auth, alerts = excluded.alerts, policy = excluded.policy, \
           access_token = excluded.access_token, origin = excluded.origin, token_issued_at = excluded.token_issued_at, \
           token_expires_at = excluded.token_expires_at, sent = '[]', created_at = excluded.created_at \
         RETURNING {COLUMNS}"
    );
    let params = [
        int(new.user),
        int(new.token_id),
        int(new.id),
        text(new.endpoint),
        text(new.p256dh),
        text(new.auth),
        int(new.data.alerts.bits()),
        text(new.data.policy.as_str()),
        text(new.access_token),
        text(new.origin),
        opt_int(new.token_issued_at),
        int(new.token_expires_at),
        int(now),
    ];
    first(db, &sql, &params)
        .await?
        .ok_or_else(|| StoreError::Internal("a subscription upsert returned no row".into()))
}

/// The token's subscription.
pub async fn get(db: UserDb<'_>, user: UserId, token_id: i64) -> StoreResult<Option<SubscriptionRow>> {
    let sql = format!("SELECT {COLUMNS} FROM push_subscriptions WHERE user_id = ?1 AND token_id = ?2");
    first(db, &sql, &[int(user), int(token_id)]).await
}

/// Replaces the token's subscription's data; `None` if it has none.
pub async fn set_data(
    db: UserDb<'_>,
    user: UserId,
    token_id: i64,
    data: PushData,
) -> StoreResult<Option<SubscriptionRow>> {
    let sql = format!(
        "UPDATE push_subscriptions SET alerts = ?3, policy = ?4 WHERE user_id = ?1 AND token_id = ?2 \
         RETURNING {COLUMNS}"
    );
    first(db, &sql, &[int(user), int(token_id), int(data.alerts.bits()), text(data.policy.as_str())]).await
}

/// Removes the token's subscription (if `id` is given, only that one: a push service's 404 for
/// a subscription must not remove the one a new `POST` put in its place). Whether one went.
pub async fn remove(db: UserDb<'_>, user: UserId, token_id: i64, id: Option<i64>) -> StoreResult<bool> {
    let sql =
        "DELETE FROM push_subscriptions WHERE user_id = ?1 AND token_id = ?2 AND (?3 IS NULL OR id = ?3)";
    Ok(run(db, sql, &[int(user), int(token_id), opt_int(id)]).await? > 0)
}

/// One of the recipient's subscriptions, as a delivery sees it: whether its token still stands
/// (not expired, revoked by id or by a logout, nor the user suspended) and whether its alerts
/// and policy admit a notification of this kind from this actor.
#[derive(Debug, Clone, Deserialize)]
pub struct Target {
    pub token_id: i64,
    pub id: i64,
    token_valid: i64,
    admitted: i64,
}

impl Target {
    pub fn token_valid(&self) -> bool {
        self.token_valid != 0
    }

    pub fn admitted(&self) -> bool {
        self.admitted != 0
    }
}

/// The recipient's subscriptions for a notification from `actor` whose alert is `alert_bit`, at
/// `now` (ms). The token rule is `domain/token.rs::revoked` in SQL (whole seconds); the policy
/// reads the recipient's `follows` and their `followers` mirror, both on this database.
pub async fn targets(
    db: UserDb<'_>,
    recipient: UserId,
    actor: UserId,
    alert_bit: i64,
    now: i64,
) -> StoreResult<Vec<Target>> {
    const SQL: &str = "SELECT s.token_id, s.id, \
           (s.token_expires_at > ?4 AND u.suspended_at IS NULL \
            AND (u.tokens_valid_after IS NULL OR (s.token_issued_at IS NOT NULL \
                 AND s.token_issued_at / 1000 > u.tokens_valid_after)) \
            AND NOT (s.token_id <> 0 AND EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.token_id = s.token_id))) \
             AS token_valid, \
           ((s.alerts & ?3) <> 0 AND CASE s.policy \
              WHEN 'all' THEN 1 \
              WHEN 'followed' THEN EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = ?1 AND f.author_id = ?2) \
              WHEN 'follower' THEN EXISTS (SELECT 1 FROM followers f WHERE f.author_id = ?1 AND f.follower_id = ?2) \
              ELSE 0 END) AS admitted \
         FROM push_subscriptions s JOIN users u ON u.id = s.user_id WHERE s.user_id = ?1";
    all(db, SQL, &[int(recipient), int(actor), int(alert_bit), int(now)]).await
}

/// What a claimed subscription sends with: its endpoint and keys, and its token for the payload.
#[derive(Debug, Clone, Deserialize)]
pub struct Claimed {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
    pub access_token: String,
    pub origin: String,
}

/// Claims the push of `notification` to subscription `id` of the token, in one statement:
/// records its id among the ones sent (newest first, the last [`SENT_MEMORY`]) unless it is
/// there already, and only while the subscription is the same one and its alert still on.
/// `None`: nothing to send (a duplicate delivery, or the subscription changed or went).
/// The id is cast: D1 binds a JS number as a REAL, whose JSON text keeps 15 significant digits
/// (a 16-digit id would be stored rounded and never match again).
pub async fn claim(
    db: UserDb<'_>,
    (user, token_id, id): (UserId, i64, i64),
    notification: i64,
    alert_bit: i64,
) -> StoreResult<Option<Claimed>> {
    let sql = format!(
        "UPDATE push_subscriptions SET sent = (SELECT json_group_array(v) FROM \
           (SELECT CAST(?4 AS INTEGER) AS v UNION ALL SELECT * FROM \
             (SELECT value FROM json_each(push_subscriptions.sent) LIMIT {keep}))) \
         WHERE user_id = ?1 AND token_id = ?2 AND id = ?3 AND (alerts & ?5) <> 0 \
           AND NOT EXISTS (SELECT 1 FROM json_each(push_subscriptions.sent) WHERE value = CAST(?4 AS INTEGER)) \
         RETURNING endpoint, p256dh, auth, access_token, origin",
        keep = SENT_MEMORY - 1
    );
    first(db, &sql, &[int(user), int(token_id), int(id), int(notification), int(alert_bit)]).await
}

/// Gives a claim back (the push failed in a way worth retrying): the next attempt sends it.
pub async fn release(
    db: UserDb<'_>,
    (user, token_id, id): (UserId, i64, i64),
    notification: i64,
) -> StoreResult<()> {
    let sql = "UPDATE push_subscriptions SET sent = (SELECT json_group_array(value) FROM \
                 json_each(push_subscriptions.sent) WHERE value <> CAST(?4 AS INTEGER)) \
               WHERE user_id = ?1 AND token_id = ?2 AND id = ?3";
    let params: [JsValue; 4] = [int(user), int(token_id), int(id), int(notification)];
    run(db, sql, &params).await.map(|_| ())
}
