//! Black-box harness: starts a real `wrangler dev` (workerd, local D1 / Durable Objects /
//! Queues) on a free port with a fresh persist dir, and makes sure that, however the test
//! process exits, no wrangler/workerd process and no persist dir is left behind.
//!
//! Shared by the HTTP suite (`tests/api`: one server per binary, started on first use with
//! [`ServerOptions::suite`]), the crash test (`tests/crash`: [`init_server`] with its own vars,
//! then [`Server::kill`] / [`Server::restart`] on the same persist dir and port) and the bench.
//!
//! Two kinds of watchdog, each a `bash` leading its own process group:
//! - one per *launch*: runs `wrangler dev` in its group and, when our test process (or
//!   wrangler) goes away, kills that group (wrangler + workerd). [`Server::kill`] SIGKILLs the
//!   whole group, watchdog included, which is the simulated crash;
//! - one per *server*, outside every launch group so a crash does not touch it: when the test
//!   process is gone it SIGKILLs the current launch group if one is still there, keeps the log
//!   as `$TMPDIR/edgefeed-last-wrangler[-label].log` and removes the persist dir.

#![allow(dead_code)]

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const AUTH_SECRET: &str = "test-auth-secret-0123456789";
pub const ADMIN_TOKEN: &str = "test-admin-token-abcdef";
/// The stack's VAPID private key (Web Push, tests/api/push.rs): a raw P-256 scalar, base64url.
pub const VAPID_PRIVATE_KEY: &str = "WLC_GA3OUGQOAVfxyQJI-ZZiRYnpfbYGhmN3OGFMil8";
/// Lowered so the feed tests cross the window seam with ~1,000 items instead of 10,000.
pub const FEED_WINDOW: usize = 300;
/// Small chunks so multi-chunk fan-out is exercised with a few dozen followers.
pub const FANOUT_CHUNK: usize = 20;
/// The suite's fixed in-flight cushion (`FEED_IN_FLIGHT_SECONDS`; production: 120 s), short so
/// that posts older than it are common: late deliveries must be covered by the outbox horizon.
pub const IN_FLIGHT: Duration = Duration::from_secs(2);
/// The one origin the suite's server allows cross-origin (`CORS_ORIGINS`).
pub const CORS_ORIGIN: &str = "https://app.example";
/// How many physical D1 databases (`DB_0` ..) a test server gets when `EDGEFEED_DATABASES` is
/// not set: the suite runs sharded by default (`scripts/test` runs the contract again on 1).
pub const DEFAULT_DATABASES: usize = 4;
/// How long a launch may take to answer `/v1/health`.
const READY_DEADLINE: Duration = Duration::from_secs(120);

/// How to start a server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Names the persist dir and the kept log; empty for the HTTP suite.
    pub label: String,
    /// `--var NAME:VALUE` settings on top of (or replacing) the secrets, `TEST_HOOKS:true` and
    /// `OUTBOX_GRACE_SECONDS:2`, which every test server gets unless overridden here.
    pub vars: Vec<(String, String)>,
    /// A fixed port; `None` picks a free one.
    pub port: Option<u16>,
}

impl ServerOptions {
    /// The HTTP suite's server: small window and chunks, or the production sizes from
    /// wrangler.toml when the bench runs (`EDGEFEED_PROFILE=bench`).
    pub fn suite() -> Self {
        // These tests inspect windows as the push pipeline fills them; the hybrid policy has its
        // own binary (tests/hybrid) with its own server.
        let mut vars = vec![("FANOUT_MODE".to_string(), "push".to_string())];
        // The counters' sweep as wide as the whole repair was before the change marks (500 users
        // a pass): tests/api/moderation.rs drifts a counter behind the marks' back and waits for
        // a pass to find it among the suite's thousands of users. tests/reconcile runs the
        // narrow sweep.
        vars.push(("COUNT_SWEEP_USERS".to_string(), "500".to_string()));
        if std::env::var("EDGEFEED_PROFILE").as_deref() != Ok("bench") {
            vars.push(("FEED_WINDOW".to_string(), FEED_WINDOW.to_string()));
            vars.push(("FANOUT_CHUNK".to_string(), FANOUT_CHUNK.to_string()));
            // Small enough that a test can spend it on hidden candidates (tests/api/moderation.rs).
            vars.push(("FEED_SCAN_BUDGET".to_string(), "100".to_string()));
            vars.push(("CORS_ORIGINS".to_string(), CORS_ORIGIN.to_string()));
            vars.push(("FEED_IN_FLIGHT_SECONDS".to_string(), IN_FLIGHT.as_secs().to_string()));
        } else {
            // The bench registers thousands of users from one address: it measures the pipeline,
            // not the abuse limits.
            vars.push(("RATE_LIMITS".to_string(), "false".to_string()));
        }
        Self { label: String::new(), vars, port: None }
    }
}

/// The running child of one launch (its pid is the launch's process group id).
struct Launch {
    child: Child,
    pgid: u32,
}

pub struct Server {
    pub label: String,
    pub base: String,
    pub port: u16,
    pub persist_dir: PathBuf,
    log_path: PathBuf,
    /// Holds the current launch's process group id, for the server watchdog.
    pgid_path: PathBuf,
    /// The `--var` settings of the next launch ([`Server::restart_with`] may change them).
    vars: Mutex<Vec<(String, String)>>,
    /// `--config <file>` for a P-database config (several for a multi-script stack, the front's
    /// first), empty for wrangler.toml itself (P = 1).
    config_arg: String,
    /// What serves the Worker (the same on every launch of this server).
    pub stack: Stack,
    launch: Mutex<Option<Launch>>,
}

