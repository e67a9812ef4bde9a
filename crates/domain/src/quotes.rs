//! Quotes (Mastodon 4.5): a post that shows another inside it. Who may quote what, and what a
//! quote shows a viewer now.
//!
//! A quote is a post of the quoter's (`posts.quote_of`, fanned out as any post of theirs); the
//! quoted post's side is `quotes`, on the quoted post's database: the mirror that counts quotes
//! and lists them, converged by the request and again by the quote's outbox event, as boosts
//! are (`domain/boosts.rs`). The quoted post is re-read at every read: deleted, or no longer
//! visible to the viewer, the quote shows no post and its state says why.

use serde::{Deserialize, Serialize};

use super::ids::{PostId, UserId};
use super::visibility::{Relationship, Visibility};

/// Who may quote a post: its author's choice (`quote_approval_policy`), kept on the post.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuotePolicy {
    /// Anyone who may see it.
    #[default]
    Public,
    /// The author's followers.
    Followers,
    /// Nobody but the author.
    Nobody,
}

impl QuotePolicy {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "public" => Some(Self::Public),
            "followers" => Some(Self::Followers),
            "nobody" => Some(Self::Nobody),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Followers => "followers",
            Self::Nobody => "nobody",
        }
    }
}

/// Why a quote is refused (`422` on `quoted_status_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Only a public post may be quoted by others; a direct post by nobody.
    NotQuotable,
    /// The author's policy leaves the quoter out.
    NotAllowed,
}

/// Whether `rel` (the quoter to the quoted post's author, as of now) may quote a post of this
/// visibility under this policy. Its author may quote their own public or followers-only post;
/// others only a public one, and only as its policy allows. No manual approval: a quote the
/// policy does not allow is refused, not left pending.
pub fn may_quote(rel: Relationship, visibility: Visibility, policy: QuotePolicy) -> Result<(), Refusal> {
    if rel.is_self {
        return match visibility {
            Visibility::Private => Err(Refusal::NotQuotable),
            _ => Ok(()),
        };
    }
    if visibility != Visibility::Public || rel.blocked || rel.suspended {
        return Err(Refusal::NotQuotable);
    }
    match policy {
        QuotePolicy::Public => Ok(()),
        QuotePolicy::Followers if rel.follows => Ok(()),
        QuotePolicy::Followers | QuotePolicy::Nobody => Err(Refusal::NotAllowed),
    }
}

/// What a quote shows a viewer now (Mastodon's `Quote.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuoteState {
    /// The quoted post is shown.
    Accepted,
    /// The quoted post is gone (deleted, or taken down by a moderator).
    Deleted,
    /// The viewer may not see it (followers-only since, or its author suspended).
    Unauthorized,
    /// A block stands between the viewer and its author.
    BlockedAccount,
    /// The viewer mutes its author.
    MutedAccount,
}

/// The quoted post as the read found it for one viewer.
#[derive(Debug, Clone, Copy)]
pub struct QuotedNow {
    /// `None`: no live row (deleted, or taken down for anyone but its author).
    pub exists: bool,
    pub visible: bool,
    pub relationship: Relationship,
    pub author_muted: bool,
}

/// The state a quote shows in, by what the read found now.
pub fn quote_state(found: QuotedNow) -> QuoteState {
    if !found.exists {
        QuoteState::Deleted
    } else if found.relationship.blocked && !found.relationship.is_self {
        QuoteState::BlockedAccount
    } else if !found.visible {
        QuoteState::Unauthorized
    } else if found.author_muted && !found.relationship.is_self {
        QuoteState::MutedAccount
    } else {
        QuoteState::Accepted
    }
}

/// One quote as the quoted post's database mirrors it (`quotes`), from the quote as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteMirror {
    pub quoted: PostId,
    pub quote: PostId,
    pub quoter: UserId,
    pub created_at: i64,
    /// The quote exists and is not deleted; once false, never true again (an id is never
    /// revived), so a late convergence cannot undo a delete.
    pub active: bool,
    pub now: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const SELF: Relationship =
        Relationship { is_self: true, follows: false, blocked: false, suspended: false };
    const STRANGER: Relationship =
        Relationship { is_self: false, follows: false, blocked: false, suspended: false };
    const FOLLOWER: Relationship =
        Relationship { is_self: false, follows: true, blocked: false, suspended: false };
    const BLOCKED: Relationship =
        Relationship { is_self: false, follows: true, blocked: true, suspended: false };

    #[test]
    fn who_may_quote_what() {
        use QuotePolicy as Q;
        use Visibility as V;
        assert_eq!(may_quote(STRANGER, V::Public, Q::Public), Ok(()));
        assert_eq!(may_quote(STRANGER, V::Public, Q::Followers), Err(Refusal::NotAllowed));
        assert_eq!(may_quote(FOLLOWER, V::Public, Q::Followers), Ok(()));
        assert_eq!(may_quote(FOLLOWER, V::Public, Q::Nobody), Err(Refusal::NotAllowed));
        assert_eq!(may_quote(FOLLOWER, V::Followers, Q::Public), Err(Refusal::NotQuotable));
        assert_eq!(may_quote(FOLLOWER, V::Private, Q::Public), Err(Refusal::NotQuotable));
        assert_eq!(may_quote(BLOCKED, V::Public, Q::Public), Err(Refusal::NotQuotable));
        assert_eq!(may_quote(SELF, V::Followers, Q::Nobody), Ok(()), "the author quotes their own");
        assert_eq!(may_quote(SELF, V::Private, Q::Public), Err(Refusal::NotQuotable), "never a direct post");
    }

    #[test]
    fn a_quote_says_why_it_shows_no_post() {
        let found = |exists, visible, relationship, author_muted| QuotedNow {
            exists,
            visible,
            relationship,
            author_muted,
        };
        assert_eq!(quote_state(found(true, true, STRANGER, false)), QuoteState::Accepted);
        assert_eq!(quote_state(found(false, false, STRANGER, false)), QuoteState::Deleted);
        assert_eq!(quote_state(found(true, false, STRANGER, false)), QuoteState::Unauthorized);
        assert_eq!(quote_state(found(true, false, BLOCKED, false)), QuoteState::BlockedAccount);
        assert_eq!(quote_state(found(true, true, FOLLOWER, true)), QuoteState::MutedAccount);
        assert_eq!(quote_state(found(true, true, SELF, true)), QuoteState::Accepted);
    }

    #[test]
    fn policies_round_trip() {
        for p in [QuotePolicy::Public, QuotePolicy::Followers, QuotePolicy::Nobody] {
            assert_eq!(QuotePolicy::parse(p.as_str()), Some(p));
        }
        assert_eq!(QuotePolicy::parse("everyone"), None);
    }
}
