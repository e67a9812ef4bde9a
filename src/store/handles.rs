//! Which database a statement runs on, as a type. Every store function takes the handle of the
//! database its rows live on (a user's home, a post's, an outbox event's, the control database,
//! or one physical database for work that covers each database's own rows), and handles are
//! only made by the placement rules in [`super::shards::Shards`]: passing the wrong database
//! does not compile, and a new engineer reads the placement off the signature.
//!
//! Handles are copies of a reference to the physical [`Db`]; the statement helpers of
//! [`super`] take any of them through [`OnDb`].

use super::Db;

/// Anything a statement can run on: a typed handle, or (inside `store`) the physical database.
pub trait OnDb<'a>: Copy {
    fn on(self) -> &'a Db;
}

impl<'a> OnDb<'a> for &'a Db {
    fn on(self) -> &'a Db {
        self
    }
}

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name<'a>(&'a Db);

        impl<'a> $name<'a> {
            /// Only the placement rules (`store::shards`) name a database.
            pub(in crate::store) fn new(db: &'a Db) -> Self {
                Self(db)
            }

            /// Which physical database this is: `i` of `DB_i`.
            pub fn index(self) -> usize {
                self.0.index()
            }

            /// The database as a handle for work over its own rows of every kind.
            pub fn any(self) -> AnyDb<'a> {
                AnyDb(self.0)
            }
        }

        impl<'a> OnDb<'a> for $name<'a> {
            fn on(self) -> &'a Db {
                self.0
            }
        }
    };
}

handle!(
    /// A user's home database: their row, their posts (and with them the posts' likes and
    /// comments), the outbox events they commit, their side of their edges, their mirrors'
    /// author side (`followers`, `blocked_by`), notifications, markers and lists.
    UserDb
);
handle!(
    /// A post's database (its author's home): the post, its likes, its comments.
    PostDb
);
handle!(
    /// The database an outbox event lives on: the shard its id names (the committer's home).
    OutboxDb
);
handle!(
    /// The database of a handle's directory entry (`handles`, by the handle's hash).
    HandleDb
);
handle!(
    /// The database of a timeline index key's rows and stream listeners (`timeline_index`,
    /// `stream_listeners`, by the key's hash: `domain::tags::IndexKey::shard`).
    IndexDb
);
handle!(
    /// `DB_0`: the tables that are not per user (OAuth apps and codes, stats, rolling figures,
    /// test faults, live readers, reconciliation marks).
    ControlDb
);
handle!(
    /// One physical database, for work over whatever rows it holds: cron slices, stats, a
    /// shard move's copy, and reads grouped by database by the placement rules (a feed
    /// round's batch, users grouped by home).
    AnyDb
);
