//! The capacity model (issue #21, docs/CAPACITY.md): pure arithmetic from a workload and the
//! measured per-operation costs (`bench/costs.json`) to the load on every database, the limits
//! that bind, and a monthly bill; the Markdown reports it prints; the `Server-Timing` parser the
//! measurements are read with. No worker dependency and no stack: `cargo test` runs its tests
//! natively, and its command line (`cargo run -p edgefeed-capacity -- [workload flags]`, what
//! `./scripts/bench capacity` runs) needs no build of the Worker. What drives local stacks to
//! measure the table and to check the model (`--measure`, `--simulate`) is the bench
//! `benches/capacity.rs`, which uses this crate.

pub mod cli;
pub mod format;
pub mod issue40_report;
pub mod model;
pub mod paths_report;
pub mod report;
pub mod saved;
pub mod simulation;
pub mod timelines_report;
pub mod timing;