/// What serves the Worker locally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// `wrangler dev` (what `./scripts/dev` runs): its ProxyWorker in front of the Worker and its
    /// inspector proxy beside it.
    WranglerDev,
    /// `scripts/serve-direct.mjs`: the same Worker, config and local storage on workerd through
    /// Miniflare's API, without wrangler dev's proxies (the bench's `--direct`).
    Direct,
}

impl Stack {
    pub fn name(self) -> &'static str {
        match self {
            Stack::WranglerDev => "wrangler dev",
            Stack::Direct => "direct (Miniflare API)",
        }
    }

    /// The short name: `EDGEFEED_STACK`'s and `BENCH_STACKS`'s value, a label, a JSON key.
    pub fn key(self) -> &'static str {
        match self {
            Stack::WranglerDev => "wrangler",
            Stack::Direct => "direct",
        }
    }
}

/// The stacks a bench that compares them measures, in order: both unless `BENCH_STACKS` names
/// one (`wrangler` or `direct`).
pub fn bench_stacks() -> Vec<Stack> {
    match std::env::var("BENCH_STACKS").as_deref() {
        Ok("direct") => vec![Stack::Direct],
        Ok("wrangler") => vec![Stack::WranglerDev],
        _ => vec![Stack::WranglerDev, Stack::Direct],
    }
}

/// The stack test servers run on: `EDGEFEED_STACK=direct` for [`Stack::Direct`], else
/// [`Stack::WranglerDev`].
pub fn stack() -> Stack {
    match std::env::var("EDGEFEED_STACK").as_deref() {
        Ok("direct") => Stack::Direct,
        Ok("") | Ok("wrangler") | Err(_) => Stack::WranglerDev,
        Ok(other) => panic!("EDGEFEED_STACK={other}: expected wrangler or direct"),
    }
}

/// The number of physical databases test servers run on: `EDGEFEED_DATABASES` (1 ..= 256),
/// else [`DEFAULT_DATABASES`].
pub fn databases() -> usize {
    match std::env::var("EDGEFEED_DATABASES") {
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|n| (1..=256).contains(n))
            .unwrap_or_else(|| panic!("EDGEFEED_DATABASES={v}: expected 1 ..= 256")),
        Err(_) => DEFAULT_DATABASES,
    }
}

/// The number of fan-out queues test servers get: `EDGEFEED_QUEUES` (1 ..= 16), else 1 (the
/// shipped wrangler.toml's).
pub fn queues() -> usize {
    match std::env::var("EDGEFEED_QUEUES") {
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|n| (1..=16).contains(n))
            .unwrap_or_else(|| panic!("EDGEFEED_QUEUES={v}: expected 1 ..= 16")),
        Err(_) => 1,
    }
}

/// How many D1 databases each data-plane script binds when the stack runs as more than one
/// Worker script (`EDGEFEED_SCRIPT_DATABASES`, 1 ..= 256; ARCHITECTURE.md "More than one Worker
/// script"): a front Worker with no D1 binding and ceil(P/M) data scripts, all in one
/// `wrangler dev`. Unset: one script binding every database.
pub fn script_databases() -> Option<usize> {
    let v = std::env::var("EDGEFEED_SCRIPT_DATABASES").ok().filter(|v| !v.trim().is_empty())?;
    let parsed = v.trim().parse().ok().filter(|n| (1..=256).contains(n));
    Some(parsed.unwrap_or_else(|| panic!("EDGEFEED_SCRIPT_DATABASES={v}: expected 1 ..= 256")))
}

/// The wrangler configs a stack runs on.
#[derive(Debug, Clone, Default)]
struct Configs {
    /// Empty for wrangler.toml itself; else the front config first, then the data scripts'.
    files: Vec<String>,
    /// Databases per data script, when there are data scripts.
    per_script: Option<usize>,
}

impl Configs {
    /// `--config` args for `wrangler dev` (the first config is the one served on the port).
    fn dev_args(&self) -> Vec<String> {
        self.files.iter().flat_map(|f| ["--config".to_string(), f.clone()]).collect()
    }

    /// `--config` args of the config that binds database `index` (migrations run through it;
    /// local D1 files are keyed by database id, so every script sees the same file).
    fn binding_args(&self, index: usize) -> Vec<String> {
        let file = match self.per_script {
            Some(m) => self.files.get(1 + index / m),
            None => self.files.first(),
        };
        file.map(|f| vec!["--config".to_string(), f.clone()]).unwrap_or_default()
    }
}

/// The wrangler configs for `databases` D1 bindings and `queues` fan-out queues: wrangler.toml
/// itself for one of each, else the ones `scripts/wrangler-config` writes (in the project root,
/// gitignored); with `per_script`, a front config and its data scripts' configs.
fn configs(databases: usize, queues: usize, per_script: Option<usize>) -> Configs {
    if databases == 1 && queues == 1 && per_script.is_none() {
        return Configs::default();
    }
    let mut command = Command::new("scripts/wrangler-config");
    command.arg(databases.to_string()).args(["--queues", &queues.to_string()]);
    if let Some(m) = per_script {
        command.args(["--per-script", &m.to_string()]);
    }
    let out = command
        .current_dir(project_dir())
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/wrangler-config");
    assert!(out.status.success(), "scripts/wrangler-config {databases} failed");
    let files = String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().to_string()).collect();
    Configs { files, per_script }
}

/// `--var 'NAME:VALUE'` args for wrangler dev.
fn var_args(vars: &[(String, String)]) -> String {
    vars.iter().map(|(k, v)| format!("--var '{k}:{v}'")).collect::<Vec<_>>().join(" ")
}

