//! The service context: what every service, background job and Durable Object caller needs,
//! and nothing HTTP-specific. The HTTP layer builds one per request and adds auth on top; the
//! queue consumer and the cron pass build their own.

use std::future::Future;
use std::rc::Rc;

use worker::{Context, Env};

use crate::config::Config;
use crate::domain::ids::{CommentId, MediaId, OutboxId, PostId, UserId};
use crate::domain::shard::ShardMap;
use crate::domain::snowflake::IdSeed;
use crate::error::{ApiError, ApiResult, StorageKind};
use crate::store::shards::Shards;
use crate::store::{AnyDb, ControlDb, HandleDb, Io, OutboxDb, PostDb, StoreError, StoreResult, UserDb};

pub struct Ctx {
    pub env: Env,
    /// Every physical database and the logical-shard map.
    pub shards: Shards,
    pub config: Config,
    /// Time in ms, read once so one request or job sees one "now".
    pub now: i64,
    /// The storage round trips made so far (D1, Durable Objects, queue), for `Server-Timing`.
    pub io: Rc<Io>,
    /// The invocation's `waitUntil`, when it has one: work the answer need not wait for.
    background: Option<Rc<Context>>,
}

impl Ctx {
    pub fn new(env: Env) -> ApiResult<Self> {
        Self::with_io(env, Rc::new(Io::default()))
    }

    pub fn with_io(env: Env, io: Rc<Io>) -> ApiResult<Self> {
        let config = Config::from_env(&env);
        // Fails the whole request on an invalid `SHARD_MAP` (ApiError::Misconfigured).
        let shards = Shards::from_env(&env, &config.shard_map, &io)?;
        Ok(Self { shards, config, env, now: now_ms(), io, background: None })
    }

    /// Lets [`Ctx::after_response`] hand work to the invocation's `waitUntil`.
    pub fn with_background(mut self, background: Rc<Context>) -> Self {
        self.background = Some(background);
        self
    }

    /// Runs best-effort work (a cache put, an activity report) after the answer is sent, when
    /// the invocation allows it (`waitUntil`); otherwise now. The work must not change what
    /// the answer says: it is only ever something a later request does without if it is lost.
    pub async fn after_response(&self, work: impl Future<Output = ()> + 'static) {
        match &self.background {
            Some(context) => context.wait_until(work),
            None => work.await,
        }
    }

    /// Which physical database each logical shard lives on.
    pub fn shard_map(&self) -> &ShardMap {
        self.shards.map()
    }

    /// The physical database `index` (`DB_{index}`); the plan only names databases the map
    /// has, so an index past them (never) falls back to the control database.
    pub fn database(&self, index: usize) -> AnyDb<'_> {
        self.shards.database(index).unwrap_or_else(|| self.shards.control().any())
    }

    /// `DB_0`: the tables that are not per user (OAuth, revoked tokens, stats, rolling
    /// figures, audit log, test faults, live readers; see ARCHITECTURE.md).
    pub fn control(&self) -> ControlDb<'_> {
        self.shards.control()
    }

    /// A post's database (its author's home): the post, its likes and its comments.
    pub fn post_db(&self, post: PostId) -> PostDb<'_> {
        self.shards.post(post)
    }

    /// The database an outbox event lives on (its id names the shard, `store::outbox::new_id_sql`).
    pub fn outbox_db(&self, event: OutboxId) -> OutboxDb<'_> {
        self.shards.outbox(event)
    }

    /// An upload's database (its uploader's: `media` rows, migration 0027).
    pub fn media_db(&self, media: MediaId) -> UserDb<'_> {
        self.shards.media(media)
    }

    /// A comment's database (its post's).
    pub fn comment_db(&self, comment: CommentId) -> PostDb<'_> {
        self.shards.comment(comment)
    }

    /// A user's home database: their row, posts, outbox, and their side of their edges.
    pub fn user_db(&self, user: UserId) -> UserDb<'_> {
        self.shards.user(user)
    }

    /// The database of a handle's directory entry.
    pub fn handle_db(&self, handle: &str) -> HandleDb<'_> {
        self.shards.handle(handle)
    }

    /// Every physical database, in order.
    pub fn databases(&self) -> impl ExactSizeIterator<Item = AnyDb<'_>> {
        self.shards.all()
    }

    /// Runs `job` on every physical database, in waves ([`Shards::across`]).
    pub async fn on_every_database<'a, T, Fut>(&'a self, job: impl Fn(AnyDb<'a>) -> Fut) -> ApiResult<Vec<T>>
    where
        Fut: Future<Output = StoreResult<T>>,
    {
        Ok(self.shards.on_every_database(job).await?)
    }

    /// The clock read afresh (long jobs record progress times as they go).
    pub fn clock(&self) -> i64 {
        now_ms()
    }
}

