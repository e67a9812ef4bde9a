//! Everything the fan-out queues (`edgefeed-fanout`, `edgefeed-fanout-1`, ...) carry, as it
//! travels: fan-out steps of outbox events, the next page of a post's live readers, the hybrid
//! policy's jobs, one database's share of a reconciliation pass and a notification's Web Push; and which queue each goes
//! to ([`QueueMessage::queue_index`]).
//!
//! The wire shape is a contract with messages already queued (and dead-lettered, and replayed):
//! `QueueMessage` is untagged and its variants are tried in order, so a fan-out message is the
//! bare `{"outbox_id", "after_follower_id"}` it always was. Sending is `services/queue/send.rs`;
//! the consumer that dispatches each variant to its handler is `services/queue/mod.rs`.

use serde::{Deserialize, Serialize};

use super::activity::ActivityReport;
use super::ids::{OutboxId, PostId, UserId};
use super::snowflake::shard_of_id;

/// Everything the queue carries. Untagged, so fan-out messages keep the shape they always had.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QueueMessage {
    Fanout(FanoutMessage),
    Policy(PolicyJob),
    Live(LiveReach),
    Tag(TagReach),
    Reconcile(ReconcileDatabase),
    Push(PushDelivery),
}

/// One chunk of an outbox event's fan-out (or the whole of a single-reader event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FanoutMessage {
    pub outbox_id: OutboxId,
    /// Resume after this follower id (the outbox row's progress wins if it is further).
    #[serde(default)]
    pub after_follower_id: i64,
    /// The segment of a post split to run in parallel (`domain/fanout_segments.rs`) this chain
    /// belongs to; absent for an event's first message and for an unsplit chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u16>,
    /// A segment's chunks since its progress was last recorded on the event's row, which they
    /// are recorded with (`domain/fanout_plan.rs`, `Settings::record_every`).
    #[serde(default, skip_serializing_if = "Unrecorded::is_none")]
    pub unrecorded: Unrecorded,
}

/// Chunks a segment's chain delivered without recording them, and the windows they wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Unrecorded {
    pub chunks: u16,
    pub delivered: u32,
}

impl Unrecorded {
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }

    /// These and one more chunk that wrote `delivered` windows.
    pub fn and(self, delivered: usize) -> Self {
        let delivered = self.delivered.saturating_add(u32::try_from(delivered).unwrap_or(u32::MAX));
        Self { chunks: self.chunks.saturating_add(1), delivered }
    }
}

impl FanoutMessage {
    pub fn start(outbox_id: OutboxId) -> Self {
        Self { outbox_id, after_follower_id: 0, segment: None, unrecorded: Unrecorded::default() }
    }

    /// A segment's next message: after `after_follower_id`, carrying what is not recorded yet.
    pub fn in_segment(
        outbox_id: OutboxId,
        segment: u16,
        after_follower_id: i64,
        unrecorded: Unrecorded,
    ) -> Self {
        Self { outbox_id, after_follower_id, segment: Some(segment), unrecorded }
    }
}

/// The next page of a post's live readers among the followers it is not pushed to (see
/// `services/fanout`'s live page). Best effort, like the socket itself: if it is lost, those
/// readers find the post on their next read, as pulled readers always do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveReach {
    pub live_post_id: PostId,
    pub after_reader: i64,
}

/// The next page of a public post's reach into the homes of one of its tags' followers
/// (`domain/fanout_plan.rs`): the post's `tag`-th indexed tag, its followers after
/// `after_reader`. The post's first delivery chunk sends one per tag; each page re-reads the
/// post and continues itself. Idempotent (windows dedup by post id); a lost or dead one leaves
/// those readers without the post in home (they still find it under the tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagReach {
    pub tag_post_id: PostId,
    pub tag: u8,
    #[serde(default)]
    pub after_reader: i64,
}

/// The hybrid policy's jobs (`services/policy.rs`): idempotent, recomputed from current state,
/// and a lost one is redone by its next trigger.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "job", rename_all = "snake_case")]
pub enum PolicyJob {
    /// A reader's window reported their activity: record it, re-decide their edges.
    ReaderActivity { reader: UserId, report: ActivityReport },
    /// Re-decide an author's edges, a page at a time: first the pushed edges (by follower id
    /// after `after_follower_id`), then (`after_rate` set) the pulled edges whose reader could
    /// be pushed, by read rate from the top (after `(after_rate, after_follower_id)`).
    AuthorEdges {
        author: UserId,
        after_follower_id: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_rate: Option<f64>,
    },
}

/// A notification to push to its recipient's Web Push subscriptions (`services/push.rs`). The
/// consumer re-reads the notification and the subscriptions when it runs: one dismissed or
/// hidden since, or a subscription removed since, is not sent; each subscription remembers what
/// it was sent, so a duplicate delivery sends nothing twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushDelivery {
    pub push_recipient: UserId,
    pub push_notification: i64,
}

