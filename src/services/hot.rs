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
use worker::{Cache, D1PreparedStatement, D1Result, Headers, Response};

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::hot::{boundary, HotRange};
use crate::domain::ids::UserId;
use crate::domain::plan::DbReads;
use crate::domain::policy::FanoutMode;
use crate::domain::shard::ShardMap;
use crate::domain::snowflake::shard_of_id;
use crate::domain::window::Entry;
use crate::error::ApiResult;
use crate::services::tally;
use crate::store::{feed as pull, AnyDb};

/// Boundary step: every read in one step shares an author's entry.
const STEP_MS: i64 = 10_000;
/// A reader's list changes only when they follow a big author or an edge of theirs switches,
/// and a stale list costs nothing but a D1 pull of an author it leaves out (see above), so it
/// is kept long enough to still be there when the reader opens the app again. An empty list is
/// kept only a minute: it is what new follows look like before the policy has decided their
/// edges, and a stale empty list would keep the reader off the cache.
const READER_TTL_SECS: i64 = 600;
const EMPTY_READER_TTL_SECS: i64 = 60;
const ORIGIN: &str = "https://hot-range.edgefeed.internal";

/// What the cache offers one read: ranges for some of the reader's pulled authors, and what
/// it lacked. A miss is not fetched before the read goes on: the read does without that entry
/// (D1 pulls the author as usual) and its one D1 batch also reads what the cache lacked, which
/// [`store`] then puts in the cache for the next reads. So the cache never adds a round trip.
#[derive(Debug, Default)]
pub struct HotSources {
    pub ranges: Vec<HotRange>,
    pub refills: Vec<Refill>,
}

/// A cache entry a read found missing.
#[derive(Debug, Clone)]
pub enum Refill {
    /// The reader's hot pulled authors.
    Reader { key: String, reader: UserId },
    /// One author's range below a boundary.
    Range { key: String, author: UserId, below: i64 },
}

impl HotSources {
    /// The ranges that reach down to `floor` (the others are pulled from D1 as usual), and
    /// their authors.
    pub fn usable(self, floor: SortKey) -> (Vec<HotRange>, Vec<UserId>, Vec<Refill>) {
        let ranges: Vec<HotRange> = self.ranges.into_iter().filter(|r| r.covers_down_to(floor)).collect();
        let authors = ranges.iter().map(|r| r.author).collect();
        (ranges, authors, self.refills)
    }
}

/// The time below which cached ranges answer for a read at `now`.
pub fn boundary_at(now: i64, in_flight_ms: i64) -> i64 {
    boundary(now, in_flight_ms, STEP_MS)
}

fn enabled(ctx: &Ctx) -> bool {
    ctx.config.policy.mode == FanoutMode::Hybrid && ctx.config.hot_min_followers > 0
}

/// The cached ranges of the reader's hot pulled authors, below `below`, and what was missing.
/// Cache lookups only (no D1): it runs beside the window call.
pub async fn sources(ctx: &Ctx, reader: UserId, below: i64) -> HotSources {
    if !enabled(ctx) {
        return HotSources::default();
    }
    let min = ctx.config.hot_min_followers;
    let key = format!("{ORIGIN}/reader/{reader}/{min}");
    let Some(authors) = get::<Vec<UserId>>(&key).await else {
        return HotSources { ranges: Vec::new(), refills: vec![Refill::Reader { key, reader }] };
    };
    let len = ctx.config.hot_range_len;
    let lookups = authors.into_iter().map(|author| async move {
        let key = format!("{ORIGIN}/range/{author}/{below}/{len}");
        get::<HotRange>(&key).await.ok_or(Refill::Range { key, author, below })
    });
    let mut found = HotSources::default();
    for lookup in join_all(lookups).await {
        match lookup {
            Ok(range) => found.ranges.push(range),
            Err(refill) => found.refills.push(refill),
        }
    }
    tally::add("hot_cache_hits", found.ranges.len() as i64);
    tally::add("hot_cache_misses", found.refills.len() as i64);
    found
}