/// The answer a store failure gets when the service that met it decided nothing else: what
/// changes the client's next move keeps its own answer (a frozen shard, a database outage: 503
/// with `Retry-After`; a misconfiguration, named), and the rest is a 500 whose detail only the
/// logs see. It lives here, not in `error` (below the store, which cannot name it), as the
/// lowest layer every caller of the store shares (this context, the objects, the services).
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Frozen { detail } => ApiError::Storage { kind: StorageKind::Frozen, detail },
            StoreError::Unavailable { database, detail } => {
                ApiError::Storage { kind: StorageKind::Unavailable { database }, detail }
            }
            StoreError::Misconfigured(detail) => ApiError::Misconfigured(detail),
            // A foreign key too: what a missing reference means (the token's user gone, a post
            // gone) is for the write's service to say; undecided, it is a bug's 500.
            other => ApiError::Storage { kind: StorageKind::Other, detail: other.to_string() },
        }
    }
}

fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

/// `N` random bytes from the platform's CSPRNG. Drawn per request: workerd refuses randomness
/// at start-up scope.
pub fn random_bytes<const N: usize>() -> ApiResult<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|e| crate::error::ApiError::Internal(format!("getrandom failed: {e}")))?;
    Ok(bytes)
}

/// The random bits for one new row's id attempts (`store::snowflake::insert_with_fresh_id`).
pub fn id_seed() -> ApiResult<IdSeed> {
    Ok(IdSeed::new(u64::from_le_bytes(random_bytes()?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(e: StoreError) -> (u16, &'static str, Option<u32>) {
        let e = ApiError::from(e);
        (e.status(), e.code(), e.retry_after())
    }

    #[test]
    fn a_store_failure_no_service_decided_on_keeps_only_the_answers_that_change_a_retry() {
        let detail = || "DB_1: D1: ...".to_owned();
        assert_eq!(answer(StoreError::Frozen { detail: detail() }), (503, "shard_frozen", Some(5)));
        assert_eq!(
            answer(StoreError::Unavailable { database: 1, detail: detail() }),
            (503, "database_unavailable", Some(30))
        );
        assert_eq!(
            ApiError::from(StoreError::Unavailable { database: 1, detail: detail() }).unavailable_database(),
            Some(1)
        );
        assert_eq!(
            answer(StoreError::Misconfigured("no D1 binding DB_0".into())),
            (500, "misconfigured", None)
        );
        // No blanket 401: what a missing reference means is the write's service's to say.
        assert_eq!(answer(StoreError::MissingReference { detail: detail() }), (500, "internal", None));
        let unique = StoreError::AlreadyExists { columns: vec!["users.handle".into()], detail: detail() };
        assert_eq!(answer(unique), (500, "internal", None));
        assert_eq!(answer(StoreError::NotFound("the author's user row")), (500, "internal", None));
        let doc = ApiError::from(StoreError::Internal(detail())).to_problem();
        assert!(!doc.to_string().contains("DB_1"), "{doc}");
    }
}
