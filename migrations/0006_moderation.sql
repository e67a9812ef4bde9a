-- Moderation (admin): suspended users and taken-down posts, and the audit log of both.
-- Nothing is deleted: reads hide what is suspended or taken down, and reinstating or restoring
-- brings it back exactly as it was.
ALTER TABLE users ADD COLUMN suspended_at INTEGER;
ALTER TABLE posts ADD COLUMN taken_down_at INTEGER;
-- The few suspended users, for "not suspended" checks that would otherwise read every author.
CREATE INDEX users_suspended ON users (id) WHERE suspended_at IS NOT NULL;

-- Append-only: one row per moderation action that changed something, in commit order.
CREATE TABLE audit_log (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at  INTEGER NOT NULL,
  actor       TEXT    NOT NULL,
  action      TEXT    NOT NULL CHECK (action IN ('suspend', 'reinstate', 'takedown', 'restore')),
  target_kind TEXT    NOT NULL CHECK (target_kind IN ('user', 'post')),
  target_id   INTEGER NOT NULL,
  reason      TEXT    NOT NULL
);

-- Operator figures over a rolling hour: per-minute counts (`name`, minute since the epoch),
-- written beside the writes that make them and trimmed by the reconciliation pass. The stats
-- page reads at most 61 rows per figure, never the tables they describe.
CREATE TABLE minute_counts (
  name   TEXT    NOT NULL,
  minute INTEGER NOT NULL,
  n      INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (name, minute)
) WITHOUT ROWID;

-- Fan-out events of a suspended author wait here ('held') until reinstatement releases them.
-- (outbox.state is free text; 'held' joins 'pending', 'done' and 'dead'.)
