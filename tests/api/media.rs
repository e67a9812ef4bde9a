//! Media attachments on R2 (the local bucket `wrangler dev` serves): upload, describe, attach,
//! the bytes served back with their headers, refusals that change nothing, and the sweep of
//! orphans and of a deleted post's uploads.

use std::io::Read;

use serde_json::{json, Value};

use crate::common::*;

/// A real 3x2 PNG (red pixels).
const PNG_3X2: &str = "89504e470d0a1a0a0000000d49484452000000030000000208060000009d74661a00000011\
                       49444154789c63f8cfc0f01f86199039009b7e0bf572b0b93c0000000049454e44ae426082";

pub fn png() -> Vec<u8> {
    (0..PNG_3X2.len()).step_by(2).map(|i| u8::from_str_radix(&PNG_3X2[i..i + 2], 16).unwrap()).collect()
}

/// A multipart body with `file` (named `filename`, claimed `content_type`) and text fields.
fn multipart(file: &[u8], filename: &str, content_type: &str, fields: &[(&str, &str)]) -> (String, Vec<u8>) {
    let boundary = "edgefeedtestboundary7";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .bytes(),
        );
    }
    body.extend(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
             Content-Type: {content_type}\r\n\r\n"
        )
        .bytes(),
    );
    body.extend(file);
    body.extend(format!("\r\n--{boundary}--\r\n").bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

pub fn upload(user: &User, file: &[u8], filename: &str, fields: &[(&str, &str)]) -> Resp {
    let (content_type, body) = multipart(file, filename, "image/png", fields);
    let auth = format!("Bearer {}", user.token);
    raw("POST", "/api/v2/media", &[("authorization", &auth), ("content-type", &content_type)], &body)
}

/// A form post to a Mastodon route.
fn form(user: &User, method: &str, path: &str, form: &str) -> Resp {
    let auth = format!("Bearer {}", user.token);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/x-www-form-urlencoded")];
    raw(method, path, &headers, form.as_bytes())
}

/// GET of a served URL: status, content type, the other headers that matter, and the bytes.
fn fetch(url: &str) -> (u16, String, String, String, Vec<u8>) {
    let path = url.find("/media/").map(|at| &url[at..]).expect("a /media/ URL");
    let response = send("GET", path, &[], b"");
    let header = |name: &str| response.header(name).unwrap_or("").to_string();
    let (status, kind) = (response.status(), header("content-type"));
    let headers = format!("{}|{}", header("x-content-type-options"), header("cache-control"));
    let csp = header("content-security-policy");
    let mut bytes = Vec::new();
    response.into_reader().read_to_end(&mut bytes).expect("the body");
    (status, kind, headers, csp, bytes)
}

fn media_state(id: &str, age_seconds: u64) -> Value {
    admin("POST", "/v1/admin/test/media", Some(&json!({ "media_id": id, "age_seconds": age_seconds })))
        .expect(200)
}

fn status_count(user: &User) -> usize {
    user.get(&format!("/api/v1/accounts/{}/statuses", user.id)).expect(200).as_array().map_or(0, Vec::len)
}

#[test]
fn an_image_is_uploaded_described_attached_and_served_with_its_headers() {
    let author = register("md_author");
    let reader = register("md_reader");
    reader.follow(&author);
    let uploaded = upload(&author, &png(), "red.png", &[("description", "a red dot"), ("focus", "0.5,-0.5")]);
    let media = uploaded.expect(200);
    assert_eq!(media["type"], "image");
    assert_eq!(media["meta"]["original"]["width"], 3, "{media}");
    assert_eq!(media["meta"]["original"]["height"], 2);
    assert_eq!(media["meta"]["original"]["size"], "3x2");
    assert_eq!(media["meta"]["focus"], json!({ "x": 0.5, "y": -0.5 }));
    assert_eq!(media["description"], "a red dot");
    let id = media["id"].as_str().unwrap().to_string();
    let url = media["url"].as_str().unwrap().to_string();
    assert!(url.ends_with(".png") && url.contains("/media/"), "{url}");
    // Describe before posting (Mastodon: PUT /api/v1/media/:id), and read it back.
    let described =
        form(&author, "PUT", &format!("/api/v1/media/{id}"), "description=two+red+dots").expect(200);
    assert_eq!(described["description"], "two red dots");
    assert_eq!(author.get(&format!("/api/v1/media/{id}")).expect(200)["url"], url.as_str());
    // Someone else's upload is nobody else's: 404 as if it did not exist.
    reader.get(&format!("/api/v1/media/{id}")).expect(404);
    // A warned status with the image, as apps send it (a form, media_ids[]).
    let body = format!("status=look&spoiler_text=red&sensitive=true&media_ids[]={id}");
    let status = form(&author, "POST", "/api/v1/statuses", &body).expect(200);
    assert_eq!((status["spoiler_text"].as_str(), status["sensitive"].as_bool()), (Some("red"), Some(true)));
    let attached = &status["media_attachments"][0];
    assert_eq!((attached["id"].as_str(), attached["url"].as_str()), (Some(id.as_str()), Some(url.as_str())));
    assert_eq!(attached["description"], "two red dots");
    let post = status["id"].as_str().unwrap().to_string();
    // The bytes, byte for byte, with their type, nosniff and a long cache.
    let (code, kind, headers, csp, bytes) = fetch(&url);
    assert_eq!((code, kind.as_str()), (200, "image/png"));
    assert_eq!(headers, "nosniff|public, max-age=31536000, immutable");
    assert!(csp.contains("sandbox"), "{csp}");
    assert_eq!(bytes, png());
    // Every reader's view carries it: the home timeline (Mastodon) and /v1.
    let home = poll("the post in the reader's home", std::time::Duration::from_secs(60), || {
        let page = reader.get("/api/v1/timelines/home").expect(200);
        page.as_array().and_then(|s| s.iter().find(|s| s["id"] == post.as_str()).cloned())
    });
    assert_eq!(home["media_attachments"][0]["meta"]["original"]["width"], 3);
    let v1 = reader.get(&format!("/v1/posts/{post}")).expect(200);
    assert_eq!(v1["media"][0]["id"], id.as_str());
    assert!(url.ends_with(v1["media"][0]["url"].as_str().unwrap()), "{v1}");
    // Attached: no longer describable (Mastodon's 404), and not attachable to a second status;
    // that refusal posts nothing.
    form(&author, "PUT", &format!("/api/v1/media/{id}"), "description=x").expect(404);
    let before = status_count(&author);
    let again = form(&author, "POST", "/api/v1/statuses", &format!("status=again&media_ids[]={id}"));
    assert_eq!(again.status, 422, "{}", again.body);
    assert!(again.body["error"].as_str().unwrap_or("").contains("already attached"), "{}", again.body);
    assert_eq!(status_count(&author), before);
    // An edit may repeat the post's own attachments, not change them.
    form(&author, "PUT", &format!("/api/v1/statuses/{post}"), &format!("status=edited&media_ids[]={id}"))
        .expect(200);
    let other = upload(&author, &png(), "b.png", &[]).expect(200)["id"].as_str().unwrap().to_string();
    let changed =
        form(&author, "PUT", &format!("/api/v1/statuses/{post}"), &format!("status=x&media_ids[]={other}"));
    assert_eq!(changed.status, 422, "{}", changed.body);
    // A takedown stops serving it, a restore serves it again; a delete stops it at once.
    admin(
        "POST",
        &format!("/v1/admin/posts/{post}/takedown"),
        Some(&json!({ "reason": "test", "operator": "test-op" })),
    )
    .expect(200);
    assert_eq!(fetch(&url).0, 404);
    admin(
        "POST",
        &format!("/v1/admin/posts/{post}/restore"),
        Some(&json!({ "reason": "test", "operator": "test-op" })),
    )
    .expect(200);
    assert_eq!(fetch(&url).0, 200);
    author.delete(&format!("/v1/posts/{post}")).expect(204);
    assert_eq!(fetch(&url).0, 404, "a deleted post's media stop being served");
    // The sweep removes its bytes and row once it has been gone for a while.
    assert_eq!(media_state(&id, 0)["gone"], true);
    media_state(&id, 3600);
    poll("the deleted post's upload removed", std::time::Duration::from_secs(60), || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        let state = media_state(&id, 0);
        (state["row"] == false && state["bytes"] == false).then_some(())
    });
}

