//! HS256 JSON Web Tokens, verified by hand: the format is small and pinning `alg` to HS256
//! ourselves rules out the classic `alg: none` / algorithm-confusion attacks.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::Mac;
use serde::{Deserialize, Serialize};

use super::ids::UserId;
use super::oauth::Scopes;
use super::sign::hmac as mac;

/// Clock skew tolerated on `nbf` and on an `iat` in the future (seconds). `exp` gets none: a
/// token is expired from the second its `exp` names.
pub const LEEWAY_SECS: f64 = 60.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    Malformed,
    UnsupportedAlgorithm,
    /// The header names extensions (`crit`) that must be understood; we understand none.
    CriticalExtension,
    BadSignature,
    Expired,
    /// `nbf` (or `iat`) lies in the future beyond the leeway.
    NotYetValid,
    /// `exp - iat` (or `exp - now` without `iat`) exceeds the longest lifetime we accept.
    LifetimeTooLong,
    BadSubject,
}

impl TokenError {
    pub fn detail(self) -> &'static str {
        match self {
            Self::Malformed => "the bearer token is not a well-formed JWT",
            Self::UnsupportedAlgorithm => "only HS256 tokens are accepted",
            Self::CriticalExtension => {
                "the token header lists critical extensions (crit), which are not supported"
            }
            Self::BadSignature => "the token signature does not verify",
            Self::Expired => "the token has expired",
            Self::NotYetValid => "the token is not valid yet (nbf or iat is in the future)",
            Self::LifetimeTooLong => "the token lifetime exceeds the maximum this service accepts",
            Self::BadSubject => "the token subject is not a user id",
        }
    }
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    crit: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct IssuedClaims {
    sub: String,
    exp: i64,
    iat: i64,
    /// OAuth tokens only: what the token may do, and its id for revocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jti: Option<String>,
    /// OAuth tokens only: the app it was issued to (RFC 9068's claim), whose alone it is to
    /// revoke (RFC 7009 2.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
}

/// Registered claims as they arrive: times are RFC 7519 NumericDates (any JSON number,
/// fractions allowed), so they are read as numbers and checked by [`numeric_date`].
#[derive(Deserialize)]
struct Claims {
    sub: serde_json::Value,
    exp: serde_json::Value,
    #[serde(default)]
    iat: Option<serde_json::Value>,
    #[serde(default)]
    nbf: Option<serde_json::Value>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    jti: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
}

/// What verification needs besides the token: the time and the longest lifetime accepted.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub now_secs: i64,
    pub max_ttl_secs: i64,
}

/// A token that verified: whose it is and when it was issued (`iat`, if it says).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verified {
    pub user: UserId,
    pub issued_at: Option<f64>,
    /// `exp`, unix seconds (a live socket closes then).
    pub expires_at: f64,
    /// `scope` (OAuth tokens): `None` may do everything.
    pub scopes: Option<Scopes>,
    /// `jti`, when it is one of ours (a decimal id): what `POST /oauth/revoke` revokes.
    pub token_id: Option<i64>,
    /// `client_id`: the app an OAuth token was issued to (older tokens do not say).
    pub client: Option<i64>,
}

/// Mints a token for `user_id` issued at `iat`, valid until `exp` (unix seconds).
pub fn issue(secret: &[u8], user_id: UserId, iat: i64, exp: i64) -> String {
    let claims = IssuedClaims { sub: user_id.to_string(), exp, iat, scope: None, jti: None, client_id: None };
    sign_claims(secret, claims)
}

/// What an OAuth access token carries beside its user and times.
#[derive(Debug, Clone, Copy)]
pub struct Grant {
    pub scopes: Scopes,
    /// Its id, for revocation.
    pub token_id: i64,
    /// The app it is issued to.
    pub client: i64,
}

/// Mints an OAuth access token: limited to `scopes`, revocable by its id, by its app.
pub fn issue_scoped(secret: &[u8], user_id: UserId, iat: i64, exp: i64, grant: Grant) -> String {
    let claims = IssuedClaims {
        sub: user_id.to_string(),
        exp,
        iat,
        scope: Some(grant.scopes.to_string()),
        jti: Some(grant.token_id.to_string()),
        client_id: Some(grant.client.to_string()),
    };
    sign_claims(secret, claims)
}

