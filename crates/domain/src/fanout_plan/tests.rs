//! The fan-out plan carried out against a fake storage (its [`FanoutIo`]): each scenario's
//! steps in order, and what one chunk costs in storage waits and statements.

use std::cell::{Cell, RefCell};

use futures_executor::block_on;

use super::*;
use crate::fanout::{merge_per_reader, split_lookahead};
use crate::fanout_segments::{SegmentTarget, Segments};
use crate::policy::Rate;
use crate::visibility::Visibility;

const NOW: i64 = 1_800_000_000_000;
const EVENT: i64 = 42;
const POST: i64 = 500;
const AUTHOR: i64 = 100;
const READER: i64 = 7;
const CAP: usize = 800;

fn user(id: i64) -> UserId {
    UserId::from_trusted(id)
}

fn settings(mode: FanoutMode, chunk: usize) -> Settings {
    let policy =
        Policy { mode, push_cost_ratio: 10.0, active_days: 7, push_max_followers: 10_000, hysteresis: 2.0 };
    Settings { policy, chunk, window_cap: CAP, now: NOW, segments: None, record_every: 1 }
}

/// What storage holds, as the fake replies read it.
#[derive(Debug, Clone)]
struct World {
    event: Option<Event>,
    post: Option<PostRead>,
    /// The author's followers in id order: (id, edge pushed, has a window). Every live lease
    /// below is a follower's unless a scenario says otherwise.
    followers: Vec<(i64, bool, bool)>,
    /// Open sockets (live leases), by user id.
    live: Vec<i64>,
    author_active: bool,
    rates: Option<AuthorRates>,
    /// What the hold finds: the author still suspended.
    still_suspended: bool,
    reader_active: bool,
    entries: Vec<Entry>,
    /// The post's delivering tags, and each tag key's followers: (id, has a window).
    tag_keys: Vec<IndexKey>,
    tag_followers: Vec<(i64, bool)>,
    /// The event's segments as its row holds them, and what a split makes of an unsplit one.
    segments: RefCell<Segments>,
    split_into: Segments,
}

fn event(kind: EventKind, cursor: i64) -> Event {
    let post_event = matches!(kind, EventKind::Post | EventKind::RemovePost);
    Event {
        id: OutboxId::from_trusted(EVENT),
        kind,
        post_id: post_event.then(|| PostId::from_trusted(POST)),
        author: user(AUTHOR),
        reader: (!post_event).then(|| user(READER)),
        state: EventState::Pending,
        cursor,
    }
}

fn post(visibility: Visibility) -> PostRead {
    let now = PostNow { visibility, deleted: false, taken_down: false, author_suspended: false };
    PostRead { author: user(AUTHOR), created_at: 1_000, version: 3, now, reply_to: None, tags: 0 }
}

fn deleted() -> PostRead {
    PostRead { now: PostNow { deleted: true, ..post(Visibility::Public).now }, ..post(Visibility::Public) }
}

fn world(event: Event, post: Option<PostRead>) -> World {
    World {
        event: Some(event),
        post,
        followers: Vec::new(),
        live: Vec::new(),
        author_active: true,
        rates: None,
        still_suspended: true,
        reader_active: true,
        entries: Vec::new(),
        tag_keys: Vec::new(),
        tag_followers: Vec::new(),
        segments: RefCell::default(),
        split_into: Segments::default(),
    }
}

/// Followers `ids`, pushed and with a window unless listed.
fn followers(
    ids: std::ops::RangeInclusive<i64>,
    pulled: &[i64],
    windowless: &[i64],
) -> Vec<(i64, bool, bool)> {
    ids.map(|id| (id, !pulled.contains(&id), !windowless.contains(&id))).collect()
}

/// Rates that moved well past the ones the edges were decided with.
fn moved_rates() -> AuthorRates {
    AuthorRates {
        post_rate: Rate { per_day: 8.0, at: NOW },
        post_rate_decided: 1.0,
        followers_count: 5,
        push_min_read_rate: 0.0,
    }
}

fn message(after: i64) -> Work {
    Work::Event { message: queued(after), dead_letter_sent_at: None }
}

fn queued(after: i64) -> FanoutMessage {
    FanoutMessage { segment: None, ..segment_queued(0, after) }
}

fn read_post(converge: bool) -> Step {
    Step::ReadPost { post: PostId::from_trusted(POST), converge }
}

fn reply_to(world: &World, step: &Step) -> Reply {
    match step {
        Step::ReadEvent(_) => Reply::Event(world.event),
        Step::ReadPost { .. } => Reply::Post(world.post),
        Step::Hold => Reply::Held(world.still_suspended),
        Step::ReadReader { backfill, .. } => {
            let entries = if backfill.is_some() { world.entries.clone() } else { Vec::new() };
            Reply::Reader { active: world.reader_active, entries }
        }
        Step::ReadChunk(reads) => Reply::Chunk(found(world, reads)),
        Step::Segments { split } => {
            let mut segments = world.segments.borrow_mut();
            if segments.0.is_empty() && split.is_some() {
                *segments = world.split_into.clone();
            }
            Reply::Segments(segments.clone())
        }
        Step::RecordSegment { segment, progress, last, .. } => {
            let mut segments = world.segments.borrow_mut();
            segments.record(usize::from(*segment), *progress, *last);
            Reply::Unfinished(segments.unfinished().len())
        }
        Step::ReadTagged(_) => Reply::Tagged(world.post.map(|p| (p, world.tag_keys.clone()))),
        Step::ReadTagFollowers(page) => {
            let rows: Vec<_> =
                world.tag_followers.iter().filter(|f| f.0 > page.after).take(page.chunk + 1).collect();
            let (scanned, more) = split_lookahead(rows, page.chunk);
            Reply::Chunk(ChunkFound {
                active: scanned.iter().filter(|f| f.1).map(|f| user(f.0)).collect(),
                scanned: scanned.iter().map(|f| user(f.0)).collect(),
                more,
                ..ChunkFound::default()
            })
        }
        _ => Reply::Ok,
    }
}

