-- Scheduled posts (issue 42; the table is 0038's): uploads held for one, and the request key a
-- retried schedule is answered by.

-- The scheduled post (`scheduled_statuses.id`) an upload waits for: set in the schedule's own
-- batch, cleared by the publish batch that attaches it (`post_id`) or by the cancel's. The
-- cron's sweep of unattached uploads leaves it alone (`services/media.rs::sweep`), however long
-- it waits.
ALTER TABLE media ADD COLUMN scheduled_id INTEGER;
CREATE INDEX media_scheduled ON media (scheduled_id) WHERE scheduled_id IS NOT NULL;

-- An upload waits for one scheduled post at most, and only while it is free: reserving one that
-- is attached, gone, a profile image or another scheduled post's aborts the whole schedule
-- batch (two schedules, or a schedule and a publish, naming the same upload cannot both keep it).
CREATE TRIGGER media_reserved_once BEFORE UPDATE OF scheduled_id ON media
WHEN NEW.scheduled_id IS NOT NULL AND NEW.scheduled_id IS NOT OLD.scheduled_id
  AND (OLD.scheduled_id IS NOT NULL OR OLD.post_id IS NOT NULL OR OLD.gone_at IS NOT NULL OR OLD.profile IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'media_already_attached');
END;

-- Attaching an upload that waits for a scheduled post aborts the publish batch, unless that
-- batch is the scheduled post's own (it clears `scheduled_id` in the same update).
CREATE TRIGGER media_reserved_attach BEFORE UPDATE OF post_id ON media
WHEN NEW.post_id IS NOT NULL AND NEW.scheduled_id IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'media_already_attached');
END;

-- The Idempotency-Key of the request that scheduled it (NULL: none): a retry finds the row by
-- it instead of scheduling the post twice. A key lives as long as its row.
ALTER TABLE scheduled_statuses ADD COLUMN idempotency TEXT;
CREATE UNIQUE INDEX scheduled_statuses_idempotency ON scheduled_statuses (user_id, idempotency)
  WHERE idempotency IS NOT NULL;
