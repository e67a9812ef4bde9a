-- Direct posts and conversations (issue #39 item 4).
--
-- A direct post is `visibility = 'private'` (Mastodon's `direct`): readable by its author and the
-- accounts it mentions (`posts.mentions`, 0030), delivered into the mentioned accounts' home
-- windows and never into followers' (`services/direct.rs`). Each participant has a row here, on
-- their own home database: the conversation's id is the direct post that started it, `accounts`
-- the other participants (JSON array of ids), `unread` set for a recipient and cleared by
-- `read`. A row is written by the publishing request and again by the post's outbox event
-- (INSERT ... DO NOTHING, so a redelivery never revives a conversation its user removed:
-- `removed` stays 1). The post itself is read and checked at every read: a deleted post, or one
-- the viewer may no longer see, leaves the conversation out of the list.
CREATE TABLE conversations (
  user_id    INTEGER NOT NULL,
  post_id    INTEGER NOT NULL,
  author_id  INTEGER NOT NULL,
  accounts   TEXT    NOT NULL,
  unread     INTEGER NOT NULL CHECK (unread IN (0, 1)),
  removed    INTEGER NOT NULL DEFAULT 0 CHECK (removed IN (0, 1)),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, post_id)
) WITHOUT ROWID;
CREATE INDEX conversations_by_shard ON conversations (((user_id >> 3) & 255), user_id, post_id);

-- The freeze of a moving shard (0013's pattern).
CREATE TRIGGER conversations_frozen_insert BEFORE INSERT ON conversations
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER conversations_frozen_update BEFORE UPDATE ON conversations
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER conversations_frozen_delete BEFORE DELETE ON conversations
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- Quotes (item 5) notify with the kind `quote`. SQLite cannot change a CHECK: the table is
-- rebuilt once more, as 0029 did, with its indexes and triggers.
ALTER TABLE notifications RENAME TO notifications_before_0031;
CREATE TABLE notifications (
  recipient_id INTEGER NOT NULL,
  id           INTEGER NOT NULL,
  kind         TEXT    NOT NULL CHECK (kind IN ('follow', 'favourite', 'reply', 'reblog', 'mention', 'quote')),
  actor_id     INTEGER NOT NULL,
  post_id      INTEGER NOT NULL DEFAULT 0,
  comment_id   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (recipient_id, id)
) WITHOUT ROWID;
INSERT INTO notifications (recipient_id, id, kind, actor_id, post_id, comment_id)
  SELECT recipient_id, id, kind, actor_id, post_id, comment_id FROM notifications_before_0031;
-- Its indexes and triggers go with it; made again below under their names.
DROP TABLE notifications_before_0031;
CREATE INDEX notifications_by_kind ON notifications (recipient_id, kind, id);
CREATE INDEX notifications_by_subject ON notifications (recipient_id, kind, actor_id, post_id, comment_id);
CREATE INDEX notifications_by_shard ON notifications (((recipient_id >> 3) & 255), recipient_id, id);
CREATE INDEX notifications_by_group
  ON notifications (recipient_id, kind, ((id >> 11) / 43200000), post_id, id);
CREATE TRIGGER notifications_frozen_insert BEFORE INSERT ON notifications
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.recipient_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notifications_frozen_update BEFORE UPDATE ON notifications
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.recipient_id >> 3) & 255), ((NEW.recipient_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notifications_frozen_delete BEFORE DELETE ON notifications
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.recipient_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
