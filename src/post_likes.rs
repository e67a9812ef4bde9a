//! PostLikes Durable Object: one per post, the single place where likes of that post are
//! written, so like/unlike requests are applied one after another in arrival order.
//!
//! Requests that arrive while a D1 write is in flight queue up and are committed together in
//! the next batch (group commit): a hot post costs one D1 round trip per *batch* of likes, not
//! per like. Inside a batch each request is still its own conditional upsert followed by a read
//! of the resulting state, in arrival order, so every caller gets the state its request left.
//! `like_count` is moved by triggers only when a row's state really changes, in the same
//! transaction, so the count equals the number of liked rows whatever the interleaving.

use std::cell::{Cell, RefCell};

use futures_channel::oneshot;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{
    durable_object, D1Database, D1PreparedStatement, DurableObject, Env, ObjectNamespace, Request, Response,
    Result, State,
};

use crate::error::{ApiError, ApiResult};
use crate::store::{d1_error, int};

/// Requests per D1 batch (two statements each, plus one).
const MAX_GROUP: usize = 32;

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LikeOp {
    pub post_id: i64,
    pub user_id: i64,
    pub like: bool,
    pub seq: Option<i64>,
    pub now: i64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct LikeReply {
    pub liked: bool,
    pub like_count: i64,
    pub applied: bool,
}

struct Pending {
    op: LikeOp,
    reply: oneshot::Sender<std::result::Result<LikeReply, String>>,
}

#[durable_object]
pub struct PostLikes {
    env: Env,
    queue: RefCell<Vec<Pending>>,
    flushing: Cell<bool>,
}

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

fn statements(db: &D1Database, op: &LikeOp) -> Result<[D1PreparedStatement; 2]> {
    let seq = op.seq.map_or(JsValue::NULL, int);
    Ok([
        db.prepare(UPSERT).bind(&[
            int(op.post_id),
            int(op.user_id),
            int(i64::from(op.like)),
            seq,
            int(op.now),
        ])?,
        db.prepare(STATE).bind(&[int(op.post_id), int(op.user_id)])?,
    ])
}

/// Commits a group of requests in one atomic batch; returns one reply per request.
async fn commit(db: &D1Database, ops: &[LikeOp]) -> ApiResult<Vec<LikeReply>> {
    let mut batch = Vec::with_capacity(ops.len() * 2 + 1);
    for op in ops {
        batch.extend(statements(db, op)?);
    }
    if let Some(last) = ops.last() {
        // Marks the post for the reconciliation pass's count check.
        batch.push(
            db.prepare("UPDATE posts SET touched_at = ?2 WHERE id = ?1")
                .bind(&[int(last.post_id), int(last.now)])?,
        );
    }
    let results = db.batch(batch).await.map_err(d1_error)?;
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

impl PostLikes {
    /// Drains the queue in groups until it is empty. Only one flush runs at a time; requests
    /// arriving meanwhile join the next group.
    async fn flush(&self, db: &D1Database) {
        loop {
            let group: Vec<Pending> = {
                let mut queue = self.queue.borrow_mut();
                let n = queue.len().min(MAX_GROUP);
                queue.drain(..n).collect()
            };
            if group.is_empty() {
                return;
            }
            let ops: Vec<LikeOp> = group.iter().map(|p| p.op).collect();
            let replies = match commit(db, &ops).await {
                Ok(replies) => replies.into_iter().map(Ok).collect(),
                // One bad request (say, a user id that does not exist) fails the whole batch;
                // retry each alone so the others still succeed.
                Err(_) if ops.len() > 1 => {
                    let mut each = Vec::with_capacity(ops.len());
                    for op in &ops {
                        each.push(
                            commit(db, std::slice::from_ref(op))
                                .await
                                .map(|mut r| r.remove(0))
                                .map_err(|e| e.to_string()),
                        );
                    }
                    each
                }
                Err(e) => vec![Err(e.to_string())],
            };
            for (pending, reply) in group.into_iter().zip(replies) {
                let _ = pending.reply.send(reply);
            }
        }
    }
}

struct FlushGuard<'a>(&'a Cell<bool>);

impl Drop for FlushGuard<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

impl DurableObject for PostLikes {
    fn new(_state: State, env: Env) -> Self {
        Self { env, queue: RefCell::new(Vec::new()), flushing: Cell::new(false) }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let op: LikeOp = match req.json().await {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad like op: {e}"), 400),
        };
        let (tx, rx) = oneshot::channel();
        self.queue.borrow_mut().push(Pending { op, reply: tx });
        if !self.flushing.replace(true) {
            // Resets the flag even if this future were dropped mid-flush.
            let _guard = FlushGuard(&self.flushing);
            match self.env.d1("DB") {
                Ok(db) => self.flush(&db).await,
                Err(e) => {
                    for pending in self.queue.borrow_mut().drain(..) {
                        let _ = pending.reply.send(Err(e.to_string()));
                    }
                }
            }
        }
        match rx.await {
            Ok(Ok(reply)) => Response::from_json(&reply),
            Ok(Err(e)) => Response::error(format!("like failed: {e}"), 500),
            Err(_) => Response::error("like dropped", 500),
        }
    }
}

/// Worker-side handle to posts' like serializers.
pub struct Likes {
    namespace: ObjectNamespace,
}

impl Likes {
    pub fn new(env: &Env) -> ApiResult<Self> {
        Ok(Self { namespace: env.durable_object("POST_LIKES")? })
    }

    pub async fn set(&self, op: LikeOp) -> ApiResult<LikeReply> {
        crate::objects::call(&self.namespace, &format!("post:{}", op.post_id), &op).await
    }
}
