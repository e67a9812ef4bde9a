//! Per-request context: bindings, config, secrets, the clock, and authentication.

use worker::{D1Database, Env};

use super::input::Input;
use crate::config::Config;
use crate::domain::cursor::CursorCodec;
use crate::domain::token;
use crate::error::{ApiError, ApiResult};

pub struct App {
    pub env: Env,
    pub db: D1Database,
    pub config: Config,
    pub cursors: CursorCodec,
    auth_secret: Vec<u8>,
    admin_token: Option<String>,
    /// Request time in ms, read once so one request sees one "now".
    pub now: i64,
}

fn secret(env: &Env, name: &str) -> Option<String> {
    env.secret(name).ok().map(|s| s.to_string()).filter(|s| !s.is_empty())
}

pub fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

impl App {
    pub fn new(env: Env) -> ApiResult<Self> {
        let auth_secret = secret(&env, "AUTH_SECRET")
            .ok_or_else(|| ApiError::Internal("AUTH_SECRET is not configured".into()))?
            .into_bytes();
        Ok(Self {
            db: env.d1("DB")?,
            config: Config::from_env(&env),
            cursors: CursorCodec::new(&auth_secret),
            admin_token: secret(&env, "ADMIN_TOKEN"),
            auth_secret,
            env,
            now: now_ms(),
        })
    }

    /// Sends fan-out messages for outbox events this request committed on behalf of `actor`.
    pub async fn announce(&self, actor: i64, outbox_ids: &[i64]) {
        crate::fanout::announce(&self.env, &self.config, &self.db, actor, outbox_ids).await;
    }

    /// Applies single-reader outbox events now (falling back to the queue).
    pub async fn apply_inline(&self, actor: i64, outbox_ids: &[i64]) {
        crate::fanout::apply_inline(&self.env, &self.config, &self.db, actor, outbox_ids).await;
    }

    pub fn issue_token(&self, user_id: i64) -> String {
        let now_secs = self.now / 1000;
        token::issue(&self.auth_secret, user_id, now_secs, now_secs + self.config.token_ttl_secs)
    }

    fn bearer(input: &Input) -> ApiResult<&str> {
        let header =
            input.authorization.as_deref().ok_or(ApiError::Unauthorized("a bearer token is required"))?;
        let (scheme, value) =
            header.trim().split_once(' ').ok_or(ApiError::Unauthorized("a bearer token is required"))?;
        if !scheme.eq_ignore_ascii_case("bearer") || value.trim().is_empty() {
            return Err(ApiError::Unauthorized("a bearer token is required"));
        }
        Ok(value.trim())
    }

    /// The authenticated user id, from a valid, unexpired HS256 token.
    pub fn viewer(&self, input: &Input) -> ApiResult<i64> {
        Ok(token::verify(&self.auth_secret, Self::bearer(input)?, self.now / 1000)?)
    }

    /// Admin routes: no token is 401, a token that is not the admin token is 403.
    pub fn require_admin(&self, input: &Input) -> ApiResult<()> {
        let given = Self::bearer(input)?;
        let expected = self
            .admin_token
            .as_deref()
            .ok_or(ApiError::Forbidden { code: "admin_disabled", detail: "ADMIN_TOKEN is not configured" })?;
        if token::constant_time_eq(given.as_bytes(), expected.as_bytes()) {
            Ok(())
        } else {
            Err(ApiError::Forbidden { code: "not_admin", detail: "this route needs the admin token" })
        }
    }
}
