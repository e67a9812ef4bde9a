//! The physical databases (`DB_0` ..; `EDGEFEED_DATABASES`, 4 by default): every one is
//! migrated, the operator's stats list them, and `Server-Timing` says which ones a request
//! touched. Data placement is not switched on yet, so every shard is on `DB_0`.

use crate::common::*;

/// The migration files, sorted by name (their order of application).
fn migration_files() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the migrations dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().to_string()))
        .filter(|n| n.ends_with(".sql"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_stats_list_every_database_with_the_same_last_migration_and_no_drift() {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    let files = migration_files();
    let listed = stats["databases"].as_array().expect("a databases list");
    assert_eq!(listed.len(), databases(), "{:#}", stats["databases"]);
    for (index, db) in listed.iter().enumerate() {
        assert_eq!(db["index"], index, "{db}");
        assert_eq!(db["binding"], format!("DB_{index}"), "{db}");
        assert_eq!(db["last_migration"].as_str(), files.last().map(String::as_str), "{db}");
        assert_eq!(db["migrations_applied"], files.len(), "{db}");
        // Placement is off: the whole map is on DB_0 whatever the number of databases.
        assert_eq!(db["shards"], if index == 0 { "0-255" } else { "" }, "{db}");
    }
    assert_eq!(stats["migrations_drift"], false, "{:#}", stats["migrations_drifting"]);
    assert_eq!(stats["migrations_drifting"], serde_json::json!([]));
    assert_eq!(stats["shard_map"], "0-255:0");
}

#[test]
fn server_timing_names_the_databases_a_request_touched() {
    let user = register("shardio");
    let r = user.get("/v1/me");
    assert_eq!(r.status, 200, "{}", r.body);
    let header = r.server_timing.clone().unwrap_or_default();
    assert_eq!(r.timing("databases touched"), 1, "{header}");
    assert!(!header.contains(", d1-1;"), "nothing lives on DB_1 yet: {header}");
    // `timing("statements")` still finds the request's total first; DB_0 ran all of them.
    let on_db0: Option<u32> = header
        .split(", d1-0;desc=\"")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok());
    assert_eq!(on_db0, Some(r.timing("statements")), "{header}");
}

#[test]
fn an_invalid_shard_map_fails_every_request_with_a_clear_problem() {
    // Shards 101 .. 255 unmapped: no request may guess where their rows are.
    let vars = vec![("SHARD_MAP".to_string(), "0-100:0".to_string())];
    let broken = start_server(ServerOptions { label: "bad-shard-map".into(), vars, port: None });
    for (method, path) in [("GET", "/v1/users/1"), ("POST", "/v1/users"), ("GET", "/v1/admin/stats")] {
        let response = match ureq::request(method, &format!("{}{path}", broken.base)).call() {
            Err(ureq::Error::Status(_, r)) | Ok(r) => r,
            Err(e) => panic!("{method} {path}: {e}"),
        };
        assert_eq!(response.status(), 500, "{method} {path}");
        assert_eq!(response.header("content-type"), Some("application/problem+json"), "{method} {path}");
        let body: serde_json::Value = response.into_json().expect("a problem document");
        assert_eq!(body["code"], "misconfigured", "{body}");
        let detail = body["detail"].as_str().unwrap_or("");
        assert!(detail.contains("SHARD_MAP") && detail.contains("logical shard 101 is not mapped"), "{body}");
    }
    broken.kill();
}
