//! Web Push subscriptions as Mastodon defines them (`/api/v1/push/subscription`): the
//! parameters (form or JSON, by their Rails names), what each alert and policy admits, and the
//! payload a push carries. The encryption and the VAPID signature are `webpush.rs`.
//!
//! One subscription per access token (Mastodon keys it by token): a new `POST` replaces the
//! token's, and the token's revocation ends it.

use super::mastodon::form_bool;
use super::notifications::Kind;
use super::validate::Invalid;
use super::webpush::{parse_auth, parse_p256dh, AUTH_LEN, POINT_LEN};

/// Mastodon's alert names, in the order the entity lists them; a subscription's alerts are a
/// bit per name (`push_subscriptions.alerts`). `status` (a followed account's new post) and
/// the admin alerts are kept and answered: nothing here makes those notifications.
pub const ALERTS: [&str; 12] = [
    "mention",
    "status",
    "reblog",
    "follow",
    "follow_request",
    "favourite",
    "poll",
    "update",
    "quote",
    "quoted_update",
    "admin.sign_up",
    "admin.report",
];

/// The longest endpoint URL taken (browsers' push services use a few hundred characters).
pub const MAX_ENDPOINT_LEN: usize = 2048;

/// Which notification types a subscription is pushed (Mastodon's `alerts`: each off unless
/// given true).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Alerts(u32);

impl Alerts {
    pub fn from_bits(bits: i64) -> Alerts {
        Alerts((bits & ((1 << ALERTS.len()) - 1)) as u32)
    }

    pub fn bits(self) -> i64 {
        i64::from(self.0)
    }

    fn bit(name: &str) -> Option<u32> {
        ALERTS.iter().position(|a| *a == name).map(|i| 1 << i)
    }

    pub fn is_on(self, name: &str) -> bool {
        Self::bit(name).is_some_and(|bit| self.0 & bit != 0)
    }

    fn set(&mut self, name: &str, on: bool) -> bool {
        let Some(bit) = Self::bit(name) else { return false };
        if on {
            self.0 |= bit;
        } else {
            self.0 &= !bit;
        }
        true
    }

    /// Whether a notification of `kind` is pushed: its Mastodon type's alert is on (a reply
    /// to the recipient's post is a `mention` there, as in the lists).
    pub fn admits(self, kind: Kind) -> bool {
        self.is_on(kind.mastodon())
    }

    /// The bit of `kind`'s alert, for the SQL that checks it (`alerts & bit`).
    pub fn kind_bit(kind: Kind) -> i64 {
        Self::bit(kind.mastodon()).map_or(0, i64::from)
    }

    /// The entity's `alerts`: every name, on or off.
    pub fn to_json(self) -> serde_json::Value {
        ALERTS.iter().map(|name| (name.to_string(), serde_json::Value::Bool(self.is_on(name)))).collect()
    }
}

/// Whose notifications are pushed (Mastodon's `policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    #[default]
    All,
    /// Only from accounts the recipient follows.
    Followed,
    /// Only from accounts that follow the recipient.
    Follower,
    None,
}

impl Policy {
    pub const NAMES: [(&'static str, Policy); 4] = [
        ("all", Policy::All),
        ("followed", Policy::Followed),
        ("follower", Policy::Follower),
        ("none", Policy::None),
    ];

    pub fn parse(name: &str) -> Option<Policy> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    pub fn as_str(self) -> &'static str {
        Self::NAMES.iter().find(|(_, p)| *p == self).map_or("all", |(n, _)| n)
    }

    /// Whether a notification from an actor is pushed, given whether the recipient follows
    /// them and whether they follow the recipient.
    pub fn admits(self, recipient_follows_actor: bool, actor_follows_recipient: bool) -> bool {
        match self {
            Policy::All => true,
            Policy::Followed => recipient_follows_actor,
            Policy::Follower => actor_follows_recipient,
            Policy::None => false,
        }
    }
}

/// A subscription's `data`: its alerts and policy. Mastodon replaces both on every `POST` and
/// `PUT`: an alert not given is off, no policy is `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PushData {
    pub alerts: Alerts,
    pub policy: Policy,
}

/// Where a push goes and the keys it is encrypted for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub endpoint: String,
    pub p256dh: [u8; POINT_LEN],
    pub auth: [u8; AUTH_LEN],
}

fn value<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// `data[alerts][<type>]` and `data[policy]` (also `policy` alone, where masto.js sends it).
/// Unknown alert names are ignored, as Mastodon's permitted parameters drop them.
pub fn parse_data(params: &[(String, String)]) -> Result<PushData, Invalid> {
    let mut data = PushData::default();
    for (name, raw) in params {
        let Some(alert) = name.strip_prefix("data[alerts][").and_then(|n| n.strip_suffix(']')) else {
            continue;
        };
        let on = form_bool(raw)
            .ok_or_else(|| Invalid::new("data[alerts]", format!("{name} must be a boolean")))?;
        data.alerts.set(alert, on);
    }
    if let Some(policy) = value(params, "data[policy]").or_else(|| value(params, "policy")) {
        data.policy = Policy::parse(policy).ok_or_else(|| {
            Invalid::new("data[policy]", "policy must be one of all, followed, follower, none")
        })?;
    }
    Ok(data)
}

