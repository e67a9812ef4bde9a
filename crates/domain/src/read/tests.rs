//! The read run against a fake world: its [`FeedIo`] answers every step from a fake D1 (posts,
//! edges, relationships, unfinished outbox events), a fake window object and a fake hot-range
//! cache, so each scenario checks the page and counts what it cost.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use futures_executor::block_on;

use super::*;
use crate::hot::HotRange;
use crate::ids::PostId;
use crate::plan::{Bounds, InFlight};
use crate::snowflake::snowflake_in;
use crate::snowflake::LogicalShard;
use crate::tags::FollowedTags;
use crate::visibility::{Relationship, Visibility};
use crate::window::{Entry, WindowOp, WindowReply};

const NOW: i64 = 1_796_026_502_123;
const MINUTE: i64 = 60_000;
const DAY: i64 = 24 * 60 * MINUTE;
const IN_FLIGHT_MS: i64 = 120_000;

#[derive(Debug, Clone)]
struct Row {
    key: SortKey,
    author: UserId,
    visibility: Visibility,
    relation: Option<AuthorRelation>,
    liked: bool,
    /// Its text, when its tags may admit it (a public, listed post).
    tag_text: Option<&'static str>,
}

impl FeedRow for Row {
    fn key(&self) -> SortKey {
        self.key
    }

    fn author(&self) -> UserId {
        self.author
    }

    fn live_state(&self, viewer: UserId) -> LiveState {
        let r = self.relation();
        let relationship = Relationship {
            is_self: self.author == viewer,
            follows: r.follows,
            blocked: r.blocked,
            suspended: r.suspended,
        };
        LiveState::of(relationship, self.visibility, false)
    }

    fn tag_text(&self) -> Option<&str> {
        self.tag_text
    }

    fn attach(&mut self, relation: &AuthorRelation) {
        self.relation = Some(*relation);
    }

    fn set_liked_by_me(&mut self, liked: bool) {
        self.liked = liked;
    }

    fn relation(&self) -> AuthorRelation {
        self.relation.unwrap_or(AuthorRelation {
            author: self.author,
            follows: false,
            blocked: false,
            suspended: false,
        })
    }
}

#[derive(Debug, Clone)]
struct Post {
    key: SortKey,
    author: UserId,
    visibility: Visibility,
    deleted: bool,
    text: Option<&'static str>,
}

impl Post {
    fn row(&self) -> Row {
        let (key, author, visibility) = (self.key, self.author, self.visibility);
        Row { key, author, visibility, relation: None, liked: false, tag_text: self.text }
    }

