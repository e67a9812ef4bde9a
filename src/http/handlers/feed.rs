use serde::Serialize;
use worker::Response;

use super::json;
use crate::domain::feed::{EmptyReason, FeedState};
use crate::domain::ids::UserId;
use crate::domain::validate::GroupName;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::views::PostView;
use crate::services::feed::{self, FeedQuery, FeedScope};

#[derive(Serialize)]
struct FeedResponse {
    items: Vec<PostView>,
    next_cursor: Option<String>,
    newest_cursor: String,
    state: FeedState,
    #[serde(skip_serializing_if = "Option::is_none")]
    gap: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    empty_reason: Option<EmptyReason>,
    /// Only when a database was unavailable: whose posts this page left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    unavailable: Option<Unavailable>,
}

#[derive(Serialize)]
struct Unavailable {
    authors: Vec<String>,
}

pub async fn read(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let limit = input.limit()?;
    let group = input.query_as("group", GroupName::parse)?;
    // Cursors are bound to the list they page: the home feed, or one group's feed.
    let list = group.as_ref().map_or_else(|| "feed".to_string(), |g| format!("feed:group={g}"));
    let (before, below_floor) = input.cursor_below_floor(&app.cursors, viewer, &list)?.unzip();
    let after = input.cursor_named("after", &app.cursors, viewer, &list)?;
    if before.is_some() && after.is_some() {
        return Err(ApiError::field("after", "give either cursor or after, not both"));
    }
    let scope = group.map_or(FeedScope::Home, FeedScope::Group);
    let below_floor = below_floor.unwrap_or(false);
    let page =
        feed::read(app, &FeedQuery { viewer, limit, before, below_floor, after, scope, filters: None })
            .await?;
    let encode = |k, below_floor| app.cursors.encode_below_floor(viewer, &list, k, below_floor);
    json(
        200,
        &FeedResponse {
            items: page.items.iter().map(PostView::from).collect(),
            next_cursor: page.next.map(|k| encode(k, page.next_below_floor)),
            newest_cursor: encode(page.newest, false),
            state: page.state,
            gap: page.gap,
            empty_reason: page.empty_reason,
            unavailable: (!page.unavailable.is_empty())
                .then(|| Unavailable { authors: page.unavailable.iter().map(UserId::to_string).collect() }),
        },
    )
}
