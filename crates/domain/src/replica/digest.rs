//! A digest: one Durable Object holding a [`Replica`] of every hot author its readers read, so a
//! page makes **one** replica call however many hot authors its reader follows (issue 40 item
//! 4; docs/hot-authors.md). There are `D` digests (`HOT_DIGESTS`); a reader always reads the
//! digest `replica_for(reader, D)`, and a hot author's change goes to all `D` before it answers.
//!
//! Each author's state inside a digest is exactly the per-author replica of before (its own
//! change counter, lease, reload and counts refresh): grouping authors by reader hash changes
//! which object answers, not what it may answer. What is new is that a digest may forget an
//! author (it holds at most `max_authors`, the least recently read goes first): the author is
//! then reloaded from D1 on its next read, like a replica evicted by the runtime. The changes a
//! digest has seen per author are kept across that (a few bytes per hot author), so a reload
//! that was under way when its author was forgotten and read again still notices a change that
//! arrived during its D1 read.

use std::collections::{BTreeMap, HashMap};

use super::{Applied, Before, Change, Replica, ReplicaAnswer, ReplicaQuery, Snapshot, Timing};
use crate::ids::UserId;

/// One author's replica inside a digest, and when it was last read (for eviction).
#[derive(Debug, Clone, PartialEq)]
struct Held {
    replica: Replica,
    last_read: u64,
}

/// What a digest holds: authors, posts, and their rows' bytes as JSON text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DigestSize {
    pub authors: usize,
    pub posts: usize,
    pub row_bytes: usize,
}

/// The hot authors one digest holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Digest {
    /// Posts held per author (`HOT_RANGE`).
    capacity: usize,
    max_authors: usize,
    authors: BTreeMap<UserId, Held>,
    /// Changes seen per author, held or not (never forgotten).
    seen: HashMap<UserId, u64>,
    /// Reads so far: the eviction order.
    reads: u64,
}

