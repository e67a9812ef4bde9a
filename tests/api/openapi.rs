//! The OpenAPI document (`public/v1/openapi.json`, served at `/v1/openapi.json`): it names every
//! route of the router's table with its methods, and `schemathesis` (installed by the bootstrap
//! into `.venv`) fuzzes the running service against it: no 5xx, and every response conforms to
//! the document (status codes, content types, headers, bodies).

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

#[test]
fn the_document_is_served_and_covers_every_route_with_its_methods() {
    let r = raw("GET", "/v1/openapi.json", &[], &[]);
    assert_eq!(r.status, 200);
    assert!(r.content_type.starts_with("application/json"), "{}", r.content_type);
    let doc = r.body;
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().expect("paths");
    for row in edgefeed::http::router::ROUTES {
        if row.pattern.starts_with("/v1/admin/test/") {
            continue; // test hooks: only with TEST_HOOKS, not part of the contract
        }
        let documented: BTreeSet<String> = paths
            .get(row.pattern)
            .and_then(Value::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        let served: BTreeSet<String> = row.methods.iter().map(|(m, _)| m.to_lowercase()).collect();
        assert_eq!(documented, served, "{}: documented methods vs the router's", row.pattern);
    }
    assert!(
        paths.keys().all(|p| edgefeed::http::router::ROUTES.iter().any(|r| r.pattern == p)),
        "no stale paths"
    );
}

/// Runs schemathesis against the suite's server with `token`, on the paths `filter` selects.
fn fuzz(token: &str, filter: (&str, &str)) {
    let exe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/schemathesis");
    assert!(exe.exists(), "{} missing: run ./scripts/bootstrap", exe.display());
    let base = &server().base;
    let out = Command::new(exe)
        .args(["run", &format!("{base}/v1/openapi.json"), "--experimental=openapi-3.1", "--base-url", base])
        .args(["-H", &format!("Authorization: Bearer {token}"), "--checks", "all"])
        // Its own client address for the registration limit (per `CF-Connecting-IP`), so the
        // fuzzer's sign-ups do not spend the rest of the suite's.
        .args(["-H", "CF-Connecting-IP: 198.51.100.7"])
        // Bounded and seeded: the same examples every run, a few seconds per operation.
        .args(["--hypothesis-max-examples", "15", "--hypothesis-seed", "20261130"])
        .args(["--hypothesis-suppress-health-check", "all", "--hypothesis-derandomize", filter.0, filter.1])
        .output()
        .expect("run schemathesis");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "schemathesis found mismatches:\n{text}");
    let operations = text
        .split("Selected API operations: ")
        .nth(1)
        .or_else(|| text.split("Collected API operations: ").nth(1))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<usize>().ok());
    assert!(operations.is_some_and(|n| n >= 5), "fuzzed too few operations ({operations:?}):\n{text}");
    assert!(text.contains("passed") && !text.contains("failed"), "{text}");
}

#[test]
fn schemathesis_finds_no_mismatch_on_user_routes() {
    // Logout would revoke the fuzzing token halfway; it is covered by tests/api/accounts.rs.
    // The server-sent event streams never end, so they are not fuzzed (the streaming tests
    // drive them).
    let excluded = "^/(v1/(admin|me/logout)|api/v1/streaming/user)";
    fuzz(&register("fuzz_user").token, ("--exclude-path-regex", excluded));
}

#[test]
fn schemathesis_finds_no_mismatch_on_admin_routes() {
    fuzz(ADMIN_TOKEN, ("--include-path-regex", "^/v1/admin/(stats|audit|users|posts|import)"));
}