/// Applies `migrations/` to every database's local SQLite file in the persist dir, all at
/// once (each is its own wrangler process); one that fails is retried alone, as concurrent
/// runs share wrangler's local metadata file.
fn apply_migrations(persist_dir: &Path, configs: &Configs, databases: usize) {
    let apply = |index: usize| {
        Command::new("npx")
            .args([
                "wrangler",
                "d1",
                "migrations",
                "apply",
                &format!("DB_{index}"),
                "--local",
                "--persist-to",
            ])
            .arg(persist_dir)
            .args(configs.binding_args(index))
            .current_dir(project_dir())
            .env("CI", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("npx wrangler d1 migrations apply")
    };
    let children: Vec<(usize, Child)> = (0..databases).map(|i| (i, apply(i))).collect();
    for (index, mut child) in children {
        // Other wrangler runs on the machine (a parallel test binary) can hold the metadata
        // file for a moment: a few retries, spaced.
        let mut ok = child.wait().map(|s| s.success()).unwrap_or(false);
        for attempt in 1..=4 {
            if ok {
                break;
            }
            std::thread::sleep(Duration::from_millis(500 * attempt));
            ok = apply(index).wait().map(|s| s.success()).unwrap_or(false);
        }
        assert!(ok, "applying migrations to DB_{index} failed");
    }
}

static SERVER: OnceLock<Server> = OnceLock::new();

/// The binary's server, started with [`ServerOptions::suite`] on first use.
pub fn server() -> &'static Server {
    SERVER.get_or_init(|| Server::start(ServerOptions::suite()))
}

/// [`init_server`] on `databases` D1 databases and `queues` fan-out queues, whatever
/// `EDGEFEED_DATABASES` and `EDGEFEED_QUEUES` say.
pub fn init_server_on(options: ServerOptions, databases: usize, queues: usize) -> &'static Server {
    let label = options.label.clone();
    let server = SERVER.get_or_init(|| Server::start_queues(options, databases, stack(), queues));
    assert_eq!(server.label, label, "this binary's server was already started with other options");
    server
}

/// Starts the binary's server with `options` (before anything calls [`server`]); the request
/// helpers below then talk to it. Panics if a server with other options already runs.
pub fn init_server(options: ServerOptions) -> &'static Server {
    let label = options.label.clone();
    let server = SERVER.get_or_init(|| Server::start(options));
    assert_eq!(server.label, label, "this binary's server was already started with other options");
    server
}

/// A server of its own beside the binary's (say, with a broken config); the request helpers
/// keep talking to [`server`], so call it by its `base`. It stops at [`Server::kill`] or when
/// the test process ends, like every server.
pub fn start_server(options: ServerOptions) -> Server {
    Server::start(options)
}

/// [`start_server`] on `databases` physical D1 databases, whatever `EDGEFEED_DATABASES` says
/// (a bench comparing database counts in one run).
pub fn start_server_on(options: ServerOptions, databases: usize) -> Server {
    Server::start_on(options, databases)
}

/// [`start_server_on`] on `stack`, whatever `EDGEFEED_STACK` says (a bench putting both stacks
/// side by side in one run).
pub fn start_server_with(options: ServerOptions, databases: usize, stack: Stack) -> Server {
    Server::start_with(options, databases, stack)
}

/// [`start_server_on`] as more than one Worker script when `per_script` is given (a front and
/// data scripts of at most that many databases each), or one script when `None`, whatever
/// `EDGEFEED_SCRIPT_DATABASES` says: a bench comparing the two in one run.
pub fn start_server_scripts(options: ServerOptions, databases: usize, per_script: Option<usize>) -> Server {
    Server::start_scripts(options, databases, Stack::WranglerDev, queues(), per_script)
}

/// Where the request helpers send requests when set ([`talk_to`]); else [`server`].
static TARGET: RwLock<Option<String>> = RwLock::new(None);

/// Points the request helpers (and [`try_live_connect`]) at `server` instead of the binary's
/// own: a process that runs several servers one after the other talks to each in turn.
pub fn talk_to(server: &Server) {
    *TARGET.write().unwrap_or_else(|p| p.into_inner()) = Some(server.base.clone());
}

/// The base URL requests go to: the [`talk_to`] server, else the binary's.
fn target_base() -> String {
    let target = TARGET.read().unwrap_or_else(|p| p.into_inner()).clone();
    target.unwrap_or_else(|| server().base.clone())
}

/// Ports the harness listens on come from below the kernel's ephemeral range (32768-60999 on
/// Linux): a port the kernel hands out for `bind(0)` is also handed out as the source port of
/// outgoing connections (every test's HTTP client, workerd's own sockets), so one picked that
/// way can be taken again before wrangler binds it (a CI run failed on exactly that).
const LISTEN_PORTS: std::ops::Range<u16> = 20_000..32_000;

/// A port in [`LISTEN_PORTS`] nothing listens on now, picked at random so concurrent test
/// binaries rarely try the same one.
pub fn free_port() -> u16 {
    let span = u64::from(LISTEN_PORTS.end - LISTEN_PORTS.start);
    for _ in 0..1_000 {
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).expect("random bytes");
        let port = LISTEN_PORTS.start + (u64::from_le_bytes(seed) % span) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {LISTEN_PORTS:?} after 1000 tries")
}

fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_to_string(path: &Path) -> String {
    let mut text = String::new();
    let _ = std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text));
    text
}

