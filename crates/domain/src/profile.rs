//! Profile editing (`PATCH /api/v1/accounts/update_credentials`): what a request may change and
//! the limits Mastodon puts on it. Parameters arrive flattened as Rails names them
//! (`source[privacy]`, `fields_attributes[0][name]`), whether from a form or a JSON body
//! ([`flatten_json`]); [`ProfileEdit::parse`] validates all of them before anything changes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::validate::{hides_or_reorders, Invalid};

pub const MAX_DISPLAY_NAME_CHARS: usize = 30;
pub const MAX_NOTE_CHARS: usize = 500;
pub const MAX_FIELDS: usize = 4;
pub const MAX_FIELD_NAME_CHARS: usize = 255;
pub const MAX_FIELD_VALUE_CHARS: usize = 255;
/// A profile image's largest size (Mastodon's without libvips).
pub const MAX_IMAGE_BYTES: usize = 2 * 1024 * 1024;

/// Which profile image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Image {
    Avatar,
    Header,
}

impl Image {
    pub const ALL: [Image; 2] = [Image::Avatar, Image::Header];

    /// Its parameter's name, and its column's in `users`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Avatar => "avatar",
            Self::Header => "header",
        }
    }

    /// Checks an upload's bytes before anything is stored: an image of a sniffed type, at most
    /// [`MAX_IMAGE_BYTES`].
    pub fn check(self, bytes: &[u8]) -> Result<crate::media::ImageInfo, Invalid> {
        let field = self.name();
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(bad(field, format!("{field} must be at most {} MiB", MAX_IMAGE_BYTES >> 20)));
        }
        crate::media::sniff(bytes).map_err(|e| bad(field, format!("{field}: {}", e.reason)))
    }
}

/// A language code as `source[language]` takes it (ISO 639-1 or -3).
const MAX_LANGUAGE_CHARS: usize = 3;

/// One profile field (a name/value pair shown on the profile).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    pub name: String,
    pub value: String,
}

/// The posting defaults a profile's `source` carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privacy {
    Public,
    Unlisted,
    Private,
    Direct,
}

impl Privacy {
    pub fn parse(text: &str) -> Option<Privacy> {
        Some(match text {
            "public" => Self::Public,
            "unlisted" => Self::Unlisted,
            "private" => Self::Private,
            "direct" => Self::Direct,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Unlisted => "unlisted",
            Self::Private => "private",
            Self::Direct => "direct",
        }
    }
}

/// What one request changes; `None` leaves a part as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileEdit {
    /// `Some("")`: no display name (the handle is shown).
    pub display_name: Option<String>,
    pub note: Option<String>,
    /// The whole list, replacing the old one (empty pairs left out).
    pub fields: Option<Vec<Field>>,
    pub locked: Option<bool>,
    pub bot: Option<bool>,
    pub discoverable: Option<bool>,
    /// Mastodon's `indexable`: the account's public posts may be found by full-text search.
    pub indexable: Option<bool>,
    pub privacy: Option<Privacy>,
    pub sensitive: Option<bool>,
    /// `Some(None)`: no default language.
    pub language: Option<Option<String>>,
}

fn bad(field: &'static str, reason: impl Into<String>) -> Invalid {
    Invalid::new(field, reason)
}

fn flag(field: &'static str, text: &str) -> Result<bool, Invalid> {
    crate::mastodon::form_bool(text).ok_or_else(|| bad(field, format!("{field} must be a boolean")))
}

/// Text of at most `max` characters without control characters (line breaks allowed where
/// `multiline`).
fn text(field: &'static str, value: &str, max: usize, multiline: bool) -> Result<String, Invalid> {
    if value.chars().count() > max {
        return Err(bad(field, format!("{field} must be at most {max} characters")));
    }
    let refused = |c: char| c.is_control() && !(multiline && matches!(c, '\n' | '\r' | '\t'));
    if value.chars().any(refused) {
        return Err(bad(field, format!("{field} must not contain control characters")));
    }
    Ok(if multiline { value.replace("\r\n", "\n") } else { value.to_owned() })
}

fn display_name(value: &str) -> Result<String, Invalid> {
    let name = text("display_name", value.trim(), MAX_DISPLAY_NAME_CHARS, false)?;
    if name.chars().any(hides_or_reorders) {
        return Err(bad(
            "display_name",
            "display_name must not contain bidirectional controls or invisible formatting characters",
        ));
    }
    Ok(name)
}