    fn entry(&self) -> Entry {
        Entry {
            created_at: self.key.primary,
            post_id: PostId::from_trusted(self.key.id),
            author_id: self.author,
            version: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct Window {
    initialized: bool,
    floor: SortKey,
    entries: Vec<Entry>,
}

/// A fake D1 + window + cache that answers the read's steps.
struct World {
    viewer: UserId,
    databases: usize,
    mode: FanoutMode,
    edges: Vec<ReaderEdge>,
    posts: Vec<Post>,
    blocked: Vec<UserId>,
    /// Oldest unfinished post event per author (a stalled fan-out).
    unfinished: Vec<(UserId, i64)>,
    /// `None`: the window object fails.
    window: Option<Window>,
    hot: HotFound,
    budget: usize,
    /// Databases in an outage: their batches fail.
    down: Vec<usize>,
    /// Authors with replicas (and how many); `replicas_down`: every replica read fails.
    replicated: HashMap<UserId, u32>,
    replicas_down: bool,
    /// Posts the viewer likes (the liker's side).
    liked: Vec<PostId>,
    /// The tags the viewer follows (and whom they mute), read with the edges.
    followed_tags: FollowedTags,
}

/// A user on a logical shard (the even 4-database map: shards 0-63 on database 0, 64-127 on 1...).
fn user(shard: u8, n: u64) -> UserId {
    UserId::from_trusted(snowflake_in(NOW - 100 * DAY, LogicalShard::new(shard), n).unwrap_or(1))
}

fn edge(author: UserId, push: bool, pull: bool) -> ReaderEdge {
    ReaderEdge { author, push, pull, group: None, in_list: false, backfilling: false }
}

impl World {
    fn new(viewer: UserId, databases: usize) -> Self {
        World {
            viewer,
            databases,
            mode: FanoutMode::Push,
            edges: Vec::new(),
            posts: Vec::new(),
            blocked: Vec::new(),
            unfinished: Vec::new(),
            window: Some(Window { initialized: true, floor: SortKey::BOTTOM, entries: Vec::new() }),
            hot: HotFound::default(),
            budget: 400,
            down: Vec::new(),
            replicated: HashMap::new(),
            replicas_down: false,
            liked: Vec::new(),
            followed_tags: FollowedTags::default(),
        }
    }

    /// `n` posts of `author`, `gap` ms apart, the newest `age` ms old; returns their keys, newest first.
    fn publish(&mut self, author: UserId, n: usize, age: i64, gap: i64) -> Vec<SortKey> {
        let shard = crate::snowflake::shard_of_id(author.get());
        let mut keys = Vec::new();
        for i in 0..n {
            let at = NOW - age - gap * i as i64;
            let id = snowflake_in(at, shard, (self.posts.len() % 8) as u64).unwrap_or(1);
            let key = SortKey::new(at, id);
            self.posts.push(Post { key, author, visibility: Visibility::Public, deleted: false, text: None });
            keys.push(key);
        }
        self.posts.sort_by_key(|p| std::cmp::Reverse(p.key));
        keys
    }

    /// Delivers the posts of `authors` (pushed) into the window, everything at or above `floor`.
    fn deliver(&mut self, authors: &[UserId], floor: SortKey) {
        let entries = self
            .posts
            .iter()
            .filter(|p| authors.contains(&p.author) && p.key >= floor)
            .map(Post::entry)
            .collect();
        self.window = Some(Window { initialized: true, floor, entries });
    }

    fn config(&self) -> ReadConfig {
        ReadConfig {
            mode: self.mode,
            window_cap: 800,
            scan_budget: self.budget,
            in_flight_ms: IN_FLIGHT_MS,
            ids_per_statement: 90,
            hot_range_len: 50,
            map: ShardMap::even(self.databases),
            replicated: Rc::new(self.replicated.clone()),
        }
    }

    /// A replica's answer: it holds every live post of its author.
    fn replica(&self, call: &ReplicaCall) -> Option<ReplicaRows<Row>> {
        if self.replicas_down {
            return None;
        }
        let q = &call.query;
        let live = || self.posts.iter().filter(|p| p.author == call.author && !p.deleted);
        let mut posts: Vec<&Post> = live().filter(|p| p.key > q.after && p.key < q.before).collect();
        posts.sort_by_key(|p| std::cmp::Reverse(p.key));
        let found = live().filter(|p| q.ids.iter().any(|i| i.get() == p.key.id)).map(Post::row).collect();
        Some(ReplicaRows {
            posts: posts.into_iter().take(q.limit).map(Post::row).collect(),
            found,
            complete: true,
            unknown: Vec::new(),
            blocks_viewer: self.blocked.contains(&call.author),
            suspended: false,
        })
    }

    fn visible_posts(
        &self,
        authors: &[UserId],
        (lower, upper): (SortKey, SortKey),
        since: i64,
    ) -> Vec<&Post> {
        self.posts
            .iter()
            .filter(|p| authors.contains(&p.author) && !p.deleted && p.key > lower && p.key < upper)
            .filter(|p| {
                p.key.primary >= since && (p.author == self.viewer || p.visibility != Visibility::Private)
            })
            .collect()
    }

    /// Each author's top `limit` in the bounds from their `since`, merged, top `limit`.
    fn top_each(&self, reads: &[(UserId, i64)], bounds: &Bounds) -> Vec<Row> {
        let mut rows: Vec<&Post> = Vec::new();
        for (author, since) in reads {
            let found = self.visible_posts(&[*author], (bounds.after, bounds.before), *since);
            rows.extend(found.into_iter().take(bounds.limit));
        }
        rows.sort_by_key(|p| std::cmp::Reverse(p.key));
        rows.into_iter().take(bounds.limit).map(Post::row).collect()
    }

    fn in_flight_since(&self, read: &InFlight) -> i64 {
        let oldest = self.unfinished.iter().find(|(a, _)| *a == read.author).map(|(_, t)| *t);
        match oldest {
            Some(t) if read.outbox_horizon => t.min(read.since),
            _ => read.since,
        }
    }

    /// The viewer's relationship to `author` as the author's database has it (the follow is
    /// the reader's side's, set by the read).
    fn relation(&self, author: UserId) -> AuthorRelation {
        AuthorRelation { author, follows: false, blocked: self.blocked.contains(&author), suspended: false }
    }

    fn answer(&self, statement: &Statement) -> Rows<Row> {
        match statement {
            Statement::Edges { tags, .. } => {
                let followed = if *tags { self.followed_tags.clone() } else { FollowedTags::default() };
                Rows::Edges(self.edges.clone(), followed)
            }
            Statement::Activate | Statement::HotAuthors { .. } => Rows::Done,
            Statement::Addressed { .. } => Rows::Entries(Vec::new()),
            Statement::LikedIn { lo, hi } => {
                Rows::Liked(self.liked.iter().filter(|id| (*lo..=*hi).contains(&id.get())).copied().collect())
            }
            Statement::Pulled { authors, bounds } => {
                let reads: Vec<_> = authors.iter().map(|a| (*a, -1)).collect();
                Rows::Posts(self.top_each(&reads, bounds))
            }
            Statement::InFlight { reads, bounds } => {
                let reads: Vec<_> = reads.iter().map(|r| (r.author, self.in_flight_since(r))).collect();
                Rows::Posts(self.top_each(&reads, bounds))
            }
            Statement::Hydrate { ids } => Rows::Posts(
                self.posts
                    .iter()
                    .filter(|p| !p.deleted && ids.iter().any(|i| i.get() == p.key.id))
                    .map(Post::row)
                    .collect(),
            ),
            Statement::Relationships { authors } => {
                Rows::Relationships(authors.iter().map(|a| self.relation(*a)).collect())
            }
            Statement::HotRange { author, below } => Rows::Entries(
                self.posts
                    .iter()
                    .filter(|p| p.author == *author && p.key.primary < *below)
                    .take(50)
                    .map(Post::entry)
                    .collect(),
            ),
            Statement::Slab(slab) => {
                let found = self.visible_posts(&slab.authors, (slab.lower, slab.upper), slab.start);
                let found = found.into_iter().take(slab.limit);
                match slab.rows {
                    SlabRows::Posts => Rows::Posts(
                        found.map(|p| Row { relation: Some(self.relation(p.author)), ..p.row() }).collect(),
                    ),
                    SlabRows::Entries => Rows::Entries(found.map(Post::entry).collect()),
                }
            }
        }
    }

    fn call_window(&mut self, op: &WindowOp) -> Option<WindowReply> {
        let window = self.window.as_mut()?;
        let mut reply = WindowReply { initialized: window.initialized, ..WindowReply::default() };
        if !window.initialized {
            if let WindowOp::Init { entries, complete, .. } = op {
                window.floor = if *complete {
                    SortKey::BOTTOM
                } else {
                    entries.last().map_or(SortKey::BOTTOM, Entry::key)
                };
                window.entries = entries.clone();
                window.initialized = true;
            }
            return Some(reply);
        }
        reply.floor = Some(window.floor);
        reply.entries = match op {
            WindowOp::Older { before, limit, .. } => {
                window.entries.iter().filter(|e| e.key() < *before).take(*limit).copied().collect()
            }
            WindowOp::Newer { after, limit, .. } => {
                window.entries.iter().filter(|e| e.key() > *after).take(*limit).copied().collect()
            }
            _ => Vec::new(),
        };
        Some(reply)
    }
}

/// What a read cost.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Cost {
    /// Sequential storage waits (window calls and D1 batches).
    waves: usize,
    /// D1 statements per database.
    statements: BTreeMap<usize, usize>,
    window_calls: usize,
    replica_calls: usize,
}

/// The fake world as the read's I/O: each step answered from it at once, and counted.
struct Fake<'w> {
    world: RefCell<&'w mut World>,
    cost: RefCell<Cost>,
    steps: Cell<usize>,
}

impl FeedIo<Row> for Fake<'_> {
    /// The read failed (a batch that may not fail did), or it ran away.
    type Error = String;

