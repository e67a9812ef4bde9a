//! TimelineWindow Durable Object: one per reader, a capped index of the post ids in that
//! reader's home feed, ordered by `(created_at DESC, post_id DESC)`. It never holds bodies.
//!
//! A thin shell: the rules (and the invariant they keep) live in `domain::window`, the SQLite
//! storage and its schema in `objects::window_sql`. This file only turns requests into ops.
//! Each op runs synchronously, without awaiting, so it is atomic.
//!
//! Its alarm (one per object, `objects::alarm`) reviews the live sockets (`objects::live`) and
//! checks idleness (`domain::idle`): a reader who has not read for `WINDOW_IDLE_DAYS` has all
//! of this object's storage deleted; the next request finds an empty, uninitialized window,
//! which the next read builds from D1 like a new reader's (`domain::read`, the cold-window steps).

use worker::wasm_bindgen_futures::JsFuture;
use worker::{
    durable_object, DurableObject, Env, Error, Headers, Method, ObjectNamespace, Request, RequestInit,
    Response, Result, SqlStorage, State, WebSocket, WebSocketIncomingMessage,
};

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::context::Ctx;
use crate::domain::activity::Activity;
use crate::domain::cursor::SortKey;
use crate::domain::idle::{self, Holdings};
use crate::domain::ids::{PostId, UserId};
use crate::domain::live::{self, MastodonStream, Revocation, Session, TimelineNews};
use crate::domain::notifications::Notice;
use crate::domain::policy::DAY_MS;
use crate::domain::window::{self, WindowStorage};
use crate::error::{ApiError, ApiResult, StorageKind};
use crate::objects::alarm::{now_ms, Alarm};
use crate::objects::live as sockets;
use crate::objects::window_sql::{self, SqlWindow};
use crate::store::Io;

pub use crate::domain::window::{Entry, WindowOp, WindowReply};

/// Where the object's SQLite schema stands.
enum Schema {
    Ready,
    /// Deleted with the rest of the storage by the idle check: the next request makes it again.
    Missing,
    /// Why the schema could not be brought up to date at construction: every request then
    /// fails with it, rather than running ops against a schema this code does not know.
    Failed(String),
}

#[durable_object]
pub struct TimelineWindow {
    state: State,
    env: Env,
    sql: SqlStorage,
    schema: RefCell<Schema>,
    /// The object's one alarm: live sockets' review and the idle check (`objects::alarm`).
    alarm: Alarm,
    /// `WINDOW_IDLE_DAYS`, in ms.
    idle_ms: i64,
    /// Test hook (`/v1/admin/test/window_fault`): this many feed reads fail, as if the object
    /// were overloaded or unreachable. In memory only: an evicted object forgets it.
    failing_reads: Cell<u32>,
    /// The reader's activity as of the last feed read: the stored row plus the reads that wrote
    /// nothing (`domain::activity`: a row is written only when a report is due). Forgotten with
    /// the object's memory, or with its storage by the idle check.
    activity: Cell<Option<Activity>>,
}

impl DurableObject for TimelineWindow {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        let schema = match window_sql::migrate(&sql) {
            Ok(_) => Schema::Ready,
            Err(e) => {
                worker::console_error!("timeline window schema migration failed: {e}");
                Schema::Failed(e.to_string())
            }
        };
        sockets::enable_heartbeats(&state);
        let idle_ms = Config::from_env(&env).window_idle_days.saturating_mul(DAY_MS);
        let (alarm, failing_reads, activity) = (Alarm::default(), Cell::new(0), Cell::new(None));
        Self { state, env, sql, schema: RefCell::new(schema), alarm, idle_ms, failing_reads, activity }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let path = req.path();
        if path == TEST_DUMP {
            return self.dump();
        }
        if path == TEST_NOOP {
            // Before the schema check and without a body: what is left is the call itself.
            return Response::ok("");
        }
        if let Err(e) = self.schema_ready() {
            return Response::error(
                format!("timeline window unavailable: schema migration failed: {e}"),
                500,
            );
        }
        match path.as_str() {
            LIVE_CONNECT => self.accept_socket(&req).await,
            LIVE_NOTIFY | LIVE_CONVERSATION => self.tell_live(&path, req).await,
            LIVE_TIMELINE => self.tell_timeline(req).await,
            LIVE_CLOSE => {
                let close: CloseLive = req.json().await?;
                let closed = sockets::close_ended(&self.state, close.now_secs, close.revocation);
                self.keep_idle_check(false).await;
                Response::from_json(&serde_json::json!({ "closed": closed }))
            }
            TEST_ALARM => Response::from_json(&self.alarm_work().await?),
            TEST_V4 => self.back_to_v4(),
            TEST_FAIL_READS => {
                let fault: FailReads = req.json().await?;
                self.failing_reads.set(fault.times);
                Response::from_json(&serde_json::json!({ "failing_reads": fault.times }))
            }
            _ => match req.json::<WindowOp>().await {
                Ok(op) if self.read_fails(&op) => Response::error("injected fault: window unavailable", 503),
                Ok(op) => {
                    let moved_back = matches!(op, WindowOp::AgeActivity { .. });
                    let (response, news) = self.apply(op);
                    self.stream(news).await;
                    self.keep_idle_check(moved_back).await;
                    response
                }
                Err(e) => Response::error(format!("bad window op: {e}"), 400),
            },
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.alarm.fired();
        match self.alarm_work().await {
            Ok(report) => Response::from_json(&report),
            Err(e) => {
                // The runtime retries a failed alarm; what is set is not known any more.
                self.alarm.forget();
                Err(e)
            }
        }
    }

