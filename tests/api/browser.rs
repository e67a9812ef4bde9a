//! The web client (public/) in a real browser: headless Chromium driven through ChromeDriver's
//! WebDriver protocol (plain HTTP + JSON, spoken here with ureq), against the suite's server.
//! Leaves a screenshot of the feed page at `target/browser/feed.png`.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::*;

const DEADLINE: Duration = Duration::from_secs(60);
/// The client's page size (public/app.js `PAGE`).
const PAGE: usize = 20;
/// WebDriver's key for an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
const PASSWORD: &str = "a web password";

/// ChromeDriver with one headless Chromium session, both killed (as one process group) when
/// this is dropped or when the test process goes away.
struct Browser {
    driver: Child,
    base: String,
}

impl Browser {
    fn start() -> Browser {
        let port = free_port();
        // The watchdog leads its own process group (chromedriver and the browsers it starts
        // join it) and kills the group once the test process is gone.
        let script = format!(
            "chromedriver --port={port} >/dev/null 2>&1 & \
             while kill -0 {parent} 2>/dev/null; do sleep 1; done; kill -KILL -- -$$",
            parent = std::process::id()
        );
        let driver = Command::new("bash")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromedriver (installed by scripts/bootstrap --browser)");
        let mut browser = Browser { driver, base: format!("http://127.0.0.1:{port}") };
        poll("chromedriver to listen", DEADLINE, || {
            ureq::get(&format!("{}/status", browser.base)).call().ok()
        });
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                // A phone-width window: the client must work there.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=420,1000"],
            },
        }}});
        let session = browser.call("POST", "/session", capabilities);
        let id = session["sessionId"].as_str().expect("a WebDriver session").to_string();
        browser.base = format!("{}/session/{id}", browser.base);
        browser
    }

    /// One WebDriver command; its `value`.
    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let response = match method {
            "GET" => ureq::get(&url).call(),
            _ => ureq::request(method, &url).send_json(body),
        };
        match response {
            Ok(r) => r.into_json::<Value>().expect("WebDriver JSON")["value"].take(),
            Err(ureq::Error::Status(status, r)) => {
                panic!("WebDriver {method} {path}: {status} {}", r.into_string().unwrap_or_default())
            }
            Err(e) => panic!("WebDriver {method} {path}: {e}"),
        }
    }

    fn open(&self, url: &str) {
        self.call("POST", "/url", json!({ "url": url }));
    }

    /// Runs `script` (a function body) in the page with `args`; its return value.
    fn js(&self, script: &str, args: Value) -> Value {
        self.call("POST", "/execute/sync", json!({ "script": script, "args": args }))
    }

    fn element(&self, css: &str) -> String {
        let found = self.call("POST", "/element", json!({ "using": "css selector", "value": css }));
        found[ELEMENT].as_str().expect("an element reference").to_string()
    }

    fn click(&self, css: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/click"), json!({}));
    }

    fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/value"), json!({ "text": text }));
    }

    /// Waits until `script` (a function body) returns something truthy in the page.
    #[track_caller]
    fn wait_for(&self, what: &str, script: &str) -> Value {
        poll(what, DEADLINE, || {
            let v = self.js(script, json!([]));
            let truthy = !(v.is_null() || v == false || v == 0 || v == "");
            truthy.then_some(v)
        })
    }

    fn feed_size(&self) -> u64 {
        self.js("return document.querySelectorAll('#feed > li').length", json!([])).as_u64().unwrap()
    }

    fn screenshot(&self, path: &PathBuf) {
        let png = self.call("GET", "/screenshot", Value::Null);
        let bytes = base64::engine::general_purpose::STANDARD.decode(png.as_str().unwrap()).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).expect("write the screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = ureq::delete(&self.base).call();
        // The watchdog's group: chromedriver and every browser process it started.
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.driver.id())]).status();
        let _ = self.driver.wait();
    }
}

