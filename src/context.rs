//! The service context: what every service, background job and Durable Object caller needs,
//! and nothing HTTP-specific. The HTTP layer builds one per request and adds auth on top; the
//! queue consumer and the cron pass build their own.

use worker::{D1Database, Env};

use crate::config::Config;
use crate::error::ApiResult;

pub struct Ctx {
    pub env: Env,
    pub db: D1Database,
    pub config: Config,
    /// Time in ms, read once so one request or job sees one "now".
    pub now: i64,
}

impl Ctx {
    pub fn new(env: Env) -> ApiResult<Self> {
        Ok(Self { db: env.d1("DB")?, config: Config::from_env(&env), env, now: now_ms() })
    }

    /// The clock read afresh (long jobs record progress times as they go).
    pub fn clock(&self) -> i64 {
        now_ms()
    }
}

fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}