fn sign_claims(secret: &[u8], claims: IssuedClaims) -> String {
    let header = B64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = B64.encode(serde_json::to_vec(&claims).unwrap_or_default());
    let signing_input = format!("{header}.{claims}");
    let mut m = mac(secret);
    m.update(signing_input.as_bytes());
    let sig = B64.encode(m.finalize().into_bytes());
    format!("{signing_input}.{sig}")
}

fn decode_json<T: serde::de::DeserializeOwned>(part: &str) -> Result<T, TokenError> {
    B64.decode(part).ok().and_then(|raw| serde_json::from_slice(&raw).ok()).ok_or(TokenError::Malformed)
}

/// An RFC 7519 NumericDate: a JSON number of seconds, integer or not (`1796034582.5`).
fn numeric_date(value: &serde_json::Value) -> Result<f64, TokenError> {
    value.as_f64().filter(|v| v.is_finite()).ok_or(TokenError::Malformed)
}

/// Verifies header, signature and times; the claims with `iat` and `exp`.
fn verified_claims(
    secret: &[u8],
    token: &str,
    policy: Policy,
) -> Result<(Claims, Option<f64>, f64), TokenError> {
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let header: Header = decode_json(header)?;
    if header.alg != "HS256" {
        return Err(TokenError::UnsupportedAlgorithm);
    }
    if header.crit.is_some() {
        return Err(TokenError::CriticalExtension);
    }
    let sig = B64.decode(sig).map_err(|_| TokenError::Malformed)?;
    let mut m = mac(secret);
    m.update(&token.as_bytes()[..header_and_claims_len(token)]);
    m.verify_slice(&sig).map_err(|_| TokenError::BadSignature)?;
    let claims: Claims = decode_json(claims)?;
    let (issued_at, expires_at) = check_times(&claims, policy)?;
    Ok((claims, issued_at, expires_at))
}

/// Verifies header, signature, times and subject; returns whose token it is. An app's own token
/// (client credentials: [`issue_app`]) has no user: refused here as [`TokenError::BadSubject`].
pub fn verify(secret: &[u8], token: &str, policy: Policy) -> Result<Verified, TokenError> {
    let (claims, issued_at, expires_at) = verified_claims(secret, token, policy)?;
    // `sub` is a string per the JWT spec; a numeric `sub` from a lenient issuer is accepted too.
    let sub = match &claims.sub {
        serde_json::Value::String(s) => UserId::parse(s),
        serde_json::Value::Number(n) => n.as_i64().and_then(|n| UserId::parse(&n.to_string())),
        _ => None,
    };
    // An unknown scope grants nothing rather than everything.
    let scopes = claims.scope.as_deref().map(|s| Scopes::parse(s).unwrap_or_default());
    let token_id = claims.jti.as_deref().and_then(|j| j.parse().ok());
    let client = claims.client_id.as_deref().and_then(|c| c.parse().ok());
    let user = sub.ok_or(TokenError::BadSubject)?;
    Ok(Verified { user, issued_at, expires_at, scopes, token_id, client })
}

/// The subject of an app's own token: `app:{client id}`.
const APP_SUBJECT: &str = "app:";

/// Mints an app's own token (the client-credentials grant): no user, so no user route takes it;
/// the routes an app calls for itself do (registering an account, `apps/verify_credentials`).
pub fn issue_app(secret: &[u8], client: i64, scopes: Scopes, iat: i64, exp: i64) -> String {
    let claims = IssuedClaims {
        sub: format!("{APP_SUBJECT}{client}"),
        exp,
        iat,
        scope: Some(scopes.to_string()),
        jti: None,
        client_id: Some(client.to_string()),
    };
    sign_claims(secret, claims)
}

/// The app a token speaks for, and what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppToken {
    pub client: i64,
    pub scopes: Scopes,
    /// The user, for a user's token (one issued to the app).
    pub user: Option<UserId>,
}

