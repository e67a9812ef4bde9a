//! Bookmarks and favourites: `POST /api/v1/statuses/{id}/bookmark|unbookmark`,
//! `GET /api/v1/bookmarks` and `GET /api/v1/favourites` (`services/saved.rs`).

use worker::Response;

use super::{list, statuses, statuses_of};
use crate::domain::ids::{PostId, UserId};
use crate::domain::mastodon::{kept_params, limit};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::saved::{self, Saved};
use crate::store::posts::PostRow;

/// Bookmark / unbookmark (idempotent): the status after it. Bookmarks hold posts: a reply
/// (a comment) is refused with 422, not dropped; a status the viewer may not see is 404.
pub async fn bookmark(app: &App, input: &Input, viewer: UserId, id: PostId, on: bool) -> ApiResult<Response> {
    match saved::set_bookmark(app, viewer, id, on).await {
        Ok(post) => super::json(&statuses_of(app, input, viewer, &[post]).await?.first()),
        Err(ApiError::NotFound(_)) if statuses::is_reply(app, viewer, id).await? => {
            Err(ApiError::field("id", "replies cannot be bookmarked: bookmarks hold posts"))
        }
        Err(e) => Err(e),
    }
}

/// `GET /api/v1/bookmarks` and `/api/v1/favourites`: newest bookmark (like) first, only what
/// the viewer may see now. `Link` `next` carries the list's signed cursor in `max_id` (the
/// rows have no ids of their own), keeping `limit`.
pub async fn list_of(app: &App, input: &Input, viewer: UserId, which: Saved) -> ApiResult<Response> {
    let limit = limit(input.query("limit"));
    let cursor_list = format!("mastodon:{}", which.name());
    let before = input.cursor_named("max_id", &app.cursors, viewer, &cursor_list)?;
    let page = saved::page(app, viewer, which, before, limit).await?;
    let rows: Vec<PostRow> = page.items.into_iter().map(|(post, _)| post).collect();
    let items = statuses_of(app, input, viewer, &rows).await?;
    let kept = kept_params(input.query("limit"));
    let link = page.next.map(|key| {
        let cursor = app.cursors.encode(viewer, &cursor_list, key);
        let sep = if kept.is_empty() { String::new() } else { format!("&{kept}") };
        format!("<{}/api/v1/{}?max_id={cursor}{sep}>; rel=\"next\"", input.origin, which.name())
    });
    list(&items, link)
}
