//! Search v2 (`GET /api/v2/search`): what a text is indexed under, what a query asks for, and
//! whether a hit still matches. Pure; the index rows are `search_terms` (migration 0041), the
//! reads and writes `services/search`.
//!
//! Words: a text's runs of word characters (`mentions::is_word`), lower-cased, each at most
//! [`MAX_WORD_CHARS`] characters (a longer run is no one's word; it is left out). The index has
//! four families of terms ([`Term`]), each placed on the database of its own hash except a
//! personal term, which lives on its user's home:
//!
//! - accounts: each word of the handle and the display name under its first character and its
//!   first two (a *bucket*: a query's prefix is a range of whole words inside one bucket, one
//!   database), at most [`MAX_NAME_WORDS`] words;
//! - hashtags: each tag's key under the same two buckets;
//! - public statuses of indexable accounts: each distinct word of the text, whole;
//! - a user's own, favourited, bookmarked and mentioning statuses: the same words, under the
//!   user's personal term.
//!
//! Prefix fan-in is bounded by the read, not by the write: a read takes at most a bound of one
//! bucket's range, so a one-letter bucket (every account with a word in `a`) costs the same
//! rows as any other; it finds the first words of that range only.

use super::ids::{PostId, UserId};
use super::mentions::is_word;
use super::shard::shard_of_handle;
use super::snowflake::{shard_of_id, LogicalShard};

/// The longest word indexed or searched, in characters.
pub const MAX_WORD_CHARS: usize = 32;
/// The most distinct words of one status indexed (a 500-character post has about 80 words, of
/// which fewer are distinct; each is a row written).
pub const MAX_POST_WORDS: usize = 64;
/// The most words of one account (handle and display name) indexed.
pub const MAX_NAME_WORDS: usize = 8;
/// The most words of one query (each a term read).
pub const MAX_QUERY_WORDS: usize = 4;
/// The characters a prefix bucket takes from a word.
pub const BUCKET_CHARS: usize = 2;

/// The distinct words of `text`, lower-cased, in first-use order, at most `max`.
pub fn words(text: &str, max: usize) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for run in text.split(|c: char| !is_word(c)).filter(|w| !w.is_empty()) {
        if run.chars().count() > MAX_WORD_CHARS {
            continue;
        }
        let word = run.to_lowercase();
        if !found.contains(&word) {
            found.push(word);
        }
        if found.len() == max {
            break;
        }
    }
    found
}

/// The first `n` characters of a word.
fn first_chars(word: &str, n: usize) -> &str {
    word.char_indices().nth(n).map_or(word, |(at, _)| &word[..at])
}

/// What a term's rows say: a family and its key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Term {
    /// Account words starting with this bucket.
    Account(String),
    /// Hashtags starting with this bucket.
    Tag(String),
    /// Public statuses of indexable accounts with this word.
    Status(String),
    /// This user's own, favourited, bookmarked or mentioning statuses with this word.
    Personal(UserId, String),
}

impl Term {
    /// The stored `term` column.
    pub fn key(&self) -> String {
        match self {
            Self::Account(bucket) => format!("a:{bucket}"),
            Self::Tag(bucket) => format!("h:{bucket}"),
            Self::Status(word) => format!("s:{word}"),
            Self::Personal(user, word) => format!("p:{user}:{word}"),
        }
    }

    /// The logical shard (and so the database) the term's rows live on.
    pub fn shard(&self) -> LogicalShard {
        match self {
            Self::Personal(user, _) => shard_of_id(user.get()),
            other => shard_of_handle(&other.key()),
        }
    }
}

/// One row of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub term: Term,
    /// The whole word (accounts, tags: a bucket holds many); `''` for statuses.
    pub word: String,
    /// A user or post id; 0 for a tag.
    pub item: i64,
    /// A status's author; 0 otherwise.
    pub owner: i64,
    /// A tag as written; `''` otherwise.
    pub name: String,
}

/// The buckets a word is found by: its first character, and its first two when it has them.
fn buckets(word: &str) -> Vec<&str> {
    let mut found = vec![first_chars(word, 1)];
    let two = first_chars(word, BUCKET_CHARS);
    if two.len() > found[0].len() {
        found.push(two);
    }
    found
}

/// The bucket a query prefix reads: its first two characters (or its one).
pub fn bucket_of(prefix: &str) -> &str {
    first_chars(prefix, BUCKET_CHARS)
}

/// The words an account is found by: its handle whole, then the display name's words.
pub fn account_words(handle: &str, display_name: &str) -> Vec<String> {
    let text = format!("{} {display_name}", handle.to_lowercase());
    let mut found = vec![handle.to_lowercase()];
    for word in words(&text, MAX_NAME_WORDS + 1) {
        if !found.contains(&word) && found.len() < MAX_NAME_WORDS {
            found.push(word);
        }
    }
    found
}

