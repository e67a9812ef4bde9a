//! Validated input types. Each `parse` returns the normalized value or an [`Invalid`] that
//! names the field and what is wrong; the HTTP layer turns that into `422 invalid_field`.
//! A value of one of these types is valid by construction, so nothing downstream re-checks.

use std::fmt;

pub const MAX_BODY_CHARS: usize = 5000;
pub const MAX_COMMENT_CHARS: usize = 5000;
pub const MAX_DISPLAY_NAME_CHARS: usize = 50;
pub const MAX_GROUP_CHARS: usize = 32;
pub const MAX_LIST_TITLE_CHARS: usize = 255;
pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 128;

/// A field that failed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: &'static str,
    pub reason: String,
}

impl Invalid {
    pub fn new(field: &'static str, reason: impl Into<String>) -> Self {
        Self { field, reason: reason.into() }
    }
}

macro_rules! text_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_type!(
    /// `^[a-z0-9_]{3,30}$`
    Handle
);
text_type!(
    /// Trimmed, 1..=50 characters, no control characters, no bidi controls or invisible
    /// formatting characters ([`hides_or_reorders`]).
    DisplayName
);
text_type!(
    /// A post's text: trimmed, 1..=5000 characters (Unicode scalar values).
    PostBody
);
text_type!(
    /// A comment's text: trimmed, 1..=5000 characters (a Mastodon reply is a status: the same length as a post).
    CommentBody
);
text_type!(
    /// A follow group: `^[a-z0-9_-]{1,32}$`, so it is safe inside cursor list identities.
    GroupName
);
text_type!(
    /// A Mastodon list's title: trimmed, 1..=255 characters, no control characters.
    ListTitle
);
text_type!(
    /// `Idempotency-Key`: 1..=128 visible ASCII characters.
    IdempotencyKey
);

impl Handle {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let ok = (3..=30).contains(&text.len())
            && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        ok.then(|| Self(text.to_owned()))
            .ok_or_else(|| Invalid::new("handle", "handle must match ^[a-z0-9_]{3,30}$"))
    }
}

impl DisplayName {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let trimmed = text.trim();
        let n = trimmed.chars().count();
        if n == 0 || n > MAX_DISPLAY_NAME_CHARS {
            return Err(Invalid::new("display_name", "display_name must be 1..50 characters after trimming"));
        }
        if trimmed.chars().any(char::is_control) {
            return Err(Invalid::new("display_name", "display_name must not contain control characters"));
        }
        if trimmed.chars().any(hides_or_reorders) {
            return Err(Invalid::new(
                "display_name",
                "display_name must not contain bidirectional controls or invisible formatting characters",
            ));
        }
        Ok(Self(trimmed.to_owned()))
    }

    /// Users who give no display name are shown by their handle.
    pub fn from_handle(handle: &Handle) -> Self {
        Self(handle.0.clone())
    }
}

/// Characters that make a name look like another one without showing themselves: bidi marks,
/// embeddings, overrides and isolates (U+202E turns "ana\u{202E}lapyap" into "anapaypal" on screen)
/// and zero-width or invisible formatting characters ("an\u{200B}a" looks like "ana"). A display
/// name is how people recognise each other, so these are refused rather than stripped (stripping
/// would store something the user did not type). Post and comment bodies keep them: ZWJ joins
/// emoji sequences, and a body does not stand for a person.
pub fn hides_or_reorders(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        | '\u{200B}'..='\u{200D}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{180E}' | '\u{00AD}')
}

/// Trimmed text of 1..=max characters, reported as the `body` field.
fn text_body(text: &str, max: usize) -> Result<String, Invalid> {
    let trimmed = text.trim();
    let n = trimmed.chars().count();
    if n == 0 {
        return Err(Invalid::new("body", "body must not be empty"));
    }
    if n > max {
        return Err(Invalid::new("body", format!("body must be at most {max} characters after trimming")));
    }
    Ok(trimmed.to_owned())
}

impl PostBody {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        text_body(text, MAX_BODY_CHARS).map(Self)
    }

    /// The text of a post with attachments, which may be blank (a picture alone, as in Mastodon).
    pub fn parse_beside_media(text: &str, has_media: bool) -> Result<Self, Invalid> {
        if has_media && text.trim().is_empty() {
            return Ok(Self(String::new()));
        }
        Self::parse(text)
    }
}

impl CommentBody {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        text_body(text, MAX_COMMENT_CHARS).map(Self)
    }
}

impl GroupName {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let ok = (1..=MAX_GROUP_CHARS).contains(&text.len())
            && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        ok.then(|| Self(text.to_owned()))
            .ok_or_else(|| Invalid::new("group", "group must match ^[a-z0-9_-]{1,32}$"))
    }
}

impl ListTitle {
    /// The blank-title message is Mastodon's own, which clients show as they get it.
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let trimmed = text.trim();
        let n = trimmed.chars().count();
        if n == 0 {
            return Err(Invalid::new("title", "Validation failed: Title can't be blank"));
        }
        if n > MAX_LIST_TITLE_CHARS || trimmed.chars().any(char::is_control) {
            let reason = format!(
                "title must be at most {MAX_LIST_TITLE_CHARS} characters, without control characters"
            );
            return Err(Invalid::new("title", reason));
        }
        Ok(Self(trimmed.to_owned()))
    }
}