/// The chunk's lanes as the store answers them (`store/outbox.rs::follower_chunk` and
/// `active_among`, `store/live.rs::live_followers`, ...).
fn found(world: &World, reads: &ChunkReads) -> ChunkFound {
    let mut found = ChunkFound::default();
    if let Some(page) = reads.followers {
        let rows: Vec<_> = (world.followers.iter())
            .filter(|f| f.0 > page.after && f.0 <= page.until && (f.1 || !page.pushed_only))
            .take(page.chunk + 1)
            .collect();
        let (scanned, more) = split_lookahead(rows, page.chunk);
        found.active = scanned.iter().filter(|f| f.2).map(|f| user(f.0)).collect();
        found.scanned = scanned.iter().map(|f| user(f.0)).collect();
        found.more = more;
    }
    if let Some(page) = reads.live {
        let leases: Vec<i64> =
            world.live.iter().copied().filter(|&r| r > page.after).take(page.scan).collect();
        found.live_next = leases.last().copied().filter(|_| leases.len() == page.scan);
        let reached = |r: &i64| world.followers.iter().any(|f| f.0 == *r && !(page.unpushed_only && f.1));
        found.live = leases.iter().filter(|r| reached(r)).map(|&r| user(r)).collect();
    }
    found.author_rates = reads.author_rates.and(world.rates);
    found.author_active = reads.author_window.is_some() && world.author_active;
    found
}

/// Storage cost of one message, in production (one database; fault points read nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cost {
    /// Round trips one after another: D1, a wave of window calls, a queue send.
    waits: u32,
    /// D1 statements (a mirror convergence's are its own: `services/graph.rs`).
    statements: u32,
    window_calls: u32,
    queue_sends: u32,
    converges: u32,
}

fn cost_of(step: &Step, reply: &Reply, kind: Option<EventKind>) -> Cost {
    let d1 = |waits, statements| Cost { waits, statements, ..Cost::default() };
    let windows = |ops: &[(UserId, WindowOp)]| {
        let calls = merge_per_reader(ops.iter().cloned()).iter().map(|(_, ops)| ops.len() as u32).sum();
        Cost { waits: u32::from(calls > 0), window_calls: calls, ..Cost::default() }
    };
    match (step, reply) {
        (Step::MarkDead { .. }, _) => d1(1, 2),
        (Step::ReadEvent(_) | Step::ReadPost { .. } | Step::ReadTagged(_) | Step::Hold, _) => d1(1, 1),
        // The page on the tag's database, then its readers' windows on theirs (side by side).
        (Step::ReadTagFollowers(_), Reply::Chunk(found)) => {
            let more = u32::from(!found.scanned.is_empty());
            d1(1 + more, 1 + more)
        }
        (Step::ReadReader { backfill, .. }, _) => d1(1, 1 + u32::from(backfill.is_some())),
        (Step::ConvergePair { .. }, _) => Cost { waits: 3, converges: 1, ..Cost::default() },
        (Step::ReadChunk(reads), Reply::Chunk(found)) => chunk_cost(reads, found),
        (Step::WriteWindow { .. }, _) => Cost { waits: 1, window_calls: 1, ..Cost::default() },
        (Step::WriteWindows(ops) | Step::WriteWithBatch(ops), _) => windows(ops),
        (Step::Send(_), _) => Cost { waits: 1, queue_sends: 1, ..Cost::default() },
        (Step::RecordChunk { .. }, _) => d1(1, 3),
        (Step::MarkDone, _) if kind == Some(EventKind::Post) => d1(1, 5),
        (Step::MarkDone, _) => d1(1, 2),
        _ => Cost::default(),
    }
}

/// The lanes run side by side: the chunk waits for its longest one.
fn chunk_cost(reads: &ChunkReads, found: &ChunkFound) -> Cost {
    let followers = reads.followers.map_or(0, |_| 1 + u32::from(!found.scanned.is_empty()));
    let live = reads.live.map_or(0, |_| 1 + u32::from(!found.live.is_empty() || found.live_next.is_some()));
    let rates = u32::from(reads.author_rates.is_some());
    let author = u32::from(reads.author_window.is_some());
    let waits = followers.max(live).max(rates).max(author);
    Cost { waits, statements: followers + live + rates + author, ..Cost::default() }
}

/// The fake storage as the plan's I/O: each step answered from the world, logged and costed.
struct Fake<'w> {
    world: &'w World,
    steps: RefCell<Vec<Step>>,
    cost: Cell<Cost>,
}

impl FanoutIo for Fake<'_> {
    /// The plan ran away (the fake storage never fails).
    type Error = String;

    async fn run(&self, step: Step) -> Result<Reply, String> {
        let reply = reply_to(self.world, &step);
        let (cost, step_cost) = (self.cost.get(), cost_of(&step, &reply, self.world.event.map(|e| e.kind)));
        self.cost.set(Cost {
            waits: cost.waits + step_cost.waits,
            statements: cost.statements + step_cost.statements,
            window_calls: cost.window_calls + step_cost.window_calls,
            queue_sends: cost.queue_sends + step_cost.queue_sends,
            converges: cost.converges + step_cost.converges,
        });
        let mut steps = self.steps.borrow_mut();
        steps.push(step);
        if steps.len() > 20 {
            return Err(format!("more than 20 steps: {steps:?}"));
        }
        Ok(reply)
    }
}

