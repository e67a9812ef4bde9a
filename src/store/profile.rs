//! A user's profile (migration 0036): the columns of `users` they edit, and the uploads that are
//! their avatar and header (`media.profile`), all on their home database, changed in one batch.
//! An image's `users` column is named by `Image::name` (a constant, never input).

use crate::store::SqlStatement;
use wasm_bindgen::JsValue;

use super::{batch, int, opt_flag, opt_text, stmt, text, StoreResult, UserDb};
use crate::domain::ids::{MediaId, UserId};
use crate::domain::profile::{Image, ProfileEdit};

/// An upload becoming a profile image: its id and served path.
pub struct NewImage<'a> {
    pub image: Image,
    pub media: MediaId,
    pub path: &'a str,
}

/// The statements that make `new` the user's image: the one it replaces is marked gone (the
/// sweep removes its bytes), the upload is marked as the profile's (never expired, never
/// attached to a post), and the user's row points at it.
fn image_statements(
    db: UserDb<'_>,
    user: UserId,
    new: &NewImage<'_>,
    now: i64,
) -> StoreResult<Vec<SqlStatement>> {
    let kind = new.image.name();
    Ok(vec![
        stmt(
            db,
            "UPDATE media SET gone_at = ?4 WHERE user_id = ?1 AND profile = ?2 AND gone_at IS NULL AND id <> ?3",
            &[int(user), text(kind), int(new.media), int(now)],
        )?,
        stmt(
            db,
            "UPDATE media SET profile = ?2 WHERE id = ?3 AND user_id = ?1 AND post_id IS NULL",
            &[int(user), text(kind), int(new.media)],
        )?,
        stmt(
            db,
            &format!("UPDATE users SET {} = ?2 WHERE id = ?1", new.image.name()),
            &[int(user), text(new.path)],
        )?,
    ])
}

/// The text and flags of an edit, each `NULL` to keep (`?5` says whether `fields` is given,
/// `?12` whether `post_language` is; `?13`: `indexable`).
fn columns_statement(db: UserDb<'_>, user: UserId, edit: &ProfileEdit) -> StoreResult<SqlStatement> {
    let fields = edit.fields.as_ref().map(|f| serde_json::to_string(f).unwrap_or_else(|_| "[]".into()));
    let params: [JsValue; 13] = [
        int(user),
        opt_text(edit.display_name.as_deref()),
        opt_text(edit.note.as_deref()),
        opt_text(fields.as_deref()),
        int(i64::from(edit.fields.is_some())),
        opt_flag(edit.locked),
        opt_flag(edit.bot),
        opt_flag(edit.discoverable),
        opt_text(edit.privacy.map(|p| p.name())),
        opt_flag(edit.sensitive),
        opt_text(edit.language.clone().flatten().as_deref()),
        int(i64::from(edit.language.is_some())),
        opt_flag(edit.indexable),
    ];
    stmt(
        db,
        "UPDATE users SET \
           display_name = CASE WHEN ?2 = '' THEN handle ELSE COALESCE(?2, display_name) END, \
           note = COALESCE(?3, note), \
           fields = CASE WHEN ?5 = 1 THEN ?4 ELSE fields END, \
           locked = COALESCE(?6, locked), bot = COALESCE(?7, bot), \
           discoverable = COALESCE(?8, discoverable), indexable = COALESCE(?13, indexable), \
           post_privacy = COALESCE(?9, post_privacy), post_sensitive = COALESCE(?10, post_sensitive), \
           post_language = CASE WHEN ?12 = 1 THEN ?11 ELSE post_language END \
         WHERE id = ?1",
        &params,
    )
}

/// Applies an edit and any new images in one batch (all or nothing).
pub async fn update(
    db: UserDb<'_>,
    user: UserId,
    edit: &ProfileEdit,
    images: &[NewImage<'_>],
    now: i64,
) -> StoreResult<()> {
    let mut statements = vec![columns_statement(db, user, edit)?];
    for image in images {
        statements.extend(image_statements(db, user, image, now)?);
    }
    batch(db, statements).await.map(drop)
}

/// Back to the default image: the row forgets it, the upload is marked gone.
pub async fn remove_image(db: UserDb<'_>, user: UserId, image: Image, now: i64) -> StoreResult<()> {
    let statements = vec![
        stmt(
            db,
            "UPDATE media SET gone_at = ?3 WHERE user_id = ?1 AND profile = ?2 AND gone_at IS NULL",
            &[int(user), text(image.name()), int(now)],
        )?,
        stmt(db, &format!("UPDATE users SET {} = NULL WHERE id = ?1", image.name()), &[int(user)])?,
    ];
    batch(db, statements).await.map(drop)
}
