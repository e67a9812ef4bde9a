//! Where a row lives: every id names its logical shard in its own bits, and a fixed table maps
//! the [`LOGICAL_SHARDS`] logical shards onto the physical D1 databases. Routing is arithmetic:
//! no lookup ever stands between an id and its database.
//!
//! - A user's id carries their *home* shard (drawn at sign-up).
//! - A post's and a comment's id carry the shard of the post's author, so a post, its likes,
//!   its comments and its author's row share one database.
//! - A handle lives in the directory on the shard of its hash, so "is this handle free" and
//!   "whose is it" are one statement on one database.
//!
//! The number of logical shards never changes (it is in every id); the number of physical
//! databases does, by moving whole logical shards (see README "Moving a shard").

use super::snowflake::{LogicalShard, LOGICAL_SHARDS};

/// The directory shard of a handle: FNV-1a over its bytes, then SplitMix64's finalizer (FNV
/// alone spreads similar short strings badly). Handles are stored lower-case, so one handle
/// has one byte string. Stable forever, as directory rows are placed by it.
pub fn shard_of_handle(handle: &str) -> LogicalShard {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in handle.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^= hash >> 31;
    LogicalShard::from_random(hash)
}

/// Which physical database each logical shard lives on: `databases[s]` for shard `s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardMap {
    physical: Vec<u16>,
    databases: usize,
}

impl ShardMap {
    /// The default for `databases` physical databases: contiguous, equal ranges (shard `s` on
    /// database `s * P / 256`), so growing P by moving shards keeps most of them in place.
    pub fn even(databases: usize) -> Self {
        let databases = databases.clamp(1, LOGICAL_SHARDS);
        let physical = (0..LOGICAL_SHARDS).map(|s| (s * databases / LOGICAL_SHARDS) as u16).collect();
        Self { physical, databases }
    }

    /// Parses `SHARD_MAP`: empty for [`ShardMap::even`], else comma-separated `FIRST-LAST:DB`
    /// (or `SHARD:DB`) ranges that together cover every logical shard exactly once, e.g.
    /// `0-127:0,128-255:1`. Every database index must be below `databases` (the bindings
    /// `DB_0` .. `DB_{P-1}` that exist) and hold at least one shard.
    pub fn parse(spec: &str, databases: usize) -> Result<Self, String> {
        if spec.trim().is_empty() {
            return Ok(Self::even(databases));
        }
        let mut physical: Vec<Option<u16>> = vec![None; LOGICAL_SHARDS];
        for part in spec.split(',').map(str::trim) {
            let (range, db) = part.split_once(':').ok_or(format!("`{part}`: expected FIRST-LAST:DB"))?;
            let db: usize =
                db.trim().parse().map_err(|_| format!("`{part}`: the database must be a number"))?;
            if db >= databases {
                return Err(format!("`{part}`: database {db}, but only DB_0 .. DB_{} exist", databases - 1));
            }
            let (first, last) = range.split_once('-').unwrap_or((range, range));
            let parse_shard = |s: &str| -> Result<usize, String> {
                s.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n < LOGICAL_SHARDS)
                    .ok_or(format!("`{part}`: shards are 0 .. {}", LOGICAL_SHARDS - 1))
            };
            let (first, last) = (parse_shard(first)?, parse_shard(last)?);
            if first > last {
                return Err(format!("`{part}`: the range is backwards"));
            }
            for slot in &mut physical[first..=last] {
                if slot.replace(db as u16).is_some() {
                    return Err(format!("`{part}`: a shard is mapped twice"));
                }
            }
        }
        let physical: Vec<u16> = physical
            .into_iter()
            .enumerate()
            .map(|(s, db)| db.ok_or(format!("logical shard {s} is not mapped")))
            .collect::<Result<_, _>>()?;
        if let Some(unused) = (0..databases).find(|d| !physical.contains(&(*d as u16))) {
            return Err(format!("DB_{unused} holds no shard"));
        }
        Ok(Self { physical, databases })
    }

    /// The physical database (index into `DB_0` .. `DB_{P-1}`) of a logical shard.
    pub fn database(&self, shard: LogicalShard) -> usize {
        usize::from(self.physical[shard.index()])
    }

    /// How many physical databases there are (P).
    pub fn databases(&self) -> usize {
        self.databases
    }

    /// The logical shards on one physical database, in order.
    pub fn shards_on(&self, database: usize) -> Vec<LogicalShard> {
        LogicalShard::all().filter(|s| self.database(*s) == database).collect()
    }

    /// The map in `SHARD_MAP` form, ranges merged (what the admin stats show).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let mut start = 0;
        for s in 1..=LOGICAL_SHARDS {
            if s == LOGICAL_SHARDS || self.physical[s] != self.physical[start] {
                let range = if start == s - 1 { start.to_string() } else { format!("{}-{}", start, s - 1) };
                parts.push(format!("{range}:{}", self.physical[start]));
                start = s;
            }
        }
        parts.join(",")
    }
}

