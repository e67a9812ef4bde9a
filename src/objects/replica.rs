//! `HotReplica` (one per digest, named `digest:{i}`, `HOT_DIGESTS` of them): a thin shell over
//! `domain::replica::digest::Digest`, a replica of every hot author its readers read, held in
//! memory only (D1 is the truth: an evicted digest, or an author it forgot, is rebuilt from D1
//! on its next answer, so it writes no storage rows). And `HotDirectory` (one object): which
//! authors have replicas, read by isolates every `HOT_DIRECTORY_TTL_SECONDS` (`services/replicas.rs`).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use futures_util::future::{join_all, select, Either};
use worker::{durable_object, DurableObject, Env, ObjectNamespace, Request, Response, Result, State};

use crate::config::Config;
use crate::domain::ids::UserId;
use crate::domain::replica::digest::Digest;
use crate::domain::replica::{digest_name, Before, Fault, ReplicaAnswer, ReplicaOp, ReplicaQuery, Timing};
use crate::error::{ApiError, ApiResult};
use crate::store::replica as store;
use crate::store::shards::Shards;
use crate::store::{Io, ObjectD1};

#[durable_object]
pub struct HotReplica {
    env: Env,
    digest: RefCell<Option<Digest>>,
    fault: Cell<Fault>,
}

fn timing(config: &Config) -> Timing {
    Timing { lease_ms: config.replica.lease_ms, counts_ms: config.replica.counts_ms }
}

impl HotReplica {
    fn with<T>(&self, config: &Config, f: impl FnOnce(&mut Digest) -> T) -> T {
        let mut slot = self.digest.borrow_mut();
        f(slot.get_or_insert_with(|| Digest::new(config.hot_range_len, config.replica.digest_authors)))
    }

    /// Makes the digest's replica of `author` current enough to answer now: nothing, a counter
    /// check, or a reload (each D1 read timed from before it was sent: `domain/replica.rs`).
    async fn make_current(&self, config: &Config, shards: &Shards, author: UserId) -> ApiResult<()> {
        let timing = timing(config);
        let now = || worker::Date::now().as_millis() as i64;
        let before = self.with(config, |d| d.before_answer(author, now(), timing));
        let db = shards.user(author);
        if before == Before::CheckSeq {
            let start = (now(), self.with(config, |d| d.changes_seen(author)));
            let seq = store::seq(db, author).await?;
            if !self.with(config, |d| d.confirm(author, seq, start, timing)) {
                return Ok(());
            }
        } else if before == Before::Nothing {
            return Ok(());
        }
        let start = (now(), self.with(config, |d| d.changes_seen(author)));
        let snapshot = store::snapshot(db, author, config.hot_range_len).await?;
        self.with(config, |d| d.load(author, snapshot, start, timing));
        Ok(())
    }

    /// One author's answer to a page, `None` when it cannot be made current (the page reads
    /// that author from D1). Each author's D1 reads run beside the others'.
    async fn read_one(
        &self,
        config: &Config,
        shards: &Shards,
        (author, query): &(UserId, ReplicaQuery),
    ) -> Option<ReplicaAnswer> {
        match self.make_current(config, shards, *author).await {
            Ok(()) => Some(self.with(config, |d| d.answer(*author, query))),
            Err(e) => {
                worker::console_error!("digest: {author} not current: {e}");
                None
            }
        }
    }

    async fn run(&self, op: ReplicaOp, io: &Rc<Io>) -> ApiResult<Response> {
        let config = Config::from_env(&self.env);
        match op {
            ReplicaOp::Apply { author, seq, sent_at, change } => {
                let applied = self.with(&config, |d| d.apply(author, seq, sent_at, change, timing(&config)));
                Ok(Response::from_json(&applied)?)
            }
            ReplicaOp::Read { reads } => {
                let shards = Shards::from_env(&self.env, &config.shard_map, io)?;
                let answers: Vec<Option<ReplicaAnswer>> =
                    join_all(reads.iter().map(|read| self.read_one(&config, &shards, read))).await;
                Ok(Response::from_json(&answers)?)
            }
            ReplicaOp::Fault { fault } => {
                let size = self.digest.borrow().as_ref().map(Digest::size).unwrap_or_default();
                if fault == Fault::Wipe {
                    self.digest.replace(None);
                    self.fault.set(Fault::None);
                } else {
                    self.fault.set(fault);
                }
                Ok(Response::from_json(&size)?)
            }
        }
    }
}