#[test]
fn disguised_files_and_bad_media_ids_are_refused_and_change_nothing() {
    let author = register("md_refused");
    let other = register("md_other");
    // An HTML page named .png and claimed image/png: sniffed from its bytes, refused.
    let html = b"<html><script>alert(1)</script></html>";
    let refused = upload(&author, html, "cat.png", &[]);
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.body["error"].as_str().unwrap_or("").contains("PNG, JPEG, GIF and WebP"),
        "{}",
        refused.body
    );
    // No file part; a malformed focus.
    let auth = format!("Bearer {}", author.token);
    let no_file = form(&author, "POST", "/api/v2/media", "description=x");
    assert_eq!(no_file.status, 422, "{}", no_file.body);
    assert_eq!(upload(&author, &png(), "a.png", &[("focus", "3,3")]).status, 422);
    // /v1 takes the file as the body (any content type: sniffed), with the description in the query.
    let v1 = raw(
        "POST",
        "/v1/media?description=alt",
        &[("authorization", &auth), ("content-type", "application/octet-stream")],
        &png(),
    )
    .expect(201);
    assert_eq!((v1["width"].as_u64(), v1["content_type"].as_str()), (Some(3), Some("image/png")));
    raw("POST", "/v1/media", &[("authorization", &auth)], b"GIF89a junk")
        .expect_problem(422, "invalid_field");
    let mine = v1["id"].as_str().unwrap().to_string();
    let theirs = upload(&other, &png(), "t.png", &[]).expect(200)["id"].as_str().unwrap().to_string();
    let before = status_count(&author);
    for (media_ids, why) in [
        (json!([theirs]), "someone else's upload"),
        (json!(["999999999"]), "no such upload"),
        (json!([mine, mine]), "named twice"),
        (json!(["1", "2", "3", "4", "5"]), "more than four"),
        (json!(["x"]), "not an id"),
    ] {
        let r = author.post("/v1/posts", json!({ "body": "with media", "media_ids": media_ids }));
        assert_eq!((r.status, r.code()), (422, "invalid_field"), "{why}: {}", r.body);
    }
    assert_eq!(status_count(&author), before, "a refused post publishes nothing");
    // A picture alone is a post (no text), on /v1 too; a reply (a post) carries one as well.
    let alone = author.post("/v1/posts", json!({ "media_ids": [mine] })).expect(201);
    assert_eq!((alone["body"].as_str(), alone["media"][0]["id"].as_str()), (Some(""), Some(mine.as_str())));
    let post = id_of(&alone);
    let extra = upload(&author, &png(), "r.png", &[]).expect(200)["id"].as_str().unwrap().to_string();
    let reply = form(
        &author,
        "POST",
        "/api/v1/statuses",
        &format!("status=re&in_reply_to_id={post}&media_ids[]={extra}"),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["media_attachments"][0]["id"], extra.as_str());
    // The instance says what it accepts.
    let instance = call("GET", "/api/v2/instance", None, None).expect(200);
    assert_eq!(instance["configuration"]["statuses"]["max_media_attachments"], 4);
    let types = instance["configuration"]["media_attachments"]["supported_mime_types"].to_string();
    assert!(types.contains("image/webp") && types.contains("image/jpeg"), "{types}");
}

