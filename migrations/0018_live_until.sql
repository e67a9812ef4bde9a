-- Until when (ms) the user has a live socket open (`/v1/feed/live` or the Mastodon streaming
-- API), renewed by their TimelineWindow object while one is (issue #22). It sits on the user's
-- home row because every write that makes a notification for them commits on that database:
-- the write's own RETURNING tells it, for free, whether there is a socket to tell (a
-- recipient who is not streaming costs no Durable Object call). The control database's
-- `live_readers` leases stay what the fan-out reads.
ALTER TABLE users ADD COLUMN live_until INTEGER;
