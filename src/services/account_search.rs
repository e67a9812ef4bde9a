//! Account search by handle prefix (`GET /api/v1/accounts/search`, the composer's @-autocomplete).
//!
//! The handle directory is placed by the handle's hash, so a prefix has no one home: each
//! database answers from its own `users` rows, one range read on the `users.handle` unique index
//! of at most `offset + limit` rows (`2 × MAX_RESULTS` with `following`, which filters after:
//! a followed account past that many matches on its database is not found), all databases in
//! waves of six. The work per request is one statement per database and at most
//! `(offset + limit) × databases` rows, then one relationship read of the candidates.

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::error::ApiResult;
use crate::store::graph;
use crate::store::users::{self, UserRow};

/// The most accounts a search answers (Mastodon's bound on `limit`).
pub const MAX_RESULTS: usize = 80;

/// Accounts whose handle starts with `prefix` (already lowercase `[a-z0-9_]`), in handle order
/// (an exact match first), that the viewer may see and does not block; with `following`, only
/// accounts the viewer follows. At most `limit`, after the first `offset` (each at most
/// [`MAX_RESULTS`]).
pub async fn by_handle_prefix(
    ctx: &Ctx,
    viewer: UserId,
    prefix: &str,
    (offset, limit): (usize, usize),
    following: bool,
) -> ApiResult<Vec<UserRow>> {
    let (offset, limit) = (offset.min(MAX_RESULTS), limit.min(MAX_RESULTS));
    let per_database = if following { 2 * MAX_RESULTS } else { offset + limit };
    let shards = &ctx.shards;
    let found = shards
        .on_every_database(|db| async move {
            let rows = users::handle_prefix(db, prefix, per_database).await?;
            // A shard being moved has a copy on its next database until the purge: its home's.
            Ok(rows.into_iter().filter(|u| shards.user(u.id).index() == db.index()).collect::<Vec<_>>())
        })
        .await?;
    let mut rows = found.concat();
    rows.sort_by(|a, b| a.handle.cmp(&b.handle));
    rows.dedup_by_key(|u| u.id);
    let ids: Vec<UserId> = rows.iter().map(|u| u.id).collect();
    let mutuals = graph::mutuals(shards, viewer, &ids).await?;
    let shown = |u: &UserRow| {
        mutuals.iter().find(|m| m.id == u.id).is_some_and(|m| !m.blocking() && (!following || m.following()))
    };
    Ok(rows.into_iter().filter(shown).skip(offset).take(limit).collect())
}
