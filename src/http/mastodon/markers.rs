//! Mastodon's read markers (`/api/v1/markers`) for `home` and `notifications`: where the user
//! stopped reading, kept per user so another device or app can continue there.

use std::collections::BTreeMap;

use serde::Serialize;
use worker::Response;

use super::json;
use crate::domain::ids::{parse_id, UserId};
use crate::domain::time::format_rfc3339;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::store::markers::{self as store, MarkerRow, Timeline};

#[derive(Serialize)]
struct Marker {
    last_read_id: String,
    version: i64,
    updated_at: String,
}

fn answer(rows: &[MarkerRow]) -> ApiResult<Response> {
    let markers: BTreeMap<&str, Marker> = rows
        .iter()
        .map(|m| {
            let marker = Marker {
                last_read_id: m.last_read_id.to_string(),
                version: m.version,
                updated_at: format_rfc3339(m.updated_at),
            };
            (m.timeline.as_str(), marker)
        })
        .collect();
    json(&markers)
}

/// `GET /api/v1/markers?timeline[]=home&timeline[]=notifications`: the asked markers that are
/// set (unknown timelines are ignored, as Mastodon does; none asked answers `{}`).
pub async fn get(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let asked: Vec<Timeline> = input
        .query_all("timeline[]")
        .chain(input.query_all("timeline"))
        .filter_map(Timeline::parse)
        .collect();
    if asked.is_empty() {
        return json(&serde_json::json!({}));
    }
    answer(&store::get(app.user_db(viewer), viewer, &asked).await?)
}

/// The `last_read_id` of `timeline` in a JSON body (`{"home": {"last_read_id": "1"}}`) or a
/// form (`home[last_read_id]=1`).
fn asked_id(input: &Input, timeline: Timeline) -> ApiResult<Option<i64>> {
    let name = timeline.as_str();
    let raw: Option<String> = match serde_json::from_slice::<serde_json::Value>(input.body()) {
        Ok(body) => match body.get(name).and_then(|m| m.get("last_read_id")) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            Some(_) => Some(String::new()),
            None => None,
        },
        Err(_) => {
            let key = format!("{name}[last_read_id]");
            url::form_urlencoded::parse(input.body()).find(|(k, _)| *k == key).map(|(_, v)| v.into_owned())
        }
    };
    raw.map(|id| {
        parse_id(id.trim())
            .ok_or_else(|| ApiError::field("last_read_id", format!("{name}: last_read_id must be an id")))
    })
    .transpose()
}

/// `POST /api/v1/markers`: sets the markers the body names (at least one); answers them.
pub async fn set(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let mut marks = Vec::new();
    for timeline in Timeline::ALL {
        if let Some(id) = asked_id(input, timeline)? {
            marks.push((timeline, id));
        }
    }
    if marks.is_empty() {
        return Err(ApiError::field("home", "name home[last_read_id] or notifications[last_read_id]"));
    }
    answer(&store::set(app.user_db(viewer), viewer, &marks, app.now).await?)
}
