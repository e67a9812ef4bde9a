//! The timelines beyond follows (issue 42, part 3): the public and tag timelines read from the
//! timeline index, checked for the viewer at read; hashtags on statuses; following and
//! featuring tags; the `public` and `hashtag` streams.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::mastodon_page as page;
use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);

/// Whether the public timeline shows `status` to `user` now: the page just at its id.
fn in_public(user: &User, status: &Value) -> bool {
    let id: i64 = id_of(status).parse().expect("a numeric id");
    page(user, &format!("/api/v1/timelines/public?max_id={}&limit=1", id + 1)).0.first()
        == Some(&id_of(status))
}

fn tag_ids(user: &User, tag: &str, query: &str) -> Vec<String> {
    page(user, &format!("/api/v1/timelines/tag/{tag}?limit=40&{query}")).0
}

#[test]
fn public_and_tag_timelines_hold_public_posts_the_viewer_may_see_now() {
    let author = register("tl_author");
    let viewer = register("tl_viewer");
    let other = register("tl_other");
    let tag = fresh_tag("TlRust");
    let lower = tag.to_lowercase();
    let post = toot(&author, &format!("hello #{tag} and #Second{tag}"), "public");
    // At once, on both timelines, exactly as the status itself reads (case-insensitive tag).
    assert!(in_public(&viewer, &post), "a public post is in the public timeline as publish answers");
    let listed = viewer.get(&format!("/api/v1/timelines/tag/{lower}")).expect(200);
    assert_eq!(listed[0], viewer.get(&format!("/api/v1/statuses/{}", id_of(&post))).expect(200));
    let tags: Vec<&str> =
        post["tags"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tags, [lower.clone(), format!("second{lower}")]);
    // Unlisted or not public, not there; a reply to someone else is in the tag timeline but not the public
    // one; a boost is in neither.
    let unlisted = toot(&author, &format!("quiet #{tag}"), "unlisted");
    assert_eq!(unlisted["visibility"], "unlisted");
    let private = toot(&author, &format!("friends #{tag}"), "private");
    let reply = other
        .post("/api/v1/statuses", json!({ "status": format!("re #{tag}"), "in_reply_to_id": id_of(&post) }))
        .expect(200);
    let boost = viewer.post(&format!("/api/v1/statuses/{}/reblog", id_of(&post)), json!({})).expect(200);
    assert!(!in_public(&viewer, &unlisted), "unlisted");
    assert!(!in_public(&viewer, &private), "followers-only");
    assert!(!in_public(&viewer, &reply), "a reply to someone else");
    assert_eq!(tag_ids(&viewer, &tag, ""), [id_of(&reply), id_of(&post)]);
    assert!(!in_public(&viewer, &boost));
    // any[], all[], none[] and the media-only filter.
    let second = toot(&other, &format!("only #Second{tag}"), "public");
    assert_eq!(
        tag_ids(&viewer, &tag, &format!("any[]=second{tag}")),
        [id_of(&second), id_of(&reply), id_of(&post)]
    );
    assert_eq!(tag_ids(&viewer, &tag, &format!("all[]=second{tag}")), [id_of(&post)]);
    assert_eq!(tag_ids(&viewer, &tag, &format!("none[]=second{tag}")), [id_of(&reply)]);
    assert!(tag_ids(&viewer, &tag, "only_media=true").is_empty());
    assert!(tag_ids(&viewer, &tag, "remote=true").is_empty(), "every account is local");
    assert_eq!(tag_ids(&viewer, &tag, "local=true").len(), 2);
    // Checked at read: a block either way and a mute hide the author; an edit that drops the
    // tag takes the post out of that tag's timeline; a deletion out of both.
    viewer.block(&other);
    assert_eq!(tag_ids(&viewer, &tag, ""), [id_of(&post)]);
    assert!(in_public(&other, &post));
    other.post(&format!("/api/v1/accounts/{}/mute", author.id), json!({})).expect(200);
    assert!(!in_public(&other, &post), "a muted author's post is not shown");
    author
        .put(&format!("/api/v1/statuses/{}", id_of(&post)), Some(json!({ "status": "no tags now" })))
        .expect(200);
    assert!(tag_ids(&viewer, &tag, "").is_empty());
    assert!(in_public(&viewer, &post));
    let quiet = json!({ "status": "no tags now", "visibility": "unlisted" });
    let edited = author.put(&format!("/api/v1/statuses/{}", id_of(&post)), Some(quiet)).expect(200);
    assert_eq!(edited["visibility"], "unlisted");
    assert!(!in_public(&viewer, &post), "made unlisted, it leaves the public timeline");
    author
        .put(&format!("/api/v1/statuses/{}", id_of(&post)), Some(json!({ "visibility": "public" })))
        .expect(200);
    assert!(in_public(&viewer, &post), "public again, it is back");
    author.delete(&format!("/api/v1/statuses/{}", id_of(&post))).expect(200);
    assert!(!in_public(&viewer, &post));
    // Bad input: a clear error and nothing else.
    viewer.get("/api/v1/timelines/public?max_id=abc").expect(422);
    viewer.get("/api/v1/timelines/public?only_media=maybe").expect(422);
    viewer.get(&format!("/api/v1/timelines/tag/{tag}?any[]=two%20words")).expect(422);
    assert_eq!(viewer.get("/api/v1/timelines/tag/1234").status, 404, "a tag needs a letter");
    assert_eq!(raw("GET", "/api/v1/timelines/public", &[], b"").status, 401);
}

