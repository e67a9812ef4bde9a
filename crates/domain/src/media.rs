//! Media attachments: what an upload may be (an image, told by its bytes, never by its name or
//! the content type the client claims), its dimensions read from the header (no decoding: the
//! wasm stays small), the parameters an upload and a status carry, and the stable path it is
//! served from. Storage is R2 (bytes) and D1 (`media` rows, the post's `media` column).

use serde::{Deserialize, Serialize};

use super::ids::PostId;
use super::validate::Invalid;

/// The largest image accepted (Mastodon's default is 16 MB; a Worker holds the upload in
/// memory, 128 MB per isolate, so a few concurrent uploads of this size are safe).
pub const MAX_IMAGE_BYTES: usize = 8 * 1024 * 1024;
/// Attachments per status (Mastodon's `max_media_attachments`).
pub const MAX_ATTACHMENTS: usize = 4;
/// A description (alt text), as Mastodon limits it.
pub const MAX_DESCRIPTION_CHARS: usize = 1500;
/// The largest width or height accepted (a header claiming more is a decompression bomb or a lie).
pub const MAX_DIMENSION: u32 = 16_384;

/// The image formats accepted, each told by its signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageKind {
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
            Self::Gif => "gif",
            Self::Webp => "webp",
        }
    }

    /// As stored (`media.kind`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpeg",
            Self::Gif => "gif",
            Self::Webp => "webp",
        }
    }

    pub fn from_name(name: &str) -> Option<ImageKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    pub const ALL: [ImageKind; 4] = [Self::Png, Self::Jpeg, Self::Gif, Self::Webp];
}

/// What the bytes of an accepted image say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    pub kind: ImageKind,
    pub width: u32,
    pub height: u32,
}

/// Why an upload is refused (a 422 on `file`).
pub fn refusal(reason: impl Into<String>) -> Invalid {
    Invalid::new("file", reason)
}

/// The image the bytes are, with its dimensions, or why they are not one we accept.
pub fn sniff(bytes: &[u8]) -> Result<ImageInfo, Invalid> {
    if bytes.is_empty() {
        return Err(refusal("the file is empty"));
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(refusal(format!("the file is larger than {MAX_IMAGE_BYTES} bytes")));
    }
    let kind = kind_of(bytes).ok_or_else(|| refusal("only PNG, JPEG, GIF and WebP images are accepted"))?;
    let dimensions = match kind {
        ImageKind::Png => png_size(bytes),
        ImageKind::Jpeg => jpeg_size(bytes),
        ImageKind::Gif => gif_size(bytes),
        ImageKind::Webp => webp_size(bytes),
    };
    let (width, height) = dimensions.ok_or_else(|| refusal("the image's header is malformed"))?;
    if width == 0 || height == 0 || width > MAX_DIMENSION || height > MAX_DIMENSION {
        return Err(refusal(format!("an image's sides must be 1 to {MAX_DIMENSION} pixels")));
    }
    Ok(ImageInfo { kind, width, height })
}

fn kind_of(bytes: &[u8]) -> Option<ImageKind> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageKind::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageKind::Jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(ImageKind::Gif)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(ImageKind::Webp)
    } else {
        None
    }
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?])))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?])))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(*b.get(at)?) | u32::from(*b.get(at + 1)?) << 8 | u32::from(*b.get(at + 2)?) << 16)
}

/// PNG: the first chunk must be IHDR (width, height: big-endian u32 at 16 and 20).
fn png_size(b: &[u8]) -> Option<(u32, u32)> {
    if b.get(12..16)? != b"IHDR" {
        return None;
    }
    let word = |at: usize| Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?));
    Some((word(16)?, word(20)?))
}

/// GIF: the logical screen's width and height (little-endian u16 at 6 and 8).
fn gif_size(b: &[u8]) -> Option<(u32, u32)> {
    Some((le16(b, 6)?, le16(b, 8)?))
}

