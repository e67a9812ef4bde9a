use serde_json::json;

use crate::common::*;

#[test]
fn health_needs_no_token() {
    let r = call("GET", "/v1/health", None, None);
    assert_eq!(r.expect(200), json!({ "ok": true }));
}

#[test]
fn register_returns_user_and_working_token() {
    let handle = "reg_ok_user";
    let body =
        call("POST", "/v1/users", None, Some(&json!({ "handle": handle, "display_name": "  Reg OK " })))
            .expect(201);
    assert_eq!(body["user"]["handle"], handle);
    assert_eq!(body["user"]["display_name"], "Reg OK");
    assert_eq!(body["user"]["followers_count"], 0);
    assert!(body["user"]["created_at"].as_str().unwrap().ends_with('Z'));
    let token = body["token"].as_str().unwrap();
    let me = call("GET", "/v1/me", Some(token), None).expect(200);
    assert_eq!(me["id"], body["user"]["id"]);
    assert_eq!(me["handle"], handle);
}

#[test]
fn handle_conflicts_and_invalid_handles() {
    let first = register("dup");
    let again =
        call("POST", "/v1/users", None, Some(&json!({ "handle": first.handle, "display_name": "x" })));
    again.expect_problem(409, "handle_taken");
    for bad in ["ab", "Upper", "has-dash", "way_too_long_handle_for_edgefeed_x"] {
        let r = call("POST", "/v1/users", None, Some(&json!({ "handle": bad })));
        r.expect_problem(422, "invalid_field");
        assert_eq!(r.body["field"], "handle");
    }
    let r = call("POST", "/v1/users", None, Some(&json!({ "display_name": "no handle" })));
    r.expect_problem(422, "invalid_field");
}

#[test]
fn display_names_with_bidi_overrides_or_invisible_characters_are_refused_and_create_nothing() {
    let viewer = register("bidi_viewer");
    // U+202E shows "ana\u{202E}lapyap" as "anapaypal"; U+200B makes "an\u{200B}a" look like "ana".
    for (handle, name) in [("bidi_rlo", "ana\u{202E}lapyap"), ("bidi_zwsp", "an\u{200B}a")] {
        let r = call("POST", "/v1/users", None, Some(&json!({ "handle": handle, "display_name": name })));
        r.expect_problem(422, "invalid_field");
        assert_eq!(r.body["field"], "display_name");
        // Nothing was created: the handle is unknown and still free.
        viewer.get(&format!("/v1/users?handle={handle}")).expect_problem(404, "not_found");
        let clean = json!({ "handle": handle, "display_name": "Ana" });
        call("POST", "/v1/users", None, Some(&clean)).expect(201);
    }
}

#[test]
fn missing_forged_and_expired_tokens_are_401() {
    let user = register("tok");
    call("GET", "/v1/me", None, None).expect_problem(401, "unauthorized");
    call("GET", "/v1/me", Some("not.a.jwt"), None).expect_problem(401, "unauthorized");
    let forged = mint_token("some-other-secret", &user.id, now_secs() + 3600);
    call("GET", "/v1/me", Some(&forged), None).expect_problem(401, "unauthorized");
    let expired = mint_token(AUTH_SECRET, &user.id, now_secs() - 10);
    call("GET", "/v1/me", Some(&expired), None).expect_problem(401, "unauthorized");
    // A token minted by an external service sharing the secret works.
    let external = mint_token(AUTH_SECRET, &user.id, now_secs() + 3600);
    assert_eq!(call("GET", "/v1/me", Some(&external), None).expect(200)["id"], user.id.as_str());
    // Basic auth scheme is not a bearer token.
    let r = raw("GET", "/v1/me", &[("authorization", &format!("Basic {}", user.token))], b"");
    r.expect_problem(401, "unauthorized");
}

#[test]
fn admin_routes_need_the_admin_token() {
    let user = register("notadmin");
    let body = json!({ "author_id": user.id, "body": "x", "created_at": "2026-01-01T00:00:00Z" });
    call("POST", "/v1/admin/import/posts", None, Some(&body)).expect_problem(401, "unauthorized");
    call("POST", "/v1/admin/import/posts", Some(&user.token), Some(&body)).expect_problem(403, "not_admin");
    assert_eq!(user.profile()["posts_count"], 0);
}

