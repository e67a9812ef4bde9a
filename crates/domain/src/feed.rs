//! Feed assembly, independent of where candidates come from (timeline window or D1 pull).
//!
//! Candidates arrive in the feed order `(created_at, id)` descending. Each is either shown or
//! hidden for a reason; a page takes visible candidates until it is full, and remembers the key
//! of the last candidate it *scanned*, so hidden candidates are never scanned twice and a
//! reader never loops on them.

use std::fmt;
use std::rc::Rc;

use serde::Serialize;

use super::cursor::SortKey;
use super::visibility::{may_see_post, Relationship, Visibility};

/// Where a feed page came from, as the API reports it in `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedState {
    Ok,
    /// The reader's window could not be built; the page came from D1 alone.
    Rebuilding,
}

/// Why a feed page is empty (`empty_reason`), so a client can say something useful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmptyReason {
    NoFollows,
    NoPosts,
    AllFiltered,
    Rebuilding,
}

/// Why a candidate from a window or cache was not shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hidden {
    Deleted,
    Blocked,
    Unfollowed,
    Visibility,
    /// Taken down, or its author suspended, by an operator.
    Moderated,
    /// A boost of a post by an author the reader mutes.
    Muted,
    /// A boost of a post the feed already holds at an earlier entry (`domain/boosts.rs`).
    Duplicate,
    /// Matched one of the viewer's `hide` filters (`domain/filters.rs`).
    Filtered,
}

impl Hidden {
    pub const ALL: [Hidden; 8] = [
        Hidden::Deleted,
        Hidden::Blocked,
        Hidden::Unfollowed,
        Hidden::Visibility,
        Hidden::Moderated,
        Hidden::Muted,
        Hidden::Duplicate,
        Hidden::Filtered,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Hidden::Deleted => "deleted",
            Hidden::Blocked => "blocked",
            Hidden::Unfollowed => "unfollowed",
            Hidden::Visibility => "visibility",
            Hidden::Moderated => "moderated",
            Hidden::Muted => "muted",
            Hidden::Duplicate => "duplicate",
            Hidden::Filtered => "filtered",
        }
    }
}

/// What the feed knows about a candidate post now (from D1), or `None` if it is gone.
#[derive(Debug, Clone, Copy)]
pub struct LiveState {
    pub relationship: Relationship,
    pub visibility: Visibility,
    pub taken_down: bool,
    /// The post is addressed to the viewer (mentions them, or replies to them).
    pub addresses_viewer: bool,
    /// A public, listed post of its own (what the tag index holds) that carries a tag the
    /// viewer follows now (`tags::FollowedTags`): Mastodon's followed hashtags.
    pub followed_tag: bool,
    /// The viewer mutes the author (read only for a viewer who follows a tag: a followed author
    /// they mute is already left out of their edges).
    pub author_muted: bool,
}

impl LiveState {
    /// The state without the paths beside a follow (not addressed, no followed tag, not muted).
    pub fn of(relationship: Relationship, visibility: Visibility, taken_down: bool) -> Self {
        Self {
            relationship,
            visibility,
            taken_down,
            addresses_viewer: false,
            followed_tag: false,
            author_muted: false,
        }
    }
}

/// The home-feed rule: the viewer's own posts, posts of authors the viewer follows now, direct
/// posts that mention the viewer (delivered to the mentioned, `services/direct.rs`) and public
/// posts carrying a tag the viewer follows, by an author they do not mute (delivered to the
/// tag's followers, `domain/fanout_plan.rs`'s tag pages), that the viewer may see now.
pub fn feed_verdict(live: Option<LiveState>) -> Result<(), Hidden> {
    let live = live.ok_or(Hidden::Deleted)?;
    let rel = live.relationship;
    // Moderation hides a post from every feed, its author's own included (the author still
    // sees a taken-down post by its id, marked as such).
    if live.taken_down || rel.suspended {
        return Err(Hidden::Moderated);
    }
    if rel.blocked && !rel.is_self {
        return Err(Hidden::Blocked);
    }
    let addressed = live.addresses_viewer && live.visibility == Visibility::Private;
    if !rel.is_self && !rel.follows && !addressed {
        let by_tag = live.followed_tag && live.visibility == Visibility::Public;
        if !by_tag {
            return Err(Hidden::Unfollowed);
        }
        if live.author_muted {
            return Err(Hidden::Muted);
        }
    }
    if !may_see_post(rel, live.visibility, live.addresses_viewer) {
        return Err(Hidden::Visibility);
    }
    Ok(())
}

/// A read-time rule that hides a candidate the feed rule shows (the viewer's `hide` filters):
/// it is hidden as the feed rule hides, so it counts as scanned and the page fills on.
pub struct HideRule<T>(pub Rc<dyn Fn(&T) -> bool>);

impl<T> fmt::Debug for HideRule<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HideRule")
    }
}

/// A page being filled from one or more candidate streams, in feed order.
#[derive(Debug)]
pub struct PageBuilder<T> {
    limit: usize,
    pub items: Vec<T>,
    pub last_scanned: Option<SortKey>,
    pub scanned: usize,
    pub hidden: Vec<Hidden>,
    hide: Option<HideRule<T>>,
}

