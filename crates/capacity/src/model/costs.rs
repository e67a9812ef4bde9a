//! The measured per-operation costs (the table in `bench/costs.json`) and the hot-author
//! replicas' design figures, which `--measure` replaces with measured ones.

use serde::{Deserialize, Serialize};

/// D1 work on one database: statements (the unit of a database's ~1,000 per second ceiling:
/// each takes about a millisecond) and the rows D1 bills.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    pub statements: f64,
    pub rows_read: f64,
    pub rows_written: f64,
}

impl Work {
    pub fn scale(self, k: f64) -> Self {
        Self {
            statements: self.statements * k,
            rows_read: self.rows_read * k,
            rows_written: self.rows_written * k,
        }
    }

    pub fn plus(self, o: Self) -> Self {
        Self {
            statements: self.statements + o.statements,
            rows_read: self.rows_read + o.rows_read,
            rows_written: self.rows_written + o.rows_written,
        }
    }
}

/// One operation's measured cost, by where it lands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct OpCost {
    /// On the actor's home database (the reader, the author, the liker, the follower).
    pub home: Work,
    /// On each other database the operation touches (a followed author's, the followee's,
    /// the liked post's).
    pub other: Work,
    /// On the control database, wherever the actor lives.
    pub control: Work,
    /// Durable Object requests (window writes and reads, like serializers).
    pub do_calls: f64,
    /// Wall milliseconds per Durable Object request (what DO duration bills).
    pub do_ms: f64,
    pub queue_messages: f64,
    /// Subrequests of the invocation (D1 round trips, object calls, queue sends).
    pub subrequests: f64,
    /// Worker milliseconds outside storage waits (local; an upper bound on CPU time).
    pub cpu_ms: f64,
}

/// Bytes one stored entity takes in D1, indexes included (measured as file growth).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Bytes {
    pub user: f64,
    /// One follow: both copies (the follower's side and the author's).
    pub follow: f64,
    pub post: f64,
    pub like: f64,
    pub comment: f64,
    /// One post id in a reader's window object (Durable Object storage).
    pub window_entry: f64,
}

/// Rows the reader's window object's own SQL reads and writes (its cursors' counts, what
/// Durable Object SQLite bills), per operation on a full window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowRows {
    /// One delivery of one post (amortized over a steady stream, trims included).
    pub delivery: Work,
    /// One page-1 read from the window (it also records the reader's read: a row read and
    /// written), or, in a table measured before pages were told apart, the mean of a page 1
    /// and a page 2.
    pub page_read: Work,
    /// One later page (a cursor's: no read recorded). The simulation's reads, nearly all
    /// first pages, wrote a row each where the mixed figure said half a row.
    #[serde(default)]
    pub page_n_read: Option<Work>,
}

impl WindowRows {
    /// One page read, `page_n_share` of them past page 1.
    pub fn page(&self, page_n_share: f64) -> Work {
        self.page_n_read.map_or(self.page_read, |later| {
            self.page_read.scale(1.0 - page_n_share).plus(later.scale(page_n_share))
        })
    }
}