/// Carries a message out against the world: the steps in order, how the plan ended, and the
/// steps' cost.
fn run(work: Work, s: Settings, world: &World) -> (Vec<Step>, Result<(), Stop<String>>, Cost) {
    let fake = Fake { world, steps: RefCell::default(), cost: Cell::default() };
    let ended = block_on(carry(&fake, work, s));
    let steps = fake.steps.into_inner();
    assert_orders(&steps);
    (steps, ended, fake.cost.get())
}

/// The steps of a message carried out to its end (nothing left to do: acked).
fn steps(work: Work, s: Settings, world: &World) -> Vec<Step> {
    let (steps, ended, _) = run(work, s, world);
    assert_eq!(ended, Ok(()), "{steps:?}");
    steps
}

/// The steps of a message the plan gives back to the queue, and why.
fn failing(work: Work, s: Settings, world: &World) -> (Vec<Step>, &'static str) {
    match run(work, s, world) {
        (steps, Err(Stop::Fail(why)), _) => (steps, why),
        (steps, ended, _) => panic!("{ended:?}: {steps:?}"),
    }
}

/// The orders ARCHITECTURE.md's invariants 2, 3, 8 and 12 rest on, in every scenario.
fn assert_orders(steps: &[Step]) {
    let at = |f: fn(&Step) -> bool| steps.iter().position(f);
    let read_post = at(|s| matches!(s, Step::ReadPost { .. }));
    let chunk_read = at(|s| matches!(s, Step::ReadChunk(_)));
    let batch_write = at(|s| matches!(s, Step::WriteWithBatch(_)));
    let record = at(|s| matches!(s, Step::RecordChunk { .. }));
    let done = at(|s| matches!(s, Step::MarkDone));
    let converge = at(|s| matches!(s, Step::ConvergePair { .. }));
    let reader_io = at(|s| matches!(s, Step::ReadReader { .. } | Step::WriteWindow { .. }));
    let ordered = |a: Option<usize>, b: Option<usize>| a.zip(b).is_none_or(|(a, b)| a < b);
    assert!(ordered(read_post, chunk_read), "the post is read before its chunk: {steps:?}");
    assert!(record.is_none() || ordered(batch_write, record), "windows before progress: {steps:?}");
    assert!(ordered(record, done), "progress before done: {steps:?}");
    assert!(reader_io.is_none() || ordered(converge, reader_io), "mirrors first: {steps:?}");
    if let Some(done) = done {
        assert_eq!(done + 1, steps.len(), "marking done is the last write: {steps:?}");
    }
}

fn deliver(reader: i64) -> (UserId, WindowOp) {
    let entry =
        Entry { created_at: 1_000, post_id: PostId::from_trusted(POST), author_id: user(AUTHOR), version: 3 };
    (user(reader), WindowOp::Deliver { entries: vec![entry], cap: CAP })
}

fn remove(reader: i64) -> (UserId, WindowOp) {
    (
        user(reader),
        WindowOp::RemovePost { post_id: PostId::from_trusted(POST), version: 3, created_at: 1_000 },
    )
}

fn page(after: i64, chunk: usize, pushed_only: bool) -> Option<FollowerPage> {
    Some(FollowerPage { author: user(AUTHOR), after, chunk, pushed_only, must_follow: None, until: i64::MAX })
}

fn live(after: i64, scan: usize, unpushed_only: bool) -> Option<LivePage> {
    Some(LivePage { author: user(AUTHOR), after, scan, unpushed_only, must_follow: None })
}

/// A post event's first steps for the message after `after` (0: the event's first message,
/// which converges the post's other sides).
fn opening(kind: EventKind, after: i64) -> Vec<Step> {
    let (read, post) = (Step::ReadEvent(queued(after)), read_post(after == 0));
    match kind {
        EventKind::Post => {
            vec![read, Step::FaultPoint(FaultPoint::StallFanout { author: user(AUTHOR) }), post]
        }
        _ => vec![read, post],
    }
}

fn then(mut head: Vec<Step>, tail: impl IntoIterator<Item = Step>) -> Vec<Step> {
    head.extend(tail);
    head
}

fn continuation(after: i64) -> Step {
    let message = FanoutMessage { segment: None, ..segment_queued(0, after) };
    Step::Send(vec![message.into()])
}

#[test]
fn a_first_chunk_with_more_followers_continues_with_a_new_message() {
    let mut w = world(event(EventKind::Post, 0), Some(post(Visibility::Public)));
    w.followers = followers(1..=5, &[], &[2]);
    let reads =
        ChunkReads { followers: page(0, 3, false), author_window: Some(user(AUTHOR)), ..Default::default() };
    let expected = then(
        opening(EventKind::Post, 0),
        [
            Step::ReadChunk(reads),
            Step::WriteWithBatch(vec![deliver(1), deliver(3), deliver(AUTHOR)]),
            Step::FaultPoint(FaultPoint::AfterChunk { author: user(AUTHOR) }),
            Step::RecordChunk { progress: 3, delivered: 3 },
            continuation(3),
        ],
    );
    assert_eq!(steps(message(0), settings(FanoutMode::Push, 3), &w), expected);
}

