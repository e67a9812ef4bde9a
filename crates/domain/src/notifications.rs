//! Notifications: someone followed you, liked your post, or commented on it. Pure rules: the
//! kinds (every name of each in one table, [`KINDS`]) and their filters and groups, and the id
//! layout that `store/notifications.rs` writes as SQL.
//!
//! A notification is a row on its recipient's home database, written in the same batch as the
//! change that makes or ends it, and only on that change's transition (a like that really
//! turns on, a new comment, a follow the author's side did not hold yet): a repeated or
//! redelivered change finds nothing to do, and a dismissed notification stays dismissed.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ids::{parse_id, UserId};
use super::snowflake::{snowflake_time, ID_RANDOM_BITS, SNOWFLAKE_RANDOM_BITS};

/// A notification just made for a recipient with a live socket open or a Web Push
/// subscription: what to tell them, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    pub recipient: UserId,
    pub id: i64,
    /// Their live socket is open: tell it (`services/streaming.rs::tell`).
    #[serde(default)]
    pub live: bool,
    /// They have a push subscription: queue the push (`services/push.rs`).
    #[serde(default)]
    pub push: bool,
}

/// What happened. Its names and grouping are its row of [`KINDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Follow,
    Favourite,
    /// A comment on the recipient's post (Mastodon's `mention`).
    Reply,
    /// A boost of the recipient's post.
    Reblog,
    /// A post that mentions the recipient (`@handle`).
    Mention,
    /// A post that quotes the recipient's (Mastodon 4.5's `quote`).
    Quote,
    /// Someone asked to follow the recipient's locked account.
    FollowRequest,
    /// A poll the recipient made or voted in has ended.
    Poll,
    /// A post the recipient boosted was edited.
    Update,
}

/// How a kind's notifications group in Mastodon's grouped notifications ([`GroupKey`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// Each alone (`ungrouped-{id}`).
    Never,
    /// All of the kind in one 12-hour window (`{stored}-{window}`); its rows name no post.
    Window,
    /// One post's in one 12-hour window (`{stored}-{post}-{window}`).
    PostAndWindow,
}

/// One kind's names and grouping.
#[derive(Debug, Clone, Copy)]
pub struct KindRow {
    pub kind: Kind,
    /// The value stored in `notifications.kind` (migration 0015's CHECK lists these), `/v1`'s
    /// name and `?kinds=` filter name.
    pub stored: &'static str,
    /// Mastodon's `type`, and its name in `types[]`, `exclude_types[]` and `grouped_types[]`.
    pub mastodon: &'static str,
    pub grouping: Grouping,
}

/// Every kind, in [`Kind`]'s order: the one place a kind is named. Filters, group keys, the
/// entities' `type` and the store's SQL derive from it; what makes a notification (the
/// statement in the batch of its change) is `store/notifications.rs`.
pub const KINDS: [KindRow; 9] = [
    KindRow { kind: Kind::Follow, stored: "follow", mastodon: "follow", grouping: Grouping::Window },
    KindRow {
        kind: Kind::Favourite,
        stored: "favourite",
        mastodon: "favourite",
        grouping: Grouping::PostAndWindow,
    },
    KindRow { kind: Kind::Reply, stored: "reply", mastodon: "mention", grouping: Grouping::Never },
    KindRow { kind: Kind::Reblog, stored: "reblog", mastodon: "reblog", grouping: Grouping::PostAndWindow },
    // Mastodon has one `mention` for both: a reply to your post mentions you there.
    KindRow { kind: Kind::Mention, stored: "mention", mastodon: "mention", grouping: Grouping::Never },
    KindRow { kind: Kind::Quote, stored: "quote", mastodon: "quote", grouping: Grouping::Never },
    KindRow {
        kind: Kind::FollowRequest,
        stored: "follow_request",
        mastodon: "follow_request",
        grouping: Grouping::Never,
    },
    KindRow { kind: Kind::Poll, stored: "poll", mastodon: "poll", grouping: Grouping::Never },
    KindRow { kind: Kind::Update, stored: "update", mastodon: "update", grouping: Grouping::Never },
];