/// JPEG: walk the marker segments to the first start-of-frame (SOF0..SOF15 but DHT C4, JPG C8
/// and DAC CC), whose payload holds the height then the width (big-endian u16).
fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        while *b.get(at)? == 0xFF && *b.get(at + 1)? == 0xFF {
            at += 1; // fill bytes
        }
        if *b.get(at)? != 0xFF {
            return None;
        }
        let marker = *b.get(at + 1)?;
        if matches!(marker, 0xD0..=0xD9 | 0x01) {
            at += 2; // standalone markers carry no length
            continue;
        }
        let length = be16(b, at + 2)? as usize;
        if length < 2 {
            return None;
        }
        if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            return Some((be16(b, at + 7)?, be16(b, at + 5)?));
        }
        at += 2 + length;
    }
}

/// WebP: the first chunk says the encoding: `VP8 ` (lossy: 14-bit sizes after the frame's
/// start code), `VP8L` (lossless: 14-bit sizes minus one, packed after a 0x2F signature) or
/// `VP8X` (extended: 24-bit canvas sizes minus one).
fn webp_size(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8 " => {
            if b.get(23..26)? != [0x9D, 0x01, 0x2A] {
                return None;
            }
            Some((le16(b, 26)? & 0x3FFF, le16(b, 28)? & 0x3FFF))
        }
        b"VP8L" => {
            if *b.get(20)? != 0x2F {
                return None;
            }
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => Some((le24(b, 24)? + 1, le24(b, 27)? + 1)),
        _ => None,
    }
}

/// A focal point (Mastodon's `focus`: "x,y", each in -1.0..=1.0, the centre at 0,0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Focus {
    pub x: f64,
    pub y: f64,
}

impl Focus {
    pub fn parse(text: &str) -> Result<Focus, Invalid> {
        let bad = || Invalid::new("focus", "focus must be \"x,y\" with both in -1.0 to 1.0");
        let (x, y) = text.split_once(',').ok_or_else(bad)?;
        let coordinate = |v: &str| v.trim().parse::<f64>().ok().filter(|v| (-1.0..=1.0).contains(v));
        Ok(Focus { x: coordinate(x).ok_or_else(bad)?, y: coordinate(y).ok_or_else(bad)? })
    }
}

/// A description (alt text): trimmed, at most [`MAX_DESCRIPTION_CHARS`], no control characters
/// but line breaks.
pub fn description(text: &str) -> Result<String, Invalid> {
    let trimmed = text.trim();
    if trimmed.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(Invalid::new(
            "description",
            format!("description must be at most {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }
    if trimmed.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(Invalid::new("description", "description must not contain control characters"));
    }
    Ok(trimmed.to_owned())
}

/// The attachments a status names (`media_ids`): at most [`MAX_ATTACHMENTS`], each an id, none
/// twice, in the order given (the order they are shown in).
pub fn media_ids<'a>(given: impl IntoIterator<Item = &'a str>) -> Result<Vec<i64>, Invalid> {
    let mut ids = Vec::new();
    for text in given.into_iter().map(str::trim).filter(|t| !t.is_empty()) {
        let id = text
            .parse::<i64>()
            .ok()
            .filter(|id| *id > 0)
            .ok_or_else(|| Invalid::new("media_ids", format!("media_ids: {text} is not a media id")))?;
        if ids.contains(&id) {
            return Err(Invalid::new("media_ids", format!("media_ids: media {id} is named twice")));
        }
        ids.push(id);
    }
    if ids.len() > MAX_ATTACHMENTS {
        return Err(Invalid::new(
            "media_ids",
            format!("media_ids: a status has at most {MAX_ATTACHMENTS} attachments"),
        ));
    }
    Ok(ids)
}

/// One attachment as a post keeps it (the `posts.media` column, a JSON array: every read of a
/// post carries its attachments without another query, and replicas hold them as opaque row
/// data). Fixed once attached, as in Mastodon (its description is set before posting).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    pub id: i64,
    /// The unguessable part of its URL (the URL is the capability: image tags send no token).
    pub key: String,
    pub kind: ImageKind,
    pub width: u32,
    pub height: u32,
    pub size: u64,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<Focus>,
}

