//! Where a bench run came from: date, commit, branch, whether the tree was dirty, cores.

// Shared by several benches, each using part of it.
#![allow(dead_code)]

use serde_json::{json, Value};

/// `git` output in the project dir, trimmed (empty when git fails).
pub fn git(args: &[&str]) -> String {
    let out = std::process::Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
}

pub fn provenance() -> Value {
    let date = std::process::Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]).output();
    let date = date.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let dirty = !git(&["status", "--porcelain", "--untracked-files=no"]).is_empty();
    json!({
        "date": date,
        "commit": git(&["rev-parse", "--short", "HEAD"]),
        "branch": git(&["rev-parse", "--abbrev-ref", "HEAD"]),
        "dirty": dirty,
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
    })
}

/// "DATE at commit `C` (branch `B`)", with "plus uncommitted changes" after the commit when the
/// tree was dirty: a report's line for a [`provenance`] value.
pub fn described(run: &Value) -> String {
    format!(
        "{} at commit `{}`{} (branch `{}`)",
        run["date"].as_str().unwrap_or("?"),
        run["commit"].as_str().unwrap_or("?"),
        if run["dirty"] == true { " plus uncommitted changes" } else { "" },
        run["branch"].as_str().unwrap_or("?"),
    )
}
