//! What apps read right after signing in, and edgefeed has none of: follow requests (follows
//! are never held for approval), filters, announcements, followed tags, custom emojis. Each answers what Mastodon answers for an account without them, because apps
//! treat an error at startup as a broken server (Phanpy, Elk, Tusky read these unguarded).

use serde_json::json;
use worker::Response;

use super::{json, list};
use crate::error::{ApiError, ApiResult};

/// `[]`, without `Link`: there is nothing to page through.
pub fn empty_list() -> ApiResult<Response> {
    list::<()>(&[], None)
}

/// `GET /api/v1/preferences`: Mastodon's defaults, which edgefeed's posting and reading match
/// (posts are public unless chosen otherwise; nothing is sensitive or collapsed).
pub fn preferences() -> ApiResult<Response> {
    json(&json!({
        "posting:default:visibility": "public",
        "posting:default:sensitive": false,
        "posting:default:language": null,
        "reading:expand:media": "default",
        "reading:expand:spoilers": false,
    }))
}

/// Mastodon's admin API: the token may carry `admin:read` (apps register it), but nobody is
/// staff here, so every call is refused as Mastodon refuses a user without the role.
pub fn not_staff() -> ApiResult<Response> {
    Err(ApiError::Forbidden { code: "forbidden", detail: "This action is not allowed" })
}
