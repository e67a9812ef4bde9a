//! PostLikes Durable Object: one per post, the single place where likes of that post are
//! written, so like/unlike requests are applied one after another in arrival order.
//!
//! Requests that arrive while a D1 write is in flight queue up and are committed together in
//! the next batch (group commit): a hot post costs one D1 round trip per *batch* of likes, not
//! per like. Inside a batch each request is still its own conditional upsert followed by a read
//! of the resulting state, in arrival order, so every caller gets the state its request left
//! (`store::likes::commit`). `like_count` is moved by triggers only when a row's state really
//! changes, in the same transaction, so the count equals the number of liked rows whatever the
//! interleaving.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_channel::oneshot;
use worker::{durable_object, DurableObject, Env, ObjectNamespace, Request, Response, Result, State};

use crate::config::Config;
use crate::context::Ctx;
use crate::domain::likes::{LikeAnswer, LikeOp};
use crate::error::{ApiError, ApiResult};
use crate::store::likes::commit;
use crate::store::shards::Shards;
use crate::store::{Io, ObjectD1, PostDb};

/// Requests per D1 batch (three statements each, plus four: 100 statements).
const MAX_GROUP: usize = 32;

/// What the object answers a request: the state it left, or `None` when the user may not see
/// the post now (checked inside the commit; nothing changed).
type Answer = Option<LikeAnswer>;

struct Pending {
    op: LikeOp,
    /// The answer, and this request's share of its group's D1 work (for its caller's
    /// `Server-Timing`: the statements are the like's, though this object sends them).
    reply: oneshot::Sender<(ApiResult<Answer>, ObjectD1)>,
}

#[durable_object]
pub struct PostLikes {
    env: Env,
    queue: RefCell<Vec<Pending>>,
    flushing: Cell<bool>,
}

/// Commits a group; if the batch fails (say, one request names a user id that does not
/// exist), each request is retried alone so the others still succeed.
async fn commit_group(db: PostDb<'_>, ops: &[LikeOp]) -> Vec<ApiResult<Answer>> {
    match commit(db, ops).await {
        Ok(replies) => replies.into_iter().map(Ok).collect(),
        Err(_) if ops.len() > 1 => {
            let mut each = Vec::with_capacity(ops.len());
            for op in ops {
                let alone = commit(db, std::slice::from_ref(op)).await;
                each.push(alone.and_then(|r| {
                    r.into_iter().next().ok_or_else(|| ApiError::Internal("like commit gave no reply".into()))
                }));
            }
            each
        }
        Err(e) => vec![Err(e)],
    }
}

impl PostLikes {
    /// Drains the queue in groups until it is empty. Only one flush runs at a time; requests
    /// arriving meanwhile join the next group.
    async fn flush(&self, db: PostDb<'_>) {
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
            let before = ObjectD1::of(db);
            let replies = commit_group(db, &ops).await;
            let share = ObjectD1::of(db).since(before).share(group.len());
            for (pending, reply) in group.into_iter().zip(replies) {
                let _ = pending.reply.send((reply, share));
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
        let post = op.post_id;
        self.queue.borrow_mut().push(Pending { op, reply: tx });
        if !self.flushing.replace(true) {
            // Resets the flag even if this future were dropped mid-flush.
            let _guard = FlushGuard(&self.flushing);
            // The object's own round trips are not any request's: counted and dropped.
            let config = Config::from_env(&self.env);
            match Shards::from_env(&self.env, &config.shard_map, &Rc::default()) {
                // One object per post: every queued op is on this post, whose database is its id's.
                Ok(shards) => self.flush(shards.post(post)).await,
                Err(e) => {
                    for pending in self.queue.borrow_mut().drain(..) {
                        let failed = Err(ApiError::Internal(format!("no database: {e}")));
                        let _ = pending.reply.send((failed, ObjectD1::default()));
                    }
                }
            }
        }
        match rx.await {
            Ok((Ok(reply), d1)) => {
                let response = Response::from_json(&reply)?;
                let _ = response.headers().set(super::OBJECT_D1_HEADER, &d1.to_header());
                Ok(response)
            }
            Ok((Err(e), _)) => super::failure(&e),
            Err(_) => Response::error("like dropped", 500),
        }
    }
}

/// Worker-side handle to posts' like serializers.
pub struct Likes {
    namespace: ObjectNamespace,
    io: Rc<Io>,
}

impl Likes {
    pub fn new(ctx: &Ctx) -> ApiResult<Self> {
        Ok(Self { namespace: ctx.env.durable_object("POST_LIKES")?, io: ctx.io.clone() })
    }

    pub async fn set(&self, op: LikeOp) -> ApiResult<Answer> {
        super::call(&self.namespace, &self.io, &format!("post:{}", op.post_id), &op).await
    }
}
