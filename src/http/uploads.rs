//! What both APIs' media routes parse (`http/handlers/media.rs`, `http/mastodon/media.rs`):
//! an upload's parts and a describe's fields, each then one service call.

use crate::domain::ids::{MediaId, UserId};
use crate::domain::media::Focus;
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::media::{self as service, Upload};
use crate::store::media::MediaRow;

/// What both APIs' uploads do: parse, then one service call.
pub async fn store_upload(
    app: &App,
    input: &Input,
    viewer: UserId,
    raw_allowed: bool,
) -> ApiResult<MediaRow> {
    let upload = input.upload(raw_allowed)?;
    let focus = upload.focus.as_deref().filter(|f| !f.trim().is_empty()).map(Focus::parse).transpose()?;
    let description = upload.description.as_deref().unwrap_or("");
    service::upload(app, viewer, &Upload { bytes: upload.file, description, focus }).await
}

/// What both APIs' describes do.
pub async fn describe_upload(app: &App, input: &Input, viewer: UserId, id: MediaId) -> ApiResult<MediaRow> {
    let body = input.form_or_json(false)?;
    let focus = body.string("focus")?.filter(|f| !f.trim().is_empty()).map(Focus::parse).transpose()?;
    service::describe(app, viewer, id, body.string("description")?, focus).await
}

/// The uploads a status names (`media_ids`, `media_ids[]`: `domain::media::media_ids`).
pub fn media_ids(input: &Input) -> ApiResult<Vec<i64>> {
    let given = input.values_of("media_ids")?;
    Ok(crate::domain::media::media_ids(given.iter().map(String::as_str))?)
}

/// An edit's `media_ids` (`given`): apps repeat a post's own attachments on every edit, which is
/// accepted; a different set is refused (attachments are fixed with the post), never dropped.
pub fn keeps_attachments(given: &[i64], post: &crate::store::posts::PostRow) -> ApiResult<()> {
    let current: Vec<i64> = post.attachments().iter().map(|a| a.id).collect();
    if given.is_empty() || given == current {
        return Ok(());
    }
    Err(crate::error::ApiError::field("media_ids", "an edit cannot change a post's attachments"))
}
