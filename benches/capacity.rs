//! The capacity model's stack-driving modes (issue #21; docs/CAPACITY.md). The model itself,
//! its reports and its command line are the crate `edgefeed-capacity` (`crates/capacity`):
//! `./scripts/bench capacity [workload flags]` runs its binary, no stack and no build; this
//! bench runs the modes that drive local stacks, which `scripts/bench` sends here.
//!
//! `--measure` rebuilds the cost table `bench/costs.json` from local stacks
//! (`capacity_runs/measure.rs`, ~5 minutes); `--measure-window` only the window object's rows
//! per delivery and page read (into it); `--measure-paths` only the delivery paths' requests
//! (boost, reply, quote, mention, direct); `--measure-timelines` only the public and tag
//! timelines' pages, index writes, trends reads and refreshes (`capacity_runs/timelines.rs`,
//! into it); `--measure-replicas` only the hot-author replicas'
//! costs (`capacity_runs/replicas.rs`, into it); `--simulate` checks the model against a seeded
//! graph with a hot author driven through local stacks in push and hybrid mode
//! (`capacity_runs/simulate.rs`, ~45 minutes on a busy 2-core machine, `bench/simulation.json`;
//! the crate's `--simulate-replay` predicts its phases again with the model as it is now).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/placement.rs"]
mod placement;
#[path = "support/provenance.rs"]
mod provenance;
#[path = "support/rng.rs"]
mod rng;

#[path = "capacity_runs/measure.rs"]
mod measure;
#[path = "capacity_runs/replicas.rs"]
mod replicas;
#[path = "capacity_runs/simulate.rs"]
mod simulate;
#[path = "capacity_runs/timelines.rs"]
mod timelines;

use std::path::Path;

use edgefeed_capacity::cli::{self, Action};
use edgefeed_capacity::{report, saved};
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let action = match cli::parse(&args) {
        Ok(args) => args.action,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let dir = saved::bench_dir();
    match action {
        Action::Measure => measure(&dir),
        Action::MeasureWindow => {
            // Only the window's rows, into the table the last full measurement left.
            let (rows, raw) = measure::run_window();
            into_costs(&dir, "window", json!(rows), raw);
            println!("{}", report::window_rows(&rows));
        }
        Action::MeasureReplicas => {
            // Only the replicas' costs, into the table the last full measurement left.
            let (replica, raw) = replicas::run();
            into_costs(&dir, "replica", json!(replica), raw);
            println!("{}", report::replica_rows(&replica));
        }
        Action::MeasurePaths => {
            // Only the delivery paths' requests, into the table the last full measurement left.
            let (paths, raw) = measure::run_paths();
            into_costs(&dir, "paths", json!(paths), raw);
            println!("{}", serde_json::to_string_pretty(&paths).unwrap_or_default());
        }
        Action::MeasureTimelines => {
            // Only the timelines' figures, into the table the last full measurement left.
            let (timelines, raw) = timelines::run();
            into_costs(&dir, "timelines", json!(timelines), raw);
            println!("{}", serde_json::to_string_pretty(&timelines).unwrap_or_default());
        }
        Action::Simulate => simulate(&dir),
        arithmetic => {
            let flags: Vec<&str> = args.iter().map(String::as_str).filter(|a| *a != "--bench").collect();
            eprintln!(
                "{arithmetic:?} drives no stack: the crate's command line runs it (./scripts/bench capacity {0}, \
                 cargo run -p edgefeed-capacity -- {0})",
                flags.join(" ")
            );
            std::process::exit(2);
        }
    }
    // The killed stacks' watchdogs clean up once this process is gone.
    std::thread::sleep(std::time::Duration::from_millis(100));
}

/// The whole table, measured afresh.
fn measure(dir: &Path) {
    let (costs, raw) = measure::run();
    let mut table = provenance::provenance();
    table["costs"] = json!(costs);
    table["raw"] = raw;
    saved::write(&dir.join(saved::COSTS), &table);
    println!("{}", report::costs_table(&costs));
}

/// One part of the table (`costs.<part>`, its raw figures in `raw.<part>`) measured again, the
/// rest kept; `<part>_measured` says when.
fn into_costs(dir: &Path, part: &str, rows: Value, raw: Value) {
    let path = dir.join(saved::COSTS);
    let mut table = saved::read(&path, "--measure");
    table["costs"][part] = rows;
    table["raw"][part] = raw;
    table[format!("{part}_measured")] = provenance::provenance();
    saved::write(&path, &table);
}

fn simulate(dir: &Path) {
    let costs = saved::load_costs(dir);
    let mut result = provenance::provenance();
    result["simulation"] = simulate::run(&costs);
    saved::write(&dir.join(saved::SIMULATION), &result);
    println!("{}", edgefeed_capacity::simulation::table(&result["simulation"]));
}
