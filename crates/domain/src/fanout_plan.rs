//! The fan-out consumer's I/O order, as a pure step machine: given one queue message and the
//! replies so far, the next storage step, or the end. `services/fanout` runs each step and
//! feeds its reply back; it decides nothing itself.
//!
//! *What* a step does is `domain/fanout.rs`'s (the plan by the post's state now, the progress
//! after a chunk); this module says in which order the reads and writes run and which run side
//! by side. The orders it keeps (ARCHITECTURE.md invariants 2, 3, 8 and 12):
//! - a post event reads its row, then the post *when the chunk runs*, and decides by that state;
//! - a chunk's windows are written before its progress is recorded, its progress before the
//!   continuation is sent or the event is marked done, and only the last chunk marks it done;
//! - a reader event converges the pair's mirrors before it reads the reader or the author's
//!   posts, and marks the event done only after the window write.
//!
//! A post chunk's window writes are not made by the message: [`Step::WriteWithBatch`] hands
//! them to the consumer batch, which writes every chunk's operations with one call per reader
//! (`fanout::merge_per_reader`) and then resumes each plan.

use super::fanout::{after_chunk, plan, Direction, Next, Plan, PostNow};
use super::ids::{OutboxId, PostId, UserId};
use super::outbox::{EventKind, EventState};
use super::policy::{AuthorRates, FanoutMode, Policy};
use super::queue::{FanoutMessage, LiveReach, PolicyJob, QueueMessage};
use super::window::{Entry, WindowOp};

/// Open sockets one live page checks per fan-out chunk of followers: the live set is paged
/// and filtered by the author's side of the edges, most of it following someone else.
pub const LIVE_SCAN_PER_CHUNK: usize = 10;

/// What the plan reads of the configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub policy: Policy,
    /// Followers per chunk (`FANOUT_CHUNK`).
    pub chunk: usize,
    /// The window cap deliveries and backfills carry (`FEED_WINDOW`).
    pub window_cap: usize,
    /// The batch's time, for the author's rates.
    pub now: i64,
}

/// One queue message for the fan-out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// A step of an outbox event; a dead letter carries when its message was first sent.
    Event { message: FanoutMessage, dead_letter_sent_at: Option<i64> },
    /// A later page of a post's live readers.
    Live(LiveReach),
}

/// An outbox row, as far as the plan reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    pub id: OutboxId,
    pub kind: EventKind,
    pub post_id: Option<PostId>,
    pub author: UserId,
    pub reader: Option<UserId>,
    pub state: EventState,
    /// Where the recorded progress stands (the last follower a chunk reached).
    pub cursor: i64,
}

/// A post as read when the step runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PostRead {
    pub author: UserId,
    pub created_at: i64,
    pub version: i64,
    pub now: PostNow,
}

/// The author's followers after `after` from the author's side, `chunk` of them read with one
/// row of lookahead (`fanout::split_lookahead`), pushed edges only or all; then, from the
/// followers' own rows, which of them have a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FollowerPage {
    pub author: UserId,
    pub after: i64,
    pub chunk: usize,
    pub pushed_only: bool,
}

/// The author's followers with an open socket (a live lease) after `after`, `scan` leases at
/// a time, checked against the author's side: only those not pushed to, or all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LivePage {
    pub author: UserId,
    pub after: i64,
    pub scan: usize,
    pub unpushed_only: bool,
}

/// A chunk's reads, run side by side (each lane waits only for its own reads).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ChunkReads {
    pub followers: Option<FollowerPage>,
    pub live: Option<LivePage>,
    /// The author's rates, which say whether their edges are due a re-decision.
    pub author_rates: Option<UserId>,
    /// Whether the author has a window (the author's own gets the post with the first chunk).
    pub author_window: Option<UserId>,
}

impl ChunkReads {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// What a chunk's reads found (the lanes not asked for stay empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkFound {
    /// The followers scanned (progress moves past them all), and whether more come after.
    pub scanned: Vec<UserId>,
    pub more: bool,
    /// Those of them with a window.
    pub active: Vec<UserId>,
    pub live: Vec<UserId>,
    /// Where the next live page starts, when this one was full.
    pub live_next: Option<i64>,
    pub author_rates: Option<AuthorRates>,
    pub author_active: bool,
}

/// Where the black-box tests inject a failure (test hooks; nothing at all in production).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// Before a post event's chunk: an outage of the author's fan-out.
    StallFanout { author: UserId },
    /// After a chunk's window writes, before its progress is recorded: a crash.
    AfterChunk { author: UserId },
}