/// Verifies a token an app presents for itself: its own ([`issue_app`]), or a user's OAuth token
/// issued to it (Mastodon takes either). A token naming no app is [`TokenError::BadSubject`].
pub fn verify_app(secret: &[u8], token: &str, policy: Policy) -> Result<AppToken, TokenError> {
    let (claims, _, _) = verified_claims(secret, token, policy)?;
    let client: i64 =
        claims.client_id.as_deref().and_then(|c| c.parse().ok()).ok_or(TokenError::BadSubject)?;
    let scopes = claims.scope.as_deref().and_then(Scopes::parse).unwrap_or_default();
    let user = match &claims.sub {
        serde_json::Value::String(s) => match s.strip_prefix(APP_SUBJECT) {
            Some(app) if app.parse::<i64>().ok() == Some(client) => None,
            Some(_) => return Err(TokenError::BadSubject),
            None => Some(UserId::parse(s).ok_or(TokenError::BadSubject)?),
        },
        _ => return Err(TokenError::BadSubject),
    };
    Ok(AppToken { client, scopes, user })
}

/// `exp` (required), `nbf` and `iat` (optional) against the clock and the lifetime cap;
/// returns `iat` and `exp`.
fn check_times(claims: &Claims, policy: Policy) -> Result<(Option<f64>, f64), TokenError> {
    let now = policy.now_secs as f64;
    let exp = numeric_date(&claims.exp)?;
    let iat = claims.iat.as_ref().map(numeric_date).transpose()?;
    let nbf = claims.nbf.as_ref().map(numeric_date).transpose()?;
    if exp <= now {
        return Err(TokenError::Expired);
    }
    if nbf.is_some_and(|nbf| nbf > now + LEEWAY_SECS) || iat.is_some_and(|iat| iat > now + LEEWAY_SECS) {
        return Err(TokenError::NotYetValid);
    }
    if exp - iat.unwrap_or(now) > policy.max_ttl_secs as f64 {
        return Err(TokenError::LifetimeTooLong);
    }
    Ok((iat, exp))
}

/// Whether a logout (every token issued up to `valid_after`, unix seconds) revoked a token
/// issued at `issued_at`. Whole seconds: a token from the logout's own second is revoked too,
/// and so is one without `iat` (nothing shows it is newer).
pub fn revoked(issued_at: Option<f64>, valid_after: Option<i64>) -> bool {
    match valid_after {
        None => false,
        Some(after) => issued_at.is_none_or(|iat| iat.floor() <= after as f64),
    }
}

