//! The fan-out consumer's I/O order, as one async function over its I/O: [`carry`] runs one
//! queue message, awaiting each storage [`Step`] from a [`FanoutIo`] (one method: the step in,
//! its [`Reply`] out). `services/fanout` implements it over D1, the window objects and the
//! queue; it decides nothing itself. The tests implement it over a fake storage.
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
//! (`fanout::merge_per_reader`) and then lets each message go on.

use super::fanout::{after_chunk, plan, Direction, Next, Plan, PostNow};
use super::fanout_segments::{SegmentTarget, Segments};
use super::ids::{OutboxId, PostId, UserId};
use super::live::MarkedEdges;
use super::outbox::{EventKind, EventState};
use super::policy::{AuthorRates, FanoutMode, Policy};
use super::queue::{FanoutMessage, LiveReach, PolicyJob, QueueMessage, TagReach, Unrecorded};
use super::tags::IndexKey;
use super::visibility::Visibility;
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
    /// How a big post splits into segments that run side by side (`None`: one chain).
    pub segments: Option<SegmentTarget>,
    /// A segment records its progress on the event's row every this many chunks (and with its
    /// last): each record is a write on the author's database, which every chunk of a big post
    /// shares. A chunk left unrecorded is redone after a crash (windows dedup by post id).
    pub record_every: u16,
}

/// One queue message for the fan-out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// A step of an outbox event; a dead letter carries when its message was first sent.
    Event { message: FanoutMessage, dead_letter_sent_at: Option<i64> },
    /// A later page of a post's live readers.
    Live(LiveReach),
    /// A page of one of a public post's tags' followers.
    Tag(TagReach),
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
    /// A reply to someone else's post: the account replied to, whom a follower must also
    /// follow to get it (Mastodon's rule; a self-reply reaches every follower).
    pub reply_to: Option<UserId>,
    /// How many tags deliver it into their followers' homes: its indexed tags
    /// (`tags::MAX_TAGS_PER_POST` at most) when it is a public, listed post of its own, else 0.
    pub tags: u8,
}

/// A page of a tag's followers (`tag_followers`, on the tag key's database) after `after`,
/// `chunk` of them with one row of lookahead; then, from their own rows, which have a window.
#[derive(Debug, Clone, PartialEq)]
pub struct TagPage {
    pub key: IndexKey,
    pub after: i64,
    pub chunk: usize,
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
    /// Deliver only to those who also follow this account (a reply's [`PostRead::reply_to`]).
    pub must_follow: Option<UserId>,
    /// The last follower id the page may reach: its segment's end (`i64::MAX`: no end).
    pub until: i64,
}

/// What the first message of a post event asks for when it may split the fan-out: the
/// author's followers (pushed only or all) and the target ([`Step::Segments`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub author: UserId,
    pub pushed_only: bool,
    pub target: SegmentTarget,
}

/// The author's followers with an open socket (a live lease) after `after`, `scan` leases at
/// a time, checked against the author's side: only those not pushed to, or all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LivePage {
    pub author: UserId,
    pub after: i64,
    pub scan: usize,
    pub unpushed_only: bool,
    /// As [`FollowerPage::must_follow`].
    pub must_follow: Option<UserId>,
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
    /// The message's outbox row. The I/O may read with it what the message reads next (the
    /// post, its first page of followers after the message's progress): one statement where
    /// they share a database, which a big post's every chunk pays on its author's database.
    ReadEvent(FanoutMessage),
    FaultPoint(FaultPoint),
    /// The post's state now; with `converge`, the event's first message also brings the
    /// post's other sides (mirrors, mentions, timeline index) to that state, once per event
    /// and again on a resend, not on every chunk.
    ReadPost {
        post: PostId,
        converge: bool,
    },
    /// A post as a tag page needs it: its state now and the tags that deliver it.
    ReadTagged(PostId),
    ReadTagFollowers(TagPage),
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
    /// The event's segments as its row holds them; with `split`, made first if the row has
    /// none and the author's followers call for more than one (empty: one chain).
    Segments {
        split: Option<Split>,
    },
    /// A segment's chunk done: its progress, whether its chain ends with it (answered by the
    /// event's segments still unfinished, [`Reply::Unfinished`]).
    RecordSegment {
        segment: u16,
        progress: i64,
        last: bool,
        delivered: usize,
    },
    MarkDone,
}

