//! Client apps and OAuth 2 (password, authorization-code and client-credentials grants,
//! revocation), and the
//! instance documents clients read first.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use worker::Response;

use super::json;
use crate::context::random_bytes;
use crate::domain::ids::UserId;
use crate::domain::live::Revocation;
use crate::domain::mastodon::{acct_handle, domain_of, escape_into, streaming_url};
use crate::domain::oauth::{
    pkce_challenge, pkce_verifies, redirect_acceptable, redirect_allowed, Scopes, OUT_OF_BAND,
};
use crate::domain::password;
use crate::domain::polls;
use crate::domain::sign::constant_time_eq;
use crate::domain::snowflake::{shard_of_id, with_shard};
use crate::domain::throttle;
use crate::domain::token;
use crate::domain::validate::{Handle, Invalid};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::services::live::close_sockets;
use crate::store::oauth::{self as store, AppRow, Grant, NewApp};

/// An authorization code works once, within this long.
const CODE_TTL_MS: i64 = 10 * 60 * 1000;

/// 256 random bits, base64url: client ids and secrets, authorization codes.
fn random_token() -> ApiResult<String> {
    Ok(B64.encode(random_bytes::<32>()?))
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn oauth_error(code: &'static str, detail: &'static str) -> ApiError {
    ApiError::OAuth { code, detail }
}

fn parse_scopes(text: &str) -> Result<Scopes, Invalid> {
    Scopes::parse(text).ok_or_else(|| {
        Invalid::new("scopes", "scopes are read, write, follow, push, profile, admin:read and admin:write")
    })
}

/// `POST /api/v1/apps`: registers a client; the secret is shown this once.
pub async fn register_app(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let name = body.required_str("client_name")?.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(ApiError::field("client_name", "client_name must be 1..200 characters"));
    }
    let redirect_uris = body.str("redirect_uris")?.unwrap_or(OUT_OF_BAND).trim().to_owned();
    if redirect_uris.is_empty() || !redirect_uris.split_whitespace().all(redirect_acceptable) {
        return Err(ApiError::field(
            "redirect_uris",
            "redirect_uris must be absolute URIs without fragments, not javascript:, data: or vbscript:",
        ));
    }
    let scopes = body.optional("scopes", parse_scopes)?.unwrap_or(Scopes::READ);
    let website = body.str("website")?.filter(|w| !w.trim().is_empty());
    let (client_id, client_secret) = (random_token()?, random_token()?);
    let secret_hash = sha256_hex(&client_secret);
    let new = NewApp {
        client_id: &client_id,
        client_secret_hash: &secret_hash,
        name,
        website,
        redirect_uris: &redirect_uris,
        scopes,
    };
    let id = store::create_app(app.control(), &new, app.now).await?;
    json(&serde_json::json!({
        "id": id.to_string(),
        "name": name,
        "website": website,
        "scopes": scopes.to_string().split(' ').collect::<Vec<_>>(),
        "redirect_uri": redirect_uris,
        "redirect_uris": redirect_uris.split_whitespace().collect::<Vec<_>>(),
        "client_id": client_id,
        "client_secret": client_secret,
        "vapid_key": crate::services::push::server_key(app).unwrap_or_default(),
    }))
}

/// The app named by `client_id`, if `client_secret` is its secret.
async fn client(app: &App, body: &JsonObject, secret_required: bool) -> ApiResult<AppRow> {
    let invalid = || oauth_error("invalid_client", "unknown client or wrong client secret");
    let client_id = body.str("client_id")?.ok_or_else(invalid)?;
    let row = store::app_by_client_id(app.control(), client_id).await?.ok_or_else(invalid)?;
    if secret_required {
        let secret = body.str("client_secret")?.ok_or_else(invalid)?;
        if !constant_time_eq(sha256_hex(secret).as_bytes(), row.client_secret_hash.as_bytes()) {
            return Err(invalid());
        }
    }
    Ok(row)
}