/// The next I/O of one message.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The queue gave up on a message first sent at `sent_at`: mark that attempt dead.
    MarkDead {
        event: OutboxId,
        sent_at: i64,
    },
    ReadEvent(OutboxId),
    FaultPoint(FaultPoint),
    ReadPost(PostId),
    /// Park the event while its author is suspended (false back: reinstated meanwhile).
    Hold,
    /// Bring the pair's mirrors to their authoritative sides' current state.
    ConvergePair {
        reader: UserId,
        author: UserId,
    },
    /// Whether the reader has a window, beside the author's posts for a backfill (`limit`).
    ReadReader {
        reader: UserId,
        backfill: Option<(UserId, usize)>,
    },
    WriteWindow {
        reader: UserId,
        op: WindowOp,
    },
    ReadChunk(ChunkReads),
    Send(Vec<QueueMessage>),
    /// Window writes made now, one call per reader.
    WriteWindows(Vec<(UserId, WindowOp)>),
    /// Window writes made with the consumer batch's other chunks, one call per reader.
    WriteWithBatch(Vec<(UserId, WindowOp)>),
    RecordChunk {
        progress: i64,
        delivered: usize,
    },
    MarkDone,
    /// Nothing more: ack the message.
    Done,
    /// Give the message back to the queue.
    Fail(&'static str),
}

/// The answer to the last step.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Before the first step.
    Start,
    Event(Option<Event>),
    Post(Option<PostRead>),
    Held(bool),
    Reader {
        active: bool,
        entries: Vec<Entry>,
    },
    Chunk(ChunkFound),
    /// A write, a send, a convergence or a fault point passed.
    Ok,
}

/// One message's plan: call [`FanoutPlan::next`] with [`Reply::Start`], then with each step's
/// reply, until [`Step::Done`] or [`Step::Fail`].
#[derive(Debug)]
pub struct FanoutPlan {
    settings: Settings,
    state: State,
}

#[derive(Debug)]
enum State {
    Start(Work),
    Reading(FanoutMessage),
    Post(PostEvent),
    Reader(ReaderEvent),
    Live(LiveStage),
    /// The last write is made; `Ok` ends the message.
    Finishing,
    Over,
}

impl FanoutPlan {
    pub fn new(work: Work, settings: Settings) -> Self {
        Self { settings, state: State::Start(work) }
    }

    /// The next step, given the reply to the previous one.
    pub fn next(&mut self, reply: Reply) -> Step {
        let (state, step) = advance(std::mem::replace(&mut self.state, State::Over), reply, &self.settings);
        self.state = state;
        step
    }
}

const UNEXPECTED: &str = "fan-out plan: a reply that does not answer the step";

fn advance(state: State, reply: Reply, s: &Settings) -> (State, Step) {
    match (state, reply) {
        (State::Start(Work::Event { message, dead_letter_sent_at: Some(sent_at) }), _) => {
            (State::Finishing, Step::MarkDead { event: message.outbox_id, sent_at })
        }
        (State::Start(Work::Event { message, .. }), _) => {
            (State::Reading(message), Step::ReadEvent(message.outbox_id))
        }
        (State::Start(Work::Live(reach)), _) => {
            (State::Live(LiveStage::Post(reach)), Step::ReadPost(reach.live_post_id))
        }
        (State::Reading(message), Reply::Event(event)) => on_event(message, event),
        (State::Post(event), reply) => event.advance(reply, s),
        (State::Reader(event), reply) => event.advance(reply, s),
        (State::Live(stage), reply) => stage.advance(reply, s),
        (State::Finishing, Reply::Ok) => (State::Over, Step::Done),
        _ => (State::Over, Step::Fail(UNEXPECTED)),
    }
}

/// An event that is gone or no longer pending has nothing (more) to do.
fn on_event(message: FanoutMessage, event: Option<Event>) -> (State, Step) {
    let Some(event) = event.filter(|e| e.state == EventState::Pending) else {
        return (State::Over, Step::Done);
    };
    let start = message.after_follower_id.max(event.cursor);
    match (event.kind, event.post_id, event.reader) {
        (EventKind::Post, Some(post_id), _) => {
            let chunk = PostChunk { event, post_id, start };
            (chunk.at(PostStage::Stall), Step::FaultPoint(FaultPoint::StallFanout { author: event.author }))
        }
        (EventKind::RemovePost, Some(post_id), _) => {
            (PostChunk { event, post_id, start }.at(PostStage::Post), Step::ReadPost(post_id))
        }
        (EventKind::Post | EventKind::RemovePost, None, _) => {
            (State::Over, Step::Fail("post event without post"))
        }
        (_, _, Some(reader)) => {
            let step = Step::ConvergePair { reader, author: event.author };
            (State::Reader(ReaderEvent { event, reader, stage: ReaderStage::Converging }), step)
        }
        (_, _, None) => (State::Over, Step::Fail("reader event without reader")),
    }
}

