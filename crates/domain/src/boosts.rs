//! Boosts (Mastodon's reblogs): who may boost what, and whether a boost in a feed is shown.
//!
//! A boost is a post of the booster's that names an original (`posts.reblog_of`), so every
//! delivery path a post has (windows, the pull path, replicas) carries it unchanged. What is
//! particular to it is decided here, at read time, from the state *now*:
//!
//! - the original must be visible to the reader through the boost (not deleted, taken down,
//!   its author suspended, blocking or blocked by the reader, or muted by the reader);
//! - **one entry per post**: a reader's feed shows a post at its *earliest* entry, the post
//!   itself when the reader follows its author, else the first boost of it by someone the
//!   reader follows. Every later boost of it is hidden. The rule depends only on entries older
//!   than the one judged, and entries are only ever added at the top of a feed, so a page once
//!   read never changes its mind about an entry when a new boost arrives: a second boost of a
//!   post already shown arrives hidden, mid-scroll or not, and the full-key cursor never
//!   skips or repeats (an entry is either shown at its one key or hidden). Mastodon applies
//!   the same rule to the newest 40 entries of a Redis feed at insertion time; applied at read
//!   time it holds at any depth and across every path.

use super::cursor::SortKey;
use super::feed::{feed_verdict, Hidden, LiveState};
use super::ids::{PostId, UserId};
use super::visibility::{Relationship, Visibility};

/// Why a boost is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A followers-only post of someone else's, or a direct one: Mastodon refuses both.
    NotBoostable,
    /// Taken down by a moderator (its author still sees it, nobody may boost it).
    TakenDown,
}

/// The visibility a boost of `original` by `booster` fans out with: public for a public post;
/// the author's own followers-only post may be boosted to the author's followers (as Mastodon
/// allows); nothing else may be boosted.
pub fn boost_visibility(
    booster: UserId,
    author: UserId,
    visibility: Visibility,
    taken_down: bool,
) -> Result<Visibility, Refusal> {
    if taken_down {
        return Err(Refusal::TakenDown);
    }
    match visibility {
        Visibility::Public => Ok(Visibility::Public),
        Visibility::Followers if booster == author => Ok(Visibility::Followers),
        Visibility::Followers | Visibility::Private => Err(Refusal::NotBoostable),
    }
}

/// One boost as the original's database mirrors it (`reblogs`), from the booster's row as it is
/// now: converged by the boost request and again by the boost's outbox event, in any order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoostMirror {
    pub original: PostId,
    pub boost: PostId,
    pub booster: UserId,
    /// The boost's time (its sort key's), for `reblogged_by` and the one-entry rule.
    pub created_at: i64,
    /// The boost row exists and is not deleted. A boost id is never revived, so once false it
    /// stays false: the mirror never turns an inactive row back on.
    pub active: bool,
    /// When this convergence runs (the notification's time).
    pub now: i64,
}

/// What the read found about a boost's original, for one reader.
#[derive(Debug, Clone, Copy)]
pub struct OriginalNow {
    /// The original's state and the reader's relationship to its author; `None`: deleted or
    /// absent.
    pub live: Option<LiveState>,
    /// The reader mutes the original's author.
    pub author_muted: bool,
}

/// Whether a boost entry (the boost itself already passed the feed rule as the booster's post)
/// is shown through its original. The reader need not follow the original's author: the
/// boost's own verdict says the reader follows the booster.
pub fn original_verdict(original: OriginalNow) -> Result<(), Hidden> {
    let live = original.live.ok_or(Hidden::Deleted)?;
    // The feed rule, with the follow the boost stands for: the original is seen as by a
    // follower of its author only when the reader really is one (a self-boost of a
    // followers-only post reaches the author's followers alone).
    let through_boost = LiveState {
        relationship: Relationship { follows: true, ..live.relationship },
        visibility: if live.relationship.follows || live.relationship.is_self {
            live.visibility
        } else {
            // Not a follower: only a public original is visible through a boost.
            match live.visibility {
                Visibility::Public => Visibility::Public,
                _ => Visibility::Private,
            }
        },
        taken_down: live.taken_down,
        // A boost is never of a direct post; a mention opens nothing through someone else's.
        addresses_viewer: false,
        // The boost stands for the follow; the mute is checked below.
        followed_tag: false,
        author_muted: false,
    };
    feed_verdict(Some(through_boost))?;
    if original.author_muted && !live.relationship.is_self {
        return Err(Hidden::Muted);
    }
    Ok(())
}

/// Everything of a feed's that may hold an earlier entry of one original.
#[derive(Debug, Clone, Copy)]
pub struct EarlierEntries<'a> {
    /// The original's author is among the feed's sources (followed, or the reader): the post
    /// itself is an entry, older than any boost of it.
    pub author_in_feed: bool,
    /// The keys of the active boosts of the original by the feed's sources.
    pub boosts_in_feed: &'a [SortKey],
}

/// The one-entry-per-post rule: a boost at `key` is a duplicate when the feed holds an earlier
/// entry of the same original.
pub fn is_duplicate(key: SortKey, earlier: EarlierEntries<'_>) -> bool {
    earlier.author_in_feed || earlier.boosts_in_feed.iter().any(|k| *k < key)
}

