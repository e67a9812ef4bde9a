//! The feed read's storage I/O, run from a plan (`domain/plan.rs`): the reader's edges (wave 1,
//! on the reader's database), then one batch per database touched, all sent at once (wave 2),
//! and the full pull (no window) on every database holding a followed author, in parallel.

use std::collections::{HashMap, HashSet};

use futures_util::future::join_all;
use worker::D1PreparedStatement;

use crate::context::Ctx;
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};
use crate::domain::plan::{full_scope, DbReads, FeedScope, ReaderEdge, RoundPlan};
use crate::domain::window::Entry;
use crate::error::{ApiError, ApiResult};
use crate::services::hot::{self as services_hot, Refill, Refilled};
use crate::store::feed::{self as pull, Bounds, PullScope};
use crate::store::posts::{self, AuthorRelationship, PostRow, IDS_PER_QUERY};
use crate::store::{batch, AnyDb};

/// The reader's side of their edges, as wave 1 read it.
pub struct Reader {
    pub viewer: UserId,
    pub edges: Vec<ReaderEdge>,
    followed: HashSet<UserId>,
}

impl Reader {
    /// The edges, with each author's membership of the scope's list when it names one.
    pub async fn load(ctx: &Ctx, viewer: UserId, scope: &FeedScope) -> ApiResult<Self> {
        let edges = pull::reader_edges(ctx.user_db(viewer), viewer, scope.list()).await?;
        Ok(Self::new(viewer, edges))
    }

    pub fn new(viewer: UserId, edges: Vec<ReaderEdge>) -> Self {
        let followed = edges.iter().map(|e| e.author).collect();
        Self { viewer, edges, followed }
    }

    /// Whether the viewer follows `author` now, by the reader's side of the edge (the
    /// authoritative one: the author's copy follows it through the queue).
    pub fn follows(&self, author: UserId) -> bool {
        self.followed.contains(&author)
    }

    /// Whether the viewer follows anyone in the scope (the edges were loaded for it).
    pub fn follows_anyone(&self, scope: &FeedScope) -> bool {
        self.edges.iter().any(|e| scope.holds(e))
    }
}

/// What one round beside the window read: each source newest first (a pulled and an
/// in-flight list per database), and the window candidates' rows by id.
#[derive(Default)]
pub struct RoundRows {
    pub sources: Vec<Vec<PostRow>>,
    pub live: HashMap<PostId, PostRow>,
}

/// The statements one database runs in a round, and where each one's answer goes.
enum Part {
    Pulled,
    InFlight,
    Hydrate,
    Relationships,
    Refill(services_hot::RefillRead),
}

fn statements_of(
    ctx: &Ctx,
    reader: &Reader,
    reads: &DbReads,
    bounds: Bounds,
    refills: &[Refill],
) -> ApiResult<Vec<(Part, D1PreparedStatement)>> {
    let db = ctx.database(reads.database);
    let viewer = reader.viewer;
    let mut parts = Vec::new();
    if !reads.pulled.is_empty() {
        parts.push((Part::Pulled, pull::pulled_statement(db, viewer, &reads.pulled, bounds)?));
    }
    if !reads.in_flight.is_empty() {
        parts.push((Part::InFlight, pull::in_flight_statement(db, viewer, &reads.in_flight, bounds)?));
    }
    for statement in posts::feed_live_statements(db, viewer, &reads.hydrate)? {
        parts.push((Part::Hydrate, statement));
    }
    if !reads.authors.is_empty() {
        parts.push((Part::Relationships, posts::relationships(db, viewer, &reads.authors)?));
    }
    for (read, statement) in services_hot::refill_statements(ctx, db, reads, ctx.shard_map(), refills)? {
        parts.push((Part::Refill(read), statement));
    }
    Ok(parts)
}

/// Runs one round's plan: every database's batch, at most `MAX_PARALLEL_DATABASES` at once.
/// Rows get the viewer's relationship to their author (read once per author, the follow
/// taken from the reader's side); what the hot-range cache lacked is stored after.
pub async fn run_round(
    ctx: &Ctx,
    reader: &Reader,
    plan: &RoundPlan,
    bounds: Bounds,
    refills: &[Refill],
) -> ApiResult<RoundRows> {
    let mut out = RoundRows::default();
    let mut hydrated = Vec::new();
    let mut relationships: HashMap<UserId, AuthorRelationship> = HashMap::new();
    let mut refilled = Refilled::default();
    for wave in plan.waves() {
        let batches = wave.iter().map(|reads| async move {
            let parts = statements_of(ctx, reader, reads, bounds, refills)?;
            let (kinds, statements): (Vec<Part>, Vec<_>) = parts.into_iter().unzip();
            let results = batch(ctx.database(reads.database), statements).await?;
            Ok::<_, ApiError>((kinds, results))
        });
        for done in join_all(batches).await {
            let (kinds, results) = done?;
            for (kind, result) in kinds.iter().zip(&results) {
                match kind {
                    Part::Pulled | Part::InFlight => out.sources.push(result.results()?),
                    Part::Hydrate => hydrated.extend(result.results::<PostRow>()?),
                    Part::Relationships => {
                        for r in result.results::<AuthorRelationship>()? {
                            relationships.insert(r.author_id, r.with_follows(reader.follows(r.author_id)));
                        }
                    }
                    Part::Refill(read) => refilled.collect(read, result)?,
                }
            }
        }
    }
    for rows in &mut out.sources {
        attach(rows, &relationships);
    }
    attach(&mut hydrated, &relationships);
    out.live = hydrated.into_iter().map(|p| (p.id, p)).collect();
    services_hot::store(ctx, refills, refilled).await;
    Ok(out)
}

