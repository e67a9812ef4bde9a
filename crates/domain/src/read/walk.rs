//! Walking the feed: down from a cursor (the window round by round, then the full pull below
//! its floor) or up from `?after=` (one round above the key, then the pull below the floor).

use super::super::cursor::SortKey;
use super::super::feed::FeedState;
use std::collections::HashMap;

use super::super::plan::{Bounds, FeedScope, ReaderEdge, RoundInput, RoundPlan};
use super::super::policy::FanoutMode;
use super::super::window::{Entry, WindowOp};
use super::pull::FullPull;
use super::round::{offer_round, offer_rows, replica_calls, Fallback, Hot, RoundReads, RoundRows};
use super::step::{DbBatch, OnFailure, Step};
use super::{batch_size, FeedIo, FeedRow, Page, Reader, Reading};
use crate::hot::HotMiss;

/// Where the window part of a read-down ended.
enum WindowPart {
    /// The page is done (full, or the scan budget is spent).
    Done,
    /// Continue from D1 below this key.
    PullFrom(SortKey, FeedState),
}

/// A round's batches with the full pull's next statements (pull mode) appended to the batch
/// of their database: one batch per database.
fn with_pull<R, T>(mut batches: Vec<DbBatch>, pull: Option<&FullPull<R, T>>) -> Vec<DbBatch> {
    for (database, statement) in pull.map(FullPull::statements).unwrap_or_default() {
        match batches.iter_mut().find(|b| b.database == database) {
            Some(batch) => batch.statements.push(statement),
            None => {
                batches.push(DbBatch { database, statements: vec![statement], on_failure: OnFailure::Omit })
            }
        }
    }
    batches
}

