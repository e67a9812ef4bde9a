//! Mastodon's filters (v2, and v1 as a view on them): what a filter is, how its fields parse,
//! and the matching rules applied at read time. A keyword matches case-insensitively anywhere
//! in a status's text, its content warning or its media descriptions; with `whole_word` it must
//! not run into a word character on a side where the keyword itself starts or ends with one (as
//! Mastodon's `\b` on exactly those sides). A status filter matches its status by id. An
//! expired filter matches nothing. `warn` marks the status (`filtered`), `hide` removes it,
//! `blur` marks it as `warn` does (clients blur its media).

use super::validate::Invalid;

/// Where a filter applies (Mastodon's `context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Home,
    Notifications,
    Public,
    Thread,
    Account,
}

impl Context {
    pub const ALL: [Context; 5] =
        [Context::Home, Context::Notifications, Context::Public, Context::Thread, Context::Account];

    pub fn as_str(self) -> &'static str {
        match self {
            Context::Home => "home",
            Context::Notifications => "notifications",
            Context::Public => "public",
            Context::Thread => "thread",
            Context::Account => "account",
        }
    }

    pub fn parse(text: &str) -> Option<Context> {
        Context::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// A filter's contexts, in [`Context::ALL`]'s order, each once; stored comma-separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Contexts(u8);

impl Contexts {
    fn bit(c: Context) -> u8 {
        1 << (c as u8)
    }

    /// The contexts a request names: at least one, each a known one (422 otherwise).
    pub fn parse_list<S: AsRef<str>>(values: &[S]) -> Result<Contexts, Invalid> {
        let mut set = 0;
        for value in values {
            let c = Context::parse(value.as_ref().trim()).ok_or_else(|| {
                Invalid::new("context", "context must be home, notifications, public, thread or account")
            })?;
            set |= Self::bit(c);
        }
        if set == 0 {
            return Err(Invalid::new(
                "context",
                "context must name at least one of home, notifications, public, thread, account",
            ));
        }
        Ok(Contexts(set))
    }

    /// As stored (`home,thread`); unknown names are ignored.
    pub fn from_stored(text: &str) -> Contexts {
        Contexts(text.split(',').filter_map(Context::parse).fold(0, |set, c| set | Self::bit(c)))
    }

    pub fn contains(self, c: Context) -> bool {
        self.0 & Self::bit(c) != 0
    }

    pub fn names(self) -> Vec<&'static str> {
        Context::ALL.into_iter().filter(|c| self.contains(*c)).map(Context::as_str).collect()
    }

    pub fn stored(self) -> String {
        self.names().join(",")
    }
}

/// What a matching filter does to a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Warn,
    Hide,
    Blur,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Warn => "warn",
            Action::Hide => "hide",
            Action::Blur => "blur",
        }
    }

    /// As stored or asked for; 422 for anything else.
    pub fn parse(text: &str) -> Result<Action, Invalid> {
        match text.trim() {
            "warn" => Ok(Action::Warn),
            "hide" => Ok(Action::Hide),
            "blur" => Ok(Action::Blur),
            _ => Err(Invalid::new("filter_action", "filter_action must be warn, hide or blur")),
        }
    }
}

/// A filter's title: 1..=200 characters after trimming.
pub fn parse_title(text: &str) -> Result<String, Invalid> {
    let title = text.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE {
        return Err(Invalid::new("title", "title must be 1 to 200 characters"));
    }
    Ok(title.to_owned())
}

/// A keyword (or a v1 phrase): 1..=200 characters after trimming.
pub fn parse_keyword(text: &str) -> Result<String, Invalid> {
    let keyword = text.trim();
    if keyword.is_empty() || keyword.chars().count() > MAX_KEYWORD {
        return Err(Invalid::new("keyword", "keyword must be 1 to 200 characters"));
    }
    Ok(keyword.to_owned())
}

/// `expires_in` (seconds from now) as an expiry in ms; `0` or none: never.
pub fn expires_at(now: i64, expires_in: Option<u64>) -> Result<Option<i64>, Invalid> {
    match expires_in {
        None | Some(0) => Ok(None),
        Some(s) if s <= MAX_EXPIRES_IN_S => Ok(Some(now + s as i64 * 1000)),
        Some(_) => Err(Invalid::new("expires_in", "expires_in must be at most 10 years in seconds")),
    }
}

