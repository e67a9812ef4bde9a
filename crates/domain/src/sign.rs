//! HMAC-SHA256, the one signing primitive (tokens, cursors, secret comparison).

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub type HmacSha256 = Hmac<Sha256>;

/// HMAC accepts keys of any length (longer ones are hashed first), so this cannot fail.
pub fn hmac(key: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(key).expect("any key length") // ok: infallible
}

/// Constant-time equality for secrets such as the admin token.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // Compare MACs of both sides so neither the length nor the first differing byte leaks.
    let tag = |x: &[u8]| {
        let mut m = hmac(b"edgefeed/constant-time-eq");
        m.update(x);
        m.finalize().into_bytes()
    };
    let (ta, tb) = (tag(a), tag(b));
    ta.iter().zip(tb.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
