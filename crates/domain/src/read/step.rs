//! The I/O a feed read asks for, as data: one [`Step`] is everything that runs at once (one
//! sequential wait, or `ceil(databases / 6)` of them when more databases than connections are
//! touched), and [`Replies`] is what it returned, in the same order. The service's
//! [`super::FeedIo`] (`services/feed_io.rs`) turns each [`Statement`] into SQL and each answer
//! into [`Rows`].

use super::super::cursor::SortKey;
use super::super::hot::{HotMiss, HotRange};
use super::super::ids::{ListId, PostId, UserId};
use super::super::plan::{Bounds, InFlight, ReaderEdge, MAX_PARALLEL_DATABASES};
use super::super::replica::{ReplicaAnswer, ReplicaQuery};
use super::super::tags::FollowedTags;
use super::super::window::{Entry, WindowOp, WindowReply};

/// What a failed I/O does to the read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// The read fails with the error.
    Fail,
    /// The window is unavailable: the read goes on from D1 alone (state `rebuilding`).
    Degrade,
    /// The batch's database is unavailable (an outage, not a refused statement): the read goes
    /// on without it, leaves the posts of the authors living there out and names them
    /// ([`super::Finished::unavailable`]).
    Omit,
}

/// Everything one step runs at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// A call to the reader's window object.
    pub window: Option<(WindowOp, OnFailure)>,
    /// The hot-range cache lookups below this boundary (Cache API, not a storage wait).
    pub hot_lookup: Option<i64>,
    /// One batch per database (at most one per database), run at most
    /// [`MAX_PARALLEL_DATABASES`] at once.
    pub batches: Vec<DbBatch>,
    /// Reads of hot authors' replicas (Durable Objects), beside the batches.
    pub replicas: Vec<ReplicaCall>,
}

impl Step {
    pub fn window(op: WindowOp, on_failure: OnFailure) -> Self {
        Self { window: Some((op, on_failure)), hot_lookup: None, batches: Vec::new(), replicas: Vec::new() }
    }

    pub fn batches(batches: Vec<DbBatch>) -> Self {
        Self { window: None, hot_lookup: None, batches, replicas: Vec::new() }
    }

    /// The sequential storage waits this step costs: its batches in groups of
    /// [`MAX_PARALLEL_DATABASES`], the window call beside the first group.
    pub fn waits(&self) -> usize {
        let groups = self.batches.len().div_ceil(MAX_PARALLEL_DATABASES);
        groups.max(usize::from(self.window.is_some()))
    }

    /// D1 statements per database, `(database, statements)`.
    pub fn statements(&self) -> Vec<(usize, usize)> {
        self.batches.iter().map(|b| (b.database, b.statements.len())).collect()
    }
}

/// A read of a hot author's replica in digest `replica` (`domain/replica/digest.rs`): the I/O
/// sends a step's calls naming one digest as one request. A failure or a timeout answers
/// `None` and the read goes to the author's database instead.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaCall {
    pub author: UserId,
    pub replica: u32,
    pub query: ReplicaQuery,
}

/// A replica's answer with its rows as feed rows.
pub type ReplicaRows<R> = ReplicaAnswer<R>;

/// One database's batch: its statements run in one round trip, answers in order.
#[derive(Debug, Clone, PartialEq)]
pub struct DbBatch {
    pub database: usize,
    pub statements: Vec<Statement>,
    pub on_failure: OnFailure,
}

/// Which rows a pull slab selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlabRows {
    /// Feed rows, each with the viewer's relationship to its author (read in the same
    /// statement: no step after the slabs).
    Posts,
    /// Keys only: a new window's snapshot.
    Entries,
}

/// One time slab of a full pull on one database: the authors' posts with keys in
/// `(lower, upper)` created at or after `start` (`-1`: unbounded), newest first, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slab {
    pub rows: SlabRows,
    pub authors: Vec<UserId>,
    pub upper: SortKey,
    pub start: i64,
    pub lower: SortKey,
    pub limit: usize,
}

