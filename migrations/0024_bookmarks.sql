-- Bookmarks (issue #30): a user's saved posts, on the user's home database (the one side that
-- exists: a bookmark is nobody else's business, so there is no mirror). The post lives on its
-- author's database; the list is read here newest bookmark first and its posts hydrated from
-- their databases, filtered at read time like a feed (deleted, taken down, blocked either way,
-- suspended authors, followers-only without the follow): a row is never trusted because it
-- exists. No foreign key (placement, 0012): a deleted post's bookmark just stops showing.
CREATE TABLE bookmarks (
  user_id    INTEGER NOT NULL,
  post_id    INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, post_id)
) WITHOUT ROWID;
CREATE INDEX bookmarks_by_time ON bookmarks (user_id, created_at DESC, post_id DESC);
CREATE INDEX bookmarks_by_shard ON bookmarks (((user_id >> 3) & 255), user_id, post_id);

-- The freeze of a moving shard (0013's pattern).
CREATE TRIGGER bookmarks_frozen_insert BEFORE INSERT ON bookmarks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER bookmarks_frozen_update BEFORE UPDATE ON bookmarks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER bookmarks_frozen_delete BEFORE DELETE ON bookmarks
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
