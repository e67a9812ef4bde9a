//! Reliability and security: token claims (fractional NumericDates, lifetime cap, nbf, crit),
//! logout revocation, snowflake ids, rate limits and response hygiene (headers, HEAD, 413).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

/// A response with every header (lower-cased names) and the raw body length.
struct Full {
    status: u16,
    headers: HashMap<String, String>,
    body: Value,
    body_len: usize,
}

impl Full {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    #[track_caller]
    fn expect_problem(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.body);
        assert_eq!(self.body["code"], code, "body: {}", self.body);
        assert_eq!(self.header("content-type"), Some("application/problem+json"));
    }
}

fn full(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Full {
    let response = send(method, path, headers, body);
    let status = response.status();
    let headers = response
        .headers_names()
        .into_iter()
        .filter_map(|n| response.header(&n).map(|v| (n.to_ascii_lowercase(), v.to_string())))
        .collect();
    let text = response.into_string().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(if text.is_empty() {
        Value::Null
    } else {
        Value::String(text.clone())
    });
    Full { status, headers, body, body_len: text.len() }
}

fn with_token(method: &str, path: &str, token: &str) -> Full {
    full(method, path, &[("authorization", &format!("Bearer {token}"))], b"")
}

/// Signs raw header and claims JSON with `AUTH_SECRET` (numbers written exactly as given).
fn sign(header: &str, claims: &str) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use base64::Engine;
    use hmac::{Hmac, Mac};
    let input = format!("{}.{}", B64.encode(header), B64.encode(claims));
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(AUTH_SECRET.as_bytes()).unwrap();
    mac.update(input.as_bytes());
    format!("{input}.{}", B64.encode(mac.finalize().into_bytes()))
}

