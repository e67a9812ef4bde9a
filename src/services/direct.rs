//! Direct posts (`visibility` private, Mastodon's `direct`) and conversations.
//!
//! A direct post is read by its author and the accounts it mentions, nobody else
//! (`domain/visibility.rs::may_see_post`). It never goes to followers (`domain/fanout.rs`); its
//! event delivers it into the home windows of the mentioned instead ([`deliver`]), where the
//! feed rule lets it through without a follow (`domain/feed.rs::feed_verdict`). Each
//! participant has a conversation row on their home (`store/conversations.rs`), written with
//! their mention notification by the request and again by the post's event
//! (`services/mentions.rs::notify`), so a crash between databases is repaired by the outbox.
//! The post is re-read at every read: deleted, taken down, or hidden by a block since, the
//! conversation is left out.

use crate::store::SqlStatement;
use futures_util::future::{join, join_all};

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::mentions::Mentioned;
use crate::domain::notifications::Notice;
use crate::domain::window::{Entry, WindowOp};
use crate::error::{ApiError, ApiResult};
use crate::objects::timeline::Windows;
use crate::services::mastodon_entities::{self, Conversation as MastodonConversation, Status};
use crate::services::originals;
use crate::store::conversations::{self, Bounds, ConversationRow, Participation};
use crate::store::notifications::notice;
use crate::store::posts::{PostRow, PostState};
use crate::store::{batch, outbox, users, StoreResult, UserDb};

const NO_SUCH_CONVERSATION: ApiError = ApiError::NotFound("no such conversation");

/// A direct post's participants: its author and the accounts it mentions.
pub struct Conversation {
    post: PostId,
    author: UserId,
    everyone: Vec<UserId>,
}

impl Conversation {
    pub fn of(post: PostId, author: UserId, mentioned: &[Mentioned]) -> Self {
        let mut everyone = vec![author];
        everyone.extend(mentioned.iter().map(|m| m.id).filter(|id| *id != author));
        everyone.dedup();
        Self { post, author, everyone }
    }

    /// `user`'s row (on their home `db`): the others as its accounts, unread unless theirs.
    pub fn record(&self, db: UserDb<'_>, user: UserId, now: i64) -> StoreResult<SqlStatement> {
        let others: Vec<UserId> = self.everyone.iter().copied().filter(|id| *id != user).collect();
        let row = Participation {
            user,
            post: self.post,
            author: self.author,
            accounts: &others,
            unread: user != self.author,
        };
        conversations::record(db, &row, now)
    }

    /// The author's row; whom to tell if it was made now.
    pub async fn record_author(&self, ctx: &Ctx) -> ApiResult<Option<Notice>> {
        let db = ctx.user_db(self.author);
        let results = batch(db, vec![self.record(db, self.author, ctx.now)?]).await?;
        Ok(notice(results.first(), ctx.now))
    }
}

/// The post's event: a live direct post goes into the home windows of the mentioned who have
/// one (readers without a window build it from follows when they come back, and find the post
/// in their conversations). Windows dedup by post id, so a redelivery writes nothing new.
pub async fn deliver(ctx: &Ctx, post: PostId, state: &PostState, mentioned: &[Mentioned]) -> ApiResult<()> {
    let readers: Vec<UserId> = mentioned.iter().map(|m| m.id).filter(|id| *id != state.author_id).collect();
    let readers = outbox::active_among(&ctx.shards, &readers).await?;
    if readers.is_empty() {
        return Ok(());
    }
    let windows = Windows::new(ctx)?;
    let entry = Entry {
        created_at: state.created_at,
        post_id: post,
        author_id: state.author_id,
        version: state.state_version,
    };
    let op = WindowOp::Deliver { entries: vec![entry], cap: ctx.config.feed_window };
    for written in join_all(readers.iter().map(|&reader| windows.call(reader, &op))).await {
        written?;
    }
    Ok(())
}