impl DurableObject for HotReplica {
    fn new(_state: State, env: Env) -> Self {
        Self { env, digest: RefCell::new(None), fault: Cell::new(Fault::None) }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let op: ReplicaOp = match req.json().await {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad replica op: {e}"), 400),
        };
        if !matches!(op, ReplicaOp::Fault { .. }) {
            match self.fault.get() {
                Fault::Failing => {
                    return super::failure(&ApiError::Internal("replica failing (test hook)".into()))
                }
                Fault::Slow { ms } => worker::Delay::from(Duration::from_millis(ms)).await,
                Fault::None | Fault::Wipe => {}
            }
        }
        let io = Rc::new(Io::default());
        match self.run(op, &io).await {
            Ok(response) => {
                let d1 = ObjectD1::only(&io);
                let _ = response.headers().set(super::OBJECT_D1_HEADER, &d1.to_header());
                Ok(response)
            }
            Err(e) => super::failure(&e),
        }
    }
}

/// Worker-side handle to the digests.
pub struct Replicas {
    namespace: ObjectNamespace,
    io: Rc<Io>,
}

impl Replicas {
    pub fn new(env: &Env, io: Rc<Io>) -> ApiResult<Self> {
        Ok(Self { namespace: env.durable_object("HOT_REPLICA")?, io })
    }

    /// A call to digest `i`.
    pub async fn call<T: serde::de::DeserializeOwned>(&self, i: u32, op: &ReplicaOp) -> ApiResult<T> {
        super::call(&self.namespace, &self.io, &digest_name(i), op).await
    }

    /// [`Replicas::call`] given `timeout_ms`: `None` when digest `i` has not answered by then
    /// (a slow digest is read around, or counts as not written).
    pub async fn call_within<T: serde::de::DeserializeOwned>(
        &self,
        i: u32,
        op: &ReplicaOp,
        timeout_ms: u64,
    ) -> Option<ApiResult<T>> {
        let answer = std::pin::pin!(self.call(i, op));
        let timer = std::pin::pin!(worker::Delay::from(Duration::from_millis(timeout_ms)));
        match select(answer, timer).await {
            Either::Left((answer, _)) => Some(answer),
            Either::Right(_) => None,
        }
    }
}

/// The directory's ops.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum DirectoryOp {
    /// Adds (or keeps) authors with their replica counts.
    Add(Vec<(UserId, u32)>),
    List,
}

const DIRECTORY_KEY: &str = "authors";

/// The one directory object: authors with replicas, persisted in its own storage (small: the
/// most followed authors only; an author is never removed, see docs/hot-authors.md).
#[durable_object]
pub struct HotDirectory {
    state: State,
    authors: RefCell<Option<BTreeMap<UserId, u32>>>,
}

impl HotDirectory {
    async fn authors(&self) -> Result<BTreeMap<UserId, u32>> {
        if let Some(known) = self.authors.borrow().as_ref() {
            return Ok(known.clone());
        }
        let stored: Option<Vec<(UserId, u32)>> = self.state.storage().get(DIRECTORY_KEY).await.ok().flatten();
        let known: BTreeMap<UserId, u32> = stored.unwrap_or_default().into_iter().collect();
        self.authors.replace(Some(known.clone()));
        Ok(known)
    }
}

impl DurableObject for HotDirectory {
    fn new(state: State, _env: Env) -> Self {
        Self { state, authors: RefCell::new(None) }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let op: DirectoryOp = match req.json().await {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad directory op: {e}"), 400),
        };
        let mut authors = self.authors().await?;
        if let DirectoryOp::Add(added) = op {
            let before = authors.len();
            for (author, replicas) in added {
                authors.entry(author).or_insert(replicas);
            }
            if authors.len() != before {
                let list: Vec<(UserId, u32)> = authors.iter().map(|(a, r)| (*a, *r)).collect();
                self.state.storage().put(DIRECTORY_KEY, &list).await?;
                self.authors.replace(Some(authors.clone()));
            }
        }
        let list: Vec<(UserId, u32)> = authors.into_iter().collect();
        Response::from_json(&list)
    }
}

/// Worker-side handle to the directory.
pub async fn directory(env: &Env, io: &Io, op: &DirectoryOp) -> ApiResult<Vec<(UserId, u32)>> {
    let namespace = env.durable_object("HOT_DIRECTORY")?;
    super::call(&namespace, io, "directory", op).await
}
