//! Uploads on `/v1` (`POST /v1/media`, `GET`/`PUT /v1/media/{id}`) and the bytes of every upload
//! (`GET /media/{id}-{key}.{ext}`, for both APIs and the web client).

use worker::Response;

use super::json;
use crate::domain::ids::{MediaId, UserId};
use crate::domain::media::ServedFile;
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::uploads::{describe_upload, store_upload};
use crate::http::views::MediaView;
use crate::services::media as service;
use crate::store::media::MediaRow;

fn view(row: &MediaRow) -> ApiResult<MediaView> {
    Ok(MediaView::from(&row.attachment()?))
}

/// An upload: a multipart form's `file` (with `description`, `focus`), or the body itself (with
/// them in the query); `201` with the upload, to name in a post's `media_ids`.
pub async fn upload(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let row = store_upload(app, input, viewer, true).await?;
    json(201, &view(&row)?)
}

pub async fn get(app: &App, viewer: UserId, id: MediaId) -> ApiResult<Response> {
    json(200, &view(&service::own(app, viewer, id).await?)?)
}

/// `PUT /v1/media/{id}` `{"description", "focus"}`: before the upload is attached (404 after).
pub async fn describe(app: &App, input: &Input, viewer: UserId, id: MediaId) -> ApiResult<Response> {
    json(200, &view(&describe_upload(app, input, viewer, id).await?)?)
}

/// The bytes, with their sniffed type, `nosniff` (set for every answer) and a year's caching:
/// a URL's bytes never change. A sandboxing CSP keeps a browser from running anything in them.
pub async fn serve(app: &App, file: ServedFile) -> ApiResult<Response> {
    let served = service::serve(app, MediaId::from_trusted(file.id), &file.key()).await?;
    let mut response = Response::from_body(served.body)?;
    let headers = response.headers_mut();
    headers.set("content-type", served.content_type)?;
    headers.set("content-length", &served.size.to_string())?;
    headers.set("cache-control", "public, max-age=31536000, immutable")?;
    headers.set("content-security-policy", "default-src 'none'; sandbox")?;
    Ok(response)
}
