//! One round's storage plan beside the window: which databases it reads, with which
//! statements. Built here, pure, from what the first wave returned (the reader's window and the
//! reader's own edges); the read's state machine (`domain/read`) turns it into one step of one
//! batch per database, all sent at once, which `services/feed.rs` runs.
//!
//! Wave 1 (in parallel): the reader's window object, the reader's edges (whom they follow,
//! each edge's mode, and whether its backfill is unfinished) from the reader's home database,
//! and the hot-range cache. Wave 2: per database touched, one batch: the pulled authors' posts,
//! the in-flight posts, the rows of the window's candidates, and the viewer's relationship to
//! each distinct author of the page (once per author, not per row).

use std::collections::{BTreeSet, HashMap};

use super::cursor::SortKey;
use super::ids::{ListId, PostId, UserId};
use super::policy::FanoutMode;
use super::shard::{group_by_database, ShardMap};
use super::snowflake::shard_of_id;
use super::validate::GroupName;

/// A Worker invocation holds at most 6 simultaneous connections (D1 included): a round that
/// touches more databases than that runs its batches in waves of this many, so its wave 2
/// costs `ceil(databases / 6)` sequential waits (see `DbReads` chunks in [`RoundPlan::waves`]).
pub const MAX_PARALLEL_DATABASES: usize = 6;

/// One of the reader's follow edges, as the reader's side stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderEdge {
    pub author: UserId,
    /// Fan-out pushes the author's posts into the window.
    pub push: bool,
    /// Reads pull the author's posts (both are set while an edge switches to push).
    pub pull: bool,
    pub group: Option<String>,
    /// The author counts in the list the edges were read for ([`FeedScope::List`]): a member
    /// of it, made one since the current follow began.
    pub in_list: bool,
    /// A follow backfill of this author into the reader's window is unfinished: every post of
    /// the author may be missing from the window, so reads merge all of them.
    pub backfilling: bool,
}

/// From when an author's posts are merged beside the window: where their fan-out may not
/// have reached it (`in_flight_horizon` in `store/feed.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    pub author: UserId,
    /// The young-post cushion, or the bottom while a backfill is unfinished.
    pub since: i64,
    /// Also merge from the author's oldest unfinished post event (read on the author's
    /// database, in the same statement as the posts).
    pub outbox_horizon: bool,
}

/// Every post at or above this time: a backfilling edge's horizon.
pub const BOTTOM_TIME: i64 = -1;

/// A round's bounds beside the window: posts strictly between `after` and `before`, at most
/// `limit` per statement (and per author inside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub before: SortKey,
    pub after: SortKey,
    pub limit: usize,
}

/// What one database reads in one round.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbReads {
    pub database: usize,
    /// Authors read as one index range each (top n in the round's bounds).
    pub pulled: Vec<UserId>,
    pub in_flight: Vec<InFlight>,
    /// Window candidates to hydrate (their rows live with their author).
    pub hydrate: Vec<PostId>,
    /// Every author whose posts this database answers for in this round, once each: the
    /// viewer's relationship to them is read once, beside the posts.
    pub authors: Vec<UserId>,
}

impl DbReads {
    /// Statements this database runs: a pull, the in-flight merge, the hydration (in chunks
    /// of `ids_per_statement`), the relationships.
    pub fn statements(&self, ids_per_statement: usize) -> usize {
        usize::from(!self.pulled.is_empty())
            + usize::from(!self.in_flight.is_empty())
            + self.hydrate.len().div_ceil(ids_per_statement.max(1))
            + usize::from(!self.authors.is_empty())
    }
}

/// A round's read of a replicated author from one of its replicas instead of its database
/// (`domain/replica.rs`): its posts in the round's bounds, and the window candidates of its.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaRead {
    pub author: UserId,
    /// How many digests hold the author (the reader's is picked by hash).
    pub replicas: u32,
    pub ids: Vec<PostId>,
}

/// One round of a read beside the window (wave 2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundPlan {
    pub databases: Vec<DbReads>,
    /// Replicated authors, read from their replicas beside the databases' batches.
    pub replicas: Vec<ReplicaRead>,
}

