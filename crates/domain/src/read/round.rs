//! One round beside the window: per database touched, one batch of the pulled and in-flight
//! posts in the round's bounds, the rows of the window's candidates, the viewer's relationship
//! to each author (once per author) and what the hot-range cache lacked; then the merge of
//! those sources with the window's entries into the page.

use std::collections::{HashMap, HashSet};

use super::super::cursor::SortKey;
use super::super::feed::{feed_verdict, Hidden, PageBuilder};
use super::super::hot::{self, reader_list, HotFill, HotMiss, HotRange};
use super::super::ids::PostId;
use super::super::ids::UserId;
use super::super::merge::{covered_to, merge_newest_first};
use super::super::plan::{Bounds, DbReads, ReplicaRead, RoundPlan};
use super::super::replica::{replica_for, ReplicaQuery};
use super::super::shard::ShardMap;
use super::super::snowflake::{id_range_of_times, shard_of_id};
use super::super::window::Entry;
use super::step::{AuthorRelation, DbBatch, OnFailure, ReplicaCall, ReplicaRows, Rows, Statement};
use super::{FeedRow, Reader};

/// The hot-range cache's part of one read: the usable ranges and their authors, and the time
/// from which D1 answers for those authors (`domain/hot.rs`).
pub(super) struct Hot {
    pub in_flight_since: i64,
    pub ranges: Vec<HotRange>,
    pub authors: Vec<UserId>,
    /// What the cache lacked: read by the first round's D1 batch, then stored.
    pub misses: Vec<HotMiss>,
}

impl Hot {
    /// The ranges that reach down to `floor` (the others are pulled from D1 as usual).
    pub fn new(found: super::step::HotFound, in_flight_since: i64, floor: SortKey) -> Self {
        let ranges: Vec<HotRange> = found.ranges.into_iter().filter(|r| r.covers_down_to(floor)).collect();
        let authors = ranges.iter().map(|r| r.author).collect();
        Hot { in_flight_since, ranges, authors, misses: found.misses }
    }

    /// A round's window entries with the cached candidates in `(lower, upper)` merged in, and
    /// how many were offered twice.
    pub fn with_window(
        &self,
        entries: Vec<Entry>,
        lower: SortKey,
        upper: SortKey,
        want: usize,
    ) -> (Vec<Entry>, i64) {
        if self.ranges.is_empty() {
            return (entries, 0);
        }
        let cached = hot::candidates(&self.ranges, lower, upper, want);
        let offered = entries.len() + cached.len();
        let merged = merge_newest_first(entries, cached, Entry::key);
        let duplicates = (offered - merged.len()) as i64;
        (merged, duplicates)
    }
}

/// Where one statement's answer goes.
#[derive(Debug, Clone, Copy)]
enum Part {
    Source,
    Hydrate,
    Relationships,
    HotReader,
    HotRange(usize),
    Liked,
}

/// A round's batches, and where each answer goes.
pub(super) struct RoundReads {
    batches: Vec<(DbBatch, Vec<Part>)>,
}

impl RoundReads {
    pub fn new(plan: &RoundPlan, bounds: Bounds, misses: &[HotMiss], map: &ShardMap, ids: usize) -> Self {
        let batches = plan
            .databases
            .iter()
            .map(|reads| {
                let (parts, statements) = statements_of(reads, bounds, misses, map, ids).into_iter().unzip();
                (DbBatch { database: reads.database, statements, on_failure: OnFailure::Omit }, parts)
            })
            .collect();
        Self { batches }
    }

    /// Adds a statement of the reader's own (their home database's batch, made if the round
    /// has none there): the viewer's likes among the posts in the bounds, for rows a replica
    /// served (a replica has no viewer).
    pub fn with_liked(mut self, home: usize, bounds: Bounds) -> Self {
        let (lo, hi) = id_range_of_times(bounds.after.primary.max(0), bounds.before.primary);
        let statement = Statement::LikedIn { lo, hi };
        match self.batches.iter_mut().find(|(b, _)| b.database == home) {
            Some((batch, parts)) => {
                batch.statements.push(statement);
                parts.push(Part::Liked);
            }
            None => {
                let batch =
                    DbBatch { database: home, statements: vec![statement], on_failure: OnFailure::Omit };
                self.batches.push((batch, vec![Part::Liked]));
            }
        }
        self
    }

