//! Mentions: a post's `@handle`s resolved to accounts when it is published (kept on the post:
//! `posts.mentions`), and their notifications, on each mentioned user's home. The post commits
//! first; the notifications are written after it by the request and again by the post's outbox
//! event (`services/fanout/reads.rs`), so a crash between the databases is repaired when the
//! outbox resends it. Rules: `domain/mentions.rs`.

use futures_util::future::{join, join_all};

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::mentions::{mentions, Mentioned, MAX_MENTIONS};
use crate::domain::visibility::Visibility;
use crate::error::{ApiError, ApiResult};
use crate::services::{direct, streaming, users};
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
/// notification, and tells the live sockets of those notified now. A direct post also records
/// each participant's conversation (in the recipient's notification batch; the author's apart),
/// and tells their `direct` streams. `thread`: the post's conversation (its root), which a
/// recipient may have muted. Idempotent.
pub async fn notify(
    ctx: &Ctx,
    (post, thread, author, visibility): (PostId, PostId, UserId, Visibility),
    mentioned: &[Mentioned],
    live: bool,
) -> ApiResult<()> {
    let conversation = (live && visibility == Visibility::Private)
        .then(|| direct::Conversation::of(post, author, mentioned));
    let conversation = conversation.as_ref();
    let writes = mentioned.iter().filter(|m| m.id != author).map(|m| {
        let mention = MentionOf { recipient: m.id, author, post, thread };
        async move {
            let db = ctx.user_db(m.id);
            let also = conversation.map(|c| c.record(db, m.id, ctx.now)).transpose()?;
            notifications::set_mention(db, &mention, live, ctx.now, also).await
        }
    });
    let (made, started) = join(join_all(writes), async {
        match conversation {
            Some(c) => c.record_author(ctx).await,
            None => Ok(None),
        }
    })
    .await;
    for made in made {
        let (notice, joined) = made?;
        if let Some(notice) = notice {
            streaming::tell(ctx, notice).await;
        }
        if let Some(joined) = joined {
            streaming::tell_conversation(ctx, joined).await;
        }
    }
    if let Some(started) = started? {
        streaming::tell_conversation(ctx, started).await;
    }
    Ok(())
}