/// What a round beside the window starts from.
pub struct RoundInput<'a> {
    pub viewer: UserId,
    pub mode: FanoutMode,
    pub edges: &'a [ReaderEdge],
    /// Pulled authors served from the hot-range cache below `in_flight_since`.
    pub cached: &'a [UserId],
    pub in_flight_since: i64,
    /// Window candidates: (post, author).
    pub candidates: &'a [(PostId, UserId)],
    /// Authors with replicas, and how many (served from them, not their database).
    pub replicated: &'a HashMap<UserId, u32>,
    /// The viewer's own posts in flight are read (a round's fallback for replicas that could
    /// not answer reads only those authors).
    pub with_viewer: bool,
}

impl RoundPlan {
    /// The reads beside the window, by the system's fan-out mode: pulled edges and posts in
    /// flight (hybrid), posts in flight (push); in pull mode everything is pulled (the full
    /// scope, [`full_scope`]), so this plans only the hydration.
    pub fn beside_window(input: &RoundInput<'_>, map: &ShardMap) -> Self {
        let mut pulled = Vec::new();
        let viewer = InFlight { author: input.viewer, since: input.in_flight_since, outbox_horizon: true };
        let mut in_flight: Vec<InFlight> = input.with_viewer.then_some(viewer).into_iter().collect();
        let mut replicas = Vec::new();
        // In pull mode everything comes from the full pull (D1).
        let replicated = |author: &UserId| match input.mode {
            FanoutMode::Pull => None,
            _ => input.replicated.get(author).copied(),
        };
        for edge in input.edges {
            if let Some(n) = replicated(&edge.author) {
                replica_slot(&mut replicas, edge.author, n);
                continue;
            }
            let cached = input.cached.contains(&edge.author);
            let read = match input.mode {
                FanoutMode::Pull => None,
                FanoutMode::Push => Some(pushed(edge, input.in_flight_since)),
                FanoutMode::Hybrid if edge.pull && !cached => {
                    pulled.push(edge.author);
                    None
                }
                // A cached pulled author: D1 answers from where the cached range ends.
                FanoutMode::Hybrid if edge.pull => Some(InFlight {
                    author: edge.author,
                    since: input.in_flight_since,
                    outbox_horizon: false,
                }),
                FanoutMode::Hybrid => Some(pushed(edge, input.in_flight_since)),
            };
            in_flight.extend(read);
        }
        if input.mode == FanoutMode::Pull {
            in_flight.clear();
        }
        let mut candidates = Vec::with_capacity(input.candidates.len());
        for &(post, author) in input.candidates {
            match replicated(&author) {
                Some(n) => replica_slot(&mut replicas, author, n).ids.push(post),
                None => candidates.push((post, author)),
            }
        }
        Self { replicas, ..Self::assemble(map, &pulled, &in_flight, &candidates) }
    }

    /// Groups the round's reads by database; each database also reads the viewer's
    /// relationship to every author it answers for.
    fn assemble(
        map: &ShardMap,
        pulled: &[UserId],
        in_flight: &[InFlight],
        candidates: &[(PostId, UserId)],
    ) -> Self {
        let mut databases: Vec<DbReads> = Vec::new();
        for author in pulled {
            slot(&mut databases, map, author.get()).pulled.push(*author);
        }
        for read in in_flight {
            slot(&mut databases, map, read.author.get()).in_flight.push(*read);
        }
        for (post, _) in candidates {
            slot(&mut databases, map, post.get()).hydrate.push(*post);
        }
        for db in &mut databases {
            let mut authors: BTreeSet<UserId> = db.pulled.iter().copied().collect();
            authors.extend(db.in_flight.iter().map(|r| r.author));
            authors.extend(candidates.iter().filter(|(p, _)| db.hydrate.contains(p)).map(|(_, a)| *a));
            db.authors = authors.into_iter().collect();
        }
        databases.sort_by_key(|d| d.database);
        Self { databases, replicas: Vec::new() }
    }