#[test]
fn the_last_chunk_marks_the_event_done() {
    let mut w = world(event(EventKind::Post, 3), Some(post(Visibility::Public)));
    w.followers = followers(1..=5, &[], &[4]);
    let reads = ChunkReads { followers: page(3, 3, false), ..Default::default() };
    let expected = |after| {
        then(
            opening(EventKind::Post, after),
            [
                Step::ReadChunk(reads),
                Step::WriteWithBatch(vec![deliver(5)]),
                Step::RecordChunk { progress: 5, delivered: 1 },
                Step::MarkDone,
            ],
        )
    };
    let s = settings(FanoutMode::Push, 3);
    assert_eq!(steps(message(3), s, &w), expected(3));
    // A resend (the event's first message again): the recorded progress wins over the message's.
    assert_eq!(steps(message(0), s, &w), expected(0), "the recorded progress wins over the message's");
    // A chunk filled exactly by the last followers ends without one more message.
    w.followers = followers(1..=6, &[], &[4]);
    assert_eq!(steps(message(3), s, &w)[4], Step::WriteWithBatch(vec![deliver(5), deliver(6)]));
    assert_eq!(steps(message(3), s, &w)[6], Step::MarkDone);
}

#[test]
fn a_post_deleted_before_its_event_runs_delivers_nothing_and_its_removal_reaches_every_window() {
    let w = world(event(EventKind::Post, 0), Some(deleted()));
    let s = settings(FanoutMode::Hybrid, 3);
    assert_eq!(steps(message(0), s, &w), then(opening(EventKind::Post, 0), [Step::MarkDone]));
    for post in [deleted(), post(Visibility::Private)] {
        let mut w = world(event(EventKind::RemovePost, 0), Some(post));
        // 2 is pulled: any window may hold the post from a time its edge was pushed.
        w.followers = followers(1..=3, &[2], &[3]);
        let reads = ChunkReads { followers: page(0, 3, false), ..Default::default() };
        let expected = then(
            opening(EventKind::RemovePost, 0),
            [
                Step::ReadChunk(reads),
                Step::WriteWithBatch(vec![remove(1), remove(2)]),
                Step::RecordChunk { progress: 3, delivered: 2 },
                Step::MarkDone,
            ],
        );
        assert_eq!(steps(message(0), s, &w), expected, "{post:?}");
    }
    // A post row that is gone has no version to remove by: nothing to do.
    let w = world(event(EventKind::RemovePost, 0), None);
    assert_eq!(steps(message(0), s, &w), then(opening(EventKind::RemovePost, 0), [Step::MarkDone]));
}

#[test]
fn a_stale_removal_removes_nothing() {
    let w = world(event(EventKind::RemovePost, 0), Some(post(Visibility::Public)));
    let expected = then(opening(EventKind::RemovePost, 0), [Step::MarkDone]);
    assert_eq!(steps(message(0), settings(FanoutMode::Push, 3), &w), expected);
}

#[test]
fn a_suspended_authors_delivery_is_held_unless_reinstated_meanwhile() {
    let suspended = PostRead {
        now: PostNow { author_suspended: true, ..post(Visibility::Public).now },
        ..post(Visibility::Public)
    };
    let mut w = world(event(EventKind::Post, 0), Some(suspended));
    let s = settings(FanoutMode::Hybrid, 3);
    assert_eq!(steps(message(0), s, &w), then(opening(EventKind::Post, 0), [Step::Hold]));
    w.still_suspended = false;
    let reinstated = "author reinstated while holding the event; retrying";
    assert_eq!(failing(message(0), s, &w), (then(opening(EventKind::Post, 0), [Step::Hold]), reinstated));
}

#[test]
fn reader_events_converge_the_mirrors_first() {
    let s = settings(FanoutMode::Hybrid, 3);
    let read = Step::ReadEvent(queued(0));
    let converge = Step::ConvergePair { reader: user(READER), author: user(AUTHOR) };
    let mut w = world(event(EventKind::Backfill, 0), None);
    w.entries = vec![Entry {
        created_at: 900,
        post_id: PostId::from_trusted(400),
        author_id: user(AUTHOR),
        version: 1,
    }];
    let backfill =
        WindowOp::Backfill { author_id: user(AUTHOR), event: EVENT, entries: w.entries.clone(), cap: CAP };
    let reads = Step::ReadReader { reader: user(READER), backfill: Some((user(AUTHOR), CAP)) };
    let expected = vec![
        read.clone(),
        converge.clone(),
        reads.clone(),
        Step::WriteWindow { reader: user(READER), op: backfill },
        Step::MarkDone,
    ];
    assert_eq!(steps(message(0), s, &w), expected);
    w.reader_active = false;
    let inactive = vec![read.clone(), converge.clone(), reads, Step::MarkDone];
    assert_eq!(steps(message(0), s, &w), inactive, "a reader without a window gets no write");

    let w = world(event(EventKind::RemoveAuthor, 0), None);
    let removal = WindowOp::RemoveAuthor { author_id: user(AUTHOR), event: EVENT };
    let expected = vec![
        read.clone(),
        converge.clone(),
        Step::ReadReader { reader: user(READER), backfill: None },
        Step::WriteWindow { reader: user(READER), op: removal },
        Step::MarkDone,
    ];
    assert_eq!(steps(message(0), s, &w), expected);

    let w = world(event(EventKind::GraphMirror, 0), None);
    assert_eq!(steps(message(0), s, &w), vec![read.clone(), converge, Step::MarkDone]);

    let w = world(Event { reader: None, ..event(EventKind::Backfill, 0) }, None);
    assert_eq!(failing(message(0), s, &w), (vec![read], "reader event without reader"));
}

