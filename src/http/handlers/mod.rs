pub mod admin;
pub mod engagement;
pub mod feed;
pub mod floors;
pub mod graph;
pub mod live;
pub mod media;
pub mod notifications;
pub mod posts;
pub mod shards;
pub mod users;

use serde::Serialize;
use worker::Response;

use super::views::Page;
use crate::domain::cursor::{page_of, CursorCodec, SortKey};
use crate::domain::ids::UserId;
use crate::error::ApiResult;

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
