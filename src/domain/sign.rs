//! HMAC-SHA256, the one signing primitive (tokens, cursors, secret comparison).

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub type HmacSha256 = Hmac<Sha256>;

/// HMAC accepts keys of any length (longer ones are hashed first), so this cannot fail.
pub fn hmac(key: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(key).expect("any key length") // ok: infallible
}
