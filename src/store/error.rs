//! What a store call failed with, in the kinds the services above decide on. The store says
//! what happened to the data, never what it means to a client: a UNIQUE violation on
//! `users.handle` is "that handle is taken" only to the sign-up that met it, so the status and
//! the text are chosen by the service (or, when none decides, by the one default mapping in
//! `context`).

/// A failed store call.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A row the call needs is not there (`what` names it, for the logs).
    #[error("not found: {0}")]
    NotFound(&'static str),
    /// A UNIQUE / PRIMARY KEY violation; `columns` as SQLite names them (`users.handle`).
    #[error("already exists ({}): {detail}", columns.join(", "))]
    AlreadyExists { columns: Vec<String>, detail: String },
    /// The row is there, in a state this write cannot go on from.
    #[error("conflict ({reason:?}): {detail}")]
    Conflict { reason: Conflict, detail: String },
    /// A foreign key names a row that does not exist (`posts.author_id`, `likes.post_id`).
    /// Writes check their targets first and rows are never hard-deleted, so what it means
    /// depends on the write: only its caller can say.
    #[error("missing reference: {detail}")]
    MissingReference { detail: String },
    /// A write to a logical shard that is being moved (`RAISE(ABORT, 'shard frozen')` from the
    /// freeze triggers, migrations/0013): retryable after the switch.
    #[error("{detail}")]
    Frozen { detail: String },
    /// Physical database `DB_{database}` did not answer (an outage, a reset, an overload):
    /// retryable later; reads that can do without it leave its rows out (docs/operations.md "A
    /// database outage") and queued events wait in their outbox.
    #[error("{detail}")]
    Unavailable { database: usize, detail: String },
    /// The deployment's storage configuration is unusable (an invalid `SHARD_MAP`, no `DB_0`).
    #[error("{0}")]
    Misconfigured(String),
    /// Anything else: a statement D1 refused for another reason, or data that does not read
    /// back as the code expects. A bug or a broken invariant, not worth retrying as such.
    #[error("{0}")]
    Internal(String),
}

/// Why a write met a [`StoreError::Conflict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// An upload the publish names is attached to another post, or gone (the trigger of
    /// migrations/0027, `RAISE(ABORT, 'media_already_attached')`).
    MediaAttached,
    /// The idempotency key was already used for a request with a different fingerprint.
    KeyReused,
}

pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    /// Whether this is a UNIQUE violation on `target`: a column (`users.handle`) or any column
    /// of a table (`idempotency_keys`).
    pub fn is_unique_violation(&self, target: &str) -> bool {
        let Self::AlreadyExists { columns, .. } = self else {
            return false;
        };
        columns
            .iter()
            .any(|c| c == target || c.strip_prefix(target).is_some_and(|rest| rest.starts_with('.')))
    }

    /// The database whose outage this is, if it is one.
    pub fn unavailable_database(&self) -> Option<usize> {
        match self {
            Self::Unavailable { database, .. } => Some(*database),
            _ => None,
        }
    }
}

impl From<worker::Error> for StoreError {
    fn from(e: worker::Error) -> Self {
        Self::Internal(e.to_string())
    }
}

/// Texts D1 gives when a database cannot answer at all, rather than refusing a statement: the
/// retryable errors of Cloudflare's D1 docs ("Retry queries") and its overload error.
const UNAVAILABLE_TEXTS: [&str; 4] = [
    "Network connection lost",
    "storage caused object to be reset",
    "reset because its code was updated",
    "D1 DB is overloaded",
];

/// Classifies the message of a D1 failure on database `database`; `detail` is what the logs
/// keep. D1 reports failures only as text, so this is the one place that reads it; everything
/// above matches on the kind.
pub fn classify(message: &str, database: usize, detail: String) -> StoreError {
    if UNAVAILABLE_TEXTS.iter().any(|t| message.contains(t)) {
        return StoreError::Unavailable { database, detail };
    }
    if message.contains("FOREIGN KEY constraint failed") {
        return StoreError::MissingReference { detail };
    }
    if message.contains("shard frozen") {
        return StoreError::Frozen { detail };
    }
    if message.contains("media_already_attached") {
        return StoreError::Conflict { reason: Conflict::MediaAttached, detail };
    }
    const UNIQUE: &str = "UNIQUE constraint failed: ";
    let Some(start) = message.find(UNIQUE).map(|i| i + UNIQUE.len()) else {
        return StoreError::Internal(detail);
    };
    // `... UNIQUE constraint failed: t.a, t.b: SQLITE_CONSTRAINT` (the suffix is optional).
    let rest = &message[start..];
    let list = rest.split(": ").next().unwrap_or(rest);
    let columns = list.split(", ").map(|c| c.trim().to_owned()).filter(|c| !c.is_empty()).collect();
    StoreError::AlreadyExists { columns, detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(message: &str) -> StoreError {
        classify(message, 2, format!("DB_2: {message}"))
    }

    #[test]
    fn d1_failures_are_classified_once_and_keep_their_kind() {
        let fk = kind("D1_ERROR: FOREIGN KEY constraint failed: SQLITE_CONSTRAINT");
        assert!(matches!(fk, StoreError::MissingReference { .. }), "{fk:?}");
        let unique = kind(
            "D1_ERROR: UNIQUE constraint failed: idempotency_keys.user_id, idempotency_keys.key: SQLITE_CONSTRAINT",
        );
        assert!(unique.is_unique_violation("idempotency_keys"));
        assert!(unique.is_unique_violation("idempotency_keys.key"));
        assert!(!unique.is_unique_violation("idempotency"));
        assert!(!unique.is_unique_violation("users.handle"));
        let handle = kind("UNIQUE constraint failed: users.handle");
        assert!(matches!(&handle, StoreError::AlreadyExists { columns, .. } if columns == &["users.handle"]));
        let other = kind("D1_ERROR: no such table: posts");
        assert!(matches!(&other, StoreError::Internal(d) if d.contains("DB_2")), "{other:?}");
        let frozen = kind("D1_ERROR: shard frozen: SQLITE_CONSTRAINT (trigger posts_frozen_insert)");
        assert!(matches!(frozen, StoreError::Frozen { .. }), "{frozen:?}");
        let taken = kind("D1_ERROR: media_already_attached: SQLITE_CONSTRAINT");
        assert!(matches!(taken, StoreError::Conflict { reason: Conflict::MediaAttached, .. }), "{taken:?}");
    }

    #[test]
    fn an_unreachable_database_is_told_apart_from_a_refused_statement() {
        for text in ["D1_ERROR: Network connection lost.", "Durable Object storage caused object to be reset"]
        {
            assert_eq!(kind(text).unavailable_database(), Some(2), "{text}");
        }
        assert_eq!(kind("D1_ERROR: no such table: posts").unavailable_database(), None);
        assert_eq!(StoreError::Internal("x".into()).unavailable_database(), None);
    }
}