    /// The round's batches in the order they run: groups of at most
    /// [`MAX_PARALLEL_DATABASES`], each group sent at once.
    pub fn waves(&self) -> std::slice::Chunks<'_, DbReads> {
        self.databases.chunks(MAX_PARALLEL_DATABASES)
    }

    pub fn statements(&self, ids_per_statement: usize) -> usize {
        self.databases.iter().map(|d| d.statements(ids_per_statement)).sum()
    }
}

/// The replica read of `author`, added when first needed.
fn replica_slot(reads: &mut Vec<ReplicaRead>, author: UserId, replicas: u32) -> &mut ReplicaRead {
    match reads.iter().position(|r| r.author == author) {
        Some(i) => &mut reads[i],
        None => {
            reads.push(ReplicaRead { author, replicas, ids: Vec::new() });
            let last = reads.len() - 1;
            &mut reads[last]
        }
    }
}

/// The reads of the database an id's row lives on, added when first needed.
fn slot<'a>(databases: &'a mut Vec<DbReads>, map: &ShardMap, id: i64) -> &'a mut DbReads {
    let database = map.database(shard_of_id(id));
    match databases.iter().position(|d| d.database == database) {
        Some(i) => &mut databases[i],
        None => {
            databases.push(DbReads { database, ..DbReads::default() });
            let last = databases.len() - 1;
            &mut databases[last]
        }
    }
}

fn pushed(edge: &ReaderEdge, in_flight_since: i64) -> InFlight {
    if edge.backfilling {
        InFlight { author: edge.author, since: BOTTOM_TIME, outbox_horizon: false }
    } else {
        InFlight { author: edge.author, since: in_flight_since, outbox_horizon: true }
    }
}

/// Which of the reader's follows a feed holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedScope {
    /// The viewer and everyone followed: the home feed, the only one with a window.
    Home,
    /// The followed authors of one `/v1` follow group (one name per follow).
    Group(GroupName),
    /// The followed members of one of the viewer's Mastodon lists (many per follow): the
    /// edges must have been read for this list ([`ReaderEdge::in_list`]).
    List(ListId),
}

impl FeedScope {
    /// Whether the feed holds this followed author.
    pub fn holds(&self, edge: &ReaderEdge) -> bool {
        match self {
            Self::Home => true,
            Self::Group(g) => edge.group.as_deref() == Some(g.as_str()),
            Self::List(_) => edge.in_list,
        }
    }

    /// The list whose membership the reader's edges must carry.
    pub fn list(&self) -> Option<ListId> {
        match self {
            Self::List(id) => Some(*id),
            _ => None,
        }
    }
}

