//! Hashtags as things a user acts on: a tag's page (its recent uses), following a tag,
//! featuring it on one's profile, and the suggestions for what to feature. A tag's uses are
//! read from the timeline index on the tag's database; the lists live on the user's home.

use futures_util::future::{join, join_all};

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::policy::DAY_MS;
use crate::domain::tags::{hashtags, key_of, IndexKey};
use crate::domain::visibility::Visibility;
use crate::error::{ApiError, ApiResult};
use crate::store::posts;
use crate::store::tags::{self as lists, TagList, TagRow};
use crate::store::timelines::{self as index, DayUses};

/// How many tags one account may feature (Mastodon's limit).
pub const MAX_FEATURED: usize = 10;
/// How many tags a followed-tags page lists at most.
pub const MAX_FOLLOWED: usize = 200;
/// The days a tag's history covers (Mastodon's week).
const HISTORY_DAYS: i64 = 7;
/// How many of the viewer's own recent posts the feature suggestions look at.
const SUGGESTION_POSTS: usize = 100;

/// A tag as the viewer sees it.
pub struct TagView {
    pub name: String,
    /// Uses per day, newest day first, the last [`HISTORY_DAYS`] (empty when not read).
    pub history: Vec<DayUses>,
    pub following: bool,
    pub featuring: bool,
}

/// One tag, with its week of uses and whether the viewer follows and features it.
pub async fn tag(ctx: &Ctx, viewer: UserId, name: &str) -> ApiResult<TagView> {
    let key = IndexKey::tag(name);
    let since = (ctx.now / DAY_MS - (HISTORY_DAYS - 1)) * DAY_MS;
    let keys = [key_of(name)];
    let db = ctx.user_db(viewer);
    let (history, (followed, featured)) = join(
        index::uses_by_day(ctx.shards.index(&key), &key, since),
        join(
            lists::list(db, TagList::Followed, viewer, Some(&keys), 1),
            lists::list(db, TagList::Featured, viewer, Some(&keys), 1),
        ),
    )
    .await;
    Ok(TagView {
        name: name.to_string(),
        history: history?,
        following: !followed?.is_empty(),
        featuring: !featured?.is_empty(),
    })
}

/// Several tags (names as written) as the viewer sees them: each one's week of uses on its own
/// database (side by side) and the viewer's follows and features in one read each.
pub async fn views(ctx: &Ctx, viewer: UserId, names: &[String]) -> ApiResult<Vec<TagView>> {
    let since = (ctx.now / DAY_MS - (HISTORY_DAYS - 1)) * DAY_MS;
    let keys: Vec<String> = names.iter().map(|n| key_of(n)).collect();
    let index_keys: Vec<IndexKey> = names.iter().map(|n| IndexKey::tag(n)).collect();
    let db = ctx.user_db(viewer);
    let (histories, (followed, featured)) = join(
        join_all(index_keys.iter().map(|key| index::uses_by_day(ctx.shards.index(key), key, since))),
        join(
            lists::list(db, TagList::Followed, viewer, Some(&keys), keys.len()),
            lists::list(db, TagList::Featured, viewer, Some(&keys), keys.len()),
        ),
    )
    .await;
    let (followed, featured) = (followed?, featured?);
    names
        .iter()
        .zip(histories)
        .map(|(name, history)| {
            let key = key_of(name);
            Ok(TagView {
                name: name.clone(),
                history: history?,
                following: followed.iter().any(|t| t.tag_key == key),
                featuring: featured.iter().any(|t| t.tag_key == key),
            })
        })
        .collect()
}

/// Follows or unfollows a tag; the tag as the viewer sees it now. The tag's side (whom its
/// posts reach) is written first on a follow and last on an unfollow: a request that stops
/// between the two databases leaves at most a delivery the viewer's list does not show, and
/// the retry (the same request) completes it.
pub async fn follow(ctx: &Ctx, viewer: UserId, name: &str, on: bool) -> ApiResult<TagView> {
    let key = IndexKey::tag(name);
    let tag_side = ctx.shards.index(&key);
    if on {
        index::set_tag_follower(tag_side, &key, viewer, true).await?;
    }
    lists::set(ctx.user_db(viewer), TagList::Followed, viewer, name, on, ctx.now).await?;
    if !on {
        index::set_tag_follower(tag_side, &key, viewer, false).await?;
    }
    tag(ctx, viewer, name).await
}

/// Features or unfeatures a tag on the viewer's profile (at most [`MAX_FEATURED`]).
pub async fn feature(ctx: &Ctx, viewer: UserId, name: &str, on: bool) -> ApiResult<TagView> {
    let db = ctx.user_db(viewer);
    if on {
        let held = lists::list(db, TagList::Featured, viewer, None, MAX_FEATURED + 1).await?;
        let already = held.iter().any(|t| t.tag_key == key_of(name));
        if !already && held.len() >= MAX_FEATURED {
            return Err(ApiError::field("name", format!("at most {MAX_FEATURED} tags may be featured")));
        }
    }
    lists::set(db, TagList::Featured, viewer, name, on, ctx.now).await?;
    tag(ctx, viewer, name).await
}

/// The tags the viewer follows, newest first.
pub async fn followed(ctx: &Ctx, viewer: UserId) -> ApiResult<Vec<TagRow>> {
    Ok(lists::list(ctx.user_db(viewer), TagList::Followed, viewer, None, MAX_FOLLOWED).await?)
}

/// A featured tag with its account's public uses of it.
pub struct Featured {
    pub row: TagRow,
    pub uses: i64,
    /// The newest use's post id.
    pub newest: Option<i64>,
}

/// The tags `user` features, each with how often they used it publicly.
pub async fn featured(ctx: &Ctx, user: UserId) -> ApiResult<Vec<Featured>> {
    let rows = lists::list(ctx.user_db(user), TagList::Featured, user, None, MAX_FEATURED).await?;
    let keys: Vec<IndexKey> = rows.iter().map(|r| IndexKey::tag(&r.tag_key)).collect();
    let counts = join_all(keys.iter().map(|key| index::author_uses(ctx.shards.index(key), key, user))).await;
    rows.into_iter()
        .zip(counts)
        .map(|(row, found)| {
            let found = found?;
            Ok(Featured { row, uses: found.uses, newest: found.newest })
        })
        .collect()
}

/// The tags of the viewer's own recent public posts that they do not feature yet, most used
/// first (Mastodon suggests the same).
pub async fn suggestions(ctx: &Ctx, viewer: UserId) -> ApiResult<Vec<String>> {
    let db = ctx.user_db(viewer);
    let (recent, featured) = join(
        posts::author_page(db, viewer, viewer, &[Visibility::Public], None, SUGGESTION_POSTS),
        lists::list(db, TagList::Featured, viewer, None, MAX_FEATURED),
    )
    .await;
    let featured: Vec<String> = featured?.into_iter().map(|t| t.tag_key).collect();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for post in recent?.iter().filter(|p| p.reblog_of.is_none()) {
        for name in hashtags(&post.body) {
            if featured.contains(&key_of(name)) {
                continue;
            }
            match counts.iter_mut().find(|(n, _)| key_of(n) == key_of(name)) {
                Some((_, count)) => *count += 1,
                None => counts.push((name.to_string(), 1)),
            }
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    Ok(counts.into_iter().take(MAX_FEATURED).map(|(name, _)| name).collect())
}
