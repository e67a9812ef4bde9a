-- Profiles and what an app shows besides home (issue 42): profile fields on `users`, profile
-- images among uploads, follow requests, account notes, endorsements, reports and domain blocks.
-- Every new table is per user, on the home database of the user whose list it is, with the
-- freeze triggers of a moving shard (0013's pattern) and an index by shard for the move.

-- The profile a user edits (`PATCH /api/v1/accounts/update_credentials`): `note` and `fields`
-- (a JSON array of {name, value}) as typed, `avatar`/`header` the served path of the upload
-- (NULL: the default image), the flags, and `source`'s posting defaults.
ALTER TABLE users ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN fields TEXT;
ALTER TABLE users ADD COLUMN avatar TEXT;
ALTER TABLE users ADD COLUMN header TEXT;
ALTER TABLE users ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN bot INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN discoverable INTEGER NOT NULL DEFAULT 1;
ALTER TABLE users ADD COLUMN post_privacy TEXT NOT NULL DEFAULT 'public';
ALTER TABLE users ADD COLUMN post_sensitive INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN post_language TEXT;

-- An upload that is a profile image ('avatar' or 'header'): never attached to a post, never
-- expired by the sweep while it is one; replaced or removed, it is marked gone (the sweep then
-- removes its bytes and row).
ALTER TABLE media ADD COLUMN profile TEXT;

-- Pending follow requests to a locked account, on the TARGET's home (the target pages them).
CREATE TABLE follow_requests (
  target_id    INTEGER NOT NULL,
  requester_id INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (target_id, requester_id)
) WITHOUT ROWID;
CREATE INDEX follow_requests_by_time ON follow_requests (target_id, created_at DESC, requester_id DESC);
CREATE INDEX follow_requests_by_requester ON follow_requests (requester_id, target_id);
CREATE INDEX follow_requests_by_shard ON follow_requests (((target_id >> 3) & 255), target_id, requester_id);
CREATE TRIGGER follow_requests_frozen_insert BEFORE INSERT ON follow_requests
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.target_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER follow_requests_frozen_update BEFORE UPDATE ON follow_requests
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.target_id >> 3) & 255), ((NEW.target_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER follow_requests_frozen_delete BEFORE DELETE ON follow_requests
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.target_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- A user's private note on another account (Relationship.note), on the author's home.
CREATE TABLE account_notes (
  user_id    INTEGER NOT NULL,
  account_id INTEGER NOT NULL,
  comment    TEXT    NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, account_id)
) WITHOUT ROWID;
CREATE INDEX account_notes_by_shard ON account_notes (((user_id >> 3) & 255), user_id, account_id);
CREATE TRIGGER account_notes_frozen_insert BEFORE INSERT ON account_notes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER account_notes_frozen_update BEFORE UPDATE ON account_notes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER account_notes_frozen_delete BEFORE DELETE ON account_notes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- Accounts a user features on their profile (endorsements), on the endorser's home.
CREATE TABLE endorsements (
  user_id    INTEGER NOT NULL,
  account_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, account_id)
) WITHOUT ROWID;
CREATE INDEX endorsements_by_time ON endorsements (user_id, created_at DESC, account_id DESC);
CREATE INDEX endorsements_by_shard ON endorsements (((user_id >> 3) & 255), user_id, account_id);
CREATE TRIGGER endorsements_frozen_insert BEFORE INSERT ON endorsements
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER endorsements_frozen_update BEFORE UPDATE ON endorsements
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER endorsements_frozen_delete BEFORE DELETE ON endorsements
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- Reports by users (`POST /api/v1/reports`), on the reporter's home; `status_ids` a JSON array.
CREATE TABLE reports (
  id          INTEGER PRIMARY KEY,
  reporter_id INTEGER NOT NULL,
  account_id  INTEGER NOT NULL,
  status_ids  TEXT    NOT NULL DEFAULT '[]',
  comment     TEXT    NOT NULL DEFAULT '',
  category    TEXT    NOT NULL DEFAULT 'other',
  forward     INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  resolved_at INTEGER
);
CREATE INDEX reports_by_time ON reports (created_at DESC, id DESC);
CREATE INDEX reports_by_shard ON reports (((reporter_id >> 3) & 255), id);
CREATE TRIGGER reports_frozen_insert BEFORE INSERT ON reports
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.reporter_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER reports_frozen_update BEFORE UPDATE ON reports
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.reporter_id >> 3) & 255), ((NEW.reporter_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER reports_frozen_delete BEFORE DELETE ON reports
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.reporter_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- Domains a user hides (`/api/v1/domain_blocks`), on their home. A single-domain server has no
-- accounts of another domain to hide: the list is kept as the user's, with no other effect.
CREATE TABLE domain_blocks (
  user_id    INTEGER NOT NULL,
  domain     TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, domain)
) WITHOUT ROWID;
CREATE INDEX domain_blocks_by_shard ON domain_blocks (((user_id >> 3) & 255), user_id, domain);
CREATE TRIGGER domain_blocks_frozen_insert BEFORE INSERT ON domain_blocks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER domain_blocks_frozen_update BEFORE UPDATE ON domain_blocks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER domain_blocks_frozen_delete BEFORE DELETE ON domain_blocks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
