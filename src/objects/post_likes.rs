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
//!
//! The object also writes the liker's side of each like (`liked_posts` on the liker's home,
//! `services/liked.rs`) before answering: after a group commits, one batch per liker database
//! sets each liker's row to the state the group left. Being the post's one writer, it writes
//! them in commit order (a group's liker writes finish before the next group's start), so no
//! later like's side can be overwritten by an earlier one's and nothing needs re-reading after
//! the answer. Those writes run beside the next group's commit, so the chain of commits (the
//! hot post's limit) still waits on one D1 round trip per group.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use futures_channel::oneshot;
use futures_util::future::{join, join_all};
use worker::{durable_object, DurableObject, Env, ObjectNamespace, Request, Response, Result, State};

use crate::config::Config;
use crate::context::Ctx;
use crate::domain::ids::PostId;
use crate::domain::likes::{LikeAnswer, LikeOp};
use crate::error::{ApiError, ApiResult};
use crate::store::engagement::mirror_like_count;
use crate::store::liked::{write_liker_sides, LikerSide};
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
    /// `Server-Timing`: the statements are the like's, though this object sends them): on the
    /// post's database, and its liker side's on the liker's.
    reply: oneshot::Sender<(ApiResult<Answer>, Vec<ObjectD1>)>,
}

/// A group whose commit is done, waiting for its liker sides before its answers go out.
struct Committed {
    group: Vec<Pending>,
    replies: Vec<ApiResult<Answer>>,
    /// Each request's share of the commit.
    share: ObjectD1,
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
                let alone = commit(db, std::slice::from_ref(op)).await.map_err(ApiError::from);
                each.push(alone.and_then(|r| {
                    r.into_iter().next().ok_or_else(|| ApiError::Internal("like commit gave no reply".into()))
                }));
            }
            each
        }
        Err(e) => vec![Err(e.into())],
    }
}

/// The liker sides a committed group leaves: per user, the state its last answered request
/// left (later requests of a group see the earlier ones' writes), with that request's index.
fn liker_sides(group: &[Pending], replies: &[ApiResult<Answer>]) -> Vec<(usize, LikerSide)> {
    let mut last = BTreeMap::new();
    for (i, (pending, reply)) in group.iter().zip(replies).enumerate() {
        if let Ok(Some(answer)) = reply {
            let op = pending.op;
            last.insert(op.user_id, (i, (op.user_id, op.post_id, answer.liked_at)));
        }
    }
    last.into_values().collect()
}

/// Writes the liker sides of a committed group (one batch per liker database, all at once)
/// and returns each request's share of that work (none for a request whose side a later one
/// of its user wrote). A failed batch costs only those sides' freshness, never the likes: the
/// cron's slice (`services/liked.rs::repair_slice`) converges them from the post side.
async fn write_sides(
    shards: &Shards,
    group: &[Pending],
    replies: &[ApiResult<Answer>],
) -> Vec<Option<ObjectD1>> {
    let mut shares = vec![None; group.len()];
    let by_home = shards.by_home(liker_sides(group, replies), |(_, side)| side.0);
    let writes = by_home.iter().map(|(db, sides)| async move {
        let rows: Vec<LikerSide> = sides.iter().map(|(_, side)| *side).collect();
        (db.index(), write_liker_sides(*db, &rows).await)
    });
    for ((database, written), (_, sides)) in join_all(writes).await.into_iter().zip(&by_home) {
        match written {
            Ok(rows) => {
                for ((i, _), (rows_read, rows_written)) in sides.iter().zip(rows) {
                    shares[*i] = Some(ObjectD1 { database, statements: 1, rows_read, rows_written });
                }
            }
            Err(e) => worker::console_error!("liker sides on DB_{database} not written: {e}"),
        }
    }
    shares
}

/// A reply's count copied to its thread's row, as the group left it. The object is the post's
/// one writer and finishes groups in commit order, so the last copy written is the latest; a
/// failed write leaves the copy behind until the next like (the copy only orders the comments
/// view's `top`; every shown count is read from the post).
async fn copy_to_thread(shards: &Shards, group: &[Pending], replies: &[ApiResult<Answer>]) {
    let last = group.iter().zip(replies).rev().find_map(|(pending, reply)| match reply {
        Ok(Some(answer)) => Some((pending.op.post_id, *answer)),
        _ => None,
    });
    let Some((post, LikeAnswer { thread: Some(root), reply, .. })) = last else { return };
    let root = PostId::from_trusted(root);
    if let Err(e) = mirror_like_count(shards.post(root), post, reply.like_count).await {
        worker::console_error!("thread row of reply {post} not given its count: {e}");
    }
}

/// Writes a committed group's liker sides (and a reply's thread row), then answers its requests.
async fn finish(shards: &Shards, committed: Option<Committed>) {
    let Some(Committed { group, replies, share }) = committed else { return };
    let (sides, ()) =
        join(write_sides(shards, &group, &replies), copy_to_thread(shards, &group, &replies)).await;
    for ((pending, reply), side) in group.into_iter().zip(replies).zip(sides) {
        let d1 = std::iter::once(share).chain(side).collect();
        let _ = pending.reply.send((reply, d1));
    }
}

impl PostLikes {
    /// Drains the queue in groups until it is empty. Only one flush runs at a time; requests
    /// arriving meanwhile join the next group. Each group's commit runs beside the previous
    /// group's liker-side writes (`liker` counts them apart from the commits' tally on `post`,
    /// which the commit shares are read from).
    async fn flush(&self, post: PostDb<'_>, liker: &Shards) {
        let mut committed: Option<Committed> = None;
        loop {
            let group: Vec<Pending> = {
                let mut queue = self.queue.borrow_mut();
                let n = queue.len().min(MAX_GROUP);
                queue.drain(..n).collect()
            };
            let previous = finish(liker, committed.take());
            if group.is_empty() {
                previous.await;
                // Requests that came in while the last sides were written still need a group.
                if self.queue.borrow().is_empty() {
                    return;
                }
                continue;
            }
            let ops: Vec<LikeOp> = group.iter().map(|p| p.op).collect();
            let before = ObjectD1::of(post);
            let (replies, ()) = join(commit_group(post, &ops), previous).await;
            let share = ObjectD1::of(post).since(before).share(group.len());
            committed = Some(Committed { group, replies, share });
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
            let shards = |io| Shards::from_env(&self.env, &config.shard_map, io);
            match (shards(&Rc::default()), shards(&Rc::default())) {
                // One object per post: every queued op is on this post, whose database is its id's.
                (Ok(commits), Ok(liker)) => self.flush(commits.post(post), &liker).await,
                (Err(e), _) | (_, Err(e)) => {
                    for pending in self.queue.borrow_mut().drain(..) {
                        let failed = Err(ApiError::Internal(format!("no database: {e}")));
                        let _ = pending.reply.send((failed, Vec::new()));
                    }
                }
            }
        }
        match rx.await {
            Ok((Ok(reply), d1)) => {
                let response = Response::from_json(&reply)?;
                let _ = response.headers().set(super::OBJECT_D1_HEADER, &ObjectD1::list_header(&d1));
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
