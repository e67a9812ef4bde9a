//! What it costs to run edgefeed at a given size (issue #21; docs/CAPACITY.md).
//!
//! `./scripts/bench capacity [workload flags]` runs the model (`capacity/model.rs`, pure) on
//! the measured cost table `bench/costs.json` and prints, for the workload given on the
//! command line (the headline's figures by default): the load on a typical database, on the
//! control database and on the most followed celebrity's, the binding limits, the monthly bill
//! line by line and the smallest P that fits (or why none does).
//!
//! `--measure` rebuilds the cost table from local stacks (`capacity/measure.rs`, ~5 minutes);
//! `--measure-window` only the window object's rows per delivery and page read (into it);
//! `--measure-replicas` only the hot-author replicas' costs (`capacity/replicas.rs`, into it);
//! `--simulate` checks the model against a seeded graph with a hot author driven through
//! local stacks in push and hybrid mode (`capacity/simulate.rs`, ~45 minutes on a busy 2-core
//! machine, `bench/simulation.json`; `--simulate-replay` predicts its phases again with the
//! model as it is now, measurements kept, without a stack); `--headline` prints the
//! headline scenario under push, hybrid and pull side by side (docs/CAPACITY.md holds it).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/placement.rs"]
mod placement;
#[path = "support/provenance.rs"]
mod provenance;
#[path = "support/rng.rs"]
mod rng;

#[path = "capacity/measure.rs"]
mod measure;
#[path = "capacity/replicas.rs"]
mod replicas;
#[path = "capacity/simulate.rs"]
mod simulate;

use edgefeed_capacity::model::{Celebrities, Costs, Limits, Mode, Policy, Prices, Workload};
use edgefeed_capacity::report;
use serde_json::json;

const USAGE: &str =
    "usage: ./scripts/bench capacity [--measure | --measure-window | --measure-replicas | --simulate | --simulate-replay
  | --headline] [--databases P]
  [--mode push|hybrid|pull] [--users N] [--daily-active S] [--weekly-active S] [--window-holders S]
  [--follows N] [--tail X] [--celebrities COUNTxFOLLOWERS[,COUNTxFOLLOWERS...]]
  [--celebrity-posts-per-day N] [--posts-per-s R] [--reads-per-s R] [--page-n-share S]
  [--likes-per-s R] [--comments-per-s R] [--follows-per-s R] [--live-share S]
  [--hottest-post-like-share S] [--peak-to-mean X] [--retention-days D]
  [--replicas] [--replica-hydrate-only] [--hot-followers N] [--push-max-followers N] [--fanout-batch N]";

fn bench_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

fn load_costs() -> Costs {
    let path = bench_dir().join("costs.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run ./scripts/bench capacity --measure)", path.display()));
    let saved: serde_json::Value = serde_json::from_str(&text).expect("costs.json is JSON");
    serde_json::from_value(saved["costs"].clone()).expect("costs.json holds a cost table")
}

fn celebrities(text: &str) -> Result<Vec<Celebrities>, String> {
    text.split(',')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (count, followers) = part.split_once('x').ok_or(format!("{part}: COUNTxFOLLOWERS"))?;
            Ok(Celebrities {
                count: count.parse().map_err(|_| format!("{part}: bad count"))?,
                followers: followers.parse().map_err(|_| format!("{part}: bad followers"))?,
            })
        })
        .collect()
}