/// A single-reader event (`remove_author`, `backfill`, `graph_mirror`). Reader-scoped window
/// operations carry their outbox id: the window applies only the newest one per author, so a
/// late or repeated unfollow cannot undo a later follow (and back).
#[derive(Debug, Clone, Copy)]
struct ReaderEvent {
    event: Event,
    reader: UserId,
    stage: ReaderStage,
}

#[derive(Debug, Clone, Copy)]
enum ReaderStage {
    Converging,
    Reading,
    Writing,
}

impl ReaderEvent {
    fn at(self, stage: ReaderStage) -> State {
        State::Reader(Self { stage, ..self })
    }

    fn advance(self, reply: Reply, s: &Settings) -> (State, Step) {
        let Self { event, reader, .. } = self;
        match (self.stage, reply) {
            (ReaderStage::Converging, Reply::Ok) if event.kind == EventKind::GraphMirror => {
                (State::Finishing, Step::MarkDone)
            }
            // The mirror first: once a backfill is done the feed stops pulling this author for
            // the reader (the in-flight horizon), so fan-out must already page the new follower.
            (ReaderStage::Converging, Reply::Ok) => {
                let backfill = (event.kind == EventKind::Backfill).then_some((event.author, s.window_cap));
                (self.at(ReaderStage::Reading), Step::ReadReader { reader, backfill })
            }
            // A reader without a window has nothing to clean or fill; it is built on first read.
            (ReaderStage::Reading, Reply::Reader { active: false, .. }) => (State::Finishing, Step::MarkDone),
            (ReaderStage::Reading, Reply::Reader { active: true, entries }) => {
                let (author_id, id) = (event.author, event.id.get());
                let op = match event.kind {
                    EventKind::Backfill => {
                        WindowOp::Backfill { author_id, event: id, entries, cap: s.window_cap }
                    }
                    _ => WindowOp::RemoveAuthor { author_id, event: id },
                };
                (self.at(ReaderStage::Writing), Step::WriteWindow { reader, op })
            }
            (ReaderStage::Writing, Reply::Ok) => (State::Finishing, Step::MarkDone),
            _ => (State::Over, Step::Fail(UNEXPECTED)),
        }
    }
}

/// One chunk of a post event (`post`: deliver, `remove_post`: remove), decided by the post's
/// state read now.
#[derive(Debug, Clone, Copy)]
struct PostChunk {
    event: Event,
    post_id: PostId,
    /// The chunk starts after this follower (the message's or the recorded progress).
    start: i64,
}

#[derive(Debug)]
struct PostEvent {
    chunk: PostChunk,
    stage: PostStage,
}

#[derive(Debug)]
enum PostStage {
    Stall,
    Post,
    Holding,
    Reading { post: PostRead, plan: Plan },
    Sending { ops: Vec<(UserId, WindowOp)>, written: Written },
    Writing(Written),
    AfterChunk { progress: i64, delivered: usize, next: Next },
    Recording(Next),
}

/// What a chunk leaves for after its window writes.
#[derive(Debug)]
struct Written {
    scanned: Vec<i64>,
    more: bool,
    /// Windows written: followers with a window, and the author's own.
    delivered: usize,
}