    async fn run(&self, step: Step) -> Result<Replies<Row>, String> {
        self.steps.set(self.steps.get() + 1);
        if self.steps.get() > 100 {
            return Err("more than 100 steps".into());
        }
        self.count(&step);
        self.world.borrow_mut().reply(&step)
    }
}

impl Fake<'_> {
    fn count(&self, step: &Step) {
        let mut cost = self.cost.borrow_mut();
        cost.waves += step.waits();
        for (database, n) in step.statements() {
            *cost.statements.entry(database).or_default() += n;
        }
        cost.window_calls += usize::from(step.window.is_some());
        cost.replica_calls += step.replicas.len();
    }
}

impl World {
    /// What a step returns; a batch on a database that is down answers by its `on_failure`.
    fn reply(&mut self, step: &Step) -> Result<Replies<Row>, String> {
        let mut replies = Replies::default();
        if let Some((op, _)) = &step.window {
            replies.window = self.call_window(op);
            replies.failed = replies.window.is_none();
        }
        if step.hot_lookup.is_some() {
            replies.hot = self.hot.clone();
        }
        replies.replicas = step.replicas.iter().map(|call| self.replica(call)).collect();
        for b in &step.batches {
            if !self.down.contains(&b.database) {
                replies.batches.push(b.statements.iter().map(|s| self.answer(s)).collect());
                continue;
            }
            match b.on_failure {
                OnFailure::Fail => return Err(format!("the read fails: DB_{} is down", b.database)),
                OnFailure::Degrade => replies.failed = true,
                OnFailure::Omit => replies.unavailable.push(b.database),
            }
            replies.batches.push(Vec::new());
        }
        Ok(replies)
    }
}

/// Reads one page from the world: the page, or the read's error; and what it cost.
fn try_run(world: &mut World, request: FeedQuery) -> (Result<Finished<Row>, String>, Cost) {
    let config = world.config();
    let fake = Fake { world: RefCell::new(world), cost: RefCell::default(), steps: Cell::new(0) };
    let done = block_on(read(&fake, request, NOW, config));
    (done, fake.cost.into_inner())
}

fn run(world: &mut World, request: FeedQuery) -> (Finished<Row>, Cost) {
    match try_run(world, request) {
        (Ok(done), cost) => (done, cost),
        (Err(e), _) => panic!("{e}"),
    }
}

fn read_home(world: &mut World, limit: usize) -> (Finished<Row>, Cost) {
    let request = home(world.viewer, limit);
    run(world, request)
}

fn home(viewer: UserId, limit: usize) -> FeedQuery {
    FeedQuery {
        viewer,
        limit,
        before: None,
        below_floor: false,
        after: None,
        scope: FeedScope::Home,
        filters: None,
    }
}

fn keys(done: &Finished<Row>) -> Vec<SortKey> {
    done.items.iter().map(|r| r.key).collect()
}

fn stmts(pairs: &[(usize, usize)]) -> BTreeMap<usize, usize> {
    pairs.iter().copied().collect()
}

/// A reader (on database 0) who follows two pushed authors (databases 1 and 3 of 4), whose
/// window holds all of their posts.
fn warm_push(databases: usize) -> (World, Vec<SortKey>) {
    let viewer = user(0, 0);
    let (a, b) = (user(70, 1), user(200, 2));
    let mut world = World::new(viewer, databases);
    world.edges = vec![edge(a, true, false), edge(b, true, false)];
    let mut all = world.publish(a, 6, 10 * MINUTE, MINUTE);
    all.extend(world.publish(b, 6, 10 * MINUTE + 30_000, MINUTE));
    all.sort_by_key(|k| std::cmp::Reverse(*k));
    world.deliver(&[a, b], SortKey::BOTTOM);
    (world, all)
}

#[test]
fn warm_push_page_is_the_window_hydrated_in_two_waves() {
    let (mut world, all) = warm_push(1);
    let (done, cost) = read_home(&mut world, 5);
    assert_eq!(keys(&done), all[..5]);
    assert_eq!(done.next, Some(all[4]));
    assert_eq!((done.state, done.gap, done.empty_reason), (FeedState::Ok, None, None));
    let expected = Cost { waves: 2, statements: stmts(&[(0, 4)]), window_calls: 1, replica_calls: 0 };
    assert_eq!(cost, expected, "edges; in-flight, hydration, relationships");
    let (mut world, _) = warm_push(4);
    let (_, cost) = read_home(&mut world, 5);
    assert_eq!(
        cost.statements,
        stmts(&[(0, 3), (1, 3), (3, 3)]),
        "edges + viewer's in-flight and relationship"
    );
    assert_eq!(cost.waves, 2);
}

