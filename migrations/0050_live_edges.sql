-- Issue 40: a delivery's live readers read on its author's database, not by paging every open
-- socket's lease on the control database for every status. While a reader has a socket open,
-- their TimelineWindow object marks each of their pulled edges here, beside the author's side
-- of the edge (`followers`), with a lease (`until`, ms since the epoch), rewritten before it
-- lapses (`domain/live.rs`, `marks_due`). A status then reads its author's live marks with one
-- primary-key range. A mark is a lease, not a fact: the fan-out still checks the edge is there
-- and pulled when it reads the mark, and the cron pass deletes lapsed marks.
CREATE TABLE live_edges (
  author_id INTEGER NOT NULL,
  reader_id INTEGER NOT NULL,
  until     INTEGER NOT NULL,
  PRIMARY KEY (author_id, reader_id)
) WITHOUT ROWID;
-- No index by `until` (the purge scans): the table holds only open sockets' marks, a few
-- hundred a database at the headline, and every mark would otherwise write a second row.
CREATE TRIGGER live_edges_frozen_insert BEFORE INSERT ON live_edges
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.author_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER live_edges_frozen_update BEFORE UPDATE ON live_edges
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.author_id >> 3) & 255), ((NEW.author_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER live_edges_frozen_delete BEFORE DELETE ON live_edges
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.author_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
