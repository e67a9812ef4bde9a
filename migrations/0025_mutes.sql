-- Mutes (issue #30): whom a user mutes, on the MUTER's home database, the one side there is
-- (a mute is nobody else's business, so no mirror). The muter's reads all run there: the feed's
-- first wave reads the reader's edges in one statement on that database and leaves out the
-- follows of muted authors (`store/feed.rs::edges_statement`), notifications are read there
-- too, and relationships read the viewer's side. A separate table rather than a column on
-- `follows`: a mute outlives an unfollow and a new follow, and may name someone not followed
-- (their notifications). `expires_at` (ms, NULL: until unmuted) is checked at read time, so a
-- timed mute ends by itself exactly; the cron purges expired rows later.
CREATE TABLE mutes (
  user_id       INTEGER NOT NULL,
  muted_id      INTEGER NOT NULL,
  notifications INTEGER NOT NULL DEFAULT 1 CHECK (notifications IN (0, 1)),
  expires_at    INTEGER,
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (user_id, muted_id)
) WITHOUT ROWID;
CREATE INDEX mutes_by_time ON mutes (user_id, created_at DESC, muted_id DESC);
CREATE INDEX mutes_by_expiry ON mutes (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX mutes_by_shard ON mutes (((user_id >> 3) & 255), user_id, muted_id);

-- The freeze of a moving shard (0013's pattern).
CREATE TRIGGER mutes_frozen_insert BEFORE INSERT ON mutes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER mutes_frozen_update BEFORE UPDATE ON mutes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER mutes_frozen_delete BEFORE DELETE ON mutes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
