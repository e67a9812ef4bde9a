//! Hot authors' recent ranges, shared by their pulled readers through a short-lived cache.
//!
//! An author followed by many readers whose edges are pulled (the cap, or a fast poster) would
//! otherwise cost one D1 range query per reader per feed read for the same rows. The cache holds
//! the author's newest post *keys* below a time boundary that moves in steps (`boundary`), so all
//! readers in a step share one entry; D1 still answers everything at or above the boundary (the
//! in-flight clause of the pull), and every candidate is hydrated and filtered per viewer, now.
//!
//! Why this is exact: posts get their `created_at` when written, from the clock, so once the
//! boundary has passed a time, no new post appears below it (imports of old posts are an admin
//! migration step made before anyone follows; see docs/fanout.md). A range therefore holds every post of
//! the author in `[its last key, boundary)` (or all of them below the boundary when it is not
//! full), whatever their state: deletion, visibility and the viewer's relationship are decided
//! at hydration. A range that does not reach down to the reader's window floor is not used (D1
//! pulls that author instead), so the cached source is complete on the whole span it serves.

use super::cursor::SortKey;
use super::ids::UserId;
use super::merge::merge_newest_first;
use super::window::Entry;

/// Boundary step: every read in one step shares an author's entry.
pub const STEP_MS: i64 = 10_000;

/// Hot authors cached per reader (the most followed first).
pub const MAX_HOT_AUTHORS: usize = 32;

/// The time below which cached ranges answer for a read at `now`.
pub fn boundary_at(now: i64, in_flight_ms: i64) -> i64 {
    boundary(now, in_flight_ms, STEP_MS)
}

/// A cache entry a read found missing: read by the read's own D1 batch, then stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HotMiss {
    /// The reader's hot pulled authors.
    Reader { reader: UserId },
    /// One author's range below a boundary.
    Range { author: UserId, below: i64 },
}

/// What a read found for a missing entry, to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HotFill {
    /// The reader's hot pulled authors, most followed first.
    Reader(Vec<UserId>),
    Range(HotRange),
}

/// The reader's hot pulled authors from `(author, followers)` rows of every database: most
/// followed first, at most [`MAX_HOT_AUTHORS`].
pub fn reader_list(mut authors: Vec<(UserId, i64)>) -> Vec<UserId> {
    authors.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    authors.into_iter().take(MAX_HOT_AUTHORS).map(|(id, _)| id).collect()
}

/// The time below which cached ranges answer: `now - in_flight_ms` rounded down to a whole
/// step, so one entry serves every read in that step.
pub fn boundary(now: i64, in_flight_ms: i64, step_ms: i64) -> i64 {
    let edge = now - in_flight_ms;
    edge - edge.rem_euclid(step_ms.max(1))
}

/// One author's newest posts below a boundary, newest first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HotRange {
    pub author: UserId,
    pub below: i64,
    pub entries: Vec<Entry>,
    /// Came back with as many entries as asked: older posts may exist below the last one.
    pub full: bool,
}

impl HotRange {
    /// Whether the range holds every post of its author from `floor` (exclusive) up to its
    /// boundary.
    pub fn covers_down_to(&self, floor: SortKey) -> bool {
        match self.entries.last() {
            Some(last) if self.full => last.key() <= floor,
            _ => true,
        }
    }
}

/// The cached candidates strictly between `lower` and `upper`, newest first, without duplicate
/// ids, at most `want` of them (the caller's coverage rule treats a full batch as "more may
/// follow").
pub fn candidates(ranges: &[HotRange], lower: SortKey, upper: SortKey, want: usize) -> Vec<Entry> {
    let mut merged: Vec<Entry> = Vec::new();
    for range in ranges {
        let inside = range.entries.iter().filter(|e| e.key() > lower && e.key() < upper).cloned().collect();
        merged = merge_newest_first(merged, inside, Entry::key);
        merged.truncate(want);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PostId;

    fn entry(at: i64, id: i64, author: i64) -> Entry {
        Entry {
            created_at: at,
            post_id: PostId::from_trusted(id),
            author_id: UserId::from_trusted(author),
            version: 0,
        }
    }

    fn range(author: i64, entries: Vec<Entry>, full: bool) -> HotRange {
        HotRange { author: UserId::from_trusted(author), below: 1_000, entries, full }
    }

    #[test]
    fn boundary_moves_in_whole_steps_behind_the_in_flight_horizon() {
        assert_eq!(boundary(125_000, 20_000, 10_000), 100_000);
        assert_eq!(boundary(129_999, 20_000, 10_000), 100_000);
        assert_eq!(boundary(130_000, 20_000, 10_000), 110_000);
        assert_eq!(boundary(5, 20, 10), -20, "clocks near zero still round down");
        assert_eq!(boundary(7, 0, 0), 7, "a zero step is one millisecond");
    }

    #[test]
    fn a_range_covers_to_the_floor_only_if_it_reaches_it_or_is_complete() {
        let floor = SortKey::new(50, 0);
        assert!(range(1, vec![entry(90, 9, 1), entry(40, 4, 1)], true).covers_down_to(floor));
        assert!(!range(1, vec![entry(90, 9, 1), entry(60, 6, 1)], true).covers_down_to(floor));
        assert!(range(1, vec![entry(90, 9, 1), entry(60, 6, 1)], false).covers_down_to(floor));
        assert!(range(1, vec![], true).covers_down_to(floor));
    }

    #[test]
    fn candidates_merge_authors_within_bounds_newest_first() {
        let a = range(1, vec![entry(90, 9, 1), entry(70, 7, 1), entry(30, 3, 1)], false);
        let b = range(2, vec![entry(80, 8, 2), entry(70, 6, 2), entry(60, 5, 2)], false);
        let got = candidates(&[a.clone(), b.clone()], SortKey::new(30, 3), SortKey::new(90, 9), 10);
        let ids: Vec<i64> = got.iter().map(|e| e.post_id.get()).collect();
        assert_eq!(ids, vec![8, 7, 6, 5], "both bounds exclusive, ties broken by id");
        let top2 = candidates(&[a, b], SortKey::BOTTOM, SortKey::TOP, 2);
        assert_eq!(top2.iter().map(|e| e.post_id.get()).collect::<Vec<_>>(), vec![9, 8]);
    }
}
