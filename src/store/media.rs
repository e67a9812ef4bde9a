//! Uploads (`media`, migration 0027): their rows on the uploader's database, attaching them in a
//! publish batch, marking them gone in a delete batch, and the sweep's pages. The bytes are R2's
//! (`services/media.rs`).

use crate::store::SqlStatement;
use serde::Deserialize;

use super::snowflake::insert_with_fresh_id;
use super::{all, batch, first, id_list, int, opt_int, opt_num, opt_text, run, stmt, text, AnyDb, UserDb};
use super::{StoreError, StoreResult};
use crate::domain::ids::{MediaId, PostId, UserId};
use crate::domain::media::{Attachment, Focus, ImageInfo, ImageKind};
use crate::domain::snowflake::{shard_of_id, IdSeed};

/// An upload as its row holds it, with the state of the post it is attached to.
#[derive(Debug, Clone, Deserialize)]
pub struct MediaRow {
    pub id: MediaId,
    pub user_id: UserId,
    pub url_key: String,
    kind: String,
    pub width: u32,
    pub height: u32,
    pub size: u64,
    pub description: String,
    focus_x: Option<f64>,
    focus_y: Option<f64>,
    pub created_at: i64,
    pub post_id: Option<PostId>,
    /// `avatar` or `header` while it is its uploader's profile image (migration 0036).
    #[serde(default)]
    pub profile: Option<String>,
    /// The scheduled post it waits for (migration 0043).
    #[serde(default)]
    pub scheduled_id: Option<i64>,
    /// 1 while the post it is attached to is live and not taken down (0 without a post).
    post_live: i64,
    uploader_suspended: i64,
    gone: i64,
}

const COLUMNS: &str = "m.id, m.user_id, m.url_key, m.kind, m.width, m.height, m.size, m.description, \
     m.focus_x, m.focus_y, m.created_at, m.post_id, m.profile, m.scheduled_id, \
     COALESCE(p.deleted_at IS NULL AND p.taken_down_at IS NULL, 0) AS post_live, \
     COALESCE(u.suspended_at IS NOT NULL, 0) AS uploader_suspended, m.gone_at IS NOT NULL AS gone \
     FROM media m LEFT JOIN posts p ON p.id = m.post_id LEFT JOIN users u ON u.id = m.user_id";

impl MediaRow {
    pub fn kind(&self) -> StoreResult<ImageKind> {
        ImageKind::from_name(&self.kind)
            .ok_or_else(|| StoreError::Internal(format!("media {} has kind {}", self.id, self.kind)))
    }

    pub fn focus(&self) -> Option<Focus> {
        Some(Focus { x: self.focus_x?, y: self.focus_y? })
    }

    /// Whether its bytes may be served now (`domain::media::servable`), and it is not gone.
    pub fn servable(&self) -> bool {
        self.gone == 0
            && crate::domain::media::servable(self.post_id, self.post_live != 0, self.uploader_suspended != 0)
    }

    /// As a post keeps it.
    pub fn attachment(&self) -> StoreResult<Attachment> {
        Ok(Attachment {
            id: self.id.get(),
            key: self.url_key.clone(),
            kind: self.kind()?,
            width: self.width,
            height: self.height,
            size: self.size,
            description: self.description.clone(),
            focus: self.focus(),
        })
    }
}

/// What an upload starts with.
pub struct NewUpload<'a> {
    pub user: UserId,
    pub url_key: &'a str,
    pub image: ImageInfo,
    pub size: u64,
    pub description: &'a str,
    pub focus: Option<Focus>,
    pub now: i64,
}

/// Inserts the upload's row under a fresh id on its uploader's shard; its id.
pub async fn insert(db: UserDb<'_>, upload: &NewUpload<'_>, seed: IdSeed) -> StoreResult<MediaId> {
    let shard = shard_of_id(upload.user.get());
    let insert = |id: i64| async move {
        let statement = stmt(
            db,
            "INSERT INTO media (id, user_id, url_key, kind, width, height, size, description, focus_x, focus_y, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            &[
                int(id),
                int(upload.user),
                text(upload.url_key),
                text(upload.image.kind.name()),
                int(upload.image.width),
                int(upload.image.height),
                int(upload.size as i64),
                text(upload.description),
                opt_num(upload.focus.map(|f| f.x)),
                opt_num(upload.focus.map(|f| f.y)),
                int(upload.now),
            ],
        )?;
        batch(db, vec![statement]).await.map(|_| MediaId::from_trusted(id))
    };
    insert_with_fresh_id(seed, upload.now, shard, "media.id", insert).await
}

