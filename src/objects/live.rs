//! The live half of the TimelineWindow object: the reader's open feed sockets, accepted with
//! the hibernation API (an idle socket keeps no isolate alive; `ping` is answered by the
//! runtime without waking the object), each carrying its [`Session`] as its attachment.
//!
//! While a socket is open the object renews the reader's lease in D1 (`live_readers`) and marks
//! the reader's pulled edges on their authors' databases (`live_edges`), which is how a
//! delivery finds live readers of authors it does not push to, and an alarm re-checks
//! every socket's credential every [`REVIEW_MS`] (expiry, logout, suspension), so a socket never
//! outlives its token by more than that even if the prompt close (below) was lost.

use std::sync::OnceLock;

use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use worker::worker_sys::WebSocketRequestResponsePair;
use worker::{Env, Response, Result, SqlStorage, State, Storage, WebSocket, WebSocketPair};

use crate::context::Ctx;
use crate::domain::cursor::CursorCodec;
use crate::domain::filters::Context;
use crate::domain::ids::{PostId, UserId};
use crate::domain::live::{
    self, Announcement, ClientMessage, Event, MarkedEdges, MastodonStream, NewPosts, Revocation, Session,
    TimelineNews, CLOSE_UNAUTHORIZED, LEASE_MS, MARK_LEASE_MS, NEW_NOTIFICATIONS, READER_LEASE_MS, REVIEW_MS,
};
use crate::error::ApiResult;
use crate::objects::alarm::{now_ms, Alarm};
use crate::objects::window_sql;
use crate::store::{live as leases, timelines as timeline_index, users};

/// What renders a Mastodon socket's frames for its viewer: the `update` payloads (Status JSON)
/// of posts, oldest first, leaving out those the viewer may not see now; the `notification`
/// payload of one notification, `None` if it is hidden now; the `conversation` payload of one
/// of the viewer's conversations (by its post's id), `None` if it is hidden now.
///
/// Why handed in: rendering reads D1 through the services (visibility, notifications, the
/// Mastodon entities), a layer above this object, so the crate root (`lib.rs`) registers
/// `services::streaming`'s at start-up instead of this object importing it. Why here, at send
/// time, and not rendered by the Worker before a delivery: a frame must carry what its viewer
/// may see at the moment it is sent (ARCHITECTURE invariant 9), and only this object knows when
/// that is and for which viewer and origin. Two function pointers: nothing else to hold.
#[derive(Clone, Copy)]
pub struct Renderer {
    pub updates: RenderUpdates,
    pub notification: RenderNotification,
    pub conversation: RenderNotification,
}

/// `(ctx, viewer, origin, posts, context)`: the `update` payloads, filtered by the viewer's
/// filters of that context (`home` for the `user` stream, `public` for public and tag streams).
pub type RenderUpdates =
    for<'a> fn(&'a Ctx, UserId, &'a str, &'a [PostId], Context) -> Rendered<'a, Vec<String>>;
/// `(ctx, viewer, origin, notification id)`: the `notification` payload.
pub type RenderNotification = for<'a> fn(&'a Ctx, UserId, &'a str, i64) -> Rendered<'a, Option<String>>;
pub type Rendered<'a, T> = LocalBoxFuture<'a, ApiResult<T>>;

static RENDERER: OnceLock<Renderer> = OnceLock::new();

/// Hands the live sockets their [`Renderer`]: once, when the module starts (before any object
/// or request runs in the isolate).
pub fn set_renderer(renderer: Renderer) {
    let _ = RENDERER.set(renderer);
}

/// The registered renderer; without one nothing is rendered, so nothing unchecked is sent.
fn renderer() -> Option<&'static Renderer> {
    let found = RENDERER.get();
    if found.is_none() {
        worker::console_error!("no streaming renderer registered: Mastodon frames not sent");
    }
    found
}

/// Makes `ping` answered by the runtime itself, so heartbeats never wake the object.
pub fn enable_heartbeats(state: &State) {
    match WebSocketRequestResponsePair::new(live::PING, live::PONG) {
        Ok(pair) => state.set_websocket_auto_response(&pair),
        Err(_) => worker::console_error!("could not set the live socket auto-response"),
    }
}

/// The object's own storage context (its round trips are nobody's request's).
fn context(env: &Env) -> Result<Ctx> {
    Ctx::new(env.clone()).map_err(rust_error)
}

/// A Mastodon streaming socket's attachment: its session and its stream state. A `/v1`
/// socket's attachment is its bare [`Session`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct MastodonAttachment {
    s: Session,
    m: MastodonStream,
}

