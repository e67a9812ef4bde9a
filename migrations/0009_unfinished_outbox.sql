-- The feed read's in-flight horizon (src/store/feed.rs, `unfinished_since`): for each followed
-- author, the oldest post whose fan-out has not finished, and whether a follow backfill for the
-- reader is still owed. Only unfinished events are indexed, so the index stays as small as the
-- backlog (empty when the pipeline is healthy) and each feed read probes it once per author.
CREATE INDEX outbox_unfinished_by_author ON outbox (author_id, kind, post_created_at)
  WHERE state <> 'done';