impl Kind {
    /// Every kind, in order.
    pub fn all() -> impl Iterator<Item = Kind> {
        KINDS.iter().map(|row| row.kind)
    }

    fn row(self) -> &'static KindRow {
        &KINDS[self as usize]
    }

    /// The name stored and used by `/v1`.
    pub fn as_str(self) -> &'static str {
        self.row().stored
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::all().find(|k| k.as_str() == name)
    }

    /// Mastodon's name: a reply is a `mention` there.
    pub fn mastodon(self) -> &'static str {
        self.row().mastodon
    }

    /// Whether Mastodon's `name` (in `types[]`, `exclude_types[]`, `grouped_types[]`) names
    /// this kind (`mention` names two: a mention and a reply).
    fn is_mastodon(self, name: &str) -> bool {
        self.mastodon() == name
    }

    pub fn grouping(self) -> Grouping {
        self.row().grouping
    }

    fn groups(self) -> bool {
        self.grouping() != Grouping::Never
    }

    /// `/v1`'s kind names, for an error message (`follow, favourite, reply`).
    pub fn v1_names() -> String {
        Kind::all().map(Kind::as_str).collect::<Vec<_>>().join(", ")
    }
}

/// Which kinds a read asks for (never empty of meaning: an empty set answers nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindFilter(Vec<Kind>);

impl Default for KindFilter {
    fn default() -> Self {
        Self(Kind::all().collect())
    }
}

impl KindFilter {
    /// `/v1`'s `?kinds=follow,reply`; `None` for an unknown kind (the caller's 400).
    pub fn parse_v1(list: &str) -> Option<KindFilter> {
        let mut kinds = Vec::new();
        for name in list.split(',').filter(|n| !n.is_empty()) {
            kinds.push(Kind::parse(name)?);
        }
        if kinds.is_empty() {
            return None;
        }
        kinds.sort_unstable();
        kinds.dedup();
        Some(KindFilter(kinds))
    }

    /// Mastodon's `types[]` and `exclude_types[]`, intersected as Mastodon does: types it has and
    /// we never make (`reblog`, `poll`, ...) match nothing; unknown excluded types are ignored.
    pub fn from_mastodon(types: &[String], exclude: &[String]) -> KindFilter {
        let wanted = |k: &Kind| types.is_empty() || types.iter().any(|t| k.is_mastodon(t));
        let excluded = |k: &Kind| exclude.iter().any(|t| k.is_mastodon(t));
        KindFilter(Kind::all().filter(|k| wanted(k) && !excluded(k)).collect())
    }

    pub fn kinds(&self) -> &[Kind] {
        &self.0
    }

    /// The stable name of the filter, for binding cursors to it (`follow,reply`).
    pub fn key(&self) -> String {
        self.0.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")
    }

    /// The JSON array the SQL reads with `json_each`.
    pub fn json(&self) -> String {
        serde_json::to_string(&self.0.iter().map(|k| k.as_str()).collect::<Vec<_>>()).unwrap_or_default()
    }
}

/// Grouped notifications (Mastodon 4.3): a post's favourites, or the follows, that fall in one
/// fixed 12-hour window of ids are one group. Mastodon's groups span at most 12 hours counted
/// from their first notification, which needs state; fixed windows need none, always give a
/// notification the same group, and let the store find a window's groups by its index.
pub const GROUP_WINDOW_MS: i64 = 12 * 60 * 60 * 1000;

/// How many of a group's newest rows are read to pick its samples (and to take suspended
/// actors out of its count: beyond these the count is approximate).
pub const SAMPLE_SCAN: usize = 40;

/// Where a group's count stops: counting reads the group's rows (one index range), and a
/// viral post's group must not be read whole on every page.
pub const GROUP_COUNT_CAP: usize = 1_000;

/// How many accounts a group shows (Mastodon's `sample_account_ids`).
pub const SAMPLE_ACCOUNTS: usize = 8;