#[test]
fn hybrid_pushes_to_pushed_edges_reviews_the_author_and_reaches_live_pulled_readers() {
    let mut w = world(event(EventKind::Post, 0), Some(post(Visibility::Public)));
    // 1, 2 and 5 pushed (2 without a window); 3 and 4 pulled; 9 is live but not a follower.
    w.followers = followers(1..=5, &[3, 4], &[2]);
    w.live = vec![2, 3, 9];
    w.rates = Some(moved_rates());
    let reads = ChunkReads {
        followers: page(0, 3, true),
        live: live(0, 30, true),
        author_rates: Some(user(AUTHOR)),
        author_window: Some(user(AUTHOR)),
    };
    let review = PolicyJob::AuthorEdges { author: user(AUTHOR), after_follower_id: 0, after_rate: None };
    let expected = then(
        opening(EventKind::Post, 0),
        [
            Step::ReadChunk(reads),
            Step::Send(vec![review.into()]),
            Step::WriteWithBatch(vec![deliver(1), deliver(5), deliver(3), deliver(AUTHOR)]),
            Step::RecordChunk { progress: 5, delivered: 3 },
            Step::MarkDone,
        ],
    );
    let s = settings(FanoutMode::Hybrid, 3);
    assert_eq!(steps(message(0), s, &w), expected);
    w.rates = Some(AuthorRates { post_rate_decided: 8.0, ..moved_rates() });
    assert!(!steps(message(0), s, &w).iter().any(|s| matches!(s, Step::Send(_))), "rates unmoved: no review");
}

#[test]
fn a_full_live_page_continues_as_a_live_reach() {
    let mut w = world(event(EventKind::Post, 0), Some(post(Visibility::Public)));
    w.followers = followers(1..=12, &(1..=12).collect::<Vec<_>>(), &[]);
    w.live = (1..=12).collect();
    let found = steps(message(0), settings(FanoutMode::Hybrid, 1), &w);
    let next = LiveReach { live_post_id: PostId::from_trusted(POST), after_reader: 10 };
    assert_eq!(found[4], Step::Send(vec![next.into()]), "{found:?}");
    let Step::WriteWithBatch(ops) = &found[5] else { panic!("{found:?}") };
    assert_eq!(ops.len(), 11, "ten live readers and the author: {ops:?}");

    // The next page reads the post again, then the leases after the last one reached.
    let s = settings(FanoutMode::Hybrid, 1);
    let reach = Work::Live(next);
    let reads = ChunkReads { live: live(10, 10, true), ..Default::default() };
    let expected =
        vec![read_post(false), Step::ReadChunk(reads), Step::WriteWindows(vec![deliver(11), deliver(12)])];
    assert_eq!(steps(reach, s, &w), expected);
    for gone in [Some(deleted()), None, Some(post(Visibility::Private))] {
        let w = World { post: gone, ..w.clone() };
        assert_eq!(steps(reach, s, &w), vec![read_post(false)]);
    }
    let push = settings(FanoutMode::Push, 1);
    assert_eq!(steps(reach, push, &w), vec![read_post(false)]);
}

fn tagged(tags: u8) -> World {
    let mut w = world(event(EventKind::Post, 0), Some(PostRead { tags, ..post(Visibility::Public) }));
    w.tag_keys = (0..tags).map(|i| IndexKey::tag(&format!("t{i}"))).collect();
    w
}

#[test]
fn a_tagged_posts_first_chunk_starts_one_page_per_tag_and_later_chunks_none() {
    let mut w = tagged(2);
    w.followers = followers(1..=5, &[], &[]);
    let reach = |tag| TagReach { tag_post_id: PostId::from_trusted(POST), tag, after_reader: 0 };
    for mode in [FanoutMode::Push, FanoutMode::Hybrid, FanoutMode::Pull] {
        let found = steps(message(0), settings(mode, 3), &w);
        let sent: Vec<&Step> = found.iter().filter(|s| matches!(s, Step::Send(_))).collect();
        assert_eq!(sent[0], &Step::Send(vec![reach(0).into(), reach(1).into()]), "{mode:?}: {found:?}");
    }
    let starts_tags =
        |s: &Step| matches!(s, Step::Send(m) if m.iter().any(|m| matches!(m, QueueMessage::Tag(_))));
    let later = World { event: Some(event(EventKind::Post, 3)), ..w.clone() };
    let found = steps(message(3), settings(FanoutMode::Push, 3), &later);
    assert!(!found.iter().any(starts_tags), "{found:?}");
    // A removal starts nothing (tag-only entries are hidden at read time).
    let removal = World { event: Some(event(EventKind::RemovePost, 0)), post: Some(deleted()), ..w };
    let found = steps(message(0), settings(FanoutMode::Push, 3), &removal);
    assert!(!found.iter().any(starts_tags), "{found:?}");
}

#[test]
fn a_tag_page_delivers_to_its_followers_with_a_window_and_continues() {
    let mut w = tagged(2);
    w.tag_followers = vec![(1, true), (AUTHOR, true), (150, false), (151, true), (152, true)];
    let s = settings(FanoutMode::Hybrid, 3);
    let reach = TagReach { tag_post_id: PostId::from_trusted(POST), tag: 1, after_reader: 0 };
    let page = TagPage { key: IndexKey::tag("t1"), after: 0, chunk: 3 };
    let next = TagReach { after_reader: 150, ..reach };
    let expected = vec![
        Step::ReadTagged(PostId::from_trusted(POST)),
        Step::ReadTagFollowers(page.clone()),
        Step::WriteWindows(vec![deliver(1)]),
        Step::Send(vec![next.into()]),
    ];
    let (found, ended, cost) = run(Work::Tag(reach), s, &w);
    assert_eq!((found, ended), (expected, Ok(())), "the author's own window is not written again");
    assert_eq!((cost.waits, cost.statements, cost.window_calls, cost.queue_sends), (5, 3, 1, 1));
    let last = vec![
        Step::ReadTagged(PostId::from_trusted(POST)),
        Step::ReadTagFollowers(TagPage { after: 150, ..page }),
        Step::WriteWindows(vec![deliver(151), deliver(152)]),
    ];
    assert_eq!(steps(Work::Tag(next), s, &w), last, "the last page ends the chain");
    // Read again now: deleted, gone, made followers-only, or the tag edited away.
    let read_only = vec![Step::ReadTagged(PostId::from_trusted(POST))];
    let cases = [
        World { post: Some(deleted()), ..w.clone() },
        World { post: None, ..w.clone() },
        // Made followers-only (its keys still listed: the plan checks the visibility itself).
        World { post: Some(post(Visibility::Followers)), ..w.clone() },
    ];
    for gone in cases {
        assert_eq!(steps(Work::Tag(reach), s, &gone), read_only);
    }
    let edited = World { tag_keys: vec![IndexKey::tag("t0")], ..w.clone() };
    assert_eq!(steps(Work::Tag(reach), s, &edited), read_only, "its second tag is gone");
    let mut suspended = w.clone();
    suspended.post =
        suspended.post.map(|p| PostRead { now: PostNow { author_suspended: true, ..p.now }, ..p });
    assert_eq!(steps(Work::Tag(reach), s, &suspended), read_only);
}