/// One database's share of a reconciliation pass (`services/reconcile.rs`): the cron sends one
/// per database, so no invocation's D1 work grows with the number of databases. Idempotent
/// (every step re-reads what it repairs), and a lost one is redone by the next minute's pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconcileDatabase {
    /// The physical database (`i` of `DB_i`).
    pub reconcile_database: usize,
    /// Return dead-lettered events to pending first (`POST /v1/admin/reconcile?replay_dead`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay_dead: bool,
    /// Only the database's next slice of comment moves (migration 0034): a chain of these
    /// messages drains a backlog of old comments far faster than one slice a minute.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub comment_moves: bool,
    /// Only the database's next slice of due scheduled posts (`services/scheduled.rs`): a chain
    /// of these publishes a backlog at the queue's pace, each slice in an invocation of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scheduled: bool,
}

impl QueueMessage {
    /// Which of `queues` fan-out queues carries this message (one queue carries 5,000
    /// messages a second): by the logical shard of the user whose work it is (the outbox
    /// event's and the live post's author, the policy job's reader or author), so one user's
    /// messages stay on one queue; a reconciliation share by its database.
    pub fn queue_index(&self, queues: usize) -> usize {
        let key = match *self {
            // A split post's segments spread over the queues (each queue runs 250 invocations
            // at once); an event's first message and an unsplit chain ride the author's.
            Self::Fanout(m) => shard_of_id(m.outbox_id.get()).index() + usize::from(m.segment.unwrap_or(0)),
            Self::Live(r) => shard_of_id(r.live_post_id.get()).index(),
            Self::Tag(r) => shard_of_id(r.tag_post_id.get()).index(),
            Self::Policy(PolicyJob::ReaderActivity { reader, .. }) => shard_of_id(reader.get()).index(),
            Self::Policy(PolicyJob::AuthorEdges { author, .. }) => shard_of_id(author.get()).index(),
            Self::Reconcile(job) => job.reconcile_database,
            Self::Push(push) => shard_of_id(push.push_recipient.get()).index(),
        };
        key % queues.max(1)
    }
}

impl From<ReconcileDatabase> for QueueMessage {
    fn from(job: ReconcileDatabase) -> Self {
        Self::Reconcile(job)
    }
}

impl From<FanoutMessage> for QueueMessage {
    fn from(message: FanoutMessage) -> Self {
        Self::Fanout(message)
    }
}

impl From<PolicyJob> for QueueMessage {
    fn from(job: PolicyJob) -> Self {
        Self::Policy(job)
    }
}

impl From<TagReach> for QueueMessage {
    fn from(reach: TagReach) -> Self {
        Self::Tag(reach)
    }
}

impl From<PushDelivery> for QueueMessage {
    fn from(push: PushDelivery) -> Self {
        Self::Push(push)
    }
}

