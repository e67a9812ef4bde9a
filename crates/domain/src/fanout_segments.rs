//! Parallel fan-out of one post (issue 40, item 3): the pure policy; the plan's order of
//! reads and writes is `fanout_plan.rs`'s, the rows `store/outbox.rs`'s.
//!
//! A chain of chunks (each sends the next) runs one chunk at a time: a 10M-follower post is
//! ~20,000 chunks of 500, hours at ~1 s a chunk. Instead the first message splits the author's
//! follower range into `S` *segments*, consecutive follower-id ranges of about equal size, and
//! each segment runs its own chain, side by side. `S` ([`segments_for`]) is what finishes the
//! post within the target at the measured time per chunk, capped by what the queues can run at
//! once (consumer concurrency per queue). The boundaries are the follower ids at offsets
//! `k * N / S` of the author's pushed followers ([`boundary_offsets`]): one index walk on the
//! author's database, no read of the followers themselves.
//!
//! Completion ([`Segments`]): the event is done when every segment is done, and only then (the
//! in-flight horizon keeps merging the post from D1 for every reader not yet reached). Each
//! segment keeps its own forward-only progress; a redelivered or retried segment message starts
//! from its recorded progress, a resend of the event restarts exactly the unfinished segments
//! from theirs, and a segment finished twice counts once.

/// What decides the number of segments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SegmentTarget {
    /// Followers per chunk (`FANOUT_CHUNK`).
    pub chunk: usize,
    /// Seconds within which every window should hold the post (60).
    pub within_s: f64,
    /// Measured seconds one chunk takes, queue hop included.
    pub chunk_s: f64,
    /// Segments that may run at once: consumer invocations per queue (250) times the queues.
    pub max_segments: usize,
}

/// How many segments a post of an author with `followers` pushed followers runs as: enough for
/// each segment's chain to finish within the target, never more than can run at once, and 1
/// (the plain chain) when one chain finishes in time anyway.
pub fn segments_for(followers: u64, target: SegmentTarget) -> usize {
    let chunks_per_segment = (target.within_s / target.chunk_s.max(1e-3)).floor().max(1.0) as u64;
    let per_segment = chunks_per_segment.saturating_mul(target.chunk.max(1) as u64);
    let wanted = followers.div_ceil(per_segment.max(1)).max(1);
    usize::try_from(wanted).unwrap_or(usize::MAX).clamp(1, target.max_segments.max(1))
}

/// The followers a split walks: every follower, or in hybrid mode only the pushed edges, of
/// which there are at most `PUSH_MAX_FOLLOWERS` (`domain/policy.rs`: the cap is on the pushed
/// edges). Sizing the split by every follower while walking only the pushed ones put the
/// boundaries past the last pushed edge, and the post ran as one chain (found by the capacity
/// simulation: 2,000 followers, 500 pushed, 4 segments planned, none cut).
pub fn followers_to_split(followers_count: u64, pushed_only: bool, push_max_followers: usize) -> u64 {
    if pushed_only {
        followers_count.min(u64::try_from(push_max_followers).unwrap_or(u64::MAX))
    } else {
        followers_count
    }
}

/// How many followers each segment holds (the last one the rest): segment `k` ends at the
/// `(k + 1) * step`-th follower.
pub fn boundary_step(followers: u64, segments: usize) -> u64 {
    followers.div_ceil(segments.max(1) as u64).max(1)
}

/// One segment: the followers after `start_after` up to `end` inclusive (`i64::MAX` for the
/// last), with its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub start_after: i64,
    pub end: i64,
    /// The last follower a chunk of this segment reached (forward only).
    pub cursor: i64,
    pub done: bool,
}

impl Segment {
    pub fn holds(&self, follower: i64) -> bool {
        follower > self.start_after && follower <= self.end
    }
}

/// An event's segments (the rows kept beside its outbox row).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Segments(pub Vec<Segment>);

impl Segments {
    /// The segments cut at `boundaries` (follower ids, ascending; duplicates and unordered ids
    /// dropped): consecutive, covering every follower id exactly once.
    pub fn cut(boundaries: &[i64]) -> Self {
        let mut ends: Vec<i64> = boundaries.iter().copied().filter(|&b| b > 0 && b < i64::MAX).collect();
        ends.sort_unstable();
        ends.dedup();
        ends.push(i64::MAX);
        let mut start_after = 0;
        let segments = ends
            .into_iter()
            .map(|end| {
                let segment = Segment { start_after, end, cursor: start_after, done: false };
                start_after = end;
                segment
            })
            .collect();
        Self(segments)
    }

    /// A chunk of segment `index` reached `progress`; `last`: the segment's chain ends with it.
    /// Progress only moves forward, and a finished segment stays finished (a stale retry
    /// cannot reopen it). Answers whether the whole event is now done.
    pub fn record(&mut self, index: usize, progress: i64, last: bool) -> bool {
        if let Some(segment) = self.0.get_mut(index) {
            segment.cursor = segment.cursor.max(progress.min(segment.end));
            segment.done |= last;
        }
        self.all_done()
    }

    pub fn all_done(&self) -> bool {
        !self.0.is_empty() && self.0.iter().all(|s| s.done)
    }

    /// What a resend of the event restarts: each unfinished segment from its progress.
    pub fn unfinished(&self) -> Vec<(usize, i64)> {
        self.0.iter().enumerate().filter(|(_, s)| !s.done).map(|(i, s)| (i, s.cursor)).collect()
    }

