//! HS256 JSON Web Tokens, verified by hand: the format is small and pinning `alg` to HS256
//! ourselves rules out the classic `alg: none` / algorithm-confusion attacks.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::Mac;
use serde::{Deserialize, Serialize};

use super::ids::UserId;
use super::sign::hmac as mac;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    Malformed,
    UnsupportedAlgorithm,
    BadSignature,
    Expired,
    BadSubject,
}

impl TokenError {
    pub fn detail(self) -> &'static str {
        match self {
            Self::Malformed => "the bearer token is not a well-formed JWT",
            Self::UnsupportedAlgorithm => "only HS256 tokens are accepted",
            Self::BadSignature => "the token signature does not verify",
            Self::Expired => "the token has expired",
            Self::BadSubject => "the token subject is not a user id",
        }
    }
}

#[derive(Deserialize)]
struct Header {
    alg: String,
}

#[derive(Serialize, Deserialize)]
struct Claims {
    sub: serde_json::Value,
    exp: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    iat: Option<i64>,
}

/// Mints a token for `user_id` valid until `exp` (unix seconds).
pub fn issue(secret: &[u8], user_id: UserId, iat: i64, exp: i64) -> String {
    let header = B64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = Claims { sub: user_id.to_string().into(), exp: exp.into(), iat: Some(iat) };
    let claims = B64.encode(serde_json::to_vec(&claims).unwrap_or_default());
    let signing_input = format!("{header}.{claims}");
    let mut m = mac(secret);
    m.update(signing_input.as_bytes());
    let sig = B64.encode(m.finalize().into_bytes());
    format!("{signing_input}.{sig}")
}

/// Verifies signature and expiry; returns the user id in `sub`.
pub fn verify(secret: &[u8], token: &str, now_secs: i64) -> Result<UserId, TokenError> {
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    let header: Header = B64
        .decode(header)
        .ok()
        .and_then(|raw| serde_json::from_slice(&raw).ok())
        .ok_or(TokenError::Malformed)?;
    if header.alg != "HS256" {
        return Err(TokenError::UnsupportedAlgorithm);
    }
    let sig = B64.decode(sig).map_err(|_| TokenError::Malformed)?;
    let mut m = mac(secret);
    m.update(&token.as_bytes()[..header_and_claims_len(token)]);
    m.verify_slice(&sig).map_err(|_| TokenError::BadSignature)?;
    let claims: Claims = B64
        .decode(claims)
        .ok()
        .and_then(|raw| serde_json::from_slice(&raw).ok())
        .ok_or(TokenError::Malformed)?;
    let exp = claims.exp.as_f64().ok_or(TokenError::Malformed)?;
    if exp <= now_secs as f64 {
        return Err(TokenError::Expired);
    }
    // `sub` is a string per the JWT spec; a numeric `sub` from a lenient issuer is accepted too.
    let sub = match &claims.sub {
        serde_json::Value::String(s) => UserId::parse(s),
        serde_json::Value::Number(n) => n.as_i64().and_then(|n| UserId::parse(&n.to_string())),
        _ => None,
    };
    sub.ok_or(TokenError::BadSubject)
}

fn header_and_claims_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(0)
}

/// Constant-time equality for secrets such as the admin token.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // Compare MACs of both sides so neither the length nor the first differing byte leaks.
    let tag = |x: &[u8]| {
        let mut m = mac(b"edgefeed/constant-time-eq");
        m.update(x);
        m.finalize().into_bytes()
    };
    let (ta, tb) = (tag(a), tag(b));
    ta.iter().zip(tb.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"s3cret";
    const USER: UserId = UserId::from_trusted(42);

    #[test]
    fn issued_tokens_verify() {
        let t = issue(SECRET, USER, 1000, 2000);
        assert_eq!(verify(SECRET, &t, 1500), Ok(USER));
    }

    #[test]
    fn expiry_is_enforced() {
        let t = issue(SECRET, USER, 1000, 2000);
        assert_eq!(verify(SECRET, &t, 2000), Err(TokenError::Expired));
    }

    #[test]
    fn forged_or_altered_tokens_fail() {
        let t = issue(b"other", USER, 1000, 2000);
        assert_eq!(verify(SECRET, &t, 1500), Err(TokenError::BadSignature));
        let good = issue(SECRET, USER, 1000, 2000);
        let mut parts: Vec<&str> = good.split('.').collect();
        let evil = B64.encode(br#"{"sub":"1","exp":99999999999}"#);
        parts[1] = &evil;
        assert_eq!(verify(SECRET, &parts.join("."), 1500), Err(TokenError::BadSignature));
    }

    #[test]
    fn alg_none_is_refused() {
        let header = B64.encode(br#"{"alg":"none"}"#);
        let claims = B64.encode(br#"{"sub":"1","exp":99999999999}"#);
        assert_eq!(verify(SECRET, &format!("{header}.{claims}."), 0), Err(TokenError::UnsupportedAlgorithm));
    }

    #[test]
    fn junk_is_malformed() {
        for junk in ["", "a", "a.b", "a.b.c.d", "...", "x.y.z"] {
            assert!(verify(SECRET, junk, 0).is_err(), "{junk}");
        }
    }

    #[test]
    fn subject_must_be_an_id() {
        let header = B64.encode(br#"{"alg":"HS256"}"#);
        let claims = B64.encode(br#"{"sub":"-3","exp":99999999999}"#);
        let input = format!("{header}.{claims}");
        let mut m = mac(SECRET);
        m.update(input.as_bytes());
        let t = format!("{input}.{}", B64.encode(m.finalize().into_bytes()));
        assert_eq!(verify(SECRET, &t, 0), Err(TokenError::BadSubject));
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
