//! What apps send is kept or refused, never dropped (issue #30): parameters edgefeed does not
//! build, content warnings, replies as statuses, the protocol details apps trip on, sign-in for
//! every app, one notification group key, and password guessing throttled.

use serde_json::{json, Value};

use crate::common::*;
use crate::mastodon::{
    app, authorize, authorize_from, form, password_token, register_with_password, urlencode, PASSWORD,
};

fn bearer(user: &User) -> String {
    format!("Bearer {}", user.token)
}

/// A request with a form body (`application/x-www-form-urlencoded`) and the user's token.
fn form_as(user: &User, method: &str, path: &str, fields: &[(&str, &str)]) -> Resp {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", urlencode(v))).collect();
    let auth = bearer(user);
    let headers = [("content-type", "application/x-www-form-urlencoded"), ("authorization", auth.as_str())];
    raw(method, path, &headers, body.join("&").as_bytes())
}

/// The same as a `multipart/form-data` body.
fn multipart_as(user: &User, method: &str, path: &str, fields: &[(&str, &str)]) -> Resp {
    let mut body = String::new();
    for (k, v) in fields {
        body.push_str(&format!("--XyZ\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"));
    }
    body.push_str("--XyZ--\r\n");
    let auth = bearer(user);
    let headers = [("content-type", "multipart/form-data; boundary=XyZ"), ("authorization", auth.as_str())];
    raw(method, path, &headers, body.as_bytes())
}

fn statuses_count(user: &User) -> i64 {
    call("GET", &format!("/api/v1/accounts/{}", user.id), Some(&user.token), None).expect(200)
        ["statuses_count"]
        .as_i64()
        .unwrap()
}

#[track_caller]
fn refused_naming(r: &Resp, param: &str) {
    assert_eq!(r.status, 422, "{param}: {}", r.body);
    let error = r.body["error"].as_str().unwrap_or_default();
    assert!(error.contains(param), "{param}: {}", r.body);
}

/// A refused parameter: its name, a JSON value, and the same as form fields.
type Refused = (&'static str, Value, &'static [(&'static str, &'static str)]);

#[test]
fn parameters_edgefeed_does_not_build_are_refused_and_change_nothing() {
    let user = register("apps_params");
    let refused: [Refused; 4] = [
        // A poll is built (tests/api/post_extras.rs), but not one of a single option.
        (
            "poll",
            json!({ "options": ["a"], "expires_in": 300 }),
            &[("poll[options][]", "a"), ("poll[expires_in]", "300")],
        ),
        // Scheduled posts are built (tests/api/scheduled.rs), but not decades ahead.
        ("scheduled_at", json!("2099-01-01T00:00:00Z"), &[("scheduled_at", "2099-01-01T00:00:00Z")]),
        ("media_ids", json!(["1"]), &[("media_ids[]", "1")]),
        ("media_ids", json!("1"), &[("media_ids", "1")]),
    ];
    for (param, value, form_fields) in refused {
        let body = json!({ "status": "should not go out", param: value });
        refused_naming(&call("POST", "/api/v1/statuses", Some(&user.token), Some(&body)), param);
        let mut fields = vec![("status", "should not go out")];
        fields.extend_from_slice(form_fields);
        refused_naming(&form_as(&user, "POST", "/api/v1/statuses", &fields), param);
        refused_naming(&multipart_as(&user, "POST", "/api/v1/statuses", &fields), param);
        // /v1 refuses the same, as problem+json.
        let v1 = json!({ "body": "should not go out", param: value });
        call("POST", "/v1/posts", Some(&user.token), Some(&v1)).expect_problem(422, "invalid_field");
    }
    assert_eq!(statuses_count(&user), 0, "nothing was published");
    // Empty values and the language are accepted.
    let fine =
        json!({ "status": "plain", "media_ids": [], "poll": null, "language": "en", "scheduled_at": null });
    call("POST", "/api/v1/statuses", Some(&user.token), Some(&fine)).expect(200);
    let fields = [("status", "plain form"), ("media_ids[]", ""), ("language", "de")];
    form_as(&user, "POST", "/api/v1/statuses", &fields).expect(200);
    assert_eq!(statuses_count(&user), 2);
    // An edit with a poll changes nothing.
    let post = user.publish("the original", "public");
    let path = format!("/api/v1/statuses/{}", id_of(&post));
    let edit = json!({ "status": "changed", "poll": { "options": ["x", "y"], "expires_in": 60 } });
    refused_naming(&call("PUT", &path, Some(&user.token), Some(&edit)), "poll");
    assert_eq!(call("GET", &path, Some(&user.token), None).expect(200)["content"], "<p>the original</p>");
    // A follow asking to be told of every post is refused; one that does not is a follow.
    let other = register("apps_params_other");
    let follow = format!("/api/v1/accounts/{}/follow", other.id);
    refused_naming(&form_as(&user, "POST", &follow, &[("notify", "true")]), "notify");
    refused_naming(
        &call("POST", &follow, Some(&user.token), Some(&json!({ "languages": ["en"] }))),
        "languages",
    );
    let rel = format!("/api/v1/accounts/relationships?id[]={}", other.id);
    assert_eq!(call("GET", &rel, Some(&user.token), None).expect(200)[0]["following"], false);
    let followed = form_as(&user, "POST", &follow, &[("notify", "false"), ("reblogs", "true")]).expect(200);
    assert_eq!(followed["following"], true);
}

