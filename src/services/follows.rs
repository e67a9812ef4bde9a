//! Follow, unfollow, block and unblock: the authoritative half of every graph change, committed
//! on the actor's side with its outbox event (`store/graph.rs`) and carried out inline right
//! after (the queue if that fails), so the actor's very next read reflects it. The mirror half
//! is `services/graph.rs`, which the events run (kept apart: the fan-out that carries the
//! events calls into it).

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::replica::Change;
use crate::domain::visibility::Relationship;
use crate::error::{ApiError, ApiResult};
use crate::services::{fanout, replicas, users};
use crate::store::graph::{self, EdgeChange, GroupChange};
use crate::store::users::UserKey;

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
