//! The feed read as one async function over its I/O: [`read`] decides every storage I/O of a
//! page, one [`Step`] at a time, and awaits each from a [`FeedIo`], the one seam between the
//! read's logic and storage. `services/feed_io.rs` implements it over the window objects, D1 and
//! the hot-range cache (each step's parts at once); the tests implement it over a fake world and
//! count what each step costs, so a page's storage cost is read off this module, not gathered
//! from the calls that make it.
//!
//! The steps of a page:
//! - **first wave** (home feed), all at once: the reader's window (`Older` or `Newer`), the
//!   reader's edges on their home database, the hot-range cache lookups. A window that does not
//!   exist yet is built from D1 (`open.rs`: activation and edges in one batch, the snapshot's
//!   slabs, `Init`, the re-read); a window that fails degrades the page to the full pull alone
//!   (state `rebuilding`). Group and list feeds read only the edges.
//! - **rounds beside the window** (`round.rs`): one batch per database touched; a round that
//!   comes back without filling the page asks the window for more (`Older`) and runs again.
//! - **the full pull** (`pull.rs`), below the window's floor, for group and list feeds and
//!   degraded pages: one slab per step on every database at once, each row with the viewer's
//!   relationship to its author. A cursor marked below the floor goes straight there after
//!   the reader's edges, without the window (`walk.rs`).

mod open;
mod pull;
mod round;
mod step;
#[cfg(test)]
mod tests;
mod walk;

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::marker::PhantomData;
use std::rc::Rc;

pub use step::{
    AuthorRelation, DbBatch, HotFound, OnFailure, ReplicaCall, ReplicaRows, Replies, Rows, Slab, SlabRows,
    Statement, Step,
};

use super::activity::ActivityReport;
use super::cursor::SortKey;
use super::feed::{
    empty_reason, next_cursor_key, EmptyReason, FeedState, Hidden, HideRule, LiveState, PageBuilder,
};
use super::filters::{Applied, Subject};
use super::hot::{HotFill, HotMiss};
use super::ids::UserId;
use super::plan::{full_scope, FeedScope, ReaderEdge};
use super::policy::FanoutMode;
use super::shard::ShardMap;
use super::snowflake::shard_of_id;
use super::tags::FollowedTags;
use pull::{FullPull, PullSpec};

/// A feed row as the read needs it; `store::posts::PostRow` is one.
pub trait FeedRow {
    fn key(&self) -> SortKey;
    fn author(&self) -> UserId;
    /// What the visibility verdict needs, with the relationship [`FeedRow::attach`] set.
    fn live_state(&self, viewer: UserId) -> LiveState;
    fn attach(&mut self, relation: &AuthorRelation);
    /// The relationship the row holds: as a full pull's slab read it with the row, or as
    /// [`FeedRow::attach`] set it.
    fn relation(&self) -> AuthorRelation;
    /// Whether the viewer likes the post, for a row a replica served (it has no viewer).
    fn set_liked_by_me(&mut self, liked: bool);
    /// What filters match on (its id, its texts); `None`: nothing to match here (a boost, whose
    /// original is matched once resolved).
    fn filter_subject(&self) -> Option<(i64, Vec<String>)> {
        None
    }
    /// The text whose tags may admit the post by a followed tag: `Some` only for a public,
    /// listed post of its own (not a boost), what the tag index holds and delivers.
    fn tag_text(&self) -> Option<&str> {
        None
    }
}

/// One page asked for.
#[derive(Debug, Clone)]
pub struct FeedQuery {
    pub viewer: UserId,
    pub limit: usize,
    /// Continue below this key (`?cursor=`).
    pub before: Option<SortKey>,
    /// The cursor says `before` lay below the window's floor (a page that ended in the full
    /// pull issued it): the home feed's page is the full pull alone, without the window.
    pub below_floor: bool,
    /// Only items above this key (`?after=`).
    pub after: Option<SortKey>,
    /// Home (the window), or a group's or list's authors (the pull path alone).
    pub scope: FeedScope,
    /// The viewer's filters for this feed's context: a `hide` match is hidden as the feed rule
    /// hides ([`HideRule`]), so the page fills on within the scan budget.
    pub filters: Option<Rc<Applied>>,
}

