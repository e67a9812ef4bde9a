//! The social graph: follows (with optional group) and blocks.

use super::replica_bump::{bump_of, bump_statement, Bump};
use super::users::{not_blocked_between, UserRow};
use crate::store::SqlStatement;
use serde::Deserialize;

use super::shards::Shards;
use super::StoreResult;
use super::{all, batch, id_list, int, opt_text, outbox, stmt, text, EdgeKey, IdRow, UserDb};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{OutboxId, UserId};
use crate::domain::outbox::EventKind;
use crate::domain::validate::GroupName;

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

/// Follower side: creates or updates the follow, refusing atomically if the follower's side
/// knows of a block either way (`blocks` of the follower, authoritative; `blocked_by`, the
/// mirror of the author's). Returns the follow's group and the outbox event that applies the
/// author-side mirror and then backfills the follower's window (`EventKind::Backfill`); `None`
/// if a block refused the follow.
pub async fn follow(
    db_of_follower: UserDb<'_>,
    follower: UserId,
    author: UserId,
    group: &GroupChange,
    now: i64,
) -> StoreResult<Option<(Option<String>, Vec<OutboxId>)>> {
    let db = db_of_follower;
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
            // The mirror, then the follower's window (if the follow stands when it runs).
            outbox::reader_event(db, follower, EventKind::Backfill, follower, author, now, true)?,
        ],
    )
    .await?;
    let group: Option<GroupRow> =
        results.first().map(|r| r.results()).transpose()?.and_then(|rows| rows.into_iter().next());
    let Some(group) = group else { return Ok(None) };
    Ok(Some((group.group_name, outbox::returned_events(results.get(1..).unwrap_or_default()))))
}

/// A graph change that commits on the actor's side as one batch of one shape: the edge writes,
/// then the outbox events, then the actor's lists lose the other user ([`EdgeChange::steps`]).
/// A follow is not one: its insert is conditional on no block and returns the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeChange {
    /// Follower side: removes the follow (and the author from the follower's lists); if there
    /// was one, records the event that removes the author-side mirror and cleans the reader's
    /// window.
    Unfollow,
    /// Blocker side: records the block and removes the blocker's own follow of the blocked
    /// user, with the events that clean both users' windows of each other. Each event also
    /// converges the pair's mirrors (`services/graph.rs`): the `blocked_by` mirror and the
    /// blocked user's follow of the blocker, which live on the blocked user's side.
    Block,
    /// Blocker side: removes the block; if there was one, records the event that removes its
    /// `blocked_by` mirror.
    Unblock,
}

/// An edge write of the actor's toward the other user, on the actor's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EdgeWrite {
    InsertBlock,
    DeleteBlock,
    DeleteFollow,
}

/// Whose window an event cleans: the actor's (of the other user) or the other's (of the actor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    Actor,
    Other,
}

/// An outbox event of an edge change. `only_if_changed` records it only if the statement just
/// before it changed a row (`changes()`), so a repeat of the change announces nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EdgeEvent {
    kind: EventKind,
    reader: Reader,
    only_if_changed: bool,
}

/// One statement of an edge change's batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Write(EdgeWrite),
    Event(EdgeEvent),
    /// Takes the other user out of every list of the actor's.
    LeaveLists,
}

impl EdgeChange {
    /// The batch's statements in the order that is its contract: the writes; the events right
    /// after them, as a conditional event reads the `changes()` of the write just before it;
    /// the list members last (a list delete between the two would be the `changes()` the event
    /// reads, and an unfollow of an author in no list would announce nothing).
    fn steps(self) -> &'static [Step] {
        const fn event(kind: EventKind, reader: Reader, only_if_changed: bool) -> Step {
            Step::Event(EdgeEvent { kind, reader, only_if_changed })
        }
        use EdgeWrite::*;
        use EventKind::{GraphMirror, RemoveAuthor};
        use Reader::*;
        const UNFOLLOW: &[Step] =
            &[Step::Write(DeleteFollow), event(RemoveAuthor, Actor, true), Step::LeaveLists];
        const BLOCK: &[Step] = &[
            Step::Write(InsertBlock),
            Step::Write(DeleteFollow),
            event(RemoveAuthor, Actor, false),
            event(RemoveAuthor, Other, false),
            Step::LeaveLists,
        ];
        const UNBLOCK: &[Step] = &[Step::Write(DeleteBlock), event(GraphMirror, Actor, true)];
        match self {
            Self::Unfollow => UNFOLLOW,
            Self::Block => BLOCK,
            Self::Unblock => UNBLOCK,
        }
    }
}

