-- Replies are posts (issue #39 item 2). A reply made now is a post of the replier's, on the
-- replier's database, fanned out as any post of theirs, with what it replies to:
-- `in_reply_to_id` (a post, a reply post, or a comment of the old kind), its author
-- `in_reply_to_account_id`, and `thread_id`, the post at the root of the thread. It reaches a
-- follower's home by Mastodon's rule: a follower of the replier who also follows the account
-- replied to (and a self-reply thread reaches every follower), chosen per recipient in the
-- fan-out and checked again at every read (`services/replies.rs`).
ALTER TABLE posts ADD COLUMN in_reply_to_id INTEGER;
ALTER TABLE posts ADD COLUMN in_reply_to_account_id INTEGER;
ALTER TABLE posts ADD COLUMN thread_id INTEGER;

-- The root post's thread keeps a row for each reply post in `comments` (on the root's
-- database, as a comment has), so the comments view, its cursors and top order, the thread
-- (`context`), `comment_count` and the reply notification work as they did: `reply_post = 1`
-- marks a row that mirrors the reply post of the same id, whose own row (the truth) lives on its
-- author's database. The mirror is written by the request and again by the reply's outbox event
-- (an insert of an existing row does nothing; a deleted reply marks it deleted, never back).
ALTER TABLE comments ADD COLUMN reply_post INTEGER NOT NULL DEFAULT 0;