/// The measured table (`bench/costs.json`, `costs` field).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Costs {
    /// A feed page whose edges are all pushed: the window, then hydration per author database.
    pub feed_push_page1: OpCost,
    pub feed_push_page_n: OpCost,
    /// A feed page whose edges are all pulled: `other` is per pulled author's database.
    pub feed_pull_page1: OpCost,
    pub feed_pull_page_n: OpCost,
    /// The publish request (the author's database).
    pub publish: OpCost,
    /// A post's fan-out, the part that does not depend on its followers (queue consumer).
    pub fanout_post: OpCost,
    /// A post's fan-out per chunk of readers (one queue message each): `home` on the author's
    /// database, `other` per reader database the chunk touches.
    pub fanout_chunk: OpCost,
    /// A post's fan-out per delivered follower: `home` on the author's database (paging the
    /// followers), `other` on the reader's, one window write each.
    pub fanout_reader: OpCost,
    /// A like (the post's database is `other`), with the object's group commit.
    pub like: OpCost,
    /// A comment (the post's database is `other`), with its fan-out of events.
    pub comment: OpCost,
    /// A follow with its mirror (the followee's database is `other`), request and queue.
    pub follow: OpCost,
    /// One cron pass: `home` is what each database's own share costs, `control` the rest,
    /// `subrequests` per database visited.
    pub cron_pass: OpCost,
    pub bytes: Bytes,
    /// Messages per consumer batch (`max_batch_size`).
    pub consumer_batch: f64,
    /// What every consumer batch writes to the control database: the figures it flushes
    /// (`services/tally.rs`), one statement per counter. Per batch, so full batches under
    /// load share it.
    pub consumer_flush: Work,
    /// Rows a steady reader's feed read writes on the other databases in the background (its
    /// read rate copied onto the followed authors' edges; only on threshold crossings).
    #[serde(default)]
    pub rate_copy_rows_per_read: f64,
    /// The window object's own rows (`--measure-window`); a table from before it was measured
    /// has none.
    #[serde(default)]
    pub window: WindowRows,
    /// The hot-author replicas (#28): the design's figures until `--measure` measures them.
    #[serde(default)]
    pub replica: ReplicaCosts,
    /// The delivery paths beyond an original post (#39), their requests; a table from before
    /// they were measured has none.
    #[serde(default)]
    pub paths: PathCosts,
    /// The public and tag timelines (#42), `--measure-timelines`; a table from before they were
    /// measured has none.
    #[serde(default)]
    pub timelines: TimelineCosts,
}

/// The requests of the paths a post reaches a reader by besides being an original of a followed
/// author (#39), each measured as `--measure` measures a like: `home` on the actor's database,
/// `other` on the one other database it touches (the original's, the quoted post's, the thread
/// root's, the mentioned account's). A boost, a reply and a quote are posts of the actor's, so
/// their fan-out costs what a post's does (`fanout_*`); a reply's recipients are the followers who
/// also follow the account replied to, one more statement per chunk on that account's database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PathCosts {
    /// `PUT /v1/posts/{id}/repost`: the boost post and the original's mirror, with its
    /// notification.
    pub boost: OpCost,
    /// `POST /v1/posts` with `in_reply_to`: the reply post and its thread's row, with the
    /// notification.
    pub reply: OpCost,
    /// `POST /v1/posts` with `quote_of`: the quote and the quoted post's mirror.
    pub quote: OpCost,
    /// A public post mentioning one account: the post, and the notification on the mentioned
    /// account's database.
    pub mention: OpCost,
    /// A direct (`private`) post to one account: the post, the notification and both
    /// conversations.
    pub direct: OpCost,
}

// The hot-author replica design's parameters (#28): the design's figures until measured.

/// `HOT_REPLICA_FOLLOWERS`: authors with at least this many followers are served from
/// replicas. The model's recommendation (the candidates are in the `--headline` report).
pub const HOT_REPLICA_FOLLOWERS: f64 = 50_000.0;
/// Requests per second one replica is sized for (half the ~1,000/s soft limit of an object).
pub const REPLICA_TARGET_RPS: f64 = 500.0;
/// The most replicas one author has.
pub const MAX_REPLICAS: f64 = 256.0;
/// The fewest (`domain/replica.rs`: a failing replica leaves its readers another). The model
/// took 1, so the simulation's hot author (2 replicas) renewed twice the leases predicted.
pub const MIN_REPLICAS: f64 = 2.0;
/// A replica read after this long since its last confirmation checks the author's change
/// counter on D1 (one statement on the author's database).
pub const REPLICA_LEASE_SECONDS: f64 = 10.0;
/// A replica re-reads its posts (counts) this often while it is read.
pub const REPLICA_REFRESH_SECONDS: f64 = 30.0;
/// Posts a replica holds (what hydration needs of the author's newest posts).
pub const REPLICA_POSTS: f64 = 200.0;

