//! The social graph: follows (with optional group) and blocks.

use worker::D1Database;

use super::users::{not_blocked_with_viewer, UserRow, USER_COLUMNS};
use super::{all, batch, first, int, opt_text, run, stmt};
use crate::domain::cursor::SortKey;
use crate::error::{ApiError, ApiResult};

/// What a follow request says about the group: leave it, or set it (to a name or to none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupChange {
    Keep,
    Set(Option<String>),
}

#[derive(serde::Deserialize)]
struct GroupRow {
    group_name: Option<String>,
}

const BLOCK_EITHER_WAY: &str = "EXISTS (SELECT 1 FROM blocks WHERE (blocker_id = ?1 AND blocked_id = ?2) \
                                OR (blocker_id = ?2 AND blocked_id = ?1))";

/// Creates or updates the follow, refusing atomically if a block exists either way (a check
/// made before the insert could race with a concurrent block). Returns the follow's group.
pub async fn follow(
    db: &D1Database,
    follower: i64,
    author: i64,
    group: &GroupChange,
    now: i64,
) -> ApiResult<Option<String>> {
    let (set_group, name) = match group {
        GroupChange::Keep => (0, None),
        GroupChange::Set(name) => (1, name.as_deref()),
    };
    let sql = format!(
        "INSERT INTO follows (follower_id, author_id, group_name, created_at) \
         SELECT ?1, ?2, ?3, ?4 WHERE NOT {BLOCK_EITHER_WAY} \
         ON CONFLICT (follower_id, author_id) DO UPDATE \
           SET group_name = CASE WHEN ?5 = 1 THEN excluded.group_name ELSE group_name END \
         RETURNING group_name"
    );
    let row: Option<GroupRow> =
        first(db, &sql, &[int(follower), int(author), opt_text(name), int(now), int(set_group)]).await?;
    row.map(|r| r.group_name).ok_or(ApiError::Forbidden {
        code: "blocked",
        detail: "a block between you and this user prevents following",
    })
}

pub async fn unfollow(db: &D1Database, follower: i64, author: i64) -> ApiResult<bool> {
    let changed = run(
        db,
        "DELETE FROM follows WHERE follower_id = ?1 AND author_id = ?2",
        &[int(follower), int(author)],
    )
    .await?;
    Ok(changed > 0)
}

/// Records the block and removes follows in both directions in one atomic batch.
pub async fn block(db: &D1Database, blocker: i64, blocked: i64, now: i64) -> ApiResult<()> {
    let (a, b) = (int(blocker), int(blocked));
    batch(
        db,
        vec![
            stmt(
                db,
                "INSERT OR IGNORE INTO blocks (blocker_id, blocked_id, created_at) VALUES (?1, ?2, ?3)",
                &[a.clone(), b.clone(), int(now)],
            )?,
            stmt(
                db,
                "DELETE FROM follows WHERE (follower_id = ?1 AND author_id = ?2) \
                 OR (follower_id = ?2 AND author_id = ?1)",
                &[a, b],
            )?,
        ],
    )
    .await?;
    Ok(())
}

pub async fn unblock(db: &D1Database, blocker: i64, blocked: i64) -> ApiResult<()> {
    run(db, "DELETE FROM blocks WHERE blocker_id = ?1 AND blocked_id = ?2", &[int(blocker), int(blocked)])
        .await?;
    Ok(())
}

#[derive(Debug, Clone, Copy)]
pub enum Direction {
    /// Users who follow `user`.
    Followers,
    /// Users whom `user` follows.
    Following,
}

/// One page (newest follow first) of followers or followees, hiding users with a block either
/// way with the viewer. Fetches `limit + 1` rows so the caller knows whether more exist.
pub async fn follow_list(
    db: &D1Database,
    viewer: i64,
    user: i64,
    direction: Direction,
    before: Option<SortKey>,
    limit: usize,
) -> ApiResult<Vec<UserRow>> {
    let (anchor, other) = match direction {
        Direction::Followers => ("author_id", "follower_id"),
        Direction::Following => ("follower_id", "author_id"),
    };
    let before = before.unwrap_or(SortKey::TOP);
    let sql = format!(
        "SELECT {USER_COLUMNS}, fl.created_at AS sort_at FROM follows fl JOIN users u ON u.id = fl.{other} \
         WHERE fl.{anchor} = ?2 AND (fl.created_at, fl.{other}) < (?3, ?4) AND {} \
         ORDER BY fl.created_at DESC, fl.{other} DESC LIMIT ?5",
        not_blocked_with_viewer("u.id")
    );
    all(db, &sql, &[int(viewer), int(user), int(before.primary), int(before.id), int(limit as i64 + 1)]).await
}