/// The user a handle and password name; one error for every way it can fail (no user, no
/// password, wrong password, suspended), so the answer does not tell which. Failures count
/// against the client's address, the address with the account, and the account; an attempt
/// their rules refuse is refused before the password is hashed (`domain::throttle`).
async fn sign_in(app: &App, input: &Input, username: &str, password: &str) -> ApiResult<UserId> {
    let keys = throttle::keys(input.client_ip.as_deref().unwrap_or("local"), acct_handle(username));
    if app.config.rate_limits {
        let counts = store::sign_in_failures(app.control(), &keys, app.now).await?;
        if let Some(retry_after) = throttle::refused(&keys, &counts, app.now) {
            return Err(ApiError::RateLimited { retry_after });
        }
    }
    let checked = check_password(app, username, password).await;
    if matches!(checked, Err(ApiError::OAuth { .. })) && app.config.rate_limits {
        store::count_sign_in_failure(app.control(), &keys, app.now).await?;
    }
    checked
}

async fn check_password(app: &App, username: &str, password: &str) -> ApiResult<UserId> {
    let refused = || oauth_error("invalid_grant", "the handle or password is wrong");
    let handle = Handle::parse(acct_handle(username)).map_err(|_| refused())?;
    let credentials = crate::services::users::credentials(app, &handle).await?.ok_or_else(refused)?;
    let hash = credentials.password_hash.as_deref().ok_or_else(refused)?;
    if credentials.is_suspended() || !password::verify(password, hash) {
        return Err(refused());
    }
    Ok(credentials.id)
}

/// `POST /oauth/token`: the password and authorization-code grants.
pub async fn token(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    // A public client (a browser app) proves itself with the PKCE verifier instead of a secret.
    let proves_by_pkce = body.str("grant_type")? == Some("authorization_code") && body.has("code_verifier");
    let client = client(app, &body, !proves_by_pkce).await?;
    if body.str("grant_type")? == Some("client_credentials") {
        return app_token(app, &body, &client);
    }
    let (user, scopes) = match body.required_str("grant_type")? {
        "password" => {
            let user =
                sign_in(app, input, body.required_str("username")?, body.required_str("password")?).await?;
            let asked = body.optional("scope", parse_scopes)?.unwrap_or(Scopes::READ);
            if !client.scopes().contains(asked) {
                return Err(oauth_error("invalid_scope", "the app was not registered for these scopes"));
            }
            (user, asked)
        }
        "authorization_code" => code_grant(app, &body, &client).await?,
        _ => {
            return Err(oauth_error(
                "unsupported_grant_type",
                "grant_type must be password, authorization_code or client_credentials",
            ))
        }
    };
    token_entity(&user_token(app, user, scopes, client.id)?, scopes, app.now)
}

/// The client-credentials grant: the app's own token (no user), for what an app does for itself
/// (registering an account: `http/mastodon/registration.rs`).
fn app_token(app: &App, body: &JsonObject, client: &AppRow) -> ApiResult<Response> {
    let asked = body.optional("scope", parse_scopes)?.unwrap_or(Scopes::READ);
    if !client.scopes().contains(asked) {
        return Err(oauth_error("invalid_scope", "the app was not registered for these scopes"));
    }
    token_entity(&app.issue_app_token(client.id, asked), asked, app.now)
}

/// Mastodon's Token entity.
pub(super) fn token_entity(access: &str, scopes: Scopes, now_ms: i64) -> ApiResult<Response> {
    json(&serde_json::json!({
        "access_token": access,
        "token_type": "Bearer",
        "scope": scopes.to_string(),
        "created_at": now_ms.div_euclid(1000),
    }))
}

