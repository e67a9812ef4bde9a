//! The fan-out consumer's D1 budget per invocation. Cloudflare allows 1,000 D1 queries per
//! Worker invocation (each statement of a batch counts), and a consumer invocation runs a whole
//! queue batch (up to `max_batch_size` messages side by side). What one message costs grows
//! with the number of databases P: a chunk's readers are checked on their own rows, one
//! statement per database they span (at P = 9,003 a chunk of 500 spans ~490). So the consumer
//! plans each batch before it starts ([`plan_batch`]): every message reserves its worst case,
//! messages are taken in order while the reservations fit the budget, and the chunk-like
//! messages share what is left as a cap on the databases their readers may span
//! ([`cap_databases`]: a chunk stops at the follower that would span one more, and the next
//! message goes on from there). The messages not taken are sent again as fresh messages (their
//! attempts toward the dead-letter queue untouched) and acked.

use std::collections::HashSet;

/// What the consumer's batch writes after its messages: the counters' flush (one upsert per
/// counter touched) and the invocation's own maximum.
pub const FLUSH_RESERVE: usize = 40;

/// A post chunk's statements besides its readers' window check, at worst: the event, the post
/// and what reading it converges (a boost's, a quote's or a reply's mirror, up to
/// `MAX_MENTIONS` = 20 mentioned users' notifications, up to 10 tags' timeline entries and the
/// search rows), the follower page, a reply's "also follows" check, the first chunk's live
/// page, rates and author window, the progress (3) and the done mark (5).
pub const CHUNK_BASE: usize = 60;

/// A tag page's statements besides its readers' window check: the post, the tag's page.
pub const TAG_BASE: usize = 4;

/// A later live page: the post, the leases, the author's side, a reply's check.
pub const LIVE_COST: usize = 8;

/// A Web Push delivery: the notification, the subscriptions, a claim per subscription.
pub const PUSH_COST: usize = 12;

/// A reconciliation share: bounded by its slices (tests/reconcile pins it at 150).
pub const RECONCILE_COST: usize = 150;

/// A dead letter of any kind: at most the event's dead mark (2 statements).
pub const DEAD_LETTER_COST: usize = 2;

/// A policy job's page of 200 edges: the page, and per database of its readers a read and a
/// write.
pub const POLICY_PAGE: usize = 200;

/// What one queue message is, as far as its D1 cost goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageCost {
    /// A fan-out chunk of an outbox event (or a single-reader event: cheaper, same reservation).
    Chunk,
    /// A page of a tag's followers: its readers' window check spans databases as a chunk's.
    TagPage,
    /// A policy job (an author's page of edges, a reader's activity): a read and a write per
    /// database of at most [`POLICY_PAGE`] edges.
    Policy,
    /// A fixed worst case.
    Fixed(usize),
}

impl MessageCost {
    /// The statements this message reserves, its readers' databases apart (`databases`: P).
    fn base(self, databases: usize) -> usize {
        match self {
            Self::Chunk => CHUNK_BASE,
            Self::TagPage => TAG_BASE,
            Self::Policy => 10 + 2 * databases.min(POLICY_PAGE),
            Self::Fixed(n) => n,
        }
    }

    fn spans_databases(self) -> bool {
        matches!(self, Self::Chunk | Self::TagPage)
    }
}

/// How a consumer batch runs within its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPlan {
    /// The first `admitted` messages run; the rest are sent again as fresh messages.
    pub admitted: usize,
    /// The most databases one chunk's (or tag page's) readers may span.
    pub databases_per_chunk: usize,
    /// The statements the admitted messages and the flush may spend at worst (at most the
    /// budget, unless the first message alone is dearer: it runs alone).
    pub reserved: usize,
}

/// Takes the batch's messages in order while their worst cases fit `budget` (always at least
/// the first: a message that cannot fit a budget alone would otherwise never run), then shares
/// what is left among the chunk-like ones as their cap on databases spanned: at least one,
/// at most `chunk` (a chunk's readers) and `databases` (P).
pub fn plan_batch(costs: &[MessageCost], budget: usize, databases: usize, chunk: usize) -> BatchPlan {
    let available = budget.saturating_sub(FLUSH_RESERVE);
    let (mut admitted, mut spent, mut spanning) = (0, 0, 0);
    for cost in costs {
        let worst = cost.base(databases) + usize::from(cost.spans_databases());
        if admitted > 0 && spent + worst > available {
            break;
        }
        admitted += 1;
        spent += worst;
        spanning += usize::from(cost.spans_databases());
    }
    let share = match spanning {
        0 => 0,
        n => available.saturating_sub(spent) / n,
    };
    let databases_per_chunk = (1 + share).min(chunk.max(1)).min(databases.max(1));
    let reserved = spent - spanning + spanning * databases_per_chunk + FLUSH_RESERVE;
    BatchPlan { admitted, databases_per_chunk, reserved }
}

