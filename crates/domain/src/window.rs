//! The timeline window: one reader's capped index of the post ids in their home feed, ordered
//! by `(created_at DESC, post_id DESC)`. It never holds bodies.
//!
//! The rules live here once, as [`apply`] over the [`WindowStorage`] trait; the Durable Object
//! is a thin shell that plugs SQLite in (`objects::window_sql`), the tests plug in
//! [`MemoryWindow`]. So the rules are tested natively, without a Workers runtime. Entries are
//! stored packed in blocks (`blocks.rs`: one storage row per block, so a delivery writes one
//! row and reads a few, whatever the window holds).
//!
//! Invariant: once initialized (a floor exists), the window holds every delivered post whose
//! key is at or above its `floor`. Anything older is served by the D1 pull path, so a reader
//! paging down switches to D1 at the floor and sees every post exactly once.
//!
//! Rules, and why:
//! - `Deliver` inserts entries unique by post (a post's key never changes, so its key finds
//!   it), so a redelivered event (queues deliver at least once) is a no-op. Once a floor exists
//!   an entry below it is dropped: the pull path already covers that range, and keeping it
//!   would leave a gap between it and the floor. Before init there is no floor, so deliveries
//!   are kept (init will reconcile them).
//! - `Init` builds the window once from a D1 snapshot. An incomplete snapshot is only known
//!   complete down to its oldest entry, which becomes the floor; a complete one covers
//!   everything, so the floor is [`SortKey::BOTTOM`]. Deliveries that raced ahead of the
//!   snapshot and sit below its floor are deleted: nothing guarantees the range between them
//!   and the floor is complete.
//! - The trim to `cap` drops whole oldest blocks, keeping at least `max(cap, 1)` entries, and
//!   raises the floor to the lowest kept block's bound, so the invariant survives trims (the
//!   dropped range now belongs to the pull path). A window holds at most `cap' + 2B - 2`
//!   entries (`cap' = max(cap, 1)`, `B` = [`block_size`]: 898 for the default 800); the
//!   precise bounds are at `blocks::Working::trim`.
//! - Events are applied by the state they carry, never by arrival order (queues reorder and
//!   redeliver, and a fan-out chunk reads D1 before it writes here). Each entry carries the
//!   post's `state_version` from D1; `RemovePost` carries the version whose state made the post
//!   invisible, deletes an entry only if the entry's version is not newer, and leaves a
//!   tombstone, so a stale delivery of an older version cannot bring the post back while a
//!   delivery of a newer version (the post was made visible again) can. Reader-scoped events
//!   (`Backfill`, `RemoveAuthor`) carry their outbox event id, which D1 assigns in commit
//!   order: a per-author mark keeps the newest one applied and older ones are ignored, so an
//!   unfollow that arrives after the re-follow's backfill cannot empty the window of that author.
//! - `Older`/`Newer` only answer at or above the floor, and only once initialized: below the
//!   floor (or before init) the window cannot tell a missing post from a non-existent one.
//! - Each reply carries `initialized` and `floor` as read at the start of the op (except
//!   `Init`, which reports the floor it left), so a caller can tell where the window ends.
//!
//! Storage backends need no transactions: the Durable Object runs each op synchronously,
//! without awaiting, so an op is atomic.

mod blocks;

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;

use serde::{Deserialize, Serialize};

use super::activity::{Activity, ActivityReport, Recorded};
use super::cursor::SortKey;
use super::ids::{PostId, UserId};

pub use blocks::{block_size, pack, Block, BlockStore, Entry};
use blocks::{scan_down, Working};