fn mastodon_of(socket: &WebSocket) -> Option<MastodonAttachment> {
    socket.deserialize_attachment().ok().flatten()
}

fn session_of(socket: &WebSocket) -> Option<Session> {
    match mastodon_of(socket) {
        Some(attachment) => Some(attachment.s),
        None => socket.deserialize_attachment().ok().flatten(),
    }
}

/// The user of a socket's session.
pub fn session_user(socket: &WebSocket) -> Option<UserId> {
    session_of(socket).map(|s| s.user)
}

fn rust_error(e: impl std::fmt::Display) -> worker::Error {
    worker::Error::RustError(e.to_string())
}

/// Renews, each when due ([`live::lease_due`]), the reader's lease on the control database
/// (`live_readers`, read by an edit's frames) and their live marks: on their home row (read by
/// notification writes) and on their pulled edges (read by deliveries). A mark outliving its
/// socket costs a notification or a delivery one idle object's call; rewriting every mark at
/// every review would cost a write per socket per review. The marks are best effort: a
/// moving (frozen) shard refuses them for a moment, and until every one is written their time
/// is not stored, so the next review writes them all again (upserts).
async fn renew(ctx: &Ctx, state: &State, user: UserId, now: i64) -> Result<()> {
    let storage = state.storage();
    if let Some(until) = due(&storage, READER_LEASE_UNTIL, now, READER_LEASE_MS).await {
        leases::renew_lease(ctx.control(), user, until).await.map_err(rust_error)?;
        remember(&storage, READER_LEASE_UNTIL, until).await;
    }
    if let Some(until) = due(&storage, MARKS_UNTIL, now, MARK_LEASE_MS).await {
        let home = leases::mark_live(ctx.user_db(user), user, until).await;
        if let Err(e) = &home {
            worker::console_error!("live mark of {user} not renewed: {e}");
        }
        if mark_edges(ctx, user, until).await && home.is_ok() {
            remember(&storage, MARKS_UNTIL, until).await;
        }
    }
    Ok(())
}

/// The object's storage keys for when the reader's lease and marks, last written, lapse.
const READER_LEASE_UNTIL: &str = "live_reader_lease_until";
const MARKS_UNTIL: &str = "live_marks_until";

/// Until when to rewrite the lease whose end `key` remembers, if [`live::lease_due`].
async fn due(storage: &Storage, key: &str, now: i64, lease_ms: i64) -> Option<i64> {
    let until: Option<i64> = storage.get(key).await.ok().flatten();
    live::lease_due(until, now, lease_ms)
}

/// Best effort: a lost time only makes the next review write the lease again.
async fn remember(storage: &Storage, key: &str, until: i64) {
    if let Err(e) = storage.put(key, until).await {
        worker::console_error!("{key} not stored: {e}");
    }
}

/// Marks the reader live until `until` on the edges a delivery does not push (`live_edges`, on
/// each author's home: migration 0050): one statement per database among their authors.
/// Whether every database took its marks.
async fn mark_edges(ctx: &Ctx, user: UserId, until: i64) -> bool {
    let edges = MarkedEdges::of(ctx.config.policy.mode);
    if edges == MarkedEdges::None {
        return true;
    }
    let authors = match leases::marked_authors(ctx.user_db(user), user, edges).await {
        Ok(authors) => authors,
        Err(e) => {
            worker::console_error!("edges of {user} not read for their live marks: {e}");
            return false;
        }
    };
    let groups = ctx.shards.users_by_database(authors);
    let written = ctx
        .shards
        .across(groups, |db, group| async move {
            let written = leases::mark_edges(db, user, &group, until).await;
            if let Err(e) = &written {
                worker::console_error!("live marks of {user} not written on a database: {e}");
            }
            Ok(written.is_ok())
        })
        .await;
    written.is_ok_and(|all| all.into_iter().all(|ok| ok))
}

fn close_unauthorized(socket: &WebSocket, why: &str) {
    let _ = socket.close(Some(CLOSE_UNAUTHORIZED), Some(why));
}

