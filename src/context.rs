//! The service context: what every service, background job and Durable Object caller needs,
//! and nothing HTTP-specific. The HTTP layer builds one per request and adds auth on top; the
//! queue consumer and the cron pass build their own.

use std::rc::Rc;

use worker::Env;

use crate::config::Config;
use crate::error::ApiResult;
use crate::store::{Db, Io};

pub struct Ctx {
    pub env: Env,
    pub db: Db,
    pub config: Config,
    /// Time in ms, read once so one request or job sees one "now".
    pub now: i64,
    /// The storage round trips made so far (D1, Durable Objects, queue), for `Server-Timing`.
    pub io: Rc<Io>,
}

impl Ctx {
    pub fn new(env: Env) -> ApiResult<Self> {
        Self::with_io(env, Rc::new(Io::default()))
    }

    pub fn with_io(env: Env, io: Rc<Io>) -> ApiResult<Self> {
        Ok(Self {
            db: Db::new(env.d1("DB")?, io.clone()),
            config: Config::from_env(&env),
            env,
            now: now_ms(),
            io,
        })
    }

    /// The clock read afresh (long jobs record progress times as they go).
    pub fn clock(&self) -> i64 {
        now_ms()
    }
}

fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}