/// [`warm_push`] with a stranger's post (database 2) delivered into the window by a tag the
/// reader follows, between the followed authors' posts; and its key.
fn with_tagged_stranger(world: &mut World, visibility: Visibility) -> SortKey {
    let stranger = user(140, 3);
    let key = world.publish(stranger, 1, 10 * MINUTE + 15_000, MINUTE)[0];
    if let Some(post) = world.posts.iter_mut().find(|p| p.key == key) {
        post.text = (visibility == Visibility::Public).then_some("a post #Rust");
        post.visibility = visibility;
    }
    let entry = world.posts.iter().find(|p| p.key == key).map(Post::entry);
    if let (Some(window), Some(entry)) = (world.window.as_mut(), entry) {
        window.entries.push(entry);
        window.entries.sort_by_key(|e| std::cmp::Reverse(e.key()));
    }
    key
}

#[test]
fn a_followed_tag_admits_a_strangers_window_entry_checked_now_at_no_extra_cost() {
    let (mut world, all) = warm_push(4);
    let tagged = with_tagged_stranger(&mut world, Visibility::Public);
    let stranger = world.posts.iter().find(|p| p.key == tagged).map(|p| p.author).unwrap_or(world.viewer);
    let (unfollowed, _) = read_home(&mut world, 13);
    assert_eq!(keys(&unfollowed), all, "without the tag followed the entry is hidden");
    assert_eq!(unfollowed.hidden, vec![Hidden::Unfollowed]);

    world.followed_tags = FollowedTags::new([("rust".to_string(), 0)], []);
    let (done, cost) = read_home(&mut world, 13);
    let mut expected: Vec<SortKey> = all.clone();
    expected.push(tagged);
    expected.sort_by_key(|k| std::cmp::Reverse(*k));
    assert_eq!(keys(&done), expected, "shown in order, once");
    // The tags come with the edges (one statement), the stranger's row and relationship with
    // the round's batch on its database: two waves as any warm page.
    assert_eq!(cost.waves, 2);
    assert_eq!(cost.statements, stmts(&[(0, 3), (1, 3), (2, 2), (3, 3)]));

    world.followed_tags = FollowedTags::new([("rust".to_string(), 0)], [stranger]);
    let (muted, _) = read_home(&mut world, 13);
    assert_eq!((keys(&muted), muted.hidden.clone()), (all.clone(), vec![Hidden::Muted]));
    world.followed_tags = FollowedTags::new([("rust".to_string(), 0)], []);
    world.blocked.push(stranger);
    let (blocked, _) = read_home(&mut world, 13);
    assert_eq!((keys(&blocked), blocked.hidden.clone()), (all.clone(), vec![Hidden::Blocked]));
}

#[test]
fn a_followed_tag_never_opens_a_post_that_is_not_public() {
    let (mut world, all) = warm_push(4);
    with_tagged_stranger(&mut world, Visibility::Followers);
    world.followed_tags = FollowedTags::new([("rust".to_string(), 0)], []);
    let (done, _) = read_home(&mut world, 13);
    assert_eq!(keys(&done), all);
}

#[test]
fn a_second_page_continues_below_the_cursor_and_the_last_one_ends() {
    let (mut world, all) = warm_push(4);
    let (first, _) = read_home(&mut world, 5);
    let mut next = home(world.viewer, 5);
    next.before = first.next;
    let (second, _) = run(&mut world, next.clone());
    assert_eq!(keys(&second), all[5..10]);
    next.before = second.next;
    let (last, cost) = run(&mut world, next);
    assert_eq!(keys(&last), all[10..]);
    assert_eq!(last.next, None, "every source exhausted");
    assert_eq!(cost.waves, 2, "nothing is pulled below a window complete to the bottom");
}

#[test]
fn pull_mode_merges_the_full_pull_beside_the_window() {
    let (mut world, all) = warm_push(4);
    world.mode = FanoutMode::Pull;
    world.window = Some(Window { initialized: true, floor: SortKey::BOTTOM, entries: Vec::new() });
    let (done, cost) = read_home(&mut world, 5);
    assert_eq!(keys(&done), all[..5]);
    assert_eq!(done.next, Some(all[4]));
    // The first wave, then the round with the pull's first slab in the same batches: the
    // authors' posts in that one-hour slab fill the page, so the viewer's database (no posts)
    // does not widen on its own, and the rows carry their relationships.
    assert_eq!(cost.waves, 1 + 1);
}

/// A reader with one pushed author (database 1) and one pulled author (database 3).
fn hybrid() -> (World, UserId, Vec<SortKey>) {
    let viewer = user(0, 0);
    let (pushed, pulled) = (user(70, 1), user(200, 2));
    let mut world = World::new(viewer, 4);
    world.mode = FanoutMode::Hybrid;
    world.edges = vec![edge(pushed, true, false), edge(pulled, false, true)];
    let mut all = world.publish(pushed, 4, 10 * MINUTE, MINUTE);
    all.extend(world.publish(pulled, 4, 10 * MINUTE + 30_000, MINUTE));
    all.sort_by_key(|k| std::cmp::Reverse(*k));
    world.deliver(&[pushed], SortKey::BOTTOM);
    (world, pulled, all)
}

#[test]
fn hybrid_merges_pulled_and_pushed_edges_and_refills_the_cache() {
    let (mut world, pulled, all) = hybrid();
    world.hot.misses = vec![HotMiss::Reader { reader: world.viewer }];
    let (done, cost) = read_home(&mut world, 6);
    assert_eq!(keys(&done), all[..6]);
    assert_eq!(cost.waves, 2);
    // Database 3: the pulled author's top n, relationships, and the reader's hot authors.
    assert_eq!(cost.statements.get(&3), Some(&3));
    assert_eq!(done.hot_fills, vec![(HotMiss::Reader { reader: world.viewer }, HotFill::Reader(Vec::new()))]);
    // A range miss is read on its author's database in the same batch and stored.
    let below = crate::hot::boundary_at(NOW, IN_FLIGHT_MS);
    world.hot.misses = vec![HotMiss::Range { author: pulled, below }];
    let (done, cost) = read_home(&mut world, 6);
    assert_eq!(cost.waves, 2);
    assert_eq!(cost.statements.get(&3), Some(&3));
    assert!(matches!(&done.hot_fills[..], [(_, HotFill::Range(r))] if r.entries.len() == 4 && !r.full));
}

