//! Public ids are decimal strings of positive integers below 2^53, so JavaScript clients can
//! hold them as numbers without losing precision, and D1 can bind them as f64 exactly.
//!
//! Each kind of id is its own type, so `follow(db, author, follower)` with the arguments
//! swapped does not compile, and a post id can never be looked up as a user.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The largest id we ever hand out or accept (2^53 - 1).
pub const MAX_ID: i64 = (1 << 53) - 1;

/// Parses a canonical id: ASCII digits, no sign, no leading zero, 1..=MAX_ID.
pub fn parse_id(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 16 || text.starts_with('0') {
        return None;
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: i64 = text.parse().ok()?;
    (1..=MAX_ID).contains(&value).then_some(value)
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(i64);

        impl $name {
            /// Parses the API's decimal-string form (see [`parse_id`]).
            pub fn parse(text: &str) -> Option<Self> {
                parse_id(text).map(Self)
            }

            /// Wraps a value read from storage, a verified token or a signed cursor: places
            /// that only ever hold ids this service issued.
            pub const fn from_trusted(raw: i64) -> Self {
                Self(raw)
            }

            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A registered user (reader, author, follower, liker).
    UserId
);
id_type!(
    /// A post.
    PostId
);
id_type!(
    /// A comment on a post.
    CommentId
);
id_type!(
    /// An upload (a media attachment), on its uploader's shard.
    MediaId
);
id_type!(
    /// A row of the transactional outbox (one fan-out or window event).
    OutboxId
);
id_type!(
    /// One of a recipient's notifications (unique per recipient: `domain/notifications.rs`).
    NotificationId
);
id_type!(
    /// One of a user's Mastodon lists (a snowflake of its owner's shard; looked up with its
    /// owner, so it names nothing for anyone else).
    ListId
);

id_type!(
    /// One of a user's scheduled posts (a snowflake of its author's shard; looked up with its
    /// author, so it names nothing for anyone else).
    ScheduledId
);

id_type!(
    /// One of a user's filters, filter keywords or filter statuses (Mastodon's filters: numbered
    /// per owner and looked up with their owner, so each names nothing for anyone else).
    FilterId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_canonical_ids() {
        assert_eq!(parse_id("1"), Some(1));
        assert_eq!(parse_id("9007199254740991"), Some(MAX_ID));
        assert_eq!(PostId::parse("42").map(PostId::get), Some(42));
        assert_eq!(UserId::from_trusted(7).to_string(), "7");
    }

    #[test]
    fn rejects_everything_else() {
        for bad in ["", "0", "007", "-1", "+1", "1.0", "1e3", " 1", "9007199254740992", "abc", "１"] {
            assert_eq!(parse_id(bad), None, "{bad}");
            assert_eq!(UserId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ids_serialize_as_plain_numbers() {
        let id = CommentId::from_trusted(12);
        assert_eq!(serde_json::to_string(&id).ok().as_deref(), Some("12"));
        assert_eq!(serde_json::from_str::<CommentId>("12").ok(), Some(id));
    }
}