fn claims_token(claims: &str) -> String {
    sign(r#"{"alg":"HS256","typ":"JWT"}"#, claims)
}

const DAY: i64 = 86_400;

#[track_caller]
fn assert_invalid_token(r: &Full) {
    r.expect_problem(401, "unauthorized");
    let challenge = r.header("www-authenticate").unwrap_or("");
    assert!(
        challenge.starts_with("Bearer ") && challenge.contains(r#"error="invalid_token""#),
        "{challenge}"
    );
}

#[test]
fn fractional_and_float_valued_token_times_are_accepted() {
    let user = register("numdate");
    let now = now_secs();
    let (iat, exp) = (now - 10, now + 3600);
    for claims in [
        format!(r#"{{"sub":"{}","iat":{iat}.5,"exp":{exp}}}"#, user.id),
        format!(r#"{{"sub":"{}","iat":{iat}.0,"exp":{exp}}}"#, user.id),
        format!(r#"{{"sub":"{}","iat":{iat}.25,"exp":{exp}.0,"nbf":{iat}.0}}"#, user.id),
        format!(r#"{{"sub":"{}","exp":{exp}.75,"nbf":{iat}.5}}"#, user.id),
    ] {
        let r = with_token("GET", "/v1/me", &claims_token(&claims));
        assert_eq!(r.status, 200, "{claims}: {}", r.body);
        assert_eq!(r.body["id"], user.id.as_str());
    }
    // A NumericDate must be a number.
    let quoted = format!(r#"{{"sub":"{}","iat":"{iat}","exp":{exp}}}"#, user.id);
    assert_invalid_token(&with_token("GET", "/v1/me", &claims_token(&quoted)));
}

#[test]
fn token_lifetime_not_before_and_crit_are_enforced() {
    let user = register("tokrules");
    let now = now_secs();
    let id = &user.id;
    let refused = [
        // Lifetime over TOKEN_MAX_TTL_SECONDS (90 days by default), from iat or from now.
        format!(r#"{{"sub":"{id}","iat":{now},"exp":{}}}"#, now + 91 * DAY),
        format!(r#"{{"sub":"{id}","exp":{}}}"#, now + 91 * DAY),
        format!(r#"{{"sub":"{id}","iat":{},"exp":{}}}"#, now - 365 * DAY, now + 3600),
        // Not before: ten minutes from now is beyond the 60 s leeway; so is an iat from the future.
        format!(r#"{{"sub":"{id}","nbf":{},"exp":{}}}"#, now + 600, now + 3600),
        format!(r#"{{"sub":"{id}","iat":{},"exp":{}}}"#, now + 600, now + 3600),
    ];
    for claims in &refused {
        assert_invalid_token(&with_token("GET", "/v1/me", &claims_token(claims)));
    }
    let accepted = [
        format!(r#"{{"sub":"{id}","iat":{now},"exp":{}}}"#, now + 89 * DAY),
        format!(r#"{{"sub":"{id}","exp":{}}}"#, now + 89 * DAY),
        format!(r#"{{"sub":"{id}","nbf":{},"exp":{}}}"#, now + 20, now + 3600),
        format!(r#"{{"sub":"{id}","nbf":{},"exp":{}}}"#, now - 20, now + 3600),
    ];
    for claims in &accepted {
        let r = with_token("GET", "/v1/me", &claims_token(claims));
        assert_eq!(r.status, 200, "{claims}: {}", r.body);
    }
    // A critical header extension we do not understand makes the token unusable.
    let claims = format!(r#"{{"sub":"{id}","exp":{}}}"#, now + 3600);
    for header in [r#"{"alg":"HS256","crit":["exp"]}"#, r#"{"alg":"HS256","crit":["b64"],"b64":false}"#] {
        assert_invalid_token(&with_token("GET", "/v1/me", &sign(header, &claims)));
    }
    assert_eq!(with_token("GET", "/v1/me", &sign(r#"{"alg":"HS256"}"#, &claims)).status, 200);
    // The refused tokens changed nothing.
    assert_eq!(user.profile()["posts_count"], 0);
}

#[test]
fn every_401_carries_a_bearer_challenge() {
    let r = full("GET", "/v1/me", &[], b"");
    r.expect_problem(401, "unauthorized");
    let challenge = r.header("www-authenticate").unwrap_or("");
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    assert!(!challenge.contains("error="), "no error code without a credential: {challenge}");
    let r = full("GET", "/v1/me", &[("authorization", "Basic dXNlcjpwdw==")], b"");
    r.expect_problem(401, "unauthorized");
    assert!(r.header("www-authenticate").is_some_and(|c| c.starts_with("Bearer")));
    let r = full("GET", "/v1/admin/stats", &[], b"");
    r.expect_problem(401, "unauthorized");
    assert!(r.header("www-authenticate").is_some_and(|c| c.starts_with("Bearer")));
    assert_invalid_token(&with_token("GET", "/v1/feed", "not.a.jwt"));
    let expired = mint_token(AUTH_SECRET, "1", now_secs() - 5);
    assert_invalid_token(&with_token("POST", "/v1/posts", &expired));
}

#[test]
fn token_of_a_user_that_does_not_exist_is_401() {
    let ghost = mint_token(AUTH_SECRET, "9000000000000", now_secs() + 3600);
    assert_invalid_token(&with_token("GET", "/v1/me", &ghost));
    let r = full(
        "POST",
        "/v1/posts",
        &[("authorization", &format!("Bearer {ghost}")), ("content-type", "application/json")],
        br#"{"body":"from nobody"}"#,
    );
    assert_invalid_token(&r);
}

#[test]
fn logout_revokes_every_earlier_token_and_later_ones_work() {
    let user = register("logout");
    let bystander = register("logout_other");
    let now = now_secs();
    let older =
        claims_token(&format!(r#"{{"sub":"{}","iat":{}.5,"exp":{}}}"#, user.id, now - 30, now + 3600));
    let without_iat = mint_token(AUTH_SECRET, &user.id, now + 3600);
    for t in [&user.token, &older, &without_iat] {
        assert_eq!(with_token("GET", "/v1/me", t).status, 200);
    }
    let r = with_token("POST", "/v1/me/logout", &user.token);
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.body_len, 0);
    for t in [&user.token, &older, &without_iat] {
        assert_invalid_token(&with_token("GET", "/v1/me", t));
        assert_invalid_token(&with_token("POST", "/v1/me/logout", t));
    }
    let r = full(
        "POST",
        "/v1/posts",
        &[("authorization", &format!("Bearer {}", user.token)), ("content-type", "application/json")],
        br#"{"body":"after logout"}"#,
    );
    assert_invalid_token(&r);
    // Other users keep their sessions.
    assert_eq!(bystander.profile()["id"], bystander.id.as_str());
    // A token issued after the logout (a later second: iat has whole-second precision) works.
    std::thread::sleep(Duration::from_millis(1100));
    let later = now_secs();
    let fresh = claims_token(&format!(r#"{{"sub":"{}","iat":{later},"exp":{}}}"#, user.id, later + 3600));
    let me = with_token("GET", "/v1/me", &fresh);
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(me.body["posts_count"], 0, "the refused publish created nothing");
}

/// Sends requests until one answers 429 (at most `max`); returns how many were sent before it
/// and the 429. The local limiter counts in fixed windows, so `2 * limit + 1` requests sent
/// within one period always meet a full window.
fn flood_until_429(max: usize, mut send: impl FnMut(usize) -> Full) -> (usize, Full) {
    for i in 0..max {
        let r = send(i);
        if r.status == 429 {
            return (i, r);
        }
    }
    panic!("no 429 after {max} requests");
}

#[track_caller]
fn assert_rate_limited(r: &Full) {
    r.expect_problem(429, "rate_limited");
    let retry: u32 = r.header("retry-after").and_then(|v| v.parse().ok()).expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
}

const REGISTER_LIMIT: usize = 300;
const POSTS_LIMIT: usize = 60;

fn register_from(ip: &str, handle: &str) -> Full {
    let body = json!({ "handle": handle }).to_string();
    full(
        "POST",
        "/v1/users",
        &[("cf-connecting-ip", ip), ("content-type", "application/json")],
        body.as_bytes(),
    )
}

#[test]
fn registration_flood_from_one_ip_is_429_and_creates_nothing() {
    let ip = "203.0.113.77";
    let started = std::time::Instant::now();
    // Invalid bodies are refused cheaply, but they count: the limiter runs before parsing.
    let (sent, r) = flood_until_429(2 * REGISTER_LIMIT + 1, |_| {
        full("POST", "/v1/users", &[("cf-connecting-ip", ip)], b"{}")
    });
    assert!(started.elapsed() < Duration::from_secs(60), "the flood fit in one period");
    assert!(sent >= REGISTER_LIMIT, "a fresh address gets the whole limit: 429 after {sent}");
    assert_rate_limited(&r);
    // A valid registration from that address is refused too, and creates nothing: the handle
    // stays free for someone else. (Retried in the rare case the window rolled over meanwhile.)
    let handle = "flood_victim_handle";
    let refused = (0..3).find_map(|_| {
        let r = register_from(ip, handle);
        assert_ne!(r.status, 201, "{}", r.body);
        (r.status == 429).then_some(r)
    });
    assert_rate_limited(&refused.expect("a 429 for the valid registration"));
    // Other addresses are not affected.
    let r = register_from("198.51.100.9", handle);
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["user"]["handle"], handle);
}

#[test]
fn write_flood_by_one_user_is_429_changes_nothing_and_spares_others() {
    let flooder = register("flooder");
    let other = register("flood_other");
    let post = other.publish("like target", "public");
    let auth = format!("Bearer {}", flooder.token);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    let mut created = 0;
    let (sent, r) = flood_until_429(2 * POSTS_LIMIT + 1, |i| {
        let r = full(
            "POST",
            "/v1/posts",
            &headers,
            json!({ "body": format!("flood {i}") }).to_string().as_bytes(),
        );
        if r.status == 201 {
            created += 1;
        }
        r
    });
    assert_rate_limited(&r);
    assert_eq!(created, sent, "every request before the 429 was published");
    assert!(sent >= POSTS_LIMIT, "dozens of posts in a row are fine: 429 after {sent}");
    assert_eq!(flooder.profile()["posts_count"], created as i64, "the refused publish created nothing");
    // Reads and other classes still work for the flooder; other users can publish.
    flooder.get("/v1/feed").expect(200);
    flooder.put(&format!("/v1/posts/{}/like", post["id"].as_str().unwrap()), None).expect(200);
    other.publish("unaffected", "public");
}

#[track_caller]
fn assert_hygienic(r: &Full) {
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{:?}", r.headers);
    assert_eq!(r.header("cache-control"), Some("no-store"), "{:?}", r.headers);
}

#[test]
fn every_response_is_nosniff_and_no_store() {
    let user = register("hygiene");
    let auth = format!("Bearer {}", user.token);
    let post = user.publish("hello", "public");
    let post_path = format!("/v1/posts/{}", post["id"].as_str().unwrap());
    let responses = [
        full("GET", "/v1/health", &[], b""),
        full("POST", "/v1/users", &[], br#"{"handle":"hygiene_reg"}"#),
        full("GET", "/v1/me", &[("authorization", &auth)], b""),
        full("GET", "/v1/feed", &[("authorization", &auth)], b""),
        full("GET", &post_path, &[("authorization", &auth)], b""),
        full("PUT", &format!("{post_path}/like"), &[("authorization", &auth)], b""),
        full("POST", "/v1/me/logout", &[("authorization", "Bearer nope")], b""),
        full("GET", "/v1/nope", &[], b""),
        full("DELETE", "/v1/health", &[], b""),
        full("GET", "/v1/admin/stats", &[("authorization", &format!("Bearer {ADMIN_TOKEN}"))], b""),
    ];
    let statuses: Vec<u16> = responses.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 201, 200, 200, 200, 200, 401, 404, 405, 200]);
    for r in &responses {
        assert_hygienic(r);
    }
}

#[test]
fn html_pages_refuse_framing_and_send_no_referrer() {
    let pages = [
        // The web client (static assets, headers from public/_headers) ...
        full("GET", "/", &[], b""),
        full("GET", "/app.js", &[], b""),
        // ... and the sign-in page the Worker serves.
        full(
            "GET",
            "/oauth/authorize?client_id=x&redirect_uri=urn:ietf:wg:oauth:2.0:oob&scope=read",
            &[],
            b"",
        ),
    ];
    for page in &pages {
        assert_eq!(page.status, 200, "{:?}", page.headers);
        let csp =
            page.header("content-security-policy").unwrap_or_else(|| panic!("a CSP: {:?}", page.headers));
        let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
        assert!(directives.contains(&"frame-ancestors 'none'"), "{csp}");
        assert!(directives.contains(&"script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-"), "{csp}");
        assert_eq!(page.header("x-frame-options"), Some("DENY"));
        assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    }
    assert!(pages[0].body.as_str().is_some_and(|html| html.contains("<script src=\"/app.js\"")));
    // The headers file configures the assets; it is not one of them.
    assert_eq!(full("GET", "/_headers", &[], b"").status, 404);
}

#[test]
fn head_answers_like_get_without_a_body() {
    let user = register("head");
    let auth = format!("Bearer {}", user.token);
    let post = user.publish("head me", "public");
    let paths = [
        "/v1/health".to_string(),
        "/v1/me".to_string(),
        format!("/v1/users/{}", user.id),
        format!("/v1/posts/{}", post["id"].as_str().unwrap()),
        format!("/v1/users/{}/posts?limit=5", user.id),
        format!("/v1/posts/{}/comments", post["id"].as_str().unwrap()),
        "/v1/posts/9000000000001".to_string(), // 404
        "/v1/feed?limit=0".to_string(),        // 422
    ];
    for path in &paths {
        let get = full("GET", path, &[("authorization", &auth)], b"");
        let head = full("HEAD", path, &[("authorization", &auth)], b"");
        assert_eq!(head.status, get.status, "HEAD {path}");
        assert_eq!(head.body_len, 0, "HEAD {path} has no body");
        assert!(get.body_len > 0, "GET {path} has one");
        for name in ["content-type", "cache-control", "x-content-type-options", "allow", "www-authenticate"] {
            assert_eq!(head.header(name), get.header(name), "{name} of HEAD {path}");
        }
        let length: usize = head.header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        assert_eq!(length, get.body_len, "HEAD {path} announces the GET body's length");
    }
    // Without a token: the same 401 and challenge as GET.
    let (get, head) = (full("GET", "/v1/me", &[], b""), full("HEAD", "/v1/me", &[], b""));
    assert_eq!((head.status, head.body_len), (401, 0));
    assert_eq!(head.header("www-authenticate"), get.header("www-authenticate"));
    // HEAD only where GET is; 405 lists HEAD right after GET, from the route table.
    let r = full("HEAD", "/v1/posts", &[("authorization", &auth)], b"");
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    let r =
        full("PUT", &format!("/v1/posts/{}", post["id"].as_str().unwrap()), &[("authorization", &auth)], b"");
    r.expect_problem(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, HEAD, PATCH, DELETE"));
    let r = full("DELETE", "/v1/health", &[], b"");
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
}

/// A `Read` that yields `total` bytes of a JSON post body in small pieces, so ureq sends it
/// chunked (no Content-Length).
struct Chunked {
    data: Vec<u8>,
    at: usize,
}

impl std::io::Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(4096).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn send_chunked(token: &str, data: Vec<u8>) -> (u16, Value) {
    let url = format!("{}/v1/posts", server().base);
    let req =
        ureq::post(&url).timeout(Duration::from_secs(60)).set("authorization", &format!("Bearer {token}"));
    let response = match req.send(Chunked { data, at: 0 }) {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("chunked POST: transport error {e}"),
    };
    (
        response.status(),
        serde_json::from_str(&response.into_string().unwrap_or_default()).unwrap_or(Value::Null),
    )
}

#[test]
fn oversized_bodies_are_413_even_without_content_length() {
    let user = register("chunky");
    let huge = format!("{{\"body\": \"{}\"}}", "a".repeat(200 * 1024)).into_bytes();
    let (status, body) = send_chunked(&user.token, huge);
    assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{body}");
    // Exactly at the limit is read (and then refused by validation, not by size).
    let at_limit = format!("{{\"body\": \"{}\"}}", "b".repeat(64 * 1024 - 12)).into_bytes();
    assert_eq!(at_limit.len(), 64 * 1024);
    let (status, body) = send_chunked(&user.token, at_limit);
    assert_eq!((status, body["field"].as_str()), (422, Some("body")), "{body}");
    assert_eq!(user.profile()["posts_count"], 0, "nothing was created");
    let (status, body) = send_chunked(&user.token, br#"{"body": "small and chunked"}"#.to_vec());
    assert_eq!(status, 201, "{body}");
    // A declared Content-Length over the limit is refused before anything is read.
    let r = full(
        "POST",
        "/v1/posts",
        &[("authorization", &format!("Bearer {}", user.token))],
        "x".repeat(64 * 1024 + 1).as_bytes(),
    );
    r.expect_problem(413, "payload_too_large");
    assert_hygienic(&r);
    assert_eq!(user.profile()["posts_count"], 1);
}

/// Every test hook answers `404` as an unknown route does when `TEST_HOOKS` is off (the shipped
/// `wrangler.toml`), even to the admin token: fault injection, state dumps and the floor
/// probes exist only on test servers.
#[test]
fn test_hooks_are_404_without_test_hooks() {
    // On the suite's server (hooks on) a hook answers, so the 404 below is the gate's.
    let on = admin("POST", "/v1/admin/test/floor_d1", Some(&json!({})));
    assert_eq!(on.status, 200, "{}", on.body);
    let vars = vec![("TEST_HOOKS".to_string(), "false".to_string())];
    let off = start_server(ServerOptions { label: "no-test-hooks".into(), vars, port: None });
    for (name, _) in edgefeed::http::router::TestHook::ALL {
        let url = format!("{}/v1/admin/test/{name}?all=1", off.base);
        let request = ureq::post(&url).set("authorization", &format!("Bearer {ADMIN_TOKEN}"));
        let response = match request.send_string("{}") {
            Err(ureq::Error::Status(_, r)) | Ok(r) => r,
            Err(e) => panic!("{name}: {e}"),
        };
        assert_eq!(response.status(), 404, "{name} without TEST_HOOKS");
        let body: Value = response.into_json().expect("a problem document");
        assert_eq!(body["code"], "not_found", "{name}: {body}");
    }
    off.kill();
}
