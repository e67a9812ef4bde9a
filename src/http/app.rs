//! Per-request state: the service context plus what only HTTP needs (secrets, cursor signing,
//! authentication). It derefs to [`Ctx`], so handlers pass `&app` wherever a service wants `&Ctx`.

use std::ops::Deref;
use std::rc::Rc;

use worker::{Context, Env};

use super::input::Input;
use crate::context::Ctx;
use crate::domain::cursor::CursorCodec;
use crate::domain::ids::UserId;
use crate::domain::live::TicketCodec;
use crate::domain::sign::constant_time_eq;
use crate::domain::token;
use crate::error::{ApiError, ApiResult};
use crate::store::users;
use crate::store::Io;

pub struct App {
    pub ctx: Ctx,
    pub cursors: CursorCodec,
    auth_secret: Vec<u8>,
    admin_token: Option<String>,
}

impl Deref for App {
    type Target = Ctx;

    fn deref(&self) -> &Ctx {
        &self.ctx
    }
}

fn secret(env: &Env, name: &str) -> Option<String> {
    env.secret(name).ok().map(|s| s.to_string()).filter(|s| !s.is_empty())
}

impl App {
    pub fn new(env: Env, io: Rc<Io>, invocation: Rc<Context>) -> ApiResult<Self> {
        let auth_secret = secret(&env, "AUTH_SECRET")
            .ok_or_else(|| ApiError::Internal("AUTH_SECRET is not configured".into()))?
            .into_bytes();
        Ok(Self {
            cursors: CursorCodec::new(&auth_secret),
            admin_token: secret(&env, "ADMIN_TOKEN"),
            auth_secret,
            ctx: Ctx::with_io(env, io)?.with_background(invocation),
        })
    }

    /// Live-feed tickets, signed with their own key derived from the service secret.
    pub fn tickets(&self) -> TicketCodec {
        TicketCodec::new(&self.auth_secret)
    }

    pub fn issue_token(&self, user: UserId) -> String {
        let now_secs = self.now / 1000;
        token::issue(&self.auth_secret, user, now_secs, now_secs + self.config.token_ttl_secs)
    }

    /// An OAuth access token (Mastodon API): limited to its scopes, revocable by its id.
    pub fn issue_scoped_token(&self, user: UserId, grant: token::Grant) -> String {
        let now_secs = self.now / 1000;
        token::issue_scoped(&self.auth_secret, user, now_secs, now_secs + self.config.token_ttl_secs, grant)
    }

    /// An app's own token (the client-credentials grant): no user.
    pub fn issue_app_token(&self, client: i64, scopes: crate::domain::oauth::Scopes) -> String {
        let now_secs = self.now / 1000;
        token::issue_app(&self.auth_secret, client, scopes, now_secs, now_secs + self.config.token_ttl_secs)
    }

    /// The app the request's bearer token speaks for (its own token, or a user's issued to it):
    /// the routes an app calls for itself (`POST /api/v1/accounts`, `apps/verify_credentials`).
    pub fn app_token(&self, input: &Input) -> ApiResult<token::AppToken> {
        let policy = token::Policy {
            now_secs: self.now.div_euclid(1000),
            max_ttl_secs: self.config.token_max_ttl_secs,
        };
        token::verify_app(&self.auth_secret, Self::bearer(input)?, policy)
            .map_err(|_| ApiError::InvalidToken("the token is not an app's"))
    }

    /// Verifies a token given other than as the request's bearer (`POST /oauth/revoke`).
    pub fn verify_token(&self, token: &str, policy: token::Policy) -> ApiResult<token::Verified> {
        Ok(token::verify(&self.auth_secret, token, policy)?)
    }

    pub fn bearer(input: &Input) -> ApiResult<&str> {
        let header =
            input.authorization.as_deref().ok_or(ApiError::Unauthorized("a bearer token is required"))?;
        let (scheme, value) =
            header.trim().split_once(' ').ok_or(ApiError::Unauthorized("a bearer token is required"))?;
        if !scheme.eq_ignore_ascii_case("bearer") || value.trim().is_empty() {
            return Err(ApiError::Unauthorized("a bearer token is required"));
        }
        Ok(value.trim())
    }

    /// The authenticated user: a valid HS256 token (signature, times, lifetime cap) whose user
    /// exists and has not revoked it. The revocation check is one primary-key read of the user
    /// per authenticated request (no cache), so a logout takes effect on the very next request.
    pub async fn viewer(&self, input: &Input) -> ApiResult<UserId> {
        let token = self.verified_token(input)?;
        self.confirm_not_revoked(&token).await?;
        Ok(token.user)
    }

    /// The token's signature, times and lifetime cap, checked without I/O.
    pub fn verified_token(&self, input: &Input) -> ApiResult<token::Verified> {
        let policy = token::Policy {
            now_secs: self.now.div_euclid(1000),
            max_ttl_secs: self.config.token_max_ttl_secs,
        };
        Ok(token::verify(&self.auth_secret, Self::bearer(input)?, policy)?)
    }

    /// The storage half of [`Self::viewer`]: the user exists, is not suspended and has not
    /// revoked the token.
    pub async fn confirm_not_revoked(&self, token: &token::Verified) -> ApiResult<()> {
        let state = users::auth_state(self.user_db(token.user), token.user, token.token_id)
            .await?
            .ok_or(ApiError::InvalidToken("the token's user does not exist"))?;
        if state.is_suspended() {
            return Err(ApiError::Suspended);
        }
        if token::revoked(token.issued_at, state.tokens_valid_after) {
            return Err(ApiError::InvalidToken("the token was revoked by a logout"));
        }
        if state.token_revoked() {
            return Err(ApiError::InvalidToken("the token was revoked"));
        }
        Ok(())
    }

    /// Admin routes: no token is 401, a token that is not the admin token is 403.
    pub fn require_admin(&self, input: &Input) -> ApiResult<()> {
        let given = Self::bearer(input)?;
        let expected = self
            .admin_token
            .as_deref()
            .ok_or(ApiError::Forbidden { code: "admin_disabled", detail: "ADMIN_TOKEN is not configured" })?;
        if constant_time_eq(given.as_bytes(), expected.as_bytes()) {
            Ok(())
        } else {
            Err(ApiError::Forbidden { code: "not_admin", detail: "this route needs the admin token" })
        }
    }
}
