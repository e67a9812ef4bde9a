-- Mentions (issue #39 item 3). A post's mentions are resolved when it is published (`@handle`
-- and `@handle@this-domain`, Mastodon's boundary rules: `domain/mentions.rs`) and kept on the
-- post as JSON (`[{"id": "...", "handle": "..."}]`, NULL for none), so every read path that
-- carries the post (windows, the pull path, replicas) carries who it mentions without a read
-- more; a handle that names nobody is left as text, as Mastodon does.
ALTER TABLE posts ADD COLUMN mentions TEXT;
-- Its notifications' kind `mention` came with 0029's rebuild of `notifications`.
