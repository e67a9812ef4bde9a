pub mod admin;
pub mod engagement;
pub mod feed;
pub mod graph;
pub mod live;
pub mod notifications;
pub mod posts;
pub mod shards;
pub mod users;

use serde::Serialize;
use worker::Response;

use super::app::App;
use super::views::Page;
use crate::domain::cursor::{page_of, CursorCodec, SortKey};
use crate::domain::ids::{PostId, UserId};
use crate::error::{ApiError, ApiResult};
use crate::store::posts::{get_visible, PostRow};

pub fn json<T: Serialize>(status: u16, value: &T) -> ApiResult<Response> {
    Ok(Response::from_json(value)?.with_status(status))
}

/// Turns `limit + 1` fetched rows into a page with a signed cursor bound to viewer and list.
pub fn page<T, V>(
    rows: Vec<T>,
    limit: usize,
    key_of: impl Fn(&T) -> SortKey,
    view: impl Fn(&T) -> V,
    codec: &CursorCodec,
    viewer: UserId,
    list: &str,
) -> Page<V> {
    let (rows, last) = page_of(rows, limit, key_of);
    Page { items: rows.iter().map(view).collect(), next_cursor: last.map(|k| codec.encode(viewer, list, k)) }
}

/// A post the viewer may see now, or 404 exactly like one that does not exist.
pub async fn visible_post(app: &App, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    get_visible(app.post_db(id), viewer, id).await?.ok_or(ApiError::NotFound("no such post"))
}

/// A post the viewer may see and act on now (comment, edit): a taken-down post, which only its
/// author still sees, is refused with 409 `taken_down`.
pub async fn open_post(app: &App, viewer: UserId, id: PostId) -> ApiResult<PostRow> {
    let post = visible_post(app, viewer, id).await?;
    if post.is_taken_down() {
        return Err(ApiError::Conflict {
            code: "taken_down",
            detail: "this post was taken down by a moderator",
        });
    }
    Ok(post)
}
