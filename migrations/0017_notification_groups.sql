-- Grouped notifications (Mastodon 4.3's /api/v2/notifications, issue #22): a favourite group is
-- one post's likes in one fixed 12-hour window, a follow group one window's follows
-- (`domain/notifications.rs::GroupKey`). The window is `(id >> 11) / 43200000`: a notification
-- id's high bits are its millisecond (`domain/ids.rs::snowflake_time`).
--
-- With the window and the post in the key, the page walk (`store/notification_groups.rs`)
-- finds each window's groups by skipping from one post to the next (one seek per group) and
-- each group's newest row by one more seek, so a page costs seeks per group, never a scan of a
-- post with thousands of likes; the counts read one index range per group.
-- The reads must spell the window exactly as here for SQLite to use the index.
CREATE INDEX notifications_by_group
  ON notifications (recipient_id, kind, ((id >> 11) / 43200000), post_id, id);
