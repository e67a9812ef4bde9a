//! OAuth 2 for the Mastodon-compatible API: scopes, and the checks on a client's parameters.
//!
//! Access tokens are the service's ordinary HS256 tokens with two more claims: `scope` (what the
//! token may do) and `jti` (so `POST /oauth/revoke` can revoke that one token). A token without
//! `scope` (a v1 sign-up token, or one minted by an external issuer) may do everything.

/// A set of the scopes edgefeed knows: `read`, `write`, `follow`, `push` (accepted, grants
/// nothing: there are no push subscriptions), `profile` (Mastodon 4.3: reading one's own account
/// through `verify_credentials`, nothing else) and `admin:read` / `admin:write` (registered for
/// any app, as Mastodon does; nobody is staff through this API, so the admin calls refuse them).
/// Granular scopes (`read:statuses`, `write:follows`, `admin:read:accounts`) count as their
/// family, so a client asking for them gets a token that works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u8);

impl Scopes {
    pub const READ: Scopes = Scopes(1);
    pub const WRITE: Scopes = Scopes(2);
    pub const FOLLOW: Scopes = Scopes(4);
    pub const PUSH: Scopes = Scopes(8);
    pub const PROFILE: Scopes = Scopes(16);
    pub const ADMIN_READ: Scopes = Scopes(32);
    pub const ADMIN_WRITE: Scopes = Scopes(64);
    pub const ALL: Scopes = Scopes(127);
    const NAMES: [(&'static str, Scopes); 7] = [
        ("read", Self::READ),
        ("write", Self::WRITE),
        ("follow", Self::FOLLOW),
        ("push", Self::PUSH),
        ("profile", Self::PROFILE),
        ("admin:read", Self::ADMIN_READ),
        ("admin:write", Self::ADMIN_WRITE),
    ];

    /// Space-separated scopes (OAuth's form; `+` and `,` as clients also send them); `None` if
    /// one is unknown. Empty means `read` (Mastodon's default).
    pub fn parse(text: &str) -> Option<Scopes> {
        let mut set = Scopes(0);
        for word in text.split([' ', '+', ',']).filter(|w| !w.is_empty()) {
            // `admin:read:accounts` belongs to `admin:read`, `read:statuses` to `read`.
            let depth = if word.starts_with("admin:") { 2 } else { 1 };
            let end = word.match_indices(':').nth(depth - 1).map_or(word.len(), |(i, _)| i);
            let family = &word[..end];
            let (_, scope) = Self::NAMES.iter().find(|(name, _)| *name == family)?;
            set.0 |= scope.0;
        }
        Some(if set.0 == 0 { Self::READ } else { set })
    }

    pub fn contains(self, other: Scopes) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn intersect(self, other: Scopes) -> Scopes {
        Scopes(self.0 & other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn bits(self) -> u8 {
        self.0
    }

    pub fn from_bits(bits: u8) -> Scopes {
        Scopes(bits & Self::ALL.0)
    }
}

impl std::fmt::Display for Scopes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> =
            Self::NAMES.iter().filter(|(_, s)| self.contains(*s)).map(|(name, _)| *name).collect();
        f.write_str(&names.join(" "))
    }
}

/// The redirect URI that shows the code on a page instead of redirecting (out of band).
pub const OUT_OF_BAND: &str = "urn:ietf:wg:oauth:2.0:oob";

/// A PKCE `code_challenge` as the authorize request gives it: `S256` only (`plain` would let
/// whoever sees the authorize URL exchange the code), 43 base64url characters (a SHA-256).
pub fn pkce_challenge(challenge: &str, method: Option<&str>) -> Result<String, &'static str> {
    if method.unwrap_or("plain") != "S256" {
        return Err("code_challenge_method must be S256");
    }
    let well_formed = challenge.len() == 43
        && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    well_formed.then(|| challenge.to_string()).ok_or("code_challenge must be a base64url SHA-256")
}

/// Whether `verifier` (43..128 unreserved characters) is the one whose SHA-256, in base64url
/// without padding, is `challenge` (RFC 7636 4.6), compared in constant time.
pub fn pkce_verifies(challenge: &str, verifier: &str) -> bool {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
    if !(43..=128).contains(&verifier.len()) || !verifier.bytes().all(unreserved) {
        return false;
    }
    let hashed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    super::sign::constant_time_eq(hashed.as_bytes(), challenge.as_bytes())
}

/// Whether `uri` is one of the app's registered redirect URIs (newline- or space-separated, as
/// registered): exact match only, so a code is never sent anywhere the app did not name.
pub fn redirect_allowed(registered: &str, uri: &str) -> bool {
    registered.split_whitespace().any(|r| r == uri)
}