/// `fields_attributes[I][name|value]` (`I` an index, or empty: `[]` starts a new field at each
/// repeated key) as an ordered list of (index, part, value).
fn field_part(key: &str) -> Option<(Option<usize>, &str)> {
    let rest = key.strip_prefix("fields_attributes[")?;
    let (index, rest) = rest.split_once(']')?;
    let part = rest.strip_prefix('[')?.strip_suffix(']')?;
    let index = if index.is_empty() { None } else { Some(index.parse().ok()?) };
    Some((index, part))
}

fn fields(given: &[(Option<usize>, &str, &str)]) -> Result<Vec<Field>, Invalid> {
    let empty = || Field { name: String::new(), value: String::new() };
    let mut indexed: std::collections::BTreeMap<usize, Field> = std::collections::BTreeMap::new();
    let mut anonymous: Vec<Field> = Vec::new();
    for (index, part, value) in given {
        if indexed.len() + anonymous.len() > 64 {
            return Err(bad("fields_attributes", "fields_attributes has too many entries"));
        }
        let (max, field_name) = match *part {
            "name" => (MAX_FIELD_NAME_CHARS, true),
            "value" => (MAX_FIELD_VALUE_CHARS, false),
            other => {
                return Err(bad("fields_attributes", format!("fields_attributes: unknown part {other}")))
            }
        };
        let value = text("fields_attributes", value.trim(), max, false)?;
        let field = match index {
            Some(i) => indexed.entry(*i).or_insert_with(empty),
            None => {
                // `[]`: a part already set on the last field starts the next one.
                if anonymous.last().is_none_or(|f| !field_of(f, part).is_empty()) {
                    anonymous.push(empty());
                }
                let last = anonymous.len() - 1;
                &mut anonymous[last]
            }
        };
        if field_name {
            field.name = value;
        } else {
            field.value = value;
        }
    }
    let kept: Vec<Field> = indexed
        .into_values()
        .chain(anonymous)
        .filter(|f| !(f.name.is_empty() && f.value.is_empty()))
        .collect();
    if kept.len() > MAX_FIELDS {
        return Err(bad("fields_attributes", format!("a profile has at most {MAX_FIELDS} fields")));
    }
    Ok(kept)
}

fn field_of<'a>(f: &'a Field, part: &str) -> &'a str {
    if part == "name" {
        &f.name
    } else {
        &f.value
    }
}

impl ProfileEdit {
    /// The edit the parameters ask for (every parameter Mastodon documents that this server
    /// keeps; `avatar`/`header` are files, read apart; anything else is ignored as Mastodon
    /// ignores unknown parameters), or the first invalid one.
    pub fn parse<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<ProfileEdit, Invalid> {
        let mut edit = ProfileEdit::default();
        let mut given_fields = Vec::new();
        let mut fields_named = false;
        for (key, value) in params {
            match key {
                "display_name" => edit.display_name = Some(display_name(value)?),
                "note" => edit.note = Some(text("note", value.trim(), MAX_NOTE_CHARS, true)?),
                "locked" => edit.locked = Some(flag("locked", value)?),
                "bot" => edit.bot = Some(flag("bot", value)?),
                "discoverable" => edit.discoverable = Some(flag("discoverable", value)?),
                "indexable" => edit.indexable = Some(flag("indexable", value)?),
                "source[privacy]" => {
                    let bad_privacy = || {
                        bad("source[privacy]", "source[privacy] must be public, unlisted, private or direct")
                    };
                    edit.privacy = Some(Privacy::parse(value).ok_or_else(bad_privacy)?);
                }
                "source[sensitive]" => edit.sensitive = Some(flag("source[sensitive]", value)?),
                "source[language]" => edit.language = Some(language(value)?),
                // An empty list (`fields_attributes=` or `fields_attributes[]=`): no fields.
                "fields_attributes" | "fields_attributes[]" => fields_named = true,
                other => {
                    if let Some((index, part)) = field_part(other) {
                        given_fields.push((index, part, value));
                        fields_named = true;
                    }
                }
            }
        }
        if fields_named {
            edit.fields = Some(fields(&given_fields)?);
        }
        Ok(edit)
    }
}

fn language(value: &str) -> Result<Option<String>, Invalid> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(None);
    }
    let ok = (2..=MAX_LANGUAGE_CHARS).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_lowercase());
    ok.then(|| Some(value.to_owned()))
        .ok_or_else(|| bad("source[language]", "source[language] must be an ISO 639 language code"))
}

/// A JSON body's members flattened into Rails names (`{"source": {"privacy": "x"}}` is
/// `source[privacy]`, arrays are indexed), each value as a form would send it (`true`,
/// numbers as written); `null` is left out (nothing given).
pub fn flatten_json(body: &serde_json::Map<String, Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (key, value) in body {
        flatten_into(&mut out, key.clone(), value, 0);
    }
    out
}

