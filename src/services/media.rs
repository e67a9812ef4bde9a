//! Media attachments: upload (bytes to R2, the row to D1), describe, check what a status
//! attaches, serve the bytes, and the cron's sweep. Rules (what an image is, sizes, paths):
//! `domain/media.rs`; rows: `store/media.rs`.

use serde::Serialize;
use worker::{Bucket, HttpMetadata};

use crate::context::{id_seed, random_bytes, Ctx};
use crate::domain::ids::{MediaId, UserId};
use crate::domain::media::{self, object_key, Attachment, Focus};
use crate::error::{ApiError, ApiResult};
use crate::store::media::{self as rows, MediaRow, NewUpload};
use crate::store::AnyDb;

/// The R2 bucket binding (wrangler.toml `[[r2_buckets]]`).
const BUCKET: &str = "MEDIA";
/// Uploads whose bytes one share's sweep removes (one R2 call for all of them).
const SWEEP_PER_PASS: usize = 100;
/// How long an upload stays gone before its bytes and row are removed: longer than any request
/// that checked it before it went (so none can attach bytes removed under it; the trigger of
/// migration 0027 refuses attaching a gone upload).
const GONE_GRACE_MS: i64 = 10 * 60_000;

fn bucket(ctx: &Ctx) -> ApiResult<Bucket> {
    ctx.env.bucket(BUCKET).map_err(|e| ApiError::Misconfigured(format!("R2 binding {BUCKET}: {e}")))
}

fn r2_error(e: worker::Error) -> ApiError {
    ApiError::Internal(format!("R2: {e}"))
}

/// What an upload asks for.
pub struct Upload<'a> {
    pub bytes: &'a [u8],
    pub description: &'a str,
    pub focus: Option<Focus>,
}

/// Stores an upload: the row first (so bytes never exist without a row the sweep can find: a
/// crash before the bytes leaves a row that is never served and expires), then the bytes.
pub async fn upload(ctx: &Ctx, user: UserId, upload: &Upload<'_>) -> ApiResult<MediaRow> {
    let image = media::sniff(upload.bytes)?;
    let description = media::description(upload.description)?;
    let url_key = media::key_of(random_bytes::<16>()?);
    let new = NewUpload {
        user,
        url_key: &url_key,
        image,
        size: upload.bytes.len() as u64,
        description: &description,
        focus: upload.focus,
        now: ctx.now,
    };
    let db = ctx.user_db(user);
    let id = rows::insert(db, &new, id_seed()?).await?;
    let metadata = HttpMetadata { content_type: Some(image.kind.mime().into()), ..Default::default() };
    bucket(ctx)?
        .put(object_key(id.get()), upload.bytes.to_vec())
        .http_metadata(metadata)
        .execute()
        .await
        .map_err(r2_error)?;
    own(ctx, user, id).await
}

/// The viewer's own upload, or 404 exactly like one that does not exist.
pub async fn own(ctx: &Ctx, user: UserId, id: MediaId) -> ApiResult<MediaRow> {
    match rows::get(ctx.media_db(id), id).await? {
        Some(row) if row.user_id == user && row.servable() => Ok(row),
        _ => Err(ApiError::NotFound("no such media")),
    }
}

/// Sets an unattached upload's description and focus; Mastodon answers 404 once it is attached
/// (a status's attachments are fixed with it).
pub async fn describe(
    ctx: &Ctx,
    user: UserId,
    id: MediaId,
    description: Option<&str>,
    focus: Option<Focus>,
) -> ApiResult<MediaRow> {
    let description = description.map(media::description).transpose()?;
    if !rows::describe(ctx.media_db(id), (user, id), description.as_deref(), focus).await? {
        return Err(ApiError::NotFound("no such unattached media"));
    }
    own(ctx, user, id).await
}

/// The attachments a new status names (`ids` from `domain::media::media_ids`), in order: each
/// an upload of the author's, not attached, not gone, not waiting for a scheduled post other
/// than `scheduled` (the one publishing). Anything else is a 422 on `media_ids`, before
/// anything changes.
pub async fn for_post(
    ctx: &Ctx,
    author: UserId,
    ids: &[i64],
    scheduled: Option<i64>,
) -> ApiResult<Vec<Attachment>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let found = rows::of_user(ctx.user_db(author), author, ids).await?;
    ids.iter()
        .map(|id| {
            let row = found.iter().find(|r| r.id.get() == *id);
            match row {
                Some(row)
                    if row.post_id.is_none()
                        && row.profile.is_none()
                        && (row.scheduled_id.is_none() || row.scheduled_id == scheduled)
                        && row.servable() =>
                {
                    Ok(row.attachment()?)
                }
                Some(_) => Err(ApiError::field(
                    "media_ids",
                    format!("media_ids: media {id} is already attached or expired"),
                )),
                None => {
                    Err(ApiError::field("media_ids", format!("media_ids: no upload of yours has id {id}")))
                }
            }
        })
        .collect()
}

/// What a served path gets: the bytes' type and body.
pub struct Served {
    pub content_type: &'static str,
    pub size: u64,
    pub body: worker::ResponseBody,
}

/// The bytes at `/media/{id}/{key}.{ext}`, if the key is the upload's and it may be served now
/// (its post live and not taken down, its uploader not suspended); else 404, the same whatever
/// the reason.
pub async fn serve(ctx: &Ctx, id: MediaId, key: &str) -> ApiResult<Served> {
    let missing = || ApiError::NotFound("no such media");
    let row = rows::get(ctx.media_db(id), id).await?.ok_or_else(missing)?;
    if !crate::domain::sign::constant_time_eq(row.url_key.as_bytes(), key.as_bytes()) || !row.servable() {
        return Err(missing());
    }
    let object =
        bucket(ctx)?.get(object_key(id.get())).execute().await.map_err(r2_error)?.ok_or_else(missing)?;
    let body = object.body().ok_or_else(missing)?.response_body().map_err(r2_error)?;
    Ok(Served { content_type: row.kind()?.mime(), size: object.size(), body })
}

/// Whether an upload's bytes exist in R2 (the test hook's view of the sweep).
pub async fn stored(ctx: &Ctx, id: MediaId) -> ApiResult<bool> {
    Ok(bucket(ctx)?.head(object_key(id.get())).await.map_err(r2_error)?.is_some())
}

/// One sweep of a database's uploads: those never attached in time are marked gone; those gone
/// for a while lose their bytes, then their rows (a crash between the two leaves the row, and
/// the next sweep removes the bytes again: deleting is idempotent).
#[derive(Debug, Default, Serialize)]
pub struct MediaSweep {
    pub expired: usize,
    pub removed: usize,
}

pub async fn sweep(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<MediaSweep> {
    let unattached_before = ctx.now - ctx.config.media_unattached_ms;
    let expired = rows::expire_unattached(db, unattached_before, ctx.now, SWEEP_PER_PASS).await?;
    let grace = GONE_GRACE_MS.min(ctx.config.media_unattached_ms);
    let gone = rows::gone_page(db, ctx.now - grace, SWEEP_PER_PASS).await?;
    if gone.is_empty() {
        return Ok(MediaSweep { expired, removed: 0 });
    }
    let keys: Vec<String> = gone.iter().map(|id| object_key(id.get())).collect();
    bucket(ctx)?.delete_multiple(keys).await.map_err(r2_error)?;
    let removed = rows::forget(db, &gone).await?;
    Ok(MediaSweep { expired, removed })
}
