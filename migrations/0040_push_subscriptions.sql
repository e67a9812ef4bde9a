-- Issue 42, Web Push (docs/mastodon.md "Web Push"): one subscription per access token, on its
-- user's home (placement catalog: `domain/placement.rs`), frozen with its shard during a move
-- (0013's pattern). `token_id` is the token's `jti` (0: a token without one, i.e. every such
-- token of the user shares one subscription). The token's times are kept so the delivery can
-- tell a token that expired or was revoked by a logout since (its row is then removed);
-- `access_token` is what Mastodon's payload carries; `origin` is the instance's URL as the
-- subscribing client reached it (a queued delivery has no request to take it from: the
-- payload's icon URL, and the VAPID `sub` when `VAPID_SUBJECT` is not set). `alerts`: a bit per Mastodon alert name
-- (`domain/push.rs::ALERTS`). `sent`: the ids of the last notifications pushed to it (a JSON
-- array, newest first, at most `domain/push.rs::SENT_MEMORY`): a duplicate queue delivery
-- finds its id there and sends nothing (claimed in one UPDATE, `store/push.rs::claim`).
CREATE TABLE push_subscriptions (
  user_id          INTEGER NOT NULL,
  token_id         INTEGER NOT NULL,
  id               INTEGER NOT NULL,
  endpoint         TEXT    NOT NULL,
  p256dh           TEXT    NOT NULL,
  auth             TEXT    NOT NULL,
  alerts           INTEGER NOT NULL DEFAULT 0,
  policy           TEXT    NOT NULL DEFAULT 'all' CHECK (policy IN ('all', 'followed', 'follower', 'none')),
  access_token     TEXT    NOT NULL,
  origin           TEXT    NOT NULL,
  token_issued_at  INTEGER,
  token_expires_at INTEGER NOT NULL,
  sent             TEXT    NOT NULL DEFAULT '[]',
  created_at       INTEGER NOT NULL,
  PRIMARY KEY (user_id, token_id)
) WITHOUT ROWID;
CREATE INDEX push_subscriptions_by_shard ON push_subscriptions (((user_id >> 3) & 255), user_id, token_id);
CREATE TRIGGER push_subscriptions_frozen_insert BEFORE INSERT ON push_subscriptions
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER push_subscriptions_frozen_update BEFORE UPDATE ON push_subscriptions
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER push_subscriptions_frozen_delete BEFORE DELETE ON push_subscriptions
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