#[test]
fn hybrid_cache_hit_serves_the_pulled_author_below_the_boundary() {
    let (mut world, pulled, all) = hybrid();
    let below = crate::hot::boundary_at(NOW, IN_FLIGHT_MS);
    let entries = world.posts.iter().filter(|p| p.author == pulled).map(Post::entry).collect();
    world.hot.ranges = vec![HotRange { author: pulled, below, entries, full: false }];
    let (done, cost) = read_home(&mut world, 6);
    assert_eq!(keys(&done), all[..6], "the cached range's entries, hydrated");
    assert_eq!(cost.waves, 2);
    assert!(done.hot_fills.is_empty());
    // The pulled author is read only from the boundary up (in flight) and its cached entries
    // hydrated: in-flight, hydration, relationships.
    assert_eq!(cost.statements.get(&3), Some(&3));
}

#[test]
fn a_replicated_author_puts_nothing_on_its_database_and_a_failed_replica_falls_back() {
    for mode in [FanoutMode::Hybrid, FanoutMode::Push] {
        let (mut world, pulled, all) = hybrid();
        world.mode = mode;
        if mode == FanoutMode::Push {
            let pushed = world.edges[0].author;
            world.deliver(&[pushed, pulled], SortKey::BOTTOM);
        }
        world.replicated.insert(pulled, 3);
        let liked = world.posts.iter().find(|p| p.author == pulled).map(|p| PostId::from_trusted(p.key.id));
        world.liked.extend(liked);
        let (done, cost) = read_home(&mut world, 6);
        assert_eq!(keys(&done), all[..6], "{mode:?}");
        let marked: Vec<i64> = done.items.iter().filter(|r| r.liked).map(|r| r.key.id).collect();
        assert_eq!(
            marked,
            world.liked.iter().map(|id| id.get()).collect::<Vec<_>>(),
            "liked_by_me from the reader's side"
        );
        assert_eq!(cost.statements.get(&3), None, "{mode:?}: the replicated author's database is not read");
        assert_eq!(cost.replica_calls, 1);
        assert_eq!(cost.waves, 2, "the replica is read beside the batches");
        // A block by the replicated author (the replica's list) hides its posts.
        world.blocked.push(pulled);
        let (done, _) = read_home(&mut world, 6);
        assert!(done.items.iter().all(|r| r.author != pulled), "{mode:?}");
        world.blocked.clear();
        // Every replica failing: the same page, the author read from its database instead.
        world.replicas_down = true;
        let (done, cost) = read_home(&mut world, 6);
        assert_eq!(keys(&done), all[..6], "{mode:?}");
        assert!(cost.statements.get(&3).is_some_and(|n| *n > 0));
        assert_eq!(cost.waves, 3, "the fallback is one more wave");
    }
}

#[test]
fn a_new_reader_gets_a_window_built_from_a_snapshot() {
    let (mut world, all) = warm_push(4);
    world.window = Some(Window { initialized: false, floor: SortKey::TOP, entries: Vec::new() });
    let (done, cost) = read_home(&mut world, 5);
    assert_eq!(keys(&done), all[..5]);
    assert!(world.window.as_ref().is_some_and(|w| w.initialized && w.entries.len() == all.len()));
    // First wave; activation + edges; the snapshot's first slab (posts are minutes old: the
    // one-hour slab has them all but is not the bottom) and the rest down to everything;
    // Init; the re-read; the round.
    assert_eq!(cost.window_calls, 3);
    assert_eq!(cost.waves, 1 + 1 + 6 + 1 + 1 + 1);
    assert_eq!(done.state, FeedState::Ok);
}

#[test]
fn deep_scroll_past_the_floor_pulls_through_the_slabs() {
    let (mut world, all) = warm_push(4);
    let floor = all[3];
    world.deliver(&[user(70, 1), user(200, 2)], floor);
    let mut request = home(world.viewer, 5);
    request.before = Some(all[2]);
    let (done, cost) = run(&mut world, request);
    assert_eq!(keys(&done), all[3..8], "the floor's entry from the window, the rest from D1");
    assert_eq!(done.next, Some(all[7]));
    assert!(done.next_below_floor, "the next cursor says it is below the floor");
    // First wave, one round, then the pull below the floor: the two authors' databases hold
    // the page's rows in their one-hour slab together (neither alone), with relationships.
    assert_eq!(cost.waves, 1 + 1 + 1);
}

#[test]
fn a_cursor_marked_below_the_floor_skips_the_window_with_the_same_page() {
    let (mut world, request) = deep_cursor();
    let (asked, asked_cost) = run(&mut world, request.clone());
    let (marked, marked_cost) = run(&mut world, FeedQuery { below_floor: true, ..request });
    assert_eq!(keys(&marked), keys(&asked));
    assert_eq!((marked.next, marked.next_below_floor), (asked.next, asked.next_below_floor));
    assert!(marked.next_below_floor);
    assert_eq!((asked_cost.window_calls, marked_cost.window_calls), (1, 0));
    // Edges, then one slab on every database: no more waves than a page inside the window.
    assert_eq!(marked_cost.waves, 2);
    // A failing window does not matter to a marked page: it never asks.
    world.window = None;
    let (still, _) = run(&mut world, FeedQuery { below_floor: true, ..deep_cursor().1 });
    assert_eq!((keys(&still), still.state), (keys(&marked), FeedState::Ok));
}

