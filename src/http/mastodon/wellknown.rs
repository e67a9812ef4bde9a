//! The discovery documents (`/.well-known/nodeinfo`, `/nodeinfo/2.0`, `/.well-known/host-meta`,
//! `/.well-known/webfinger`), shaped in `domain/wellknown.rs`.

use worker::Response;

use super::accounts::handle_of;
use super::entities::account_uri;
use super::json;
use crate::domain::wellknown::{self as doc, webfinger_handle, NODEINFO_CONTENT_TYPE};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::users::resolve;
use crate::store::users::shown_by_ids;

/// A body with its own media type (the documents are not plain `application/json`).
fn typed(body: String, content_type: &str) -> ApiResult<Response> {
    let mut response = Response::ok(body)?;
    response.headers_mut().set("content-type", content_type)?;
    Ok(response)
}

pub fn nodeinfo_links(input: &Input) -> ApiResult<Response> {
    json(&doc::nodeinfo_links(&input.origin))
}

/// `openRegistrations` is `OPEN_REGISTRATION`: sign-up (`POST /v1/users`) is the one way in.
pub fn nodeinfo(app: &App) -> ApiResult<Response> {
    typed(doc::nodeinfo(app.config.open_registration).to_string(), NODEINFO_CONTENT_TYPE)
}

pub fn host_meta(input: &Input) -> ApiResult<Response> {
    typed(doc::host_meta(&input.origin), "application/xrd+xml; charset=utf-8")
}

/// `?resource=acct:handle@domain`: the JRD of an account that exists and is not suspended,
/// `404` for anything else (another domain, no such handle), as for a lookup.
pub async fn webfinger(app: &App, input: &Input) -> ApiResult<Response> {
    let resource =
        input.query("resource").ok_or_else(|| ApiError::field("resource", "resource is required"))?;
    let not_found = || ApiError::NotFound("no such account");
    let handle = webfinger_handle(resource, &input.origin).and_then(handle_of).ok_or_else(not_found)?;
    let id = resolve(app, &handle).await?.ok_or_else(not_found)?;
    let user = shown_by_ids(&app.shards, &[id]).await?.into_iter().next().ok_or_else(not_found)?;
    let jrd = doc::webfinger(&input.origin, &user.handle, &account_uri(&input.origin, user.id));
    typed(jrd.to_string(), "application/jrd+json; charset=utf-8")
}
