//! The like state machine. A like is a relation (user, post) with a state, not a counter:
//! requests *set* the state, so repeating one changes nothing, and the count moves only when
//! the state really changes. An optional client sequence orders a user's requests: one whose
//! seq is not above the last applied seq is stale and changes nothing.
//!
//! The D1 statements in `store/likes.rs` implement exactly this rule (`ON CONFLICT ... WHERE`),
//! with triggers moving `like_count` only on real state changes; the tests pin both.

/// How far back the cron's count repair looks past its previous share's start (for clock skew
/// and overlapping shares): it recounts every post whose `touched_at` falls after that.
pub const COUNT_CHECK_MARGIN_MS: i64 = 10 * 60_000;
/// A post's `touched_at` (written by its comments and comment moves; a like's own row is its
/// mark) is rewritten only once it is older than this (half the margin, the other half for the
/// isolates' clock skew): a write at `t` then finds it at or after `t - TOUCH_EVERY_MS`, inside
/// the window of the first repair share that starts after `t` (which looks back to its
/// previous share's start, before `t`, less the margin). A busy thread rewrites its post's row
/// and its `posts_by_touched` entry once per 5 minutes, not on every comment.
pub const TOUCH_EVERY_MS: i64 = COUNT_CHECK_MARGIN_MS / 2;

use serde::{Deserialize, Serialize};

use super::ids::{PostId, UserId};
use super::notifications::Notice;

/// One like/unlike request as the post's `PostLikes` object receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LikeOp {
    pub post_id: PostId,
    pub user_id: UserId,
    pub like: bool,
    pub seq: Option<i64>,
    pub now: i64,
}

/// The state a request left, as the API answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LikeReply {
    pub liked: bool,
    pub like_count: i64,
    pub applied: bool,
}

/// What a post's `PostLikes` object answers: the reply, and the notice for the post's author
/// when this like made them a notification while a live socket of theirs is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LikeAnswer {
    #[serde(flatten)]
    pub reply: LikeReply,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<Notice>,
    /// When the like the request left began (`None`: not liked), for the liker's side
    /// (`liked_posts`), which the post's object writes from it after the commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liked_at: Option<i64>,
    /// The thread's root when the post is a reply: its row in the thread keeps a copy of the
    /// count (the comments view's top order scores by it), which the object writes after the
    /// commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LikeState {
    pub liked: bool,
    /// The last applied client sequence, if any request carried one.
    pub seq: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LikeRequest {
    pub like: bool,
    pub seq: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub applied: bool,
    pub state: LikeState,
    /// How the post's like count moves: -1, 0 or +1.
    pub count_delta: i64,
}

/// Applies a request to the current state (`None`: the user never touched this post).
pub fn apply(current: Option<LikeState>, req: LikeRequest) -> Outcome {
    let before = current.unwrap_or_default();
    let stale = matches!((req.seq, before.seq), (Some(new), Some(last)) if new <= last);
    if stale {
        return Outcome { applied: false, state: before, count_delta: 0 };
    }
    let state = LikeState { liked: req.like, seq: req.seq.or(before.seq) };
    let count_delta = i64::from(state.liked) - i64::from(before.liked);
    Outcome { applied: true, state, count_delta }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(seq: Option<i64>) -> LikeRequest {
        LikeRequest { like: true, seq }
    }
    fn unlike(seq: Option<i64>) -> LikeRequest {
        LikeRequest { like: false, seq }
    }

    /// Folds requests and returns (final state, total count movement).
    fn fold(reqs: &[LikeRequest]) -> (LikeState, i64) {
        let mut state = None;
        let mut total = 0;
        for r in reqs {
            let o = apply(state, *r);
            state = Some(o.state);
            total += o.count_delta;
        }
        (state.unwrap_or_default(), total)
    }

    #[test]
    fn repeated_likes_count_once() {
        let (state, total) = fold(&[like(None); 20]);
        assert!(state.liked);
        assert_eq!(total, 1);
    }

    #[test]
    fn unlike_of_never_liked_does_not_decrement() {
        let o = apply(None, unlike(None));
        assert!(o.applied);
        assert_eq!(o.count_delta, 0);
        assert!(!o.state.liked);
    }

    #[test]
    fn stale_seq_is_refused() {
        let after_unlike = apply(None, unlike(Some(7))).state;
        let o = apply(Some(after_unlike), like(Some(5)));
        assert!(!o.applied);
        assert!(!o.state.liked);
        assert_eq!(o.count_delta, 0);
        assert!(!apply(Some(after_unlike), like(Some(7))).applied, "equal seq is stale too");
        assert!(apply(Some(after_unlike), like(Some(8))).applied);
    }

    #[test]
    fn requests_without_seq_always_apply_and_keep_the_last_seq() {
        let s = apply(None, like(Some(10))).state;
        let o = apply(Some(s), unlike(None));
        assert!(o.applied);
        assert_eq!(o.state.seq, Some(10));
        assert!(!apply(Some(o.state), like(Some(9))).applied);
    }

    #[test]
    fn the_count_always_equals_the_final_state() {
        // Every interleaving of a small alphabet of requests.
        let alphabet = [like(None), unlike(None), like(Some(3)), unlike(Some(4)), like(Some(2))];
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    let (state, total) = fold(&[a, b, c]);
                    assert_eq!(total, i64::from(state.liked), "{a:?} {b:?} {c:?}");
                }
            }
        }
    }
}
