//! Polls (issue 42): read and vote as a viewer who may see the poll's post now, and the cron's
//! notice to the author and voters once a poll ended.

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::polls::{self, PollState};
use crate::domain::shard::group_by_database;
use crate::domain::snowflake::shard_of_id;
use crate::error::{ApiError, ApiResult};
use crate::services::posts;
use crate::store::polls::{self as store, Vote};
use crate::store::posts::PostRow;
use crate::store::AnyDb;

/// The poll `id` (its post's id) with its post, as the viewer may see it now; 404 like a poll
/// that does not exist otherwise.
pub async fn get(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<(PostRow, PollState)> {
    let post = posts::visible(ctx, viewer, id).await.map_err(|_| ApiError::NotFound("no such poll"))?;
    if post.id != id {
        return Err(ApiError::NotFound("no such poll"));
    }
    let poll = post.poll().ok_or(ApiError::NotFound("no such poll"))?;
    Ok((post, poll))
}

/// Votes once in a running poll of someone else's (Mastodon's rules: `422` for one's own poll,
/// an ended one, a second vote); the poll after the vote.
pub async fn vote(
    ctx: &Ctx,
    viewer: UserId,
    id: PostId,
    given: &[String],
) -> ApiResult<(PostRow, PollState)> {
    let (post, poll) = get(ctx, viewer, id).await?;
    if post.author_id == viewer {
        return Err(ApiError::field("choices", "you cannot vote in your own poll"));
    }
    if poll.expired(ctx.now) {
        return Err(ApiError::field("choices", "the poll has already ended"));
    }
    let choices = polls::choices(given, poll.options.len(), poll.multiple)?;
    let nonce: String = crate::context::random_bytes::<8>()?.iter().map(|b| format!("{b:02x}")).collect();
    match store::vote(ctx.post_db(id), (id, viewer), &choices, &nonce, ctx.now).await? {
        Vote::Counted => get(ctx, viewer, id).await,
        Vote::Already => Err(ApiError::field("choices", "you have already voted in this poll")),
        Vote::Ended => Err(ApiError::field("choices", "the poll has already ended")),
    }
}

/// Statements one pass may spend telling ended polls (D1 allows 1,000 queries per invocation,
/// and the pass has other work): polls past it wait for the next pass.
const TELL_BUDGET: usize = 600;

/// The cron's share on one database: each ended poll not told yet notifies its author and its
/// voters (each on their home, one batch per database, once: a notification of the same
/// subject is never made twice), and only then is marked told, so a pass cut short tells the
/// rest on the next one and nobody twice. The number of polls told.
pub async fn tell_ended(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<usize> {
    let mut spent = 0;
    let mut told = 0;
    for poll in store::ended(db, ctx.now).await? {
        let mut recipients = store::voters(db, poll.post_id).await?;
        recipients.push(poll.author_id);
        spent += recipients.len() + 2;
        if spent > TELL_BUDGET && told > 0 {
            break;
        }
        let subject = (poll.post_id, poll.author_id);
        let homes = recipients.iter().map(|&r| (shard_of_id(r.get()), r));
        let groups: Vec<_> = group_by_database(ctx.shard_map(), homes)
            .into_iter()
            .map(|(i, g)| (ctx.database(i), g))
            .collect();
        ctx.shards
            .across(
                groups,
                |home, users| async move { store::notify_ended(home, &users, subject, ctx.now).await },
            )
            .await?;
        store::mark_told(db, poll.post_id, ctx.now).await?;
        told += 1;
    }
    Ok(told)
}
