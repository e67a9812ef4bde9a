//! The live half of the TimelineWindow object: the reader's open feed sockets, accepted with
//! the hibernation API (an idle socket keeps no isolate alive; `ping` is answered by the
//! runtime without waking the object), each carrying its [`Session`] as its attachment.
//!
//! While a socket is open the object renews the reader's lease in D1 (`live_readers`), which is
//! how the fan-out finds live readers of authors it does not push to, and an alarm re-checks
//! every socket's credential every [`REVIEW_MS`] (expiry, logout, suspension), so a socket never
//! outlives its token by more than that even if the prompt close (below) was lost.

use std::rc::Rc;

use worker::worker_sys::WebSocketRequestResponsePair;
use worker::{Env, Response, Result, SqlStorage, State, WebSocket, WebSocketPair};

use crate::domain::cursor::CursorCodec;
use crate::domain::live::{
    self, Announcement, NewPosts, Revocation, Session, CLOSE_UNAUTHORIZED, LEASE_MS, REVIEW_MS,
};
use crate::objects::alarm::{now_ms, Alarm};
use crate::objects::window_sql;
use crate::store::{live as leases, users, Db, Io};

/// Makes `ping` answered by the runtime itself, so heartbeats never wake the object.
pub fn enable_heartbeats(state: &State) {
    match WebSocketRequestResponsePair::new(live::PING, live::PONG) {
        Ok(pair) => state.set_websocket_auto_response(&pair),
        Err(_) => worker::console_error!("could not set the live socket auto-response"),
    }
}

fn db(env: &Env) -> Result<Db> {
    Ok(Db::new(env.d1(crate::store::shards::CONTROL_BINDING)?, Rc::new(Io::default())))
}

fn session_of(socket: &WebSocket) -> Option<Session> {
    socket.deserialize_attachment().ok().flatten()
}

fn close_unauthorized(socket: &WebSocket, why: &str) {
    let _ = socket.close(Some(CLOSE_UNAUTHORIZED), Some(why));
}

/// Accepts a socket for a session the Worker verified (signature, expiry, the user's state);
/// refuses a ticket this object has accepted before. Renews the lease and schedules the review.
pub async fn connect(
    state: &State,
    env: &Env,
    sql: &SqlStorage,
    alarm: &Alarm,
    session: Session,
) -> Result<Response> {
    let now = now_ms();
    let nonce = i64::try_from(session.nonce).unwrap_or(i64::MAX);
    if !window_sql::use_ticket(sql, nonce, session.ticket_expires_at, now / 1000)? {
        return Response::error("ticket already used", 409);
    }
    let pair = WebSocketPair::new()?;
    state.accept_web_socket(&pair.server);
    pair.server.serialize_attachment(session)?;
    leases::renew_lease(&db(env)?, session.user, now + LEASE_MS)
        .await
        .map_err(|e| worker::Error::RustError(e.to_string()))?;
    schedule_review(state, alarm, now, Some(session)).await?;
    Response::from_websocket(pair.client)
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
    let db = db(env)?;
    let now = now_ms();
    let mut open = None;
    for socket in state.get_websockets() {
        let Some(session) = session_of(&socket) else {
            close_unauthorized(&socket, "no session");
            continue;
        };
        let auth = users::auth_state(&db, session.user, session.token_id)
            .await
            .map_err(|e| worker::Error::RustError(e.to_string()))?;
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
        leases::renew_lease(&db, user, now + LEASE_MS)
            .await
            .map_err(|e| worker::Error::RustError(e.to_string()))?;
        schedule_review(state, alarm, now, None).await?;
    }
    Ok(open.is_some())
}

/// Tells every open socket about a delivery; a socket whose token expired is closed instead.
pub fn announce(state: &State, env: &Env, news: Announcement) {
    let sockets = state.get_websockets();
    let Some(user) = sockets.iter().find_map(session_of).map(|s| s.user) else { return };
    let Some(secret) = env.secret("AUTH_SECRET").ok().map(|s| s.to_string()) else {
        return worker::console_error!("AUTH_SECRET missing: live updates not sent");
    };
    // The cursor of the feed list (not a group's): the socket follows the whole home feed.
    let cursor = CursorCodec::new(secret.as_bytes()).encode(user, "feed", news.since);
    let message = serde_json::to_string(&NewPosts::new(news.count, &cursor)).unwrap_or_default();
    let now_secs = now_ms() / 1000;
    for socket in sockets {
        match session_of(&socket) {
            Some(session) if !session.ended(now_secs, None) => {
                let _ = socket.send_with_str(&message);
            }
            _ => close_unauthorized(&socket, "the token behind this socket expired"),
        }
    }
}
