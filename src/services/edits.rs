//! What an edit tells others: Mastodon's `update` notification to the accounts that boost the
//! edited post (issue 42).

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::shard::group_by_database;
use crate::domain::snowflake::shard_of_id;
use crate::error::ApiResult;
use crate::store::edits;

/// After an edit that changed what `post` shows: its boosters (the newest
/// [`edits::BOOSTERS_TOLD`]) are notified on their homes, one batch per database. Best effort
/// after the edit's commit: a stop between them loses these notifications, never the edit.
pub async fn tell_boosters(ctx: &Ctx, (post, author): (PostId, UserId)) -> ApiResult<()> {
    let boosters = edits::boosters(ctx.post_db(post), post).await?;
    let homes = boosters.into_iter().filter(|b| *b != author).map(|b| (shard_of_id(b.get()), b));
    let groups: Vec<_> =
        group_by_database(ctx.shard_map(), homes).into_iter().map(|(i, g)| (ctx.database(i), g)).collect();
    let now = ctx.now;
    ctx.shards
        .across(
            groups,
            |db, users| async move { edits::tell_boosters(db, &users, (post, author), now).await },
        )
        .await?;
    Ok(())
}
