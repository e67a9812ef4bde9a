//! Mastodon's streaming API (`GET /api/v1/streaming`, WebSocket), on the reader's existing
//! hibernating live sockets (`objects/live.rs`): `stream=user` carries `update` (a status new in
//! the home timeline, re-read for the viewer when sent), `delete` and `notification`;
//! `user:notification` the notifications alone. Clients may also subscribe by message.

use std::rc::Rc;
use std::time::Duration;

use futures_channel::mpsc::UnboundedSender;
use futures_util::StreamExt;
use worker::wasm_bindgen_futures;
use worker::{Delay, Response, WebSocket, WebsocketEvent};

use crate::context::random_bytes;
use crate::domain::live::{sse_event, MastodonStream, Session, Stream, Subscription, TICKET_TTL_SECS};
use crate::domain::oauth::Scopes;
use crate::domain::token;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::objects::timeline::Windows;

/// The token, from where each kind of client puts it: `Authorization: Bearer` (native apps),
/// the `Sec-WebSocket-Protocol` header (browsers, which cannot set headers on a WebSocket: the
/// answer must echo it), or `?access_token=` (older web clients). The protocol to echo, if any.
fn token_of(input: &Input) -> ApiResult<(String, Option<String>)> {
    if let Some(bearer) = input.authorization.as_deref().and_then(|h| h.trim().strip_prefix("Bearer ")) {
        return Ok((bearer.trim().to_string(), None));
    }
    if let Some(protocol) = input.websocket_protocol.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        // A client may offer several; the token is the first.
        let first = protocol.split(',').next().unwrap_or(protocol).trim().to_string();
        return Ok((first.clone(), Some(first)));
    }
    match input.query("access_token").filter(|t| !t.is_empty()) {
        Some(token) => Ok((token.to_string(), None)),
        None => Err(ApiError::Unauthorized("a bearer token is required")),
    }
}

/// `GET /api/v1/streaming?stream=user` with `Upgrade: websocket`. Without the upgrade it
/// answers 404, which is how Mastodon clients tell that streaming is served on this host.
pub async fn connect(app: &App, input: &Input) -> ApiResult<Response> {
    if !input.websocket {
        return Err(ApiError::NotFound("streaming needs a WebSocket upgrade"));
    }
    let first = match input.query("stream") {
        None | Some("") => None,
        Some(name) => Some(
            Subscription::parse(name, input.query("tag"))
                .map_err(|e| ApiError::field("stream", e.message()))?,
        ),
    };
    open(app, input, first).await
}

/// Verifies the token (scope `read`, not revoked) and has the reader's object accept a socket
/// for it: its `101` answer.
async fn open(app: &App, input: &Input, first: Option<Subscription>) -> ApiResult<Response> {
    let (text, protocol) = token_of(input)?;
    let policy =
        token::Policy { now_secs: app.now.div_euclid(1000), max_ttl_secs: app.config.token_max_ttl_secs };
    let token = app.verify_token(&text, policy)?;
    if token.scopes.is_some_and(|granted| !granted.contains(Scopes::READ)) {
        return Err(ApiError::InsufficientScope(Scopes::READ));
    }
    app.confirm_not_revoked(&token).await?;
    let session = Session {
        user: token.user,
        // A fresh nonce: the object accepts each session once, as it does a ticket.
        nonce: u64::from_le_bytes(random_bytes()?) >> 11,
        ticket_expires_at: app.now.div_euclid(1000) + TICKET_TTL_SECS,
        token_issued_at: token.issued_at,
        token_expires_at: token.expires_at,
        token_id: token.token_id,
    };
    let stream = MastodonStream::new(&input.origin, first);
    let response = Windows::new(app)?.connect_mastodon(&session, &stream, protocol.as_deref()).await?;
    match response.status_code() {
        101 => Ok(response),
        status => {
            Err(ApiError::Internal(format!("the timeline object answered {status} to a streaming connect")))
        }
    }
}

/// `GET /api/v1/streaming/health`: `OK`, as Mastodon's streaming server answers.
pub fn health() -> ApiResult<Response> {
    let mut response = Response::ok("OK")?;
    response.headers_mut().set("content-type", "text/plain; charset=utf-8")?;
    Ok(response)
}

/// Between two server-sent events at most this long passes: a comment line, so proxies and
/// clients do not time the stream out.
const HEARTBEAT: Duration = Duration::from_secs(15);

type Chunks = UnboundedSender<Result<Vec<u8>, worker::Error>>;

/// `GET /api/v1/streaming/user` (and `/user/notification`): the same streams as server-sent
/// events, for HTTP streaming clients (Mastodon.py). The Worker holds a socket to the reader's
/// object and relays its frames while the client stays connected (the object still hibernates
/// between them); when the client goes, the next heartbeat finds it gone and closes the socket.
pub async fn events(app: &App, input: &Input, notifications_only: bool) -> ApiResult<Response> {
    let first = if notifications_only { Stream::UserNotification } else { Stream::User };
    let socket = open(app, input, Some(Subscription::Fixed(first)))
        .await?
        .websocket()
        .ok_or_else(|| ApiError::Internal("the timeline object answered no socket".into()))?;
    socket.accept()?;
    let socket = Rc::new(socket);
    let (chunks, body) = futures_channel::mpsc::unbounded();
    // Comment lines as Mastodon's streaming server sends them: one line break, no blank line
    // (clients such as Mastodon.py take any blank line for the end of an event).
    let _ = chunks.unbounded_send(Ok(b":)\n".to_vec()));
    wasm_bindgen_futures::spawn_local(relay(socket.clone(), chunks.clone()));
    wasm_bindgen_futures::spawn_local(heartbeat(socket, chunks));
    let mut response = Response::from_stream(body)?;
    response.headers_mut().set("content-type", "text/event-stream")?;
    response.headers_mut().set("cache-control", "no-store")?;
    Ok(response)
}

async fn relay(socket: Rc<WebSocket>, chunks: Chunks) {
    if let Ok(mut frames) = socket.events() {
        while let Some(Ok(WebsocketEvent::Message(message))) = frames.next().await {
            let Some(event) = message.text().as_deref().and_then(sse_event) else { continue };
            if chunks.unbounded_send(Ok(event.into_bytes())).is_err() {
                break;
            }
        }
    }
    let _ = socket.close(Some(1000), Some("the event stream ended"));
    chunks.close_channel();
}

async fn heartbeat(socket: Rc<WebSocket>, chunks: Chunks) {
    loop {
        Delay::from(HEARTBEAT).await;
        if chunks.unbounded_send(Ok(b":thump\n".to_vec())).is_err() {
            let _ = socket.close(Some(1000), Some("the client went away"));
            return;
        }
    }
}
