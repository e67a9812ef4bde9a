-- Feed pipeline: fan-out only reaches readers whose timeline window exists (they have read
-- their feed at least once). Everyone else is served by the pull path on their first read,
-- which also builds their window, so skipping them loses nothing and saves a DO write each.
ALTER TABLE users ADD COLUMN feed_active_at INTEGER;
-- Fan-out pages an author's followers in follower_id order and needs each follower's flag.
CREATE INDEX users_feed_active ON users (id) WHERE feed_active_at IS NOT NULL;
