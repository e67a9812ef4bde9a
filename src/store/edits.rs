//! A post's earlier versions (migration 0038, `post_edits`, on the post's database): archived by
//! the edit's own batch, read for Mastodon's `history`.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::{all, int, opt_flag, opt_text, stmt, AnyDb, PostDb, StoreResult};
use crate::domain::edit::PostEdit;
use crate::domain::ids::{PostId, UserId};
use crate::domain::validate::PostBody;

/// Before an edit's update, in its batch: the version it replaces, as the next `seq`, when the
/// edit changes what the post shows (its text, its content warning, whether it is sensitive, as
/// `store/posts.rs::warning_edit` computes it). A retry of an applied edit changes nothing and
/// so archives nothing; the row is decided inside the transaction, so concurrent edits each
/// archive the version they really replaced.
pub fn archive_statement(
    db: PostDb<'_>,
    post: PostId,
    edit: &PostEdit,
    now: i64,
) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "INSERT OR IGNORE INTO post_edits (post_id, seq, body, spoiler_text, sensitive, replaced_at) \
         SELECT p.id, COALESCE((SELECT MAX(e.seq) FROM post_edits e WHERE e.post_id = p.id), 0) + 1, \
                p.body, p.spoiler_text, p.sensitive, ?3 \
         FROM posts p WHERE p.id = ?1 AND p.deleted_at IS NULL \
           AND (p.body <> COALESCE(?2, p.body) OR p.spoiler_text <> COALESCE(?4, p.spoiler_text) \
             OR p.sensitive <> (COALESCE(?5, p.sensitive) OR COALESCE(?4, p.spoiler_text) <> ''))",
        &[
            int(post),
            opt_text(edit.text.as_ref().map(PostBody::as_str)),
            int(now),
            opt_text(edit.warning.spoiler_text.as_deref()),
            opt_flag(edit.warning.sensitive),
        ],
    )
}

/// One earlier version of a post.
#[derive(Debug, Clone, Deserialize)]
pub struct Version {
    pub body: String,
    pub spoiler_text: String,
    sensitive: i64,
    pub replaced_at: i64,
}

impl Version {
    pub fn is_sensitive(&self) -> bool {
        self.sensitive != 0
    }
}

/// Most versions a history lists (the oldest ones; Mastodon keeps every one, but a post edited
/// more often than this is not a case to read whole).
pub const MAX_VERSIONS: usize = 100;

/// A post's earlier versions, oldest first.
pub async fn versions(db: PostDb<'_>, post: PostId) -> StoreResult<Vec<Version>> {
    all(
        db,
        "SELECT body, spoiler_text, sensitive, replaced_at FROM post_edits WHERE post_id = ?1 \
         ORDER BY seq LIMIT ?2",
        &[int(post), int(MAX_VERSIONS as i64)],
    )
    .await
}

#[derive(Deserialize)]
struct Booster {
    booster_id: UserId,
}

/// Boosters told of an edit (the newest boosts' first; see docs/mastodon.md).
pub const BOOSTERS_TOLD: i64 = 200;

/// Who boosts the post now (the original's `reblogs` mirror), at most [`BOOSTERS_TOLD`].
pub async fn boosters(db: PostDb<'_>, post: PostId) -> StoreResult<Vec<UserId>> {
    let rows: Vec<Booster> = all(
        db,
        "SELECT DISTINCT booster_id FROM reblogs WHERE post_id = ?1 AND active = 1 \
         ORDER BY created_at DESC LIMIT ?2",
        &[int(post), int(BOOSTERS_TOLD)],
    )
    .await?;
    Ok(rows.into_iter().map(|b| b.booster_id).collect())
}

/// On one database: the `update` notification of `post`'s edit by `author` for those of the
/// boosters whose home it is; an earlier one of the same post gives way to it (one per post).
pub async fn tell_boosters(
    db: AnyDb<'_>,
    boosters: &[UserId],
    (post, author): (PostId, UserId),
    now: i64,
) -> StoreResult<()> {
    let mut statements = Vec::with_capacity(boosters.len() * 2);
    for &b in boosters {
        statements.extend(super::notifications::on_update(db, b, (post, author), now)?);
    }
    super::batch(db, statements).await.map(|_| ())
}