#[test]
fn an_upload_never_attached_is_removed_after_its_time() {
    let author = register("md_orphan");
    let media = upload(&author, &png(), "o.png", &[]).expect(200);
    let (id, url) = (media["id"].as_str().unwrap().to_string(), media["url"].as_str().unwrap().to_string());
    assert_eq!(fetch(&url).0, 200, "its uploader can preview it");
    assert_eq!(media_state(&id, 0), json!({ "row": true, "gone": false, "bytes": true }));
    // A day and more later the sweep marks it gone (no longer served, never attachable) ...
    media_state(&id, 2 * 86_400);
    poll("the orphan marked gone", std::time::Duration::from_secs(60), || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        (media_state(&id, 0)["gone"] == true).then_some(())
    });
    assert_eq!(fetch(&url).0, 404);
    let late = author.post("/v1/posts", json!({ "body": "late", "media_ids": [id] }));
    assert_eq!(late.status, 422, "{}", late.body);
    // ... and once gone for a while, its bytes and row are removed.
    media_state(&id, 3600);
    poll("the orphan removed", std::time::Duration::from_secs(60), || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        let state = media_state(&id, 0);
        (state["row"] == false && state["bytes"] == false).then_some(())
    });
}

#[test]
fn two_posts_racing_for_one_upload_attach_it_once() {
    let author = register("md_race");
    for round in 0..3 {
        let id = upload(&author, &png(), "race.png", &[]).expect(200)["id"].as_str().unwrap().to_string();
        let before = status_count(&author);
        let racers: Vec<_> = (0..2)
            .map(|i| {
                let (author, id) = (author.clone(), id.clone());
                std::thread::spawn(move || {
                    author
                        .post("/v1/posts", json!({ "body": format!("race {round}.{i}"), "media_ids": [id] }))
                })
            })
            .collect();
        let answers: Vec<Resp> = racers.into_iter().map(|t| t.join().unwrap()).collect();
        let won: Vec<&Resp> = answers.iter().filter(|r| r.status == 201).collect();
        assert_eq!(won.len(), 1, "exactly one post gets the upload: {answers:?}");
        let lost = answers.iter().find(|r| r.status != 201).unwrap();
        assert_eq!((lost.status, lost.code()), (422, "invalid_field"), "{:?}", lost.body);
        assert_eq!(won[0].body["media"][0]["id"], id.as_str());
        assert_eq!(status_count(&author), before + 1, "the losing post was not published");
    }
}

#[test]
fn a_retried_post_with_an_upload_answers_the_post_it_made() {
    let author = register("md_retry");
    let id = upload(&author, &png(), "k.png", &[]).expect(200)["id"].as_str().unwrap().to_string();
    let auth = format!("Bearer {}", author.token);
    let body = json!({ "body": "once", "media_ids": [id] }).to_string();
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
        ("idempotency-key", "md-retry-1"),
    ];
    let first = raw("POST", "/v1/posts", &headers, body.as_bytes()).expect(201);
    // The retry finds its upload attached (to the post it made) and answers that post.
    let again = raw("POST", "/v1/posts", &headers, body.as_bytes()).expect(201);
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["media"][0]["id"], id.as_str());
    assert_eq!(status_count(&author), 1);
}