#[test]
fn content_warnings_are_stored_returned_edited_and_kept_on_replies() {
    let author = register("apps_cw_author");
    let reader = register("apps_cw_reader");
    reader.follow(&author);
    let fields =
        [("status", "the ending is a twist"), ("spoiler_text", "film spoilers"), ("sensitive", "true")];
    let status = form_as(&author, "POST", "/api/v1/statuses", &fields).expect(200);
    assert_eq!(
        (status["spoiler_text"].clone(), status["sensitive"].clone()),
        (json!("film spoilers"), json!(true))
    );
    let id = status["id"].as_str().unwrap().to_string();
    // A warning text alone makes it sensitive, as in Mastodon.
    let json_body = json!({ "status": "x", "spoiler_text": "cw only" });
    let second = call("POST", "/api/v1/statuses", Some(&author.token), Some(&json_body)).expect(200);
    assert_eq!(second["sensitive"], true);
    // Everywhere it is read: the status, the reader's home timeline, /v1.
    let path = format!("/api/v1/statuses/{id}");
    assert_eq!(call("GET", &path, Some(&reader.token), None).expect(200)["spoiler_text"], "film spoilers");
    let home = poll("the warned post in the reader's home", std::time::Duration::from_secs(30), || {
        let page = call("GET", "/api/v1/timelines/home", Some(&reader.token), None).expect(200);
        page.as_array().unwrap().iter().find(|s| s["id"] == id.as_str()).cloned()
    });
    assert_eq!(
        (home["spoiler_text"].clone(), home["sensitive"].clone()),
        (json!("film spoilers"), json!(true))
    );
    let v1 = reader.get(&format!("/v1/posts/{id}")).expect(200);
    assert_eq!((v1["spoiler_text"].clone(), v1["sensitive"].clone()), (json!("film spoilers"), json!(true)));
    // Edited through both APIs; the text stays while only the warning changes.
    let edited =
        call("PUT", &path, Some(&author.token), Some(&json!({ "spoiler_text": "plot" }))).expect(200);
    assert_eq!(
        (edited["spoiler_text"].clone(), edited["content"].clone()),
        (json!("plot"), json!("<p>the ending is a twist</p>"))
    );
    assert!(edited["edited_at"].is_string());
    let cleared = author
        .patch(&format!("/v1/posts/{id}"), json!({ "spoiler_text": "", "sensitive": false }))
        .expect(200);
    assert_eq!((cleared["spoiler_text"].clone(), cleared["sensitive"].clone()), (json!(""), json!(false)));
    call("PUT", &path, Some(&author.token), Some(&json!({ "spoiler_text": "x".repeat(501) }))).expect(422);
    let v1_new =
        author.post("/v1/posts", json!({ "body": "v1 warned", "spoiler_text": "v1 cw" })).expect(201);
    assert_eq!((v1_new["spoiler_text"].clone(), v1_new["sensitive"].clone()), (json!("v1 cw"), json!(true)));
    // A reply carries its own warning, shown in the post's context.
    let reply_fields = [("status", "agreed"), ("in_reply_to_id", id.as_str()), ("spoiler_text", "reply cw")];
    let reply = form_as(&reader, "POST", "/api/v1/statuses", &reply_fields).expect(200);
    assert_eq!((reply["spoiler_text"].clone(), reply["sensitive"].clone()), (json!("reply cw"), json!(true)));
    let context = call("GET", &format!("{path}/context"), Some(&author.token), None).expect(200);
    assert_eq!(context["descendants"][0]["spoiler_text"], "reply cw");
}