/// Operations, sent as JSON to the object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum WindowOp {
    /// Add entries (fan-out or follow backfill); trims to `cap`.
    Deliver { entries: Vec<Entry>, cap: usize },
    /// First build from D1; `complete` when the snapshot holds every candidate there is.
    Init { entries: Vec<Entry>, complete: bool, cap: usize },
    /// Entries strictly older than `before`, newest first. `read_at`: the reader opened their
    /// feed at that time (counted for their read rate; `Newer` likewise).
    Older {
        before: SortKey,
        limit: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read_at: Option<i64>,
    },
    /// Entries strictly newer than `after`, newest first.
    Newer {
        after: SortKey,
        limit: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read_at: Option<i64>,
    },
    /// The post became invisible to followers at `version` (made private, deleted).
    RemovePost {
        post_id: PostId,
        #[serde(default)]
        version: i64,
        /// The post's time, so its tombstone is dropped once below the floor.
        #[serde(default)]
        created_at: i64,
    },
    /// The reader stopped following the author (unfollow, block): outbox event `event`.
    RemoveAuthor {
        author_id: UserId,
        #[serde(default)]
        event: i64,
    },
    /// Test hook: moves the reader's recorded activity `ms` into the past, as if they had been
    /// away that long.
    AgeActivity { ms: i64 },
    /// The reader started following the author (outbox event `event`): their recent posts.
    Backfill { author_id: UserId, event: i64, entries: Vec<Entry>, cap: usize },
}

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowReply {
    pub initialized: bool,
    /// Lowest key the window is complete down to (meaningful once initialized).
    pub floor: Option<SortKey>,
    pub entries: Vec<Entry>,
    pub changed: usize,
    /// The reader's activity, when a read made a report to D1 due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<ActivityReport>,
    /// SQL statements the op ran in the object (the fan-out's per-delivery profile).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub statements: usize,
    /// Rows the op's statements read and wrote, as the object's SQL cursors count them (what
    /// Durable Object SQLite bills: every row scanned; every row and index entry written or
    /// deleted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_read: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_written: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The primitive operations a window backend provides besides its block rows ([`BlockStore`]);
/// [`apply`] builds the rules from them.
pub trait WindowStorage: BlockStore {
    /// The floor, `None` until the window is initialized.
    fn floor(&self) -> Result<Option<SortKey>, Self::Error>;
    fn set_floor(&mut self, floor: SortKey) -> Result<(), Self::Error>;
    /// The version at which the post was last removed, if a tombstone is kept.
    fn tombstone(&self, post_id: PostId) -> Result<Option<i64>, Self::Error>;
    /// Records (or raises) the post's tombstone; `key` lets trims drop it below the floor.
    fn put_tombstone(&mut self, post_id: PostId, key: SortKey, version: i64) -> Result<(), Self::Error>;
    /// Drops the tombstones of posts whose key is below `key`.
    fn delete_tombstones_below(&mut self, key: SortKey) -> Result<(), Self::Error>;
    /// The newest reader-scoped event applied for this author.
    fn author_mark(&self, author_id: UserId) -> Result<Option<i64>, Self::Error>;
    fn set_author_mark(&mut self, author_id: UserId, event: i64) -> Result<(), Self::Error>;
    /// The reader's feed-read activity (see `domain::activity`).
    fn activity(&self) -> Result<Option<Activity>, Self::Error>;
    fn set_activity(&mut self, activity: &Activity) -> Result<(), Self::Error>;
    /// Keeps the record in the object's memory only (a read with no report due: see
    /// `domain::activity`); a backend without memory has nothing cheaper than a write.
    fn keep_activity(&mut self, activity: &Activity) -> Result<(), Self::Error> {
        self.set_activity(activity)
    }
    /// Entries per block for a window capped at `cap` (tests pick their own).
    fn block_size(&self, cap: usize) -> usize {
        block_size(cap)
    }
}

/// Applies one operation to a window (see the module docs for the rules).
pub fn apply<S: WindowStorage>(store: &mut S, op: WindowOp) -> Result<WindowReply, S::Error> {
    let floor = store.floor()?;
    let mut reply = WindowReply { initialized: floor.is_some(), floor, ..WindowReply::default() };
    let mut w = Working::default();
    match op {
        WindowOp::Deliver { entries, cap } => {
            reply.changed = insert_all(store, &mut w, &entries, floor, cap)?;
            trim(store, &mut w, cap)?;
        }
        WindowOp::Init { entries, complete, cap } => {
            if floor.is_none() {
                reply.changed = init(store, &mut w, entries, complete, cap)?;
            }
            reply.initialized = true;
            reply.floor = store.floor()?;
        }
        WindowOp::Older { before, limit, read_at } => {
            reply.report = count_read(store, read_at)?;
            if let Some(floor) = floor {
                reply.entries = older(store, before, floor, limit)?;
            }
        }
        WindowOp::Newer { after, limit, read_at } => {
            reply.report = count_read(store, read_at)?;
            if let Some(floor) = floor {
                reply.entries = newer(store, after, floor, limit)?;
            }
        }
        WindowOp::RemovePost { post_id, version, created_at } => {
            reply.changed = remove_post(store, &mut w, post_id, version, created_at)?
        }
        WindowOp::RemoveAuthor { author_id, event } => {
            if newer_event(store, author_id, event)? {
                reply.changed = w.delete_where(store, |e| e.author_id == author_id)?;
            }
        }
        WindowOp::AgeActivity { ms } => age_activity(store, ms)?,
        WindowOp::Backfill { author_id, event, entries, cap } => {
            if newer_event(store, author_id, event)? {
                reply.changed = insert_all(store, &mut w, &entries, floor, cap)?;
                trim(store, &mut w, cap)?;
            }
        }
    }
    w.flush(store)?;
    Ok(reply)
}

/// Entries with `floor <= key < before`, newest first, at most `limit`.
pub fn older<S: BlockStore>(
    store: &S,
    before: SortKey,
    floor: SortKey,
    limit: usize,
) -> Result<Vec<Entry>, S::Error> {
    scan_down(store, before, floor, limit, |k| k >= floor)
}

/// The newest `limit` entries with `key > after` and `key >= floor`, newest first.
fn newer<S: BlockStore>(
    store: &S,
    after: SortKey,
    floor: SortKey,
    limit: usize,
) -> Result<Vec<Entry>, S::Error> {
    scan_down(store, SortKey::TOP, after.max(floor), limit, |k| k > after && k >= floor)
}

/// Test hook: moves the reader's recorded activity `ms` into the past.
fn age_activity<S: WindowStorage>(store: &mut S, ms: i64) -> Result<(), S::Error> {
    if let Some(mut activity) = store.activity()? {
        activity.age(ms);
        store.set_activity(&activity)?;
    }
    Ok(())
}

/// The newest entry's key, if the window holds any.
pub fn newest_key<S: BlockStore>(store: &S) -> Result<Option<SortKey>, S::Error> {
    Ok(store.blocks_below(SortKey::TOP, 1)?.pop().and_then(|b| b.entries.last().map(Entry::key)))
}

/// Counts a feed read (when the op is one); returns the activity report it made due.
fn count_read<S: WindowStorage>(
    store: &mut S,
    read_at: Option<i64>,
) -> Result<Option<ActivityReport>, S::Error> {
    let Some(now) = read_at else {
        return Ok(None);
    };
    let mut activity = store.activity()?.unwrap_or_default();
    let report = activity.on_read(now);
    match Recorded::of(&report) {
        Recorded::Storage => store.set_activity(&activity)?,
        Recorded::Memory => store.keep_activity(&activity)?,
    }
    Ok(report)
}

/// Whether `event` is newer than every reader-scoped event applied for the author; if so it
/// becomes the author's mark (and the caller applies it).
fn newer_event<S: WindowStorage>(store: &mut S, author_id: UserId, event: i64) -> Result<bool, S::Error> {
    if store.author_mark(author_id)?.is_some_and(|mark| mark >= event) {
        return Ok(false);
    }
    store.set_author_mark(author_id, event)?;
    Ok(true)
}

/// Removes the post's entry unless it carries a newer version, and keeps a tombstone so an
/// older delivery arriving later is ignored; returns how many entries were deleted. An op
/// without the post's time (sent before ops carried it) looks the post up by id.
fn remove_post<S: WindowStorage>(
    store: &mut S,
    w: &mut Working,
    post_id: PostId,
    version: i64,
    created_at: i64,
) -> Result<usize, S::Error> {
    let key = SortKey::new(created_at, post_id.get());
    let deleted = if created_at == 0 {
        w.delete_where(store, |e| e.post_id == post_id && e.version <= version)?
    } else {
        match w.find(store, key)? {
            Some(entry) if entry.version <= version => w.delete_key(store, key)?,
            _ => 0,
        }
    };
    store.put_tombstone(post_id, key, version)?;
    Ok(deleted)
}

/// Inserts or refreshes one entry by its version; returns whether it was newly inserted.
fn insert_versioned<S: WindowStorage>(
    store: &mut S,
    w: &mut Working,
    entry: &Entry,
    block: usize,
) -> Result<bool, S::Error> {
    if store.tombstone(entry.post_id)?.is_some_and(|removed_at| removed_at >= entry.version) {
        return Ok(false);
    }
    match w.find(store, entry.key())? {
        None => w.insert(store, *entry, block).map(|()| true),
        Some(current) if current.version < entry.version => {
            w.set_version(store, entry.key(), entry.version).map(|()| false)
        }
        Some(_) => Ok(false),
    }
}

/// Inserts the entries not already present, skipping those below `floor` (when there is one);
/// returns how many were inserted.
fn insert_all<S: WindowStorage>(
    store: &mut S,
    w: &mut Working,
    entries: &[Entry],
    floor: Option<SortKey>,
    cap: usize,
) -> Result<usize, S::Error> {
    let block = store.block_size(cap);
    let mut inserted = 0;
    for entry in entries {
        if floor.is_some_and(|f| entry.key() < f) {
            continue;
        }
        if insert_versioned(store, w, entry, block)? {
            inserted += 1;
        }
    }
    Ok(inserted)
}

/// First build of a not-yet-initialized window; returns how many entries were inserted.
fn init<S: WindowStorage>(
    store: &mut S,
    w: &mut Working,
    mut entries: Vec<Entry>,
    complete: bool,
    cap: usize,
) -> Result<usize, S::Error> {
    let floor = snapshot_floor(&entries, complete);
    // Deliveries that raced ahead of the snapshot may sit below its floor, with a gap above.
    w.delete_where(store, |e| e.key() < floor)?;
    store.delete_tombstones_below(floor)?;
    store.set_floor(floor)?;
    // Oldest first, so the blocks fill up (each new key lands above the last).
    entries.sort_by_key(Entry::key);
    // The snapshot is at or above its own floor by construction: no floor check needed.
    let inserted = insert_all(store, w, &entries, None, cap)?;
    trim(store, w, cap)?;
    Ok(inserted)
}

/// How far down a snapshot is known complete: its oldest entry, or everything if `complete`.
/// An empty snapshot that claims to be incomplete has no oldest entry; it is taken as complete.
fn snapshot_floor(entries: &[Entry], complete: bool) -> SortKey {
    match entries.iter().map(Entry::key).min() {
        Some(oldest) if !complete => oldest,
        _ => SortKey::BOTTOM,
    }
}

/// Trims to `cap` by whole blocks (when the op may have grown the window past its bound); if
/// any were dropped, an existing floor rises to the lowest kept block's bound, so the dropped
/// range is handed to the pull path, and tombstones below it go too.
fn trim<S: WindowStorage>(store: &mut S, w: &mut Working, cap: usize) -> Result<(), S::Error> {
    let Some(kept_from) = w.trim(store, cap)? else {
        return Ok(());
    };
    store.delete_tombstones_below(kept_from)?;
    if store.floor()?.is_some_and(|floor| floor < kept_from) {
        store.set_floor(kept_from)?;
    }
    Ok(())
}

/// An in-memory window (tests, tools); the same rules as the Durable Object's SQLite one. It
/// counts the block rows it reads and writes, as SQLite bills them.
#[derive(Debug, Default, Clone)]
pub struct MemoryWindow {
    floor: Option<SortKey>,
    blocks: BTreeMap<SortKey, Vec<Entry>>,
    tombstones: HashMap<PostId, (SortKey, i64)>,
    author_marks: HashMap<UserId, i64>,
    activity: Option<Activity>,
    /// Activity records written to storage (not those kept in memory only).
    activity_writes: usize,
    /// Entries per block, when not [`block_size`] of the op's cap.
    block: Option<usize>,
    rows_read: Cell<usize>,
    rows_written: usize,
}

impl MemoryWindow {
    pub fn new() -> Self {
        Self::default()
    }

    /// A window whose blocks hold `block` entries whatever the cap.
    pub fn with_block_size(block: usize) -> Self {
        Self { block: Some(block), ..Self::default() }
    }

    /// Every entry, newest first.
    pub fn entries(&self) -> Vec<Entry> {
        self.blocks.values().rev().flat_map(|b| b.iter().rev().copied()).collect()
    }

    pub fn len(&self) -> usize {
        self.blocks.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub fn holds(&self, post_id: PostId) -> bool {
        self.blocks.values().flatten().any(|e| e.post_id == post_id)
    }

    /// Block rows read and written so far.
    pub fn rows(&self) -> (usize, usize) {
        (self.rows_read.get(), self.rows_written)
    }

    /// Activity records written to storage so far.
    pub fn activity_writes(&self) -> usize {
        self.activity_writes
    }
}

impl BlockStore for MemoryWindow {
    type Error = Infallible;

    fn blocks_below(&self, below: SortKey, limit: usize) -> Result<Vec<Block>, Infallible> {
        let found: Vec<Block> = self
            .blocks
            .range(..below)
            .rev()
            .take(limit)
            .map(|(lo, entries)| Block { lo: *lo, entries: entries.clone() })
            .collect();
        self.rows_read.set(self.rows_read.get() + found.len());
        Ok(found)
    }

    fn put_block(&mut self, block: &Block) -> Result<(), Infallible> {
        self.rows_written += 1;
        self.blocks.insert(block.lo, block.entries.clone());
        Ok(())
    }

    fn delete_block(&mut self, lo: SortKey) -> Result<(), Infallible> {
        self.rows_written += 1;
        self.blocks.remove(&lo);
        Ok(())
    }
}

impl WindowStorage for MemoryWindow {
    fn floor(&self) -> Result<Option<SortKey>, Infallible> {
        Ok(self.floor)
    }

    fn set_floor(&mut self, floor: SortKey) -> Result<(), Infallible> {
        self.floor = Some(floor);
        Ok(())
    }

    fn tombstone(&self, post_id: PostId) -> Result<Option<i64>, Infallible> {
        Ok(self.tombstones.get(&post_id).map(|(_, version)| *version))
    }

    fn put_tombstone(&mut self, post_id: PostId, key: SortKey, version: i64) -> Result<(), Infallible> {
        let slot = self.tombstones.entry(post_id).or_insert((key, version));
        slot.1 = slot.1.max(version);
        Ok(())
    }

    fn delete_tombstones_below(&mut self, key: SortKey) -> Result<(), Infallible> {
        self.tombstones.retain(|_, (at, _)| *at >= key);
        Ok(())
    }

    fn author_mark(&self, author_id: UserId) -> Result<Option<i64>, Infallible> {
        Ok(self.author_marks.get(&author_id).copied())
    }

    fn set_author_mark(&mut self, author_id: UserId, event: i64) -> Result<(), Infallible> {
        self.author_marks.insert(author_id, event);
        Ok(())
    }

    fn activity(&self) -> Result<Option<Activity>, Infallible> {
        Ok(self.activity)
    }

    fn set_activity(&mut self, activity: &Activity) -> Result<(), Infallible> {
        self.activity_writes += 1;
        self.activity = Some(*activity);
        Ok(())
    }

    fn keep_activity(&mut self, activity: &Activity) -> Result<(), Infallible> {
        self.activity = Some(*activity);
        Ok(())
    }

    fn block_size(&self, cap: usize) -> usize {
        self.block.unwrap_or_else(|| block_size(cap))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn e(created_at: i64, post: i64, author: i64) -> Entry {
        Entry {
            created_at,
            post_id: PostId::from_trusted(post),
            author_id: UserId::from_trusted(author),
            version: 0,
        }
    }

    fn run(window: &mut MemoryWindow, op: WindowOp) -> WindowReply {
        match apply(window, op) {
            Ok(reply) => reply,
            Err(never) => match never {},
        }
    }

    fn ids(entries: &[Entry]) -> Vec<i64> {
        entries.iter().map(|e| e.post_id.get()).collect()
    }

    fn deliver(entries: Vec<Entry>, cap: usize) -> WindowOp {
        WindowOp::Deliver { entries, cap }
    }

    fn older(before: SortKey, limit: usize) -> WindowOp {
        WindowOp::Older { before, limit, read_at: None }
    }

    /// A window initialized from a complete (empty) snapshot: floor BOTTOM.
    fn initialized() -> MemoryWindow {
        let mut window = MemoryWindow::new();
        run(&mut window, WindowOp::Init { entries: vec![], complete: true, cap: 100 });
        window
    }

    #[test]
    fn page_one_reads_write_the_activity_only_when_a_report_is_due() {
        const NOW: i64 = 1_800_000_000_000;
        let mut window = initialized();
        let read = |window: &mut MemoryWindow, at: i64| {
            let op = WindowOp::Newer { after: SortKey::BOTTOM, limit: 10, read_at: Some(at) };
            run(window, op).report.is_some()
        };
        assert!(read(&mut window, NOW), "the first read reports");
        assert_eq!(window.activity_writes(), 1);
        // Reads until the rate settles, then a same-day read: reported and written together.
        let mut at = NOW;
        for _ in 0..12 {
            at += 60_000;
            let (before, reported) = (window.activity_writes(), read(&mut window, at));
            assert_eq!(window.activity_writes() - before, usize::from(reported), "writes follow reports");
        }
        let before = window.activity_writes();
        assert!(!read(&mut window, at + 60_000), "a settled rate: no report");
        assert_eq!(window.activity_writes(), before, "and no write");
        let kept = window.activity.expect("kept in memory");
        assert_eq!(kept.last_read_at, Some(at + 60_000), "the read is still counted");
        assert!(read(&mut window, at + crate::policy::DAY_MS), "a day later: reported");
        assert_eq!(window.activity_writes(), before + 1);
    }

    #[test]
    fn out_of_order_deliveries_end_in_key_order() {
        // Equal times are ordered by post id.
        let posts = [e(10, 1, 1), e(20, 2, 1), e(20, 3, 2), e(5, 4, 2), e(30, 5, 1)];
        let mut rng = Lcg(7);
        for _ in 0..50 {
            let mut shuffled = posts.to_vec();
            rng.shuffle(&mut shuffled);
            let mut window = initialized();
            for entry in shuffled {
                assert_eq!(run(&mut window, deliver(vec![entry], 100)).changed, 1);
            }
            assert_eq!(ids(&window.entries()), vec![5, 3, 2, 1, 4]);
            assert_eq!(ids(&run(&mut window, older(SortKey::TOP, 10)).entries), vec![5, 3, 2, 1, 4]);
        }
    }

    #[test]
    fn redelivery_is_a_no_op() {
        let mut window = initialized();
        assert_eq!(run(&mut window, deliver(vec![e(10, 1, 1), e(20, 2, 1)], 10)).changed, 2);
        // Duplicates across and within a delivery (a post's key never changes).
        let again = vec![e(20, 2, 1), e(10, 1, 1), e(10, 1, 1)];
        assert_eq!(run(&mut window, deliver(again, 10)).changed, 0);
        assert_eq!(window.entries(), vec![e(20, 2, 1), e(10, 1, 1)]);
    }

    #[test]
    fn trim_raises_the_floor() {
        let mut window = initialized();
        let five = (1..=5).map(|i| e(i * 10, i, 1)).collect();
        let reply = run(&mut window, deliver(five, 3));
        // The reply reports the floor the op started from; the trim raised it.
        assert_eq!((reply.changed, reply.floor), (5, Some(SortKey::BOTTOM)));
        assert_eq!(ids(&window.entries()), vec![5, 4, 3]);
        assert_eq!(window.floor, Some(SortKey::new(30, 3)));
        assert_eq!(run(&mut window, older(SortKey::TOP, 10)).floor, Some(SortKey::new(30, 3)));
    }

    #[test]
    fn cap_zero_keeps_the_newest_entry() {
        let mut window = initialized();
        run(&mut window, deliver(vec![e(10, 1, 1), e(20, 2, 1)], 0));
        assert_eq!(ids(&window.entries()), vec![2]);
        assert_eq!(window.floor, Some(SortKey::new(20, 2)));
    }

    #[test]
    fn delivery_below_the_floor_is_dropped() {
        let mut window = initialized();
        run(&mut window, deliver((1..=5).map(|i| e(i * 10, i, 1)).collect(), 3));
        // Floor is (30, 3): a late post below it belongs to the pull path; just above is kept.
        let reply = run(&mut window, deliver(vec![e(29, 9, 1), e(30, 2, 1), e(30, 6, 1)], 10));
        assert_eq!(reply.changed, 1);
        assert_eq!(window.entries(), vec![e(50, 5, 1), e(40, 4, 1), e(30, 6, 1), e(30, 3, 1)]);
    }

    #[test]
    fn deliveries_before_init_are_kept_but_not_served() {
        let mut window = MemoryWindow::new();
        assert_eq!(run(&mut window, deliver(vec![e(10, 1, 1), e(20, 2, 1), e(30, 3, 1)], 2)).changed, 3);
        // Trimmed to the cap, but there is no floor to raise yet.
        assert_eq!((ids(&window.entries()), window.floor), (vec![3, 2], None));
        let reply = run(&mut window, older(SortKey::TOP, 10));
        assert_eq!(reply, WindowReply::default());
        assert_eq!(
            run(&mut window, WindowOp::Newer { after: SortKey::BOTTOM, limit: 9, read_at: None }),
            reply
        );
    }

    #[test]
    fn remove_author_deletes_only_their_entries() {
        let mut window = initialized();
        run(&mut window, deliver(vec![e(10, 1, 7), e(20, 2, 8), e(30, 3, 7), e(40, 4, 9)], 10));
        let reply = run(&mut window, remove_author(7, 1));
        assert_eq!(reply.changed, 2);
        assert_eq!(window.entries(), vec![e(40, 4, 9), e(20, 2, 8)]);
        assert_eq!(run(&mut window, remove_author(7, 2)).changed, 0);
    }

    fn remove_author(author: i64, event: i64) -> WindowOp {
        WindowOp::RemoveAuthor { author_id: UserId::from_trusted(author), event }
    }

    fn backfill(author: i64, event: i64, entries: Vec<Entry>) -> WindowOp {
        WindowOp::Backfill { author_id: UserId::from_trusted(author), event, entries, cap: 10 }
    }

    fn remove_post(post: i64, version: i64, created_at: i64) -> WindowOp {
        WindowOp::RemovePost { post_id: PostId::from_trusted(post), version, created_at }
    }

    fn v(entry: Entry, version: i64) -> Entry {
        Entry { version, ..entry }
    }

    #[test]
    fn author_events_apply_in_event_order_whatever_the_arrival_order() {
        let posts = vec![e(10, 1, 7), e(20, 2, 7)];
        // Follow (event 1), unfollow (2), follow again (3): every arrival order ends followed.
        let events = [backfill(7, 1, posts.clone()), remove_author(7, 2), backfill(7, 3, posts.clone())];
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            let mut window = initialized();
            for i in order {
                run(&mut window, events[i].clone());
                run(&mut window, events[i].clone()); // duplicated delivery
            }
            assert_eq!(ids(&window.entries()), vec![2, 1], "order {order:?}");
        }
        // Follow (1) then unfollow (2), the backfill arriving last: the author stays out.
        let mut window = initialized();
        run(&mut window, remove_author(7, 2));
        assert_eq!(run(&mut window, backfill(7, 1, posts)).changed, 0);
        assert!(window.entries().is_empty());
    }

    #[test]
    fn post_events_apply_by_version_whatever_the_arrival_order() {
        let post = e(10, 1, 7);
        // Public (v0) -> private (v1, remove) -> public (v2, deliver): present in every order.
        let events = [deliver(vec![v(post, 0)], 10), remove_post(1, 1, 10), deliver(vec![v(post, 2)], 10)];
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            let mut window = initialized();
            for i in order {
                run(&mut window, events[i].clone());
                run(&mut window, events[i].clone());
            }
            assert_eq!(window.entries(), vec![v(post, 2)], "order {order:?}");
        }
        // ... -> private again (v3): absent in every order of the last two.
        for order in [[0, 1], [1, 0]] {
            let mut window = initialized();
            let late = [deliver(vec![v(post, 2)], 10), remove_post(1, 3, 10)];
            for i in order {
                run(&mut window, late[i].clone());
            }
            assert!(window.entries().is_empty(), "order {order:?}");
        }
    }

    #[test]
    fn tombstones_fall_with_the_floor() {
        let mut window = initialized();
        run(&mut window, remove_post(1, 5, 10));
        assert_eq!(window.tombstones.len(), 1);
        run(&mut window, deliver((2..=4).map(|i| e(i * 10, i, 7)).collect(), 2));
        assert!(window.tombstones.is_empty(), "below the raised floor");
    }

    #[test]
    fn remove_post_deletes_one_entry() {
        let mut window = initialized();
        run(&mut window, deliver(vec![e(10, 1, 7), e(20, 2, 7), e(30, 3, 7)], 10));
        let remove = remove_post(2, 0, 20);
        assert_eq!(run(&mut window, remove.clone()).changed, 1);
        assert_eq!(window.entries(), vec![e(30, 3, 7), e(10, 1, 7)]);
        assert_eq!(run(&mut window, remove).changed, 0);
        assert_eq!(ids(&window.entries()), vec![3, 1]);
    }

    #[test]
    fn init_drops_raced_deliveries_below_the_snapshot_floor() {
        let mut window = MemoryWindow::new();
        // Fan-out reached the window before the first read built it.
        run(&mut window, deliver(vec![e(5, 1, 1), e(50, 9, 1), e(30, 6, 1)], 10));
        let snapshot = vec![e(40, 7, 1), e(30, 6, 1), e(20, 5, 1)];
        let reply = run(&mut window, WindowOp::Init { entries: snapshot, complete: false, cap: 10 });
        assert_eq!(reply.changed, 2, "post 6 was already there");
        assert_eq!((reply.initialized, reply.floor), (true, Some(SortKey::new(20, 5))));
        assert_eq!(ids(&window.entries()), vec![9, 7, 6, 5]);
    }

    #[test]
    fn complete_init_has_bottom_floor_and_runs_once() {
        let mut window = MemoryWindow::new();
        run(&mut window, deliver(vec![e(1, 1, 1)], 10));
        let snapshot = vec![e(40, 7, 1), e(20, 5, 1)];
        let reply = run(&mut window, WindowOp::Init { entries: snapshot, complete: true, cap: 10 });
        assert_eq!((reply.changed, reply.floor), (2, Some(SortKey::BOTTOM)));
        assert_eq!(ids(&window.entries()), vec![7, 5, 1]);
        // A second init (another reader request racing the first) changes nothing.
        let other = vec![e(90, 8, 1)];
        let reply = run(&mut window, WindowOp::Init { entries: other, complete: false, cap: 1 });
        assert_eq!((reply.initialized, reply.changed, reply.floor), (true, 0, Some(SortKey::BOTTOM)));
        assert_eq!(ids(&window.entries()), vec![7, 5, 1]);
    }

    #[test]
    fn init_trims_and_reports_the_raised_floor() {
        let mut window = MemoryWindow::new();
        let snapshot = (1..=5).map(|i| e(i * 10, i, 1)).collect();
        let reply = run(&mut window, WindowOp::Init { entries: snapshot, complete: true, cap: 2 });
        assert_eq!((reply.changed, reply.floor), (5, Some(SortKey::new(40, 4))));
        assert_eq!(ids(&window.entries()), vec![5, 4]);
    }

    #[test]
    fn older_pages_across_a_trim_without_repeats() {
        let mut window = initialized();
        run(&mut window, deliver((1..=10).map(|i| e(i * 10, i, 1)).collect(), 10));
        let first = run(&mut window, older(SortKey::TOP, 3)).entries;
        assert_eq!(ids(&first), vec![10, 9, 8]);
        let mut cursor = first[2].key();
        // Three new posts arrive; the trim drops posts 1..=3 and raises the floor to post 4.
        run(&mut window, deliver((11..=13).map(|i| e(i * 10, i, 1)).collect(), 10));
        let mut seen = ids(&first);
        loop {
            let reply = run(&mut window, older(cursor, 3));
            assert_eq!(reply.floor, Some(SortKey::new(40, 4)), "the caller switches to D1 here");
            let Some(last) = reply.entries.last() else { break };
            cursor = last.key();
            seen.extend(ids(&reply.entries));
        }
        assert_eq!(seen, vec![10, 9, 8, 7, 6, 5, 4]);
    }

    #[test]
    fn newer_returns_the_newest_limit_above_after() {
        let mut window = initialized();
        run(&mut window, deliver((1..=6).map(|i| e(i * 10, i, 1)).collect(), 10));
        let newer = |after, limit| WindowOp::Newer { after, limit, read_at: None };
        assert_eq!(ids(&run(&mut window, newer(SortKey::new(20, 2), 2)).entries), vec![6, 5]);
        assert_eq!(ids(&run(&mut window, newer(SortKey::new(50, 5), 10)).entries), vec![6]);
        assert_eq!(ids(&run(&mut window, newer(SortKey::new(60, 6), 10)).entries), Vec::<i64>::new());
        // Never below the floor.
        run(&mut window, deliver(vec![e(70, 7, 1)], 3));
        assert_eq!(ids(&run(&mut window, newer(SortKey::BOTTOM, 10)).entries), vec![7, 6, 5]);
    }

    #[test]
    fn json_shape_is_unchanged() {
        let op = deliver(vec![e(1, 2, 3)], 5);
        let json =
            r#"{"op":"deliver","entries":[{"created_at":1,"post_id":2,"author_id":3,"version":0}],"cap":5}"#;
        assert_eq!(serde_json::to_string(&op).ok().as_deref(), Some(json));
        let remove = r#"{"op":"remove_author","author_id":4}"#;
        let parsed: Option<WindowOp> = serde_json::from_str(remove).ok();
        assert_eq!(parsed, Some(remove_author(4, 0)), "ops from before versions still parse");
        let reply = WindowReply { initialized: true, floor: Some(SortKey::new(1, 2)), ..Default::default() };
        let json = r#"{"initialized":true,"floor":{"primary":1,"id":2},"entries":[],"changed":0}"#;
        assert_eq!(serde_json::to_string(&reply).ok().as_deref(), Some(json));
    }

    /// Deterministic PRNG: a 64-bit LCG (Knuth's MMIX constants), using only the high bits.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) % n.max(1) as u64) as usize
        }

        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }

        fn shuffle<T>(&mut self, items: &mut [T]) {
            for i in (1..items.len()).rev() {
                items.swap(i, self.below(i + 1));
            }
        }

        fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
            (!items.is_empty()).then(|| items[self.below(items.len())])
        }
    }

    /// How often the interesting cases happened, so the generated test cannot pass vacuously.
    #[derive(Default)]
    struct Coverage {
        floor_raises: usize,
        dropped_below_floor: usize,
        redeliveries: usize,
        removed: usize,
        served: usize,
    }

    /// One reader's world: D1's posts, the fan-out backlog, and what the window was told.
    struct Sim {
        rng: Lcg,
        window: MemoryWindow,
        next_post: i64,
        next_event: i64,
        /// Posts in D1 this reader should see; removal takes them out.
        published: Vec<Entry>,
        /// Published posts whose fan-out delivery has not happened yet.
        pending: Vec<Entry>,
        /// Posts the window was told about (delivered or snapshotted), minus removed ones.
        known: BTreeMap<SortKey, Entry>,
        /// The cap every op carries: a window's cap is its configuration (one lowered takes
        /// effect at the window's next trim, which looks only when the window grew).
        cap: usize,
    }

    impl Sim {
        /// Blocks of `block` entries, or (`None`) sized by the cap; a random cap per sequence.
        fn new(seed: u64, block: Option<usize>) -> Self {
            let mut rng = Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(1));
            let cap = 1 + rng.below(8);
            let window = block.map_or_else(MemoryWindow::new, MemoryWindow::with_block_size);
            Sim {
                rng,
                window,
                cap,
                next_post: 1,
                next_event: 0,
                published: vec![],
                pending: vec![],
                known: BTreeMap::new(),
            }
        }

        /// A new post: times mostly rise with ids but arrive out of order, with ties.
        fn publish(&mut self) {
            let created_at = (self.next_post * 3 - self.rng.below(30) as i64).max(0);
            let author = 1 + self.rng.below(3) as i64;
            let post = e(created_at, self.next_post, author);
            self.next_post += 1;
            self.published.push(post);
            self.pending.push(post);
        }

        /// Fresh posts from the backlog plus redeliveries, shuffled.
        fn delivery(&mut self) -> Vec<Entry> {
            for _ in 0..self.rng.below(3) {
                self.publish();
            }
            let mut batch = Vec::new();
            for _ in 0..self.rng.below(4) {
                if !self.pending.is_empty() {
                    batch.push(self.pending.swap_remove(self.rng.below(self.pending.len())));
                }
            }
            let known: Vec<Entry> = self.known.values().copied().collect();
            for _ in 0..self.rng.below(3) {
                let duplicate =
                    if self.rng.chance(50) { self.rng.pick(&batch) } else { self.rng.pick(&known) };
                batch.extend(duplicate);
            }
            self.rng.shuffle(&mut batch);
            batch
        }

        /// The newest part of D1 (a read with a limit); complete when it holds everything.
        fn snapshot(&mut self) -> (Vec<Entry>, bool) {
            let mut all = self.published.clone();
            all.sort_by_key(|p| std::cmp::Reverse(p.key()));
            if all.is_empty() {
                return (all, true);
            }
            all.truncate(1 + self.rng.below(all.len() + 1));
            let complete = all.len() == self.published.len() && self.rng.chance(70);
            self.rng.shuffle(&mut all);
            (all, complete)
        }

        fn random_key(&mut self, end: SortKey) -> SortKey {
            let known: Vec<SortKey> = self.known.keys().copied().collect();
            match self.rng.below(3) {
                0 => end,
                1 => self.rng.pick(&known).unwrap_or(end),
                _ => SortKey::new(self.rng.below(300) as i64, self.rng.below(100) as i64),
            }
        }

        fn next_op(&mut self) -> WindowOp {
            let cap = self.cap;
            let limit = self.rng.below(5);
            match self.rng.below(100) {
                0..=44 => WindowOp::Deliver { entries: self.delivery(), cap },
                45..=54 => {
                    let (entries, complete) = self.snapshot();
                    WindowOp::Init { entries, complete, cap }
                }
                55..=64 => {
                    // Post 0 is never published: a removal of a post the window never saw.
                    let post = self.rng.pick(&self.published).unwrap_or(e(0, 0, 1));
                    WindowOp::RemovePost { post_id: post.post_id, version: 0, created_at: post.created_at }
                }
                65..=69 => {
                    self.next_event += 1;
                    let author_id = UserId::from_trusted(1 + self.rng.below(3) as i64);
                    WindowOp::RemoveAuthor { author_id, event: self.next_event }
                }
                70..=84 => WindowOp::Older { before: self.random_key(SortKey::TOP), limit, read_at: None },
                _ => WindowOp::Newer { after: self.random_key(SortKey::BOTTOM), limit, read_at: None },
            }
        }

        /// Updates the model of what the window was told; `before` is the window pre-op.
        fn record(&mut self, before: &MemoryWindow, op: &WindowOp) {
            let gone = |p: &Entry| match op {
                WindowOp::RemovePost { post_id, .. } => p.post_id == *post_id,
                WindowOp::RemoveAuthor { author_id, .. } => p.author_id == *author_id,
                _ => false,
            };
            self.published.retain(|p| !gone(p));
            self.pending.retain(|p| !gone(p));
            self.known.retain(|_, p| !gone(p));
            match op {
                WindowOp::Deliver { entries, .. } => self.known.extend(entries.iter().map(|p| (p.key(), *p))),
                WindowOp::Init { entries, .. } if before.floor.is_none() => {
                    self.known.extend(entries.iter().map(|p| (p.key(), *p)))
                }
                _ => {}
            }
        }

        fn step(&mut self, coverage: &mut Coverage) {
            let before = self.window.clone();
            let op = self.next_op();
            let reply = run(&mut self.window, op.clone());
            self.record(&before, &op);
            self.check_state(&before);
            check_reply(&before, &self.window, &op, &reply, coverage);
        }

        /// The invariant: after init, exactly the known posts at or above the floor.
        fn check_state(&self, before: &MemoryWindow) {
            let entries = self.window.entries();
            assert!(entries.windows(2).all(|pair| pair[0].key() > pair[1].key()), "{entries:?}");
            let posts: HashSet<PostId> = entries.iter().map(|p| p.post_id).collect();
            assert_eq!(posts.len(), entries.len(), "unique by post id");
            if let Some(old) = before.floor {
                assert!(self.window.floor.is_some_and(|f| f >= old), "the floor never falls");
            }
            match self.window.floor {
                Some(floor) => {
                    assert!(entries.iter().all(|p| p.key() >= floor));
                    let expected: Vec<Entry> = self.known.range(floor..).rev().map(|(_, p)| *p).collect();
                    assert_eq!(entries, expected, "floor {floor:?}");
                }
                None => assert!(entries.iter().all(|p| self.known.get(&p.key()) == Some(p))),
            }
        }
    }

    /// Checks one reply against the window before (`old`) and after (`new`) the op.
    fn check_reply(
        old: &MemoryWindow,
        new: &MemoryWindow,
        op: &WindowOp,
        reply: &WindowReply,
        cov: &mut Coverage,
    ) {
        if !matches!(op, WindowOp::Init { .. }) {
            assert_eq!((reply.initialized, reply.floor), (old.floor.is_some(), old.floor), "{op:?}");
        }
        match op {
            WindowOp::Deliver { entries, cap } => check_deliver(old, new, entries, *cap, reply, cov),
            WindowOp::Init { entries, complete, cap } => {
                check_init(old, new, entries, *complete, *cap, reply, cov)
            }
            WindowOp::Older { before, limit, .. } => {
                check_query(old, new, reply, *limit, |p| p.key() < *before, cov)
            }
            WindowOp::Newer { after, limit, .. } => {
                check_query(old, new, reply, *limit, |p| p.key() > *after, cov)
            }
            WindowOp::RemovePost { post_id, .. } => {
                check_removal(old, new, reply, |p| p.post_id == *post_id, cov)
            }
            WindowOp::RemoveAuthor { author_id, .. } => {
                check_removal(old, new, reply, |p| p.author_id == *author_id, cov)
            }
            // Not generated: event ordering and activity have their own tests.
            WindowOp::Backfill { .. } | WindowOp::AgeActivity { .. } => {}
        }
    }

    fn check_deliver(
        old: &MemoryWindow,
        new: &MemoryWindow,
        entries: &[Entry],
        cap: usize,
        reply: &WindowReply,
        cov: &mut Coverage,
    ) {
        let present = |p: &&Entry| old.holds(p.post_id);
        let below_floor = |p: &&Entry| old.floor.is_some_and(|f| p.key() < f);
        let fresh: HashSet<PostId> =
            entries.iter().filter(|p| !present(p) && !below_floor(p)).map(|p| p.post_id).collect();
        assert_eq!(reply.changed, fresh.len(), "{entries:?}");
        cov.redeliveries += entries.iter().filter(present).count();
        cov.dropped_below_floor += entries.iter().filter(|p| !present(p) && below_floor(p)).count();
        check_cap(old, new, cap, cov);
    }

    fn check_init(
        old: &MemoryWindow,
        new: &MemoryWindow,
        entries: &[Entry],
        complete: bool,
        cap: usize,
        reply: &WindowReply,
        cov: &mut Coverage,
    ) {
        assert_eq!((reply.initialized, reply.floor), (true, new.floor));
        if old.floor.is_some() {
            assert_eq!((reply.changed, new.floor), (0, old.floor), "a second init is a no-op");
            assert_eq!(new.entries(), old.entries());
            return;
        }
        // Raced entries it deletes are below the snapshot, so every snapshot post not present counts.
        let fresh: HashSet<PostId> =
            entries.iter().filter(|p| !old.holds(p.post_id)).map(|p| p.post_id).collect();
        assert_eq!(reply.changed, fresh.len());
        // The snapshot's floor, unless the trim raised it (then at least `cap` entries remain,
        // fewer than a block more).
        let oldest = entries.iter().map(Entry::key).min();
        let snapshot_floor = if complete { SortKey::BOTTOM } else { oldest.unwrap_or(SortKey::BOTTOM) };
        if new.floor != Some(snapshot_floor) {
            let kept = cap.max(1)..cap.max(1) + new.block_size(cap);
            assert!(new.floor > Some(snapshot_floor) && kept.contains(&new.len()), "{new:?}");
        }
        check_cap(old, new, cap, cov);
    }

    /// After a write that trims (`B` entries per block, `cap' = max(cap, 1)`): at most
    /// `cap' + 2B - 2` entries, and a raised floor means the trim kept at least `cap'` and fewer
    /// than `cap' + B` (exactly `cap'` with blocks of one entry).
    fn check_cap(old: &MemoryWindow, new: &MemoryWindow, cap: usize, cov: &mut Coverage) {
        let (count, cap, block) = (new.len(), cap.max(1), new.block_size(cap));
        assert!(count <= cap + 2 * block - 2, "{count} entries, cap {cap}, blocks of {block}");
        if let (Some(was), Some(now)) = (old.floor, new.floor) {
            if now > was {
                cov.floor_raises += 1;
                assert!((cap..cap + block).contains(&count), "a trim keeps {count}, cap {cap}");
            }
        }
    }

    fn check_query(
        old: &MemoryWindow,
        new: &MemoryWindow,
        reply: &WindowReply,
        limit: usize,
        beyond_cursor: impl Fn(&Entry) -> bool,
        cov: &mut Coverage,
    ) {
        let expected: Vec<Entry> = match old.floor {
            Some(floor) => old
                .entries()
                .into_iter()
                .filter(|p| beyond_cursor(p) && p.key() >= floor)
                .take(limit)
                .collect(),
            None => vec![],
        };
        assert_eq!(reply.entries, expected);
        assert_eq!((new.entries(), new.floor), (old.entries(), old.floor), "queries change nothing");
        cov.served += expected.len();
    }

    fn check_removal(
        old: &MemoryWindow,
        new: &MemoryWindow,
        reply: &WindowReply,
        gone: impl Fn(&Entry) -> bool,
        cov: &mut Coverage,
    ) {
        let expected: Vec<Entry> = old.entries().into_iter().filter(|p| !gone(p)).collect();
        assert_eq!(reply.changed, old.len() - expected.len());
        assert_eq!((new.entries(), new.floor), (expected, old.floor));
        cov.removed += reply.changed;
    }

    const SEQUENCES: u64 = 500;
    const OPS_PER_SEQUENCE: usize = 80;

    #[test]
    fn generated_sequences_keep_the_invariant() {
        // Blocks sized by the cap (one entry each at these caps: the exact trim), and blocks of
        // 2, 3 and 5 entries (trims by whole blocks, splits, blocks emptied by removals).
        for block in [None, Some(2), Some(3), Some(5)] {
            let mut cov = Coverage::default();
            for seed in 0..SEQUENCES {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut sim = Sim::new(seed, block);
                    for _ in 0..OPS_PER_SEQUENCE {
                        sim.step(&mut cov);
                    }
                }));
                assert!(outcome.is_ok(), "blocks {block:?}, seed {seed} failed (see the panic above)");
            }
            let counts =
                [cov.floor_raises, cov.dropped_below_floor, cov.redeliveries, cov.removed, cov.served];
            assert!(counts.iter().all(|&n| n >= 100), "too little coverage, blocks {block:?}: {counts:?}");
        }
    }

    #[test]
    fn a_steady_stream_of_deliveries_writes_about_one_row_each() {
        // A full window of the default cap, then one post at a time, as the fan-out sends them.
        let cap = 800;
        let mut window = MemoryWindow::new();
        let snapshot: Vec<Entry> = (1..=cap as i64).map(|i| e(i * 10, i, 1)).collect();
        run(&mut window, WindowOp::Init { entries: snapshot, complete: false, cap });
        let (read_before, written_before) = window.rows();
        let deliveries = 5_000;
        for i in 0..deliveries {
            let post = cap as i64 + 1 + i;
            assert_eq!(run(&mut window, deliver(vec![e(post * 10, post, 1)], cap)).changed, 1);
            let bound = cap + 2 * block_size(cap) - 2;
            assert!((cap..=bound).contains(&window.len()), "{} entries", window.len());
        }
        let (read, written) = window.rows();
        let per = |rows: usize| rows as f64 / deliveries as f64;
        let (read, written) = (per(read - read_before), per(written - written_before));
        // One block rewritten per delivery; a new block and a dropped one every 50 or so; the
        // trim's look at every block (17 or 18 rows) every 50 or so.
        assert!(written <= 1.05, "{written} rows written per delivery");
        assert!(read <= 1.5, "{read} rows read per delivery");
        // Pages read a block or two.
        let (before, _) = window.rows();
        let page = run(&mut window, older(SortKey::TOP, 20));
        assert_eq!(page.entries.len(), 20);
        assert!(window.rows().0 - before <= 2);
    }

    #[test]
    fn blocks_round_trip_and_split() {
        let block = Block { lo: SortKey::new(5, 1), entries: vec![e(5, 1, 2), v(e(7, 9, 3), 4)] };
        assert_eq!(Block::decode(block.lo, &block.encode()), Some(block.clone()));
        assert_eq!(Block::decode(block.lo, &[1, 2, 3]), None);
        // Keys inside a full block split it; keys above it start a new one.
        let mut window = MemoryWindow::with_block_size(2);
        run(&mut window, WindowOp::Init { entries: vec![], complete: true, cap: 100 });
        run(&mut window, deliver(vec![e(10, 1, 1), e(30, 3, 1)], 100));
        run(&mut window, deliver(vec![e(20, 2, 1)], 100));
        run(&mut window, deliver(vec![e(40, 4, 1)], 100));
        assert_eq!(ids(&window.entries()), vec![4, 3, 2, 1]);
        let los: Vec<SortKey> = window.blocks.keys().copied().collect();
        assert_eq!(los, vec![SortKey::new(10, 1), SortKey::new(20, 2), SortKey::new(40, 4)]);
        let packed = pack(window.entries(), 3);
        assert_eq!(packed.iter().map(|b| b.entries.len()).collect::<Vec<_>>(), vec![3, 1]);
        assert_eq!(packed[1].lo, SortKey::new(40, 4));
    }
}
