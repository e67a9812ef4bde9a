//! What a plan for P databases is: the load on each kind of database and the figures the
//! limits and the bill are checked on, with the bill's lines. Its own module so that the bill
//! (which reads a plan) and the planner (which fills in the bill) both depend on it, not on
//! each other.

use serde::Serialize;

use super::burst::Burst;
use super::costs::Work;
use super::graph::Graph;
use super::hot::Hot;
use super::paths::{BoostBurst, PathRates};
use super::timelines::{HotKeys, TimelineRates};

/// Load on one database at peak, per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DbLoad {
    pub work: Work,
    /// Bytes stored at the end of the retention horizon.
    pub bytes: f64,
}

/// One line of the load breakdown: an operation's statements per second on a database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Share {
    pub operation: &'static str,
    pub statements_per_s: f64,
}

/// What the model says for one P.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    pub databases: f64,
    pub graph: Graph,
    pub hot: Hot,
    /// A typical database (even share), the control database, and the database of the most
    /// followed celebrity.
    pub typical: DbLoad,
    pub control: DbLoad,
    pub celebrity: DbLoad,
    /// With replicas: the database of the largest author below the hot threshold (its
    /// followers, its load).
    pub largest_cold: Option<(f64, DbLoad)>,
    /// What makes up each of those three (statements per second, biggest first).
    pub typical_shares: Vec<Share>,
    pub control_shares: Vec<Share>,
    pub celebrity_shares: Vec<Share>,
    pub busiest: &'static str,
    pub databases_touched_per_page: f64,
    pub page_waves: f64,
    pub window_writes_per_s: f64,
    /// Windows' and like serializers' requests; the replicas' (reads and writes) apart.
    pub object_requests_per_s: f64,
    pub replica_requests_per_s: f64,
    /// The busiest Durable Object of any kind, and the other kinds' figures.
    pub hottest_object_requests_per_s: f64,
    pub hottest_object: &'static str,
    pub window_requests_per_s: f64,
    pub like_object_requests_per_s: f64,
    pub queue_messages_per_s: f64,
    pub worker_requests_per_s: f64,
    /// One fan-out consumer invocation of full chunks (the worst case): subrequests and D1
    /// queries, at `fanout_batch` messages; the largest batch under the D1 query limit.
    pub consumer_subrequests: f64,
    pub consumer_d1_queries: f64,
    pub fanout_batch: f64,
    pub fanout_batch_that_fits: f64,
    /// Consumer invocations busy at once for the fan-out at peak (each queue runs up to
    /// `Limits::consumer_concurrency`).
    pub consumers_busy: f64,
    /// Writes of the consumers' counters per second (each a statement and a row per counter).
    pub figure_flushes_per_s: f64,
    pub cron_subrequests: f64,
    pub page_subrequests: f64,
    /// D1 statements one feed page makes (every database together).
    pub page_d1_queries: f64,
    /// One post of the most followed author, as a burst on its database.
    pub burst: Burst,
    /// The most followed author's post pushed to every active follower (#40's 60 s target).
    pub burst_every_active: Burst,
    /// Worker scripts: the front and the data-plane scripts, and the most bindings any holds.
    pub scripts: f64,
    pub bindings_per_script: f64,
    /// One post of the most followed author boosted by its readers: what lands on its database.
    pub boost_burst: BoostBurst,
    /// Statuses per second by path (#39).
    pub path_rates: PathRates,
    /// The public and tag timelines' rates (#42), and the keys that stay on one database.
    pub timeline_rates: TimelineRates,
    pub hot_keys: HotKeys,
    pub bill: Vec<BillLine>,
    pub monthly_usd: f64,
}

/// One line of the monthly bill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BillLine {
    pub item: &'static str,
    pub usage: f64,
    pub unit: &'static str,
    pub usd: f64,
}
