-- Mentions (issue #39 item 3). A post's mentions are resolved when it is published (`@handle`
-- and `@handle@this-domain`, Mastodon's boundary rules: `domain/mentions.rs`) and kept on the
-- post as JSON (`[{"id": "...", "handle": "..."}]`, NULL for none), so every read path that
-- carries the post (windows, the pull path, replicas) carries who it mentions without a read
-- more; a handle that names nobody is left as text, as Mastodon does.
ALTER TABLE posts ADD COLUMN mentions TEXT;

-- Notifications gain the kind `mention` (a post that names the recipient; `reply` stays the
-- comment on their post, Mastodon's `mention` too): the table rebuilt as in 0029.
ALTER TABLE notifications RENAME TO notifications_before_0030;
CREATE TABLE notifications (
  recipient_id INTEGER NOT NULL,
  id           INTEGER NOT NULL,
  kind         TEXT    NOT NULL CHECK (kind IN ('follow', 'favourite', 'reply', 'reblog', 'mention')),
  actor_id     INTEGER NOT NULL,
  post_id      INTEGER NOT NULL DEFAULT 0,
  comment_id   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (recipient_id, id)
) WITHOUT ROWID;
INSERT INTO notifications (recipient_id, id, kind, actor_id, post_id, comment_id)
  SELECT recipient_id, id, kind, actor_id, post_id, comment_id FROM notifications_before_0030;
-- Its indexes and triggers go with it; made again below under their names.
DROP TABLE notifications_before_0030;
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
