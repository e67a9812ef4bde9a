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

/// Whether `uri` is one of the app's registered redirect URIs (newline- or space-separated, as
/// registered): exact match only, so a code is never sent anywhere the app did not name.
pub fn redirect_allowed(registered: &str, uri: &str) -> bool {
    registered.split_whitespace().any(|r| r == uri)
}

/// A registered redirect URI is the out-of-band marker or an absolute `https:`/`http:` URL (or a
/// custom scheme, as native apps use): no fragments, nothing that is not a URI at all.
pub fn redirect_acceptable(uri: &str) -> bool {
    if uri == OUT_OF_BAND {
        return true;
    }
    let Some((scheme, rest)) = uri.split_once(':') else { return false };
    !rest.is_empty()
        && !uri.contains('#')
        && !uri.chars().any(char::is_whitespace)
        && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
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
        assert!(redirect_acceptable("com.example.app:/oauth"));
        assert!(!redirect_acceptable("https://a.example/#x"));
        assert!(!redirect_acceptable("not a uri"));
        assert!(!redirect_acceptable("1http://x"));
    }
}