/// A conversation with its post, as the viewer may see it now.
pub struct Shown {
    pub row: ConversationRow,
    pub post: PostRow,
}

/// A page of the viewer's conversations within `bounds`, newest first, leaving out those whose
/// post they may no longer see (so a page may come out short: its bounds still move on).
pub struct Page {
    pub shown: Vec<Shown>,
    /// The ids of the newest and oldest rows scanned (the `Link` bounds), if any.
    pub scanned: Option<(PostId, PostId)>,
    /// The read was full: more may follow below the oldest.
    pub full: bool,
}

pub async fn page(ctx: &Ctx, viewer: UserId, bounds: Bounds, limit: usize) -> ApiResult<Page> {
    let mut rows = conversations::page(ctx.user_db(viewer), viewer, bounds, limit).await?;
    let full = rows.len() == limit;
    if bounds.oldest_first {
        rows.reverse();
    }
    let scanned = rows.first().zip(rows.last()).map(|(a, b)| (a.post_id, b.post_id));
    let ids: Vec<PostId> = rows.iter().map(|r| r.post_id).collect();
    let posts = originals::visible_among(ctx, viewer, &ids).await?;
    let shown = rows
        .into_iter()
        .filter_map(|row| {
            let post = posts.iter().find(|p| p.id == row.post_id)?.clone();
            Some(Shown { row, post })
        })
        .collect();
    Ok(Page { shown, scanned, full })
}

/// Conversations as Mastodon's entities, for `origin`: the participants' accounts and each
/// post with the viewer's marks, read side by side.
pub async fn entities(
    ctx: &Ctx,
    viewer: UserId,
    origin: &str,
    shown: Vec<Shown>,
) -> ApiResult<Vec<MastodonConversation>> {
    let mut ids: Vec<UserId> =
        shown.iter().flat_map(|c| c.row.accounts().into_iter().chain([c.post.author_id])).collect();
    ids.sort_unstable();
    ids.dedup();
    let posts: Vec<PostId> = shown.iter().map(|c| c.post.id).collect();
    let (users, marks) =
        join(users::by_ids(&ctx.shards, &ids), originals::marks_among(ctx, viewer, &posts)).await;
    let (accounts, marks) = (mastodon_entities::accounts(origin, &users?), marks?);
    Ok(shown
        .into_iter()
        .map(|Shown { row, mut post }| {
            marks.apply(std::slice::from_mut(&mut post));
            let status = Status::of_post(origin, &accounts, &post).bookmarked(marks.bookmarked(post.id));
            let others = row.accounts().iter().filter_map(|id| accounts.get(id).cloned()).collect();
            MastodonConversation::new(row.post_id, row.is_unread(), others, status)
        })
        .collect())
}

/// One of the viewer's conversations whose post they may still see, else 404.
pub async fn one(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<Shown> {
    let row = conversations::get(ctx.user_db(viewer), viewer, id).await?.ok_or(NO_SUCH_CONVERSATION)?;
    let post =
        originals::visible_among(ctx, viewer, &[id]).await?.into_iter().next().ok_or(NO_SUCH_CONVERSATION)?;
    Ok(Shown { row, post })
}

/// Marks one read (`false`) or unread: the conversation after it.
pub async fn set_unread(ctx: &Ctx, viewer: UserId, id: PostId, unread: bool) -> ApiResult<Shown> {
    if !conversations::set_unread(ctx.user_db(viewer), viewer, id, unread).await? {
        return Err(NO_SUCH_CONVERSATION);
    }
    one(ctx, viewer, id).await
}

/// Removes one from the viewer's list (the post and the others' rows stay).
pub async fn remove(ctx: &Ctx, viewer: UserId, id: PostId) -> ApiResult<()> {
    if !conversations::remove(ctx.user_db(viewer), viewer, id).await? {
        return Err(NO_SUCH_CONVERSATION);
    }
    Ok(())
}
