//! `@mentions` in a post's text, found with Mastodon's rule (`Account::MENTION_RE`, Mastodon 4.x):
//!
//! ```text
//! USERNAME_RE = /[a-z0-9_]+([a-z0-9_.-]+[a-z0-9_]+)?/i
//! MENTION_RE  = %r{(?<![=/[:word:]])@((#{USERNAME_RE})(?:@[[:word:].-]+[[:word:]]+)?)}i
//! ```
//!
//! The scanner below is that regex written out by hand (no regex dependency):
//!
//! - **Before the `@`**: the start of the text, or any character that is not `=`, not `/` and not a
//!   word character ([`is_word`]: Unicode letters, marks, numbers, connector punctuation, as Ruby's
//!   `[[:word:]]`). So a space, a line break, `(`, `"`, `,`, `.`, `:`, `-`, an emoji, or another `@`
//!   may come before a mention; `bob@alice.example` (e-mail), `https://x.example/@alice` (URL),
//!   `a=@alice` and `こんにちは@alice` are not mentions.
//! - **The username**: ASCII letters, digits and `_`, with `.` or `-` allowed only inside; the
//!   longest such run is taken (`@alice.` is `alice`, `@alice.bob` is `alice.bob`). Nothing is
//!   required after it: `@aliceさん` mentions `alice`, as in Mastodon.
//! - **The domain** (optional): `@` and then the longest run of word characters, `.` and `-` that
//!   ends in a word character and is at least two characters long. When there is none (`@alice@`,
//!   `@alice@x`), the mention is just `@alice`.
//! - Scanning resumes after each match, as Ruby's `scan`/`gsub` does.
//!
//! Then edgefeed's own rules: a mention with no domain, or with the configured `local_domain`
//! (compared ignoring ASCII case, as Mastodon's `TagManager#local_domain?`), is **local**; its
//! username, ASCII-lowercased, must be a valid [`Handle`] (`^[a-z0-9_]{3,30}$`), otherwise it is not
//! a mention at all (`@al`, a 31-character name, `@alice.bob` are dropped, never shortened). Any
//! other domain is **remote**: a single-domain service cannot deliver to it, so remote mentions
//! are kept apart in [`Mentions::remote`] for the caller to refuse or ignore, never mixed with the
//! local handles.
//!
//! One extension: Mastodon's domain pattern cannot contain `:`, so a `local_domain` with a port
//! (`127.0.0.1:8787`, for development) would never match. When the matched domain is exactly the
//! host part of such a `local_domain` and the text goes on with the same `:port` (not followed by
//! a word character), the port is taken into the mention and it is local.
//!
//! Known differences from Ruby: [`is_word`] has no Unicode tables, so it counts as marks only the
//! common combining blocks (other scripts' vowel signs are mostly `Alphabetic` and so counted
//! anyway); and the username is matched in ASCII only (Onigmo's `/i` also lets the Kelvin sign
//! U+212A and long s U+017F stand for `k` and `s`; here they are word characters, not username
//! characters).

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::ids::UserId;
use super::validate::Handle;

/// A mention resolved to its account, as a post keeps it (`posts.mentions`, a JSON array, so
/// every path that carries the post carries it; migration 0030).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mentioned {
    pub id: UserId,
    pub handle: String,
}

impl Mentioned {
    /// The stored column's accounts (`NULL` or unreadable: none).
    pub fn list_of(json: Option<&str>) -> Vec<Mentioned> {
        json.and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default()
    }

    /// The column for `list` (`None` for none).
    pub fn column(list: &[Mentioned]) -> Option<String> {
        (!list.is_empty()).then(|| serde_json::to_string(list).unwrap_or_default())
    }
}

/// The most distinct mentions (local and remote together, [`Mentions::total`]) a post may carry.
/// The parser finds them all; callers refuse a post over this ([`Mentions::over_limit`]) rather
/// than notify only the first ones.
pub const MAX_MENTIONS: usize = 20;

/// An account on another server: `username@domain`, both ASCII-lowercased. The username follows
/// Mastodon's `USERNAME_RE` (it may hold `.` and `-`, and has no length limit here).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RemoteAccount {
    pub username: String,
    pub domain: String,
}

