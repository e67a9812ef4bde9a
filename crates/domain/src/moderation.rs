//! Moderation's vocabulary: the actions an operator takes, on what, and the audit entry each
//! leaves. What they do to reads lives with the rules they change (`visibility.rs` for
//! suspended authors, `feed.rs` for the feed verdict, `fanout.rs` for deliveries).

use super::ids::{PostId, UserId};
use super::validate::Invalid;

const MAX_REASON_CHARS: usize = 500;
const MAX_OPERATOR_CHARS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Suspend,
    Reinstate,
    Takedown,
    Restore,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Suspend => "suspend",
            Action::Reinstate => "reinstate",
            Action::Takedown => "takedown",
            Action::Restore => "restore",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    User(UserId),
    Post(PostId),
}

impl Target {
    /// The audit row's `(target_kind, target_id)`.
    pub fn parts(&self) -> (&'static str, i64) {
        match self {
            Target::User(id) => ("user", id.get()),
            Target::Post(id) => ("post", id.get()),
        }
    }
}

/// Who did what to what, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub actor: String,
    pub action: Action,
    pub target: Target,
    pub reason: String,
}

/// A reason is required (an audit log of unexplained actions helps nobody): 1..500 characters
/// after trimming, no control characters but newlines.
pub fn parse_reason(text: &str) -> Result<String, Invalid> {
    let trimmed = text.trim();
    let n = trimmed.chars().count();
    if n == 0 || n > MAX_REASON_CHARS {
        return Err(Invalid::new("reason", "reason must be 1..500 characters after trimming"));
    }
    if trimmed.chars().any(|c| c.is_control() && c != '\n') {
        return Err(Invalid::new("reason", "reason must not contain control characters"));
    }
    Ok(trimmed.to_owned())
}

/// The operator's name for the log (the admin token is shared, so the caller says who they
/// are): 1..64 printable characters; `admin` when not given.
pub fn parse_operator(text: &str) -> Result<String, Invalid> {
    let trimmed = text.trim();
    let n = trimmed.chars().count();
    if n == 0 || n > MAX_OPERATOR_CHARS || trimmed.chars().any(char::is_control) {
        return Err(Invalid::new("operator", "operator must be 1..64 printable characters"));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_required_bounded_and_printable() {
        assert_eq!(parse_reason("  spam wave \n").ok().as_deref(), Some("spam wave"));
        assert!(parse_reason("   ").is_err());
        assert!(parse_reason(&"x".repeat(501)).is_err());
        assert!(parse_reason(&"é".repeat(500)).is_ok(), "characters, not bytes");
        assert!(parse_reason("a\u{0007}b").is_err());
        assert!(parse_reason("line one\nline two").is_ok());
    }

    #[test]
    fn operators_are_short_printable_names() {
        assert_eq!(parse_operator(" alice@ops ").ok().as_deref(), Some("alice@ops"));
        assert!(parse_operator("").is_err());
        assert!(parse_operator(&"o".repeat(65)).is_err());
        assert!(parse_operator("a\nb").is_err());
    }

    #[test]
    fn targets_name_their_kind() {
        assert_eq!(Target::User(UserId::from_trusted(7)).parts(), ("user", 7));
        assert_eq!(Target::Post(PostId::from_trusted(9)).parts(), ("post", 9));
        assert_eq!(Action::Takedown.as_str(), "takedown");
    }
}
