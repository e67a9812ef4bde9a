//! Web Push (`/api/v1/push/subscription`, docs/mastodon.md "Web Push"): a push service on this
//! machine (a `TcpListener` on 127.0.0.1, loopback http being the one non-https endpoint taken)
//! receives what the Worker sends; each message is decrypted with the subscriber's own private
//! key and auth secret (RFC 8291) and its VAPID signature verified against the instance's
//! public key (RFC 8292). Alerts, policies, unsubscribing, revoking the token, a gone endpoint,
//! a failing one, duplicate deliveries and bad inputs.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use edgefeed_domain::webpush;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{json, Value};

use crate::common::*;
use crate::mastodon::{app, form, password_token, register_with_password};

const SCOPES: &str = "read write follow push";
const WAIT: Duration = Duration::from_secs(60);

/// One request the push service received.
#[derive(Debug, Clone)]
struct Pushed {
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// A push service: records every request by path and answers each path's queued statuses in
/// order (then 201).
#[derive(Clone)]
struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Pushed>>>,
    statuses: Arc<Mutex<HashMap<String, Vec<u16>>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the push service");
        let port = listener.local_addr().expect("its address").port();
        let receiver = Receiver { port, got: Arc::default(), statuses: Arc::default() };
        let serving = receiver.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                serving.serve(stream);
            }
        });
        receiver
    }

    fn endpoint(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn answer(&self, path: &str, statuses: &[u16]) {
        self.statuses.lock().unwrap().insert(path.to_string(), statuses.to_vec());
    }

    fn on(&self, path: &str) -> Vec<Pushed> {
        self.got.lock().unwrap().iter().filter(|p| p.path == path).cloned().collect()
    }

    fn wait_for(&self, path: &str, count: usize) -> Vec<Pushed> {
        poll(&format!("{count} pushes to {path}"), WAIT, || {
            let got = self.on(path);
            (got.len() >= count).then_some(got)
        })
    }

    fn serve(&self, stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = HashMap::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
            }
        }
        let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let status = {
            let mut statuses = self.statuses.lock().unwrap();
            let queued = statuses.get_mut(&path);
            queued.filter(|q| !q.is_empty()).map_or(201, |q| q.remove(0))
        };
        self.got.lock().unwrap().push(Pushed { path, headers, body });
        let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        let _ = reader.get_mut().write_all(answer.as_bytes());
    }
}

/// A subscriber's key pair and auth secret, as a browser makes them.
struct Keys {
    secret: [u8; 32],
    public: [u8; 65],
    auth: [u8; 16],
}

impl Keys {
    fn new() -> Keys {
        loop {
            let mut secret = [0u8; 32];
            let mut auth = [0u8; 16];
            getrandom::fill(&mut secret).expect("random");
            getrandom::fill(&mut auth).expect("random");
            if let Ok(public) = webpush::public_of(&secret) {
                return Keys { secret, public, auth };
            }
        }
    }

    fn open(&self, pushed: &Pushed) -> Value {
        let plain = webpush::decrypt(&pushed.body, &self.secret, &self.auth).expect("the push decrypts");
        serde_json::from_slice(&plain).expect("a JSON payload")
    }
}

/// A user with a password and an OAuth app, and a way to mint more of their tokens.
struct Subscriber {
    user: User,
    client: (String, String),
}

impl Subscriber {
    fn new(prefix: &str) -> Subscriber {
        Subscriber { user: register_with_password(prefix), client: app(SCOPES, "urn:ietf:wg:oauth:2.0:oob") }
    }

    fn token(&self, scope: &str) -> String {
        let made = password_token(&self.user, &self.client, scope).expect(200);
        made["access_token"].as_str().expect("a token").to_string()
    }
}