impl Attachment {
    /// Where the bytes are served (relative to the instance's origin).
    pub fn path(&self) -> String {
        served_path(self.id, &self.key, self.kind)
    }

    /// A post's attachments from its `media` column (`NULL` or garbage: none; never an error on
    /// a read).
    pub fn list_of(column: Option<&str>) -> Vec<Attachment> {
        column.and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default()
    }
}

/// The R2 key of an upload's bytes.
pub fn object_key(id: i64) -> String {
    format!("media/{id}")
}

/// `/media/{id}-{key}.{ext}`: stable for the upload's life.
pub fn served_path(id: i64, key: &str, kind: ImageKind) -> String {
    format!("/media/{id}-{key}.{}", kind.extension())
}

/// What a served path's file segment names: the upload and its URL key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedFile {
    pub id: i64,
    key: u128,
}

impl ServedFile {
    /// The URL key as stored (lowercase hex).
    pub fn key(&self) -> String {
        format!("{:032x}", self.key)
    }
}

/// The upload a served path's last segment (`{id}-{key}.{ext}`) names, if it is one.
pub fn parse_served(file: &str) -> Option<ServedFile> {
    let (name, extension) = file.split_once('.')?;
    let (id, key) = name.split_once('-')?;
    let id = id.parse::<i64>().ok().filter(|id| *id > 0)?;
    let ok = key.len() == KEY_HEX_CHARS
        && key.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && ImageKind::ALL.iter().any(|k| k.extension() == extension);
    ok.then(|| u128::from_str_radix(key, 16).ok()).flatten().map(|key| ServedFile { id, key })
}

/// A URL key's length: 16 random bytes in hex.
pub const KEY_HEX_CHARS: usize = 32;

