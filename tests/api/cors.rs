//! CORS: the suite's server allows one origin (`CORS_ORIGIN`) on `/v1`; preflights are answered
//! before authentication, answers carry `Access-Control-*` only for that origin. The Mastodon
//! API's paths are open to every origin (`*`, no credentials), as Mastodon's are.

use crate::common::*;

fn preflight(path: &str, origin: &str) -> ureq::Response {
    preflight_asking(path, origin, "POST", "authorization, content-type")
}

fn preflight_asking(path: &str, origin: &str, method: &str, headers: &str) -> ureq::Response {
    send(
        "OPTIONS",
        path,
        &[
            ("origin", origin),
            ("access-control-request-method", method),
            ("access-control-request-headers", headers),
        ],
        &[],
    )
}

const ANY_ORIGIN: &str = "https://any.example";

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

#[test]
fn mastodon_paths_answer_any_origin_without_credentials() {
    let asked = "authorization, content-type, x-requested-with";
    let r = preflight_asking("/api/v1/timelines/home", ANY_ORIGIN, "GET", asked);
    assert_eq!(r.status(), 204);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.header("access-control-allow-methods"), Some("GET, HEAD"));
    assert_eq!(r.header("access-control-allow-headers"), Some(asked), "the asked headers, echoed");
    assert_eq!(r.header("access-control-allow-credentials"), None);
    // A path that names nothing still passes its preflight, so the app reads the real 404.
    let nope = preflight_asking("/api/v1/nope", ANY_ORIGIN, "GET", "authorization");
    assert_eq!(nope.status(), 204);
    assert_eq!(nope.header("access-control-allow-origin"), Some("*"));
    let methods = nope.header("access-control-allow-methods").unwrap_or("");
    assert!(methods.contains("GET") && methods.contains("DELETE"), "{methods}");
    let missing = send("GET", "/api/v1/nope", &[("origin", ANY_ORIGIN)], &[]);
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.header("access-control-allow-origin"), Some("*"));
    assert_eq!(missing.header("vary"), None, "the answer does not depend on Origin");
    let exposed = missing.header("access-control-expose-headers").unwrap_or("").to_string();
    assert!(exposed.contains("link") && exposed.contains("retry-after"), "{exposed}");
    let body: serde_json::Value = missing.into_json().unwrap();
    assert!(body["error"].is_string(), "Mastodon's error shape: {body}");
}

#[test]
fn errors_and_discovery_documents_on_open_paths_carry_the_star() {
    let unsigned = send("GET", "/api/v1/accounts/verify_credentials", &[("origin", ANY_ORIGIN)], &[]);
    assert_eq!(unsigned.status(), 401);
    assert_eq!(unsigned.header("access-control-allow-origin"), Some("*"));
    let token = send(
        "POST",
        "/oauth/token",
        &[("origin", ANY_ORIGIN), ("content-type", "application/x-www-form-urlencoded")],
        b"grant_type=password&client_id=nope&client_secret=nope&username=a&password=b",
    );
    assert_eq!(token.status(), 401, "an unknown client");
    assert_eq!(token.header("access-control-allow-origin"), Some("*"));
    assert_eq!(preflight("/oauth/revoke", ANY_ORIGIN).header("access-control-allow-origin"), Some("*"));
    for path in ["/.well-known/nodeinfo", "/api/v2/instance"] {
        let r = send("GET", path, &[("origin", ANY_ORIGIN)], &[]);
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{path}");
    }
    // The default avatar and header are static files, open too (apps draw them in canvases).
    for path in ["/avatar.png", "/header.png"] {
        let r = send("GET", path, &[("origin", ANY_ORIGIN)], &[]);
        assert_eq!((r.status(), r.header("content-type")), (200, Some("image/png")), "{path}");
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{path}");
    }
}

#[test]
fn the_sign_in_form_and_v1_keep_the_configured_origins() {
    for path in ["/oauth/authorize", "/v1/feed"] {
        let r = preflight(path, ANY_ORIGIN);
        assert_eq!(r.status(), 403, "{path}");
        assert_eq!(r.header("access-control-allow-origin"), None, "{path}");
    }
    assert_eq!(
        preflight("/oauth/authorize", CORS_ORIGIN).header("access-control-allow-origin"),
        Some(CORS_ORIGIN)
    );
}