/// The answer to a step.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Event(Option<Event>),
    Post(Option<PostRead>),
    /// The post now and its delivering tags' keys, in the post's order (`None`: no such post).
    Tagged(Option<(PostRead, Vec<IndexKey>)>),
    Held(bool),
    Reader {
        active: bool,
        entries: Vec<Entry>,
    },
    Chunk(ChunkFound),
    Segments(Segments),
    /// The event's segments not finished yet.
    Unfinished(usize),
    /// A write, a send, a convergence or a fault point passed.
    Ok,
}

/// The fan-out plan's I/O: runs one [`Step`] and answers its [`Reply`] (a read's rows, or
/// [`Reply::Ok`] for a write, a send, a convergence or a fault point passed). An error ends the
/// message, which the queue gives another attempt.
///
/// `&self`: the plan runs one step at a time, so an implementation keeps what it learns (the
/// outbox row once read, the fakes' log) in cells.
// A Worker is single-threaded: the plan's future is never sent, so no `Send` bound is needed.
#[allow(async_fn_in_trait)]
pub trait FanoutIo {
    type Error;

    async fn run(&self, step: Step) -> Result<Reply, Self::Error>;
}

/// Why a message stopped before its end: its I/O failed, or the plan gives the message back
/// to the queue (why; a retry reads everything again).
#[derive(Debug, Clone, PartialEq)]
pub enum Stop<E> {
    Io(E),
    Fail(&'static str),
}

const UNEXPECTED: &str = "fan-out plan: a reply that does not answer the step";

/// Carries out one message, every step through `io`; `Ok` when nothing more is left to do (the
/// message is acked).
pub async fn carry<Io: FanoutIo>(io: &Io, work: Work, settings: Settings) -> Result<(), Stop<Io::Error>> {
    let run = Run { io, s: settings };
    match work {
        Work::Event { message, dead_letter_sent_at: Some(sent_at) } => {
            run.ok(Step::MarkDead { event: message.outbox_id, sent_at }).await
        }
        Work::Event { message, .. } => run.event(message).await,
        Work::Live(reach) => run.live(reach).await,
        Work::Tag(reach) => run.tag(reach).await,
    }
}

/// One message being carried out.
struct Run<'io, Io> {
    io: &'io Io,
    s: Settings,
}