pub const MAX_TITLE: usize = 200;
pub const MAX_KEYWORD: usize = 200;
/// Filters a user may have, keywords and statuses a filter may hold.
pub const MAX_FILTERS: usize = 100;
pub const MAX_PER_FILTER: usize = 100;
const MAX_EXPIRES_IN_S: u64 = 10 * 365 * 24 * 3600;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyword {
    pub id: i64,
    pub keyword: String,
    pub whole_word: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRef {
    pub id: i64,
    pub status_id: i64,
}

/// One filter with its keywords and statuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub id: i64,
    pub title: String,
    pub contexts: Contexts,
    pub action: Action,
    pub expires_at: Option<i64>,
    pub keywords: Vec<Keyword>,
    pub statuses: Vec<StatusRef>,
}

impl Filter {
    pub fn active(&self, now: i64) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }
}

/// What a status offers to filters: its id and its texts (body, content warning, media
/// descriptions).
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub id: i64,
    pub texts: &'a [&'a str],
}

/// One filter a status matched (Mastodon's FilterResult): the filter's index in the list, the
/// keywords and the status filter ids that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub filter: usize,
    pub keywords: Vec<String>,
    pub statuses: Vec<i64>,
}

/// The filters of one viewer, for one context, at one time.
#[derive(Debug, Clone)]
pub struct Applied {
    pub filters: Vec<Filter>,
    pub context: Context,
    pub now: i64,
}

impl Applied {
    /// Keeps the filters active in `context` at `now`.
    pub fn new(filters: Vec<Filter>, context: Context, now: i64) -> Applied {
        let filters = filters.into_iter().filter(|f| f.contexts.contains(context) && f.active(now)).collect();
        Applied { filters, context, now }
    }

    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// Every filter the status matches, in the filters' order.
    pub fn matches(&self, subject: Subject<'_>) -> Vec<Matched> {
        let lowered: Vec<Vec<char>> = subject.texts.iter().map(|t| lower(t)).collect();
        self.filters
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let keywords: Vec<String> = f
                    .keywords
                    .iter()
                    .filter(|k| lowered.iter().any(|t| keyword_in(t, &k.keyword, k.whole_word)))
                    .map(|k| k.keyword.clone())
                    .collect();
                let statuses: Vec<i64> =
                    f.statuses.iter().filter(|s| s.status_id == subject.id).map(|s| s.id).collect();
                (!keywords.is_empty() || !statuses.is_empty()).then_some(Matched {
                    filter: i,
                    keywords,
                    statuses,
                })
            })
            .collect()
    }

    /// Whether a `hide` filter matches the status: it is left out.
    pub fn hides(&self, subject: Subject<'_>) -> bool {
        self.matches(subject).iter().any(|m| self.filters[m.filter].action == Action::Hide)
    }
}

