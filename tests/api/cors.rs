//! CORS: the suite's server allows one origin (`CORS_ORIGIN`); preflights are answered before
//! authentication, answers carry `Access-Control-*` only for that origin.

use crate::common::*;

fn preflight(path: &str, origin: &str) -> ureq::Response {
    send(
        "OPTIONS",
        path,
        &[
            ("origin", origin),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "authorization, content-type"),
        ],
        &[],
    )
}

#[test]
fn preflight_from_the_allowed_origin_names_the_paths_methods_and_headers() {
    let r = preflight("/v1/posts/123", CORS_ORIGIN);
    assert_eq!(r.status(), 204);
    assert_eq!(r.header("access-control-allow-origin"), Some(CORS_ORIGIN));
    assert_eq!(r.header("access-control-allow-methods"), Some("GET, HEAD, PATCH, DELETE"));
    let allowed = r.header("access-control-allow-headers").unwrap_or("");
    assert!(allowed.contains("authorization") && allowed.contains("content-type"), "{allowed}");
    assert!(r.header("access-control-max-age").is_some());
    assert_eq!(r.header("vary"), Some("Origin"));
}

#[test]
fn preflight_from_another_origin_or_to_no_route_is_refused() {
    let r = preflight("/v1/feed", "https://evil.example");
    assert_eq!(r.status(), 403);
    assert_eq!(r.header("access-control-allow-origin"), None);
    assert_eq!(preflight("/v1/nothing/here", CORS_ORIGIN).status(), 404);
    // An OPTIONS that is not a preflight is routed as before.
    assert_eq!(send("OPTIONS", "/v1/feed", &[], &[]).status(), 405);
}

#[test]
fn answers_carry_cors_headers_only_for_the_allowed_origin() {
    let user = register("cors_user");
    let auth = format!("Bearer {}", user.token);
    let ok = send("GET", "/v1/me", &[("authorization", &auth), ("origin", CORS_ORIGIN)], &[]);
    assert_eq!(ok.status(), 200);
    assert_eq!(ok.header("access-control-allow-origin"), Some(CORS_ORIGIN));
    let exposed = ok.header("access-control-expose-headers").unwrap_or("");
    assert!(exposed.contains("server-timing") && exposed.contains("retry-after"), "{exposed}");
    // Errors too: a browser client must be able to read a 401's problem+json.
    let denied = send("GET", "/v1/me", &[("origin", CORS_ORIGIN)], &[]);
    assert_eq!(denied.status(), 401);
    assert_eq!(denied.header("access-control-allow-origin"), Some(CORS_ORIGIN));
    let other = send("GET", "/v1/me", &[("authorization", &auth), ("origin", "https://evil.example")], &[]);
    assert_eq!(other.status(), 200, "CORS is enforced by browsers; the server only withholds the headers");
    assert_eq!(other.header("access-control-allow-origin"), None);
    assert_eq!(other.header("vary"), Some("Origin"));
    let same_origin = send("GET", "/v1/me", &[("authorization", &auth)], &[]);
    assert_eq!(same_origin.header("access-control-allow-origin"), None);
}
