//! The bit layout of every snowflake id (users, posts, comments, lists, audit rows; tokens,
//! outbox and notification ids reuse the shard field): 53 bits of time, logical shard and random,
//! encoded and decoded only here. Where a logical shard lives is `domain/shard.rs`; typed ids and
//! their parsing are `domain/ids.rs`.

use std::fmt;

/// Milliseconds since the Unix epoch in the high [`SNOWFLAKE_TIME_BITS`] bits, then the row's
/// logical shard ([`SHARD_BITS`] = 8), then [`ID_RANDOM_BITS`] = 3 random bits.
///
/// 42 + 8 + 3 = 53 bits, so every id is below 2^53 (exact in JavaScript and as a D1 f64). The Unix
/// epoch (rather than a recent one) lets imports from 1970 on derive their time bits from their
/// own `created_at`; 42 bits of milliseconds last until 2109-05-15. Ids sort by creation time
/// (to the millisecond; within one millisecond the order is the shard's, then random).
///
/// Randomness left, and why it is enough: ids carry no count and cannot be walked. Across
/// the service a millisecond still holds 2,048 possible ids (256 shards x 8), as before
/// sharding; one author's posts share a shard, so guessing them means 8 candidates per
/// millisecond, 28.8 million per hour of their history, each one a rate-limited request that
/// answers only what the caller may see anyway (ids are never secrets; every read checks
/// visibility). The cost is collisions: rows made in the same millisecond on the same shard
/// collide with probability 1/8 each, and the insert then retries with fresh random bits,
/// moving to the next millisecond when one is crowded (`store::snowflake`).
pub const SNOWFLAKE_TIME_BITS: u32 = 42;
/// The bits below the time: the shard and the random bits.
pub const SNOWFLAKE_RANDOM_BITS: u32 = 53 - SNOWFLAKE_TIME_BITS;
/// The last millisecond an id can encode: 2109-05-15T07:35:11.103Z.
pub const SNOWFLAKE_MAX_TIME_MS: i64 = (1 << SNOWFLAKE_TIME_BITS) - 1;
const RANDOM_MASK: i64 = (1 << SNOWFLAKE_RANDOM_BITS) - 1;

/// The id of something created at `time_ms` (Unix milliseconds) with the low bits of `random`;
/// `None` if the time is before 1970 or after [`SNOWFLAKE_MAX_TIME_MS`]. The one id that would
/// be 0 (the epoch's first millisecond with random bits 0) becomes 1, as ids start at 1.
pub fn snowflake(time_ms: i64, random: u64) -> Option<i64> {
    if !(0..=SNOWFLAKE_MAX_TIME_MS).contains(&time_ms) {
        return None;
    }
    Some(((time_ms << SNOWFLAKE_RANDOM_BITS) | (random as i64 & RANDOM_MASK)).max(1))
}

/// The ids a row created from `from_ms` to `to_ms` (both included) can have: every id carries
/// its time in its high bits.
pub fn id_range_of_times(from_ms: i64, to_ms: i64) -> (i64, i64) {
    let clamp = |t: i64| t.clamp(0, SNOWFLAKE_MAX_TIME_MS);
    let lo = clamp(from_ms) << SNOWFLAKE_RANDOM_BITS;
    let hi = (clamp(to_ms) << SNOWFLAKE_RANDOM_BITS) | ((1i64 << SNOWFLAKE_RANDOM_BITS) - 1);
    (lo, hi)
}

/// The id of a row created at `time_ms` on `shard`, with the low bits of `random`.
pub fn snowflake_in(time_ms: i64, shard: LogicalShard, random: u64) -> Option<i64> {
    let low = ((shard.index() as u64) << ID_RANDOM_BITS) | (random & ((1 << ID_RANDOM_BITS) - 1));
    snowflake(time_ms, low)
}

/// The creation millisecond a snowflake id encodes.
pub fn snowflake_time(id: i64) -> i64 {
    id >> SNOWFLAKE_RANDOM_BITS
}

/// Logical shards: 8 bits of every snowflake id. 256 databases of 10 GB each hold 2.5 TB,
/// and 256 single-threaded databases carry ~256k queries/s: more than the headline workload.
pub const SHARD_BITS: u32 = 8;
pub const LOGICAL_SHARDS: usize = 1 << SHARD_BITS;
/// The random bits left below the shard in a snowflake id.
pub const ID_RANDOM_BITS: u32 = SNOWFLAKE_RANDOM_BITS - SHARD_BITS;
const SHARD_MASK: i64 = (LOGICAL_SHARDS as i64) - 1;

const _: () = assert!(SNOWFLAKE_TIME_BITS + SHARD_BITS + ID_RANDOM_BITS == 53);

/// One of the [`LOGICAL_SHARDS`] logical shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogicalShard(u8);

impl LogicalShard {
    pub const fn new(index: u8) -> Self {
        Self(index)
    }

    /// A shard from any random bits (a new user's home).
    pub fn from_random(random: u64) -> Self {
        Self((random & SHARD_MASK as u64) as u8)
    }

    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Every logical shard, in order.
    pub fn all() -> impl Iterator<Item = LogicalShard> {
        (0..LOGICAL_SHARDS).map(|i| Self(i as u8))
    }
}

impl fmt::Display for LogicalShard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The logical shard a snowflake id (user, post or comment) names: the bits above the random
/// ones. Ids issued before sharding carry arbitrary bits there; they are read as the shard
/// they name, which is where a migration to sharding must put them.
pub fn shard_of_id(id: i64) -> LogicalShard {
    LogicalShard(((id >> ID_RANDOM_BITS) & SHARD_MASK) as u8)
}