/// Whom one mention names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local(Handle),
    Remote(RemoteAccount),
}

/// One mention as written in the text: `range` is the byte range of the whole `@name[@domain]`
/// (the `@` included), for rendering it as a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub target: Target,
    pub range: Range<usize>,
}

/// The distinct accounts a text mentions, each in the order of its first mention.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mentions {
    pub local: Vec<Handle>,
    /// Mentions of other domains: not deliverable by a single-domain service.
    pub remote: Vec<RemoteAccount>,
}

impl Mentions {
    /// Distinct accounts mentioned, local and remote.
    pub fn total(&self) -> usize {
        self.local.len() + self.remote.len()
    }

    /// More than [`MAX_MENTIONS`]: the post should be refused.
    pub fn over_limit(&self) -> bool {
        self.total() > MAX_MENTIONS
    }
}

/// The local handles `text` mentions, deduplicated, in first-mention order. Remote mentions are
/// dropped; use [`mentions`] to see them.
pub fn mentioned_handles(text: &str, local_domain: &str) -> Vec<Handle> {
    mentions(text, local_domain).local
}

/// The distinct local handles and remote accounts `text` mentions, each in first-mention order.
pub fn mentions(text: &str, local_domain: &str) -> Mentions {
    let mut out = Mentions::default();
    for mention in mention_spans(text, local_domain) {
        match mention.target {
            Target::Local(handle) if !out.local.contains(&handle) => out.local.push(handle),
            Target::Remote(account) if !out.remote.contains(&account) => out.remote.push(account),
            _ => {}
        }
    }
    out
}

/// Every mention in `text`, in order, repeats included, with its byte range.
pub fn mention_spans(text: &str, local_domain: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(offset) = text[pos..].find('@') {
        let at = pos + offset;
        let Some(raw) = may_start(text, at).then(|| match_at(text, at, local_domain)).flatten() else {
            pos = at + 1;
            continue;
        };
        if let Some(target) = resolve(&raw, local_domain) {
            out.push(Mention { target, range: at..raw.end });
        }
        pos = raw.end;
    }
    out
}

/// Ruby's `[[:word:]]`: letters, marks, numbers, connector punctuation (see the module doc for
/// how marks are approximated).
pub fn is_word(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c,
            '_' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{FE33}' | '\u{FE34}' // connectors
            | '\u{FE4D}'..='\u{FE4F}' | '\u{FF3F}'
            | '\u{0300}'..='\u{036F}' | '\u{0483}'..='\u{0489}' // combining marks
            | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}' | '\u{20D0}'..='\u{20FF}'
            | '\u{3099}' | '\u{309A}' | '\u{FE00}'..='\u{FE0F}' | '\u{FE20}'..='\u{FE2F}'
            | '\u{E0100}'..='\u{E01EF}')
}

/// The text as the regex matched it, before edgefeed's rules.
struct RawMatch<'a> {
    username: &'a str,
    /// `None`: no domain, or `local_domain` with its port (the extension in the module doc).
    domain: Option<&'a str>,
    /// Byte offset just past the match.
    end: usize,
}

/// The lookbehind `(?<![=/[:word:]])` at the `@` at byte `at`.
fn may_start(text: &str, at: usize) -> bool {
    text[..at].chars().next_back().is_none_or(|c| c != '=' && c != '/' && !is_word(c))
}

/// The regex after its lookbehind, at the `@` at byte `at`.
fn match_at<'a>(text: &'a str, at: usize, local_domain: &str) -> Option<RawMatch<'a>> {
    let user_start = at + 1;
    let user_end = user_start + username_len(&text[user_start..])?;
    let username = &text[user_start..user_end];
    let no_domain = RawMatch { username, domain: None, end: user_end };
    let Some(after) = text[user_end..].strip_prefix('@') else { return Some(no_domain) };
    let Some(len) = domain_len(after) else { return Some(no_domain) };
    let domain_start = user_end + 1;
    let domain = &text[domain_start..domain_start + len];
    if let Some(port_end) = local_with_port(text, domain_start, len, local_domain) {
        return Some(RawMatch { username, domain: None, end: port_end });
    }
    Some(RawMatch { username, domain: Some(domain), end: domain_start + len })
}

