//! TimelineWindow Durable Object: one per reader, a capped index of the post ids in that
//! reader's home feed, ordered by `(created_at DESC, post_id DESC)`. It never holds bodies.
//!
//! A thin shell: the rules (and the invariant they keep) live in `domain::window`, the SQLite
//! storage and its schema in `objects::window_sql`. This file only turns requests into ops.
//! Each op runs synchronously, without awaiting, so it is atomic.

use worker::{
    durable_object, DurableObject, Env, Headers, Method, ObjectNamespace, Request, RequestInit, Response,
    Result, SqlStorage, State, WebSocket, WebSocketIncomingMessage,
};

use std::cell::Cell;
use std::rc::Rc;

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::live::{self, Revocation, Session};
use crate::domain::window::{self, WindowStorage};
use crate::error::{ApiError, ApiResult, StorageKind};
use crate::objects::live as sockets;
use crate::objects::window_sql::{self, SqlWindow};
use crate::store::Io;

pub use crate::domain::window::{Entry, WindowOp, WindowReply};

#[durable_object]
pub struct TimelineWindow {
    state: State,
    env: Env,
    sql: SqlStorage,
    /// Why the schema could not be brought up to date, if it could not: every request then
    /// fails with it, rather than running ops against a schema this code does not know.
    schema_error: Option<String>,
    /// Test hook (`/v1/admin/test/window_fault`): this many feed reads fail, as if the object
    /// were overloaded or unreachable. In memory only: an evicted object forgets it.
    failing_reads: Cell<u32>,
}

impl DurableObject for TimelineWindow {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        let schema_error = window_sql::migrate(&sql).err().map(|e| e.to_string());
        if let Some(e) = &schema_error {
            worker::console_error!("timeline window schema migration failed: {e}");
        }
        sockets::enable_heartbeats(&state);
        Self { state, env, sql, schema_error, failing_reads: Cell::new(0) }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        if let Some(e) = &self.schema_error {
            return Response::error(
                format!("timeline window unavailable: schema migration failed: {e}"),
                500,
            );
        }
        match req.path().as_str() {
            LIVE_CONNECT => {
                let header = req.headers().get(SESSION_HEADER)?.unwrap_or_default();
                match serde_json::from_str::<Session>(&header) {
                    Ok(session) => sockets::connect(&self.state, &self.env, &self.sql, session).await,
                    Err(_) => Response::error("bad live session", 400),
                }
            }
            LIVE_CLOSE => {
                let close: CloseLive = req.json().await?;
                let closed = sockets::close_ended(&self.state, close.now_secs, close.revocation);
                Response::from_json(&serde_json::json!({ "closed": closed }))
            }
            FAIL_READS => {
                let fault: FailReads = req.json().await?;
                self.failing_reads.set(fault.times);
                Response::from_json(&serde_json::json!({ "failing_reads": fault.times }))
            }
            _ => match req.json::<WindowOp>().await {
                Ok(op) if self.read_fails(&op) => Response::error("injected fault: window unavailable", 503),
                Ok(op) => self.apply(op),
                Err(e) => Response::error(format!("bad window op: {e}"), 400),
            },
        }
    }

    async fn alarm(&self) -> Result<Response> {
        sockets::review(&self.state, &self.env).await?;
        Response::ok("reviewed")
    }

    // The client has nothing to say beyond `ping` (answered by the runtime without waking us).
    async fn websocket_message(&self, _ws: WebSocket, _message: WebSocketIncomingMessage) -> Result<()> {
        Ok(())
    }

    async fn websocket_close(&self, ws: WebSocket, code: usize, _reason: String, _clean: bool) -> Result<()> {
        // Completes the closing handshake; the lease lapses on its own once no socket renews it.
        let code = u16::try_from(code).ok().filter(|c| *c == 1000 || (3000..5000).contains(c));
        let _ = ws.close(code.or(Some(1000)), Some("closed"));
        Ok(())
    }

    async fn websocket_error(&self, _ws: WebSocket, _error: worker::Error) -> Result<()> {
        Ok(())
    }
}

impl TimelineWindow {
    /// Whether this op is a feed read the test fault makes fail (and uses up one firing).
    fn read_fails(&self, op: &WindowOp) -> bool {
        let left = self.failing_reads.get();
        let is_read = matches!(op, WindowOp::Older { .. } | WindowOp::Newer { .. });
        if is_read && left > 0 {
            self.failing_reads.set(left - 1);
        }
        is_read && left > 0
    }

