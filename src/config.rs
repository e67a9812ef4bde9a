//! Typed `[vars]` with defaults. Parsing is pure so it is unit-tested natively; `from_env`
//! is the thin adapter over the Worker environment.

use crate::domain::backlog::Thresholds;
use crate::domain::policy::{FanoutMode, Policy};

/// Tunables from `wrangler.toml` `[vars]` (or `--var` overrides). See README for each.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub open_registration: bool,
    pub token_ttl_secs: i64,
    /// Longest token lifetime accepted (`exp - iat`, or `exp - now` without `iat`); never
    /// below `token_ttl_secs`, so the service accepts the tokens it issues.
    pub token_max_ttl_secs: i64,
    pub feed_window: usize,
    pub fanout_chunk: usize,
    pub fanout_concurrency: usize,
    /// D1 statements one fan-out consumer invocation may spend at most
    /// (`FANOUT_INVOCATION_STATEMENTS`): Cloudflare allows 1,000 queries per invocation; the
    /// default leaves headroom (`domain/fanout_budget.rs`).
    pub fanout_invocation_statements: usize,
    /// A big post's fan-out runs as segments side by side (`domain/fanout_segments.rs`), each
    /// finishing within `FANOUT_SEGMENT_SECONDS` at `FANOUT_CHUNK_SECONDS` a chunk, at most
    /// `FANOUT_MAX_SEGMENTS` of them (unset: 250 per fan-out queue; 1: one chain).
    pub fanout_segment_seconds: f64,
    pub fanout_chunk_seconds: f64,
    pub fanout_max_segments: Option<usize>,
    /// A segment records its progress every `FANOUT_RECORD_EVERY` chunks (and with its last):
    /// fewer writes on the author's database, at most that many chunks redone after a crash.
    pub fanout_record_every: u16,
    pub outbox_grace_ms: i64,
    pub feed_scan_budget: usize,
    /// Posts younger than this are merged into every read from D1 beside the window, whatever
    /// the outbox says (`FEED_IN_FLIGHT_SECONDS`): a cushion for commit and clock lag. Posts
    /// whose fan-out has not finished are merged however old they are (`store/feed.rs`,
    /// `in_flight_horizon`); this is also where hot-range cache entries end (`domain/hot.rs`).
    pub in_flight_ms: i64,
    /// Enables the `/v1/admin/test/*` fault-injection routes. Never on in production.
    pub test_hooks: bool,
    /// Counts background work (queue batches) per database in the stats (`PROFILE_IO`), for
    /// the capacity bench: `io_fanout_*` counters. Off by default: each counter is a statement.
    pub profile_io: bool,
    /// Hybrid fan-out: `FANOUT_MODE`, `PUSH_COST_RATIO`, `ACTIVE_DAYS`, `PUSH_MAX_FOLLOWERS`,
    /// `EDGE_HYSTERESIS` (see `domain/policy.rs`).
    pub policy: Policy,
    /// Applies the `[[ratelimits]]` abuse limits (off only for benchmarks).
    pub rate_limits: bool,
    /// Pulled authors with at least this many followers are served from the hot-range cache
    /// (`HOT_AUTHOR_FOLLOWERS`; 0 turns the cache off). See `domain/hot.rs`.
    pub hot_min_followers: i64,
    /// Post keys cached per hot author (`HOT_RANGE`).
    pub hot_range_len: usize,
    /// Hot authors' replicas (`domain/replica.rs`, docs/hot-authors.md).
    pub replica: ReplicaConfig,
    /// The public and tag timelines' heads on replicated objects (`domain/timeline_head.rs`).
    pub heads: HeadsConfig,
    /// Days without a feed read after which a reader's window object deletes its storage
    /// (`WINDOW_IDLE_DAYS`; see `domain/idle.rs`).
    pub window_idle_days: i64,
    /// Users per database whose counters each cron pass's sweep recounts whether or not their
    /// relations changed (`COUNT_SWEEP_USERS`, default 1, 0 turns the sweep off; the changed
    /// ones are recounted from their marks: `services/reconcile.rs`).
    pub count_sweep_users: usize,
    /// How long an upload may stay unattached before the cron's sweep removes it, in ms
    /// (`MEDIA_UNATTACHED_SECONDS`, default a day; `services/media.rs`).
    pub media_unattached_ms: i64,
    /// The delivery-backlog alert (`BACKLOG_WARN_SECONDS`, `BACKLOG_ALERT_SECONDS`,
    /// `BACKLOG_LAG_WINDOW_SECONDS`; see `domain/backlog.rs`).
    pub backlog: Thresholds,
    /// `SHARD_MAP` as given: parsed against the `DB_i` bindings that exist when a context is
    /// built (`store/shards.rs`), since how many there are is known only then.
    pub shard_map: String,
    /// The instance's rules (`INSTANCE_RULES`, one per line): `/api/v1/instance/rules` and the
    /// instance documents. None by default.
    pub instance_rules: Vec<String>,
    /// Web Push's VAPID `sub` (`VAPID_SUBJECT`: a `mailto:` or `https://` URI where push
    /// services can reach the operator); unset or neither: the instance's URL. The key itself is
    /// the secret `VAPID_PRIVATE_KEY` (`services/push.rs`).
    pub vapid_subject: Option<String>,
}

