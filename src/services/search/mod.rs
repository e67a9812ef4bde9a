//! Search v2 (`GET /api/v2/search`, and `GET /api/v1/accounts/search` for its accounts):
//! accounts by handle and display-name word prefixes, hashtags by prefix, and the statuses the
//! viewer may see that hold every word of the query. docs/mastodon.md "Search" has the design
//! and its costs; the index and its words are `domain/search.rs`, its writes [`index`].
//!
//! Every read goes to the databases of the terms it names, never to every database: an
//! account or hashtag prefix is one bounded range read in its bucket's database, a status word
//! one bounded read in its word's database, the viewer's own scope one statement on their home.
//! Nothing the index says is trusted: each hit is read where it lives and checked for the
//! viewer now (suspended, blocked either way, deleted, visibility, takedown, mutes, the flag
//! `indexable`, whether it still matches the query), so rows a crash or an edit left behind
//! show nothing.

pub mod index;

use std::collections::HashSet;

use futures_util::future::{join, join_all};

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::search::{self, Term};
use crate::domain::validate::Handle;
use crate::error::ApiResult;
use crate::services::originals;
use crate::services::tags::{self, TagView};
use crate::services::timelines::is_indexed;
use crate::store::posts::PostRow;
use crate::store::search::{self as rows, Range};
use crate::store::users::{self, UserRow};
use crate::store::{graph, mutes};

/// The most rows one term read takes: what bounds a search's work, whatever a term's fan-in
/// (a one-letter bucket, a common word). Matches past it in a term's order are not found.
pub const TERM_BOUND: usize = 200;

/// Candidates read past a page's size, for hits the re-check hides.
const HIDDEN_MARGIN: usize = 10;
/// Slices of candidates one status page reads at most while hidden ones leave it short.
const HYDRATE_ROUNDS: usize = 3;

/// Which page of results: `(offset, limit)`.
pub type Window = (usize, usize);

/// Accounts matching every query word (each the start of a handle or display-name word), an
/// exact handle first, that the viewer may see and neither blocks nor is blocked by; with
/// `following`, only those the viewer follows. `exact`: the handle the query names, if it is one.
pub async fn accounts(
    ctx: &Ctx,
    viewer: UserId,
    words: &[String],
    exact: Option<&Handle>,
    following: bool,
    (offset, limit): Window,
) -> ApiResult<Vec<UserRow>> {
    let bound = candidate_bound(words.len(), following, offset + limit);
    let ids = account_candidates(ctx, words, exact, bound).await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let (found, mutuals) =
        join(users::shown_by_ids(&ctx.shards, &ids), graph::mutuals(&ctx.shards, viewer, &ids)).await;
    let (found, mutuals) = (found?, mutuals?);
    let exact = exact.map(|h| h.as_str().to_string());
    let shown = |u: &UserRow| {
        let allowed = mutuals
            .iter()
            .find(|m| m.id == u.id)
            .is_some_and(|m| !m.blocking() && (!following || m.following()));
        let matches = exact.as_deref() == Some(u.handle.as_str())
            || search::account_matches(words, &u.handle, &u.display_name);
        allowed && matches
    };
    let mut found: Vec<UserRow> = found.into_iter().filter(shown).collect();
    let first = words.first().map(String::as_str).unwrap_or_default();
    found.sort_by_key(|u| {
        (exact.as_deref() != Some(u.handle.as_str()), !u.handle.starts_with(first), u.handle.clone())
    });
    found.dedup_by_key(|u| u.id);
    Ok(found.into_iter().skip(offset).take(limit).collect())
}

/// How many rows of the bucket an account search reads: one word matches every row of its
/// range (but stale ones), so a page needs few more than it shows; more words or `following`
/// filter after, so they take the whole bound.
fn candidate_bound(words: usize, following: bool, want: usize) -> usize {
    if words == 1 && !following {
        (2 * want + HIDDEN_MARGIN).min(TERM_BOUND)
    } else {
        TERM_BOUND
    }
}