/// `[a-z0-9_]+([a-z0-9_.-]+[a-z0-9_]+)?` (case-insensitive) at the start of `s`, greedy: the byte
/// length of the longest run of username characters, cut back to its last letter, digit or `_`.
fn username_len(s: &str) -> Option<usize> {
    let inner = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    if !s.bytes().next().is_some_and(inner) {
        return None;
    }
    let run = s.bytes().take_while(|&b| inner(b) || b == b'.' || b == b'-');
    run.enumerate().filter(|&(_, b)| inner(b)).last().map(|(i, _)| i + 1)
}

/// `[[:word:].-]+[[:word:]]+` at the start of `s`, greedy: the byte length of the longest run of
/// word characters, `.` and `-`, cut back to its last word character, if that is at least two
/// characters long.
fn domain_len(s: &str) -> Option<usize> {
    let mut best = None;
    for (n, (i, c)) in s.char_indices().enumerate() {
        if is_word(c) {
            best = (n >= 1).then_some(i + c.len_utf8());
        } else if c != '.' && c != '-' {
            break;
        }
    }
    best
}

/// The extension for a `local_domain` with a port: when the matched domain (`len` bytes at
/// `start`) is exactly its host and the text goes on with the same `:port` not followed by a word
/// character, the byte offset past the port.
fn local_with_port(text: &str, start: usize, len: usize, local_domain: &str) -> Option<usize> {
    if local_domain.find(':')? != len {
        return None;
    }
    let end = start + local_domain.len();
    let written = text.get(start..end)?;
    let boundary = text[end..].chars().next().is_none_or(|c| !is_word(c));
    (written.eq_ignore_ascii_case(local_domain) && boundary).then_some(end)
}