impl Digest {
    pub fn new(capacity: usize, max_authors: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            max_authors: max_authors.max(1),
            authors: BTreeMap::new(),
            seen: HashMap::new(),
            reads: 0,
        }
    }

    /// How many authors are held now.
    pub fn held(&self) -> usize {
        self.authors.len()
    }

    /// What the digest holds now (a test hook's measure of its memory).
    pub fn size(&self) -> DigestSize {
        let rows = self.authors.values().flat_map(|h| h.replica.posts.values());
        let (posts, row_bytes) = rows.fold((0, 0), |(n, bytes), p| (n + 1, bytes + p.row.len()));
        DigestSize { authors: self.authors.len(), posts, row_bytes }
    }

    /// Applies change `seq` of `author`. An author not held needs nothing: its first read
    /// loads it from D1, after this change committed.
    pub fn apply(
        &mut self,
        author: UserId,
        seq: i64,
        sent_at: i64,
        change: Change,
        timing: Timing,
    ) -> Applied {
        *self.seen.entry(author).or_default() += 1;
        match self.authors.get_mut(&author) {
            Some(held) => held.replica.apply(seq, sent_at, change, timing),
            None => Applied::WillReread,
        }
    }

    /// The author's replica, made (and the least recently read author forgotten if the digest
    /// is full) when not held.
    fn replica(&mut self, author: UserId) -> &mut Replica {
        if !self.authors.contains_key(&author) && self.authors.len() >= self.max_authors {
            let oldest = self.authors.iter().min_by_key(|(_, h)| h.last_read).map(|(a, _)| *a);
            if let Some(oldest) = oldest {
                self.authors.remove(&oldest);
            }
        }
        let seen = self.seen.get(&author).copied().unwrap_or(0);
        let capacity = self.capacity;
        &mut self
            .authors
            .entry(author)
            .or_insert_with(|| Held { replica: Replica::resumed(capacity, seen), last_read: 0 })
            .replica
    }

    /// What must happen before answering for `author` at `now` (a new author: a reload).
    pub fn before_answer(&mut self, author: UserId, now: i64, timing: Timing) -> Before {
        self.replica(author).before_answer(now, timing)
    }

    /// Taken before a D1 read of `author`, given back to [`Digest::load`] or [`Digest::confirm`].
    pub fn changes_seen(&self, author: UserId) -> u64 {
        self.seen.get(&author).copied().unwrap_or(0)
    }

    /// [`Replica::confirm`] for `author`.
    pub fn confirm(&mut self, author: UserId, seq: i64, start: (i64, u64), timing: Timing) -> bool {
        self.replica(author).confirm(seq, start, timing)
    }

    /// [`Replica::load`] for `author`.
    pub fn load(&mut self, author: UserId, snapshot: Snapshot, start: (i64, u64), timing: Timing) {
        self.replica(author).load(snapshot, start, timing);
    }

    /// The answer for `author` (call only once [`Digest::before_answer`] says nothing is due).
    pub fn answer(&mut self, author: UserId, query: &ReplicaQuery) -> ReplicaAnswer {
        self.reads += 1;
        let reads = self.reads;
        let answer = self.replica(author).answer(query);
        if let Some(held) = self.authors.get_mut(&author) {
            held.last_read = reads;
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::SortKey;
    use crate::ids::PostId;
    use crate::replica::HeldPost;

    const T: Timing = Timing { lease_ms: 10_000, counts_ms: 30_000 };

    fn user(n: i64) -> UserId {
        UserId::from_trusted(n)
    }

    fn post(id: i64, at: i64) -> HeldPost {
        HeldPost {
            id: PostId::from_trusted(id),
            created_at: at,
            row: serde_json::json!({ "id": id }).to_string().into(),
        }
    }

    fn snapshot(seq: i64, posts: Vec<HeldPost>) -> Snapshot {
        Snapshot { seq, suspended: false, blocks: vec![user(9)], posts, full: false }
    }

    fn query() -> ReplicaQuery {
        ReplicaQuery { viewer: user(9), after: SortKey::BOTTOM, before: SortKey::TOP, limit: 10, ids: vec![] }
    }

    fn ids(answer: &ReplicaAnswer) -> Vec<i64> {
        answer.posts.iter().map(|p| p.id.get()).collect()
    }

    /// Loads `author` as a digest's read would at `now`.
    fn load(d: &mut Digest, author: UserId, seq: i64, posts: Vec<HeldPost>, now: i64) {
        assert_eq!(d.before_answer(author, now, T), Before::Reload);
        let start = (now, d.changes_seen(author));
        d.load(author, snapshot(seq, posts), start, T);
    }

    #[test]
    fn each_author_keeps_its_own_counter_lease_and_posts() {
        let mut d = Digest::new(10, 8);
        load(&mut d, user(1), 3, vec![post(11, 100)], 0);
        load(&mut d, user(2), 7, vec![post(21, 200)], 0);
        assert_eq!(d.apply(user(1), 4, 5, Change::Post(post(12, 300)), T), Applied::InOrder);
        assert_eq!(d.size(), DigestSize { authors: 2, posts: 3, row_bytes: 3 * r#"{"id":11}"#.len() });
        assert_eq!(d.apply(user(2), 9, 5, Change::Gone(PostId::from_trusted(21)), T), Applied::WillReread);
        assert_eq!(d.before_answer(user(1), 6, T), Before::Nothing);
        assert_eq!(ids(&d.answer(user(1), &query())), vec![12, 11]);
        assert!(d.answer(user(1), &query()).blocks_viewer);
        assert_eq!(d.before_answer(user(2), 6, T), Before::Reload, "a gap in author 2 only");
    }

    #[test]
    fn a_change_to_an_author_not_held_is_read_from_d1_on_its_first_read() {
        let mut d = Digest::new(10, 8);
        assert_eq!(d.apply(user(1), 4, 5, Change::Post(post(12, 300)), T), Applied::WillReread);
        assert_eq!(d.held(), 0, "nothing held for an author no reader asked for");
        load(&mut d, user(1), 4, vec![post(12, 300)], 10);
        assert_eq!(d.before_answer(user(1), 11, T), Before::Nothing);
    }

    #[test]
    fn the_least_recently_read_author_is_forgotten_and_reloaded_when_read_again() {
        let mut d = Digest::new(10, 2);
        load(&mut d, user(1), 1, vec![post(11, 100)], 0);
        d.answer(user(1), &query());
        load(&mut d, user(2), 1, vec![post(21, 100)], 0);
        d.answer(user(2), &query());
        d.answer(user(1), &query());
        load(&mut d, user(3), 1, vec![post(31, 100)], 0);
        assert_eq!(d.held(), 2);
        assert_eq!(d.before_answer(user(1), 1, T), Before::Nothing, "read most recently: kept");
        assert_eq!(d.before_answer(user(2), 1, T), Before::Reload, "forgotten: reloaded");
    }

    #[test]
    fn a_reload_across_its_authors_eviction_still_sees_a_change_during_its_read() {
        let mut d = Digest::new(10, 1);
        assert_eq!(d.before_answer(user(1), 0, T), Before::Reload);
        let start = (0, d.changes_seen(user(1)));
        // While author 1's D1 read runs: another author's read forgets it, then its change
        // arrives (not held: nothing applied), then the read comes back.
        load(&mut d, user(2), 1, vec![], 0);
        assert_eq!(d.apply(user(1), 2, 1, Change::Post(post(12, 300)), T), Applied::WillReread);
        d.load(user(1), snapshot(1, vec![post(11, 100)]), start, T);
        assert_eq!(d.before_answer(user(1), 2, T), Before::Reload, "the read may predate the change");
        let start = (3, d.changes_seen(user(1)));
        d.load(user(1), snapshot(2, vec![post(12, 300), post(11, 100)]), start, T);
        assert_eq!(d.before_answer(user(1), 4, T), Before::Nothing);
        assert_eq!(ids(&d.answer(user(1), &query())), vec![12, 11]);
    }
}
