//! One post of the most followed author, as a burst on its database.

use serde::Serialize;

use super::costs::Costs;
use super::design::segment_chunk_statements;
use super::paths::fanout_statements;
use super::workload::{Limits, Policy, Workload};

/// One post of the most followed author as what it is: a burst on its database. Paging its
/// followers puts all its chunks' statements there at once; the consumers take them as fast
/// as they run, so as built the database is saturated until they are done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Burst {
    pub followers: f64,
    /// Readers written to (window writes), chunks (queue messages), statements on its database.
    pub delivered: f64,
    pub chunks: f64,
    pub statements: f64,
    /// At the database's whole ~1,000 statements/s: as built, every other statement there
    /// waits behind the fan-out meanwhile.
    pub seconds_at_budget: f64,
    /// Paced to keep the database under its headroom beside its steady load (not built).
    pub seconds_paced: f64,
    /// What the queue (messages/s per queue) and the consumers (concurrency, a chunk's wall
    /// time) allow, whatever the database does.
    pub seconds_queue: f64,
    pub seconds_consumers: f64,
    /// Until every follower has it, paced: the slowest of the three.
    pub seconds: f64,
    /// Statements per second the paced fan-out adds to its database meanwhile.
    pub added_per_s: f64,
}

/// #40's target: a 10M-follower post in every active follower's window, i.e. pushed to all of
/// them whatever `PUSH_MAX_FOLLOWERS` says, within `Limits::fanout_seconds_target`.
pub fn burst_to_every_active(
    c: &Costs,
    w: &Workload,
    policy: &Policy,
    limits: &Limits,
    (steady, p): (f64, f64),
) -> Burst {
    let every = Policy { push_max_followers: w.users, ..*policy };
    burst(c, w, &every, limits, (steady, p))
}

/// `p`: the databases, for the chunks' readers that share the author's.
pub fn burst(c: &Costs, w: &Workload, policy: &Policy, limits: &Limits, (steady, p): (f64, f64)) -> Burst {
    let followers = w.celebrities.iter().map(|c| c.followers.min(w.users)).fold(0.0, f64::max);
    let (delivered, chunks, mut statements) = fanout_statements(c, w, policy, followers);
    // Its chunks run as segments (#40): each records its progress every few chunks. A chunk's
    // readers' window check is one statement on each database they live on: the author's is
    // one of them for the share of chunks with a reader there (the table's chunk has none).
    statements -= chunks * (c.fanout_chunk.home.statements - segment_chunk_statements(c, policy));
    let readers_per_chunk = (delivered / chunks.max(1.0)).max(0.0);
    let home_touched = 1.0 - (1.0 - 1.0 / p.max(1.0)).powf(readers_per_chunk);
    statements += chunks * home_touched * c.fanout_chunk.other.statements;
    let budget = limits.d1_statements_per_s;
    let spare = (budget * limits.query_headroom - steady).max(1e-9);
    let seconds_queue = chunks / limits.queue_messages_per_s;
    // Before #40 each chunk sent the next: one consumer at a time. Since, the post's follower
    // range is split into segments whose chains run side by side, as many as the consumers
    // allow.
    let side_by_side = if policy.before_40 { 1.0 } else { limits.consumer_concurrency };
    let seconds_consumers = chunks * limits.chunk_seconds / side_by_side;
    let seconds = (statements / spare).max(seconds_queue).max(seconds_consumers);
    Burst {
        followers,
        delivered,
        chunks,
        statements,
        seconds_at_budget: statements / budget,
        seconds_paced: statements / spare,
        seconds_queue,
        seconds_consumers,
        seconds,
        added_per_s: statements / seconds.max(1e-9),
    }
}