#[test]
fn a_tag_timeline_pages_by_its_links_exactly_once_past_hidden_posts() {
    let author = register("tl_pager");
    let hidden = register("tl_hidden");
    let viewer = register("tl_pview");
    let tag = fresh_tag("TlPage");
    let mut posted = Vec::new();
    for i in 0..9 {
        // Every third post is by an author the viewer blocks: pages still fill past them.
        let by = if i % 3 == 1 { &hidden } else { &author };
        posted.push((i % 3 != 1, id_of(&toot(by, &format!("#{tag} number {i}"), "public"))));
    }
    viewer.block(&hidden);
    let expected: Vec<String> =
        posted.iter().rev().filter(|(shown, _)| *shown).map(|(_, id)| id.clone()).collect();
    let mut seen = Vec::new();
    let mut next = Some(format!("/api/v1/timelines/tag/{tag}?limit=2"));
    let mut pages = 0;
    while let Some(path) = next {
        let (items, link) = page(&viewer, &path);
        assert!(items.len() <= 2, "{items:?}");
        seen.extend(items);
        next = link;
        pages += 1;
        assert!(pages < 10, "the links end");
    }
    assert_eq!(seen, expected, "newest first, each once, none hidden");
    // min_id pages up from below: the two just above the oldest, newest first.
    let oldest = &expected[expected.len() - 1];
    let (up, _) = page(&viewer, &format!("/api/v1/timelines/tag/{tag}?min_id={oldest}&limit=2"));
    assert_eq!(up, expected[expected.len() - 3..expected.len() - 1].to_vec());
}

#[test]
fn tags_are_followed_featured_and_suggested() {
    let user = register("tl_tagger");
    let tag = fresh_tag("TlFeat");
    let lower = tag.to_lowercase();
    toot(&user, &format!("#{tag} once"), "public");
    toot(&user, &format!("#{tag} twice, and #Other{tag}"), "public");
    toot(&user, &format!("#{tag} not counted"), "private");
    let seen = user.get(&format!("/api/v1/tags/{tag}")).expect(200);
    assert_eq!((seen["following"].clone(), seen["featuring"].clone()), (json!(false), json!(false)));
    let today = &seen["history"][0];
    assert_eq!((today["uses"].clone(), today["accounts"].clone()), (json!("2"), json!("1")), "{seen}");
    // Follow, list, unfollow (idempotent both ways).
    for _ in 0..2 {
        let followed = user.post(&format!("/api/v1/tags/{tag}/follow"), json!({})).expect(200);
        assert_eq!(followed["following"], true);
    }
    let list = user.get("/api/v1/followed_tags").expect(200);
    assert_eq!(list.as_array().unwrap().iter().map(|t| t["name"].clone()).collect::<Vec<_>>(), [json!(tag)]);
    user.post(&format!("/api/v1/tags/{lower}/unfollow"), json!({})).expect(200);
    assert_eq!(user.get(&format!("/api/v1/tags/{tag}")).expect(200)["following"], false);
    assert_eq!(user.get("/api/v1/followed_tags").expect(200), json!([]));
    // Suggestions: the tags of one's own public posts not featured yet.
    let suggested = user.get("/api/v1/featured_tags/suggestions").expect(200);
    let names: Vec<String> =
        suggested.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_lowercase()).collect();
    assert_eq!(names, [lower.clone(), format!("other{lower}")]);
    // Featured: counts the account's public uses; the account's list shows the same.
    let featured = user.post("/api/v1/featured_tags", json!({ "name": format!("#{tag}") })).expect(200);
    assert_eq!((featured["name"].clone(), featured["statuses_count"].clone()), (json!(tag), json!(2)));
    assert!(featured["last_status_at"].as_str().is_some_and(|d| d.len() == 10), "{featured}");
    assert_eq!(user.get("/api/v1/featured_tags").expect(200), json!([featured.clone()]));
    let other = register("tl_looker");
    assert_eq!(
        other.get(&format!("/api/v1/accounts/{}/featured_tags", user.id)).expect(200),
        json!([featured.clone()])
    );
    assert_eq!(user.get(&format!("/api/v1/tags/{tag}")).expect(200)["featuring"], true);
    // At most ten; a bad name is refused; the delete takes it off.
    for i in 0..9 {
        user.post(&format!("/api/v1/tags/Extra{i}{tag}/feature"), json!({})).expect(200);
    }
    user.post("/api/v1/featured_tags", json!({ "name": format!("Eleventh{tag}") })).expect(422);
    user.post("/api/v1/featured_tags", json!({ "name": "not a tag" })).expect(422);
    user.delete(&format!("/api/v1/featured_tags/{}", featured["id"].as_str().unwrap())).expect(200);
    user.delete(&format!("/api/v1/featured_tags/{}", featured["id"].as_str().unwrap())).expect(404);
    assert_eq!(user.get(&format!("/api/v1/tags/{tag}")).expect(200)["featuring"], false);
    assert_eq!(user.get("/api/v1/featured_tags").expect(200).as_array().unwrap().len(), 9);
}