/// A boost entry's verdict: its original visible now, and no earlier entry of it.
pub fn entry_verdict(key: SortKey, original: OriginalNow, earlier: EarlierEntries<'_>) -> Result<(), Hidden> {
    original_verdict(original)?;
    if is_duplicate(key, earlier) {
        return Err(Hidden::Duplicate);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOSTER: UserId = UserId::from_trusted(1);
    const AUTHOR: UserId = UserId::from_trusted(2);

    fn stranger() -> Relationship {
        Relationship { is_self: false, follows: false, blocked: false, suspended: false }
    }

    fn original(relationship: Relationship, visibility: Visibility) -> OriginalNow {
        OriginalNow { live: Some(LiveState::of(relationship, visibility, false)), author_muted: false }
    }

    #[test]
    fn only_public_posts_and_ones_own_followers_only_posts_can_be_boosted() {
        assert_eq!(boost_visibility(BOOSTER, AUTHOR, Visibility::Public, false), Ok(Visibility::Public));
        assert_eq!(
            boost_visibility(BOOSTER, AUTHOR, Visibility::Followers, false),
            Err(Refusal::NotBoostable)
        );
        assert_eq!(
            boost_visibility(AUTHOR, AUTHOR, Visibility::Followers, false),
            Ok(Visibility::Followers),
            "the author may boost their own followers-only post to their followers"
        );
        assert_eq!(boost_visibility(AUTHOR, AUTHOR, Visibility::Private, false), Err(Refusal::NotBoostable));
        assert_eq!(boost_visibility(BOOSTER, AUTHOR, Visibility::Private, false), Err(Refusal::NotBoostable));
        assert_eq!(boost_visibility(BOOSTER, AUTHOR, Visibility::Public, true), Err(Refusal::TakenDown));
    }

    #[test]
    fn a_public_original_is_shown_to_a_reader_who_does_not_follow_its_author() {
        assert_eq!(original_verdict(original(stranger(), Visibility::Public)), Ok(()));
    }

    #[test]
    fn the_original_is_hidden_when_deleted_moderated_blocked_muted_or_no_longer_public() {
        let gone = OriginalNow { live: None, author_muted: false };
        assert_eq!(original_verdict(gone), Err(Hidden::Deleted));
        let mut taken_down = original(stranger(), Visibility::Public);
        if let Some(live) = taken_down.live.as_mut() {
            live.taken_down = true;
        }
        assert_eq!(original_verdict(taken_down), Err(Hidden::Moderated));
        let suspended = Relationship { suspended: true, ..stranger() };
        assert_eq!(original_verdict(original(suspended, Visibility::Public)), Err(Hidden::Moderated));
        let blocked = Relationship { blocked: true, ..stranger() };
        assert_eq!(original_verdict(original(blocked, Visibility::Public)), Err(Hidden::Blocked));
        let muted = OriginalNow { author_muted: true, ..original(stranger(), Visibility::Public) };
        assert_eq!(original_verdict(muted), Err(Hidden::Muted));
        // Made followers-only (or direct) after the boost: a non-follower no longer sees it.
        assert_eq!(original_verdict(original(stranger(), Visibility::Followers)), Err(Hidden::Visibility));
        assert_eq!(original_verdict(original(stranger(), Visibility::Private)), Err(Hidden::Visibility));
    }

    #[test]
    fn a_followers_only_self_boost_reaches_followers_of_the_author_only() {
        let follower = Relationship { follows: true, ..stranger() };
        assert_eq!(original_verdict(original(follower, Visibility::Followers)), Ok(()));
        assert_eq!(original_verdict(original(Relationship::to_self(), Visibility::Followers)), Ok(()));
        assert_eq!(original_verdict(original(follower, Visibility::Private)), Err(Hidden::Visibility));
    }

    #[test]
    fn a_post_is_shown_at_its_earliest_entry_only() {
        let key = SortKey::new(100, 7);
        let none = EarlierEntries { author_in_feed: false, boosts_in_feed: &[] };
        assert!(!is_duplicate(key, none));
        assert!(is_duplicate(key, EarlierEntries { author_in_feed: true, ..none }), "the post itself");
        let earlier = [SortKey::new(90, 3)];
        assert!(is_duplicate(key, EarlierEntries { boosts_in_feed: &earlier, ..none }));
        // The entry itself and later boosts do not hide it: it is the earliest.
        let own_and_later = [key, SortKey::new(120, 1)];
        assert!(!is_duplicate(key, EarlierEntries { boosts_in_feed: &own_and_later, ..none }));
        // Same millisecond: the full key decides, as the cursor's order does.
        let same_ms = [SortKey::new(100, 6)];
        assert!(is_duplicate(key, EarlierEntries { boosts_in_feed: &same_ms, ..none }));
    }

    #[test]
    fn visibility_is_judged_before_duplication() {
        let key = SortKey::new(100, 7);
        let earlier = EarlierEntries { author_in_feed: true, boosts_in_feed: &[] };
        let gone = OriginalNow { live: None, author_muted: false };
        assert_eq!(entry_verdict(key, gone, earlier), Err(Hidden::Deleted));
        assert_eq!(
            entry_verdict(key, original(stranger(), Visibility::Public), earlier),
            Err(Hidden::Duplicate)
        );
        let none = EarlierEntries { author_in_feed: false, boosts_in_feed: &[] };
        assert_eq!(entry_verdict(key, original(stranger(), Visibility::Public), none), Ok(()));
    }
}
