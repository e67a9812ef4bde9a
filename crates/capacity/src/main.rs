//! `./scripts/bench capacity [workload flags]` (`cargo run -p edgefeed-capacity -- [flags]`):
//! the capacity model on the measured table `bench/costs.json` for the workload the flags give
//! (the headline's figures by default): the load on a typical database, on the control
//! database and on the most followed celebrity's, the binding limits, the monthly bill line by
//! line and the smallest P that fits (or why none does). `--headline` prints the headline
//! scenario under push, hybrid and pull side by side (docs/CAPACITY.md holds it);
//! `--simulate-replay` predicts the last simulation's phases (`bench/simulation.json`) again
//! with the model as it is now, measurements kept. No stack, no Worker build: the modes that
//! drive local stacks (`--measure*`, `--simulate`) are the bench `benches/capacity.rs`.

use std::process::Command;

use edgefeed_capacity::cli::{self, Action};
use edgefeed_capacity::model::{Limits, Prices};
use edgefeed_capacity::{report, saved, simulation};
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = cli::parse(&args).unwrap_or_else(|message| {
        eprintln!("{message}");
        std::process::exit(2);
    });
    let (limits, prices) = (Limits::default(), Prices::default());
    let dir = saved::bench_dir();
    match args.action {
        Action::Model => println!(
            "{}",
            report::model_report(
                &saved::load_costs(&dir),
                &args.workload,
                args.databases,
                &args.policy,
                &limits,
                &prices
            )
        ),
        Action::Headline => {
            let costs = saved::load_costs(&dir);
            println!("{}", report::headline(&costs, &args.workload, &args.policy, &limits, &prices))
        }
        Action::SimulateReplay => replay(&dir),
        stacks => {
            let flags = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
            eprintln!("{stacks:?} drives local stacks: the bench runs it (./scripts/bench capacity {flags})");
            std::process::exit(2);
        }
    }
}

/// The last simulation's measurements against the model as it is now, saved back with when
/// they were replayed.
fn replay(dir: &std::path::Path) {
    let path = dir.join(saved::SIMULATION);
    let mut sim = saved::read(&path, "--simulate");
    simulation::replay(&saved::load_costs(dir), &mut sim["simulation"]);
    sim["replayed"] = provenance();
    saved::write(&path, &sim);
    println!("{}", simulation::table(&sim["simulation"]));
}

/// Where this run came from, as the benches stamp their results (benches/support/provenance.rs):
/// date, commit, branch, whether the tree was dirty, cores.
fn provenance() -> Value {
    let run = |program: &str, args: &[&str]| {
        let out = Command::new(program).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
    };
    json!({
        "date": run("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        "commit": run("git", &["rev-parse", "--short", "HEAD"]),
        "branch": run("git", &["rev-parse", "--abbrev-ref", "HEAD"]),
        "dirty": !run("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
    })
}
