//! Cross-origin access (CORS) for browser clients served from other origins. `CORS_ORIGINS`
//! lists the origins allowed on `/v1` (comma-separated, exact `scheme://host[:port]`), `*`
//! allows any; empty (the default) means same-origin only. The Mastodon client API is open to
//! every origin ([`is_open_path`]), as Mastodon's is: browser apps (Phanpy, Elk) run on their own
//! origins and are pointed at any server. Credentials travel as bearer tokens, never cookies, so
//! no `Access-Control-Allow-Credentials` is needed and `*` is safe to offer.

/// Request headers a browser client sends.
pub const ALLOW_HEADERS: &str = "authorization, content-type, idempotency-key";
/// Response headers a browser client may read besides the safelisted ones.
pub const EXPOSE_HEADERS: &str = "server-timing, retry-after, www-authenticate, link, location";
/// How long a browser may cache a preflight answer.
pub const MAX_AGE_SECS: u32 = 600;
/// What a preflight to an open path that names no route answers, so the real request's 404
/// reaches the app readable (instead of a failed preflight it cannot tell from a network error).
pub const ANY_METHOD: &str = "GET, HEAD, POST, PUT, PATCH, DELETE";
/// At most this many request headers are echoed in a preflight's answer.
const MAX_ECHOED_HEADERS: usize = 32;

/// Paths every origin may call: the Mastodon client API, the token endpoints, the discovery
/// documents (`/.well-known/`, `/nodeinfo/`) and uploads' bytes (`/media/`: apps on other
/// origins draw them, some into a canvas, which needs CORS). `/oauth/authorize` is not one: it is the HTML
/// sign-in form, which only the browser's own navigation should reach, so it stays under
/// `CORS_ORIGINS` with `/v1`.
pub fn is_open_path(path: &str) -> bool {
    const PREFIXES: [&str; 4] = ["/api/", "/.well-known/", "/nodeinfo/", "/media/"];
    const EXACT: [&str; 2] = ["/oauth/token", "/oauth/revoke"];
    let path_without_slash = path.strip_suffix('/').unwrap_or(path);
    PREFIXES.iter().any(|p| path.starts_with(p)) || EXACT.contains(&path_without_slash)
}

/// The request headers a preflight asked for (`Access-Control-Request-Headers`), lowercased,
/// keeping only well-formed header names (RFC 9110 tokens): echoing them is how Mastodon's
/// `headers: :any` answers, and the filter keeps anything else out of the answer's header.
fn echoed_headers(requested: &str) -> Option<String> {
    let is_tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let names: Vec<String> = requested
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty() && name.chars().all(is_tchar))
        .take(MAX_ECHOED_HEADERS)
        .map(str::to_ascii_lowercase)
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorsPolicy {
    /// Every origin, answered with `*` (the open paths): the answer does not depend on `Origin`.
    open: bool,
    any: bool,
    origins: Vec<String>,
}

impl CorsPolicy {
    /// The policy of the open paths ([`is_open_path`]).
    pub fn open() -> Self {
        CorsPolicy { open: true, ..CorsPolicy::default() }
    }

    pub fn is_open(&self) -> bool {
        self.open
    }

