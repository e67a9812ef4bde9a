//! Public ids are decimal strings of positive integers below 2^53, so JavaScript clients can
//! hold them as numbers without losing precision, and D1 can bind them as f64 exactly.
//!
//! Each kind of id is its own type, so `follow(db, author, follower)` with the arguments
//! swapped does not compile, and a post id can never be looked up as a user.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The largest id we ever hand out or accept (2^53 - 1).
pub const MAX_ID: i64 = (1 << 53) - 1;

/// Parses a canonical id: ASCII digits, no sign, no leading zero, 1..=MAX_ID.
pub fn parse_id(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 16 || text.starts_with('0') {
        return None;
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: i64 = text.parse().ok()?;
    (1..=MAX_ID).contains(&value).then_some(value)
}

/// Snowflake ids for new users, posts and comments: milliseconds since the Unix epoch in the
/// high [`SNOWFLAKE_TIME_BITS`] bits, then the row's logical shard
/// ([`super::shard::SHARD_BITS`] = 8), then [`super::shard::ID_RANDOM_BITS`] = 3 random bits.
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

/// The id of a row created at `time_ms` on `shard`, with the low bits of `random`.
pub fn snowflake_in(time_ms: i64, shard: super::shard::LogicalShard, random: u64) -> Option<i64> {
    let low = ((shard.index() as u64) << super::shard::ID_RANDOM_BITS)
        | (random & ((1 << super::shard::ID_RANDOM_BITS) - 1));
    snowflake(time_ms, low)
}

/// The creation millisecond a snowflake id encodes.
pub fn snowflake_time(id: i64) -> i64 {
    id >> SNOWFLAKE_RANDOM_BITS
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(i64);

        impl $name {
            /// Parses the API's decimal-string form (see [`parse_id`]).
            pub fn parse(text: &str) -> Option<Self> {
                parse_id(text).map(Self)
            }

            /// Wraps a value read from storage, a verified token or a signed cursor: places
            /// that only ever hold ids this service issued.
            pub const fn from_trusted(raw: i64) -> Self {
                Self(raw)
            }

            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A registered user (reader, author, follower, liker).
    UserId
);
id_type!(
    /// A post.
    PostId
);
id_type!(
    /// A comment on a post.
    CommentId
);
id_type!(
    /// A row of the transactional outbox (one fan-out or window event).
    OutboxId
);
id_type!(
    /// One of a recipient's notifications (unique per recipient: `domain/notifications.rs`).
    NotificationId
);
id_type!(
    /// One of a user's Mastodon lists (a snowflake of its owner's shard; looked up with its
    /// owner, so it names nothing for anyone else).
    ListId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_canonical_ids() {
        assert_eq!(parse_id("1"), Some(1));
        assert_eq!(parse_id("9007199254740991"), Some(MAX_ID));
        assert_eq!(PostId::parse("42").map(PostId::get), Some(42));
        assert_eq!(UserId::from_trusted(7).to_string(), "7");
    }

    #[test]
    fn rejects_everything_else() {
        for bad in ["", "0", "007", "-1", "+1", "1.0", "1e3", " 1", "9007199254740992", "abc", "１"] {
            assert_eq!(parse_id(bad), None, "{bad}");
            assert_eq!(UserId::parse(bad), None, "{bad}");
        }
    }

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
        assert_eq!(crate::domain::time::format_rfc3339(SNOWFLAKE_MAX_TIME_MS), "2109-05-15T07:35:11.103Z");
    }

    #[test]
    fn an_import_from_1971_gets_a_small_id_below_every_current_one() {
        let y1971 = 31_536_000_000; // 1971-01-01T00:00:00Z
        let old = snowflake(y1971, 2047).unwrap_or(MAX_ID);
        assert!(old < 1 << 46, "{old}: the time bits of 1971 are a 35-bit number");
        assert!(Some(old) < snowflake(NOW, 0));
    }

    #[test]
    fn ids_serialize_as_plain_numbers() {
        let id = CommentId::from_trusted(12);
        assert_eq!(serde_json::to_string(&id).ok().as_deref(), Some("12"));
        assert_eq!(serde_json::from_str::<CommentId>("12").ok(), Some(id));
    }
}