impl IdempotencyKey {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let ok =
            (1..=MAX_IDEMPOTENCY_KEY_LEN).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| Self(text.to_owned())).ok_or_else(|| {
            Invalid::new("Idempotency-Key", "Idempotency-Key must be 1..128 visible ASCII characters")
        })
    }

    /// The key the publish of scheduled post `id` runs under (`domain/scheduled.rs`): a retry,
    /// or a second cron pass at once, finds the post the first made. It holds a space, which
    /// [`IdempotencyKey::parse`] refuses, so no client's key can take it.
    pub fn of_scheduled(id: i64) -> Self {
        Self(format!("scheduled {id}"))
    }
}

/// `?limit=`: 1..=100, default 20.
pub fn limit(text: Option<&str>) -> Result<usize, Invalid> {
    match text {
        None => Ok(DEFAULT_LIMIT),
        Some(t) => match t.parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) && !t.starts_with('+') => Ok(n),
            _ => Err(Invalid::new("limit", "limit must be an integer from 1 to 100")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles() {
        assert!(Handle::parse("ana_99").is_ok());
        for bad in ["ab", "Ana", "a-b", "a b", "ñandu", &"a".repeat(31)] {
            assert_eq!(Handle::parse(bad).map_err(|e| e.field), Err("handle"), "{bad}");
        }
        assert!(Handle::parse(&"a".repeat(30)).is_ok());
    }

    #[test]
    fn bodies_are_trimmed_and_counted_in_characters() {
        assert_eq!(PostBody::parse("  hi \n").map(|b| b.to_string()), Ok("hi".to_string()));
        assert!(PostBody::parse("   ").is_err());
        assert_eq!(PostBody::parse_beside_media(" ", true).map(|b| b.to_string()), Ok(String::new()));
        assert!(PostBody::parse_beside_media(" ", false).is_err());
        assert!(PostBody::parse(&"é".repeat(5000)).is_ok());
        assert!(PostBody::parse(&"é".repeat(5001)).is_err());
        assert!(CommentBody::parse(&"é".repeat(5001)).is_err());
        assert_eq!(CommentBody::parse("").map_err(|e| e.field), Err("body"));
    }

    #[test]
    fn limits() {
        assert_eq!(limit(None), Ok(20));
        assert_eq!(limit(Some("100")), Ok(100));
        for bad in ["0", "101", "-1", "abc", "", "+5", "1.5"] {
            assert!(limit(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn groups_and_names() {
        assert!(GroupName::parse("close-friends").is_ok());
        assert!(GroupName::parse("").is_err());
        assert!(GroupName::parse("Friends").is_err());
        assert!(DisplayName::parse(" Ana ").is_ok_and(|n| n.as_str() == "Ana"));
        assert!(DisplayName::parse("a\u{0}b").is_err());
        assert!(IdempotencyKey::parse("abc-123").is_ok());
        assert!(IdempotencyKey::parse("has space").is_err());
        let scheduled = IdempotencyKey::of_scheduled(42);
        assert!(IdempotencyKey::parse(scheduled.as_str()).is_err(), "no client sends it");
    }

    #[test]
    fn list_titles_are_trimmed_and_bounded() {
        assert_eq!(ListTitle::parse("  close friends ").map(|t| t.0), Ok("close friends".to_string()));
        assert_eq!(ListTitle::parse(" ").unwrap_err().reason, "Validation failed: Title can't be blank");
        assert!(ListTitle::parse(&"é".repeat(MAX_LIST_TITLE_CHARS)).is_ok());
        assert!(ListTitle::parse(&"é".repeat(MAX_LIST_TITLE_CHARS + 1)).is_err());
        assert!(ListTitle::parse("a\u{0007}b").is_err());
    }

    #[test]
    fn display_names_refuse_bidi_controls_and_invisible_characters() {
        let refused = [
            '\u{061C}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}',
            '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}',
            '\u{2061}', '\u{2062}', '\u{2063}', '\u{2064}', '\u{FEFF}', '\u{180E}', '\u{00AD}',
        ];
        for c in refused {
            // Inside, and also at either end (trimming must not be what lets it through).
            for name in [format!("an{c}a"), format!("{c}ana"), format!("ana{c}")] {
                let err = DisplayName::parse(&name).unwrap_err();
                assert_eq!(err.field, "display_name", "U+{:04X}", c as u32);
                assert!(err.reason.contains("invisible"), "U+{:04X}: {}", c as u32, err.reason);
            }
        }
        // Their neighbours, and visible scripts of either direction, stay allowed.
        for ok in ["Ana María", "שלום", "مرحبا", "Zoë 🎉", "a\u{2010}b", "a\u{2070}b"] {
            assert!(DisplayName::parse(ok).is_ok(), "{ok}");
        }
        // Bodies are left as they are: a ZWJ emoji sequence survives.
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        assert_eq!(PostBody::parse(family).map(|b| b.to_string()), Ok(family.to_string()));
    }
}
