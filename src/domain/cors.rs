//! Cross-origin access (CORS) for browser clients served from other origins. `CORS_ORIGINS`
//! lists the origins allowed (comma-separated, exact `scheme://host[:port]`), `*` allows any;
//! empty (the default) means same-origin only. Credentials travel as bearer tokens, never
//! cookies, so no `Access-Control-Allow-Credentials` is needed and `*` is safe to offer.

/// Request headers a browser client sends.
pub const ALLOW_HEADERS: &str = "authorization, content-type, idempotency-key";
/// Response headers a browser client may read besides the safelisted ones.
pub const EXPOSE_HEADERS: &str = "server-timing, retry-after, www-authenticate, link, location";
/// How long a browser may cache a preflight answer.
pub const MAX_AGE_SECS: u32 = 600;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorsPolicy {
    any: bool,
    origins: Vec<String>,
}

impl CorsPolicy {
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
        self.any || !self.origins.is_empty()
    }

    /// Whether a request with this `Origin` may read the answer.
    pub fn allows(&self, origin: &str) -> bool {
        self.any || self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }

    /// The headers an answer to a request from `origin` carries (none for a same-origin
    /// request or an origin not allowed; `Vary: Origin` whenever the answer depends on it).
    pub fn response_headers(&self, origin: Option<&str>) -> Vec<(&'static str, String)> {
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

    /// The answer to a preflight from `origin` for a path that takes `methods`: `None` when the
    /// origin is not allowed.
    pub fn preflight_headers(&self, origin: &str, methods: &str) -> Option<Vec<(&'static str, String)>> {
        if !self.allows(origin) {
            return None;
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
        assert!(policy.preflight_headers("https://app.example", "GET").is_none());
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
        let pre = policy.preflight_headers("https://x.example", "GET, HEAD, POST").unwrap();
        assert_eq!(header(&pre, "access-control-allow-origin"), Some("https://x.example"));
        assert_eq!(header(&pre, "access-control-allow-methods"), Some("GET, HEAD, POST"));
        assert_eq!(header(&pre, "access-control-allow-headers"), Some(ALLOW_HEADERS));
    }
}
