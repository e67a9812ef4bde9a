-- Token revocation (POST /v1/me/logout): tokens whose `iat` is not after this time (unix
-- seconds) are refused, and so are tokens without `iat`. NULL: the user never logged out.
-- Read once per authenticated request by primary key (users.id is the rowid: no index needed).
ALTER TABLE users ADD COLUMN tokens_valid_after INTEGER;
