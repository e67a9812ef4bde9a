-- Comment likes and top comments (issue #30 item 7).
--
-- A like of a comment is a row here, on the comment's post's database (comments live with their
-- post), keyed by (comment, liker): a repeated like is the same row, so a retry or a duplicate
-- never counts twice. `comments.like_count` is recomputed from these rows in the same batch as
-- every like, unlike and comment delete (`store/comment_likes.rs`), never moved by a trigger: a
-- shard move copies both tables and must not count anything again. A deleted comment's likes
-- are deleted with it. No foreign key (placement, 0012): the comment is checked live in the
-- like's own statement.
ALTER TABLE comments ADD COLUMN like_count INTEGER NOT NULL DEFAULT 0;

CREATE TABLE comment_likes (
  comment_id INTEGER NOT NULL,
  user_id    INTEGER NOT NULL,
  post_id    INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (comment_id, user_id)
) WITHOUT ROWID;
CREATE INDEX comment_likes_by_shard ON comment_likes (((post_id >> 3) & 255), comment_id, user_id);

-- The freeze of a moving shard (0013's pattern): placed by the post, like its comments.
CREATE TRIGGER comment_likes_frozen_insert BEFORE INSERT ON comment_likes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER comment_likes_frozen_update BEFORE UPDATE ON comment_likes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER comment_likes_frozen_delete BEFORE DELETE ON comment_likes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