    pub fn parse(list: &str) -> Self {
        let mut policy = CorsPolicy::default();
        for origin in list.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            if origin == "*" {
                policy.any = true;
            } else {
                policy.origins.push(origin.trim_end_matches('/').to_ascii_lowercase());
            }
        }
        policy
    }

    pub fn is_enabled(&self) -> bool {
        self.open || self.any || !self.origins.is_empty()
    }

    /// Whether a request with this `Origin` may read the answer.
    pub fn allows(&self, origin: &str) -> bool {
        self.open || self.any || self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }

    /// The headers an answer to a request from `origin` carries (none for a same-origin
    /// request or an origin not allowed; `Vary: Origin` whenever the answer depends on it).
    /// Open paths answer `*` to every request, with or without `Origin`, so no `Vary`.
    pub fn response_headers(&self, origin: Option<&str>) -> Vec<(&'static str, String)> {
        if self.open {
            return vec![
                ("access-control-allow-origin", "*".to_string()),
                ("access-control-expose-headers", EXPOSE_HEADERS.to_string()),
            ];
        }
        if !self.is_enabled() {
            return Vec::new();
        }
        let mut headers = vec![("vary", "Origin".to_string())];
        if let Some(origin) = origin.filter(|o| self.allows(o)) {
            headers.push(("access-control-allow-origin", origin.to_string()));
            headers.push(("access-control-expose-headers", EXPOSE_HEADERS.to_string()));
        }
        headers
    }

    /// The answer to a preflight from `origin` for a path that takes `methods`, asking for the
    /// request headers `requested`: `None` when the origin is not allowed. Open paths allow
    /// whatever well-formed headers were asked for (apps send their own, such as
    /// `x-requested-with`); `/v1` allows the headers its clients send.
    pub fn preflight_headers(
        &self,
        origin: &str,
        methods: &str,
        requested: Option<&str>,
    ) -> Option<Vec<(&'static str, String)>> {
        if !self.allows(origin) {
            return None;
        }
        if self.open {
            let echoed = requested.and_then(echoed_headers);
            let mut headers = vec![
                ("access-control-allow-origin", "*".to_string()),
                ("access-control-allow-methods", methods.to_string()),
                ("access-control-allow-headers", echoed.clone().unwrap_or_else(|| ALLOW_HEADERS.to_string())),
                ("access-control-max-age", MAX_AGE_SECS.to_string()),
            ];
            if echoed.is_some() {
                headers.push(("vary", "Access-Control-Request-Headers".to_string()));
            }
            return Some(headers);
        }
        Some(vec![
            ("vary", "Origin".to_string()),
            ("access-control-allow-origin", origin.to_string()),
            ("access-control-allow-methods", methods.to_string()),
            ("access-control-allow-headers", ALLOW_HEADERS.to_string()),
            ("access-control-max-age", MAX_AGE_SECS.to_string()),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'a>(headers: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
        headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn empty_means_same_origin_only() {
        let policy = CorsPolicy::parse("");
        assert!(!policy.is_enabled() && !policy.allows("https://app.example"));
        assert!(policy.response_headers(Some("https://app.example")).is_empty());
        assert!(policy.preflight_headers("https://app.example", "GET", None).is_none());
    }

    #[test]
    fn listed_origins_match_exactly_ignoring_case_and_a_trailing_slash() {
        let policy = CorsPolicy::parse(" https://app.example/ , http://localhost:3000");
        assert!(policy.allows("https://APP.example"));
        assert!(policy.allows("http://localhost:3000"));
        assert!(!policy.allows("https://app.example.evil"));
        assert!(!policy.allows("http://app.example"), "the scheme is part of the origin");
        let allowed = policy.response_headers(Some("https://app.example"));
        assert_eq!(header(&allowed, "access-control-allow-origin"), Some("https://app.example"));
        assert_eq!(header(&allowed, "vary"), Some("Origin"));
        let refused = policy.response_headers(Some("https://other.example"));
        assert_eq!(header(&refused, "access-control-allow-origin"), None);
        assert_eq!(header(&refused, "vary"), Some("Origin"), "the answer still depends on Origin");
    }

    #[test]
    fn star_allows_any_origin_and_preflights_name_the_methods() {
        let policy = CorsPolicy::parse("*");
        let pre = policy.preflight_headers("https://x.example", "GET, HEAD, POST", Some("x-other")).unwrap();
        assert_eq!(header(&pre, "access-control-allow-origin"), Some("https://x.example"));
        assert_eq!(header(&pre, "access-control-allow-methods"), Some("GET, HEAD, POST"));
        assert_eq!(header(&pre, "access-control-allow-headers"), Some(ALLOW_HEADERS));
    }

    #[test]
    fn the_mastodon_api_and_discovery_paths_are_open_and_the_sign_in_form_is_not() {
        for path in ["/api/v1/timelines/home", "/api/v2/instance", "/oauth/token", "/oauth/revoke/"] {
            assert!(is_open_path(path), "{path}");
        }
        for path in ["/.well-known/nodeinfo", "/nodeinfo/2.0", "/api/v1/nope", "/media/1-ab.png"] {
            assert!(is_open_path(path), "{path}");
        }
        for path in ["/oauth/authorize", "/v1/feed", "/", "/api", "/oauth/tokens", "/v1/api/x"] {
            assert!(!is_open_path(path), "{path}");
        }
    }

    #[test]
    fn open_paths_answer_star_without_credentials_or_vary() {
        let open = CorsPolicy::open();
        assert!(open.is_open() && open.allows("https://any.example"));
        for origin in [Some("https://any.example"), None] {
            let headers = open.response_headers(origin);
            assert_eq!(header(&headers, "access-control-allow-origin"), Some("*"));
            assert_eq!(header(&headers, "access-control-expose-headers"), Some(EXPOSE_HEADERS));
            assert_eq!(header(&headers, "vary"), None, "the answer does not depend on Origin");
            assert_eq!(header(&headers, "access-control-allow-credentials"), None);
        }
    }

    #[test]
    fn open_preflights_echo_well_formed_request_headers_only() {
        let open = CorsPolicy::open();
        let asked = Some("Authorization, X-Requested-With ,content-type,bad header,\r\nx: y,");
        let pre = open.preflight_headers("https://any.example", ANY_METHOD, asked).unwrap();
        assert_eq!(header(&pre, "access-control-allow-origin"), Some("*"));
        assert_eq!(header(&pre, "access-control-allow-methods"), Some(ANY_METHOD));
        assert_eq!(
            header(&pre, "access-control-allow-headers"),
            Some("authorization, x-requested-with, content-type")
        );
        assert_eq!(header(&pre, "vary"), Some("Access-Control-Request-Headers"));
        let none_asked = open.preflight_headers("https://any.example", "GET, HEAD", None).unwrap();
        assert_eq!(header(&none_asked, "access-control-allow-headers"), Some(ALLOW_HEADERS));
        assert_eq!(header(&none_asked, "vary"), None);
        let many = vec!["x-a"; 40].join(",");
        let capped = open.preflight_headers("https://any.example", "GET", Some(&many)).unwrap();
        let echoed = header(&capped, "access-control-allow-headers").unwrap();
        assert_eq!(echoed.split(", ").count(), MAX_ECHOED_HEADERS);
    }

    #[test]
    fn the_configured_policy_keeps_its_fixed_header_list() {
        let policy = CorsPolicy::parse("https://app.example");
        let pre = policy.preflight_headers("https://app.example", "GET", Some("x-other")).unwrap();
        assert_eq!(header(&pre, "access-control-allow-headers"), Some(ALLOW_HEADERS));
        assert!(!policy.is_open());
    }
}