#[test]
fn replies_take_the_advertised_length_and_their_author_edits_them() {
    let author = register("apps_reply_author");
    let replier = register("apps_reply_replier");
    let post = author.publish("say something long", "public");
    let long = "y".repeat(5000);
    let fields = [("status", long.as_str()), ("in_reply_to_id", &id_of(&post))];
    let reply = form_as(&replier, "POST", "/api/v1/statuses", &fields).expect(200);
    let too_long = "y".repeat(5001);
    let fields = [("status", too_long.as_str()), ("in_reply_to_id", &id_of(&post))];
    assert_eq!(form_as(&replier, "POST", "/api/v1/statuses", &fields).status, 422);
    let instance = call("GET", "/api/v2/instance", None, None).expect(200);
    assert_eq!(instance["configuration"]["statuses"]["max_characters"], 5000);
    // Edited by its author (text and warning); nobody else may.
    let path = format!("/api/v1/statuses/{}", reply["id"].as_str().unwrap());
    let edit = json!({ "status": "shorter now", "spoiler_text": "edited" });
    let edited = call("PUT", &path, Some(&replier.token), Some(&edit)).expect(200);
    assert_eq!(
        (edited["content"].clone(), edited["spoiler_text"].clone()),
        (json!("<p>shorter now</p>"), json!("edited"))
    );
    assert!(edited["edited_at"].is_string());
    assert_eq!(edited["in_reply_to_id"], id_of(&post).as_str());
    let theirs = call("PUT", &path, Some(&author.token), Some(&json!({ "status": "hijacked" })));
    assert_eq!(theirs.status, 403, "{}", theirs.body);
    // A reply is a post: its visibility may narrow, never widen past what it answers.
    let narrowed = call("PUT", &path, Some(&replier.token), Some(&json!({ "visibility": "private" })));
    assert_eq!(narrowed.expect(200)["visibility"], "private");
    let widened = call("PUT", &path, Some(&replier.token), Some(&json!({ "visibility": "public" })));
    assert_eq!(widened.status, 422, "{}", widened.body);
    assert_eq!(call("GET", &path, Some(&replier.token), None).expect(200)["content"], "<p>shorter now</p>");
    // Followers-only now: the author of the post it answers still sees it (a reply is
    // addressed to the account it answers, as a mention would make it); a stranger does not.
    assert_eq!(call("GET", &path, Some(&author.token), None).status, 200);
    let stranger = register("apps_reply_stranger");
    assert_eq!(call("GET", &path, Some(&stranger.token), None).status, 404);
}

#[test]
fn a_foreign_acct_finds_nobody_here() {
    let user = register("apps_acct");
    let handle = user.handle.as_str();
    let lookup =
        |acct: &str| call("GET", &format!("/api/v1/accounts/lookup?acct={acct}"), Some(&user.token), None);
    assert_eq!(lookup(&format!("{handle}@mastodon.example")).status, 404);
    assert_eq!(lookup(handle).expect(200)["id"], user.id.as_str());
    let domain = server().base.split("://").nth(1).unwrap().to_string();
    assert_eq!(lookup(&format!("{handle}@{domain}")).expect(200)["id"], user.id.as_str());
    let search = |q: &str| call("GET", &format!("/api/v2/search?q={q}"), Some(&user.token), None).expect(200);
    assert_eq!(search(&format!("{handle}@mastodon.example"))["accounts"], json!([]));
    assert_eq!(search(&format!("@{handle}"))["accounts"][0]["id"], user.id.as_str());
}

