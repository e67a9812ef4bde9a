//! Checks a deployment's D1 bindings and `SHARD_MAP` the way the Worker will at run time
//! (`store/shards.rs`), so `scripts/deploy --dry-run` refuses what every request would fail on.
//!   cargo run -q --example check-shard-map -- "<SHARD_MAP>" DB_0 DB_1 ...

use edgefeed::store::shards::map_for;

fn check(spec: &str, bindings: &[String]) -> Result<String, String> {
    // The Worker counts DB_0, DB_1, ... up to the first one missing: a gap would silently
    // leave the databases after it out.
    for (index, binding) in bindings.iter().enumerate() {
        if *binding != format!("DB_{index}") {
            return Err(format!("D1 bindings must be DB_0 .. DB_{}; found {binding}", bindings.len() - 1));
        }
    }
    if bindings.is_empty() {
        return Err("no D1 binding DB_0".into());
    }
    // The very function the Worker builds its map with.
    let map = map_for(spec, bindings.len()).map_err(|why| why.to_string())?;
    Ok(format!("SHARD_MAP `{spec}` = {} on {} database(s)", map.describe(), bindings.len()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((spec, bindings)) = args.split_first() else {
        eprintln!("usage: check-shard-map <SHARD_MAP> DB_0 DB_1 ...");
        std::process::exit(2);
    };
    match check(spec, bindings) {
        Ok(summary) => println!("{summary}"),
        Err(why) => {
            eprintln!("{why}");
            std::process::exit(1);
        }
    }
}