/// A new OAuth access token of `user` for `client`: random id with the user's shard bits (its
/// revocation lives, and moves, with the user's rows).
pub(super) fn user_token(app: &App, user: UserId, scopes: Scopes, client: i64) -> ApiResult<String> {
    let random = i64::from_le_bytes(random_bytes()?) & crate::domain::ids::MAX_ID;
    let token_id = with_shard(random, shard_of_id(user.get()));
    Ok(app.issue_scoped_token(user, token::Grant { scopes, token_id, client }))
}

/// The authorization-code grant: the code (once, unexpired, for this client and redirect),
/// and, when it was granted with a PKCE challenge, the verifier that answers it.
async fn code_grant(app: &App, body: &JsonObject, client: &AppRow) -> ApiResult<(UserId, Scopes)> {
    let code = body.required_str("code")?;
    let invalid = || oauth_error("invalid_grant", "the code is wrong, used or expired");
    let grant = store::take_code(app.control(), &sha256_hex(code)).await?.ok_or_else(invalid)?;
    let redirect = body.str("redirect_uri")?.unwrap_or(OUT_OF_BAND);
    if grant.app_id != client.id || grant.expires_at <= app.now || grant.redirect_uri != redirect {
        return Err(invalid());
    }
    // A code granted with a challenge needs its verifier; one without, the secret
    // (checked by the caller unless a verifier came, which then has nothing to answer).
    let verified = match (grant.code_challenge.as_deref(), body.str("code_verifier")?) {
        (Some(challenge), Some(verifier)) => pkce_verifies(challenge, verifier),
        (None, None) => true,
        _ => false,
    };
    if !verified {
        return Err(oauth_error("invalid_grant", "the code_verifier does not answer the code's challenge"));
    }
    Ok((grant.user_id, grant.scopes()))
}

/// `POST /oauth/revoke` (RFC 7009): revokes one OAuth token; `200 {}` also for a token that is
/// unknown, not one of ours or already expired (nothing left to revoke). A valid token issued to
/// another app (or before tokens named their app) is that app's to revoke: `403
/// unauthorized_client` (RFC 7009 2.1, as Mastodon answers).
pub async fn revoke(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let client = client(app, &body, true).await?;
    let policy =
        token::Policy { now_secs: app.now.div_euclid(1000), max_ttl_secs: app.config.token_max_ttl_secs };
    if let Ok(verified) = app.verify_token(body.required_str("token")?, policy) {
        if verified.token_id.is_some() && verified.client != Some(client.id) {
            return Err(oauth_error("unauthorized_client", "the token was issued to another client"));
        }
        if let Some(token_id) = verified.token_id {
            store::revoke_token(app.user_db(verified.user), token_id, (verified.expires_at * 1000.0) as i64)
                .await?;
            // Mastodon's subscriptions belong to their token: revoking it ends its pushes.
            crate::services::push::forget_token(app, verified.user, token_id).await?;
            close_sockets(app, verified.user, Revocation::Token(token_id)).await;
        }
    }
    json(&serde_json::json!({}))
}

/// What the sign-in page (and the out-of-band code page) may load: its own script and style,
/// nothing inline, nothing from elsewhere; no framing (a framed password form is clickjacking).
/// No `form-action`: browsers apply it to the redirect after the form is sent, and that goes to
/// the app's registered URI (another host, `http://127.0.0.1`, `com.example.app:`).
const SIGN_IN_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'";

/// An HTML page of the sign-in flow, with the headers that keep it out of frames and keep its
/// query (client id, state) out of `Referer`. `nosniff` is added to every response anyway.
fn sign_in_html(html: String) -> ApiResult<Response> {
    let mut response = Response::from_html(html)?;
    let headers = response.headers_mut();
    headers.set("content-security-policy", SIGN_IN_POLICY)?;
    headers.set("x-frame-options", "DENY")?;
    headers.set("referrer-policy", "no-referrer")?;
    Ok(response)
}

