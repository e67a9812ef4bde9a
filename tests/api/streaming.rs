//! Mastodon's streaming API (`/api/v1/streaming`), spoken with a plain WebSocket client
//! (tungstenite): the three ways a client hands its token, `update` / `delete` /
//! `notification` frames checked for the viewer when sent, subscriptions by message, and the
//! socket closing when its token ends.

use std::io::Read;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);
/// How long a socket stays quiet before we conclude nothing more is coming.
const QUIET: Duration = Duration::from_secs(3);

fn stream(user: &User, query: &str) -> LiveSocket {
    let path = format!("/api/v1/streaming?{query}&access_token={}", user.token);
    try_mastodon_stream(&path, &[]).unwrap_or_else(|s| panic!("streaming refused: {s}")).0
}

/// The next frame's (event, payload) within `deadline`.
#[track_caller]
fn next_frame(socket: &mut LiveSocket, deadline: Duration) -> (String, String, Value) {
    let frame = socket.next_event(deadline);
    let event = frame["event"].as_str().unwrap_or_default().to_string();
    let payload =
        frame["payload"].as_str().unwrap_or_else(|| panic!("a string payload: {frame}")).to_string();
    (event, payload, frame["stream"].clone())
}

#[track_caller]
fn assert_quiet(socket: &mut LiveSocket, what: &str) {
    match socket.read(QUIET) {
        LiveRead::Quiet => {}
        other => panic!("{what}: expected nothing, got {other:?}"),
    }
}

#[test]
fn the_handshake_takes_the_token_from_the_query_the_header_or_the_echoed_subprotocol() {
    let user = register("st_auth");
    let (_, echoed) =
        try_mastodon_stream(&format!("/api/v1/streaming?stream=user&access_token={}", user.token), &[])
            .expect("query token");
    assert_eq!(echoed, None);
    let bearer = format!("Bearer {}", user.token);
    try_mastodon_stream("/api/v1/streaming?stream=user", &[("authorization", &bearer)])
        .expect("header token");
    let (_, echoed) = try_mastodon_stream("/api/v1/streaming", &[("sec-websocket-protocol", &user.token)])
        .expect("subprotocol token");
    assert_eq!(echoed.as_deref(), Some(user.token.as_str()), "the answer names the offered subprotocol");
    assert_eq!(try_mastodon_stream("/api/v1/streaming?access_token=nope", &[]).err(), Some(401));
    assert_eq!(try_mastodon_stream("/api/v1/streaming", &[]).err(), Some(401));
    let unknown = format!("/api/v1/streaming?stream=hashtag&access_token={}", user.token);
    assert_eq!(try_mastodon_stream(&unknown, &[]).err(), Some(422));
    // Without an upgrade: 404 (streaming is on this host, not another), and the health check.
    assert_eq!(user.get("/api/v1/streaming").status, 404);
    let health = send("GET", "/api/v1/streaming/health", &[], b"");
    assert_eq!(health.into_string().unwrap_or_default(), "OK");
}

#[test]
fn a_followed_authors_post_arrives_as_an_update_and_its_delete_as_a_delete() {
    let author = register("st_author");
    let reader = register("st_reader");
    reader.follow(&author);
    activate(&reader);
    let mut socket = stream(&reader, "stream=user");
    let post = author.publish("hello, stream", "public");
    let (event, payload, streams) = next_frame(&mut socket, DEADLINE);
    assert_eq!((event.as_str(), streams), ("update", json!(["user"])));
    let status: Value = serde_json::from_str(&payload).expect("a Status");
    assert_eq!(status["id"], id_of(&post).as_str());
    assert!(status["content"].as_str().is_some_and(|c| c.contains("hello, stream")), "{status}");
    assert_eq!(status["account"]["id"], author.id.as_str());
    author.delete(&format!("/v1/posts/{}", id_of(&post))).expect(204);
    let (event, payload, _) = next_frame(&mut socket, DEADLINE);
    assert_eq!((event.as_str(), payload.as_str()), ("delete", id_of(&post).as_str()));
    // A post the reader may no longer see when it is delivered is not sent: the author blocks
    // the reader, then posts.
    author.block(&reader);
    author.publish("not for you", "public");
    wait_drained(&author);
    assert_quiet(&mut socket, "a blocked reader's stream");
}

