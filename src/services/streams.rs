//! Tells the listeners of the public and tag streams (`stream_listeners`, beside each key's
//! index rows) about a post that joined, changed in or left their timeline: the index write
//! that made the change reads the key's listeners in its own batch and hands each listener's
//! window object the news, which renders the status for that reader when it sends it (the reader's blocks,
//! mutes and the post's state then). Best effort, as every stream frame: a reader who missed
//! one reads the timeline.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::live::{Event, TimelineNews};
use crate::domain::tags::{flags, IndexKey};
use crate::objects::timeline::Windows;
use crate::store::timelines::KeyWrite;

/// What happened to the post under the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Edited,
    Removed,
}

/// Tells the listeners of the keys written (public stripes and tags, each with the listeners
/// its write read) about `post`.
pub async fn tell(
    ctx: &Ctx,
    post: PostId,
    change: Change,
    written: &[(IndexKey, KeyWrite)],
    post_flags: i64,
) {
    let mut readers: Vec<UserId> = written.iter().flat_map(|(_, w)| w.listeners.iter().copied()).collect();
    if readers.is_empty() {
        return;
    }
    readers.sort_unstable();
    readers.dedup();
    let public = written.iter().any(|(k, _)| k.as_str().starts_with("public:"));
    let tags: Vec<String> =
        written.iter().filter_map(|(k, _)| k.as_str().strip_prefix("tag:").map(str::to_string)).collect();
    let event = match change {
        Change::Added => Event::Update,
        Change::Edited => Event::StatusUpdate,
        Change::Removed => Event::Delete,
    };
    let news = TimelineNews { post, event, public, media: post_flags & flags::MEDIA != 0, tags, home: false };
    let Ok(windows) = Windows::new(ctx) else { return };
    let sends = readers.iter().map(|&reader| windows.timeline_news(reader, &news));
    for (reader, sent) in readers.iter().zip(join_all(sends).await) {
        if let Err(e) = sent {
            worker::console_error!("stream news of {post} for {reader} not sent: {e}");
        }
    }
}
