//! The tables the capacity runs save under `bench/`: the measured cost table (`costs.json`,
//! `costs` field, written by `--measure`) and the last simulation (`simulation.json`, written
//! by `--simulate`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::model::Costs;

pub const COSTS: &str = "costs.json";
pub const SIMULATION: &str = "simulation.json";

/// `bench/` of the repository this crate is built in (two levels up: `crates/capacity`).
pub fn bench_dir() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.ancestors().nth(2).unwrap_or(crate_dir).join("bench")
}

/// A saved JSON file; panics saying how to make it when it is missing.
pub fn read(path: &Path, made_by: &str) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (run ./scripts/bench capacity {made_by})", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

/// Writes a saved JSON file, pretty, with a final newline.
pub fn write(path: &Path, saved: &Value) {
    let text = serde_json::to_string_pretty(saved).expect("JSON");
    std::fs::write(path, text + "\n").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The measured cost table in `dir` (`bench/costs.json`).
pub fn load_costs(dir: &Path) -> Costs {
    let saved = read(&dir.join(COSTS), "--measure");
    serde_json::from_value(saved["costs"].clone()).expect("costs.json holds a cost table")
}
