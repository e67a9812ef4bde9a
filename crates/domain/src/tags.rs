//! Hashtags and the timelines beyond follows (public, local, tag): which `#tags` a post's text
//! has, found with Mastodon's rule, and where a post is indexed for those timelines.
//!
//! Mastodon 4.x (`Tag::HASHTAG_RE`), with `[[:word:]]` as in `mentions::is_word`:
//!
//! ```text
//! SEPARATORS = "_\u00B7\u30FB\u200c"
//! NAME       = [[:word:]_][[:word:]SEPARATORS]*[[:alpha:]SEPARATORS][[:word:]SEPARATORS]*[[:word:]_]
//!            | [[:word:]_]*[[:alpha:]][[:word:]_]*
//! HASHTAG_RE = (?<![=/)\p{Alnum}])#(NAME)
//! ```
//!
//! Written out by hand: after a `#` not preceded by `=`, `/`, `)` or a letter or digit, the
//! longest run of word characters and separators, cut back to its last word character; it is a
//! tag if it has a letter (`#2024` is not one). A tag is matched case-insensitively: its
//! **key** is the name lower-cased (`#CamelCase` and `#camelcase` are one tag), and the name
//! shown is as the request or the first use wrote it.
//!
//! The index: a public post's entry goes under each of its tags' keys and under one **public
//! stripe** (its author's, a hash of the author id modulo [`PUBLIC_STRIPES`]; posts from before
//! [`AUTHOR_STRIPES_SINCE_MS`] stay under their id modulo [`LEGACY_PUBLIC_STRIPES`], among the
//! first stripes). Every key lives on the database of its hash's logical shard
//! (`shard::shard_of_handle` of the key), so a tag page is one range read on one database and a
//! public page [`PUBLIC_STRIPES`] side by side, however many databases there are; the stripes
//! spread the public timeline's writes (every public post) over that many databases. A stripe
//! per author, not per post, so one author's posts go through one stream relay
//! (`objects/relay.rs`) and reach a public stream in the order they were posted.

use std::collections::{BTreeMap, BTreeSet};

use super::ids::{PostId, UserId};
use super::mentions::is_word;
use super::shard::shard_of_handle;
use super::snowflake::{snowflake_time, LogicalShard};

/// The longest tag indexed, in UTF-8 bytes (Mastodon has no limit in the pattern; a longer tag
/// is no one's real tag and would only bloat keys).
pub const MAX_TAG_BYTES: usize = 128;

/// The most tags of one post that are indexed (Mastodon indexes all; a post of 60 tags is spam,
/// and each costs a write).
pub const MAX_TAGS_PER_POST: usize = 10;

/// How many stripes the public timeline's index is spread over (a page reads all of them):
/// each stripe's database takes a sixteenth of the public posts' writes.
pub const PUBLIC_STRIPES: u64 = 16;

/// The stripes public posts went to before [`AUTHOR_STRIPES_SINCE_MS`] (by post id): their rows
/// stay there, under keys `public:0` .. `public:3`, which are among today's stripes and so read.
pub const LEGACY_PUBLIC_STRIPES: u64 = 4;

/// Posts created from this time (ms, the time in their id) are under their author's stripe;
/// older ones under their id's legacy stripe (2026-12-05T00:00:00Z, when the 16 stripes came).
pub const AUTHOR_STRIPES_SINCE_MS: i64 = 1_796_428_800_000;

/// Mastodon's separators inside a tag besides `_`: middle dot, katakana middle dot, ZWNJ.
fn is_separator(c: char) -> bool {
    matches!(c, '_' | '\u{00B7}' | '\u{30FB}' | '\u{200C}')
}

/// The lookbehind `(?<![=/)\p{Alnum}])` at the `#` at byte `at`.
fn may_start(text: &str, at: usize) -> bool {
    text[..at].chars().next_back().is_none_or(|c| !matches!(c, '=' | '/' | ')') && !c.is_alphanumeric())
}

/// The tag name right after a `#` (`rest` starts after it), if there is one.
fn name_at(rest: &str) -> Option<&str> {
    let mut end = 0;
    for (i, c) in rest.char_indices() {
        if is_word(c) {
            end = i + c.len_utf8();
        } else if !is_separator(c) {
            break;
        }
    }
    let name = &rest[..end];
    let has_letter = name.chars().any(char::is_alphabetic);
    (has_letter && name.len() <= MAX_TAG_BYTES).then_some(name)
}

