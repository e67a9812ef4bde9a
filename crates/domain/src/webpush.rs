//! Web Push's cryptography, without I/O: a message encrypted for one subscription (RFC 8291:
//! ECDH on P-256 with the subscription's `p256dh`, HKDF-SHA-256 with its `auth` secret, the
//! `aes128gcm` content coding of RFC 8188 in one record) and the server's VAPID signature
//! (RFC 8292: an ES256 JWT for the push service's origin). Every random byte (the message's
//! ephemeral key and salt) is the caller's, so the RFC's test vector runs here byte for byte.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes128Gcm, Nonce};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use hkdf::Hkdf;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::{PublicKey, SecretKey};
use sha2::Sha256;

/// An uncompressed P-256 point: `0x04 || x || y`.
pub const POINT_LEN: usize = 65;
/// The subscription's authentication secret (RFC 8291 section 3.2: 16 octets).
pub const AUTH_LEN: usize = 16;
/// The salt of the `aes128gcm` header (RFC 8188 section 2.1).
pub const SALT_LEN: usize = 16;
/// A P-256 secret scalar, big-endian.
pub const SCALAR_LEN: usize = 32;
/// The record size declared in the header: one record holds the whole message, which must fit
/// it (RFC 8291 section 4: push services need accept no more than 4096 octets of payload).
pub const RECORD_SIZE: u32 = 4096;
/// The header (salt, record size, key id length, the sender's public key) and the AEAD tag.
const HEADER_LEN: usize = SALT_LEN + 4 + 1 + POINT_LEN;
const TAG_LEN: usize = 16;
/// The largest plaintext one record carries: the record less its tag and delimiter octet.
pub const MAX_PLAINTEXT: usize = RECORD_SIZE as usize - TAG_LEN - 1 - HEADER_LEN;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushCryptoError {
    /// Not an uncompressed point on P-256.
    BadPublicKey,
    /// Not a scalar in `1..n` (32 random octets are one but for a 2^-32 chance).
    BadSecretKey,
    /// The message does not fit one record.
    TooLong,
    /// A message that does not decrypt (wrong key, altered bytes, no delimiter).
    Undecryptable,
}

/// Decodes base64 as clients send keys: URL-safe or standard alphabet, padded or not (masto.js
/// sends standard base64 with padding, browsers' `PushSubscription.toJSON()` URL-safe without).
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    [URL_SAFE_NO_PAD, URL_SAFE, STANDARD_NO_PAD, STANDARD].iter().find_map(|engine| engine.decode(text).ok())
}

pub fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A subscription's `p256dh`: a valid uncompressed P-256 public key.
pub fn parse_p256dh(text: &str) -> Option<[u8; POINT_LEN]> {
    let bytes: [u8; POINT_LEN] = decode_base64(text)?.try_into().ok()?;
    (bytes[0] == 0x04 && PublicKey::from_sec1_bytes(&bytes).is_ok()).then_some(bytes)
}

/// A subscription's `auth`: exactly 16 octets.
pub fn parse_auth(text: &str) -> Option<[u8; AUTH_LEN]> {
    decode_base64(text)?.try_into().ok()
}

/// The uncompressed public point of a secret scalar.
pub fn public_of(secret: &[u8; SCALAR_LEN]) -> Result<[u8; POINT_LEN], PushCryptoError> {
    let secret = SecretKey::from_slice(secret).map_err(|_| PushCryptoError::BadSecretKey)?;
    point_bytes(&secret.public_key())
}

fn point_bytes(key: &PublicKey) -> Result<[u8; POINT_LEN], PushCryptoError> {
    key.to_encoded_point(false).as_bytes().try_into().map_err(|_| PushCryptoError::BadPublicKey)
}

/// The content encryption key and nonce of RFC 8291 section 3.4 for one message.
fn derive(
    ecdh_secret: &[u8],
    auth: &[u8; AUTH_LEN],
    (ua_public, as_public): (&[u8; POINT_LEN], &[u8; POINT_LEN]),
    salt: &[u8; SALT_LEN],
) -> ([u8; 16], [u8; 12]) {
    let mut key_info = Vec::with_capacity(14 + 2 * POINT_LEN);
    key_info.extend_from_slice(b"WebPush: info\0");
    key_info.extend_from_slice(ua_public);
    key_info.extend_from_slice(as_public);
    let mut ikm = [0u8; 32];
    // HKDF-Expand's output lengths here are constants far under its 255 * 32 limit.
    let _ = Hkdf::<Sha256>::new(Some(auth), ecdh_secret).expand(&key_info, &mut ikm);
    let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let (mut cek, mut nonce) = ([0u8; 16], [0u8; 12]);
    let _ = prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek);
    let _ = prk.expand(b"Content-Encoding: nonce\0", &mut nonce);
    (cek, nonce)
}

