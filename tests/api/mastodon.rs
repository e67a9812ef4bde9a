//! The Mastodon client API, driven by a real client library: `Mastodon.py` (pinned, in .venv)
//! runs tests/mastodon_client.py against the suite's server. Plus the shapes and refusals a
//! client meets, checked directly.

use std::process::Command;

use serde_json::{json, Value};

use crate::common::*;

pub(crate) const PASSWORD: &str = "correct horse battery staple";

/// A user registered with a password (so they can sign in through OAuth).
pub(crate) fn register_with_password(prefix: &str) -> User {
    let user = register(prefix);
    let handle = format!("{}_pw", user.handle);
    let body = json!({ "handle": handle, "password": PASSWORD });
    let created = call("POST", "/v1/users", None, Some(&body)).expect(201);
    User {
        id: created["user"]["id"].as_str().unwrap().to_string(),
        handle,
        token: created["token"].as_str().unwrap().to_string(),
    }
}

/// Runs a client script (tests/NAME.py, with the .venv's Python, where the bootstrap installed
/// the clients) for two users with passwords; its stdout, or a failure with both outputs.
pub(crate) fn run_client(name: &str, prefix: &str, extra: &[&str]) -> String {
    let author = register_with_password(&format!("{prefix}_author"));
    let reader = register_with_password(&format!("{prefix}_reader"));
    let python = format!("{}/.venv/bin/python", env!("CARGO_MANIFEST_DIR"));
    let script = format!("{}/tests/{name}.py", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python)
        .args([script.as_str(), &server().base, &author.handle, &reader.handle, PASSWORD])
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("run {name} (installed into .venv by scripts/bootstrap): {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{name} flow failed:\n{stdout}\n{stderr}");
    stdout.into_owned()
}

#[test]
fn mastodon_py_registers_logs_in_posts_follows_scrolls_favourites_replies_and_deletes() {
    let stdout = run_client("mastodon_client", "masto", &["23"]);
    assert!(stdout.contains("mastodon.py flow ok: 23 statuses"), "{stdout}");
}

#[test]
fn the_toot_command_line_client_logs_in_posts_follows_reads_favourites_replies_and_deletes() {
    assert!(run_client("toot_client", "toot", &[]).contains("toot flow ok"));
}

pub(crate) fn form(path: &str, fields: &[(&str, &str)]) -> Resp {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", urlencode(v))).collect();
    raw("POST", path, &[("content-type", "application/x-www-form-urlencoded")], body.join("&").as_bytes())
}

pub(crate) fn urlencode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub(crate) fn app(scopes: &str, redirect: &str) -> (String, String) {
    let fields = [("client_name", "shape test"), ("redirect_uris", redirect), ("scopes", scopes)];
    let app = form("/api/v1/apps", &fields).expect(200);
    (app["client_id"].as_str().unwrap().to_string(), app["client_secret"].as_str().unwrap().to_string())
}

pub(crate) fn password_token(user: &User, client: &(String, String), scope: &str) -> Resp {
    let fields = [
        ("grant_type", "password"),
        ("client_id", client.0.as_str()),
        ("client_secret", client.1.as_str()),
        ("username", user.handle.as_str()),
        ("password", PASSWORD),
        ("scope", scope),
    ];
    form("/oauth/token", &fields)
}

