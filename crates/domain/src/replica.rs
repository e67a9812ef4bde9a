//! Hot authors' replicas: an author with at least `HOT_REPLICA_FOLLOWERS` followers has the
//! rows its readers' pages need (its newest posts, its suspension, whom it blocks) held in `R`
//! replicated Durable Objects, so a page that includes that author puts no statement on the
//! author's database. This module is the replica's whole logic, pure: the state one replica
//! holds, how it applies a change, when it must re-read D1 before it answers, what it answers.
//!
//! Why a replica never answers stale (the lease, `docs/hot-authors.md`):
//! - Every change a replica holds (publish, edit, delete, visibility, takedown, suspension, a
//!   block by the author) bumps `users.replica_seq` in the same D1 batch as the change, and the
//!   writer then sends the change with its `seq` to every replica before it answers.
//! - A replica applies change `seq` only on top of `seq - 1`; a gap makes it re-read D1 before
//!   its next answer. So a replica's state is always "everything up to its `seq`".
//! - A replica answers only within its lease: `T` after a moment known to precede every change
//!   it has not seen (the start of its last D1 read of the counter, or the send time of the last
//!   change it applied, which precedes the commit of every later change). After that it re-reads
//!   the counter (one statement) before answering, and its rows too when it is behind.
//! - A writer whose change a replica did not acknowledge (failing, slow past the timeout) answers
//!   only once `T` has passed since the change committed: by then that replica's lease has run
//!   out, so its next answer re-reads D1 first. So once a delete has answered, no replica shows
//!   the post; a replica that cannot be written costs the writer up to `T`, never a reader.
//! - Counts (likes, comments) are copies refreshed with the rows at least every
//!   `counts_ms`: they lag by at most that plus `T`, and are never added to, so never doubled.

use std::collections::{BTreeMap, BTreeSet};

use super::cursor::SortKey;
use super::ids::{PostId, UserId};

/// At most this many replicas per author, whatever its read rate.
pub const MAX_REPLICAS: u32 = 256;
/// At least two, so that one failing replica leaves its readers another to fall back on.
pub const MIN_REPLICAS: u32 = 2;

/// How many replicas an author with `followers` gets: one per `followers_per_replica`, within
/// [`MIN_REPLICAS`, `MAX_REPLICAS`]. Fixed when the author is promoted.
pub fn replica_count(followers: i64, followers_per_replica: i64) -> u32 {
    let wanted = (followers.max(1) as u64).div_ceil(followers_per_replica.max(1) as u64);
    wanted.clamp(u64::from(MIN_REPLICAS), u64::from(MAX_REPLICAS)) as u32
}

/// Which replica a reader reads: a stable hash of the reader, so a reader keeps its replica
/// and readers spread evenly over them.
pub fn replica_for(reader: UserId, replicas: u32) -> u32 {
    // SplitMix64's finalizer: ids are snowflakes (time in the high bits), so their low bits
    // alone would not spread.
    let mut x = reader.get() as u64;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x % u64::from(replicas.max(1))) as u32
}

/// The name of digest `i` (one Durable Object each): the replicas of every hot author that
/// the readers hashed to `i` read ([`digest::Digest`]).
pub fn digest_name(i: u32) -> String {
    format!("digest:{i}")
}

/// One post as a replica holds it: its key, and the row hydration returns, as the database read
/// it (opaque here: the service's `FeedIo`, `services/feed_io.rs`, turns it into a feed row, so
/// new columns need no change). The row is kept as JSON text: a digest holds every hot author's
/// range, and a parsed row (a map of about 26 columns) takes several times its text in memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeldPost {
    pub id: PostId,
    pub created_at: i64,
    pub row: Box<str>,
}

impl HeldPost {
    pub fn key(&self) -> SortKey {
        SortKey::new(self.created_at, self.id.get())
    }
}

/// Everything a replica holds, as one D1 read finds it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    pub seq: i64,
    pub suspended: bool,
    /// Whom the author blocks.
    pub blocks: Vec<UserId>,
    /// The author's newest live posts, newest first, at most the range asked.
    pub posts: Vec<HeldPost>,
    /// The read asked for this many posts and got them all: older ones may exist.
    pub full: bool,
}

/// A change sent to every replica after it committed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Change {
    /// A new or edited post, as it is now.
    Post(HeldPost),
    /// A deleted post (or one the author's followers may no longer see here).
    Gone(PostId),
    /// Anything else (takedown, suspension, a block): the replica re-reads D1 before it
    /// answers again. Rare, so not worth a payload of its own.
    Reread,
}

/// What a replica says to a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Applied {
    /// Applied on top of the previous change (its lease runs from the change's send time).
    InOrder,
    /// Already held (a re-read after the change committed, or a redelivery).
    AlreadyHeld,
    /// Out of order or a re-read asked: the replica re-reads D1 before it answers again.
    WillReread,
}

