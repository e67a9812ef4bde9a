//! The first wave and the window's opening: the reader's window, edges and hot-range lookups
//! at once; a window that does not exist yet (a new reader, or one whose idle window's storage
//! was deleted: `domain::idle`) is built from D1 first; a window that fails leaves the page to
//! the full pull (state `rebuilding`) instead of failing it.

use super::super::cursor::SortKey;
use super::super::hot::boundary_at;
use super::super::plan::{full_scope, FeedScope};
use super::super::window::{Entry, WindowOp, WindowReply};
use super::pull::{FullPull, PullSpec};
use super::step::{HotFound, OnFailure, Rows, SlabRows, Statement, Step};
use super::{FeedIo, FeedRow, Reader, Reading};

fn without_read(op: &WindowOp) -> WindowOp {
    match op.clone() {
        WindowOp::Older { before, limit, .. } => WindowOp::Older { before, limit, read_at: None },
        WindowOp::Newer { after, limit, .. } => WindowOp::Newer { after, limit, read_at: None },
        other => other,
    }
}

impl<R: FeedRow, Io: FeedIo<R>> Reading<'_, R, Io> {
    /// The time from which D1 answers beside cached ranges and the young-post cushion.
    pub(super) fn in_flight_since(&self) -> i64 {
        boundary_at(self.now, self.cfg.in_flight_ms)
    }

    /// A read that counts as the reader opening their feed (for their read rate).
    pub(super) fn read_at(&self) -> Option<i64> {
        self.req.before.is_none().then_some(self.now)
    }

    /// The first wave: `op` on the window, the reader's edges (their home database) and the
    /// hot ranges the read may use, all at once; then the window's opening. `None`: the window
    /// is unavailable.
    pub(super) async fn first_wave(
        &self,
        op: WindowOp,
    ) -> Result<(Option<WindowReply>, Reader, HotFound), Io::Error> {
        let edges = vec![Statement::Edges { list: None, tags: true }];
        let step = Step {
            window: Some((op.clone(), OnFailure::Degrade)),
            hot_lookup: Some(self.in_flight_since()),
            batches: vec![self.home_batch(edges, OnFailure::Fail)],
            replicas: Vec::new(),
        };
        let mut replies = self.run(step).await?;
        let reader = self.reader_of(&mut replies);
        let hot = std::mem::take(&mut replies.hot);
        let window = match replies.window {
            Some(first) if first.initialized => Some(first),
            Some(first) => self.build_window(first, &op).await?,
            None => None,
        };
        if let Some(reply) = &window {
            self.effects.borrow_mut().report = reply.report;
        }
        Ok((window, reader, hot))
    }

    /// A window call; `None` when it failed and `on_failure` let the read go on.
    pub(super) async fn window_call(
        &self,
        op: WindowOp,
        on_failure: OnFailure,
    ) -> Result<Option<WindowReply>, Io::Error> {
        Ok(self.run(Step::window(op, on_failure)).await?.window)
    }

    /// Builds a new window from D1: activation (so fan-out delivers to it from now on) and the
    /// edges read after it, in one batch: a follow made meanwhile is then in the snapshot or
    /// its backfill delivers to the now active window. Then the snapshot, `Init`, and `op`
    /// again without counting the read (the first call counted it and may have made a report
    /// due: that report is the one kept).
    /// `None`: a step of it failed, and the window is unavailable to this read.
    async fn build_window(
        &self,
        first: WindowReply,
        op: &WindowOp,
    ) -> Result<Option<WindowReply>, Io::Error> {
        let cap = self.cfg.window_cap;
        let statements = vec![
            Statement::Activate,
            Statement::Addressed { limit: cap },
            Statement::Edges { list: None, tags: true },
        ];
        let batch = self.home_batch(statements, OnFailure::Degrade);
        let mut replies = self.run(Step::batches(vec![batch])).await?;
        if replies.failed {
            return Ok(None);
        }
        let reader = self.reader_of(&mut replies);
        let addressed =
            replies.batches.get_mut(0).and_then(|b| b.pop()).map(Rows::entries).unwrap_or_default();
        let Some(snapshot) = self.window_snapshot(&reader).await? else { return Ok(None) };
        let (entries, complete) = with_addressed(snapshot, addressed, cap);
        let init = WindowOp::Init { entries, complete, cap };
        if self.window_call(init, OnFailure::Degrade).await?.is_none() {
            return Ok(None);
        }
        let reply = self.window_call(without_read(op), OnFailure::Degrade).await?;
        Ok(reply.map(|reply| WindowReply { report: first.report, ..reply }))
    }

    /// A new window's snapshot: the newest `cap` entries of the viewer and everyone followed,
    /// from every database at once, and whether that is all there is.
    async fn window_snapshot(&self, reader: &Reader) -> Result<Option<(Vec<Entry>, bool)>, Io::Error> {
        let scopes = full_scope(reader.viewer, &reader.edges, &FeedScope::Home, &self.cfg.map);
        let spec = PullSpec {
            rows: SlabRows::Entries,
            after: None,
            before: SortKey::TOP,
            limit: self.cfg.window_cap,
            now: self.now,
            on_failure: OnFailure::Degrade,
        };
        let mut pull: FullPull<R, Entry> = FullPull::new(spec, scopes, Rows::entries, Entry::key);
        Ok(self.pull_through(&mut pull).await?.then(|| pull.snapshot()))
    }
}

/// A new window's snapshot with the posts addressed to the reader merged in, newest first, each
/// once, at most `cap`: complete only if nothing of the snapshot had to go for them.
fn with_addressed(
    (mut entries, complete): (Vec<Entry>, bool),
    addressed: Vec<Entry>,
    cap: usize,
) -> (Vec<Entry>, bool) {
    entries.extend(addressed);
    entries.sort_by_key(|e| std::cmp::Reverse(e.key()));
    let mut seen = std::collections::HashSet::new();
    entries.retain(|e| seen.insert(e.post_id));
    let complete = complete && entries.len() <= cap;
    entries.truncate(cap);
    (entries, complete)
}

#[cfg(test)]
mod addressed_tests {
    use super::*;
    use crate::ids::{PostId, UserId};

    fn entry(at: i64, id: i64) -> Entry {
        Entry {
            created_at: at,
            post_id: PostId::from_trusted(id),
            author_id: UserId::from_trusted(1),
            version: 0,
        }
    }

    #[test]
    fn addressed_posts_join_the_snapshot_in_order_once() {
        let snapshot = (vec![entry(30, 3), entry(10, 1)], true);
        let (entries, complete) = with_addressed(snapshot, vec![entry(20, 2), entry(30, 3)], 5);
        assert_eq!(entries.iter().map(|e| e.post_id.get()).collect::<Vec<_>>(), vec![3, 2, 1]);
        assert!(complete);
    }

    #[test]
    fn a_snapshot_cut_for_them_is_no_longer_complete() {
        let snapshot = (vec![entry(30, 3), entry(10, 1)], true);
        let (entries, complete) = with_addressed(snapshot, vec![entry(40, 4)], 2);
        assert_eq!(entries.iter().map(|e| e.post_id.get()).collect::<Vec<_>>(), vec![4, 3]);
        assert!(!complete, "the window's floor is now above post 1");
    }
}