/// What the read needs of the configuration.
#[derive(Debug, Clone)]
pub struct ReadConfig {
    pub mode: FanoutMode,
    /// A new window's capacity (its snapshot's size).
    pub window_cap: usize,
    /// Candidates scanned per page at most.
    pub scan_budget: usize,
    /// The young-post cushion of the in-flight merge (and the hot-range boundary).
    pub in_flight_ms: i64,
    /// Ids per hydration statement.
    pub ids_per_statement: usize,
    /// Entries per hot range (a refill with this many is full).
    pub hot_range_len: usize,
    pub map: ShardMap,
    /// Hot authors (`domain/replica.rs`), each with the number of digests its replicas live
    /// in (the same for all: every digest holds every hot author its readers read); read from
    /// the reader's digest, not D1.
    pub replicated: Rc<HashMap<UserId, u32>>,
}

/// The finished page, and what the service does after answering.
#[derive(Debug)]
pub struct Finished<R> {
    pub items: Vec<R>,
    pub next: Option<SortKey>,
    /// `next` lies below the window's floor (the page ended in the full pull below a window
    /// that answered): its cursor says so ([`FeedQuery::below_floor`]).
    pub next_below_floor: bool,
    pub newest: SortKey,
    pub state: FeedState,
    pub gap: Option<bool>,
    pub empty_reason: Option<EmptyReason>,
    /// Candidates scanned, and why the hidden ones were hidden (the page's tally).
    pub scanned: usize,
    pub hidden: Vec<Hidden>,
    /// Fewer items than asked though more may exist: filtering spent the scan budget.
    pub short: bool,
    /// Candidates offered by two sources (counted once).
    pub duplicates: i64,
    /// The reader's activity, when opening the window made a report due.
    pub report: Option<ActivityReport>,
    /// What the hot-range cache lacked and the read found, to store.
    pub hot_fills: Vec<(HotMiss, HotFill)>,
    /// The authors in the scope (the viewer too, for the home feed) whose database was
    /// unavailable during the read: their posts are left out of this page, which is complete
    /// for everyone else. Empty on a healthy read.
    pub unavailable: Vec<UserId>,
    /// The authors whose posts the scope holds (the followed authors it holds, and the viewer
    /// on the home feed): where an earlier entry of a boosted post may come from
    /// (`domain/boosts.rs`).
    pub sources: Vec<UserId>,
    /// The tags the reader follows (home feed): another source of earlier entries.
    pub followed_tags: FollowedTags,
}

/// The feed read's I/O: runs one [`Step`], everything in it at once (the window call, the
/// hot-range lookups, the replica reads, one batch per database), and answers its [`Replies`]
/// in the step's order. A failure the step absorbs (per its [`OnFailure`]: a degraded window or
/// batch, an omitted database) is an answer; any other is the error, which ends the read.
///
/// `&self`: the read runs one step at a time, so an implementation keeps what it learns (a
/// binding made on first use, the fakes' counts) in cells.
// A Worker is single-threaded: the read's future is never sent, so no `Send` bound is needed.
#[allow(async_fn_in_trait)]
pub trait FeedIo<R> {
    type Error;

    async fn run(&self, step: Step) -> Result<Replies<R>, Self::Error>;
}

/// Reads one page at `now` (the request's time), every step through `io`.
pub async fn read<R: FeedRow, Io: FeedIo<R>>(
    io: &Io,
    query: FeedQuery,
    now: i64,
    config: ReadConfig,
) -> Result<Finished<R>, Io::Error> {
    let reading =
        Reading { io, req: query, now, cfg: config, effects: RefCell::default(), rows: PhantomData };
    reading.page().await
}