/// Accepts a socket for a session the Worker verified (signature, expiry, the user's state);
/// refuses a ticket this object has accepted before. Renews the lease and schedules the review.
/// A Mastodon socket (`mastodon`) keeps its stream state beside the session, and its answer
/// names the subprotocol the client offered (browsers carry the token there and fail the
/// handshake unless the answer echoes it).
pub async fn connect(
    state: &State,
    env: &Env,
    sql: &SqlStorage,
    alarm: &Alarm,
    session: Session,
    mastodon: Option<(MastodonStream, Option<String>)>,
) -> Result<Response> {
    let now = now_ms();
    let nonce = i64::try_from(session.nonce).unwrap_or(i64::MAX);
    if !window_sql::use_ticket(sql, nonce, session.ticket_expires_at, now / 1000)? {
        return Response::error("ticket already used", 409);
    }
    let pair = WebSocketPair::new()?;
    state.accept_web_socket(&pair.server);
    let ctx = context(env)?;
    let protocol = match mastodon {
        Some((stream, protocol)) => {
            listen(&ctx, session.user, &stream, now + LEASE_MS).await;
            pair.server.serialize_attachment(MastodonAttachment { s: session, m: stream })?;
            protocol
        }
        None => {
            pair.server.serialize_attachment(session)?;
            None
        }
    };
    renew(&ctx, state, session.user, now).await?;
    schedule_review(state, alarm, now, Some(session)).await?;
    let mut response = Response::from_websocket(pair.client)?;
    if let Some(protocol) = protocol {
        response.headers_mut().set("sec-websocket-protocol", &protocol)?;
    }
    Ok(response)
}

/// The next review: in [`REVIEW_MS`], or when the earliest token among the sockets expires
/// (the object's one alarm, shared with the idle check: see `objects::alarm`).
async fn schedule_review(state: &State, alarm: &Alarm, now: i64, also: Option<Session>) -> Result<()> {
    let sockets = state.get_websockets();
    let sessions = sockets.iter().filter_map(session_of).chain(also);
    let earliest_expiry = sessions.map(|s| (s.token_expires_at * 1000.0).ceil() as i64).min();
    let Some(expiry) = earliest_expiry else { return Ok(()) };
    alarm.wake_by(state, (now + REVIEW_MS).min(expiry.max(now))).await
}

/// Closes the sockets whose credential ended at `now_secs` (expired, or ended by `revocation`);
/// returns how many it closed.
pub fn close_ended(state: &State, now_secs: i64, revocation: Revocation) -> usize {
    let mut closed = 0;
    for socket in state.get_websockets() {
        if session_of(&socket).is_none_or(|s| s.ended(now_secs, None) || s.revoked_by(revocation)) {
            close_unauthorized(&socket, "the credential behind this socket ended");
            closed += 1;
        }
    }
    closed
}

/// The alarm: re-reads each socket's credential in D1 (user suspended, logged out, the token
/// revoked by id), closes what ended, renews the lease while any socket stays open and schedules
/// the next review. With no socket left the lease is left to lapse (the cron pass deletes
/// lapsed leases). Returns whether a socket stays open.
pub async fn review(state: &State, env: &Env, alarm: &Alarm) -> Result<bool> {
    let ctx = context(env)?;
    let now = now_ms();
    let mut open = None;
    for socket in state.get_websockets() {
        let Some(session) = session_of(&socket) else {
            close_unauthorized(&socket, "no session");
            continue;
        };
        // The user row and the token's revocation live on the user's home database.
        let auth = users::auth_state(ctx.user_db(session.user), session.user, session.token_id)
            .await
            .map_err(rust_error)?;
        let ended = auth.is_none_or(|a| {
            a.is_suspended() || a.token_revoked() || session.ended(now / 1000, a.tokens_valid_after)
        });
        if ended {
            close_unauthorized(&socket, "the credential behind this socket ended");
        } else {
            open = Some(session.user);
        }
    }
    if let Some(user) = open {
        renew(&ctx, state, user, now).await?;
        for (_, attachment) in mastodon_sockets(state) {
            listen(&ctx, user, &attachment.m, now + LEASE_MS).await;
        }
        schedule_review(state, alarm, now, None).await?;
    }
    Ok(open.is_some())
}

/// Tells every open `/v1` socket about a delivery; a socket whose token expired is closed
/// instead. (Mastodon sockets get the statuses themselves: [`stream_updates`].)
pub fn announce(state: &State, env: &Env, news: Announcement) {
    let sockets = state.get_websockets();
    let Some(user) = sockets.iter().find_map(session_of).map(|s| s.user) else { return };
    let Some(secret) = env.secret("AUTH_SECRET").ok().map(|s| s.to_string()) else {
        return worker::console_error!("AUTH_SECRET missing: live updates not sent");
    };
    // The cursor of the feed list (not a group's): the socket follows the whole home feed.
    let cursor = CursorCodec::new(secret.as_bytes()).encode(user, "feed", news.since);
    let message = serde_json::to_string(&NewPosts::new(news.count, &cursor)).unwrap_or_default();
    for socket in v1_sockets(state) {
        let _ = socket.send_with_str(&message);
    }
}