/// `subscription[endpoint]`, `subscription[keys][p256dh]`, `subscription[keys][auth]`.
pub fn parse_endpoint(params: &[(String, String)]) -> Result<Endpoint, Invalid> {
    let endpoint = value(params, "subscription[endpoint]")
        .ok_or_else(|| Invalid::new("subscription[endpoint]", "subscription[endpoint] is required"))?;
    check_endpoint(endpoint)?;
    let p256dh = value(params, "subscription[keys][p256dh]").ok_or_else(|| {
        Invalid::new("subscription[keys][p256dh]", "subscription[keys][p256dh] is required")
    })?;
    let p256dh = parse_p256dh(p256dh).ok_or_else(|| {
        Invalid::new(
            "subscription[keys][p256dh]",
            "p256dh must be an uncompressed P-256 public key (65 octets) in base64url",
        )
    })?;
    let auth = value(params, "subscription[keys][auth]")
        .ok_or_else(|| Invalid::new("subscription[keys][auth]", "subscription[keys][auth] is required"))?;
    let auth = parse_auth(auth)
        .ok_or_else(|| Invalid::new("subscription[keys][auth]", "auth must be 16 octets in base64url"))?;
    Ok(Endpoint { endpoint: endpoint.to_string(), p256dh, auth })
}

/// An endpoint is an `https` URL, or `http` on a loopback host (a push service on the same
/// machine: local development and the tests' receiver); never credentials or a fragment.
pub fn check_endpoint(endpoint: &str) -> Result<url::Url, Invalid> {
    let invalid = |why: &str| Invalid::new("subscription[endpoint]", why);
    if endpoint.len() > MAX_ENDPOINT_LEN {
        return Err(invalid("the endpoint is longer than 2048 characters"));
    }
    let url = url::Url::parse(endpoint).map_err(|_| invalid("the endpoint must be an absolute URL"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" if url.host().is_some() => {}
        "http" if loopback => {}
        _ => return Err(invalid("the endpoint must be an https URL (http only on a loopback host)")),
    }
    if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err(invalid("the endpoint may not carry credentials or a fragment"));
    }
    Ok(url)
}

/// The VAPID audience of an endpoint: its origin (`https://push.example.net`).
pub fn audience(endpoint: &str) -> Option<String> {
    let url = url::Url::parse(endpoint).ok()?;
    url.has_host().then(|| url.origin().ascii_serialization())
}

/// How a push service's answer is taken (RFC 8030 section 5; Mastodon's delivery worker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    /// 404 or 410: the subscription is gone; it is removed.
    Gone,
    /// Anything else (429, 5xx, a network error): tried again later, a bounded number of times.
    Retry,
    /// Another 4xx: the push service refuses this message for good; it is dropped.
    Refused,
}

pub fn outcome(status: u16) -> Outcome {
    match status {
        200..=299 => Outcome::Delivered,
        404 | 410 => Outcome::Gone,
        408 | 425 | 429 => Outcome::Retry,
        400..=499 => Outcome::Refused,
        _ => Outcome::Retry,
    }
}

/// How many recent notification ids a subscription remembers as pushed: a duplicate delivery
/// of any of them is not sent again. A queue redelivers within minutes, long before this many
/// newer notifications were pushed.
pub const SENT_MEMORY: usize = 64;

/// What a push says (Mastodon's Web Push payload): who it is for (the access token, so a
/// multi-account app can tell), the notification, and a title and body to show.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Payload<'a> {
    pub access_token: &'a str,
    pub preferred_locale: &'a str,
    pub notification_id: String,
    pub notification_type: &'static str,
    pub icon: String,
    pub title: String,
    pub body: String,
}

/// The longest body text a payload carries (Mastodon truncates to 140 characters).
pub const BODY_CHARS: usize = 140;

/// A notification's title, as Mastodon words it, by `actor` (their display name or handle).
pub fn title(kind: Kind, actor: &str) -> String {
    match kind {
        Kind::Follow => format!("{actor} followed you"),
        Kind::Favourite => format!("{actor} favourited your post"),
        Kind::Reply | Kind::Mention => format!("{actor} mentioned you"),
        Kind::Reblog => format!("{actor} boosted your post"),
        Kind::Quote => format!("{actor} quoted your post"),
        Kind::FollowRequest => format!("{actor} has requested to follow you"),
        Kind::Poll => "A poll has ended".to_string(),
        Kind::Update => format!("{actor} edited a post"),
    }
}

