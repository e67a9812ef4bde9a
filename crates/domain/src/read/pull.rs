//! The full pull (no window: new windows' snapshots, group and list feeds, below a window's
//! floor, degraded reads): a merge of the scope's authors' index ranges on every database
//! holding one of them, widened through time slabs. One slab per step, every database at once
//! and on the same slab (they start at the same key and widen alike), so the pull stops as soon
//! as the databases together hold `limit` rows in the slabs read: every database is complete
//! down to the last slab's start, so the merge of their rows is exact down to it (a sparse
//! database, like a reader's own with no posts, does not widen on its own to the bottom). A
//! post row carries the viewer's relationship to its author, read in the slab's statement. So a
//! full pull costs at most `SLABS_MS.len()` steps, and one statement per step per database.

use super::super::cursor::SortKey;
use super::super::ids::UserId;
use super::super::merge::merge_newest_first;
use super::step::{OnFailure, Rows, Slab, SlabRows, Statement};

const HOUR_MS: i64 = 3_600_000;
/// Time slabs the pull widens through. Each query only touches posts inside its slab (through
/// the per-author index), so a page near the cursor costs little even for readers who follow
/// prolific authors; the last slab is unbounded so old content is still found.
pub const SLABS_MS: [i64; 6] =
    [HOUR_MS, 24 * HOUR_MS, 7 * 24 * HOUR_MS, 30 * 24 * HOUR_MS, 365 * 24 * HOUR_MS, i64::MAX];

/// Where a full pull starts and what it reads.
#[derive(Debug, Clone, Copy)]
pub(super) struct PullSpec {
    pub rows: SlabRows,
    /// Exclusive lower bound (`?after=`, a round's floor); `None` pulls down to the oldest post.
    pub after: Option<SortKey>,
    pub before: SortKey,
    pub limit: usize,
    /// Slabs are measured from here when the cursor is above it (first page).
    pub now: i64,
    pub on_failure: OnFailure,
}

/// One database's share of a full pull.
struct DbPull<T> {
    database: usize,
    authors: Vec<UserId>,
    /// Everything at or above this key is read (the next slab reads below it).
    upper: SortKey,
    slab: usize,
    rows: Vec<T>,
    /// Set once this database's slabs are done: `true` when it read down to the bottom (fewer
    /// rows exist than asked for), `false` when it holds `limit` rows.
    exhausted: Option<bool>,
}

/// A full pull over rows `T` taken from the replies' [`Rows<R>`].
pub(super) struct FullPull<R, T> {
    spec: PullSpec,
    dbs: Vec<DbPull<T>>,
    take: fn(Rows<R>) -> Vec<T>,
    key: fn(&T) -> SortKey,
}

impl<R, T> FullPull<R, T> {
    pub(super) fn new(
        spec: PullSpec,
        scopes: Vec<(usize, Vec<UserId>)>,
        take: fn(Rows<R>) -> Vec<T>,
        key: fn(&T) -> SortKey,
    ) -> Self {
        // Nothing lies strictly between the bounds when `before` is at or below `after` (a
        // window complete down to the bottom asks for what is below it): no statement.
        let empty = spec.before <= spec.after.unwrap_or(SortKey::BOTTOM);
        let dbs = scopes
            .into_iter()
            .map(|(database, authors)| DbPull {
                exhausted: (empty || authors.is_empty()).then_some(true),
                database,
                authors,
                upper: spec.before,
                slab: 0,
                rows: Vec::new(),
            })
            .collect();
        Self { spec, dbs, take, key }
    }

    fn lower(&self) -> SortKey {
        self.spec.after.unwrap_or(SortKey::BOTTOM)
    }

    /// The slab a database reads next, and whether it is the last one (unbounded).
    fn slab(&self, db: &DbPull<T>) -> (Slab, bool) {
        let lower = self.lower();
        let span = SLABS_MS[db.slab.min(SLABS_MS.len() - 1)];
        let start = db.upper.primary.min(self.spec.now).saturating_sub(span).max(lower.primary);
        let unbounded = span == i64::MAX || start <= lower.primary;
        let slab = Slab {
            rows: self.spec.rows,
            authors: db.authors.clone(),
            upper: db.upper,
            start: if unbounded { -1 } else { start },
            lower,
            limit: self.spec.limit.saturating_sub(db.rows.len()),
        };
        (slab, unbounded)
    }

