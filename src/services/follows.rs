//! Follow, unfollow, block and unblock: the authoritative half of every graph change, committed
//! on the actor's side with its outbox event (`store/graph.rs`) and carried out inline right
//! after (the queue if that fails), so the actor's very next read reflects it. The mirror half
//! is `services/graph.rs`, which the events run (kept apart: the fan-out that carries the
//! events calls into it).

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::domain::replica::Change;
use crate::domain::visibility::Relationship;
use crate::error::{ApiError, ApiResult};
use crate::services::{fanout, replicas, users};
use crate::store::graph::{self, EdgeChange, GroupChange};
use crate::store::users::{shown_by_ids, UserKey, UserRow};
use crate::store::EdgeKey;

/// The other user of a graph change: not the actor, and existing. Unlike reads, a block does
/// not hide them here (you can unblock, and a follow attempt must say `blocked`, not
/// `not_found`).
async fn counterpart(ctx: &Ctx, actor: UserId, other: UserId, what: &'static str) -> ApiResult<Relationship> {
    if actor == other {
        return Err(ApiError::field("user_id", format!("you cannot {what} yourself")));
    }
    users::get_with_relationship(ctx, actor, UserKey::Id(other))
        .await?
        .map(|(_, rel)| rel)
        .ok_or(ApiError::NotFound("no such user"))
}

/// Follows `author` (into the group `group` says); the follow's group. `group` is read only
/// once the author is known to be followable: a missing or suspended author is 404 whatever the
/// request says, and a bad group is reported before a block.
pub async fn follow(
    ctx: &Ctx,
    viewer: UserId,
    author: UserId,
    group: impl FnOnce() -> ApiResult<GroupChange>,
) -> ApiResult<Option<String>> {
    let relationship = counterpart(ctx, viewer, author, "follow").await?;
    if relationship.suspended {
        // Hidden from everyone like a missing user (unfollow and blocks still work on them).
        return Err(ApiError::NotFound("no such user"));
    }
    let group = group()?;
    if relationship.blocked {
        return Err(ApiError::BLOCKED);
    }
    let (group, events) = graph::follow(ctx.user_db(viewer), viewer, author, &group, ctx.now)
        .await?
        .ok_or(ApiError::BLOCKED)?;
    fanout::apply_inline(ctx, viewer, &events).await;
    Ok(group)
}

/// Unfollows, blocks or unblocks `other` (idempotent: a repeat changes nothing).
pub async fn change_edge(ctx: &Ctx, viewer: UserId, other: UserId, change: EdgeChange) -> ApiResult<()> {
    let what = match change {
        EdgeChange::Unfollow => "unfollow",
        EdgeChange::Block => "block",
        EdgeChange::Unblock => "unblock",
    };
    counterpart(ctx, viewer, other, what).await?;
    let sent_at = ctx.clock();
    let (events, bump) = graph::change_edge(ctx.user_db(viewer), change, viewer, other, ctx.now).await?;
    replicas::tell(ctx, bump, sent_at, Change::Reread).await;
    fanout::apply_inline(ctx, viewer, &events).await;
    Ok(())
}

/// Makes `follower` stop following the viewer (Mastodon's `remove_from_followers`): the
/// follower's own unfollow, committed on the follower's side with its events as if they had
/// unfollowed (the viewer's `followers` mirror goes, the follower's window and lists lose the
/// viewer), carried out inline. Idempotent; self is `422`, a missing user `404`.
pub async fn remove_follower(ctx: &Ctx, viewer: UserId, follower: UserId) -> ApiResult<()> {
    counterpart(ctx, viewer, follower, "remove").await?;
    let db = ctx.user_db(follower);
    let (events, _) = graph::change_edge(db, EdgeChange::Unfollow, follower, viewer, ctx.now).await?;
    fanout::apply_inline(ctx, follower, &events).await;
    Ok(())
}

/// A page of the viewer's blocks, newest first, with the blocked users that are shown (not
/// suspended), and the key of the last block read when more may follow.
pub async fn blocked_page(
    ctx: &Ctx,
    viewer: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> ApiResult<(Vec<UserRow>, Option<SortKey>)> {
    let edges = graph::blocks_page(ctx.user_db(viewer), viewer, before, limit).await?;
    let next = edges.last().filter(|_| edges.len() == limit).map(|e| SortKey::new(e.sort_at, e.other.get()));
    let ids: Vec<UserId> = edges.iter().map(|e| e.other).collect();
    let users = shown_by_ids(&ctx.shards, &ids).await?;
    let rows = edges.iter().filter_map(|e| users.iter().find(|u| u.id == e.other).cloned()).collect();
    Ok((rows, next))
}

/// The viewer's follows a familiar-followers answer looks through: the newest this many.
pub const FAMILIAR_FOLLOWEES: usize = 1000;

/// For each of `accounts`: the accounts the viewer follows (the newest [`FAMILIAR_FOLLOWEES`])
/// that follow it, shown to the viewer (no block either way, not suspended). An account the
/// viewer may not see gets none. One read of the viewer's follows, one statement per account
/// on its home (its `followers` mirror), then the users.
pub async fn familiar_followers(
    ctx: &Ctx,
    viewer: UserId,
    accounts: &[UserId],
) -> ApiResult<Vec<(UserId, Vec<UserRow>)>> {
    let (followees, seen) = futures_util::future::join(
        graph::followees(ctx.user_db(viewer), viewer, FAMILIAR_FOLLOWEES),
        graph::mutuals(&ctx.shards, viewer, accounts),
    )
    .await;
    let (followees, seen) = (followees?, seen?);
    let visible: Vec<UserId> = seen.iter().filter(|m| !m.blocking()).map(|m| m.id).collect();
    let reads = accounts.iter().map(|a| {
        let followees = if visible.contains(a) { &followees[..] } else { &[][..] };
        graph::followers_among(ctx.user_db(*a), *a, followees)
    });
    let found = futures_util::future::try_join_all(reads).await?;
    let mut everyone: Vec<UserId> = found.iter().flatten().copied().collect();
    everyone.sort_unstable();
    everyone.dedup();
    let users = graph::shown_edges(
        &ctx.shards,
        viewer,
        &everyone.iter().map(|&other| EdgeKey { other, sort_at: 0 }).collect::<Vec<_>>(),
    )
    .await?;
    Ok(accounts
        .iter()
        .zip(found)
        .map(|(a, ids)| (*a, ids.iter().filter_map(|i| users.iter().find(|u| u.id == *i).cloned()).collect()))
        .collect())
}
