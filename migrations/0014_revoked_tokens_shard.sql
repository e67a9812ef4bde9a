-- Revoked OAuth tokens move with their user's logical shard (README "Moving a shard"): a token
-- id now carries its user's shard in the bits where every id keeps it (`domain/shard.rs::
-- with_shard`), so the row's shard is computed like any id's. Tokens issued before this keep
-- random bits there: a move before they expire (`TOKEN_MAX_TTL_SECONDS`) leaves their
-- revocations behind, so such a token would be accepted again on the new database.
CREATE INDEX revoked_tokens_by_shard ON revoked_tokens (((token_id >> 3) & 255), token_id);
CREATE TRIGGER revoked_tokens_frozen_insert BEFORE INSERT ON revoked_tokens
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.token_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER revoked_tokens_frozen_update BEFORE UPDATE ON revoked_tokens
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.token_id >> 3) & 255), ((NEW.token_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
