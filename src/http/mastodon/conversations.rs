//! Direct conversations: `GET /api/v1/conversations`, `DELETE /api/v1/conversations/{id}` and
//! `POST .../read|unread` (`services/direct.rs`). A conversation's id is the direct post that
//! started it, so the list pages by post id (`max_id`, `since_id`, `min_id`).

use worker::Response;

use super::{json, list};
use crate::domain::ids::{PostId, UserId};
use crate::domain::mastodon::{kept_params, limit, link_header};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::ConversationRoute;
use crate::services::direct;
use crate::store::conversations::Bounds;

pub async fn route(
    app: &App,
    input: &Input,
    viewer: UserId,
    route: ConversationRoute,
) -> ApiResult<Response> {
    match route {
        ConversationRoute::Conversations => page(app, input, viewer).await,
        ConversationRoute::Remove(id) => {
            direct::remove(app, viewer, id).await?;
            json(&serde_json::json!({}))
        }
        ConversationRoute::Unread(id, unread) => {
            let shown = direct::set_unread(app, viewer, id, unread).await?;
            json(&direct::entities(app, viewer, &input.origin, vec![shown]).await?.first())
        }
    }
}

/// An id bound of the query (`max_id`, `since_id`, `min_id`): absent, or a post id (else 422).
fn bound(input: &Input, name: &'static str) -> ApiResult<Option<PostId>> {
    match input.query(name).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(raw) => PostId::parse(raw).map(Some).ok_or_else(|| ApiError::field(name, "not an id")),
    }
}

async fn page(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let min_id = bound(input, "min_id")?;
    let bounds = Bounds {
        max: bound(input, "max_id")?,
        min: min_id.or(bound(input, "since_id")?),
        oldest_first: min_id.is_some(),
    };
    let limit = limit(input.query("limit"));
    let page = direct::page(app, viewer, bounds, limit).await?;
    let (newest, oldest) = page.scanned.map(|(a, b)| (a.to_string(), b.to_string())).unzip();
    // Above `min_id` the page is the oldest ones: older ones certainly follow below it.
    let more = page.full || (bounds.oldest_first && page.scanned.is_some());
    let items = direct::entities(app, viewer, &input.origin, page.shown).await?;
    let base = format!("{}/api/v1/conversations", input.origin);
    let link =
        link_header(&base, &kept_params(input.query("limit")), newest.as_deref(), oldest.as_deref(), more);
    list(&items, link)
}
