//! What an edit of a post may change, read by one parser for both APIs (`PATCH /v1/posts/{id}`
//! and Mastodon's `PUT /api/v1/statuses/{id}`), which differ only in their words for a post's
//! fields ([`Dialect`]).

use super::mastodon::visibility_from_mastodon;
use super::validate::{Invalid, PostBody};
use super::visibility::Visibility;
use super::warning::WarningEdit;

/// Which API's words a request uses: the text's field and the visibility vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `/v1`: the text is `body`; `public`, `followers`, `private`.
    V1,
    /// Mastodon: the text is `status`; `public`, `unlisted`, `private`, `direct`
    /// ([`visibility_from_mastodon`]).
    Mastodon,
}

impl Dialect {
    pub fn text_field(self) -> &'static str {
        match self {
            Self::V1 => "body",
            Self::Mastodon => "status",
        }
    }

    /// A visibility in this API's vocabulary.
    pub fn visibility(self, text: &str) -> Result<Visibility, Invalid> {
        match self {
            Self::V1 => Visibility::parse(text)
                .ok_or_else(|| Invalid::new("visibility", "visibility must be public, followers or private")),
            Self::Mastodon => visibility_from_mastodon(text).ok_or_else(|| {
                Invalid::new("visibility", "visibility must be public, unlisted, private or direct")
            }),
        }
    }

    fn nothing_to_change(self) -> Invalid {
        match self {
            Self::V1 => Invalid::new("body", "give body, visibility, spoiler_text or sensitive to change"),
            Self::Mastodon => Invalid::new("status", "give status, spoiler_text or sensitive to change"),
        }
    }
}

/// An edit of a post: its text, its visibility, its content warning (at least one of them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostEdit {
    pub text: Option<PostBody>,
    pub visibility: Option<Visibility>,
    /// With a visibility: whether it is Mastodon's `unlisted` (public, out of the public and
    /// tag timelines); `/v1`'s `public` is listed.
    pub unlisted: Option<bool>,
    pub warning: WarningEdit,
}

impl PostEdit {
    /// Reads the edit through `field` (a string field of the request: `None` when absent, an
    /// error when of another type), the text first and then the visibility, so the first wrong
    /// field is the one reported. A text that is not a post's is reported as `body` in both
    /// dialects (`PostBody::parse`). `flag` reads a boolean field (`sensitive`).
    pub fn parse<'a>(
        dialect: Dialect,
        field: impl Fn(&'static str) -> Result<Option<&'a str>, Invalid>,
        flag: impl Fn(&'static str) -> Result<Option<bool>, Invalid>,
    ) -> Result<Self, Invalid> {
        let text = field(dialect.text_field())?.map(PostBody::parse).transpose()?;
        let raw_visibility = field("visibility")?;
        let visibility = raw_visibility.map(|v| dialect.visibility(v)).transpose()?;
        let unlisted = raw_visibility.map(|v| v.trim() == "unlisted");
        let warning = WarningEdit::parse(field("spoiler_text")?, flag("sensitive")?)?;
        if text.is_none() && visibility.is_none() && warning.is_empty() {
            return Err(dialect.nothing_to_change());
        }
        Ok(Self { text, visibility, unlisted, warning })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's fields: a string, or a value of another type (`Err`).
    type Fields = &'static [(&'static str, Result<&'static str, ()>)];

    fn parse(dialect: Dialect, fields: Fields) -> Result<PostEdit, Invalid> {
        let flag = |name: &'static str| match fields.iter().find(|(n, _)| *n == name) {
            None => Ok(None),
            Some((_, Ok(text))) => Ok(Some(*text == "true")),
            Some((_, Err(()))) => Err(Invalid::new(name, format!("{name} must be a boolean"))),
        };
        let field = |name: &'static str| match fields.iter().find(|(n, _)| *n == name) {
            None => Ok(None),
            Some((_, Ok(text))) => Ok(Some(*text)),
            Some((_, Err(()))) => Err(Invalid::new(name, format!("{name} must be a string"))),
        };
        PostEdit::parse(dialect, field, flag)
    }

