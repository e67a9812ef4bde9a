//! The bump of a hot author's change counter (`users.replica_seq`, migration 0020): appended to
//! the batch of every change a replica holds (publish, edit, delete, takedown, suspension, a
//! block), so a replica can tell whether it is behind (`domain/replica.rs`).

use crate::store::{SqlResult, SqlStatement};
use serde::Deserialize;

use super::StoreResult;
use super::{int, stmt, OnDb, PostDb};
use crate::domain::ids::{PostId, UserId};

/// What a change's batch learns about the author's replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Bump {
    pub author: UserId,
    pub replicas: u32,
    pub seq: i64,
}

const BUMP: &str = "UPDATE users SET replica_seq = replica_seq + 1 WHERE id = {author} AND replicas > 0 \
                    RETURNING id AS author, replicas, replica_seq AS seq";

/// Bumps the author's change counter if the author has replicas; appended to the batch of the
/// change (same transaction), its answer read with [`bump_of`].
pub fn bump_statement<'a>(db: impl OnDb<'a>, author: UserId) -> StoreResult<SqlStatement> {
    stmt(db, &BUMP.replace("{author}", "?1"), &[int(author)])
}

/// [`bump_statement`] for the author of `post` (on the post's database, the author's).
pub fn bump_for_post_statement(db: PostDb<'_>, post: PostId) -> StoreResult<SqlStatement> {
    stmt(db, &BUMP.replace("{author}", "(SELECT author_id FROM posts WHERE id = ?1)"), &[int(post)])
}

/// The bump a batch's answer to [`bump_statement`] returned (`None`: no replicas).
pub fn bump_of(result: Option<&SqlResult>) -> StoreResult<Option<Bump>> {
    match result {
        Some(r) => Ok(r.results::<Bump>()?.into_iter().next()),
        None => Ok(None),
    }
}