/// `text` cut to [`BODY_CHARS`] characters, with an ellipsis if it was longer.
pub fn truncate_body(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(BODY_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    const P256DH: &str =
        "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";

    #[test]
    fn alerts_and_policy_parse_as_mastodon_takes_them() {
        let given = params(&[
            ("data[alerts][follow]", "true"),
            ("data[alerts][favourite]", "1"),
            ("data[alerts][mention]", "false"),
            ("data[alerts][no_such]", "true"),
            ("data[policy]", "followed"),
        ]);
        let data = parse_data(&given).expect("valid");
        assert!(data.alerts.admits(Kind::Follow) && data.alerts.admits(Kind::Favourite));
        assert!(!data.alerts.admits(Kind::Mention) && !data.alerts.admits(Kind::Reply));
        assert_eq!(data.policy, Policy::Followed);
        assert_eq!(parse_data(&[]), Ok(PushData::default()), "nothing given: every alert off, policy all");
        assert_eq!(parse_data(&params(&[("policy", "none")])).map(|d| d.policy), Ok(Policy::None));
        assert_eq!(
            parse_data(&params(&[("data[policy]", "friends")])).map_err(|e| e.field),
            Err("data[policy]")
        );
        let bad = parse_data(&params(&[("data[alerts][follow]", "maybe")]));
        assert_eq!(bad.map_err(|e| e.field), Err("data[alerts]"));
        assert_eq!(Alerts::from_bits(data.alerts.bits()), data.alerts);
        let json = data.alerts.to_json();
        assert_eq!((json["follow"].clone(), json["mention"].clone()), (true.into(), false.into()));
        assert_eq!(json.as_object().map(|o| o.len()), Some(ALERTS.len()));
        for kind in Kind::all() {
            assert!(ALERTS.contains(&kind.mastodon()), "{kind:?} has an alert");
            assert_eq!(
                data.alerts.bits() & Alerts::kind_bit(kind) != 0,
                data.alerts.admits(kind),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn policies_admit_by_the_follow_edges() {
        let cases = [(false, false), (true, false), (false, true), (true, true)];
        for (follows, followed_by) in cases {
            assert!(Policy::All.admits(follows, followed_by));
            assert!(!Policy::None.admits(follows, followed_by));
            assert_eq!(Policy::Followed.admits(follows, followed_by), follows);
            assert_eq!(Policy::Follower.admits(follows, followed_by), followed_by);
        }
        for (name, policy) in Policy::NAMES {
            assert_eq!((Policy::parse(name), policy.as_str()), (Some(policy), name));
        }
    }

    #[test]
    fn endpoints_are_https_or_loopback_http_and_keys_are_checked() {
        let with = |endpoint: &str, p256dh: &str, auth: &str| {
            parse_endpoint(&params(&[
                ("subscription[endpoint]", endpoint),
                ("subscription[keys][p256dh]", p256dh),
                ("subscription[keys][auth]", auth),
            ]))
            .map_err(|e| e.field)
        };
        let auth = "BTBZMqHH6r4Tts7J_aSIgg";
        assert!(with("https://push.example.net/send/abc", P256DH, auth).is_ok());
        assert!(with("http://127.0.0.1:8123/push", P256DH, auth).is_ok());
        assert!(with("http://localhost/push", P256DH, auth).is_ok());
        assert!(with("http://[::1]:9/x", P256DH, auth).is_ok());
        for endpoint in
            ["http://push.example.net/x", "ftp://a/b", "https://", "push.example.net", "https://u:p@h/x"]
        {
            assert_eq!(with(endpoint, P256DH, auth), Err("subscription[endpoint]"), "{endpoint}");
        }
        let long = format!("https://h/{}", "a".repeat(MAX_ENDPOINT_LEN));
        assert_eq!(with(&long, P256DH, auth), Err("subscription[endpoint]"));
        assert_eq!(with("https://h/x", "BAAA", auth), Err("subscription[keys][p256dh]"));
        assert_eq!(with("https://h/x", P256DH, "AAAA"), Err("subscription[keys][auth]"));
        assert_eq!(parse_endpoint(&[]).map_err(|e| e.field), Err("subscription[endpoint]"));
        assert_eq!(
            audience("https://push.example.net:8443/a/b?c").as_deref(),
            Some("https://push.example.net:8443")
        );
    }

    #[test]
    fn push_services_answers_are_taken_as_mastodon_takes_them() {
        let table = [
            (201, Outcome::Delivered),
            (404, Outcome::Gone),
            (410, Outcome::Gone),
            (429, Outcome::Retry),
            (503, Outcome::Retry),
            (400, Outcome::Refused),
            (413, Outcome::Refused),
        ];
        for (status, expected) in table {
            assert_eq!(outcome(status), expected, "{status}");
        }
        assert_eq!(title(Kind::Follow, "Ann"), "Ann followed you");
        assert_eq!(truncate_body(&"é".repeat(200)).chars().count(), BODY_CHARS + 1);
        assert_eq!(truncate_body("  short "), "short");
    }
}
