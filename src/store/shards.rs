//! The physical D1 databases of one request or job and the map that routes logical shards to
//! them (`domain/shard.rs`).
//!
//! The databases are the bindings `DB_0`, `DB_1`, ... that exist: counted at run time by asking
//! the environment for `DB_i` until one is missing (at most [`LOGICAL_SHARDS`]), so the number
//! of databases is whatever the deployed config binds and no var can disagree with it.
//! `DB_0` is also the *control* database: the tables that are not per user live there (OAuth
//! apps and codes, revoked tokens, `stats`, `minute_counts`, `latency_samples`, `audit_log`,
//! `test_faults`, `live_readers`).

use std::rc::Rc;

use worker::Env;

use super::{Db, Io};
use crate::domain::ids::{CommentId, PostId, UserId};
use crate::domain::shard::{shard_of_handle, shard_of_id, LogicalShard, ShardMap, LOGICAL_SHARDS};
use crate::error::{ApiError, ApiResult};

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
    pub fn from_env(env: &Env, spec: &str, io: &Rc<Io>) -> ApiResult<Self> {
        let mut dbs = Vec::new();
        while dbs.len() < LOGICAL_SHARDS {
            match env.d1(&binding(dbs.len())) {
                Ok(d1) => dbs.push(Db::indexed(d1, dbs.len(), io.clone())),
                Err(_) => break,
            }
        }
        if dbs.is_empty() {
            return Err(ApiError::Misconfigured(format!("no D1 binding {CONTROL_BINDING}")));
        }
        let map = map_for(spec, dbs.len())?;
        Ok(Self { dbs, map })
    }

    /// `DB_0`: where the tables that are not per user live (see the module comment).
    pub fn control(&self) -> &Db {
        &self.dbs[0]
    }

    /// The database a logical shard lives on.
    pub fn of(&self, shard: LogicalShard) -> &Db {
        // In range by construction: `map_for` checks every mapped index against `dbs.len()`.
        &self.dbs[self.map.database(shard)]
    }

    /// A user's home database.
    pub fn user(&self, user: UserId) -> &Db {
        self.of(shard_of_id(user.get()))
    }

    /// A post's database (its author's).
    pub fn post(&self, post: PostId) -> &Db {
        self.of(shard_of_id(post.get()))
    }

    /// A comment's database (its post's).
    pub fn comment(&self, comment: CommentId) -> &Db {
        self.of(shard_of_id(comment.get()))
    }

    /// The database holding a handle's directory row.
    pub fn handle(&self, handle: &str) -> &Db {
        self.of(shard_of_handle(handle))
    }

    /// Every physical database, `DB_0` first (migrations, stats, fan-out over all of them).
    pub fn all(&self) -> &[Db] {
        &self.dbs
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

/// The map for `databases` bindings. Empty `SHARD_MAP`: every logical shard on `DB_0`,
/// whatever the number of databases, because data placement is not switched on yet (every
/// table still lives on `DB_0`); the default becomes `ShardMap::even(databases)` together with
/// placement. A given map must cover every shard and name only existing databases. Public
/// for `scripts/deploy --dry-run` (examples/check-shard-map.rs), which checks it before upload.
pub fn map_for(spec: &str, databases: usize) -> ApiResult<ShardMap> {
    if spec.trim().is_empty() {
        return Ok(ShardMap::even(1));
    }
    ShardMap::parse(spec, databases).map_err(|why| {
        ApiError::Misconfigured(format!("SHARD_MAP is invalid for {databases} database(s): {why}"))
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
    fn an_empty_map_keeps_every_shard_on_the_control_database_for_now() {
        for databases in [1, 4, 256] {
            let map = map_for("", databases).ok();
            assert!(map.is_some_and(|m| LogicalShard::all().all(|s| m.database(s) == 0)), "{databases}");
        }
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
