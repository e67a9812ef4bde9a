//! The social graph: follows (with optional group) and blocks.

use super::users::{not_blocked_between, shown_to_viewer, UserRow, USER_COLUMNS};
use serde::Deserialize;

use super::{all, batch, int, opt_text, outbox, run, stmt, text, Db};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{OutboxId, UserId};
use crate::domain::outbox::EventKind;
use crate::domain::validate::GroupName;
use crate::error::{ApiError, ApiResult};

/// What a follow request says about the group: leave it, or set it (to a name or to none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupChange {
    Keep,
    Set(Option<GroupName>),
}

#[derive(serde::Deserialize)]
struct GroupRow {
    group_name: Option<String>,
}

/// Creates or updates the follow, refusing atomically if a block exists either way (a check
/// made before the insert could race with a concurrent block). Returns the follow's group and
/// the outbox event that backfills the follower's window.
pub async fn follow(
    db: &Db,
    follower: UserId,
    author: UserId,
    group: &GroupChange,
    now: i64,
) -> ApiResult<(Option<String>, Vec<OutboxId>)> {
    let (set_group, name) = match group {
        GroupChange::Keep => (0, None),
        GroupChange::Set(name) => (1, name.as_ref().map(GroupName::as_str)),
    };
    let not_blocked = not_blocked_between("?1", "?2");
    let sql = format!(
        "INSERT INTO follows (follower_id, author_id, group_name, created_at) \
         SELECT ?1, ?2, ?3, ?4 WHERE {not_blocked} \
         ON CONFLICT (follower_id, author_id) DO UPDATE \
           SET group_name = CASE WHEN ?5 = 1 THEN excluded.group_name ELSE group_name END \
         RETURNING group_name"
    );
    let results = batch(
        db,
        vec![
            stmt(db, &sql, &[int(follower), int(author), opt_text(name), int(now), int(set_group)])?,
            // Fill the follower's window with the author's recent posts (if the follow stands).
            outbox::reader_event(db, EventKind::Backfill, follower, author, now, true)?,
        ],
    )
    .await?;
    let group: Option<GroupRow> =
        results.first().map(|r| r.results()).transpose()?.and_then(|rows| rows.into_iter().next());
    let group = group.ok_or(ApiError::BLOCKED)?;
    Ok((group.group_name, outbox::returned_events(results.get(1..).unwrap_or_default())))
}

/// Removes the follow; if there was one, records the event that cleans the reader's window.
pub async fn unfollow(db: &Db, follower: UserId, author: UserId, now: i64) -> ApiResult<Vec<OutboxId>> {
    let results = batch(
        db,
        vec![
            stmt(
                db,
                "DELETE FROM follows WHERE follower_id = ?1 AND author_id = ?2",
                &[int(follower), int(author)],
            )?,
            outbox::reader_event(db, EventKind::RemoveAuthor, follower, author, now, true)?,
        ],
    )
    .await?;
    Ok(outbox::returned_events(&results))
}

/// Records the block and removes follows in both directions in one atomic batch, with the
/// events that clean both users' windows of each other.
pub async fn block(db: &Db, blocker: UserId, blocked: UserId, now: i64) -> ApiResult<Vec<OutboxId>> {
    let (a, b) = (int(blocker), int(blocked));
    let results = batch(
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
            outbox::reader_event(db, EventKind::RemoveAuthor, blocker, blocked, now, false)?,
            outbox::reader_event(db, EventKind::RemoveAuthor, blocked, blocker, now, false)?,
        ],
    )
    .await?;
    Ok(outbox::returned_events(&results))
}

pub async fn unblock(db: &Db, blocker: UserId, blocked: UserId) -> ApiResult<()> {
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
    db: &Db,
    viewer: UserId,
    user: UserId,
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
        shown_to_viewer("u.id")
    );
    all(db, &sql, &[int(viewer), int(user), int(before.primary), int(before.id), int(limit as i64 + 1)]).await
}

/// Both directions of follows and blocks between the viewer and each of `others`.
#[derive(Debug, Deserialize)]
pub struct Mutual {
    pub id: UserId,
    following: i64,
    followed_by: i64,
    blocking: i64,
    blocked_by: i64,
}

impl Mutual {
    pub fn following(&self) -> bool {
        self.following != 0
    }
    pub fn followed_by(&self) -> bool {
        self.followed_by != 0
    }
    pub fn blocking(&self) -> bool {
        self.blocking != 0
    }
    pub fn blocked_by(&self) -> bool {
        self.blocked_by != 0
    }
}

/// The viewer's [`Mutual`] with each user of `others` the viewer may see (existing, not
/// suspended, not blocking the viewer: like everywhere else, such a user answers as if they did
/// not exist, so `blocked_by` is never true here). One query.
pub async fn mutuals(db: &Db, viewer: UserId, others: &[UserId]) -> ApiResult<Vec<Mutual>> {
    const SQL: &str = "SELECT u.id, \
        EXISTS (SELECT 1 FROM follows WHERE follower_id = ?1 AND author_id = u.id) AS following, \
        EXISTS (SELECT 1 FROM follows WHERE follower_id = u.id AND author_id = ?1) AS followed_by, \
        EXISTS (SELECT 1 FROM blocks WHERE blocker_id = ?1 AND blocked_id = u.id) AS blocking, \
        EXISTS (SELECT 1 FROM blocks WHERE blocker_id = u.id AND blocked_id = ?1) AS blocked_by \
        FROM users u WHERE u.id IN (SELECT value FROM json_each(?2)) AND u.suspended_at IS NULL \
        AND NOT EXISTS (SELECT 1 FROM blocks WHERE blocker_id = u.id AND blocked_id = ?1)";
    let list =
        serde_json::to_string(&others.iter().map(|id| id.get()).collect::<Vec<_>>()).unwrap_or_default();
    all(db, SQL, &[int(viewer), text(&list)]).await
}