impl<T> PageBuilder<T> {
    pub fn new(limit: usize) -> Self {
        Self { limit, items: Vec::new(), last_scanned: None, scanned: 0, hidden: Vec::new(), hide: None }
    }

    /// The page with a read-time rule that hides what it matches ([`Hidden::Filtered`]).
    pub fn hiding(mut self, hide: Option<HideRule<T>>) -> Self {
        self.hide = hide;
        self
    }

    pub fn is_full(&self) -> bool {
        self.items.len() >= self.limit
    }

    pub fn room(&self) -> usize {
        self.limit.saturating_sub(self.items.len())
    }

    /// Offers the next candidate in feed order; returns false (and ignores it) once full.
    pub fn offer(&mut self, key: SortKey, verdict: Result<T, Hidden>) -> bool {
        if self.is_full() {
            return false;
        }
        debug_assert!(self.last_scanned.is_none_or(|k| key < k), "candidates must arrive in feed order");
        self.scanned += 1;
        self.last_scanned = Some(key);
        match verdict {
            Ok(item) if self.hide.as_ref().is_some_and(|rule| (rule.0)(&item)) => {
                self.hidden.push(Hidden::Filtered)
            }
            Ok(item) => self.items.push(item),
            Err(reason) => self.hidden.push(reason),
        }
        true
    }
}

impl<T> PageBuilder<T> {
    /// Passes over the next candidate without showing or hiding it (its author's posts are
    /// left out of this page: their database is unavailable). It counts as scanned, so the
    /// cursor moves past it and the scan budget bounds a window full of them; false once full.
    pub fn pass_over(&mut self, key: SortKey) -> bool {
        if self.is_full() {
            return false;
        }
        self.scanned += 1;
        self.last_scanned = Some(key);
        true
    }
}

/// How a feed page read ends, given whether more candidates may exist below what was scanned.
/// The cursor is the last scanned key whenever anything may remain (page full, or budget spent
/// on hidden items), and `None` only when every source is exhausted.
pub fn next_cursor_key<T>(page: &PageBuilder<T>, sources_exhausted: bool) -> Option<SortKey> {
    if sources_exhausted && !page.is_full() {
        None
    } else {
        page.last_scanned
    }
}

/// Why a page with no items is empty: candidates were scanned and all hidden, the window is
/// rebuilding, the viewer follows nobody (only asked when it matters), or there is nothing yet.
pub fn empty_reason(scanned: usize, state: FeedState, follows_anyone: Option<bool>) -> EmptyReason {
    if scanned > 0 {
        EmptyReason::AllFiltered
    } else if state == FeedState::Rebuilding {
        EmptyReason::Rebuilding
    } else if follows_anyone == Some(false) {
        EmptyReason::NoFollows
    } else {
        EmptyReason::NoPosts
    }
}

