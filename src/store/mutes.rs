//! Mutes (`mutes`, migration 0025): whom a user mutes, on the muter's home database; the rule
//! is `domain/mutes.rs`. Reads elsewhere on that database (the feed's edges, notifications,
//! relationships) check a mute through [`muted_sql`], expiry included, at read time.

use std::collections::HashSet;

use serde::Deserialize;

use wasm_bindgen::JsValue;

use super::StoreResult;
use super::{all, exec, id_list, int, run, text, AnyDb, UserDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::domain::mutes::Mute;

/// The database's clock in ms (a statement's own "now": reads need no bound parameter for it;
/// second resolution, which is what a timed mute is given in).
const NOW_MS: &str = "(CAST(strftime('%s', 'now') AS INTEGER) * 1000)";

/// "`user` mutes `other` now" (with `notifications`: their notifications too), as SQL over the
/// user's home; `user` and `other` are SQL expressions.
pub fn muted_sql(user: &str, other: &str, notifications: bool) -> String {
    let also = if notifications { " AND m.notifications = 1" } else { "" };
    format!(
        "EXISTS (SELECT 1 FROM mutes m WHERE m.user_id = {user} AND m.muted_id = {other}{also} \
           AND (m.expires_at IS NULL OR m.expires_at > {NOW_MS}))"
    )
}

/// "This mute `m` of `user`'s stands now" (not expired), as SQL over the user's home.
pub fn standing_sql(user: &str) -> String {
    format!("m.user_id = {user} AND (m.expires_at IS NULL OR m.expires_at > {NOW_MS})")
}

/// Mutes `other` (again: the new parameters replace the old, as Mastodon does).
pub async fn set(
    db_of_user: UserDb<'_>,
    user: UserId,
    other: UserId,
    mute: Mute,
    now: i64,
) -> StoreResult<()> {
    exec(
        db_of_user,
        "INSERT INTO mutes (user_id, muted_id, notifications, expires_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (user_id, muted_id) DO UPDATE SET notifications = excluded.notifications, \
           expires_at = excluded.expires_at, created_at = excluded.created_at",
        &[int(user), int(other), int(i64::from(mute.notifications)), mute.expires_at.map_or(JsValue::NULL, int), int(now)],
    )
    .await
}

pub async fn remove(db_of_user: UserDb<'_>, user: UserId, other: UserId) -> StoreResult<()> {
    exec(db_of_user, "DELETE FROM mutes WHERE user_id = ?1 AND muted_id = ?2", &[int(user), int(other)]).await
}

/// One standing mute of a user's list.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct MuteRow {
    pub muted_id: UserId,
    pub notifications: i64,
    pub expires_at: Option<i64>,
    pub created_at: i64,
}

impl MuteRow {
    pub fn sort_key(&self) -> SortKey {
        SortKey::new(self.created_at, self.muted_id.get())
    }
}

/// `user`'s standing mutes, newest first, strictly below `before`.
pub async fn page(
    db_of_user: UserDb<'_>,
    user: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<MuteRow>> {
    let (at, id) = before.map_or((i64::MAX >> 11, i64::MAX >> 11), |k| (k.primary, k.id));
    let sql = format!(
        "SELECT muted_id, notifications, expires_at, created_at FROM mutes \
         WHERE user_id = ?1 AND (created_at, muted_id) < (?2, ?3) AND (expires_at IS NULL OR expires_at > {NOW_MS}) \
         ORDER BY created_at DESC, muted_id DESC LIMIT ?4"
    );
    all(db_of_user, &sql, &[int(user), int(at), int(id), int(limit as i64)]).await
}

/// Deletes up to 500 mutes that ended before `now` on `db` (cron; a shard being moved keeps
/// its rows until the move is done: the freeze refuses deletes there).
pub async fn purge_expired(db: AnyDb<'_>, now: i64) -> StoreResult<usize> {
    run(
        db,
        "DELETE FROM mutes WHERE (user_id, muted_id) IN (SELECT user_id, muted_id FROM mutes \
           WHERE expires_at IS NOT NULL AND expires_at <= ?1 \
             AND NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((mutes.user_id >> 3) & 255)) LIMIT 500)",
        &[int(now)],
    )
    .await
}

#[derive(Deserialize)]
struct Muted {
    id: UserId,
}

/// Which of `others` `user` mutes now (posts: any standing mute), one statement on the user's home.
pub async fn muted_among(
    db_of_user: UserDb<'_>,
    user: UserId,
    others: &[UserId],
) -> StoreResult<Vec<UserId>> {
    if others.is_empty() {
        return Ok(Vec::new());
    }
    let sql =
        format!("SELECT e.value AS id FROM json_each(?2) e WHERE {}", muted_sql("?1", "e.value", false));
    let rows: Vec<Muted> = all(db_of_user, &sql, &[int(user), text(&id_list(others))]).await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Everyone `user` mutes now (posts: any standing mute): read beside reads that learn the
/// authors only as they go (a page's boosted originals), one statement on the user's home.
pub async fn muted_now(db_of_user: UserDb<'_>, user: UserId) -> StoreResult<HashSet<UserId>> {
    let sql = format!(
        "SELECT m.muted_id AS id FROM mutes m WHERE m.user_id = ?1 \
           AND (m.expires_at IS NULL OR m.expires_at > {NOW_MS})"
    );
    let rows: Vec<Muted> = all(db_of_user, &sql, &[int(user)]).await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}
