//! What a user reports to the operator (`POST /api/v1/reports`) and the domains they hide
//! (`/api/v1/domain_blocks`): the parameters' rules.

use crate::validate::Invalid;

/// A report's comment, at most (Mastodon's).
pub const MAX_COMMENT_CHARS: usize = 1000;
/// Statuses one report may name.
pub const MAX_STATUSES: usize = 20;

/// Mastodon's report categories.
pub fn category(text: Option<&str>) -> Result<&'static str, Invalid> {
    match text.map(str::trim).unwrap_or("") {
        "" | "other" => Ok("other"),
        "spam" => Ok("spam"),
        "legal" => Ok("legal"),
        "violation" => Ok("violation"),
        _ => Err(Invalid::new("category", "category must be spam, legal, violation or other")),
    }
}

pub fn comment(text: Option<&str>) -> Result<String, Invalid> {
    let text = text.unwrap_or("").trim();
    if text.chars().count() > MAX_COMMENT_CHARS {
        return Err(Invalid::new(
            "comment",
            format!("comment must be at most {MAX_COMMENT_CHARS} characters"),
        ));
    }
    Ok(text.to_owned())
}

/// A domain as a block names it: lowercase, labels of `[a-z0-9-]` joined by dots, at least two,
/// at most 253 characters (a URL or `@domain` is refused, not guessed at).
pub fn domain(text: &str) -> Result<String, Invalid> {
    let domain = text.trim().to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    let ok = domain.len() <= 253 && domain.contains('.') && domain.split('.').all(label_ok);
    ok.then_some(domain).ok_or_else(|| Invalid::new("domain", "domain must be a domain name (example.com)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert_eq!(category(None), Ok("other"));
        assert_eq!(category(Some("spam")), Ok("spam"));
        assert!(category(Some("rude")).is_err());
        assert!(comment(Some(&"x".repeat(1001))).is_err());
        assert_eq!(domain(" Example.COM "), Ok("example.com".into()));
        assert_eq!(domain("example.domain.to.block.com"), Ok("example.domain.to.block.com".into()));
        for bad in ["", "localhost", "https://example.com", "@example.com", "a..b", "-a.com", "a b.com"] {
            assert!(domain(bad).is_err(), "{bad}");
        }
    }
}
