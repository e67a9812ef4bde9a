-- Issue 40 item 7: the cron's counter repair reads only what changed. A user whose counted
-- relations changed (`followers_count`: their author-side `followers` rows; `following_count`:
-- their `follows` rows; `posts_count`: their live `posts`) is marked here, on their home, by
-- the triggers below: in the same transaction as the write, so no change escapes the mark,
-- whatever path wrote it. A pass recounts the marked users and clears their marks in one batch
-- (`store/counters.rs`); a slow sweep over every user still catches a counter edited behind
-- the marks' back. `marked_at` (seconds, D1's clock) is the first change since the last
-- recount: a user whose counts are large is recounted only once their mark is old enough.
CREATE TABLE count_marks (
  user_id   INTEGER PRIMARY KEY,
  marked_at INTEGER NOT NULL
);
-- No index by shard (the other per-user tables have one for a move's pages): the table holds
-- only the users changed since the last pass, so a move's scan of it is short, and every mark
-- would otherwise write a second row.
CREATE TRIGGER count_marks_frozen_insert BEFORE INSERT ON count_marks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER count_marks_frozen_update BEFORE UPDATE ON count_marks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER count_marks_frozen_delete BEFORE DELETE ON count_marks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- The marks. Not while the owner's shard is listed in `frozen_shards`: a frozen shard's write
-- was refused before these run, and a purge's deletes (mode 'purging', where inserts stay
-- refused) take the owner's rows off this database, where nothing is left to recount.
CREATE TRIGGER followers_count_mark_insert AFTER INSERT ON followers
  WHEN NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.author_id >> 3) & 255))
  BEGIN INSERT INTO count_marks (user_id, marked_at) VALUES (NEW.author_id, unixepoch()) ON CONFLICT (user_id) DO NOTHING; END;
CREATE TRIGGER followers_count_mark_delete AFTER DELETE ON followers
  WHEN NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.author_id >> 3) & 255))
  BEGIN INSERT INTO count_marks (user_id, marked_at) VALUES (OLD.author_id, unixepoch()) ON CONFLICT (user_id) DO NOTHING; END;
CREATE TRIGGER follows_count_mark_insert AFTER INSERT ON follows
  WHEN NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.follower_id >> 3) & 255))
  BEGIN INSERT INTO count_marks (user_id, marked_at) VALUES (NEW.follower_id, unixepoch()) ON CONFLICT (user_id) DO NOTHING; END;
CREATE TRIGGER follows_count_mark_delete AFTER DELETE ON follows
  WHEN NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.follower_id >> 3) & 255))
  BEGIN INSERT INTO count_marks (user_id, marked_at) VALUES (OLD.follower_id, unixepoch()) ON CONFLICT (user_id) DO NOTHING; END;
CREATE TRIGGER posts_count_mark_insert AFTER INSERT ON posts
  WHEN NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.author_id >> 3) & 255))
  BEGIN INSERT INTO count_marks (user_id, marked_at) VALUES (NEW.author_id, unixepoch()) ON CONFLICT (user_id) DO NOTHING; END;
CREATE TRIGGER posts_count_mark_update AFTER UPDATE OF deleted_at ON posts
  WHEN NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.author_id >> 3) & 255))
  BEGIN INSERT INTO count_marks (user_id, marked_at) VALUES (NEW.author_id, unixepoch()) ON CONFLICT (user_id) DO NOTHING; END;
CREATE TRIGGER posts_count_mark_delete AFTER DELETE ON posts
  WHEN NOT EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.author_id >> 3) & 255))
  BEGIN INSERT INTO count_marks (user_id, marked_at) VALUES (OLD.author_id, unixepoch()) ON CONFLICT (user_id) DO NOTHING; END;
