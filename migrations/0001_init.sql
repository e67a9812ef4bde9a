-- edgefeed schema v1. D1 is the source of truth; timeline windows and caches are derived.
-- Times are integer milliseconds since the Unix epoch. Ids are INTEGER (< 2^53).
-- Counters are maintained by triggers in the same transaction as the row that changes them,
-- so they can never drift from the relation unless someone edits a count by hand (and then the
-- reconciliation pass repairs it).

CREATE TABLE users (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  handle          TEXT    NOT NULL UNIQUE,
  display_name    TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  followers_count INTEGER NOT NULL DEFAULT 0,
  following_count INTEGER NOT NULL DEFAULT 0,
  posts_count     INTEGER NOT NULL DEFAULT 0
);

-- One row per (follower, author). group_name is an optional label the follower chose.
CREATE TABLE follows (
  follower_id INTEGER NOT NULL REFERENCES users(id),
  author_id   INTEGER NOT NULL REFERENCES users(id),
  group_name  TEXT,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (follower_id, author_id)
) WITHOUT ROWID;
-- Fan-out pages an author's followers in follower_id order (stable, resumable).
CREATE INDEX follows_by_author ON follows (author_id, follower_id);
-- "Newest follow first" lists, ties broken by the other user's id.
CREATE INDEX follows_by_author_time ON follows (author_id, created_at DESC, follower_id DESC);
CREATE INDEX follows_by_follower_time ON follows (follower_id, created_at DESC, author_id DESC);
CREATE INDEX follows_by_group ON follows (follower_id, group_name);

CREATE TRIGGER follows_after_insert AFTER INSERT ON follows BEGIN
  UPDATE users SET following_count = following_count + 1 WHERE id = NEW.follower_id;
  UPDATE users SET followers_count = followers_count + 1 WHERE id = NEW.author_id;
END;
CREATE TRIGGER follows_after_delete AFTER DELETE ON follows BEGIN
  UPDATE users SET following_count = following_count - 1 WHERE id = OLD.follower_id;
  UPDATE users SET followers_count = followers_count - 1 WHERE id = OLD.author_id;
END;

CREATE TABLE blocks (
  blocker_id INTEGER NOT NULL REFERENCES users(id),
  blocked_id INTEGER NOT NULL REFERENCES users(id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (blocker_id, blocked_id)
) WITHOUT ROWID;
CREATE INDEX blocks_by_blocked ON blocks (blocked_id, blocker_id);

CREATE TABLE posts (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  author_id     INTEGER NOT NULL REFERENCES users(id),
  body          TEXT    NOT NULL,
  visibility    TEXT    NOT NULL CHECK (visibility IN ('public', 'followers', 'private')),
  created_at    INTEGER NOT NULL,
  edited_at     INTEGER,
  deleted_at    INTEGER,
  like_count    INTEGER NOT NULL DEFAULT 0,
  comment_count INTEGER NOT NULL DEFAULT 0,
  -- Last like/comment activity; the reconciliation pass re-counts recently touched posts.
  touched_at    INTEGER
);
-- The author list and the pull source of the feed: (created_at DESC, id DESC) per author.
CREATE INDEX posts_by_author ON posts (author_id, created_at DESC, id DESC);
CREATE INDEX posts_by_touched ON posts (touched_at) WHERE touched_at IS NOT NULL;

CREATE TRIGGER posts_after_insert AFTER INSERT ON posts WHEN NEW.deleted_at IS NULL BEGIN
  UPDATE users SET posts_count = posts_count + 1 WHERE id = NEW.author_id;
END;
CREATE TRIGGER posts_after_delete_mark AFTER UPDATE OF deleted_at ON posts
  WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
  UPDATE users SET posts_count = posts_count - 1 WHERE id = NEW.author_id;
END;

-- A like is a relation with a state, not a counter. `seq` is the last applied client sequence.
CREATE TABLE likes (
  post_id    INTEGER NOT NULL REFERENCES posts(id),
  user_id    INTEGER NOT NULL REFERENCES users(id),
  liked      INTEGER NOT NULL CHECK (liked IN (0, 1)),
  seq        INTEGER,
  updated_at INTEGER NOT NULL,
  -- When the current like began (the likers list is newest like first).
  liked_at   INTEGER NOT NULL,
  PRIMARY KEY (post_id, user_id)
) WITHOUT ROWID;
CREATE INDEX likes_by_post_time ON likes (post_id, liked, liked_at DESC, user_id DESC);

CREATE TRIGGER likes_after_insert AFTER INSERT ON likes WHEN NEW.liked = 1 BEGIN
  UPDATE posts SET like_count = like_count + 1 WHERE id = NEW.post_id;
END;
CREATE TRIGGER likes_after_update AFTER UPDATE OF liked ON likes WHEN OLD.liked <> NEW.liked BEGIN
  UPDATE posts SET like_count = like_count + (CASE WHEN NEW.liked = 1 THEN 1 ELSE -1 END)
   WHERE id = NEW.post_id;
END;

CREATE TABLE comments (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  post_id    INTEGER NOT NULL REFERENCES posts(id),
  author_id  INTEGER NOT NULL REFERENCES users(id),
  body       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX comments_by_post ON comments (post_id, created_at, id);

CREATE TRIGGER comments_after_insert AFTER INSERT ON comments WHEN NEW.deleted_at IS NULL BEGIN
  UPDATE posts SET comment_count = comment_count + 1 WHERE id = NEW.post_id;
END;
CREATE TRIGGER comments_after_delete_mark AFTER UPDATE OF deleted_at ON comments
  WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
  UPDATE posts SET comment_count = comment_count - 1 WHERE id = NEW.post_id;
END;

-- Transactional outbox: written in the same batch as the change it announces.
-- kind: 'post' (fan out), 'remove_post' (delete / visibility narrowed),
--       'remove_author' (unfollow / block: drop an author's entries from one reader's window).
-- state: 'pending' until every fan-out chunk is acknowledged, then 'done'; 'dead' if it
-- exhausted its retries (kept, visible in stats, replayable).
CREATE TABLE outbox (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  kind               TEXT    NOT NULL,
  post_id            INTEGER,
  author_id          INTEGER NOT NULL,
  reader_id          INTEGER,
  post_created_at    INTEGER,
  created_at         INTEGER NOT NULL,
  state              TEXT    NOT NULL DEFAULT 'pending',
  -- Fan-out progress: the last follower_id whose window has the post; chunks resume after it.
  cursor_follower_id INTEGER NOT NULL DEFAULT 0,
  delivered          INTEGER NOT NULL DEFAULT 0,
  attempts           INTEGER NOT NULL DEFAULT 0,
  sent_at            INTEGER,
  done_at            INTEGER
);
CREATE INDEX outbox_by_state ON outbox (state, created_at);

-- Publish retries with the same Idempotency-Key return the first post. Kept 24 h at least.
CREATE TABLE idempotency_keys (
  user_id      INTEGER NOT NULL,
  key          TEXT    NOT NULL,
  request_hash TEXT    NOT NULL,
  post_id      INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at);

-- Pipeline figures for /v1/admin/stats (monotonic counters by name).
CREATE TABLE stats (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- Publish-to-visible latency samples (ms), newest kept; percentiles are computed from these.
CREATE TABLE latency_samples (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  kind       TEXT    NOT NULL,
  ms         INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX latency_samples_by_kind ON latency_samples (kind, id);

-- Test-only fault injection (read only when TEST_HOOKS is on): fire `remaining` times.
CREATE TABLE test_faults (
  name      TEXT PRIMARY KEY,
  remaining INTEGER NOT NULL
) WITHOUT ROWID;