#[test]
fn a_token_is_revoked_only_by_its_own_client() {
    let user = register_with_password("apps_revoke");
    let mine = app("read", "urn:ietf:wg:oauth:2.0:oob");
    let other = app("read", "urn:ietf:wg:oauth:2.0:oob");
    let token =
        password_token(&user, &mine, "read").expect(200)["access_token"].as_str().unwrap().to_string();
    let revoke = |client: &(String, String)| {
        let fields = [
            ("client_id", client.0.as_str()),
            ("client_secret", client.1.as_str()),
            ("token", token.as_str()),
        ];
        form("/oauth/revoke", &fields)
    };
    let refused = revoke(&other);
    assert_eq!((refused.status, refused.body["error"].as_str()), (403, Some("unauthorized_client")));
    call("GET", "/api/v1/accounts/verify_credentials", Some(&token), None).expect(200);
    assert_eq!(revoke(&mine).expect(200), json!({}));
    assert_eq!(call("GET", "/api/v1/accounts/verify_credentials", Some(&token), None).status, 401);
}

#[test]
fn multipart_bodies_are_read_wherever_forms_are() {
    let user = register_with_password("apps_multipart");
    let status = multipart_as(
        &user,
        "POST",
        "/api/v1/statuses",
        &[("status", "from a multipart form"), ("visibility", "private")],
    )
    .expect(200);
    assert_eq!(
        (status["content"].clone(), status["visibility"].clone()),
        (json!("<p>from a multipart form</p>"), json!("private"))
    );
    // The app registration and the token grant take it too.
    let headers = [("content-type", "multipart/form-data; boundary=b")];
    let body = "--b\r\nContent-Disposition: form-data; name=\"client_name\"\r\n\r\nmultipart app\r\n\
                --b\r\nContent-Disposition: form-data; name=\"scopes\"\r\n\r\nread write\r\n--b--\r\n";
    let registered = raw("POST", "/api/v1/apps", &headers, body.as_bytes()).expect(200);
    assert_eq!(registered["name"], "multipart app");
    let broken = raw("POST", "/api/v1/apps", &headers, b"--b\r\nno end");
    assert_eq!(broken.status, 400, "{}", broken.body);
}

#[test]
fn every_app_can_sign_in_tusky_and_profile_and_admin_scopes_included() {
    let user = register_with_password("apps_tusky");
    let tusky = "oauth2redirect://com.keylesspalace.tusky/";
    let client = app("read write follow push", tusky);
    let location = authorize(&client.0, tusky, &user, &[]).expect("a code for Tusky");
    assert!(location.starts_with(&format!("{tusky}?code=")), "{location}");
    // `profile`: verify_credentials and nothing else.
    let profile_app = app("profile", "urn:ietf:wg:oauth:2.0:oob");
    let granted = password_token(&user, &profile_app, "profile").expect(200);
    assert_eq!(granted["scope"], "profile");
    let token = granted["access_token"].as_str().unwrap();
    let me = call("GET", "/api/v1/accounts/verify_credentials", Some(token), None).expect(200);
    assert_eq!(me["id"], user.id.as_str());
    assert_eq!(call("GET", "/api/v1/timelines/home", Some(token), None).status, 403);
    assert_eq!(call("GET", &format!("/api/v1/accounts/{}", user.id), Some(token), None).status, 403);
    // Admin scopes register, and the admin calls refuse them (nobody is staff here).
    let admin_app = app("read admin:read admin:write:accounts", "urn:ietf:wg:oauth:2.0:oob");
    let granted = password_token(&user, &admin_app, "read admin:read").expect(200);
    let token = granted["access_token"].as_str().unwrap();
    let refused = call("GET", "/api/v1/admin/accounts", Some(token), None);
    assert_eq!((refused.status, refused.body["error"].as_str()), (403, Some("This action is not allowed")));
    call("GET", "/api/v1/timelines/home", Some(token), None).expect(200);
    let plain = password_token(&user, &admin_app, "read").expect(200);
    assert_eq!(call("GET", "/api/v1/admin/accounts", plain["access_token"].as_str(), None).status, 403);
    // Push subscriptions (tests/api/push.rs): none yet, so reading or changing one is
    // Mastodon's 404, an empty subscription is refused and removing none answers `{}`;
    // featured tags: none.
    let none = json!({ "error": "Record not found" });
    for (method, status, body) in [("GET", 404, none.clone()), ("PUT", 404, none), ("DELETE", 200, json!({}))]
    {
        let r = call(method, "/api/v1/push/subscription", Some(&user.token), Some(&json!({})));
        assert_eq!((r.status, r.body.clone()), (status, body), "{method}");
    }
    let r = call("POST", "/api/v1/push/subscription", Some(&user.token), Some(&json!({})));
    assert_eq!(r.status, 422, "{}", r.body);
    let tags = call("GET", &format!("/api/v1/accounts/{}/featured_tags", user.id), Some(&user.token), None);
    assert_eq!(tags.expect(200), json!([]));
}

