//! Input rules shared by handlers. Each returns the normalized value or a message that names
//! what is wrong; the HTTP layer turns that into `422 invalid_field`.

pub const MAX_BODY_CHARS: usize = 5000;
pub const MAX_COMMENT_CHARS: usize = 2000;
pub const MAX_DISPLAY_NAME_CHARS: usize = 50;
pub const MAX_GROUP_CHARS: usize = 32;
pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 128;

/// `^[a-z0-9_]{3,30}$`
pub fn handle(text: &str) -> Result<String, &'static str> {
    let ok = (3..=30).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    ok.then(|| text.to_owned()).ok_or("handle must match ^[a-z0-9_]{3,30}$")
}

/// Trimmed, 1..=50 characters, no control characters.
pub fn display_name(text: &str) -> Result<String, &'static str> {
    let trimmed = text.trim();
    let n = trimmed.chars().count();
    if n == 0 || n > MAX_DISPLAY_NAME_CHARS {
        return Err("display_name must be 1..50 characters after trimming");
    }
    if trimmed.chars().any(char::is_control) {
        return Err("display_name must not contain control characters");
    }
    Ok(trimmed.to_owned())
}

/// Trimmed text of 1..=max characters (Unicode scalar values).
pub fn text_body(text: &str, max: usize) -> Result<String, String> {
    let trimmed = text.trim();
    let n = trimmed.chars().count();
    if n == 0 {
        return Err("body must not be empty".into());
    }
    if n > max {
        return Err(format!("body must be at most {max} characters after trimming"));
    }
    Ok(trimmed.to_owned())
}

/// Follow group names: `^[a-z0-9_-]{1,32}$`, so they are safe inside list identities.
pub fn group(text: &str) -> Result<String, &'static str> {
    let ok = (1..=MAX_GROUP_CHARS).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    ok.then(|| text.to_owned()).ok_or("group must match ^[a-z0-9_-]{1,32}$")
}

/// `?limit=`: 1..=100, default 20.
pub fn limit(text: Option<&str>) -> Result<usize, &'static str> {
    match text {
        None => Ok(DEFAULT_LIMIT),
        Some(t) => match t.parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) && !t.starts_with('+') => Ok(n),
            _ => Err("limit must be an integer from 1 to 100"),
        },
    }
}

/// `Idempotency-Key`: 1..=128 visible ASCII characters.
pub fn idempotency_key(text: &str) -> Result<String, &'static str> {
    let ok =
        (1..=MAX_IDEMPOTENCY_KEY_LEN).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic());
    ok.then(|| text.to_owned()).ok_or("Idempotency-Key must be 1..128 visible ASCII characters")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles() {
        assert!(handle("ana_99").is_ok());
        for bad in ["ab", "Ana", "a-b", "a b", "ñandu", &"a".repeat(31)] {
            assert!(handle(bad).is_err(), "{bad}");
        }
        assert!(handle(&"a".repeat(30)).is_ok());
    }

    #[test]
    fn bodies_are_trimmed_and_counted_in_characters() {
        assert_eq!(text_body("  hi \n", 5000).as_deref(), Ok("hi"));
        assert!(text_body("   ", 5000).is_err());
        assert!(text_body(&"é".repeat(5000), 5000).is_ok());
        assert!(text_body(&"é".repeat(5001), 5000).is_err());
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
        assert!(group("close-friends").is_ok());
        assert!(group("").is_err());
        assert!(group("Friends").is_err());
        assert!(display_name(" Ana ").is_ok_and(|n| n == "Ana"));
        assert!(display_name("a\u{0}b").is_err());
        assert!(idempotency_key("abc-123").is_ok());
        assert!(idempotency_key("has space").is_err());
    }
}
