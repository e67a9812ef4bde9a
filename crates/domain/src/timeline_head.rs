//! A timeline key's head held by a replicated object (`TimelineHead`): the newest entries of
//! the public timeline (its stripes merged) or of one tag, so that a page reads one object
//! instead of the key's database. Every public page reads the same stripes and every page
//! of a trending tag the same key, and those rows live on one database whatever the number of
//! databases: held here, each of `R` replicas reads a key's database at most once per TTL,
//! whatever the read rate (docs/mastodon.md, "Public and tag timelines").
//!
//! Why a TTL is enough, when hot authors' replicas need exact change counters: the entries are
//! candidates, never what a viewer may see. Every page re-reads each entry's post where it
//! lives (deleted, made private, its author suspended or blocking, its tag edited away), so a
//! stale head can only be late to show a new post, never show a hidden one. How late: at most
//! the TTL, except for the post's author, whose index write tells the replica the author reads
//! through (so one's own public post shows at once).

use serde::{Deserialize, Serialize};

use crate::ids::{PostId, UserId};
use crate::tags::{key_of, IndexKey};

/// Entries a head holds: what a page reads at most (40 posts, each read of the index four
/// times while hidden posts are topped up) with room to spare.
pub const HEAD_CAPACITY: usize = 200;

/// Which timeline a head holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeadKey {
    /// The public timeline: its stripes merged.
    Public,
    /// One tag (its key: `tags::key_of`).
    Tag(String),
}

impl HeadKey {
    pub fn tag(name: &str) -> Self {
        HeadKey::Tag(key_of(name))
    }

    pub fn name(&self) -> String {
        match self {
            HeadKey::Public => "public".to_string(),
            HeadKey::Tag(key) => format!("tag:{key}"),
        }
    }

    /// The head an index key's entries belong to (a public stripe's: the public timeline's).
    pub fn of_index_key(key: &IndexKey) -> HeadKey {
        match key.as_str().strip_prefix("tag:") {
            Some(tag) => HeadKey::Tag(tag.to_string()),
            None => HeadKey::Public,
        }
    }

    /// The index keys a load reads.
    pub fn index_keys(&self) -> Vec<IndexKey> {
        match self {
            HeadKey::Public => IndexKey::public_stripes(),
            HeadKey::Tag(key) => vec![IndexKey::tag(key)],
        }
    }
}

/// What a head replica is asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum HeadOp {
    Read {
        key: HeadKey,
        range: Range,
    },
    /// A new entry under the key, told by its writer (the author's replica only).
    Tell {
        key: HeadKey,
        entry: HeadEntry,
    },
}

/// A range of one key's entries: ids strictly between `above` and `below`, the newest first
/// (or the oldest first with `oldest_first`, for Mastodon's `min_id`), leaving out entries
/// with any of the `without` flags and keeping only those with all of the `with` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub below: i64,
    pub above: i64,
    pub oldest_first: bool,
    pub without: i64,
    pub with: i64,
    pub limit: usize,
}

impl Range {
    fn admits(&self, e: &HeadEntry) -> bool {
        e.post_id.get() < self.below
            && e.post_id.get() > self.above
            && e.flags & self.without == 0
            && e.flags & self.with == self.with
    }
}

/// One index entry (`timeline_index`'s row without its key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadEntry {
    pub post_id: PostId,
    pub author_id: UserId,
    pub flags: i64,
}

/// What a replica answers for a range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeadAnswer {
    /// The range's entries, in its order: exactly what the key's database would answer as of
    /// the head's load (plus entries told since).
    Rows(Vec<HeadEntry>),
    /// The range reaches below the head: read the key's database.
    Beyond,
}

/// The name of replica `i` of a key's head.
pub fn head_name(key: &HeadKey, i: u32) -> String {
    format!("head:{}:{i}", key.name())
}