/// The reader's side of their edges, as the first wave read it.
pub struct Reader {
    pub viewer: UserId,
    pub edges: Vec<ReaderEdge>,
    followed: HashSet<UserId>,
    /// The tags the reader follows (home feed only; empty for groups and lists).
    pub tags: FollowedTags,
}

impl Reader {
    pub fn new(viewer: UserId, edges: Vec<ReaderEdge>) -> Self {
        let followed = edges.iter().map(|e| e.author).collect();
        Self { viewer, edges, followed, tags: FollowedTags::default() }
    }

    /// The reader with the tags they follow.
    pub fn with_tags(self, tags: FollowedTags) -> Self {
        Self { tags, ..self }
    }

    /// What the feed rule judges a row by: its state, with the followed-tag path and the mute
    /// beside it when the reader follows a tag the row carries.
    pub fn live_state<R: FeedRow>(&self, row: &R) -> LiveState {
        let live = row.live_state(self.viewer);
        match row.tag_text().and_then(|text| self.tags.admitted_since(text)) {
            Some(_) => LiveState { followed_tag: true, author_muted: self.tags.mutes(row.author()), ..live },
            None => live,
        }
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

    /// Sets each row's relationship from its author's as `read` (the authors' databases) has
    /// it, the follow taken from the reader's side. A row whose author has none (never: every
    /// author of a read is read) keeps the default, which the feed rule hides.
    fn attach<'r, R: FeedRow + 'r>(
        &self,
        read: &[AuthorRelation],
        rows: impl IntoIterator<Item = &'r mut R>,
    ) {
        let relations: HashMap<UserId, AuthorRelation> = read
            .iter()
            .map(|r| (r.author, AuthorRelation { follows: self.follows(r.author), ..*r }))
            .collect();
        for row in rows {
            if let Some(r) = relations.get(&row.author()) {
                row.attach(r);
            }
        }
    }
}

#[derive(Default)]
struct Effects {
    duplicates: i64,
    /// The home feed's read went below a window that answered (or was told it is below).
    below_floor: bool,
    report: Option<ActivityReport>,
    hot_fills: Vec<(HotMiss, HotFill)>,
    /// Databases found unavailable by an [`OnFailure::Omit`] batch: the rest of the read
    /// leaves them out.
    unavailable: BTreeSet<usize>,
}

/// One read in progress: its request, its configuration, what it noted so far, and the I/O
/// each step goes through.
struct Reading<'io, R, Io> {
    io: &'io Io,
    req: FeedQuery,
    now: i64,
    cfg: ReadConfig,
    effects: RefCell<Effects>,
    rows: PhantomData<fn() -> R>,
}

type Page<R> = PageBuilder<R>;

/// How many candidates to ask for next: the room left plus a margin for filtered ones,
/// within what is left of the scan budget.
fn batch_size<R>(page: &Page<R>, budget: usize) -> usize {
    (page.room() + page.room() / 2 + 4).min(budget.saturating_sub(page.scanned)).max(1)
}

