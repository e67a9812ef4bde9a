//! Fan-out policy: who receives a chunk of an event, and what follows a chunk.

use super::ids::UserId;
use super::visibility::Visibility;
use super::window::WindowOp;

/// Which way a post event moves followers' windows: the direction of the change that
/// recorded it (published or made visible again: deliver; made private or deleted: remove).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Deliver,
    Remove,
}

/// A post as it is in D1 *when the event is applied* (`None` for a post that is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostNow {
    pub visibility: Visibility,
    pub deleted: bool,
    /// Taken down by an operator: like a deletion for windows, until restored.
    pub taken_down: bool,
    /// Its author is suspended: deliveries wait (the event is held) until reinstatement.
    pub author_suspended: bool,
}

impl PostNow {
    /// Whether followers' windows should hold it: followers see public and followers-only
    /// posts that are neither deleted nor taken down.
    fn for_followers(post: Option<Self>) -> bool {
        post.is_some_and(|p| !p.deleted && !p.taken_down && p.visibility != Visibility::Private)
    }
}

/// What one chunk of a post event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// What to write to each follower's window, if anything.
    pub followers: Option<Direction>,
    /// Deliver to the author's own window (once, with the first chunk).
    pub author: bool,
    /// Park the event until its author is reinstated (seed 004's pre-delivery check: nothing
    /// of a suspended author is delivered, and nothing is lost either).
    pub hold: bool,
}

impl Plan {
    pub fn is_nothing(self) -> bool {
        self.followers.is_none() && !self.author && !self.hold
    }
}