/// `id` with its shard bits set to `shard`: a random id (an OAuth token's) that routes, and
/// moves, with its user's rows. The other bits are kept.
pub fn with_shard(id: i64, shard: LogicalShard) -> i64 {
    (id & !(SHARD_MASK << ID_RANDOM_BITS)) | ((shard.index() as i64) << ID_RANDOM_BITS)
}

/// The random bits of one insert's id attempts (its random bits and, after collisions, its
/// later milliseconds: `store::snowflake`). The caller draws them once from the platform's CSPRNG
/// (`context::id_seed`), so storage code does no I/O of its own for them and stays testable;
/// SplitMix64 stretches the 64 bits over the attempts, which only need to differ from a
/// concurrent insert's. Not `Clone`: two inserts sharing a seed would collide on every attempt.
#[derive(Debug)]
pub struct IdSeed(u64);

impl IdSeed {
    pub fn new(random: u64) -> Self {
        Self(random)
    }

    /// The next 64 random bits (SplitMix64).
    pub fn next_bits(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{parse_id, MAX_ID};

    /// 2026-11-30T08:15:02.123Z
    const NOW: i64 = 1_796_026_502_123;

    #[test]
    fn snowflakes_sort_by_time_whatever_the_random_bits() {
        let lowest_next = snowflake(NOW + 1, 0);
        for random in [0, 1, 2047, 2048, 65_535, u64::MAX] {
            let id = snowflake(NOW, random);
            assert!(id < lowest_next, "{random}");
            assert_eq!(id.map(snowflake_time), Some(NOW));
        }
        assert!(snowflake(NOW, 2047) < snowflake(NOW + 1, 0));
        assert_eq!(snowflake(NOW, 5), snowflake(NOW, 2048 + 5), "only the low 11 bits are used");
        assert_eq!(snowflake(NOW, 5).map(|id| id & 2047), Some(5));
    }

    #[test]
    fn snowflakes_are_valid_ids_below_2_pow_53_for_every_accepted_time() {
        // Imports accept 1970-01-01 .. now + 60 s; new rows use the clock.
        for time in [0, 1, 31_536_000_000, NOW, NOW + 60_000, SNOWFLAKE_MAX_TIME_MS] {
            for random in [0, 1, 1024, 2047] {
                let id = snowflake(time, random).unwrap_or(0);
                assert!((1..=MAX_ID).contains(&id), "{time} {random}: {id}");
                assert_eq!(parse_id(&id.to_string()), Some(id));
            }
        }
        assert_eq!(snowflake(SNOWFLAKE_MAX_TIME_MS, 2047), Some(MAX_ID));
        assert_eq!(snowflake(0, 0), Some(1), "id 0 does not exist");
        assert_eq!(snowflake(-1, 0), None, "before 1970");
        assert_eq!(snowflake(SNOWFLAKE_MAX_TIME_MS + 1, 0), None, "after 2109-05-15");
        assert_eq!(crate::time::format_rfc3339(SNOWFLAKE_MAX_TIME_MS), "2109-05-15T07:35:11.103Z");
    }

    #[test]
    fn an_import_from_1971_gets_a_small_id_below_every_current_one() {
        let y1971 = 31_536_000_000; // 1971-01-01T00:00:00Z
        let old = snowflake(y1971, 2047).unwrap_or(MAX_ID);
        assert!(old < 1 << 46, "{old}: the time bits of 1971 are a 35-bit number");
        assert!(Some(old) < snowflake(NOW, 0));
    }

    #[test]
    fn an_id_given_a_shard_routes_there_and_keeps_its_other_bits() {
        let id = 0x1F_FFFF_FFFF_FFFF_i64; // every bit of a 53-bit id
        let placed = with_shard(id, LogicalShard::new(5));
        assert_eq!(shard_of_id(placed), LogicalShard::new(5));
        assert_eq!(placed | (SHARD_MASK << ID_RANDOM_BITS), id);
        assert_eq!(with_shard(placed, LogicalShard::new(200)) >> (ID_RANDOM_BITS + SHARD_BITS), id >> 11);
    }
    #[test]
    fn an_id_names_the_shard_it_was_made_for_and_keeps_its_time() {
        for shard in [0u8, 1, 7, 128, 255] {
            for random in [0u64, 1, 7, u64::MAX] {
                let id = snowflake_in(NOW, LogicalShard::new(shard), random).unwrap_or(0);
                assert_eq!(shard_of_id(id), LogicalShard::new(shard), "{shard} {random}");
                assert_eq!(snowflake_time(id), NOW);
                assert!((1..=MAX_ID).contains(&id));
            }
        }
    }

    #[test]
    fn ids_of_one_millisecond_and_shard_differ_only_in_the_random_bits() {
        let shard = LogicalShard::new(42);
        let ids: std::collections::BTreeSet<i64> =
            (0..64u64).filter_map(|r| snowflake_in(NOW, shard, r)).collect();
        assert_eq!(ids.len(), 1 << ID_RANDOM_BITS, "{ID_RANDOM_BITS} random bits");
        assert!(ids.iter().all(|&id| snowflake_in(NOW + 1, shard, 0) > Some(id)), "time sorts first");
    }

    #[test]
    fn a_seed_gives_every_attempt_different_random_bits_and_two_seeds_differ() {
        let (mut a, mut b) = (IdSeed::new(1), IdSeed::new(2));
        let first: Vec<u64> = (0..32).map(|_| a.next_bits()).collect();
        let second: Vec<u64> = (0..32).map(|_| b.next_bits()).collect();
        assert_eq!(first.iter().collect::<std::collections::BTreeSet<_>>().len(), 32);
        assert!(first.iter().zip(&second).all(|(x, y)| x != y));
        let low: std::collections::BTreeSet<u64> = first.iter().map(|r| r & 7).collect();
        assert!(low.len() > 4, "{low:?}: the id's 3 random bits vary across attempts");
    }
}
