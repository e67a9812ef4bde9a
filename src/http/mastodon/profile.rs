//! Profile editing: `PATCH /api/v1/accounts/update_credentials` (form, multipart with the
//! `avatar`/`header` files, or JSON) and `DELETE /api/v1/profile/{avatar,header}`; each answers
//! the CredentialAccount after it.

use worker::Response;

use super::accounts::verify_credentials;
use crate::domain::ids::UserId;
use crate::domain::profile::{Image, ProfileEdit};
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::profile::{self as service, Edit};

pub async fn update_credentials(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let (params, files) = input.params_and_files(&["avatar", "header"])?;
    let profile = ProfileEdit::parse(params.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    // An empty file part is none chosen (what a browser form sends).
    let file = |image: Image| {
        files
            .iter()
            .rev()
            .find(|(name, _)| name == image.name())
            .map(|(_, bytes)| *bytes)
            .filter(|b| !b.is_empty())
    };
    let edit = Edit { profile, avatar: file(Image::Avatar), header: file(Image::Header) };
    service::update(app, viewer, &edit).await?;
    verify_credentials(app, input, viewer).await
}

pub async fn remove_image(app: &App, input: &Input, viewer: UserId, image: Image) -> ApiResult<Response> {
    service::remove_image(app, viewer, image).await?;
    verify_credentials(app, input, viewer).await
}