/// A reader (database 0, two posts of their own) following a prolific author (database 1),
/// a sparse one (database 2) and one who posted long ago (database 3), one blocked; the window
/// holds everything at or above `all[floor]`. Returns every key the reader may see,
/// newest first.
fn mixed_densities(floor: usize) -> (World, Vec<SortKey>) {
    let viewer = user(0, 0);
    let (dense, sparse, old, blocked) = (user(70, 1), user(140, 2), user(200, 3), user(210, 4));
    let mut world = World::new(viewer, 4);
    world.edges = [dense, sparse, old, blocked].iter().map(|a| edge(*a, true, false)).collect();
    let mut all = world.publish(viewer, 2, 3 * MINUTE, 7 * 60 * MINUTE);
    all.extend(world.publish(dense, 30, MINUTE, 2 * MINUTE));
    all.extend(world.publish(sparse, 6, 30 * MINUTE, 5 * 60 * MINUTE));
    all.extend(world.publish(old, 3, 400 * DAY, 20 * DAY));
    world.publish(blocked, 4, 5 * MINUTE, 45 * MINUTE);
    world.blocked = vec![blocked];
    all.sort_by_key(|k| std::cmp::Reverse(*k));
    world.deliver(&[viewer, dense, sparse, old, blocked], all[floor]);
    (world, all)
}

/// Follows `next` cursors from the first page; `marks` carries each page's below-the-floor
/// mark into the next request. Returns the keys seen and the window calls made.
fn scroll(world: &mut World, limit: usize, marks: bool) -> (Vec<SortKey>, usize) {
    let mut request = home(world.viewer, limit);
    let (mut seen, mut calls) = (Vec::new(), 0);
    loop {
        let (page, cost) = run(world, request.clone());
        seen.extend(keys(&page));
        calls += cost.window_calls;
        let Some(next) = page.next else { return (seen, calls) };
        request.before = Some(next);
        request.below_floor = marks && page.next_below_floor;
    }
}

#[test]
fn a_full_scroll_below_the_floor_is_exact_whatever_the_marks() {
    for floor in [0, 5, 20, 35] {
        let (mut world, all) = mixed_densities(floor);
        let (marked, marked_calls) = scroll(&mut world, 7, true);
        assert_eq!(marked, all, "floor at {floor}: every post once, in order, the blocked one's never");
        let (asked, asked_calls) = scroll(&mut world, 7, false);
        assert_eq!(asked, all, "floor at {floor}, without marks");
        assert!(marked_calls < asked_calls || floor == 35, "floor at {floor}: {marked_calls} window calls");
    }
    // Marks issued under one window stay exact when it is built again lower (idle eviction,
    // a bigger capacity): the pull reads from D1 what the window would have held.
    let (mut world, all) = mixed_densities(5);
    let mut request = home(world.viewer, 7);
    let (mut seen, mut marked) = (Vec::new(), false);
    loop {
        let (page, _) = run(&mut world, request.clone());
        seen.extend(keys(&page));
        marked |= page.next_below_floor;
        if marked && world.window.as_ref().is_some_and(|w| w.floor == all[5]) {
            let everyone: Vec<UserId> = world.edges.iter().map(|e| e.author).chain([world.viewer]).collect();
            world.deliver(&everyone, all[all.len() - 1]);
        }
        let Some(next) = page.next else { break };
        request = FeedQuery { before: Some(next), below_floor: page.next_below_floor, ..request };
    }
    assert!(marked);
    assert_eq!(seen, all);
}

#[test]
fn old_posts_below_the_floor_cost_every_slab() {
    let viewer = user(0, 0);
    let a = user(70, 1);
    let mut world = World::new(viewer, 4);
    world.edges = vec![edge(a, true, false)];
    let keys_a = world.publish(a, 3, 2 * 365 * DAY, DAY);
    world.window = Some(Window { initialized: true, floor: SortKey::TOP, entries: Vec::new() });
    let (done, cost) = run(&mut world, home(viewer, 5));
    assert_eq!(keys(&done), keys_a);
    assert_eq!(done.next, None);
    assert_eq!(cost.waves, 1 + 6, "first wave (the floor is above the cursor: no round), six slabs");
}

#[test]
fn filtered_pages_stop_at_the_scan_budget_with_a_cursor() {
    let (mut world, all) = warm_push(1);
    world.blocked = vec![user(70, 1), user(200, 2)];
    world.budget = 4;
    let (done, _) = read_home(&mut world, 5);
    assert!(done.items.is_empty());
    assert_eq!(done.scanned, 4);
    assert_eq!(done.hidden, vec![Hidden::Blocked; 4]);
    assert_eq!(done.next, Some(all[3]), "continues past the hidden ones");
    assert_eq!(done.empty_reason, Some(EmptyReason::AllFiltered));
    assert!(done.short);
}

#[test]
fn a_stalled_fan_out_is_merged_from_its_horizon() {
    let (mut world, all) = warm_push(4);
    let a = user(70, 1);
    // The window lacks a's two newest posts; their event is unfinished.
    let missing = [all[0], all[2]];
    if let Some(w) = world.window.as_mut() {
        w.entries.retain(|e| !missing.contains(&e.key()));
    }
    world.unfinished = vec![(a, all[2].primary)];
    let (done, cost) = read_home(&mut world, 5);
    assert_eq!(keys(&done), all[..5], "in order, once");
    assert_eq!(cost.waves, 2);
}

#[test]
fn a_failing_window_degrades_to_the_pull_path() {
    let (mut world, all) = warm_push(4);
    world.window = None;
    let (done, cost) = read_home(&mut world, 5);
    assert_eq!(keys(&done), all[..5]);
    assert_eq!(done.state, FeedState::Rebuilding);
    // The authors' databases fill the page from their one-hour slab (the rows with their
    // relationships), so the viewer's own database, which has no posts, stops there too.
    assert_eq!(cost.waves, 1 + 1);
    assert!(!done.next_below_floor, "no window answered: its floor is not known");
    world.posts.clear();
    let (empty, _) = read_home(&mut world, 5);
    assert_eq!(empty.empty_reason, Some(EmptyReason::Rebuilding));
}