impl EdgeWrite {
    fn statement(self, db: UserDb<'_>, actor: UserId, other: UserId, now: i64) -> StoreResult<SqlStatement> {
        let (a, b) = (int(actor), int(other));
        match self {
            Self::InsertBlock => stmt(
                db,
                "INSERT OR IGNORE INTO blocks (blocker_id, blocked_id, created_at) VALUES (?1, ?2, ?3)",
                &[a, b, int(now)],
            ),
            Self::DeleteBlock => {
                stmt(db, "DELETE FROM blocks WHERE blocker_id = ?1 AND blocked_id = ?2", &[a, b])
            }
            Self::DeleteFollow => {
                stmt(db, "DELETE FROM follows WHERE follower_id = ?1 AND author_id = ?2", &[a, b])
            }
        }
    }
}

/// The statements of `change` by `actor` toward `other`, on the actor's database.
fn edge_change_batch(
    db_of_actor: UserDb<'_>,
    change: EdgeChange,
    actor: UserId,
    other: UserId,
    now: i64,
) -> StoreResult<Vec<SqlStatement>> {
    let db = db_of_actor;
    let statement = |step| match step {
        Step::Write(write) => write.statement(db, actor, other, now),
        Step::Event(EdgeEvent { kind, reader, only_if_changed }) => {
            let (reader, author) = match reader {
                Reader::Actor => (actor, other),
                Reader::Other => (other, actor),
            };
            outbox::reader_event(db, actor, kind, reader, author, now, only_if_changed)
        }
        Step::LeaveLists => super::lists::leave_all(db, actor, other),
    };
    change.steps().iter().copied().map(statement).collect()
}

/// Commits `change` by `actor` toward `other` in one atomic batch on the actor's side; the
/// outbox events it recorded.
pub async fn change_edge(
    db_of_actor: UserDb<'_>,
    change: EdgeChange,
    actor: UserId,
    other: UserId,
    now: i64,
) -> StoreResult<(Vec<OutboxId>, Option<Bump>)> {
    let mut statements = edge_change_batch(db_of_actor, change, actor, other, now)?;
    // A block or unblock changes what the actor's replicas say (whom it blocks): last, so the
    // edge statements keep their order.
    let bumps = change != EdgeChange::Unfollow;
    if bumps {
        statements.push(bump_statement(db_of_actor, actor)?);
    }
    let results = batch(db_of_actor, statements).await?;
    let bump = if bumps { bump_of(results.last())? } else { None };
    Ok((outbox::returned_events(&results), bump))
}

#[derive(Debug, Clone, Copy)]
pub enum Direction {
    /// Users who follow `user`.
    Followers,
    /// Users whom `user` follows.
    Following,
}

/// Filtered rounds a list page reads at most (each `limit + 1` edges): only users hidden from
/// the viewer (blocks, suspensions) make a page read more than one.
pub const LIST_ROUNDS: usize = 20;