fn stream(user: &User, query: &str) -> LiveSocket {
    let path = format!("/api/v1/streaming?{query}&access_token={}", user.token);
    try_mastodon_stream(&path, &[]).unwrap_or_else(|s| panic!("streaming refused: {s}")).0
}

/// The next frame's (event, payload, stream).
fn next_frame(socket: &mut LiveSocket) -> (String, String, Value) {
    let frame = socket.next_event(DEADLINE);
    let event = frame["event"].as_str().unwrap_or_default().to_string();
    let payload =
        frame["payload"].as_str().unwrap_or_else(|| panic!("a string payload: {frame}")).to_string();
    (event, payload, frame["stream"].clone())
}

#[test]
fn public_and_hashtag_streams_carry_updates_edits_and_deletes_for_the_viewer() {
    let author = register("tls_author");
    let listener = register("tls_listener");
    let blocked = register("tls_blocked");
    let tag = fresh_tag("TlStream");
    let mut socket = stream(&listener, &format!("stream=hashtag&tag={tag}"));
    socket.send_text(r#"{"type":"subscribe","stream":"public:local"}"#);
    socket.send_text(r#"{"type":"subscribe","stream":"hashtag"}"#);
    let error = next_error(&mut socket);
    assert_eq!(
        (error["status"].clone(), error["error"].clone()),
        (json!(400), json!("No tag for stream provided"))
    );
    listener.block(&blocked);
    // Settle the subscription before posting: the subscribe message is handled in order, so a
    // round trip through the same socket (another refused subscription) proves it is held.
    socket.send_text(r#"{"type":"subscribe","stream":"list"}"#);
    assert_eq!(next_error(&mut socket)["error"], "Unknown stream type");
    let hidden = toot(&blocked, &format!("#{tag} from someone blocked"), "public");
    let post = toot(&author, &format!("first #{tag}"), "public");
    let id = id_of(&post);
    // `public:local` carries every test's public posts: read past the others.
    let mut frames = frames_about(&mut socket, &[&id, &id_of(&hidden)], 2);
    frames.sort_by_key(|(_, _, stream)| stream.to_string());
    assert_eq!(frames[0].2, json!(["hashtag", tag]));
    assert_eq!(frames[1].2, json!(["public:local"]));
    for (event, payload, _) in &frames {
        let status: Value = serde_json::from_str(payload).expect("a Status");
        assert_eq!((event.as_str(), status["id"].clone()), ("update", json!(id)), "never the blocked one's");
    }
    let edit = json!({ "status": format!("second #{tag}") });
    author.put(&format!("/api/v1/statuses/{id}"), Some(edit)).expect(200);
    for (event, payload, _) in frames_about(&mut socket, &[&id], 2) {
        assert_eq!(event, "status.update");
        assert!(payload.contains("second"), "{payload}");
    }
    author.delete(&format!("/api/v1/statuses/{id}")).expect(200);
    for (event, payload, _) in frames_about(&mut socket, &[&id], 2) {
        assert_eq!((event.as_str(), payload.as_str()), ("delete", id.as_str()));
    }
    // Bad stream parameters at connect: 422.
    let bad = format!("/api/v1/streaming?stream=hashtag&tag=two%20words&access_token={}", listener.token);
    assert_eq!(try_mastodon_stream(&bad, &[]).err(), Some(422));
}

/// The next `n` frames about any of `ids` (an update's status id, or a delete's id), skipping
/// frames about other posts.
fn frames_about(socket: &mut LiveSocket, ids: &[&str], n: usize) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    while found.len() < n {
        let frame = next_frame(socket);
        let about = if frame.0 == "delete" {
            frame.1.clone()
        } else {
            serde_json::from_str::<Value>(&frame.1).map(|s| id_of(&s)).unwrap_or_default()
        };
        if ids.contains(&about.as_str()) {
            found.push(frame);
        }
    }
    found
}

/// The next error frame, past any updates (other tests' public posts on `public:local`).
fn next_error(socket: &mut LiveSocket) -> Value {
    (0..200)
        .map(|_| socket.next_event(DEADLINE))
        .find(|frame| frame.get("error").is_some())
        .unwrap_or_else(|| panic!("no error frame"))
}

/// A frame as (event, the post it is about, stream).
fn about(frame: (String, String, Value)) -> (String, String, Value) {
    let (event, payload, stream) = frame;
    let id = if event == "delete" {
        payload
    } else {
        serde_json::from_str::<Value>(&payload).map(|s| id_of(&s)).unwrap_or_default()
    };
    (event, id, stream)
}

/// Frames about `ids` until one satisfies `stop` (included), skipping other posts'.
fn frames_until(
    socket: &mut LiveSocket,
    ids: &[String],
    stop: impl Fn(&(String, String, Value)) -> bool,
) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    loop {
        let frame = about(next_frame(socket));
        if ids.contains(&frame.1) {
            let done = stop(&frame);
            found.push(frame);
            if done {
                return found;
            }
        }
    }
}

fn relay_stats(tag: &str) -> Value {
    admin("POST", "/v1/admin/test/relay", Some(&json!({ "tag": tag }))).expect(200)
}

/// A stream relay per index key (`objects/relay.rs`): several public posts in quick succession
/// reach every listener's hashtag stream, and one listener's public stream, in the order they
/// were posted (one author's posts share a public stripe, so one relay), while the tag's relay
/// calls each listener's window once per flush, not once per post. A post deleted right after
/// it was posted is not sent at all when both fall in one flush (coalesced), and otherwise
/// never as an update after its delete.
#[test]
fn stream_relays_keep_order_and_call_each_window_once_per_flush() {
    let author = register("trl_author");
    let tag = fresh_tag("TrRelay");
    let listeners: Vec<User> = (0..3).map(|i| register(&format!("trl_listener{i}"))).collect();
    let mut sockets: Vec<LiveSocket> =
        listeners.iter().map(|l| stream(l, &format!("stream=hashtag&tag={tag}"))).collect();
    sockets[0].send_text(r#"{"type":"subscribe","stream":"public:local"}"#);
    for socket in &mut sockets {
        // A refused subscription's answer proves the ones before it are held (leases taken).
        socket.send_text(r#"{"type":"subscribe","stream":"list"}"#);
        assert_eq!(next_error(socket)["error"], "Unknown stream type");
    }
    let before = relay_stats(&tag);
    let mut posts: Vec<String> =
        (0..6).map(|i| id_of(&toot(&author, &format!("#{tag} relayed {i}"), "public"))).collect();
    let gone = id_of(&toot(&author, &format!("#{tag} gone at once"), "public"));
    author.delete(&format!("/api/v1/statuses/{gone}")).expect(200);
    posts.push(id_of(&toot(&author, &format!("#{tag} after it"), "public")));
    let last = posts.last().cloned().unwrap_or_default();
    let watched: Vec<String> = posts.iter().cloned().chain([gone.clone()]).collect();
    for (i, socket) in sockets.iter_mut().enumerate() {
        let wanted = if i == 0 { 2 } else { 1 };
        let seen = std::cell::Cell::new(0);
        let frames = frames_until(socket, &watched, |(event, id, _)| {
            seen.set(seen.get() + usize::from(event == "update" && *id == last));
            seen.get() == wanted
        });
        for stream in [json!(["hashtag", tag]), json!(["public:local"])].iter().take(wanted) {
            let on: Vec<&(String, String, Value)> = frames.iter().filter(|f| f.2 == *stream).collect();
            let updates: Vec<&str> =
                on.iter().filter(|f| f.0 == "update" && f.1 != gone).map(|f| f.1.as_str()).collect();
            assert_eq!(updates, posts.iter().map(String::as_str).collect::<Vec<_>>(), "in order on {stream}");
            let of_gone: Vec<&str> = on.iter().filter(|f| f.1 == gone).map(|f| f.0.as_str()).collect();
            assert!(
                of_gone.is_empty() || of_gone == ["delete"] || of_gone == ["update", "delete"],
                "the deleted post: nothing, or its delete last, on {stream}: {of_gone:?}"
            );
        }
    }
    let told = |s: &Value, f: &str| s[f].as_u64().unwrap_or(0) - before[f].as_u64().unwrap_or(0);
    let after = poll("the tag relay's figures", DEADLINE, || {
        let s = relay_stats(&tag);
        (told(&s, "told") >= 9 && told(&s, "sent") + told(&s, "coalesced") >= 9).then_some(s)
    });
    let (news, calls) = (told(&after, "told"), told(&after, "window_calls"));
    assert!(news >= 9, "8 posts and a delete, one news each: {after}");
    assert!(told(&after, "flushes") >= 1, "{after}");
    assert!(
        calls % 3 == 0 && calls <= 3 * told(&after, "flushes"),
        "each listener's window once per flush that sends: {after}"
    );
    assert!(calls < news * 3, "fewer window calls ({calls}) than news x listeners ({}): {after}", news * 3);
    if told(&after, "coalesced") >= 2 {
        eprintln!("the deleted post came and went within one flush: not sent ({after})");
    }
}

/// The relay's figures for `L` public-stream listeners and `N` public posts (4 authors posting
/// side by side, each in quick succession), printed for the capacity model: window calls and
/// listener reads summed over the 16 stripes' relays, and the publishes' D1 statements. Run
/// alone, as it restarts the server with the default `STREAM_RELAY_MS` (1000) and other tests'
/// posts would count too: `cargo test --test api -- --ignored timelines::measure_stream_relay`.
#[test]
#[ignore]
fn measure_stream_relay() {
    const L: usize = 4;
    const N: usize = 24;
    server().kill();
    server().restart_with(&[("STREAM_RELAY_MS", "1000")]);
    let stripes = |f: &str| -> u64 {
        (0..16)
            .map(|s| admin("POST", "/v1/admin/test/relay", Some(&json!({ "stripe": s }))).expect(200))
            .map(|v| v[f].as_u64().unwrap_or(0))
            .sum()
    };
    let listeners: Vec<User> = (0..L).map(|i| register(&format!("msr_listener{i}"))).collect();
    let mut sockets: Vec<LiveSocket> = listeners.iter().map(|l| stream(l, "stream=public")).collect();
    for socket in &mut sockets {
        socket.send_text(r#"{"type":"subscribe","stream":"list"}"#);
        next_error(socket);
    }
    let authors: Vec<User> = (0..4).map(|i| register(&format!("msr_author{i}"))).collect();
    let before: Vec<u64> = ["told", "flushes", "window_calls"].iter().map(|f| stripes(f)).collect();
    let (mut statements, mut last) = (Vec::new(), Vec::new());
    std::thread::scope(|scope| {
        let runs: Vec<_> = authors
            .iter()
            .map(|author| {
                scope.spawn(move || {
                    let mut timings = Vec::new();
                    let mut newest = String::new();
                    for i in 0..N / 4 {
                        let body = json!({ "status": format!("measured {i}"), "visibility": "public" });
                        let r = author.post("/api/v1/statuses", body);
                        timings.push(r.timing("statements"));
                        newest = id_of(&r.expect(200));
                    }
                    (timings, newest)
                })
            })
            .collect();
        for run in runs {
            let (timings, newest) = run.join().expect("a publishing thread");
            statements.extend(timings);
            last.push(newest);
        }
    });
    for socket in &mut sockets {
        let seen = std::cell::RefCell::new(Vec::new());
        frames_until(socket, &last, |(event, id, _)| {
            seen.borrow_mut().push((event.clone(), id.clone()));
            seen.borrow().iter().filter(|(e, _)| e == "update").count() == last.len()
        });
    }
    let after = poll("every post relayed", DEADLINE, || {
        let told = stripes("told") - before[0];
        (told >= N as u64)
            .then(|| (told, stripes("flushes") - before[1], stripes("window_calls") - before[2]))
    });
    statements.sort_unstable();
    let figures = format!(
        "stream relay, L={L} listeners, N={N} public posts: relay calls {} (before: 0), window calls {} \
         (before: N x L = {}), listener reads on the stripes' databases {} (before: one per post's index \
         write, N = {N}, and again per fan-out event), publish D1 statements p50 {} (before: +1 per key)",
        after.0,
        after.2,
        N * L,
        after.1,
        statements[N / 2],
    );
    eprintln!("{figures}");
    server().kill();
    server().restart_with(&[("STREAM_RELAY_MS", "250")]);
    assert!(after.2 < (N * L) as u64, "{figures}");
}