/// One statement, described; the viewer is the read's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    /// The reader's edges (on the reader's database), with each author's membership of `list`;
    /// with `tags` (the home feed) also the tags they follow and, if any, whom they mute, in
    /// the same statement ([`FollowedTags`]).
    Edges { list: Option<ListId>, tags: bool },
    /// Marks the reader's window live, so fan-out delivers to it (a new window, before its
    /// snapshot is read).
    Activate,
    /// The newest `limit` posts addressed to the reader by others (their conversations' direct
    /// posts, on their home database), as window entries: a new window holds them as the
    /// direct posts' events would have delivered them to a live one (`services/direct.rs`).
    Addressed { limit: usize },
    /// Pulled authors beside the window: top `bounds.limit` each.
    Pulled { authors: Vec<UserId>, bounds: Bounds },
    /// Posts that may still be on their way to the window.
    InFlight { reads: Vec<InFlight>, bounds: Bounds },
    /// Window candidates' rows (one chunk of ids).
    Hydrate { ids: Vec<PostId> },
    /// The viewer's relationship to each author, once per author.
    Relationships { authors: Vec<UserId> },
    /// Hot-cache refill: which of the reader's pulled authors here are hot.
    HotAuthors { authors: Vec<UserId> },
    /// Hot-cache refill: one author's range below a boundary.
    HotRange { author: UserId, below: i64 },
    /// One slab of a full pull.
    Slab(Slab),
    /// The viewer's likes among posts with ids in `lo..=hi` (the reader's own likes, on their
    /// home database), for rows served by replicas.
    LikedIn { lo: i64, hi: i64 },
}

/// The viewer's relationship to one author as the author's database has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthorRelation {
    pub author: UserId,
    pub follows: bool,
    pub blocked: bool,
    pub suspended: bool,
}

/// One statement's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows<R> {
    Edges(Vec<ReaderEdge>, FollowedTags),
    Posts(Vec<R>),
    Entries(Vec<Entry>),
    Relationships(Vec<AuthorRelation>),
    /// `(author, followers)` of hot pulled authors.
    HotAuthors(Vec<(UserId, i64)>),
    /// Post ids the viewer likes.
    Liked(Vec<PostId>),
    /// A statement without rows (the activation).
    Done,
}

impl<R> Rows<R> {
    pub fn edges(self) -> (Vec<ReaderEdge>, FollowedTags) {
        match self {
            Rows::Edges(edges, tags) => (edges, tags),
            _ => (Vec::new(), FollowedTags::default()),
        }
    }

    pub fn posts(self) -> Vec<R> {
        match self {
            Rows::Posts(rows) => rows,
            _ => Vec::new(),
        }
    }

    pub fn entries(self) -> Vec<Entry> {
        match self {
            Rows::Entries(rows) => rows,
            _ => Vec::new(),
        }
    }
}

/// What the cache lookups found: ranges, and the entries it lacked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HotFound {
    pub ranges: Vec<HotRange>,
    pub misses: Vec<HotMiss>,
}

/// What a step returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Replies<R> {
    /// The window's answer; `None` when it failed (only for [`OnFailure::Degrade`]).
    pub window: Option<WindowReply>,
    pub hot: HotFound,
    /// Per batch of the step, per statement, in order (empty for a degraded failure).
    pub batches: Vec<Vec<Rows<R>>>,
    /// An I/O with [`OnFailure::Degrade`] failed.
    pub failed: bool,
    /// The databases whose [`OnFailure::Omit`] batch met an outage (their answers are empty).
    pub unavailable: Vec<usize>,
    /// Per replica call of the step, in order; `None` when it failed.
    pub replicas: Vec<Option<ReplicaRows<R>>>,
}

impl<R> Default for Replies<R> {
    fn default() -> Self {
        Self {
            window: None,
            hot: HotFound::default(),
            batches: Vec::new(),
            failed: false,
            unavailable: Vec::new(),
            replicas: Vec::new(),
        }
    }
}