    // A `/v1` client has nothing to say beyond `ping` (answered by the runtime without waking
    // us); a Mastodon client subscribes to streams.
    async fn websocket_message(&self, ws: WebSocket, message: WebSocketIncomingMessage) -> Result<()> {
        if let WebSocketIncomingMessage::String(text) = message {
            sockets::on_message(&ws, &self.env, &text).await;
        }
        Ok(())
    }

    async fn websocket_close(&self, ws: WebSocket, code: usize, _reason: String, _clean: bool) -> Result<()> {
        // Completes the closing handshake; the lease and the edge marks lapse on their own once no
        // socket renews them (ending them here would cost a write per session, not per lease).
        let code = u16::try_from(code).ok().filter(|c| *c == 1000 || (3000..5000).contains(c));
        let _ = ws.close(code.or(Some(1000)), Some("closed"));
        Ok(())
    }

    async fn websocket_error(&self, _ws: WebSocket, _error: worker::Error) -> Result<()> {
        Ok(())
    }
}

/// What one run of the alarm's work did about idleness (also the `window_alarm` test hook's
/// answer).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdleReport {
    /// The object's storage was deleted.
    pub evicted: bool,
    /// When the idle check runs next (none after an eviction: nothing is left to check).
    pub wake_at: Option<i64>,
    /// The object's SQLite database size before and after (bytes).
    pub database_bytes_before: usize,
    pub database_bytes_after: usize,
}

/// The `window` test hook's answer: the whole window, and the database size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WindowDump {
    pub window: WindowReply,
    pub database_bytes: usize,
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

    /// Applies one window op; a delivery with news for an open `/v1` socket is announced on it.
    /// Returns what a Mastodon socket is to be told ([`Self::stream`], after the op).
    fn apply(&self, op: WindowOp) -> (Result<Response>, StreamNews) {
        let mut store = SqlWindow::with_memory(&self.sql, &self.activity);
        let live = !self.state.get_websockets().is_empty();
        let delivered = match &op {
            WindowOp::Deliver { entries, .. } | WindowOp::Backfill { entries, .. } if live => {
                window::newest_key(&store).ok().map(|top| (entries.clone(), top))
            }
            _ => None,
        };
        let removed = match &op {
            WindowOp::RemovePost { post_id, .. } if live => Some(*post_id),
            _ => None,
        };
        let mut reply = match window::apply(&mut store, op) {
            Ok(reply) => reply,
            Err(e) => {
                let failure =
                    ApiError::Storage { kind: StorageKind::Other, detail: format!("window op failed: {e}") };
                return (super::failure(&failure), StreamNews::default());
            }
        };
        (reply.statements, reply.rows_read, reply.rows_written) = store.profile();
        let mut news = StreamNews::default();
        if reply.changed > 0 {
            if let Some((entries, top)) = delivered {
                if let Some(announcement) = live::announcement(&entries, top) {
                    sockets::announce(&self.state, &self.env, announcement);
                }
                news.posts = live::news_posts(&entries, top);
            }
            news.removed = removed;
        }
        (Response::from_json(&reply), news)
    }

    /// Tells the Mastodon sockets what the op changed (best effort: the op is done). Awaited
    /// before the op's answer only while a socket is open, so a reader who is not streaming
    /// costs the fan-out nothing.
    async fn stream(&self, news: StreamNews) {
        let Some(reader) = self.reader() else { return };
        sockets::stream_updates(&self.state, &self.env, reader, &news.posts).await;
        if let Some(post) = news.removed {
            sockets::stream_delete(&self.state, post).await;
        }
    }

    /// The reader this object belongs to, from an open socket's session (`None` without one).
    fn reader(&self) -> Option<UserId> {
        self.state.get_websockets().iter().find_map(sockets::session_user)
    }

    async fn accept_socket(&self, req: &Request) -> Result<Response> {
        let header = |name: &str| req.headers().get(name).ok().flatten();
        let Ok(session) = serde_json::from_str::<Session>(&header(SESSION_HEADER).unwrap_or_default()) else {
            return Response::error("bad live session", 400);
        };
        let mastodon = match header(MASTODON_HEADER).map(|h| serde_json::from_str::<MastodonStream>(&h)) {
            Some(Ok(stream)) => Some((stream, header(PROTOCOL_HEADER))),
            Some(Err(_)) => return Response::error("bad streaming state", 400),
            None => None,
        };
        sockets::connect(&self.state, &self.env, &self.sql, &self.alarm, session, mastodon).await
    }
}

