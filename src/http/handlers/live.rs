//! Live feed updates (see `domain::live`): the ticket, and the WebSocket it opens.

use worker::Response;

use super::json;
use crate::context::random_bytes;
use crate::domain::live::{Session, TICKET_TTL_SECS};
use crate::domain::time::format_rfc3339;
use crate::domain::token;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::objects::timeline::Windows;

/// `POST /v1/feed/live/ticket`: trades the caller's bearer token for a one-use ticket that
/// carries the token's lifetime, so the socket it opens ends with the token.
pub async fn ticket(app: &App, input: &Input) -> ApiResult<Response> {
    let token = app.verified_token(input)?;
    let expires_at = app.now.div_euclid(1000) + TICKET_TTL_SECS;
    let session = Session {
        user: token.user,
        // 53 bits: exact in JSON numbers and in SQLite's signed integers.
        nonce: u64::from_le_bytes(random_bytes()?) >> 11,
        ticket_expires_at: expires_at,
        token_issued_at: token.issued_at,
        token_expires_at: token.expires_at,
        token_id: token.token_id,
    };
    let ticket = app.tickets().issue(&session);
    json(200, &serde_json::json!({ "ticket": ticket, "expires_at": format_rfc3339(expires_at * 1000) }))
}

/// `GET /v1/feed/live?ticket=T` with `Upgrade: websocket`: checks the ticket and the credential
/// behind it as it stands now (logout, suspension), then lets the reader's timeline object
/// accept the socket (it refuses a ticket it has seen).
pub async fn connect(app: &App, input: &Input) -> ApiResult<Response> {
    if !input.websocket {
        return Err(ApiError::UpgradeRequired);
    }
    let ticket = input.query("ticket").ok_or(ApiError::Unauthorized("a ticket is required"))?;
    let session = app
        .tickets()
        .verify(ticket, app.now.div_euclid(1000))
        .map_err(|e| ApiError::InvalidToken(e.detail()))?;
    let token = token::Verified {
        user: session.user,
        issued_at: session.token_issued_at,
        expires_at: session.token_expires_at,
        scopes: None,
        token_id: session.token_id,
        client: None,
    };
    app.confirm_not_revoked(&token).await?;
    let response = Windows::new(app)?.connect_live(&session).await?;
    match response.status_code() {
        101 => Ok(response),
        409 => Err(ApiError::InvalidToken("the ticket was already used")),
        status => Err(ApiError::Internal(format!("the timeline object answered {status} to a live connect"))),
    }
}
