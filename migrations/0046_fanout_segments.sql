-- Issue 40: a big post's fan-out split into segments that run side by side
-- (`domain/fanout_segments.rs`). The event's segments live on its own outbox row, as a JSON
-- array of `[start_after, end, cursor, done]` (NULL: not split), so each segment's progress
-- and the event's completion are one row's update (`store/outbox.rs::record_segment`), under
-- the row's existing frozen-shard triggers, and a shard move copies them with the row.
ALTER TABLE outbox ADD COLUMN segments TEXT;
