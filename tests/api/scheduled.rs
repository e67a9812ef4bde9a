//! Scheduled posts (issue 42): `POST /api/v1/statuses` with `scheduled_at` keeps the checked
//! request; `/api/v1/scheduled_statuses` lists (paged by id, `Link`), shows, reschedules and
//! cancels; refusals change nothing; the cron publishes a due one through the ordinary publish,
//! once, however many passes run at once, and not when what it names changed by then.

use std::time::Duration;

use edgefeed::domain::time::format_rfc3339;
use serde_json::{json, Value};

use crate::common::*;
use crate::media::{png, upload};

const DEADLINE: Duration = Duration::from_secs(90);
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

fn now_ms() -> i64 {
    now_secs() * 1000
}

/// A time `ahead_ms` from now, as a client sends it (milliseconds, `Z`).
fn at(ahead_ms: i64) -> String {
    format_rfc3339(now_ms() + ahead_ms)
}

fn schedule(user: &User, body: Value) -> Resp {
    user.post("/api/v1/statuses", body)
}

fn scheduled_ids(user: &User, query: &str) -> Vec<String> {
    let page = user.get(&format!("/api/v1/scheduled_statuses{query}")).expect(200);
    page.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
}

fn statuses_count(user: &User) -> i64 {
    user.get(&format!("/api/v1/accounts/{}", user.id)).expect(200)["statuses_count"].as_i64().unwrap()
}

/// The author's own statuses with `text` in them.
fn published(user: &User, text: &str) -> Vec<Value> {
    let list = user.get(&format!("/api/v1/accounts/{}/statuses?limit=40", user.id)).expect(200);
    list.as_array()
        .unwrap()
        .iter()
        .filter(|s| s["content"].as_str().unwrap().contains(text))
        .cloned()
        .collect()
}

fn in_home(reader: &User, text: &str) -> Vec<Value> {
    let home = reader.get("/api/v1/timelines/home?limit=40").expect(200);
    home.as_array()
        .unwrap()
        .iter()
        .filter(|s| s["content"].as_str().unwrap().contains(text))
        .cloned()
        .collect()
}

fn make_due(user: &User, id: &str) {
    let body = json!({ "user_id": user.id, "scheduled_id": id });
    assert_eq!(admin("POST", "/v1/admin/test/scheduled", Some(&body)).expect(200)["row"], true);
}

/// The cron as production fires it (one queue message per database) and the admin pass (every
/// share in the request), all at once.
fn fire_cron_concurrently() {
    let passes = parallel(3, 3, |i| match i {
        0 => admin("POST", "/v1/admin/reconcile", None).status,
        _ => send("GET", "/__scheduled?cron=*+*+*+*+*", &[], b"").status(),
    });
    assert!(passes.iter().all(|s| *s == 200), "{passes:?}");
}

fn media_state(id: &str, age_seconds: u64) -> Value {
    admin("POST", "/v1/admin/test/media", Some(&json!({ "media_id": id, "age_seconds": age_seconds })))
        .expect(200)
}

fn link_of(user: &User, path: &str) -> (Vec<String>, String) {
    let auth = format!("Bearer {}", user.token);
    let response = send("GET", path, &[("authorization", auth.as_str())], b"");
    let link = response.header("link").unwrap_or("").to_string();
    let page: Value = response.into_json().unwrap();
    (page.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect(), link)
}

fn link_path(link: &str, rel: &str) -> Option<String> {
    let part = link.split(", ").find(|l| l.ends_with(&format!("rel=\"{rel}\"")))?;
    let url = part.trim_start_matches('<').split('>').next()?;
    let (_, rest) = url.split_once("://")?;
    Some(rest[rest.find('/')?..].to_owned())
}