/// The longest prefix of `page` whose items' databases (`database_of`) number at most `max`,
/// and whether it cut the page short. A chunk reads its readers' rows one statement per
/// database, so this bounds its statements whatever P is; the followers cut off are the next
/// chunk's (progress moves by the prefix).
pub fn cap_databases<T>(mut page: Vec<T>, database_of: impl Fn(&T) -> usize, max: usize) -> (Vec<T>, bool) {
    let mut seen = HashSet::new();
    let cut = page.iter().position(|item| {
        seen.insert(database_of(item));
        seen.len() > max.max(1)
    });
    match cut {
        Some(at) => {
            page.truncate(at);
            (page, true)
        }
        None => (page, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use MessageCost::*;

    #[test]
    fn a_full_batch_of_chunks_fits_the_budget_whatever_p() {
        // (databases P, chunk) -> a batch of 10 chunks at the default budget of 900.
        for (p, chunk) in [(4, 500), (256, 500), (9_003, 500), (30_360, 500), (9_003, 5)] {
            let plan = plan_batch(&[Chunk; 10], 900, p, chunk);
            assert!(plan.reserved <= 900, "P={p}: {plan:?}");
            assert!(plan.admitted >= 1 && plan.databases_per_chunk >= 1, "P={p}: {plan:?}");
            assert!(plan.databases_per_chunk <= chunk.min(p), "P={p}: {plan:?}");
        }
        // Small P: every message runs, each chunk may span every database.
        assert_eq!(
            plan_batch(&[Chunk; 10], 900, 4, 500),
            BatchPlan { admitted: 10, databases_per_chunk: 4, reserved: 680 }
        );
        // Large P: ten chunks still run, each spans at most (900 - 40 - 10 x 61) / 10 + 1 = 26.
        let big = plan_batch(&[Chunk; 10], 900, 9_003, 500);
        assert_eq!((big.admitted, big.databases_per_chunk), (10, 26));
    }

    #[test]
    fn messages_past_the_budget_wait_for_another_invocation() {
        // Budget 200: 160 after the flush, a chunk reserves 61 at least: two run.
        let plan = plan_batch(&[Chunk; 10], 200, 4, 5);
        assert_eq!(plan.admitted, 2);
        assert!(plan.reserved <= 200, "{plan:?}");
        // A reconciliation share and a chunk: the share is dear, both fit 900.
        let mixed = plan_batch(&[Fixed(RECONCILE_COST), Chunk, Fixed(LIVE_COST)], 900, 9_003, 500);
        assert_eq!(mixed.admitted, 3);
        assert!(mixed.reserved <= 900 && mixed.databases_per_chunk > 1, "{mixed:?}");
        // Policy pages at large P reserve 410 each: two per invocation.
        assert_eq!(plan_batch(&[Policy; 10], 900, 9_003, 500).admitted, 2);
        // A first message over the whole budget runs alone.
        let alone = plan_batch(&[Fixed(2_000), Chunk], 900, 4, 500);
        assert_eq!(alone.admitted, 1);
        // No message: nothing admitted, nothing reserved but the flush.
        assert_eq!(
            plan_batch(&[], 900, 4, 500),
            BatchPlan { admitted: 0, databases_per_chunk: 1, reserved: 40 }
        );
    }

    #[test]
    fn the_worst_case_never_exceeds_the_budget_when_the_first_fits() {
        let kinds = [Chunk, TagPage, Policy, Fixed(LIVE_COST), Fixed(RECONCILE_COST), Fixed(PUSH_COST)];
        for budget in [200, 400, 900] {
            for p in [1, 4, 100, 9_003] {
                for start in 0..kinds.len() {
                    let costs: Vec<_> = (0..10).map(|i| kinds[(start + i * 7) % kinds.len()]).collect();
                    let plan = plan_batch(&costs, budget, p, 500);
                    let first = costs[0].base(p) + usize::from(costs[0].spans_databases()) + FLUSH_RESERVE;
                    if first <= budget {
                        assert!(plan.reserved <= budget, "budget {budget}, P={p}, {costs:?}: {plan:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_chunk_stops_before_the_reader_that_spans_one_database_too_many() {
        let db = |id: &u32| (*id % 10) as usize;
        assert_eq!(cap_databases(vec![1, 11, 2, 21, 3, 4], db, 2), (vec![1, 11, 2, 21], true));
        assert_eq!(cap_databases(vec![1, 11, 2, 21], db, 2), (vec![1, 11, 2, 21], false));
        assert_eq!(cap_databases(vec![1, 2, 3], db, 0), (vec![1], true), "always at least one database");
        assert_eq!(cap_databases(Vec::<u32>::new(), db, 3), (vec![], false));
    }
}
