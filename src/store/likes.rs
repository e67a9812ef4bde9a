//! Like writes, committed in groups by the post's `PostLikes` object (see
//! `objects/post_likes.rs`), and the rule of `domain/likes.rs` written as SQL.

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1PreparedStatement;

use super::{batch, int, stmt, Db};
use crate::domain::likes::{LikeOp, LikeReply};
use crate::error::{ApiError, ApiResult};

/// The set-state upsert: applies unless the request's seq is not above the stored one
/// (a request without seq always applies). `liked_at` restarts only on a real unlike -> like.
const UPSERT: &str = "INSERT INTO likes (post_id, user_id, liked, seq, updated_at, liked_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?5) \
     ON CONFLICT (post_id, user_id) DO UPDATE SET \
       liked = excluded.liked, \
       seq = COALESCE(excluded.seq, likes.seq), \
       updated_at = excluded.updated_at, \
       liked_at = CASE WHEN likes.liked = 0 AND excluded.liked = 1 THEN excluded.liked_at ELSE likes.liked_at END \
     WHERE excluded.seq IS NULL OR likes.seq IS NULL OR excluded.seq > likes.seq \
     RETURNING 1 AS applied";

const STATE: &str =
    "SELECT COALESCE((SELECT liked FROM likes WHERE post_id = ?1 AND user_id = ?2), 0) AS liked, \
     (SELECT like_count FROM posts WHERE id = ?1) AS like_count";

#[derive(Deserialize)]
struct StateRow {
    liked: i64,
    like_count: i64,
}

fn op_statements(db: &Db, op: &LikeOp) -> ApiResult<[D1PreparedStatement; 2]> {
    let seq = op.seq.map_or(JsValue::NULL, int);
    Ok([
        stmt(db, UPSERT, &[int(op.post_id), int(op.user_id), int(i64::from(op.like)), seq, int(op.now)])?,
        stmt(db, STATE, &[int(op.post_id), int(op.user_id)])?,
    ])
}

/// Commits a group of requests in one atomic batch, each as its own upsert followed by a read
/// of the state it left, in order; returns one reply per request.
pub async fn commit(db: &Db, ops: &[LikeOp]) -> ApiResult<Vec<LikeReply>> {
    let mut statements = Vec::with_capacity(ops.len() * 2 + 1);
    for op in ops {
        statements.extend(op_statements(db, op)?);
    }
    if let Some(last) = ops.last() {
        // Marks the post for the reconciliation pass's count check.
        statements.push(stmt(
            db,
            "UPDATE posts SET touched_at = ?2 WHERE id = ?1",
            &[int(last.post_id), int(last.now)],
        )?);
    }
    let results = batch(db, statements).await?;
    let mut replies = Vec::with_capacity(ops.len());
    for pair in results.chunks(2).take(ops.len()) {
        let applied = !pair
            .first()
            .map(|r| r.results::<serde_json::Value>())
            .transpose()?
            .unwrap_or_default()
            .is_empty();
        let state: Vec<StateRow> = pair.get(1).map(|r| r.results()).transpose()?.unwrap_or_default();
        let state = state.first().ok_or_else(|| ApiError::Internal("like state row missing".into()))?;
        replies.push(LikeReply { liked: state.liked != 0, like_count: state.like_count, applied });
    }
    Ok(replies)
}