/// An upload by its id, with its post's state; `None` if there is no such row.
pub async fn get(db: UserDb<'_>, id: MediaId) -> StoreResult<Option<MediaRow>> {
    first(db, &format!("SELECT {COLUMNS} WHERE m.id = ?1"), &[int(id)]).await
}

/// The uploads among `ids` that `user` made, in no order.
pub async fn of_user(db: UserDb<'_>, user: UserId, ids: &[i64]) -> StoreResult<Vec<MediaRow>> {
    all(
        db,
        &format!("SELECT {COLUMNS} WHERE m.id IN (SELECT value FROM json_each(?2)) AND m.user_id = ?1"),
        &[int(user), text(&id_list(ids))],
    )
    .await
}

/// Sets an unattached upload's description and focus (a `None` keeps it); false when `user` has
/// no such unattached upload (Mastodon: an attachment is described before posting).
pub async fn describe(
    db: UserDb<'_>,
    (user, id): (UserId, MediaId),
    description: Option<&str>,
    focus: Option<Focus>,
) -> StoreResult<bool> {
    let changed = run(
        db,
        "UPDATE media SET description = COALESCE(?3, description), \
           focus_x = COALESCE(?4, focus_x), focus_y = COALESCE(?5, focus_y) \
         WHERE id = ?2 AND user_id = ?1 AND post_id IS NULL AND gone_at IS NULL",
        &[
            int(user),
            int(id),
            opt_text(description),
            opt_num(focus.map(|f| f.x)),
            opt_num(focus.map(|f| f.y)),
        ],
    )
    .await?;
    Ok(changed > 0)
}

/// The publish batch's statements that attach `media` to post `post` (the triggers of
/// migrations 0027 and 0043 abort the batch if one is already another post's, gone, or waiting
/// for a scheduled post other than `scheduled`, the one publishing:
/// [`super::error::Conflict::MediaAttached`]).
pub fn attach_statements(
    db: UserDb<'_>,
    (post, scheduled): (i64, Option<i64>),
    author: UserId,
    media: &[Attachment],
) -> StoreResult<Vec<SqlStatement>> {
    media
        .iter()
        .map(|a| {
            stmt(
                db,
                "UPDATE media SET post_id = ?1, \
                   scheduled_id = CASE WHEN scheduled_id = ?4 THEN NULL ELSE scheduled_id END \
                 WHERE id = ?2 AND user_id = ?3",
                &[int(post), int(a.id), int(author), opt_int(scheduled)],
            )
        })
        .collect()
}

/// The delete batch's statement: the post's uploads are gone (no longer served; the sweep
/// removes their bytes).
pub fn gone_statement(db: AnyDb<'_>, post: PostId, now: i64) -> StoreResult<SqlStatement> {
    stmt(db, "UPDATE media SET gone_at = ?2 WHERE post_id = ?1 AND gone_at IS NULL", &[int(post), int(now)])
}

/// Marks up to `limit` uploads never attached and created before `unattached_before` as gone
/// (no longer served, never attachable); how many. One waiting for a scheduled post is left
/// alone however old (its post attaches it, or its cancel lets it go).
pub async fn expire_unattached(
    db: AnyDb<'_>,
    unattached_before: i64,
    now: i64,
    limit: usize,
) -> StoreResult<usize> {
    run(
        db,
        "UPDATE media SET gone_at = ?2 WHERE id IN (SELECT id FROM media \
           WHERE post_id IS NULL AND profile IS NULL AND scheduled_id IS NULL AND created_at < ?1 \
             AND gone_at IS NULL LIMIT ?3)",
        &[int(unattached_before), int(now), int(limit as i64)],
    )
    .await
}

#[derive(Deserialize)]
struct SweepRow {
    id: MediaId,
}

/// Up to `limit` uploads gone before `gone_before`: their bytes are to be removed.
pub async fn gone_page(db: AnyDb<'_>, gone_before: i64, limit: usize) -> StoreResult<Vec<MediaId>> {
    let rows: Vec<SweepRow> = all(
        db,
        "SELECT id FROM media WHERE gone_at IS NOT NULL AND gone_at < ?1 LIMIT ?2",
        &[int(gone_before), int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Deletes the rows of gone uploads whose bytes were removed.
pub async fn forget(db: AnyDb<'_>, ids: &[MediaId]) -> StoreResult<usize> {
    run(
        db,
        "DELETE FROM media WHERE id IN (SELECT value FROM json_each(?1)) AND gone_at IS NOT NULL",
        &[text(&id_list(ids))],
    )
    .await
}