/// `GET /oauth/authorize`: the sign-in page (a static asset; its script reads the query).
pub async fn authorize_page(app: &App, input: &Input) -> ApiResult<Response> {
    let assets = app.env.assets("ASSETS")?;
    let mut page = assets.fetch(format!("{}/oauth/authorize.html", input.origin), None).await?;
    sign_in_html(page.text().await?)
}

/// A wrong handle or password on the sign-in page goes back to the page (303), with the app's
/// request kept and the error for the page's script to show (`public/authorize.js`), rather
/// than leaving a person with a JSON body in place of the form. (Being over the sign-in limit
/// stays `429` with `Retry-After`.)
fn back_to_sign_in(body: &crate::http::input::JsonObject) -> ApiResult<Response> {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for name in ["client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"] {
        if let Some(value) = body.str(name)? {
            query.append_pair(name, value);
        }
    }
    query.append_pair("error", "The handle or password is wrong.");
    let mut response = Response::empty()?.with_status(303);
    response.headers_mut().set("location", &format!("/oauth/authorize?{}", query.finish()))?;
    Ok(response)
}

/// `POST /oauth/authorize` (the page's form): checks the client, the redirect URI and the
/// password, then sends a one-use code to the redirect URI (or shows it, out of band).
pub async fn authorize(app: &App, input: &Input) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let client = client(app, &body, false).await?;
    let redirect_uri = body.str("redirect_uri")?.unwrap_or(OUT_OF_BAND);
    if !redirect_allowed(&client.redirect_uris, redirect_uri) {
        return Err(oauth_error("invalid_request", "redirect_uri is not one the app registered"));
    }
    let scopes = body.optional("scope", parse_scopes)?.unwrap_or(Scopes::READ);
    if !client.scopes().contains(scopes) {
        return Err(oauth_error("invalid_scope", "the app was not registered for these scopes"));
    }
    let challenge = match body.str("code_challenge")?.filter(|c| !c.is_empty()) {
        Some(c) => Some(
            pkce_challenge(c, body.str("code_challenge_method")?)
                .map_err(|why| oauth_error("invalid_request", why))?,
        ),
        None => None,
    };
    let signed_in = sign_in(app, input, body.required_str("username")?, body.required_str("password")?).await;
    let user = match signed_in {
        Err(ApiError::OAuth { code: "invalid_grant", .. }) => return back_to_sign_in(&body),
        other => other?,
    };
    let code = random_token()?;
    let code_hash = sha256_hex(&code);
    let grant = Grant {
        code_hash: &code_hash,
        app_id: client.id,
        user,
        scopes,
        redirect_uri,
        expires_at: app.now + CODE_TTL_MS,
        code_challenge: challenge.as_deref(),
    };
    store::create_code(app.control(), &grant).await?;
    if redirect_uri == OUT_OF_BAND {
        let mut html =
            String::from("<!doctype html><title>Authorized</title><p>Your authorization code:</p><pre>");
        escape_into(&mut html, &code);
        html.push_str("</pre>");
        return sign_in_html(html);
    }
    let mut target =
        url::Url::parse(redirect_uri).map_err(|_| oauth_error("invalid_request", "bad redirect_uri"))?;
    target.query_pairs_mut().append_pair("code", &code);
    if let Some(state) = body.str("state")? {
        target.query_pairs_mut().append_pair("state", state);
    }
    Ok(Response::redirect_with_status(target, 303)?)
}

/// `GET /api/v1/instance` and `/api/v2/instance`: what clients check before anything else.
pub fn instance(app: &App, input: &Input, v1: bool) -> ApiResult<Response> {
    let mut doc = serde_json::json!({
        "title": "edgefeed",
        "version": "4.3.0 (compatible; edgefeed 1.2)",
        "description": "A follow-feed service: follow people, read their posts, like and reply.",
        "languages": ["en"],
        "configuration": configuration(),
        "rules": crate::domain::instance::rules(&app.config.instance_rules),
    });
    // Web Push's public key (docs/mastodon.md "Web Push"); "" while none is configured.
    let vapid_key = crate::services::push::server_key(app).unwrap_or_default();
    if v1 {
        instance_v1(&mut doc, &input.origin);
        doc["vapid_key"] = vapid_key.into();
    } else {
        instance_v2(&mut doc, &input.origin);
        doc["configuration"]["vapid"] = serde_json::json!({ "public_key": vapid_key });
    }
    json(&doc)
}

