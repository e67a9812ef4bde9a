//! Tells the listeners of the public and tag streams (`stream_listeners`, beside each key's
//! index rows) about a post that joined, changed in or left their timeline: the index write
//! that made the change reads the key's listeners and hands each listener's window object the
//! news, which renders the status for that reader when it sends it (the reader's blocks,
//! mutes and the post's state then). Best effort, as every stream frame: a reader who missed
//! one reads the timeline.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::live::{Event, TimelineNews};
use crate::domain::tags::{flags, IndexKey};
use crate::objects::timeline::Windows;
use crate::store::timelines as index;

/// What happened to the post under the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Edited,
    Removed,
}

/// Tells the listeners of `keys` (index keys: public stripes and tags) about `post`.
pub async fn tell(ctx: &Ctx, post: PostId, change: Change, keys: &[IndexKey], post_flags: i64) {
    if keys.is_empty() {
        return;
    }
    let public = keys.iter().any(|k| k.as_str().starts_with("public:"));
    let tags: Vec<String> =
        keys.iter().filter_map(|k| k.as_str().strip_prefix("tag:").map(str::to_string)).collect();
    let mut listened: Vec<IndexKey> = public.then(IndexKey::public_listeners).into_iter().collect();
    listened.extend(keys.iter().filter(|k| k.as_str().starts_with("tag:")).cloned());
    let event = match change {
        Change::Added => Event::Update,
        Change::Edited => Event::StatusUpdate,
        Change::Removed => Event::Delete,
    };
    let news = TimelineNews { post, event, public, media: post_flags & flags::MEDIA != 0, tags };
    let reads = listened.iter().map(|key| index::listeners(ctx.shards.index(key), key, ctx.now));
    let mut readers: Vec<UserId> = Vec::new();
    for read in join_all(reads).await {
        match read {
            Ok(found) => readers.extend(found),
            Err(e) => worker::console_error!("stream listeners of {post} not read: {e}"),
        }
    }
    readers.sort_unstable();
    readers.dedup();
    let Ok(windows) = Windows::new(ctx) else { return };
    let sends = readers.iter().map(|&reader| windows.timeline_news(reader, &news));
    for (reader, sent) in readers.iter().zip(join_all(sends).await) {
        if let Err(e) = sent {
            worker::console_error!("stream news of {post} for {reader} not sent: {e}");
        }
    }
}
