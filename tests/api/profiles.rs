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
