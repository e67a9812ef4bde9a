-- Failed sign-ins (issue #30, `domain/throttle.rs`): one row per counted key (`ip:<address>` or
-- `acct:<handle>`) on the control database, with its failures in the window that ends at
-- `expires_at` (ms; the window starts at the key's first failure after the last one ended).
-- The reconciliation pass deletes ended windows.
CREATE TABLE sign_in_failures (
  key        TEXT    NOT NULL PRIMARY KEY,
  failures   INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sign_in_failures_by_expiry ON sign_in_failures (expires_at);
