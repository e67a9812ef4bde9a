//! The one error type of the service. Every failure a handler can meet becomes an `ApiError`,
//! and `http::problem` turns it into RFC 9457 problem+json in exactly one place.

use crate::domain::cursor::CursorError;
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
    #[error("{detail}")]
    Forbidden { code: &'static str, detail: &'static str },
    #[error("{0}")]
    NotFound(&'static str),
    #[error("this route does not accept the method")]
    MethodNotAllowed { allow: String },
    #[error("{detail}")]
    Conflict { code: &'static str, detail: &'static str },
    #[error("the request body is larger than 64 KiB")]
    PayloadTooLarge,
    /// Over a rate limit; `retry_after` seconds go into `Retry-After`.
    #[error("too many requests of this kind; retry after {retry_after} s")]
    RateLimited { retry_after: u32 },
    /// Anything unexpected (storage down, a bug). The detail is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// A follow refused because a block stands between the two users (either way).
    pub const BLOCKED: Self =
        Self::Forbidden { code: "blocked", detail: "a block between you and this user prevents following" };

    pub fn field(field: &'static str, detail: impl Into<String>) -> Self {
        Self::InvalidField { field, detail: detail.into() }
    }

    pub fn status(&self) -> u16 {
        match self {
            Self::InvalidJson(_) | Self::InvalidCursor => 400,
            Self::Unauthorized(_) | Self::InvalidToken(_) => 401,
            Self::Forbidden { .. } => 403,
            Self::NotFound(_) => 404,
            Self::MethodNotAllowed { .. } => 405,
            Self::Conflict { .. } => 409,
            Self::PayloadTooLarge => 413,
            Self::RateLimited { .. } => 429,
            Self::InvalidField { .. } => 422,
            Self::Internal(_) => 500,
        }
    }

    /// Stable snake_case machine code; clients switch on this, so never rename one.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidJson(_) => "invalid_json",
            Self::InvalidField { .. } => "invalid_field",
            Self::InvalidCursor => "invalid_cursor",
            Self::Unauthorized(_) | Self::InvalidToken(_) => "unauthorized",
            Self::Forbidden { code, .. } | Self::Conflict { code, .. } => code,
            Self::NotFound(_) => "not_found",
            Self::MethodNotAllowed { .. } => "method_not_allowed",
            Self::PayloadTooLarge => "payload_too_large",
            Self::RateLimited { .. } => "rate_limited",
            Self::Internal(_) => "internal",
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
            429 => "Too Many Requests",
            _ => "Internal Server Error",
        }
    }

    /// The problem+json document (without internals for 500s).
    pub fn to_problem(&self) -> serde_json::Value {
        let detail = match self {
            Self::Internal(_) => "something went wrong on our side; retrying is safe".to_owned(),
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
    fn internal_errors_do_not_leak_details() {
        let doc = ApiError::Internal("D1_ERROR: no such table: posts".into()).to_problem();
        assert_eq!(doc["status"], 500);
        assert!(doc["detail"].as_str().is_some_and(|d| !d.contains("posts")));
    }
}