/// An account's rows.
pub fn account_rows(user: UserId, handle: &str, display_name: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for word in account_words(handle, display_name) {
        for bucket in buckets(&word) {
            let term = Term::Account(bucket.to_string());
            rows.push(Row { term, word: word.clone(), item: user.get(), owner: 0, name: String::new() });
        }
    }
    rows
}

/// A hashtag's rows (`name` as written; matched by its lower-cased key).
pub fn tag_rows(name: &str) -> Vec<Row> {
    let key = super::tags::key_of(name);
    buckets(&key)
        .into_iter()
        .map(|bucket| Row {
            term: Term::Tag(bucket.to_string()),
            word: key.clone(),
            item: 0,
            owner: 0,
            name: name.to_string(),
        })
        .collect()
}

/// A status's rows: under the public terms (`None`) or a user's personal ones.
pub fn status_rows(post: PostId, author: UserId, text: &str, personal: Option<UserId>) -> Vec<Row> {
    words(text, MAX_POST_WORDS)
        .into_iter()
        .map(|word| Row {
            term: match personal {
                Some(user) => Term::Personal(user, word),
                None => Term::Status(word),
            },
            word: String::new(),
            item: post.get(),
            owner: author.get(),
            name: String::new(),
        })
        .collect()
}

/// The rows of `was` that `now` no longer has.
pub fn left_behind(was: Vec<Row>, now: &[Row]) -> Vec<Row> {
    was.into_iter().filter(|row| !now.contains(row)).collect()
}

/// Whether every query word is the start of one of the account's words.
pub fn account_matches(query: &[String], handle: &str, display_name: &str) -> bool {
    let own = account_words(handle, display_name);
    let own_all = words(&format!("{handle} {display_name}"), usize::MAX);
    query.iter().all(|q| own.iter().chain(&own_all).any(|w| w.starts_with(q.as_str())))
}

/// Whether every query word is a word of the text (as it is now).
pub fn status_matches(query: &[String], text: &str) -> bool {
    let own = words(text, usize::MAX);
    query.iter().all(|q| own.contains(q))
}

/// The `[low, high)` range of whole words starting with `prefix` (every such word sorts at or
/// above it and below it followed by the highest character).
pub fn prefix_range(prefix: &str) -> (String, String) {
    (prefix.to_string(), format!("{prefix}\u{10FFFF}"))
}

/// Which results a search asks for (`type`; none: all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Accounts,
    Hashtags,
    Statuses,
}

impl Kind {
    pub fn parse(raw: &str) -> Option<Kind> {
        match raw.trim() {
            "accounts" => Some(Self::Accounts),
            "hashtags" => Some(Self::Hashtags),
            "statuses" => Some(Self::Statuses),
            _ => None,
        }
    }
}

/// The query's words for accounts and statuses (at most [`MAX_QUERY_WORDS`]): a leading `@`
/// of a handle and a `#` are no part of a word.
pub fn query_words(q: &str) -> Vec<String> {
    words(q, MAX_QUERY_WORDS)
}

/// The tag prefix a hashtag search asks for: the query without a leading `#`, lower-cased,
/// if it is one run of tag characters.
pub fn tag_prefix(q: &str) -> Option<String> {
    let raw = q.trim();
    let raw = raw.strip_prefix('#').unwrap_or(raw);
    let valid = !raw.is_empty()
        && raw.chars().count() <= super::tags::MAX_TAG_BYTES
        && raw.chars().all(|c| is_word(c) || matches!(c, '\u{00B7}' | '\u{30FB}' | '\u{200C}'));
    valid.then(|| super::tags::key_of(raw))
}

/// What a URL of this instance names (`resolve=true`): a status or an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    Status(PostId),
    AccountId(UserId),
    Handle(String),
}