    fn edit(text: Option<&str>, visibility: Option<Visibility>) -> Result<PostEdit, Invalid> {
        Ok(PostEdit {
            text: text.map(|t| PostBody::parse(t).unwrap()),
            visibility,
            unlisted: visibility.map(|_| false),
            warning: WarningEdit::default(),
        })
    }

    #[test]
    fn edits_in_both_dialects() {
        use Dialect::{Mastodon, V1};
        use Visibility::{Followers, Private, Public};
        let refused = |field, reason: &str| Err(Invalid::new(field, reason));
        let cases: [(Dialect, Fields, Result<PostEdit, Invalid>); 16] = [
            (V1, &[("body", Ok(" new "))], edit(Some("new"), None)),
            (V1, &[("visibility", Ok("followers"))], edit(None, Some(Followers))),
            (V1, &[("body", Ok("x")), ("visibility", Ok("private"))], edit(Some("x"), Some(Private))),
            // Each API reads only its own words.
            (
                V1,
                &[("status", Ok("x"))],
                refused("body", "give body, visibility, spoiler_text or sensitive to change"),
            ),
            (V1, &[], refused("body", "give body, visibility, spoiler_text or sensitive to change")),
            (
                V1,
                &[("visibility", Ok("unlisted"))],
                refused("visibility", "visibility must be public, followers or private"),
            ),
            (V1, &[("body", Ok("  "))], refused("body", "body must not be empty")),
            // The text is read before the visibility: its error is the one reported.
            (V1, &[("body", Err(())), ("visibility", Ok("nope"))], refused("body", "body must be a string")),
            (V1, &[("body", Ok("")), ("visibility", Err(()))], refused("body", "body must not be empty")),
            (Mastodon, &[("status", Ok("hi"))], edit(Some("hi"), None)),
            (
                Mastodon,
                &[("visibility", Ok("unlisted"))],
                edit(None, Some(Public)).map(|e| PostEdit { unlisted: Some(true), ..e }),
            ),
            (Mastodon, &[("visibility", Ok("direct"))], edit(None, Some(Private))),
            (
                Mastodon,
                &[("body", Ok("x"))],
                refused("status", "give status, spoiler_text or sensitive to change"),
            ),
            (
                Mastodon,
                &[("visibility", Ok("followers"))],
                refused("visibility", "visibility must be public, unlisted, private or direct"),
            ),
            (Mastodon, &[("status", Ok(""))], refused("body", "body must not be empty")),
            (Mastodon, &[("status", Err(()))], refused("status", "status must be a string")),
        ];
        for (dialect, fields, expected) in cases {
            assert_eq!(parse(dialect, fields), expected, "{dialect:?} {fields:?}");
        }
    }

    #[test]
    fn warnings_alone_are_edits() {
        let got = parse(Dialect::Mastodon, &[("spoiler_text", Ok(" cw "))]).unwrap();
        assert_eq!(got.warning, WarningEdit { spoiler_text: Some("cw".into()), sensitive: None });
        let got = parse(Dialect::V1, &[("sensitive", Ok("true"))]).unwrap();
        assert_eq!(got.warning, WarningEdit { spoiler_text: None, sensitive: Some(true) });
        assert_eq!(got.text, None);
        assert_eq!(parse(Dialect::V1, &[("spoiler_text", Ok("a\u{7}"))]).unwrap_err().field, "spoiler_text");
    }

    #[test]
    fn text_fields_and_visibilities() {
        assert_eq!((Dialect::V1.text_field(), Dialect::Mastodon.text_field()), ("body", "status"));
        assert_eq!(Dialect::V1.visibility("followers"), Ok(Visibility::Followers));
        assert_eq!(Dialect::Mastodon.visibility("private"), Ok(Visibility::Followers));
        assert!(Dialect::Mastodon.visibility("followers").is_err());
    }
}
