//! The floors a request is built from, as test hooks (only with `TEST_HOOKS`, like every
//! `/v1/admin/test/*` route): a bare Durable Object call and a bare D1 batch, timed inside the
//! Worker so the HTTP hop in front of them is not counted. The report bench divides what a page,
//! a like or a fan-out costs by these (`benches/report.rs`, "floors").

use futures_util::stream::{self, StreamExt};
use serde_json::json as value;
use worker::Response;

use super::json;
use crate::domain::ids::UserId;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::objects::timeline::Windows;
use crate::store::test_hooks;

/// `{"reader_ids": [id, ...], "concurrency"?: c, "rounds"?: r}`: one call that does nothing to
/// each reader's window object, `c` in flight at a time (default `FANOUT_CONCURRENCY`, as the
/// fan-out keeps its window writes), all of it `r` times over. Answers the calls made and the
/// milliseconds they took.
pub async fn object(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let readers = body.ids("reader_ids", UserId::parse)?;
    if readers.is_empty() {
        return Err(ApiError::field("reader_ids", "reader_ids names at least one reader"));
    }
    let concurrency = match body.count("concurrency")? {
        Some(c) => c.clamp(1, 64) as usize,
        None => app.config.fanout_concurrency,
    };
    let rounds = body.count("rounds")?.unwrap_or(1).clamp(1, 1_000) as usize;
    let windows = Windows::new(app)?;
    let started = app.clock();
    for _ in 0..rounds {
        let calls: Vec<ApiResult<()>> =
            stream::iter(&readers).map(|r| windows.noop(*r)).buffer_unordered(concurrency).collect().await;
        calls.into_iter().collect::<ApiResult<()>>()?;
    }
    let elapsed_ms = app.clock() - started;
    let calls = readers.len() * rounds;
    json(200, &value!({ "calls": calls, "concurrency": concurrency, "elapsed_ms": elapsed_ms }))
}

/// `{"batches"?: n, "database"?: i, "all"?: true}` (or `?all=1`): `n` one-statement batches
/// (`SELECT 1`) one after another on `DB_i` (default 0), or with `all` each of them on every
/// database at once, in the waves the feed read's batches run in. Answers the batches and
/// the milliseconds they took.
pub async fn d1(app: &App, input: &Input, body: &JsonObject) -> ApiResult<Response> {
    let all = input.query("all") == Some("1") || body.flag("all")?.unwrap_or(false);
    let batches = body.count("batches")?.unwrap_or(1).clamp(1, 10_000);
    let index = body.count("database")?.unwrap_or(0) as usize;
    let databases = app.databases().len();
    if index >= databases {
        return Err(ApiError::field("database", format!("database must be below {databases}")));
    }
    let started = app.clock();
    for _ in 0..batches {
        if all {
            app.on_every_database(test_hooks::bare_batch).await?;
        } else {
            test_hooks::bare_batch(app.database(index)).await?;
        }
    }
    let elapsed_ms = app.clock() - started;
    let on = if all { databases } else { 1 };
    json(200, &value!({ "batches": batches, "databases": on, "elapsed_ms": elapsed_ms }))
}