/// Groups items by the physical database they live on, keeping first-seen order inside each
/// group and ordering groups by database index: one batch per database, all sent at once.
pub fn group_by_database<T>(
    map: &ShardMap,
    items: impl IntoIterator<Item = (LogicalShard, T)>,
) -> Vec<(usize, Vec<T>)> {
    let mut groups: Vec<(usize, Vec<T>)> = Vec::new();
    for (shard, item) in items {
        let db = map.database(shard);
        match groups.iter_mut().find(|(d, _)| *d == db) {
            Some((_, group)) => group.push(item),
            None => groups.push((db, vec![item])),
        }
    }
    groups.sort_by_key(|(db, _)| *db);
    groups
}

/// How many of `homes` (in order) may be taken while they span at most `limit` databases: a
/// slice cut there costs at most `limit` lookups (one per database), however many databases
/// there are. At least one when `homes` is not empty.
pub fn prefix_within_databases(
    map: &ShardMap,
    homes: impl IntoIterator<Item = LogicalShard>,
    limit: usize,
) -> usize {
    let mut seen: Vec<usize> = Vec::new();
    let mut taken = 0;
    for shard in homes {
        let db = map.database(shard);
        if !seen.contains(&db) {
            if seen.len() >= limit.max(1) {
                break;
            }
            seen.push(db);
        }
        taken += 1;
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_spread_over_the_shards() {
        let mut seen = [0usize; LOGICAL_SHARDS];
        for i in 0..25_600 {
            seen[shard_of_handle(&format!("user{i}")).index()] += 1;
        }
        let (min, max) = (seen.iter().min().copied(), seen.iter().max().copied());
        assert!(min > Some(50) && max < Some(160), "{min:?} {max:?}: about 100 each");
        assert_eq!(shard_of_handle("alice"), shard_of_handle("alice"));
    }

    #[test]
    fn the_even_map_gives_contiguous_equal_ranges() {
        let one = ShardMap::even(1);
        assert!(LogicalShard::all().all(|s| one.database(s) == 0));
        let four = ShardMap::even(4);
        assert_eq!(four.database(LogicalShard::new(0)), 0);
        assert_eq!(four.database(LogicalShard::new(63)), 0);
        assert_eq!(four.database(LogicalShard::new(64)), 1);
        assert_eq!(four.database(LogicalShard::new(255)), 3);
        assert_eq!(four.describe(), "0-63:0,64-127:1,128-191:2,192-255:3");
        assert_eq!(four.shards_on(2).len(), 64);
        assert_eq!(ShardMap::even(3).shards_on(0).len(), 86);
    }

    #[test]
    fn a_map_parses_back_from_its_description() {
        let spec = "0-63:0,64:3,65-127:1,128-191:2,192-255:3";
        let map = ShardMap::parse(spec, 4);
        assert_eq!(map.as_ref().map(ShardMap::describe).as_deref(), Ok(spec));
        assert_eq!(map.map(|m| m.database(LogicalShard::new(64))), Ok(3));
        assert_eq!(ShardMap::parse(" ", 4), Ok(ShardMap::even(4)));
    }

    #[test]
    fn a_map_that_misses_doubles_or_overflows_is_refused() {
        for (spec, databases) in [
            ("0-254:0", 1),
            ("0-255:0,7:0", 1),
            ("0-255:1", 1),
            ("0-256:0", 1),
            ("9-3:0", 1),
            ("0-255", 1),
            ("0-255:x", 1),
            ("0-255:0", 2),
        ] {
            assert!(ShardMap::parse(spec, databases).is_err(), "{spec} on {databases}");
        }
    }

    #[test]
    fn grouping_makes_one_group_per_database_in_order() {
        let map = ShardMap::even(4);
        let items =
            [(LogicalShard::new(200), 'a'), (LogicalShard::new(1), 'b'), (LogicalShard::new(250), 'c')];
        assert_eq!(group_by_database(&map, items), vec![(0, vec!['b']), (3, vec!['a', 'c'])]);
    }

    #[test]
    fn a_prefix_stops_before_the_database_past_the_limit() {
        let map = ShardMap::even(4);
        // Shards 0, 64, 128, 192 live on databases 0, 1, 2, 3.
        let on = |shards: &[usize]| shards.iter().map(|&s| LogicalShard::new(s as u8)).collect::<Vec<_>>();
        assert_eq!(prefix_within_databases(&map, on(&[0, 1, 64, 2, 128, 65]), 2), 4);
        assert_eq!(prefix_within_databases(&map, on(&[0, 1, 64, 2, 128, 65]), 3), 6);
        assert_eq!(prefix_within_databases(&map, on(&[192, 0]), 0), 1, "always at least one");
        assert_eq!(prefix_within_databases(&map, on(&[]), 2), 0);
    }
}