#[test]
fn tokens_carry_scopes_and_errors_have_mastodons_shape() {
    let user = register_with_password("masto_scope");
    let client = app("read write", "urn:ietf:wg:oauth:2.0:oob");
    let read_only = password_token(&user, &client, "read").expect(200);
    assert_eq!(read_only["scope"], "read");
    let token = read_only["access_token"].as_str().unwrap();
    call("GET", "/api/v1/timelines/home", Some(token), None).expect(200);
    // Writing needs `write`: 403, in Mastodon's error shape.
    let refused = call("POST", "/api/v1/statuses", Some(token), Some(&json!({ "status": "hi" })));
    assert_eq!(refused.status, 403);
    assert!(refused.body["error"].as_str().unwrap().contains("write"), "{}", refused.body);
    // The same token on /v1: the same user, the same scope rule.
    assert_eq!(call("GET", "/v1/me", Some(token), None).expect(200)["id"], user.id.as_str());
    call("POST", "/v1/posts", Some(token), Some(&json!({ "body": "x" })))
        .expect_problem(403, "insufficient_scope");
    // Scopes the app was not registered for, a wrong secret, a wrong password: OAuth errors.
    let too_much = password_token(&user, &client, "read follow");
    assert_eq!((too_much.status, too_much.body["error"].as_str()), (400, Some("invalid_scope")));
    let wrong_secret = password_token(&user, &(client.0.clone(), "nope".into()), "read");
    assert_eq!((wrong_secret.status, wrong_secret.body["error"].as_str()), (401, Some("invalid_client")));
    let no_password = register("masto_nopw");
    let refused = password_token(&no_password, &client, "read");
    assert_eq!((refused.status, refused.body["error"].as_str()), (400, Some("invalid_grant")));
    // A status that does not exist: 404 `{"error": ...}`.
    let missing = call("GET", "/api/v1/statuses/12345", Some(token), None);
    assert_eq!(missing.status, 404);
    assert!(missing.body["error"].is_string());
}

#[test]
fn apps_register_only_redirect_uris_that_cannot_run_script_or_leak_the_code() {
    let refused =
        ["javascript:alert(1)", "data:text/html,x", "vbscript:x", "https://a.example/cb#frag", "/cb"];
    for uri in refused {
        let r = form("/api/v1/apps", &[("client_name", "redirect test"), ("redirect_uris", uri)]);
        assert_eq!(r.status, 422, "{uri}: {}", r.body);
        assert!(r.body["error"].as_str().unwrap().contains("redirect_uris"), "{uri}: {}", r.body);
    }
    let accepted = [
        "https://app.example/cb",
        "http://127.0.0.1:8000/cb",
        "com.example.app:/oauth",
        "urn:ietf:wg:oauth:2.0:oob",
        "oauth2redirect://com.keylesspalace.tusky/",
        "http://app.example/cb",
    ];
    for uri in accepted {
        let app =
            form("/api/v1/apps", &[("client_name", "redirect test"), ("redirect_uris", uri)]).expect(200);
        assert_eq!(app["redirect_uri"], uri);
    }
    // One bad URI among good ones refuses the registration.
    let mixed = form(
        "/api/v1/apps",
        &[("client_name", "redirect test"), ("redirect_uris", "https://app.example/cb\njavascript:alert(1)")],
    );
    assert_eq!(mixed.status, 422, "{}", mixed.body);
}

/// Posts the sign-in page's form; the redirect's `Location` (with the code), or the status of
/// a refusal.
pub(crate) fn authorize(
    client_id: &str,
    redirect: &str,
    user: &User,
    extra: &[(&str, &str)],
) -> Result<String, u16> {
    authorize_from(None, client_id, redirect, user, extra)
}

/// [`authorize`] from a client address (`CF-Connecting-IP`; wrangler's own without one).
pub(crate) fn authorize_from(
    address: Option<&str>,
    client_id: &str,
    redirect: &str,
    user: &User,
    extra: &[(&str, &str)],
) -> Result<String, u16> {
    let mut fields = vec![
        ("client_id", client_id),
        ("redirect_uri", redirect),
        ("scope", "read"),
        ("username", user.handle.as_str()),
        ("password", PASSWORD),
    ];
    fields.extend_from_slice(extra);
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", urlencode(v))).collect();
    // Not followed: the redirect goes to the client, which is not running here.
    let mut request = ureq::AgentBuilder::new()
        .redirects(0)
        .build()
        .post(&format!("{}/oauth/authorize", server().base))
        .set("content-type", "application/x-www-form-urlencoded");
    if let Some(address) = address {
        request = request.set("cf-connecting-ip", address);
    }
    let answer = request.send_bytes(body.join("&").as_bytes());
    match answer {
        Ok(r) if r.status() == 303 => Ok(r.header("location").unwrap_or_default().to_string()),
        Ok(r) => Err(r.status()),
        Err(ureq::Error::Status(status, _)) => Err(status),
        Err(e) => panic!("the authorize form: {e}"),
    }
}