/// What the hot-author replicas cost per operation. Every default is the design's figure
/// (#28); `--measure` and `--measure-replicas` replace them with measured ones
/// (`benches/capacity_runs/replicas.rs`; `measured` says which the table holds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplicaCosts {
    /// Whether the figures below were measured (else the design's).
    pub measured: bool,
    /// Durable Object requests per hot author per feed page (one replica, by reader hash).
    pub read_calls: f64,
    /// Object rows a replica read reads: 0, it serves from memory.
    pub read_rows: f64,
    /// Wall milliseconds per replica request (from memory).
    pub do_ms: f64,
    /// Object rows written per replica per author change (publish, edit, delete, ...).
    pub write_rows: f64,
    /// Added to the reader's home batch when a page has a hot author: liked-by-viewer from the
    /// liker-side table (one statement, a row per hot post on the page at most).
    pub liked_home: Work,
    /// Added to every like on the liker's home database: the liker-side row.
    pub like_home: Work,
    /// The lease check: one statement on the author's database per `REPLICA_LEASE_SECONDS`
    /// while the replica is read.
    pub lease: Work,
    /// The refresh: its posts re-read per `REPLICA_REFRESH_SECONDS` while it is read.
    pub refresh: Work,
    /// A replica's posts, bytes each in object memory and storage.
    pub post_bytes: f64,
    /// D1 work on the hot author's database per feed page that includes it, within the lease
    /// (the design: none).
    pub page_author_db: Work,
    /// Added on the author's database by a publish once the author has replicas (the counter
    /// bump and the new row read for the replicas).
    pub publish_author_db: Work,
    /// Durable Object requests per replica per change by the author (the write to each).
    pub write_calls: f64,
}

impl Default for ReplicaCosts {
    fn default() -> Self {
        Self {
            read_calls: 1.0,
            read_rows: 0.0,
            do_ms: 1.0,
            write_rows: 2.0,
            liked_home: Work { statements: 1.0, rows_read: 5.0, rows_written: 0.0 },
            like_home: Work { statements: 1.0, rows_read: 0.0, rows_written: 1.0 },
            lease: Work { statements: 1.0, rows_read: 1.0, rows_written: 0.0 },
            refresh: Work { statements: 1.0, rows_read: REPLICA_POSTS, rows_written: 0.0 },
            post_bytes: 300.0,
            measured: false,
            page_author_db: Work::default(),
            publish_author_db: Work { statements: 2.0, rows_read: 2.0, rows_written: 1.0 },
            write_calls: 1.0,
        }
    }
}

/// What the timelines cost per operation, measured by `--measure-timelines`
/// (`benches/capacity_runs/timelines.rs`): every figure summed over every database a request
/// and its fan-out event touched, unless named for one database. A table from before they were
/// measured has none, and the model adds nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimelineCosts {
    pub measured: bool,
    /// Page 1 of the public timeline (4 stripes' range reads, the page's posts, the viewer's
    /// mutes), and of a tag's.
    pub public_page: Work,
    pub tag_page: Work,
    /// Of a tag page, what lands on the tag's own database (its range reads): what a key's
    /// database takes per page of that key.
    pub key_read: Work,
    /// Of a tag page, what the one database holding all its posts took (the posts and their
    /// authors read there): the measured pages' posts all lived on one database, a page's posts
    /// at P databases live on up to 20 ([`page_work`]).
    pub hydration: Work,
    /// What a public post adds to a followers-only one (its stripe row and the public
    /// listeners' read, by the publish and again by its fan-out event), and what each tag adds.
    pub public_entry: Work,
    pub per_tag: Work,
    /// One trends read (`/api/v1/trends/tags` and `/api/v1/trends/statuses`, as the explore tab
    /// loads them): on the control database, and elsewhere (the statuses read where they live).
    pub trends_control: Work,
    pub trends_other: Work,
    /// A forced reconciliation share with its discovery refresh, per database (the measured
    /// stack's mean): the check of the model's refresh figures, not used by it.
    pub pass_with_refresh: Work,
    /// Worker CPU milliseconds (an upper bound, as the table's) and subrequests of a page.
    pub page_cpu_ms: f64,
    pub page_subrequests: f64,
}
