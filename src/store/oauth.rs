//! OAuth apps, authorization codes and revoked tokens (migration 0008). Secrets and codes are
//! stored as SHA-256 hashes only: a leaked table grants nothing.

use serde::Deserialize;

use super::StoreResult;
use super::{all, batch, exec, first, int, opt_text, stmt, text, AnyDb, ControlDb, UserDb};
use crate::domain::ids::UserId;
use crate::domain::oauth::Scopes;
use crate::domain::throttle::{Count, Key};

#[derive(Debug, Deserialize)]
pub struct AppRow {
    pub id: i64,
    pub client_secret_hash: String,
    pub name: String,
    pub website: Option<String>,
    pub redirect_uris: String,
    scopes: i64,
}

impl AppRow {
    pub fn scopes(&self) -> Scopes {
        Scopes::from_bits(u8::try_from(self.scopes).unwrap_or(0))
    }
}

/// A new client application.
pub struct NewApp<'a> {
    pub client_id: &'a str,
    pub client_secret_hash: &'a str,
    pub name: &'a str,
    pub website: Option<&'a str>,
    pub redirect_uris: &'a str,
    pub scopes: Scopes,
}

pub async fn create_app(db: ControlDb<'_>, app: &NewApp<'_>, now: i64) -> StoreResult<i64> {
    #[derive(Deserialize)]
    struct Id {
        id: i64,
    }
    const SQL: &str = "INSERT INTO oauth_apps (client_id, client_secret_hash, name, website, redirect_uris, \
                       scopes, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id";
    let params = [
        text(app.client_id),
        text(app.client_secret_hash),
        text(app.name),
        opt_text(app.website),
        text(app.redirect_uris),
        int(i64::from(app.scopes.bits())),
        int(now),
    ];
    let row: Option<Id> = first(db, SQL, &params).await?;
    Ok(row.map_or(0, |r| r.id))
}

/// An app by its id (what a token names).
pub async fn app_by_id(db: ControlDb<'_>, id: i64) -> StoreResult<Option<AppRow>> {
    const SQL: &str = "SELECT id, client_secret_hash, name, website, redirect_uris, scopes \
                       FROM oauth_apps WHERE id = ?1";
    first(db, SQL, &[int(id)]).await
}

pub async fn app_by_client_id(db: ControlDb<'_>, client_id: &str) -> StoreResult<Option<AppRow>> {
    const SQL: &str = "SELECT id, client_secret_hash, name, website, redirect_uris, scopes \
                       FROM oauth_apps WHERE client_id = ?1";
    first(db, SQL, &[text(client_id)]).await
}

/// A code granted to `app` for `user`, exchangeable once until `expires_at` (ms).
pub struct Grant<'a> {
    pub code_hash: &'a str,
    pub app_id: i64,
    pub user: UserId,
    pub scopes: Scopes,
    pub redirect_uri: &'a str,
    pub expires_at: i64,
    /// The PKCE challenge (S256) the exchange must answer, if the client sent one.
    pub code_challenge: Option<&'a str>,
}

pub async fn create_code(db: ControlDb<'_>, grant: &Grant<'_>) -> StoreResult<()> {
    const SQL: &str =
        "INSERT INTO oauth_codes (code_hash, app_id, user_id, scopes, redirect_uri, expires_at, code_challenge) \
                       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    let params = [
        text(grant.code_hash),
        int(grant.app_id),
        int(grant.user),
        int(i64::from(grant.scopes.bits())),
        text(grant.redirect_uri),
        int(grant.expires_at),
        grant.code_challenge.map_or(wasm_bindgen::JsValue::NULL, text),
    ];
    exec(db, SQL, &params).await
}

#[derive(Debug, Deserialize)]
pub struct CodeRow {
    pub app_id: i64,
    pub user_id: UserId,
    scopes: i64,
    pub redirect_uri: String,
    pub expires_at: i64,
    pub code_challenge: Option<String>,
}

impl CodeRow {
    pub fn scopes(&self) -> Scopes {
        Scopes::from_bits(u8::try_from(self.scopes).unwrap_or(0))
    }
}

/// Takes the code out (it works once, whatever happens next); `None` if there is none.
pub async fn take_code(db: ControlDb<'_>, code_hash: &str) -> StoreResult<Option<CodeRow>> {
    const SQL: &str = "DELETE FROM oauth_codes WHERE code_hash = ?1 \
                       RETURNING app_id, user_id, scopes, redirect_uri, expires_at, code_challenge";
    first(db, SQL, &[text(code_hash)]).await
}

/// Revokes one access token by id, remembered until it would have expired anyway.
pub async fn revoke_token(db: UserDb<'_>, token_id: i64, expires_at: i64) -> StoreResult<()> {
    const SQL: &str = "INSERT INTO revoked_tokens (token_id, expires_at) VALUES (?1, ?2) \
                       ON CONFLICT (token_id) DO NOTHING";
    exec(db, SQL, &[int(token_id), int(expires_at)]).await
}

#[derive(Deserialize)]
struct FailureRow {
    key: String,
    failures: i64,
    expires_at: i64,
}

/// The failed sign-ins of `keys` in their windows still open at `now` (migration 0022). Its
/// table takes any key name, so the pair keys (`pair:ADDRESS/ACCOUNT`) of issue 38 live beside
/// the `ip:` and `acct:` ones of issue 30 without a migration.
pub async fn sign_in_failures(db: ControlDb<'_>, keys: &[Key], now: i64) -> StoreResult<Vec<Count>> {
    const SQL: &str = "SELECT key, failures, expires_at FROM sign_in_failures \
                       WHERE key IN (SELECT value FROM json_each(?1)) AND expires_at > ?2";
    let names = serde_json::Value::from(keys.iter().map(|k| k.name.clone()).collect::<Vec<_>>()).to_string();
    let rows: Vec<FailureRow> = all(db, SQL, &[text(&names), int(now)]).await?;
    Ok(rows
        .into_iter()
        .map(|r| Count { name: r.key, failures: r.failures, expires_at: r.expires_at })
        .collect())
}

/// Counts one failed sign-in against each key: in its open window, or in a new one from `now`.
pub async fn count_sign_in_failure(db: ControlDb<'_>, keys: &[Key], now: i64) -> StoreResult<()> {
    const SQL: &str = "INSERT INTO sign_in_failures (key, failures, expires_at) VALUES (?1, 1, ?2 + ?3) \
                       ON CONFLICT (key) DO UPDATE SET \
                         failures = CASE WHEN expires_at <= ?2 THEN 1 ELSE failures + 1 END, \
                         expires_at = CASE WHEN expires_at <= ?2 THEN ?2 + ?3 ELSE expires_at END";
    let statements = keys
        .iter()
        .map(|k| stmt(db, SQL, &[text(&k.name), int(now), int(k.period_ms)]))
        .collect::<StoreResult<_>>()?;
    batch(db, statements).await?;
    Ok(())
}

/// Drops expired codes, revocations of expired tokens and ended sign-in windows (the cron pass).
pub async fn purge_expired(db: AnyDb<'_>, now: i64) -> StoreResult<()> {
    exec(db, "DELETE FROM sign_in_failures WHERE expires_at <= ?1", &[int(now)]).await?;
    exec(db, "DELETE FROM oauth_codes WHERE expires_at <= ?1", &[int(now)]).await?;
    exec(db, "DELETE FROM revoked_tokens WHERE expires_at <= ?1", &[int(now)]).await
}
