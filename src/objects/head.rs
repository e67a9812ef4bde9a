//! `TimelineHead` (one per timeline key and replica index): a thin shell over
//! `domain::timeline_head::Head`, in memory only (the index in D1 is the truth; an evicted head
//! loads again on its next read, so it writes no storage rows).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use worker::{durable_object, DurableObject, Env, ObjectNamespace, Request, Response, Result, State};

use crate::config::Config;
use crate::domain::timeline_head::{head_name, Head, HeadAnswer, HeadKey, HeadOp, HEAD_CAPACITY};
use crate::error::ApiResult;
use crate::store::shards::Shards;
use crate::store::timelines::{self as index, Range};
use crate::store::{Io, ObjectD1};

#[durable_object]
pub struct TimelineHead {
    env: Env,
    head: RefCell<Head>,
    /// A load is running: a request that finds the head stale meanwhile answers from it rather
    /// than start another load (one load per TTL however many readers arrive at once).
    loading: Cell<bool>,
}

fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

impl TimelineHead {
    async fn load(&self, config: &Config, io: &Rc<Io>, key: &HeadKey) -> ApiResult<()> {
        let shards = Shards::from_env(&self.env, &config.shard_map, io)?;
        let started = now_ms();
        let range = Range {
            below: i64::MAX,
            above: 0,
            oldest_first: false,
            without: 0,
            with: 0,
            limit: HEAD_CAPACITY,
        };
        let (rows, _) = index::head_page(&shards, key, range).await?;
        self.head.borrow_mut().load(rows, started);
        Ok(())
    }

    async fn read(&self, io: &Rc<Io>, key: &HeadKey, range: &Range) -> ApiResult<HeadAnswer> {
        let config = Config::from_env(&self.env);
        let (fresh, loaded) = {
            let head = self.head.borrow();
            (head.is_fresh(now_ms(), config.heads.ttl_ms), head.is_loaded())
        };
        // With a TTL, a stale head answers while another request's load runs (one load per
        // TTL however many readers arrive at once); without one, every read loads.
        let serve_stale = loaded && self.loading.get() && config.heads.ttl_ms > 0;
        if !fresh && !serve_stale {
            self.loading.set(true);
            let loaded = self.load(&config, io, key).await;
            self.loading.set(false);
            loaded?;
        }
        Ok(self.head.borrow().answer(range))
    }
}

impl DurableObject for TimelineHead {
    fn new(_state: State, env: Env) -> Self {
        Self { env, head: RefCell::new(Head::new(HEAD_CAPACITY)), loading: Cell::new(false) }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        // Parsed from the text with serde_json: the JS parser behind `Request::json` reads a
        // bound of `i64::MAX` (and post ids past 2^53) as a float.
        let text = req.text().await?;
        let op: HeadOp = match serde_json::from_str(&text) {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad head op: {e}"), 400),
        };
        let io = Rc::new(Io::default());
        let answer = match op {
            HeadOp::Read { key, range } => self.read(&io, &key, &range).await,
            HeadOp::Tell { entry, .. } => {
                self.head.borrow_mut().tell(entry, now_ms());
                Ok(HeadAnswer::Rows(Vec::new()))
            }
        };
        match answer {
            Ok(answer) => {
                let response = Response::from_json(&answer)?;
                let _ = response.headers().set(super::OBJECT_D1_HEADER, &ObjectD1::only(&io).to_header());
                Ok(response)
            }
            Err(e) => super::failure(&e),
        }
    }
}

/// Worker-side handle to the heads.
pub struct Heads {
    namespace: ObjectNamespace,
    io: Rc<Io>,
}

impl Heads {
    pub fn new(env: &Env, io: Rc<Io>) -> ApiResult<Self> {
        Ok(Self { namespace: env.durable_object("TIMELINE_HEAD")?, io })
    }

    pub async fn call(&self, replica: u32, op: &HeadOp) -> ApiResult<HeadAnswer> {
        let key = match op {
            HeadOp::Read { key, .. } | HeadOp::Tell { key, .. } => key,
        };
        super::call(&self.namespace, &self.io, &head_name(key, replica), op).await
    }
}