fn ecdh(secret: &SecretKey, public: &[u8]) -> Result<Vec<u8>, PushCryptoError> {
    let public = PublicKey::from_sec1_bytes(public).map_err(|_| PushCryptoError::BadPublicKey)?;
    let shared = p256::ecdh::diffie_hellman(secret.to_nonzero_scalar(), public.as_affine());
    Ok(shared.raw_secret_bytes().to_vec())
}

/// What one message's encryption takes beside its plaintext: the subscription's keys, and the
/// sender's fresh randomness (an ephemeral secret scalar and a salt, never reused).
#[derive(Debug, Clone, Copy)]
pub struct Sealing<'a> {
    pub ua_public: &'a [u8; POINT_LEN],
    pub auth: &'a [u8; AUTH_LEN],
    pub ephemeral_secret: &'a [u8; SCALAR_LEN],
    pub salt: &'a [u8; SALT_LEN],
}

/// The `aes128gcm` body of one Web Push message (RFC 8291 section 4): header, then one record of
/// `plaintext`, the last-record delimiter `0x02` and `padding` zero octets.
pub fn encrypt(plaintext: &[u8], padding: usize, sealing: Sealing<'_>) -> Result<Vec<u8>, PushCryptoError> {
    if plaintext.len() + padding > MAX_PLAINTEXT {
        return Err(PushCryptoError::TooLong);
    }
    let secret =
        SecretKey::from_slice(sealing.ephemeral_secret).map_err(|_| PushCryptoError::BadSecretKey)?;
    let as_public = point_bytes(&secret.public_key())?;
    let shared = ecdh(&secret, sealing.ua_public)?;
    let (cek, nonce) = derive(&shared, sealing.auth, (sealing.ua_public, &as_public), sealing.salt);
    let mut record = Vec::with_capacity(plaintext.len() + 1 + padding);
    record.extend_from_slice(plaintext);
    record.push(0x02);
    record.resize(plaintext.len() + 1 + padding, 0);
    let cipher = Aes128Gcm::new(&cek.into());
    let sealed = cipher
        .encrypt(Nonce::from_slice(&nonce), Payload { msg: &record, aad: &[] })
        .map_err(|_| PushCryptoError::TooLong)?;
    let mut body = Vec::with_capacity(HEADER_LEN + sealed.len());
    body.extend_from_slice(sealing.salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(POINT_LEN as u8);
    body.extend_from_slice(&as_public);
    body.extend_from_slice(&sealed);
    Ok(body)
}

/// The user agent's side of [`encrypt`] (what a browser does with a message): the plaintext of
/// a one-record `aes128gcm` body, for the subscriber holding `ua_secret` and `auth`.
pub fn decrypt(
    body: &[u8],
    ua_secret: &[u8; SCALAR_LEN],
    auth: &[u8; AUTH_LEN],
) -> Result<Vec<u8>, PushCryptoError> {
    let bad = PushCryptoError::Undecryptable;
    if body.len() < HEADER_LEN + TAG_LEN || usize::from(body[SALT_LEN + 4]) != POINT_LEN {
        return Err(bad);
    }
    let salt: [u8; SALT_LEN] = body[..SALT_LEN].try_into().map_err(|_| bad)?;
    let as_public: [u8; POINT_LEN] = body[SALT_LEN + 5..HEADER_LEN].try_into().map_err(|_| bad)?;
    let secret = SecretKey::from_slice(ua_secret).map_err(|_| PushCryptoError::BadSecretKey)?;
    let ua_public = point_bytes(&secret.public_key())?;
    let shared = ecdh(&secret, &as_public)?;
    let (cek, nonce) = derive(&shared, auth, (&ua_public, &as_public), &salt);
    let cipher = Aes128Gcm::new(&cek.into());
    let mut record = cipher
        .decrypt(Nonce::from_slice(&nonce), Payload { msg: &body[HEADER_LEN..], aad: &[] })
        .map_err(|_| bad)?;
    // The padding is zeros after the delimiter; the last record's delimiter is 0x02.
    let end = record.iter().rposition(|&b| b != 0).ok_or(bad)?;
    if record[end] != 0x02 {
        return Err(bad);
    }
    record.truncate(end);
    Ok(record)
}

/// The server's VAPID key pair (RFC 8292), from its configured secret scalar.
#[derive(Clone)]
pub struct VapidKey {
    signing: SigningKey,
    public: [u8; POINT_LEN],
}

impl std::fmt::Debug for VapidKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VapidKey({})", self.public_key())
    }
}

