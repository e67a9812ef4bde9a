//! `multipart/form-data` bodies (RFC 7578), which Mastodon accepts wherever it accepts a form.
//! Parsed by hand (a crate would cost wasm size for a few dozen lines): the text fields only,
//! as name/value pairs in order. A file part (one with a `filename`) is kept as a field whose
//! value is its bytes read as text, so a route that takes no file still sees that something was
//! sent under that name.

/// The `boundary` of a `multipart/form-data` content type, if it is one.
pub fn boundary(content_type: &str) -> Option<&str> {
    let mut parts = content_type.split(';');
    if !parts.next()?.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    parts.find_map(|p| {
        let (name, value) = p.trim().split_once('=')?;
        let value = value.trim().trim_matches('"');
        (name.trim().eq_ignore_ascii_case("boundary") && !value.is_empty() && value.len() <= 70)
            .then_some(value)
    })
}

/// One part of a multipart body: its form name, whether it is a file, and its bytes as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part<'a> {
    pub name: String,
    pub is_file: bool,
    pub bytes: &'a [u8],
}

/// The fields of a multipart body, or why it is not one.
pub fn fields(body: &[u8], boundary: &str) -> Result<Vec<(String, String)>, &'static str> {
    let parts = parts(body, boundary)?;
    Ok(parts.into_iter().map(|p| (p.name, String::from_utf8_lossy(p.bytes).into_owned())).collect())
}

/// The parts of a multipart body in order (a file's bytes untouched), or why it is not one.
pub fn parts<'a>(body: &'a [u8], boundary: &str) -> Result<Vec<Part<'a>>, &'static str> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let malformed = "the multipart body is malformed";
    let mut rest = &body[find(body, delimiter).ok_or(malformed)? + delimiter.len()..];
    let mut out = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(out); // the closing delimiter
        }
        rest = rest.strip_prefix(b"\r\n").ok_or(malformed)?;
        let end = find(rest, &[b"\r\n", delimiter].concat()).ok_or(malformed)?;
        let (part, after) = (&rest[..end], &rest[end + 2 + delimiter.len()..]);
        let header_end = find(part, b"\r\n\r\n").ok_or(malformed)?;
        let headers = std::str::from_utf8(&part[..header_end]).map_err(|_| malformed)?;
        let (name, is_file) = disposition(headers).ok_or("a multipart part has no form-data name")?;
        out.push(Part { name, is_file, bytes: &part[header_end + 4..] });
        rest = after;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The `name` of a part's `Content-Disposition: form-data; name="..."`, and whether it names a
/// `filename` (a file part).
fn disposition(headers: &str) -> Option<(String, bool)> {
    let disposition = headers.split("\r\n").find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case("content-disposition").then_some(value)
    })?;
    let mut params = disposition.split(';');
    if !params.next()?.trim().eq_ignore_ascii_case("form-data") {
        return None;
    }
    let (mut name, mut is_file) = (None, false);
    for p in params {
        let Some((key, value)) = p.trim().split_once('=') else { continue };
        match key.trim().to_ascii_lowercase().as_str() {
            "name" if name.is_none() => name = Some(value.trim().trim_matches('"').to_string()),
            "filename" => is_file = true,
            _ => {}
        }
    }
    Some((name?, is_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries() {
        assert_eq!(boundary("multipart/form-data; boundary=abc"), Some("abc"));
        assert_eq!(boundary("Multipart/Form-Data; charset=utf-8; boundary=\"a b\""), Some("a b"));
        assert_eq!(boundary("multipart/form-data"), None);
        assert_eq!(boundary("multipart/mixed; boundary=abc"), None);
        assert_eq!(boundary("application/x-www-form-urlencoded"), None);
        assert_eq!(boundary("multipart/form-data; boundary="), None);
    }

    #[test]
    fn fields_in_order_with_files_as_text() {
        let body =
            "preamble\r\n--XX\r\nContent-Disposition: form-data; name=\"status\"\r\n\r\nhello\r\nworld\r\n\
                    --XX\r\ncontent-disposition: form-data; name=\"media_ids[]\"\r\n\r\n1\r\n\
                    --XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n\
                    Content-Type: image/png\r\n\r\nPNG\r\n--XX--\r\n";
        let got = fields(body.as_bytes(), "XX").unwrap();
        let want = [("status", "hello\r\nworld"), ("media_ids[]", "1"), ("file", "PNG")];
        assert_eq!(got, want.map(|(k, v)| (k.to_string(), v.to_string())));
        let empty = "--XX--\r\n";
        assert_eq!(fields(empty.as_bytes(), "XX").unwrap(), vec![]);
    }

    #[test]
    fn a_file_part_keeps_its_bytes() {
        let mut body =
            b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n".to_vec();
        body.extend([0x89, 0xFF, 0x00, b'\r', b'\n', 0xFE]);
        body.extend(b"\r\n--B\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\nalt\r\n--B--");
        let got = parts(&body, "B").unwrap();
        assert_eq!(
            got[0],
            Part { name: "file".into(), is_file: true, bytes: &[0x89, 0xFF, 0x00, b'\r', b'\n', 0xFE] }
        );
        assert_eq!(got[1], Part { name: "description".into(), is_file: false, bytes: b"alt" });
    }

    #[test]
    fn malformed_bodies_are_refused() {
        for body in [
            "",
            "no delimiter",
            "--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated",
            "--XX\r\nContent-Disposition: form-data; name=\"a\"\r\nno blank line\r\n--XX--",
            "--XX\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--XX--",
            "--XX\r\n\r\nx\r\n--XX--",
            "--XXjunk",
        ] {
            assert!(fields(body.as_bytes(), "XX").is_err(), "{body:?}");
        }
    }
}
