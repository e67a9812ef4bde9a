//! Private notes on accounts and endorsements (`store/account_marks.rs`): each on the acting
//! user's home. The account must exist and be visible to the user; endorsing needs a follow
//! (Mastodon's rule), checked in the endorsement's own statement.

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::ids::UserId;
use crate::error::{ApiError, ApiResult};
use crate::services::users::visible;
use crate::store::account_marks as rows;
use crate::store::graph;
use crate::store::users::UserRow;

/// The longest note (Mastodon's).
pub const MAX_NOTE_CHARS: usize = 2000;

/// Sets (or, empty, removes) the viewer's private note on `account`.
pub async fn set_note(ctx: &Ctx, viewer: UserId, account: UserId, comment: &str) -> ApiResult<()> {
    if comment.chars().count() > MAX_NOTE_CHARS {
        return Err(ApiError::field(
            "comment",
            format!("comment must be at most {MAX_NOTE_CHARS} characters"),
        ));
    }
    visible(ctx, viewer, account).await?;
    Ok(rows::set_note(ctx.user_db(viewer), viewer, account, comment.trim(), ctx.now).await?)
}

/// Endorses an account the viewer follows (`422` otherwise); idempotent.
pub async fn endorse(ctx: &Ctx, viewer: UserId, account: UserId) -> ApiResult<()> {
    visible(ctx, viewer, account).await?;
    if !rows::endorse(ctx.user_db(viewer), viewer, account, ctx.now).await? {
        return Err(ApiError::field("id", "you can only endorse an account you follow"));
    }
    Ok(())
}

pub async fn unendorse(ctx: &Ctx, viewer: UserId, account: UserId) -> ApiResult<()> {
    visible(ctx, viewer, account).await?;
    Ok(rows::unendorse(ctx.user_db(viewer), viewer, account).await?)
}

/// A page (`limit + 1` read) of `user`'s endorsements as the viewer may see them (blocked and
/// suspended accounts left out), newest first; `user` must be visible to the viewer.
pub async fn endorsed(
    ctx: &Ctx,
    viewer: UserId,
    user: UserId,
    before: Option<SortKey>,
    limit: usize,
) -> ApiResult<Vec<UserRow>> {
    if user != viewer {
        visible(ctx, viewer, user).await?;
    }
    let edges = rows::endorsed_page(ctx.user_db(user), user, before, limit + 1).await?;
    Ok(graph::shown_edges(&ctx.shards, viewer, &edges).await?)
}
