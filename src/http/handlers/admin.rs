//! Admin routes: pipeline stats, reconciliation on demand, and (only with TEST_HOOKS) fault
//! injection and replay for the black-box tests.

use std::collections::BTreeMap;

use serde::Deserialize;
use worker::Response;

use super::json;
use crate::domain::feed::percentile;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::TestHook;
use crate::store::{all, int, outbox};

#[derive(Deserialize)]
struct NamedValue {
    name: String,
    value: i64,
}

#[derive(Deserialize, serde::Serialize)]
struct OutboxView {
    id: i64,
    kind: String,
    post_id: Option<i64>,
    state: String,
    cursor_follower_id: i64,
    delivered: i64,
    created_at: i64,
    done_at: Option<i64>,
}

#[derive(Deserialize)]
struct Sample {
    ms: i64,
}

pub async fn stats(app: &App) -> ApiResult<Response> {
    let counters: Vec<NamedValue> = all(&app.db, "SELECT name, value FROM stats ORDER BY name", &[]).await?;
    let by_state: Vec<NamedValue> =
        all(&app.db, "SELECT state AS name, COUNT(*) AS value FROM outbox GROUP BY state", &[]).await?;
    let oldest_pending: Vec<NamedValue> = all(
        &app.db,
        "SELECT 'oldest' AS name, COALESCE(MIN(created_at), 0) AS value FROM outbox WHERE state = 'pending'",
        &[],
    )
    .await?;
    let samples: Vec<Sample> = all(
        &app.db,
        "SELECT ms FROM latency_samples WHERE kind = 'publish_to_visible' ORDER BY id DESC LIMIT 1000",
        &[],
    )
    .await?;
    let ms: Vec<i64> = samples.iter().map(|s| s.ms).collect();
    let counters: BTreeMap<String, i64> = counters.into_iter().map(|c| (c.name, c.value)).collect();
    let get = |name: &str| counters.get(name).copied().unwrap_or(0);
    let states: BTreeMap<String, i64> = by_state.into_iter().map(|c| (c.name, c.value)).collect();
    let oldest = oldest_pending.first().map_or(0, |o| o.value);
    json(
        200,
        &serde_json::json!({
            "outbox": {
                "pending": states.get("pending").copied().unwrap_or(0),
                "done": states.get("done").copied().unwrap_or(0),
                "dead": states.get("dead").copied().unwrap_or(0),
                "oldest_pending_age_ms": if oldest > 0 { (app.now - oldest).max(0) } else { 0 },
            },
            "deliveries": get("deliveries"),
            "fanout": {
                "chunks": get("fanout_chunks"),
                "posts_done": get("events_done_post"),
                "removals_done": get("events_done_remove_post"),
                "author_cleanups_done": get("events_done_remove_author"),
                "backfills_done": get("events_done_backfill"),
                "dead_letters": get("dead_letters"),
            },
            "publish_to_visible_ms": {
                "samples": ms.len(),
                "p50": percentile(&ms, 50.0),
                "p99": percentile(&ms, 99.0),
                "max": ms.iter().max(),
            },
            "feed_filtered": {
                "deleted": get("filtered_deleted"),
                "blocked": get("filtered_blocked"),
                "unfollowed": get("filtered_unfollowed"),
                "visibility": get("filtered_visibility"),
            },
            "reconcile": {
                "runs": get("reconcile_runs"),
                "outbox_resent": get("reconcile_resent"),
                "counts_repaired": get("reconcile_counts_repaired"),
            },
            "counters": counters,
        }),
    )
}

pub async fn reconcile(app: &App, input: &Input) -> ApiResult<Response> {
    let replay_dead = input.query("replay_dead") == Some("true");
    let report = crate::reconcile::run_pass(&app.env, &app.db, &app.config, app.now, replay_dead).await?;
    json(200, &report)
}

pub async fn test_hook(app: &App, input: &Input, hook: TestHook) -> ApiResult<Response> {
    if !app.config.test_hooks {
        return Err(ApiError::NotFound("no such route"));
    }
    let body = input.json(true)?;
    match hook {
        TestHook::Fault => {
            let name = body.required_str("name")?;
            let times = body.count("times")?.unwrap_or(1).min(1_000) as i64;
            outbox::set_fault(&app.db, name, times).await?;
            json(200, &serde_json::json!({ "name": name, "remaining": times }))
        }
        TestHook::ReplayOutbox => {
            let post_id = body.required_id("post_id")?;
            let ids = outbox::reset_for_replay(&app.db, post_id).await?;
            app.announce(0, &ids).await;
            json(200, &serde_json::json!({ "replayed": ids.len() }))
        }
        TestHook::OutboxState => {
            let author = body.required_id("author_id")?;
            let rows: Vec<OutboxView> = all(
                &app.db,
                "SELECT id, kind, post_id, state, cursor_follower_id, delivered, created_at, done_at FROM outbox \
                 WHERE author_id = ?1 AND kind IN ('post', 'remove_post') ORDER BY id DESC LIMIT 100",
                &[int(author)],
            )
            .await?;
            let faults: Vec<NamedValue> = all(
                &app.db,
                "SELECT name, remaining AS value FROM test_faults WHERE name LIKE '%:' || CAST(?1 AS INTEGER)",
                &[int(author)],
            )
            .await?;
            let faults: BTreeMap<String, i64> = faults.into_iter().map(|f| (f.name, f.value)).collect();
            let pending: Vec<NamedValue> = all(
                &app.db,
                "SELECT 'pending' AS name, COUNT(*) AS value FROM outbox WHERE author_id = ?1 AND state = 'pending'",
                &[int(author)],
            )
            .await?;
            let pending = pending.first().map_or(0, |p| p.value);
            json(200, &serde_json::json!({ "pending": pending, "events": rows, "faults": faults }))
        }
        TestHook::WindowState => {
            let reader = body.required_id("reader_id")?;
            let windows = crate::timeline::Windows::new(&app.env)?;
            let op = crate::timeline::WindowOp::Older {
                before: crate::domain::cursor::SortKey::TOP,
                limit: 100_000,
            };
            let reply = windows.call(reader, &op).await?;
            let ids: Vec<String> = reply.entries.iter().map(|e| e.post_id.to_string()).collect();
            json(
                200,
                &serde_json::json!({ "initialized": reply.initialized, "floor": reply.floor, "post_ids": ids }),
            )
        }
        TestHook::Drift => {
            let post_id = body.required_id("post_id")?;
            let like_count = body.count("like_count")?.unwrap_or(0) as i64;
            crate::store::run(
                &app.db,
                "UPDATE posts SET like_count = ?2, touched_at = ?3 WHERE id = ?1",
                &[int(post_id), int(like_count), int(app.now)],
            )
            .await?;
            json(200, &serde_json::json!({ "post_id": post_id.to_string(), "like_count": like_count }))
        }
    }
}