/// Percentile (nearest-rank) of unsorted samples; `None` when empty.
pub fn percentile(samples: &[i64], pct: f64) -> Option<i64> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((pct / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(follows: bool, blocked: bool, visibility: Visibility) -> Option<LiveState> {
        let relationship = Relationship { is_self: false, follows, blocked, suspended: false };
        Some(LiveState::of(relationship, visibility, false))
    }

    #[test]
    fn a_direct_post_reaches_the_mentioned_without_a_follow_and_nobody_else() {
        let to_me = |blocked| {
            let relationship = Relationship { is_self: false, follows: false, blocked, suspended: false };
            Some(LiveState {
                addresses_viewer: true,
                ..LiveState::of(relationship, Visibility::Private, false)
            })
        };
        assert_eq!(feed_verdict(to_me(false)), Ok(()));
        assert_eq!(feed_verdict(to_me(true)), Err(Hidden::Blocked));
        assert_eq!(
            feed_verdict(live(true, false, Visibility::Private)),
            Err(Hidden::Visibility),
            "a follower"
        );
        // A mention in a followers-only post opens it, not a place in a non-follower's feed.
        let mut followers_only = to_me(false).unwrap();
        followers_only.visibility = Visibility::Followers;
        assert_eq!(feed_verdict(Some(followers_only)), Err(Hidden::Unfollowed));
    }

    #[test]
    fn a_followed_tag_admits_a_strangers_public_post_unless_muted_blocked_or_moderated() {
        let tagged = |follows, blocked, visibility| {
            live(follows, blocked, visibility).map(|l| LiveState { followed_tag: true, ..l })
        };
        assert_eq!(feed_verdict(tagged(false, false, Visibility::Public)), Ok(()));
        assert_eq!(feed_verdict(tagged(true, false, Visibility::Public)), Ok(()), "both paths: one verdict");
        assert_eq!(feed_verdict(tagged(false, true, Visibility::Public)), Err(Hidden::Blocked));
        // Only a public post reaches a tag's followers (a followers-only or direct one carrying
        // the tag opens nothing; unlisted posts are never `followed_tag`).
        assert_eq!(feed_verdict(tagged(false, false, Visibility::Followers)), Err(Hidden::Unfollowed));
        assert_eq!(feed_verdict(tagged(false, false, Visibility::Private)), Err(Hidden::Unfollowed));
        let muted = tagged(false, false, Visibility::Public).map(|l| LiveState { author_muted: true, ..l });
        assert_eq!(feed_verdict(muted), Err(Hidden::Muted));
        let mut suspended = tagged(false, false, Visibility::Public).unwrap();
        suspended.relationship.suspended = true;
        assert_eq!(feed_verdict(Some(suspended)), Err(Hidden::Moderated));
        let taken_down =
            tagged(false, false, Visibility::Public).map(|l| LiveState { taken_down: true, ..l });
        assert_eq!(feed_verdict(taken_down), Err(Hidden::Moderated));
        // The tag unfollowed or edited away: the stranger's post is unfollowed again.
        assert_eq!(feed_verdict(live(false, false, Visibility::Public)), Err(Hidden::Unfollowed));
    }

    #[test]
    fn verdicts() {
        assert_eq!(feed_verdict(None), Err(Hidden::Deleted));
        assert_eq!(feed_verdict(live(true, false, Visibility::Followers)), Ok(()));
        assert_eq!(feed_verdict(live(true, true, Visibility::Public)), Err(Hidden::Blocked));
        assert_eq!(feed_verdict(live(false, false, Visibility::Public)), Err(Hidden::Unfollowed));
        assert_eq!(feed_verdict(live(true, false, Visibility::Private)), Err(Hidden::Visibility));
        let own = LiveState::of(Relationship::to_self(), Visibility::Private, false);
        assert_eq!(feed_verdict(Some(own)), Ok(()));
        let taken_down = LiveState { taken_down: true, ..own };
        assert_eq!(feed_verdict(Some(taken_down)), Err(Hidden::Moderated), "even the author's own feed");
        let mut suspended = live(true, false, Visibility::Public).unwrap();
        suspended.relationship.suspended = true;
        assert_eq!(feed_verdict(Some(suspended)), Err(Hidden::Moderated));
    }

    #[test]
    fn page_fills_then_stops_and_tracks_last_scanned() {
        let mut page = PageBuilder::new(2);
        assert!(page.offer(SortKey::new(9, 1), Err(Hidden::Deleted)));
        assert!(page.offer(SortKey::new(8, 1), Ok("a")));
        assert!(page.offer(SortKey::new(8, 0), Ok("b")));
        assert!(!page.offer(SortKey::new(7, 1), Ok("c")));
        assert_eq!(page.items, vec!["a", "b"]);
        assert_eq!(page.last_scanned, Some(SortKey::new(8, 0)));
        assert_eq!(page.scanned, 3);
        assert_eq!(next_cursor_key(&page, true), Some(SortKey::new(8, 0)), "full pages always continue");
    }

    #[test]
    fn a_hide_rule_hides_what_it_matches_and_the_page_fills_on() {
        let rule = HideRule(Rc::new(|item: &&str| item.starts_with("spam")));
        let mut page = PageBuilder::new(2).hiding(Some(rule));
        for (k, item) in ["spam 1", "good 1", "spam 2", "spam 3", "good 2", "good 3"].iter().enumerate() {
            page.offer(SortKey::new(10 - k as i64, 0), Ok(*item));
        }
        assert_eq!(page.items, vec!["good 1", "good 2"]);
        assert_eq!(page.hidden, vec![Hidden::Filtered; 3]);
        assert_eq!(page.last_scanned, Some(SortKey::new(6, 0)), "the cursor moves past what it hid");
        assert_eq!(page.scanned, 5);
    }

    #[test]
    fn cursor_is_null_only_when_exhausted_and_not_full() {
        let mut page: PageBuilder<()> = PageBuilder::new(5);
        page.offer(SortKey::new(3, 3), Err(Hidden::Unfollowed));
        assert_eq!(next_cursor_key(&page, true), None);
        assert_eq!(
            next_cursor_key(&page, false),
            Some(SortKey::new(3, 3)),
            "budget spent: continue past hidden"
        );
    }

    #[test]
    fn empty_reasons_in_priority_order() {
        assert_eq!(empty_reason(3, FeedState::Rebuilding, Some(false)), EmptyReason::AllFiltered);
        assert_eq!(empty_reason(0, FeedState::Rebuilding, Some(false)), EmptyReason::Rebuilding);
        assert_eq!(empty_reason(0, FeedState::Ok, Some(false)), EmptyReason::NoFollows);
        assert_eq!(empty_reason(0, FeedState::Ok, Some(true)), EmptyReason::NoPosts);
        assert_eq!(empty_reason(0, FeedState::Ok, None), EmptyReason::NoPosts);
        assert_eq!(serde_json::to_value(EmptyReason::AllFiltered).ok(), Some("all_filtered".into()));
    }

    #[test]
    fn percentiles() {
        assert_eq!(percentile(&[], 50.0), None);
        let s: Vec<i64> = (1..=100).rev().collect();
        assert_eq!(percentile(&s, 50.0), Some(50));
        assert_eq!(percentile(&s, 99.0), Some(99));
        assert_eq!(percentile(&[7], 99.0), Some(7));
    }
}
