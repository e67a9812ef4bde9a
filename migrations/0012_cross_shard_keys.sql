-- Sharding (issue #20): a follow, block, like, comment or OAuth code names users who live on
-- other databases (their home shards), so the foreign keys to `users` cannot hold on any one
-- database and go. What they guarded is kept by the code instead: every write checks the user
-- it names first (the follow's author, the liker, the commenter) on that user's own database,
-- and the graph's mirrors are converged by current state (docs/graph.md). The keys to `posts`
-- stay (a like and a comment live beside their post). SQLite cannot drop a constraint: each
-- table is rebuilt with the same columns, indexes and triggers.
PRAGMA defer_foreign_keys = true;


-- follows
CREATE TABLE follows_rebuilt (
  follower_id INTEGER NOT NULL,
  author_id   INTEGER NOT NULL,
  group_name  TEXT,
  created_at  INTEGER NOT NULL, push INTEGER NOT NULL DEFAULT 1 CHECK (push IN (0, 1)), pull INTEGER NOT NULL DEFAULT 0 CHECK (pull IN (0, 1)),
  PRIMARY KEY (follower_id, author_id)
) WITHOUT ROWID;
INSERT INTO follows_rebuilt SELECT * FROM follows;
DROP TABLE follows;
ALTER TABLE follows_rebuilt RENAME TO follows;
CREATE INDEX follows_by_author ON follows (author_id, follower_id);
CREATE INDEX follows_by_author_time ON follows (author_id, created_at DESC, follower_id DESC);
CREATE INDEX follows_by_follower_time ON follows (follower_id, created_at DESC, author_id DESC);
CREATE INDEX follows_by_group ON follows (follower_id, group_name);
CREATE INDEX follows_author_push ON follows (author_id, push, follower_id);
CREATE INDEX follows_follower_pull ON follows (follower_id, pull, author_id);
CREATE TRIGGER follows_after_insert AFTER INSERT ON follows BEGIN
  UPDATE users SET following_count = following_count + 1 WHERE id = NEW.follower_id;
END;
CREATE TRIGGER follows_after_delete AFTER DELETE ON follows BEGIN
  UPDATE users SET following_count = following_count - 1 WHERE id = OLD.follower_id;
END;
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

-- blocks
CREATE TABLE blocks_rebuilt (
  blocker_id INTEGER NOT NULL,
  blocked_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (blocker_id, blocked_id)
) WITHOUT ROWID;
INSERT INTO blocks_rebuilt SELECT * FROM blocks;
DROP TABLE blocks;
ALTER TABLE blocks_rebuilt RENAME TO blocks;
CREATE INDEX blocks_by_blocked ON blocks (blocked_id, blocker_id);

-- likes
CREATE TABLE likes_rebuilt (
  post_id    INTEGER NOT NULL REFERENCES posts(id),
  user_id    INTEGER NOT NULL,
  liked      INTEGER NOT NULL CHECK (liked IN (0, 1)),
  seq        INTEGER,
  updated_at INTEGER NOT NULL,
  -- When the current like began (the likers list is newest like first).
  liked_at   INTEGER NOT NULL,
  PRIMARY KEY (post_id, user_id)
) WITHOUT ROWID;
INSERT INTO likes_rebuilt SELECT * FROM likes;
DROP TABLE likes;
ALTER TABLE likes_rebuilt RENAME TO likes;
CREATE INDEX likes_by_post_time ON likes (post_id, liked, liked_at DESC, user_id DESC);
CREATE TRIGGER likes_after_insert AFTER INSERT ON likes WHEN NEW.liked = 1 BEGIN
  UPDATE posts SET like_count = like_count + 1 WHERE id = NEW.post_id;
END;
CREATE TRIGGER likes_after_update AFTER UPDATE OF liked ON likes WHEN OLD.liked <> NEW.liked BEGIN
  UPDATE posts SET like_count = like_count + (CASE WHEN NEW.liked = 1 THEN 1 ELSE -1 END)
   WHERE id = NEW.post_id;
END;

-- comments
CREATE TABLE comments_rebuilt (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  post_id    INTEGER NOT NULL REFERENCES posts(id),
  author_id  INTEGER NOT NULL,
  body       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER
);
INSERT INTO comments_rebuilt SELECT * FROM comments;
DROP TABLE comments;
ALTER TABLE comments_rebuilt RENAME TO comments;
CREATE INDEX comments_by_post ON comments (post_id, created_at, id);
CREATE TRIGGER comments_after_insert AFTER INSERT ON comments WHEN NEW.deleted_at IS NULL BEGIN
  UPDATE posts SET comment_count = comment_count + 1 WHERE id = NEW.post_id;
END;
CREATE TRIGGER comments_after_delete_mark AFTER UPDATE OF deleted_at ON comments
  WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
  UPDATE posts SET comment_count = comment_count - 1 WHERE id = NEW.post_id;
END;

-- oauth_codes
CREATE TABLE oauth_codes_rebuilt (
  code_hash    TEXT PRIMARY KEY,
  app_id       INTEGER NOT NULL REFERENCES oauth_apps (id),
  user_id      INTEGER NOT NULL,
  scopes       INTEGER NOT NULL,
  redirect_uri TEXT NOT NULL,
  expires_at   INTEGER NOT NULL
);
INSERT INTO oauth_codes_rebuilt SELECT * FROM oauth_codes;
DROP TABLE oauth_codes;
ALTER TABLE oauth_codes_rebuilt RENAME TO oauth_codes;
CREATE INDEX oauth_codes_by_expiry ON oauth_codes (expires_at);
