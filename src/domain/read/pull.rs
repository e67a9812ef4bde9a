//! The full pull (no window: new windows' snapshots, group and list feeds, below a window's
//! floor, degraded reads): a merge of the scope's authors' index ranges on every database
//! holding one of them, each widened through time slabs. One slab per step, every database of
//! the step at once; a database whose slabs are done reads the viewer's relationship to the
//! authors of its rows in the next step. So a full pull costs at most `SLABS_MS.len() + 1`
//! steps, and one statement per step per database.

use super::super::cursor::SortKey;
use super::super::ids::UserId;
use super::super::merge::merge_newest_first;
use super::step::{AuthorRelation, OnFailure, Rows, Slab, SlabRows, Statement};

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
    upper: SortKey,
    slab: usize,
    rows: Vec<T>,
    /// Set once the slabs are done: whether fewer rows exist than asked for.
    exhausted: Option<bool>,
    /// The relationships still to read (posts only, once the slabs are done).
    relations_due: bool,
    relations: Vec<AuthorRelation>,
}

/// A full pull over rows `T` taken from the replies' [`Rows<R>`].
pub(super) struct FullPull<R, T> {
    spec: PullSpec,
    dbs: Vec<DbPull<T>>,
    take: fn(Rows<R>) -> Vec<T>,
    key: fn(&T) -> SortKey,
    /// Set for posts: the viewer's relationship to their authors is read after the slabs.
    author: Option<fn(&T) -> UserId>,
}

impl<R, T> FullPull<R, T> {
    pub(super) fn new(
        spec: PullSpec,
        scopes: Vec<(usize, Vec<UserId>)>,
        take: fn(Rows<R>) -> Vec<T>,
        key: fn(&T) -> SortKey,
        author: Option<fn(&T) -> UserId>,
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
                relations_due: false,
                relations: Vec::new(),
            })
            .collect();
        Self { spec, dbs, take, key, author }
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

    pub(super) fn is_done(&self) -> bool {
        self.dbs.iter().all(|db| db.exhausted.is_some() && !db.relations_due)
    }

    pub(super) fn on_failure(&self) -> OnFailure {
        self.spec.on_failure
    }

    /// The statement each database still running reads next.
    pub(super) fn statements(&self) -> Vec<(usize, Statement)> {
        let next = |db: &DbPull<T>| match db.exhausted {
            None => Some(Statement::Slab(self.slab(db).0)),
            Some(_) if db.relations_due => Some(Statement::Relationships { authors: self.authors_of(db) }),
            Some(_) => None,
        };
        self.dbs.iter().filter_map(|db| next(db).map(|s| (db.database, s))).collect()
    }

    fn authors_of(&self, db: &DbPull<T>) -> Vec<UserId> {
        let Some(author) = self.author else { return Vec::new() };
        let authors: std::collections::BTreeSet<UserId> = db.rows.iter().map(author).collect();
        authors.into_iter().collect()
    }

    /// Takes a database's answer to the statement [`Self::statements`] gave it.
    pub(super) fn absorb(&mut self, database: usize, rows: Rows<R>) {
        let Some(i) = self.dbs.iter().position(|db| db.database == database) else { return };
        if self.dbs[i].relations_due {
            if let Rows::Relationships(relations) = rows {
                self.dbs[i].relations = relations;
            }
            self.dbs[i].relations_due = false;
            return;
        }
        let (slab, unbounded) = self.slab(&self.dbs[i]);
        let limit = self.spec.limit;
        let wants_relations = self.author.is_some();
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
        db.relations_due = db.exhausted.is_some() && wants_relations && !db.rows.is_empty();
    }

    /// The relationships every database read.
    pub(super) fn relations(&self) -> Vec<AuthorRelation> {
        self.dbs.iter().flat_map(|db| db.relations.iter().copied()).collect()
    }

    /// The databases' rows merged newest first, down to where all of them are complete (each
    /// answered `limit` rows or all it had: the highest last key among those that may have
    /// more), at most `limit`; and whether every database is exhausted.
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
            let done = db.exhausted.unwrap_or(true);
            exhausted &= done;
            if !done {
                covered = covered.max(db.rows.last().map_or(SortKey::BOTTOM, self.key));
            }
            merged = merge_newest_first(merged, db.rows, self.key);
        }
        merged.retain(|t| (self.key)(t) >= covered);
        (merged, covered, exhausted)
    }
}
