-- Issue 42, a post's extras: its edit history, a viewer's muted conversations, pins, polls and
-- scheduled posts. Every table is per user (placement catalog: `domain/placement.rs`), frozen
-- with its shard during a move (0013's pattern).

-- Each version a post had before an edit that changed what it shows (text, content warning,
-- sensitive), on the post's database, written in the edit's own batch (`store/posts.rs::edit`):
-- `seq` counts from 1 (the original), `replaced_at` is when the edit that replaced it was made
-- (so version n was made at version n-1's `replaced_at`, the first at the post's `created_at`).
-- An edit that changes none of those (a retry of one applied) stores nothing.
CREATE TABLE post_edits (
  post_id      INTEGER NOT NULL,
  seq          INTEGER NOT NULL,
  body         TEXT    NOT NULL,
  spoiler_text TEXT    NOT NULL DEFAULT '',
  sensitive    INTEGER NOT NULL DEFAULT 0,
  replaced_at  INTEGER NOT NULL,
  PRIMARY KEY (post_id, seq)
) WITHOUT ROWID;
CREATE INDEX post_edits_by_shard ON post_edits (((post_id >> 3) & 255), post_id, seq);
CREATE TRIGGER post_edits_frozen_insert BEFORE INSERT ON post_edits
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER post_edits_frozen_update BEFORE UPDATE ON post_edits
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER post_edits_frozen_delete BEFORE DELETE ON post_edits
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- The conversations (threads, by their root post) a user muted, on the user's home: replies and
-- mentions in a muted thread notify them no more (`store/notifications.rs`).
CREATE TABLE conversation_mutes (
  user_id    INTEGER NOT NULL,
  thread_id  INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, thread_id)
) WITHOUT ROWID;
CREATE INDEX conversation_mutes_by_shard ON conversation_mutes (((user_id >> 3) & 255), user_id, thread_id);
CREATE TRIGGER conversation_mutes_frozen_insert BEFORE INSERT ON conversation_mutes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER conversation_mutes_frozen_update BEFORE UPDATE ON conversation_mutes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER conversation_mutes_frozen_delete BEFORE DELETE ON conversation_mutes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- A pinned post (the author's own, on their home): when it was pinned; NULL: not pinned.
ALTER TABLE posts ADD COLUMN pinned_at INTEGER;
CREATE INDEX posts_pinned ON posts (author_id, pinned_at DESC, id DESC) WHERE pinned_at IS NOT NULL;

-- A poll is its post's (same id, on the post's database, inserted in the publish batch).
-- `options`: a JSON array of the option titles (2 to 4); the votes of each option are kept in
-- `votes_0` .. `votes_3` by the trigger on `poll_voters` below, so a count only moves with the
-- one row that records a vote. `notified_at`: when the cron told the author and voters that the
-- poll ended (NULL: not yet).
CREATE TABLE polls (
  post_id      INTEGER PRIMARY KEY,
  author_id    INTEGER NOT NULL,
  options      TEXT    NOT NULL,
  multiple     INTEGER NOT NULL DEFAULT 0 CHECK (multiple IN (0, 1)),
  hide_totals  INTEGER NOT NULL DEFAULT 0 CHECK (hide_totals IN (0, 1)),
  expires_at   INTEGER NOT NULL,
  voters_count INTEGER NOT NULL DEFAULT 0,
  votes_0      INTEGER NOT NULL DEFAULT 0,
  votes_1      INTEGER NOT NULL DEFAULT 0,
  votes_2      INTEGER NOT NULL DEFAULT 0,
  votes_3      INTEGER NOT NULL DEFAULT 0,
  notified_at  INTEGER
);
CREATE INDEX polls_due ON polls (expires_at) WHERE notified_at IS NULL;
CREATE INDEX polls_by_shard ON polls (((post_id >> 3) & 255), post_id);
CREATE TRIGGER polls_frozen_insert BEFORE INSERT ON polls
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER polls_frozen_update BEFORE UPDATE ON polls
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER polls_frozen_delete BEFORE DELETE ON polls
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- One row per voter of a poll: its primary key makes the vote once (`INSERT OR IGNORE`), and
-- the trigger counts it in the same statement, so the counts are exact under any concurrency.
-- `choices`: a JSON array of option indexes; `nonce`: the request that made it.
CREATE TABLE poll_voters (
  post_id    INTEGER NOT NULL,
  user_id    INTEGER NOT NULL,
  choices    TEXT    NOT NULL,
  nonce      TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (post_id, user_id)
) WITHOUT ROWID;
CREATE INDEX poll_voters_by_shard ON poll_voters (((post_id >> 3) & 255), post_id, user_id);
CREATE TRIGGER poll_voters_frozen_insert BEFORE INSERT ON poll_voters
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER poll_voters_frozen_update BEFORE UPDATE ON poll_voters
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER poll_voters_frozen_delete BEFORE DELETE ON poll_voters
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER poll_voters_count AFTER INSERT ON poll_voters
  BEGIN
    UPDATE polls SET
      voters_count = voters_count + 1,
      votes_0 = votes_0 + EXISTS (SELECT 1 FROM json_each(NEW.choices) WHERE value = 0),
      votes_1 = votes_1 + EXISTS (SELECT 1 FROM json_each(NEW.choices) WHERE value = 1),
      votes_2 = votes_2 + EXISTS (SELECT 1 FROM json_each(NEW.choices) WHERE value = 2),
      votes_3 = votes_3 + EXISTS (SELECT 1 FROM json_each(NEW.choices) WHERE value = 3)
    WHERE post_id = NEW.post_id;
  END;

-- A post to publish later, on its author's home: the request's fields (JSON) and when. The cron
-- publishes due ones through the ordinary publish with an idempotency key of the row's id, then
-- deletes the row, so a stop between the two never publishes twice.
CREATE TABLE scheduled_statuses (
  user_id      INTEGER NOT NULL,
  id           INTEGER NOT NULL,
  scheduled_at INTEGER NOT NULL,
  params       TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (user_id, id)
) WITHOUT ROWID;
CREATE INDEX scheduled_statuses_due ON scheduled_statuses (scheduled_at);
CREATE INDEX scheduled_statuses_by_shard ON scheduled_statuses (((user_id >> 3) & 255), user_id, id);
CREATE TRIGGER scheduled_statuses_frozen_insert BEFORE INSERT ON scheduled_statuses
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER scheduled_statuses_frozen_update BEFORE UPDATE ON scheduled_statuses
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER scheduled_statuses_frozen_delete BEFORE DELETE ON scheduled_statuses
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
