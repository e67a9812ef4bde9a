//! Notifications: someone followed you, liked your post, or commented on it. Pure rules: the
//! kinds and their filters, and the id layout that `store/notifications.rs` writes as SQL.
//!
//! A notification is a row on its recipient's home database, written in the same batch as the
//! change that makes or ends it, and only on that change's transition (a like that really
//! turns on, a new comment, a follow the author's side did not hold yet): a repeated or
//! redelivered change finds nothing to do, and a dismissed notification stays dismissed.

use serde::{Deserialize, Serialize};

use super::ids::{UserId, SNOWFLAKE_RANDOM_BITS};
use super::shard::ID_RANDOM_BITS;

/// A notification just made for a recipient with a live socket open: what to tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    pub recipient: UserId,
    pub id: i64,
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Follow,
    Favourite,
    /// A comment on the recipient's post (Mastodon's `mention`).
    Reply,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Follow, Kind::Favourite, Kind::Reply];

    /// The name stored and used by `/v1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Follow => "follow",
            Kind::Favourite => "favourite",
            Kind::Reply => "reply",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Mastodon's name: a reply is a `mention` there.
    pub fn mastodon(self) -> &'static str {
        match self {
            Kind::Reply => "mention",
            other => other.as_str(),
        }
    }

    fn of_mastodon(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.mastodon() == name)
    }
}

/// Which kinds a read asks for (never empty of meaning: an empty set answers nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindFilter(Vec<Kind>);

impl Default for KindFilter {
    fn default() -> Self {
        Self(Kind::ALL.to_vec())
    }
}

impl KindFilter {
    /// `/v1`'s `?kinds=follow,reply`; `None` for an unknown kind (the caller's 400).
    pub fn parse_v1(list: &str) -> Option<KindFilter> {
        let mut kinds = Vec::new();
        for name in list.split(',').filter(|n| !n.is_empty()) {
            kinds.push(Kind::parse(name)?);
        }
        if kinds.is_empty() {
            return None;
        }
        kinds.sort_unstable();
        kinds.dedup();
        Some(KindFilter(kinds))
    }

    /// Mastodon's `types[]` and `exclude_types[]`, intersected as Mastodon does: types it has and
    /// we never make (`reblog`, `poll`, ...) match nothing; unknown excluded types are ignored.
    pub fn from_mastodon(types: &[String], exclude: &[String]) -> KindFilter {
        let wanted = |k: &Kind| types.is_empty() || types.iter().any(|t| Kind::of_mastodon(t) == Some(*k));
        let excluded = |k: &Kind| exclude.iter().any(|t| Kind::of_mastodon(t) == Some(*k));
        KindFilter(Kind::ALL.into_iter().filter(|k| wanted(k) && !excluded(k)).collect())
    }

    pub fn kinds(&self) -> &[Kind] {
        &self.0
    }

    /// The stable name of the filter, for binding cursors to it (`follow,reply`).
    pub fn key(&self) -> String {
        self.0.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")
    }

    /// The JSON array the SQL reads with `json_each`.
    pub fn json(&self) -> String {
        serde_json::to_string(&self.0.iter().map(|k| k.as_str()).collect::<Vec<_>>()).unwrap_or_default()
    }
}

/// The next notification id for a recipient on `shard_bits` (the recipient id's shard bits, in
/// place), made at `now_ms`, after the recipient's highest id `max` so far: the snowflake of
/// `now_ms` with sequence 0, or the one after `max` when that is not lower (several in one
/// millisecond; after 8, the next millisecond). Increasing per recipient, even across a clock
/// step back or a shard move (the target's highest id continues). `store/notifications.rs`
/// writes exactly this in SQL; the unit tests pin it.
pub fn next_id(now_ms: i64, max: Option<i64>, shard_bits: i64) -> i64 {
    let base = (now_ms << SNOWFLAKE_RANDOM_BITS) | shard_bits;
    match max {
        None => base,
        Some(m) => base.max(successor(m, shard_bits)),
    }
}

const SEQUENCE_MASK: i64 = (1 << ID_RANDOM_BITS) - 1;

fn successor(id: i64, shard_bits: i64) -> i64 {
    if id & SEQUENCE_MASK < SEQUENCE_MASK {
        id + 1
    } else {
        (((id >> SNOWFLAKE_RANDOM_BITS) + 1) << SNOWFLAKE_RANDOM_BITS) | shard_bits
    }
}

/// The shard bits of a user id, in place (what a notification id shares with its recipient).
pub fn shard_bits(user_id: i64) -> i64 {
    user_id & (((1 << SNOWFLAKE_RANDOM_BITS) - 1) & !SEQUENCE_MASK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::snowflake_time;

    #[test]
    fn kinds_round_trip_and_a_reply_is_a_mention_to_mastodon() {
        for kind in Kind::ALL {
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
            assert_eq!(Kind::of_mastodon(kind.mastodon()), Some(kind));
        }
        assert_eq!(Kind::Reply.mastodon(), "mention");
        assert_eq!(Kind::parse("mention"), None);
    }

    #[test]
    fn v1_filters_parse_sort_and_refuse_unknown_kinds() {
        let f = KindFilter::parse_v1("reply,follow,reply").expect("valid");
        assert_eq!(f.kinds(), &[Kind::Follow, Kind::Reply]);
        assert_eq!(f.key(), "follow,reply");
        assert_eq!(f.json(), r#"["follow","reply"]"#);
        assert_eq!(KindFilter::parse_v1("follow,boost"), None);
        assert_eq!(KindFilter::parse_v1(""), None);
        assert_eq!(KindFilter::default().kinds().len(), 3);
    }

    #[test]
    fn mastodon_types_and_exclusions_intersect() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(KindFilter::from_mastodon(&[], &[]).kinds(), &Kind::ALL);
        assert_eq!(KindFilter::from_mastodon(&s(&["mention"]), &[]).kinds(), &[Kind::Reply]);
        assert_eq!(
            KindFilter::from_mastodon(&[], &s(&["follow", "reblog"])).kinds(),
            &[Kind::Favourite, Kind::Reply]
        );
        assert!(KindFilter::from_mastodon(&s(&["reblog"]), &[]).kinds().is_empty());
        assert!(KindFilter::from_mastodon(&s(&["follow"]), &s(&["follow"])).kinds().is_empty());
    }

    #[test]
    fn ids_carry_the_time_and_shard_and_increase_per_recipient() {
        let user = (1_700_000_000_000i64 << 11) | (37 << 3) | 5;
        let bits = shard_bits(user);
        assert_eq!(bits, 37 << 3);
        let first = next_id(1_000, None, bits);
        assert_eq!(snowflake_time(first), 1_000);
        assert_eq!(first & 0x7ff, 37 << 3);
        // Eight in one millisecond, then the next millisecond.
        let mut last = first;
        for _ in 0..7 {
            let next = next_id(1_000, Some(last), bits);
            assert_eq!((next - last, snowflake_time(next)), (1, 1_000));
            last = next;
        }
        let ninth = next_id(1_000, Some(last), bits);
        assert_eq!((snowflake_time(ninth), ninth & 0x7ff), (1_001, 37 << 3));
        // A later millisecond starts at sequence 0; a clock step back still increases.
        assert_eq!(next_id(5_000, Some(ninth), bits), (5_000 << 11) | bits);
        assert!(next_id(10, Some(ninth), bits) > ninth);
    }
}