/// One refill read a database makes in a round.
#[derive(Debug, Clone, Copy)]
pub enum RefillRead {
    /// Which of the reader's pulled authors on this database are hot.
    ReaderHot,
    /// The range of `refills[i]`.
    Range(usize),
}

/// The statements that read what the cache lacked on one database, to join that database's
/// batch in the read's round: the reader's hot authors among its pulled authors here, and the
/// ranges of authors who live here. A range refill whose author's database the round does not
/// touch (an author no longer pulled) is left for a later read: the cache is only ever a
/// shortcut.
pub fn refill_statements(
    ctx: &Ctx,
    db: AnyDb<'_>,
    reads: &DbReads,
    map: &ShardMap,
    refills: &[Refill],
) -> ApiResult<Vec<(RefillRead, D1PreparedStatement)>> {
    let mut statements = Vec::new();
    for (i, refill) in refills.iter().enumerate() {
        match refill {
            Refill::Reader { .. } if !reads.pulled.is_empty() => statements.push((
                RefillRead::ReaderHot,
                pull::hot_authors_among(db, &reads.pulled, ctx.config.hot_min_followers)?,
            )),
            Refill::Reader { .. } => {}
            Refill::Range { author, below, .. }
                if map.database(shard_of_id(author.get())) == reads.database =>
            {
                statements.push((
                    RefillRead::Range(i),
                    pull::hot_range(db, *author, *below, ctx.config.hot_range_len)?,
                ))
            }
            Refill::Range { .. } => {}
        }
    }
    Ok(statements)
}

/// What a round's refill reads returned, gathered over its databases.
#[derive(Debug, Default)]
pub struct Refilled {
    /// The reader's hot pulled authors with their follower counts, from every database.
    hot_authors: Vec<(UserId, i64)>,
    ranges: Vec<(usize, Vec<Entry>)>,
}

#[derive(serde::Deserialize)]
struct HotAuthor {
    id: UserId,
    n: i64,
}

impl Refilled {
    pub fn collect(&mut self, read: &RefillRead, result: &D1Result) -> ApiResult<()> {
        match read {
            RefillRead::ReaderHot => {
                self.hot_authors.extend(result.results::<HotAuthor>()?.into_iter().map(|a| (a.id, a.n)))
            }
            RefillRead::Range(i) => self.ranges.push((*i, result.results()?)),
        }
        Ok(())
    }

    /// The reader's hot pulled authors, most followed first (at most [`MAX_HOT_AUTHORS`]).
    fn reader_list(&self) -> Vec<UserId> {
        let mut authors = self.hot_authors.clone();
        authors.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        authors.into_iter().take(MAX_HOT_AUTHORS).map(|(id, _)| id).collect()
    }
}

/// Hot authors cached per reader (the most followed first).
pub const MAX_HOT_AUTHORS: usize = 32;

/// Puts what the refill reads found into the cache (best effort), after the answer is sent:
/// no read waits for a cache write.
pub async fn store(ctx: &Ctx, refills: &[Refill], refilled: Refilled) {
    let mut entries = Vec::new();
    for (i, refill) in refills.iter().enumerate() {
        let entry = match refill {
            Refill::Reader { key, .. } => {
                let authors = refilled.reader_list();
                let ttl = if authors.is_empty() { EMPTY_READER_TTL_SECS } else { READER_TTL_SECS };
                serde_json::to_string(&authors).map(|json| (key.clone(), json, ttl))
            }
            Refill::Range { key, author, below } => {
                let Some((_, found)) = refilled.ranges.iter().find(|(j, _)| *j == i) else { continue };
                let full = found.len() >= ctx.config.hot_range_len;
                let range = HotRange { author: *author, below: *below, full, entries: found.clone() };
                // Outlives its step a little: a read that computed the same boundary just
                // before the step ended still finds it.
                serde_json::to_string(&range).map(|json| (key.clone(), json, 2 * STEP_MS / 1000))
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
