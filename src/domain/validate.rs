//! Validated input types. Each `parse` returns the normalized value or an [`Invalid`] that
//! names the field and what is wrong; the HTTP layer turns that into `422 invalid_field`.
//! A value of one of these types is valid by construction, so nothing downstream re-checks.

use std::fmt;

pub const MAX_BODY_CHARS: usize = 5000;
pub const MAX_COMMENT_CHARS: usize = 2000;
pub const MAX_DISPLAY_NAME_CHARS: usize = 50;
pub const MAX_GROUP_CHARS: usize = 32;
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
    /// Trimmed, 1..=50 characters, no control characters.
    DisplayName
);
text_type!(
    /// A post's text: trimmed, 1..=5000 characters (Unicode scalar values).
    PostBody
);
text_type!(
    /// A comment's text: trimmed, 1..=2000 characters.
    CommentBody
);
text_type!(
    /// A follow group: `^[a-z0-9_-]{1,32}$`, so it is safe inside cursor list identities.
    GroupName
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
        Ok(Self(trimmed.to_owned()))
    }

    /// Users who give no display name are shown by their handle.
    pub fn from_handle(handle: &Handle) -> Self {
        Self(handle.0.clone())
    }
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

impl IdempotencyKey {
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let ok =
            (1..=MAX_IDEMPOTENCY_KEY_LEN).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| Self(text.to_owned())).ok_or_else(|| {
            Invalid::new("Idempotency-Key", "Idempotency-Key must be 1..128 visible ASCII characters")
        })
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
        assert!(PostBody::parse(&"é".repeat(5000)).is_ok());
        assert!(PostBody::parse(&"é".repeat(5001)).is_err());
        assert!(CommentBody::parse(&"é".repeat(2001)).is_err());
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
    }
}
