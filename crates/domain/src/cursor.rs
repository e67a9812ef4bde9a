//! Sort keys and signed, opaque pagination cursors.
//!
//! Every list is ordered by a *full* sort key `(primary, id)` (e.g. `(created_at, post_id)`),
//! so two items never compare equal and ties on time are broken by id. A cursor carries the key
//! of the last item *scanned* (not necessarily returned), the list it belongs to and the viewer,
//! all under an HMAC. Offsets are never used, so inserts and deletes ahead of the cursor cannot
//! shift a page.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::Mac;
use serde::{Deserialize, Serialize};

use super::ids::{UserId, MAX_ID};
use super::sign::{hmac, HmacSha256};

/// Bumped whenever the payload layout changes; older cursors then answer `invalid_cursor`.
pub const CURSOR_VERSION: u8 = 1;
/// Truncated tag length: 128 bits is plenty against forgery and keeps cursors short.
const TAG_LEN: usize = 16;

/// A position in a list: `(primary, id)`, compared lexicographically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SortKey {
    pub primary: i64,
    pub id: i64,
}

impl SortKey {
    /// Above every real key (times and ids are below 2^53): the start of a newest-first list.
    pub const TOP: SortKey = SortKey { primary: MAX_ID, id: MAX_ID };
    /// Below every real key (times are >= 0, ids >= 1): the start of an oldest-first list.
    pub const BOTTOM: SortKey = SortKey { primary: -1, id: 0 };

    pub fn new(primary: i64, id: i64) -> Self {
        Self { primary, id }
    }
}

/// Which direction a list runs; it decides which side of a cursor the next page lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    NewestFirst,
    OldestFirst,
}