/// Which replica a reader uses: a stable hash, so readers spread evenly and a reader (an
/// author reading their own post) keeps one.
pub fn replica_for(reader: UserId, replicas: u32) -> u32 {
    let mixed = (reader.get() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((mixed >> 32) % u64::from(replicas.max(1))) as u32
}

/// The held head: the key's newest `capacity` entries as of `loaded_at_ms`, newest first.
#[derive(Debug, Clone)]
pub struct Head {
    entries: Vec<HeadEntry>,
    capacity: usize,
    /// The key had no entries beyond those loaded: any range is answerable.
    complete: bool,
    loaded_at_ms: i64,
    /// Entries told since the oldest load that may still be running, re-applied on its
    /// result (a load whose read started before a told entry committed would drop it).
    told: Vec<(HeadEntry, i64)>,
}

impl Head {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::new(),
            capacity: capacity.max(1),
            complete: false,
            loaded_at_ms: i64::MIN,
            told: Vec::new(),
        }
    }

    /// Whether the head may answer at `now_ms` without a reload.
    pub fn is_fresh(&self, now_ms: i64, ttl_ms: i64) -> bool {
        self.loaded_at_ms != i64::MIN && now_ms.saturating_sub(self.loaded_at_ms) < ttl_ms
    }

    /// Whether the head was ever loaded (a stale one may still answer while a reload runs).
    pub fn is_loaded(&self) -> bool {
        self.loaded_at_ms != i64::MIN
    }

    /// Takes a load's rows (the key's newest `capacity` by post id, any order, from one or
    /// more stripes), read from D1 starting at `started_at_ms`. Entries told since then are
    /// kept on top of it.
    pub fn load(&mut self, mut rows: Vec<HeadEntry>, started_at_ms: i64) {
        rows.sort_by_key(|e| std::cmp::Reverse(e.post_id));
        rows.dedup_by_key(|e| e.post_id);
        self.complete = rows.len() < self.capacity;
        rows.truncate(self.capacity);
        self.entries = rows;
        self.loaded_at_ms = started_at_ms;
        self.told.retain(|(_, at)| *at >= started_at_ms.saturating_sub(60_000));
        let told: Vec<HeadEntry> =
            self.told.iter().filter(|(_, at)| *at >= started_at_ms).map(|(e, _)| *e).collect();
        for entry in told {
            self.insert(entry);
        }
    }

    /// An entry its writer tells (a new post under the key), at `now_ms`.
    pub fn tell(&mut self, entry: HeadEntry, now_ms: i64) {
        self.told.push((entry, now_ms));
        if self.is_loaded() {
            self.insert(entry);
        }
    }

    fn insert(&mut self, entry: HeadEntry) {
        let lowest = self.entries.last().map(|e| e.post_id);
        // Below a full head it would claim rows the head does not hold.
        if !self.complete && lowest.is_none_or(|low| entry.post_id < low) {
            return;
        }
        let Err(at) = self.entries.binary_search_by(|e| entry.post_id.cmp(&e.post_id)) else { return };
        self.entries.insert(at, entry);
        if self.entries.len() > self.capacity {
            self.entries.truncate(self.capacity);
            self.complete = false;
        }
    }

    /// The range's entries if the head holds all of them: every entry above the head's lowest
    /// is held, so a range is answerable when it is filled above that, or ends above it.
    pub fn answer(&self, range: &Range) -> HeadAnswer {
        let lowest = self.entries.last().map_or(i64::MAX, |e| e.post_id.get());
        let covers_bottom = self.complete || range.above >= lowest;
        let admitted = self.entries.iter().filter(|e| range.admits(e)).copied();
        if range.oldest_first {
            if !covers_bottom {
                return HeadAnswer::Beyond;
            }
            let mut rows: Vec<HeadEntry> = admitted.collect();
            rows.reverse();
            rows.truncate(range.limit);
            return HeadAnswer::Rows(rows);
        }
        let rows: Vec<HeadEntry> = admitted.take(range.limit).collect();
        if rows.len() == range.limit || covers_bottom {
            HeadAnswer::Rows(rows)
        } else {
            HeadAnswer::Beyond
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: i64) -> HeadEntry {
        HeadEntry { post_id: PostId::from_trusted(id), author_id: UserId::from_trusted(1), flags: id % 2 }
    }

    fn ids(answer: HeadAnswer) -> Option<Vec<i64>> {
        match answer {
            HeadAnswer::Rows(rows) => Some(rows.iter().map(|e| e.post_id.get()).collect()),
            HeadAnswer::Beyond => None,
        }
    }

    fn range(below: i64, above: i64, limit: usize) -> Range {
        Range { below, above, oldest_first: false, without: 0, with: 0, limit }
    }

    fn head(capacity: usize, rows: &[i64]) -> Head {
        let mut h = Head::new(capacity);
        h.load(rows.iter().map(|&id| e(id)).collect(), 1_000);
        h
    }

    #[test]
    fn a_full_head_answers_ranges_it_holds_and_sends_the_rest_to_the_database() {
        let h = head(4, &[10, 20, 30, 40, 50, 60]);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 3))), Some(vec![60, 50, 40]));
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 4))), Some(vec![60, 50, 40, 30]));
        // Filled above the lowest held (30), or ending above it: answerable; otherwise not.
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 5))), None);
        assert_eq!(ids(h.answer(&range(45, 0, 2))), Some(vec![40, 30]));
        assert_eq!(ids(h.answer(&range(45, 0, 3))), None, "30 is held, what is below it is not");
        assert_eq!(ids(h.answer(&range(i64::MAX, 35, 10))), Some(vec![60, 50, 40]));
        assert_eq!(ids(h.answer(&range(i64::MAX, 30, 10))), Some(vec![60, 50, 40]));
        // Flags filter before the limit counts (odd ids carry flag 1 here: none of these).
        let media = Range { with: 1, ..range(i64::MAX, 0, 2) };
        assert_eq!(ids(h.answer(&media)), None);
    }

    #[test]
    fn a_complete_head_answers_everything_and_oldest_first_needs_the_bottom() {
        let h = head(10, &[10, 20, 30]);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 10))), Some(vec![30, 20, 10]));
        let up = Range { oldest_first: true, ..range(i64::MAX, 10, 1) };
        assert_eq!(ids(h.answer(&up)), Some(vec![20]));
        let full = head(2, &[10, 20, 30]);
        assert_eq!(ids(full.answer(&Range { oldest_first: true, ..range(i64::MAX, 0, 1) })), None);
        assert_eq!(ids(full.answer(&Range { oldest_first: true, ..range(i64::MAX, 20, 5) })), Some(vec![30]));
    }

    #[test]
    fn told_entries_join_the_head_and_survive_a_load_that_started_before_them() {
        let mut h = head(3, &[10, 20, 30]);
        h.tell(e(40), 2_000);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 3))), Some(vec![40, 30, 20]));
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 4))), None, "the head is full again");
        // A load whose read began before the tell misses 40: it is put back.
        h.load(vec![e(10), e(20), e(30)], 1_500);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 1))), Some(vec![40]));
        // One that began after the tell has it (or its deletion) from D1 itself.
        h.load(vec![e(10), e(20), e(30)], 2_500);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 1))), Some(vec![30]));
        // Below a full head's lowest, a told entry is not held (the database has what is between).
        h.tell(e(5), 3_000);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 3))), Some(vec![30, 20, 10]));
        // A repeated tell holds the entry once.
        h.tell(e(50), 3_000);
        h.tell(e(50), 3_001);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 3))), Some(vec![50, 30, 20]));
    }

    #[test]
    fn freshness_follows_the_load_and_a_zero_ttl_never_answers_from_memory() {
        let mut h = Head::new(5);
        assert!(!h.is_fresh(0, 1_000) && !h.is_loaded());
        h.tell(e(1), 1_200);
        h.load(vec![], 1_000);
        assert_eq!(ids(h.answer(&range(i64::MAX, 0, 5))), Some(vec![1]));
        assert!(h.is_fresh(1_999, 1_000) && !h.is_fresh(2_000, 1_000));
        assert!(!h.is_fresh(1_000, 0));
    }

    #[test]
    fn readers_spread_over_the_replicas_and_keep_theirs() {
        let mut counts = [0u32; 4];
        for reader in 1..4_001 {
            counts[replica_for(UserId::from_trusted(reader << 12), 4) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 800), "{counts:?}");
        let reader = UserId::from_trusted(77);
        assert_eq!(replica_for(reader, 8), replica_for(reader, 8));
        assert_eq!(replica_for(reader, 0), 0);
        assert_eq!(head_name(&HeadKey::tag("Rust"), 3), "head:tag:rust:3");
        assert_eq!(HeadKey::tag("Rust").index_keys(), vec![IndexKey::tag("rust")]);
        assert_eq!(HeadKey::Public.index_keys().len(), IndexKey::public_stripes().len());
        assert_eq!(HeadKey::of_index_key(&IndexKey::tag("Rust")), HeadKey::tag("rust"));
        assert_eq!(HeadKey::of_index_key(&IndexKey::public_stripe(3)), HeadKey::Public);
    }
}