    pub fn batches(&self) -> Vec<DbBatch> {
        self.batches.iter().map(|(b, _)| b.clone()).collect()
    }

    /// How many statements the round runs on `database` (its answers come first).
    pub fn statements_on(&self, database: usize) -> usize {
        self.batches.iter().find(|(b, _)| b.database == database).map_or(0, |(b, _)| b.statements.len())
    }

    /// Sorts one database's answers into `out`.
    pub fn absorb<R>(&self, database: usize, answers: Vec<Rows<R>>, out: &mut RoundRows<R>) {
        let Some((_, parts)) = self.batches.iter().find(|(b, _)| b.database == database) else { return };
        for (part, rows) in parts.iter().zip(answers) {
            match (part, rows) {
                (Part::Source, Rows::Posts(rows)) => out.sources.push(rows),
                (Part::Hydrate, Rows::Posts(rows)) => out.hydrated.extend(rows),
                (Part::Relationships, Rows::Relationships(r)) => out.relations.extend(r),
                (Part::HotReader, Rows::HotAuthors(found)) => out.hot_authors.extend(found),
                (Part::HotRange(i), Rows::Entries(entries)) => out.ranges.push((*i, entries)),
                (Part::Liked, Rows::Liked(ids)) => out.liked.extend(ids),
                _ => {}
            }
        }
    }
}

fn statements_of(
    reads: &DbReads,
    bounds: Bounds,
    misses: &[HotMiss],
    map: &ShardMap,
    ids: usize,
) -> Vec<(Part, Statement)> {
    let mut parts = Vec::new();
    if !reads.pulled.is_empty() {
        parts.push((Part::Source, Statement::Pulled { authors: reads.pulled.clone(), bounds }));
    }
    if !reads.in_flight.is_empty() {
        parts.push((Part::Source, Statement::InFlight { reads: reads.in_flight.clone(), bounds }));
    }
    for chunk in reads.hydrate.chunks(ids.max(1)) {
        parts.push((Part::Hydrate, Statement::Hydrate { ids: chunk.to_vec() }));
    }
    if !reads.authors.is_empty() {
        parts.push((Part::Relationships, Statement::Relationships { authors: reads.authors.clone() }));
    }
    parts.extend(refill_statements(reads, misses, map));
    parts
}

/// The reads of what the cache lacked on one database: the reader's hot authors among its
/// pulled authors here, and the ranges of authors who live here. A range whose author's
/// database the round does not touch (an author no longer pulled) is left for a later read:
/// the cache is only ever a shortcut.
fn refill_statements(reads: &DbReads, misses: &[HotMiss], map: &ShardMap) -> Vec<(Part, Statement)> {
    let mut parts = Vec::new();
    for (i, miss) in misses.iter().enumerate() {
        match miss {
            HotMiss::Reader { .. } if !reads.pulled.is_empty() => {
                parts.push((Part::HotReader, Statement::HotAuthors { authors: reads.pulled.clone() }))
            }
            HotMiss::Range { author, below } if map.database(shard_of_id(author.get())) == reads.database => {
                parts.push((Part::HotRange(i), Statement::HotRange { author: *author, below: *below }))
            }
            _ => {}
        }
    }
    parts
}

/// What one round read: each source newest first (a pulled and an in-flight list per
/// database, then the full pull in pull mode), the window candidates' rows, the relationships
/// and the refills.
pub(super) struct RoundRows<R> {
    pub sources: Vec<Vec<R>>,
    pub hydrated: Vec<R>,
    pub relations: Vec<AuthorRelation>,
    hot_authors: Vec<(UserId, i64)>,
    ranges: Vec<(usize, Vec<Entry>)>,
    /// The viewer's likes among the round's posts (read when replicas serve some rows).
    liked: HashSet<PostId>,
}

