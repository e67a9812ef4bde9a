-- Issue 42: the timelines beyond follows (public, local, tag), their streams, followed and
-- featured tags (crates/domain/src/tags.rs).

-- The timeline index: a public post's entry under its public stripe and each of its tags. A
-- key's rows live on the database of the key's hash (`shard`, stored as the handle directory's
-- is: SQL cannot compute it), so a tag page is one range read on one database. Written by the
-- publish, edit and delete requests and again by the post's fan-out event (idempotent); every
-- read re-checks the post itself, so a row left behind by a crash or an edit shows nothing.
CREATE TABLE timeline_index (
  shard     INTEGER NOT NULL,
  key       TEXT    NOT NULL,
  post_id   INTEGER NOT NULL,
  author_id INTEGER NOT NULL,
  -- domain::tags::flags: 1 media, 2 a reply to another account.
  flags     INTEGER NOT NULL,
  PRIMARY KEY (key, post_id)
) WITHOUT ROWID;
CREATE INDEX timeline_index_by_shard ON timeline_index (shard, key, post_id);
-- A featured tag's count of its account's posts.
CREATE INDEX timeline_index_by_author ON timeline_index (key, author_id, post_id);
CREATE TRIGGER timeline_index_frozen_insert BEFORE INSERT ON timeline_index
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = NEW.shard)
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER timeline_index_frozen_update BEFORE UPDATE ON timeline_index
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (OLD.shard, NEW.shard) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER timeline_index_frozen_delete BEFORE DELETE ON timeline_index
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = OLD.shard AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- Who has a Mastodon socket subscribed to a key's stream (`public`, `hashtag`), beside the
-- key's rows: the index write that adds an entry reads them and tells their window objects.
-- A lease, renewed by the socket's object while it stays subscribed, as `live_readers` is.
CREATE TABLE stream_listeners (
  shard      INTEGER NOT NULL,
  key        TEXT    NOT NULL,
  user_id    INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (key, user_id)
) WITHOUT ROWID;
CREATE INDEX stream_listeners_by_shard ON stream_listeners (shard, key, user_id);
CREATE TRIGGER stream_listeners_frozen_insert BEFORE INSERT ON stream_listeners
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = NEW.shard)
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER stream_listeners_frozen_update BEFORE UPDATE ON stream_listeners
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (OLD.shard, NEW.shard) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER stream_listeners_frozen_delete BEFORE DELETE ON stream_listeners
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = OLD.shard AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- The tags a user follows and features, on their home database (`tag_key`: the name
-- lower-cased; `name`: as they first wrote it).
CREATE TABLE followed_tags (
  user_id    INTEGER NOT NULL,
  tag_key    TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, tag_key)
) WITHOUT ROWID;
CREATE TRIGGER followed_tags_frozen_insert BEFORE INSERT ON followed_tags
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER followed_tags_frozen_update BEFORE UPDATE ON followed_tags
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER followed_tags_frozen_delete BEFORE DELETE ON followed_tags
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

CREATE TABLE featured_tags (
  user_id    INTEGER NOT NULL,
  tag_key    TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, tag_key)
) WITHOUT ROWID;
CREATE TRIGGER featured_tags_frozen_insert BEFORE INSERT ON featured_tags
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((NEW.user_id >> 3) & 255))
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER featured_tags_frozen_update BEFORE UPDATE ON featured_tags
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard IN (((OLD.user_id >> 3) & 255), ((NEW.user_id >> 3) & 255)) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;
CREATE TRIGGER featured_tags_frozen_delete BEFORE DELETE ON featured_tags
  WHEN EXISTS (SELECT 1 FROM frozen_shards f WHERE f.shard = ((OLD.user_id >> 3) & 255) AND f.mode = 'frozen')
  BEGIN SELECT RAISE(ABORT, 'shard frozen'); END;

-- The last day's entries of a database, for its share of the trends (`services/discovery.rs`).
CREATE INDEX timeline_index_by_time ON timeline_index (post_id);

-- Discovery (trending tags and statuses, suggested and directory accounts): each database's
-- share of the cron ranks its own rows and replaces its rows here, on the control database
-- (DB_0), at most every few minutes, so a read is one statement whatever the number of
-- databases. `item`: a post or user id (0 for a tag); `name`: the tag.
CREATE TABLE discovery (
  kind        TEXT    NOT NULL,
  db          INTEGER NOT NULL,
  item        INTEGER NOT NULL,
  name        TEXT    NOT NULL,
  score       INTEGER NOT NULL,
  extra       INTEGER NOT NULL,
  computed_at INTEGER NOT NULL,
  PRIMARY KEY (kind, db, item, name)
) WITHOUT ROWID;
CREATE INDEX discovery_by_score ON discovery (kind, score DESC, extra DESC);
