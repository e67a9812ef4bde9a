use serde::Serialize;
use worker::Response;

use super::json;
use crate::domain::validate;
use crate::error::{ApiError, ApiResult};
use crate::feed::{self, FeedQuery, FeedState};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::views::PostView;

#[derive(Serialize)]
struct FeedResponse {
    items: Vec<PostView>,
    next_cursor: Option<String>,
    newest_cursor: String,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    gap: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    empty_reason: Option<&'static str>,
}

pub async fn read(app: &App, input: &Input, viewer: i64) -> ApiResult<Response> {
    let limit = input.limit()?;
    let group =
        input.query("group").map(validate::group).transpose().map_err(|m| ApiError::field("group", m))?;
    // Cursors are bound to the list they page: the home feed, or one group's feed.
    let list = match &group {
        Some(g) => format!("feed:group={g}"),
        None => "feed".to_string(),
    };
    let decode = |name: &str| input.query(name).map(|c| app.cursors.decode(viewer, &list, c)).transpose();
    let (before, after) = (decode("cursor")?, decode("after")?);
    if before.is_some() && after.is_some() {
        return Err(ApiError::field("after", "give either cursor or after, not both"));
    }
    let page = feed::read(app, &FeedQuery { viewer, limit, before, after, group }).await?;
    let encode = |k| app.cursors.encode(viewer, &list, k);
    json(
        200,
        &FeedResponse {
            items: page.items.iter().map(PostView::from).collect(),
            next_cursor: page.next.map(encode),
            newest_cursor: encode(page.newest),
            state: match page.state {
                FeedState::Ok => "ok",
                FeedState::Rebuilding => "rebuilding",
            },
            gap: page.gap,
            empty_reason: page.empty_reason,
        },
    )
}