impl<R> Default for RoundRows<R> {
    fn default() -> Self {
        Self {
            sources: Vec::new(),
            hydrated: Vec::new(),
            relations: Vec::new(),
            hot_authors: Vec::new(),
            ranges: Vec::new(),
            liked: HashSet::new(),
        }
    }
}

impl<R: FeedRow> RoundRows<R> {
    /// Sets each row's relationship from its author's ([`Reader::attach`]).
    pub fn attach(&mut self, reader: &Reader) {
        reader.attach(&self.relations, self.sources.iter_mut().flatten().chain(self.hydrated.iter_mut()));
    }

    /// What the refill reads found, for each miss they answered.
    pub fn fills(&self, misses: &[HotMiss], range_len: usize) -> Vec<(HotMiss, HotFill)> {
        let mut fills = Vec::new();
        for (i, miss) in misses.iter().enumerate() {
            let fill = match miss {
                HotMiss::Reader { .. } => HotFill::Reader(reader_list(self.hot_authors.clone())),
                HotMiss::Range { author, below } => {
                    let Some((_, found)) = self.ranges.iter().find(|(j, _)| *j == i) else { continue };
                    let full = found.len() >= range_len;
                    HotFill::Range(HotRange { author: *author, below: *below, full, entries: found.clone() })
                }
            };
            fills.push((miss.clone(), fill));
        }
        fills
    }
}

/// What a round reads from D1 after all because a replica could not answer for it: authors
/// whose posts in the bounds it could not give (failed, or it does not reach that far down),
/// and window candidates to hydrate.
#[derive(Debug, Default)]
pub(super) struct Fallback {
    pub authors: Vec<UserId>,
    pub candidates: Vec<(PostId, UserId)>,
}

impl<R: FeedRow> RoundRows<R> {
    /// Takes the replicas' answers (one per read of `reads`, `None` for a failure) as the
    /// round's rows: each author's posts a source, its candidates hydrated, its relationship
    /// from the replica (the follow is the reader's). What they could not answer is returned.
    pub fn absorb_replicas(
        &mut self,
        reads: &[ReplicaRead],
        answers: Vec<Option<ReplicaRows<R>>>,
    ) -> Fallback {
        let mut fallback = Fallback::default();
        let mut answers = answers.into_iter();
        for read in reads {
            match answers.next().flatten() {
                Some(mut answer) if answer.complete => {
                    for row in answer.posts.iter_mut().chain(answer.found.iter_mut()) {
                        row.set_liked_by_me(self.liked.contains(&PostId::from_trusted(row.key().id)));
                    }
                    self.sources.push(answer.posts);
                    self.hydrated.extend(answer.found);
                    fallback.candidates.extend(answer.unknown.iter().map(|id| (*id, read.author)));
                    self.relations.push(AuthorRelation {
                        author: read.author,
                        follows: false,
                        blocked: answer.blocks_viewer,
                        suspended: answer.suspended,
                    });
                }
                _ => {
                    fallback.authors.push(read.author);
                    fallback.candidates.extend(read.ids.iter().map(|id| (*id, read.author)));
                }
            }
        }
        fallback
    }
}

/// The calls of a round's replica reads: each reader reads each author in its own digest (the
/// same digest for all, so the round costs one request).
pub(super) fn replica_calls(viewer: UserId, reads: &[ReplicaRead], bounds: Bounds) -> Vec<ReplicaCall> {
    reads
        .iter()
        .map(|read| ReplicaCall {
            author: read.author,
            replica: replica_for(viewer, read.replicas),
            query: ReplicaQuery {
                viewer,
                after: bounds.after,
                before: bounds.before,
                limit: bounds.limit,
                ids: read.ids.clone(),
            },
        })
        .collect()
}

