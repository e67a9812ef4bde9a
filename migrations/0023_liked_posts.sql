-- The liker's side of likes (issue #30): which posts a user likes, on the LIKER's home
-- database, so "my favourites" pages one index and "did I like these posts" (the feed's
-- `liked_by_me` of posts it did not read from their own database) is one statement beside the
-- reader's other rows. `likes` (with the post) stays the truth, written only by the post's
-- `PostLikes` object; this is a mirror kept by current state (`services/liked.rs::converge`):
-- after a like or unlike commits, the post side's row is read and copied here (a row exactly
-- while `likes.liked = 1`, with its `liked_at`), and the cron's slice walks the likes changed
-- since its cursor (`likes_by_update`) to converge any pair a crash left behind.
CREATE TABLE liked_posts (
  user_id  INTEGER NOT NULL,
  post_id  INTEGER NOT NULL,
  liked_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, post_id)
) WITHOUT ROWID;
CREATE INDEX liked_posts_by_time ON liked_posts (user_id, liked_at DESC, post_id DESC);
CREATE INDEX liked_posts_by_shard ON liked_posts (((user_id >> 3) & 255), user_id, post_id);
CREATE INDEX likes_by_update ON likes (updated_at, post_id, user_id);

-- The freeze of a moving shard (0013's pattern).
CREATE TRIGGER liked_posts_frozen_insert BEFORE INSERT ON liked_posts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER liked_posts_frozen_update BEFORE UPDATE ON liked_posts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER liked_posts_frozen_delete BEFORE DELETE ON liked_posts
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
