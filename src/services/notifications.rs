//! A recipient's notifications, as every API reads them: the rows from the recipient's home
//! database (blocks, deleted and taken-down posts and deleted comments already filtered there),
//! less those whose actor is suspended now (a flag on the actor's own home), with the actor,
//! post and comment they are about.

use futures_util::future::join;

use crate::context::Ctx;
use crate::domain::ids::{CommentId, PostId, UserId};
use crate::domain::notifications::{Kind, KindFilter};
use crate::error::ApiResult;
use crate::store::engagement::{self, CommentRow};
use crate::store::graph::LIST_ROUNDS;
use crate::store::notifications::{self as store, Range, StoredNotification};
use crate::store::posts::PostRow;
use crate::store::users::{self, UserRow};

/// One notification, ready to render.
#[derive(Debug, Clone)]
pub struct Hydrated {
    pub id: i64,
    pub kind: Kind,
    pub actor: UserRow,
    /// The recipient's post a favourite or reply is about.
    pub post: Option<PostRow>,
    /// The reply's comment.
    pub comment: Option<CommentRow>,
    /// The reply post the comment row stands for (a reply written since replies are posts),
    /// as the recipient may see it now: what Mastodon shows as the notification's status.
    pub reply: Option<PostRow>,
}

/// Up to `limit + 1` shown notifications of the range, in its order (the extra one says that
/// more exist). Rows whose actor is suspended are dropped, and the read goes on past them while
/// the page is short (at most [`LIST_ROUNDS`] reads).
pub async fn page(ctx: &Ctx, recipient: UserId, range: &Range<'_>, limit: usize) -> ApiResult<Vec<Hydrated>> {
    let want = limit + 1;
    let db = ctx.shards.user(recipient);
    let mut range = range.clone();
    let mut shown: Vec<(StoredNotification, UserRow)> = Vec::with_capacity(want);
    for _ in 0..LIST_ROUNDS {
        let store::Page { rows, edge } = store::page(db, recipient, &range, want).await?;
        // A full read goes on after its last row; a short one after its edge, where its
        // expanded favourites stopped (`store/notifications.rs::expanded_edge_sql`).
        let next = if rows.len() == want { rows.last().map(|r| r.id) } else { edge };
        shown.extend(with_shown_actors(ctx, rows).await?);
        match next {
            Some(next) if shown.len() < want => {
                if range.oldest_first {
                    range.above = Some(next);
                } else {
                    range.below = Some(next);
                }
            }
            _ => break,
        }
    }
    shown.truncate(want);
    hydrate(ctx, recipient, shown).await
}

/// One shown notification of the recipient, or `None` (also when it is hidden now).
pub async fn one(ctx: &Ctx, recipient: UserId, id: i64) -> ApiResult<Option<Hydrated>> {
    let kinds = KindFilter::default();
    let range =
        Range { kinds: &kinds, actor: None, below: Some(id + 1), above: Some(id - 1), oldest_first: false };
    Ok(page(ctx, recipient, &range, 1).await?.into_iter().find(|n| n.id == id))
}

/// How many shown notifications of these kinds lie above the recipient's marker, counting at
/// most `cap` (`true`: there may be more).
pub async fn unread(
    ctx: &Ctx,
    recipient: UserId,
    kinds: &KindFilter,
    cap: usize,
) -> ApiResult<(usize, bool)> {
    let rows = store::unread(ctx.shards.user(recipient), recipient, kinds, cap).await?;
    let read = rows.len();
    let shown = with_shown_actors(ctx, rows).await?.len();
    Ok((shown, read == cap))
}

/// Dismisses one notification of the recipient; whether there was one.
pub async fn dismiss(ctx: &Ctx, recipient: UserId, id: i64) -> ApiResult<bool> {
    Ok(store::dismiss(ctx.shards.user(recipient), recipient, id).await?)
}

pub async fn clear(ctx: &Ctx, recipient: UserId) -> ApiResult<usize> {
    Ok(store::clear(ctx.shards.user(recipient), recipient).await?)
}

pub(super) async fn with_shown_actors(
    ctx: &Ctx,
    rows: Vec<StoredNotification>,
) -> ApiResult<Vec<(StoredNotification, UserRow)>> {
    let mut ids: Vec<UserId> = rows.iter().map(|r| r.actor_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let actors = users::shown_by_ids(&ctx.shards, &ids).await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| actors.iter().find(|a| a.id == r.actor_id).cloned().map(|a| (r, a)))
        .collect())
}

/// Attaches the posts and comments (both on the recipient's database: their own posts, and
/// comments on them) in two reads side by side; a notification whose post or comment is
/// gone by now is left out.
/// The notifications' posts the recipient may see now, each read on its own database: their
/// own (a like, a boost, a reply of theirs) on their home, a mention's on its author's.
async fn posts_seen(ctx: &Ctx, recipient: UserId, ids: Vec<PostId>) -> ApiResult<Vec<PostRow>> {
    let read = crate::services::originals::live_among(ctx, recipient, &ids).await?;
    Ok(read.into_iter().filter(|p| p.visible_to(recipient)).collect())
}

pub(super) async fn hydrate(
    ctx: &Ctx,
    recipient: UserId,
    rows: Vec<(StoredNotification, UserRow)>,
) -> ApiResult<Vec<Hydrated>> {
    let db = ctx.shards.user(recipient);
    let post_ids: Vec<PostId> =
        rows.iter().filter(|(r, _)| r.post_id != 0).map(|(r, _)| PostId::from_trusted(r.post_id)).collect();
    let comment_ids: Vec<CommentId> = rows
        .iter()
        .filter(|(r, _)| r.comment_id != 0)
        .map(|(r, _)| CommentId::from_trusted(r.comment_id))
        .collect();
    let authors: Vec<UserRow> = rows.iter().map(|(_, a)| a.clone()).collect();
    let (posts, comments) =
        join(posts_seen(ctx, recipient, post_ids), engagement::by_ids(db.any(), &comment_ids, &authors))
            .await;
    let (posts, comments) = (posts?, comments?);
    let reply_ids: Vec<PostId> =
        comments.iter().filter(|c| c.reply_post).map(|c| PostId::from_trusted(c.id.get())).collect();
    let replies =
        if reply_ids.is_empty() { Vec::new() } else { posts_seen(ctx, recipient, reply_ids).await? };
    Ok(rows
        .into_iter()
        .filter_map(|(r, actor)| {
            let kind = r.kind()?;
            let post = posts.iter().find(|p| p.id.get() == r.post_id).cloned();
            let comment = comments.iter().find(|c| c.id.get() == r.comment_id).cloned();
            let reply_post = comment.as_ref().is_some_and(|c| c.reply_post);
            let reply = replies.iter().find(|p| reply_post && p.id.get() == r.comment_id).cloned();
            let complete = (r.post_id == 0 || post.is_some())
                && (r.comment_id == 0 || comment.is_some())
                && (!reply_post || reply.is_some());
            complete.then_some(Hydrated { id: r.id, kind, actor, post, comment, reply })
        })
        .collect())
}