    /// As kept on the outbox row: `[start_after, end, cursor, done]` per segment.
    pub fn to_rows(&self) -> Vec<[i64; 4]> {
        self.0.iter().map(|s| [s.start_after, s.end, s.cursor, i64::from(s.done)]).collect()
    }

    pub fn from_rows(rows: &[[i64; 4]]) -> Self {
        let segment = |&[start_after, end, cursor, done]: &[i64; 4]| Segment {
            start_after,
            end,
            cursor,
            done: done != 0,
        };
        Self(rows.iter().map(segment).collect())
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn a_hybrid_split_is_sized_by_the_pushed_edges() {
        assert_eq!(followers_to_split(2_000, true, 500), 500);
        assert_eq!(followers_to_split(2_000, false, 500), 2_000);
        assert_eq!(followers_to_split(300, true, 500), 300);
    }

    fn target() -> SegmentTarget {
        SegmentTarget { chunk: 500, within_s: 60.0, chunk_s: 1.0, max_segments: 250 }
    }

    #[test]
    fn segments_finish_a_post_within_the_target_capped_by_concurrency() {
        // (pushed followers) -> segments, at 500 a chunk and 1 s a chunk: 30,000 per segment.
        let table =
            [(0, 1), (1, 1), (30_000, 1), (30_001, 2), (1_000_000, 34), (7_500_000, 250), (10_000_000, 250)];
        for (followers, expected) in table {
            assert_eq!(segments_for(followers, target()), expected, "{followers}");
        }
        // Four queues: 1,000 chains at once, so a 10M post needs 334 of them, within 60 s.
        let wide = SegmentTarget { max_segments: 1_000, ..target() };
        let s = segments_for(10_000_000, wide);
        assert_eq!(s, 334);
        assert!(10_000_000f64 / s as f64 / 500.0 * 1.0 <= 60.0);
        // Slower chunks, more segments.
        assert_eq!(segments_for(1_000_000, SegmentTarget { chunk_s: 2.0, ..target() }), 67);
    }

    #[test]
    fn boundaries_split_the_followers_evenly() {
        assert_eq!(boundary_step(10, 1), 10);
        assert_eq!(boundary_step(10, 3), 4);
        assert_eq!(boundary_step(2, 4), 1, "more segments than followers: one each");
        assert_eq!(boundary_step(1_000, 4), 250);
        assert_eq!(boundary_step(0, 4), 1);
    }

    #[test]
    fn segments_round_trip_through_their_rows() {
        let mut segments = Segments::cut(&[10, 20]);
        segments.record(1, 15, true);
        assert_eq!(segments.to_rows(), vec![[0, 10, 0, 0], [10, 20, 15, 1], [20, i64::MAX, 20, 0]]);
        assert_eq!(Segments::from_rows(&segments.to_rows()), segments);
    }

    #[test]
    fn segments_cover_every_follower_exactly_once() {
        let segments = Segments::cut(&[30, 10, 10, 20]);
        assert_eq!(segments.0.len(), 4);
        for follower in [1, 10, 11, 20, 21, 30, 31, i64::MAX - 1] {
            let holding = segments.0.iter().filter(|s| s.holds(follower)).count();
            assert_eq!(holding, 1, "{follower}");
        }
        assert_eq!(
            Segments::cut(&[]).0,
            vec![Segment { start_after: 0, end: i64::MAX, cursor: 0, done: false }]
        );
    }

    #[test]
    fn the_event_is_done_only_when_every_segment_is_whatever_the_order_and_duplicates() {
        // Each segment's chunk messages: (segment, progress, last), delivered in any order and
        // some twice (queue redelivery); stale retries of earlier chunks come last.
        let chunks = [(0, 5, false), (0, 10, true), (1, 15, false), (1, 20, true), (2, 40, true)];
        let orders: [&[usize]; 4] =
            [&[0, 1, 2, 3, 4], &[4, 3, 2, 1, 0], &[2, 4, 0, 3, 1, 1, 4], &[0, 0, 4, 2, 1, 3]];
        for order in orders {
            let mut segments = Segments::cut(&[10, 20]);
            let mut done_at = None;
            for (step, &i) in order.iter().enumerate() {
                let (segment, progress, last) = chunks[i];
                if segments.record(segment, progress, last) && done_at.is_none() {
                    done_at = Some(step);
                }
                let finished: usize = segments.0.iter().filter(|s| s.done).count();
                assert_eq!(segments.all_done(), finished == 3, "{order:?}");
            }
            assert!(done_at.is_some(), "{order:?}");
            assert!(segments.unfinished().is_empty());
            // A stale retry of a first chunk neither rewinds nor reopens.
            assert!(segments.record(0, 5, false));
            assert_eq!(segments.0[0].cursor, 10);
        }
    }

    #[test]
    fn a_resend_restarts_exactly_the_unfinished_segments_from_their_progress() {
        let mut segments = Segments::cut(&[10, 20]);
        segments.record(0, 10, true);
        segments.record(1, 14, false);
        assert_eq!(segments.unfinished(), vec![(1, 14), (2, 20)]);
        // Progress never runs past the segment's end.
        segments.record(1, 99, false);
        assert_eq!(segments.0[1].cursor, 20);
    }
}
