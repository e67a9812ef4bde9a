//! The physical D1 databases of one request or job and the map that routes logical shards to
//! them (`domain/shard.rs`).
//!
//! The databases are the bindings `DB_0`, `DB_1`, ... that exist: counted at run time by asking
//! the environment for `DB_i` until one is missing (at most [`LOGICAL_SHARDS`]), so the number
//! of databases is whatever the deployed config binds and no var can disagree with it.
//! `DB_0` is also the *control* database: the tables that are not per user live there (OAuth
//! apps and codes, revoked tokens, `stats`, `minute_counts`, `latency_samples`, `audit_log`,
//! `test_faults`, `live_readers`).

use std::future::Future;
use std::rc::Rc;

use futures_util::future::join_all;

use worker::Env;

use super::handles::{AnyDb, ControlDb, HandleDb, IndexDb, OutboxDb, PostDb, UserDb};
use super::{remote, Db, Io};
use super::{StoreError, StoreResult};
use crate::domain::ids::{CommentId, MediaId, OutboxId, PostId, UserId};
use crate::domain::plan::MAX_PARALLEL_DATABASES;
use crate::domain::shard::{group_by_database, shard_of_handle, ShardMap};
use crate::domain::snowflake::{shard_of_id, LogicalShard, LOGICAL_SHARDS};
use crate::domain::tags::IndexKey;

/// The binding of the control database (and of the only one in a 1-database deployment).
pub const CONTROL_BINDING: &str = "DB_0";

/// The binding name of physical database `index`.
pub fn binding(index: usize) -> String {
    format!("DB_{index}")
}

/// Every physical database of this request and the logical-to-physical map.
pub struct Shards {
    /// Never empty: `DB_0` must exist for a context to be built at all.
    dbs: Vec<Db>,
    map: ShardMap,
}

impl Shards {
    /// Counts the `DB_i` bindings and parses `SHARD_MAP` (`spec`) against them. A missing
    /// `DB_0` or an invalid map is a deployment error: every request fails with it (500) rather
    /// than sending a row to the wrong database.
    pub fn from_env(env: &Env, spec: &str, io: &Rc<Io>) -> StoreResult<Self> {
        let dbs = match var(env, PER_SCRIPT_VAR) {
            Some(per_script) => split_databases(env, &per_script, io)?,
            None => local_databases(env, io),
        };
        if dbs.is_empty() {
            return Err(StoreError::Misconfigured(format!("no D1 binding {CONTROL_BINDING}")));
        }
        let map = map_for(spec, dbs.len())?;
        Ok(Self { dbs, map })
    }

