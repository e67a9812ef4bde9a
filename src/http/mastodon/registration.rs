//! What an app does for itself: registering an account (`POST /api/v1/accounts`, with the app's
//! own token from the client-credentials grant or a user's token issued to it), asking for an
//! e-mail confirmation, and reading its own registration (`GET /api/v1/apps/verify_credentials`).

use worker::Response;

use super::json;
use super::oauth::{token_entity, user_token};
use crate::domain::ids::UserId;
use crate::domain::registration::{self, Given, Problem};
use crate::domain::validate::DisplayName;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::handlers::users::hash_password;
use crate::http::input::Input;
use crate::services::users as service;
use crate::store::oauth as store;

/// Mastodon's 422 with every problem in `details`.
fn refused(problems: &[Problem]) -> ApiResult<Response> {
    Ok(Response::from_json(&registration::error_body(problems))?.with_status(422))
}

/// `POST /api/v1/accounts` (`username`, `email`, `password`, `agreement`, `locale`, `reason`):
/// the rules of `POST /v1/users`; the answer is a Token of the new user for the calling app,
/// with the calling token's scopes. No e-mail is kept or sent (the address is only checked):
/// the account is usable at once, as a `/v1` sign-up is.
pub async fn register(app: &App, input: &Input) -> ApiResult<Response> {
    let caller = app.app_token(input)?;
    if !app.config.open_registration {
        return Err(ApiError::Forbidden {
            code: "registration_closed",
            detail: "registration is switched off",
        });
    }
    let body = input.form_or_json(true)?;
    let text = |name: &'static str| body.str(name);
    let agreement = match body.flag("agreement") {
        Ok(Some(true)) => Some("true"),
        _ => text("agreement").ok().flatten(),
    };
    let given =
        Given { username: text("username")?, email: text("email")?, password: text("password")?, agreement };
    let valid = match registration::check(&given) {
        Ok(valid) => valid,
        Err(problems) => return refused(&problems),
    };
    let hash = hash_password(&valid.password)?;
    let display_name = DisplayName::from_handle(&valid.handle);
    let user = match service::sign_up(app, &valid.handle, &display_name, Some(&hash)).await {
        Ok(user) => user,
        Err(ApiError::Conflict { code: "handle_taken", .. }) => return refused(&registration::taken()),
        Err(e) => return Err(e),
    };
    token_entity(&user_token(app, user.id, caller.scopes, caller.client)?, caller.scopes, app.now)
}

/// `POST /api/v1/emails/confirmations`: accounts here are confirmed at sign-up and no e-mail is
/// ever sent, so there is nothing to resend: `{}`, as Mastodon answers a resend it accepted.
pub fn email_confirmation(_viewer: UserId) -> ApiResult<Response> {
    json(&serde_json::json!({}))
}

/// `GET /api/v1/apps/verify_credentials`: the app the token was issued to (Mastodon's
/// Application, without its secret).
pub async fn app_credentials(app: &App, input: &Input) -> ApiResult<Response> {
    let caller = app.app_token(input)?;
    let row = store::app_by_id(app.control(), caller.client)
        .await?
        .ok_or(ApiError::InvalidToken("the token's app is no longer registered"))?;
    json(&serde_json::json!({
        "id": row.id.to_string(),
        "name": row.name,
        "website": row.website,
        "scopes": row.scopes().to_string().split(' ').collect::<Vec<_>>(),
        "redirect_uri": row.redirect_uris,
        "redirect_uris": row.redirect_uris.split_whitespace().collect::<Vec<_>>(),
        "vapid_key": crate::services::push::server_key(app).unwrap_or_default(),
    }))
}
