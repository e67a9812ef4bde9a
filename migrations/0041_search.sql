-- Issue 42, part 6: search v2 (accounts, hashtags, statuses). docs/mastodon.md "Search".

-- Mastodon's account flag: whether the account's public posts may be found by anyone's
-- full-text search (`indexable`, default false as Mastodon's). Off hides them at once: every
-- status hit is re-checked against the author's row.
ALTER TABLE users ADD COLUMN indexable INTEGER NOT NULL DEFAULT 0;

-- The search index: term -> ids. `term` names the row family and the word
-- (`domain::search::Term`): `a:` account words and `h:` hashtags by their first one or two
-- characters (a bucket; `word` is the whole word, so a prefix is a range of `word` in it),
-- `s:` public statuses of indexable accounts by whole word, `p:<user>:` a user's own,
-- favourited, bookmarked and mentioning statuses by whole word. A term's rows live on the
-- database of `shard`, stored as the handle directory's is (SQL cannot compute a hash):
-- the term's hash for `a:`, `h:`, `s:`, the user's home for `p:` (so a personal search is one
-- statement on one database). Rows are written idempotently beside the change they follow and
-- trusted by nobody: every hit is re-read and re-checked, so a row a crash or an edit left
-- behind shows nothing. `owner`: a status's author (`account_id`), else 0; `name`: a tag as
-- first written, else ''.
CREATE TABLE search_terms (
  shard INTEGER NOT NULL,
  term  TEXT    NOT NULL,
  word  TEXT    NOT NULL,
  item  INTEGER NOT NULL,
  owner INTEGER NOT NULL,
  name  TEXT    NOT NULL,
  PRIMARY KEY (term, word, item)
) WITHOUT ROWID;
CREATE INDEX search_terms_by_shard ON search_terms (shard, term, word, item);
CREATE TRIGGER search_terms_frozen_insert BEFORE INSERT ON search_terms
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = NEW.shard)
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER search_terms_frozen_update BEFORE UPDATE ON search_terms
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (OLD.shard, NEW.shard) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER search_terms_frozen_delete BEFORE DELETE ON search_terms
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = OLD.shard AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
