-- Accounts with passwords and OAuth 2 for the Mastodon-compatible API (src/domain/oauth.rs,
-- src/domain/password.rs). A user without a password signs in with tokens only, as before.
ALTER TABLE users ADD COLUMN password_hash TEXT;

-- Registered client applications (POST /api/v1/apps). The secret is kept only as a SHA-256.
CREATE TABLE oauth_apps (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  client_id          TEXT NOT NULL UNIQUE,
  client_secret_hash TEXT NOT NULL,
  name               TEXT NOT NULL,
  website            TEXT,
  -- Newline-separated, matched exactly.
  redirect_uris      TEXT NOT NULL,
  scopes             INTEGER NOT NULL,
  created_at         INTEGER NOT NULL
);

-- Authorization codes: single use (deleted as they are exchanged), short-lived, kept as a hash.
CREATE TABLE oauth_codes (
  code_hash    TEXT PRIMARY KEY,
  app_id       INTEGER NOT NULL REFERENCES oauth_apps (id),
  user_id      INTEGER NOT NULL REFERENCES users (id),
  scopes       INTEGER NOT NULL,
  redirect_uri TEXT NOT NULL,
  expires_at   INTEGER NOT NULL
);

-- OAuth access tokens revoked one by one (POST /oauth/revoke), by the token's id (`jti`),
-- until the token would have expired anyway.
CREATE TABLE revoked_tokens (
  token_id   INTEGER PRIMARY KEY,
  expires_at INTEGER NOT NULL
);

CREATE INDEX revoked_tokens_by_expiry ON revoked_tokens (expires_at);
CREATE INDEX oauth_codes_by_expiry ON oauth_codes (expires_at);