/// A whole-number var within `[min, max]`, else `default`.
fn num<T: std::str::FromStr + Ord>(raw: Option<String>, default: T, min: T, max: T) -> T {
    raw.and_then(|v| v.trim().parse().ok()).map(|v: T| v.clamp(min, max)).unwrap_or(default)
}

/// A real-number var within `[min, max]`, else `default`.
fn ratio(raw: Option<String>, default: f64, min: f64, max: f64) -> f64 {
    raw.and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite())
        .map_or(default, |v| v.clamp(min, max))
}

impl Config {
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let flag = |name: &str, default: bool| match get(name).as_deref().map(str::trim) {
            Some("true" | "1" | "yes") => true,
            Some("false" | "0" | "no") => false,
            _ => default,
        };
        let token_ttl_secs = num(get("TOKEN_TTL_SECONDS"), 30 * 86_400, 60, 365 * 86_400);
        Self {
            open_registration: flag("OPEN_REGISTRATION", true),
            token_ttl_secs,
            token_max_ttl_secs: num(get("TOKEN_MAX_TTL_SECONDS"), 90 * 86_400, 60, 5 * 365 * 86_400)
                .max(token_ttl_secs),
            feed_window: num(get("FEED_WINDOW"), 800, 10, 10_000),
            fanout_chunk: num(get("FANOUT_CHUNK"), 500, 1, 5_000),
            fanout_concurrency: num(get("FANOUT_CONCURRENCY"), 16, 1, 64),
            fanout_invocation_statements: num(get("FANOUT_INVOCATION_STATEMENTS"), 900, 150, 1_000),
            fanout_segment_seconds: ratio(get("FANOUT_SEGMENT_SECONDS"), 60.0, 1.0, 3_600.0),
            fanout_chunk_seconds: ratio(get("FANOUT_CHUNK_SECONDS"), 1.0, 0.01, 60.0),
            fanout_max_segments: get("FANOUT_MAX_SEGMENTS")
                .and_then(|v| v.trim().parse::<usize>().ok())
                .map(|n| n.clamp(1, 10_000)),
            fanout_record_every: num::<u16>(get("FANOUT_RECORD_EVERY"), 4, 1, 100),
            outbox_grace_ms: num(get("OUTBOX_GRACE_SECONDS"), 30, 0, 3_600) * 1000,
            feed_scan_budget: num(get("FEED_SCAN_BUDGET"), 400, 20, 5_000),
            in_flight_ms: num(get("FEED_IN_FLIGHT_SECONDS"), 120, 1, 3_600) * 1000,
            test_hooks: flag("TEST_HOOKS", false),
            profile_io: flag("PROFILE_IO", false),
            policy: Policy {
                mode: get("FANOUT_MODE").and_then(|m| m.parse().ok()).unwrap_or(FanoutMode::Hybrid),
                push_cost_ratio: ratio(get("PUSH_COST_RATIO"), 10.0, 0.0, 1e9),
                active_days: num(get("ACTIVE_DAYS"), 7, 1, 3_650),
                push_max_followers: num(get("PUSH_MAX_FOLLOWERS"), 10_000_000, 1, 100_000_000),
                hysteresis: ratio(get("EDGE_HYSTERESIS"), 2.0, 1.0, 100.0),
            },
            rate_limits: flag("RATE_LIMITS", true),
            hot_min_followers: num(get("HOT_AUTHOR_FOLLOWERS"), 1_000, 0, i64::MAX),
            hot_range_len: num(get("HOT_RANGE"), 200, 10, 2_000),
            replica: replica_config(|name, default, min, max| num(get(name), default, min, max)),
            heads: heads_config(|name, default, min, max| num(get(name), default, min, max)),
            window_idle_days: num(get("WINDOW_IDLE_DAYS"), 30, 1, 3_650),
            count_sweep_users: num(get("COUNT_SWEEP_USERS"), 1, 0, 500),
            media_unattached_ms: num(get("MEDIA_UNATTACHED_SECONDS"), 86_400, 1, 30 * 86_400) * 1000,
            backlog: backlog_thresholds(|name, default| num(get(name), default, 1, 86_400) * 1000),
            shard_map: get("SHARD_MAP").unwrap_or_default(),
            instance_rules: crate::domain::instance::parse_rules(&get("INSTANCE_RULES").unwrap_or_default()),
            vapid_subject: vapid_subject(get("VAPID_SUBJECT")),
        }
    }

    pub fn from_env(env: &worker::Env) -> Self {
        Self::from_lookup(|name| env.var(name).ok().map(|v| v.to_string()))
    }
}

