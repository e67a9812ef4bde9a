-- The handle directory: who holds a handle, stored on the logical shard of the handle's hash
-- (src/domain/shard.rs, shard_of_handle), so a handle is unique across every database and
-- "whose is this handle" is one statement on one database. users.handle stays UNIQUE too (per
-- database), a second guard.
CREATE TABLE handles (
  handle     TEXT    PRIMARY KEY,
  user_id    INTEGER NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
-- The reconciliation pass checks recent claims (a sign-up that crashed between the claim and
-- the user row leaves a claim without a user, released after a grace period).
CREATE INDEX handles_by_time ON handles (created_at);

-- A deployment upgrading in place keeps every handle it has (one database: all on it).
INSERT OR IGNORE INTO handles (handle, user_id, created_at) SELECT handle, id, created_at FROM users;