#[test]
fn a_post_is_scheduled_shown_listed_rescheduled_and_cancelled() {
    let (alice, other) = (register("sc_alice"), register("sc_other"));
    // What masto.js's case sends: JSON, a time with milliseconds, which comes back as sent.
    let tomorrow = at(DAY_MS);
    let made =
        schedule(&alice, json!({ "status": "Scheduled status", "scheduled_at": tomorrow })).expect(200);
    assert_eq!(made["scheduled_at"], tomorrow.as_str());
    assert_eq!(made["media_attachments"], json!([]));
    let params = &made["params"];
    assert_eq!(
        (params["text"].clone(), params["visibility"].clone(), params["sensitive"].clone()),
        (json!("Scheduled status"), json!("public"), json!(false))
    );
    for null in ["in_reply_to_id", "poll", "media_ids", "scheduled_at", "idempotency"] {
        assert_eq!(params[null], Value::Null, "{null}: {params}");
    }
    assert_eq!(params["with_rate_limit"], false);
    let id = made["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/scheduled_statuses/{id}");
    assert_eq!(alice.get(&path).expect(200), made);
    assert_eq!(statuses_count(&alice), 0, "nothing is published yet");

    // A form with a content warning, unlisted, and a poll: kept as Mastodon shapes them.
    let auth = format!("Bearer {}", alice.token);
    let form = format!(
        "status=second&visibility=unlisted&spoiler_text=cw&poll[options][]=a&poll[options][]=b\
         &poll[expires_in]=600&scheduled_at={}",
        at(2 * DAY_MS).replace('+', "%2B")
    );
    let headers = [("authorization", auth.as_str()), ("content-type", "application/x-www-form-urlencoded")];
    let second = raw("POST", "/api/v1/statuses", &headers, form.as_bytes());
    let second = second.expect(200);
    assert_eq!(second["params"]["visibility"], "unlisted");
    assert_eq!(
        (second["params"]["spoiler_text"].clone(), second["params"]["sensitive"].clone()),
        (json!("cw"), json!(true))
    );
    assert_eq!(
        second["params"]["poll"],
        json!({ "options": ["a", "b"], "expires_in": 600, "multiple": false, "hide_totals": false })
    );
    let third = schedule(&alice, json!({ "status": "third", "scheduled_at": at(3 * DAY_MS) })).expect(200);
    let ids = [id.clone(), id_of(&second), id_of(&third)];

    // Listed newest scheduling first, paged by id with Link.
    assert_eq!(scheduled_ids(&alice, ""), vec![ids[2].clone(), ids[1].clone(), ids[0].clone()]);
    let (first_page, link) = link_of(&alice, "/api/v1/scheduled_statuses?limit=2");
    assert_eq!(first_page, vec![ids[2].clone(), ids[1].clone()]);
    let next = link_path(&link, "next").expect("a next link");
    assert!(next.contains("limit=2"), "{next}");
    assert_eq!(scheduled_ids(&alice, &next["/api/v1/scheduled_statuses".len()..]), vec![ids[0].clone()]);
    let above = format!("?min_id={}&limit=1", ids[0]);
    assert_eq!(scheduled_ids(&alice, &above), vec![ids[1].clone()], "min_id: the oldest above it");
    assert_eq!(scheduled_ids(&alice, &format!("?since_id={}", ids[0])), vec![ids[2].clone(), ids[1].clone()]);
    assert_eq!(alice.get("/api/v1/scheduled_statuses?max_id=abc").status, 422);
    assert!(scheduled_ids(&other, "").is_empty(), "each user sees only their own");

    // Rescheduled: the new time, same bounds; a refused one changes nothing.
    let later = at(2 * DAY_MS);
    let moved = alice.put(&path, Some(json!({ "scheduled_at": later }))).expect(200);
    assert_eq!(
        (moved["scheduled_at"].clone(), moved["params"]["text"].clone()),
        (json!(later), json!("Scheduled status"))
    );
    for refused in [at(60_000), "next week".to_owned(), at(400 * DAY_MS)] {
        let r = alice.put(&path, Some(json!({ "scheduled_at": refused })));
        assert_eq!(r.status, 422, "{refused}: {}", r.body);
        assert!(r.body["error"].as_str().unwrap().contains("scheduled_at"), "{}", r.body);
    }
    assert_eq!(alice.get(&path).expect(200)["scheduled_at"], later.as_str());

    // Nobody else's: 404 as for an id that does not exist.
    assert_eq!(other.get(&path).status, 404);
    assert_eq!(other.put(&path, Some(json!({ "scheduled_at": at(DAY_MS) }))).status, 404);
    assert_eq!(other.delete(&path).status, 404);
    assert_eq!(alice.get("/api/v1/scheduled_statuses/123").status, 404);

    // Cancelled: gone, and never published.
    assert_eq!(alice.delete(&path).expect(200), json!({}));
    assert_eq!(alice.get(&path).status, 404);
    assert_eq!(alice.delete(&path).status, 404);
    assert_eq!(scheduled_ids(&alice, ""), vec![ids[2].clone(), ids[1].clone()]);
    assert_eq!(statuses_count(&alice), 0);
}

