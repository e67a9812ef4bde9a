//! Profiles (issue 42): `PATCH /api/v1/accounts/update_credentials` in the three bodies clients
//! send (multipart with images, a form, JSON), the profile on every Account entity, the images
//! served like uploads and removed, and refusals that change nothing.

use std::io::Read;

use serde_json::{json, Value};

use crate::common::*;
use crate::media::png;

const BOUNDARY: &str = "edgefeedprofileboundary3";

/// A multipart body: text fields, then files (name, bytes).
fn multipart(fields: &[(&str, &str)], files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .bytes(),
        );
    }
    for (name, bytes) in files {
        body.extend(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"blob\"\r\n\
                 Content-Type: image/png\r\n\r\n"
            )
            .bytes(),
        );
        body.extend(*bytes);
        body.extend(b"\r\n");
    }
    body.extend(format!("--{BOUNDARY}--\r\n").bytes());
    body
}

fn send_as(user: &User, method: &str, path: &str, content_type: &str, body: &[u8]) -> Resp {
    let auth = format!("Bearer {}", user.token);
    raw(method, path, &[("authorization", &auth), ("content-type", content_type)], body)
}

pub fn update_multipart(user: &User, fields: &[(&str, &str)], files: &[(&str, &[u8])]) -> Resp {
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    send_as(user, "PATCH", "/api/v1/accounts/update_credentials", &content_type, &multipart(fields, files))
}

pub fn update_form(user: &User, form: &str) -> Resp {
    let content_type = "application/x-www-form-urlencoded";
    send_as(user, "PATCH", "/api/v1/accounts/update_credentials", content_type, form.as_bytes())
}

fn me(user: &User) -> Value {
    user.get("/api/v1/accounts/verify_credentials").expect(200)
}

/// The bytes at a served URL (status and body).
fn fetch(url: &str) -> (u16, Vec<u8>) {
    let path = url.find("/media/").map(|at| &url[at..]).expect("a /media/ URL");
    let response = send("GET", path, &[], b"");
    let status = response.status();
    let mut bytes = Vec::new();
    response.into_reader().read_to_end(&mut bytes).expect("the body");
    (status, bytes)
}

#[test]
fn a_multipart_edit_with_images_shows_on_every_account_entity() {
    let author = register("pf_author");
    let reader = register("pf_reader");
    reader.follow(&author);
    let fields = [
        ("display_name", "Ana Author"),
        ("note", "hello <world>\nsecond line"),
        ("bot", "true"),
        ("discoverable", "false"),
        ("fields_attributes[0][name]", "site"),
        ("fields_attributes[0][value]", "example.org"),
        ("fields_attributes[1][name]", "pronouns"),
        ("fields_attributes[1][value]", "she/her"),
    ];
    let image = png();
    let account = update_multipart(&author, &fields, &[("avatar", &image), ("header", &image)]).expect(200);
    assert_eq!(account["display_name"], "Ana Author");
    assert_eq!(account["note"], "<p>hello &lt;world&gt;<br>second line</p>");
    assert_eq!(account["source"]["note"], "hello <world>\nsecond line");
    assert_eq!((account["bot"].as_bool(), account["discoverable"].as_bool()), (Some(true), Some(false)));
    let expected_fields = json!([
        { "name": "site", "value": "example.org", "verified_at": null },
        { "name": "pronouns", "value": "she/her", "verified_at": null },
    ]);
    assert_eq!(account["fields"], expected_fields);
    assert_eq!(account["source"]["fields"], expected_fields);
    let avatar = account["avatar"].as_str().unwrap().to_string();
    let header = account["header"].as_str().unwrap().to_string();
    assert!(avatar.contains("/media/") && header.contains("/media/") && avatar != header, "{account}");
    assert_eq!(account["avatar_static"], avatar.as_str());
    assert_eq!(fetch(&avatar), (200, image.clone()));
    assert_eq!(fetch(&header), (200, image.clone()));
    // Every Account of the author shows it: fetched, looked up, in a list, on a status.
    let fetched = reader.get(&format!("/api/v1/accounts/{}", author.id)).expect(200);
    let looked_up = reader.get(&format!("/api/v1/accounts/lookup?acct={}", author.handle)).expect(200);
    let following = reader.get(&format!("/api/v1/accounts/{}/following", reader.id)).expect(200);
    for shown in [&fetched, &looked_up, &following[0]] {
        assert_eq!((shown["avatar"].as_str(), shown["header"].as_str()), (Some(&*avatar), Some(&*header)));
        assert_eq!(
            (shown["bot"].as_bool(), shown["display_name"].as_str()),
            (Some(true), Some("Ana Author"))
        );
        assert_eq!(shown["fields"], expected_fields);
    }
    let post = author.publish("with my new face", "public");
    let status = poll("the post in the reader's home", std::time::Duration::from_secs(60), || {
        let page = reader.get("/api/v1/timelines/home").expect(200);
        page.as_array().and_then(|s| s.iter().find(|s| s["id"] == post["id"]).cloned())
    });
    assert_eq!(status["account"]["avatar"], avatar.as_str());
    assert_eq!(status["account"]["note"], account["note"]);
    // The reader's default images are untouched by the author's edit.
    assert!(me(&reader)["avatar"].as_str().unwrap().ends_with("/avatar.png"));
}