fn subscription(endpoint: &str, keys: &Keys, alerts: &[&str], policy: &str) -> Value {
    let alerts: serde_json::Map<String, Value> =
        alerts.iter().map(|a| (a.to_string(), json!(true))).collect();
    json!({
        "subscription": {
            "endpoint": endpoint,
            "keys": { "p256dh": webpush::base64url(&keys.public), "auth": webpush::base64url(&keys.auth) },
        },
        "data": { "alerts": alerts, "policy": policy },
    })
}

fn subscribe(token: &str, endpoint: &str, keys: &Keys, alerts: &[&str], policy: &str) -> Value {
    let body = subscription(endpoint, keys, alerts, policy);
    call("POST", "/api/v1/push/subscription", Some(token), Some(&body)).expect(200)
}

fn server_key() -> String {
    let v2 = call("GET", "/api/v2/instance", None, None).expect(200);
    let key = v2["configuration"]["vapid"]["public_key"].as_str().unwrap_or_default().to_string();
    assert_eq!(key.len(), 87, "a base64url uncompressed P-256 point: {key}");
    let v1 = call("GET", "/api/v1/instance", None, None).expect(200);
    assert_eq!(v1["vapid_key"], json!(key));
    key
}

/// The VAPID header: an ES256 JWT for the endpoint's origin, signed by the instance's key.
fn verify_vapid(pushed: &Pushed, server_key: &str, audience: &str) {
    let header = pushed.headers.get("authorization").expect("an Authorization header");
    let rest = header.strip_prefix("vapid t=").expect("the vapid scheme");
    let (token, k) = rest.split_once(", k=").expect("t and k");
    assert_eq!(k, server_key);
    let (signing_input, signature) = token.rsplit_once('.').expect("a JWT");
    let (head, claims) = signing_input.split_once('.').expect("a JWT");
    let decode = |part: &str| -> Value {
        serde_json::from_slice(&webpush::decode_base64(part).expect("base64url")).expect("JSON")
    };
    assert_eq!(decode(head)["alg"], "ES256");
    let claims = decode(claims);
    assert_eq!(claims["aud"], audience);
    let exp = claims["exp"].as_i64().expect("exp");
    assert!(exp > now_secs() && exp <= now_secs() + 24 * 3600, "exp within 24 h: {claims}");
    let sub = claims["sub"].as_str().unwrap_or_default();
    assert!(sub.starts_with("mailto:") || sub.starts_with("http"), "{claims}");
    let key =
        VerifyingKey::from_sec1_bytes(&webpush::decode_base64(server_key).expect("key")).expect("a point");
    let signature = Signature::from_slice(&webpush::decode_base64(signature).expect("sig")).expect("r || s");
    assert!(key.verify(signing_input.as_bytes(), &signature).is_ok(), "the VAPID signature verifies");
    assert_eq!(pushed.headers.get("content-encoding").map(String::as_str), Some("aes128gcm"));
    assert!(pushed.headers.get("ttl").and_then(|t| t.parse::<u64>().ok()).is_some_and(|t| t > 0));
}

/// The recipient's notifications (Mastodon's list): `(id, type, account id)`, newest first.
fn notifications(token: &str) -> Vec<(String, String, String)> {
    let list = call("GET", "/api/v1/notifications", Some(token), None).expect(200);
    let list = list.as_array().cloned().unwrap_or_default();
    let field = |n: &Value, f: &str| n[f].as_str().unwrap_or_default().to_string();
    list.iter()
        .map(|n| (field(n, "id"), field(n, "type"), n["account"]["id"].as_str().unwrap_or("").into()))
        .collect()
}

fn wait_notification(token: &str, kind: &str, actor: &User) -> String {
    poll(&format!("a {kind} notification from {}", actor.handle), WAIT, || {
        notifications(token).into_iter().find(|(_, k, a)| k == kind && *a == actor.id).map(|(id, _, _)| id)
    })
}