/// What the command line asked for.
struct Args {
    action: &'static str,
    databases: Option<f64>,
    workload: Workload,
    policy: Policy,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        action: "model",
        databases: None,
        workload: Workload::headline(Mode::Hybrid),
        policy: Policy::default(),
    };
    let mut rest = args.iter().filter(|a| a.as_str() != "--bench");
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--measure" => out.action = "measure",
            "--measure-window" => out.action = "measure-window",
            "--measure-replicas" => out.action = "measure-replicas",
            "--simulate" => out.action = "simulate",
            "--simulate-replay" => out.action = "simulate-replay",
            "--headline" => out.action = "headline",
            // Hot authors served from replicas (#28).
            "--replicas" => out.policy.hot_replicas = true,
            "--replica-hydrate-only" => out.policy.replica_hydrate_only = true,
            "--help" | "-h" => return Err(USAGE.into()),
            _ => {
                let value = rest.next().ok_or(format!("{flag} needs a value\n{USAGE}"))?;
                let number = || value.parse::<f64>().map_err(|_| format!("{flag} {value}: not a number"));
                let w = &mut out.workload;
                match flag.as_str() {
                    "--databases" => out.databases = Some(number()?.max(1.0).floor()),
                    "--mode" => {
                        w.mode = Mode::parse(value).ok_or(format!("--mode {value}: push, hybrid or pull"))?
                    }
                    "--users" => w.users = number()?,
                    "--daily-active" => w.daily_active = number()?,
                    "--weekly-active" => w.weekly_active = number()?,
                    "--window-holders" => w.window_holders = number()?,
                    "--follows" => w.follows_per_user = number()?,
                    "--tail" => w.tail = number()?,
                    "--celebrities" => w.celebrities = celebrities(value)?,
                    "--celebrity-posts-per-day" => w.celebrity_posts_per_day = number()?,
                    "--posts-per-s" => w.posts_per_s = number()?,
                    "--reads-per-s" => w.feed_reads_per_s = number()?,
                    "--page-n-share" => w.page_n_share = number()?,
                    "--likes-per-s" => w.likes_per_s = number()?,
                    "--comments-per-s" => w.comments_per_s = number()?,
                    "--follows-per-s" => w.follows_per_s = number()?,
                    "--live-share" => w.live_share = number()?,
                    "--hottest-post-like-share" => w.hottest_post_like_share = number()?,
                    "--peak-to-mean" => w.peak_to_mean = number()?.max(1.0),
                    "--retention-days" => w.retention_days = number()?,
                    "--hot-followers" => out.policy.hot_followers = number()?,
                    "--push-max-followers" => out.policy.push_max_followers = number()?,
                    "--fanout-batch" => out.policy.fanout_batch = number()?,
                    _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
                }
            }
        }
    }
    let w = &out.workload;
    if w.users < 1.0 || w.follows_per_user <= 0.0 || w.tail <= 1.0 {
        return Err("--users must be >= 1, --follows > 0 and --tail > 1".into());
    }
    Ok(out)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&args) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let (policy, limits, prices) = (args.policy, Limits::default(), Prices::default());
    match args.action {
        "measure" => {
            let (costs, raw) = measure::run();
            let mut saved = provenance::provenance();
            saved["costs"] = json!(costs);
            saved["raw"] = raw;
            let text = serde_json::to_string_pretty(&saved).expect("JSON");
            std::fs::write(bench_dir().join("costs.json"), text + "\n").expect("bench/costs.json");
            println!("{}", report::costs_table(&costs));
        }
        "measure-window" => {
            // Only the window's rows, into the table the last full measurement left.
            let (rows, raw) = measure::run_window();
            let path = bench_dir().join("costs.json");
            let text = std::fs::read_to_string(&path).expect("bench/costs.json (run --measure first)");
            let mut saved: serde_json::Value = serde_json::from_str(&text).expect("costs.json is JSON");
            saved["costs"]["window"] = json!(rows);
            saved["raw"]["window"] = raw;
            saved["window_measured"] = provenance::provenance();
            let text = serde_json::to_string_pretty(&saved).expect("JSON");
            std::fs::write(&path, text + "\n").expect("bench/costs.json");
            println!("{}", report::window_rows(&rows));
        }
        "measure-replicas" => {
            // Only the replicas' costs, into the table the last full measurement left.
            let (replica, raw) = replicas::run();
            let path = bench_dir().join("costs.json");
            let text = std::fs::read_to_string(&path).expect("bench/costs.json (run --measure first)");
            let mut saved: serde_json::Value = serde_json::from_str(&text).expect("costs.json is JSON");
            saved["costs"]["replica"] = json!(replica);
            saved["raw"]["replica"] = raw;
            saved["replica_measured"] = provenance::provenance();
            let text = serde_json::to_string_pretty(&saved).expect("JSON");
            std::fs::write(&path, text + "\n").expect("bench/costs.json");
            println!("{}", report::replica_rows(&replica));
        }
        "simulate" => {
            let costs = load_costs();
            let mut result = provenance::provenance();
            result["simulation"] = simulate::run(&costs);
            let text = serde_json::to_string_pretty(&result).expect("JSON");
            std::fs::write(bench_dir().join("simulation.json"), text + "\n").expect("bench/simulation.json");
            println!("{}", simulate::table(&result["simulation"]));
        }
        "simulate-replay" => {
            // The last simulation's measurements against the model as it is now.
            let path = bench_dir().join("simulation.json");
            let text = std::fs::read_to_string(&path).expect("bench/simulation.json (run --simulate first)");
            let mut saved: serde_json::Value = serde_json::from_str(&text).expect("simulation.json is JSON");
            simulate::replay(&load_costs(), &mut saved["simulation"]);
            saved["replayed"] = provenance::provenance();
            let text = serde_json::to_string_pretty(&saved).expect("JSON");
            std::fs::write(&path, text + "\n").expect("bench/simulation.json");
            println!("{}", simulate::table(&saved["simulation"]));
        }
        "headline" => println!("{}", report::headline(&load_costs(), &policy, &limits, &prices)),
        _ => println!(
            "{}",
            report::model_report(&load_costs(), &args.workload, args.databases, &policy, &limits, &prices)
        ),
    }
    // The killed stacks' watchdogs clean up once this process is gone.
    std::thread::sleep(std::time::Duration::from_millis(100));
}