#[test]
fn form_and_json_bodies_edit_flags_source_and_fields() {
    let user = register("pf_forms");
    let account =
        update_form(&user, "locked=true&source%5Bprivacy%5D=private&source%5Bsensitive%5D=1").expect(200);
    assert_eq!(account["locked"], true);
    assert_eq!(
        (account["source"]["privacy"].as_str(), account["source"]["sensitive"].as_bool()),
        (Some("private"), Some(true))
    );
    let body = json!({
        "display_name": "Json Name",
        "locked": false,
        "source": { "language": "de" },
        "fields_attributes": [{ "name": "markup", "value": "<b>bold</b>" }],
    });
    let account = user.patch("/api/v1/accounts/update_credentials", body).expect(200);
    assert_eq!(
        (account["display_name"].as_str(), account["locked"].as_bool()),
        (Some("Json Name"), Some(false))
    );
    assert_eq!(account["source"]["language"], "de");
    assert_eq!(account["source"]["privacy"], "private", "kept from the earlier edit");
    // A field's value is HTML (escaped); its name and the source's copy are as typed.
    assert_eq!(account["fields"][0]["value"], "&lt;b&gt;bold&lt;/b&gt;");
    assert_eq!(account["source"]["fields"][0]["value"], "<b>bold</b>");
    // An empty list clears the fields; leaving them out keeps them.
    let kept = update_form(&user, "note=still").expect(200);
    assert_eq!(kept["fields"].as_array().map(Vec::len), Some(1));
    let cleared = update_form(&user, "fields_attributes=").expect(200);
    assert_eq!(cleared["fields"], json!([]));
    // An empty display name shows the handle (as at sign-up without one).
    let unnamed = update_form(&user, "display_name=").expect(200);
    assert_eq!(unnamed["display_name"], user.handle.as_str());
    assert_eq!(me(&user)["note"], "<p>still</p>");
}

