//! The hot-range cache: pulled readers of a big author share that author's recent range
//! through the Workers Cache API instead of each asking D1 for the same rows (the rule and why
//! it is exact: `domain/hot.rs`). Two kinds of entries, both JSON:
//! - a reader's hot pulled authors (refreshed from D1 on a miss, `READER_TTL_SECS`): a stale
//!   list is safe, because D1 pulls exactly the authors the list leaves out and hydration drops
//!   posts of authors no longer followed (and dedups those now pushed);
//! - an author's newest post keys below the current boundary step (filled from D1 on a miss).
//!
//! The cache is per data centre and best effort: any cache error is a miss, never a failed read.
//! Hits and misses are counted in memory (`services/tally.rs`): the read path writes nothing.

use futures_util::future::join_all;
use serde::de::DeserializeOwned;
use serde::Serialize;
use worker::{Cache, Headers, Response};

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::hot::{boundary, HotRange};
use crate::domain::ids::UserId;
use crate::domain::policy::FanoutMode;
use crate::error::ApiResult;
use crate::services::tally;
use crate::store::feed as pull;

/// Boundary step: every read in one step shares an author's entry.
const STEP_MS: i64 = 10_000;
const READER_TTL_SECS: i64 = 60;
const ORIGIN: &str = "https://hot-range.edgefeed.internal";

/// What the cache offers one read: ranges for some of the reader's pulled authors.
#[derive(Debug, Default)]
pub struct HotSources {
    pub ranges: Vec<HotRange>,
}

impl HotSources {
    /// The ranges that reach down to `floor` (the others are pulled from D1 as usual), and
    /// their authors.
    pub fn usable(self, floor: SortKey) -> (Vec<HotRange>, Vec<UserId>) {
        let ranges: Vec<HotRange> = self.ranges.into_iter().filter(|r| r.covers_down_to(floor)).collect();
        let authors = ranges.iter().map(|r| r.author).collect();
        (ranges, authors)
    }
}

/// The time below which cached ranges answer for a read at `now`.
pub fn boundary_at(now: i64, in_flight_ms: i64) -> i64 {
    boundary(now, in_flight_ms, STEP_MS)
}

fn enabled(ctx: &Ctx) -> bool {
    ctx.config.policy.mode == FanoutMode::Hybrid && ctx.config.hot_min_followers > 0
}

/// The cached ranges of the reader's hot pulled authors, below `below`. Runs beside the window
/// call, so its cache lookups (and, on misses, D1 refills) add no sequential round trip.
pub async fn sources(ctx: &Ctx, reader: UserId, below: i64) -> HotSources {
    if !enabled(ctx) {
        return HotSources::default();
    }
    let authors = match reader_authors(ctx, reader).await {
        Ok(authors) => authors,
        Err(e) => {
            worker::console_error!("hot authors of {reader} unavailable: {e}");
            return HotSources::default();
        }
    };
    let lookups = authors.into_iter().map(|author| range(ctx, author, below));
    let ranges = join_all(lookups).await.into_iter().filter_map(|r| r.ok()).collect();
    HotSources { ranges }
}

async fn reader_authors(ctx: &Ctx, reader: UserId) -> ApiResult<Vec<UserId>> {
    let min = ctx.config.hot_min_followers;
    let key = format!("{ORIGIN}/reader/{reader}/{min}");
    if let Some(authors) = get(&key).await {
        return Ok(authors);
    }
    let authors = pull::hot_pulled_authors(&ctx.db, reader, min).await?;
    put(&key, &authors, READER_TTL_SECS).await;
    Ok(authors)
}

async fn range(ctx: &Ctx, author: UserId, below: i64) -> ApiResult<HotRange> {
    let len = ctx.config.hot_range_len;
    let key = format!("{ORIGIN}/range/{author}/{below}/{len}");
    if let Some(range) = get::<HotRange>(&key).await {
        tally::add("hot_cache_hits", 1);
        return Ok(range);
    }
    let entries = pull::hot_range(&ctx.db, author, below, len).await?;
    let range = HotRange { author, below, full: entries.len() >= len, entries };
    // Outlives its step a little: a read that computed the same boundary just before the step
    // ended still finds it.
    put(&key, &range, 2 * STEP_MS / 1000).await;
    tally::add("hot_cache_misses", 1);
    Ok(range)
}

async fn get<T: DeserializeOwned>(key: &str) -> Option<T> {
    let mut response = Cache::default().get(key, false).await.ok()??;
    response.json().await.ok()
}

async fn put<T: Serialize>(key: &str, value: &T, ttl_secs: i64) {
    let put = async {
        let headers = Headers::new();
        headers.set("cache-control", &format!("public, max-age={ttl_secs}"))?;
        let response = Response::from_json(value)?.with_headers(headers);
        Cache::default().put(key, response).await
    };
    if let Err(e) = put.await {
        worker::console_error!("hot-range cache put failed: {e}");
    }
}