#[test]
fn a_retried_schedule_answers_the_first_and_a_reused_key_is_refused() {
    let alice = register("sc_key");
    let auth = format!("Bearer {}", alice.token);
    let headers = [
        ("idempotency-key", "sched-key-1"),
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
    ];
    let body = json!({ "status": "only once", "scheduled_at": at(DAY_MS) }).to_string();
    let first = raw("POST", "/api/v1/statuses", &headers, body.as_bytes()).expect(200);
    let again = raw("POST", "/api/v1/statuses", &headers, body.as_bytes()).expect(200);
    assert_eq!(first["id"], again["id"]);
    let other = json!({ "status": "something else", "scheduled_at": at(DAY_MS) }).to_string();
    let reused = raw("POST", "/api/v1/statuses", &headers, other.as_bytes());
    assert_eq!(reused.status, 409, "{}", reused.body);
    assert_eq!(scheduled_ids(&alice, "").len(), 1);
}

#[test]
fn refused_requests_change_nothing() {
    let (alice, bob) = (register("sc_refused"), register("sc_refused_bob"));
    let bobs_upload = id_of(&upload(&bob, &png(), "b.png", &[]).expect(200));
    let cases: Vec<(Value, &str)> = vec![
        (json!({ "status": "soon", "scheduled_at": at(4 * 60_000) }), "scheduled_at"),
        (json!({ "status": "past", "scheduled_at": at(-HOUR_MS) }), "scheduled_at"),
        (json!({ "status": "bad date", "scheduled_at": "tomorrow at noon" }), "scheduled_at"),
        (json!({ "status": "bad date", "scheduled_at": "2030-02-30T10:00:00Z" }), "scheduled_at"),
        (json!({ "status": "too far", "scheduled_at": at(400 * DAY_MS) }), "scheduled_at"),
        (json!({ "status": "", "scheduled_at": at(DAY_MS) }), "empty"),
        (json!({ "status": "x", "visibility": "everyone", "scheduled_at": at(DAY_MS) }), "visibility"),
        (
            json!({ "status": "x", "poll": { "options": ["one"], "expires_in": 600 }, "scheduled_at": at(DAY_MS) }),
            "poll",
        ),
        (json!({ "status": "x", "media_ids": [bobs_upload], "scheduled_at": at(DAY_MS) }), "media_ids"),
        (
            json!({ "status": "x", "quote_approval_policy": "all", "scheduled_at": at(DAY_MS) }),
            "public, followers",
        ),
    ];
    for (body, field) in cases {
        let r = schedule(&alice, body.clone());
        assert_eq!(r.status, 422, "{body}: {}", r.body);
        assert!(r.body["error"].as_str().unwrap().contains(field), "{body}: {}", r.body);
    }
    // A reply to a status that does not exist: 404, as a publish answers.
    let reply = json!({ "status": "x", "in_reply_to_id": "123", "scheduled_at": at(DAY_MS) });
    assert_eq!(schedule(&alice, reply).status, 404);
    assert!(scheduled_ids(&alice, "").is_empty());
    assert_eq!(statuses_count(&alice), 0, "nothing published either");
    // /v1 has no scheduled posts: refused there, never published at once.
    let v1 = json!({ "body": "later", "scheduled_at": at(DAY_MS) });
    call("POST", "/v1/posts", Some(&alice.token), Some(&v1)).expect_problem(422, "invalid_field");
    assert_eq!(statuses_count(&alice), 0);
}