    /// Done when no database reads on, or when together they hold `limit` rows (a database
    /// that stopped on its own `limit` among them): all of them lie in the slabs every database
    /// has read.
    pub(super) fn is_done(&self) -> bool {
        let held: usize = self.dbs.iter().map(|db| db.rows.len()).sum();
        self.dbs.iter().all(|db| db.exhausted.is_some()) || held >= self.spec.limit
    }

    pub(super) fn on_failure(&self) -> OnFailure {
        self.spec.on_failure
    }

    /// The slab each database still running reads next (none once the pull is done).
    pub(super) fn statements(&self) -> Vec<(usize, Statement)> {
        if self.is_done() {
            return Vec::new();
        }
        let reading = self.dbs.iter().filter(|db| db.exhausted.is_none());
        reading.map(|db| (db.database, Statement::Slab(self.slab(db).0))).collect()
    }

    /// Leaves database `database` out (it is unavailable): it reads nothing more and stops
    /// no one; what it answered before stays.
    pub(super) fn omit(&mut self, database: usize) {
        if let Some(db) = self.dbs.iter_mut().find(|db| db.database == database && db.exhausted.is_none()) {
            db.exhausted = Some(true);
        }
    }

    /// Takes a database's answer to the statement [`Self::statements`] gave it.
    pub(super) fn absorb(&mut self, database: usize, rows: Rows<R>) {
        let Some(i) = self.dbs.iter().position(|db| db.database == database) else { return };
        let (slab, unbounded) = self.slab(&self.dbs[i]);
        let limit = self.spec.limit;
        let db = &mut self.dbs[i];
        db.rows.extend((self.take)(rows));
        db.exhausted = if db.rows.len() >= limit {
            Some(false)
        } else if unbounded {
            Some(true)
        } else {
            // Next slab: everything strictly older than this slab's start.
            db.upper = SortKey::new(slab.start, 0);
            db.slab += 1;
            None
        };
    }

    /// The databases' rows merged newest first, down to where all of them are complete (the
    /// highest of: the last key of a database holding `limit` rows, the start of the last slab
    /// read by one that stopped early), at most `limit`; and whether every database is exhausted.
    pub(super) fn merged(mut self) -> (Vec<T>, bool) {
        let (mut merged, _, exhausted) = self.merge_all();
        let limit = self.spec.limit;
        merged.truncate(limit);
        let exhausted = exhausted && merged.len() < limit;
        (merged, exhausted)
    }

    /// As [`Self::merged`], for a new window's snapshot: whether it holds everything there is.
    pub(super) fn snapshot(mut self) -> (Vec<T>, bool) {
        let (mut merged, covered, _) = self.merge_all();
        let limit = self.spec.limit;
        let complete = covered == SortKey::BOTTOM && merged.len() <= limit;
        merged.truncate(limit);
        (merged, complete)
    }

    /// Every database's rows merged, kept down to the key all of them are complete to (which
    /// it returns), and whether every database is exhausted.
    fn merge_all(&mut self) -> (Vec<T>, SortKey, bool) {
        let mut merged: Vec<T> = Vec::new();
        let mut exhausted = true;
        let mut covered = SortKey::BOTTOM;
        for db in std::mem::take(&mut self.dbs) {
            let complete_to = match db.exhausted {
                Some(true) => SortKey::BOTTOM,
                Some(false) => db.rows.last().map_or(SortKey::BOTTOM, self.key),
                None => db.upper,
            };
            exhausted &= db.exhausted == Some(true);
            covered = covered.max(complete_to);
            merged = merge_newest_first(merged, db.rows, self.key);
        }
        merged.retain(|t| (self.key)(t) >= covered);
        (merged, covered, exhausted)
    }
}
