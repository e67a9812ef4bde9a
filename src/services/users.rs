//! Users across databases: a user's row lives on their home shard, their handle in the
//! directory on the handle's shard (`domain/shard.rs`). Sign-up claims the handle first, so a
//! taken handle is refused before anything is written; a sign-up that fails after the claim
//! gives it back, and one that crashed in between is repaired by [`release_orphan_claims`].

use std::collections::HashSet;

use crate::context::{id_seed, Ctx};
use crate::domain::ids::UserId;
use crate::domain::shard::prefix_within_databases;
use crate::domain::snowflake::{shard_of_id, LogicalShard};
use crate::domain::validate::{DisplayName, Handle};
use crate::domain::visibility::{may_see_author, Relationship};
use crate::error::{ApiError, ApiResult};
use crate::store::snowflake::{attempt_id, ATTEMPTS};
use crate::store::users::{self, Credentials, UserKey, UserRow};
use crate::store::{AnyDb, StoreError};

/// A claim older than this without its user row is from a crashed sign-up (a sign-up writes
/// the row right after the claim, within one request).
const CLAIM_GRACE_MS: i64 = 60_000;
/// How far back the repair looks (it runs every minute: each claim is checked several times).
const CLAIM_LOOKBACK_MS: i64 = 15 * 60_000;
/// Home databases one directory's orphan check looks users up on, at most, per pass.
const CLAIM_HOME_DATABASES: usize = 16;

/// Registers a user: the handle's claim in the directory, then the row on a home shard drawn
/// uniformly (users spread evenly over the databases).
pub async fn sign_up(
    ctx: &Ctx,
    handle: &Handle,
    display_name: &DisplayName,
    password_hash: Option<&str>,
) -> ApiResult<UserRow> {
    let mut seed = id_seed()?;
    let home = LogicalShard::from_random(seed.next_bits());
    let directory = ctx.handle_db(handle.as_str());
    let mut attempt = 0;
    loop {
        let id = attempt_id(ctx.now, attempt, home, &mut seed)?;
        users::claim_handle(directory, handle, id, ctx.now).await.map_err(taken_handle)?;
        match users::insert(ctx.user_db(UserId::from_trusted(id)), id, handle, display_name, password_hash)
            .await
        {
            Ok(user) => {
                // Found by search from now on (best effort: a lost write costs only that).
                crate::services::search::index::account(ctx, user.id, &user.handle, &user.display_name, None)
                    .await;
                return Ok(user);
            }
            Err(e) => {
                users::release_handle(directory.any(), handle.as_str(), id).await?;
                attempt += 1;
                if !e.is_unique_violation("users.id") || attempt == ATTEMPTS {
                    return Err(taken_handle(e));
                }
            }
        }
    }
}

/// A sign-up's store failure as the client sees it: a handle someone holds (in the directory,
/// or on the home database's own `users.handle`) is 409 `handle_taken`.
fn taken_handle(e: StoreError) -> ApiError {
    if e.is_unique_violation("handles.handle") || e.is_unique_violation("users.handle") {
        return ApiError::Conflict { code: "handle_taken", detail: "that handle is already taken" };
    }
    e.into()
}

/// The user a handle names, by the directory.
pub async fn resolve(ctx: &Ctx, handle: &Handle) -> ApiResult<Option<UserId>> {
    Ok(users::handle_owner(ctx.handle_db(handle.as_str()), handle).await?)
}

/// The credentials of the user a handle names (sign-in).
pub async fn credentials(ctx: &Ctx, handle: &Handle) -> ApiResult<Option<Credentials>> {
    let Some(id) = resolve(ctx, handle).await? else { return Ok(None) };
    Ok(users::credentials(ctx.user_db(id), id).await?)
}

/// A user and what the viewer is to them, from the user's home database (a handle resolved by
/// the directory first); `None` if there is no such user.
pub async fn get_with_relationship(
    ctx: &Ctx,
    viewer: UserId,
    key: UserKey<'_>,
) -> ApiResult<Option<(UserRow, Relationship)>> {
    let id = match key {
        UserKey::Id(id) => id,
        UserKey::Handle(handle) => match resolve(ctx, handle).await? {
            Some(id) => id,
            None => return Ok(None),
        },
    };
    Ok(users::get_with_relationship(&ctx.shards, viewer, id).await?)
}

/// A user the viewer may see (exists, no block either way) and what the viewer is to them,
/// or 404.
pub async fn visible_with_relationship(
    ctx: &Ctx,
    viewer: UserId,
    key: UserKey<'_>,
) -> ApiResult<(UserRow, Relationship)> {
    match get_with_relationship(ctx, viewer, key).await? {
        Some((user, rel)) if may_see_author(rel) => Ok((user, rel)),
        _ => Err(ApiError::NotFound("no such user")),
    }
}

/// A user the viewer may see, or 404.
pub async fn visible(ctx: &Ctx, viewer: UserId, id: UserId) -> ApiResult<UserRow> {
    Ok(visible_with_relationship(ctx, viewer, UserKey::Id(id)).await?.0)
}

/// Cron: releases directory claims left without a user row by a sign-up that crashed between
/// its two writes. Looks at the claims of the last minutes on one directory database (bounded,
/// by the claims' time index; each database's reconciliation share runs its own), asks each
/// home database which of their users exist, and deletes the claims of those that do not.
/// Returns how many it released.
pub async fn release_orphan_claims(ctx: &Ctx, directory: AnyDb<'_>) -> ApiResult<usize> {
    let (from, to) = (ctx.now - CLAIM_LOOKBACK_MS, ctx.now - CLAIM_GRACE_MS);
    let mut released = 0;
    let mut claims = users::recent_claims(directory, from, to).await?;
    // Homes on at most CLAIM_HOME_DATABASES databases, one lookup each, however many there are;
    // the claims cut off are seen by a later pass (a claim stays in the lookback ~14 passes).
    let homes = claims.iter().map(|(_, id)| shard_of_id(id.get()));
    claims.truncate(prefix_within_databases(ctx.shard_map(), homes, CLAIM_HOME_DATABASES));
    let ids: Vec<UserId> = claims.iter().map(|(_, id)| *id).collect();
    let present: HashSet<UserId> = users::existing(&ctx.shards, &ids).await?.into_iter().collect();
    for (handle, id) in claims.iter().filter(|(_, id)| !present.contains(id)) {
        users::release_handle(directory, handle, id.get()).await?;
        released += 1;
    }
    Ok(released)
}
