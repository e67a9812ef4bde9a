//! Mastodon lists: named sets of followed accounts, any number of them per owner and an
//! account in any number of them (many-to-many, unlike `/v1` follow groups: one name per
//! follow). The rules here are pure; storage is `store/lists.rs`.

use super::ids::UserId;

/// Lists one user may have.
pub const MAX_LISTS: usize = 100;
/// Accounts one list may hold.
pub const MAX_LIST_ACCOUNTS: usize = 1000;

/// Mastodon's `replies_policy`: stored and answered, without effect here (comments, edgefeed's
/// replies, are never in timelines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepliesPolicy {
    Followed,
    List,
    None,
}

impl RepliesPolicy {
    pub const ALL: [Self; 3] = [Self::Followed, Self::List, Self::None];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Followed => "followed",
            Self::List => "list",
            Self::None => "none",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// What an account asked to be added to a list is, as one read of the owner's database saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub account: UserId,
    pub followed: bool,
    pub member: bool,
}

/// Why nothing was added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The owner does not follow this account (Mastodon answers 404).
    NotFollowed(UserId),
    /// Already in the list (Mastodon answers 422).
    AlreadyMember(UserId),
    /// The list would hold more than [`MAX_LIST_ACCOUNTS`].
    Full,
}

/// The accounts to add, once each in the order asked, or why none is added: all or nothing,
/// as Mastodon does it (every account must be followed, none already in the list).
pub fn accounts_to_add(candidates: &[Candidate], members: usize) -> Result<Vec<UserId>, Refusal> {
    if let Some(c) = candidates.iter().find(|c| !c.followed) {
        return Err(Refusal::NotFollowed(c.account));
    }
    if let Some(c) = candidates.iter().find(|c| c.member) {
        return Err(Refusal::AlreadyMember(c.account));
    }
    let mut add: Vec<UserId> = Vec::with_capacity(candidates.len());
    for c in candidates {
        if !add.contains(&c.account) {
            add.push(c.account);
        }
    }
    if members + add.len() > MAX_LIST_ACCOUNTS {
        return Err(Refusal::Full);
    }
    Ok(add)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(n: i64, followed: bool, member: bool) -> Candidate {
        Candidate { account: UserId::from_trusted(n), followed, member }
    }

    #[test]
    fn all_followed_non_members_are_added_once_in_order() {
        let asked = [c(3, true, false), c(1, true, false), c(3, true, false)];
        let added = accounts_to_add(&asked, 0);
        assert_eq!(added, Ok(vec![UserId::from_trusted(3), UserId::from_trusted(1)]));
    }

    #[test]
    fn one_unfollowed_or_member_account_refuses_them_all() {
        let asked = [c(1, true, false), c(2, false, false), c(3, true, true)];
        assert_eq!(accounts_to_add(&asked, 0), Err(Refusal::NotFollowed(UserId::from_trusted(2))));
        assert_eq!(accounts_to_add(&asked[..1], 0).map(|a| a.len()), Ok(1));
        let asked = [c(1, true, false), c(3, true, true)];
        assert_eq!(accounts_to_add(&asked, 0), Err(Refusal::AlreadyMember(UserId::from_trusted(3))));
    }

    #[test]
    fn a_list_holds_at_most_the_cap() {
        let asked = [c(1, true, false), c(2, true, false)];
        assert!(accounts_to_add(&asked, MAX_LIST_ACCOUNTS - 2).is_ok());
        assert_eq!(accounts_to_add(&asked, MAX_LIST_ACCOUNTS - 1), Err(Refusal::Full));
    }

    #[test]
    fn policies_parse_as_mastodon_names_them() {
        for p in RepliesPolicy::ALL {
            assert_eq!(RepliesPolicy::parse(p.as_str()), Some(p));
        }
        assert_eq!(RepliesPolicy::parse("all"), None);
    }
}
