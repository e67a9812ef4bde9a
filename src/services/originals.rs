//! The read side of boosts: what a post id names for an act (a boost's original), a page's
//! boosts resolved to their originals as the viewer may see them now, with the feed's
//! one-entry-per-post rule (`domain/boosts.rs`), and the viewer's marks on a page's posts
//! (bookmarked, boosted). Reads only: every service that shows posts sits on it.

use std::collections::{HashMap, HashSet};

use futures_util::future::{join, join_all};

use crate::context::Ctx;
use crate::domain::boosts::{self, EarlierEntries, OriginalNow};
use crate::domain::cursor::SortKey;
use crate::domain::feed::Hidden;
use crate::domain::ids::{PostId, UserId};
use crate::domain::quotes::{quote_state, QuoteState, QuotedNow};
use crate::domain::read::FeedRow;
use crate::domain::replies::{self, in_feed};
use crate::domain::shard::group_by_database;
use crate::domain::snowflake::shard_of_id;
use crate::domain::tags::FollowedTags;
use crate::domain::visibility::Visibility;
use crate::error::{ApiError, ApiResult};
use crate::store::posts::{self, PostRow, Quoted};
use crate::store::{bookmarks, mutes, reblogs};

/// The post an act on `id` is about: `id` itself, or the original when `id` is a boost (a
/// boost of a boost is a boost of the original, as are a favourite or a bookmark of one). The
/// viewer must see it now, else 404 exactly like a post that does not exist.
pub async fn subject(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    let row = entry(ctx, viewer, id).await?;
    match row.reblog_of {
        Some(original) => entry(ctx, viewer, original).await,
        None => Ok(row),
    }
}

/// The row `id` names as the viewer may see it (a boost is visible where its booster's posts
/// are; what it shows is checked by [`resolve`]).
pub async fn entry(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    posts::get_visible(ctx.post_db(id), viewer, id).await?.ok_or(ApiError::NotFound("no such post"))
}

/// A feed's sources of entries: its followed authors (and the viewer, on home), and the tags
/// it follows (home).
#[derive(Debug, Clone, Copy)]
pub struct FeedSources<'a> {
    pub authors: &'a [UserId],
    pub tags: &'a FollowedTags,
}

/// What a read of a page's originals found.
#[derive(Default)]
struct Originals {
    rows: HashMap<PostId, PostRow>,
    /// Per original, the keys of its active boosts by the feed's sources (feeds only).
    source_boosts: HashMap<PostId, Vec<SortKey>>,
    muted: HashSet<UserId>,
}

/// The originals among `ids` as the viewer sees them, one batch per database they live on, and
/// the viewer's mutes beside them: one round trip.
async fn originals(
    ctx: &Ctx,
    viewer: UserId,
    ids: Vec<PostId>,
    sources: Option<&[UserId]>,
) -> ApiResult<Originals> {
    let mut by_database: HashMap<usize, Vec<PostId>> = HashMap::new();
    for id in ids {
        by_database.entry(ctx.post_db(id).index()).or_default().push(id);
    }
    let reads = by_database.values().map(|ids| reblogs::originals(ctx.post_db(ids[0]), viewer, ids, sources));
    let (found, muted) = join(join_all(reads), mutes::muted_now(ctx.user_db(viewer), viewer)).await;
    let mut out = Originals { muted: muted?, ..Originals::default() };
    for read in found {
        let (rows, boosts) = read?;
        out.rows.extend(rows.into_iter().map(|p| (p.id, p)));
        for b in boosts {
            out.source_boosts.entry(b.post_id).or_default().push(b.key());
        }
    }
    Ok(out)
}

