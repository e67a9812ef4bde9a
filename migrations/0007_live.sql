-- Live feed updates (src/domain/live.rs): readers with an open feed socket. A row is a lease,
-- renewed by the reader's timeline object while a socket stays open and left to lapse when the
-- last one closes; the fan-out reads it to reach live readers of authors it does not push to.
CREATE TABLE live_readers (
  user_id INTEGER PRIMARY KEY,
  -- Lease end, ms since the epoch.
  until INTEGER NOT NULL
);

CREATE INDEX live_readers_by_until ON live_readers (until);
