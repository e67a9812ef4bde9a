//! What the Mastodon streaming API sends (`/api/v1/streaming`), rendered for one viewer at the
//! moment it is sent: the statuses a delivery brought to their home timeline, re-read now (a
//! post deleted, made private or by someone blocked since is not sent), and notifications,
//! read through the same rules as the list.

use futures_util::future::join;

use crate::context::Ctx;
use crate::domain::filters::Context;
use crate::domain::ids::{PostId, UserId};
use crate::domain::notifications::Notice;
use crate::error::ApiResult;
use crate::objects::live::{Rendered, Renderer};
use crate::objects::timeline::Windows;
use crate::services::mastodon_entities::{accounts, notified_posts, Notification, Status};
use crate::services::{filters, notifications};
use crate::store::posts::{get_visible, PostRow};
use crate::store::users;

/// The `update` payloads (Status JSON) of these posts for `viewer`, oldest first (the order
/// clients prepend them in); the posts the viewer may not see now are left out.
pub async fn update_payloads(
    ctx: &Ctx,
    viewer: UserId,
    origin: &str,
    posts: &[PostId],
    context: Context,
) -> ApiResult<Vec<String>> {
    let mut shown: Vec<PostRow> = Vec::with_capacity(posts.len());
    for &post in posts {
        if let Some(row) = get_visible(ctx.shards.post(post), viewer, post).await? {
            shown.push(row);
        }
    }
    shown.sort_by_key(PostRow::sort_key);
    let mut authors: Vec<UserId> = shown.iter().map(|p| p.author_id).collect();
    authors.sort_unstable();
    authors.dedup();
    // A muted author's post leaves the timeline as it does on a read (the viewer's mutes).
    let muted = crate::store::mutes::muted_among(ctx.user_db(viewer), viewer, &authors).await?;
    shown.retain(|p| !muted.contains(&p.author_id));
    // A boost goes out around its original, if the viewer may see that now.
    let (resolved, applied) = join(
        crate::services::originals::resolve(ctx, viewer, shown, None),
        filters::load(ctx, viewer, context),
    )
    .await;
    let ((mut shown, _), applied) = (resolved?, applied?);
    // Filters apply as on a read of the same timeline: `hide` leaves the status out (Mastodon's
    // streaming server drops it too), `warn` and `blur` mark it.
    shown.retain(|p| !filters::hides(&applied, viewer, p));
    let ids: Vec<PostId> = shown.iter().map(|p| p.shown().id).collect();
    let mut authors: Vec<UserId> = shown.iter().flat_map(|p| [p.author_id, p.shown().author_id]).collect();
    authors.sort_unstable();
    authors.dedup();
    let (found, marks) = join(
        users::by_ids(&ctx.shards, &authors),
        crate::services::originals::marks_among(ctx, viewer, &ids),
    )
    .await;
    let (accounts, marks) = (accounts(origin, &found?), marks?);
    marks.apply(&mut shown);
    let status = |p: &PostRow| {
        Status::of_post(origin, &accounts, p)
            .bookmarked(marks.bookmarked(p.shown().id))
            .filtered(filters::results(&applied, viewer, p))
    };
    Ok(shown.iter().map(|p| to_json(&status(p))).collect())
}

/// The `notification` payload of one of the viewer's notifications, unless it is hidden now.
pub async fn notification_payload(
    ctx: &Ctx,
    viewer: UserId,
    origin: &str,
    id: i64,
) -> ApiResult<Option<String>> {
    let (found, applied) =
        join(notifications::one(ctx, viewer, id), filters::load(ctx, viewer, Context::Notifications)).await;
    let Some(found) = found? else { return Ok(None) };
    // As in the list: a `hide` filter on its status keeps the notification off the stream.
    let Some(filtered) = filters::of_notification(&*applied?, viewer, &found) else { return Ok(None) };
    let ids = [found.actor.id, viewer];
    let posts = notified_posts([&found]);
    let (users, marked) =
        join(users::by_ids(&ctx.shards, &ids), crate::services::originals::marks_among(ctx, viewer, &posts))
            .await;
    let accounts = accounts(origin, &users?);
    Ok(Some(to_json(&Notification::new(origin, &accounts, &found, &marked?).filtered(filtered))))
}

/// The window object's renderer for its Mastodon sockets (registered by `lib.rs`): what is sent
/// is read for the viewer when it is sent, through the same rules as a read.
pub const RENDERER: Renderer = Renderer {
    updates: render_updates,
    notification: render_notification,
    conversation: render_conversation,
};

fn render_updates<'a>(
    ctx: &'a Ctx,
    viewer: UserId,
    origin: &'a str,
    posts: &'a [PostId],
    context: Context,
) -> Rendered<'a, Vec<String>> {
    Box::pin(update_payloads(ctx, viewer, origin, posts, context))
}

fn render_notification<'a>(
    ctx: &'a Ctx,
    viewer: UserId,
    origin: &'a str,
    id: i64,
) -> Rendered<'a, Option<String>> {
    Box::pin(notification_payload(ctx, viewer, origin, id))
}

fn render_conversation<'a>(
    ctx: &'a Ctx,
    viewer: UserId,
    origin: &'a str,
    post: i64,
) -> Rendered<'a, Option<String>> {
    Box::pin(conversation_payload(ctx, viewer, origin, post))
}

/// The `conversation` payload of one of the viewer's conversations, unless hidden now.
pub async fn conversation_payload(
    ctx: &Ctx,
    viewer: UserId,
    origin: &str,
    post: i64,
) -> ApiResult<Option<String>> {
    let id = PostId::from_trusted(post);
    match crate::services::direct::one(ctx, viewer, id).await {
        Ok(shown) => {
            let rendered = crate::services::direct::entities(ctx, viewer, origin, vec![shown]).await?;
            Ok(rendered.first().map(to_json))
        }
        Err(crate::error::ApiError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Tells a participant's `direct` streams about a conversation just recorded, after the answer
/// (best effort, as [`tell`]).
pub async fn tell_conversation(ctx: &Ctx, notice: Notice) {
    tell_live(ctx, notice, true).await;
}

/// Tells the recipient's live sockets about a notification just made, and queues its Web Push
/// if they have a subscription, after the answer (best effort: the notification is stored; a
/// lost notice only means the socket hears of it later, a lost push is not sent). Every write
/// that makes a notification calls this with what its statement returned.
pub async fn tell(ctx: &Ctx, notice: Notice) {
    if notice.live {
        tell_live(ctx, notice, false).await;
    }
    if notice.push {
        crate::services::push::announce(ctx, notice).await;
    }
}

async fn tell_live(ctx: &Ctx, notice: Notice, conversation: bool) {
    let env = ctx.env.clone();
    ctx.after_response(async move {
        let told = match Ctx::new(env) {
            Ok(ctx) => match Windows::new(&ctx) {
                Ok(windows) if conversation => windows.converse(notice).await,
                Ok(windows) => windows.notify(notice).await,
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        if let Err(e) = told {
            let what = if conversation { "conversation" } else { "notification" };
            worker::console_error!("live {what} {} not told: {e}", notice.id);
        }
    })
    .await;
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