#[test]
fn after_returns_the_newest_above_with_a_gap() {
    let (mut world, all) = warm_push(4);
    let mut request = home(world.viewer, 3);
    request.after = Some(all[8]);
    let (done, cost) = run(&mut world, request.clone());
    assert_eq!(keys(&done), all[..3]);
    assert_eq!(done.gap, Some(true));
    assert_eq!(done.next, Some(all[2]), "pages down into the gap");
    assert_eq!(done.newest, all[0]);
    assert_eq!(cost.waves, 2);
    request.after = Some(all[3]);
    let (done, _) = run(&mut world, request);
    assert_eq!(keys(&done), all[..3]);
    assert_eq!((done.gap, done.next), (Some(false), None));
}

#[test]
fn group_and_list_feeds_pull_their_authors_only() {
    let (mut world, all) = warm_push(4);
    let (a, b) = (user(70, 1), user(200, 2));
    world.edges[0].group = Some("close".into());
    world.edges[1].in_list = true;
    let group = crate::validate::GroupName::parse("close").unwrap_or_else(|e| panic!("{e:?}"));
    let mut request = home(world.viewer, 10);
    request.scope = FeedScope::Group(group);
    let (done, cost) = run(&mut world, request.clone());
    assert!(done.items.iter().all(|r| r.author == a) && done.items.len() == 6);
    assert_eq!(cost.window_calls, 0);
    assert_eq!(
        cost.statements,
        stmts(&[(0, 1), (1, 6)]),
        "edges; a's six slabs (fewer than asked), their rows with relationships"
    );
    request.scope = FeedScope::List(crate::ids::ListId::from_trusted(9));
    let (done, _) = run(&mut world, request.clone());
    assert!(done.items.iter().all(|r| r.author == b) && done.items.len() == 6);
    request.after = Some(all[11]);
    let (done, _) = run(&mut world, request);
    assert_eq!(done.gap, Some(false));
    assert_eq!(done.items.len(), 5, "b's posts above its oldest");
    world.edges.clear();
    let mut request = home(world.viewer, 10);
    request.scope = FeedScope::List(crate::ids::ListId::from_trusted(9));
    let (empty, _) = run(&mut world, request);
    assert_eq!(empty.empty_reason, Some(EmptyReason::NoFollows));
}

type Scenario = fn() -> (World, FeedQuery);
/// scenario, its setup, databases, waves, statements per database.
type CostRow = (&'static str, Scenario, usize, usize, &'static [(usize, usize)]);

fn warm() -> (World, FeedQuery) {
    let (w, _) = warm_push(4);
    let r = home(w.viewer, 5);
    (w, r)
}
fn warm_one_database() -> (World, FeedQuery) {
    let (w, _) = warm_push(1);
    let r = home(w.viewer, 5);
    (w, r)
}
fn after_gap() -> (World, FeedQuery) {
    let (w, all) = warm_push(4);
    let r = FeedQuery { after: Some(all[8]), ..home(w.viewer, 3) };
    (w, r)
}
fn pull_mode() -> (World, FeedQuery) {
    let (mut w, r) = warm();
    w.mode = FanoutMode::Pull;
    (w, r)
}
fn cold() -> (World, FeedQuery) {
    let (mut w, r) = warm();
    w.window = Some(Window { initialized: false, floor: SortKey::TOP, entries: Vec::new() });
    (w, r)
}
fn cold_one_post() -> (World, FeedQuery) {
    let mut w = World::new(user(0, 0), 4);
    w.edges = vec![edge(user(70, 1), true, false)];
    w.publish(user(70, 1), 1, MINUTE, 0);
    w.window = Some(Window { initialized: false, floor: SortKey::TOP, entries: Vec::new() });
    let r = home(w.viewer, 5);
    (w, r)
}
fn old_below_floor() -> (World, FeedQuery) {
    let mut w = World::new(user(0, 0), 4);
    w.edges = vec![edge(user(70, 1), true, false)];
    w.publish(user(70, 1), 3, 2 * 365 * DAY, DAY);
    w.window = Some(Window { initialized: true, floor: SortKey::TOP, entries: Vec::new() });
    let r = home(w.viewer, 5);
    (w, r)
}
fn pull_mode_old() -> (World, FeedQuery) {
    let (mut w, r) = old_below_floor();
    w.mode = FanoutMode::Pull;
    (w, r)
}
/// Page 2 of a warm reader whose window's floor is above its cursor: the full pull alone.
fn deep_cursor() -> (World, FeedQuery) {
    let (mut w, all) = warm_push(4);
    w.deliver(&[user(70, 1), user(200, 2)], all[3]);
    let r = FeedQuery { before: Some(all[4]), ..home(w.viewer, 5) };
    (w, r)
}
fn deep_marked() -> (World, FeedQuery) {
    let (w, r) = deep_cursor();
    (w, FeedQuery { below_floor: true, ..r })
}
fn rebuilding_old() -> (World, FeedQuery) {
    let (mut w, r) = old_below_floor();
    w.window = None;
    (w, r)
}
fn hybrid_miss() -> (World, FeedQuery) {
    let (mut w, _, _) = hybrid();
    w.hot.misses = vec![HotMiss::Reader { reader: w.viewer }];
    let r = home(w.viewer, 6);
    (w, r)
}
fn list_old() -> (World, FeedQuery) {
    let (mut w, r) = old_below_floor();
    w.edges[0].in_list = true;
    let r = FeedQuery { scope: FeedScope::List(crate::ids::ListId::from_trusted(9)), ..r };
    (w, r)
}