/// The 12-hour window a notification id falls in.
pub fn window(id: i64) -> i64 {
    snowflake_time(id) / GROUP_WINDOW_MS
}

/// The first and last notification id of a window.
pub fn window_ids(window: i64) -> (i64, i64) {
    let first = (window * GROUP_WINDOW_MS) << SNOWFLAKE_RANDOM_BITS;
    (first, (((window + 1) * GROUP_WINDOW_MS) << SNOWFLAKE_RANDOM_BITS) - 1)
}

/// A group of notifications, as its Mastodon `group_key` (spelled by the kind's [`Grouping`]):
/// `favourite-{post}-{window}`, `follow-{window}`, or `ungrouped-{id}` for a notification alone
/// (a mention, or a kind the client asked not to group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupKey {
    /// `post_id` is 0 for a kind grouped by window alone (follows).
    Grouped {
        kind: Kind,
        post_id: i64,
        window: i64,
    },
    Ungrouped(i64),
}

impl GroupKey {
    /// The group of a notification when `grouped` kinds group.
    pub fn of(id: i64, kind: Kind, post_id: i64, grouped: &[Kind]) -> GroupKey {
        let window = window(id);
        match kind.grouping() {
            _ if !grouped.contains(&kind) => GroupKey::Ungrouped(id),
            Grouping::Never => GroupKey::Ungrouped(id),
            Grouping::Window => GroupKey::Grouped { kind, post_id: 0, window },
            Grouping::PostAndWindow => GroupKey::Grouped { kind, post_id, window },
        }
    }

    /// The group of a notification as every API names it when the client chose nothing (v1,
    /// streamed, and v2 without `grouped_types[]`): one rule, so a client merging a streamed
    /// notification into its group by the key finds the group v2 answered.
    pub fn default_of(id: i64, kind: Kind, post_id: i64) -> GroupKey {
        GroupKey::of(id, kind, post_id, &grouped_kinds(&[]))
    }

    /// The path's `{group_key}`: only the canonical spelling of a key (what [`fmt::Display`]
    /// writes) parses.
    pub fn parse(text: &str) -> Option<GroupKey> {
        let number = |t: &str| parse_id(t).filter(|_| !t.starts_with('0'));
        let key = if let Some(id) = text.strip_prefix("ungrouped-") {
            GroupKey::Ungrouped(number(id)?)
        } else {
            let (kind, rest) =
                Kind::all().find_map(|k| Some((k, text.strip_prefix(k.as_str())?.strip_prefix('-')?)))?;
            match kind.grouping() {
                Grouping::Never => return None,
                Grouping::Window => GroupKey::Grouped { kind, post_id: 0, window: number(rest)? },
                Grouping::PostAndWindow => {
                    let (post, window) = rest.split_once('-')?;
                    GroupKey::Grouped { kind, post_id: number(post)?, window: number(window)? }
                }
            }
        };
        (key.to_string() == text).then_some(key)
    }
}

impl fmt::Display for GroupKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GroupKey::Ungrouped(id) => write!(f, "ungrouped-{id}"),
            GroupKey::Grouped { kind, post_id, window } => match kind.grouping() {
                Grouping::PostAndWindow => write!(f, "{}-{post_id}-{window}", kind.as_str()),
                Grouping::Window | Grouping::Never => write!(f, "{}-{window}", kind.as_str()),
            },
        }
    }
}

/// Mastodon's `grouped_types[]`: the kinds that may group. Absent: every kind that groups;
/// unknown names are ignored.
pub fn grouped_kinds(names: &[String]) -> Vec<Kind> {
    let named = |k: &Kind| names.is_empty() || names.iter().any(|n| k.is_mastodon(n));
    Kind::all().filter(|k| k.groups() && named(k)).collect()
}

/// Which groups a grouped read walks: of the filter's kinds, those in `grouped` group; ids
/// strictly between `above` and `below`, newest first (or, `oldest_first`, oldest first).
#[derive(Debug, Clone)]
pub struct GroupQuery {
    pub kinds: KindFilter,
    pub grouped: Vec<Kind>,
    pub below: i64,
    pub above: i64,
    pub oldest_first: bool,
}

