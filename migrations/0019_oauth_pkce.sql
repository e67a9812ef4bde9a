-- PKCE (RFC 7636, issue #22): a code granted with a `code_challenge` (S256) is exchanged only
-- with the verifier that hashes to it, which lets public clients (browser apps such as Phanpy
-- and Elk, which cannot keep a client secret) use the code grant without the secret.
ALTER TABLE oauth_codes ADD COLUMN code_challenge TEXT;