fn code_of(location: &str) -> String {
    location.split("code=").nth(1).unwrap_or_default().split('&').next().unwrap_or_default().to_string()
}

#[test]
fn the_code_grant_with_pkce_checks_the_verifier_and_needs_no_secret() {
    let user = register_with_password("masto_pkce");
    let redirect = "https://client.example/callback";
    let client = app("read", redirect);
    // RFC 7636 appendix B's pair.
    let (verifier, challenge) =
        ("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    let s256 = [("code_challenge", challenge), ("code_challenge_method", "S256")];
    let plain = [("code_challenge", challenge), ("code_challenge_method", "plain")];
    assert_eq!(authorize(&client.0, redirect, &user, &plain).err(), Some(400), "plain is refused");
    let exchange = |code: &str, verifier: Option<&str>| {
        let mut fields = vec![
            ("grant_type", "authorization_code"),
            ("client_id", client.0.as_str()),
            ("code", code),
            ("redirect_uri", redirect),
        ];
        fields.extend(verifier.map(|v| ("code_verifier", v)));
        form("/oauth/token", &fields)
    };
    let code = code_of(&authorize(&client.0, redirect, &user, &s256).expect("a code"));
    let wrong = exchange(&code, Some("a-verifier-that-is-long-enough-but-not-the-one-0123"));
    assert_eq!((wrong.status, wrong.body["error"].as_str()), (400, Some("invalid_grant")));
    let code = code_of(&authorize(&client.0, redirect, &user, &s256).expect("a code"));
    assert_eq!(exchange(&code, None).status, 401, "no verifier and no secret: the client is unproven");
    let code = code_of(&authorize(&client.0, redirect, &user, &s256).expect("a code"));
    let token = exchange(&code, Some(verifier)).expect(200);
    let me = call("GET", "/api/v1/accounts/verify_credentials", token["access_token"].as_str(), None);
    assert_eq!(me.expect(200)["username"], user.handle.as_str());
    // A code granted without a challenge cannot be taken with a verifier instead of the secret.
    let code = code_of(&authorize(&client.0, redirect, &user, &[]).expect("a code"));
    assert_eq!(exchange(&code, Some(verifier)).status, 400);
    let metadata = call("GET", "/.well-known/oauth-authorization-server", None, None).expect(200);
    assert_eq!(metadata["code_challenge_methods_supported"], json!(["S256"]));
    assert!(metadata["token_endpoint"].as_str().is_some_and(|t| t.ends_with("/oauth/token")));
}

#[test]
fn the_authorization_code_grant_signs_in_through_the_page() {
    let user = register_with_password("masto_code");
    let redirect = "https://client.example/callback";
    let client = app("read", redirect);
    let page =
        send("GET", &format!("/oauth/authorize?client_id={}&redirect_uri={redirect}", client.0), &[], b"");
    assert_eq!(page.status(), 200);
    assert!(page.into_string().unwrap().contains("<form id=\"authorize\""));
    // A wrong password goes back to the page, the app's request kept, with the error to show.
    let wrong = authorize(&client.0, redirect, &user, &[("state", "xyz"), ("password", "not it")]);
    let back = wrong.expect("a redirect back to the sign-in page");
    assert!(back.starts_with("/oauth/authorize?client_id="), "{back}");
    assert!(back.contains("state=xyz") && back.contains("error=The+handle+or+password+is+wrong"), "{back}");
    assert!(!back.contains("code="), "{back}");
    let location = authorize(&client.0, redirect, &user, &[("state", "xyz")]).expect("a code");
    assert!(location.starts_with(redirect) && location.contains("state=xyz"), "{location}");
    let code = code_of(&location);
    let exchange = |code: &str| {
        let fields = [
            ("grant_type", "authorization_code"),
            ("client_id", client.0.as_str()),
            ("client_secret", client.1.as_str()),
            ("code", code),
            ("redirect_uri", redirect),
        ];
        form("/oauth/token", &fields)
    };
    let token = exchange(&code).expect(200);
    let me =
        call("GET", "/api/v1/accounts/verify_credentials", token["access_token"].as_str(), None).expect(200);
    assert_eq!(me["username"], user.handle.as_str());
    let again = exchange(&code);
    assert_eq!(
        (again.status, again.body["error"].as_str()),
        (400, Some("invalid_grant")),
        "a code works once"
    );
}

#[test]
fn entities_have_every_field_clients_read() {
    let author = register("masto_shape");
    let post = author.publish("<b>bold</b> & more\nline two", "followers");
    let status =
        call("GET", &format!("/api/v1/statuses/{}", id_of(&post)), Some(&author.token), None).expect(200);
    assert_eq!(status["content"], "<p>&lt;b&gt;bold&lt;/b&gt; &amp; more<br>line two</p>");
    assert_eq!(status["visibility"], "private", "followers-only is Mastodon's private");
    for field in ["media_attachments", "mentions", "tags", "emojis", "filtered"] {
        assert_eq!(status[field], json!([]), "{field}");
    }
    for field in ["reblog", "poll", "card", "in_reply_to_id", "application"] {
        assert!(status.get(field).is_some_and(Value::is_null), "{field} present and null");
    }
    let account = &status["account"];
    for field in ["id", "username", "acct", "display_name", "created_at", "avatar", "url", "note"] {
        assert!(account[field].is_string(), "account.{field}");
    }
    assert_eq!(account["statuses_count"], 1);
    for path in ["/api/v1/instance", "/api/v2/instance"] {
        let instance = call("GET", path, None, None).expect(200);
        assert_eq!(instance["title"], "edgefeed");
    }
}

#[test]
fn a_block_hides_replies_and_relationships_as_everywhere_else() {
    let author = register("masto_blk_author");
    let viewer = register("masto_blk_viewer");
    let blocker = register("masto_blk_blocker");
    let post = author.publish("an open post", "public");
    let comment =
        blocker.post(&format!("/v1/posts/{}/comments", id_of(&post)), json!({ "body": "hi" })).expect(201);
    let path = format!("/api/v1/statuses/{}", id_of(&comment));
    let reply = call("GET", &path, Some(&viewer.token), None).expect(200);
    assert_eq!(reply["in_reply_to_id"], id_of(&post).as_str());
    let both = format!("/api/v1/accounts/relationships?id[]={}&id[]={}", blocker.id, author.id);
    assert_eq!(call("GET", &both, Some(&viewer.token), None).expect(200).as_array().unwrap().len(), 2);
    blocker.block(&viewer);
    assert_eq!(call("GET", &path, Some(&viewer.token), None).status, 404, "the blocker's reply is hidden");
    let rels = call("GET", &both, Some(&viewer.token), None).expect(200);
    let ids: Vec<&str> = rels.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![author.id.as_str()], "the blocker answers as if they did not exist");
}

