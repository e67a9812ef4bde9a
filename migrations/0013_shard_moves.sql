-- Moving a logical shard between physical databases (README "Moving a shard",
-- src/services/shard_move.rs; which column places each row: src/domain/placement.rs).
--
-- The freeze: while a shard is listed here, this database refuses the writes to that shard's
-- rows (RAISE 'shard frozen', answered as a retryable 503 `shard_frozen`), so the final copy
-- sees the shard's last state. A row's shard is computed from the column that places it, as
-- domain/shard.rs does: (id >> 3) & 255 (outbox and audit ids carry it too). Reads are never
-- refused.
--   mode 'frozen':  every insert, update and delete of the shard's rows is refused (expiry
--                   deletes of history excepted, see below);
--   mode 'purging': only ever set inside the purge's own batch (set, delete a page, reset), so
--                   the purge's deletes and the counter updates they fire pass while no other
--                   statement can see the mode; inserts stay refused.
-- The freeze stays on the old database after the purge (a tombstone): a write routed there by
-- a stale map is refused instead of landing where nobody reads.
CREATE TABLE frozen_shards (
  shard INTEGER PRIMARY KEY CHECK (shard BETWEEN 0 AND 255),
  mode  TEXT    NOT NULL DEFAULT 'frozen' CHECK (mode IN ('frozen', 'purging')),
  since INTEGER NOT NULL
);

-- The handle directory's rows are placed by a hash of the handle that SQL cannot compute: the
-- sign-up's claim stores it (store/users.rs claim_handle). Rows claimed before this migration
-- have none until a copy places them (the copy's first step on `handles`); a freeze is refused
-- while any is unplaced, and while any shard is frozen an unplaced claim is refused too.
ALTER TABLE handles ADD COLUMN shard INTEGER;
CREATE INDEX handles_by_shard ON handles (shard, handle);

-- A shard's rows in key order, for the copy's and the purge's pages and the verify's sums:
-- each page reads the shard's rows only, so a pass costs the shard's size, not the database's
-- (the final pass runs while the shard is frozen).
CREATE INDEX users_by_shard ON users (((id >> 3) & 255), id);
CREATE INDEX posts_by_shard ON posts (((id >> 3) & 255), id);
CREATE INDEX follows_by_shard ON follows (((follower_id >> 3) & 255), follower_id, author_id);
CREATE INDEX followers_by_shard ON followers (((author_id >> 3) & 255), author_id, follower_id);
CREATE INDEX blocks_by_shard ON blocks (((blocker_id >> 3) & 255), blocker_id, blocked_id);
CREATE INDEX blocked_by_by_shard ON blocked_by (((blocked_id >> 3) & 255), blocked_id, blocker_id);
CREATE INDEX likes_by_shard ON likes (((post_id >> 3) & 255), post_id, user_id);
CREATE INDEX comments_by_shard ON comments (((post_id >> 3) & 255), id);
CREATE INDEX idempotency_keys_by_shard ON idempotency_keys (((user_id >> 3) & 255), user_id, key);
CREATE INDEX outbox_by_shard ON outbox (((id >> 3) & 255), id);
CREATE INDEX audit_log_by_shard ON audit_log (((id >> 3) & 255), id);

-- The triggers, one per table and kind of write (checked against the catalog by a unit test
-- in domain/placement.rs). Exempt: deletes of rows only ever deleted when they expire (outbox,
-- idempotency keys): purging history the final copy already saw, or will drop, loses nothing.
-- users
CREATE TRIGGER users_frozen_insert BEFORE INSERT ON users
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER users_frozen_update BEFORE UPDATE ON users
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.id >> 3) & 255), ((NEW.id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER users_frozen_delete BEFORE DELETE ON users
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- posts
CREATE TRIGGER posts_frozen_insert BEFORE INSERT ON posts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER posts_frozen_update BEFORE UPDATE ON posts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.id >> 3) & 255), ((NEW.id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER posts_frozen_delete BEFORE DELETE ON posts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- follows
CREATE TRIGGER follows_frozen_insert BEFORE INSERT ON follows
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.follower_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER follows_frozen_update BEFORE UPDATE ON follows
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.follower_id >> 3) & 255), ((NEW.follower_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER follows_frozen_delete BEFORE DELETE ON follows
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.follower_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- followers
CREATE TRIGGER followers_frozen_insert BEFORE INSERT ON followers
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.author_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER followers_frozen_update BEFORE UPDATE ON followers
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.author_id >> 3) & 255), ((NEW.author_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER followers_frozen_delete BEFORE DELETE ON followers
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.author_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- blocks
CREATE TRIGGER blocks_frozen_insert BEFORE INSERT ON blocks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.blocker_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER blocks_frozen_update BEFORE UPDATE ON blocks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.blocker_id >> 3) & 255), ((NEW.blocker_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER blocks_frozen_delete BEFORE DELETE ON blocks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.blocker_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- blocked_by
CREATE TRIGGER blocked_by_frozen_insert BEFORE INSERT ON blocked_by
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.blocked_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER blocked_by_frozen_update BEFORE UPDATE ON blocked_by
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.blocked_id >> 3) & 255), ((NEW.blocked_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER blocked_by_frozen_delete BEFORE DELETE ON blocked_by
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.blocked_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- likes
CREATE TRIGGER likes_frozen_insert BEFORE INSERT ON likes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER likes_frozen_update BEFORE UPDATE ON likes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER likes_frozen_delete BEFORE DELETE ON likes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- comments
CREATE TRIGGER comments_frozen_insert BEFORE INSERT ON comments
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER comments_frozen_update BEFORE UPDATE ON comments
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER comments_frozen_delete BEFORE DELETE ON comments
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- idempotency_keys
CREATE TRIGGER idempotency_keys_frozen_insert BEFORE INSERT ON idempotency_keys
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER idempotency_keys_frozen_update BEFORE UPDATE ON idempotency_keys
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- outbox
CREATE TRIGGER outbox_frozen_insert BEFORE INSERT ON outbox
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER outbox_frozen_update BEFORE UPDATE ON outbox
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.id >> 3) & 255), ((NEW.id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- audit_log
CREATE TRIGGER audit_log_frozen_insert BEFORE INSERT ON audit_log
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER audit_log_frozen_update BEFORE UPDATE ON audit_log
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.id >> 3) & 255), ((NEW.id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER audit_log_frozen_delete BEFORE DELETE ON audit_log
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
-- handles
CREATE TRIGGER handles_frozen_insert BEFORE INSERT ON handles
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = NEW.shard OR NEW.shard IS NULL)
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER handles_frozen_update BEFORE UPDATE ON handles
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (OLD.shard, NEW.shard) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER handles_frozen_delete BEFORE DELETE ON handles
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = OLD.shard AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
