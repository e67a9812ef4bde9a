//! The one error type of the service. Every failure a handler can meet becomes an `ApiError`,
//! and `http::problem` turns it into RFC 9457 problem+json in exactly one place.

use serde::{Deserialize, Serialize};

use crate::domain::cursor::CursorError;
use crate::domain::oauth::Scopes;
use crate::domain::token::TokenError;
use crate::domain::validate::Invalid;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("the request body is not valid JSON: {0}")]
    InvalidJson(String),
    #[error("{detail}")]
    InvalidField { field: &'static str, detail: String },
    #[error("the cursor is not valid for this list")]
    InvalidCursor,
    /// No usable credential was presented (401; `WWW-Authenticate: Bearer`).
    #[error("{0}")]
    Unauthorized(&'static str),
    /// A bearer token was presented but is not acceptable (401 with `error="invalid_token"`).
    #[error("{0}")]
    InvalidToken(&'static str),
    /// The token is valid but its account is suspended by an operator (401 `account_suspended`).
    #[error("this account is suspended")]
    Suspended,
    #[error("{detail}")]
    Forbidden { code: &'static str, detail: &'static str },
    #[error("{0}")]
    NotFound(&'static str),
    #[error("this route does not accept the method")]
    MethodNotAllowed { allow: String },
    #[error("{detail}")]
    Conflict { code: &'static str, detail: &'static str },
    #[error("the request body is larger than this route accepts (64 KiB; 8 MiB for an upload)")]
    PayloadTooLarge,
    /// An OAuth 2 error (RFC 6749 section 5.2): `code` is the spec's (`invalid_grant`, ...).
    #[error("{detail}")]
    OAuth { code: &'static str, detail: &'static str },
    /// A token without the OAuth scope the route needs (403 `insufficient_scope`).
    #[error("the token's scopes do not include `{0}`")]
    InsufficientScope(Scopes),
    /// A WebSocket route asked for without `Upgrade: websocket` (426).
    #[error("this route is a WebSocket: connect with Upgrade: websocket")]
    UpgradeRequired,
    /// A storage failure (D1, or a Durable Object's relayed one), by how it is answered: the
    /// store classified it where it happened (`store::StoreError`), so no wrapper on the way
    /// up can lose what kind it was.
    #[error("storage error ({kind:?}): {detail}")]
    Storage { kind: StorageKind, detail: String },
    /// Over a rate limit; `retry_after` seconds go into `Retry-After`.
    #[error("too many requests of this kind; retry after {retry_after} s")]
    RateLimited { retry_after: u32 },
    /// Anything unexpected (storage down, a bug). The detail is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
    /// The deployment's configuration is unusable (an invalid `SHARD_MAP`, no `DB_0`): 500 on
    /// every request, with the detail sent, as it names a setting and no data.
    #[error("the service is misconfigured: {0}")]
    Misconfigured(String),
}

/// What a storage failure was, as far as its answer (and a Durable Object's caller) needs to
/// tell. Kinds that mean something only to the write that met them (a UNIQUE or foreign key
/// violation) are decided on by the service from the `store::StoreError`; one no service
/// decided on is `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StorageKind {
    /// A write to a logical shard that is being moved (`RAISE(ABORT, 'shard frozen')` from the
    /// freeze triggers, migrations/0013): retryable, answered 503 with `Retry-After`.
    Frozen,
    /// Physical database `DB_{database}` did not answer (an outage, a reset, an overload): what
    /// needs it answers 503 with `Retry-After`, reads that can do without it leave its rows out
    /// (docs/operations.md "A database outage"), queued events wait in their outbox.
    Unavailable {
        database: usize,
    },
    Other,
}

impl ApiError {
    /// A follow refused because a block stands between the two users (either way).
    pub const BLOCKED: Self =
        Self::Forbidden { code: "blocked", detail: "a block between you and this user prevents following" };

    pub fn field(field: &'static str, detail: impl Into<String>) -> Self {
        Self::InvalidField { field, detail: detail.into() }
    }

    /// The write met a logical shard frozen for a move: worth retrying after the switch.
    pub fn is_frozen_shard(&self) -> bool {
        matches!(self, Self::Storage { kind: StorageKind::Frozen, .. })
    }

    /// The database whose outage this is, if it is one.
    pub fn unavailable_database(&self) -> Option<usize> {
        match self {
            Self::Storage { kind: StorageKind::Unavailable { database }, .. } => Some(*database),
            _ => None,
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            Self::InvalidJson(_) | Self::InvalidCursor => 400,
            Self::Unauthorized(_) | Self::InvalidToken(_) | Self::Suspended => 401,
            Self::Forbidden { .. } => 403,
            Self::NotFound(_) => 404,
            Self::MethodNotAllowed { .. } => 405,
            Self::Conflict { .. } => 409,
            Self::PayloadTooLarge => 413,
            Self::UpgradeRequired => 426,
            Self::OAuth { code: "invalid_client", .. } => 401,
            Self::OAuth { code: "unauthorized_client", .. } => 403,
            Self::OAuth { .. } => 400,
            Self::InsufficientScope(_) => 403,
            Self::RateLimited { .. } => 429,
            Self::InvalidField { .. } => 422,
            Self::Storage { kind: StorageKind::Frozen | StorageKind::Unavailable { .. }, .. } => 503,
            Self::Storage { .. } | Self::Internal(_) | Self::Misconfigured(_) => 500,
        }
    }

    /// Stable snake_case machine code; clients switch on this, so never rename one.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidJson(_) => "invalid_json",
            Self::InvalidField { .. } => "invalid_field",
            Self::InvalidCursor => "invalid_cursor",
            Self::Unauthorized(_) | Self::InvalidToken(_) => "unauthorized",
            Self::Suspended => "account_suspended",
            Self::Forbidden { code, .. } | Self::Conflict { code, .. } => code,
            Self::NotFound(_) => "not_found",
            Self::MethodNotAllowed { .. } => "method_not_allowed",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UpgradeRequired => "upgrade_required",
            Self::OAuth { code, .. } => code,
            Self::InsufficientScope(_) => "insufficient_scope",
            Self::RateLimited { .. } => "rate_limited",
            Self::Storage { kind: StorageKind::Frozen, .. } => "shard_frozen",
            Self::Storage { kind: StorageKind::Unavailable { .. }, .. } => "database_unavailable",
            Self::Storage { .. } | Self::Internal(_) => "internal",
            Self::Misconfigured(_) => "misconfigured",
        }
    }

    pub fn title(&self) -> &'static str {
        match self.status() {
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            409 => "Conflict",
            413 => "Content Too Large",
            422 => "Unprocessable Content",
            426 => "Upgrade Required",
            429 => "Too Many Requests",
            503 => "Service Unavailable",
            _ => "Internal Server Error",
        }
    }

    /// The problem+json document (without internals for 500s).
    pub fn to_problem(&self) -> serde_json::Value {
        let detail = match self {
            Self::Storage { kind: StorageKind::Frozen, .. } => {
                "this data is being moved to another database; retry in a few seconds".to_owned()
            }
            Self::Storage { kind: StorageKind::Unavailable { .. }, .. } => {
                "a database holding data this request needs is unavailable; retry later".to_owned()
            }
            Self::Storage { .. } | Self::Internal(_) => {
                "something went wrong on our side; retrying is safe".to_owned()
            }
            other => other.to_string(),
        };
        let mut doc = serde_json::json!({
            "type": "about:blank",
            "status": self.status(),
            "code": self.code(),
            "title": self.title(),
            "detail": detail,
        });
        if let Self::InvalidField { field, .. } = self {
            doc["field"] = serde_json::Value::from(*field);
        }
        doc
    }
}

