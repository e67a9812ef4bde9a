-- Quotes (issue #39 item 5, Mastodon 4.5's API). A quote is a post of the quoter's that shows
-- another: `quote_of` is the quoted post, fanned out as any post of the quoter's. Who may quote
-- a post is its author's `quote_policy` (Mastodon's `quote_approval_policy`: public, followers,
-- nobody; `domain/quotes.rs`). The quoted post is re-read at every read (deleted, hidden or
-- blocked since: the quote shows no post, and its state says why).
ALTER TABLE posts ADD COLUMN quote_of INTEGER;
ALTER TABLE posts ADD COLUMN quote_policy TEXT NOT NULL DEFAULT 'public' CHECK (quote_policy IN ('public', 'followers', 'nobody'));
ALTER TABLE posts ADD COLUMN quote_count INTEGER NOT NULL DEFAULT 0;

-- The quoted post's side, on the QUOTED post's database (as `reblogs`, 0029): who quoted it and
-- whether the quote is live. The quoter's row is the truth; this mirror is converged by the
-- request and again by the quote's outbox event, and only ever goes active -> inactive (a quote
-- id is never revived), so a late convergence cannot undo a delete. `quote_count` moves by
-- trigger on a real transition only.
CREATE TABLE quotes (
  post_id    INTEGER NOT NULL,
  quote_id   INTEGER NOT NULL,
  quoter_id  INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  active     INTEGER NOT NULL CHECK (active IN (0, 1)),
  PRIMARY KEY (post_id, quote_id)
) WITHOUT ROWID;
CREATE INDEX quotes_by_shard ON quotes (((post_id >> 3) & 255), post_id, quote_id);

CREATE TRIGGER quotes_after_insert AFTER INSERT ON quotes WHEN NEW.active = 1 BEGIN
  UPDATE posts SET quote_count = quote_count + 1 WHERE id = NEW.post_id;
END;
CREATE TRIGGER quotes_after_update AFTER UPDATE OF active ON quotes WHEN OLD.active <> NEW.active BEGIN
  UPDATE posts SET quote_count = quote_count + (CASE WHEN NEW.active = 1 THEN 1 ELSE -1 END)
  WHERE id = NEW.post_id;
END;

-- The freeze of a moving shard (0013's pattern): placed by the quoted post.
CREATE TRIGGER quotes_frozen_insert BEFORE INSERT ON quotes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.post_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER quotes_frozen_update BEFORE UPDATE ON quotes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.post_id >> 3) & 255), ((NEW.post_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER quotes_frozen_delete BEFORE DELETE ON quotes
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.post_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
