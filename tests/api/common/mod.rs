//! Black-box harness: starts one real `wrangler dev` (workerd, local D1 / Durable Objects /
//! Queues) per test binary on a free port with a fresh persist dir, and kills it when the test
//! process exits, however it exits (a watchdog polls our pid and kills the whole process group).

#![allow(dead_code)]

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const AUTH_SECRET: &str = "test-auth-secret-0123456789";
pub const ADMIN_TOKEN: &str = "test-admin-token-abcdef";
/// Lowered so the feed tests cross the window seam with ~1,000 items instead of 10,000.
pub const FEED_WINDOW: usize = 300;
/// Small chunks so multi-chunk fan-out is exercised with a few dozen followers.
pub const FANOUT_CHUNK: usize = 20;

pub struct Server {
    pub base: String,
    pub persist_dir: PathBuf,
}

static SERVER: OnceLock<Server> = OnceLock::new();

pub fn server() -> &'static Server {
    SERVER.get_or_init(start)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn start() -> Server {
    let port = free_port();
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let persist_dir = std::env::temp_dir().join(format!("edgefeed-test-{}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&persist_dir).unwrap();
    let log_path = persist_dir.join("wrangler.log");

    let status = Command::new("npx")
        .args(["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to"])
        .arg(&persist_dir)
        .current_dir(project_dir())
        .env("CI", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("npx wrangler d1 migrations apply");
    assert!(status.success(), "applying migrations failed");

    let mut vars = vec![
        format!("AUTH_SECRET:{AUTH_SECRET}"),
        format!("ADMIN_TOKEN:{ADMIN_TOKEN}"),
        "TEST_HOOKS:true".to_string(),
        "OUTBOX_GRACE_SECONDS:2".to_string(),
        // These tests inspect windows as the push pipeline fills them; the hybrid policy has its
        // own binary (tests/hybrid) with its own server.
        "FANOUT_MODE:push".to_string(),
    ];
    // Benchmarks run with the production window and chunk sizes from wrangler.toml.
    if std::env::var("EDGEFEED_PROFILE").as_deref() != Ok("bench") {
        vars.push(format!("FEED_WINDOW:{FEED_WINDOW}"));
        vars.push(format!("FANOUT_CHUNK:{FANOUT_CHUNK}"));
    } else {
        // The bench registers thousands of users from one address: it measures the pipeline,
        // not the abuse limits.
        vars.push("RATE_LIMITS:false".to_string());
    }
    let var_args: Vec<String> = vars.iter().map(|v| format!("--var '{v}'")).collect();
    // The watchdog: wrangler runs in the background of a bash that leads its own process group;
    // when our test process (or wrangler) goes away, bash kills the group (wrangler + workerd)
    // and removes the persist dir.
    let script = format!(
        "npx wrangler dev --ip 127.0.0.1 --port {port} --persist-to '{dir}' --test-scheduled \
           --show-interactive-dev-session=false {vars} >'{log}' 2>&1 & \
         w=$!; \
         while kill -0 {parent} 2>/dev/null && kill -0 $w 2>/dev/null; do sleep 0.5; done; \
         trap '' TERM; kill -TERM 0; sleep 1; cp '{log}' '{last_log}' 2>/dev/null; rm -rf '{dir}'; kill -KILL 0",
        last_log = std::env::temp_dir().join("edgefeed-last-wrangler.log").display(),
        dir = persist_dir.display(),
        vars = var_args.join(" "),
        log = log_path.display(),
        parent = std::process::id(),
    );
    // Never waited on by design: the watchdog outlives this call and reaps the server itself.
    #[allow(clippy::zombie_processes)]
    let _watchdog = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(project_dir())
        .env("EDGEFEED_SKIP_BUILD", "1")
        .env("CI", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("spawn wrangler dev");

    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(r) = ureq::get(&format!("{base}/v1/health")).timeout(Duration::from_secs(2)).call() {
            if r.status() == 200 {
                break;
            }
        }
        if Instant::now() > deadline {
            let mut log = String::new();
            let _ = std::fs::File::open(&log_path).and_then(|mut f| f.read_to_string(&mut log));
            panic!("wrangler dev did not become ready within 120 s; log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    Server { base, persist_dir }
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
    pub content_type: String,
    pub allow: Option<String>,
}

impl Resp {
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    #[track_caller]
    pub fn expect(self, status: u16) -> Value {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.body);
        self.body
    }

    #[track_caller]
    pub fn expect_problem(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.body);
        assert_eq!(self.code(), code, "unexpected code; body: {}", self.body);
        assert_eq!(self.content_type, "application/problem+json");
        assert_eq!(self.body["status"], status);
        assert!(self.body["title"].is_string() && self.body["detail"].is_string());
    }
}

/// What wrangler dev's proxy answers (503) when its pooled connection to the runtime fails. The
/// runtime closes connections idle for ~5 s; a request that races that close never reaches the
/// Worker, and the proxy resends only GET/HEAD itself. Under load on 2 cores this hit ~half the
/// runs of the concurrent like/comment tests before the harness resent such requests.
const PROXY_LOST_CONNECTION: &str = "Your worker restarted mid-request";

/// Sends a request, resending it (a few times) only when the local proxy lost it as above.
pub fn send(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> ureq::Response {
    let url = format!("{}{path}", server().base);
    for attempt in 1.. {
        let mut req = ureq::request(method, &url).timeout(Duration::from_secs(60));
        for (k, v) in headers {
            req = req.set(k, v);
        }
        let result = if body.is_empty() { req.call() } else { req.send_bytes(body) };
        let response = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(503, r)) if attempt < 4 => {
                let text = r.into_string().unwrap_or_default();
                assert!(text.starts_with(PROXY_LOST_CONNECTION), "{method} {path}: 503 {text}");
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{method} {path}: transport error {e}"),
        };
        return response;
    }
    unreachable!("the loop returns")
}

/// Sends a request with raw headers and body bytes.
pub fn raw(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
    let response = send(method, path, headers, body);
    let status = response.status();
    let content_type = response.header("content-type").unwrap_or("").to_string();
    let allow = response.header("allow").map(str::to_string);
    let text = response.into_string().unwrap_or_default();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Resp { status, body, content_type, allow }
}

pub fn call(method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> Resp {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(a) = &auth {
        headers.push(("authorization", a));
    }
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    raw(method, path, &headers, &bytes)
}

#[derive(Debug, Clone)]
pub struct User {
    pub id: String,
    pub handle: String,
    pub token: String,
}

impl User {
    pub fn get(&self, path: &str) -> Resp {
        call("GET", path, Some(&self.token), None)
    }
    pub fn post(&self, path: &str, body: Value) -> Resp {
        call("POST", path, Some(&self.token), Some(&body))
    }
    pub fn put(&self, path: &str, body: Option<Value>) -> Resp {
        call("PUT", path, Some(&self.token), body.as_ref())
    }
    pub fn patch(&self, path: &str, body: Value) -> Resp {
        call("PATCH", path, Some(&self.token), Some(&body))
    }
    pub fn delete(&self, path: &str) -> Resp {
        call("DELETE", path, Some(&self.token), None)
    }
    pub fn follow(&self, other: &User) {
        self.put(&format!("/v1/me/following/{}", other.id), None).expect(200);
    }
    pub fn unfollow(&self, other: &User) {
        self.delete(&format!("/v1/me/following/{}", other.id)).expect(200);
    }
    pub fn block(&self, other: &User) {
        self.put(&format!("/v1/me/blocks/{}", other.id), None).expect(200);
    }
    /// Publishes and returns the Post.
    pub fn publish(&self, body: &str, visibility: &str) -> Value {
        self.post("/v1/posts", json!({ "body": body, "visibility": visibility })).expect(201)
    }
    pub fn profile(&self) -> Value {
        self.get("/v1/me").expect(200)
    }
}

static HANDLE_SEQ: AtomicU64 = AtomicU64::new(0);

/// Registers a user with a unique handle built from `prefix` (3..18 chars of [a-z0-9_]).
pub fn register(prefix: &str) -> User {
    let n = HANDLE_SEQ.fetch_add(1, Ordering::Relaxed);
    let handle = format!("{prefix}_{n}");
    let body = call("POST", "/v1/users", None, Some(&json!({ "handle": handle, "display_name": prefix })))
        .expect(201);
    User {
        id: body["user"]["id"].as_str().expect("user id string").to_string(),
        handle,
        token: body["token"].as_str().expect("token").to_string(),
    }
}

pub fn admin(method: &str, path: &str, body: Option<&Value>) -> Resp {
    call(method, path, Some(ADMIN_TOKEN), body)
}

/// Imports a post with an explicit creation time (RFC 3339).
pub fn import_post(author: &User, body: &str, visibility: &str, created_at: &str) -> Value {
    let payload =
        json!({ "author_id": author.id, "body": body, "visibility": visibility, "created_at": created_at });
    admin("POST", "/v1/admin/import/posts", Some(&payload)).expect(201)
}

/// Follows `next_cursor` until exhausted; returns every item in order.
pub fn collect_pages(user: &User, path_with_query: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let sep = if path_with_query.contains('?') { '&' } else { '?' };
    for _ in 0..10_000 {
        let path = match &cursor {
            Some(c) => format!("{path_with_query}{sep}cursor={c}"),
            None => path_with_query.to_string(),
        };
        let page = user.get(&path).expect(200);
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return items,
        }
    }
    panic!("pagination did not end");
}

/// Polls `check` until it returns `Some`, or fails after `deadline`.
#[track_caller]
pub fn poll<T>(what: &str, deadline: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < end, "timed out after {deadline:?} waiting for: {what}");
        std::thread::sleep(Duration::from_millis(150));
    }
}

/// Mints an HS256 token the way an external auth service sharing AUTH_SECRET would.
pub fn mint_token(secret: &str, sub: &str, exp: i64) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use base64::Engine;
    use hmac::{Hmac, Mac};
    let header = B64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = B64.encode(json!({ "sub": sub, "exp": exp }).to_string());
    let input = format!("{header}.{claims}");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(input.as_bytes());
    format!("{input}.{}", B64.encode(mac.finalize().into_bytes()))
}

pub fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

pub fn ids(items: &[Value]) -> Vec<String> {
    items.iter().map(|i| i["id"].as_str().unwrap_or("").to_string()).collect()
}