#[test]
fn revoking_an_oauth_token_closes_its_live_socket_and_only_its() {
    let user = register_with_password("masto_live");
    let client = app("read write", "urn:ietf:wg:oauth:2.0:oob");
    let oauth =
        password_token(&user, &client, "read").expect(200)["access_token"].as_str().unwrap().to_string();
    let ticket = call("POST", "/v1/feed/live/ticket", Some(&oauth), Some(&json!({}))).expect(200);
    let mut revoked_socket =
        try_live_connect(ticket["ticket"].as_str().unwrap()).expect("socket for the OAuth token");
    let mut other_socket = live_connect(&user);
    let fields =
        [("client_id", client.0.as_str()), ("client_secret", client.1.as_str()), ("token", oauth.as_str())];
    assert_eq!(form("/oauth/revoke", &fields).expect(200), json!({}));
    assert_eq!(revoked_socket.read(std::time::Duration::from_secs(60)), LiveRead::Closed(4001));
    other_socket.send_text("ping");
    assert_eq!(other_socket.read(std::time::Duration::from_secs(60)), LiveRead::Text("pong".into()));
    call("GET", "/v1/me", Some(&oauth), None).expect_problem(401, "unauthorized");
}

/// The home timeline's status ids, with the `Link` header's `prev` min_id.
fn home(token: &str, query: &str) -> (Vec<String>, Option<String>) {
    let r = send(
        "GET",
        &format!("/api/v1/timelines/home?{query}"),
        &[("authorization", &format!("Bearer {token}"))],
        b"",
    );
    let link = r.header("link").unwrap_or("").to_string();
    let body: Value = r.into_json().unwrap();
    let ids = body.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect();
    let prev = link.split("min_id=").nth(1).map(|rest| rest.split(['>', '&']).next().unwrap().to_string());
    (ids, prev)
}