    /// `DB_0`: where the tables that are not per user live (see the module comment).
    pub fn control(&self) -> ControlDb<'_> {
        ControlDb::new(&self.dbs[0])
    }

    /// The database a logical shard lives on.
    fn of(&self, shard: LogicalShard) -> &Db {
        // In range by construction: `map_for` checks every mapped index against `dbs.len()`.
        &self.dbs[self.map.database(shard)]
    }

    /// A user's home database.
    pub fn user(&self, user: UserId) -> UserDb<'_> {
        UserDb::new(self.of(shard_of_id(user.get())))
    }

    /// A post's database (its author's).
    pub fn post(&self, post: PostId) -> PostDb<'_> {
        PostDb::new(self.of(shard_of_id(post.get())))
    }

    /// An upload's database (its uploader's).
    pub fn media(&self, media: MediaId) -> UserDb<'_> {
        UserDb::new(self.of(shard_of_id(media.get())))
    }

    /// A comment's database (its post's).
    pub fn comment(&self, comment: CommentId) -> PostDb<'_> {
        PostDb::new(self.of(shard_of_id(comment.get())))
    }

    /// The database an outbox event lives on (its id names the shard, `store::outbox::new_id_sql`).
    pub fn outbox(&self, event: OutboxId) -> OutboxDb<'_> {
        OutboxDb::new(self.of(shard_of_id(event.get())))
    }

    /// The database holding a handle's directory row.
    pub fn handle(&self, handle: &str) -> HandleDb<'_> {
        HandleDb::new(self.of(shard_of_handle(handle)))
    }

    /// The database holding a timeline index key's rows.
    pub fn index(&self, key: &IndexKey) -> IndexDb<'_> {
        IndexDb::new(self.of(key.shard()))
    }

    /// Physical database `index` (`DB_{index}`), if bound.
    pub fn database(&self, index: usize) -> Option<AnyDb<'_>> {
        self.dbs.get(index).map(AnyDb::new)
    }

    /// Groups users by home database (first-seen order inside a group, groups by index), for
    /// one statement per database instead of one per user.
    pub fn users_by_database(
        &self,
        users: impl IntoIterator<Item = UserId>,
    ) -> Vec<(AnyDb<'_>, Vec<UserId>)> {
        self.by_home(users, |u| *u)
    }

    /// Groups any items by the home database of the user `home` names for each.
    pub fn by_home<T>(
        &self,
        items: impl IntoIterator<Item = T>,
        home: impl Fn(&T) -> UserId,
    ) -> Vec<(AnyDb<'_>, Vec<T>)> {
        let keyed = items.into_iter().map(|t| (shard_of_id(home(&t).get()), t));
        group_by_database(&self.map, keyed).into_iter().map(|(i, g)| (AnyDb::new(&self.dbs[i]), g)).collect()
    }

    /// Runs `job` on each `(database, group)`, at most [`MAX_PARALLEL_DATABASES`] at once (an
    /// invocation holds only 6 D1 connections at a time: more would queue inside the runtime
    /// anyway, and waves keep the count of waits readable). Results in input order; the first
    /// error wins.
    pub async fn across<'a, G, T, Fut>(
        &'a self,
        groups: Vec<(AnyDb<'a>, G)>,
        job: impl Fn(AnyDb<'a>, G) -> Fut,
    ) -> StoreResult<Vec<T>>
    where
        Fut: Future<Output = StoreResult<T>>,
    {
        let mut out = Vec::with_capacity(groups.len());
        let mut groups = groups.into_iter().peekable();
        while groups.peek().is_some() {
            let wave: Vec<_> =
                groups.by_ref().take(MAX_PARALLEL_DATABASES).map(|(db, g)| job(db, g)).collect();
            for done in join_all(wave).await {
                out.push(done?);
            }
        }
        Ok(out)
    }

    /// Runs `job` on every physical database (cron work, admin figures), in waves as [`Self::across`].
    pub async fn on_every_database<'a, T, Fut>(
        &'a self,
        job: impl Fn(AnyDb<'a>) -> Fut,
    ) -> StoreResult<Vec<T>>
    where
        Fut: Future<Output = StoreResult<T>>,
    {
        self.across(self.all().map(|db| (db, ())).collect(), |db, ()| job(db)).await
    }

    /// Every physical database, `DB_0` first (migrations, stats, fan-out over all of them).
    pub fn all(&self) -> impl ExactSizeIterator<Item = AnyDb<'_>> {
        self.dbs.iter().map(AnyDb::new)
    }

    pub fn map(&self) -> &ShardMap {
        &self.map
    }

    /// The index (`i` of `DB_i`) a logical shard lives on.
    pub fn index_of(&self, shard: LogicalShard) -> usize {
        self.map.database(shard)
    }

    /// The logical shards on database `index`, as merged ranges (`0-63,70`); empty when it
    /// holds none.
    pub fn describe_database(&self, index: usize) -> String {
        describe_shards(&self.map.shards_on(index))
    }
}

/// The var that says the databases are split over data scripts (ARCHITECTURE.md "More than one
/// Worker script"): at most this many a script, `DATA_k` holding `k*M .. k*M+M-1`.
pub const PER_SCRIPT_VAR: &str = "DATA_PER_SCRIPT";
/// With [`PER_SCRIPT_VAR`]: how many databases there are in all.
pub const DATABASES_VAR: &str = "DATABASES";

/// The service binding of the data script `k`.
pub fn data_binding(script: usize) -> String {
    format!("DATA_{script}")
}

fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name).ok().map(|v| v.to_string()).filter(|v| !v.trim().is_empty())
}

/// This invocation's own bindings `DB_0`, `DB_1`, ... up to the first missing one.
fn local_databases(env: &Env, io: &Rc<Io>) -> Vec<Db> {
    let mut dbs = Vec::new();
    while dbs.len() < LOGICAL_SHARDS {
        match env.d1(&binding(dbs.len())) {
            Ok(d1) => dbs.push(Db::local(d1, dbs.len(), io.clone())),
            Err(_) => break,
        }
    }
    dbs
}

