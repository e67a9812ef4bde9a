-- Kinds issue 42 adds: `follow_request` (a locked account's pending follower), `poll` (a poll
-- ended), `update` (a boosted post was edited). SQLite cannot change a CHECK: the table is
-- rebuilt once more, as 0029 and 0031 did, with its indexes and triggers.
ALTER TABLE notifications RENAME TO notifications_before_0035;
CREATE TABLE notifications (
  recipient_id INTEGER NOT NULL,
  id           INTEGER NOT NULL,
  kind         TEXT    NOT NULL CHECK (kind IN ('follow', 'favourite', 'reply', 'reblog', 'mention', 'quote', 'follow_request', 'poll', 'update')),
  actor_id     INTEGER NOT NULL,
  post_id      INTEGER NOT NULL DEFAULT 0,
  comment_id   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (recipient_id, id)
) WITHOUT ROWID;
INSERT INTO notifications (recipient_id, id, kind, actor_id, post_id, comment_id)
  SELECT recipient_id, id, kind, actor_id, post_id, comment_id FROM notifications_before_0035;
-- Its indexes and triggers go with it; made again below under their names.
DROP TABLE notifications_before_0035;
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