/// The worst case of each kind of page: sequential storage waits (window calls and D1 batches,
/// not counting the token check the HTTP layer runs beside the first wave) and D1 statements,
/// as the read asks for them. `tests/api/budgets.rs` confirms the first row black-box
/// (2 sequential round trips, one window call).
#[test]
fn worst_case_waves_and_statements_per_scenario() {
    let rows: [CostRow; 13] = [
        // scenario, setup, databases, waves, statements per database
        ("warm push, inside the window", warm_one_database, 1, 2, &[(0, 4)]),
        ("warm push, inside the window", warm, 4, 2, &[(0, 3), (1, 3), (3, 3)]),
        ("?after=, with a gap", after_gap, 4, 2, &[(0, 3), (1, 3), (3, 3)]),
        ("pull mode, the first slab beside the round", pull_mode, 4, 2, &[(0, 2), (1, 3), (3, 3)]),
        ("pull mode, old posts: every slab", pull_mode_old, 4, 7, &[(0, 7), (1, 6)]),
        ("hybrid, cache miss refilled", hybrid_miss, 4, 2, &[(0, 3), (1, 3), (3, 3)]),
        ("new reader: window built", cold, 4, 11, &[(0, 12), (1, 9), (3, 9)]),
        ("new reader, one post: window built", cold_one_post, 4, 11, &[(0, 12), (1, 9)]),
        ("below the floor, one slab", deep_cursor, 4, 2, &[(0, 2), (1, 1), (3, 1)]),
        ("below the floor, marked cursor: no window", deep_marked, 4, 2, &[(0, 2), (1, 1), (3, 1)]),
        ("below the floor, every slab", old_below_floor, 4, 7, &[(0, 7), (1, 6)]),
        ("window failing, every slab", rebuilding_old, 4, 7, &[(0, 7), (1, 6)]),
        ("list, every slab", list_old, 4, 7, &[(0, 1), (1, 6)]),
    ];
    let mut wrong = Vec::new();
    for (name, scenario, databases, waves, statements) in rows {
        let (mut world, request) = scenario();
        assert_eq!(world.databases, databases, "{name}");
        let (_, cost) = run(&mut world, request);
        if (cost.waves, &cost.statements) != (waves, &stmts(statements)) {
            wrong.push(format!("{name}: {} waves, {:?}", cost.waves, cost.statements));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Every page of a scroll from the top, `limit` at a time: the items' keys, and each page's
/// unavailable authors.
fn scroll_named(world: &mut World, limit: usize) -> (Vec<SortKey>, Vec<Vec<UserId>>) {
    let mut request = home(world.viewer, limit);
    let (mut items, mut unavailable) = (Vec::new(), Vec::new());
    for _ in 0..50 {
        let (page, _) = run(world, request.clone());
        items.extend(keys(&page));
        unavailable.push(page.unavailable.clone());
        match page.next {
            Some(next) => {
                request.before = Some(next);
                request.below_floor = page.next_below_floor;
            }
            None => return (items, unavailable),
        }
    }
    panic!("the scroll did not end");
}

#[test]
fn a_database_outage_leaves_out_only_its_authors_and_names_them_on_every_page() {
    let (mut world, all) = warm_push(4);
    let (a, b) = (world.edges[0].author, world.edges[1].author);
    let of_a: Vec<SortKey> =
        all.iter().copied().filter(|k| world.posts.iter().any(|p| p.key == *k && p.author == a)).collect();
    world.down = vec![3];
    let (first, cost) = read_home(&mut world, 5);
    assert_eq!(keys(&first), of_a[..5], "the window's entries of b are passed over, not shown as deleted");
    assert_eq!(first.unavailable, vec![b]);
    assert!(first.hidden.is_empty(), "{:?}", first.hidden);
    assert_eq!(cost.waves, 2, "the outage costs no extra wait");
    let (items, unavailable) = scroll_named(&mut world, 4);
    assert_eq!(items, of_a, "a's posts, each once, in order");
    assert!(unavailable.iter().all(|u| *u == vec![b]), "{unavailable:?}");
    // Back: the same scroll is complete and names no one.
    world.down.clear();
    let (items, unavailable) = scroll_named(&mut world, 4);
    assert_eq!(items, all);
    assert!(unavailable.iter().all(Vec::is_empty));
}

#[test]
fn an_outage_during_a_full_pull_leaves_its_database_out_of_the_merge() {
    // A degraded page (window down) and pull mode both read through the full pull.
    for (window_down, mode) in [(true, FanoutMode::Push), (false, FanoutMode::Pull)] {
        let (mut world, all) = warm_push(4);
        let b = world.edges[1].author;
        world.mode = mode;
        if window_down {
            world.window = None;
        } else {
            world.window = Some(Window { initialized: true, floor: SortKey::BOTTOM, entries: Vec::new() });
        }
        let of_a: Vec<SortKey> = all
            .iter()
            .copied()
            .filter(|k| world.posts.iter().any(|p| p.key == *k && p.author != b))
            .collect();
        world.down = vec![3];
        let (items, unavailable) = scroll_named(&mut world, 5);
        assert_eq!(items, of_a, "window down: {window_down}");
        assert!(unavailable.iter().all(|u| *u == vec![b]), "{unavailable:?}");
    }
}

#[test]
fn the_readers_own_database_down_fails_the_read_and_a_healthy_read_names_no_one() {
    let (mut world, _) = warm_push(4);
    let (done, _) = read_home(&mut world, 5);
    assert!(done.unavailable.is_empty());
    world.down = vec![0];
    let request = home(world.viewer, 5);
    let (failed, cost) = try_run(&mut world, request);
    let failed = failed.err();
    assert_eq!(
        failed.as_deref(),
        Some("the read fails: DB_0 is down"),
        "the edges are read with OnFailure::Fail: the read answers 503"
    );
    assert_eq!(cost.waves, 1, "the first wave fails the read: nothing runs after it");
}