#[test]
fn bad_input_is_refused_with_nothing_changed() {
    let user = register("pf_bad");
    update_form(&user, "display_name=Before&note=before").expect(200);
    let five: String = (0..5).map(|i| format!("&fields_attributes[{i}][name]=n{i}")).collect();
    let long = |n: usize| "a".repeat(n);
    let refusals = [
        format!("display_name={}", long(31)),
        format!("display_name=After&note={}", long(501)),
        format!("display_name=After{five}"),
        format!("display_name=After&fields_attributes[0][name]={}", long(256)),
        format!("display_name=After&fields_attributes[0][value]={}", long(256)),
        "display_name=After&locked=perhaps".to_string(),
        "display_name=After&source[privacy]=everyone".to_string(),
        "display_name=After&avatar=notafile".to_string(),
    ];
    for form in &refusals {
        let refused = update_form(&user, form);
        assert_eq!(refused.status, 422, "{form}: {}", refused.body);
        assert!(refused.body["error"].is_string(), "{}", refused.body);
    }
    // Not an image, or too large: refused before anything is stored.
    let not_image =
        update_multipart(&user, &[("display_name", "After")], &[("avatar", b"GIF89a but not really")]);
    assert_eq!(not_image.status, 422, "{}", not_image.body);
    let mut huge = png();
    huge.resize(2 * 1024 * 1024 + 1, 0);
    let too_large = update_multipart(&user, &[("display_name", "After")], &[("header", &huge)]);
    assert_eq!(too_large.status, 422, "{}", too_large.body);
    let unchanged = me(&user);
    assert_eq!(
        (unchanged["display_name"].as_str(), unchanged["note"].as_str()),
        (Some("Before"), Some("<p>before</p>"))
    );
    assert!(unchanged["avatar"].as_str().unwrap().ends_with("/avatar.png"));
    assert!(unchanged["header"].as_str().unwrap().ends_with("/header.png"));
    // Without a token, or with one that may not write: no edit.
    assert_eq!(raw("PATCH", "/api/v1/accounts/update_credentials", &[], b"").status, 401);
}

#[test]
fn images_are_replaced_and_removed_and_never_attach_to_a_status() {
    let user = register("pf_images");
    let first = update_multipart(&user, &[], &[("avatar", &png())]).expect(200);
    let first_avatar = first["avatar"].as_str().unwrap().to_string();
    let second = update_multipart(&user, &[], &[("avatar", &png()), ("header", &png())]).expect(200);
    let avatar = second["avatar"].as_str().unwrap().to_string();
    assert_ne!(avatar, first_avatar);
    // The replaced one is no longer served; the new one is.
    assert_eq!(fetch(&first_avatar).0, 404);
    assert_eq!(fetch(&avatar).0, 200);
    // A profile image is no attachment: naming its upload in a status is refused.
    let media_id = avatar.rsplit('/').next().unwrap().split('-').next().unwrap().to_string();
    let status = user.post("/api/v1/statuses", json!({ "status": "mine", "media_ids": [media_id] }));
    assert_eq!(status.status, 422, "{}", status.body);
    // Removing: back to the defaults, the old bytes no longer served; removing again is fine.
    let removed = user.delete("/api/v1/profile/avatar").expect(200);
    assert!(removed["avatar"].as_str().unwrap().ends_with("/avatar.png"), "{removed}");
    assert!(removed["header"].as_str().unwrap().contains("/media/"), "the header stays: {removed}");
    assert_eq!(fetch(&avatar).0, 404);
    user.delete("/api/v1/profile/avatar").expect(200);
    let removed = user.delete("/api/v1/profile/header").expect(200);
    assert!(removed["header"].as_str().unwrap().ends_with("/header.png"), "{removed}");
    assert!(me(&user)["header"].as_str().unwrap().ends_with("/header.png"));
}

/// An app's own token (the client-credentials grant).
fn app_token(client: &(String, String), scope: &str) -> String {
    let fields = [
        ("grant_type", "client_credentials"),
        ("client_id", client.0.as_str()),
        ("client_secret", client.1.as_str()),
        ("scope", scope),
    ];
    let token = crate::mastodon::form("/oauth/token", &fields).expect(200);
    assert_eq!(token["token_type"], "Bearer");
    token["access_token"].as_str().unwrap().to_string()
}