impl<Io: FanoutIo> Run<'_, Io> {
    async fn run(&self, step: Step) -> Result<Reply, Stop<Io::Error>> {
        self.io.run(step).await.map_err(Stop::Io)
    }

    /// A step answered [`Reply::Ok`].
    async fn ok(&self, step: Step) -> Result<(), Stop<Io::Error>> {
        match self.run(step).await? {
            Reply::Ok => Ok(()),
            _ => Err(Stop::Fail(UNEXPECTED)),
        }
    }

    async fn post(&self, post: PostId, converge: bool) -> Result<Option<PostRead>, Stop<Io::Error>> {
        match self.run(Step::ReadPost { post, converge }).await? {
            Reply::Post(post) => Ok(post),
            _ => Err(Stop::Fail(UNEXPECTED)),
        }
    }

    async fn chunk(&self, reads: ChunkReads) -> Result<ChunkFound, Stop<Io::Error>> {
        match self.run(Step::ReadChunk(reads)).await? {
            Reply::Chunk(found) => Ok(found),
            _ => Err(Stop::Fail(UNEXPECTED)),
        }
    }

    /// An outbox event's step. An event that is gone or no longer pending has nothing (more)
    /// to do.
    async fn event(&self, message: FanoutMessage) -> Result<(), Stop<Io::Error>> {
        let Reply::Event(event) = self.run(Step::ReadEvent(message)).await? else {
            return Err(Stop::Fail(UNEXPECTED));
        };
        let Some(event) = event.filter(|e| e.state == EventState::Pending) else { return Ok(()) };
        let start = message.after_follower_id.max(event.cursor);
        let (segment, until) = (message.segment, i64::MAX);
        // The event's first message (or a resend of it): not a continuation, not a segment's.
        let first = message.after_follower_id == 0 && segment.is_none();
        let unrecorded = message.unrecorded;
        match (event.kind, event.post_id, event.reader) {
            (EventKind::Post, Some(post_id), _) => {
                self.ok(Step::FaultPoint(FaultPoint::StallFanout { author: event.author })).await?;
                self.post_chunk(PostChunk { event, post_id, start, segment, until, first, unrecorded }).await
            }
            (EventKind::RemovePost, Some(post_id), _) => {
                self.post_chunk(PostChunk { event, post_id, start, segment, until, first, unrecorded }).await
            }
            (EventKind::Post | EventKind::RemovePost, None, _) => Err(Stop::Fail("post event without post")),
            (_, _, Some(reader)) => self.reader_event(event, reader).await,
            (_, _, None) => Err(Stop::Fail("reader event without reader")),
        }
    }

    /// A single-reader event (`remove_author`, `backfill`, `graph_mirror`). Reader-scoped
    /// window operations carry their outbox id: the window applies only the newest one per
    /// author, so a late or repeated unfollow cannot undo a later follow (and back).
    async fn reader_event(&self, event: Event, reader: UserId) -> Result<(), Stop<Io::Error>> {
        let author_id = event.author;
        // The mirror first: once a backfill is done the feed stops pulling this author for the
        // reader (the in-flight horizon), so fan-out must already page the new follower.
        self.ok(Step::ConvergePair { reader, author: author_id }).await?;
        if event.kind == EventKind::GraphMirror {
            return self.ok(Step::MarkDone).await;
        }
        let backfill = (event.kind == EventKind::Backfill).then_some((author_id, self.s.window_cap));
        let Reply::Reader { active, entries } = self.run(Step::ReadReader { reader, backfill }).await? else {
            return Err(Stop::Fail(UNEXPECTED));
        };
        // A reader without a window has nothing to clean or fill; it is built on first read.
        if active {
            let (event_id, cap) = (event.id.get(), self.s.window_cap);
            let op = match event.kind {
                EventKind::Backfill => WindowOp::Backfill { author_id, event: event_id, entries, cap },
                _ => WindowOp::RemoveAuthor { author_id, event: event_id },
            };
            self.ok(Step::WriteWindow { reader, op }).await?;
        }
        self.ok(Step::MarkDone).await
    }

    /// One chunk of a post event (`post`: deliver, `remove_post`: remove), decided by the
    /// post's state read now.
    async fn post_chunk(&self, chunk: PostChunk) -> Result<(), Stop<Io::Error>> {
        let post = self.post(chunk.post_id, chunk.first).await?;
        let direction =
            if chunk.event.kind == EventKind::Post { Direction::Deliver } else { Direction::Remove };
        let plan = plan(direction, post.map(|p| p.now), chunk.start == 0);
        if plan.hold {
            return match self.run(Step::Hold).await? {
                Reply::Held(true) => Ok(()),
                // Reinstated since the read: the retried message reads the state again and delivers.
                Reply::Held(false) => Err(Stop::Fail("author reinstated while holding the event; retrying")),
                _ => Err(Stop::Fail(UNEXPECTED)),
            };
        }
        let (Some(post), false) = (post, plan.is_nothing()) else { return self.ok(Step::MarkDone).await };
        let Some(chunk) = self.place(chunk, plan, &post).await? else { return Ok(()) };
        let mut reads = chunk_reads(&self.s, plan, chunk.start, &post);
        if let Some(page) = reads.followers.as_mut() {
            page.until = chunk.until;
        }
        let found = if reads.is_empty() { ChunkFound::default() } else { self.chunk(reads).await? };
        let (ops, jobs, written) = chunk.on_found(post, plan, found, &self.s);
        if !jobs.is_empty() {
            self.ok(Step::Send(jobs)).await?;
        }
        self.ok(Step::WriteWithBatch(ops)).await?;
        self.after_written(chunk, written).await
    }

    /// Places a post chunk in its segment (`None`: nothing for this message to do). The
    /// event's first message may split the fan-out ([`Step::Segments`]); a split event's first
    /// message (or a resend of it) starts every unfinished segment but the first as its own
    /// chain and runs the first itself; a segment's message runs within its segment, from its
    /// recorded progress.
    async fn place(
        &self,
        chunk: PostChunk,
        plan: Plan,
        post: &PostRead,
    ) -> Result<Option<PostChunk>, Stop<Io::Error>> {
        let pushed_only = recipients(self.s.policy.mode, plan.followers);
        let split = match (chunk.segment, chunk.start, self.s.segments, pushed_only) {
            (None, 0, Some(target), Some(pushed_only)) => {
                Some(Split { author: post.author, pushed_only, target })
            }
            _ => None,
        };
        if chunk.segment.is_none() && split.is_none() {
            return Ok(Some(chunk));
        }
        let Reply::Segments(segments) = self.run(Step::Segments { split }).await? else {
            return Err(Stop::Fail(UNEXPECTED));
        };
        if segments.0.is_empty() {
            // Not split: a segment's message of an event without segments is a stray.
            return Ok(chunk.segment.is_none().then_some(chunk));
        }
        let index = match chunk.segment {
            Some(index) => index,
            None => {
                let others = segments.unfinished().into_iter().filter(|&(index, _)| index > 0);
                let start = |(index, after): (usize, i64)| {
                    let segment = u16::try_from(index).ok();
                    QueueMessage::from(FanoutMessage {
                        outbox_id: chunk.event.id,
                        after_follower_id: after,
                        segment,
                        unrecorded: Unrecorded::default(),
                    })
                };
                let messages: Vec<QueueMessage> = others.map(start).collect();
                if !messages.is_empty() {
                    self.ok(Step::Send(messages)).await?;
                }
                0
            }
        };
        let Some(segment) = segments.0.get(usize::from(index)).filter(|s| !s.done) else { return Ok(None) };
        let start = chunk.start.max(segment.cursor).max(segment.start_after);
        Ok(Some(PostChunk { start, segment: Some(index), until: segment.end, ..chunk }))
    }

    /// Records the chunk's progress (a chunk that continues passes the crash point first),
    /// then sends the continuation or marks the event done (a segment's last chunk: when it
    /// was the last segment unfinished). A segment's chunk that is neither its last nor its
    /// `record_every`-th since the last record leaves its progress to the continuation, which
    /// carries it to the next record.
    async fn after_written(&self, chunk: PostChunk, written: Written) -> Result<(), Stop<Io::Error>> {
        let (progress, next) = after_chunk(chunk.start, &written.scanned, written.more);
        if next != Next::Done {
            self.ok(Step::FaultPoint(FaultPoint::AfterChunk { author: chunk.event.author })).await?;
        }
        let (mut unfinished, mut carried) = (0, Unrecorded::default());
        match chunk.segment {
            None => self.ok(Step::RecordChunk { progress, delivered: written.delivered }).await?,
            Some(segment) => {
                let (last, pending) = (next == Next::Done, chunk.unrecorded.and(written.delivered));
                if !last && pending.chunks < self.s.record_every.max(1) {
                    carried = pending;
                } else {
                    let delivered = pending.delivered as usize;
                    match self.run(Step::RecordSegment { segment, progress, last, delivered }).await? {
                        Reply::Unfinished(n) => unfinished = n,
                        _ => return Err(Stop::Fail(UNEXPECTED)),
                    }
                }
            }
        }
        match next {
            Next::Continue { after_follower_id } => {
                let (outbox_id, segment) = (chunk.event.id, chunk.segment);
                let message = FanoutMessage { outbox_id, after_follower_id, segment, unrecorded: carried };
                self.ok(Step::Send(vec![message.into()])).await
            }
            Next::Done if unfinished == 0 => self.ok(Step::MarkDone).await,
            Next::Done => Ok(()),
        }
    }

    /// A later page of a post's live readers: the post's state is read again, so a post
    /// deleted, hidden, taken down or held meanwhile reaches nobody. A full page continues as
    /// the next [`LiveReach`], sent before this page's writes.
    async fn live(&self, reach: LiveReach) -> Result<(), Stop<Io::Error>> {
        let delivers = |p: &PostRead| plan(Direction::Deliver, Some(p.now), false).followers.is_some();
        let Some(post) = self.post(reach.live_post_id, false).await?.filter(delivers) else { return Ok(()) };
        let Some(page) = live_page(&self.s, post.author, reach.after_reader, post.reply_to) else {
            return Ok(());
        };
        let found = self.chunk(ChunkReads { live: Some(page), ..ChunkReads::default() }).await?;
        let op = post_op(&self.s, reach.live_post_id, &post, Direction::Deliver);
        let ops: Vec<_> = found.live.iter().map(|&reader| (reader, op.clone())).collect();
        if let Some(after_reader) = found.live_next {
            let next = LiveReach { live_post_id: reach.live_post_id, after_reader };
            self.ok(Step::Send(vec![next.into()])).await?;
        }
        if ops.is_empty() {
            return Ok(());
        }
        self.ok(Step::WriteWindows(ops)).await
    }

    /// A page of one tag's followers: the post is read again (deleted, hidden, taken down, held
    /// or the tag edited away meanwhile: it reaches nobody), the page's readers with a window
    /// get it as a pushed follower does (the author's own window has it already), then a full
    /// page continues as the next [`TagReach`]. No progress is recorded: the message carries
    /// it, and a retried page writes nothing new (windows dedup by post id).
    async fn tag(&self, reach: TagReach) -> Result<(), Stop<Io::Error>> {
        let Reply::Tagged(tagged) = self.run(Step::ReadTagged(reach.tag_post_id)).await? else {
            return Err(Stop::Fail(UNEXPECTED));
        };
        let Some((post, keys)) = tagged else { return Ok(()) };
        let delivers = post.now.visibility == Visibility::Public
            && plan(Direction::Deliver, Some(post.now), false).followers.is_some();
        let Some(key) = keys.into_iter().nth(usize::from(reach.tag)).filter(|_| delivers) else {
            return Ok(());
        };
        let page = TagPage { key, after: reach.after_reader, chunk: self.s.chunk };
        let found = match self.run(Step::ReadTagFollowers(page)).await? {
            Reply::Chunk(found) => found,
            _ => return Err(Stop::Fail(UNEXPECTED)),
        };
        let op = post_op(&self.s, reach.tag_post_id, &post, Direction::Deliver);
        let ops: Vec<_> = found
            .active
            .iter()
            .filter(|&&reader| reader != post.author)
            .map(|&reader| (reader, op.clone()))
            .collect();
        if !ops.is_empty() {
            self.ok(Step::WriteWindows(ops)).await?;
        }
        match found.scanned.last().filter(|_| found.more) {
            Some(last) => {
                let next = TagReach { after_reader: last.get(), ..reach };
                self.ok(Step::Send(vec![next.into()])).await
            }
            None => Ok(()),
        }
    }
}