#[test]
fn paging_up_by_min_id_skips_nothing_and_since_id_answers_the_newest() {
    let author = register("masto_up_author");
    let reader = register("masto_up_reader");
    reader.follow(&author);
    // More than one 40-post read above the oldest: `min_id` has to read down to it.
    let posted: Vec<String> = (0..45).map(|i| id_of(&author.publish(&format!("up {i}"), "public"))).collect();
    let newest_first: Vec<String> = posted.iter().rev().cloned().collect();
    poll("all 45 posts in the reader's timeline", std::time::Duration::from_secs(60), || {
        let (top, _) = home(&reader.token, "limit=40");
        let (rest, _) = home(&reader.token, &format!("max_id={}&limit=40", newest_first[39]));
        ([top, rest].concat() == newest_first).then_some(())
    });
    // min_id: the 5 just above the 44th newest, newest first; since_id: the 5 newest.
    let anchor = &newest_first[43];
    assert_eq!(home(&reader.token, &format!("min_id={anchor}&limit=5")).0, newest_first[38..43].to_vec());
    assert_eq!(home(&reader.token, &format!("since_id={anchor}&limit=5")).0, newest_first[..5].to_vec());
    // Paging up from the oldest post by `prev` links collects every newer post exactly once.
    let mut seen = Vec::new();
    let mut min = newest_first[44].clone();
    loop {
        let (ids, prev) = home(&reader.token, &format!("min_id={min}&limit=7"));
        if ids.is_empty() {
            break;
        }
        seen.splice(0..0, ids);
        min = prev.expect("a prev link while there are items");
    }
    assert_eq!(seen, newest_first[..44].to_vec());
}

/// The `Link` header's `next` URL, as a path on this server.
fn next_link(link: &str) -> Option<String> {
    let part = link.split(", ").find(|p| p.ends_with("rel=\"next\""))?;
    let url = part.trim_start_matches('<').split('>').next()?;
    Some(url[url.find("/api/")?..].to_string())
}

