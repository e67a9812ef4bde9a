-- Mastodon lists (issue #22): named sets of followed accounts, on their owner's home database,
-- where the owner's `follows` rows live too, so the list timeline reads its members beside the
-- edges in one statement. Many-to-many: an account may be in several lists of one owner. These
-- are not the `/v1` follow groups (`follows.group_name`: one name per follow), which stay.
--
-- `id` is a snowflake of the owner's shard. A list is always looked up with its owner
-- (`user_id = viewer`), so another user's list id names nothing. No foreign keys (placement,
-- 0012): deleting a list deletes its members in the same batch; unfollowing or blocking deletes
-- the account from the owner's lists in the follow's batch; and reads count a member only
-- while the owner follows it, since before the membership was made (a follow dropped by a
-- mirror's convergence and made again does not bring an old membership back).
CREATE TABLE lists (
  user_id        INTEGER NOT NULL,
  id             INTEGER NOT NULL,
  title          TEXT    NOT NULL,
  replies_policy TEXT    NOT NULL DEFAULT 'list' CHECK (replies_policy IN ('followed', 'list', 'none')),
  exclusive      INTEGER NOT NULL DEFAULT 0,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (user_id, id)
) WITHOUT ROWID;
CREATE INDEX lists_by_shard ON lists (((user_id >> 3) & 255), user_id, id);

CREATE TABLE list_accounts (
  user_id    INTEGER NOT NULL,           -- the list's owner
  list_id    INTEGER NOT NULL,
  account_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, list_id, account_id)
) WITHOUT ROWID;
CREATE INDEX list_accounts_by_account ON list_accounts (user_id, account_id);
CREATE INDEX list_accounts_by_shard ON list_accounts (((user_id >> 3) & 255), user_id, list_id, account_id);

-- The freeze of a moving shard (0013's pattern).
CREATE TRIGGER lists_frozen_insert BEFORE INSERT ON lists
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER lists_frozen_update BEFORE UPDATE ON lists
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER lists_frozen_delete BEFORE DELETE ON lists
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER list_accounts_frozen_insert BEFORE INSERT ON list_accounts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER list_accounts_frozen_update BEFORE UPDATE ON list_accounts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER list_accounts_frozen_delete BEFORE DELETE ON list_accounts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
