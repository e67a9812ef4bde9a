//! Boosts (migration 0029): the booster's own row is a post (`posts.reblog_of`, on the
//! booster's database, written by `store/posts.rs::publish` and `delete`); here are its reads
//! there, and the original's side, `reblogs`, on the ORIGINAL's database: the mirror that
//! counts boosts, lists boosters and tells the feed which of a reader's sources boosted a post.

use std::collections::HashSet;

use crate::store::SqlStatement;
use serde::Deserialize;

use super::graph::shown_user_page;
use super::posts::{self, post_select, PostRow};
use super::shards::Shards;
use super::users::UserRow;
use super::{
    all, batch, first, id_list, int, notifications, stmt, text, AnyDb, EdgeKey, PostDb, StoreResult, UserDb,
};
use crate::domain::boosts::BoostMirror;
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};
use crate::domain::notifications::Notice;

/// The booster's live boost of `original`, as the booster sees it (one at most: the partial
/// unique index `posts_one_boost`).
pub async fn live_boost(db: UserDb<'_>, booster: UserId, original: PostId) -> StoreResult<Option<PostRow>> {
    let sql =
        format!("{} WHERE p.author_id = ?1 AND p.reblog_of = ?2 AND p.deleted_at IS NULL", post_select());
    first(db, &sql, &[int(booster), int(original)]).await
}

#[derive(Deserialize)]
struct Reblogged {
    reblog_of: PostId,
}

/// Which of `ids` the viewer boosts now: one statement on the viewer's home (their boosts are
/// their posts), beside a page's other marks; none for no ids.
pub async fn reblogged_among(db: UserDb<'_>, viewer: UserId, ids: &[PostId]) -> StoreResult<HashSet<PostId>> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let rows: Vec<Reblogged> = all(
        db,
        "SELECT reblog_of FROM posts WHERE author_id = ?1 AND deleted_at IS NULL \
           AND reblog_of IN (SELECT value FROM json_each(?2))",
        &[int(viewer), text(&id_list(ids))],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.reblog_of).collect())
}

/// Makes the original's mirror agree with the boost as it is now, with its notification, in one
/// batch on the original's database: a new active boost inserts its row (its count moves by
/// trigger) after notifying; an inactive one turns the row off (or records it off, if the
/// mirror never saw it on) and takes the notification back. Idempotent in any order: an
/// insert of an existing row does nothing, and nothing turns a row back on. The notification
/// made, if it was made for a recipient with a live socket open: what to tell them.
pub async fn converge(db: PostDb<'_>, boost: &BoostMirror) -> StoreResult<Option<Notice>> {
    let row = [
        int(boost.original),
        int(boost.boost),
        int(boost.booster),
        int(boost.created_at),
        int(i64::from(boost.active)),
    ];
    let statements = if boost.active {
        vec![
            notifications::on_reblog(db, boost)?,
            stmt(
                db,
                "INSERT INTO reblogs (post_id, boost_id, booster_id, created_at, active) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (post_id, boost_id) DO NOTHING",
                &row,
            )?,
        ]
    } else {
        vec![
            stmt(
                db,
                "INSERT INTO reblogs (post_id, boost_id, booster_id, created_at, active) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (post_id, boost_id) DO UPDATE SET active = 0",
                &row,
            )?,
            notifications::off_reblog(db, boost)?,
        ]
    };
    let results = batch(db, statements).await?;
    Ok(if boost.active { notifications::notice(results.first(), boost.now) } else { None })
}

/// Users who boost the post now, newest boost first, hiding users with a block either way with
/// the viewer and suspended users (as the likers list). Fetches `limit + 1` rows.
pub async fn boosters(
    shards: &Shards,
    viewer: UserId,
    post: PostId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<UserRow>> {
    let db = shards.post(post);
    shown_user_page(shards, viewer, before, limit, |before, want| async move {
        all::<EdgeKey>(
            db,
            "SELECT booster_id AS other, created_at AS sort_at FROM reblogs \
             WHERE post_id = ?1 AND active = 1 AND (created_at, booster_id) < (?2, ?3) \
             ORDER BY created_at DESC, booster_id DESC LIMIT ?4",
            &[int(post), int(before.primary), int(before.id), int(want as i64)],
        )
        .await
    })
    .await
}

/// An active boost of one of a page's originals by one of the feed's sources.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct SourceBoost {
    pub post_id: PostId,
    pub created_at: i64,
    pub boost_id: PostId,
}

impl SourceBoost {
    pub fn key(&self) -> SortKey {
        SortKey::new(self.created_at, self.boost_id.get())
    }
}

/// The active boosts of `originals` (all on this database) by `sources` (the feed's authors):
/// what the one-entry-per-post rule compares a boost entry's key with. One probe of
/// `reblogs_by_booster` per (original, source).
pub fn source_boosts_statement(
    db: AnyDb<'_>,
    originals: &[PostId],
    sources: &[UserId],
) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "SELECT r.post_id, r.created_at, r.boost_id FROM json_each(?1) o \
           JOIN json_each(?2) s JOIN reblogs r ON r.post_id = o.value AND r.booster_id = s.value \
         WHERE r.active = 1",
        &[text(&id_list(originals)), text(&id_list(sources))],
    )
}

/// A page's boosted originals on this database, as the viewer sees them (deleted ones absent),
/// and, for a feed (`sources`), their active boosts by the feed's sources: one batch.
pub async fn originals(
    db: PostDb<'_>,
    viewer: UserId,
    ids: &[PostId],
    sources: Option<&[UserId]>,
) -> StoreResult<(Vec<PostRow>, Vec<SourceBoost>)> {
    let mut statements = posts::live_statements(db.any(), viewer, ids)?;
    let posts_read = statements.len();
    if let Some(sources) = sources {
        statements.push(source_boosts_statement(db.any(), ids, sources)?);
    }
    let results = batch(db, statements).await?;
    let rows = posts::rows_of(results.get(..posts_read).unwrap_or_default())?;
    let boosts = match results.get(posts_read) {
        Some(result) => result.results()?,
        None => Vec::new(),
    };
    Ok((rows, boosts))
}