#[test]
fn notifications_arrive_once_on_both_user_streams_and_a_subscription_can_change() {
    let author = register("stn_author");
    let fan = register("stn_fan");
    let post = id_of(&author.publish("like me live", "public"));
    let mut only = stream(&author, "stream=user:notification");
    let mut user = stream(&author, "stream=user");
    fan.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    for socket in [&mut only, &mut user] {
        let (event, payload, _) = next_frame(socket, DEADLINE);
        assert_eq!(event, "notification");
        let n: Value = serde_json::from_str(&payload).expect("a Notification");
        assert_eq!((n["type"].clone(), n["account"]["id"].clone()), (json!("favourite"), json!(fan.id)));
        assert_eq!(n["status"]["id"], post.as_str());
        // The key v2 files it under, so a client merges it into that group.
        let v2 = author.get("/api/v2/notifications").expect(200);
        assert_eq!(n["group_key"], v2["notification_groups"][0]["group_key"], "{v2}");
        assert!(n["group_key"].as_str().unwrap().starts_with(&format!("favourite-{post}-")), "{n}");
    }
    // A repeated like makes no notification, so nothing is sent.
    fan.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    assert_quiet(&mut only, "a repeated like");
    // Unsubscribed, the socket hears nothing; an unknown stream answers an error frame.
    only.send_text(r#"{"type":"unsubscribe","stream":"user:notification"}"#);
    only.send_text(r#"{"type":"subscribe","stream":"list"}"#);
    let error = only.next_event(DEADLINE);
    assert_eq!(error["status"], 400, "{error}");
    fan.post(&format!("/v1/posts/{post}/comments"), json!({ "body": "hi" })).expect(201);
    let (event, _, _) = next_frame(&mut user, DEADLINE);
    assert_eq!(event, "notification");
    assert_quiet(&mut only, "an unsubscribed socket");
}

#[test]
fn a_logout_closes_the_stream_with_4001() {
    let user = register("st_logout");
    let mut socket = stream(&user, "stream=user");
    user.post("/v1/me/logout", json!({})).expect(204);
    match socket.read(DEADLINE) {
        LiveRead::Closed(code) => assert_eq!(code, 4001),
        other => panic!("expected the socket to close, got {other:?}"),
    }
}

/// The issue's end to end: a follow, a like and a reply by one user reach the other's list,
/// unread count and stream once each; an unlike, a block and a delete take them away.
#[test]
fn a_follow_like_and_reply_reach_the_list_the_unread_count_and_the_stream_once_each() {
    let author = register("ste_author");
    let fan = register("ste_fan");
    let post = id_of(&author.publish("end to end", "public"));
    let mut socket = stream(&author, "stream=user:notification");
    fan.follow(&author);
    fan.put(&format!("/v1/posts/{post}/like"), None).expect(200);
    let reply = id_of(&fan.post(&format!("/v1/posts/{post}/comments"), json!({ "body": "yo" })).expect(201));
    let mut streamed = Vec::new();
    for _ in 0..3 {
        let (event, payload, _) = next_frame(&mut socket, DEADLINE);
        assert_eq!(event, "notification");
        let n: Value = serde_json::from_str(&payload).unwrap();
        streamed.push(n["type"].as_str().unwrap().to_string());
    }
    streamed.sort();
    assert_eq!(streamed, ["favourite", "follow", "mention"]);
    assert_quiet(&mut socket, "each once");
    let listed = |user: &User| -> Vec<String> {
        let page = user.get("/api/v1/notifications").expect(200);
        page.as_array().unwrap().iter().map(|n| n["type"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(listed(&author), ["mention", "favourite", "follow"]);
    assert_eq!(author.get("/api/v1/notifications/unread_count").expect(200)["count"], 3);
    fan.delete(&format!("/v1/posts/{post}/like")).expect(200);
    fan.delete(&format!("/v1/comments/{reply}")).expect(204);
    assert_eq!(listed(&author), ["follow"]);
    fan.block(&author);
    poll("the block to take the follow away", DEADLINE, || listed(&author).is_empty().then_some(()));
    assert_eq!(author.get("/api/v1/notifications/unread_count").expect(200)["count"], 0);
}

#[test]
fn mastodon_py_streams_updates_notifications_and_deletes_as_server_sent_events() {
    let stdout = crate::mastodon::run_client("mastodon_streaming", "mstr", &[]);
    assert!(stdout.contains("mastodon.py streaming flow ok"), "{stdout}");
}

#[test]
fn the_event_stream_opens_with_a_comment_and_refuses_a_bad_token() {
    let user = register("st_sse");
    let auth = format!("Bearer {}", user.token);
    let response = send("GET", "/api/v1/streaming/user/notification", &[("authorization", &auth)], b"");
    assert_eq!(response.status(), 200);
    assert!(response.content_type().starts_with("text/event-stream"), "{}", response.content_type());
    let mut opening = [0u8; 3];
    response.into_reader().read_exact(&mut opening).expect("the opening bytes");
    assert_eq!(&opening, b":)\n");
    let refused = raw("GET", "/api/v1/streaming/user", &[("authorization", "Bearer nope")], b"");
    assert_eq!(refused.status, 401);
}

#[test]
fn a_boost_arrives_as_an_update_carrying_the_reblog_and_its_original_author_is_notified_live() {
    let author = register("stb_author");
    let booster = register("stb_booster");
    let reader = register("stb_reader");
    reader.follow(&booster);
    activate(&reader);
    let post = id_of(&author.publish("boost me live", "public"));
    let mut home = stream(&reader, "stream=user");
    let mut notified = stream(&author, "stream=user:notification");
    let boost = booster.put(&format!("/v1/posts/{post}/repost"), None).expect(200);
    let (event, payload, _) = next_frame(&mut home, DEADLINE);
    assert_eq!(event, "update");
    let status: Value = serde_json::from_str(&payload).expect("a Status");
    assert_eq!(status["id"], boost["repost"]["id"], "the update is the boost: {status}");
    assert_eq!(status["account"]["id"], booster.id.as_str());
    assert_eq!(status["reblog"]["id"], post.as_str());
    assert!(status["reblog"]["content"].as_str().is_some_and(|c| c.contains("boost me live")), "{status}");
    let (event, payload, _) = next_frame(&mut notified, DEADLINE);
    assert_eq!(event, "notification");
    let n: Value = serde_json::from_str(&payload).expect("a Notification");
    assert_eq!((n["type"].clone(), n["status"]["id"].clone()), (json!("reblog"), json!(post)));
}

#[test]
fn a_direct_post_streams_a_conversation_on_direct_and_nothing_there_for_others() {
    let author = register("std_author");
    let bob = register("std_bob");
    let mut direct = stream(&bob, "stream=direct");
    let mut notifications_only = stream(&bob, "stream=user:notification");
    let body = serde_json::json!({ "status": format!("@{} psst", bob.handle), "visibility": "direct" });
    let posted = author.post("/api/v1/statuses", body).expect(200);
    let (event, payload, streams) = next_frame(&mut direct, DEADLINE);
    assert_eq!((event.as_str(), streams), ("conversation", json!(["direct"])));
    let conversation: Value = serde_json::from_str(&payload).expect("a Conversation");
    assert_eq!(conversation["last_status"]["id"], posted["id"], "{conversation}");
    assert_eq!(conversation["unread"], true);
    assert_eq!(conversation["accounts"][0]["id"], author.id.as_str());
    let (event, _, _) = next_frame(&mut notifications_only, DEADLINE);
    assert_eq!(event, "notification", "the mention, not the conversation");
    assert_quiet(&mut notifications_only, "a conversation is for direct alone");
}

#[test]
fn filters_apply_to_streamed_updates_and_notifications() {
    let author = register("stf_author");
    let reader = register("stf_reader");
    reader.follow(&author);
    activate(&reader);
    let warn = reader
        .post(
            "/api/v2/filters",
            json!({ "title": "Spoilers", "context": ["home", "notifications"], "keywords_attributes": [{ "keyword": "spoiler" }] }),
        )
        .expect(200);
    reader
        .post(
            "/api/v2/filters",
            json!({ "title": "Hate", "context": ["home", "notifications"], "filter_action": "hide", "keywords_attributes": [{ "keyword": "hateful" }] }),
        )
        .expect(200);
    let mut socket = stream(&reader, "stream=user");
    // The hidden post is published first: had it been sent, it would be the first frame.
    author.post("/api/v1/statuses", json!({ "status": "a hateful word" })).expect(200);
    let warned = author.post("/api/v1/statuses", json!({ "status": "a spoiler ahead" })).expect(200);
    let (event, payload, _) = next_frame(&mut socket, DEADLINE);
    assert_eq!(event, "update");
    let status: Value = serde_json::from_str(&payload).expect("a Status");
    assert_eq!(status["id"], warned["id"], "the hidden post is not streamed: {status}");
    assert_eq!(status["filtered"][0]["filter"]["id"], warn["id"], "{status}");
    assert_eq!(status["filtered"][0]["keyword_matches"], json!(["spoiler"]));
    // A mention whose status a `hide` filter matches is not streamed either; a plain one is.
    let mention = |text: &str| json!({ "status": format!("@{} {text}", reader.handle) });
    author.post("/api/v1/statuses", mention("hateful mention")).expect(200);
    let plain = author.post("/api/v1/statuses", mention("kind mention")).expect(200);
    let notification = loop {
        let (event, payload, _) = next_frame(&mut socket, DEADLINE);
        if event == "notification" {
            break serde_json::from_str::<Value>(&payload).expect("a Notification");
        }
    };
    assert_eq!(notification["status"]["id"], plain["id"], "{notification}");
}

#[test]
fn an_edit_reaches_the_user_streams_of_the_author_and_live_followers_as_status_update() {
    let author = register("stu_author");
    let follower = register("stu_follower");
    let stranger = register("stu_stranger");
    follower.follow(&author);
    activate(&follower);
    let post = author.post("/api/v1/statuses", json!({ "status": "first draft" })).expect(200);
    let mut following = stream(&follower, "stream=user");
    let mut own = stream(&author, "stream=user");
    let mut other = stream(&stranger, "stream=user");
    let id = post["id"].as_str().expect("an id");
    author.put(&format!("/api/v1/statuses/{id}"), Some(json!({ "status": "second draft" }))).expect(200);
    for (socket, who) in [(&mut following, "the follower"), (&mut own, "the author")] {
        let (event, payload, streams) = loop {
            let frame = next_frame(socket, DEADLINE);
            if frame.0 != "update" {
                break frame;
            }
        };
        assert_eq!((event.as_str(), streams), ("status.update", json!(["user"])), "{who}");
        let status: Value = serde_json::from_str(&payload).expect("a Status");
        assert_eq!(status["id"], id, "{who}");
        assert!(status["content"].as_str().is_some_and(|c| c.contains("second draft")), "{who}: {status}");
        assert!(status["edited_at"].is_string(), "{who}: {status}");
    }
    assert_quiet(&mut other, "a stranger's user stream");
}
