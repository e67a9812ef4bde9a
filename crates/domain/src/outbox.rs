//! The outbox's vocabulary: what an event does and where it stands. Stored as snake_case text.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A post to fan out to the author's followers' windows (and the author's own).
    Post,
    /// A deleted or narrowed post to remove from those windows.
    RemovePost,
    /// Drop one author's entries from one reader's window (unfollow, block).
    RemoveAuthor,
    /// Copy one author's recent posts into one reader's window (new follow); first applies
    /// the follow's author-side mirror (`services/graph.rs`), so the backfill is done only once
    /// fan-out pages can see the new follower.
    Backfill,
    /// Bring the mirrors of one pair of users to the authoritative sides' current state
    /// (unblock; the other graph changes ride on `backfill` and `remove_author`).
    GraphMirror,
}

impl EventKind {
    pub const ALL: [EventKind; 5] =
        [Self::Post, Self::RemovePost, Self::RemoveAuthor, Self::Backfill, Self::GraphMirror];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Post => "post",
            Self::RemovePost => "remove_post",
            Self::RemoveAuthor => "remove_author",
            Self::Backfill => "backfill",
            Self::GraphMirror => "graph_mirror",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventState {
    /// Committed, not yet carried out completely; the sweep resends it after a grace period.
    Pending,
    Done,
    /// Exhausted its queue retries; kept for the operator (stats, replay).
    Dead,
    /// A delivery of a suspended author's post, parked until reinstatement releases it.
    Held,
}

impl EventState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Done => "done",
            Self::Dead => "dead",
            Self::Held => "held",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_their_serde_form() {
        for kind in EventKind::ALL {
            assert_eq!(serde_json::to_value(kind).ok(), Some(kind.as_str().into()));
        }
        for state in [EventState::Pending, EventState::Done, EventState::Dead, EventState::Held] {
            assert_eq!(serde_json::to_value(state).ok(), Some(state.as_str().into()));
        }
    }
}
