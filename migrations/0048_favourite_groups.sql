-- Issue 40: a favourite notification is grouped at write (docs/mastodon.md "Favourites grouped
-- at write"). A like used to write its own notification row (the row and four index entries,
-- most of a like's rows and bytes); now the post's favourites of one 12-hour window (the window
-- Mastodon's grouped notifications use, `notifications_by_group`) share one `notifications`
-- row, a group row: kind 'favourite', `actor_id` 0 (no account has id 0), its post, and the id
-- of the group's first like. It is written once per post and window; a like into it writes
-- nothing to `notifications`. Each liker's notification is their `likes` row, already on the
-- same database (the post's, its author's home): its id is `likes.notice_id`, given when the
-- like turns on and kept until it turns off, so expanded lists page with stable ids; a
-- dismissed one is negated (a tombstone: the like's row is what a late duplicate write finds,
-- and it keeps the sign), an unlike clears it (withdrawing the cause, 0044's rule).
-- A like the recipient's policy filters is still a notification row of its own (requests are
-- per actor), as are the rows written before this migration: both stay readable as they are.
ALTER TABLE likes ADD COLUMN notice_id INTEGER;
-- The highest notification id given to a recipient's likes: a `likes` row has no recipient to
-- index by, so the next id (`store/notifications.rs::new_id_sql`) reads this as well as the
-- notifications' own highest id, and ids stay unique and increasing per recipient.
ALTER TABLE users ADD COLUMN notice_max INTEGER NOT NULL DEFAULT 0;
