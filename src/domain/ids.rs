//! Public ids are decimal strings of positive integers below 2^53, so JavaScript clients can
//! hold them as numbers without losing precision, and D1 can bind them as f64 exactly.

/// The largest id we ever hand out or accept (2^53 - 1).
pub const MAX_ID: i64 = (1 << 53) - 1;

/// Parses a canonical id: ASCII digits, no sign, no leading zero, 1..=MAX_ID.
pub fn parse_id(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 16 || text.starts_with('0') {
        return None;
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: i64 = text.parse().ok()?;
    (1..=MAX_ID).contains(&value).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_canonical_ids() {
        assert_eq!(parse_id("1"), Some(1));
        assert_eq!(parse_id("9007199254740991"), Some(MAX_ID));
    }

    #[test]
    fn rejects_everything_else() {
        for bad in ["", "0", "007", "-1", "+1", "1.0", "1e3", " 1", "9007199254740992", "abc", "１"] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
    }
}