impl TimelineWindow {
    /// Makes the schema again after the idle check deleted it; the migration error that makes
    /// the object unusable, if there is one.
    fn schema_ready(&self) -> std::result::Result<(), String> {
        let mut schema = self.schema.borrow_mut();
        if matches!(*schema, Schema::Missing) {
            // A failure here is left `Missing`, so the next request tries again.
            window_sql::migrate(&self.sql).map_err(|e| e.to_string())?;
            *schema = Schema::Ready;
        }
        match &*schema {
            Schema::Failed(e) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// What the object holds, for the idle rule.
    fn holdings(&self, live_sockets: bool) -> Result<Holdings> {
        let store = SqlWindow::new(&self.sql);
        // A warm object knows the last read; a cold one knows only the stored record, and no
        // read that went unrecorded can be a day later than it.
        let last_read_at = match self.activity.get() {
            Some(kept) => kept.last_read_at,
            None => store.stored_activity()?.and_then(|a| a.read_by()),
        };
        Ok(Holdings {
            last_read_at,
            newest_entry_at: window::newest_key(&store)?.map(|key| key.primary),
            live_sockets,
            tickets_until: window_sql::tickets_until(&self.sql)?.map(|secs| secs.saturating_mul(1000)),
        })
    }

    /// After a request: makes sure the idle check will run. Once an alarm is known to be set
    /// this reads and writes nothing (a read or a delivery only moves idleness further out),
    /// unless the op moved the reader's activity into the past (the aging test hook), which may
    /// make the check due at once. A failure is logged, not answered: the op is done.
    async fn keep_idle_check(&self, moved_back: bool) {
        if self.alarm.is_set() && !moved_back {
            return;
        }
        let live = !self.state.get_websockets().is_empty();
        let armed = match self.holdings(live) {
            Ok(holdings) => {
                let wake_at = idle::idleness(&holdings, now_ms(), self.idle_ms).wake_at;
                self.alarm.wake_by(&self.state, wake_at).await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = armed {
            worker::console_error!("timeline window: could not schedule the idle check: {e}");
        }
    }

    /// The alarm's work: the live sockets' review, then the idle check, which deletes the
    /// object's storage if the reader is idle (never while a socket stays open) or asks for
    /// the next check.
    async fn alarm_work(&self) -> Result<IdleReport> {
        self.schema_ready().map_err(Error::RustError)?;
        let live = sockets::review(&self.state, &self.env, &self.alarm).await?;
        let verdict = idle::idleness(&self.holdings(live)?, now_ms(), self.idle_ms);
        if verdict.idle {
            return self.evict().await;
        }
        self.alarm.wake_by(&self.state, verdict.wake_at).await?;
        let bytes = self.sql.database_size();
        Ok(IdleReport {
            evicted: false,
            wake_at: Some(verdict.wake_at),
            database_bytes_before: bytes,
            database_bytes_after: bytes,
        })
    }

    /// Deletes all of the object's storage: entries, floor, tombstones, author marks, read
    /// activity, live tickets and the alarm (`deleteAll` with a compatibility date of
    /// 2026-02-24 or later). The schema is not made again here but by the next request: alone
    /// it is ten SQLite pages (40 KB), as much as ~350 entries (about 115 bytes each), so an
    /// evicted object keeps one page (4 KB) until the reader or a delivery comes back.
    async fn evict(&self) -> Result<IdleReport> {
        let database_bytes_before = self.sql.database_size();
        // The raw call: SQLite storage deletes the database before the promise (the commit)
        // resolves, so the schema is marked missing in the same turn and no request finds
        // the tables gone.
        let commit = self.state.storage().as_raw().delete_all().map_err(Error::from)?;
        *self.schema.borrow_mut() = Schema::Missing;
        self.alarm.deleted();
        self.activity.set(None);
        let database_bytes_after = self.sql.database_size();
        JsFuture::from(commit).await?;
        worker::console_log!(
            "timeline window idle: storage deleted ({database_bytes_before} -> {database_bytes_after} bytes)"
        );
        Ok(IdleReport { evicted: true, wake_at: None, database_bytes_before, database_bytes_after })
    }

    /// Test hook: puts the window's storage back into schema version 4's layout and forgets
    /// that the schema is ready, so the next request migrates it as it would an object last
    /// written by that code (`window_sql::back_to_v4`).
    /// A notification or a conversation for the reader's Mastodon sockets (`/v1` sockets hear
    /// only of notifications).
    async fn tell_timeline(&self, mut req: Request) -> Result<Response> {
        // A list (a stream relay's flush, in order), or one news as callers sent before.
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Told {
            Many(Vec<TimelineNews>),
            One(TimelineNews),
        }
        let news = match serde_json::from_str::<Told>(&req.text().await?) {
            Ok(Told::Many(news)) => news,
            Ok(Told::One(one)) => vec![one],
            Err(e) => return Response::error(format!("bad timeline news: {e}"), 400),
        };
        let sent = match self.reader() {
            Some(reader) => sockets::timeline_news(&self.state, &self.env, reader, &news).await,
            None => 0,
        };
        Response::from_json(&serde_json::json!({ "sent": sent }))
    }

    async fn tell_live(&self, path: &str, mut req: Request) -> Result<Response> {
        let notice: Notice = req.json().await?;
        let (state, env) = (&self.state, &self.env);
        let sent = if path == LIVE_NOTIFY {
            sockets::notify(state, env, notice.recipient, notice.id).await
        } else {
            sockets::conversation(state, env, notice.recipient, notice.id).await
        };
        Response::from_json(&serde_json::json!({ "sent": sent }))
    }

    fn back_to_v4(&self) -> Result<Response> {
        let entries = window_sql::back_to_v4(&self.sql)?;
        *self.schema.borrow_mut() = Schema::Missing;
        self.activity.set(None);
        Response::from_json(&serde_json::json!({ "entries": entries }))
    }

    /// Test hook: every stored entry (also before init: the deliveries kept for the build),
    /// the floor and the database size, read without changing anything (a deleted schema is
    /// not made again, and the idle check is not scheduled).
    fn dump(&self) -> Result<Response> {
        let database_bytes = self.sql.database_size();
        let window = match &*self.schema.borrow() {
            Schema::Ready => {
                let store = SqlWindow::new(&self.sql);
                let floor = store.floor()?;
                let entries = window::older(&store, SortKey::TOP, SortKey::BOTTOM, usize::MAX)?;
                WindowReply { initialized: floor.is_some(), floor, entries, ..WindowReply::default() }
            }
            Schema::Missing => WindowReply::default(),
            Schema::Failed(e) => return Response::error(format!("timeline window unavailable: {e}"), 500),
        };
        Response::from_json(&WindowDump { window, database_bytes })
    }
}

const LIVE_CONNECT: &str = "/live/connect";
const LIVE_CLOSE: &str = "/live/close";
const LIVE_NOTIFY: &str = "/live/notify";
/// A conversation a direct post started (`Notice::id`: the post).
const LIVE_CONVERSATION: &str = "/live/conversation";
/// A post that joined, changed in or left a public or tag timeline the reader streams.
const LIVE_TIMELINE: &str = "/live/timeline";
/// Test hooks (reached only through `/v1/admin/test/*`, which answers 404 without TEST_HOOKS).
const TEST_DUMP: &str = "/test/dump";
const TEST_ALARM: &str = "/test/alarm";
const TEST_FAIL_READS: &str = "/test/fail_reads";
const TEST_V4: &str = "/test/v4";
/// The `floor_object` hook's call: answered at once, touching nothing.
const TEST_NOOP: &str = "/test/noop";
/// The verified [`Session`] travels from the Worker to the object in this header (the body of
/// an upgrade request is not ours to use).
const SESSION_HEADER: &str = "x-edgefeed-live-session";
/// A Mastodon streaming socket's initial [`MastodonStream`], and the subprotocol to echo.
const MASTODON_HEADER: &str = "x-edgefeed-mastodon-stream";
const PROTOCOL_HEADER: &str = "x-edgefeed-websocket-protocol";

/// What a window op changed that Mastodon sockets hear about.
#[derive(Debug, Default)]
struct StreamNews {
    /// Delivered posts above the old top.
    posts: Vec<PostId>,
    /// A post removed from the window.
    removed: Option<PostId>,
}

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

    /// Hands a verified Mastodon streaming upgrade to the reader's object (`101`, echoing the
    /// client's subprotocol when it offered one).
    pub async fn connect_mastodon(
        &self,
        session: &Session,
        stream: &MastodonStream,
        protocol: Option<&str>,
    ) -> ApiResult<Response> {
        let headers = Headers::new();
        headers.set("upgrade", "websocket")?;
        headers.set(SESSION_HEADER, &serde_json::to_string(session).unwrap_or_default())?;
        headers.set(MASTODON_HEADER, &serde_json::to_string(stream).unwrap_or_default())?;
        if let Some(protocol) = protocol {
            headers.set(PROTOCOL_HEADER, protocol)?;
        }
        let mut init = RequestInit::new();
        init.with_method(Method::Get).with_headers(headers);
        self.send(session.user, LIVE_CONNECT, &init).await
    }

    /// Tells the recipient's open sockets about a new notification (a no-op without one).
    pub async fn notify(&self, notice: Notice) -> ApiResult<()> {
        self.tell(notice, LIVE_NOTIFY).await
    }

    /// Tells the participant's open `direct` streams about a conversation just recorded.
    pub async fn converse(&self, notice: Notice) -> ApiResult<()> {
        self.tell(notice, LIVE_CONVERSATION).await
    }

    /// Tells the reader's sockets listening to a public or tag stream about changes there (a
    /// relay's flush: in order, one call), or about an edit in their home.
    pub async fn timeline_news(&self, reader: UserId, news: &[TimelineNews]) -> ApiResult<()> {
        let mut init = RequestInit::new();
        let body = serde_json::to_string(news).unwrap_or_default();
        init.with_method(Method::Post).with_body(Some(body.into()));
        match self.send(reader, LIVE_TIMELINE, &init).await?.status_code() {
            200 => Ok(()),
            status => Err(ApiError::Internal(format!("a timeline notice answered {status}"))),
        }
    }

    async fn tell(&self, notice: Notice, path: &str) -> ApiResult<()> {
        let mut init = RequestInit::new();
        let body = serde_json::to_string(&notice).unwrap_or_default();
        init.with_method(Method::Post).with_body(Some(body.into()));
        match self.send(notice.recipient, path, &init).await?.status_code() {
            200 => Ok(()),
            status => Err(ApiError::Internal(format!("a live notice ({path}) answered {status}"))),
        }
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
        match self.send(reader, TEST_FAIL_READS, &init).await?.status_code() {
            200 => Ok(()),
            status => Err(ApiError::Internal(format!("arming the window fault answered {status}"))),
        }
    }

    /// Test hook: the reader's whole window and its object's database size.
    pub async fn dump(&self, reader: UserId) -> ApiResult<WindowDump> {
        self.post_json(reader, TEST_DUMP).await
    }

    /// Test hook: puts the reader's window back into its storage's version 4 layout (migrated
    /// again by its next request); answers `{"entries": n}`.
    pub async fn back_to_v4(&self, reader: UserId) -> ApiResult<serde_json::Value> {
        self.post_json(reader, TEST_V4).await
    }

    /// Test hook: one call to the reader's object that does nothing (the object-call floor).
    pub async fn noop(&self, reader: UserId) -> ApiResult<()> {
        let mut init = RequestInit::new();
        init.with_method(Method::Post);
        match self.send(reader, TEST_NOOP, &init).await?.status_code() {
            200 => Ok(()),
            status => Err(ApiError::Internal(format!("a bare window call answered {status}"))),
        }
    }

    /// Test hook: runs the reader's object's alarm work now (what its alarm does when it fires).
    pub async fn run_alarm(&self, reader: UserId) -> ApiResult<IdleReport> {
        self.post_json(reader, TEST_ALARM).await
    }

    async fn post_json<R: DeserializeOwned>(&self, reader: UserId, path: &str) -> ApiResult<R> {
        let mut init = RequestInit::new();
        init.with_method(Method::Post);
        let mut response = self.send(reader, path, &init).await?;
        match response.status_code() {
            200 => Ok(response.json().await?),
            status => {
                Err(ApiError::Internal(format!("{path} answered {status}: {}", response.text().await?)))
            }
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