#[test]
fn at_most_25_per_day_even_when_sent_at_once() {
    let alice = register("sc_daily");
    // One UTC day two days ahead, 30 schedules at once: exactly 25 pass (counted in the insert).
    let day_start = (now_ms() / DAY_MS + 2) * DAY_MS;
    let token = alice.token.clone();
    let results = parallel(10, 30, move |i| {
        let body = json!({ "status": format!("daily {i}"), "scheduled_at": format_rfc3339(day_start + i as i64 * 60_000) });
        let r = call("POST", "/api/v1/statuses", Some(&token), Some(&body));
        (r.status, r.body["error"].as_str().unwrap_or_default().to_owned())
    });
    let passed = results.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(passed, 25, "{results:?}");
    assert!(
        results.iter().filter(|(s, _)| *s != 200).all(|(s, e)| *s == 422 && e.contains("25")),
        "{results:?}"
    );
    assert_eq!(scheduled_ids(&alice, "?limit=40").len(), 25);
    // Another day has room; moving one onto the full day is refused, and changes nothing.
    let next_day =
        schedule(&alice, json!({ "status": "next day", "scheduled_at": format_rfc3339(day_start + DAY_MS) }));
    let next_day = next_day.expect(200);
    let path = format!("/api/v1/scheduled_statuses/{}", id_of(&next_day));
    let onto_full = alice.put(&path, Some(json!({ "scheduled_at": format_rfc3339(day_start + HOUR_MS) })));
    assert_eq!(onto_full.status, 422, "{}", onto_full.body);
    assert_eq!(alice.get(&path).expect(200)["scheduled_at"], next_day["scheduled_at"]);
    // Within its own day it moves freely.
    alice
        .put(&path, Some(json!({ "scheduled_at": format_rfc3339(day_start + DAY_MS + HOUR_MS) })))
        .expect(200);
}

#[test]
fn a_due_post_publishes_once_with_its_media_poll_and_mention() {
    let (alice, bob, carol) = (register("sc_pub_alice"), register("sc_pub_bob"), register("sc_pub_carol"));
    bob.follow(&alice);
    let media = id_of(&upload(&alice, &png(), "a.png", &[("description", "a red square")]).expect(200));
    let with_media = schedule(
        &alice,
        json!({ "status": format!("sched media @{} #scheduledtag", carol.handle), "media_ids": [media], "scheduled_at": at(DAY_MS) }),
    )
    .expect(200);
    assert_eq!(with_media["params"]["media_ids"], json!([media]));
    assert_eq!(with_media["media_attachments"][0]["id"], media.as_str());
    assert_eq!(with_media["media_attachments"][0]["description"], "a red square");
    let with_poll = schedule(
        &alice,
        json!({ "status": "sched poll", "poll": { "options": ["yes", "no"], "expires_in": 3600 }, "scheduled_at": at(DAY_MS) }),
    )
    .expect(200);

    // The held upload: not another post's, and not swept however long it waits.
    let taken = alice.post("/api/v1/statuses", json!({ "status": "steal", "media_ids": [media] }));
    assert_eq!(taken.status, 422, "{}", taken.body);
    let twice =
        schedule(&alice, json!({ "status": "again", "media_ids": [media], "scheduled_at": at(DAY_MS) }));
    assert_eq!(twice.status, 422, "{}", twice.body);
    assert_eq!(media_state(&media, 3 * 86_400)["gone"], false);
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    assert_eq!(media_state(&media, 0)["gone"], false, "the sweep leaves a held upload alone");

    make_due(&alice, &id_of(&with_media));
    make_due(&alice, &id_of(&with_poll));
    fire_cron_concurrently();
    let home = poll("both in bob's home", DEADLINE, || {
        let (m, p) = (in_home(&bob, "sched media"), in_home(&bob, "sched poll"));
        (!m.is_empty() && !p.is_empty()).then_some((m, p))
    });
    assert_eq!(home.0[0]["media_attachments"][0]["id"], media.as_str());
    assert_eq!(home.1[0]["poll"]["options"].as_array().map(Vec::len), Some(2));
    assert_eq!(home.0[0]["tags"][0]["name"], "scheduledtag");
    poll("carol's mention", DEADLINE, || {
        let notes = carol.get("/api/v1/notifications?types[]=mention").expect(200);
        notes.as_array().unwrap().iter().any(|n| n["status"]["id"] == home.0[0]["id"]).then_some(())
    });

    // The rows are gone; another round of passes publishes nothing more.
    poll("the scheduled rows gone", DEADLINE, || scheduled_ids(&alice, "").is_empty().then_some(()));
    assert_eq!(alice.get(&format!("/api/v1/scheduled_statuses/{}", id_of(&with_media))).status, 404);
    fire_cron_concurrently();
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    assert_eq!((published(&alice, "sched media").len(), published(&alice, "sched poll").len()), (1, 1));
    assert_eq!((in_home(&bob, "sched media").len(), in_home(&bob, "sched poll").len()), (1, 1));
    assert_eq!(statuses_count(&alice), 2);
    assert_eq!(media_state(&media, 0)["gone"], false, "attached to its post now");
}

