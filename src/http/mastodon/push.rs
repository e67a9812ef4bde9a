//! `/api/v1/push/subscription`: the token's Web Push subscription (Mastodon's
//! WebPushSubscription entity), over `services/push.rs`. Parameters by their Rails names, from
//! a form or a JSON body (`domain/push.rs`).

use serde_json::json;
use worker::Response;

use super::json;
use crate::domain::ids::UserId;
use crate::domain::push::{parse_data, parse_endpoint};
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::PushRoute;
use crate::services::push::{self, Subscription, TokenRef};

pub async fn route(app: &App, input: &Input, viewer: UserId, route: PushRoute) -> ApiResult<Response> {
    let token = app.verified_token(input)?;
    let token_id = token.token_id.unwrap_or(0);
    let done = match route {
        PushRoute::Get => push::current(app, viewer, token_id).await?,
        PushRoute::Create => {
            let (params, _) = input.params_and_files(&[])?;
            // Both parsed before anything is stored: a bad value changes nothing.
            let (endpoint, data) = (parse_endpoint(&params)?, parse_data(&params)?);
            let token = TokenRef {
                user: viewer,
                token_id,
                bearer: App::bearer(input)?,
                issued_at_ms: token.issued_at.map(|secs| (secs * 1000.0) as i64),
                expires_at_ms: (token.expires_at * 1000.0) as i64,
            };
            push::subscribe(app, token, &input.origin, &endpoint, data).await?
        }
        PushRoute::Update => {
            let (params, _) = input.params_and_files(&[])?;
            push::change(app, viewer, token_id, parse_data(&params)?).await?
        }
        PushRoute::Delete => {
            push::unsubscribe(app, viewer, token_id).await?;
            return json(&json!({}));
        }
    };
    json(&entity(&done))
}

/// Mastodon's WebPushSubscription. `standard`: the push is RFC 8291's `aes128gcm` (Mastodon
/// 4.4's standard encoding), the only one sent here.
fn entity(subscription: &Subscription) -> serde_json::Value {
    let data = subscription.row.data();
    json!({
        "id": subscription.row.id.to_string(),
        "endpoint": subscription.row.endpoint,
        "standard": true,
        "alerts": data.alerts.to_json(),
        "policy": data.policy.as_str(),
        "server_key": subscription.server_key,
    })
}