#[test]
fn user_by_id_has_counts_and_unknown_is_404() {
    let a = register("cnt_a");
    let b = register("cnt_b");
    a.follow(&b);
    b.publish("one", "public");
    let seen = a.get(&format!("/v1/users/{}", b.id)).expect(200);
    assert_eq!(seen["followers_count"], 1);
    assert_eq!(seen["following_count"], 0);
    assert_eq!(seen["posts_count"], 1);
    assert_eq!(a.profile()["following_count"], 1);
    a.get("/v1/users/999999999").expect_problem(404, "not_found");
    a.get("/v1/users/abc").expect_problem(404, "not_found");
}

#[test]
fn a_user_is_found_by_handle_and_says_whether_the_viewer_follows_them() {
    let viewer = register("lookup_viewer");
    let other = register("lookup_other");
    let found = viewer.get(&format!("/v1/users?handle={}", other.handle)).expect(200);
    assert_eq!((found["id"].as_str(), found["following"].as_bool()), (Some(other.id.as_str()), Some(false)));
    viewer.follow(&other);
    let by_id = viewer.get(&format!("/v1/users/{}", other.id)).expect(200);
    assert_eq!(by_id["following"], true);
    assert_eq!(viewer.get(&format!("/v1/users?handle={}", other.handle)).expect(200), by_id);
    // Oneself: no `following`; lists never carry it.
    let me = viewer.get(&format!("/v1/users?handle={}", viewer.handle)).expect(200);
    assert!(me.get("following").is_none(), "{me}");
    let list = viewer.get(&format!("/v1/users/{}/followers", other.id)).expect(200);
    assert!(list["items"][0].get("following").is_none());
    viewer.get("/v1/users?handle=nobody_has_this_handle").expect_problem(404, "not_found");
    viewer.get("/v1/users?handle=NOT%20VALID").expect_problem(422, "invalid_field");
    viewer.get("/v1/users").expect_problem(422, "invalid_field");
    call("GET", &format!("/v1/users?handle={}", other.handle), None, None)
        .expect_problem(401, "unauthorized");
    // A block hides the user exactly like a missing one.
    other.block(&viewer);
    viewer.get(&format!("/v1/users?handle={}", other.handle)).expect_problem(404, "not_found");
}

#[test]
fn a_password_at_sign_up_is_checked_and_never_returned() {
    let short = json!({ "handle": "pw_short_handle", "password": "123456789" });
    let r = call("POST", "/v1/users", None, Some(&short));
    r.expect_problem(422, "invalid_field");
    assert_eq!(r.body["field"], "password");
    // Refused input changes nothing: the handle is still free.
    let ok = json!({ "handle": "pw_short_handle", "password": "1234567890" });
    let created = call("POST", "/v1/users", None, Some(&ok)).expect(201);
    assert!(created["user"].get("password").is_none() && created["user"].get("password_hash").is_none());
    let long = json!({ "handle": "pw_long_handle", "password": "x".repeat(201) });
    call("POST", "/v1/users", None, Some(&long)).expect_problem(422, "invalid_field");
}

#[test]
fn a_handle_raced_by_many_sign_ups_goes_to_exactly_one_and_the_others_leave_nothing() {
    let handle = format!("race{}", std::process::id() % 100_000);
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let handle = handle.clone();
            std::thread::spawn(move || {
                let body = json!({ "handle": handle, "display_name": format!("racer {i}") });
                let r = call("POST", "/v1/users", None, Some(&body));
                (r.status, r.body)
            })
        })
        .collect();
    let results: Vec<(u16, serde_json::Value)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let winners: Vec<&serde_json::Value> =
        results.iter().filter(|(s, _)| *s == 201).map(|(_, b)| b).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for (status, body) in results.iter().filter(|(s, _)| *s != 201) {
        assert_eq!((*status, body["code"].as_str()), (409, Some("handle_taken")), "{body}");
    }
    // The directory and the winner's row agree: the handle's lookup (through the directory)
    // names the winner.
    let viewer = register("race_viewer");
    let found = viewer.get(&format!("/v1/users?handle={handle}")).expect(200);
    assert_eq!(found["id"], winners[0]["user"]["id"]);
    assert_eq!(found["display_name"], winners[0]["user"]["display_name"]);
}