#[test]
fn pull_mode_writes_only_the_author_and_live_readers() {
    let mut w = world(event(EventKind::Post, 0), Some(post(Visibility::Followers)));
    w.followers = followers(1..=5, &[], &[]);
    w.live = vec![2, 4];
    let reads =
        ChunkReads { live: live(0, 30, false), author_window: Some(user(AUTHOR)), ..Default::default() };
    let expected = then(
        opening(EventKind::Post, 0),
        [
            Step::ReadChunk(reads),
            Step::WriteWithBatch(vec![deliver(2), deliver(4), deliver(AUTHOR)]),
            Step::RecordChunk { progress: 0, delivered: 1 },
            Step::MarkDone,
        ],
    );
    assert_eq!(steps(message(0), settings(FanoutMode::Pull, 3), &w), expected);
}

#[test]
fn a_private_post_reaches_the_author_only_and_an_inactive_author_nobody() {
    let mut w = world(event(EventKind::Post, 0), Some(post(Visibility::Private)));
    w.followers = followers(1..=5, &[], &[]);
    let reads = ChunkReads { author_window: Some(user(AUTHOR)), ..Default::default() };
    let s = settings(FanoutMode::Hybrid, 3);
    let found = steps(message(0), s, &w);
    assert_eq!(found[3..5], [Step::ReadChunk(reads), Step::WriteWithBatch(vec![deliver(AUTHOR)])]);
    w.author_active = false;
    assert_eq!(steps(message(0), s, &w)[4], Step::WriteWithBatch(Vec::new()), "still recorded, as one chunk");
}

#[test]
fn dead_letters_finished_events_and_stray_replies() {
    let w = world(event(EventKind::Post, 0), Some(post(Visibility::Public)));
    let s = settings(FanoutMode::Hybrid, 3);
    let first = FanoutMessage::start(OutboxId::from_trusted(EVENT));
    let dead = Work::Event { message: first, dead_letter_sent_at: Some(77) };
    let mark = Step::MarkDead { event: OutboxId::from_trusted(EVENT), sent_at: 77 };
    assert_eq!(steps(dead, s, &w), vec![mark]);
    for state in [EventState::Done, EventState::Dead, EventState::Held] {
        let w = World { event: Some(Event { state, ..event(EventKind::Post, 0) }), ..w.clone() };
        assert_eq!(steps(message(0), s, &w).len(), 1, "only the event is read: {state:?}");
    }
    let gone = World { event: None, ..w.clone() };
    assert_eq!(steps(message(0), s, &gone).len(), 1);
    assert_eq!(block_on(carry(&Stray, message(0), s)), Err(Stop::Fail(UNEXPECTED)));
}

/// A pushing author's post: followers 1 to 5, 2 without a window.
fn pushed() -> World {
    let mut w = world(event(EventKind::Post, 0), Some(post(Visibility::Public)));
    w.followers = followers(1..=5, &[], &[2]);
    w
}

/// The same author in hybrid mode: 3 and 4 pulled, live sockets of 2, 3 and a non-follower 9.
fn mixed() -> World {
    World { followers: followers(1..=5, &[3, 4], &[2]), live: vec![2, 3, 9], ..pushed() }
}

fn suspended() -> World {
    let now = PostNow { author_suspended: true, ..post(Visibility::Public).now };
    world(event(EventKind::Post, 0), Some(PostRead { now, ..post(Visibility::Public) }))
}

fn last_chunk() -> World {
    World { event: Some(event(EventKind::Post, 3)), ..pushed() }
}

fn one_chunk() -> World {
    World { followers: followers(1..=3, &[], &[]), ..pushed() }
}

fn reviewed() -> World {
    World { rates: Some(moved_rates()), ..mixed() }
}

fn quiet() -> World {
    let rates = AuthorRates { post_rate_decided: 8.0, ..moved_rates() };
    World { rates: Some(rates), live: Vec::new(), ..mixed() }
}

fn removal() -> World {
    World {
        followers: followers(1..=3, &[2], &[3]),
        ..world(event(EventKind::RemovePost, 0), Some(deleted()))
    }
}

fn gone() -> World {
    world(event(EventKind::Post, 0), Some(deleted()))
}

fn backfill() -> World {
    world(event(EventKind::Backfill, 0), None)
}

fn unfollow() -> World {
    World { reader_active: false, ..world(event(EventKind::RemoveAuthor, 0), None) }
}

fn mirror() -> World {
    world(event(EventKind::GraphMirror, 0), None)
}