/// Runs a notification's delivery once more, now (a duplicate queue delivery).
fn push_again(recipient: &User, notification: &str) {
    let body =
        json!({ "recipient_id": recipient.id, "notification_id": notification.parse::<u64>().unwrap() });
    admin("POST", "/v1/admin/test/push_again", Some(&body)).expect(200);
}

fn like(user: &User, post: &str) {
    user.put(&format!("/v1/posts/{post}/like"), None).expect(200);
}

#[test]
fn notifications_arrive_encrypted_signed_once_each_and_only_for_alerts_that_are_on() {
    let rx = Receiver::start();
    let key = server_key();
    let me = Subscriber::new("pushme");
    let token = me.token(SCOPES);
    let keys = Keys::new();
    let made = subscribe(&token, &rx.endpoint("/me"), &keys, &["follow", "favourite", "mention"], "all");
    assert!(made["id"].as_str().is_some_and(|id| !id.is_empty()), "{made}");
    assert_eq!(made["endpoint"], json!(rx.endpoint("/me")));
    assert_eq!((made["standard"].clone(), made["policy"].clone()), (json!(true), json!("all")));
    assert_eq!(made["server_key"], json!(key));
    assert_eq!(
        (made["alerts"]["follow"].clone(), made["alerts"]["reblog"].clone()),
        (json!(true), json!(false))
    );
    let fetched = call("GET", "/api/v1/push/subscription", Some(&token), None).expect(200);
    assert_eq!(fetched, made);

    let fan = register("pushfan");
    let post = id_of(&me.user.publish("push me", "public"));
    // A boost: its alert is off.
    fan.put(&format!("/v1/posts/{post}/repost"), None).expect(200);
    fan.follow(&me.user);
    like(&fan, &post);
    fan.publish(&format!("hello @{}", me.user.handle), "public");
    let got = rx.wait_for("/me", 3);
    let expected: HashMap<String, String> = ["follow", "favourite", "mention"]
        .iter()
        .map(|kind| (wait_notification(&token, kind, &fan), kind.to_string()))
        .collect();
    for pushed in &got {
        verify_vapid(pushed, &key, &format!("http://127.0.0.1:{}", rx.port));
        let payload = keys.open(pushed);
        let id = payload["notification_id"].as_str().expect("an id").to_string();
        assert_eq!(
            expected.get(&id),
            payload["notification_type"].as_str().map(String::from).as_ref(),
            "{payload}"
        );
        assert_eq!(payload["access_token"], json!(token));
        assert!(payload["title"].as_str().is_some_and(|t| t.contains("pushfan")), "{payload}");
        assert!(payload["icon"].as_str().is_some_and(|i| i.starts_with("http")), "{payload}");
    }
    let mut pushed_ids: Vec<String> =
        got.iter().map(|p| keys.open(p)["notification_id"].as_str().unwrap_or("").to_string()).collect();
    pushed_ids.sort();
    pushed_ids.dedup();
    assert_eq!(pushed_ids.len(), 3, "three distinct notifications");

    // The boost's notification is there, and its delivery, run again now, sends nothing; nor
    // does a duplicate delivery of any notification already pushed.
    let boost = wait_notification(&token, "reblog", &fan);
    push_again(&me.user, &boost);
    for id in expected.keys() {
        push_again(&me.user, id);
    }
    assert_eq!(rx.on("/me").len(), 3, "no duplicate and no disabled alert was pushed");

    // A locked account's follow request is pushed too, once its alert is on (PUT replaces the
    // alerts: only `follow_request` stays on).
    let alerts = json!({ "data": { "alerts": { "follow_request": true } } });
    let changed = call("PUT", "/api/v1/push/subscription", Some(&token), Some(&alerts)).expect(200);
    assert_eq!(
        (changed["alerts"]["follow_request"].clone(), changed["alerts"]["follow"].clone()),
        (json!(true), json!(false))
    );
    crate::profiles::update_form(&me.user, "locked=true").expect(200);
    let asker = register("pushasker");
    asker.post(&format!("/api/v1/accounts/{}/follow", me.user.id), json!({})).expect(200);
    let got = rx.wait_for("/me", 4);
    let request = wait_notification(&token, "follow_request", &asker);
    let opened = keys.open(&got[3]);
    assert_eq!(
        (opened["notification_id"].clone(), opened["notification_type"].clone()),
        (json!(request), json!("follow_request"))
    );
}