impl From<Invalid> for ApiError {
    fn from(e: Invalid) -> Self {
        Self::InvalidField { field: e.field, detail: e.reason }
    }
}

impl From<CursorError> for ApiError {
    fn from(_: CursorError) -> Self {
        Self::InvalidCursor
    }
}

impl From<TokenError> for ApiError {
    fn from(e: TokenError) -> Self {
        Self::InvalidToken(e.detail())
    }
}

impl From<worker::Error> for ApiError {
    fn from(e: worker::Error) -> Self {
        Self::Internal(e.to_string())
    }
}

impl ApiError {
    /// Seconds a client should wait before retrying, when the error says (`Retry-After`).
    pub fn retry_after(&self) -> Option<u32> {
        match self {
            Self::RateLimited { retry_after } => Some(*retry_after),
            Self::Storage { kind: StorageKind::Frozen, .. } => Some(FROZEN_RETRY_AFTER_SECS),
            Self::Storage { kind: StorageKind::Unavailable { .. }, .. } => Some(UNAVAILABLE_RETRY_AFTER_SECS),
            _ => None,
        }
    }
}

/// A shard move's freeze lasts one final copy and a deploy: seconds to a minute.
const FROZEN_RETRY_AFTER_SECS: u32 = 5;
/// A D1 database's reset takes it away for 30 to 80 s (its storage timeout, then the restart):
/// a retry sooner than that would most likely meet the same outage.
const UNAVAILABLE_RETRY_AFTER_SECS: u32 = 30;

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_documents_carry_status_code_and_field() {
        let doc = ApiError::field("body", "body must not be empty").to_problem();
        assert_eq!(doc["status"], 422);
        assert_eq!(doc["code"], "invalid_field");
        assert_eq!(doc["field"], "body");
        assert_eq!(doc["type"], "about:blank");
    }

    #[test]
    fn a_storage_failure_no_service_decided_on_is_a_500_without_internals() {
        let err = ApiError::Storage { kind: StorageKind::Other, detail: "likes insert".into() };
        assert_eq!((err.status(), err.code(), err.retry_after()), (500, "internal", None));
        assert!(!err.to_problem().to_string().contains("likes insert"));
        // The kind survives a relay through a Durable Object as JSON.
        let relayed: Option<StorageKind> =
            serde_json::to_string(&StorageKind::Frozen).ok().and_then(|j| serde_json::from_str(&j).ok());
        assert_eq!(relayed, Some(StorageKind::Frozen));
    }

    #[test]
    fn a_frozen_shard_is_a_retryable_503_without_internals() {
        let err = ApiError::Storage { kind: StorageKind::Frozen, detail: "INSERT INTO posts".into() };
        assert_eq!((err.status(), err.code(), err.title()), (503, "shard_frozen", "Service Unavailable"));
        assert_eq!(err.retry_after(), Some(FROZEN_RETRY_AFTER_SECS));
        assert!(!err.to_problem().to_string().contains("INSERT"));
    }

    #[test]
    fn an_unreachable_database_is_a_retryable_503_naming_no_internals_and_survives_a_relay() {
        let err = ApiError::Storage { kind: StorageKind::Unavailable { database: 2 }, detail: "DB_2".into() };
        assert_eq!((err.status(), err.code()), (503, "database_unavailable"));
        assert_eq!(
            (err.retry_after(), err.unavailable_database()),
            (Some(UNAVAILABLE_RETRY_AFTER_SECS), Some(2))
        );
        assert!(!err.to_problem().to_string().contains("DB_2"));
        let relayed: Option<StorageKind> = serde_json::to_string(&StorageKind::Unavailable { database: 2 })
            .ok()
            .and_then(|j| serde_json::from_str(&j).ok());
        assert_eq!(relayed, Some(StorageKind::Unavailable { database: 2 }));
        assert_eq!(ApiError::Internal("x".into()).unavailable_database(), None);
    }

    #[test]
    fn internal_errors_do_not_leak_details() {
        let doc = ApiError::Internal("D1_ERROR: no such table: posts".into()).to_problem();
        assert_eq!(doc["status"], 500);
        assert!(doc["detail"].as_str().is_some_and(|d| !d.contains("posts")));
    }

    #[test]
    fn a_misconfiguration_says_what_is_wrong() {
        let doc = ApiError::Misconfigured("SHARD_MAP is invalid: logical shard 7 is not mapped".into())
            .to_problem();
        assert_eq!((doc["status"].as_u64(), doc["code"].as_str()), (Some(500), Some("misconfigured")));
        assert!(doc["detail"].as_str().is_some_and(|d| d.contains("SHARD_MAP") && d.contains("shard 7")));
    }
}
