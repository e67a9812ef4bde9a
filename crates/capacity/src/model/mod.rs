//! The capacity model (issue #21): pure arithmetic from a workload and the measured
//! per-operation costs (`bench/costs.json`, written by `./scripts/bench capacity --measure`)
//! to the load on every database, the limits that bind, and a monthly bill. No I/O here; its
//! arithmetic is pinned on hand-worked cases in `crates/capacity/tests/model.rs`.
//!
//! How load is placed (the same rules as `domain/placement.rs`): users, and with them their
//! posts, likes and comments on those posts, spread evenly over the P databases by id; an
//! operation costs `home` statements on its actor's database, `other` on each other database it
//! touches, and `control` on the control database (`DB_0`), which also carries every
//! database's own share. What does not spread: the control database's extra, and a celebrity's
//! database, where its followers list is paged for every post it makes and from which every
//! reader pulling it reads. With hot authors on replicas (#28, `Policy::hot_replicas`) those
//! reads go to the author's replicated Durable Objects instead, and the busiest author
//! database is the largest one below the threshold (`largest_cold`).
//!
//! In order: what is measured (`costs`) and asked (`workload`: the workload, the policy, the
//! platform's limits and prices); the follow graph derived from it (`graph`) and its hot
//! authors (`hot`); a feed page's cost (`page`); the plan for P databases (`plan`, with the
//! cron's part, `cron`, and a celebrity's post as a burst, `burst`) and its monthly bill
//! (`bill`); whether it fits, the smallest P that does and the candidates (`verdict`). Every
//! public item is re-exported here: `model::plan`, `model::Costs`.

mod bill;
mod burst;
mod costs;
mod cron;
mod design;
mod graph;
mod hot;
mod live;
mod page;
mod paths;
mod plan;
mod plan_types;
mod timelines;
mod verdict;
mod workload;

pub use bill::*;
pub use burst::*;
pub use costs::*;
pub use cron::*;
pub use design::*;
pub use graph::*;
pub use hot::*;
pub use live::*;
pub use page::*;
pub use paths::*;
pub use plan::*;
pub use plan_types::*;
pub use timelines::*;
pub use verdict::*;
pub use workload::*;