fn lower(text: &str) -> Vec<char> {
    text.chars().flat_map(char::to_lowercase).collect()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `keyword` occurs in `text` (already lowercased), case-insensitively; with
/// `whole_word`, not running into a word character on a side where the keyword has one.
pub fn keyword_in(text: &[char], keyword: &str, whole_word: bool) -> bool {
    let k = lower(keyword);
    if k.is_empty() || k.len() > text.len() {
        return false;
    }
    let (starts_word, ends_word) =
        (k.first().is_some_and(|c| is_word(*c)), k.last().is_some_and(|c| is_word(*c)));
    (0..=text.len() - k.len()).any(|i| {
        if text[i..i + k.len()] != k[..] {
            return false;
        }
        if !whole_word {
            return true;
        }
        let before_ok = !starts_word || i == 0 || !is_word(text[i - 1]);
        let after = i + k.len();
        let after_ok = !ends_word || after == text.len() || !is_word(text[after]);
        before_ok && after_ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(id: i64, action: Action, keywords: &[(&str, bool)], statuses: &[i64]) -> Filter {
        Filter {
            id,
            title: format!("f{id}"),
            contexts: Contexts::parse_list(&["home", "thread"]).unwrap(),
            action,
            expires_at: None,
            keywords: keywords
                .iter()
                .enumerate()
                .map(|(i, (k, w))| Keyword { id: i as i64 + 1, keyword: k.to_string(), whole_word: *w })
                .collect(),
            statuses: statuses.iter().map(|s| StatusRef { id: s + 1000, status_id: *s }).collect(),
        }
    }

    fn found(text: &str, keyword: &str, whole: bool) -> bool {
        keyword_in(&lower(text), keyword, whole)
    }

    #[test]
    fn keywords_match_case_insensitively_with_word_boundaries_on_word_sides_only() {
        assert!(found("I like Rust a lot", "rust", true));
        assert!(found("RUST!", "rust", true));
        assert!(!found("rusty nails", "rust", true));
        assert!(found("rusty nails", "rust", false));
        assert!(!found("trust me", "rust", true));
        assert!(found("trust me", "rust", false));
        assert!(found("snake_case", "case", false));
        assert!(!found("snake_case", "case", true), "_ is a word character");
        // A keyword starting with a non-word character needs no boundary there.
        assert!(found("love#rust", "#rust", true));
        assert!(!found("#rustacean", "#rust", true));
        assert!(found("Ünïcode ÄRGER", "ärger", true));
        assert!(found("multi word phrase here", "word phrase", true));
        assert!(!found("", "x", false));
        assert!(!found("short", "much longer keyword", false));
    }

    #[test]
    fn a_status_matches_by_keyword_in_any_text_or_by_id() {
        let applied = Applied::new(
            vec![filter(1, Action::Warn, &[("spoiler", true)], &[]), filter(2, Action::Hide, &[], &[42])],
            Context::Home,
            0,
        );
        let texts = ["plain body", "Spoiler alert"];
        let m = applied.matches(Subject { id: 7, texts: &texts });
        assert_eq!(m, vec![Matched { filter: 0, keywords: vec!["spoiler".into()], statuses: vec![] }]);
        assert!(!applied.hides(Subject { id: 7, texts: &texts }));
        let m = applied.matches(Subject { id: 42, texts: &["nothing"] });
        assert_eq!(m, vec![Matched { filter: 1, keywords: vec![], statuses: vec![1042] }]);
        assert!(applied.hides(Subject { id: 42, texts: &["nothing"] }));
    }

    #[test]
    fn expired_filters_and_other_contexts_match_nothing() {
        let mut expired = filter(1, Action::Hide, &[("x", false)], &[]);
        expired.expires_at = Some(100);
        let live = filter(2, Action::Hide, &[("y", false)], &[]);
        let applied = Applied::new(vec![expired.clone(), live.clone()], Context::Home, 100);
        assert_eq!(applied.filters, vec![live.clone()]);
        assert!(Applied::new(vec![expired], Context::Home, 99).hides(Subject { id: 1, texts: &["x"] }));
        assert!(Applied::new(vec![live], Context::Notifications, 0).is_empty());
    }

    #[test]
    fn fields_parse_or_are_refused() {
        let c = Contexts::parse_list(&["thread", "home", "home"]).unwrap();
        assert_eq!(c.names(), vec!["home", "thread"]);
        assert_eq!(Contexts::from_stored(&c.stored()), c);
        assert!(Contexts::parse_list::<&str>(&[]).is_err());
        assert!(Contexts::parse_list(&["everywhere"]).is_err());
        assert_eq!(Action::parse("hide"), Ok(Action::Hide));
        assert!(Action::parse("delete").is_err());
        assert!(parse_title("  ").is_err());
        assert_eq!(parse_title(" t ").as_deref(), Ok("t"));
        assert!(parse_keyword(&"k".repeat(201)).is_err());
        assert_eq!(expires_at(1000, Some(60)), Ok(Some(61_000)));
        assert_eq!(expires_at(1000, Some(0)), Ok(None));
        assert!(expires_at(0, Some(u64::MAX)).is_err());
    }
}