impl PostEvent {
    fn advance(self, reply: Reply, s: &Settings) -> (State, Step) {
        let chunk = self.chunk;
        match (self.stage, reply) {
            (PostStage::Stall, Reply::Ok) => (chunk.at(PostStage::Post), Step::ReadPost(chunk.post_id)),
            (PostStage::Post, Reply::Post(post)) => chunk.on_post(post, s),
            (PostStage::Holding, Reply::Held(true)) => (State::Over, Step::Done),
            // Reinstated since the read: the retried message reads the state again and delivers.
            (PostStage::Holding, Reply::Held(false)) => {
                (State::Over, Step::Fail("author reinstated while holding the event; retrying"))
            }
            (PostStage::Reading { post, plan }, Reply::Chunk(found)) => chunk.on_found(post, plan, found, s),
            (PostStage::Sending { ops, written }, Reply::Ok) => {
                (chunk.at(PostStage::Writing(written)), Step::WriteWithBatch(ops))
            }
            (PostStage::Writing(written), Reply::Ok) => chunk.on_written(written),
            (PostStage::AfterChunk { progress, delivered, next }, Reply::Ok) => {
                (chunk.at(PostStage::Recording(next)), Step::RecordChunk { progress, delivered })
            }
            (PostStage::Recording(Next::Continue { after_follower_id }), Reply::Ok) => {
                let message = FanoutMessage { outbox_id: chunk.event.id, after_follower_id };
                (State::Finishing, Step::Send(vec![message.into()]))
            }
            (PostStage::Recording(Next::Done), Reply::Ok) => (State::Finishing, Step::MarkDone),
            _ => (State::Over, Step::Fail(UNEXPECTED)),
        }
    }
}

impl PostChunk {
    fn at(self, stage: PostStage) -> State {
        State::Post(PostEvent { chunk: self, stage })
    }

    fn on_post(self, post: Option<PostRead>, s: &Settings) -> (State, Step) {
        let direction =
            if self.event.kind == EventKind::Post { Direction::Deliver } else { Direction::Remove };
        let plan = plan(direction, post.map(|p| p.now), self.start == 0);
        if plan.hold {
            return (self.at(PostStage::Holding), Step::Hold);
        }
        let (Some(post), false) = (post, plan.is_nothing()) else {
            return (State::Finishing, Step::MarkDone);
        };
        let reads = chunk_reads(s, plan, self.start, &post);
        if reads.is_empty() {
            return self.on_found(post, plan, ChunkFound::default(), s);
        }
        (self.at(PostStage::Reading { post, plan }), Step::ReadChunk(reads))
    }

    /// The chunk's window operations, and the jobs its reads call for (sent first).
    fn on_found(self, post: PostRead, plan: Plan, found: ChunkFound, s: &Settings) -> (State, Step) {
        let mut ops = Vec::with_capacity(found.active.len() + found.live.len() + 1);
        if let Some(direction) = plan.followers {
            let op = post_op(s, self.post_id, &post, direction);
            ops.extend(found.active.iter().chain(&found.live).map(|&reader| (reader, op.clone())));
        }
        let author_active = plan.author && found.author_active;
        if author_active {
            ops.push((post.author, post_op(s, self.post_id, &post, Direction::Deliver)));
        }
        // The first chunk of a hybrid delivery re-decides the author's edges when their posting
        // rate moved (or they crossed the cap); a full live page continues as its own message.
        let mut jobs: Vec<QueueMessage> = Vec::new();
        if found.author_rates.is_some_and(|rates| s.policy.author_needs_rebalance(&rates, s.now)) {
            jobs.push(
                PolicyJob::AuthorEdges { author: post.author, after_follower_id: 0, after_rate: None }.into(),
            );
        }
        if let Some(after_reader) = found.live_next {
            jobs.push(LiveReach { live_post_id: self.post_id, after_reader }.into());
        }
        let delivered = found.active.len() + usize::from(author_active);
        let scanned = found.scanned.iter().map(|f| f.get()).collect();
        let written = Written { scanned, more: found.more, delivered };
        if jobs.is_empty() {
            return (self.at(PostStage::Writing(written)), Step::WriteWithBatch(ops));
        }
        (self.at(PostStage::Sending { ops, written }), Step::Send(jobs))
    }

    /// The progress to record; a chunk that continues passes the crash point first.
    fn on_written(self, written: Written) -> (State, Step) {
        let (progress, next) = after_chunk(self.start, &written.scanned, written.more);
        let delivered = written.delivered;
        if next == Next::Done {
            return (self.at(PostStage::Recording(next)), Step::RecordChunk { progress, delivered });
        }
        let fault = Step::FaultPoint(FaultPoint::AfterChunk { author: self.event.author });
        (self.at(PostStage::AfterChunk { progress, delivered, next }), fault)
    }
}