impl From<LiveReach> for QueueMessage {
    fn from(reach: LiveReach) -> Self {
        Self::Live(reach)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(message: QueueMessage) -> String {
        serde_json::to_string(&message).unwrap_or_default()
    }

    fn parsed(text: &str) -> Option<QueueMessage> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn every_message_keeps_its_wire_shape() {
        let (user, post) = (UserId::from_trusted(7), PostId::from_trusted(9));
        let table = [
            (
                FanoutMessage::start(OutboxId::from_trusted(42)).into(),
                r#"{"outbox_id":42,"after_follower_id":0}"#,
            ),
            (
                LiveReach { live_post_id: post, after_reader: 5 }.into(),
                r#"{"live_post_id":9,"after_reader":5}"#,
            ),
            (
                TagReach { tag_post_id: post, tag: 2, after_reader: 5 }.into(),
                r#"{"tag_post_id":9,"tag":2,"after_reader":5}"#,
            ),
            (
                PolicyJob::AuthorEdges { author: user, after_follower_id: 3, after_rate: None }.into(),
                r#"{"job":"author_edges","author":7,"after_follower_id":3}"#,
            ),
            (
                PolicyJob::AuthorEdges { author: user, after_follower_id: 3, after_rate: Some(1.5) }.into(),
                r#"{"job":"author_edges","author":7,"after_follower_id":3,"after_rate":1.5}"#,
            ),
            (
                PolicyJob::ReaderActivity {
                    reader: user,
                    report: ActivityReport { read_rate: 2.5, last_read_at: 1000 },
                }
                .into(),
                r#"{"job":"reader_activity","reader":7,"report":{"read_rate":2.5,"last_read_at":1000}}"#,
            ),
            (
                ReconcileDatabase {
                    reconcile_database: 3,
                    replay_dead: false,
                    comment_moves: false,
                    scheduled: false,
                }
                .into(),
                r#"{"reconcile_database":3}"#,
            ),
            (
                ReconcileDatabase {
                    reconcile_database: 0,
                    replay_dead: true,
                    comment_moves: false,
                    scheduled: false,
                }
                .into(),
                r#"{"reconcile_database":0,"replay_dead":true}"#,
            ),
            (
                ReconcileDatabase {
                    reconcile_database: 2,
                    replay_dead: false,
                    comment_moves: false,
                    scheduled: true,
                }
                .into(),
                r#"{"reconcile_database":2,"scheduled":true}"#,
            ),
            (
                PushDelivery { push_recipient: user, push_notification: 99 }.into(),
                r#"{"push_recipient":7,"push_notification":99}"#,
            ),
        ];
        for (message, text) in table {
            assert_eq!(wire(message), text);
            assert_eq!(parsed(text), Some(message), "{text}");
        }
    }

    #[test]
    fn a_split_posts_segments_spread_over_the_queues() {
        let on = |shard: i64| (shard << crate::snowflake::ID_RANDOM_BITS) | 5;
        let segment = |k| {
            QueueMessage::from(FanoutMessage::in_segment(
                OutboxId::from_trusted(on(3)),
                k,
                9,
                Unrecorded::default(),
            ))
        };
        let queues: Vec<usize> = (0..4).map(|k| segment(k).queue_index(4)).collect();
        assert_eq!(queues, vec![3, 0, 1, 2]);
        let start = QueueMessage::from(FanoutMessage::start(OutboxId::from_trusted(on(3))));
        assert_eq!(segment(0).queue_index(4), start.queue_index(4));
        assert_eq!(
            parsed(r#"{"outbox_id":42,"after_follower_id":7,"segment":2}"#),
            Some(segment_of(42, 7, 2))
        );
        let carried = Unrecorded::default().and(5).and(3);
        assert_eq!(carried, Unrecorded { chunks: 2, delivered: 8 });
        let message = FanoutMessage::in_segment(OutboxId::from_trusted(42), 2, 7, carried);
        let text =
            r#"{"outbox_id":42,"after_follower_id":7,"segment":2,"unrecorded":{"chunks":2,"delivered":8}}"#;
        assert_eq!(wire(QueueMessage::from(message)), text);
        assert_eq!(parsed(text), Some(QueueMessage::from(message)));
    }

    fn segment_of(outbox: i64, after: i64, segment: u16) -> QueueMessage {
        FanoutMessage::in_segment(OutboxId::from_trusted(outbox), segment, after, Unrecorded::default())
            .into()
    }

    #[test]
    fn older_and_foreign_shapes_parse_as_before() {
        let start = QueueMessage::Fanout(FanoutMessage::start(OutboxId::from_trusted(42)));
        assert_eq!(parsed(r#"{"outbox_id":42}"#), Some(start), "progress defaults to the start");
        assert_eq!(parsed(r#"{"job":"unknown","author":7}"#), None);
        assert_eq!(parsed(r#"{"after_reader":5}"#), None);
        assert_eq!(parsed(r#"{"replay_dead":true}"#), None, "a share names its database");
    }

    #[test]
    fn a_users_messages_share_a_queue_and_one_queue_takes_everything() {
        use crate::snowflake::LOGICAL_SHARDS;
        // Ids whose logical shard is `shard` (the shard bits sit above the random bits).
        let on = |shard: i64| (shard << crate::snowflake::ID_RANDOM_BITS) | 5;
        let author = UserId::from_trusted(on(3));
        let fanout: QueueMessage = FanoutMessage::start(OutboxId::from_trusted(on(3))).into();
        let live: QueueMessage =
            LiveReach { live_post_id: PostId::from_trusted(on(3)), after_reader: 0 }.into();
        let edges: QueueMessage =
            PolicyJob::AuthorEdges { author, after_follower_id: 0, after_rate: None }.into();
        let tag: QueueMessage =
            TagReach { tag_post_id: PostId::from_trusted(on(3)), tag: 0, after_reader: 0 }.into();
        let report = ActivityReport { read_rate: 1.0, last_read_at: 0 };
        let activity: QueueMessage = PolicyJob::ReaderActivity { reader: author, report }.into();
        let push: QueueMessage = PushDelivery { push_recipient: author, push_notification: 1 }.into();
        for message in [fanout, live, tag, edges, activity, push] {
            assert_eq!(message.queue_index(2), 1, "{message:?}");
            assert_eq!(message.queue_index(3), 0, "{message:?}");
            assert_eq!(message.queue_index(1), 0);
            assert_eq!(message.queue_index(0), 0, "no queue count is read as one queue");
        }
        let share = |i| {
            QueueMessage::from(ReconcileDatabase {
                reconcile_database: i,
                replay_dead: false,
                comment_moves: false,
                scheduled: false,
            })
        };
        assert_eq!((share(0).queue_index(2), share(5).queue_index(2), share(5).queue_index(1)), (0, 1, 0));
        let spread: std::collections::BTreeSet<usize> = (0..LOGICAL_SHARDS as i64)
            .map(|s| QueueMessage::from(FanoutMessage::start(OutboxId::from_trusted(on(s)))).queue_index(4))
            .collect();
        assert_eq!(spread.len(), 4, "the shards spread over every queue");
    }
}
