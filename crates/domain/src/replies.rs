//! Which replies a feed carries (Mastodon's rule for home): a post that replies to nobody, or
//! to its own author (a self-reply thread), reaches every follower; a reply to someone else
//! only the followers who also follow the account it answers, or that account itself. The
//! fan-out chooses recipients by it (`fanout_plan.rs`, `PostRead::reply_to`), and every read
//! checks it again: unfollowing the account replied to hides the reply.

use std::collections::HashSet;

use super::ids::UserId;

/// Whether a post by `author` that replies to `replied_to` (`None`: not a reply) belongs in
/// `viewer`'s feed whose followed sources are `sources` (the viewer too, on home).
pub fn in_feed(
    author: UserId,
    replied_to: Option<UserId>,
    viewer: UserId,
    sources: &HashSet<UserId>,
) -> bool {
    match replied_to {
        None => true,
        Some(to) => to == author || to == viewer || sources.contains(&to),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(n: i64) -> UserId {
        UserId::from_trusted(n)
    }

    #[test]
    fn a_reply_needs_the_feed_to_follow_the_account_it_answers() {
        let (author, other, viewer) = (user(1), user(2), user(3));
        let follows_author: HashSet<UserId> = [author, viewer].into();
        let follows_both: HashSet<UserId> = [author, other, viewer].into();
        assert!(in_feed(author, None, viewer, &follows_author), "not a reply");
        assert!(in_feed(author, Some(author), viewer, &follows_author), "a self-reply thread");
        assert!(!in_feed(author, Some(other), viewer, &follows_author));
        assert!(in_feed(author, Some(other), viewer, &follows_both));
        assert!(in_feed(author, Some(viewer), viewer, &follows_author), "a reply to the reader");
    }
}