/// Sets each row's relationship from its author's. A row whose author has none (never: every
/// author of a round is read) keeps the default, which the feed rule hides.
pub fn attach(rows: &mut [PostRow], relationships: &HashMap<UserId, AuthorRelationship>) {
    for row in rows {
        if let Some(r) = relationships.get(&row.author_id) {
            row.set_relationship(r);
        }
    }
}

/// The full pull (no window: new windows' snapshots, group and list feeds, below a window's
/// floor): on every database holding an author of the scope at once, each through its time
/// slabs; the sources merged newest first. Returns up to `limit` rows below `before` and whether
/// every database is exhausted.
pub async fn full_pull(
    ctx: &Ctx,
    reader: &Reader,
    scope: &FeedScope,
    (after, before, limit): (Option<SortKey>, SortKey, usize),
) -> ApiResult<(Vec<PostRow>, bool)> {
    let scopes = full_scope(reader.viewer, &reader.edges, scope, ctx.shard_map());
    let pulls = scopes.iter().map(|(database, authors)| async move {
        let db = ctx.database(*database);
        let scope = PullScope { viewer: reader.viewer, authors, after, now: ctx.now };
        let (mut rows, exhausted) = pull::pull_posts(db, &scope, before, limit).await?;
        with_relationships(db, reader, &mut rows).await?;
        Ok::<_, ApiError>((rows, exhausted))
    });
    let mut merged: Vec<PostRow> = Vec::new();
    let mut exhausted = true;
    let mut covered = SortKey::BOTTOM;
    for done in join_all(pulls).await {
        let (rows, done) = done?;
        exhausted &= done;
        if !done {
            covered = covered.max(rows.last().map_or(SortKey::BOTTOM, PostRow::sort_key));
        }
        merged = crate::domain::merge::merge_newest_first(merged, rows, PostRow::sort_key);
    }
    // Each database answered `limit` rows or all it had: the merge is complete down to the
    // highest last key among those that may have more.
    merged.retain(|p| p.sort_key() >= covered);
    merged.truncate(limit);
    let exhausted = exhausted && merged.len() < limit;
    Ok((merged, exhausted))
}

/// Reads the viewer's relationship to the authors of `rows` (all on `db`) and attaches it.
async fn with_relationships(db: AnyDb<'_>, reader: &Reader, rows: &mut [PostRow]) -> ApiResult<()> {
    let authors: Vec<UserId> =
        rows.iter().map(|p| p.author_id).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    if authors.is_empty() {
        return Ok(());
    }
    let statement = posts::relationships(db, reader.viewer, &authors)?;
    let results = batch(db, vec![statement]).await?;
    let mut relationships = HashMap::new();
    for result in &results {
        for r in result.results::<AuthorRelationship>()? {
            relationships.insert(r.author_id, r.with_follows(reader.follows(r.author_id)));
        }
    }
    attach(rows, &relationships);
    Ok(())
}

/// A new window's snapshot: the newest `limit` entries of the viewer and everyone followed,
/// from every database at once, and whether that is all there is.
pub async fn window_snapshot(ctx: &Ctx, reader: &Reader, limit: usize) -> ApiResult<(Vec<Entry>, bool)> {
    let scopes = full_scope(reader.viewer, &reader.edges, &FeedScope::Home, ctx.shard_map());
    let pulls = scopes.iter().map(|(database, authors)| async move {
        let scope = PullScope { viewer: reader.viewer, authors, after: None, now: ctx.now };
        pull::pull_entries(ctx.database(*database), &scope, SortKey::TOP, limit).await
    });
    let mut merged: Vec<Entry> = Vec::new();
    let mut covered = SortKey::BOTTOM;
    for done in join_all(pulls).await {
        let (entries, exhausted) = done?;
        if !exhausted {
            covered = covered.max(entries.last().map_or(SortKey::BOTTOM, Entry::key));
        }
        merged = crate::domain::merge::merge_newest_first(merged, entries, Entry::key);
    }
    merged.retain(|e| e.key() >= covered);
    let complete = covered == SortKey::BOTTOM && merged.len() <= limit;
    merged.truncate(limit);
    Ok((merged, complete))
}

/// Hydration statements per chunk of ids (the plan's statement count uses the same size).
pub const HYDRATE_CHUNK: usize = IDS_PER_QUERY;