/// The open `/v1` sockets; any whose token expired is closed on the way.
fn v1_sockets(state: &State) -> Vec<WebSocket> {
    let now_secs = now_ms() / 1000;
    let mut open = Vec::new();
    for socket in state.get_websockets() {
        if mastodon_of(&socket).is_some() {
            continue;
        }
        match session_of(&socket) {
            Some(session) if !session.ended(now_secs, None) => open.push(socket),
            _ => close_unauthorized(&socket, "the token behind this socket expired"),
        }
    }
    open
}

/// The open Mastodon sockets with their state; any whose token expired is closed on the way.
fn mastodon_sockets(state: &State) -> Vec<(WebSocket, MastodonAttachment)> {
    let now_secs = now_ms() / 1000;
    let mut open = Vec::new();
    for socket in state.get_websockets() {
        match mastodon_of(&socket) {
            Some(a) if !a.s.ended(now_secs, None) => open.push((socket, a)),
            Some(_) => close_unauthorized(&socket, "the token behind this socket expired"),
            None => {}
        }
    }
    open
}

/// Sends `event` to every Mastodon socket subscribed to a stream that carries it, with the
/// payload `render` makes for the socket's origin (rendered once per origin; `None`: nothing to
/// send, as when the viewer may no longer see it). Returns how many frames went out.
async fn stream_event<F, Fut>(state: &State, event: Event, render: F) -> usize
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Vec<String>>,
{
    let mut rendered: Vec<(String, Vec<String>)> = Vec::new();
    let mut sent = 0;
    for (socket, attachment) in mastodon_sockets(state) {
        let streams = attachment.m.carrying(event);
        if streams.is_empty() {
            continue;
        }
        let origin = attachment.m.origin;
        if !rendered.iter().any(|(o, _)| *o == origin) {
            let payloads = render(origin.clone()).await;
            rendered.push((origin.clone(), payloads));
        }
        let payloads = rendered.iter().find(|(o, _)| *o == origin).map(|(_, p)| p.as_slice()).unwrap_or(&[]);
        for payload in payloads {
            if socket.send_with_str(live::frame(&streams, event, payload)).is_ok() {
                sent += 1;
            }
        }
    }
    sent
}

fn logged<T: Default>(what: &str, result: ApiResult<T>) -> T {
    result.unwrap_or_else(|e| {
        worker::console_error!("streaming {what} not sent: {e}");
        T::default()
    })
}

/// New posts in the reader's home timeline: `update` frames with the statuses, each re-read
/// for the reader now.
pub async fn stream_updates(state: &State, env: &Env, reader: UserId, posts: &[PostId]) -> usize {
    if posts.is_empty() || mastodon_sockets(state).is_empty() {
        return 0;
    }
    let (Ok(ctx), Some(render)) = (Ctx::new(env.clone()), renderer()) else { return 0 };
    let ctx = &ctx;
    stream_event(state, Event::Update, |origin| async move {
        logged("updates", (render.updates)(ctx, reader, &origin, posts, Context::Home).await)
    })
    .await
}

/// A post gone from the reader's home timeline: a `delete` frame (the id alone).
pub async fn stream_delete(state: &State, post: PostId) -> usize {
    let id = post.to_string();
    stream_event(state, Event::Delete, |_| {
        let id = id.clone();
        async move { vec![id] }
    })
    .await
}

/// A new notification of the reader: `/v1` sockets hear that there is one; Mastodon sockets
/// get it rendered (unless it is hidden by now).
pub async fn notify(state: &State, env: &Env, reader: UserId, id: i64) -> usize {
    let v1 = v1_sockets(state);
    for socket in &v1 {
        let _ = socket.send_with_str(NEW_NOTIFICATIONS);
    }
    if mastodon_sockets(state).is_empty() {
        return v1.len();
    }
    let (Ok(ctx), Some(render)) = (Ctx::new(env.clone()), renderer()) else { return v1.len() };
    let ctx = &ctx;
    let sent = stream_event(state, Event::Notification, |origin| async move {
        let payload = logged("a notification", (render.notification)(ctx, reader, &origin, id).await);
        payload.into_iter().collect()
    })
    .await;
    v1.len() + sent
}