fn header_and_claims_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"s3cret";
    const USER: UserId = UserId::from_trusted(42);
    const DAY: i64 = 86_400;

    fn at(now_secs: i64) -> Policy {
        Policy { now_secs, max_ttl_secs: 90 * DAY }
    }

    fn user(r: Result<Verified, TokenError>) -> Result<UserId, TokenError> {
        r.map(|v| v.user)
    }

    /// Signs arbitrary header and claims JSON, the way another issuer sharing the secret would.
    fn sign(header: &str, claims: &str) -> String {
        let input = format!("{}.{}", B64.encode(header), B64.encode(claims));
        let mut m = mac(SECRET);
        m.update(input.as_bytes());
        format!("{input}.{}", B64.encode(m.finalize().into_bytes()))
    }

    fn with_claims(claims: &str) -> String {
        sign(r#"{"alg":"HS256","typ":"JWT"}"#, claims)
    }

    #[test]
    fn oauth_tokens_name_their_scopes_id_and_app() {
        let grant = Grant { scopes: Scopes::READ, token_id: 77, client: 9 };
        let t = issue_scoped(SECRET, USER, 1000, 2000, grant);
        let v = verify(SECRET, &t, at(1500)).unwrap();
        assert_eq!((v.scopes, v.token_id, v.client), (Some(Scopes::READ), Some(77), Some(9)));
        let plain = verify(SECRET, &issue(SECRET, USER, 1000, 2000), at(1500)).unwrap();
        assert_eq!(plain.client, None);
    }

    #[test]
    fn issued_tokens_verify() {
        let t = issue(SECRET, USER, 1000, 2000);
        assert_eq!(
            verify(SECRET, &t, at(1500)),
            Ok(Verified {
                user: USER,
                issued_at: Some(1000.0),
                expires_at: 2000.0,
                scopes: None,
                token_id: None,
                client: None
            })
        );
    }

    #[test]
    fn expiry_is_enforced() {
        let t = issue(SECRET, USER, 1000, 2000);
        assert_eq!(user(verify(SECRET, &t, at(2000))), Err(TokenError::Expired));
        assert_eq!(user(verify(SECRET, &with_claims(r#"{"sub":"42","exp":1999.5}"#), at(1999))), Ok(USER));
        assert_eq!(
            user(verify(SECRET, &with_claims(r#"{"sub":"42","exp":1999.5}"#), at(2000))),
            Err(TokenError::Expired)
        );
    }

    #[test]
    fn fractional_and_integer_valued_float_times_are_numeric_dates() {
        let now = 1_796_034_600;
        for claims in [
            r#"{"sub":"42","exp":1796038182,"iat":1796034582.5}"#,
            r#"{"sub":"42","exp":1796038182,"iat":1796034582.0}"#,
            r#"{"sub":"42","exp":1796038182.0,"iat":1796034582,"nbf":1796034582.0}"#,
            r#"{"sub":"42","exp":1796038182.25,"nbf":1796034582.75}"#,
        ] {
            assert_eq!(user(verify(SECRET, &with_claims(claims), at(now))), Ok(USER), "{claims}");
        }
        let v = verify(SECRET, &with_claims(r#"{"sub":"42","exp":1796038182,"iat":1796034582.5}"#), at(now));
        assert_eq!(v.map(|v| v.issued_at), Ok(Some(1_796_034_582.5)));
        for claims in [
            r#"{"sub":"42","exp":"1796038182"}"#,
            r#"{"sub":"42","exp":1796038182,"iat":"yesterday"}"#,
            r#"{"sub":"42","exp":1796038182,"nbf":true}"#,
            r#"{"sub":"42"}"#,
        ] {
            assert_eq!(
                user(verify(SECRET, &with_claims(claims), at(now))),
                Err(TokenError::Malformed),
                "{claims}"
            );
        }
    }

    #[test]
    fn not_before_is_honoured_with_leeway() {
        let now = 10_000;
        let token = |nbf: f64| with_claims(&format!(r#"{{"sub":"42","exp":20000,"nbf":{nbf}}}"#));
        assert_eq!(user(verify(SECRET, &token(9_000.0), at(now))), Ok(USER));
        assert_eq!(user(verify(SECRET, &token(10_060.0), at(now))), Ok(USER), "within the leeway");
        assert_eq!(user(verify(SECRET, &token(10_060.5), at(now))), Err(TokenError::NotYetValid));
        assert_eq!(user(verify(SECRET, &token(10_061.0), at(now))), Err(TokenError::NotYetValid));
        let future_iat = with_claims(r#"{"sub":"42","exp":20000,"iat":10100}"#);
        assert_eq!(user(verify(SECRET, &future_iat, at(now))), Err(TokenError::NotYetValid));
    }

    #[test]
    fn lifetime_is_capped_from_iat_or_from_now() {
        let now = 1_000_000_000;
        let policy = at(now);
        let cap = policy.max_ttl_secs;
        let token = |iat: Option<i64>, exp: i64| match iat {
            Some(iat) => with_claims(&format!(r#"{{"sub":"42","exp":{exp},"iat":{iat}}}"#)),
            None => with_claims(&format!(r#"{{"sub":"42","exp":{exp}}}"#)),
        };
        assert_eq!(user(verify(SECRET, &token(Some(now - 10), now - 10 + cap), policy)), Ok(USER));
        assert_eq!(
            user(verify(SECRET, &token(Some(now - 10), now - 9 + cap), policy)),
            Err(TokenError::LifetimeTooLong)
        );
        // An ancient iat with a short remaining life is still a too-long token.
        assert_eq!(user(verify(SECRET, &token(Some(0), now + 60), policy)), Err(TokenError::LifetimeTooLong));
        assert_eq!(user(verify(SECRET, &token(None, now + cap), policy)), Ok(USER));
        assert_eq!(
            user(verify(SECRET, &token(None, now + cap + 1), policy)),
            Err(TokenError::LifetimeTooLong)
        );
    }

    #[test]
    fn critical_header_extensions_are_refused() {
        for header in [
            r#"{"alg":"HS256","crit":["exp"]}"#,
            r#"{"alg":"HS256","crit":[]}"#,
            r#"{"alg":"HS256","crit":["b64"],"b64":false}"#,
        ] {
            let t = sign(header, r#"{"sub":"42","exp":99999999999}"#);
            assert_eq!(user(verify(SECRET, &t, at(0))), Err(TokenError::CriticalExtension), "{header}");
        }
    }

    #[test]
    fn forged_or_altered_tokens_fail() {
        let t = issue(b"other", USER, 1000, 2000);
        assert_eq!(user(verify(SECRET, &t, at(1500))), Err(TokenError::BadSignature));
        let good = issue(SECRET, USER, 1000, 2000);
        let mut parts: Vec<&str> = good.split('.').collect();
        let evil = B64.encode(br#"{"sub":"1","exp":99999999999}"#);
        parts[1] = &evil;
        assert_eq!(user(verify(SECRET, &parts.join("."), at(1500))), Err(TokenError::BadSignature));
    }

    #[test]
    fn alg_none_is_refused() {
        let header = B64.encode(br#"{"alg":"none"}"#);
        let claims = B64.encode(br#"{"sub":"1","exp":99999999999}"#);
        assert_eq!(
            user(verify(SECRET, &format!("{header}.{claims}."), at(0))),
            Err(TokenError::UnsupportedAlgorithm)
        );
    }

    #[test]
    fn junk_is_malformed() {
        for junk in ["", "a", "a.b", "a.b.c.d", "...", "x.y.z"] {
            assert!(verify(SECRET, junk, at(0)).is_err(), "{junk}");
        }
    }

    #[test]
    fn subject_must_be_an_id() {
        let t = with_claims(r#"{"sub":"-3","exp":99999999999}"#);
        assert_eq!(user(verify(SECRET, &t, at(99999999999 - 10 * DAY))), Err(TokenError::BadSubject));
    }

    #[test]
    fn logout_revokes_tokens_issued_up_to_its_second() {
        assert!(!revoked(Some(100.0), None), "no logout: nothing revoked");
        assert!(!revoked(None, None), "no logout: tokens without iat still work");
        assert!(revoked(None, Some(100)), "after a logout a token without iat is refused");
        assert!(revoked(Some(50.0), Some(100)));
        assert!(revoked(Some(100.0), Some(100)));
        assert!(revoked(Some(100.9), Some(100)), "same second as the logout");
        assert!(!revoked(Some(101.0), Some(100)));
        assert!(!revoked(Some(101.5), Some(100)));
    }

    #[test]
    fn an_apps_own_token_names_its_app_and_no_user() {
        let now = at(1000);
        let scopes = Scopes::parse("read write").unwrap();
        let app = issue_app(SECRET, 77, scopes, 1000, 2000);
        assert_eq!(verify_app(SECRET, &app, now), Ok(AppToken { client: 77, scopes, user: None }));
        // No user route takes it.
        assert_eq!(verify(SECRET, &app, now).map(|v| v.user), Err(TokenError::BadSubject));
        // A user's token issued to an app speaks for that app too; one issued to none does not.
        let grant = Grant { scopes, token_id: 5, client: 77 };
        let user = issue_scoped(SECRET, USER, 1000, 2000, grant);
        assert_eq!(verify_app(SECRET, &user, now), Ok(AppToken { client: 77, scopes, user: Some(USER) }));
        assert_eq!(verify_app(SECRET, &issue(SECRET, USER, 1000, 2000), now), Err(TokenError::BadSubject));
        // Another app's id in the subject, or a bad signature: refused.
        let forged = with_claims(r#"{"sub":"app:78","client_id":"77","exp":2000}"#);
        assert!(verify_app(SECRET, &forged, now).is_err());
        assert_eq!(verify_app(b"other", &app, now), Err(TokenError::BadSignature));
    }
}
