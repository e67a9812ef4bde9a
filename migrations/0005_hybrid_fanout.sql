-- Hybrid fan-out decided per follow edge (see src/domain/policy.rs).
-- Authors' posting rate: a decayed average in posts per day, brought up to date by every publish
-- in the same batch as the post. `post_rate_modes` is the rate the author's edges were last
-- decided with; the fan-out recomputes them when the rate has moved by the hysteresis factor.
ALTER TABLE users ADD COLUMN post_rate REAL NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN post_rate_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN post_rate_modes REAL NOT NULL DEFAULT 0;
-- Readers' feed-read rate and last read, kept in the reader's window Durable Object and reported
-- here (through the queue, never on the read path) when they move, or at most daily.
ALTER TABLE users ADD COLUMN read_rate REAL NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN last_read_at INTEGER;
-- For authors over PUSH_MAX_FOLLOWERS: the read rate of the least active reader still pushed.
ALTER TABLE users ADD COLUMN push_min_read_rate REAL NOT NULL DEFAULT 0;
-- How each edge is served, as two flags so each side reads one index range:
--   push = 1: fan-out writes the author's posts to the reader's window;
--   pull = 1: the reader's feed reads pull the author's posts from D1.
-- (1, 0) push, (0, 1) pull, (1, 1) switching pull -> push: fan-out already pushes while reads
-- still pull, until the author's recent posts are backfilled into the window. Existing edges
-- keep today's behaviour: push.
ALTER TABLE follows ADD COLUMN push INTEGER NOT NULL DEFAULT 1 CHECK (push IN (0, 1));
ALTER TABLE follows ADD COLUMN pull INTEGER NOT NULL DEFAULT 0 CHECK (pull IN (0, 1));
-- "The push followers of author A, in order, from cursor X" is one indexed range.
CREATE INDEX follows_author_push ON follows (author_id, push, follower_id);
-- "The pull authors of reader R", for every feed read.
CREATE INDEX follows_follower_pull ON follows (follower_id, pull, author_id);