/// The limits both documents share: images only (no video), no polls, no featured tags, 5000
/// characters.
fn configuration() -> serde_json::Value {
    use crate::domain::media::{ImageKind, MAX_ATTACHMENTS, MAX_DIMENSION, MAX_IMAGE_BYTES};
    let types: Vec<&str> = ImageKind::ALL.iter().map(|k| k.mime()).collect();
    serde_json::json!({
        "statuses": {
            "max_characters": 5000, "max_media_attachments": MAX_ATTACHMENTS, "characters_reserved_per_url": 23,
        },
        "media_attachments": {
            "supported_mime_types": types, "image_size_limit": MAX_IMAGE_BYTES,
            "image_matrix_limit": u64::from(MAX_DIMENSION) * u64::from(MAX_DIMENSION),
            "video_size_limit": 0, "video_frame_rate_limit": 0, "video_matrix_limit": 0,
        },
        "polls": {
            "max_options": polls::MAX_OPTIONS, "max_characters_per_option": polls::MAX_OPTION_CHARS,
            "min_expiration": polls::MIN_EXPIRATION_SECS, "max_expiration": polls::MAX_EXPIRATION_SECS,
        },
        "accounts": { "max_featured_tags": 0 },
    })
}

/// The v1 document's own fields (what toot and Mastodon.py read). Registration through the
/// Mastodon API does not exist (sign up with `POST /v1/users`), so `registrations` is false.
fn instance_v1(doc: &mut serde_json::Value, origin: &str) {
    let domain = domain_of(origin);
    doc["uri"] = domain.into();
    doc["short_description"] = doc["description"].clone();
    doc["email"] = "".into();
    doc["urls"] = serde_json::json!({ "streaming_api": streaming_url(origin) });
    doc["stats"] = serde_json::json!({ "user_count": 0, "status_count": 0, "domain_count": 1 });
    doc["thumbnail"] = format!("{origin}/header.png").into();
    doc["registrations"] = false.into();
    doc["approval_required"] = false.into();
    doc["invites_enabled"] = false.into();
    doc["contact_account"] = serde_json::Value::Null;
}

/// The v2 document's own fields. `configuration.urls.streaming` is read unguarded by some
/// apps (Elk); `api_versions.mastodon` 2 and the 4.3 version say that grouped notifications
/// (`/api/v2/notifications`) are served, which recent apps then prefer.
fn instance_v2(doc: &mut serde_json::Value, origin: &str) {
    doc["domain"] = domain_of(origin).into();
    doc["source_url"] = "https://example.invalid/edgefeed".into();
    doc["usage"] = serde_json::json!({ "users": { "active_month": 0 } });
    doc["thumbnail"] = serde_json::json!({ "url": format!("{origin}/header.png") });
    doc["icon"] = serde_json::json!([{ "src": format!("{origin}/avatar.png"), "size": "96x96" }]);
    doc["api_versions"] = serde_json::json!({ "mastodon": 2 });
    let configuration = &mut doc["configuration"];
    configuration["urls"] = serde_json::json!({ "streaming": streaming_url(origin) });
    configuration["translation"] = serde_json::json!({ "enabled": false });
    configuration["accounts"]["max_pinned_statuses"] = crate::store::post_marks::MAX_PINS.into();
    doc["registrations"] =
        serde_json::json!({ "enabled": false, "approval_required": false, "message": null });
    doc["contact"] = serde_json::json!({ "email": "", "account": null });
}