/// The authors a full pull reads (no window: new windows, group and list feeds, below a
/// window's floor), grouped by database: the viewer and everyone followed, or one group's or
/// list's authors (without the viewer).
pub fn full_scope(
    viewer: UserId,
    edges: &[ReaderEdge],
    scope: &FeedScope,
    map: &ShardMap,
) -> Vec<(usize, Vec<UserId>)> {
    let followed = edges.iter().filter(|e| scope.holds(e)).map(|e| e.author);
    let authors: Vec<UserId> = match scope {
        FeedScope::Home => std::iter::once(viewer).chain(followed).collect(),
        FeedScope::Group(_) | FeedScope::List(_) => followed.collect(),
    };
    group_by_database(map, authors.into_iter().map(|a| (shard_of_id(a.get()), a)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snowflake::{snowflake_in, LogicalShard};

    const NOW: i64 = 1_796_026_502_123;
    const SINCE: i64 = NOW - 120_000;

    /// A user id on `shard` (the even 4-database map puts shards 0-63 on database 0, 64-127
    /// on 1, and so on).
    fn user(shard: u8, n: u64) -> UserId {
        UserId::from_trusted(snowflake_in(NOW - 1_000_000, LogicalShard::new(shard), n).unwrap_or(1))
    }

    fn post_of(author: UserId, n: i64) -> PostId {
        let shard = shard_of_id(author.get());
        PostId::from_trusted(snowflake_in(NOW - n, shard, 0).unwrap_or(1))
    }

    fn edge(author: UserId, push: bool, pull: bool) -> ReaderEdge {
        ReaderEdge { author, push, pull, group: None, in_list: false, backfilling: false }
    }

    #[test]
    fn one_database_means_one_batch_whatever_the_mix() {
        let viewer = user(0, 0);
        let (a, b, c) = (user(70, 1), user(130, 2), user(250, 3));
        let edges = [edge(a, true, false), edge(b, false, true), edge(c, true, false)];
        let candidates = [(post_of(a, 5), a), (post_of(c, 9), c)];
        let input = RoundInput {
            viewer,
            mode: FanoutMode::Hybrid,
            edges: &edges,
            cached: &[],
            in_flight_since: SINCE,
            candidates: &candidates,
            replicated: &HashMap::new(),
            with_viewer: true,
        };
        let plan = RoundPlan::beside_window(&input, &ShardMap::even(1));
        assert_eq!(plan.databases.len(), 1);
        let db = &plan.databases[0];
        assert_eq!(db.pulled, vec![b]);
        assert_eq!(db.in_flight.iter().map(|r| r.author).collect::<Vec<_>>(), vec![viewer, a, c]);
        assert_eq!(db.hydrate.len(), 2);
        assert_eq!(db.authors.len(), 4, "viewer, a, b, c once each");
        assert_eq!(plan.statements(90), 4, "pull, in-flight, hydration, relationships");
        assert_eq!(plan.waves().count(), 1);
    }

    #[test]
    fn each_read_goes_to_the_database_of_its_author() {
        let viewer = user(0, 0);
        let (a, b) = (user(70, 1), user(200, 2));
        let edges = [edge(a, true, false), edge(b, false, true)];
        let candidates = [(post_of(a, 5), a)];
        let input = RoundInput {
            viewer,
            mode: FanoutMode::Hybrid,
            edges: &edges,
            cached: &[],
            in_flight_since: SINCE,
            candidates: &candidates,
            replicated: &HashMap::new(),
            with_viewer: true,
        };
        let plan = RoundPlan::beside_window(&input, &ShardMap::even(4));
        let dbs: Vec<usize> = plan.databases.iter().map(|d| d.database).collect();
        assert_eq!(dbs, vec![0, 1, 3], "the viewer's own posts, a's, b's");
        assert_eq!(plan.databases[1].hydrate, vec![candidates[0].0]);
        assert_eq!(plan.databases[1].authors, vec![a]);
        assert_eq!(plan.databases[2].pulled, vec![b]);
        assert_eq!(plan.databases[0].authors, vec![viewer]);
    }

    #[test]
    fn backfilling_and_cached_authors_change_where_the_merge_starts() {
        let viewer = user(0, 0);
        let (a, b) = (user(1, 1), user(2, 2));
        let mut backfill = edge(a, true, false);
        backfill.backfilling = true;
        let edges = [backfill, edge(b, false, true)];
        let input = RoundInput {
            viewer,
            mode: FanoutMode::Hybrid,
            edges: &edges,
            cached: &[b],
            in_flight_since: SINCE,
            candidates: &[],
            replicated: &HashMap::new(),
            with_viewer: true,
        };
        let plan = RoundPlan::beside_window(&input, &ShardMap::even(1));
        let reads = &plan.databases[0].in_flight;
        assert_eq!(reads[1], InFlight { author: a, since: BOTTOM_TIME, outbox_horizon: false });
        assert_eq!(reads[2], InFlight { author: b, since: SINCE, outbox_horizon: false });
        assert!(plan.databases[0].pulled.is_empty(), "b is served by the cache");
    }

    #[test]
    fn push_mode_merges_everyone_in_flight_and_pull_mode_only_hydrates() {
        let viewer = user(0, 0);
        let a = user(1, 1);
        let edges = [edge(a, false, true)];
        let candidates = [(post_of(a, 3), a)];
        let mut input = RoundInput {
            viewer,
            mode: FanoutMode::Push,
            edges: &edges,
            cached: &[],
            in_flight_since: SINCE,
            candidates: &candidates,
            replicated: &HashMap::new(),
            with_viewer: true,
        };
        let push = RoundPlan::beside_window(&input, &ShardMap::even(1));
        assert_eq!(push.databases[0].in_flight.len(), 2);
        assert!(push.databases[0].pulled.is_empty());
        input.mode = FanoutMode::Pull;
        let pull = RoundPlan::beside_window(&input, &ShardMap::even(1));
        assert!(pull.databases[0].in_flight.is_empty() && pull.databases[0].pulled.is_empty());
        assert_eq!(pull.databases[0].hydrate.len(), 1);
    }

    #[test]
    fn replicated_authors_are_read_from_a_replica_and_put_nothing_on_their_database() {
        let viewer = user(0, 0);
        let (hot, cold) = (user(64, 1), user(128, 2));
        let edges = [edge(hot, false, true), edge(cold, true, false)];
        let candidates = [(post_of(hot, 3), hot), (post_of(cold, 4), cold)];
        let replicated = HashMap::from([(hot, 5)]);
        for mode in [FanoutMode::Push, FanoutMode::Hybrid] {
            let input = RoundInput {
                viewer,
                mode,
                edges: &edges,
                cached: &[],
                in_flight_since: SINCE,
                candidates: &candidates,
                replicated: &replicated,
                with_viewer: true,
            };
            let plan = RoundPlan::beside_window(&input, &ShardMap::even(4));
            assert_eq!(
                plan.replicas,
                vec![ReplicaRead { author: hot, replicas: 5, ids: vec![post_of(hot, 3)] }]
            );
            let dbs: Vec<usize> = plan.databases.iter().map(|d| d.database).collect();
            assert_eq!(dbs, vec![0, 2], "the viewer's and the cold author's: none for the hot one");
            assert!(plan.databases.iter().all(|d| !d.authors.contains(&hot)));
            // A fallback round for replicas that failed reads only their authors.
            let fallback = RoundInput {
                with_viewer: false,
                replicated: &HashMap::new(),
                edges: &edges[..1],
                candidates: &candidates[..1],
                ..input
            };
            let plan = RoundPlan::beside_window(&fallback, &ShardMap::even(4));
            assert_eq!(plan.databases.len(), 1);
            assert_eq!(plan.databases[0].authors, vec![hot]);
        }
    }

    #[test]
    fn more_databases_than_connections_run_in_waves_of_six() {
        let viewer = user(0, 0);
        let authors: Vec<UserId> = (0..8u8).map(|i| user(i * 32, u64::from(i))).collect();
        let edges: Vec<ReaderEdge> = authors.iter().map(|a| edge(*a, false, true)).collect();
        let input = RoundInput {
            viewer,
            mode: FanoutMode::Hybrid,
            edges: &edges,
            cached: &[],
            in_flight_since: SINCE,
            candidates: &[],
            replicated: &HashMap::new(),
            with_viewer: true,
        };
        let plan = RoundPlan::beside_window(&input, &ShardMap::even(8));
        assert_eq!(plan.databases.len(), 8);
        assert_eq!(plan.waves().map(<[DbReads]>::len).collect::<Vec<_>>(), vec![6, 2]);
    }

    #[test]
    fn a_full_pull_reads_the_viewer_and_the_followed_or_one_group_or_list() {
        let viewer = user(0, 0);
        let (a, b, c) = (user(100, 1), user(101, 2), user(200, 3));
        let mut grouped = edge(b, true, false);
        grouped.group = Some("close".into());
        let mut listed = edge(c, false, true);
        listed.in_list = true;
        let edges = [edge(a, true, false), grouped, listed];
        let map = ShardMap::even(4);
        let home = full_scope(viewer, &edges, &FeedScope::Home, &map);
        assert_eq!(home, vec![(0, vec![viewer]), (1, vec![a, b]), (3, vec![c])]);
        let group = |name: &str| FeedScope::Group(GroupName::parse(name).unwrap_or_else(|e| panic!("{e:?}")));
        assert_eq!(full_scope(viewer, &edges, &group("close"), &map), vec![(1, vec![b])]);
        assert!(full_scope(viewer, &edges, &group("none"), &map).is_empty());
        let list = FeedScope::List(ListId::from_trusted(9));
        assert_eq!(full_scope(viewer, &edges, &list, &map), vec![(3, vec![c])], "members only, no viewer");
        assert_eq!(list.list(), Some(ListId::from_trusted(9)));
        assert_eq!(FeedScope::Home.list(), None);
    }
}