impl<R: FeedRow, Io: FeedIo<R>> Reading<'_, R, Io> {
    /// One round beside the window: the pulled and in-flight posts in the bounds, the rows of
    /// the window's entries, the viewer's relationship to each author, and what the hot-range
    /// cache lacked: one batch per database, all at once. In pull mode for the whole system the
    /// full pull over `bounds` runs beside it (its first slab in the same batches).
    async fn round(
        &self,
        reader: &Reader,
        hot: &Hot,
        bounds: Bounds,
        entries: &[Entry],
        misses: &[HotMiss],
    ) -> Result<RoundRows<R>, Io::Error> {
        let candidates: Vec<_> = entries.iter().map(|e| (e.post_id, e.author_id)).collect();
        let input = RoundInput {
            viewer: reader.viewer,
            mode: self.cfg.mode,
            edges: &reader.edges,
            cached: &hot.authors,
            in_flight_since: hot.in_flight_since,
            candidates: &candidates,
            replicated: &self.cfg.replicated,
            with_viewer: true,
        };
        let plan = RoundPlan::beside_window(&input, &self.cfg.map);
        let mut reads = RoundReads::new(&plan, bounds, misses, &self.cfg.map, self.cfg.ids_per_statement);
        if !plan.replicas.is_empty() {
            reads = reads.with_liked(self.home_database(), bounds);
        }
        let mut pull = (self.cfg.mode == FanoutMode::Pull).then(|| {
            self.posts_pull(reader, self.posts_spec(Some(bounds.after), bounds.before, bounds.limit))
        });
        let mut step = Step::batches(with_pull(reads.batches(), pull.as_ref()));
        step.replicas = replica_calls(reader.viewer, &plan.replicas, bounds);
        let databases: Vec<usize> = step.batches.iter().map(|b| b.database).collect();
        let replies = self.run(step).await?;
        let mut rows = RoundRows::default();
        for (database, mut answers) in databases.into_iter().zip(replies.batches) {
            let beside = answers.split_off(reads.statements_on(database).min(answers.len()));
            reads.absorb(database, answers, &mut rows);
            if let (Some(pull), Some(answer)) = (pull.as_mut(), beside.into_iter().next()) {
                pull.absorb(database, answer);
            }
        }
        let fallback = rows.absorb_replicas(&plan.replicas, replies.replicas);
        self.replica_fallback(reader, bounds, fallback, &mut rows).await?;
        rows.attach(reader);
        self.effects.borrow_mut().hot_fills.extend(rows.fills(misses, self.cfg.hot_range_len));
        if let Some(mut pull) = pull {
            self.pull_through(&mut pull).await?;
            rows.sources.push(Self::pulled_rows(reader, pull).0);
        }
        Ok(rows)
    }

    /// Reads from D1 what the round's replicas could not answer (a failed or slow replica, or
    /// a range older than it holds): those authors' posts in the bounds and those candidates,
    /// as a round without replicas would have.
    async fn replica_fallback(
        &self,
        reader: &Reader,
        bounds: Bounds,
        fallback: Fallback,
        rows: &mut RoundRows<R>,
    ) -> Result<(), Io::Error> {
        if fallback.authors.is_empty() && fallback.candidates.is_empty() {
            return Ok(());
        }
        let edges: Vec<ReaderEdge> =
            reader.edges.iter().filter(|e| fallback.authors.contains(&e.author)).cloned().collect();
        let input = RoundInput {
            viewer: reader.viewer,
            mode: self.cfg.mode,
            edges: &edges,
            cached: &[],
            in_flight_since: self.in_flight_since(),
            candidates: &fallback.candidates,
            replicated: &HashMap::new(),
            with_viewer: false,
        };
        let plan = RoundPlan::beside_window(&input, &self.cfg.map);
        let reads = RoundReads::new(&plan, bounds, &[], &self.cfg.map, self.cfg.ids_per_statement);
        let batches = reads.batches();
        let databases: Vec<usize> = batches.iter().map(|b| b.database).collect();
        let replies = self.run(Step::batches(batches)).await?;
        for (database, answers) in databases.into_iter().zip(replies.batches) {
            reads.absorb(database, answers, rows);
        }
        Ok(())
    }

    /// A round's entries with the cached ones merged in, and its bounds.
    fn round_entries(
        &self,
        hot: &Hot,
        entries: Vec<Entry>,
        (lower, upper): (SortKey, SortKey),
        want: usize,
    ) -> Vec<Entry> {
        let (entries, duplicates) = hot.with_window(entries, lower, upper, want);
        self.count_duplicates(duplicates);
        entries
    }

    /// The window part of a read-down: window entries at or above the floor merged with what is
    /// pulled beside the window, round by round until the page is done or the window is exhausted.
    async fn window_down(
        &self,
        before: SortKey,
        page: &mut Page<R>,
    ) -> Result<(WindowPart, Reader), Io::Error> {
        let budget = self.cfg.scan_budget;
        let mut want = batch_size(page, budget);
        let first = WindowOp::Older { before, limit: want, read_at: self.read_at() };
        let (opened, reader, found) = self.first_wave(first).await?;
        let Some(mut reply) = opened else {
            return Ok((WindowPart::PullFrom(before, FeedState::Rebuilding), reader));
        };
        let floor = reply.floor.unwrap_or(SortKey::TOP);
        if before <= floor && found.misses.is_empty() {
            // The window holds nothing below its floor and a round beside it reads nothing
            // there (in flight, pulled and cached posts all lie above it): straight to the
            // pull. A cache refill is read by a round, so a read with one still runs it.
            return Ok((WindowPart::PullFrom(before, FeedState::Ok), reader));
        }
        let hot = Hot::new(found, self.in_flight_since(), floor);
        let mut cursor = before;
        let mut misses = hot.misses.as_slice();
        loop {
            let entries = self.round_entries(&hot, reply.entries, (floor, cursor), want);
            let bounds = Bounds { before: cursor, after: floor, limit: want };
            let rows = self.round(&reader, &hot, bounds, &entries, misses).await?;
            misses = &[];
            let left_out = |author| self.left_out(author);
            let (covered, duplicates) = offer_round((&reader, &left_out), entries, rows, (want, floor), page);
            self.count_duplicates(duplicates);
            if page.is_full() || page.scanned >= budget {
                return Ok((WindowPart::Done, reader));
            }
            if covered <= floor {
                return Ok((WindowPart::PullFrom(before.min(floor), FeedState::Ok), reader));
            }
            cursor = page.last_scanned.unwrap_or(covered).min(cursor);
            want = batch_size(page, budget);
            let op = WindowOp::Older { before: cursor, limit: want, read_at: None };
            reply = self.window_call(op, OnFailure::Fail).await?.unwrap_or_default();
        }
    }

    /// Whether the cursor was issued below the window's floor, so the home feed's page is the
    /// full pull alone: what the read would do after asking the window, without the call and
    /// the hot-range lookups (both serve only what lies above the floor). Exact whatever the
    /// window did since: its floor only rises while it lives (trims), and a window built again
    /// lower (after idle eviction) holds nothing D1 lacks, while the pull reads every post of
    /// the scope from D1, checked now, as a degraded read does.
    fn below_floor(&self) -> bool {
        self.req.below_floor && self.req.before.is_some()
    }

    /// Older-than-cursor page: the window (home feed) or nothing (group and list feeds, served
    /// by the full pull), then the full pull below it. Returns whether every source is
    /// exhausted, the page's state and the reader's edges.
    pub(super) async fn read_down(&self, page: &mut Page<R>) -> Result<(bool, FeedState, Reader), Io::Error> {
        let before = self.req.before.unwrap_or(SortKey::TOP);
        let budget = self.cfg.scan_budget;
        let (mut cursor, state, reader) = if self.req.scope != FeedScope::Home || self.below_floor() {
            (before, FeedState::Ok, self.load_reader().await?)
        } else {
            match self.window_down(before, page).await? {
                (WindowPart::Done, reader) => return Ok((false, FeedState::Ok, reader)),
                (WindowPart::PullFrom(key, state), reader) => (key, state, reader),
            }
        };
        self.effects.borrow_mut().below_floor = self.req.scope == FeedScope::Home && state == FeedState::Ok;
        loop {
            let want = (page.room() + 1).min(budget.saturating_sub(page.scanned)).max(1);
            let (rows, exhausted) = self.full_pull(&reader, None, cursor, want).await?;
            offer_rows(&reader, rows, page);
            if page.is_full() || exhausted || page.scanned >= budget {
                return Ok((exhausted, state, reader));
            }
            cursor = page.last_scanned.unwrap_or(cursor);
        }
    }

    /// Newer-than-cursor read for `?after=`: up to `limit + 1` visible items above the key: the
    /// newest window entries and pulled posts above it (and above the floor), then, if the page
    /// still has room and `after` is below the floor, everything followed in `(after, floor)`.
    pub(super) async fn read_up(
        &self,
        after: SortKey,
        page: &mut Page<R>,
    ) -> Result<(FeedState, Reader), Io::Error> {
        if self.req.scope != FeedScope::Home {
            let reader = self.load_reader().await?;
            self.read_up_pull(&reader, after, SortKey::TOP, page).await?;
            return Ok((FeedState::Ok, reader));
        }
        let want = self.cfg.scan_budget;
        let op = WindowOp::Newer { after, limit: want, read_at: self.read_at() };
        let (opened, reader, found) = self.first_wave(op).await?;
        let Some(reply) = opened else {
            self.read_up_pull(&reader, after, SortKey::TOP, page).await?;
            return Ok((FeedState::Rebuilding, reader));
        };
        let floor = reply.floor.unwrap_or(SortKey::TOP);
        let lower = after.max(floor);
        let hot = Hot::new(found, self.in_flight_since(), lower);
        let entries = self.round_entries(&hot, reply.entries, (lower, SortKey::TOP), want);
        let bounds = Bounds { before: SortKey::TOP, after: lower, limit: want };
        let rows = self.round(&reader, &hot, bounds, &entries, &hot.misses).await?;
        let left_out = |author| self.left_out(author);
        let (_, duplicates) = offer_round((&reader, &left_out), entries, rows, (want, lower), page);
        self.count_duplicates(duplicates);
        if !page.is_full() && after < floor {
            self.read_up_pull(&reader, after, floor, page).await?;
        }
        Ok((FeedState::Ok, reader))
    }

    /// Everything followed in `(after, below)`, newest first, into the page's room.
    async fn read_up_pull(
        &self,
        reader: &Reader,
        after: SortKey,
        below: SortKey,
        page: &mut Page<R>,
    ) -> Result<(), Io::Error> {
        let (rows, _) = self.full_pull(reader, Some(after), below, page.room()).await?;
        offer_rows(reader, rows, page);
        Ok(())
    }
}
