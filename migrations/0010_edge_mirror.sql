-- Follow and block edges on both endpoints' sides (issue #20: D1 sharded by user). Each edge has
-- an authoritative copy and a mirror, applied by queued events from the authoritative side's
-- *current* state (src/services/graph.rs, docs/graph.md):
--   follows   (follower side, on the follower's home shard): authoritative for "X follows Y",
--             the group, and the reader-side mode flag `pull` (what a feed read pulls);
--   followers (author side, on the author's home shard): the mirror, for fan-out paging, the
--             followers list, followers-only visibility and the author's push policy; its `push`
--             flag is what fan-out writes to; the reader's facts the policy ranks by ride along;
--   blocks    (blocker side): authoritative;
--   blocked_by (blocked side): the mirror, so either user's shard can tell "a block either way".
-- Until the shards are real databases every table is in the one database; no statement joins
-- the two sides, so each can move to its own database.

CREATE TABLE followers (
  author_id     INTEGER NOT NULL,
  follower_id   INTEGER NOT NULL,
  -- The follow's own created_at (the follower side's): also tells one incarnation of the edge
  -- from the next, so a mirror left over from before an unfollow + follow is recognised.
  created_at    INTEGER NOT NULL,
  push          INTEGER NOT NULL DEFAULT 1 CHECK (push IN (0, 1)),
  pull          INTEGER NOT NULL DEFAULT 0 CHECK (pull IN (0, 1)),
  -- The follower's read facts (copied from their users row when their activity report moves).
  read_rate     REAL    NOT NULL DEFAULT 0,
  last_read_at  INTEGER,
  reader_active INTEGER NOT NULL DEFAULT 0 CHECK (reader_active IN (0, 1)),
  PRIMARY KEY (author_id, follower_id)
) WITHOUT ROWID;
-- "Newest follower first" lists.
CREATE INDEX followers_by_time ON followers (author_id, created_at DESC, follower_id DESC);
-- Fan-out pages the pushed followers of an author in follower_id order (stable, resumable).
CREATE INDEX followers_push ON followers (author_id, push, follower_id);
-- The push cap: the cap-th most active reader with a window is an index seek from the top.
CREATE INDEX followers_by_rate ON followers (author_id, read_rate DESC) WHERE reader_active = 1;

CREATE TABLE blocked_by (
  blocked_id INTEGER NOT NULL,
  blocker_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (blocked_id, blocker_id)
) WITHOUT ROWID;

-- Counters move with the copy that lives on the same shard as the counted user's row:
-- following_count with the follower side, followers_count with the author side.
DROP TRIGGER follows_after_insert;
DROP TRIGGER follows_after_delete;

-- Backfill the mirrors of a deployment upgrading in place (before the new triggers: the counts
-- already include these edges).
INSERT OR IGNORE INTO followers
  (author_id, follower_id, created_at, push, pull, read_rate, last_read_at, reader_active)
  SELECT f.author_id, f.follower_id, f.created_at, f.push, f.pull, u.read_rate, u.last_read_at,
         u.feed_active_at IS NOT NULL
  FROM follows f JOIN users u ON u.id = f.follower_id;
INSERT OR IGNORE INTO blocked_by (blocked_id, blocker_id, created_at)
  SELECT blocked_id, blocker_id, created_at FROM blocks;

CREATE TRIGGER follows_after_insert AFTER INSERT ON follows BEGIN
  UPDATE users SET following_count = following_count + 1 WHERE id = NEW.follower_id;
END;
CREATE TRIGGER follows_after_delete AFTER DELETE ON follows BEGIN
  UPDATE users SET following_count = following_count - 1 WHERE id = OLD.follower_id;
END;
CREATE TRIGGER followers_after_insert AFTER INSERT ON followers BEGIN
  UPDATE users SET followers_count = followers_count + 1 WHERE id = NEW.author_id;
END;
CREATE TRIGGER followers_after_delete AFTER DELETE ON followers BEGIN
  UPDATE users SET followers_count = followers_count - 1 WHERE id = OLD.author_id;
END;

-- Edges by mode for the stats, kept by triggers on the author side (where fan-out reads the
-- mode) instead of a GROUP BY over every edge: `stats` rows edges_mode_<push><pull>.
INSERT OR IGNORE INTO stats (name, value) VALUES ('edges_mode_10', 0), ('edges_mode_01', 0), ('edges_mode_11', 0);
UPDATE stats SET value = (SELECT COUNT(*) FROM followers WHERE push = 1 AND pull = 0) WHERE name = 'edges_mode_10';
UPDATE stats SET value = (SELECT COUNT(*) FROM followers WHERE push = 0 AND pull = 1) WHERE name = 'edges_mode_01';
UPDATE stats SET value = (SELECT COUNT(*) FROM followers WHERE push = 1 AND pull = 1) WHERE name = 'edges_mode_11';
CREATE TRIGGER followers_mode_insert AFTER INSERT ON followers BEGIN
  UPDATE stats SET value = value + 1 WHERE name = 'edges_mode_' || NEW.push || NEW.pull;
END;
CREATE TRIGGER followers_mode_delete AFTER DELETE ON followers BEGIN
  UPDATE stats SET value = value - 1 WHERE name = 'edges_mode_' || OLD.push || OLD.pull;
END;
CREATE TRIGGER followers_mode_update AFTER UPDATE OF push, pull ON followers
  WHEN OLD.push <> NEW.push OR OLD.pull <> NEW.pull BEGIN
  UPDATE stats SET value = value - 1 WHERE name = 'edges_mode_' || OLD.push || OLD.pull;
  UPDATE stats SET value = value + 1 WHERE name = 'edges_mode_' || NEW.push || NEW.pull;
END;

-- Pulled authors per reader for the stats, kept on the reader's row by triggers on the
-- follower side (where the read path's `pull` flag lives) instead of a GROUP BY over follows;
-- the stats sample it through the partial index.
ALTER TABLE users ADD COLUMN pulled_count INTEGER NOT NULL DEFAULT 0;
UPDATE users SET pulled_count = (SELECT COUNT(*) FROM follows f WHERE f.follower_id = users.id AND f.pull = 1)
  WHERE id IN (SELECT follower_id FROM follows WHERE pull = 1);
CREATE INDEX users_pulled ON users (pulled_count) WHERE pulled_count > 0;
CREATE TRIGGER follows_pulled_insert AFTER INSERT ON follows WHEN NEW.pull = 1 BEGIN
  UPDATE users SET pulled_count = pulled_count + 1 WHERE id = NEW.follower_id;
END;
CREATE TRIGGER follows_pulled_delete AFTER DELETE ON follows WHEN OLD.pull = 1 BEGIN
  UPDATE users SET pulled_count = pulled_count - 1 WHERE id = OLD.follower_id;
END;
CREATE TRIGGER follows_pulled_update AFTER UPDATE OF pull ON follows WHEN OLD.pull <> NEW.pull BEGIN
  UPDATE users SET pulled_count = pulled_count + (CASE WHEN NEW.pull = 1 THEN 1 ELSE -1 END)
   WHERE id = NEW.follower_id;
END;
