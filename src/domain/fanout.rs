//! Fan-out policy: who receives a chunk of an event, and what follows a chunk.

use super::visibility::Visibility;

/// What an event does to the windows it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Deliver,
    Remove,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Audience {
    pub followers: bool,
    pub author: bool,
}

/// Who receives this chunk, given the post's visibility *now* (`None`: deleted meanwhile).
/// `None` means there is nothing left to do for the event.
pub fn audience(action: Action, visibility: Option<Visibility>, first_chunk: bool) -> Option<Audience> {
    match (action, visibility) {
        // Deleted before delivery: read-time filtering would hide it anyway, so skip the work.
        (Action::Deliver, None) => None,
        // The author's own window gets it once (with the first chunk); followers unless private.
        (Action::Deliver, Some(v)) => {
            Some(Audience { followers: v != Visibility::Private, author: first_chunk })
        }
        // Removals never touch the author's window: the author may always see their own post,
        // and a deleted one is filtered at read time.
        (Action::Remove, _) => Some(Audience { followers: true, author: false }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The chunk was full: more followers may follow this one.
    Continue {
        after_follower_id: i64,
    },
    Done,
}

/// After delivering `followers` (the page after `start`, at most `chunk_size` long): the
/// progress to record and what comes next.
pub fn after_chunk(start: i64, followers: &[i64], chunk_size: usize) -> (i64, Next) {
    let last = followers.last().copied().unwrap_or(start).max(start);
    if followers.len() >= chunk_size && chunk_size > 0 {
        (last, Next::Continue { after_follower_id: last })
    } else {
        (last, Next::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences() {
        let both = Audience { followers: true, author: true };
        assert_eq!(audience(Action::Deliver, Some(Visibility::Public), true), Some(both));
        assert_eq!(
            audience(Action::Deliver, Some(Visibility::Followers), false),
            Some(Audience { followers: true, author: false })
        );
        assert_eq!(
            audience(Action::Deliver, Some(Visibility::Private), true),
            Some(Audience { followers: false, author: true })
        );
        assert_eq!(audience(Action::Deliver, None, true), None);
        assert_eq!(audience(Action::Remove, None, true), Some(Audience { followers: true, author: false }));
    }

    #[test]
    fn full_chunks_continue_and_short_ones_finish() {
        assert_eq!(after_chunk(0, &[3, 5, 9], 3), (9, Next::Continue { after_follower_id: 9 }));
        assert_eq!(after_chunk(9, &[12], 3), (12, Next::Done));
        assert_eq!(after_chunk(12, &[], 3), (12, Next::Done));
    }
}