#[test]
fn links_keep_the_limit_max_with_since_answers_between_and_pinned_is_empty() {
    let author = register("masto_gap_author");
    let reader = register("masto_gap_reader");
    reader.follow(&author);
    let posted: Vec<String> =
        (0..12).map(|i| id_of(&author.publish(&format!("gap {i}"), "public"))).collect();
    let newest_first: Vec<String> = posted.iter().rev().cloned().collect();
    poll("all 12 posts in the reader's timeline", std::time::Duration::from_secs(60), || {
        (home(&reader.token, "limit=40").0 == newest_first).then_some(())
    });
    // A client paging by the links gets pages of the size it asked for.
    let auth = [("authorization", format!("Bearer {}", reader.token))];
    let auth: Vec<(&str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let first = send("GET", "/api/v1/timelines/home?limit=5", &auth, b"");
    let link = first.header("link").unwrap_or("").to_string();
    assert!(link.contains("limit=5"), "{link}");
    let next = next_link(&link).expect("a next link");
    let second: Value = send("GET", &next, &auth, b"").into_json().unwrap();
    let ids: Vec<String> = second.as_array().unwrap().iter().map(id_of).collect();
    assert_eq!(ids, newest_first[5..10].to_vec(), "the second page of 5, from {next}");
    // max_id with since_id (or min_id): only what lies strictly between, newest first.
    let (high, low) = (&newest_first[2], &newest_first[9]);
    let (between, _) = home(&reader.token, &format!("max_id={high}&since_id={low}&limit=40"));
    assert_eq!(between, newest_first[3..9].to_vec());
    let (two, _) = home(&reader.token, &format!("max_id={high}&min_id={low}&limit=2"));
    assert_eq!(two, newest_first[3..5].to_vec());
    // Nothing pinned: the pinned statuses are none, the others all there.
    let path = format!("/api/v1/accounts/{}/statuses", author.id);
    let pinned = call("GET", &format!("{path}?pinned=true"), Some(&reader.token), None).expect(200);
    assert_eq!(pinned, serde_json::json!([]));
    let all = call("GET", &format!("{path}?limit=40"), Some(&reader.token), None).expect(200);
    assert_eq!(all.as_array().map(Vec::len), Some(12));
}

#[test]
fn the_calls_apps_make_at_startup_answer_in_mastodons_shapes() {
    let user = register_with_password("masto_start");
    let token = Some(user.token.as_str());
    for path in [
        "/api/v1/follow_requests",
        "/api/v1/filters",
        "/api/v2/filters",
        "/api/v1/announcements",
        "/api/v1/followed_tags",
    ] {
        let r = send("GET", path, &[("authorization", &format!("Bearer {}", user.token))], b"");
        assert_eq!((r.status(), r.header("link")), (200, None), "{path}: no Link");
        assert_eq!(r.into_json::<Value>().unwrap(), json!([]), "{path}");
        assert_eq!(call("GET", path, None, None).status, 401, "{path} needs a token");
    }
    assert_eq!(call("GET", "/api/v1/custom_emojis", None, None).expect(200), json!([]), "public");
    let preferences = call("GET", "/api/v1/preferences", token, None).expect(200);
    assert_eq!(
        preferences,
        json!({
            "posting:default:visibility": "public", "posting:default:sensitive": false,
            "posting:default:language": null, "reading:expand:media": "default",
            "reading:expand:spoilers": false,
        })
    );
    let push = call("GET", "/api/v1/push/subscription", token, None);
    assert_eq!((push.status, push.body), (404, json!({ "error": "Record not found" })));
    // Push needs the `push` scope, as in Mastodon.
    let client = app("read", "urn:ietf:wg:oauth:2.0:oob");
    let read_only = password_token(&user, &client, "read").expect(200);
    let refused = call("GET", "/api/v1/push/subscription", read_only["access_token"].as_str(), None);
    assert_eq!(refused.status, 403, "{}", refused.body);
    discovery_documents_lead_to_the_account(&user);
}

/// NodeInfo by its links, host-meta's WebFinger template, and WebFinger for a real handle.
fn discovery_documents_lead_to_the_account(user: &User) {
    let base = &server().base;
    let links = call("GET", "/.well-known/nodeinfo", None, None).expect(200);
    assert_eq!(links["links"][0]["rel"], "http://nodeinfo.diaspora.software/ns/schema/2.0");
    let href = links["links"][0]["href"].as_str().unwrap();
    assert_eq!(href, format!("{base}/nodeinfo/2.0"));
    let nodeinfo = raw("GET", &href[base.len()..], &[], b"");
    assert!(nodeinfo.content_type.contains("profile=\"http://nodeinfo.diaspora.software/ns/schema/2.0#\""));
    assert_eq!(
        (nodeinfo.body["version"].as_str(), nodeinfo.body["software"]["name"].as_str()),
        (Some("2.0"), Some("edgefeed"))
    );
    assert_eq!(nodeinfo.body["openRegistrations"], true, "OPEN_REGISTRATION's default");
    let host_meta = send("GET", "/.well-known/host-meta", &[], b"");
    assert!(host_meta.header("content-type").unwrap_or("").starts_with("application/xrd+xml"));
    let xml = host_meta.into_string().unwrap();
    let template = format!("template=\"{base}/.well-known/webfinger?resource={{uri}}\"");
    assert!(xml.starts_with("<?xml") && xml.contains("rel=\"lrdd\"") && xml.contains(&template), "{xml}");
    let domain = base.split("://").nth(1).unwrap();
    let acct = format!("acct:{}@{domain}", user.handle.to_uppercase());
    let jrd = raw("GET", &format!("/.well-known/webfinger?resource={}", urlencode(&acct)), &[], b"");
    assert_eq!(jrd.status, 200, "{}", jrd.body);
    assert!(jrd.content_type.starts_with("application/jrd+json"), "{}", jrd.content_type);
    assert_eq!(jrd.body["subject"], format!("acct:{}@{domain}", user.handle));
    assert_eq!(jrd.body["links"][0]["href"], format!("{base}/?user={}", user.handle));
    for resource in [
        "acct:nobody_here@x.example",
        &format!("acct:{}@other.example", user.handle),
        "acct:no_such_handle_9",
    ] {
        let missing =
            call("GET", &format!("/.well-known/webfinger?resource={}", urlencode(resource)), None, None);
        assert_eq!(missing.status, 404, "{resource}: {}", missing.body);
        assert!(missing.body["error"].is_string(), "{resource}: Mastodon's error shape");
    }
}

#[test]
fn entities_carry_the_fields_mastodon_requires() {
    let user = register("masto_required");
    let base = &server().base;
    let me = call("GET", "/api/v1/accounts/verify_credentials", Some(&user.token), None).expect(200);
    assert_eq!(me["avatar"], format!("{base}/avatar.png"));
    assert_eq!((&me["header"], &me["header_static"]), (&json!(format!("{base}/header.png")), &me["header"]));
    assert_eq!((me["indexable"].as_bool(), me["group"].as_bool()), (Some(false), Some(false)));
    assert!(me["uri"].as_str().unwrap().starts_with("http"), "{}", me["uri"]);
    assert_eq!(me["role"]["id"], "-99");
    for field in ["name", "color", "permissions"] {
        assert!(me["role"][field].is_string(), "role.{field}");
    }
    assert_eq!(me["source"]["indexable"], false);
    assert_eq!(me["source"]["privacy"], "public");
    let account = call("GET", &format!("/api/v1/accounts/{}", user.id), Some(&user.token), None).expect(200);
    assert!(account.get("role").is_none() && account.get("source").is_none(), "only the signed-in account");
    assert_eq!(account["header"], me["header"]);
    let v1 = call("GET", "/api/v1/instance", None, None).expect(200);
    let ws = format!("ws://{}", base.strip_prefix("http://").expect("the suite serves http"));
    assert_eq!(v1["urls"]["streaming_api"], ws.as_str(), "the scheme follows the origin");
    let v2 = call("GET", "/api/v2/instance", None, None).expect(200);
    assert_eq!(v2["configuration"]["urls"]["streaming"], ws.as_str());
    assert_eq!(v2["api_versions"]["mastodon"], 2);
    assert_eq!(v2["configuration"]["translation"]["enabled"], false);
    assert_eq!(v2["configuration"]["accounts"]["max_pinned_statuses"], 5);
    assert_eq!(v2["icon"][0], json!({ "src": format!("{base}/avatar.png"), "size": "96x96" }));
    let png = send("GET", "/avatar.png", &[], b"");
    assert_eq!((png.status(), png.header("content-type")), (200, Some("image/png")));
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut png.into_reader(), &mut bytes).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a raster PNG");
    let size = (
        u32::from_be_bytes(bytes[16..20].try_into().unwrap()),
        u32::from_be_bytes(bytes[20..24].try_into().unwrap()),
    );
    assert_eq!(size, (96, 96));
}
