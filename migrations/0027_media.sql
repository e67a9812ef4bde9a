-- Media attachments (issue #30): one row per upload, on its uploader's database (the post it is
-- attached to lives there too: a post's author is its media's uploader). The bytes are in R2
-- under `media/{id}`; `url_key` is the unguessable part of the URL they are served from.
-- `post_id` is set by the publish batch that attaches it (at most once, and never once gone: the
-- trigger), `gone_at` by the batch that deletes the post or by the cron's sweep for an upload
-- never attached within `MEDIA_UNATTACHED_SECONDS`; a later sweep removes the bytes and the row
-- of uploads gone for a while (so a publish that checked an upload just before cannot attach
-- bytes removed under it: the trigger refuses the gone row, the whole batch aborts).
CREATE TABLE media (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL,
  url_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  size INTEGER NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  focus_x REAL,
  focus_y REAL,
  created_at INTEGER NOT NULL,
  post_id INTEGER,
  gone_at INTEGER
);
CREATE INDEX media_of_post ON media (post_id) WHERE post_id IS NOT NULL;
CREATE INDEX media_unattached ON media (created_at) WHERE post_id IS NULL;
CREATE INDEX media_gone ON media (gone_at) WHERE gone_at IS NOT NULL;
CREATE INDEX media_by_shard ON media (((id >> 3) & 255), id);

-- The freeze of a moving shard (0013's pattern); the sweep's deletes are not frozen (gone rows,
-- as expired idempotency keys: the copy's next pass removes them on the target).
CREATE TRIGGER media_frozen_insert BEFORE INSERT ON media
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER media_frozen_update BEFORE UPDATE ON media
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.id >> 3) & 255), ((NEW.id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- An upload belongs to one post: attaching it to another, or attaching a gone one, aborts the
-- whole publish batch (so two concurrent posts naming the same upload cannot both show it).
CREATE TRIGGER media_attached_once BEFORE UPDATE OF post_id ON media
WHEN NEW.post_id IS NOT OLD.post_id AND (OLD.post_id IS NOT NULL OR OLD.gone_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'media_already_attached');
END;

-- A post's attachments as every read shows them (JSON, `domain::media::Attachment`); NULL: none.
ALTER TABLE posts ADD COLUMN media TEXT;