/// A VAPID token lives at most 24 hours (RFC 8292 section 2); ours 12, so a push service's
/// clock running ahead still accepts it.
pub const VAPID_TTL_SECS: i64 = 12 * 60 * 60;

impl VapidKey {
    /// The secret as configured: the raw 32-octet scalar in base64url (or standard base64).
    pub fn parse(text: &str) -> Option<VapidKey> {
        let bytes: [u8; SCALAR_LEN] = decode_base64(text)?.try_into().ok()?;
        let public = public_of(&bytes).ok()?;
        let signing = SigningKey::from_slice(&bytes).ok()?;
        Some(VapidKey { signing, public })
    }

    /// The public key as Mastodon publishes it (`vapid_key`, `server_key`): the uncompressed
    /// point in base64url.
    pub fn public_key(&self) -> String {
        base64url(&self.public)
    }

    /// The `Authorization` header of a push to `audience` (the endpoint's origin), signed at
    /// `now_secs` by `subject` (a `mailto:` or `https:` URI naming the operator).
    pub fn authorization(&self, audience: &str, subject: &str, now_secs: i64) -> String {
        let header = base64url(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({ "aud": audience, "exp": now_secs + VAPID_TTL_SECS, "sub": subject });
        let claims = base64url(claims.to_string().as_bytes());
        let signing_input = format!("{header}.{claims}");
        let signature: Signature = self.signing.sign(signing_input.as_bytes());
        let token = format!("{signing_input}.{}", base64url(&signature.to_bytes()));
        format!("vapid t={token}, k={}", self.public_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;

    fn b64(text: &str) -> Vec<u8> {
        decode_base64(text).unwrap_or_default()
    }

    fn array<const N: usize>(text: &str) -> [u8; N] {
        b64(text).try_into().unwrap_or([0; N])
    }

    // RFC 8291 Appendix A.
    const PLAINTEXT: &str = "When I grow up, I want to be a watermelon";
    const AS_PRIVATE: &str = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
    const AS_PUBLIC: &str =
        "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
    const UA_PRIVATE: &str = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
    const UA_PUBLIC: &str =
        "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
    const SALT: &str = "DGv6ra1nlYgDCS1FRnbzlw";
    const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";
    const MESSAGE: &str = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";

    fn sealing<'a>(
        ua_public: &'a [u8; POINT_LEN],
        auth: &'a [u8; AUTH_LEN],
        secret: &'a [u8; SCALAR_LEN],
        salt: &'a [u8; SALT_LEN],
    ) -> Sealing<'a> {
        Sealing { ua_public, auth, ephemeral_secret: secret, salt }
    }

    #[test]
    fn the_rfc_8291_test_vector_encrypts_byte_for_byte() {
        let (ua_public, auth) = (array(UA_PUBLIC), array(AUTH));
        let (secret, salt) = (array(AS_PRIVATE), array(SALT));
        assert_eq!(public_of(&secret).map(|p| base64url(&p)), Ok(AS_PUBLIC.to_string()));
        let body = encrypt(PLAINTEXT.as_bytes(), 0, sealing(&ua_public, &auth, &secret, &salt));
        assert_eq!(body.map(|b| base64url(&b)), Ok(MESSAGE.to_string()));
        let opened = decrypt(&b64(MESSAGE), &array(UA_PRIVATE), &auth);
        assert_eq!(opened, Ok(PLAINTEXT.as_bytes().to_vec()));
    }

    #[test]
    fn a_padded_message_round_trips_and_a_wrong_key_or_a_flipped_bit_does_not_open_it() {
        let ua_secret: [u8; SCALAR_LEN] = array(UA_PRIVATE);
        let ua_public = public_of(&ua_secret).unwrap_or([0; POINT_LEN]);
        let (auth, secret, salt) = ([7u8; AUTH_LEN], [9u8; SCALAR_LEN], [3u8; SALT_LEN]);
        let text = br#"{"notification_id":"42","notification_type":"follow"}"#;
        let body = encrypt(text, 100, sealing(&ua_public, &auth, &secret, &salt)).unwrap_or_default();
        assert_eq!(body.len(), HEADER_LEN + text.len() + 1 + 100 + TAG_LEN);
        assert_eq!(decrypt(&body, &ua_secret, &auth), Ok(text.to_vec()));
        assert_eq!(decrypt(&body, &ua_secret, &[8u8; AUTH_LEN]), Err(PushCryptoError::Undecryptable));
        let mut flipped = body.clone();
        *flipped.last_mut().unwrap_or(&mut 0) ^= 1;
        assert_eq!(decrypt(&flipped, &ua_secret, &auth), Err(PushCryptoError::Undecryptable));
        assert_eq!(decrypt(&body[..40], &ua_secret, &auth), Err(PushCryptoError::Undecryptable));
        let long = vec![b'x'; MAX_PLAINTEXT + 1];
        let too_long = encrypt(&long, 0, sealing(&ua_public, &auth, &secret, &salt));
        assert_eq!(too_long, Err(PushCryptoError::TooLong));
        let most = encrypt(&long[1..], 0, sealing(&ua_public, &auth, &secret, &salt)).unwrap_or_default();
        assert_eq!(most.len(), RECORD_SIZE as usize, "the largest message fills exactly one record");
    }

    #[test]
    fn keys_are_checked_as_subscriptions_send_them() {
        assert!(parse_p256dh(UA_PUBLIC).is_some());
        let standard = STANDARD.encode(b64(UA_PUBLIC));
        assert_eq!(parse_p256dh(&standard), parse_p256dh(UA_PUBLIC), "standard base64 with padding");
        let mut off_curve = b64(UA_PUBLIC);
        off_curve[64] ^= 1;
        assert_eq!(parse_p256dh(&base64url(&off_curve)), None, "not on the curve");
        assert_eq!(parse_p256dh(&base64url(&b64(UA_PUBLIC)[..33])), None, "compressed or short");
        assert_eq!(parse_p256dh("not base64!"), None);
        assert_eq!(parse_auth(AUTH), Some(array(AUTH)));
        assert_eq!(parse_auth(&STANDARD.encode([1u8; 16])), Some([1u8; 16]));
        assert_eq!(parse_auth(&base64url(&[1u8; 15])), None);
        assert_eq!(public_of(&[0u8; SCALAR_LEN]), Err(PushCryptoError::BadSecretKey));
        assert_eq!(public_of(&[0xffu8; SCALAR_LEN]), Err(PushCryptoError::BadSecretKey));
    }

    #[test]
    fn the_vapid_header_is_an_es256_jwt_for_the_audience_that_verifies_with_the_public_key() {
        let key = VapidKey::parse(AS_PRIVATE).expect("a valid scalar");
        assert_eq!(key.public_key(), AS_PUBLIC);
        assert!(VapidKey::parse("short").is_none());
        let header = key.authorization("https://push.example.net", "mailto:ops@example.org", 1_700_000_000);
        let rest = header.strip_prefix("vapid t=").unwrap_or_default();
        let (token, k) = rest.split_once(", k=").unwrap_or_default();
        assert_eq!(k, AS_PUBLIC);
        let (signing_input, signature) = token.rsplit_once('.').unwrap_or_default();
        let (head, claims) = signing_input.split_once('.').unwrap_or_default();
        let head: serde_json::Value = serde_json::from_slice(&b64(head)).unwrap_or_default();
        assert_eq!(head["alg"], "ES256");
        let claims: serde_json::Value = serde_json::from_slice(&b64(claims)).unwrap_or_default();
        assert_eq!(claims["aud"], "https://push.example.net");
        assert_eq!(claims["sub"], "mailto:ops@example.org");
        assert_eq!(claims["exp"], 1_700_000_000 + VAPID_TTL_SECS);
        let verifying = VerifyingKey::from_sec1_bytes(&b64(AS_PUBLIC)).expect("the public key");
        let signature = Signature::from_slice(&b64(signature)).expect("64 octets r || s");
        assert!(verifying.verify(signing_input.as_bytes(), &signature).is_ok());
        assert!(verifying.verify(b"something else", &signature).is_err());
    }
}