/// `VAPID_SUBJECT` when it is a `mailto:` or `https://` URI.
fn vapid_subject(raw: Option<String>) -> Option<String> {
    raw.map(|s| s.trim().to_string()).filter(|s| s.starts_with("mailto:") || s.starts_with("https://"))
}

/// The public and tag timelines' heads (README "Configuration").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadsConfig {
    /// Replicas per timeline key (`TIMELINE_HEAD_REPLICAS`; 0: pages read the keys' databases).
    pub replicas: u32,
    /// How long a replica answers from memory after its last load (`TIMELINE_HEAD_TTL_MS`).
    pub ttl_ms: i64,
    /// How often at most a key's stream relay flushes its news to the listeners
    /// (`STREAM_RELAY_MS`, `domain/stream_relay.rs`).
    pub stream_relay_ms: i64,
}

/// Hot authors' replicas (README "Configuration").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaConfig {
    /// Authors with at least this many followers get replicas (`HOT_REPLICA_FOLLOWERS`; 0: off).
    pub min_followers: i64,
    /// One replica per this many followers (`HOT_FOLLOWERS_PER_REPLICA`), within 2..=256: the
    /// count recorded at promotion (`users.replicas`), now only a mark that the author is hot,
    /// since every hot author is held by all the digests.
    pub followers_per_replica: i64,
    /// A replica answers from memory for this long after it last confirmed it is current
    /// (`REPLICA_LEASE_SECONDS`); a writer a replica did not acknowledge waits this long.
    pub lease_ms: i64,
    /// Counts on replicated posts are refreshed at least this often (`REPLICA_COUNTS_SECONDS`).
    pub counts_ms: i64,
    /// How long an isolate trusts its copy of the directory of replicated authors
    /// (`HOT_DIRECTORY_TTL_SECONDS`): a newly promoted author is read from replicas after it.
    pub directory_ttl_ms: i64,
    /// A replica write not answered in this long counts as not acknowledged.
    pub write_timeout_ms: u64,
    /// A replica read not answered in this long: the page reads that author from D1.
    pub read_timeout_ms: u64,
    /// Digests (`HOT_DIGESTS`): each holds every hot author its readers read, a reader reads
    /// one (by hash), a hot author's change is written to all. Sized so each stays near half a
    /// Durable Object's ~1,000 requests/s at the read rate (200 at 100k pages/s).
    pub digests: u32,
    /// Hot authors one digest holds at most (`HOT_DIGEST_AUTHORS`); past it the least recently
    /// read is forgotten and reloaded from D1 when read again.
    pub digest_authors: usize,
}

impl ReplicaConfig {
    pub fn enabled(&self) -> bool {
        self.min_followers > 0
    }
}

/// The replicas' settings, each within its bounds.
fn heads_config(num: impl Fn(&str, i64, i64, i64) -> i64) -> HeadsConfig {
    HeadsConfig {
        replicas: num("TIMELINE_HEAD_REPLICAS", 8, 0, 64) as u32,
        ttl_ms: num("TIMELINE_HEAD_TTL_MS", 1_000, 0, 60_000),
        stream_relay_ms: num("STREAM_RELAY_MS", 1_000, 10, 60_000),
    }
}

fn replica_config(num: impl Fn(&str, i64, i64, i64) -> i64) -> ReplicaConfig {
    ReplicaConfig {
        min_followers: num("HOT_REPLICA_FOLLOWERS", 100_000, 0, i64::MAX),
        followers_per_replica: num("HOT_FOLLOWERS_PER_REPLICA", 50_000, 1, i64::MAX),
        lease_ms: num("REPLICA_LEASE_SECONDS", 10, 1, 3_600) * 1000,
        counts_ms: num("REPLICA_COUNTS_SECONDS", 30, 1, 86_400) * 1000,
        directory_ttl_ms: num("HOT_DIRECTORY_TTL_SECONDS", 30, 0, 86_400) * 1000,
        write_timeout_ms: num("REPLICA_WRITE_TIMEOUT_MS", 1_000, 10, 60_000) as u64,
        read_timeout_ms: num("REPLICA_READ_TIMEOUT_MS", 500, 10, 60_000) as u64,
        digests: num("HOT_DIGESTS", 200, 1, 4_096) as u32,
        digest_authors: num("HOT_DIGEST_AUTHORS", 1_024, 1, 100_000) as usize,
    }
}

