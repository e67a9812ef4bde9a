//! Who may see what. These rules are applied on every read, whatever produced the candidate
//! (an author index, a timeline window, a cache): the index says a post *might* be shown,
//! only these rules say it *may* be shown now.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Anyone not blocked either way.
    Public,
    /// The author and the author's current followers.
    Followers,
    /// The author and the accounts the post mentions (Mastodon's `direct`; with no mentions,
    /// the author alone).
    Private,
}

impl Visibility {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "public" => Some(Self::Public),
            "followers" => Some(Self::Followers),
            "private" => Some(Self::Private),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Followers => "followers",
            Self::Private => "private",
        }
    }
}

/// What the viewer is to an author, as of now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Relationship {
    pub is_self: bool,
    pub follows: bool,
    /// A block in either direction.
    pub blocked: bool,
    /// The author is suspended by an operator: hidden from everyone (they cannot sign in).
    pub suspended: bool,
}

impl Relationship {
    pub fn to_self() -> Self {
        Self { is_self: true, ..Self::default() }
    }
}

/// The visibility levels of an author's posts this viewer may see; empty when blocked.
pub fn visible_levels(rel: Relationship) -> &'static [Visibility] {
    use Visibility::*;
    if rel.is_self {
        &[Public, Followers, Private]
    } else if rel.blocked || rel.suspended {
        &[]
    } else if rel.follows {
        &[Public, Followers]
    } else {
        &[Public]
    }
}

/// Whether the viewer may see a post of this author with this visibility.
pub fn may_see(rel: Relationship, visibility: Visibility, deleted: bool) -> bool {
    !deleted && visible_levels(rel).contains(&visibility)
}

/// The narrower of two visibilities: a reply is never seen more widely than what it answers.
pub fn narrower(a: Visibility, b: Visibility) -> Visibility {
    let rank = |v: Visibility| match v {
        Visibility::Public => 0,
        Visibility::Followers => 1,
        Visibility::Private => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// Whether the viewer may see a post addressed to them (`addressed`: it mentions them or
/// replies to them) or not: an addressed account also sees a followers-only or direct post, as
/// in Mastodon (a mention is an invitation, and its clients mention the account replied to),
/// unless a block either way or a suspension hides the author.
pub fn may_see_post(rel: Relationship, visibility: Visibility, addressed: bool) -> bool {
    visible_levels(rel).contains(&visibility) || (addressed && may_see_author(rel) && !rel.blocked)
}

/// Whether the viewer may see the author's profile and lists at all.
pub fn may_see_author(rel: Relationship) -> bool {
    rel.is_self || !(rel.blocked || rel.suspended)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Visibility::*;

    const STRANGER: Relationship =
        Relationship { is_self: false, follows: false, blocked: false, suspended: false };
    const FOLLOWER: Relationship =
        Relationship { is_self: false, follows: true, blocked: false, suspended: false };
    const BLOCKED: Relationship =
        Relationship { is_self: false, follows: false, blocked: true, suspended: false };
    const SUSPENDED: Relationship =
        Relationship { is_self: false, follows: true, blocked: false, suspended: true };

    #[test]
    fn matrix_of_levels_and_viewers() {
        let author = Relationship::to_self();
        for (rel, expect) in [
            (author, [true, true, true]),
            (FOLLOWER, [true, true, false]),
            (STRANGER, [true, false, false]),
            (BLOCKED, [false, false, false]),
            (SUSPENDED, [false, false, false]),
        ] {
            let got = [Public, Followers, Private].map(|v| may_see(rel, v, false));
            assert_eq!(got, expect, "{rel:?}");
        }
    }

    #[test]
    fn deleted_posts_are_never_visible() {
        assert!(!may_see(Relationship::to_self(), Public, true));
    }

    #[test]
    fn a_suspended_author_is_hidden_even_from_followers() {
        assert!(!may_see_author(SUSPENDED));
        assert!(may_see_author(FOLLOWER));
    }

    #[test]
    fn a_block_beats_a_stale_follow() {
        let rel = Relationship { is_self: false, follows: true, blocked: true, suspended: false };
        assert!(!may_see(rel, Public, false));
        assert!(!may_see_author(rel));
    }

    #[test]
    fn a_mention_opens_followers_only_and_direct_posts_but_not_past_a_block() {
        for v in [Public, Followers, Private] {
            assert!(may_see_post(STRANGER, v, true), "{v:?}");
            assert!(!may_see_post(BLOCKED, v, true), "{v:?}");
            assert!(!may_see_post(SUSPENDED, v, true), "{v:?}");
        }
        assert!(!may_see_post(STRANGER, Private, false));
        assert!(!may_see_post(FOLLOWER, Private, false));
        assert!(may_see_post(FOLLOWER, Followers, false));
    }

    #[test]
    fn a_reply_takes_the_narrower_visibility() {
        assert_eq!(narrower(Public, Followers), Followers);
        assert_eq!(narrower(Private, Public), Private);
        assert_eq!(narrower(Public, Public), Public);
    }

    #[test]
    fn parse_round_trips() {
        for v in [Public, Followers, Private] {
            assert_eq!(Visibility::parse(v.as_str()), Some(v));
        }
        assert_eq!(Visibility::parse("Public"), None);
    }
}
