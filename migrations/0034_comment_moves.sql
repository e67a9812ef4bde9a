-- Comments of the old kind move into reply posts (issue #39: "existing comments migrate with
-- their counts and likes"). A comment written before replies were posts is a row of `comments`
-- on its post's database; the cron moves each into a reply post of its author's, on the
-- author's database (`services/comment_moves.rs`), a bounded slice per database per pass:
--
-- * `posts.moved_from` names the comment a post was moved from: the move's insert of the post
--   is `ON CONFLICT DO NOTHING` and then reads it back, so a retried move finds its own post
--   and never makes a second one.
-- * `comments.moved_to` is the comment's tombstone once moved: the reply post's id (its row is
--   deleted, and the thread holds the reply post's row instead, so `comment_count` is kept),
--   which old ids held by clients are redirected to. `0`: never to move (its post is deleted,
--   which hid it for good).
-- * A moved comment keeps `like_count` until its likes are copied to the reply post and
--   deleted (`comment_likes`), so a pass that stopped between the two finds it again by
--   `comments_moving`.
ALTER TABLE posts ADD COLUMN moved_from INTEGER;
ALTER TABLE comments ADD COLUMN moved_to INTEGER;
CREATE INDEX comments_unmoved ON comments (created_at, id)
  WHERE reply_post = 0 AND deleted_at IS NULL AND moved_to IS NULL;
CREATE INDEX comments_moving ON comments (id) WHERE moved_to > 0 AND like_count > 0;
