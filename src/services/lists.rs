//! Mastodon lists' writes: create, update, delete, and members added (followed accounts only,
//! all or none: `domain/lists.rs`) or removed. All on the owner's home database; a list id is
//! only ever looked up with its owner, so someone else's list is 404 like a missing one. The
//! errors are worded as Mastodon's, whose clients show them as they come.

use crate::context::{id_seed, Ctx};
use crate::domain::ids::{ListId, UserId};
use crate::domain::lists::{accounts_to_add, Refusal};
use crate::error::{ApiError, ApiResult};
use crate::store::lists::{self as store, ListFields, ListRow};

pub const NOT_FOUND: ApiError = ApiError::NotFound("Record not found");
pub const LIST_FULL: ApiError =
    ApiError::Conflict { code: "limit_reached", detail: "a list holds at most 1000 accounts" };

/// The owner's list, or 404.
pub async fn owned(ctx: &Ctx, owner: UserId, id: ListId) -> ApiResult<ListRow> {
    store::get(ctx.user_db(owner), owner, id).await?.ok_or(NOT_FOUND)
}

/// A new list; 409 `limit_reached` past `MAX_LISTS`.
pub async fn create(ctx: &Ctx, owner: UserId, fields: &ListFields) -> ApiResult<ListRow> {
    let row = store::create(ctx.user_db(owner), owner, fields, ctx.now, id_seed()?).await?;
    let full = ApiError::Conflict { code: "limit_reached", detail: "a user may have at most 100 lists" };
    row.ok_or(full)
}

/// Changes what `fields` gives; the list as it is now.
pub async fn update(ctx: &Ctx, owner: UserId, id: ListId, fields: &ListFields) -> ApiResult<ListRow> {
    store::update(ctx.user_db(owner), owner, id, fields).await?.ok_or(NOT_FOUND)
}

/// Deletes the list with its members.
pub async fn delete(ctx: &Ctx, owner: UserId, id: ListId) -> ApiResult<()> {
    if !store::delete(ctx.user_db(owner), owner, id).await? {
        return Err(NOT_FOUND);
    }
    Ok(())
}

/// Adds followed accounts, all or none: 404 if one is not followed, 422 if one is a member
/// already, 409 `limit_reached` past `MAX_LIST_ACCOUNTS`.
pub async fn add_accounts(ctx: &Ctx, owner: UserId, id: ListId, asked: &[UserId]) -> ApiResult<()> {
    let db = ctx.user_db(owner);
    owned(ctx, owner, id).await?;
    let (candidates, members) = store::candidates(db, owner, id, asked).await?;
    let add = accounts_to_add(&candidates, members).map_err(|refusal| match refusal {
        Refusal::NotFollowed(_) => NOT_FOUND,
        Refusal::AlreadyMember(_) => {
            ApiError::field("account_ids", "Validation failed: Account has already been taken")
        }
        Refusal::Full => LIST_FULL,
    })?;
    store::add(db, owner, id, &add, ctx.now).await?;
    Ok(())
}

/// Takes accounts out of the list (those not in it are ignored).
pub async fn remove_accounts(ctx: &Ctx, owner: UserId, id: ListId, asked: &[UserId]) -> ApiResult<()> {
    owned(ctx, owner, id).await?;
    Ok(store::remove(ctx.user_db(owner), owner, id, asked).await?)
}
