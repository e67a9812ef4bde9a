//! Live feed updates over a real WebSocket: tickets, the `new_posts` event and what the client
//! does with it, heartbeats, and sockets closing when their credential ends.

use std::time::Duration;

use edgefeed::domain::ids::UserId;
use edgefeed::domain::live::{Session, TicketCodec};
use serde_json::json;

use crate::common::*;

/// The fan-out deadline: a delivery reaches a window (and so its sockets) within this.
const DEADLINE: Duration = Duration::from_secs(60);
/// How long a socket must stay quiet to count as "nothing was sent".
const QUIET: Duration = Duration::from_secs(3);

/// Reader follows author; both have windows; the reader's socket is open.
fn reader_following(author: &User) -> (User, LiveSocket) {
    let reader = register("live_reader");
    reader.follow(author);
    activate(&reader);
    let socket = live_connect(&reader);
    (reader, socket)
}

#[test]
fn a_followed_authors_post_is_announced_and_read_through_the_cursor() {
    let author = register("live_author");
    let stranger = register("live_stranger");
    let (reader, mut socket) = reader_following(&author);

    // A post of someone the reader does not follow reaches no window of theirs: nothing is sent.
    let unrelated = stranger.publish("not for the reader", "public");
    wait_drained(&stranger);
    assert_eq!(socket.read(QUIET), LiveRead::Quiet, "a non-followed author's post was announced");

    let post = author.publish("live hello", "public");
    let event = socket.next_event(DEADLINE);
    assert_eq!(event["type"], "new_posts");
    assert_eq!(event["count"], 1, "{event}");
    let cursor = event["newest_cursor"].as_str().expect("a cursor");
    let page = reader.get(&format!("/v1/feed?after={cursor}")).expect(200);
    assert_eq!(ids(page["items"].as_array().unwrap()), vec![id_of(&post)], "{page}");
    assert_ne!(id_of(&post), id_of(&unrelated));
    // The event's cursor is a feed cursor of this reader: nobody else can use it.
    stranger.get(&format!("/v1/feed?after={cursor}")).expect_problem(400, "invalid_cursor");
}

#[test]
fn each_delivery_is_announced_and_redelivery_is_not() {
    let author = register("live_author");
    let (reader, mut socket) = reader_following(&author);
    let first = author.publish("one", "public");
    assert_eq!(socket.next_event(DEADLINE)["count"], 1);
    let second = author.publish("two", "public");
    let event = socket.next_event(DEADLINE);
    assert_eq!(event["count"], 1);
    // The cursor sits just below the new post: reading after it gives the new post only.
    let page =
        reader.get(&format!("/v1/feed?after={}", event["newest_cursor"].as_str().unwrap())).expect(200);
    assert_eq!(ids(page["items"].as_array().unwrap()), vec![id_of(&second)]);
    // A replayed fan-out of the first post changes no window, so it announces nothing.
    admin("POST", "/v1/admin/test/replay", Some(&json!({ "post_id": id_of(&first) }))).expect(200);
    wait_drained(&author);
    assert_eq!(socket.read(QUIET), LiveRead::Quiet);
}

#[test]
fn pings_are_answered() {
    let author = register("live_author");
    let (_reader, mut socket) = reader_following(&author);
    socket.send_text("ping");
    assert_eq!(socket.read(DEADLINE), LiveRead::Text("pong".into()));
}

#[test]
fn a_bad_missing_or_reused_ticket_is_refused() {
    let reader = register("live_reader");
    let ticket = live_ticket(&reader);
    assert_eq!(try_live_connect("not-a-ticket").err(), Some(401));
    assert_eq!(try_live_connect(&format!("{ticket}x")).err(), Some(401), "altered ticket");
    assert_eq!(try_live_connect("").err(), Some(401), "no ticket");
    // A bearer token is not a ticket.
    assert_eq!(try_live_connect(&reader.token).err(), Some(401));
    let socket = try_live_connect(&ticket);
    assert!(socket.is_ok(), "a fresh ticket opens the socket");
    assert_eq!(try_live_connect(&ticket).err(), Some(401), "a ticket works once");
    // Expired: signed with the service secret, but its minute is over.
    let expired = Session {
        user: UserId::parse(&reader.id).unwrap(),
        nonce: 1,
        ticket_expires_at: now_secs() - 1,
        token_issued_at: None,
        token_expires_at: (now_secs() + 3_600) as f64,
        token_id: None,
    };
    let expired = TicketCodec::new(AUTH_SECRET.as_bytes()).issue(&expired);
    assert_eq!(try_live_connect(&expired).err(), Some(401));
}