/// A conversation of the reader's that a direct post started: Mastodon sockets on `direct` get
/// it rendered (unless hidden by now).
pub async fn conversation(state: &State, env: &Env, reader: UserId, post: i64) -> usize {
    if mastodon_sockets(state).is_empty() {
        return 0;
    }
    let (Ok(ctx), Some(render)) = (Ctx::new(env.clone()), renderer()) else { return 0 };
    let ctx = &ctx;
    stream_event(state, Event::Conversation, |origin| async move {
        let payload = logged("a conversation", (render.conversation)(ctx, reader, &origin, post).await);
        payload.into_iter().collect()
    })
    .await
}

/// A message from a Mastodon client: subscribing or unsubscribing a stream (kept in the
/// attachment); a stream it may not have answers an error frame, as Mastodon's does. `/v1`
/// clients have nothing to say (`ping` never wakes the object). A subscription to a public or
/// tag stream takes a lease beside that timeline's index (`stream_listeners`), which the key's
/// stream relay reads once per flush to find whom to tell (`objects/relay.rs`).
pub async fn on_message(socket: &WebSocket, env: &Env, text: &str) {
    let Some(mut attachment) = mastodon_of(socket) else { return };
    let subscribed = match ClientMessage::parse(text) {
        ClientMessage::Subscribe(subscription) => {
            attachment.m.subscribe(&subscription, true);
            true
        }
        ClientMessage::Unsubscribe(subscription) => {
            attachment.m.subscribe(&subscription, false);
            false
        }
        ClientMessage::Refused(why) => {
            let frame = serde_json::json!({ "error": why.message(), "status": 400 }).to_string();
            let _ = socket.send_with_str(&frame);
            return;
        }
        ClientMessage::Junk => return,
    };
    if socket.serialize_attachment(&attachment).is_err() {
        worker::console_error!("could not keep a streaming subscription");
    }
    if subscribed {
        if let Ok(ctx) = context(env) {
            listen(&ctx, attachment.s.user, &attachment.m, now_ms() + LEASE_MS).await;
        }
    }
}

/// Takes or renews the leases a socket's public and tag subscriptions need (best effort: the
/// next review renews them).
async fn listen(ctx: &Ctx, user: UserId, stream: &MastodonStream, until: i64) {
    // Side by side: a public stream leases every stripe (16), each on its key's database.
    let keys = stream.listen_keys();
    let leases = keys.iter().map(|key| timeline_index::listen(ctx.shards.index(key), key, user, until));
    for (key, taken) in keys.iter().zip(futures_util::future::join_all(leases).await) {
        if let Err(e) = taken {
            worker::console_error!("stream lease on {} not taken: {e}", key.as_str());
        }
    }
}

/// Posts that joined, changed in or left a public or tag timeline this reader's sockets
/// listen to (a stream relay's flush, in order), or one edited in their home: for each, a frame
/// per matching subscription, the status re-read for the reader now.
pub async fn timeline_news(state: &State, env: &Env, reader: UserId, news: &[TimelineNews]) -> usize {
    let (Ok(ctx), Some(render)) = (Ctx::new(env.clone()), renderer()) else { return 0 };
    let mut sent = 0;
    for one in news {
        let sockets = mastodon_sockets(state);
        if sockets.is_empty() {
            break;
        }
        sent += one_news(&ctx, render, sockets, reader, one).await;
    }
    sent
}

async fn one_news(
    ctx: &Ctx,
    render: &Renderer,
    sockets: Vec<(WebSocket, MastodonAttachment)>,
    reader: UserId,
    news: &TimelineNews,
) -> usize {
    let context = if news.home { Context::Home } else { Context::Public };
    let mut rendered: Vec<(String, Option<String>)> = Vec::new();
    let mut sent = 0;
    for (socket, attachment) in sockets {
        let frames = attachment.m.carrying_news(news);
        if frames.is_empty() {
            continue;
        }
        let origin = attachment.m.origin;
        if !rendered.iter().any(|(o, _)| *o == origin) {
            let payload = match news.event {
                Event::Delete => Some(news.post.to_string()),
                _ => logged(
                    "a timeline update",
                    (render.updates)(ctx, reader, &origin, &[news.post], context).await,
                )
                .into_iter()
                .next(),
            };
            rendered.push((origin.clone(), payload));
        }
        let Some(Some(payload)) = rendered.iter().find(|(o, _)| *o == origin).map(|(_, p)| p) else {
            continue;
        };
        for streams in frames {
            let names: Vec<&str> = streams.iter().map(String::as_str).collect();
            if socket.send_with_str(live::frame(&names, news.event, payload)).is_ok() {
                sent += 1;
            }
        }
    }
    sent
}