/// A chunk's reads: the followers it writes to, the live readers it reaches, and with the
/// first chunk of a delivery the author's own window and (hybrid) the author's rates.
fn chunk_reads(s: &Settings, plan: Plan, start: i64, post: &PostRead) -> ChunkReads {
    let first_delivery = start == 0 && plan.followers == Some(Direction::Deliver);
    let followers = recipients(s.policy.mode, plan.followers).map(|pushed_only| FollowerPage {
        author: post.author,
        after: start,
        chunk: s.chunk,
        pushed_only,
    });
    ChunkReads {
        followers,
        live: live_page(s, post.author, 0).filter(|_| first_delivery),
        author_rates: (first_delivery && s.policy.mode == FanoutMode::Hybrid).then_some(post.author),
        author_window: plan.author.then_some(post.author),
    }
}

/// Which followers a chunk writes to: `Some(true)` only pushed edges, `Some(false)` every
/// reader with a window, `None` nobody. Deliveries follow the system mode and each edge's mode;
/// removals reach every window (any may hold the post from a time its edge was pushed).
fn recipients(mode: FanoutMode, followers: Option<Direction>) -> Option<bool> {
    match (followers?, mode) {
        (Direction::Remove, _) | (Direction::Deliver, FanoutMode::Push) => Some(false),
        (Direction::Deliver, FanoutMode::Pull) => None,
        (Direction::Deliver, FanoutMode::Hybrid) => Some(true),
    }
}

/// The live readers a delivery reaches beside its pushed followers: the author's followers
/// with an open socket whom the fan-out does not push to (pulled edges in hybrid mode,
/// everyone in pull mode; nobody in push mode, where every reader with a window is pushed). The
/// post goes into their windows as if pushed, which is what tells their sockets. A full page
/// continues as a [`LiveReach`], so a big author's live readers are reached a page at a time.
fn live_page(s: &Settings, author: UserId, after: i64) -> Option<LivePage> {
    let unpushed_only = match s.policy.mode {
        FanoutMode::Push => return None,
        FanoutMode::Pull => false,
        FanoutMode::Hybrid => true,
    };
    Some(LivePage { author, after, scan: s.chunk * LIVE_SCAN_PER_CHUNK, unpushed_only })
}

/// The window operation that brings a reader's window to the post's current state.
fn post_op(s: &Settings, post_id: PostId, post: &PostRead, direction: Direction) -> WindowOp {
    let version = post.version;
    match direction {
        Direction::Deliver => {
            let entry = Entry { created_at: post.created_at, post_id, author_id: post.author, version };
            WindowOp::Deliver { entries: vec![entry], cap: s.window_cap }
        }
        Direction::Remove => WindowOp::RemovePost { post_id, version, created_at: post.created_at },
    }
}

/// A later page of a post's live readers: the post's state is read again, so a post deleted,
/// hidden, taken down or held meanwhile reaches nobody.
#[derive(Debug)]
enum LiveStage {
    Post(LiveReach),
    Reading { reach: LiveReach, post: PostRead },
    Sending(Vec<(UserId, WindowOp)>),
    Writing,
}

impl LiveStage {
    fn advance(self, reply: Reply, s: &Settings) -> (State, Step) {
        match (self, reply) {
            (Self::Post(reach), Reply::Post(post)) => {
                let delivers =
                    |p: &PostRead| plan(Direction::Deliver, Some(p.now), false).followers.is_some();
                let Some(post) = post.filter(delivers) else { return (State::Over, Step::Done) };
                let Some(page) = live_page(s, post.author, reach.after_reader) else {
                    return (State::Over, Step::Done);
                };
                let reads = ChunkReads { live: Some(page), ..ChunkReads::default() };
                (State::Live(Self::Reading { reach, post }), Step::ReadChunk(reads))
            }
            (Self::Reading { reach, post }, Reply::Chunk(found)) => {
                let op = post_op(s, reach.live_post_id, &post, Direction::Deliver);
                let ops = found.live.iter().map(|&reader| (reader, op.clone())).collect();
                match found.live_next {
                    Some(after_reader) => {
                        let next = LiveReach { live_post_id: reach.live_post_id, after_reader };
                        (State::Live(Self::Sending(ops)), Step::Send(vec![next.into()]))
                    }
                    None => write_live(ops),
                }
            }
            (Self::Sending(ops), Reply::Ok) => write_live(ops),
            (Self::Writing, Reply::Ok) => (State::Over, Step::Done),
            _ => (State::Over, Step::Fail(UNEXPECTED)),
        }
    }
}

fn write_live(ops: Vec<(UserId, WindowOp)>) -> (State, Step) {
    if ops.is_empty() {
        return (State::Over, Step::Done);
    }
    (State::Live(LiveStage::Writing), Step::WriteWindows(ops))
}

#[cfg(test)]
mod tests;