impl GroupQuery {
    pub fn grouped_kinds(&self) -> KindFilter {
        KindFilter(self.kinds.0.iter().copied().filter(|k| self.groups(*k)).collect())
    }

    pub fn ungrouped_kinds(&self) -> KindFilter {
        KindFilter(self.kinds.0.iter().copied().filter(|k| !self.groups(*k)).collect())
    }

    fn groups(&self, kind: Kind) -> bool {
        self.grouped.contains(&kind) && kind.groups()
    }

    pub fn key_of(&self, id: i64, kind: Kind, post_id: i64) -> GroupKey {
        GroupKey::of(id, kind, post_id, &self.grouped)
    }
}

/// The next notification id for a recipient on `shard_bits` (the recipient id's shard bits, in
/// place), made at `now_ms`, after the recipient's highest id `max` so far: the snowflake of
/// `now_ms` with sequence 0, or the one after `max` when that is not lower (several in one
/// millisecond; after 8, the next millisecond). Increasing per recipient, even across a clock
/// step back or a shard move (the target's highest id continues). `store/notifications.rs`
/// writes exactly this in SQL; the unit tests pin it.
pub fn next_id(now_ms: i64, max: Option<i64>, shard_bits: i64) -> i64 {
    let base = (now_ms << SNOWFLAKE_RANDOM_BITS) | shard_bits;
    match max {
        None => base,
        Some(m) => base.max(successor(m, shard_bits)),
    }
}

const SEQUENCE_MASK: i64 = (1 << ID_RANDOM_BITS) - 1;

fn successor(id: i64, shard_bits: i64) -> i64 {
    if id & SEQUENCE_MASK < SEQUENCE_MASK {
        id + 1
    } else {
        (((id >> SNOWFLAKE_RANDOM_BITS) + 1) << SNOWFLAKE_RANDOM_BITS) | shard_bits
    }
}