/// Events are applied by the *current* state, never by what was true when they were sent: an
/// event only moves windows in its own direction, and only if the post's state now agrees. A
/// stale event (its change since undone) does nothing; the event of the later change, applied
/// after it was committed, brings the windows to the current state. Writes carry the post's
/// state version, so a write based on an older read cannot undo a newer one in a window.
///
/// A delivery of a suspended author's post is held, not dropped: reinstatement releases it and
/// it then delivers by the state it finds. Removals are never held (removing is always safe).
pub fn plan(direction: Direction, now: Option<PostNow>, first_chunk: bool) -> Plan {
    let visible = PostNow::for_followers(now);
    match direction {
        Direction::Deliver if now.is_some_and(|p| p.author_suspended && !p.deleted) => {
            Plan { followers: None, author: false, hold: true }
        }
        Direction::Deliver => Plan {
            followers: visible.then_some(Direction::Deliver),
            // The author sees all their own posts; removals never touch the author's window
            // (a deleted post is filtered at read time).
            author: first_chunk && now.is_some_and(|p| !p.deleted),
            hold: false,
        },
        Direction::Remove => {
            Plan { followers: (!visible).then_some(Direction::Remove), author: false, hold: false }
        }
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

/// A page of followers read with one row of lookahead (`chunk_size + 1` asked for): the chunk
/// to deliver, and whether more followers come after it. Without the lookahead, a fan-out whose
/// followers fill its chunks exactly (the common case of a big author: every chunk but the
/// last is full) would end with one more message, a queue hop that finds nobody.
pub fn split_lookahead<T>(mut page: Vec<T>, chunk_size: usize) -> (Vec<T>, bool) {
    let more = page.len() > chunk_size;
    page.truncate(chunk_size);
    (page, more)
}

/// After delivering `followers` (the chunk after `start`; `more`: followers come after it):
/// the progress to record and what comes next.
pub fn after_chunk(start: i64, followers: &[i64], more: bool) -> (i64, Next) {
    let last = followers.last().copied().unwrap_or(start).max(start);
    if more && !followers.is_empty() {
        (last, Next::Continue { after_follower_id: last })
    } else {
        (last, Next::Done)
    }
}

/// Groups window operations by reader (in order of first appearance) so each reader gets one
/// call: consecutive deliveries to a reader, from any number of posts, become one `Deliver`;
/// other operations keep their place. Order within a reader only matters for readability:
/// windows apply every operation by the post's version, whatever the order.
pub fn merge_per_reader(ops: impl Iterator<Item = (UserId, WindowOp)>) -> Vec<(UserId, Vec<WindowOp>)> {
    let mut readers: Vec<(UserId, Vec<WindowOp>)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (reader, op) in ops {
        let slot = *index.entry(reader).or_insert_with(|| {
            readers.push((reader, Vec::new()));
            readers.len() - 1
        });
        let list = &mut readers[slot].1;
        match (list.last_mut(), op) {
            (Some(WindowOp::Deliver { entries, cap }), WindowOp::Deliver { entries: more, cap: c }) => {
                entries.extend(more);
                *cap = (*cap).max(c);
            }
            (_, op) => list.push(op),
        }
    }
    readers
}

#[cfg(test)]
mod tests {
    use super::*;

    use Visibility::*;

    fn now(visibility: Visibility, deleted: bool) -> Option<PostNow> {
        Some(PostNow { visibility, deleted, taken_down: false, author_suspended: false })
    }

    #[test]
    fn plans_follow_the_current_state_in_the_event_direction() {
        use Direction::{Deliver as D, Remove as R};
        let plan_of = |followers, author| Plan { followers, author, hold: false };
        // (direction, state now, first chunk) -> plan
        let table = [
            (D, now(Public, false), true, plan_of(Some(D), true)),
            (D, now(Followers, false), false, plan_of(Some(D), false)),
            (D, now(Private, false), true, plan_of(None, true)),
            (D, now(Public, true), true, plan_of(None, false)),
            (D, None, true, plan_of(None, false)),
            (R, now(Private, false), true, plan_of(Some(R), false)),
            (R, now(Public, true), false, plan_of(Some(R), false)),
            (R, None, true, plan_of(Some(R), false)),
            // Stale removal: the post is visible again, so it removes nothing.
            (R, now(Public, false), true, plan_of(None, false)),
            (R, now(Followers, false), false, plan_of(None, false)),
        ];
        for (direction, state, first, expected) in table {
            assert_eq!(plan(direction, state, first), expected, "{direction:?} {state:?} {first}");
        }
        assert!(plan(R, now(Public, false), true).is_nothing());
    }

    #[test]
    fn moderation_removes_taken_down_posts_and_holds_suspended_authors() {
        use Direction::{Deliver as D, Remove as R};
        let taken_down = Some(PostNow { taken_down: true, ..now(Public, false).unwrap() });
        let suspended = Some(PostNow { author_suspended: true, ..now(Public, false).unwrap() });
        assert_eq!(plan(D, taken_down, false), Plan { followers: None, author: false, hold: false });
        assert_eq!(plan(R, taken_down, false), Plan { followers: Some(R), author: false, hold: false });
        let held = plan(D, suspended, true);
        assert!(held.hold && held.followers.is_none() && !held.author && !held.is_nothing());
        assert_eq!(plan(R, suspended, false).followers, None, "a suspension alone removes nothing");
        let gone = Some(PostNow { deleted: true, author_suspended: true, ..now(Public, false).unwrap() });
        assert!(plan(D, gone, true).is_nothing(), "a deleted post is never held");
    }

    #[test]
    fn a_chunk_continues_only_when_the_lookahead_saw_more() {
        assert_eq!(split_lookahead(vec![3, 5, 9, 11], 3), (vec![3, 5, 9], true));
        assert_eq!(split_lookahead(vec![3, 5, 9], 3), (vec![3, 5, 9], false), "exactly full: done");
        assert_eq!(split_lookahead(vec![12], 3), (vec![12], false));
        assert_eq!(after_chunk(0, &[3, 5, 9], true), (9, Next::Continue { after_follower_id: 9 }));
        assert_eq!(after_chunk(0, &[3, 5, 9], false), (9, Next::Done));
        assert_eq!(after_chunk(9, &[12], false), (12, Next::Done));
        assert_eq!(after_chunk(12, &[], false), (12, Next::Done));
        assert_eq!(after_chunk(12, &[], true), (12, Next::Done), "an empty chunk never loops");
    }

    #[test]
    fn merges_each_readers_deliveries_into_one_call() {
        use crate::ids::PostId;
        use crate::window::Entry;
        let (r1, r2) = (UserId::from_trusted(1), UserId::from_trusted(2));
        let entry = |post: i64| Entry {
            created_at: post,
            post_id: PostId::from_trusted(post),
            author_id: UserId::from_trusted(9),
            version: 0,
        };
        let deliver = |post: i64| WindowOp::Deliver { entries: vec![entry(post)], cap: 10 };
        let remove = WindowOp::RemovePost { post_id: PostId::from_trusted(7), version: 2, created_at: 7 };
        let ops = vec![
            (r1, deliver(1)),
            (r2, deliver(1)),
            (r1, deliver(2)),
            (r1, remove.clone()),
            (r1, deliver(3)),
        ];
        let merged = merge_per_reader(ops.into_iter());
        assert_eq!(merged.len(), 2, "one slot per reader, in order of first appearance");
        assert_eq!(merged[0].0, r1);
        assert_eq!(
            merged[0].1,
            vec![WindowOp::Deliver { entries: vec![entry(1), entry(2)], cap: 10 }, remove, deliver(3)]
        );
        assert_eq!(merged[1], (r2, vec![deliver(1)]));
    }
}