/// The accounts the index names for the query's longest word (its bucket's range, at most
/// `bound`), after the exact handle's owner from the handle directory, read side by side.
async fn account_candidates(
    ctx: &Ctx,
    words: &[String],
    exact: Option<&Handle>,
    bound: usize,
) -> ApiResult<Vec<UserId>> {
    let Some(driving) = words.iter().max_by_key(|w| w.chars().count()) else { return Ok(Vec::new()) };
    let term = Term::Account(search::bucket_of(driving).to_string());
    let (low, high) = search::prefix_range(driving);
    let db = ctx.database(ctx.shards.index_of(term.shard()));
    let exact_owner = async {
        match exact {
            Some(handle) => users::handle_owner(ctx.handle_db(handle.as_str()), handle).await,
            None => Ok(None),
        }
    };
    let (hits, owner) = join(rows::prefix(db, &term.key(), (&low, &high), bound), exact_owner).await;
    let mut ids: Vec<UserId> = owner?.into_iter().collect();
    for hit in hits? {
        let id = UserId::from_trusted(hit.item);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Hashtags whose name starts with `prefix` (a lower-cased tag key), in name order, with their
/// week of uses and the viewer's follow.
pub async fn hashtags(
    ctx: &Ctx,
    viewer: UserId,
    prefix: &str,
    (offset, limit): Window,
) -> ApiResult<Vec<TagView>> {
    let term = Term::Tag(search::bucket_of(prefix).to_string());
    let (low, high) = search::prefix_range(prefix);
    let db = ctx.database(ctx.shards.index_of(term.shard()));
    let hits = rows::prefix(db, &term.key(), (&low, &high), offset + limit).await?;
    let names: Vec<String> = hits.into_iter().skip(offset).take(limit).map(|h| h.name).collect();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    tags::views(ctx, viewer, &names).await
}

/// What a status search asks for besides its words.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatusQuery {
    /// Only this author's statuses (`account_id`).
    pub author: Option<UserId>,
    pub max_id: Option<i64>,
    pub min_id: Option<i64>,
}

/// The statuses the viewer may see now holding every word: their own and those they
/// favourited, bookmarked or were mentioned in (their personal terms, one statement on their
/// home), and public statuses of accounts that are `indexable` (each word's term on its own
/// database, intersected), newest first.
pub async fn statuses(
    ctx: &Ctx,
    viewer: UserId,
    words: &[String],
    query: StatusQuery,
    (offset, limit): Window,
) -> ApiResult<Vec<PostRow>> {
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let range = Range {
        below: query.max_id.unwrap_or(i64::MAX),
        above: query.min_id.unwrap_or(0),
        owner: query.author.map_or(0, UserId::get),
        oldest_first: query.min_id.is_some() && query.max_id.is_none(),
        limit: TERM_BOUND,
    };
    let (personal, public) =
        join(personal_hits(ctx, viewer, words, range), public_hits(ctx, words, range)).await;
    let mut ids: Vec<i64> = personal?.into_iter().chain(public?).collect();
    ids.sort_unstable();
    ids.dedup();
    if !range.oldest_first {
        ids.reverse();
    }
    ids.truncate(TERM_BOUND);
    let ids: Vec<PostId> = ids.into_iter().map(PostId::from_trusted).collect();
    let mut shown = hydrate(ctx, viewer, words, &ids, offset + limit).await?;
    shown.sort_by_key(|p| std::cmp::Reverse(p.id));
    if range.oldest_first {
        // The page right above `min_id`: the oldest matches, shown newest first.
        let keep = (offset + limit).min(shown.len());
        shown.drain(..shown.len() - keep);
    }
    Ok(shown.into_iter().skip(offset).take(limit).collect())
}

/// The first `want` of the candidates (in their order) the viewer may see, read a slice at a
/// time (`want` and a margin for hidden ones, then more only while too many were hidden), so
/// the posts read, and the databases they live on, grow with the page, not with the bound.
async fn hydrate(
    ctx: &Ctx,
    viewer: UserId,
    words: &[String],
    ids: &[PostId],
    want: usize,
) -> ApiResult<Vec<PostRow>> {
    let mut shown = Vec::with_capacity(want);
    let mut rest = ids;
    for _ in 0..HYDRATE_ROUNDS {
        if rest.is_empty() || shown.len() >= want {
            break;
        }
        let (slice, after) = rest.split_at((want - shown.len() + HIDDEN_MARGIN).min(rest.len()));
        let mut found = shown_statuses(ctx, viewer, words, slice).await?;
        // In the candidates' order, so the first `want` shown are the first that match.
        found.sort_by_key(|p| slice.iter().position(|id| *id == p.id));
        shown.extend(found);
        rest = after;
    }
    shown.truncate(want);
    Ok(shown)
}

/// The viewer's own scope: every word's personal term, intersected in one statement on their home.
async fn personal_hits(ctx: &Ctx, viewer: UserId, words: &[String], range: Range) -> ApiResult<Vec<i64>> {
    let terms: Vec<String> = words.iter().map(|w| Term::Personal(viewer, w.clone()).key()).collect();
    let found = rows::items(ctx.user_db(viewer).any(), &terms, range).await?;
    Ok(found.into_iter().map(|h| h.item).collect())
}

/// The public scope: each word's term read on its database (side by side, each at most
/// [`TERM_BOUND`] rows), intersected.
async fn public_hits(ctx: &Ctx, words: &[String], range: Range) -> ApiResult<Vec<i64>> {
    let reads = words.iter().map(|w| {
        let term = Term::Status(w.clone());
        let db = ctx.database(ctx.shards.index_of(term.shard()));
        async move { rows::items(db, &[term.key()], range).await }
    });
    let mut common: Option<HashSet<i64>> = None;
    for read in join_all(reads).await {
        let items: HashSet<i64> = read?.into_iter().map(|h| h.item).collect();
        common = Some(match common {
            None => items,
            Some(before) => before.intersection(&items).copied().collect(),
        });
    }
    Ok(common.unwrap_or_default().into_iter().collect())
}

/// The posts among `ids` the viewer may see now, that still hold every word, and that are in
/// the viewer's scope now: their own, favourited, bookmarked, addressed to them, or listed
/// public by an author who is `indexable` now. A muted author's are left out (not the viewer's).
async fn shown_statuses(
    ctx: &Ctx,
    viewer: UserId,
    words: &[String],
    ids: &[PostId],
) -> ApiResult<Vec<PostRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let posts = originals::visible_among(ctx, viewer, ids).await?;
    let posts: Vec<PostRow> = posts.into_iter().filter(|p| search::status_matches(words, &p.body)).collect();
    let mut authors: Vec<UserId> = posts.iter().map(|p| p.author_id).collect();
    authors.sort_unstable();
    authors.dedup();
    let found: Vec<PostId> = posts.iter().map(|p| p.id).collect();
    let db = ctx.user_db(viewer);
    let (muted, bookmarked) =
        join(mutes::muted_among(db, viewer, &authors), crate::store::bookmarks::marked(db, viewer, &found))
            .await;
    let (muted, bookmarked) = (muted?, bookmarked?);
    let in_scope = |p: &PostRow| {
        p.author_id == viewer
            || p.liked_by_me != 0
            || bookmarked.contains(&p.id)
            || p.addresses(viewer)
            || (is_indexed(p) && p.author_is_indexable())
    };
    Ok(posts
        .into_iter()
        .filter(|p| in_scope(p) && (p.author_id == viewer || !muted.contains(&p.author_id)))
        .collect())
}