/// Defaults: warn once a lost send is due its resend (the cron resends events older than
/// `OUTBOX_GRACE_SECONDS`, 30 s, every minute), alert when a resend has not fixed it.
fn backlog_thresholds(ms: impl Fn(&str, i64) -> i64) -> Thresholds {
    let warn_ms = ms("BACKLOG_WARN_SECONDS", 60);
    Thresholds {
        warn_ms,
        alert_ms: ms("BACKLOG_ALERT_SECONDS", 300).max(warn_ms),
        lag_window_ms: ms("BACKLOG_LAG_WINDOW_SECONDS", 300),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_when_unset_and_clamps_out_of_range() {
        let c = Config::from_lookup(|_| None);
        assert!(c.open_registration);
        assert_eq!(c.feed_window, 800);
        assert_eq!(c.in_flight_ms, 120_000);
        assert!(!c.test_hooks);
        assert!(c.rate_limits);
        let c = Config::from_lookup(|n| match n {
            "FEED_WINDOW" => Some("3".into()),
            "OPEN_REGISTRATION" => Some("false".into()),
            "FANOUT_CHUNK" => Some("junk".into()),
            _ => None,
        });
        assert_eq!(c.feed_window, 10);
        assert!(!c.open_registration);
        assert_eq!(c.fanout_chunk, 500);
        assert_eq!(c.policy.mode, FanoutMode::Hybrid);
        assert_eq!(Config::from_lookup(|_| None).window_idle_days, 30);
        let idle =
            |v: &str| Config::from_lookup(|n| (n == "WINDOW_IDLE_DAYS").then(|| v.into())).window_idle_days;
        assert_eq!((idle("0"), idle("90"), idle("99999"), idle("soon")), (1, 90, 3_650, 30));
        let c = Config::from_lookup(|n| match n {
            "FANOUT_MODE" => Some("pull".into()),
            "PUSH_COST_RATIO" => Some("NaN".into()),
            "EDGE_HYSTERESIS" => Some("0.5".into()),
            _ => None,
        });
        assert_eq!(
            (c.policy.mode, c.policy.push_cost_ratio, c.policy.hysteresis),
            (FanoutMode::Pull, 10.0, 1.0)
        );
    }

    #[test]
    fn token_max_ttl_defaults_to_90_days_and_never_undercuts_the_issued_ttl() {
        let c = Config::from_lookup(|_| None);
        assert_eq!((c.token_ttl_secs, c.token_max_ttl_secs), (30 * 86_400, 90 * 86_400));
        let c = Config::from_lookup(|n| match n {
            "TOKEN_TTL_SECONDS" => Some("864000".into()),
            "TOKEN_MAX_TTL_SECONDS" => Some("3600".into()),
            _ => None,
        });
        assert_eq!(c.token_max_ttl_secs, 864_000, "raised to TOKEN_TTL_SECONDS");
        let c = Config::from_lookup(|n| (n == "TOKEN_MAX_TTL_SECONDS").then(|| "7200".into()));
        assert_eq!(c.token_max_ttl_secs, 30 * 86_400);
        let c = Config::from_lookup(|n| (n == "TOKEN_MAX_TTL_SECONDS").then(|| "31536000".into()));
        assert_eq!(c.token_max_ttl_secs, 365 * 86_400);
    }

    #[test]
    fn backlog_thresholds_default_and_alert_never_below_warn() {
        let b = Config::from_lookup(|_| None).backlog;
        assert_eq!((b.warn_ms, b.alert_ms, b.lag_window_ms), (60_000, 300_000, 300_000));
        let b = Config::from_lookup(|n| match n {
            "BACKLOG_WARN_SECONDS" => Some("20".into()),
            "BACKLOG_ALERT_SECONDS" => Some("5".into()),
            "BACKLOG_LAG_WINDOW_SECONDS" => Some("0".into()),
            _ => None,
        })
        .backlog;
        assert_eq!((b.warn_ms, b.alert_ms, b.lag_window_ms), (20_000, 20_000, 1_000));
    }
}