/// Polls `done` every 100 ms until it holds; false if `deadline` passed first.
fn wait_until(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + deadline;
    loop {
        if done() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether any process is left in process group `pgid`.
fn group_alive(pgid: u32) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The server watchdog, started before anything is written into the persist dir: whatever
/// happens next, the dir goes when we do. It waits for the launch watchdog to stop the server
/// (TERM, then KILL 1 s later), and kills the group itself if it is still there (say, its
/// watchdog was killed).
/// `NODE_OPTIONS` for wrangler's Node process: the preload that keeps miniflare's loopback
/// connections open (see `scripts/wrangler-node-preload.cjs`: without it the local queue can
/// stop delivering for good mid-run), after whatever the caller's environment already sets.
fn wrangler_node_options() -> String {
    let preload = project_dir().join("scripts/wrangler-node-preload.cjs");
    let inherited = std::env::var("NODE_OPTIONS").unwrap_or_default();
    format!("--require \"{}\" {inherited}", preload.display()).trim_end().to_string()
}

/// Where each server's persist dir (its local D1 and Durable Object SQLite files, and its log)
/// is made: `EDGEFEED_PERSIST_ROOT` when set, else the temp dir. workerd runs every SQLite
/// commit's fsync, and the WAL deletions of Durable Objects it evicts, on its one event-loop
/// thread, so on a slow or shared disk the whole stack waits on the disk: a memory file system
/// (`EDGEFEED_PERSIST_ROOT=/dev/shm`) takes the disk out of what a load run measures.
pub fn persist_root() -> PathBuf {
    match std::env::var_os("EDGEFEED_PERSIST_ROOT") {
        Some(root) if !root.is_empty() => PathBuf::from(root),
        _ => std::env::temp_dir(),
    }
}

fn spawn_server_watchdog(persist_dir: &Path, pgid_path: &Path, log_path: &Path, last_log: &Path) {
    let script = format!(
        "while kill -0 {parent} 2>/dev/null; do sleep 0.5; done; \
         for _ in 1 2 3 4 5 6 7 8 9 10; do \
           g=$(cat '{pgid}' 2>/dev/null); \
           if [ -z \"$g\" ] || ! kill -0 -- -$g 2>/dev/null; then break; fi; sleep 0.5; \
         done; \
         g=$(cat '{pgid}' 2>/dev/null); [ -n \"$g\" ] && kill -KILL -- -$g 2>/dev/null; \
         cp '{log}' '{last_log}' 2>/dev/null; rm -rf '{dir}'",
        parent = std::process::id(),
        pgid = pgid_path.display(),
        log = log_path.display(),
        last_log = last_log.display(),
        dir = persist_dir.display(),
    );
    // Never waited on by design: it outlives this process and cleans up after it.
    #[allow(clippy::zombie_processes)]
    let _server_watchdog = Command::new("bash")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("spawn the server watchdog");
}

/// The first launch's `--var` settings: the secrets, `TEST_HOOKS:true`,
/// `OUTBOX_GRACE_SECONDS:2`, `TIMELINE_HEAD_TTL_MS:0` (the timeline heads' replicas load on
/// every read, so a test reads someone's post in the public timeline as soon as it is published;
/// tests/hot runs them with a TTL) and `STREAM_RELAY_MS:250` (public and tag stream frames flushed
/// four times a second, not once), with `extra` on top (replacing those of the same name).
fn launch_vars(extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = [
        ("AUTH_SECRET", AUTH_SECRET),
        ("ADMIN_TOKEN", ADMIN_TOKEN),
        ("VAPID_PRIVATE_KEY", VAPID_PRIVATE_KEY),
        ("TEST_HOOKS", "true"),
        ("OUTBOX_GRACE_SECONDS", "2"),
        ("TIMELINE_HEAD_TTL_MS", "0"),
        ("STREAM_RELAY_MS", "250"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (name, value) in extra {
        match vars.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value.clone(),
            None => vars.push((name.clone(), value.clone())),
        }
    }
    vars
}

impl Server {
    fn start(options: ServerOptions) -> Server {
        Self::start_on(options, databases())
    }

    fn start_on(options: ServerOptions, databases: usize) -> Server {
        Self::start_with(options, databases, stack())
    }

    fn start_with(options: ServerOptions, databases: usize, stack: Stack) -> Server {
        Self::start_queues(options, databases, stack, queues())
    }

    fn start_queues(options: ServerOptions, databases: usize, stack: Stack, queues: usize) -> Server {
        Self::start_scripts(options, databases, stack, queues, script_databases())
    }

    fn start_scripts(
        options: ServerOptions,
        databases: usize,
        stack: Stack,
        queues: usize,
        per_script: Option<usize>,
    ) -> Server {
        let port = options.port.unwrap_or_else(free_port);
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let label = if options.label.is_empty() { String::new() } else { format!("{}-", options.label) };
        let persist_dir = persist_root().join(format!("edgefeed-test-{label}{}-{stamp}", std::process::id()));
        std::fs::create_dir_all(&persist_dir).expect("create the persist dir");
        let log_path = persist_dir.join("wrangler.log");
        let pgid_path = persist_dir.join("launch.pgid");
        let last_log = std::env::temp_dir().join(if options.label.is_empty() {
            "edgefeed-last-wrangler.log".to_string()
        } else {
            format!("edgefeed-last-wrangler-{}.log", options.label)
        });

        spawn_server_watchdog(&persist_dir, &pgid_path, &log_path, &last_log);

        assert!(
            per_script.is_none() || stack == Stack::WranglerDev,
            "EDGEFEED_SCRIPT_DATABASES runs several Worker scripts: only on wrangler dev"
        );
        let configs = configs(databases, queues, per_script);
        apply_migrations(&persist_dir, &configs, databases);

        let server = Server {
            label: options.label,
            base: format!("http://127.0.0.1:{port}"),
            port,
            persist_dir,
            log_path,
            pgid_path,
            vars: Mutex::new(launch_vars(&options.vars)),
            config_arg: configs.dev_args().iter().map(|a| format!("'{a}'")).collect::<Vec<_>>().join(" "),
            stack,
            launch: Mutex::new(None),
        };
        server.launch();
        server
    }

    /// Starts `wrangler dev` on the persist dir and port, and waits until it answers.
    fn launch(&self) {
        let mut slot = self.launch.lock().unwrap_or_else(|p| p.into_inner());
        assert!(slot.is_none(), "a launch is already running");
        let vars = var_args(&self.vars.lock().unwrap_or_else(|p| p.into_inner()));
        // The launch watchdog: wrangler runs in the background of a bash that leads its own
        // process group; when our test process (or wrangler) goes away, bash kills the group.
        // The inspector gets a free port too: wrangler's default (9229, else the next free one)
        // races with every other wrangler starting on the machine.
        let serve = match self.stack {
            Stack::WranglerDev => format!(
                "npx wrangler dev --ip 127.0.0.1 --port {port} --inspector-port {inspector} --persist-to '{dir}' \
                   --test-scheduled --show-interactive-dev-session=false {config} {vars}",
                port = self.port,
                inspector = free_port(),
                dir = self.persist_dir.display(),
                config = self.config_arg,
            ),
            Stack::Direct => format!(
                "node scripts/serve-direct.mjs --ip 127.0.0.1 --port {port} --persist-to '{dir}' {config} {vars}",
                port = self.port,
                dir = self.persist_dir.display(),
                config = self.config_arg,
            ),
        };
        let script = format!(
            "{serve} >>'{log}' 2>&1 & \
             w=$!; \
             while kill -0 {parent} 2>/dev/null && kill -0 $w 2>/dev/null; do sleep 0.5; done; \
             trap '' TERM; kill -TERM 0; sleep 1; kill -KILL 0",
            log = self.log_path.display(),
            parent = std::process::id(),
        );
        let child = Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(project_dir())
            .env("EDGEFEED_SKIP_BUILD", "1")
            .env("CI", "1")
            .env("NODE_OPTIONS", wrangler_node_options())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn wrangler dev");
        let pgid = child.id();
        std::fs::write(&self.pgid_path, pgid.to_string()).expect("record the launch's process group");
        *slot = Some(Launch { child, pgid });
        drop(slot);

        let ready = wait_until(READY_DEADLINE, || {
            matches!(
                ureq::get(&format!("{}/v1/health", self.base)).timeout(Duration::from_secs(2)).call(),
                Ok(r) if r.status() == 200
            )
        });
        assert!(
            ready,
            "the server ({}) did not become ready within {READY_DEADLINE:?}; log:\n{}",
            self.stack.name(),
            self.log()
        );
    }

    /// The simulated crash: SIGKILL to the launch's whole process group (its watchdog bash,
    /// npx/node wrangler and workerd) at once, then waits until every process of the group is
    /// gone and the port is free. The persist dir stays as the crash left it.
    pub fn kill(&self) {
        let mut slot = self.launch.lock().unwrap_or_else(|p| p.into_inner());
        let Some(mut launch) = slot.take() else { panic!("no launch to kill") };
        let status = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", launch.pgid)])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -KILL -{} failed", launch.pgid);
        // Reap our direct child so the group does not linger as a zombie.
        let _ = launch.child.wait();
        let _ = std::fs::write(&self.pgid_path, "");
        let gone = wait_until(Duration::from_secs(30), || !group_alive(launch.pgid));
        assert!(gone, "process group {} still alive 30 s after SIGKILL", launch.pgid);
        let addr = format!("127.0.0.1:{}", self.port);
        let free = wait_until(Duration::from_secs(30), || {
            TcpStream::connect_timeout(&addr.parse().expect("socket address"), Duration::from_millis(200))
                .is_err()
                && TcpListener::bind(&addr).is_ok()
        });
        assert!(free, "port {} still taken 30 s after the kill", self.port);
    }

    /// Starts the server again on the same persist dir and port (after [`Server::kill`]).
    pub fn restart(&self) {
        self.launch();
    }

    /// [`Server::restart`] with `vars` set anew on top of the first launch's (a deploy of a
    /// new config, say a new `SHARD_MAP`, on the same databases).
    pub fn restart_with(&self, vars: &[(&str, &str)]) {
        {
            let mut current = self.vars.lock().unwrap_or_else(|p| p.into_inner());
            for (name, value) in vars {
                current.retain(|(n, _)| n != name);
                current.push((name.to_string(), value.to_string()));
            }
        }
        self.launch();
    }

    /// Everything every launch of this server logged so far.
    pub fn log(&self) -> String {
        read_to_string(&self.log_path)
    }

    /// Resident memory (`VmRSS`, KiB) of every process of the current launch's process group
    /// (wrangler's or serve-direct's node, workerd, the watchdog bash), summed.
    pub fn resident_kib(&self) -> u64 {
        self.resident_by_process().iter().map(|p| p.rss_kib).sum()
    }

    /// [`Server::resident_kib`] per process: which of them grows. Empty when no launch runs.
    pub fn resident_by_process(&self) -> Vec<ProcessMemory> {
        let pgid = self.launch.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|l| l.pgid);
        let Some(pgid) = pgid else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        let pids = entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok());
        let established = established_socket_inodes();
        pids.filter_map(|pid| process_memory(pid).filter(|(group, _)| *group == pgid).map(|(_, m)| m))
            .map(|mut m| {
                (m.descriptors, m.established) = descriptors(m.pid, &established);
                m
            })
            .collect()
    }
}

