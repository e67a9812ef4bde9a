//! OAuth 2 for the Mastodon-compatible API: scopes, and the checks on a client's parameters.
//!
//! Access tokens are the service's ordinary HS256 tokens with two more claims: `scope` (what the
//! token may do) and `jti` (so `POST /oauth/revoke` can revoke that one token). A token without
//! `scope` (a v1 sign-up token, or one minted by an external issuer) may do everything.

/// A set of the scopes edgefeed knows: `read`, `write`, `follow`, `push` (accepted, grants
/// nothing: there are no push subscriptions). Granular scopes (`read:statuses`, `write:follows`)
/// count as their family, so a client asking for them gets a token that works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u8);

impl Scopes {
    pub const READ: Scopes = Scopes(1);
    pub const WRITE: Scopes = Scopes(2);
    pub const FOLLOW: Scopes = Scopes(4);
    pub const PUSH: Scopes = Scopes(8);
    pub const ALL: Scopes = Scopes(15);
    const NAMES: [(&'static str, Scopes); 4] =
        [("read", Self::READ), ("write", Self::WRITE), ("follow", Self::FOLLOW), ("push", Self::PUSH)];

    /// Space-separated scopes (OAuth's form; `+` and `,` as clients also send them); `None` if
    /// one is unknown. Empty means `read` (Mastodon's default).
    pub fn parse(text: &str) -> Option<Scopes> {
        let mut set = Scopes(0);
        for word in text.split([' ', '+', ',']).filter(|w| !w.is_empty()) {
            let family = word.split(':').next().unwrap_or(word);
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

/// Whether `uri` may be registered as a redirect URI. The code (and so the account) goes
/// wherever it points, and a browser runs `javascript:`/`data:` targets in the page's place, so
/// only these are accepted (RFC 6749 §3.1.2, RFC 8252 §7):
/// - the out-of-band URN (the code is shown on a page of ours);
/// - `https:` URLs with a host;
/// - `http:` URLs whose host is a loopback address (`localhost`, 127.0.0.0/8, `[::1]`): a native
///   app listening on the device; plain http anywhere else would hand the code to the network;
/// - private-use schemes of native apps, which RFC 8252 wants in reverse-domain form, so the
///   scheme must contain a dot (`com.example.app:/cb`). That also refuses every scheme a browser
///   treats specially (`javascript:`, `data:`, `vbscript:`, `file:`, `about:`, `blob:`): none
///   has a dot.
///
/// Refused everywhere: a fragment (RFC 6749 §3.1.2: the code is appended as a query), and
/// anything that is not visible ASCII (whitespace separates registered URIs; a URI has no
/// spaces or controls). Hosts are read with the WHATWG URL parser browsers use, so
/// `http://localhost@evil.example/` is evil.example, as the browser would see it.
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
    match scheme.to_ascii_lowercase().as_str() {
        // `//` required: the parser would also take `https:host` and guess the authority.
        "https" => rest.starts_with("//") && url::Url::parse(uri).is_ok_and(|u| u.host().is_some()),
        "http" => rest.starts_with("//") && url::Url::parse(uri).is_ok_and(|u| is_loopback(u.host())),
        private => private.contains('.'),
    }
}

fn is_loopback(host: Option<url::Host<&str>>) -> bool {
    match host {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
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
        assert_eq!(Scopes::parse("read admin:write"), None);
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
            // The out-of-band URN, https anywhere, http on loopback only.
            (OUT_OF_BAND, true),
            ("https://app.example/cb", true),
            ("https://app.example:8443/oauth/cb?x=1", true),
            ("HTTPS://app.example/cb", true),
            ("http://127.0.0.1:8000/cb", true),
            ("http://127.8.9.10/cb", true),
            ("http://localhost:3000/cb", true),
            ("http://[::1]:8080/cb", true),
            ("http://evil.example/cb", false),
            ("http://10.0.0.1/cb", false),
            ("http://localhost.evil.example/cb", false),
            ("http://localhost@evil.example/cb", false),
            ("http://[::2]/cb", false),
            ("http:127.0.0.1/cb", false),
            ("https:app.example/cb", false),
            ("https://", false),
            // Native apps' private-use schemes, reverse-domain style.
            ("com.example.app:/oauth", true),
            ("com.example.app://callback", true),
            ("myapp:/cb", false),
            ("com.example.app:", false),
            // Schemes a browser runs or reads locally.
            ("javascript:alert(1)", false),
            ("JavaScript:alert(1)", false),
            ("data:text/html,x", false),
            ("vbscript:msgbox(1)", false),
            ("file:///etc/passwd", false),
            ("about:blank", false),
            ("blob:https://app.example/1234", false),
            // Fragments (RFC 6749 §3.1.2), and what is not a URI.
            ("https://a.example/cb#frag", false),
            ("https://a.example/#", false),
            ("com.example.app:/cb#x", false),
            ("not a uri", false),
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
