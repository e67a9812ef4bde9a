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
use crate::store::follow_requests;
use crate::store::graph::{self, EdgeChange, GroupChange};
use crate::store::users::{shown_by_ids, UserKey, UserRow};
use crate::store::EdgeKey;

/// The other user of a graph change: not the actor, and existing. Unlike reads, a block does
/// not hide them here (you can unblock, and a follow attempt must say `blocked`, not
/// `not_found`).
async fn counterpart(ctx: &Ctx, actor: UserId, other: UserId, what: &'static str) -> ApiResult<Relationship> {
    Ok(counterpart_row(ctx, actor, other, what).await?.1)
}

/// [`counterpart`] with their row.
async fn counterpart_row(
    ctx: &Ctx,
    actor: UserId,
    other: UserId,
    what: &'static str,
) -> ApiResult<(UserRow, Relationship)> {
    if actor == other {
        return Err(ApiError::field("user_id", format!("you cannot {what} yourself")));
    }
    users::get_with_relationship(ctx, actor, UserKey::Id(other))
        .await?
        .ok_or(ApiError::NotFound("no such user"))
}

/// What a follow did: followed (into the group), or, the author being locked, asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    Following(Option<String>),
    Requested,
}

/// Follows `author` (into the group `group` says); the follow's group. `group` is read only
/// once the author is known to be followable: a missing or suspended author is 404 whatever the
/// request says, and a bad group is reported before a block.
pub async fn follow(
    ctx: &Ctx,
    viewer: UserId,
    author: UserId,
    group: impl FnOnce() -> ApiResult<GroupChange>,
) -> ApiResult<Followed> {
    let (row, relationship) = counterpart_row(ctx, viewer, author, "follow").await?;
    if relationship.suspended {
        // Hidden from everyone like a missing user (unfollow and blocks still work on them).
        return Err(ApiError::NotFound("no such user"));
    }
    let group = group()?;
    if relationship.blocked {
        return Err(ApiError::BLOCKED);
    }
    // A locked account's new follower asks first (one already following stays as they are).
    if row.locked() && !relationship.follows {
        let (_, notice) = follow_requests::request(ctx.user_db(author), author, viewer, ctx.now).await?;
        if let Some(notice) = notice {
            super::streaming::tell(ctx, notice).await;
        }
        return Ok(Followed::Requested);
    }
    make_follow(ctx, viewer, author, &group).await?.map(Followed::Following).ok_or(ApiError::BLOCKED)
}

/// The follow itself, committed on the follower's side and carried out inline: what a follow of
/// an unlocked account and an authorized request both do (the same fan-out, backfill and
/// counters). `None` when a block stands between them.
async fn make_follow(
    ctx: &Ctx,
    follower: UserId,
    author: UserId,
    group: &GroupChange,
) -> ApiResult<Option<Option<String>>> {
    let Some((group, events)) =
        graph::follow(ctx.user_db(follower), follower, author, group, ctx.now).await?
    else {
        return Ok(None);
    };
    fanout::apply_inline(ctx, follower, &events).await;
    Ok(Some(group))
}

/// Authorizes `requester`'s pending request to follow `target`: the follow is made as
/// [`make_follow`] makes any, then the request goes (in this order, so a retry after a crash
/// finds the request and makes the same follow again, which changes nothing). `404` when there
/// is no request and they do not follow (an authorize retried after it succeeded answers as it
/// did).
pub async fn authorize(ctx: &Ctx, target: UserId, requester: UserId) -> ApiResult<()> {
    let (_, relationship) = counterpart_row(ctx, target, requester, "authorize").await?;
    let pending = follow_requests::exists(ctx.user_db(target), target, requester).await?;
    if !pending {
        let followed_by = graph::mutuals(&ctx.shards, target, &[requester]).await?;
        return match followed_by.first() {
            Some(m) if m.followed_by() => Ok(()),
            _ => Err(ApiError::NotFound("no such follow request")),
        };
    }
    if !relationship.blocked {
        make_follow(ctx, requester, target, &GroupChange::Keep).await?;
    }
    follow_requests::remove(ctx.user_db(target), target, requester).await?;
    Ok(())
}

/// Rejects (or, by the requester, withdraws) a pending request: it goes with its notification.
/// Idempotent: none pending changes nothing.
pub async fn drop_request(ctx: &Ctx, target: UserId, requester: UserId) -> ApiResult<()> {
    follow_requests::remove(ctx.user_db(target), target, requester).await?;
    Ok(())
}

/// Authorizes every pending request of `target` (an account that unlocked, as Mastodon does), a
/// page at a time, at most [`UNLOCK_APPROVALS`] per call.
pub async fn authorize_all(ctx: &Ctx, target: UserId) -> ApiResult<usize> {
    let mut done = 0;
    while done < UNLOCK_APPROVALS {
        let page = follow_requests::page(ctx.user_db(target), target, None, 50).await?;
        if page.is_empty() {
            break;
        }
        for edge in &page {
            match authorize(ctx, target, edge.other).await {
                // A requester who no longer exists: their request just goes.
                Err(ApiError::NotFound(_)) => drop_request(ctx, target, edge.other).await?,
                other => other?,
            }
        }
        done += page.len();
    }
    Ok(done)
}

/// The most pending requests one unlock authorizes (the rest wait, as requests, for the next
/// unlock or an authorize each).
pub const UNLOCK_APPROVALS: usize = 200;

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
    // An unfollow withdraws a pending request; a block removes one either way.
    if change != EdgeChange::Unblock {
        // Endorsing needs the follow: it goes with it (as in Mastodon).
        crate::store::account_marks::unendorse(ctx.user_db(viewer), viewer, other).await?;
    }
    match change {
        EdgeChange::Unfollow => drop_request(ctx, other, viewer).await?,
        EdgeChange::Block => {
            let (one, two) = futures_util::future::join(
                drop_request(ctx, other, viewer),
                drop_request(ctx, viewer, other),
            )
            .await;
            one.and(two)?;
        }
        EdgeChange::Unblock => {}
    }
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