/// What a page asks a replica: the author's posts strictly between `after` and `before`, newest
/// first, at most `limit` (the source beside the window), and some posts by id (window entries).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplicaQuery {
    pub viewer: UserId,
    pub after: SortKey,
    pub before: SortKey,
    pub limit: usize,
    pub ids: Vec<PostId>,
}

/// A replica's answer to a page; its posts are [`HeldPost`]s on the wire, feed rows once the
/// feed read's `FeedIo` has read them (`domain::read::ReplicaRows`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReplicaAnswer<P = HeldPost> {
    /// The posts in the bounds, newest first, at most the limit.
    pub posts: Vec<P>,
    /// The asked ids it holds (live posts).
    pub found: Vec<P>,
    /// The replica holds every live post of the author in the bounds (or `limit` of them):
    /// otherwise the page reads this author from D1 this round.
    pub complete: bool,
    /// Asked ids it cannot answer for (older than what it holds): read from D1.
    pub unknown: Vec<PostId>,
    /// The author blocks the viewer.
    pub blocks_viewer: bool,
    pub suspended: bool,
}

impl ReplicaAnswer {
    /// The same answer with each post turned into a row; `None` if one cannot be.
    pub fn map_rows<R>(self, row: impl Fn(HeldPost) -> Option<R>) -> Option<ReplicaAnswer<R>> {
        Some(ReplicaAnswer {
            posts: self.posts.into_iter().map(&row).collect::<Option<_>>()?,
            found: self.found.into_iter().map(&row).collect::<Option<_>>()?,
            complete: self.complete,
            unknown: self.unknown,
            blocks_viewer: self.blocks_viewer,
            suspended: self.suspended,
        })
    }
}

/// A test hook's fault on one replica (only with `TEST_HOOKS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    #[default]
    None,
    /// Every op waits this many milliseconds first.
    Slow { ms: u64 },
    /// Every op fails.
    Failing,
    /// Forgets everything now (the next answer rebuilds from D1).
    Wipe,
}

/// One request to a replica.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ReplicaOp {
    /// Change `seq` of the author, sent at `sent_at`.
    Apply {
        author: UserId,
        seq: i64,
        sent_at: i64,
        change: Change,
    },
    /// One page's reads of every hot author it needs, answered in order (`None`: that author
    /// could not be made current, so the page reads it from D1).
    Read {
        reads: Vec<(UserId, ReplicaQuery)>,
    },
    Fault {
        fault: Fault,
    },
}

/// Timing: the lease and how often counts are refreshed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub lease_ms: i64,
    pub counts_ms: i64,
}

/// One replica's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Replica {
    /// Nothing held yet, or a change asked for a re-read: the next answer reads D1 first.
    stale: bool,
    loaded: bool,
    seq: i64,
    /// Answers are trusted until then (the lease).
    lease_until: i64,
    /// When the rows (and their counts) were last read from D1.
    rows_read_at: i64,
    suspended: bool,
    blocks: BTreeSet<UserId>,
    pub(crate) posts: BTreeMap<SortKey, HeldPost>,
    /// Every live post of the author at or above this key is held (BOTTOM: all of them).
    holds_down_to: SortKey,
    capacity: usize,
    /// Changes seen so far: a reload that saw any during its D1 read may have read before
    /// one of them committed, so it leaves the replica stale ([`Replica::load`]).
    changes_seen: u64,
}

/// What a replica must do before it can answer at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// Answer from memory.
    Nothing,
    /// Re-read the change counter; re-read the rows only if it moved.
    CheckSeq,
    /// Re-read everything.
    Reload,
}

impl Replica {
    pub fn new(capacity: usize) -> Self {
        Self::resumed(capacity, 0)
    }

    /// A new replica in a digest that has already seen `changes_seen` changes of its author
    /// (an author evicted from a digest and read again: [`digest::Digest`]), so a reload that
    /// straddles the eviction still sees every change that arrived during its read.
    pub fn resumed(capacity: usize, changes_seen: u64) -> Self {
        Self {
            stale: true,
            loaded: false,
            seq: 0,
            lease_until: 0,
            rows_read_at: 0,
            suspended: false,
            blocks: BTreeSet::new(),
            posts: BTreeMap::new(),
            holds_down_to: SortKey::BOTTOM,
            capacity: capacity.max(1),
            changes_seen,
        }
    }

    /// Taken before a D1 read, given back to [`Replica::load`] or [`Replica::confirm`].
    pub fn changes_seen(&self) -> u64 {
        self.changes_seen
    }

    pub fn seq(&self) -> i64 {
        self.seq
    }

