//! The delivery-backlog alert, black-box against its own `wrangler dev` with thresholds of a
//! few seconds (a binary of its own: the HTTP suite's other tests' fan-outs would move a
//! system-wide state under these thresholds): fan-out stalled past warn and alert, then
//! recovered by the reconciliation pass's resend, the state and its since-when read from
//! `GET /v1/admin/stats` at every step.

#[path = "../common/mod.rs"]
mod common;

use std::time::Duration;

use serde_json::Value;

use common::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn setup() {
    let vars =
        [("BACKLOG_WARN_SECONDS", "2"), ("BACKLOG_ALERT_SECONDS", "5"), ("BACKLOG_LAG_WINDOW_SECONDS", "2")];
    let vars = vars.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    init_server(ServerOptions { label: "backlog".into(), vars, port: None });
}

fn backlog() -> Value {
    admin("GET", "/v1/admin/stats", None).expect(200)["backlog"].clone()
}

/// Polls the stats until the backlog is in `state`; returns its figures.
fn until_state(state: &str) -> Value {
    poll(&format!("the backlog state {state}"), DEADLINE, || {
        let b = backlog();
        (b["state"] == state).then_some(b)
    })
}

#[test]
fn a_stalled_fan_out_warns_then_alerts_and_recovers_to_ok() {
    setup();
    let start = backlog();
    assert_eq!(start["state"], "ok", "{start}");
    assert_eq!((start["warn_at_ms"].as_i64(), start["alert_at_ms"].as_i64()), (Some(2_000), Some(5_000)));
    let author = register("stalled_author");
    let reader = register("stalled_reader");
    reader.follow(&author);
    activate(&reader);
    wait_drained(&author);
    // The publish commits but its send is lost: nothing delivers it until a resend.
    lose_next_announce(&author);
    let post = id_of(&author.publish("stuck in the outbox", "public"));

    let warn = until_state("warn");
    let age = warn["oldest_unfinished_age_ms"].as_i64().unwrap();
    assert!((2_000..5_000).contains(&age), "warned between the thresholds: {warn}");
    let warned_at = warn["since_ms"].as_i64().unwrap();
    assert!(warn["since"].as_str().is_some_and(|s| s.ends_with('Z')), "{warn}");

    let alert = until_state("alert");
    assert!(alert["oldest_unfinished_age_ms"].as_i64().unwrap() >= 5_000, "{alert}");
    let alerted_at = alert["since_ms"].as_i64().unwrap();
    assert!(alerted_at > warned_at, "a new since-when for the new state: {alert}");
    let again = backlog();
    assert_eq!((again["state"].clone(), again["since_ms"].as_i64()), ("alert".into(), Some(alerted_at)));
    assert!(again["oldest_unfinished_age_ms"].as_i64() > alert["oldest_unfinished_age_ms"].as_i64());

    // Recovery: the reconciliation pass resends the event and fan-out delivers it.
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    wait_drained(&author);
    assert!(window_ids(&reader).contains(&post), "the stalled post was delivered");
    let ok = until_state("ok");
    assert_eq!(ok["oldest_unfinished_age_ms"], 0, "{ok}");
    assert!(ok["since_ms"].as_i64().unwrap() > alerted_at, "{ok}");
}
