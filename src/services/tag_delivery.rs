//! Followed tags into home: a public post new under a tag reaches the homes of the tag's
//! followers, a page at a time ([`TagDelivery`] queue messages, sent by the index write that
//! added the post under the tag: `services/timelines.rs`). Each page re-reads the post (a post
//! deleted, made private or unlisted, or its tag edited away meanwhile reaches nobody) and
//! writes one entry into each follower's window; windows dedup by post id, so a redelivered
//! page or a follower who also follows the author gets the post once. The home read checks
//! every entry for the reader as it does any other (blocks, mutes, Mastodon's reply rule).

use futures_util::future::join;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::queue::{QueueMessage, TagDelivery};
use crate::domain::tags::{hashtags, IndexKey, MAX_TAGS_PER_POST};
use crate::domain::window::{Entry, WindowOp};
use crate::error::ApiResult;
use crate::objects::timeline::Windows;
use crate::services::queue::send::send_batch;
use crate::services::timelines;
use crate::store::posts;
use crate::store::timelines as index;

/// Followers of a tag one message delivers to.
const PAGE: usize = 100;

/// The first pages' messages for a post newly indexed under some of its tags (`tags`: the
/// indexes among its tags, `domain::tags::hashtags` order).
pub fn starts(post: PostId, tags: &[u8]) -> Vec<QueueMessage> {
    tags.iter().map(|&tag_index| TagDelivery { tag_post: post, tag_index, after_user: 0 }.into()).collect()
}

/// One page: the post re-read, its tag's next followers, an entry in each one's window, and the
/// next page's message first when the page is full.
pub async fn run(ctx: &Ctx, windows: &Windows, job: TagDelivery) -> ApiResult<()> {
    let db = ctx.post_db(job.tag_post);
    let (state, rows) = join(
        posts::state(db, job.tag_post),
        posts::load_live(db.any(), UserId::from_trusted(0), &[job.tag_post]),
    )
    .await;
    let (Some(state), Some(post)) = (state?, rows?.into_iter().next()) else { return Ok(()) };
    if !timelines::is_indexed(&post) {
        return Ok(());
    }
    let tags = hashtags(&post.body);
    let Some(name) = tags.iter().take(MAX_TAGS_PER_POST).nth(usize::from(job.tag_index)) else {
        return Ok(());
    };
    let key = IndexKey::tag(name);
    let followers = index::tag_followers(ctx.shards.index(&key), &key, job.after_user, PAGE).await?;
    if let (Some(last), true) = (followers.last(), followers.len() == PAGE) {
        let next = TagDelivery { after_user: last.get(), ..job };
        send_batch(ctx, std::iter::once(next.into())).await?;
    }
    let version = state.state_version;
    let entry = Entry { created_at: post.created_at, post_id: post.id, author_id: post.author_id, version };
    let op = WindowOp::Deliver { entries: vec![entry], cap: ctx.config.feed_window };
    for follower in followers.into_iter().filter(|f| *f != post.author_id) {
        if let Err(e) = windows.call(follower, &op).await {
            worker::console_error!("tag delivery of {} to {follower}: {e}", post.id);
        }
    }
    Ok(())
}