/// One chunk of a post event.
#[derive(Debug, Clone, Copy)]
struct PostChunk {
    event: Event,
    post_id: PostId,
    /// The chunk starts after this follower (the message's or the recorded progress).
    start: i64,
    /// Its segment, if the event is split, and the segment's last follower id.
    segment: Option<u16>,
    until: i64,
    /// The event's first message: it converges the post's other sides.
    first: bool,
    /// What the message carries of its segment's unrecorded chunks.
    unrecorded: Unrecorded,
}

/// What a chunk leaves for after its window writes.
#[derive(Debug)]
struct Written {
    scanned: Vec<i64>,
    more: bool,
    /// Windows written: followers with a window, and the author's own.
    delivered: usize,
}

impl PostChunk {
    /// The chunk's window operations, the jobs its reads call for (sent first), and what it
    /// leaves for after the writes.
    fn on_found(
        self,
        post: PostRead,
        plan: Plan,
        found: ChunkFound,
        s: &Settings,
    ) -> (Vec<(UserId, WindowOp)>, Vec<QueueMessage>, Written) {
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
        // The first chunk of a delivery starts each delivering tag's pages (their own messages:
        // the tags' databases are read there, so one being down never holds this delivery).
        if self.start == 0 && plan.followers == Some(Direction::Deliver) {
            let reach = |tag| TagReach { tag_post_id: self.post_id, tag, after_reader: 0 };
            jobs.extend((0..post.tags).map(|tag| QueueMessage::from(reach(tag))));
        }
        let delivered = found.active.len() + usize::from(author_active);
        let scanned = found.scanned.iter().map(|f| f.get()).collect();
        (ops, jobs, Written { scanned, more: found.more, delivered })
    }
}

