-- Boosts (issue #39 item 1). A boost is a post of the booster's (`posts.reblog_of` names the
-- original), so it fans out through the booster's edges exactly as a post does: the same
-- outbox event, windows, pull path, in-flight horizon and hot-author replicas. It has no text
-- of its own; every read resolves it to the original and checks the original's visibility now.
--
-- The booster's row is the truth. The original's side (`reblogs`, on the ORIGINAL's database:
-- who boosted it, for `reblogs_count`, `reblogged_by` and the feed's one-entry-per-post rule)
-- is a mirror converged from it by the boost request and again by the boost's own outbox
-- event (`services/boosts.rs::converge`), so a crash between the two databases is repaired by
-- the outbox's resend. A boost id is never revived (an unboost soft-deletes its row; a new
-- boost is a new row), so a mirror row only moves from active to inactive, never back: a late
-- convergence that read the boost alive cannot undo the unboost's.
ALTER TABLE posts ADD COLUMN reblog_of INTEGER;
ALTER TABLE posts ADD COLUMN reblog_count INTEGER NOT NULL DEFAULT 0;
-- One live boost per (booster, original): a repeated or concurrent boost finds the first.
CREATE UNIQUE INDEX posts_one_boost ON posts (author_id, reblog_of)
  WHERE reblog_of IS NOT NULL AND deleted_at IS NULL;

CREATE TABLE reblogs (
  post_id    INTEGER NOT NULL,
  boost_id   INTEGER NOT NULL,
  booster_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  active     INTEGER NOT NULL CHECK (active IN (0, 1)),
  PRIMARY KEY (post_id, boost_id)
) WITHOUT ROWID;
-- `reblogged_by`, newest first.
CREATE INDEX reblogs_by_time ON reblogs (post_id, active, created_at DESC, booster_id DESC);
-- The feed's "an earlier entry of this post": a reader's followed boosters of a few posts.
CREATE INDEX reblogs_by_booster ON reblogs (post_id, booster_id, active);
CREATE INDEX reblogs_by_shard ON reblogs (((post_id >> 3) & 255), post_id, boost_id);

-- The count moves only on a real transition (invariant 7's rule for likes); a shard move
-- overwrites it with the source's after copying the rows (domain/placement.rs, counters phase).
CREATE TRIGGER reblogs_after_insert AFTER INSERT ON reblogs WHEN NEW.active = 1 BEGIN
  UPDATE posts SET reblog_count = reblog_count + 1 WHERE id = NEW.post_id;
END;
CREATE TRIGGER reblogs_after_update AFTER UPDATE OF active ON reblogs
  WHEN OLD.active <> NEW.active BEGIN
  UPDATE posts SET reblog_count = reblog_count + (CASE WHEN NEW.active = 1 THEN 1 ELSE -1 END)
  WHERE id = NEW.post_id;
END;

-- The freeze of a moving shard (0013's pattern): placed by the original post.
CREATE TRIGGER reblogs_frozen_insert BEFORE INSERT ON reblogs
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER reblogs_frozen_update BEFORE UPDATE ON reblogs
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER reblogs_frozen_delete BEFORE DELETE ON reblogs
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- Notifications gain the kinds `reblog` and `mention` (0030's mentions): SQLite cannot change a
-- CHECK, so the table is rebuilt once, with its indexes and triggers (0015, 0017) as they were.
ALTER TABLE notifications RENAME TO notifications_before_0029;
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
  SELECT recipient_id, id, kind, actor_id, post_id, comment_id FROM notifications_before_0029;
-- Its indexes and triggers go with it; made again below under their names.
DROP TABLE notifications_before_0029;
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