/// Edgefeed's rules on a match: local (no domain or `local_domain`) with a valid handle, or remote.
fn resolve(raw: &RawMatch<'_>, local_domain: &str) -> Option<Target> {
    let username = raw.username.to_ascii_lowercase();
    match raw.domain {
        Some(domain) if !domain.eq_ignore_ascii_case(local_domain) => {
            Some(Target::Remote(RemoteAccount { username, domain: domain.to_ascii_lowercase() }))
        }
        _ => Handle::parse(&username).ok().map(Target::Local),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_column_round_trips_and_junk_reads_as_none() {
        let list = vec![Mentioned { id: UserId::from_trusted(7), handle: "alice".into() }];
        let column = Mentioned::column(&list);
        assert_eq!(Mentioned::list_of(column.as_deref()), list);
        assert_eq!(Mentioned::column(&[]), None);
        assert!(Mentioned::list_of(Some("not json")).is_empty());
        assert!(Mentioned::list_of(None).is_empty());
    }

    const DOMAIN: &str = "edgefeed.example";

    /// The local handles, as strings.
    fn local(text: &str) -> Vec<String> {
        mentioned_handles(text, DOMAIN).iter().map(|h| h.as_str().to_owned()).collect()
    }

    fn remote(text: &str) -> Vec<String> {
        mentions(text, DOMAIN).remote.iter().map(|a| format!("{}@{}", a.username, a.domain)).collect()
    }

    #[test]
    fn mentions_plain_handles() {
        assert_eq!(local("@alice"), ["alice"]);
        assert_eq!(local("hi @alice and @bob_2!"), ["alice", "bob_2"]);
        assert_eq!(local("no mentions here"), Vec::<String>::new());
        assert_eq!(local(""), Vec::<String>::new());
    }

    #[test]
    fn mentions_are_case_insensitive_and_lowercased() {
        assert_eq!(local("@Alice @ALICE @alice"), ["alice"]);
    }

    #[test]
    fn duplicates_keep_first_occurrence_order() {
        assert_eq!(local("@carol @alice @carol @bob @alice"), ["carol", "alice", "bob"]);
    }

    #[test]
    fn local_domain_is_local_whatever_its_case() {
        assert_eq!(local("@alice@edgefeed.example"), ["alice"]);
        assert_eq!(local("@alice@EDGEFEED.example"), ["alice"]);
        assert_eq!(local("@alice @alice@Edgefeed.Example"), ["alice"]);
        assert!(remote("@alice@EDGEFEED.example").is_empty());
    }

    #[test]
    fn other_domains_are_remote_not_local() {
        let found = mentions("@bob@other.social hi @alice, @Bob@Other.Social", DOMAIN);
        assert_eq!(found.local, [Handle::parse("alice").unwrap()]);
        let bob = RemoteAccount { username: "bob".into(), domain: "other.social".into() };
        assert_eq!(found.remote, [bob]);
        // A remote username follows Mastodon's rule, not edgefeed's.
        assert_eq!(remote("@j.doe@other.social @al@x.y"), ["j.doe@other.social", "al@x.y"]);
        // A subdomain or a longer name is another domain.
        assert_eq!(remote("@alice@sub.edgefeed.example"), ["alice@sub.edgefeed.example"]);
        assert_eq!(remote("@alice@edgefeed.example.org"), ["alice@edgefeed.example.org"]);
    }

    #[test]
    fn email_addresses_are_not_mentions() {
        assert_eq!(local("write to bob@alice.example"), Vec::<String>::new());
        assert_eq!(local("bob_@alice"), Vec::<String>::new());
        assert!(remote("bob@alice.example").is_empty());
    }

    #[test]
    fn urls_and_equals_are_not_mentions() {
        assert_eq!(local("https://x.example/@alice"), Vec::<String>::new());
        assert_eq!(local("see /@alice"), Vec::<String>::new());
        assert_eq!(local("?user=@alice"), Vec::<String>::new());
    }

    #[test]
    fn trailing_punctuation_ends_the_mention() {
        assert_eq!(local("thanks @alice."), ["alice"]);
        assert_eq!(
            local("@alice, @bob: @carol! @dave? @erin- @frank..."),
            ["alice", "bob", "carol", "dave", "erin", "frank"]
        );
        assert_eq!(local("@alice@edgefeed.example."), ["alice"]);
        assert_eq!(local("(@alice@edgefeed.example)"), ["alice"]);
    }

    #[test]
    fn punctuation_before_starts_a_mention() {
        assert_eq!(local("(@alice)"), ["alice"]);
        assert_eq!(local("\"@alice\""), ["alice"]);
        assert_eq!(local(",@alice"), ["alice"]);
        assert_eq!(local(".@alice"), ["alice"]);
        assert_eq!(local("cc:@alice"), ["alice"]);
        assert_eq!(local("-@alice"), ["alice"]);
        assert_eq!(local("«@alice»"), ["alice"]);
    }

    #[test]
    fn whitespace_before_starts_a_mention() {
        assert_eq!(local("hi\n@alice"), ["alice"]);
        assert_eq!(local("hi\t@alice\r\n@bob"), ["alice", "bob"]);
        assert_eq!(local("hi\u{3000}@alice"), ["alice"]); // ideographic space
    }

    #[test]
    fn a_word_character_in_any_script_before_blocks_a_mention() {
        // Ruby's [[:word:]] is Unicode: a Japanese letter is a word character.
        assert_eq!(local("こんにちは@alice"), Vec::<String>::new());
        assert_eq!(local("café@alice"), Vec::<String>::new());
        assert_eq!(local("x\u{301}@alice"), Vec::<String>::new()); // a combining mark
        assert_eq!(local("123@alice"), Vec::<String>::new());
        // After a space, the same text mentions.
        assert_eq!(local("こんにちは @alice"), ["alice"]);
        assert_eq!(local("こんにちは、@alice"), ["alice"]); // ideographic comma
    }

    #[test]
    fn unicode_after_a_mention_does_not_block_it() {
        assert_eq!(local("@aliceさん、こんにちは"), ["alice"]);
        assert_eq!(local("🎉@alice🎉"), ["alice"]);
        // An emoji with variation selector 16 ends in a mark, a word character for Ruby.
        assert_eq!(local("❤\u{FE0F}@alice"), Vec::<String>::new());
    }

    #[test]
    fn double_at_mentions_the_second() {
        // `@` is not in the lookbehind: the second `@` starts a mention.
        assert_eq!(local("@@alice"), ["alice"]);
        assert_eq!(local("@@@"), Vec::<String>::new());
    }

    #[test]
    fn an_incomplete_domain_is_no_domain() {
        assert_eq!(local("@alice@"), ["alice"]);
        assert_eq!(local("@alice@ hi"), ["alice"]);
        assert_eq!(local("@alice@x"), ["alice"]); // the domain needs two characters
        assert_eq!(local("@alice@.-"), ["alice"]);
        assert_eq!(local("@alice@@bob"), ["alice", "bob"]);
    }

    #[test]
    fn too_short_or_too_long_handles_are_not_mentions() {
        assert_eq!(local("@al"), Vec::<String>::new());
        assert_eq!(local("@a @_"), Vec::<String>::new());
        assert_eq!(local(&format!("@{}", "a".repeat(30))), ["a".repeat(30)]);
        // 31 characters: not a mention, and not cut down to 30.
        assert_eq!(local(&format!("@{} @bob", "a".repeat(31))), ["bob"]);
        assert_eq!(local("@abc"), ["abc"]);
    }

    #[test]
    fn dots_or_dashes_inside_are_not_edgefeed_handles() {
        assert_eq!(local("@alice.bob"), Vec::<String>::new());
        assert_eq!(local("@alice-bob @alice..bob"), Vec::<String>::new());
        assert_eq!(local("@alice.bob@edgefeed.example"), Vec::<String>::new());
        // Nor a start that the username rule refuses.
        assert_eq!(local("@.alice @-alice @ alice"), Vec::<String>::new());
    }

    #[test]
    fn spans_cover_each_mention_in_bytes() {
        let text = "こ @Alice and @bob@EDGEFEED.example, @alice. @carol@other.social";
        let spans = mention_spans(text, DOMAIN);
        let written: Vec<&str> = spans.iter().map(|m| &text[m.range.clone()]).collect();
        assert_eq!(written, ["@Alice", "@bob@EDGEFEED.example", "@alice", "@carol@other.social"]);
        assert_eq!(spans[0].target, Target::Local(Handle::parse("alice").unwrap()));
        assert_eq!(spans[0].range, 4..10);
        assert!(matches!(&spans[3].target, Target::Remote(a) if a.domain == "other.social"));
    }

    #[test]
    fn a_local_domain_with_a_port_matches_with_its_port() {
        let dev = "127.0.0.1:8787";
        let handles = |text: &str| mentions(text, dev);
        assert_eq!(handles("@alice@127.0.0.1:8787 hi").local, [Handle::parse("alice").unwrap()]);
        assert_eq!(handles("@alice@127.0.0.1:8787").remote, []);
        let spans = mention_spans("(@alice@127.0.0.1:8787)", dev);
        assert_eq!(spans[0].range, 1..22);
        // Another port, or none, is another server.
        assert_eq!(handles("@alice@127.0.0.1:9999").remote[0].domain, "127.0.0.1");
        assert_eq!(handles("@alice@127.0.0.1:87870").remote[0].domain, "127.0.0.1");
        assert!(handles("@alice@127.0.0.1:87870").local.is_empty());
        assert_eq!(mentions("@alice@LOCALHOST:8787", "localhost:8787").local.len(), 1);
    }

    #[test]
    fn the_limit_counts_distinct_accounts() {
        let twenty: Vec<String> = (0..20).map(|i| format!("@user{i:02}")).collect();
        let text = twenty.join(" ");
        assert!(!mentions(&text, DOMAIN).over_limit());
        assert!(!mentions(&format!("{text} {text}"), DOMAIN).over_limit());
        let found = mentions(&format!("{text} @bob@other.social"), DOMAIN);
        assert_eq!(found.total(), 21);
        assert!(found.over_limit());
    }
}