impl<R: FeedRow, Io: FeedIo<R>> Reading<'_, R, Io> {
    /// Runs a step without the [`OnFailure::Omit`] batches of databases already found
    /// unavailable (their answers come back empty, in place), and notes the ones it finds.
    async fn run(&self, mut step: Step) -> Result<Replies<R>, Io::Error> {
        let skipped: Vec<bool> = step
            .batches
            .iter()
            .map(|b| b.on_failure == OnFailure::Omit && self.is_unavailable(b.database))
            .collect();
        let mut kept = skipped.iter().map(|skip| !skip);
        step.batches.retain(|_| kept.next().unwrap_or(true));
        let mut replies = self.io.run(step).await?;
        if skipped.contains(&true) {
            let mut answers = std::mem::take(&mut replies.batches).into_iter();
            replies.batches = skipped
                .iter()
                .map(|&skip| if skip { Vec::new() } else { answers.next().unwrap_or_default() })
                .collect();
        }
        self.effects.borrow_mut().unavailable.extend(replies.unavailable.iter().copied());
        Ok(replies)
    }

    fn database_of(&self, user: UserId) -> usize {
        self.cfg.map.database(shard_of_id(user.get()))
    }

    fn home_database(&self) -> usize {
        self.database_of(self.req.viewer)
    }

    fn is_unavailable(&self, database: usize) -> bool {
        self.effects.borrow().unavailable.contains(&database)
    }

    /// Whether `author`'s posts are left out: their database was unavailable.
    fn left_out(&self, author: UserId) -> bool {
        self.is_unavailable(self.database_of(author))
    }

    /// The authors of the scope (and the viewer, on the home feed) whose database was
    /// unavailable, by id.
    fn unavailable_authors(&self, reader: &Reader) -> Vec<UserId> {
        let mut out: Vec<UserId> = self.sources(reader).into_iter().filter(|a| self.left_out(*a)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The authors of the scope, and the viewer on the home feed.
    fn sources(&self, reader: &Reader) -> Vec<UserId> {
        let scope = &self.req.scope;
        let followed = reader.edges.iter().filter(|e| scope.holds(e)).map(|e| e.author);
        let own = (*scope == FeedScope::Home).then_some(reader.viewer);
        followed.chain(own).collect()
    }

    /// A batch of the reader's own rows, on their home database.
    fn home_batch(&self, statements: Vec<Statement>, on_failure: OnFailure) -> DbBatch {
        DbBatch { database: self.home_database(), statements, on_failure }
    }

    /// The reader, from a step whose first batch ends with the reader's edges.
    fn reader_of(&self, replies: &mut Replies<R>) -> Reader {
        let (edges, tags) =
            replies.batches.get_mut(0).and_then(|b| b.pop()).map(Rows::edges).unwrap_or_default();
        Reader::new(self.req.viewer, edges).with_tags(tags)
    }

    fn count_duplicates(&self, n: i64) {
        self.effects.borrow_mut().duplicates += n;
    }

    /// The reader's edges for a feed without a window (group, list): one statement.
    async fn load_reader(&self) -> Result<Reader, Io::Error> {
        let edges = vec![Statement::Edges { list: self.req.scope.list(), tags: false }];
        let mut replies = self.run(Step::batches(vec![self.home_batch(edges, OnFailure::Fail)])).await?;
        Ok(self.reader_of(&mut replies))
    }

    /// A full pull of posts over the scope's authors (each row with its relationship).
    fn posts_pull(&self, reader: &Reader, spec: PullSpec) -> FullPull<R, R> {
        let scopes = full_scope(reader.viewer, &reader.edges, &self.req.scope, &self.cfg.map);
        FullPull::new(spec, scopes, Rows::posts, R::key)
    }

    fn posts_spec(&self, after: Option<SortKey>, before: SortKey, limit: usize) -> PullSpec {
        PullSpec { rows: SlabRows::Posts, after, before, limit, now: self.now, on_failure: OnFailure::Omit }
    }

    /// Runs a full pull's remaining steps; `false` when a degradable step failed. An omissible
    /// pull goes on without the databases found unavailable (before or during it).
    async fn pull_through<T>(&self, pull: &mut FullPull<R, T>) -> Result<bool, Io::Error> {
        loop {
            if pull.on_failure() == OnFailure::Omit {
                self.effects.borrow().unavailable.iter().for_each(|&database| pull.omit(database));
            }
            if pull.is_done() {
                return Ok(true);
            }
            let statements = pull.statements();
            let on_failure = pull.on_failure();
            let batches = statements
                .iter()
                .map(|(database, s)| DbBatch { database: *database, statements: vec![s.clone()], on_failure })
                .collect();
            let mut replies = self.run(Step::batches(batches)).await?;
            if replies.failed {
                return Ok(false);
            }
            for (i, (database, _)) in statements.iter().enumerate() {
                if replies.unavailable.contains(database) {
                    continue;
                }
                let rows = replies.batches.get_mut(i).and_then(|b| b.pop()).unwrap_or(Rows::Done);
                pull.absorb(*database, rows);
            }
        }
    }

    /// A pull's rows merged, each row's relationship (read with it) taking its follow from
    /// the reader's side of the edge.
    fn pulled_rows(reader: &Reader, pull: FullPull<R, R>) -> (Vec<R>, bool) {
        let (mut rows, exhausted) = pull.merged();
        for row in &mut rows {
            let read = row.relation();
            row.attach(&AuthorRelation { follows: reader.follows(read.author), ..read });
        }
        (rows, exhausted)
    }

    /// Everything the scope holds in `(after, before)`, newest first, at most `limit`, and
    /// whether every database is exhausted.
    async fn full_pull(
        &self,
        reader: &Reader,
        after: Option<SortKey>,
        before: SortKey,
        limit: usize,
    ) -> Result<(Vec<R>, bool), Io::Error> {
        let mut pull = self.posts_pull(reader, self.posts_spec(after, before, limit));
        self.pull_through(&mut pull).await?;
        Ok(Self::pulled_rows(reader, pull))
    }

    async fn page(self) -> Result<Finished<R>, Io::Error> {
        let limit = self.req.limit;
        let Some(after) = self.req.after else {
            let mut page = PageBuilder::new(limit).hiding(self.hide_rule());
            let (exhausted, state, reader) = self.read_down(&mut page).await?;
            let next = next_cursor_key(&page, exhausted);
            return Ok(self.finish(page, (next, None, state), &reader));
        };
        let mut page = PageBuilder::new(limit + 1).hiding(self.hide_rule());
        let (state, reader) = self.read_up(after, &mut page).await?;
        let gap = page.items.len() > limit;
        page.items.truncate(limit);
        let next = if gap { page.items.last().map(R::key) } else { None };
        Ok(self.finish(page, (next, Some(gap), state), &reader))
    }

    /// The viewer's `hide` filters as the page's rule, when there are any.
    fn hide_rule(&self) -> Option<HideRule<R>> {
        let filters = self.req.filters.clone().filter(|f| !f.is_empty())?;
        let viewer = self.req.viewer;
        // Never the viewer's own posts (as Mastodon).
        let hides = move |row: &R| {
            row.author() != viewer
                && row.filter_subject().is_some_and(|(id, texts)| {
                    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                    filters.hides(Subject { id, texts: &texts })
                })
        };
        Some(HideRule(Rc::new(hides)))
    }

    fn finish(
        self,
        mut page: Page<R>,
        (next, gap, state): (Option<SortKey>, Option<bool>, FeedState),
        reader: &Reader,
    ) -> Finished<R> {
        let q = &self.req;
        let newest = page.items.first().map(R::key).or(q.after).unwrap_or(SortKey::BOTTOM);
        let empty_reason = page.items.is_empty().then(|| {
            // The reader's edges are known from the first wave: no extra read.
            let ask = page.scanned == 0 && state == FeedState::Ok && q.after.is_none();
            let follows_anyone = ask.then(|| reader.follows_anyone(&q.scope));
            empty_reason(page.scanned, state, follows_anyone)
        });
        let short = page.items.len() < q.limit && next.is_some();
        let unavailable = self.unavailable_authors(reader);
        let sources = self.sources(reader);
        let followed_tags = reader.tags.clone();
        let effects = self.effects.into_inner();
        Finished {
            items: std::mem::take(&mut page.items),
            next_below_floor: effects.below_floor && next.is_some(),
            next,
            newest,
            state,
            gap,
            empty_reason,
            scanned: page.scanned,
            hidden: page.hidden,
            short,
            duplicates: effects.duplicates,
            report: effects.report,
            hot_fills: effects.hot_fills,
            unavailable,
            sources,
            followed_tags,
        }
    }
}