fn flatten_into(out: &mut Vec<(String, String)>, key: String, value: &Value, depth: usize) {
    if depth > 4 || out.len() > 256 {
        return;
    }
    match value {
        Value::Null => {}
        Value::Bool(b) => out.push((key, b.to_string())),
        Value::Number(n) => out.push((key, n.to_string())),
        Value::String(s) => out.push((key, s.clone())),
        Value::Array(items) if items.is_empty() => out.push((key, String::new())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten_into(out, format!("{key}[{i}]"), item, depth + 1);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                flatten_into(out, format!("{key}[{k}]"), v, depth + 1);
            }
        }
    }
}

/// A profile's fields as stored (`users.fields`, a JSON array); `NULL` or garbage: none.
pub fn fields_of(column: Option<&str>) -> Vec<Field> {
    column.and_then(|json| serde_json::from_str(json).ok()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<ProfileEdit, Invalid> {
        ProfileEdit::parse(pairs.iter().copied())
    }

    fn field(name: &str, value: &str) -> Field {
        Field { name: name.into(), value: value.into() }
    }

    #[test]
    fn plain_parameters() {
        let edit =
            parse(&[("display_name", " Ana "), ("note", "hi\r\nthere"), ("locked", "true"), ("bot", "0")])
                .unwrap();
        assert_eq!(edit.display_name.as_deref(), Some("Ana"));
        assert_eq!(edit.note.as_deref(), Some("hi\nthere"));
        assert_eq!((edit.locked, edit.bot, edit.discoverable), (Some(true), Some(false), None));
        assert_eq!(edit.fields, None);
    }

    #[test]
    fn lengths_as_mastodon() {
        assert!(parse(&[("display_name", &"a".repeat(30))]).is_ok());
        assert_eq!(parse(&[("display_name", &"a".repeat(31))]).unwrap_err().field, "display_name");
        assert!(parse(&[("note", &"a".repeat(500))]).is_ok());
        assert_eq!(parse(&[("note", &"a".repeat(501))]).unwrap_err().field, "note");
        let long = "a".repeat(256);
        assert!(parse(&[("fields_attributes[0][name]", &long)]).is_err());
        assert!(parse(&[("fields_attributes[0][value]", &long)]).is_err());
        assert!(parse(&[("display_name", "a\u{202E}b")]).is_err());
        assert!(parse(&[("locked", "maybe")]).is_err());
        assert!(parse(&[("source[privacy]", "everyone")]).is_err());
        assert!(parse(&[("source[language]", "english")]).is_err());
    }

    #[test]
    fn fields_indexed_and_anonymous() {
        let edit = parse(&[
            ("fields_attributes[1][name]", "b"),
            ("fields_attributes[1][value]", "2"),
            ("fields_attributes[0][name]", "a"),
            ("fields_attributes[0][value]", "1"),
            ("fields_attributes[2][name]", ""),
            ("fields_attributes[2][value]", ""),
        ])
        .unwrap();
        assert_eq!(edit.fields, Some(vec![field("a", "1"), field("b", "2")]));
        let edit = parse(&[
            ("fields_attributes[][name]", "x"),
            ("fields_attributes[][value]", "1"),
            ("fields_attributes[][name]", "y"),
            ("fields_attributes[][value]", "2"),
        ])
        .unwrap();
        assert_eq!(edit.fields, Some(vec![field("x", "1"), field("y", "2")]));
        assert_eq!(parse(&[("fields_attributes", "")]).unwrap().fields, Some(vec![]));
        let five: Vec<(String, String)> =
            (0..5).map(|i| (format!("fields_attributes[{i}][name]"), format!("n{i}"))).collect();
        let err = ProfileEdit::parse(five.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap_err();
        assert_eq!(err.field, "fields_attributes");
    }

    #[test]
    fn json_flattens_as_rails_names() {
        let body = serde_json::json!({
            "display_name": "Ana", "locked": true, "note": null,
            "source": {"privacy": "private", "sensitive": false},
            "fields_attributes": [{"name": "a", "value": "1"}],
        });
        let flat = flatten_json(body.as_object().unwrap());
        let edit = ProfileEdit::parse(flat.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap();
        assert_eq!(edit.locked, Some(true));
        assert_eq!(edit.note, None);
        assert_eq!(edit.privacy, Some(Privacy::Private));
        assert_eq!(edit.sensitive, Some(false));
        assert_eq!(edit.fields, Some(vec![field("a", "1")]));
        let body = serde_json::json!({"fields_attributes": {"0": {"name": "k", "value": "v"}}});
        let flat = flatten_json(body.as_object().unwrap());
        let edit = ProfileEdit::parse(flat.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap();
        assert_eq!(edit.fields, Some(vec![field("k", "v")]));
    }
}