#[test]
fn v1_and_v2_notifications_carry_the_same_group_key() {
    let author = register("apps_gk_author");
    let fan = register("apps_gk_fan");
    let post = author.publish("like me", "public");
    call("POST", &format!("/api/v1/statuses/{}/favourite", id_of(&post)), Some(&fan.token), None).expect(200);
    fan.follow(&author);
    let reply = json!({ "status": "hello", "in_reply_to_id": id_of(&post) });
    call("POST", "/api/v1/statuses", Some(&fan.token), Some(&reply)).expect(200);
    let v1 = poll("three v1 notifications", std::time::Duration::from_secs(30), || {
        let page = call("GET", "/api/v1/notifications", Some(&author.token), None).expect(200);
        (page.as_array().unwrap().len() == 3).then_some(page)
    });
    let v2 = call("GET", "/api/v2/notifications", Some(&author.token), None).expect(200);
    for n in v1.as_array().unwrap() {
        let key = n["group_key"].as_str().unwrap();
        let kind = n["type"].as_str().unwrap();
        match kind {
            "favourite" => assert!(key.starts_with(&format!("favourite-{}-", id_of(&post))), "{key}"),
            "follow" => assert!(key.starts_with("follow-"), "{key}"),
            _ => assert_eq!(key, format!("ungrouped-{}", n["id"].as_str().unwrap())),
        }
        let group = v2["notification_groups"].as_array().unwrap().iter().find(|g| g["group_key"] == key);
        assert!(group.is_some_and(|g| g["type"] == kind), "{kind} {key} in v2: {v2}");
    }
}

