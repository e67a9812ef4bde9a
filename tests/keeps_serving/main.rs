//! The stack keeps serving (issue 38): a few thousand concurrent requests of mixed traffic at a
//! fresh server on each local stack, `wrangler dev` then the direct one, with every process of
//! the stack sampled meanwhile; its open descriptors and established connections must stay under
//! a bound and health must answer afterwards.
//!
//! What it guards against: wrangler dev's InspectorProxyWorker sent one un-awaited loopback POST
//! per inspector event (three or four per subrequest), and the preload keeps idle loopback
//! connections open, so under load the public workerd's descriptors climbed by hundreds a
//! second (1,306 after 1,449 requests of 32 clients) until its limit of 20,000, after which the
//! stack answered nothing (scripts/wrangler-node-preload.cjs, third fix). With the fix the
//! stack's busiest process holds about 250 to 460 descriptors (the runtime: D1 files and its pool).

#[path = "../common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;

use common::*;

const CLIENTS: usize = 48;
const REQUESTS_PER_CLIENT: usize = 50;
/// Per process, as the soak's bound (benches/load.rs). The runtime's workerd holds ~250 on 4
/// databases under wrangler dev (SQLite files, its object and queue sockets), and the direct
/// stack's single workerd, which also serves the clients, up to ~460 under 32 clients; the leak
/// passed 3,000 within these requests.
const DESCRIPTOR_BOUND: u64 = 1_000;
const CONNECTION_BOUND: u64 = 250;
const SAMPLE_EVERY: Duration = Duration::from_millis(250);

/// The most each process kind (`workerd`, `node`...) held at once over the samples.
#[derive(Default, Debug)]
struct Peaks {
    descriptors: BTreeMap<String, u64>,
    established: BTreeMap<String, u64>,
}

impl Peaks {
    fn sample(&mut self, server: &Server) {
        for p in server.resident_by_process() {
            let d = self.descriptors.entry(p.name.clone()).or_default();
            *d = (*d).max(p.descriptors);
            let e = self.established.entry(p.name).or_default();
            *e = (*e).max(p.established);
        }
    }
}

/// One client's share of the load: reads of its home feed (the window object and D1 on every
/// database), publishes (the outbox, then fan-out through the queue), likes of a shared post
/// (its object and the group commit) and health checks.
fn client(users: &[User], shared_post: &str, k: usize, errors: &AtomicU64) {
    for i in 0..REQUESTS_PER_CLIENT {
        let user = &users[(k + i) % users.len()];
        let answer = match i % 6 {
            0 | 1 => user.get("/v1/feed?limit=20").status,
            2 => user.post("/v1/posts", json!({ "body": format!("load {k}/{i}") })).status,
            3 => user.put(&format!("/v1/posts/{shared_post}/like"), None).status,
            4 => user.delete(&format!("/v1/posts/{shared_post}/like")).status,
            _ => call("GET", "/v1/health", None, None).status,
        };
        if answer >= 500 {
            errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn hammer(stack: Stack) {
    let server = start_server_with(ServerOptions::suite(), DEFAULT_DATABASES, stack);
    talk_to(&server);
    let users: Vec<User> = (0..12).map(|_| register("steady")).collect();
    for (i, user) in users.iter().enumerate() {
        user.follow(&users[(i + 1) % users.len()]);
        user.follow(&users[(i + 5) % users.len()]);
    }
    let shared_post = id_of(&users[0].publish("liked by everyone", "public"));
    let mut before = Peaks::default();
    before.sample(&server);

    let (done, errors) = (AtomicBool::new(false), AtomicU64::new(0));
    let peaks = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let mut peaks = Peaks::default();
            while !done.load(Ordering::Relaxed) {
                peaks.sample(&server);
                std::thread::sleep(SAMPLE_EVERY);
            }
            peaks
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|k| {
                scope.spawn({
                    let (users, shared_post, errors) = (&users, &shared_post, &errors);
                    move || client(users, shared_post, k, errors)
                })
            })
            .collect();
        clients.into_iter().for_each(|c| c.join().expect("a client panicked"));
        done.store(true, Ordering::Relaxed);
        watcher.join().expect("the watcher panicked")
    });

    let name = stack.name();
    eprintln!("{name}: {} requests; at rest {before:?}; peaks {peaks:?}", CLIENTS * REQUESTS_PER_CLIENT);
    assert_eq!(errors.load(Ordering::Relaxed), 0, "{name}: 5xx answers under load");
    for (process, most) in &peaks.descriptors {
        assert!(
            *most < DESCRIPTOR_BOUND,
            "{name}: {process} held {most} descriptors (bound {DESCRIPTOR_BOUND})"
        );
    }
    for (process, most) in &peaks.established {
        assert!(
            *most < CONNECTION_BOUND,
            "{name}: {process} held {most} connections (bound {CONNECTION_BOUND})"
        );
    }
    let health = call("GET", "/v1/health", None, None);
    assert_eq!(
        (health.status, health.body["ok"].clone()),
        (200, json!(true)),
        "{name}: health after the load"
    );
    server.kill();
}

/// Both stacks one after the other in one test: two loaded stacks at once on 2 cores would
/// measure the machine, not the stacks.
#[test]
fn a_few_thousand_concurrent_requests_leave_descriptors_bounded_on_both_stacks() {
    hammer(Stack::WranglerDev);
    hammer(Stack::Direct);
}
