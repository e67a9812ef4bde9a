//! Password hashes: PBKDF2-HMAC-SHA256 (the RustCrypto `pbkdf2` crate), stored as
//! `pbkdf2-sha256$<iterations>$<salt>$<hash>` (base64url), so the cost can be raised later
//! without invalidating stored hashes: each hash carries the iterations it was made with.
//!
//! The cost is a compromise with the Workers CPU budget: [`ITERATIONS`] takes ~0.1 s of wasm
//! CPU, paid once per sign-up and sign-in (never per request: requests carry tokens).

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use sha2::Sha256;

use super::sign::constant_time_eq;

pub const ITERATIONS: u32 = 100_000;
pub const MIN_LEN: usize = 10;
pub const MAX_LEN: usize = 200;
const SCHEME: &str = "pbkdf2-sha256";
const HASH_LEN: usize = 32;

fn derive(password: &str, salt: &[u8], iterations: u32) -> [u8; HASH_LEN] {
    let mut out = [0u8; HASH_LEN];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut out);
    out
}

/// The stored form of `password` with a fresh random `salt` (16 bytes from the caller).
pub fn hash(password: &str, salt: &[u8; 16], iterations: u32) -> String {
    let derived = derive(password, salt, iterations);
    format!("{SCHEME}${iterations}${}${}", B64.encode(salt), B64.encode(derived))
}

/// Whether `password` matches `stored`; an unreadable stored form matches nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    let mut parts = stored.split('$');
    let (Some(SCHEME), Some(iterations), Some(salt), Some(expected), None) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Ok(iterations), Ok(salt), Ok(expected)) =
        (iterations.parse::<u32>(), B64.decode(salt), B64.decode(expected))
    else {
        return false;
    };
    iterations > 0 && constant_time_eq(&derive(password, &salt, iterations), &expected)
}

/// A password as accepted at sign-up: 10..200 characters.
pub fn acceptable(password: &str) -> Result<(), &'static str> {
    match password.chars().count() {
        n if n < MIN_LEN => Err("password must be at least 10 characters"),
        n if n > MAX_LEN => Err("password must be at most 200 characters"),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let stored = hash("correct horse battery", &[7; 16], 1_000);
        assert!(stored.starts_with("pbkdf2-sha256$1000$"));
        assert!(verify("correct horse battery", &stored));
        assert!(!verify("correct horse batterz", &stored));
        assert_ne!(stored, hash("correct horse battery", &[8; 16], 1_000), "salted");
    }

    #[test]
    fn rfc_7914_test_vector() {
        // PBKDF2-HMAC-SHA256, P = "passwd", S = "salt", c = 1, dkLen = 64 (first 32 bytes).
        let got = derive("passwd", b"salt", 1);
        assert_eq!(got[..4], [0x55, 0xac, 0x04, 0x6e]);
    }

    #[test]
    fn unreadable_stored_forms_match_nothing() {
        for stored in ["", "pbkdf2-sha256$x$aa$bb", "md5$1$aa$bb", "pbkdf2-sha256$0$aa$bb", "a$b$c$d$e"] {
            assert!(!verify("anything at all", stored), "{stored}");
        }
    }

    #[test]
    fn length_limits() {
        assert!(acceptable("123456789").is_err());
        assert!(acceptable("1234567890").is_ok());
        assert!(acceptable(&"x".repeat(201)).is_err());
    }
}
