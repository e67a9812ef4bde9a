-- Threads (issue #30): a reply to a reply keeps its parent. `parent_id` is the comment replied
-- to (on the same post, so on the same database), NULL for a reply to the post itself. Mastodon's
-- `in_reply_to_id` is the parent, and `context` orders a post's comments by it (depth first,
-- each level oldest first: `domain/thread.rs`). A deleted parent leaves its replies in place:
-- they are shown under the post.
ALTER TABLE comments ADD COLUMN parent_id INTEGER;
