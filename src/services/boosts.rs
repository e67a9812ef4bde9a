//! Boosts: boost and unboost (the booster's row is a post, so publish and delete carry it; the
//! original's `reblogs` mirror converges after) and the boosters list. How a boost is shown is
//! `services/originals.rs`.

use crate::context::{id_seed, Ctx};
use crate::domain::boosts::{self, BoostMirror, Refusal};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};
use crate::domain::quotes::QuotePolicy;
use crate::domain::replica::Change;
use crate::domain::warning::ContentWarning;
use crate::error::{ApiError, ApiResult};
use crate::services::faults::Faults;
use crate::services::originals::{entry, subject};
use crate::services::{fanout, replicas, streaming};
use crate::store::posts::{self, NewPost, PostRow};
use crate::store::reblogs;
use crate::store::users::UserRow;
use crate::store::StoreError;

fn refused(refusal: Refusal) -> ApiError {
    match refusal {
        Refusal::NotBoostable => ApiError::Forbidden {
            code: "not_boostable",
            detail:
                "only public posts can be boosted (and an author's own followers-only posts, by the author)",
        },
        Refusal::TakenDown => {
            ApiError::Conflict { code: "taken_down", detail: "this post was taken down by a moderator" }
        }
    }
}

/// Boosts the post `id` names (its original, if it is a boost) as `booster`: the boost row
/// with its original attached. A repeat answers the boost already made (one live boost per
/// booster and post: `posts_one_boost`), so a retried or concurrent request never makes two.
pub async fn boost(ctx: &Ctx, booster: UserId, id: PostId) -> ApiResult<PostRow> {
    let original = subject(ctx, booster, id).await?;
    let visibility =
        boosts::boost_visibility(booster, original.author_id, original.visibility, original.is_taken_down())
            .map_err(refused)?;
    let new = NewPost {
        author_id: booster,
        body: "",
        quote_of: None,
        quote_policy: QuotePolicy::default(),
        reply: None,
        reblog_of: Some(original.id),
        mentions: None,
        visibility,
        unlisted: false,
        warning: &ContentWarning::default(),
        media: &[],
        created_at: ctx.now,
        idempotency: None,
        poll: None,
        scheduled: None,
    };
    let sent_at = ctx.clock();
    let mut row = match posts::publish(ctx.user_db(booster), new, ctx.now, id_seed()?).await {
        Ok(mut published) => {
            if let Some((bump, held)) = published.bump.take() {
                replicas::tell(ctx, Some(bump), sent_at, Change::Post(held)).await;
            }
            fanout::announce(ctx, booster, &published.outbox_id.into_iter().collect::<Vec<_>>()).await;
            published.post.ok_or(ApiError::NotFound("no such post"))?
        }
        Err(e) if e.is_unique_violation("posts.reblog_of") => {
            reblogs::live_boost(ctx.user_db(booster), booster, original.id).await?.ok_or(
                ApiError::Conflict { code: "boost_changing", detail: "the boost is being undone: retry" },
            )?
        }
        Err(StoreError::MissingReference { .. }) => {
            return Err(ApiError::InvalidToken("the token's user does not exist"))
        }
        Err(e) => return Err(e.into()),
    };
    Faults::of(ctx).boost_mirror_lost(booster).await?;
    converge(ctx, &mirror_of(&row, original.id, true, ctx.now)).await?;
    let mut original = entry(ctx, booster, original.id).await?;
    original.reblogged_by_me = Some(true);
    row.original = Some(Box::new(original));
    Ok(row)
}

/// Undoes `booster`'s boost of the post `id` names (nothing to undo is no error, as Mastodon):
/// the original as the booster sees it now.
pub async fn unboost(ctx: &Ctx, booster: UserId, id: PostId) -> ApiResult<PostRow> {
    let original = subject(ctx, booster, id).await?;
    if let Some(live) = reblogs::live_boost(ctx.user_db(booster), booster, original.id).await? {
        remove(ctx, &live, original.id).await?;
    }
    let mut original = entry(ctx, booster, original.id).await?;
    original.reblogged_by_me = Some(false);
    Ok(original)
}

/// Deletes a boost row (an unboost, or a `DELETE` of the boost's own id) and turns its mirror
/// off; the removal event takes it out of windows.
pub async fn remove(ctx: &Ctx, boost: &PostRow, original: PostId) -> ApiResult<()> {
    let sent_at = ctx.clock();
    let (events, bump) = posts::delete(ctx.post_db(boost.id), (boost.id, boost.author_id), ctx.now).await?;
    replicas::tell(ctx, bump, sent_at, Change::Gone(boost.id)).await;
    fanout::announce(ctx, boost.author_id, &events).await;
    Faults::of(ctx).boost_mirror_lost(boost.author_id).await?;
    converge(ctx, &mirror_of(boost, original, false, ctx.now)).await
}

fn mirror_of(boost: &PostRow, original: PostId, active: bool, now: i64) -> BoostMirror {
    BoostMirror {
        original,
        boost: boost.id,
        booster: boost.author_id,
        created_at: boost.created_at,
        active,
        now,
    }
}

/// Makes the original's side agree with the boost (`store/reblogs.rs::converge`): called by the
/// request, and again by the boost's outbox event (`services/fanout`), so a crash between the
/// two databases is repaired when the outbox resends the event.
pub async fn converge(ctx: &Ctx, mirror: &BoostMirror) -> ApiResult<()> {
    if let Some(notice) = reblogs::converge(ctx.post_db(mirror.original), mirror).await? {
        streaming::tell(ctx, notice).await;
    }
    Ok(())
}

/// Users who boost the post `id` names now (newest first; `limit + 1` rows fetched).
pub async fn boosters(
    ctx: &Ctx,
    viewer: UserId,
    id: PostId,
    before: Option<SortKey>,
    limit: usize,
) -> ApiResult<Vec<UserRow>> {
    let original = subject(ctx, viewer, id).await?;
    Ok(reblogs::boosters(&ctx.shards, viewer, original.id, before, limit).await?)
}