/// One page (newest follow first) of followers or followees, hiding users with a block either
/// way with the viewer and suspended users. Fetches `limit + 1` rows so the caller knows whether
/// more exist. The edges come from the listed user's own side (`followers` for followers,
/// `follows` for followees), the users from their rows, the blocks from the viewer's side: no
/// statement joins two sides.
pub async fn follow_list(
    shards: &Shards,
    viewer: UserId,
    user: UserId,
    direction: Direction,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<UserRow>> {
    let db = shards.user(user);
    shown_user_page(shards, viewer, before, limit, |before, want| {
        edge_page(db, user, direction, before, want)
    })
    .await
}

/// One page of a user list (follow lists, likers) the viewer may see, in the list's order:
/// `page(before, n)` reads the next `n` list entries (user and sort time) from wherever the
/// list lives; the users come from their homes and the blocks from the viewer's side, so no
/// statement joins two databases. Reads again while hidden users left the page short (at most
/// [`LIST_ROUNDS`] times). `limit + 1` rows, so the caller knows whether more exist.
pub async fn shown_user_page<F, Fut>(
    shards: &Shards,
    viewer: UserId,
    before: Option<SortKey>,
    limit: usize,
    page: F,
) -> StoreResult<Vec<UserRow>>
where
    F: Fn(SortKey, usize) -> Fut,
    Fut: std::future::Future<Output = StoreResult<Vec<EdgeKey>>>,
{
    let want = limit + 1;
    let mut before = before.unwrap_or(SortKey::TOP);
    let mut rows = Vec::with_capacity(want);
    for _ in 0..LIST_ROUNDS {
        let edges = page(before, want).await?;
        rows.extend(shown_edges(shards, viewer, &edges).await?);
        match edges.last() {
            Some(last) if edges.len() == want && rows.len() < want => {
                before = SortKey::new(last.sort_at, last.other.get());
            }
            _ => break,
        }
    }
    rows.truncate(want);
    Ok(rows)
}

/// A page of one user's edges in list order, from that user's side only.
async fn edge_page(
    db_of_user: UserDb<'_>,
    user: UserId,
    direction: Direction,
    before: SortKey,
    limit: usize,
) -> StoreResult<Vec<EdgeKey>> {
    let (table, anchor, other) = match direction {
        Direction::Followers => ("followers", "author_id", "follower_id"),
        Direction::Following => ("follows", "follower_id", "author_id"),
    };
    let sql = format!(
        "SELECT {other} AS other, created_at AS sort_at FROM {table} \
         WHERE {anchor} = ?1 AND (created_at, {other}) < (?2, ?3) \
         ORDER BY created_at DESC, {other} DESC LIMIT ?4"
    );
    all(db_of_user, &sql, &[int(user), int(before.primary), int(before.id), int(limit as i64)]).await
}

/// The edges' users the viewer may see, in the edges' order, with the edge's time.
pub async fn shown_edges(shards: &Shards, viewer: UserId, edges: &[EdgeKey]) -> StoreResult<Vec<UserRow>> {
    if edges.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<UserId> = edges.iter().map(|e| e.other).collect();
    // The users from their homes and the blocks from the viewer's side, side by side.
    let (users, hidden) = futures_util::future::join(
        super::users::shown_by_ids(shards, &ids),
        blocked_either_way(shards.user(viewer), viewer, &ids),
    )
    .await;
    let (users, hidden) = (users?, hidden?);
    Ok(edges
        .iter()
        .filter(|e| !hidden.contains(&e.other))
        .filter_map(|e| {
            users.iter().find(|u| u.id == e.other).map(|u| UserRow { sort_at: e.sort_at, ..u.clone() })
        })
        .collect())
}

/// Which of `others` have a block either way with `user`, from `user`'s side alone (`blocks`
/// of the user, authoritative; `blocked_by`, the mirror of the others' blocks).
pub async fn blocked_either_way(
    db_of_user: UserDb<'_>,
    user: UserId,
    others: &[UserId],
) -> StoreResult<Vec<UserId>> {
    let rows: Vec<IdRow> = all(
        db_of_user,
        "SELECT value AS id FROM json_each(?2) WHERE \
           EXISTS (SELECT 1 FROM blocks WHERE blocker_id = ?1 AND blocked_id = value) \
           OR EXISTS (SELECT 1 FROM blocked_by WHERE blocked_id = ?1 AND blocker_id = value)",
        &[int(user), text(&id_list(others))],
    )
    .await?;
    Ok(rows.into_iter().map(|r| UserId::from_trusted(r.id)).collect())
}

/// Which of `others` follow `account`, from the account's side (`followers`, the mirror the
/// fan-out reads): one statement on the account's home, none for nobody.
pub async fn followers_among(
    db_of_account: UserDb<'_>,
    account: UserId,
    others: &[UserId],
) -> StoreResult<Vec<UserId>> {
    if others.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<IdRow> = all(
        db_of_account,
        "SELECT value AS id FROM json_each(?2) \
         WHERE EXISTS (SELECT 1 FROM followers f WHERE f.author_id = ?1 AND f.follower_id = value)",
        &[int(account), text(&id_list(others))],
    )
    .await?;
    Ok(rows.into_iter().map(|r| UserId::from_trusted(r.id)).collect())
}

/// Both directions of follows and blocks between the viewer and each of `others`.
#[derive(Debug, Deserialize)]
pub struct Mutual {
    pub id: UserId,
    following: i64,
    followed_by: i64,
    blocking: i64,
    blocked_by: i64,
    muting: i64,
    muting_notifications: i64,
}

impl Mutual {
    pub fn muting(&self) -> bool {
        self.muting != 0
    }
    pub fn muting_notifications(&self) -> bool {
        self.muting_notifications != 0
    }
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
/// not exist, so `blocked_by` is never true here). The four facts come from the viewer's side
/// alone (`follows`, `followers`, `blocks`, `blocked_by` keyed by the viewer), the users from
/// their own rows.
pub async fn mutuals(shards: &Shards, viewer: UserId, others: &[UserId]) -> StoreResult<Vec<Mutual>> {
    let sql = format!(
        "SELECT value AS id, \
        EXISTS (SELECT 1 FROM follows WHERE follower_id = ?1 AND author_id = value) AS following, \
        EXISTS (SELECT 1 FROM followers WHERE author_id = ?1 AND follower_id = value) AS followed_by, \
        EXISTS (SELECT 1 FROM blocks WHERE blocker_id = ?1 AND blocked_id = value) AS blocking, \
        EXISTS (SELECT 1 FROM blocked_by WHERE blocked_id = ?1 AND blocker_id = value) AS blocked_by, \
        {} AS muting, {} AS muting_notifications FROM json_each(?2)",
        super::mutes::muted_sql("?1", "value", false),
        super::mutes::muted_sql("?1", "value", true)
    );
    let list = id_list(others);
    let params = [int(viewer), text(&list)];
    let (facts, shown) = futures_util::future::join(
        all::<Mutual>(shards.user(viewer), &sql, &params),
        super::users::shown_by_ids(shards, others),
    )
    .await;
    let (facts, shown) = (facts?, shown?);
    Ok(facts.into_iter().filter(|m| !m.blocked_by() && shown.iter().any(|u| u.id == m.id)).collect())
}

/// A page of `user`'s own blocks (the authoritative side), newest first, strictly below
/// `before`: the blocked user and the block's time.
pub async fn blocks_page(
    db_of_user: UserDb<'_>,
    user: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<EdgeKey>> {
    let before = before.unwrap_or(SortKey::TOP);
    all(
        db_of_user,
        "SELECT blocked_id AS other, created_at AS sort_at FROM blocks \
         WHERE blocker_id = ?1 AND (created_at, blocked_id) < (?2, ?3) \
         ORDER BY created_at DESC, blocked_id DESC LIMIT ?4",
        &[int(user), int(before.primary), int(before.id), int(limit as i64)],
    )
    .await
}

/// The users `user` follows, newest follow first, at most `limit`, from the user's side.
pub async fn followees(db_of_user: UserDb<'_>, user: UserId, limit: usize) -> StoreResult<Vec<UserId>> {
    let edges = edge_page(db_of_user, user, Direction::Following, SortKey::TOP, limit).await?;
    Ok(edges.into_iter().map(|e| e.other).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements each change committed before they shared one builder, in their order
    /// (`bench/SHARDS.md` counts statements per operation).
    #[test]
    fn edge_changes_keep_their_statements_and_order() {
        use EdgeWrite::*;
        use Reader::*;
        let event = |kind, reader, only_if_changed| Step::Event(EdgeEvent { kind, reader, only_if_changed });
        let cases = [
            (
                EdgeChange::Unfollow,
                vec![
                    Step::Write(DeleteFollow),
                    event(EventKind::RemoveAuthor, Actor, true),
                    Step::LeaveLists,
                ],
            ),
            (
                EdgeChange::Block,
                vec![
                    Step::Write(InsertBlock),
                    Step::Write(DeleteFollow),
                    event(EventKind::RemoveAuthor, Actor, false),
                    event(EventKind::RemoveAuthor, Other, false),
                    Step::LeaveLists,
                ],
            ),
            (EdgeChange::Unblock, vec![Step::Write(DeleteBlock), event(EventKind::GraphMirror, Actor, true)]),
        ];
        for (change, expected) in cases {
            assert_eq!(change.steps(), expected, "{change:?}");
        }
    }

    /// A conditional event reads `changes()`, so it must come right after a write.
    #[test]
    fn conditional_events_follow_a_write() {
        for change in [EdgeChange::Unfollow, EdgeChange::Block, EdgeChange::Unblock] {
            let steps = change.steps();
            for (i, step) in steps.iter().enumerate() {
                if let Step::Event(EdgeEvent { only_if_changed: true, .. }) = step {
                    assert!(i > 0 && matches!(steps[i - 1], Step::Write(_)), "{change:?} step {i}");
                }
            }
        }
    }
}
