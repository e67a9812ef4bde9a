-- Hot authors' replicas (docs/hot-authors.md): how many replicated Durable Objects hold the
-- author's recent posts (0: none; set once, when the author crosses HOT_REPLICA_FOLLOWERS),
-- and the author's change counter, bumped in the same batch as every change a replica holds
-- (publish, edit, delete, takedown, suspension, a block by the author), so a replica can
-- tell whether it is behind.
ALTER TABLE users ADD COLUMN replicas INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN replica_seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX users_replicated ON users (id) WHERE replicas > 0;