/// The inodes of the machine's established TCP sockets (state `01` in `/proc/net/tcp` and
/// `tcp6`), to tell which of a process's socket descriptors are live connections.
fn established_socket_inodes() -> std::collections::HashSet<u64> {
    let mut inodes = std::collections::HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(3) == Some(&"01") {
                inodes.extend(fields.get(9).and_then(|i| i.parse::<u64>().ok()));
            }
        }
    }
    inodes
}

/// A process's open descriptors, and how many of them are established TCP connections.
fn descriptors(pid: u32, established: &std::collections::HashSet<u64>) -> (u64, u64) {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return (0, 0) };
    let (mut open, mut connected) = (0, 0);
    for entry in entries.flatten() {
        open += 1;
        let target = std::fs::read_link(entry.path()).unwrap_or_default();
        let inode = target.to_str().and_then(|t| t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok());
        if inode.is_some_and(|i| established.contains(&i)) {
            connected += 1;
        }
    }
    (open, connected)
}

/// One process's resident memory ([`Server::resident_by_process`]).
#[derive(Debug, Clone)]
pub struct ProcessMemory {
    pub pid: u32,
    /// The executable's name (`comm`: `workerd`, `node`, `bash`...).
    pub name: String,
    pub rss_kib: u64,
    /// CPU time used so far, user + system (`utime` + `stime`), in milliseconds.
    pub cpu_ms: u64,
    /// Open file descriptors (`/proc/<pid>/fd`): what ran out when the local stack stopped
    /// answering (issue 38).
    pub descriptors: u64,
    /// Of those, established TCP connections.
    pub established: u64,
}

