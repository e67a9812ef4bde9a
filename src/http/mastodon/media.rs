//! Mastodon's media routes: `POST /api/v1/media` and `/api/v2/media` (multipart, answered at
//! once: images need no processing here), `GET`/`PUT /api/v1/media/{id}`.

use worker::Response;

use crate::domain::ids::{MediaId, UserId};
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::uploads::{describe_upload, store_upload};
use crate::services::mastodon_entities::MediaAttachment;
use crate::services::media as service;
use crate::store::media::MediaRow;

fn entity(input: &Input, row: &MediaRow) -> ApiResult<Response> {
    super::json(&MediaAttachment::new(&input.origin, &row.attachment()?))
}

pub async fn upload(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    entity(input, &store_upload(app, input, viewer, false).await?)
}

pub async fn get(app: &App, input: &Input, viewer: UserId, id: MediaId) -> ApiResult<Response> {
    entity(input, &service::own(app, viewer, id).await?)
}

pub async fn describe(app: &App, input: &Input, viewer: UserId, id: MediaId) -> ApiResult<Response> {
    entity(input, &describe_upload(app, input, viewer, id).await?)
}
