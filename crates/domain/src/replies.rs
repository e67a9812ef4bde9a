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

/// How long after it was written a reply still notifies the thread's author when its row
/// first lands in the thread: a reply's row lands within seconds, or with its outbox event's
/// re-send within hours of an outage; a reply older than this is an import with its original
/// time or an old comment moved into a post, which was news long ago.
pub const NOTIFY_HORIZON_MS: i64 = 24 * 60 * 60 * 1000;

/// Whether a reply written at `created_at` notifies when its thread row lands at `now`.
pub fn notifies(created_at: i64, now: i64) -> bool {
    now.saturating_sub(created_at) <= NOTIFY_HORIZON_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_recent_reply_notifies() {
        let now = 10 * NOTIFY_HORIZON_MS;
        assert!(notifies(now, now));
        assert!(notifies(now - NOTIFY_HORIZON_MS, now), "the horizon itself");
        assert!(!notifies(now - NOTIFY_HORIZON_MS - 1, now), "an import with its original time");
        assert!(notifies(now + 5, now), "a clock a little ahead");
    }

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