#[test]
fn the_web_client_signs_up_follows_scrolls_hears_new_posts_and_likes() {
    let author = register("web_author");
    for i in 0..PAGE + 5 {
        author.publish(&format!("post number {i} from the author"), "public");
    }
    let browser = Browser::start();
    browser.open(&format!("{}/", server().base));
    // The page runs under its Content-Security-Policy (public/_headers): the stylesheet applied
    // (a refused one has no rules), and nothing the page does from here on is refused.
    browser.wait_for("the stylesheet", "return document.styleSheets[0]?.cssRules.length");
    browser.js(
        "window.cspRefused = []; document.addEventListener('securitypolicyviolation', \
         e => window.cspRefused.push(`${e.effectiveDirective} ${e.blockedURI}`))",
        json!([]),
    );

    // Sign up in the page.
    let handle = format!("web_reader_{}", now_secs() % 1_000_000);
    browser.type_into("#signup-handle", &handle);
    browser.type_into("#signup-name", "Web Reader");
    browser.type_into("#signup-password", PASSWORD);
    browser.click("#sign-up button[type=submit]");
    browser.wait_for("the signed-in page", "return !document.getElementById('app').hidden");
    let shown = browser.js("return document.getElementById('who').textContent", json!([]));
    assert_eq!(shown, format!("@{handle}"));

    // Find the author by handle and follow them.
    browser.type_into("#find-handle", &author.handle);
    browser.click("#find button[type=submit]");
    browser.wait_for("the author's profile", "return document.querySelector('#profile .follow')");
    browser.click("#profile .follow");
    browser.wait_for(
        "the follow to take",
        "return document.querySelector('#profile .follow')?.textContent === 'Unfollow'",
    );

    // The feed fills with the author's posts, a page at a time as the reader scrolls.
    poll("the first page of the followed author's posts", DEADLINE, || {
        if browser.feed_size() == PAGE as u64 {
            return Some(());
        }
        // Reload the feed (the follow's backfill is asynchronous), unless a read is under way:
        // a reload supersedes it, and on a slow machine reloads must not keep superseding.
        browser.js(
            "if (!document.getElementById('feed-status').textContent.startsWith('Loading')) \
             document.getElementById('home-link').click()",
            json!([]),
        );
        None
    });
    browser.js("window.scrollTo(0, document.body.scrollHeight)", json!([]));
    poll("the next page after scrolling", DEADLINE, || {
        (browser.feed_size() == (PAGE + 5) as u64).then_some(())
    });
    browser.wait_for(
        "the end of the feed",
        "return document.getElementById('feed-status').textContent.includes('caught up')",
    );
    browser.js("window.scrollTo(0, 0)", json!([]));

    // A new post of the author: the live socket raises the banner, a click shows the post.
    let fresh = author.publish("fresh from the author, live", "public");
    let banner = browser.wait_for(
        "the new-posts banner",
        "const b = document.getElementById('new-posts'); return !b.hidden && b.textContent",
    );
    assert_eq!(banner, "1 new post");
    browser.click("#new-posts");
    let top = browser.wait_for(
        "the new post on top",
        "const li = document.querySelector('#feed > li'); return li && li.dataset.id",
    );
    assert_eq!(top, id_of(&fresh));
    assert_eq!(browser.feed_size(), (PAGE + 6) as u64);

    // Like it: the count and the pressed state follow the server's answer.
    browser.click("#feed > li:first-child .like");
    browser.wait_for(
        "the like to count",
        "const b = document.querySelector('#feed > li:first-child .like'); \
         return b.getAttribute('aria-pressed') === 'true' && b.querySelector('.like-count').textContent === '1'",
    );
    let post = author.get(&format!("/v1/posts/{}", id_of(&fresh))).expect(200);
    assert_eq!(post["like_count"], 1, "the like reached the server");

    // A comment from the page.
    browser.click("#feed > li:first-child .comments-toggle");
    browser.type_into("#feed > li:first-child .comment-form input", "nice one");
    browser.click("#feed > li:first-child .comment-form button");
    browser.wait_for(
        "the comment listed",
        "return document.querySelector('#feed > li:first-child .comment-count').textContent === '1'",
    );
    let comments = author.get(&format!("/v1/posts/{}/comments", id_of(&fresh))).expect(200);
    assert_eq!(comments["items"][0]["body"], "nice one");
    // A comment is the reader's own reply post: it reaches their home as their posts do, and
    // the page hears of it as of any new post.
    browser.wait_for("the comment as a new post", "return !document.getElementById('new-posts').hidden");
    browser.click("#new-posts");
    let top = browser.wait_for(
        "the reader's comment on top",
        "const li = document.querySelector('#feed > li'); return li && li.dataset.id",
    );
    assert_eq!(top, id_of(&comments["items"][0]));

    // A post with a content warning and an image shows the warning, its body and image
    // collapsed until opened.
    let auth = format!("Bearer {}", author.token);
    let image =
        raw("POST", "/v1/media?description=a+red+dot", &[("authorization", &auth)], &crate::media::png());
    let image = image.expect(201)["id"].as_str().unwrap().to_string();
    let warned =
        json!({ "body": "the butler did it", "spoiler_text": "mystery spoilers", "media_ids": [image] });
    let warned = author.post("/v1/posts", warned).expect(201);
    browser.wait_for("the new-posts banner again", "return !document.getElementById('new-posts').hidden");
    browser.click("#new-posts");
    let top = browser.wait_for(
        "the warned post on top",
        "const li = document.querySelector('#feed > li'); return li && li.dataset.id",
    );
    assert_eq!(top, id_of(&warned));
    let first = "document.querySelector('#feed > li:first-child')";
    let state = format!(
        "const li = {first}; const d = li.querySelector('details.warning'); \
         return d && [d.open, d.querySelector('summary').textContent, li.querySelector('.body').checkVisibility(), \
                      li.querySelector('.media img').checkVisibility()]"
    );
    assert_eq!(browser.js(&state, json!([])), json!([false, "mystery spoilers", false, false]), "collapsed");
    browser.click("#feed > li:first-child details.warning summary");
    browser.wait_for(
        "the warned post opened",
        &format!("return {first}.querySelector('.body').checkVisibility()"),
    );
    let body = browser.js(&format!("return {first}.querySelector('.body').textContent"), json!([]));
    assert_eq!(body, "the butler did it");
    // The image, from the Worker's /media URL, decoded by the browser at its 3x2 size.
    let loaded = browser.wait_for(
        "the image shown",
        &format!(
            "const img = {first}.querySelector('details.warning .media img'); \
             return img && img.complete && img.naturalWidth > 0 && img.checkVisibility() \
               && [img.naturalWidth, img.naturalHeight, img.alt]"
        ),
    );
    assert_eq!(loaded, json!([3, 2, "a red dot"]));

    // Notifications: the author follows the reader back. The live socket says there is news,
    // the badge counts it, the list shows it, and opening the list clears the count.
    let me = author.get(&format!("/v1/users?handle={handle}")).expect(200);
    author.put(&format!("/v1/me/following/{}", id_of(&me)), None).expect(200);
    let badge = browser.wait_for(
        "the unread badge",
        "const b = document.getElementById('unread'); return !b.hidden && b.textContent",
    );
    assert_eq!(badge, "1");
    browser.click("#notifications-toggle");
    let line = browser.wait_for(
        "the notification listed",
        "const li = document.querySelector('#notification-list li'); return li && li.textContent",
    );
    assert!(line.as_str().is_some_and(|l| l.contains("followed you")), "{line}");
    browser.wait_for("the badge to clear", "return document.getElementById('unread').hidden");
    browser.click("#notifications-toggle");

    browser.click("#profile button.link"); // close the profile card: the feed is the picture
    browser.js("window.scrollTo(0, 0)", json!([]));
    let shot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser/feed.png");
    browser.screenshot(&shot);
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000, "a real screenshot");
    assert_eq!(browser.js("return window.cspRefused", json!([])), json!([]), "CSP refusals");

    // Sign out (revokes this page's token), then sign in again with the handle and password.
    let token = browser.js("return localStorage.getItem('edgefeed.token')", json!([]));
    browser.click("#sign-out");
    browser.wait_for("the sign-in form", "return !document.getElementById('welcome').hidden");
    // The page sends the revocation as it signs out (without waiting for it).
    poll("signing out to revoke the page's token", DEADLINE, || {
        (call("GET", "/v1/me", token.as_str(), None).status == 401).then_some(())
    });
    browser.type_into("#signin-handle", &handle);
    browser.type_into("#signin-password", PASSWORD);
    browser.click("#sign-in button[type=submit]");
    browser.wait_for(
        "the feed after signing in again",
        "return document.querySelectorAll('#feed > li').length >= 20",
    );

    // The pages the Mastodon API's `url`s name (apps' "open original" and profile links) open
    // in the client: a post, then a person.
    let status = author.get(&format!("/api/v1/statuses/{}", id_of(&warned))).expect(200);
    browser.open(status["url"].as_str().expect("a status url"));
    let opened = browser.wait_for(
        "the linked post",
        "const li = document.querySelector('#profile .post'); return !document.getElementById('profile').hidden && li && li.dataset.id",
    );
    assert_eq!(opened, id_of(&warned));
    browser.open(status["account"]["url"].as_str().expect("an account url"));
    let title = browser.wait_for(
        "the linked profile",
        "const h = document.querySelector('#profile h2'); return h && h.textContent",
    );
    assert!(title.as_str().is_some_and(|t| t.ends_with(&format!("@{}", author.handle))), "{title}");
}
