use serde_json::json;

use crate::common::*;

#[test]
fn malformed_json_is_400_and_changes_nothing() {
    let user = register("badjson");
    let auth = format!("Bearer {}", user.token);
    let r = raw(
        "POST",
        "/v1/posts",
        &[("authorization", &auth), ("content-type", "application/json")],
        b"{\"body\": ",
    );
    r.expect_problem(400, "invalid_json");
    let r = raw("POST", "/v1/posts", &[("authorization", &auth)], b"[1,2]");
    r.expect_problem(422, "invalid_field");
    assert_eq!(user.profile()["posts_count"], 0);
}

#[test]
fn oversized_body_is_413() {
    let user = register("big");
    let auth = format!("Bearer {}", user.token);
    let huge = format!("{{\"body\": \"{}\"}}", "a".repeat(70 * 1024));
    let r = raw("POST", "/v1/posts", &[("authorization", &auth)], huge.as_bytes());
    r.expect_problem(413, "payload_too_large");
    assert_eq!(user.profile()["posts_count"], 0);
}

#[test]
fn field_validation_is_422_with_field_name() {
    let user = register("fields");
    let r = user.post("/v1/posts", json!({ "body": "   " }));
    r.expect_problem(422, "invalid_field");
    assert_eq!(r.body["field"], "body");
    let r = user.post("/v1/posts", json!({ "body": "x".repeat(5001) }));
    r.expect_problem(422, "invalid_field");
    let r = user.post("/v1/posts", json!({ "body": "ok", "visibility": "friends" }));
    r.expect_problem(422, "invalid_field");
    assert_eq!(r.body["field"], "visibility");
    let r = user.post("/v1/posts", json!({ "body": 42 }));
    r.expect_problem(422, "invalid_field");
    assert_eq!(user.profile()["posts_count"], 0);
    // 5000 characters (not bytes) is allowed.
    user.post("/v1/posts", json!({ "body": "é".repeat(5000) })).expect(201);
}

#[test]
fn bad_limit_is_422() {
    let user = register("limits");
    for bad in ["0", "101", "-3", "ten"] {
        let r = user.get(&format!("/v1/users/{}/posts?limit={bad}", user.id));
        r.expect_problem(422, "invalid_field");
        assert_eq!(r.body["field"], "limit");
    }
    user.get(&format!("/v1/users/{}/posts?limit=100", user.id)).expect(200);
}

#[test]
fn unknown_route_is_404_and_wrong_method_405() {
    let user = register("routes");
    user.get("/v1/nope").expect_problem(404, "not_found");
    call("GET", "/nope", None, None).expect_problem(404, "not_found");
    // `/` is the web client (a static asset), not a route.
    let home = send("GET", "/", &[], b"");
    assert_eq!(home.status(), 200);
    assert!(home.content_type().starts_with("text/html"), "{}", home.content_type());
    let r = call("DELETE", "/v1/health", None, None);
    r.expect_problem(405, "method_not_allowed");
    assert_eq!(r.allow.as_deref(), Some("GET, HEAD"));
    let r = user.post("/v1/me/following/1", json!({}));
    r.expect_problem(405, "method_not_allowed");
    assert_eq!(r.allow.as_deref(), Some("PUT, DELETE"));
}