type Scenario = (&'static str, Work, FanoutMode, fn() -> World, [u32; 5]);

/// (scenario, message, mode, storage) -> [waits, D1 statements, window calls, queue sends,
/// mirror convergences]; chunks of 3 followers.
fn costed() -> Vec<Scenario> {
    use FanoutMode::*;
    let reach = Work::Live(LiveReach { live_post_id: PostId::from_trusted(POST), after_reader: 0 });
    let first = FanoutMessage::start(OutboxId::from_trusted(EVENT));
    let dead = Work::Event { message: first, dead_letter_sent_at: Some(77) };
    vec![
        ("push: first chunk, more to come", message(0), Push, pushed, [7, 8, 3, 1, 0]),
        ("push: last chunk", message(3), Push, last_chunk, [7, 12, 2, 0, 0]),
        ("push: one chunk is all", message(0), Push, one_chunk, [7, 13, 4, 0, 0]),
        ("hybrid: first chunk, review, live", message(0), Hybrid, reviewed, [8, 16, 4, 1, 0]),
        ("hybrid: first chunk, quiet", message(0), Hybrid, quiet, [7, 15, 3, 0, 0]),
        ("pull: author and live readers", message(0), Pull, mixed, [7, 13, 3, 0, 0]),
        ("remove_post: a chunk", message(0), Hybrid, removal, [7, 9, 2, 0, 0]),
        ("post deleted before its event", message(0), Hybrid, gone, [3, 7, 0, 0, 0]),
        ("held: author suspended", message(0), Hybrid, suspended, [3, 3, 0, 0, 0]),
        ("backfill: reader with a window", message(0), Hybrid, backfill, [7, 5, 1, 0, 1]),
        ("remove_author: no window", message(0), Hybrid, unfollow, [6, 4, 0, 0, 1]),
        ("graph_mirror", message(0), Hybrid, mirror, [5, 3, 0, 0, 1]),
        ("live reach: a later page", reach, Hybrid, mixed, [4, 3, 1, 0, 0]),
        ("dead letter", dead, Hybrid, pushed, [1, 2, 0, 0, 0]),
    ]
}

/// What one message costs, per scenario: waits one after another (D1 round trips, a wave of
/// window calls, a queue send), D1 statements (one database), window calls, queue sends and
/// mirror convergences (three waits each; their statements are `services/graph.rs`'s).
#[test]
fn storage_waits_and_statements_per_chunk() {
    for (scenario, work, mode, storage, expected) in costed() {
        let (steps, ended, cost) = run(work, settings(mode, 3), &storage());
        assert_eq!(ended, Ok(()), "{scenario}");
        let found = [cost.waits, cost.statements, cost.window_calls, cost.queue_sends, cost.converges];
        assert_eq!(found, expected, "{scenario}: {steps:?}");
    }
}

/// An I/O that answers every step [`Reply::Ok`], whatever it asked.
struct Stray;

impl FanoutIo for Stray {
    type Error = String;

    async fn run(&self, _: Step) -> Result<Reply, String> {
        Ok(Reply::Ok)
    }
}

#[test]
fn a_reply_goes_only_to_followers_who_follow_the_account_replied_to_and_is_removed_from_all() {
    let s = settings(FanoutMode::Hybrid, 10);
    let replied = user(READER + 100);
    let reply = PostRead { reply_to: Some(replied), ..post(Visibility::Public) };
    let deliver = plan(Direction::Deliver, Some(reply.now), true);
    let reads = chunk_reads(&s, deliver, 0, &reply);
    assert_eq!(reads.followers.and_then(|p| p.must_follow), Some(replied));
    assert_eq!(reads.live.and_then(|p| p.must_follow), Some(replied));
    let gone = PostRead { now: PostNow { deleted: true, ..reply.now }, ..reply };
    let remove = plan(Direction::Remove, Some(gone.now), true);
    assert_eq!(chunk_reads(&s, remove, 0, &gone).followers.and_then(|p| p.must_follow), None);
    // A post that replies to nobody else goes to every follower.
    let own = chunk_reads(&s, deliver, 0, &post(Visibility::Public));
    assert_eq!(own.followers.and_then(|p| p.must_follow), None);
}

fn segment_message(segment: u16, after: i64) -> Work {
    Work::Event { message: segment_queued(segment, after), dead_letter_sent_at: None }
}

fn segment_queued(segment: u16, after: i64) -> FanoutMessage {
    FanoutMessage::in_segment(OutboxId::from_trusted(EVENT), segment, after, Unrecorded::default())
}

/// A pushing author's nine followers split three ways (ends 3 and 6), chunks of 3.
fn split_world() -> World {
    let mut w = world(event(EventKind::Post, 0), Some(post(Visibility::Public)));
    w.followers = followers(1..=9, &[], &[]);
    w.split_into = Segments::cut(&[3, 6]);
    w
}

fn split_settings() -> Settings {
    let target = SegmentTarget { chunk: 3, within_s: 1.0, chunk_s: 1.0, max_segments: 10 };
    Settings { segments: Some(target), ..settings(FanoutMode::Push, 3) }
}

fn sent(steps: &[Step]) -> Vec<QueueMessage> {
    steps
        .iter()
        .filter_map(|s| if let Step::Send(m) = s { Some(m.clone()) } else { None })
        .flatten()
        .collect()
}

#[test]
fn a_split_post_runs_its_segments_side_by_side_and_is_done_when_the_last_one_is() {
    let (w, s) = (split_world(), split_settings());
    let first = steps(message(0), s, &w);
    // The first message splits, starts segments 1 and 2 as their own chains, runs segment 0.
    let split = first.iter().position(|s| matches!(s, Step::Segments { split: Some(_) })).expect("split");
    assert!(split < first.iter().position(|s| matches!(s, Step::ReadChunk(_))).unwrap(), "{first:?}");
    let start = segment_queued;
    assert_eq!(sent(&first), vec![start(1, 3).into(), start(2, 6).into()]);
    let written = |steps: &[Step]| -> Vec<(UserId, WindowOp)> {
        steps
            .iter()
            .filter_map(|s| if let Step::WriteWithBatch(ops) = s { Some(ops.clone()) } else { None })
            .flatten()
            .collect()
    };
    // Segment 0's readers and the author's own window (its first chunk), nobody past its end.
    assert_eq!(written(&first), vec![deliver(1), deliver(2), deliver(3), deliver(AUTHOR)]);
    assert!(first.contains(&Step::RecordSegment { segment: 0, progress: 3, last: true, delivered: 4 }));
    assert!(!first.contains(&Step::MarkDone), "two segments still run: {first:?}");
    // Segment 2 finishes before segment 1: still not done; segment 1 last: done.
    let third = steps(segment_message(2, 6), s, &w);
    assert_eq!(written(&third), vec![deliver(7), deliver(8), deliver(9)]);
    assert!(!third.contains(&Step::MarkDone) && sent(&third).is_empty(), "{third:?}");
    let second = steps(segment_message(1, 3), s, &w);
    assert_eq!(written(&second), vec![deliver(4), deliver(5), deliver(6)]);
    assert_eq!(second.last(), Some(&Step::MarkDone));
    // A redelivered segment message finds its segment done: nothing at all.
    let again = steps(segment_message(1, 3), s, &w);
    assert!(written(&again).is_empty() && !again.contains(&Step::MarkDone), "{again:?}");
}

#[test]
fn a_resent_split_event_restarts_only_its_unfinished_segments_from_their_progress() {
    let (w, s) = (split_world(), split_settings());
    steps(message(0), s, &w);
    // Segment 1 stopped after its first follower (a crash), segment 2 never started.
    w.segments.borrow_mut().record(1, 4, false);
    let resent = steps(message(0), s, &w);
    let start = segment_queued;
    assert_eq!(sent(&resent), vec![start(1, 4).into(), start(2, 6).into()]);
    assert!(!resent.iter().any(|s| matches!(s, Step::ReadChunk(_))), "segment 0 is done: {resent:?}");
    // Segment 1's chain resumes after follower 4, within its end.
    let resumed = steps(segment_message(1, 3), s, &w);
    let page = resumed.iter().find_map(|s| if let Step::ReadChunk(r) = s { r.followers } else { None });
    assert_eq!(page.map(|p| (p.after, p.until)), Some((4, 6)));
}

#[test]
fn a_post_deleted_mid_fan_out_stops_every_segment() {
    let (mut w, s) = (split_world(), split_settings());
    steps(message(0), s, &w);
    w.post = Some(deleted());
    let stopped = steps(segment_message(1, 3), s, &w);
    assert!(
        !stopped.iter().any(|s| matches!(s, Step::ReadChunk(_) | Step::WriteWithBatch(_))),
        "{stopped:?}"
    );
    assert_eq!(stopped.last(), Some(&Step::MarkDone), "the event ends: the other segments find it done");
    w.event = Some(Event { state: EventState::Done, ..event(EventKind::Post, 0) });
    assert_eq!(steps(segment_message(2, 6), s, &w), vec![Step::ReadEvent(segment_queued(2, 6))]);
}

#[test]
fn a_small_author_is_never_split() {
    let (mut w, s) = (split_world(), split_settings());
    w.split_into = Segments::default();
    let one = steps(message(0), s, &w);
    assert!(
        sent(&one).iter().all(|m| matches!(m, QueueMessage::Fanout(f) if f.segment.is_none())),
        "{one:?}"
    );
    assert!(one.contains(&Step::RecordChunk { progress: 3, delivered: 4 }), "{one:?}");
}

#[test]
fn a_segment_records_its_progress_every_few_chunks_and_with_its_last() {
    let (w, s) = (split_world(), Settings { record_every: 2, ..split_settings() });
    // Segment 1 (followers 4 to 6) in chunks of one: its first chunk carries its progress on.
    let s = Settings { chunk: 1, ..s };
    let records = |steps: &[Step]| steps.iter().filter(|s| matches!(s, Step::RecordSegment { .. })).count();
    steps(message(0), s, &w);
    let first = steps(segment_message(1, 3), s, &w);
    assert_eq!(records(&first), 0, "{first:?}");
    let carried = Unrecorded { chunks: 1, delivered: 1 };
    let next = FanoutMessage::in_segment(OutboxId::from_trusted(EVENT), 1, 4, carried);
    assert_eq!(sent(&first), vec![next.into()]);
    // The second records both (two windows), and goes on carrying nothing.
    let second = steps(Work::Event { message: next, dead_letter_sent_at: None }, s, &w);
    assert!(second.contains(&Step::RecordSegment { segment: 1, progress: 5, last: false, delivered: 2 }));
    assert_eq!(sent(&second), vec![segment_queued(1, 5).into()]);
    // The last records at once, whatever it carried.
    let carried = Unrecorded { chunks: 0, delivered: 0 }.and(0);
    let last = FanoutMessage::in_segment(OutboxId::from_trusted(EVENT), 1, 5, carried);
    let ended = steps(Work::Event { message: last, dead_letter_sent_at: None }, s, &w);
    assert!(
        ended.contains(&Step::RecordSegment { segment: 1, progress: 6, last: true, delivered: 1 }),
        "{ended:?}"
    );
}