/// `DATABASES` databases, each through this invocation's own `DB_i` when it has one, else
/// through the data script `DATA_{i / per_script}`. A database neither reaches is a deployment
/// error (every request fails with it rather than writing a row to the wrong place).
fn split_databases(env: &Env, per_script: &str, io: &Rc<Io>) -> StoreResult<Vec<Db>> {
    let misconfigured = |why: String| StoreError::Misconfigured(why);
    let per_script: usize = per_script.trim().parse().ok().filter(|&m| m >= 1).ok_or_else(|| {
        misconfigured(format!("{PER_SCRIPT_VAR}={per_script}: expected a count of databases"))
    })?;
    let total = var(env, DATABASES_VAR).unwrap_or_default();
    let total: usize =
        total.trim().parse().ok().filter(|n| (1..=LOGICAL_SHARDS).contains(n)).ok_or_else(|| {
            misconfigured(format!(
                "{DATABASES_VAR}={total}: expected 1 ..= {LOGICAL_SHARDS} with {PER_SCRIPT_VAR}"
            ))
        })?;
    let token: Rc<str> = var(env, remote::TOKEN_VAR).unwrap_or_default().into();
    let mut scripts: Vec<Option<remote::DataScript>> = Vec::new();
    let mut dbs = Vec::with_capacity(total);
    for index in 0..total {
        if let Ok(d1) = env.d1(&binding(index)) {
            dbs.push(Db::local(d1, index, io.clone()));
            continue;
        }
        let script = index / per_script;
        if scripts.len() <= script {
            scripts.resize(script + 1, None);
        }
        if scripts[script].is_none() {
            let name = data_binding(script);
            let fetcher = env.service(&name).map_err(|_| {
                misconfigured(format!("DB_{index} has neither a D1 binding nor a service binding {name}"))
            })?;
            scripts[script] = Some(remote::DataScript::new(fetcher, name.into(), token.clone()));
        }
        let found = scripts[script].clone();
        dbs.extend(found.map(|s| Db::remote(s, index, io.clone())));
    }
    Ok(dbs)
}

/// The map for `databases` bindings. Empty `SHARD_MAP`: the even split, `ShardMap::even`
/// (contiguous ranges of logical shards, one per database; for 1 database, all on `DB_0`).
/// A given map must cover every shard and name only existing databases. Public for
/// `scripts/deploy --dry-run` (examples/check-shard-map.rs), which checks it before upload.
pub fn map_for(spec: &str, databases: usize) -> StoreResult<ShardMap> {
    ShardMap::parse(spec, databases).map_err(|why| {
        StoreError::Misconfigured(format!("SHARD_MAP is invalid for {databases} database(s): {why}"))
    })
}

/// Sorted shards as merged ranges: `[0, 1, 2, 7]` -> `0-2,7`.
fn describe_shards(shards: &[LogicalShard]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    let flush = |parts: &mut Vec<String>, (first, last): (usize, usize)| {
        parts.push(if first == last { first.to_string() } else { format!("{first}-{last}") });
    };
    for shard in shards.iter().map(|s| s.index()) {
        run = match run {
            Some((first, last)) if shard == last + 1 => Some((first, shard)),
            Some(done) => {
                flush(&mut parts, done);
                Some((shard, shard))
            }
            None => Some((shard, shard)),
        };
    }
    if let Some(done) = run {
        flush(&mut parts, done);
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_map_splits_the_shards_evenly_over_the_bindings() {
        for databases in [1, 4, 256] {
            let map = map_for("", databases).ok();
            assert_eq!(map.map(|m| m.database(LogicalShard::new(255))), Some(databases - 1), "{databases}");
        }
        assert_eq!(map_for("", 4).map(|m| m.database(LogicalShard::new(64))).ok(), Some(1));
    }

    #[test]
    fn a_given_map_is_checked_against_the_bindings_and_says_why() {
        let four = map_for("0-63:0,64-127:1,128-191:2,192-255:3", 4);
        assert_eq!(four.map(|m| m.database(LogicalShard::new(200))).ok(), Some(3));
        let err = map_for("0-127:0,128-255:1", 1).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("SHARD_MAP") && err.contains("database 1"), "{err}");
        assert!(map_for("0-100:0", 1).is_err());
    }

    #[test]
    fn shards_describe_as_merged_ranges() {
        let s = |v: &[u8]| describe_shards(&v.iter().map(|&i| LogicalShard::new(i)).collect::<Vec<_>>());
        assert_eq!(s(&[0, 1, 2, 7]), "0-2,7");
        assert_eq!(s(&[5]), "5");
        assert_eq!(s(&[]), "");
        assert_eq!(s(&[0, 2, 3, 255]), "0,2-3,255");
        let all: Vec<LogicalShard> = LogicalShard::all().collect();
        assert_eq!(describe_shards(&all), "0-255");
    }
}
