//! The timelines beyond follows: public (and local, the same on one domain) and tag timelines,
//! read from the timeline index (`store/timelines.rs`, `domain/tags.rs`).
//!
//! A post's entries follow its state: [`converge`] adds them while the post is public and
//! live, and takes them back otherwise. The publish, edit and delete requests converge at once
//! (a reader sees their post in the public timeline as soon as publish answers), and the
//! post's fan-out event converges again, so a request that stopped between the databases loses
//! nothing; a repeated convergence changes nothing. A read checks each entry's post for the
//! viewer now (deleted, made private, taken down, its author suspended, blocked either way or
//! muted, the tag edited away): an index row left behind shows nothing.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::shard::group_by_database;
use crate::domain::tags::{self, flags, IndexKey, Indexed};
use crate::domain::timeline_head::HeadKey;
use crate::domain::visibility::Visibility;
use crate::error::ApiResult;
use crate::services::{originals, streams, timeline_heads};
use crate::store::posts::PostRow;
use crate::store::timelines::{self as index, Entry, IndexRow, KeyWrite, Range};

/// Reads of the index one page makes at most while the posts it finds are hidden.
const PAGE_READS: usize = 4;

/// Whether a post belongs in the index now: a live public (and listed) post of its own, not a
/// boost.
pub fn is_indexed(post: &PostRow) -> bool {
    post.reblog_of.is_none()
        && post.visibility == Visibility::Public
        && !post.is_unlisted()
        && !post.is_taken_down()
}

fn as_indexed(post: &PostRow) -> Indexed<'_> {
    Indexed {
        id: post.id,
        author: post.author_id,
        body: &post.body,
        has_media: !post.attachments().is_empty(),
        replies_to_other: post.in_reply_to_account_id.is_some_and(|to| to != post.author_id),
    }
}

/// Brings the post's index entries to its state: `post` is the post as it is now (`None`:
/// gone), `was` as it was before the change (an edit or a deletion: for the keys it leaves).
/// Listeners of a key the post joins, leaves or (in an edit) stays under are told.
pub async fn converge(ctx: &Ctx, post: Option<&PostRow>, was: Option<&PostRow>) -> ApiResult<()> {
    let now_keys = post.filter(|p| is_indexed(p)).map(|p| as_indexed(p).keys()).unwrap_or_default();
    let old_keys: Vec<IndexKey> = was
        .filter(|p| p.reblog_of.is_none())
        .map(|p| as_indexed(p).keys())
        .unwrap_or_default()
        .into_iter()
        .filter(|k| !now_keys.contains(k))
        .collect();
    if let Some(post) = post.filter(|p| is_indexed(p)) {
        let entry = Entry { post_id: post.id, author_id: post.author_id, flags: as_indexed(post).flags() };
        // The author's head replicas hear of it beside the write (the post itself committed
        // before: a page re-reads it, so telling before the index row commits shows nothing
        // that is not there).
        let (written, _) = futures_util::future::join(
            per_database(ctx, &now_keys, |db, keys| async move { index::add(db, &keys, &entry).await }),
            timeline_heads::tell(ctx, &now_keys, entry),
        )
        .await;
        let written = written?;
        let (added, kept): (Vec<_>, Vec<_>) = written.into_iter().partition(|(_, w)| w.changed);
        streams::tell(ctx, post.id, streams::Change::Added, &added, entry.flags).await;
        if was.is_some() {
            // An edit: the keys it stayed under hear `status.update`.
            streams::tell(ctx, post.id, streams::Change::Edited, &kept, entry.flags).await;
        }
    }
    let post_id = post.or(was).map(|p| p.id);
    if let (Some(id), false) = (post_id, old_keys.is_empty()) {
        let written =
            per_database(ctx, &old_keys, |db, keys| async move { index::remove(db, &keys, id).await })
                .await?;
        let removed: Vec<_> = written.into_iter().filter(|(_, w)| w.changed).collect();
        streams::tell(ctx, id, streams::Change::Removed, &removed, 0).await;
    }
    Ok(())
}

/// Runs `write` once per database over the keys living there (side by side, one batch each);
/// each key with what its write found.
async fn per_database<'a, F, Fut>(
    ctx: &'a Ctx,
    keys: &'a [IndexKey],
    write: F,
) -> ApiResult<Vec<(IndexKey, KeyWrite)>>
where
    F: Fn(crate::store::handles::IndexDb<'a>, Vec<&'a IndexKey>) -> Fut,
    Fut: std::future::Future<Output = crate::store::StoreResult<Vec<KeyWrite>>>,
{
    let groups = group_by_database(ctx.shard_map(), keys.iter().map(|key| (key.shard(), key)));
    let runs = groups.into_iter().map(|(_, group)| {
        let db = ctx.shards.index(group[0]);
        let keys = group.clone();
        let write = &write;
        async move { write(db, group).await.map(|found| (keys, found)) }
    });
    let mut written = Vec::new();
    for result in join_all(runs).await {
        let (keys, found) = result?;
        written.extend(keys.into_iter().cloned().zip(found));
    }
    Ok(written)
}

/// Which timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Public,
    /// A tag's timeline, with Mastodon's `any[]` (more tags, any of which will do), `all[]`
    /// (every one needed) and `none[]` (none allowed); names as given.
    Tag {
        name: String,
        any: Vec<String>,
        all: Vec<String>,
        none: Vec<String>,
    },
}