    /// What must happen before answering at `now`.
    pub fn before_answer(&self, now: i64, timing: Timing) -> Before {
        if self.stale || !self.loaded || now >= self.rows_read_at + timing.counts_ms {
            Before::Reload
        } else if now >= self.lease_until {
            Before::CheckSeq
        } else {
            Before::Nothing
        }
    }

    /// The counter read at `read_at` (before the read was sent) is `seq`: `true` when the rows
    /// must be read again (the replica is behind).
    pub fn confirm(&mut self, seq: i64, (read_at, seen): (i64, u64), timing: Timing) -> bool {
        if seq != self.seq || seen != self.changes_seen {
            return true;
        }
        self.lease_until = self.lease_until.max(read_at + timing.lease_ms);
        false
    }

    /// Replaces everything with `snapshot`, read from D1 from `read_at` on, when the replica
    /// had seen `seen` changes. A change that arrived during the read may have committed after
    /// it: the replica then stays stale and reads again before its next answer.
    pub fn load(&mut self, snapshot: Snapshot, (read_at, seen): (i64, u64), timing: Timing) {
        self.posts = snapshot.posts.into_iter().take(self.capacity).map(|p| (p.key(), p)).collect();
        self.holds_down_to = match (snapshot.full, self.posts.keys().next()) {
            (true, Some(oldest)) => *oldest,
            _ => SortKey::BOTTOM,
        };
        self.seq = snapshot.seq;
        self.suspended = snapshot.suspended;
        self.blocks = snapshot.blocks.into_iter().collect();
        self.stale = seen != self.changes_seen;
        self.loaded = true;
        self.rows_read_at = read_at;
        self.lease_until = read_at + timing.lease_ms;
    }

    /// Applies change `seq`, sent at `sent_at` (before its D1 batch was sent).
    pub fn apply(&mut self, seq: i64, sent_at: i64, change: Change, timing: Timing) -> Applied {
        self.changes_seen += 1;
        if self.loaded && !self.stale && seq <= self.seq {
            return Applied::AlreadyHeld;
        }
        if !self.loaded || self.stale || seq != self.seq + 1 || change == Change::Reread {
            self.stale = true;
            return Applied::WillReread;
        }
        self.seq = seq;
        match change {
            Change::Post(post) => self.hold(post),
            Change::Gone(id) => self.posts.retain(|_, p| p.id != id),
            Change::Reread => {}
        }
        self.lease_until = self.lease_until.max(sent_at + timing.lease_ms);
        Applied::InOrder
    }

    /// Holds a new or edited post; the oldest goes when over capacity (and what is held then
    /// reaches down only to the new oldest).
    fn hold(&mut self, post: HeldPost) {
        let key = post.key();
        if key < self.holds_down_to {
            return;
        }
        self.posts.retain(|_, p| p.id != post.id);
        self.posts.insert(key, post);
        while self.posts.len() > self.capacity {
            self.posts.pop_first();
            if let Some(oldest) = self.posts.keys().next() {
                self.holds_down_to = *oldest;
            }
        }
    }

    /// The answer to `query` (call only when [`Replica::before_answer`] says nothing is due).
    pub fn answer(&self, query: &ReplicaQuery) -> ReplicaAnswer {
        let posts: Vec<HeldPost> = if query.after < query.before {
            let in_bounds =
                self.posts.range(query.after..query.before).rev().filter(|(k, _)| **k > query.after);
            in_bounds.take(query.limit).map(|(_, p)| p.clone()).collect()
        } else {
            Vec::new()
        };
        let complete = posts.len() >= query.limit || query.after >= self.holds_down_to;
        let mut found = Vec::new();
        let mut unknown = Vec::new();
        for id in &query.ids {
            match self.posts.values().find(|p| p.id == *id) {
                Some(post) => found.push(post.clone()),
                None if self.holds_id(*id) => {}
                None => unknown.push(*id),
            }
        }
        ReplicaAnswer {
            posts,
            found,
            complete,
            unknown,
            blocks_viewer: self.blocks.contains(&query.viewer),
            suspended: self.suspended,
        }
    }

    /// Whether a post with this id would be held if it were live: its key (a post id carries
    /// its `created_at`, `domain/snowflake.rs`) is at or above what the replica reaches down to.
    fn holds_id(&self, id: PostId) -> bool {
        let key = SortKey::new(super::snowflake::snowflake_time(id.get()), id.get());
        key >= self.holds_down_to
    }
}

/// How long a writer whose change some replica did not acknowledge still waits after the
/// change committed (at `committed_by`, read after the batch returned): until every replica's
/// lease that could predate the change has run out, plus `margin_ms` for clocks.
pub fn unacknowledged_wait_until(committed_by: i64, lease_ms: i64, margin_ms: i64) -> i64 {
    committed_by + lease_ms + margin_ms
}

pub mod digest;

#[cfg(test)]
mod tests;
