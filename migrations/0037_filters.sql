-- Issue 42: Mastodon's filters (v2, with v1 as views on them) and its notification policy with
-- notification requests. Everything lives on its owner's home database.
--
-- Filters: a filter has a title, contexts (comma-separated: home, notifications, public,
-- thread, account), an action (warn, hide, blur) and an optional expiry (ms, checked at read
-- time); its keywords and its statuses are rows of their own. Ids are per owner (every lookup
-- names the owner), made as MAX(next id, now ms) so an id is never reused; a v1 filter is a v2
-- filter with one keyword, named by that keyword's id. The read loads a viewer's filters with
-- their keywords and statuses in one statement (`store/filters.rs::all_of`).
CREATE TABLE filters (
  user_id    INTEGER NOT NULL,
  id         INTEGER NOT NULL,
  title      TEXT    NOT NULL,
  context    TEXT    NOT NULL,
  action     TEXT    NOT NULL DEFAULT 'warn' CHECK (action IN ('warn', 'hide', 'blur')),
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, id)
) WITHOUT ROWID;
CREATE INDEX filters_by_shard ON filters (((user_id >> 3) & 255), user_id, id);

CREATE TABLE filter_keywords (
  user_id    INTEGER NOT NULL,
  id         INTEGER NOT NULL,
  filter_id  INTEGER NOT NULL,
  keyword    TEXT    NOT NULL,
  whole_word INTEGER NOT NULL DEFAULT 1 CHECK (whole_word IN (0, 1)),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, id)
) WITHOUT ROWID;
CREATE INDEX filter_keywords_by_filter ON filter_keywords (user_id, filter_id, id);
CREATE INDEX filter_keywords_by_shard ON filter_keywords (((user_id >> 3) & 255), user_id, id);

CREATE TABLE filter_statuses (
  user_id    INTEGER NOT NULL,
  id         INTEGER NOT NULL,
  filter_id  INTEGER NOT NULL,
  status_id  INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, id)
) WITHOUT ROWID;
CREATE INDEX filter_statuses_by_filter ON filter_statuses (user_id, filter_id, status_id);
CREATE INDEX filter_statuses_by_shard ON filter_statuses (((user_id >> 3) & 255), user_id, id);

-- The notification policy (Mastodon 4.3): per criterion accept, filter (held out of the list,
-- grouped into a request per actor) or drop (never stored). No row: every criterion accepts.
-- It is read by the notification's own insert (`store/notifications.rs::insert_sql`), on the
-- recipient's home, where the row is; so `filtered` is decided once, at write time.
CREATE TABLE notification_policies (
  user_id              INTEGER NOT NULL PRIMARY KEY,
  for_not_following    TEXT    NOT NULL DEFAULT 'accept' CHECK (for_not_following IN ('accept', 'filter', 'drop')),
  for_not_followers    TEXT    NOT NULL DEFAULT 'accept' CHECK (for_not_followers IN ('accept', 'filter', 'drop')),
  for_new_accounts     TEXT    NOT NULL DEFAULT 'accept' CHECK (for_new_accounts IN ('accept', 'filter', 'drop')),
  for_private_mentions TEXT    NOT NULL DEFAULT 'accept' CHECK (for_private_mentions IN ('accept', 'filter', 'drop')),
  for_limited_accounts TEXT    NOT NULL DEFAULT 'accept' CHECK (for_limited_accounts IN ('accept', 'filter', 'drop')),
  updated_at           INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX notification_policies_by_shard ON notification_policies (((user_id >> 3) & 255), user_id);

-- Actors whose requests the recipient accepted: their notifications pass the policy from then on.
CREATE TABLE notification_accepted (
  user_id    INTEGER NOT NULL,
  actor_id   INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, actor_id)
) WITHOUT ROWID;
CREATE INDEX notification_accepted_by_shard ON notification_accepted (((user_id >> 3) & 255), user_id, actor_id);

-- A notification the policy filtered: held out of the lists and counts until its request is
-- accepted (cleared to 0) or dismissed (deleted).
ALTER TABLE notifications ADD COLUMN filtered INTEGER NOT NULL DEFAULT 0;
CREATE INDEX notifications_filtered ON notifications (recipient_id, actor_id, id) WHERE filtered = 1;

-- The freeze of a moving shard (0013's pattern).
CREATE TRIGGER filters_frozen_insert BEFORE INSERT ON filters
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filters_frozen_update BEFORE UPDATE ON filters
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filters_frozen_delete BEFORE DELETE ON filters
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filter_keywords_frozen_insert BEFORE INSERT ON filter_keywords
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filter_keywords_frozen_update BEFORE UPDATE ON filter_keywords
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filter_keywords_frozen_delete BEFORE DELETE ON filter_keywords
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filter_statuses_frozen_insert BEFORE INSERT ON filter_statuses
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filter_statuses_frozen_update BEFORE UPDATE ON filter_statuses
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER filter_statuses_frozen_delete BEFORE DELETE ON filter_statuses
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notification_policies_frozen_insert BEFORE INSERT ON notification_policies
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notification_policies_frozen_update BEFORE UPDATE ON notification_policies
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notification_policies_frozen_delete BEFORE DELETE ON notification_policies
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notification_accepted_frozen_insert BEFORE INSERT ON notification_accepted
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notification_accepted_frozen_update BEFORE UPDATE ON notification_accepted
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER notification_accepted_frozen_delete BEFORE DELETE ON notification_accepted
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
