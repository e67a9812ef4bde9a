//! Tells the listeners of the public and tag streams about a post that joined, changed in or
//! left their timeline, through each key's stream relay (`objects/relay.rs`,
//! `domain/stream_relay.rs`): one call per key written per post, whatever the number of
//! listeners. The relay reads the key's listeners (`stream_listeners`) once per flush and hands
//! each one's window object the flush's news in one call; the window renders each status for
//! that reader when it sends it (the reader's blocks, mutes and the post's state then). Best
//! effort, as every stream frame: a reader who missed one reads the timeline.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::PostId;
use crate::domain::live::Event;
use crate::domain::stream_relay::news_for_key;
use crate::domain::tags::{flags, IndexKey};
use crate::objects::relay::Relays;
use crate::store::timelines::KeyWrite;

/// What happened to the post under the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Edited,
    Removed,
}

/// Tells the relay of each key written (public stripes and tags) about `post`.
pub async fn tell(
    ctx: &Ctx,
    post: PostId,
    change: Change,
    written: &[(IndexKey, KeyWrite)],
    post_flags: i64,
) {
    if written.is_empty() {
        return;
    }
    let event = match change {
        Change::Added => Event::Update,
        Change::Edited => Event::StatusUpdate,
        Change::Removed => Event::Delete,
    };
    let media = post_flags & flags::MEDIA != 0;
    let tells: Vec<_> =
        written.iter().map(|(key, _)| (key.clone(), news_for_key(key, post, event, media))).collect();
    // After the answer, on a context of its own (its calls are not the request's round trips):
    // a relay call would be one more sequential wait on every public post's publish, for a
    // frame that is best effort anyway.
    let env = ctx.env.clone();
    ctx.after_response(async move {
        let Ok(ctx) = Ctx::new(env) else { return };
        let Ok(relays) = Relays::new(&ctx) else { return };
        let sends = tells.into_iter().map(|(key, news)| {
            let relays = &relays;
            async move {
                if let Err(e) = relays.tell(&key, news).await {
                    worker::console_error!("stream news of {post} for {} not relayed: {e}", key.as_str());
                }
            }
        });
        join_all(sends).await;
    })
    .await;
}