#[test]
fn policies_unsubscribing_revoking_and_a_gone_endpoint_stop_pushes_and_failures_are_retried() {
    let rx = Receiver::start();
    let me = Subscriber::new("pushpol");
    let (token_a, token_b, token_c) = (me.token(SCOPES), me.token(SCOPES), me.token(SCOPES));
    let keys = Keys::new();
    subscribe(&token_a, &rx.endpoint("/a"), &keys, &["favourite"], "followed");
    // The push service fails b's first two pushes: the queue tries again, and it arrives once.
    rx.answer("/b", &[503, 500]);
    subscribe(&token_b, &rx.endpoint("/b"), &keys, &["favourite"], "all");
    let post = id_of(&me.user.publish("policy", "public"));
    let (friend, stranger) = (register("pushfriend"), register("pushstranger"));
    me.user.follow(&friend);
    like(&stranger, &post);
    like(&friend, &post);
    let from_stranger = wait_notification(&token_a, "favourite", &stranger);
    let from_friend = wait_notification(&token_a, "favourite", &friend);
    let on_a = rx.wait_for("/a", 1);
    let ids = |got: &[Pushed]| -> Vec<String> {
        got.iter().map(|p| keys.open(p)["notification_id"].as_str().unwrap_or("").to_string()).collect()
    };
    assert_eq!(ids(&on_a), vec![from_friend.clone()], "followed: only from accounts I follow");
    let on_b = poll("both likes pushed to b past its failures", WAIT, || {
        let got: Vec<Pushed> = rx.on("/b").into_iter().filter(|p| !p.body.is_empty()).collect();
        (got.len() >= 4).then_some(got)
    });
    let mut delivered = ids(&on_b);
    delivered.sort();
    delivered.dedup();
    assert_eq!(delivered.len(), 2, "both likes reached b, the failed one retried");
    push_again(&me.user, &from_stranger);
    assert_eq!(rx.on("/a").len(), 1, "the stranger's like is never pushed to a");

    // PUT replaces the data; DELETE ends a's pushes; revoking b's token ends b's.
    let changed = call(
        "PUT",
        "/api/v1/push/subscription",
        Some(&token_a),
        Some(&json!({
            "data": { "alerts": { "follow": true }, "policy": "all" }
        })),
    )
    .expect(200);
    assert_eq!(
        (changed["alerts"]["follow"].clone(), changed["alerts"]["favourite"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(call("DELETE", "/api/v1/push/subscription", Some(&token_a), None).expect(200), json!({}));
    assert_eq!(call("GET", "/api/v1/push/subscription", Some(&token_a), None).status, 404);
    let revoke =
        [("client_id", me.client.0.as_str()), ("client_secret", me.client.1.as_str()), ("token", &token_b)];
    form("/oauth/revoke", &revoke).expect(200);
    subscribe(&token_c, &rx.endpoint("/c"), &keys, &["favourite"], "all");
    let (b_before, late) = (rx.on("/b").len(), register("pushlate"));
    like(&late, &post);
    rx.wait_for("/c", 1);
    let from_late = wait_notification(&token_c, "favourite", &late);
    push_again(&me.user, &from_late);
    assert_eq!(
        (rx.on("/a").len(), rx.on("/b").len()),
        (1, b_before),
        "no push after unsubscribing or revoking"
    );

    // A 410 from the push service removes the subscription.
    rx.answer("/c", &[410]);
    let last = register("pushgone");
    like(&last, &post);
    poll("the gone subscription removed", WAIT, || {
        (call("GET", "/api/v1/push/subscription", Some(&token_c), None).status == 404).then_some(())
    });
}

#[test]
fn bad_subscriptions_answer_422_and_change_nothing_and_push_needs_its_scope() {
    let me = Subscriber::new("pushbad");
    let token = me.token(SCOPES);
    let keys = Keys::new();
    let path = "/api/v1/push/subscription";
    assert_eq!(call("GET", path, Some(&token), None).status, 404, "none yet");
    let good = subscription("https://push.example.net/send/1", &keys, &["follow"], "all");
    let bad = [
        ("/subscription/endpoint", json!("http://push.example.net/send/1")),
        ("/subscription/endpoint", json!("not a url")),
        ("/subscription/keys/p256dh", json!(webpush::base64url(&keys.public[..33]))),
        ("/subscription/keys/p256dh", json!(webpush::base64url(&[4u8; 65]))),
        ("/subscription/keys/auth", json!(webpush::base64url(&keys.auth[..15]))),
        ("/data/policy", json!("friends")),
        ("/data/alerts/follow", json!("maybe")),
    ];
    for (pointer, value) in &bad {
        let mut body = good.clone();
        *body.pointer_mut(pointer).expect("a field") = value.clone();
        let resp = call("POST", path, Some(&token), Some(&body));
        assert_eq!(resp.status, 422, "{pointer} = {value}: {}", resp.body);
        assert_eq!(call("GET", path, Some(&token), None).status, 404, "{pointer}: nothing stored");
    }
    let made = call("POST", path, Some(&token), Some(&good)).expect(200);
    let mut body = good.clone();
    body["subscription"]["endpoint"] = json!("ftp://push.example.net/");
    assert_eq!(call("POST", path, Some(&token), Some(&body)).status, 422);
    let bad_put = json!({ "data": { "policy": "nobody" } });
    assert_eq!(call("PUT", path, Some(&token), Some(&bad_put)).status, 422);
    assert_eq!(call("GET", path, Some(&token), None).expect(200), made, "unchanged");

    // What masto.js sends: standard base64 keys with padding, `policy` beside `data`; and a form.
    let std_b64 = |bytes: &[u8]| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    };
    let masto = json!({
        "subscription": { "endpoint": "https://example.com", "keys": { "p256dh": std_b64(&keys.public), "auth": std_b64(&keys.auth) } },
        "policy": "follower",
        "data": { "alerts": { "follow": true } },
    });
    let replaced = call("POST", path, Some(&token), Some(&masto)).expect(200);
    assert_ne!(replaced["id"], made["id"], "a new POST replaces the token's subscription");
    assert_eq!(
        (replaced["endpoint"].clone(), replaced["policy"].clone()),
        (json!("https://example.com"), json!("follower"))
    );
    let pairs = [
        ("subscription[endpoint]", "https://push.example.net/form"),
        ("subscription[keys][p256dh]", &webpush::base64url(&keys.public)),
        ("subscription[keys][auth]", &webpush::base64url(&keys.auth)),
        ("data[alerts][mention]", "true"),
        ("data[policy]", "none"),
    ];
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", crate::mastodon::urlencode(k), crate::mastodon::urlencode(v)))
        .collect();
    let headers = [
        ("content-type", "application/x-www-form-urlencoded"),
        ("authorization", &format!("Bearer {token}")),
    ];
    let formed = raw("POST", path, &headers, body.join("&").as_bytes()).expect(200);
    assert_eq!((formed["alerts"]["mention"].clone(), formed["policy"].clone()), (json!(true), json!("none")));

    // `read write` does not imply `push` (as Mastodon).
    let plain = me.token("read write follow");
    assert_eq!(call("GET", path, Some(&plain), None).status, 403);
    assert_eq!(call("POST", path, Some(&plain), Some(&good)).status, 403);
}