fn sign_in_from(ip: &str, username: &str, password: &str, client: &(String, String)) -> ureq::Response {
    let fields = [
        ("grant_type", "password"),
        ("client_id", client.0.as_str()),
        ("client_secret", client.1.as_str()),
        ("username", username),
        ("password", password),
        ("scope", "read"),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", urlencode(v))).collect();
    let headers = [("content-type", "application/x-www-form-urlencoded"), ("cf-connecting-ip", ip)];
    send("POST", "/oauth/token", &headers, body.join("&").as_bytes())
}

#[track_caller]
fn throttled(r: ureq::Response, most_secs: u64) {
    assert_eq!(r.status(), 429);
    let retry: u64 = r.header("retry-after").and_then(|v| v.parse().ok()).expect("Retry-After");
    assert!((1..=most_secs).contains(&retry), "Retry-After {retry}");
}

/// Ends a sign-in throttle key's window (test hook); how many windows it ended.
fn end_window(key: &str) -> Value {
    admin("POST", "/v1/admin/test/end_sign_in_window", Some(&json!({ "key": key }))).expect(200)["ended"]
        .clone()
}

#[test]
fn password_guessing_is_throttled_per_address_and_per_account() {
    let user = register_with_password("apps_guess");
    let client = app("read", "urn:ietf:wg:oauth:2.0:oob");
    let handle = user.handle.as_str();
    // Per address: 25 failures (against accounts that do not exist), then even the right
    // password from that address waits; from another address it works at once.
    let address = format!("198.51.100.{}", std::process::id() % 250);
    for i in 0..25 {
        assert_eq!(sign_in_from(&address, &format!("nobody{i}"), "wrong password", &client).status(), 400);
    }
    throttled(sign_in_from(&address, handle, PASSWORD, &client), 300);
    assert_eq!(sign_in_from("203.0.113.1", handle, PASSWORD, &client).status(), 200);
    // Per account: 20 failures from 20 addresses, then each of them waits, even with the
    // right password; an address that was not guessing signs in.
    for i in 0..20 {
        let ip = format!("192.0.2.{}", i + 1);
        assert_eq!(sign_in_from(&ip, handle, "wrong password", &client).status(), 400);
    }
    throttled(sign_in_from("192.0.2.1", handle, PASSWORD, &client), 900);
    // The form of the sign-in page counts the same failures and refuses the same way.
    let page = authorize_from(Some("192.0.2.2"), &client.0, "urn:ietf:wg:oauth:2.0:oob", &user, &[]);
    assert_eq!(page.err(), Some(429));
    assert_eq!(sign_in_from("203.0.113.2", handle, PASSWORD, &client).status(), 200);
    // After the window (ended here by the test hook), the right password works again.
    assert_eq!(end_window(&format!("acct:{handle}")), 1);
    assert_eq!(sign_in_from("192.0.2.1", handle, PASSWORD, &client).status(), 200);
    end_window(&format!("ip:{address}"));
    assert_eq!(sign_in_from(&address, handle, PASSWORD, &client).status(), 200);
}

/// Issue 38: wrong passwords from a few addresses used to lock the owner out for 15 minutes
/// (`429 retry after 897 s` from anywhere); now they lock out only the addresses guessing.
#[test]
fn guessers_over_the_account_limit_are_refused_but_the_owner_signs_in_from_a_clean_address() {
    let user = register_with_password("apps_owner");
    let redirect = "https://owner.example/cb";
    let client = app("read", redirect);
    let handle = user.handle.as_str();
    let guessers = ["198.18.0.1", "198.18.0.2", "198.18.0.3"];
    // 60 wrong passwords in turns from 3 addresses: the account's 20, then 429 for each.
    for i in 0..60 {
        let r = sign_in_from(guessers[i % 3], handle, "wrong password", &client);
        if i < 20 {
            assert_eq!(r.status(), 400, "guess {i}");
        } else {
            throttled(r, 900);
        }
    }
    // A guessing address is refused even with the right password, by token and by form.
    for guesser in guessers {
        throttled(sign_in_from(guesser, handle, PASSWORD, &client), 900);
    }
    assert_eq!(authorize_from(Some(guessers[0]), &client.0, redirect, &user, &[]).err(), Some(429));
    // The owner from a 4th address, clean: signed in, by token (twice) and by form.
    for _ in 0..2 {
        let r = sign_in_from("198.18.0.4", handle, PASSWORD, &client);
        assert_eq!(r.status(), 200);
        let body: Value = r.into_json().unwrap();
        assert!(body["access_token"].as_str().is_some_and(|t| !t.is_empty()), "{body}");
    }
    let form = authorize_from(Some("198.18.0.4"), &client.0, redirect, &user, &[]);
    assert!(form.as_ref().is_ok_and(|to| to.contains("code=")), "{form:?}");
    // A fresh address gets one guess while the account is over, then it is a guesser too.
    assert_eq!(sign_in_from("198.18.0.5", handle, "wrong password", &client).status(), 400);
    throttled(sign_in_from("198.18.0.5", handle, PASSWORD, &client), 900);
}

#[test]
fn one_address_guessing_one_account_meets_the_pair_limit_before_the_address_limit() {
    let user = register_with_password("apps_pair");
    let other = register_with_password("apps_pair_other");
    let client = app("read", "urn:ietf:wg:oauth:2.0:oob");
    let handle = user.handle.as_str();
    let address = "198.18.1.1";
    for i in 0..10 {
        assert_eq!(sign_in_from(address, handle, "wrong password", &client).status(), 400, "guess {i}");
    }
    throttled(sign_in_from(address, handle, PASSWORD, &client), 900);
    // Not the address's limit (10 of 25): the same address signs in to another account.
    assert_eq!(sign_in_from(address, other.handle.as_str(), PASSWORD, &client).status(), 200);
    // Not the account's (10 of 20): another address signs in to this one.
    assert_eq!(sign_in_from("198.18.1.2", handle, PASSWORD, &client).status(), 200);
    // Once the pair's window ends (here by the test hook), the address signs in again.
    assert_eq!(end_window(&format!("pair:{address}/{handle}")), 1);
    assert_eq!(sign_in_from(address, handle, PASSWORD, &client).status(), 200);
}
