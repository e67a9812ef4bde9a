//! Content warnings: a post's (or reply's) `spoiler_text`, shown in place of the text until the
//! reader opens it, and `sensitive`. As in Mastodon, a warning text makes the status sensitive.

use super::validate::Invalid;

/// A warning text is a headline, not a second body.
pub const MAX_SPOILER_CHARS: usize = 500;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContentWarning {
    pub spoiler_text: String,
    pub sensitive: bool,
}

/// The warning text: trimmed, at most [`MAX_SPOILER_CHARS`], no control characters but line
/// breaks.
pub fn spoiler_text(text: &str) -> Result<String, Invalid> {
    let trimmed = text.trim();
    if trimmed.chars().count() > MAX_SPOILER_CHARS {
        return Err(Invalid::new(
            "spoiler_text",
            format!("spoiler_text must be at most {MAX_SPOILER_CHARS} characters"),
        ));
    }
    if trimmed.chars().any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t') {
        return Err(Invalid::new("spoiler_text", "spoiler_text must not contain control characters"));
    }
    Ok(trimmed.to_owned())
}

impl ContentWarning {
    /// A new status's warning from its fields (absent: none).
    pub fn parse(spoiler: Option<&str>, sensitive: Option<bool>) -> Result<Self, Invalid> {
        let spoiler_text = spoiler.map(spoiler_text).transpose()?.unwrap_or_default();
        let sensitive = sensitive.unwrap_or(false) || !spoiler_text.is_empty();
        Ok(Self { spoiler_text, sensitive })
    }
}

/// An edit of a warning: each field given replaces the stored one, an absent one stays; the
/// status stays sensitive while it has a warning text (the store applies that to the row).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WarningEdit {
    pub spoiler_text: Option<String>,
    pub sensitive: Option<bool>,
}

impl WarningEdit {
    pub fn parse(spoiler: Option<&str>, sensitive: Option<bool>) -> Result<Self, Invalid> {
        Ok(Self { spoiler_text: spoiler.map(spoiler_text).transpose()?, sensitive })
    }

    pub fn is_empty(&self) -> bool {
        self.spoiler_text.is_none() && self.sensitive.is_none()
    }

    /// The warning after the edit of `stored`.
    pub fn apply(&self, stored: &ContentWarning) -> ContentWarning {
        let spoiler_text = self.spoiler_text.clone().unwrap_or_else(|| stored.spoiler_text.clone());
        let sensitive = self.sensitive.unwrap_or(stored.sensitive) || !spoiler_text.is_empty();
        ContentWarning { spoiler_text, sensitive }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cw(text: &str, sensitive: bool) -> ContentWarning {
        ContentWarning { spoiler_text: text.into(), sensitive }
    }

    #[test]
    fn new_warnings() {
        assert_eq!(ContentWarning::parse(None, None), Ok(cw("", false)));
        assert_eq!(ContentWarning::parse(Some(" spoilers "), None), Ok(cw("spoilers", true)));
        assert_eq!(ContentWarning::parse(Some("x"), Some(false)), Ok(cw("x", true)));
        assert_eq!(ContentWarning::parse(Some(""), Some(true)), Ok(cw("", true)));
        assert_eq!(ContentWarning::parse(Some("  "), None), Ok(cw("", false)));
        let long = "a".repeat(MAX_SPOILER_CHARS + 1);
        assert_eq!(ContentWarning::parse(Some(&long), None).unwrap_err().field, "spoiler_text");
        assert!(ContentWarning::parse(Some(&"é".repeat(MAX_SPOILER_CHARS)), None).is_ok());
        assert!(ContentWarning::parse(Some("a\u{7}b"), None).is_err());
        assert_eq!(ContentWarning::parse(Some("a\nb"), None), Ok(cw("a\nb", true)));
    }

    #[test]
    fn edits() {
        let stored = cw("old", true);
        let edit = |s: Option<&str>, b| WarningEdit::parse(s, b).unwrap().apply(&stored);
        assert_eq!(edit(None, None), stored);
        assert_eq!(edit(Some(""), None), cw("", true));
        assert_eq!(edit(Some(""), Some(false)), cw("", false));
        assert_eq!(edit(None, Some(false)), cw("old", true), "a warning text keeps it sensitive");
        assert_eq!(edit(Some("new"), None), cw("new", true));
        assert!(WarningEdit::default().is_empty());
        assert!(!WarningEdit::parse(None, Some(true)).unwrap().is_empty());
    }
}
