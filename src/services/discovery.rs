//! Discovery: trending tags and statuses, suggested accounts and the profile directory.
//!
//! Each database's share of the cron ranks its own rows (the last day's tag uses and public
//! posts' engagement, its accounts) and replaces its share of one table on the control
//! database, at most every [`REFRESH_MS`]; a read is one statement there plus the entities read
//! where they live, checked for the viewer now. So neither a read nor a share grows with the
//! number of databases, and the control database takes two writes per database per refresh.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::policy::DAY_MS;
use crate::error::ApiResult;
use crate::services::originals;
use crate::store::discovery::{self, Ranked, Ranking};
use crate::store::posts::PostRow;
use crate::store::users::{self, UserRow};
use crate::store::{batch, stats, AnyDb};

/// How often a database's rankings are refreshed (Mastodon refreshes its trends every few
/// minutes too); the admin pass refreshes at once.
const REFRESH_MS: i64 = 10 * 60_000;
/// Each database's best rows kept per ranking.
const PER_DATABASE: usize = 20;
const REFRESHED_MARK: &str = "discovery_refreshed_at";

/// Refreshes `db`'s rankings if they are older than [`REFRESH_MS`] (or `force`); whether it did.
pub async fn refresh(ctx: &Ctx, db: AnyDb<'_>, force: bool) -> ApiResult<bool> {
    let last = stats::value(db, REFRESHED_MARK).await?;
    if !force && last.is_some_and(|at| ctx.now - at < REFRESH_MS) {
        return Ok(false);
    }
    let since = ctx.now - DAY_MS;
    let reads = Ranking::ALL.map(|ranking| discovery::rank(db, ranking, since, PER_DATABASE));
    let mut rows = Vec::new();
    for (ranking, ranked) in Ranking::ALL.into_iter().zip(join_all(reads).await) {
        rows.extend(ranked?.into_iter().map(|r| (ranking, r)));
    }
    let control = ctx.control();
    batch(control, discovery::replace(control, db.index(), &rows, ctx.now)?).await?;
    batch(db, vec![stats::set(db, REFRESHED_MARK, ctx.now)?]).await?;
    Ok(true)
}

/// Trending tags: (name, accounts, uses) of the last day, most accounts first.
pub async fn tags(ctx: &Ctx, offset: usize, limit: usize) -> ApiResult<Vec<Ranked>> {
    Ok(discovery::ranked(ctx.control(), Ranking::Tags, offset, limit).await?)
}

/// Trending statuses the viewer may see now, most engaged first.
pub async fn statuses(ctx: &Ctx, viewer: UserId, offset: usize, limit: usize) -> ApiResult<Vec<PostRow>> {
    let ranked = discovery::ranked(ctx.control(), Ranking::Statuses, offset, limit).await?;
    let ids: Vec<PostId> = ranked.iter().map(|r| PostId::from_trusted(r.item)).collect();
    let posts = originals::visible_among(ctx, viewer, &ids).await?;
    let mut authors: Vec<UserId> = posts.iter().map(|p| p.author_id).collect();
    authors.sort_unstable();
    authors.dedup();
    let muted = crate::store::mutes::muted_among(ctx.user_db(viewer), viewer, &authors).await?;
    Ok(ids
        .iter()
        .filter_map(|id| posts.iter().find(|p| p.id == *id && !muted.contains(&p.author_id)).cloned())
        .collect())
}

/// Accounts of a ranking in its order, without suspended ones (and, for suggestions, without
/// the viewer and whom they follow or block either way: `exclude_known`).
pub async fn accounts(
    ctx: &Ctx,
    viewer: UserId,
    ranking: Ranking,
    offset: usize,
    limit: usize,
    exclude_known: bool,
) -> ApiResult<Vec<UserRow>> {
    // Suggestions leave some out: read a few more so a page stays full.
    let want = if exclude_known { limit * 2 + 10 } else { limit };
    let ranked = discovery::ranked(ctx.control(), ranking, offset, want).await?;
    let ids: Vec<UserId> = ranked.iter().map(|r| UserId::from_trusted(r.item)).collect();
    let mut found = users::shown_by_ids(&ctx.shards, &ids).await?;
    if exclude_known {
        // Whom the viewer may be suggested: not themselves, not followed, blocked or muted, and
        // not blocking them (`mutuals` leaves those out).
        let mutuals = crate::store::graph::mutuals(&ctx.shards, viewer, &ids).await?;
        let fresh =
            |id: UserId| mutuals.iter().any(|m| m.id == id && !m.following() && !m.blocking() && !m.muting());
        found.retain(|u| u.id != viewer && fresh(u.id));
    }
    let mut ordered: Vec<UserRow> =
        ids.iter().filter_map(|id| found.iter().find(|u| u.id == *id).cloned()).collect();
    ordered.truncate(limit);
    Ok(ordered)
}