#[test]
fn what_changed_by_then_is_checked_again_and_cancelling_frees_the_upload() {
    let (alice, bob) = (register("sc_recheck_alice"), register("sc_recheck_bob"));
    // A reply whose parent is deleted before it is due: not published.
    let parent = id_of(&bob.publish("a post to answer", "public"));
    let reply = schedule(
        &alice,
        json!({ "status": "an answer later", "in_reply_to_id": parent, "scheduled_at": at(DAY_MS) }),
    );
    let reply = reply.expect(200);
    assert_eq!(reply["params"]["in_reply_to_id"], parent.as_str());
    bob.delete(&format!("/api/v1/statuses/{parent}")).expect(200);
    // A reply to a post whose author then blocks alice: not published either.
    let blocker = register("sc_recheck_blocker");
    let theirs = id_of(&blocker.publish("blocking soon", "public"));
    let blocked = schedule(
        &alice,
        json!({ "status": "blocked answer", "in_reply_to_id": theirs, "scheduled_at": at(DAY_MS) }),
    );
    let blocked = blocked.expect(200);
    blocker.block(&alice);
    // A suspended author's post is not published, and its upload is let go.
    let suspended = register("sc_recheck_suspended");
    let media = id_of(&upload(&suspended, &png(), "s.png", &[]).expect(200));
    let body = json!({ "status": "suspended later", "media_ids": [media], "scheduled_at": at(DAY_MS) });
    let theirs_scheduled = schedule(&suspended, body).expect(200);
    let reason = json!({ "reason": "a test" });
    admin("POST", &format!("/v1/admin/users/{}/suspend", suspended.id), Some(&reason)).expect(200);
    make_due(&alice, &id_of(&reply));
    make_due(&alice, &id_of(&blocked));
    make_due(&suspended, &id_of(&theirs_scheduled));
    // The admin pass publishes a slice per database (other tests' due posts may fill one).
    poll("the three dropped, not kept for later", DEADLINE, || {
        admin("POST", "/v1/admin/reconcile", None).expect(200);
        let theirs = json!({ "user_id": suspended.id, "scheduled_id": id_of(&theirs_scheduled) });
        let gone = admin("POST", "/v1/admin/test/scheduled", Some(&theirs)).expect(200)["row"] == false;
        (scheduled_ids(&alice, "").is_empty() && gone).then_some(())
    });
    assert!(
        published(&alice, "an answer later").is_empty() && published(&alice, "blocked answer").is_empty()
    );
    assert_eq!(statuses_count(&alice), 0);
    // The dropped post's upload is let go: unattached and old, the sweep takes it.
    assert_eq!(media_state(&media, 3 * 86_400)["gone"], false);
    admin("POST", "/v1/admin/reconcile", None).expect(200);
    assert_eq!(media_state(&media, 0)["gone"], true);

    // Cancelling frees the upload: another post may take it at once.
    let second = id_of(&upload(&alice, &png(), "c.png", &[]).expect(200));
    let body = json!({ "status": "cancel me", "media_ids": [second], "scheduled_at": at(DAY_MS) });
    let held = schedule(&alice, body).expect(200);
    let taken = alice.post("/api/v1/statuses", json!({ "status": "not yet", "media_ids": [second] }));
    assert_eq!(taken.status, 422, "{}", taken.body);
    alice.delete(&format!("/api/v1/scheduled_statuses/{}", id_of(&held))).expect(200);
    let reused =
        alice.post("/api/v1/statuses", json!({ "status": "the image after all", "media_ids": [second] }));
    assert_eq!(reused.expect(200)["media_attachments"][0]["id"], second.as_str());
}