/// The shard bits of a user id, in place (what a notification id shares with its recipient).
pub fn shard_bits(user_id: i64) -> i64 {
    user_id & (((1 << SNOWFLAKE_RANDOM_BITS) - 1) & !SEQUENCE_MASK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_a_reply_is_a_mention_to_mastodon() {
        for (i, row) in KINDS.iter().enumerate() {
            assert_eq!(row.kind as usize, i, "KINDS is in Kind's order");
        }
        for kind in Kind::all() {
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
            assert!(kind.is_mastodon(kind.mastodon()));
        }
        assert_eq!(Kind::Reply.mastodon(), "mention");
        assert_eq!(Kind::parse("mention"), Some(Kind::Mention));
        assert_eq!(
            Kind::v1_names(),
            "follow, favourite, reply, reblog, mention, quote, follow_request, poll, update"
        );
        let mentions: Vec<Kind> = Kind::all().filter(|k| k.is_mastodon("mention")).collect();
        assert_eq!(mentions, [Kind::Reply, Kind::Mention], "Mastodon's mention is both");
    }

    /// The stored names are the CHECK of the newest migration that creates `notifications`: a
    /// new kind needs a migration that rebuilds the table with it (D1 cannot alter a CHECK).
    #[test]
    fn the_stored_names_are_the_tables_check() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        let mut files: Vec<_> =
            std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
        files.sort();
        let (mut table, mut check) = (String::new(), None);
        for text in files.iter().map(|f| std::fs::read_to_string(f).unwrap_or_default()) {
            for line in text.lines().map(str::trim) {
                if let Some(name) = line.strip_prefix("CREATE TABLE ") {
                    table = name.trim_end_matches('(').trim().to_string();
                }
                let list = line.split_once("CHECK (kind IN (").and_then(|(_, rest)| rest.split_once(')'));
                if let (Some((list, _)), "notifications") = (list, table.as_str()) {
                    check = Some(list.split(',').map(|n| n.trim().trim_matches('\'').to_string()).collect());
                }
            }
        }
        let stored: Vec<String> = Kind::all().map(|k| k.as_str().to_string()).collect();
        assert_eq!(check, Some(stored));
    }

    /// The OpenAPI document's kind enums (`/v1`'s `kind`, Mastodon's `type`) list every kind.
    #[test]
    fn the_openapi_enums_list_every_kind() {
        fn enums(value: &serde_json::Value, found: &mut Vec<Vec<String>>) {
            match value {
                serde_json::Value::Object(map) => {
                    if let Some(serde_json::Value::Array(names)) = map.get("enum") {
                        found.push(names.iter().filter_map(|n| n.as_str().map(str::to_string)).collect());
                    }
                    map.values().for_each(|v| enums(v, found));
                }
                serde_json::Value::Array(items) => items.iter().for_each(|v| enums(v, found)),
                _ => {}
            }
        }
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/v1/openapi.json");
        let doc = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok());
        let mut found = Vec::new();
        enums(&doc.unwrap_or_default(), &mut found);
        let stored: Vec<String> = Kind::all().map(|k| k.as_str().to_string()).collect();
        let mut mastodon: Vec<String> = Kind::all().map(|k| k.mastodon().to_string()).collect();
        let mut once = std::collections::HashSet::new();
        mastodon.retain(|name| once.insert(name.clone()));
        let of_kinds: Vec<&Vec<String>> =
            found.iter().filter(|e| e.contains(&"favourite".to_string())).collect();
        assert_eq!(of_kinds.len(), 3, "/v1 kind, Mastodon type, group type: {found:?}");
        assert!(of_kinds.iter().all(|e| **e == stored || **e == mastodon), "{of_kinds:?}");
    }

    #[test]
    fn v1_filters_parse_sort_and_refuse_unknown_kinds() {
        let f = KindFilter::parse_v1("reply,follow,reply").expect("valid");
        assert_eq!(f.kinds(), &[Kind::Follow, Kind::Reply]);
        assert_eq!(f.key(), "follow,reply");
        assert_eq!(f.json(), r#"["follow","reply"]"#);
        assert_eq!(KindFilter::parse_v1("follow,boost"), None);
        assert_eq!(KindFilter::parse_v1(""), None);
        assert_eq!(KindFilter::default().kinds().len(), KINDS.len());
    }

    #[test]
    fn mastodon_types_and_exclusions_intersect() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(KindFilter::from_mastodon(&[], &[]).kinds(), Kind::all().collect::<Vec<_>>());
        assert_eq!(KindFilter::from_mastodon(&s(&["mention"]), &[]).kinds(), &[Kind::Reply, Kind::Mention]);
        assert_eq!(
            KindFilter::from_mastodon(&[], &s(&["follow", "reblog"])).kinds(),
            &[
                Kind::Favourite,
                Kind::Reply,
                Kind::Mention,
                Kind::Quote,
                Kind::FollowRequest,
                Kind::Poll,
                Kind::Update
            ]
        );
        assert_eq!(KindFilter::from_mastodon(&s(&["reblog"]), &[]).kinds(), &[Kind::Reblog]);
        assert!(KindFilter::from_mastodon(&s(&["admin.sign_up"]), &[]).kinds().is_empty());
        assert!(KindFilter::from_mastodon(&s(&["follow"]), &s(&["follow"])).kinds().is_empty());
    }

    #[test]
    fn ids_carry_the_time_and_shard_and_increase_per_recipient() {
        let user = (1_700_000_000_000i64 << 11) | (37 << 3) | 5;
        let bits = shard_bits(user);
        assert_eq!(bits, 37 << 3);
        let first = next_id(1_000, None, bits);
        assert_eq!(snowflake_time(first), 1_000);
        assert_eq!(first & 0x7ff, 37 << 3);
        // Eight in one millisecond, then the next millisecond.
        let mut last = first;
        for _ in 0..7 {
            let next = next_id(1_000, Some(last), bits);
            assert_eq!((next - last, snowflake_time(next)), (1, 1_000));
            last = next;
        }
        let ninth = next_id(1_000, Some(last), bits);
        assert_eq!((snowflake_time(ninth), ninth & 0x7ff), (1_001, 37 << 3));
        // A later millisecond starts at sequence 0; a clock step back still increases.
        assert_eq!(next_id(5_000, Some(ninth), bits), (5_000 << 11) | bits);
        assert!(next_id(10, Some(ninth), bits) > ninth);
    }

    #[test]
    fn group_keys_follow_the_kind_and_the_grouped_types() {
        let id = (1_700_000_000_000i64 << 11) | 8;
        let w = window(id);
        let all = grouped_kinds(&[]);
        assert_eq!(GroupKey::of(id, Kind::Favourite, 42, &all).to_string(), format!("favourite-42-{w}"));
        assert_eq!(GroupKey::of(id, Kind::Follow, 0, &all).to_string(), format!("follow-{w}"));
        assert_eq!(GroupKey::of(id, Kind::Reply, 42, &all).to_string(), format!("ungrouped-{id}"));
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let follows = grouped_kinds(&s(&["follow", "mention", "poll"]));
        assert_eq!(follows, [Kind::Follow], "a mention never groups; unknown names are ignored");
        assert_eq!(GroupKey::of(id, Kind::Favourite, 42, &follows), GroupKey::Ungrouped(id));
        assert!(grouped_kinds(&s(&["poll"])).is_empty());
        assert_eq!(grouped_kinds(&s(&["reblog"])), [Kind::Reblog], "a post's boosts group like its likes");
        for kind in Kind::all() {
            assert_eq!(GroupKey::default_of(id, kind, 42), GroupKey::of(id, kind, 42, &all), "{kind:?}");
        }
    }

    #[test]
    fn group_keys_round_trip_and_only_canonical_ones_parse() {
        let keys = [
            GroupKey::Ungrouped(7),
            GroupKey::Grouped { kind: Kind::Follow, post_id: 0, window: 39_351 },
            GroupKey::Grouped { kind: Kind::Favourite, post_id: 123, window: 39_351 },
        ];
        for key in keys {
            assert_eq!(GroupKey::parse(&key.to_string()), Some(key), "{key}");
        }
        for bad in [
            "",
            "ungrouped-",
            "ungrouped-07",
            "ungrouped-x",
            "follow-1-2",
            "favourite-1",
            "reply-1",
            "mention-1-1",
        ] {
            assert_eq!(GroupKey::parse(bad), None, "{bad}");
        }
        assert_eq!(GroupKey::parse("favourite-0-3"), None, "ids are positive");
    }

    #[test]
    fn windows_are_fixed_12_hour_spans_of_ids() {
        let at = |ms: i64| (ms << 11) | 0x7ff;
        assert_eq!(window(at(GROUP_WINDOW_MS - 1)), 0);
        assert_eq!(window(GROUP_WINDOW_MS << 11), 1);
        let (first, last) = window_ids(3);
        assert_eq!((window(first), window(last), window(first - 1), window(last + 1)), (3, 3, 2, 4));
        assert_eq!(first, (3 * GROUP_WINDOW_MS) << 11);
        // The SQL spelling of the window (migration 0017) is this one.
        assert_eq!(window(at(5 * GROUP_WINDOW_MS + 17)), (at(5 * GROUP_WINDOW_MS + 17) >> 11) / 43_200_000);
    }

    #[test]
    fn a_group_query_splits_its_kinds_into_grouped_and_not() {
        let q = GroupQuery {
            kinds: KindFilter::from_mastodon(&[], &["follow".to_string()]),
            grouped: grouped_kinds(&[]),
            below: 10,
            above: 0,
            oldest_first: false,
        };
        assert_eq!(q.grouped_kinds().kinds(), &[Kind::Favourite, Kind::Reblog]);
        assert_eq!(
            q.ungrouped_kinds().kinds(),
            &[Kind::Reply, Kind::Mention, Kind::Quote, Kind::FollowRequest, Kind::Poll, Kind::Update]
        );
        assert_eq!(q.key_of(5, Kind::Reply, 1), GroupKey::Ungrouped(5));
    }
}
