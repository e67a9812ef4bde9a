//! The hot-range cache: pulled readers of a big author share that author's recent range
//! through the Workers Cache API instead of each asking D1 for the same rows (the rule and why
//! it is exact: `domain/hot.rs`). Two kinds of entries, both JSON:
//! - a reader's hot pulled authors (`READER_TTL_SECS`): a stale list is safe, because D1 pulls
//!   exactly the authors the list leaves out and hydration drops posts of authors no longer
//!   followed (and dedups those now pushed);
//! - an author's newest post keys below the current boundary step.
//!
//! Lookups run beside the window call; a miss is read by the same D1 batch as the rest of the
//! page (that read pulls the author from D1 as usual) and stored for the next reads, so the
//! cache never adds a round trip. It is per data centre and best effort: any cache error is a
//! miss, never a failed read. Hits and misses are counted in memory (`services/tally.rs`).

use futures_util::future::join_all;
use serde::de::DeserializeOwned;
use worker::{Cache, Headers, Response};

use crate::context::Ctx;
use crate::domain::hot::{HotFill, HotMiss, HotRange, STEP_MS};
use crate::domain::ids::UserId;
use crate::domain::policy::FanoutMode;
use crate::domain::read::HotFound;
use crate::services::tally;

/// A reader's list changes only when they follow a big author or an edge of theirs switches,
/// and a stale list costs nothing but a D1 pull of an author it leaves out (see above), so it
/// is kept long enough to still be there when the reader opens the app again. An empty list is
/// kept only a minute: it is what new follows look like before the policy has decided their
/// edges, and a stale empty list would keep the reader off the cache.
const READER_TTL_SECS: i64 = 600;
const EMPTY_READER_TTL_SECS: i64 = 60;
const ORIGIN: &str = "https://hot-range.edgefeed.internal";

fn enabled(ctx: &Ctx) -> bool {
    ctx.config.policy.mode == FanoutMode::Hybrid && ctx.config.hot_min_followers > 0
}

/// Where a cache entry lives.
fn key_of(ctx: &Ctx, miss: &HotMiss) -> String {
    match miss {
        HotMiss::Reader { reader } => format!("{ORIGIN}/reader/{reader}/{}", ctx.config.hot_min_followers),
        HotMiss::Range { author, below } => {
            format!("{ORIGIN}/range/{author}/{below}/{}", ctx.config.hot_range_len)
        }
    }
}

/// The cached ranges of the reader's hot pulled authors, below `below`, and what was missing.
/// Cache lookups only (no D1): it runs beside the window call. A miss is not fetched before
/// the read goes on: the read does without that entry (D1 pulls the author as usual) and its
/// one D1 batch also reads what the cache lacked, which [`store`] then puts in the cache for
/// the next reads. So the cache never adds a round trip.
pub async fn sources(ctx: &Ctx, reader: UserId, below: i64) -> HotFound {
    if !enabled(ctx) {
        return HotFound::default();
    }
    let miss = HotMiss::Reader { reader };
    let Some(authors) = get::<Vec<UserId>>(&key_of(ctx, &miss)).await else {
        return HotFound { ranges: Vec::new(), misses: vec![miss] };
    };
    let lookups = authors.into_iter().map(|author| async move {
        let miss = HotMiss::Range { author, below };
        get::<HotRange>(&key_of(ctx, &miss)).await.ok_or(miss)
    });
    let mut found = HotFound::default();
    for lookup in join_all(lookups).await {
        match lookup {
            Ok(range) => found.ranges.push(range),
            Err(miss) => found.misses.push(miss),
        }
    }
    tally::add("hot_cache_hits", found.ranges.len() as i64);
    tally::add("hot_cache_misses", found.misses.len() as i64);
    found
}

/// Puts what the refill reads found into the cache (best effort), after the answer is sent:
/// no read waits for a cache write.
pub async fn store(ctx: &Ctx, fills: Vec<(HotMiss, HotFill)>) {
    let mut entries = Vec::new();
    for (miss, fill) in fills {
        let key = key_of(ctx, &miss);
        let entry = match fill {
            HotFill::Reader(authors) => {
                let ttl = if authors.is_empty() { EMPTY_READER_TTL_SECS } else { READER_TTL_SECS };
                serde_json::to_string(&authors).map(|json| (key, json, ttl))
            }
            // Outlives its step a little: a read that computed the same boundary just before
            // the step ended still finds it.
            HotFill::Range(range) => {
                serde_json::to_string(&range).map(|json| (key, json, 2 * STEP_MS / 1000))
            }
        };
        match entry {
            Ok(entry) => entries.push(entry),
            Err(e) => worker::console_error!("hot-range refill not stored: {e}"),
        }
    }
    if entries.is_empty() {
        return;
    }
    ctx.after_response(async move {
        join_all(
            entries.into_iter().map(|(key, json, ttl_secs)| async move { put(&key, json, ttl_secs).await }),
        )
        .await;
    })
    .await;
}

async fn get<T: DeserializeOwned>(key: &str) -> Option<T> {
    let mut response = Cache::default().get(key, false).await.ok()??;
    response.json().await.ok()
}

async fn put(key: &str, json: String, ttl_secs: i64) {
    let put = async {
        let headers = Headers::new();
        headers.set("cache-control", &format!("public, max-age={ttl_secs}"))?;
        headers.set("content-type", "application/json")?;
        let response = Response::ok(json)?.with_headers(headers);
        Cache::default().put(key, response).await
    };
    if let Err(e) = put.await {
        worker::console_error!("hot-range cache put failed: {e}");
    }
}