/// A page request, in Mastodon's terms (ids as bounds).
#[derive(Debug, Clone)]
pub struct Query {
    pub source: Source,
    pub max_id: Option<i64>,
    pub since_id: Option<i64>,
    pub min_id: Option<i64>,
    pub only_media: bool,
    pub limit: usize,
}

/// A page: the posts shown (newest first), and the ids that bound what was scanned (for the
/// `Link` header: `next` below the oldest scanned when more may follow, `prev` above the newest).
pub struct Page {
    pub posts: Vec<PostRow>,
    pub newest: Option<i64>,
    pub oldest: Option<i64>,
    pub more: bool,
}

impl Query {
    fn keys(&self) -> Vec<HeadKey> {
        match &self.source {
            Source::Public => vec![HeadKey::Public],
            Source::Tag { name, any, .. } => {
                let mut keys: Vec<HeadKey> = Vec::new();
                for key in std::iter::once(name).chain(any).map(|n| HeadKey::tag(n)) {
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
                keys
            }
        }
    }

    fn range(&self, below: i64, above: i64, limit: usize) -> Range {
        let public = self.source == Source::Public;
        Range {
            below,
            above,
            oldest_first: self.min_id.is_some() && self.max_id.is_none(),
            // The public timeline leaves out replies to others, as Mastodon's does.
            without: if public { flags::REPLY } else { 0 },
            with: if self.only_media { flags::MEDIA } else { 0 },
            limit,
        }
    }

    /// Whether a post's text (now) still passes the tag conditions.
    fn tags_pass(&self, post: &PostRow) -> bool {
        let Source::Tag { name, any, all, none } = &self.source else { return true };
        let has: Vec<String> = tags::hashtags(&post.body).into_iter().map(tags::key_of).collect();
        let holds = |n: &String| has.contains(&tags::key_of(n));
        (holds(name) || any.iter().any(holds)) && all.iter().all(holds) && !none.iter().any(holds)
    }
}

/// A page of the timeline for `viewer`: up to `limit` posts the viewer may see now.
pub async fn page(ctx: &Ctx, viewer: UserId, query: &Query) -> ApiResult<Page> {
    let keys = query.keys();
    let oldest_first = query.range(0, 0, 0).oldest_first;
    let (mut below, mut above) =
        (query.max_id.unwrap_or(i64::MAX), query.min_id.or(query.since_id).unwrap_or(0));
    let mut shown: Vec<PostRow> = Vec::with_capacity(query.limit);
    let (mut newest, mut oldest, mut more) = (None::<i64>, None::<i64>, false);
    for _ in 0..PAGE_READS {
        let want = query.limit - shown.len();
        let (rows, full) = merged(ctx, viewer, &keys, query.range(below, above, want)).await?;
        if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
            let (hi, lo) = if oldest_first {
                (last.post_id.get(), first.post_id.get())
            } else {
                (first.post_id.get(), last.post_id.get())
            };
            newest = Some(newest.map_or(hi, |n| n.max(hi)));
            oldest = Some(oldest.map_or(lo, |o| o.min(lo)));
            if oldest_first {
                above = hi
            } else {
                below = lo
            }
        }
        shown.extend(visible(ctx, viewer, query, &rows).await?);
        more = full;
        if !full || shown.len() >= query.limit {
            break;
        }
    }
    shown.sort_by_key(|p| std::cmp::Reverse(p.id));
    Ok(Page { posts: shown, newest, oldest, more })
}

/// The heads' ranges read side by side and merged: the first `range.limit` distinct entries in
/// the range's order, and whether more may follow.
async fn merged(
    ctx: &Ctx,
    viewer: UserId,
    keys: &[HeadKey],
    range: Range,
) -> ApiResult<(Vec<IndexRow>, bool)> {
    let mut rows: Vec<IndexRow> = Vec::new();
    let mut full = false;
    for read in join_all(keys.iter().map(|key| head_range(ctx, viewer, key, range))).await {
        let (read, filled) = read?;
        full |= filled;
        rows.extend(read);
    }
    rows.sort_by_key(|r| r.post_id);
    rows.dedup_by_key(|r| r.post_id);
    if !range.oldest_first {
        rows.reverse();
    }
    if rows.len() > range.limit {
        rows.truncate(range.limit);
        full = true;
    }
    Ok((rows, full))
}

/// One head's range: from the viewer's replica of it, else from its keys' databases (a public
/// head's stripes side by side); whether one of them filled the range.
async fn head_range(
    ctx: &Ctx,
    viewer: UserId,
    key: &HeadKey,
    range: Range,
) -> ApiResult<(Vec<IndexRow>, bool)> {
    if let Some(rows) = timeline_heads::read(ctx, viewer, key, range).await {
        let filled = rows.len() == range.limit;
        return Ok((rows, filled));
    }
    Ok(index::head_page(&ctx.shards, key, range).await?)
}

/// The entries' posts the viewer may see now, as the timeline shows them.
async fn visible(ctx: &Ctx, viewer: UserId, query: &Query, rows: &[IndexRow]) -> ApiResult<Vec<PostRow>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<PostId> = rows.iter().map(|r| r.post_id).collect();
    let mut posts = originals::visible_among(ctx, viewer, &ids).await?;
    posts.retain(|p| is_indexed(p) && query.tags_pass(p));
    let mut authors: Vec<UserId> = posts.iter().map(|p| p.author_id).collect();
    authors.sort_unstable();
    authors.dedup();
    let muted = crate::store::mutes::muted_among(ctx.user_db(viewer), viewer, &authors).await?;
    posts.retain(|p| !muted.contains(&p.author_id));
    Ok(posts)
}