/// A page's rows with each boost's original attached, and the boosts the viewer may not see
/// through (or, on a feed, that repeat a post the feed holds at an earlier entry) left out, with
/// why. `sources` is the feed's authors (`domain::read::Finished::sources`), `None` off a feed
/// (a profile, a single status), where only visibility applies.
///
/// Then each quote shown gets what it shows the viewer now ([`attach_quotes`]).
pub async fn resolve(
    ctx: &Ctx,
    viewer: UserId,
    rows: Vec<PostRow>,
    sources: Option<FeedSources<'_>>,
) -> ApiResult<(Vec<PostRow>, Vec<Hidden>)> {
    let feed: Option<HashSet<UserId>> = sources.map(|s| s.authors.iter().copied().collect());
    let feed_of = feed.as_ref().zip(sources).map(|(authors, s)| InFeed { authors, tags: s.tags });
    let (mut shown, mut hidden) =
        resolve_boosts(ctx, viewer, rows, (sources.map(|s| s.authors), feed_of)).await?;
    if let Some(sources) = &feed {
        // A reply stays in a feed only while the feed follows the account it answers
        // (Mastodon's rule, checked again here whatever delivered it).
        let before = shown.len();
        // A boost of a reply is the booster's entry, shown as boosts are (as Mastodon); a direct
        // reply addressed to the reader is theirs whoever it answers.
        shown.retain(|row| {
            let addressed = row.visibility == Visibility::Private && row.addresses(viewer);
            addressed || in_feed(row.author_id, row.in_reply_to_account_id, viewer, sources)
        });
        hidden.extend(std::iter::repeat_n(Hidden::Unfollowed, before - shown.len()));
    }
    attach_quotes(ctx, viewer, &mut shown).await?;
    Ok((shown, hidden))
}

/// Each quote among the rows (a boost's original included) with its quoted post as the viewer
/// sees it now, or the state that says why it shows none (`domain/quotes.rs::quote_state`):
/// one batch per database the quoted posts live on, beside the viewer's mutes.
async fn attach_quotes(ctx: &Ctx, viewer: UserId, rows: &mut [PostRow]) -> ApiResult<()> {
    let mut wanted: Vec<PostId> =
        rows.iter().filter_map(|r| r.shown().quote_of.filter(|_| r.shown().quoted.is_none())).collect();
    if wanted.is_empty() {
        return Ok(());
    }
    wanted.sort_unstable();
    wanted.dedup();
    let (found, muted) =
        join(live_among(ctx, viewer, &wanted), mutes::muted_now(ctx.user_db(viewer), viewer)).await;
    let (found, muted) = (found?, muted?);
    for row in rows.iter_mut() {
        let shown = match row.original.as_deref_mut() {
            Some(original) => original,
            None => row,
        };
        let Some(id) = shown.quote_of.filter(|_| shown.quoted.is_none()) else { continue };
        let post = found.iter().find(|p| p.id == id && !(p.is_taken_down() && p.author_id != viewer));
        let state = quote_state(QuotedNow {
            exists: post.is_some(),
            visible: post.is_some_and(|p| p.visible_to(viewer)),
            relationship: post.map(|p| p.relationship(viewer)).unwrap_or_default(),
            author_muted: post.is_some_and(|p| muted.contains(&p.author_id)),
        });
        let post = post.filter(|_| state == QuoteState::Accepted).cloned();
        shown.quoted = Some(Box::new(Quoted { id, state, post }));
    }
    Ok(())
}

/// A feed's sources as the one-entry rule asks them: the authors as a set, and the tags.
#[derive(Clone, Copy)]
struct InFeed<'a> {
    authors: &'a HashSet<UserId>,
    tags: &'a FollowedTags,
}