/// A URL key from 16 random bytes.
pub fn key_of(random: [u8; 16]) -> String {
    random.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether an upload may be served now: the post it is attached to (if any) is live and not
/// taken down, and its uploader is not suspended. An unattached upload is served (its uploader
/// previews it) until the sweep removes it.
pub fn servable(post: Option<PostId>, post_live: bool, uploader_suspended: bool) -> bool {
    !uploader_suspended && (post.is_none() || post_live)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(width.to_be_bytes());
        b.extend(height.to_be_bytes());
        b.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
        b
    }

    #[test]
    fn png_gif_and_their_sizes() {
        assert_eq!(
            sniff(&png(640, 480)).unwrap(),
            ImageInfo { kind: ImageKind::Png, width: 640, height: 480 }
        );
        let gif = b"GIF89a\x40\x01\xf0\x00\xf7\0\0";
        assert_eq!(sniff(gif).unwrap(), ImageInfo { kind: ImageKind::Gif, width: 320, height: 240 });
    }

    #[test]
    fn jpeg_walks_to_its_frame_header() {
        // SOI, APP0 (length 16), a fill byte, SOF2 (progressive): height 200, width 300.
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
        jpeg.extend([0u8; 14]);
        jpeg.extend([0xFF, 0xFF, 0xC2, 0x00, 0x11, 0x08, 0x00, 0xC8, 0x01, 0x2C, 0x03]);
        assert_eq!(sniff(&jpeg).unwrap(), ImageInfo { kind: ImageKind::Jpeg, width: 300, height: 200 });
        // A DHT segment (C4) is not a frame: skipped.
        let mut dht = vec![0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x04, 0x00, 0x00];
        dht.extend([0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x20]);
        assert_eq!(sniff(&dht).unwrap().width, 32);
        assert!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0x00]).is_err(), "cut short");
    }

    #[test]
    fn webp_in_its_three_encodings() {
        let riff = |chunk: &[u8], payload: &[u8]| {
            let mut b = b"RIFF\0\0\0\0WEBP".to_vec();
            b.extend(chunk);
            b.extend([0u8; 4]);
            b.extend(payload);
            b
        };
        let lossy = riff(b"VP8 ", &[0, 0, 0, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0xE0, 0x01]);
        assert_eq!(sniff(&lossy).unwrap(), ImageInfo { kind: ImageKind::Webp, width: 640, height: 480 });
        let (w, h) = (100u32 - 1, 50u32 - 1);
        let bits = w | h << 14;
        let mut lossless = vec![0x2F];
        lossless.extend(bits.to_le_bytes());
        assert_eq!(sniff(&riff(b"VP8L", &lossless)).unwrap().height, 50);
        let extended = riff(b"VP8X", &[0, 0, 0, 0, 0x1F, 0x03, 0x00, 0x0F, 0x02, 0x00]);
        assert_eq!((sniff(&extended).unwrap().width, sniff(&extended).unwrap().height), (800, 528));
    }

    #[test]
    fn disguised_and_broken_files_are_refused() {
        for bytes in [
            b"<html><script>alert(1)</script>".as_slice(),
            b"%PDF-1.7",
            b"\x89PNG\r\n\x1a\n\0\0\0\x0dIEND",
            b"GIF89a\x00\x00\x10\x00",
            b"",
        ] {
            assert_eq!(sniff(bytes).unwrap_err().field, "file", "{bytes:?}");
        }
        assert!(sniff(&png(MAX_DIMENSION + 1, 1)).is_err());
        let mut huge = png(10, 10);
        huge.resize(MAX_IMAGE_BYTES + 1, 0);
        assert!(sniff(&huge).is_err());
    }

    #[test]
    fn parameters() {
        assert_eq!(Focus::parse("0.5,-1").unwrap(), Focus { x: 0.5, y: -1.0 });
        for bad in ["", "1", "2,0", "a,b", "0,1.5"] {
            assert!(Focus::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(description("  a cat\n ").unwrap(), "a cat");
        assert!(description(&"x".repeat(MAX_DESCRIPTION_CHARS + 1)).is_err());
        assert!(description("bell\u{7}").is_err());
        assert_eq!(media_ids(["3", " 1 ", ""]).unwrap(), vec![3, 1]);
        assert!(media_ids(["1", "1"]).is_err());
        assert!(media_ids(["x"]).is_err());
        assert!(media_ids(["1", "2", "3", "4", "5"]).is_err());
    }

    #[test]
    fn served_paths_round_trip_and_refuse_anything_else() {
        let key = key_of([0xab; 16]);
        let path = served_path(42, &key, ImageKind::Webp);
        assert_eq!(path, format!("/media/42-{key}.webp"));
        let file = parse_served(path.strip_prefix("/media/").unwrap()).unwrap();
        assert_eq!((file.id, file.key()), (42, key.clone()));
        let leading_zeros = key_of([0; 16]);
        assert_eq!(parse_served(&format!("1-{leading_zeros}.png")).unwrap().key(), leading_zeros);
        for bad in
            ["42", "42-abc.png", "x-{key}.png", "42-{key}.svg", "42-{key}", "0-{key}.png", "42-+{key}.png"]
        {
            assert_eq!(parse_served(&bad.replace("{key}", &key)), None, "{bad}");
        }
        assert_eq!(parse_served(&format!("42-{}.png", key.to_uppercase())), None);
    }

    #[test]
    fn attachments_read_from_the_column_never_fail() {
        let a = Attachment {
            id: 7,
            key: key_of([1; 16]),
            kind: ImageKind::Png,
            width: 2,
            height: 3,
            size: 99,
            description: "alt".into(),
            focus: None,
        };
        let column = serde_json::to_string(&vec![a.clone()]).unwrap();
        assert_eq!(Attachment::list_of(Some(&column)), vec![a]);
        assert!(Attachment::list_of(None).is_empty());
        assert!(Attachment::list_of(Some("not json")).is_empty());
        assert!(servable(None, false, false));
        assert!(!servable(Some(PostId::from_trusted(1)), false, false));
        assert!(!servable(None, true, true));
    }
}
