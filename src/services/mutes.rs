//! Mutes (`domain/mutes.rs`, `store/mutes.rs`): kept on the muter's home and checked by the
//! reads that run there (the feed's edges, notifications, relationships, streamed updates).

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::domain::mutes::Mute;
use crate::error::{ApiError, ApiResult};
use crate::services::users::visible_with_relationship;
use crate::store::mutes::{self, MuteRow};
use crate::store::users::{shown_by_ids, UserKey, UserRow};

/// Mutes `other` (a user the viewer may see; not the viewer): their posts leave the viewer's
/// home and list timelines at once, and with `notifications` their notifications too. Muting
/// again replaces the parameters.
pub async fn mute(ctx: &Ctx, viewer: UserId, other: UserId, mute: Mute) -> ApiResult<()> {
    if other == viewer {
        return Err(ApiError::field("id", "you cannot mute yourself"));
    }
    visible_with_relationship(ctx, viewer, UserKey::Id(other)).await?;
    // shard: the viewer's home, the mute's one side.
    Ok(mutes::set(ctx.user_db(viewer), viewer, other, mute, ctx.now).await?)
}

/// Ends a mute (idempotent) of a user the viewer may see.
pub async fn unmute(ctx: &Ctx, viewer: UserId, other: UserId) -> ApiResult<()> {
    visible_with_relationship(ctx, viewer, UserKey::Id(other)).await?;
    Ok(mutes::remove(ctx.user_db(viewer), viewer, other).await?)
}

/// A page of the viewer's standing mutes (newest first) with the muted users that are shown
/// (not suspended), and the key of the last row read when more may follow.
pub async fn page(
    ctx: &Ctx,
    viewer: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> ApiResult<(Vec<(UserRow, MuteRow)>, Option<SortKey>)> {
    let rows = mutes::page(ctx.user_db(viewer), viewer, before, limit).await?;
    let next = rows.last().filter(|_| rows.len() == limit).map(MuteRow::sort_key);
    let ids: Vec<UserId> = rows.iter().map(|r| r.muted_id).collect();
    let users = shown_by_ids(&ctx.shards, &ids).await?;
    let shown = rows
        .into_iter()
        .filter_map(|r| users.iter().find(|u| u.id == r.muted_id).map(|u| (u.clone(), r)))
        .collect();
    Ok((shown, next))
}
