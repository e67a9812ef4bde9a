//! Like writes, committed in groups by the post's `PostLikes` object (see
//! `objects/post_likes.rs`), and the rule of `domain/likes.rs` written as SQL.

use crate::store::SqlStatement;
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::users::{not_blocked_between, not_suspended};
use super::{batch, int, notifications, stats, stmt, PostDb};
use super::{StoreError, StoreResult};
use crate::domain::likes::{LikeAnswer, LikeOp, LikeReply};

/// "The user `?2` may see and like the post `?1` now": `domain/visibility.rs::may_see` as SQL
/// (not deleted, not taken down, author not suspended; the author; or no block either way and
/// public, or followers-only and following, or addressed by it (mentioned or replied to):
/// `may_see_post`).
/// Everything it reads lives on the post's (its author's) side: the author-side copies of the
/// follow (`followers`) and of blocks either way.
/// The like tests over HTTP pin it against the rule (stranger, follower, blocked, deleted).
/// A boost is no post to like (migration 0029): its id is refused here, and the service
/// likes its original instead.
fn may_see_sql() -> String {
    format!(
        "EXISTS (SELECT 1 FROM posts p WHERE p.id = ?1 AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
           AND p.reblog_of IS NULL AND {} AND ( \
           p.author_id = ?2 \
           OR ({} \
               AND (p.visibility = 'public' \
                    OR (p.visibility = 'followers' \
                        AND EXISTS (SELECT 1 FROM followers f WHERE f.author_id = p.author_id AND f.follower_id = ?2)) \
                    OR p.in_reply_to_account_id = ?2 \
                    OR EXISTS (SELECT 1 FROM json_each(COALESCE(p.mentions, '[]')) m \
                        WHERE json_extract(m.value, '$.id') = ?2)))))",
        not_suspended("p.author_id"),
        not_blocked_between("p.author_id", "?2")
    )
}

/// The set-state upsert: applies only if the user may see the post now (checked in the same
/// transaction, so a block or delete racing the like cannot slip between check and write), and
/// unless the request's seq is not above the stored one (a request without seq always
/// applies). `liked_at` restarts only on a real unlike -> like.
fn upsert_sql() -> String {
    format!(
        "INSERT INTO likes (post_id, user_id, liked, seq, updated_at, liked_at, notice_id) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?5, {notice} WHERE {may_see} \
     ON CONFLICT (post_id, user_id) DO UPDATE SET \
       liked = excluded.liked, \
       seq = COALESCE(excluded.seq, likes.seq), \
       updated_at = excluded.updated_at, \
       liked_at = CASE WHEN likes.liked = 0 AND excluded.liked = 1 THEN excluded.liked_at ELSE likes.liked_at END, \
       notice_id = CASE WHEN excluded.liked = 0 THEN NULL \
         WHEN likes.liked = 0 THEN excluded.notice_id ELSE likes.notice_id END \
     WHERE excluded.seq IS NULL OR likes.seq IS NULL OR excluded.seq > likes.seq \
     RETURNING 1 AS applied",
        notice = notifications::like_notice_sql(),
        may_see = may_see_sql()
    )
}

fn state_sql() -> String {
    format!(
        "SELECT COALESCE((SELECT liked FROM likes WHERE post_id = ?1 AND user_id = ?2), 0) AS liked, \
         (SELECT liked_at FROM likes WHERE post_id = ?1 AND user_id = ?2 AND liked = 1) AS liked_at, \
         (SELECT like_count FROM posts WHERE id = ?1) AS like_count, \
         (SELECT thread_id FROM posts WHERE id = ?1) AS thread_id, {} AS visible",
        may_see_sql()
    )
}

#[derive(Deserialize)]
struct StateRow {
    liked: i64,
    liked_at: Option<i64>,
    like_count: Option<i64>,
    thread_id: Option<i64>,
    visible: i64,
}

/// The stats counter of a group commit of `n` requests: one row a commit, named by its exact
/// size, from which the stats page sums the commits, the requests and the size buckets (three
/// rows a commit before: a like's figures were a fifth of its rows written).
fn group_figure(n: usize) -> String {
    format!("{LIKE_COMMIT_SIZE_PREFIX}{}", n.max(1))
}

/// The prefix of the per-size group-commit counters (`services/stats.rs` sums them).
pub const LIKE_COMMIT_SIZE_PREFIX: &str = "like_commit_size_";

/// The request's upsert (which gives a notifying like its notice id), its notification's three
/// writes (after the upsert, whose transition they read: `store/notifications.rs::on_like_op`;
/// the first two answer the notice), and the read of the state it left.
const STATEMENTS_PER_OP: usize = 5;
/// The group row's insert, or else the highest id's update, answers a new like's notice.
const NOTICE_STATEMENTS: [usize; 2] = [1, 2];
const STATE_STATEMENT: usize = 4;

fn op_statements(db: PostDb<'_>, op: &LikeOp) -> StoreResult<[SqlStatement; STATEMENTS_PER_OP]> {
    let seq = op.seq.map_or(JsValue::NULL, int);
    let [group, raise, filtered] = notifications::on_like_op(db, op)?;
    Ok([
        stmt(
            db,
            &upsert_sql(),
            &[int(op.post_id), int(op.user_id), int(i64::from(op.like)), seq, int(op.now)],
        )?,
        group,
        raise,
        filtered,
        stmt(db, &state_sql(), &[int(op.post_id), int(op.user_id)])?,
    ])
}

/// Commits a group of requests in one atomic batch, each as its own upsert followed by its
/// notification's write and a read of the state it left, in order; returns one reply per
/// request (`None`: the user may not see the post, and nothing changed).
pub async fn commit(db: PostDb<'_>, ops: &[LikeOp]) -> StoreResult<Vec<Option<LikeAnswer>>> {
    let mut statements = Vec::with_capacity(ops.len() * STATEMENTS_PER_OP + 4);
    for op in ops {
        statements.extend(op_statements(db, op)?);
    }
    // No count-repair mark on the post (`touched_at`): the likes' own `updated_at`, which
    // every applied request writes anyway, is what the repair reads (`engagement::repair_counts`).
    if !ops.is_empty() {
        // The group commit's figure, in the batch that writes anyway.
        statements.push(stats::bump(db, &group_figure(ops.len()), 1)?);
    }
    let results = batch(db, statements).await?;
    let mut replies = Vec::with_capacity(ops.len());
    for (op, op_results) in ops.iter().zip(results.chunks(STATEMENTS_PER_OP)) {
        let applied = !op_results
            .first()
            .map(|r| r.results::<serde_json::Value>())
            .transpose()?
            .unwrap_or_default()
            .is_empty();
        let state: Vec<StateRow> =
            op_results.get(STATE_STATEMENT).map(|r| r.results()).transpose()?.unwrap_or_default();
        let state = state.first().ok_or_else(|| StoreError::Internal("like state row missing".into()))?;
        let reply = LikeReply { liked: state.liked != 0, like_count: state.like_count.unwrap_or(0), applied };
        let notice = NOTICE_STATEMENTS.iter().find_map(|i| notifications::notice(op_results.get(*i), op.now));
        let (liked_at, thread) = (state.liked_at, state.thread_id);
        replies.push((state.visible != 0).then_some(LikeAnswer { reply, notice, liked_at, thread }));
    }
    Ok(replies)
}