static SIGN_UP_ADDRESS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// `POST /api/v1/accounts` as a form from an address of its own (the sign-up limit is per address).
fn sign_up(token: Option<&str>, fields: &[(&str, &str)]) -> Resp {
    let n = SIGN_UP_ADDRESS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let ip = format!("10.250.{}.{}", (n >> 8) & 255, n & 255);
    let body: Vec<String> =
        fields.iter().map(|(k, v)| format!("{k}={}", crate::mastodon::urlencode(v))).collect();
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers =
        vec![("content-type", "application/x-www-form-urlencoded"), ("cf-connecting-ip", ip.as_str())];
    if let Some(auth) = &auth {
        headers.push(("authorization", auth.as_str()));
    }
    raw("POST", "/api/v1/accounts", &headers, body.join("&").as_bytes())
}

fn unique_handle(prefix: &str) -> String {
    format!("{prefix}{}", SIGN_UP_ADDRESS.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

#[test]
fn an_app_registers_an_account_with_its_own_token() {
    let client = crate::mastodon::app("read write follow", "urn:ietf:wg:oauth:2.0:oob");
    let token = app_token(&client, "read write");
    // The app's own token names no user: no user route takes it; its app is readable.
    assert_eq!(call("GET", "/api/v1/accounts/verify_credentials", Some(&token), None).status, 401);
    let app = call("GET", "/api/v1/apps/verify_credentials", Some(&token), None).expect(200);
    assert_eq!(app["name"], "shape test");
    assert!(app.get("client_secret").is_none(), "{app}");
    let handle = unique_handle("pfreg");
    let fields = [
        ("username", handle.as_str()),
        ("email", "someone@example.com"),
        ("password", "a long enough password"),
        ("agreement", "true"),
        ("locale", "en"),
        ("reason", "hello"),
    ];
    let created = sign_up(Some(&token), &fields).expect(200);
    assert_eq!(created["scope"], "read write");
    let user_token = created["access_token"].as_str().unwrap();
    let me = call("GET", "/api/v1/accounts/verify_credentials", Some(user_token), None).expect(200);
    assert_eq!(me["username"], handle.as_str());
    // The new user's token is the app's too, with the scopes the app's token had.
    let same_app = call("GET", "/api/v1/apps/verify_credentials", Some(user_token), None).expect(200);
    assert_eq!(same_app["id"], app["id"]);
    assert_eq!(call("POST", "/api/v1/emails/confirmations", Some(user_token), None).expect(200), json!({}));
    // The handle is now taken: Mastodon's shape.
    let again = sign_up(Some(&token), &fields);
    assert_eq!(again.status, 422, "{}", again.body);
    assert_eq!(again.body["details"]["username"][0]["error"], "ERR_TAKEN");
    // A user's token issued to an app registers too (what masto.js's tests do).
    let other = unique_handle("pfreg");
    let by_user = [
        ("username", other.as_str()),
        ("email", "x@example.org"),
        ("password", "another long password"),
        ("agreement", "1"),
    ];
    sign_up(Some(user_token), &by_user).expect(200);
    // Without a token, or with a /v1 token (issued to no app): 401, nobody registered.
    let third = unique_handle("pfreg");
    let no_app = [
        ("username", third.as_str()),
        ("email", "y@example.org"),
        ("password", "another long password"),
        ("agreement", "1"),
    ];
    assert_eq!(sign_up(None, &no_app).status, 401);
    let v1 = register("pf_v1");
    assert_eq!(sign_up(Some(&v1.token), &no_app).status, 401);
    let lookup = call("GET", &format!("/api/v1/accounts/lookup?acct={third}"), Some(user_token), None);
    assert_eq!(lookup.status, 404);
}

#[test]
fn a_malformed_registration_gets_every_problem_in_mastodons_shape() {
    let client = crate::mastodon::app("read write", "urn:ietf:wg:oauth:2.0:oob");
    let token = app_token(&client, "read");
    let fields =
        [("username", ""), ("email", ""), ("password", ""), ("agreement", "false"), ("locale", "hello")];
    let refused = sign_up(Some(&token), &fields);
    assert_eq!(refused.status, 422);
    assert!(refused.body["error"].as_str().unwrap().starts_with("Validation failed"), "{}", refused.body);
    assert_eq!(
        refused.body["details"],
        json!({
            "agreement": [{ "error": "ERR_ACCEPTED", "description": "must be accepted" }],
            "email": [
                { "error": "ERR_BLANK", "description": "can't be blank" },
                { "error": "ERR_INVALID", "description": "is invalid" },
            ],
            "password": [{ "error": "ERR_BLANK", "description": "can't be blank" }],
            "username": [{ "error": "ERR_BLANK", "description": "can't be blank" }],
        })
    );
    // /v1's rules: a password under 10 characters, a handle outside [a-z0-9_]{3,30}.
    let handle = unique_handle("pfshort");
    let short =
        [("username", handle.as_str()), ("email", "a@b.co"), ("password", "password"), ("agreement", "true")];
    let refused = sign_up(Some(&token), &short);
    assert_eq!(refused.body["details"]["password"][0]["error"], "ERR_TOO_SHORT", "{}", refused.body);
    let bad = [
        ("username", "no spaces"),
        ("email", "a@b.co"),
        ("password", "long enough password"),
        ("agreement", "true"),
    ];
    assert_eq!(sign_up(Some(&token), &bad).body["details"]["username"][0]["error"], "ERR_INVALID");
    // Nobody was registered by the refused one.
    let lookup = call(
        "GET",
        &format!("/api/v1/accounts/lookup?acct={handle}"),
        Some(&register("pf_look").token),
        None,
    );
    assert_eq!(lookup.status, 404);
}

fn relationship_of(user: &User, other: &User) -> Value {
    user.get(&format!("/api/v1/accounts/relationships?id[]={}", other.id)).expect(200)[0].clone()
}

#[test]
fn a_note_on_an_account_is_private_to_its_author() {
    let author = register("pf_noter");
    let other = register("pf_noted");
    let third = register("pf_third");
    let noted = author
        .post(&format!("/api/v1/accounts/{}/note", other.id), json!({ "comment": "met at the meetup" }));
    assert_eq!(noted.expect(200)["note"], "met at the meetup");
    assert_eq!(relationship_of(&author, &other)["note"], "met at the meetup");
    // Nobody else sees it: not the account, not a third user.
    assert_eq!(relationship_of(&other, &author)["note"], "");
    assert_eq!(relationship_of(&third, &other)["note"], "");
    // Too long: refused, the old note kept; empty removes it.
    let long = "n".repeat(2001);
    let refused = author.post(&format!("/api/v1/accounts/{}/note", other.id), json!({ "comment": long }));
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(relationship_of(&author, &other)["note"], "met at the meetup");
    let cleared =
        author.post(&format!("/api/v1/accounts/{}/note", other.id), json!({ "comment": "" })).expect(200);
    assert_eq!(cleared["note"], "");
    assert_eq!(author.post("/api/v1/accounts/99999999/note", json!({ "comment": "x" })).status, 404);
}

#[test]
fn endorsements_need_a_follow_and_go_with_it() {
    let user = register("pf_endorser");
    let star = register("pf_star");
    let other = register("pf_other");
    // Not followed: 422, nothing endorsed.
    let refused = user.post(&format!("/api/v1/accounts/{}/endorse", star.id), json!({}));
    assert_eq!(refused.status, 422, "{}", refused.body);
    user.follow(&star);
    user.follow(&other);
    let endorsed = user.post(&format!("/api/v1/accounts/{}/endorse", star.id), json!({})).expect(200);
    assert_eq!(endorsed["endorsed"], true);
    // The older alias, twice: idempotent.
    for _ in 0..2 {
        user.post(&format!("/api/v1/accounts/{}/pin", other.id), json!({})).expect(200);
    }
    let own = user.get("/api/v1/endorsements").expect(200);
    assert_eq!(ids(own.as_array().unwrap()), vec![other.id.clone(), star.id.clone()]);
    // Anyone may read an account's endorsements.
    let seen = star.get(&format!("/api/v1/accounts/{}/endorsements", user.id)).expect(200);
    assert_eq!(ids(seen.as_array().unwrap()), vec![other.id.clone(), star.id.clone()]);
    let paged = user.get("/api/v1/endorsements?limit=1").expect(200);
    assert_eq!(ids(paged.as_array().unwrap()), vec![other.id.clone()]);
    // Unendorsed, and an unfollow takes the endorsement with it.
    let gone = user.post(&format!("/api/v1/accounts/{}/unpin", other.id), json!({})).expect(200);
    assert_eq!(gone["endorsed"], false);
    user.unfollow(&star);
    assert_eq!(relationship_of(&user, &star)["endorsed"], false);
    assert!(user.get("/api/v1/endorsements").expect(200).as_array().unwrap().is_empty());
    assert_eq!(user.get(&format!("/api/v1/accounts/{}/identity_proofs", star.id)).expect(200), json!([]));
}

#[test]
fn a_report_is_stored_for_the_operator_and_answered_as_mastodons_report() {
    let reporter = register("pf_reporter");
    let reported = register("pf_reported");
    let post = reported.publish("something to report", "public");
    let post_id = post["id"].as_str().unwrap().to_string();
    let body = json!({ "account_id": reported.id, "status_ids": [post_id], "comment": "spam links", "category": "spam" });
    let report = reporter.post("/api/v1/reports", body).expect(200);
    assert_eq!(report["target_account"]["id"], reported.id.as_str());
    assert_eq!((report["category"].as_str(), report["comment"].as_str()), (Some("spam"), Some("spam links")));
    assert_eq!(report["status_ids"], json!([post_id]));
    assert_eq!((report["action_taken"].as_bool(), report["forwarded"].as_bool()), (Some(false), Some(false)));
    // The operator sees it.
    let listed = admin("GET", "/v1/admin/reports?limit=100", None).expect(200);
    let found = listed["reports"].as_array().unwrap().iter().find(|r| r["id"] == report["id"]).cloned();
    let found = found.expect("the report in the operator's list");
    assert_eq!(
        (found["reporter_id"].as_str(), found["account_id"].as_str()),
        (Some(&*reporter.id), Some(&*reported.id))
    );
    // Refused with nothing stored: yourself, nobody, a bad category, a long comment.
    let refusals = [
        json!({ "account_id": reporter.id }),
        json!({ "account_id": "99999999" }),
        json!({ "account_id": reported.id, "category": "rude" }),
        json!({ "account_id": reported.id, "comment": "c".repeat(1001) }),
        json!({}),
    ];
    for body in refusals {
        let refused = reporter.post("/api/v1/reports", body.clone());
        assert!(refused.status == 422 || refused.status == 404, "{body}: {}", refused.body);
    }
    let listed = admin("GET", "/v1/admin/reports?limit=100", None).expect(200);
    let mine = listed["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["reporter_id"] == reporter.id.as_str())
        .count();
    assert_eq!(mine, 1);
}

#[test]
fn domain_blocks_are_kept_as_the_users_list() {
    let user = register("pf_domains");
    let domain = "example.domain.to.block.com";
    let blocked = update_like(&user, "POST", &format!("domain={domain}"));
    assert_eq!(blocked.expect(200), json!({}));
    update_like(&user, "POST", &format!("domain={domain}")).expect(200);
    assert_eq!(user.get("/api/v1/domain_blocks").expect(200), json!([domain]));
    // Someone else's list is their own.
    assert_eq!(register("pf_domains").get("/api/v1/domain_blocks").expect(200), json!([]));
    assert_eq!(update_like(&user, "POST", "domain=not a domain").status, 422);
    update_like(&user, "DELETE", &format!("domain={domain}")).expect(200);
    assert_eq!(user.get("/api/v1/domain_blocks").expect(200), json!([]));
}

/// A form request to `/api/v1/domain_blocks`.
fn update_like(user: &User, method: &str, form: &str) -> Resp {
    send_as(user, method, "/api/v1/domain_blocks", "application/x-www-form-urlencoded", form.as_bytes())
}