/// The distinct tags of `text` as written (first use's case), in first-use order.
pub fn hashtags(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    let mut pos = 0;
    while let Some(offset) = text[pos..].find('#') {
        let at = pos + offset;
        pos = at + 1;
        if !may_start(text, at) {
            continue;
        }
        if let Some(name) = name_at(&text[at + 1..]) {
            pos = at + 1 + name.len();
            if !found.iter().any(|f| key_of(f) == key_of(name)) {
                found.push(name);
            }
        }
    }
    found
}

/// The key a tag is matched and stored by: its name lower-cased.
pub fn key_of(name: &str) -> String {
    name.to_lowercase()
}

/// A tag name from a request (a path, a `tag` stream parameter): without a leading `#`, a
/// valid tag by itself, as written. `None` if it is no tag.
pub fn parse_name(raw: &str) -> Option<&str> {
    let raw = raw.trim();
    let raw = raw.strip_prefix('#').unwrap_or(raw);
    name_at(raw).filter(|name| name.len() == raw.len())
}

/// A tag named in a request path, kept by value (routes are `Copy`): a valid tag, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagName {
    len: u8,
    bytes: [u8; MAX_TAG_BYTES],
}

impl TagName {
    /// The tag of a path segment (percent-encoded, with or without its `#`), if it is one.
    pub fn from_path(segment: &str) -> Option<TagName> {
        let decoded = percent_decode(segment)?;
        let name = parse_name(&decoded)?;
        let mut bytes = [0u8; MAX_TAG_BYTES];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        Some(TagName { len: u8::try_from(name.len()).ok()?, bytes })
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

/// A featured tag's id: a 53-bit hash of its account and tag key (stable, so featuring again
/// answers the same id, and no id column is needed).
pub fn featured_id(user: i64, name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in user.to_le_bytes().into_iter().chain(key_of(name).bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    ((hash ^ (hash >> 31)) & ((1 << 53) - 1)).max(1) as i64
}

/// `%XX` escapes decoded; `None` for a cut escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

/// One timeline index key: what the index row is stored under and which database holds it.
/// Crosses object hops as its string (a relay is told its key).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct IndexKey(String);

impl IndexKey {
    /// A tag's timeline (`name` matched case-insensitively).
    pub fn tag(name: &str) -> Self {
        Self(format!("tag:{}", key_of(name)))
    }

    /// One stripe of the public timeline.
    pub fn public_stripe(stripe: u64) -> Self {
        Self(format!("public:{}", stripe % PUBLIC_STRIPES))
    }

    /// The stripe a post's public entry goes to: its author's (by a hash of the id, as the
    /// author ids' low bits are few and random), or for a post older than the author stripes,
    /// the legacy stripe of its id.
    pub fn public_of(post: PostId, author: UserId) -> Self {
        if snowflake_time(post.get()) < AUTHOR_STRIPES_SINCE_MS {
            return Self::public_stripe(post.get().unsigned_abs() % LEGACY_PUBLIC_STRIPES);
        }
        let mut hash = author.get() as u64;
        hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Self::public_stripe((hash ^ (hash >> 31)) % PUBLIC_STRIPES)
    }

    /// Whether this is one of the public timeline's stripes (else a tag).
    pub fn is_public(&self) -> bool {
        self.0.starts_with("public:")
    }

    /// The tag key of a tag's timeline (`None` for a public stripe).
    pub fn tag_key(&self) -> Option<&str> {
        self.0.strip_prefix("tag:")
    }

    /// Every stripe of the public timeline.
    pub fn public_stripes() -> Vec<Self> {
        (0..PUBLIC_STRIPES).map(Self::public_stripe).collect()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The logical shard (and so the database) the key's rows live on.
    pub fn shard(&self) -> LogicalShard {
        shard_of_handle(&self.0)
    }
}

/// The keys of the tags a public post's text is indexed under (and delivered to the followers
/// of), in first-use order: at most [`MAX_TAGS_PER_POST`].
pub fn tag_keys(text: &str) -> Vec<IndexKey> {
    hashtags(text).into_iter().take(MAX_TAGS_PER_POST).map(IndexKey::tag).collect()
}

/// The tags a reader follows now, each with when they began following it, and (only for a
/// reader who follows any) the authors they mute: what admits a post into their home by a
/// followed tag, read with their edges once per page (`store/feed.rs::edges_statement`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FollowedTags {
    since: BTreeMap<String, i64>,
    muted: BTreeSet<UserId>,
}

impl FollowedTags {
    /// `tags`: (tag key, followed since); `muted`: the authors the reader mutes now.
    pub fn new(
        tags: impl IntoIterator<Item = (String, i64)>,
        muted: impl IntoIterator<Item = UserId>,
    ) -> Self {
        let since: BTreeMap<String, i64> = tags.into_iter().map(|(key, at)| (key_of(&key), at)).collect();
        // Mutes matter only beside a followed tag (a followed author they mute is already left
        // out of their edges).
        let muted = if since.is_empty() { BTreeSet::new() } else { muted.into_iter().collect() };
        Self { since, muted }
    }

    pub fn is_empty(&self) -> bool {
        self.since.is_empty()
    }

    /// Since when a post with `text` (public, listed, of its own: what the tag index holds)
    /// is admitted by one of the followed tags, the earliest follow of those it carries; `None`
    /// when it carries none. Only its first [`MAX_TAGS_PER_POST`] tags count, as only those
    /// are indexed and delivered.
    pub fn admitted_since(&self, text: &str) -> Option<i64> {
        if self.since.is_empty() {
            return None;
        }
        hashtags(text)
            .into_iter()
            .take(MAX_TAGS_PER_POST)
            .filter_map(|name| self.since.get(&key_of(name)))
            .min()
            .copied()
    }

    /// Whether the reader mutes `author` (known only for a reader who follows a tag).
    pub fn mutes(&self, author: UserId) -> bool {
        self.muted.contains(&author)
    }
}

/// What an index entry says about its post, for the timelines' filters without reading it.
pub mod flags {
    /// It has media attachments (`only_media`).
    pub const MEDIA: i64 = 1;
    /// It replies to another account (the public timeline leaves those out, as Mastodon's).
    pub const REPLY: i64 = 2;
}

/// A post as the index sees it.
#[derive(Debug, Clone, Copy)]
pub struct Indexed<'a> {
    pub id: PostId,
    pub author: UserId,
    pub body: &'a str,
    pub has_media: bool,
    /// A reply to another account than its author.
    pub replies_to_other: bool,
}

impl Indexed<'_> {
    /// The keys the post is indexed under when it is public: its stripe and its tags (at most
    /// [`MAX_TAGS_PER_POST`]).
    pub fn keys(&self) -> Vec<IndexKey> {
        std::iter::once(IndexKey::public_of(self.id, self.author)).chain(tag_keys(self.body)).collect()
    }

    pub fn flags(&self) -> i64 {
        let media = if self.has_media { flags::MEDIA } else { 0 };
        let reply = if self.replies_to_other { flags::REPLY } else { 0 };
        media | reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tags_with_mastodons_boundaries() {
        assert_eq!(hashtags("#rust and #Wasm, (#edge) #rust"), ["rust", "Wasm", "edge"]);
        assert_eq!(hashtags("#CamelCase #camelcase"), ["CamelCase"], "one tag whatever its case");
        assert!(hashtags("a#b x=#y /#z").is_empty(), "no tag glued to a word, after = or /");
        assert!(hashtags("#2024 #_ #").is_empty(), "a tag needs a letter");
        assert_eq!(hashtags("#a2024 #tag_name. #日本語!"), ["a2024", "tag_name", "日本語"]);
        assert_eq!(hashtags("#foo·bar #trail_ end"), ["foo·bar", "trail_"]);
        assert_eq!(hashtags("https://x.example/#anchor #ok"), ["ok"]);
        assert_eq!(hashtags("##double"), ["double"]);
    }

    #[test]
    fn names_from_requests_are_single_valid_tags() {
        assert_eq!(parse_name("#Mastodon"), Some("Mastodon"));
        assert_eq!(parse_name("tag_1a"), Some("tag_1a"));
        assert_eq!(parse_name(""), None);
        assert_eq!(parse_name("two words"), None);
        assert_eq!(parse_name("1234"), None);
        assert_eq!(parse_name(&"a".repeat(MAX_TAG_BYTES + 1)), None);
        let name = TagName::from_path("Caf%C3%A9_1").expect("a tag in a path");
        assert_eq!(name.as_str(), "Café_1");
        assert_eq!(TagName::from_path("%E0%A4"), None, "not UTF-8");
        assert_eq!(TagName::from_path("a%2"), None, "a cut escape");
        assert_eq!(TagName::from_path("%23rust").map(|t| t.as_str().to_string()), Some("rust".into()));
    }

    #[test]
    fn a_public_post_is_indexed_under_its_stripe_and_tags() {
        let post = Indexed {
            id: PostId::from_trusted(4 * 77 + 2),
            author: UserId::from_trusted(9),
            body: "#A #b #a",
            has_media: true,
            replies_to_other: false,
        };
        let keys: Vec<String> = post.keys().iter().map(|k| k.as_str().to_string()).collect();
        assert_eq!(keys, ["public:2", "tag:a", "tag:b"]);
        assert_eq!(post.flags(), flags::MEDIA);
        let many = (0..30).map(|i| format!("#t{i}")).collect::<Vec<_>>().join(" ");
        let spam = Indexed {
            id: PostId::from_trusted(1),
            author: UserId::from_trusted(9),
            body: &many,
            has_media: false,
            replies_to_other: true,
        };
        assert_eq!(spam.keys().len(), 1 + MAX_TAGS_PER_POST);
        assert_eq!(spam.flags(), flags::REPLY);
    }

    #[test]
    fn followed_tags_admit_by_any_indexed_tag_case_insensitively_and_know_mutes() {
        let (muted, other) = (UserId::from_trusted(5), UserId::from_trusted(6));
        let followed = FollowedTags::new([("Rust".to_string(), 30), ("wasm".to_string(), 10)], [muted]);
        assert_eq!(followed.admitted_since("learning #RUST today"), Some(30));
        assert_eq!(
            followed.admitted_since("#rust and #Wasm"),
            Some(10),
            "the earliest follow of those carried"
        );
        assert_eq!(followed.admitted_since("#rustacean #go"), None, "a whole tag, not a prefix");
        assert_eq!(followed.admitted_since("no tags"), None);
        let late = (0..MAX_TAGS_PER_POST).map(|i| format!("#t{i}")).collect::<Vec<_>>().join(" ") + " #rust";
        assert_eq!(followed.admitted_since(&late), None, "only the indexed tags deliver, so only they admit");
        assert!(followed.mutes(muted) && !followed.mutes(other));
        let none = FollowedTags::new([], [muted]);
        assert!(none.is_empty() && !none.mutes(muted), "mutes are kept only beside a followed tag");
        assert_eq!(none.admitted_since("#rust"), None);
    }

    #[test]
    fn new_posts_take_their_authors_stripe_and_old_ones_keep_their_legacy_stripe() {
        use crate::snowflake::snowflake;
        let at = |ms: i64, random: u64| PostId::from_trusted(snowflake(ms, random).expect("an id"));
        let (old, new) = (AUTHOR_STRIPES_SINCE_MS - 1, AUTHOR_STRIPES_SINCE_MS);
        for random in 0..40u64 {
            let post = at(old, random);
            let legacy = IndexKey::public_stripe(post.get().unsigned_abs() % LEGACY_PUBLIC_STRIPES);
            assert_eq!(IndexKey::public_of(post, UserId::from_trusted(77)), legacy, "stays where it is");
            assert!(IndexKey::public_stripes().contains(&legacy), "and is read");
        }
        let author = UserId::from_trusted(123_456_789);
        let stripes: BTreeSet<IndexKey> =
            (0..40u64).map(|r| IndexKey::public_of(at(new, r), author)).collect();
        assert_eq!(stripes.len(), 1, "one author's posts share a stripe (one relay, in order)");
        let authors: BTreeSet<IndexKey> = (0..400i64)
            .map(|a| IndexKey::public_of(at(new, 0), UserId::from_trusted(1_000_000 + a * 2048)))
            .collect();
        assert_eq!(authors.len() as u64, PUBLIC_STRIPES, "authors spread over every stripe");
        assert!(authors.iter().all(|k| k.is_public() && k.tag_key().is_none()));
        assert_eq!(IndexKey::tag("Go").tag_key(), Some("go"));
    }

    #[test]
    fn keys_spread_over_shards_and_match_case_insensitively() {
        assert_eq!(IndexKey::tag("Rust"), IndexKey::tag("rust"));
        let shards: std::collections::HashSet<_> =
            IndexKey::public_stripes().iter().map(|k| k.shard()).collect();
        assert!(shards.len() > 1, "the stripes land on more than one shard");
    }
}