impl Order {
    /// Whether `key` comes strictly after `cursor` in this order (i.e. belongs on a later page).
    pub fn is_after(self, key: SortKey, cursor: SortKey) -> bool {
        match self {
            Order::NewestFirst => key < cursor,
            Order::OldestFirst => key > cursor,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    v: u8,
    /// Viewer the cursor was issued to.
    u: i64,
    /// List identity, e.g. `posts:42` or `comments:7:newest`.
    l: String,
    k: (i64, i64),
    /// The key lay below the list's window floor when the cursor was issued (home feed only).
    /// Absent in cursors that never say so, and in those issued before it existed: they decode
    /// as `false`, so they stay valid without a version bump.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    f: bool,
    /// The time a ranked list's scores are taken at (top comments: `domain/top.rs`), fixed by
    /// its first page. Absent from every other cursor, so theirs are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    s: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorError {
    Malformed,
    BadSignature,
    WrongVersion,
    WrongViewer,
    WrongList,
}

/// Signs and verifies cursors with a key derived from the service secret.
#[derive(Clone)]
pub struct CursorCodec {
    key: Vec<u8>,
}

impl CursorCodec {
    /// Derives a cursor-only key so a cursor tag can never double as a token signature.
    pub fn new(secret: &[u8]) -> Self {
        let mut mac = hmac(secret);
        mac.update(b"edgefeed/cursor-key/v1");
        Self { key: mac.finalize().into_bytes().to_vec() }
    }

    fn mac(&self) -> HmacSha256 {
        hmac(&self.key)
    }

    pub fn encode(&self, viewer: UserId, list: &str, key: SortKey) -> String {
        self.encode_below_floor(viewer, list, key, false)
    }

    /// As [`Self::encode`], saying (under the same signature) whether the key lay below the
    /// list's window floor: the home feed's next page then skips the window.
    pub fn encode_below_floor(&self, viewer: UserId, list: &str, key: SortKey, below_floor: bool) -> String {
        self.sign(viewer, list, key, below_floor, None)
    }

    /// As [`Self::encode`], with the snapshot time a ranked list's scores are taken at.
    pub fn encode_at(&self, viewer: UserId, list: &str, key: SortKey, snapshot: i64) -> String {
        self.sign(viewer, list, key, false, Some(snapshot))
    }

    fn sign(&self, viewer: UserId, list: &str, key: SortKey, f: bool, s: Option<i64>) -> String {
        let payload = Payload {
            v: CURSOR_VERSION,
            u: viewer.get(),
            l: list.to_owned(),
            k: (key.primary, key.id),
            f,
            s,
        };
        let body = B64.encode(serde_json::to_vec(&payload).unwrap_or_default());
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        let tag = mac.finalize().into_bytes();
        format!("{body}.{}", B64.encode(&tag[..TAG_LEN]))
    }

    pub fn decode(&self, viewer: UserId, list: &str, cursor: &str) -> Result<SortKey, CursorError> {
        self.decode_below_floor(viewer, list, cursor).map(|(key, _)| key)
    }

    /// The key, and whether the cursor says it lay below the list's window floor.
    pub fn decode_below_floor(
        &self,
        viewer: UserId,
        list: &str,
        cursor: &str,
    ) -> Result<(SortKey, bool), CursorError> {
        self.verify(viewer, list, cursor).map(|p| (SortKey::new(p.k.0, p.k.1), p.f))
    }

    /// The key and snapshot of a ranked list's cursor ([`Self::encode_at`]); one without a
    /// snapshot is not one of its cursors.
    pub fn decode_at(&self, viewer: UserId, list: &str, cursor: &str) -> Result<(SortKey, i64), CursorError> {
        let payload = self.verify(viewer, list, cursor)?;
        let snapshot = payload.s.ok_or(CursorError::Malformed)?;
        Ok((SortKey::new(payload.k.0, payload.k.1), snapshot))
    }

    fn verify(&self, viewer: UserId, list: &str, cursor: &str) -> Result<Payload, CursorError> {
        let (body, tag) = cursor.split_once('.').ok_or(CursorError::Malformed)?;
        let tag = B64.decode(tag).map_err(|_| CursorError::Malformed)?;
        if tag.len() != TAG_LEN {
            return Err(CursorError::BadSignature);
        }
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        // Constant-time comparison of the truncated tag.
        mac.verify_truncated_left(&tag).map_err(|_| CursorError::BadSignature)?;
        let raw = B64.decode(body).map_err(|_| CursorError::Malformed)?;
        let payload: Payload = serde_json::from_slice(&raw).map_err(|_| CursorError::Malformed)?;
        if payload.v != CURSOR_VERSION {
            return Err(CursorError::WrongVersion);
        }
        if payload.u != viewer.get() {
            return Err(CursorError::WrongViewer);
        }
        if payload.l != list {
            return Err(CursorError::WrongList);
        }
        Ok(payload)
    }
}

/// Splits a fetched run of `limit + 1` rows into the page and the cursor key of its last item,
/// which is `None` when the extra row shows the list is exhausted.
pub fn page_of<T>(
    mut rows: Vec<T>,
    limit: usize,
    key_of: impl Fn(&T) -> SortKey,
) -> (Vec<T>, Option<SortKey>) {
    if rows.len() > limit {
        rows.truncate(limit);
        let last = rows.last().map(&key_of);
        (rows, last)
    } else {
        (rows, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> CursorCodec {
        CursorCodec::new(b"test-secret")
    }

    const V5: UserId = UserId::from_trusted(5);
    const V6: UserId = UserId::from_trusted(6);

    #[test]
    fn round_trip() {
        let c = codec();
        let key = SortKey::new(1_795_940_102_123, 77);
        let cursor = c.encode(V5, "posts:9", key);
        assert_eq!(c.decode(V5, "posts:9", &cursor), Ok(key));
    }

    #[test]
    fn the_below_floor_mark_is_signed_and_older_cursors_decode_without_it() {
        let c = codec();
        let key = SortKey::new(1_795_940_102_123, 77);
        let marked = c.encode_below_floor(V5, "feed", key, true);
        assert_eq!(c.decode_below_floor(V5, "feed", &marked), Ok((key, true)));
        assert_eq!(c.decode(V5, "feed", &marked), Ok(key));
        // A cursor without the mark: its payload is the one issued before the mark existed.
        let plain = c.encode(V5, "feed", key);
        assert_eq!(c.decode_below_floor(V5, "feed", &plain), Ok((key, false)));
        let (body, _) = plain.split_once('.').unwrap_or_default();
        let raw = B64.decode(body).unwrap_or_default();
        assert_eq!(String::from_utf8_lossy(&raw), r#"{"v":1,"u":5,"l":"feed","k":[1795940102123,77]}"#);
        // The mark cannot be added to a cursor without its signature.
        let forged = br#"{"v":1,"u":5,"l":"feed","k":[1795940102123,77],"f":true}"#;
        let (_, tag) = plain.split_once('.').unwrap_or_default();
        let forged = format!("{}.{tag}", B64.encode(forged));
        assert_eq!(c.decode_below_floor(V5, "feed", &forged), Err(CursorError::BadSignature));
    }

    #[test]
    fn a_snapshot_is_signed_and_required_where_asked_for() {
        let c = codec();
        let key = SortKey::new(4_598_175_219_545_276_416, 77);
        let ranked = c.encode_at(V5, "comments:9:top", key, 1_795_940_102_123);
        assert_eq!(c.decode_at(V5, "comments:9:top", &ranked), Ok((key, 1_795_940_102_123)));
        let plain = c.encode(V5, "comments:9:top", key);
        assert_eq!(c.decode_at(V5, "comments:9:top", &plain), Err(CursorError::Malformed));
        assert_eq!(c.decode_at(V6, "comments:9:top", &ranked), Err(CursorError::WrongViewer));
        let (body, tag) = ranked.split_once('.').unwrap_or_default();
        let raw = String::from_utf8_lossy(&B64.decode(body).unwrap_or_default()).replace("123}", "124}");
        let forged = format!("{}.{tag}", B64.encode(raw));
        assert_eq!(c.decode_at(V5, "comments:9:top", &forged), Err(CursorError::BadSignature));
    }

    #[test]
    fn rejects_foreign_viewer_list_and_secret() {
        let c = codec();
        let cursor = c.encode(V5, "posts:9", SortKey::new(1, 2));
        assert_eq!(c.decode(V6, "posts:9", &cursor), Err(CursorError::WrongViewer));
        assert_eq!(c.decode(V5, "posts:10", &cursor), Err(CursorError::WrongList));
        let other = CursorCodec::new(b"other-secret");
        assert_eq!(other.decode(V5, "posts:9", &cursor), Err(CursorError::BadSignature));
    }

    #[test]
    fn rejects_any_single_character_change() {
        let c = codec();
        let cursor = c.encode(V5, "posts:9", SortKey::new(1_795_940_102_123, 77));
        for i in 0..cursor.len() {
            let mut bytes = cursor.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let tampered = String::from_utf8_lossy(&bytes).into_owned();
            if tampered != cursor {
                assert!(c.decode(V5, "posts:9", &tampered).is_err(), "accepted change at {i}");
            }
        }
        for junk in ["", ".", "abc", "abc.def", "..", "%%%.%%%"] {
            assert!(c.decode(V5, "posts:9", junk).is_err());
        }
    }

    #[test]
    fn sort_order_breaks_ties_by_id() {
        let a = SortKey::new(100, 1);
        let b = SortKey::new(100, 2);
        assert!(Order::NewestFirst.is_after(a, b));
        assert!(Order::OldestFirst.is_after(b, a));
        assert!(!Order::NewestFirst.is_after(b, b));
    }

    #[test]
    fn page_of_reports_exhaustion_exactly() {
        let key = |n: &i64| SortKey::new(*n, *n);
        assert_eq!(page_of(vec![3, 2, 1], 2, key), (vec![3, 2], Some(SortKey::new(2, 2))));
        assert_eq!(page_of(vec![3, 2], 2, key), (vec![3, 2], None));
        assert_eq!(page_of(Vec::<i64>::new(), 2, key), (vec![], None));
    }
}
