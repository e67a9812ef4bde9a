//! `StreamRelay` (one per timeline index key: a public stripe or a tag): a thin shell over
//! `domain::stream_relay`. It takes each post's news for its key, and on its alarm (at most
//! every `STREAM_RELAY_MS`) reads the key's listeners once and sends each one's window object
//! one call with all the news since the last flush, in order. In memory only: the news is best
//! effort as every stream frame (an evicted relay loses what it held; readers re-read the
//! timeline), so a post costs the relay no storage write, only the alarm it sets per flush.

use std::cell::{Cell, RefCell};

use futures_util::future::join_all;
use worker::{durable_object, DurableObject, Env, ObjectNamespace, Request, Response, Result, State};

use crate::context::Ctx;
use crate::domain::live::TimelineNews;
use crate::domain::stream_relay::{coalesce, relay_name, RelayBuffer, RelayOp, RelayStats, RELAY_BUFFER_CAP};
use crate::domain::tags::IndexKey;
use crate::error::ApiResult;
use crate::objects::alarm::now_ms;
use crate::objects::timeline::Windows;
use crate::store::timelines as index;

/// An alarm set this long past its time and still not run is taken as lost (set again).
const STALE_ALARM_MS: i64 = 30_000;

#[durable_object]
pub struct StreamRelay {
    state: State,
    env: Env,
    /// The key this relay serves, learnt from its first tell (its name says it too).
    key: RefCell<Option<IndexKey>>,
    buffer: RefCell<RelayBuffer>,
    stats: Cell<RelayStats>,
    /// When the alarm is set for (`None`: not set), kept in memory so a tell while one is set
    /// costs no storage access.
    armed_for: Cell<Option<i64>>,
    last_flush: Cell<i64>,
}

impl StreamRelay {
    fn interval_ms(&self) -> i64 {
        crate::config::Config::from_env(&self.env).heads.stream_relay_ms
    }

    fn count(&self, change: impl FnOnce(&mut RelayStats)) {
        let mut stats = self.stats.get();
        change(&mut stats);
        self.stats.set(stats);
    }

    fn tell(&self, key: IndexKey, news: TimelineNews) {
        self.key.borrow_mut().get_or_insert(key);
        let dropped = self.buffer.borrow_mut().push(news);
        self.count(|s| {
            s.told += 1;
            s.dropped += dropped as u64;
        });
        if dropped > 0 {
            worker::console_warn!("stream relay over {RELAY_BUFFER_CAP} news: {dropped} oldest dropped");
        }
    }

    /// Sets the alarm for the next flush unless one is set: no sooner than one interval after
    /// the last flush, so a key flushes at most once per interval however fast news comes.
    async fn arm(&self, earliest: i64) -> Result<()> {
        let now = now_ms();
        if self.armed_for.get().is_some_and(|at| at > now - STALE_ALARM_MS) {
            return Ok(());
        }
        let at = earliest.max(self.last_flush.get() + self.interval_ms()).max(now);
        self.armed_for.set(Some(at));
        let set = self.state.storage().set_alarm(at - now).await;
        if set.is_err() {
            self.armed_for.set(None);
        }
        set
    }

    /// One flush: the key's listeners read once, each listener's window sent the news in one
    /// call. A failed read keeps the news (in front of what came meanwhile) and tries again
    /// after an interval.
    async fn flush(&self) -> ApiResult<()> {
        let Some(key) = self.key.borrow().clone() else { return Ok(()) };
        let news = self.buffer.borrow_mut().take();
        if news.is_empty() {
            return Ok(());
        }
        let ctx = Ctx::new(self.env.clone())?;
        let listeners = match index::listeners(ctx.shards.index(&key), &key, now_ms()).await {
            Ok(listeners) => listeners,
            Err(e) => {
                let dropped = self.buffer.borrow_mut().restore(news);
                self.count(|s| {
                    s.failed_flushes += 1;
                    s.dropped += dropped as u64;
                });
                worker::console_error!("stream relay {}: listeners not read ({e}); retrying", key.as_str());
                return Ok(());
            }
        };
        let total = news.len();
        let sent = coalesce(news);
        self.count(|s| {
            s.flushes += 1;
            s.coalesced += (total - sent.len()) as u64;
            s.sent += sent.len() as u64;
        });
        if listeners.is_empty() || sent.is_empty() {
            return Ok(());
        }
        self.count(|s| s.window_calls += listeners.len() as u64);
        let windows = Windows::new(&ctx)?;
        let calls = listeners.iter().map(|&reader| windows.timeline_news(reader, &sent));
        let failed = join_all(calls).await.into_iter().filter(Result::is_err).count();
        if failed > 0 {
            worker::console_error!(
                "stream relay {}: {failed} of {} windows not told",
                key.as_str(),
                listeners.len()
            );
        }
        Ok(())
    }
}

impl DurableObject for StreamRelay {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            key: RefCell::new(None),
            buffer: RefCell::new(RelayBuffer::new(RELAY_BUFFER_CAP)),
            stats: Cell::new(RelayStats::default()),
            armed_for: Cell::new(None),
            last_flush: Cell::new(0),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        // Parsed from the text with serde_json: post ids past 2^53 must stay exact.
        let text = req.text().await?;
        let op: RelayOp = match serde_json::from_str(&text) {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad relay op: {e}"), 400),
        };
        match op {
            RelayOp::Tell { key, news } => {
                self.tell(key, news);
                self.arm(now_ms()).await?;
                Response::from_json(&self.stats.get())
            }
            RelayOp::Stats => Response::from_json(&self.stats.get()),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.armed_for.set(None);
        self.last_flush.set(now_ms());
        if let Err(e) = self.flush().await {
            worker::console_error!("stream relay flush failed: {e}");
        }
        // News that came during the flush, or a flush's news kept after a failed read: the
        // next flush, an interval on (a failing database is tried once per interval).
        if !self.buffer.borrow().is_empty() {
            self.arm(now_ms()).await?;
        }
        Response::ok("flushed")
    }
}

/// Worker-side handle to the relays.
pub struct Relays {
    namespace: ObjectNamespace,
    io: std::rc::Rc<crate::store::Io>,
}

impl Relays {
    pub fn new(ctx: &Ctx) -> ApiResult<Self> {
        Ok(Self { namespace: ctx.env.durable_object("STREAM_RELAY")?, io: ctx.io.clone() })
    }

    /// Hands the key's relay one post's news.
    pub async fn tell(&self, key: &IndexKey, news: TimelineNews) -> ApiResult<()> {
        let op = RelayOp::Tell { key: key.clone(), news };
        let _: RelayStats = super::call(&self.namespace, &self.io, &relay_name(key), &op).await?;
        Ok(())
    }

    /// The key's relay's figures.
    pub async fn stats(&self, key: &IndexKey) -> ApiResult<RelayStats> {
        super::call(&self.namespace, &self.io, &relay_name(key), &RelayOp::Stats).await
    }
}
