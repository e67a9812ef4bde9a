//! Hot authors' replica state on D1 (migration 0020): `users.replicas` (how many replicas the
//! author has, 0 for none), the reads a replica rebuilds itself from, and promotion. The change
//! counter `users.replica_seq` is bumped by `store/replica_bump.rs`.

use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::posts::feed_columns;
use super::{all, batch, first, int, run, stmt, AnyDb, PostDb, UserDb};
use super::{StoreError, StoreResult};
use crate::domain::ids::{PostId, UserId};
use crate::domain::replica::{HeldPost, Snapshot};

#[derive(Deserialize)]
struct AuthorState {
    seq: i64,
    suspended: i64,
}

#[derive(Deserialize)]
struct Blocked {
    blocked_id: UserId,
}

/// The author's change counter alone (a lease renewal).
pub async fn seq(db: UserDb<'_>, author: UserId) -> StoreResult<i64> {
    let state: Option<AuthorState> = first(
        db,
        "SELECT replica_seq AS seq, suspended_at IS NOT NULL AS suspended FROM users WHERE id = ?1",
        &[int(author)],
    )
    .await?;
    state.map(|s| s.seq).ok_or(StoreError::NotFound("the author's user row"))
}

/// Everything a replica holds, in one batch: the counter (first, so the rows are at least as
/// new as it says), the author's suspension, whom the author blocks, the newest `range` live
/// posts (no viewer: per-viewer columns are read on the viewer's side).
pub async fn snapshot(db: UserDb<'_>, author: UserId, range: usize) -> StoreResult<Snapshot> {
    let posts = format!(
        "{} FROM posts p JOIN users u ON u.id = p.author_id \
         WHERE p.author_id = ?2 AND p.deleted_at IS NULL ORDER BY p.created_at DESC, p.id DESC LIMIT ?3",
        feed_columns()
    );
    let no_viewer = JsValue::from_f64(0.0);
    let results = batch(
        db,
        vec![
            stmt(
                db,
                "SELECT replica_seq AS seq, suspended_at IS NOT NULL AS suspended FROM users WHERE id = ?1",
                &[int(author)],
            )?,
            stmt(db, "SELECT blocked_id FROM blocks WHERE blocker_id = ?1", &[int(author)])?,
            stmt(db, &posts, &[no_viewer, int(author), int(range as i64)])?,
        ],
    )
    .await?;
    let state = results
        .first()
        .map(|r| r.results::<AuthorState>())
        .transpose()?
        .and_then(|s| s.into_iter().next())
        .ok_or(StoreError::NotFound("the author's user row"))?;
    let blocks = results.get(1).map(|r| r.results::<Blocked>()).transpose()?.unwrap_or_default();
    let rows: Vec<serde_json::Value> = results.get(2).map(|r| r.results()).transpose()?.unwrap_or_default();
    let full = rows.len() >= range;
    Ok(Snapshot {
        seq: state.seq,
        suspended: state.suspended != 0,
        blocks: blocks.into_iter().map(|b| b.blocked_id).collect(),
        posts: rows.into_iter().filter_map(held).collect(),
        full,
    })
}

/// One post's row as a replica holds it, `None` when deleted.
pub async fn held_post(db: PostDb<'_>, post: PostId) -> StoreResult<Option<HeldPost>> {
    let sql = format!(
        "{} FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ?2 AND p.deleted_at IS NULL",
        feed_columns()
    );
    let row: Option<serde_json::Value> = first(db, &sql, &[JsValue::from_f64(0.0), int(post)]).await?;
    Ok(row.and_then(held))
}

/// A post row as a replica holds it (its id and time read from the row itself).
pub fn held(row: serde_json::Value) -> Option<HeldPost> {
    let id = row.get("id")?.as_i64()?;
    let created_at = row.get("created_at")?.as_i64()?;
    Some(HeldPost { id: PostId::from_trusted(id), created_at, row: row.to_string().into() })
}

#[derive(Deserialize)]
pub struct Candidate {
    pub id: UserId,
    pub followers_count: i64,
}

/// Authors here at or above the threshold who have no replicas yet (a few per pass).
pub async fn promotion_candidates(
    db: AnyDb<'_>,
    min_followers: i64,
    limit: usize,
) -> StoreResult<Vec<Candidate>> {
    all(
        db,
        "SELECT id, followers_count FROM users WHERE followers_count >= ?1 AND replicas = 0 \
         ORDER BY followers_count DESC LIMIT ?2",
        &[int(min_followers), int(limit as i64)],
    )
    .await
}

/// Gives the author `replicas` replicas (once: a promoted author keeps its count). The
/// counter moves with it, so a replica built before this is behind.
pub async fn promote(db: UserDb<'_>, author: UserId, replicas: u32) -> StoreResult<bool> {
    let changed = run(
        db,
        "UPDATE users SET replicas = ?2, replica_seq = replica_seq + 1 WHERE id = ?1 AND replicas = 0",
        &[int(author), int(i64::from(replicas))],
    )
    .await?;
    Ok(changed > 0)
}

#[derive(Deserialize)]
pub struct Replicated {
    pub id: UserId,
    pub replicas: u32,
}

/// Every author here with replicas (few: the most followed), for the directory.
pub async fn replicated(db: AnyDb<'_>) -> StoreResult<Vec<Replicated>> {
    all(db, "SELECT id, replicas FROM users WHERE replicas > 0 ORDER BY id LIMIT 10000", &[]).await
}
