//! Editing one's profile (`PATCH /api/v1/accounts/update_credentials`, `DELETE
//! /api/v1/profile/{avatar,header}`). Rules: `domain/profile.rs`; rows: `store/profile.rs`.
//!
//! Everything is checked before anything is written: the parameters, then each image's type and
//! size. An image is then stored as an upload (`services/media.rs`: R2 bytes at an unguessable
//! URL, served like any attachment) and the profile's columns and its images change in one
//! batch. An upload stored by a request whose batch then fails is never the profile's: the
//! media sweep expires it like any upload never attached.

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::profile::{Image, ProfileEdit};
use crate::error::ApiResult;
use crate::services::media::{self, Upload};
use crate::services::search::index as search;
use crate::store::profile::{self as rows, NewImage};

/// What a profile edit sends: the parameters, and the bytes of each image given.
pub struct Edit<'a> {
    pub profile: ProfileEdit,
    pub avatar: Option<&'a [u8]>,
    pub header: Option<&'a [u8]>,
}

impl Edit<'_> {
    fn images(&self) -> impl Iterator<Item = (Image, &[u8])> {
        [(Image::Avatar, self.avatar), (Image::Header, self.header)]
            .into_iter()
            .filter_map(|(image, bytes)| bytes.map(|b| (image, b)))
    }
}

/// Applies an edit (see the module comment); `422` on the first invalid part, nothing changed.
pub async fn update(ctx: &Ctx, user: UserId, edit: &Edit<'_>) -> ApiResult<()> {
    for (image, bytes) in edit.images() {
        image.check(bytes)?;
    }
    let mut stored = Vec::new();
    for (image, bytes) in edit.images() {
        let row = media::upload(ctx, user, &Upload { bytes, description: "", focus: None }).await?;
        stored.push((image, row.id, row.attachment()?.path()));
    }
    let images: Vec<NewImage<'_>> =
        stored.iter().map(|(image, id, path)| NewImage { image: *image, media: *id, path }).collect();
    // The name before the edit, for the search rows it leaves (read only when it changes).
    let was = match edit.profile.display_name {
        Some(_) => crate::store::users::by_ids(&ctx.shards, &[user]).await?.into_iter().next(),
        None => None,
    };
    rows::update(ctx.user_db(user), user, &edit.profile, &images, ctx.now).await?;
    if let (Some(was), Some(name)) = (was, edit.profile.display_name.as_deref()) {
        let name = if name.is_empty() { was.handle.as_str() } else { name };
        search::account(ctx, user, &was.handle, name, Some(&was.display_name)).await;
    }
    // Unlocking lets everyone waiting in, as Mastodon does.
    if edit.profile.locked == Some(false) {
        crate::services::follows::authorize_all(ctx, user).await?;
    }
    Ok(())
}

/// Back to the default image (Mastodon answers the CredentialAccount either way).
pub async fn remove_image(ctx: &Ctx, user: UserId, image: Image) -> ApiResult<()> {
    Ok(rows::remove_image(ctx.user_db(user), user, image, ctx.now).await?)
}