/// A process's group id, resident memory and CPU time, from `/proc/<pid>/stat` (after the
/// `(comm)` field, which may hold spaces: state, ppid, pgrp, ..., utime, stime) and
/// `/proc/<pid>/status` (`VmRSS`);
/// `None` when it is gone or is a kernel thread (no `VmRSS`).
fn process_memory(pid: u32) -> Option<(u32, ProcessMemory)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, tail) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_string();
    let fields: Vec<&str> = tail.split_whitespace().collect();
    let pgrp = fields.get(2)?.parse().ok()?;
    // utime and stime (fields 14 and 15 of the stat line) in clock ticks: 100 a second on Linux.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let rss_kib = rss.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some((pgrp, ProcessMemory { pid, name, rss_kib, cpu_ms: ticks * 10, descriptors: 0, established: 0 }))
}
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
    pub content_type: String,
    pub allow: Option<String>,
    pub server_timing: Option<String>,
}

impl Resp {
    /// A count from the `Server-Timing` header: the number just before `what` (e.g.
    /// `"sequential round trips"`, `"statements"`, `"calls"`).
    pub fn timing(&self, what: &str) -> u32 {
        let header = self.server_timing.as_deref().expect("a Server-Timing header");
        let end = header.find(what).unwrap_or_else(|| panic!("{what} in {header}"));
        let digits: String =
            header[..end].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
        digits.chars().rev().collect::<String>().parse().unwrap_or_else(|_| panic!("{what} in {header}"))
    }

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

/// Sends a request with raw headers and body bytes; panics on a transport error.
pub fn raw(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
    try_raw(method, path, headers, body).unwrap_or_else(|e| panic!("{method} {path}: transport error {e}"))
}

/// What wrangler dev's proxy answers (503) when its pooled connection to the runtime fails. The
/// runtime closes connections idle for ~5 s; a request that races that close never reaches the
/// Worker (workers-sdk#14641). `scripts/wrangler-node-preload.cjs` now makes the proxy resend
/// such a request itself; this resend stays for a wrangler the preload cannot patch (it warns).
/// Before either, on 2 cores it hit about half the runs of the concurrent like/comment tests.
const PROXY_LOST_CONNECTION: &str = "Your worker restarted mid-request";

/// Sends a request, resending it (a few times) only when the local proxy lost it as above;
/// `Err` when no response came back at all (refused, reset, timed out), as when the server is
/// killed mid-request.
pub fn try_send(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<ureq::Response, String> {
    for attempt in 1.. {
        return match send_once(method, path, headers, body) {
            Ok(r) if r.status() == 503 && attempt < 4 => {
                let text = r.into_string().unwrap_or_default();
                if !text.starts_with(PROXY_LOST_CONNECTION) {
                    return Err(format!("503 {text}"));
                }
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            other => other,
        };
    }
    unreachable!("the loop returns")
}

/// [`try_send`] that panics on a transport error.
pub fn send(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> ureq::Response {
    try_send(method, path, headers, body).unwrap_or_else(|e| panic!("{method} {path}: transport error {e}"))
}

/// Sends a request once, whatever comes back: unlike [`try_send`], a 503 of the local proxy
/// is an answer like any other (the load bench counts them); `Err` only when no response came
/// back at all.
pub fn send_once(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<ureq::Response, String> {
    let url = format!("{}{path}", target_base());
    let mut req = ureq::request(method, &url).timeout(Duration::from_secs(60));
    for (k, v) in headers {
        req = req.set(k, v);
    }
    match if body.is_empty() { req.call() } else { req.send_bytes(body) } {
        Ok(r) | Err(ureq::Error::Status(_, r)) => Ok(r),
        Err(e) => Err(e.to_string()),
    }
}

/// [`try_call`] sent once ([`send_once`]): every status comes back as it was answered.
pub fn call_once(
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Resp, String> {
    call_with(send_once, method, path, token, body)
}

/// Sends a request; `Err` when no complete response came back (refused, reset, timed out,
/// body cut short), as when the server is killed mid-request.
pub fn try_raw(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Resp, String> {
    into_resp(try_send(method, path, headers, body)?)
}

/// Reads a response's status, headers of interest and body (JSON when it parses).
fn into_resp(response: ureq::Response) -> Result<Resp, String> {
    let status = response.status();
    let content_type = response.header("content-type").unwrap_or("").to_string();
    let allow = response.header("allow").map(str::to_string);
    let server_timing = response.header("server-timing").map(str::to_string);
    let text = response.into_string().map_err(|e| format!("reading the body: {e}"))?;
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Ok(Resp { status, body, content_type, allow, server_timing })
}

pub fn call(method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> Resp {
    try_call(method, path, token, body).unwrap_or_else(|e| panic!("{method} {path}: transport error {e}"))
}

/// [`call`] that returns transport errors instead of panicking.
pub fn try_call(method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> Result<Resp, String> {
    call_with(try_send, method, path, token, body)
}

/// How a request's bytes are sent ([`try_send`] or [`send_once`]).
type Sender = fn(&str, &str, &[(&str, &str)], &[u8]) -> Result<ureq::Response, String>;

/// A JSON request with an optional bearer token, sent by `send`.
fn call_with(
    send: Sender,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Resp, String> {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(a) = &auth {
        headers.push(("authorization", a));
    }
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    into_resp(send(method, path, &headers, &bytes)?)
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
/// Each sign-up comes from its own client address (`CF-Connecting-IP`), as distinct people's
/// would: the registration limit is per address, and the suite's hundreds of users are not one
/// client flooding it (tests/api/security.rs floods one address on purpose).
pub fn register(prefix: &str) -> User {
    let n = HANDLE_SEQ.fetch_add(1, Ordering::Relaxed);
    let handle = format!("{prefix}_{n}");
    let ip = format!("10.{}.{}.{}", (n >> 16) & 255, (n >> 8) & 255, n & 255);
    let payload = json!({ "handle": handle, "display_name": prefix }).to_string();
    let headers = [("content-type", "application/json"), ("cf-connecting-ip", ip.as_str())];
    let body = raw("POST", "/v1/users", &headers, payload.as_bytes()).expect(201);
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

/// Reads the feed once so the reader's timeline window exists and fan-out reaches it.
pub fn activate(reader: &User) {
    reader.get("/v1/feed?limit=1").expect(200);
}

/// Loses the queue send of the user's next committed event (a crash between commit and send):
/// the event stays pending until the reconciliation pass resends it.
pub fn lose_next_announce(user: &User) {
    admin("POST", "/v1/admin/test/fault", Some(&json!({ "name": format!("skip_announce:{}", user.id) })))
        .expect(200);
}

/// The post ids held in the reader's timeline window (a test hook: not the feed, whose reads
/// also merge D1), newest first.
pub fn window_ids(reader: &User) -> Vec<String> {
    let w = admin("POST", "/v1/admin/test/window", Some(&json!({ "reader_id": reader.id }))).expect(200);
    w["post_ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// The author's outbox events of every kind (a test hook), with `pending` and fault counters.
pub fn outbox_of(author: &User) -> Value {
    admin("POST", "/v1/admin/test/outbox", Some(&json!({ "author_id": author.id }))).expect(200)
}

/// Waits (up to 90 s) until no event of the author is pending, queue retries included.
pub fn wait_drained(author: &User) {
    poll("the author's outbox to drain", Duration::from_secs(90), || {
        (outbox_of(author)["pending"] == 0).then_some(())
    });
}

/// The `id` of a JSON object (a Post, a User...).
pub fn id_of(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
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

/// A tag no other test (or run on the same persist dir) uses.
pub fn fresh_tag(prefix: &str) -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{prefix}{}{nanos}", now_secs() % 100_000)
}

/// The status ids of a Mastodon timeline page (`path`, read as `user`), and its `Link` next
/// (a path), if any.
pub fn mastodon_page(user: &User, path: &str) -> (Vec<String>, Option<String>) {
    let r = send("GET", path, &[("authorization", &format!("Bearer {}", user.token))], b"");
    assert_eq!(r.status(), 200, "{path}");
    let link = r.header("link").unwrap_or("").to_string();
    let body: Value = r.into_json().expect("json");
    let next = link.split(", ").find(|p| p.ends_with("rel=\"next\"")).and_then(|p| {
        let url = p.trim_start_matches('<').split('>').next()?;
        Some(url[url.find("/api/")?..].to_string())
    });
    let ids = body.as_array().unwrap_or_else(|| panic!("an array: {body}")).iter().map(id_of).collect();
    (ids, next)
}

/// A Mastodon status by `user` (the answered Status).
pub fn toot(user: &User, text: &str, visibility: &str) -> Value {
    user.post("/api/v1/statuses", json!({ "status": text, "visibility": visibility })).expect(200)
}

pub fn ids(items: &[Value]) -> Vec<String> {
    items.iter().map(|i| i["id"].as_str().unwrap_or("").to_string()).collect()
}

/// Nearest-rank percentile of `samples` (NaN when empty), for the benches' reports.
pub fn pct(samples: &[f64], p: f64) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    if s.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * s.len() as f64).ceil().max(1.0) as usize;
    s[rank.min(s.len()) - 1]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs `work(i)` for i in 0..n on `threads` threads (each takes the next index); returns the
/// results in index order.
pub fn parallel<T: Send + 'static>(
    threads: usize,
    n: usize,
    work: impl Fn(usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let work = std::sync::Arc::new(work);
    let out: std::sync::Arc<Mutex<Vec<Option<T>>>> =
        std::sync::Arc::new(Mutex::new((0..n).map(|_| None).collect()));
    let next = std::sync::Arc::new(Mutex::new(0usize));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (work, out, next) = (work.clone(), out.clone(), next.clone());
            std::thread::spawn(move || loop {
                let i = {
                    let mut n_ = next.lock().unwrap();
                    let i = *n_;
                    *n_ += 1;
                    i
                };
                if i >= n {
                    return;
                }
                let v = work(i);
                out.lock().unwrap()[i] = Some(v);
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a worker thread panicked");
    }
    std::sync::Arc::try_unwrap(out)
        .ok()
        .unwrap()
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|v| v.unwrap())
        .collect()
}

/// Runs `total` requests from `clients` threads; returns requests per second and each
/// request's latency in ms (the benches' throughput runs).
pub fn concurrent(
    clients: usize,
    total: usize,
    request: impl Fn(usize) + Send + Sync + 'static,
) -> (f64, Vec<f64>) {
    let started = Instant::now();
    let latencies = parallel(clients, total, move |i| {
        let t = Instant::now();
        request(i);
        ms(t.elapsed())
    });
    (total as f64 / started.elapsed().as_secs_f64(), latencies)
}

/// A live feed socket (`GET /v1/feed/live`), read with a timeout per read.
pub struct LiveSocket {
    socket: tungstenite::WebSocket<TcpStream>,
}

/// What reading a live socket gave.
#[derive(Debug, PartialEq)]
pub enum LiveRead {
    Text(String),
    /// The server closed the socket with this code.
    Closed(u16),
    /// Nothing arrived within the timeout.
    Quiet,
}

/// Asks for a ticket with the user's token.
pub fn live_ticket(user: &User) -> String {
    let v = user.post("/v1/feed/live/ticket", json!({})).expect(200);
    v["ticket"].as_str().expect("a ticket").to_string()
}

/// Opens the live socket with `ticket`; `Err(status)` when the upgrade was refused.
pub fn try_live_connect(ticket: &str) -> Result<LiveSocket, u16> {
    let base = &target_base();
    let url = format!("{}/v1/feed/live?ticket={ticket}", base.replacen("http://", "ws://", 1));
    let stream = TcpStream::connect(base.trim_start_matches("http://")).expect("connect to the server");
    match tungstenite::client(url.as_str(), stream) {
        Ok((socket, _)) => Ok(LiveSocket { socket }),
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response))) => {
            Err(response.status().as_u16())
        }
        Err(e) => panic!("live socket handshake failed: {e}"),
    }
}

/// Opens a Mastodon streaming socket at `path_and_query` (`/api/v1/streaming?...`) with these
/// extra request headers; the socket and the subprotocol the answer named, or the refusal's
/// status.
pub fn try_mastodon_stream(
    path_and_query: &str,
    headers: &[(&str, &str)],
) -> Result<(LiveSocket, Option<String>), u16> {
    use tungstenite::client::IntoClientRequest;
    let base = &target_base();
    let url = format!("{}{path_and_query}", base.replacen("http://", "ws://", 1));
    let mut request = url.as_str().into_client_request().expect("a websocket request");
    for (name, value) in headers {
        let name = tungstenite::http::HeaderName::from_bytes(name.as_bytes()).expect("a header name");
        request.headers_mut().insert(name, value.parse().expect("a header value"));
    }
    let stream = TcpStream::connect(base.trim_start_matches("http://")).expect("connect to the server");
    match tungstenite::client(request, stream) {
        Ok((socket, response)) => {
            let protocol = response
                .headers()
                .get("sec-websocket-protocol")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            Ok((LiveSocket { socket }, protocol))
        }
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response))) => {
            Err(response.status().as_u16())
        }
        Err(e) => panic!("streaming handshake failed: {e}"),
    }
}

/// Opens the user's live socket (ticket, then upgrade).
pub fn live_connect(user: &User) -> LiveSocket {
    try_live_connect(&live_ticket(user)).unwrap_or_else(|status| panic!("live socket refused: {status}"))
}

impl LiveSocket {
    /// The next text message or close, waiting at most `timeout`.
    pub fn read(&mut self, timeout: Duration) -> LiveRead {
        self.socket.get_mut().set_read_timeout(Some(timeout)).expect("read timeout");
        loop {
            match self.socket.read() {
                Ok(tungstenite::Message::Text(text)) => return LiveRead::Text(text.to_string()),
                Ok(tungstenite::Message::Close(frame)) => {
                    return LiveRead::Closed(frame.map_or(1005, |f| u16::from(f.code)))
                }
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
                {
                    return LiveRead::Quiet
                }
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    return LiveRead::Closed(1006)
                }
                Err(e) => panic!("live socket read failed: {e}"),
            }
        }
    }

    /// The next `new_posts` event within `deadline` (the fan-out's), as JSON.
    #[track_caller]
    pub fn next_event(&mut self, deadline: Duration) -> Value {
        match self.read(deadline) {
            LiveRead::Text(text) => serde_json::from_str(&text).expect("a JSON event"),
            other => panic!("expected a live event within {deadline:?}, got {other:?}"),
        }
    }

    pub fn send_text(&mut self, text: &str) {
        self.socket.send(tungstenite::Message::text(text)).expect("send on the live socket");
    }
}