/// [`resolve`]'s first part: the boosts. On a feed, its authors as a list, and its sources.
async fn resolve_boosts(
    ctx: &Ctx,
    viewer: UserId,
    rows: Vec<PostRow>,
    (sources, feed): (Option<&[UserId]>, Option<InFeed<'_>>),
) -> ApiResult<(Vec<PostRow>, Vec<Hidden>)> {
    let unresolved = |r: &PostRow| r.reblog_of.filter(|_| r.original.is_none());
    let mut wanted: Vec<PostId> = rows.iter().filter_map(unresolved).collect();
    if wanted.is_empty() {
        return Ok((rows, Vec::new()));
    }
    wanted.sort_unstable();
    wanted.dedup();
    let found = originals(ctx, viewer, wanted, sources).await?;
    let (mut shown, mut hidden) = (Vec::with_capacity(rows.len()), Vec::new());
    for mut row in rows {
        let Some(original_id) = unresolved(&row) else {
            shown.push(row);
            continue;
        };
        let original = found.rows.get(&original_id);
        let verdict = verdict_of(viewer, &row, (original_id, original), &found, feed);
        match (verdict, original) {
            (Ok(()), Some(original)) => {
                row.original = Some(Box::new(original.clone()));
                shown.push(row);
            }
            (Err(reason), _) => hidden.push(reason),
            (Ok(()), None) => hidden.push(Hidden::Deleted),
        }
    }
    Ok((shown, hidden))
}

/// Whether a boost is shown through its original (found or not): on a feed (`in_feed`, its
/// sources) with the one-entry-per-post rule, elsewhere by visibility alone.
fn verdict_of(
    viewer: UserId,
    boost: &PostRow,
    (original_id, original): (PostId, Option<&PostRow>),
    found: &Originals,
    in_feed: Option<InFeed<'_>>,
) -> Result<(), Hidden> {
    let now = OriginalNow {
        live: original.map(|p| p.live_state(viewer)),
        author_muted: original.is_some_and(|p| found.muted.contains(&p.author_id)),
    };
    let Some(InFeed { authors: in_feed, tags }) = in_feed else { return boosts::original_verdict(now) };
    // The original is an earlier entry only if the feed shows it itself (a reply to an account
    // the feed does not follow is not shown, so its boost is not a repeat): its author is
    // followed, or a tag the reader followed before it was posted delivered it (and admits it
    // now; the boost is later than the post, so it is the later entry).
    let by_tag = |p: &PostRow| {
        let since = p.tag_text().and_then(|text| tags.admitted_since(text));
        since.is_some_and(|since| p.created_at >= since) && !found.muted.contains(&p.author_id)
    };
    let shows_itself = |p: &PostRow| {
        (in_feed.contains(&p.author_id) || by_tag(p))
            && replies::in_feed(p.author_id, p.in_reply_to_account_id, viewer, in_feed)
    };
    let earlier = EarlierEntries {
        author_in_feed: original.is_some_and(shows_itself),
        boosts_in_feed: found.source_boosts.get(&original_id).map_or(&[], Vec::as_slice),
    };
    boosts::entry_verdict(boost.sort_key(), now, earlier)
}

/// The viewer's marks on a page's posts, both read on their home, side by side.
#[derive(Debug, Default)]
pub struct Marks {
    bookmarked: HashSet<PostId>,
    /// Their boosts are their posts (`posts.reblog_of`).
    reblogged: HashSet<PostId>,
}

impl Marks {
    pub fn bookmarked(&self, id: PostId) -> bool {
        self.bookmarked.contains(&id)
    }

    /// Sets `reblogged_by_me` on each row's shown post (a boost's original).
    pub fn apply(&self, rows: &mut [PostRow]) {
        for row in rows {
            match row.original.as_deref_mut() {
                Some(original) => original.reblogged_by_me = Some(self.reblogged.contains(&original.id)),
                None => row.reblogged_by_me = Some(self.reblogged.contains(&row.id)),
            }
        }
    }
}

/// Which of `ids` the viewer bookmarked and boosts (none for no ids).
pub async fn marks_among(ctx: &Ctx, viewer: UserId, ids: &[PostId]) -> ApiResult<Marks> {
    let db = ctx.user_db(viewer);
    let (bookmarked, reblogged) =
        join(bookmarks::marked(db, viewer, ids), reblogs::reblogged_among(db, viewer, ids)).await;
    Ok(Marks { bookmarked: bookmarked?, reblogged: reblogged? })
}

/// Those of `ids` the viewer may see now and not taken down (in no particular order).
pub async fn visible_among(ctx: &Ctx, viewer: UserId, ids: &[PostId]) -> ApiResult<Vec<PostRow>> {
    let read = live_among(ctx, viewer, ids).await?;
    Ok(read.into_iter().filter(|p| p.visible_to(viewer) && !p.is_taken_down()).collect())
}

/// The live rows of `ids` as `viewer` reads them (with their relationship to the viewer), in no
/// particular order and not yet checked for what the viewer may see: read where they live,
/// grouped by database, one batch each, side by side.
pub async fn live_among(ctx: &Ctx, viewer: UserId, ids: &[PostId]) -> ApiResult<Vec<PostRow>> {
    let ids = ids.iter().map(|&id| (shard_of_id(id.get()), id));
    let groups: Vec<_> =
        group_by_database(ctx.shard_map(), ids).into_iter().map(|(i, g)| (ctx.database(i), g)).collect();
    let read =
        ctx.shards.across(groups, |db, ids| async move { posts::load_live(db, viewer, &ids).await }).await?;
    Ok(read.into_iter().flatten().collect())
}