#[test]
fn the_route_is_documented_as_a_websocket() {
    let reader = register("live_reader");
    // A plain GET (no upgrade) is told what the route is.
    call("GET", &format!("/v1/feed/live?ticket={}", live_ticket(&reader)), None, None)
        .expect_problem(426, "upgrade_required");
    call("POST", "/v1/feed/live/ticket", None, Some(&json!({}))).expect_problem(401, "unauthorized");
    let issued = reader.post("/v1/feed/live/ticket", json!({})).expect(200);
    let expires = edgefeed::domain::time::parse_rfc3339(issued["expires_at"].as_str().unwrap()).unwrap();
    let ttl = expires / 1000 - now_secs();
    assert!((50..=61).contains(&ttl), "a ticket lives about a minute, not {ttl} s");
}

#[test]
fn a_logout_closes_the_socket_and_its_ticket() {
    let author = register("live_author");
    let (reader, mut socket) = reader_following(&author);
    let unused = live_ticket(&reader);
    reader.post("/v1/me/logout", json!({})).expect(204);
    assert_eq!(socket.read(DEADLINE), LiveRead::Closed(4001));
    // The ticket was minted from the revoked token: it opens nothing now.
    assert_eq!(try_live_connect(&unused).err(), Some(401));
}

#[test]
fn a_suspension_closes_the_socket() {
    let author = register("live_author");
    let (reader, mut socket) = reader_following(&author);
    let reason = json!({ "reason": "live socket test" });
    admin("POST", &format!("/v1/admin/users/{}/suspend", reader.id), Some(&reason)).expect(200);
    assert_eq!(socket.read(DEADLINE), LiveRead::Closed(4001));
}

#[test]
fn a_review_keeps_the_sockets_of_a_user_homed_off_the_control_database() {
    // The review reads each socket's credential where the user lives: a user off `DB_0` (when
    // there are several databases) shows whether it looks there.
    let reader = (0..64)
        .map(|_| register("live_review"))
        .find(|u| databases() == 1 || crate::shards::home_of(&u.id) != 0)
        .expect("a user homed off the control database");
    let mut lasting = live_connect(&reader);
    let short = mint_token(AUTH_SECRET, &reader.id, now_secs() + 4);
    let ticket = call("POST", "/v1/feed/live/ticket", Some(&short), Some(&json!({}))).expect(200);
    let mut expiring =
        try_live_connect(ticket["ticket"].as_str().unwrap()).expect("a socket for the short token");
    // The object's alarm wakes at the short token's expiry and reviews every socket of the reader.
    assert_eq!(expiring.read(DEADLINE), LiveRead::Closed(4001));
    assert_eq!(lasting.read(QUIET), LiveRead::Quiet, "the review closed a socket whose credential stands");
}

#[test]
fn a_socket_closes_when_its_token_expires() {
    let reader = register("live_expiring");
    // A token an external issuer minted with a few seconds left (no `iat`).
    let short = mint_token(AUTH_SECRET, &reader.id, now_secs() + 4);
    let ticket = call("POST", "/v1/feed/live/ticket", Some(&short), Some(&json!({}))).expect(200);
    let mut socket =
        try_live_connect(ticket["ticket"].as_str().unwrap()).expect("a socket for the short token");
    // The object's alarm is set for the token's expiry: the socket closes then, unprompted.
    let started = std::time::Instant::now();
    assert_eq!(socket.read(DEADLINE), LiveRead::Closed(4001));
    assert!(started.elapsed() < DEADLINE, "closed at expiry, not at the next 4-minute review");
}