/// A chunk's reads: the followers it writes to, the live readers it reaches, and with the
/// first chunk of a delivery the author's own window and (hybrid) the author's rates.
fn chunk_reads(s: &Settings, plan: Plan, start: i64, post: &PostRead) -> ChunkReads {
    let first_delivery = start == 0 && plan.followers == Some(Direction::Deliver);
    // Removals go to every follower (removing what a window lacks is harmless).
    let must_follow = post.reply_to.filter(|_| plan.followers == Some(Direction::Deliver));
    let followers = recipients(s.policy.mode, plan.followers).map(|pushed_only| FollowerPage {
        author: post.author,
        after: start,
        chunk: s.chunk,
        pushed_only,
        must_follow,
        until: i64::MAX,
    });
    ChunkReads {
        followers,
        live: live_page(s, post.author, 0, must_follow).filter(|_| first_delivery),
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

/// Which followers a delivery's chunks page (`Some(true)`: pushed edges only), or `None` when
/// none are paged: what the event's read reads ahead of the chunk (`services/fanout/reads.rs`),
/// which must be the page the chunk asks for.
pub fn delivery_recipients(mode: FanoutMode) -> Option<bool> {
    recipients(mode, Some(Direction::Deliver))
}

/// The live readers a delivery reaches beside its pushed followers: the author's followers
/// with an open socket whom the fan-out does not push to, found by the marks their sockets
/// wrote on those edges ([`MarkedEdges`]: pulled edges in hybrid mode, every edge in pull mode;
/// none in push mode, where every reader with a window is pushed). The post goes into their
/// windows as if pushed, which is what tells their sockets. A full page continues as a
/// [`LiveReach`], so a big author's live readers are reached a page at a time.
fn live_page(s: &Settings, author: UserId, after: i64, must_follow: Option<UserId>) -> Option<LivePage> {
    let unpushed_only = match MarkedEdges::of(s.policy.mode) {
        MarkedEdges::None => return None,
        MarkedEdges::All => false,
        MarkedEdges::Pulled => true,
    };
    Some(LivePage { author, after, scan: s.chunk * LIVE_SCAN_PER_CHUNK, unpushed_only, must_follow })
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

#[cfg(test)]
mod tests;
