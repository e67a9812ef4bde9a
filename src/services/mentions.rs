//! Mentions: a post's `@handle`s resolved to accounts when it is published (kept on the post:
//! `posts.mentions`), and their notifications, on each mentioned user's home. The post commits
//! first; the notifications are written after it by the request and again by the post's outbox
//! event (`services/fanout/reads.rs`), so a crash between the databases is repaired when the
//! outbox resends it. Rules: `domain/mentions.rs`.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::mentions::{mentions, Mentioned, MAX_MENTIONS};
use crate::domain::visibility::Visibility;
use crate::error::{ApiError, ApiResult};
use crate::services::{streaming, users};
use crate::store::notifications::{self, MentionOf};

/// The accounts `text` mentions on this server (`domain`: the request's host, as accounts'
/// `acct` name it), in the order first mentioned; a handle that names nobody stays text. More
/// than [`MAX_MENTIONS`] accounts is `422`, before anything is written.
pub async fn resolve(ctx: &Ctx, text: &str, domain: &str) -> ApiResult<Vec<Mentioned>> {
    let found = mentions(text, domain);
    if found.over_limit() {
        return Err(ApiError::field("status", format!("a post may mention at most {MAX_MENTIONS} accounts")));
    }
    let owners = join_all(found.local.iter().map(|handle| users::resolve(ctx, handle))).await;
    let mut resolved = Vec::new();
    for (handle, owner) in found.local.iter().zip(owners) {
        if let Some(id) = owner? {
            resolved.push(Mentioned { id, handle: handle.as_str().to_owned() });
        }
    }
    Ok(resolved)
}

/// Makes (`live`: the post is there and may be seen) or takes back each mentioned user's
/// notification, and tells the live sockets of those notified now. Idempotent.
pub async fn notify(
    ctx: &Ctx,
    (post, author, visibility): (PostId, UserId, Visibility),
    mentioned: &[Mentioned],
    live: bool,
) -> ApiResult<()> {
    let writes = mentioned.iter().filter(|m| m.id != author).map(|m| {
        let mention = MentionOf { recipient: m.id, author, post, visibility };
        async move { notifications::set_mention(ctx.user_db(m.id), &mention, live, ctx.now).await }
    });
    for made in join_all(writes).await {
        if let Some(notice) = made? {
            streaming::tell(ctx, notice).await;
        }
    }
    Ok(())
}