/// A feed candidate: an entry from the window (to hydrate) or a post pulled from D1.
enum Candidate<R> {
    Pushed(Entry),
    Pulled(R),
}

impl<R: FeedRow> Candidate<R> {
    fn key(&self) -> SortKey {
        match self {
            Candidate::Pushed(e) => e.key(),
            Candidate::Pulled(p) => p.key(),
        }
    }

    fn author(&self) -> UserId {
        match self {
            Candidate::Pushed(e) => e.author_id,
            Candidate::Pulled(p) => p.author(),
        }
    }
}

/// Offers one round's candidates (window entries and each source, each asked for `want`)
/// down to where all are complete (never below `bound`); returns that key and how many
/// candidates were offered twice. Candidates of authors `left_out` (their database is
/// unavailable, so their rows were not read) are passed over, not offered as deleted.
pub(super) fn offer_round<R: FeedRow>(
    (reader, left_out): (&Reader, &dyn Fn(UserId) -> bool),
    entries: Vec<Entry>,
    rows: RoundRows<R>,
    (want, bound): (usize, SortKey),
    page: &mut PageBuilder<R>,
) -> (SortKey, i64) {
    let covered = rows
        .sources
        .iter()
        .map(|source| covered_to(source, want, bound, R::key))
        .fold(covered_to(&entries, want, bound, Entry::key), SortKey::max);
    let live: HashMap<i64, R> = rows.hydrated.into_iter().map(|p| (p.key().id, p)).collect();
    let (candidates, duplicates) = merge_sources(entries, rows.sources, covered);
    offer_candidates((reader, left_out), candidates, live, page);
    (covered, duplicates)
}

/// Merges window entries and pulled posts (each source newest first) into one candidate
/// stream, by post id once (the pulled copy wins: it is already hydrated), keeping only what
/// every source is complete down to: `covered`.
fn merge_sources<R: FeedRow>(
    entries: Vec<Entry>,
    sources: Vec<Vec<R>>,
    covered: SortKey,
) -> (Vec<Candidate<R>>, i64) {
    let offered = entries.len() + sources.iter().map(Vec::len).sum::<usize>();
    let mut merged: Vec<Candidate<R>> = entries.into_iter().map(Candidate::Pushed).collect();
    for rows in sources {
        let pulled = rows.into_iter().map(Candidate::Pulled).collect();
        merged = merge_newest_first(pulled, merged, Candidate::key);
    }
    // The same post from two sources (in flight and already pushed, or across an edge switch).
    let duplicates = (offered - merged.len()) as i64;
    merged.retain(|c| c.key() >= covered);
    (merged, duplicates)
}

fn offer<R: FeedRow>(reader: &Reader, key: SortKey, row: Option<R>, page: &mut PageBuilder<R>) -> bool {
    let verdict = feed_verdict(row.as_ref().map(|r| reader.live_state(r)));
    page.offer(key, verdict.and_then(|()| row.ok_or(Hidden::Deleted)))
}

/// Offers merged candidates in order: pulled ones as they are, window entries with the rows
/// hydrated for them (`live`); those of authors left out are passed over.
fn offer_candidates<R: FeedRow>(
    (reader, left_out): (&Reader, &dyn Fn(UserId) -> bool),
    candidates: Vec<Candidate<R>>,
    mut live: HashMap<i64, R>,
    page: &mut PageBuilder<R>,
) {
    for candidate in candidates {
        let key = candidate.key();
        if left_out(candidate.author()) {
            if !page.pass_over(key) {
                return;
            }
            continue;
        }
        let row = match candidate {
            Candidate::Pulled(row) => Some(row),
            Candidate::Pushed(entry) => live.remove(&entry.post_id.get()),
        };
        if !offer(reader, key, row, page) {
            return;
        }
    }
}

pub(super) fn offer_rows<R: FeedRow>(reader: &Reader, rows: Vec<R>, page: &mut PageBuilder<R>) {
    for row in rows {
        if !offer(reader, row.key(), Some(row), page) {
            return;
        }
    }
}