    /// Applies one window op; a delivery with news for an open socket is announced on it.
    fn apply(&self, op: WindowOp) -> Result<Response> {
        let mut store = SqlWindow::new(&self.sql);
        let delivered = match &op {
            WindowOp::Deliver { entries, .. } | WindowOp::Backfill { entries, .. }
                if !self.state.get_websockets().is_empty() =>
            {
                store.nth_newest_key(0).ok().map(|top| (entries.clone(), top))
            }
            _ => None,
        };
        let mut reply = match window::apply(&mut store, op) {
            Ok(reply) => reply,
            Err(e) => {
                return super::failure(&ApiError::Storage {
                    kind: StorageKind::Other,
                    detail: format!("window op failed: {e}"),
                })
            }
        };
        reply.statements = store.statements();
        if let Some(news) = delivered.and_then(|(entries, top)| live::announcement(&entries, top)) {
            if reply.changed > 0 {
                sockets::announce(&self.state, &self.env, news);
            }
        }
        Response::from_json(&reply)
    }
}

const LIVE_CONNECT: &str = "/live/connect";
const LIVE_CLOSE: &str = "/live/close";
const FAIL_READS: &str = "/test/fail_reads";
/// The verified [`Session`] travels from the Worker to the object in this header (the body of
/// an upgrade request is not ours to use).
const SESSION_HEADER: &str = "x-edgefeed-live-session";

/// Closes the reader's sockets whose tokens a credential change ended.
#[derive(serde::Serialize, serde::Deserialize)]
struct CloseLive {
    now_secs: i64,
    revocation: Revocation,
}

/// Test hook: the next `times` feed reads of this window fail.
#[derive(serde::Serialize, serde::Deserialize)]
struct FailReads {
    times: u32,
}

/// Worker-side handle to readers' windows.
pub struct Windows {
    namespace: ObjectNamespace,
    io: Rc<Io>,
}

impl Windows {
    pub fn new(ctx: &Ctx) -> ApiResult<Self> {
        Ok(Self { namespace: ctx.env.durable_object("TIMELINE")?, io: ctx.io.clone() })
    }

    pub async fn call(&self, reader: UserId, op: &WindowOp) -> ApiResult<WindowReply> {
        crate::objects::call(&self.namespace, &self.io, &name(reader), op).await
    }

    /// Hands a verified WebSocket upgrade to the reader's object, which accepts it (`101`), or
    /// answers `409` for a ticket it has seen before.
    pub async fn connect_live(&self, session: &Session) -> ApiResult<Response> {
        let headers = Headers::new();
        headers.set("upgrade", "websocket")?;
        headers.set(SESSION_HEADER, &serde_json::to_string(session).unwrap_or_default())?;
        let mut init = RequestInit::new();
        init.with_method(Method::Get).with_headers(headers);
        self.send(session.user, LIVE_CONNECT, &init).await
    }

    /// Closes the reader's open sockets that `revocation` ends.
    pub async fn close_live(&self, reader: UserId, now_secs: i64, revocation: Revocation) -> ApiResult<()> {
        let mut init = RequestInit::new();
        let body = serde_json::to_string(&CloseLive { now_secs, revocation }).unwrap_or_default();
        init.with_method(Method::Post).with_body(Some(body.into()));
        match self.send(reader, LIVE_CLOSE, &init).await?.status_code() {
            200 => Ok(()),
            status => Err(ApiError::Internal(format!("closing live sockets answered {status}"))),
        }
    }

    /// Test hook: makes the reader's next `times` feed reads fail in the object (`0` heals it).
    pub async fn fail_reads(&self, reader: UserId, times: u32) -> ApiResult<()> {
        let mut init = RequestInit::new();
        let body = serde_json::to_string(&FailReads { times }).unwrap_or_default();
        init.with_method(Method::Post).with_body(Some(body.into()));
        match self.send(reader, FAIL_READS, &init).await?.status_code() {
            200 => Ok(()),
            status => Err(ApiError::Internal(format!("arming the window fault answered {status}"))),
        }
    }

    /// One request to the reader's object at `path` (the live routes; window ops go through
    /// [`crate::objects::call`]), counted as a Durable Object round trip.
    async fn send(&self, reader: UserId, path: &str, init: &RequestInit) -> ApiResult<Response> {
        let request = Request::new_with_init(&format!("https://durable-object{path}"), init)?;
        let stub = self.namespace.id_from_name(&name(reader))?.get_stub()?;
        Ok(self.io.timed(&self.io.do_calls, &self.io.do_ms, stub.fetch_with_request(request)).await?)
    }
}

fn name(reader: UserId) -> String {
    format!("reader:{reader}")
}
