-- Content warnings (issue #30): a post's or reply's `spoiler_text` (shown in place of the text
-- until the reader opens it; '' for none) and `sensitive` (0/1; always 1 while spoiler_text is
-- set). Replies become editable by their author, so comments get `edited_at` too.
ALTER TABLE posts ADD COLUMN spoiler_text TEXT NOT NULL DEFAULT '';
ALTER TABLE posts ADD COLUMN sensitive INTEGER NOT NULL DEFAULT 0;
ALTER TABLE comments ADD COLUMN spoiler_text TEXT NOT NULL DEFAULT '';
ALTER TABLE comments ADD COLUMN sensitive INTEGER NOT NULL DEFAULT 0;
ALTER TABLE comments ADD COLUMN edited_at INTEGER;