/// Whether `uri` may be registered as a redirect URI: as Mastodon accepts them, any absolute
/// URI without a fragment (RFC 6749 §3.1.2: the code is appended as a query) except the schemes
/// a browser runs in the page's place (`javascript:`, `vbscript:`) or renders as a page of the
/// attacker's making (`data:`). Native apps use schemes of their own, not always in RFC 8252's
/// reverse-domain form (Tusky's is `oauth2redirect://com.keylesspalace.tusky/`). The code only
/// ever goes to a URI the app registered, matched exactly ([`redirect_allowed`]).
///
/// Also refused: anything that is not visible ASCII (whitespace separates registered URIs; a URI
/// has no spaces or controls), and what the WHATWG URL parser browsers use does not read as an
/// absolute URI.
pub fn redirect_acceptable(uri: &str) -> bool {
    if uri == OUT_OF_BAND {
        return true;
    }
    if uri.is_empty() || uri.contains('#') || !uri.bytes().all(|b| b.is_ascii_graphic()) {
        return false;
    }
    let Some((scheme, rest)) = uri.split_once(':') else { return false };
    let scheme_syntax = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_syntax || rest.is_empty() {
        return false;
    }
    let scheme = scheme.to_ascii_lowercase();
    if ["javascript", "data", "vbscript"].contains(&scheme.as_str()) {
        return false;
    }
    // `//` required for the web's schemes: the parser would also take `https:host` and guess.
    let web = scheme == "http" || scheme == "https";
    (!web || rest.starts_with("//")) && url::Url::parse(uri).is_ok_and(|u| !web || u.host().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_families_and_print_in_order() {
        let s = Scopes::parse("write read:statuses follow").unwrap();
        assert_eq!(s.to_string(), "read write follow");
        assert_eq!(Scopes::parse("").unwrap(), Scopes::READ);
        assert_eq!(Scopes::parse("read+write").unwrap().to_string(), "read write");
        assert_eq!(Scopes::parse("read admin:write").unwrap().to_string(), "read admin:write");
        assert_eq!(
            Scopes::parse("admin:read:accounts admin:write:reports").unwrap().to_string(),
            "admin:read admin:write"
        );
        assert_eq!(Scopes::parse("profile").unwrap(), Scopes::PROFILE);
        assert_eq!(Scopes::parse("admin"), None);
        assert_eq!(Scopes::parse("admin:delete"), None);
        assert_eq!(
            Scopes::parse("read admin:read:x profile").unwrap().to_string(),
            "read profile admin:read"
        );
        assert!(Scopes::ALL.contains(Scopes::FOLLOW));
        assert!(!Scopes::READ.contains(Scopes::WRITE));
        assert_eq!(Scopes::ALL.intersect(Scopes::parse("read push").unwrap()).to_string(), "read push");
        assert_eq!(Scopes::from_bits(Scopes::ALL.bits()), Scopes::ALL);
    }

    #[test]
    fn redirect_uris_match_exactly() {
        let registered = "https://app.example/cb\nurn:ietf:wg:oauth:2.0:oob";
        assert!(redirect_allowed(registered, "https://app.example/cb"));
        assert!(redirect_allowed(registered, OUT_OF_BAND));
        assert!(!redirect_allowed(registered, "https://app.example/cb/evil"));
    }

    #[test]
    fn redirect_uris_that_may_be_registered() {
        let table = [
            (OUT_OF_BAND, true),
            ("https://app.example/cb", true),
            ("https://app.example:8443/oauth/cb?x=1", true),
            ("HTTPS://app.example/cb", true),
            ("http://127.0.0.1:8000/cb", true),
            ("http://localhost:3000/cb", true),
            // Any absolute URI, as Mastodon: plain http elsewhere and any app scheme too.
            ("http://evil.example/cb", true),
            ("http://10.0.0.1/cb", true),
            ("oauth2redirect://com.keylesspalace.tusky/", true),
            ("com.example.app:/oauth", true),
            ("com.example.app://callback", true),
            ("myapp:/cb", true),
            ("file:///tmp/x", true),
            ("http:127.0.0.1/cb", false),
            ("https:app.example/cb", false),
            ("https://", false),
            ("com.example.app:", false),
            // Schemes a browser runs, or renders as someone's page.
            ("javascript:alert(1)", false),
            ("JavaScript:alert(1)", false),
            ("javascript://x/%0aalert(1)", false),
            ("data:text/html,x", false),
            ("DATA:text/html,x", false),
            ("vbscript:msgbox(1)", false),
            // Fragments (RFC 6749 §3.1.2), and what is not a URI.
            ("https://a.example/cb#frag", false),
            ("https://a.example/#", false),
            ("com.example.app:/cb#x", false),
            ("oauth2redirect://com.keylesspalace.tusky/#", false),
            ("not a uri", false),
            ("/relative/path", false),
            ("https://a.example/c b", false),
            ("https://a.example/\u{e9}", false),
            ("1http://x", false),
            ("", false),
        ];
        for (uri, expected) in table {
            assert_eq!(redirect_acceptable(uri), expected, "{uri}");
        }
    }

    #[test]
    fn pkce_checks_the_verifier_against_the_s256_challenge_of_rfc_7636() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(pkce_challenge(challenge, Some("S256")).as_deref(), Ok(challenge));
        assert!(pkce_challenge(challenge, Some("plain")).is_err());
        assert!(pkce_challenge(challenge, None).is_err(), "the default method is plain: refused");
        assert!(pkce_challenge("short", Some("S256")).is_err());
        assert!(pkce_verifies(challenge, verifier));
        assert!(!pkce_verifies(challenge, &verifier.replace('d', "e")));
        assert!(!pkce_verifies(challenge, "too-short"));
    }
}
