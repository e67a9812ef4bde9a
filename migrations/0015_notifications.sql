-- Notifications and read markers (issue #22). Both live on their recipient's home database,
-- where every change that makes or ends a notification already commits (a like or comment on
-- the recipient's post, the `followers` mirror of a follow): each is written in the batch of
-- that change, on its transition (`store/notifications.rs`), and filtered at read time.
--
-- `id` is a snowflake of the recipient's shard whose low 3 bits are a per-recipient sequence
-- instead of random bits (`domain/notifications.rs::next_id`): unique and increasing per
-- recipient, and its time is when the notification was made (there is no created_at).
-- One notification per subject (kind, actor, post, comment) is kept by the insert's own
-- NOT EXISTS, not by a UNIQUE constraint: a shard move's copy pass may briefly hold an old and
-- a new row of one subject on the target (an unlike and a like between two of its pages), which
-- a unique index would refuse; the next pass deletes the old one.
CREATE TABLE notifications (
  recipient_id INTEGER NOT NULL,
  id           INTEGER NOT NULL,
  kind         TEXT    NOT NULL CHECK (kind IN ('follow', 'favourite', 'reply')),
  actor_id     INTEGER NOT NULL,
  post_id      INTEGER NOT NULL DEFAULT 0,
  comment_id   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (recipient_id, id)
) WITHOUT ROWID;
CREATE INDEX notifications_by_kind ON notifications (recipient_id, kind, id);
CREATE INDEX notifications_by_subject ON notifications (recipient_id, kind, actor_id, post_id, comment_id);
CREATE INDEX notifications_by_shard ON notifications (((recipient_id >> 3) & 255), recipient_id, id);

CREATE TABLE markers (
  user_id      INTEGER NOT NULL,
  timeline     TEXT    NOT NULL CHECK (timeline IN ('home', 'notifications')),
  last_read_id INTEGER NOT NULL,
  version      INTEGER NOT NULL DEFAULT 1,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (user_id, timeline)
) WITHOUT ROWID;
CREATE INDEX markers_by_shard ON markers (((user_id >> 3) & 255), user_id, timeline);

-- The freeze of a moving shard (0013's pattern).
CREATE TRIGGER notifications_frozen_insert BEFORE INSERT ON notifications
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.recipient_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notifications_frozen_update BEFORE UPDATE ON notifications
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.recipient_id >> 3) & 255), ((NEW.recipient_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notifications_frozen_delete BEFORE DELETE ON notifications
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.recipient_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER markers_frozen_insert BEFORE INSERT ON markers
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER markers_frozen_update BEFORE UPDATE ON markers
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER markers_frozen_delete BEFORE DELETE ON markers
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