/// The status or account a URL of `origin` names: the API's `uri`s
/// (`/api/v1/statuses/{id}`, `/api/v1/accounts/{id}`), the web client's pages (`/?post={id}`,
/// `/?user={handle}`) and Mastodon's (`/@handle`, `/@handle/{id}`, `/users/handle`,
/// `/users/handle/statuses/{id}`). `None` for anything else (another host included).
pub fn resolve_url(q: &str, origin: &str) -> Option<Resolved> {
    let rest = q.trim().strip_prefix(origin.trim_end_matches('/'))?;
    let status = |id: &str| super::ids::parse_id(id).map(|id| Resolved::Status(PostId::from_trusted(id)));
    let handle = |h: &str| {
        let valid = !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        valid.then(|| Resolved::Handle(h.to_ascii_lowercase()))
    };
    let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    match parts.as_slice() {
        ["", query] if query.starts_with("?post=") => status(&query["?post=".len()..]),
        ["", query] if query.starts_with("?user=") => handle(&query["?user=".len()..]),
        ["", "api", "v1", "statuses", id] => status(id),
        ["", "api", "v1", "accounts", id] => {
            super::ids::parse_id(id).map(|id| Resolved::AccountId(UserId::from_trusted(id)))
        }
        ["", at] if at.starts_with('@') => handle(&at[1..]),
        ["", at, id] if at.starts_with('@') => status(id),
        ["", "users", name] => handle(name),
        ["", "users", _, "statuses", id] => status(id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(n: i64) -> UserId {
        UserId::from_trusted(n)
    }

    #[test]
    fn words_are_lowercase_distinct_and_bounded() {
        assert_eq!(words("Hello, WORLD! hello #Rust_lang café", 10), ["hello", "world", "rust_lang", "café"]);
        assert_eq!(words("a b c d e", 2), ["a", "b"]);
        assert!(words(&"x".repeat(MAX_WORD_CHARS + 1), 10).is_empty(), "an overlong run is no word");
        assert_eq!(query_words("@alice smith"), ["alice", "smith"]);
    }

    #[test]
    fn an_account_is_found_by_buckets_of_its_words() {
        let rows = account_rows(user(8), "ana_b", "Ana Maria");
        let keys: Vec<(String, String)> = rows.iter().map(|r| (r.term.key(), r.word.clone())).collect();
        assert!(keys.contains(&("a:a".into(), "ana_b".into())));
        assert!(keys.contains(&("a:an".into(), "ana_b".into())));
        assert!(keys.contains(&("a:ma".into(), "maria".into())));
        assert!(keys.contains(&("a:an".into(), "ana".into())));
        assert!(account_matches(&["mar".into(), "an".into()], "ana_b", "Ana Maria"));
        assert!(!account_matches(&["ria".into()], "ana_b", "Ana Maria"), "a prefix, not an infix");
        let renamed = account_rows(user(8), "ana_b", "Bea");
        let gone = left_behind(rows, &renamed);
        assert!(gone.iter().any(|r| r.word == "maria") && !gone.iter().any(|r| r.word == "ana_b"));
    }

    #[test]
    fn statuses_match_whole_words_under_their_term() {
        let rows = status_rows(PostId::from_trusted(5), user(1), "Rust on the edge, rust!", None);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].term, Term::Status("rust".into()));
        let mine = status_rows(PostId::from_trusted(5), user(1), "edge", Some(user(9)));
        assert_eq!(mine[0].term.key(), "p:9:edge");
        assert_eq!(mine[0].term.shard(), shard_of_id(9), "a personal term lives on its user's home");
        assert!(status_matches(&["edge".into(), "rust".into()], "Rust on the edge"));
        assert!(!status_matches(&["edg".into()], "Rust on the edge"));
    }

    #[test]
    fn terms_spread_over_shards() {
        let shards: std::collections::HashSet<_> = ["alpha", "beta", "gamma", "delta", "eps"]
            .iter()
            .map(|w| Term::Status(w.to_string()).shard())
            .collect();
        assert!(shards.len() > 1);
    }

    #[test]
    fn tags_and_kinds_parse() {
        assert_eq!(tag_prefix("#RuSt").as_deref(), Some("rust"));
        assert_eq!(tag_prefix("two words"), None);
        assert_eq!(tag_prefix("#"), None);
        assert_eq!(tag_rows("Rust").iter().map(|r| r.term.key()).collect::<Vec<_>>(), ["h:r", "h:ru"]);
        assert_eq!(bucket_of("rustacean"), "ru");
        assert_eq!(Kind::parse("statuses"), Some(Kind::Statuses));
        assert_eq!(Kind::parse("toots"), None);
        let (low, high) = prefix_range("ru");
        assert!(low.as_str() <= "rust" && "rust" < high.as_str() && "rv" > high.as_str());
    }

    #[test]
    fn urls_of_this_instance_resolve() {
        let o = "https://ex.org";
        assert_eq!(
            resolve_url("https://ex.org/api/v1/statuses/42", o),
            Some(Resolved::Status(PostId::from_trusted(42)))
        );
        assert_eq!(
            resolve_url("https://ex.org/?post=42", o),
            Some(Resolved::Status(PostId::from_trusted(42)))
        );
        assert_eq!(
            resolve_url("https://ex.org/@Ana/42", o),
            Some(Resolved::Status(PostId::from_trusted(42)))
        );
        assert_eq!(resolve_url("https://ex.org/@Ana", o), Some(Resolved::Handle("ana".into())));
        assert_eq!(resolve_url("https://ex.org/?user=ana", o), Some(Resolved::Handle("ana".into())));
        assert_eq!(resolve_url("https://ex.org/api/v1/accounts/7", o), Some(Resolved::AccountId(user(7))));
        assert_eq!(resolve_url("https://other.org/@ana", o), None);
        assert_eq!(resolve_url("ana", o), None);
    }
}
