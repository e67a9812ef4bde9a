//! What a client may send that edgefeed does not build. Mastodon clients send parameters for
//! features edgefeed lacks (or builds only in one API); dropping one silently would publish
//! something other than what the author wrote (a "scheduled" post going out at once), so
//! each is either honoured elsewhere or refused here with a 422 that names it, before anything
//! changes. The one table is [`RULES`]; a parameter not in it is either built (`status`,
//! `spoiler_text`, `visibility`, ...), harmless to accept (`language`: it changes nothing a
//! reader sees), or unknown to Mastodon too (ignored, as Mastodon does).

use super::validate::Invalid;

/// The routes whose parameters are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `POST /api/v1/statuses`.
    Publish,
    /// `POST /v1/posts`.
    V1Publish,
    /// `PUT /api/v1/statuses/{id}` and `PATCH /v1/posts/{id}`.
    Edit,
    /// `POST /api/v1/accounts/{id}/follow`.
    Follow,
}

/// What a sent value amounts to: nothing (absent, `null`, `""`, `[]`, `{}`), false (`false`,
/// `"false"`, `"0"`), or something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Given {
    Nothing,
    False,
    Something,
}

impl Given {
    /// A form value (every value is a string there).
    pub fn of_text(text: &str) -> Given {
        match text.trim() {
            "" => Given::Nothing,
            "false" | "0" | "f" | "off" => Given::False,
            _ => Given::Something,
        }
    }
}

/// When a parameter is refused: as soon as anything is given, or only when it is true.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unless {
    Nothing,
    FalseOrNothing,
}

struct Rule {
    endpoints: &'static [Endpoint],
    param: &'static str,
    unless: Unless,
    reason: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        endpoints: &[Endpoint::Edit],
        param: "poll",
        unless: Unless::Nothing,
        reason: "an edit cannot change a poll",
    },
    Rule {
        endpoints: &[Endpoint::Edit],
        param: "media_attributes",
        unless: Unless::Nothing,
        reason: "an edit cannot change attachments (describe them before posting: PUT /api/v1/media/:id)",
    },
    Rule {
        endpoints: &[Endpoint::V1Publish],
        param: "scheduled_at",
        unless: Unless::Nothing,
        reason: "schedule posts through POST /api/v1/statuses (it would be published at once)",
    },
    Rule {
        endpoints: &[Endpoint::Follow],
        param: "notify",
        unless: Unless::FalseOrNothing,
        reason: "notifications of an account's new posts are not supported",
    },
    Rule {
        endpoints: &[Endpoint::Follow],
        param: "languages",
        unless: Unless::Nothing,
        reason: "following only some languages is not supported",
    },
];

/// The parameter a field name stands for: forms spell arrays and nested objects in brackets
/// (`media_ids[]`, `poll[options][]`).
pub fn param_of(key: &str) -> &str {
    key.split('[').next().unwrap_or(key)
}

/// The first field of `fields` (name as sent, what it amounts to) the endpoint refuses, as a
/// 422 naming the parameter.
pub fn check<'a>(
    endpoint: Endpoint,
    fields: impl IntoIterator<Item = (&'a str, Given)>,
) -> Result<(), Invalid> {
    for (key, given) in fields {
        let param = param_of(key);
        let rule = RULES.iter().find(|r| r.param == param && r.endpoints.contains(&endpoint));
        let Some(rule) = rule else { continue };
        let refused = match rule.unless {
            Unless::Nothing => given != Given::Nothing,
            Unless::FalseOrNothing => given == Given::Something,
        };
        if refused {
            return Err(Invalid::new(rule.param, format!("{}: {}", rule.param, rule.reason)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Endpoint::{Edit, Follow, Publish, V1Publish};
    use Given::{False, Nothing, Something};

    #[test]
    fn the_table() {
        let cases: &[(Endpoint, &str, Given, Option<&str>)] = &[
            // Built (polls: `domain/polls.rs`); an edit cannot change one.
            (Publish, "poll", Something, None),
            (Publish, "poll[options][]", Something, None),
            (Publish, "poll[expires_in]", Something, None),
            (Publish, "poll", Nothing, None),
            (Edit, "poll", Something, Some("poll")),
            (Edit, "poll[options][]", Something, Some("poll")),
            // Built (attachments: `domain/media.rs`); an edit may repeat a post's own.
            (Publish, "media_ids[]", Something, None),
            (Edit, "media_ids", Something, None),
            (Edit, "media_attributes[][id]", Something, Some("media_attributes")),
            (Publish, "media_attributes", Something, None),
            // Built in the Mastodon API (`domain/scheduled.rs`), refused by /v1.
            (Publish, "scheduled_at", Something, None),
            (V1Publish, "scheduled_at", Something, Some("scheduled_at")),
            (V1Publish, "scheduled_at", Nothing, None),
            (V1Publish, "status", Something, None),
            // Built (quotes: `domain/quotes.rs`).
            (Publish, "quoted_status_id", Something, None),
            // Built or harmless: accepted.
            (Publish, "language", Something, None),
            (Publish, "spoiler_text", Something, None),
            (Publish, "sensitive", Something, None),
            (Publish, "visibility", Something, None),
            (Publish, "status", Something, None),
            (Publish, "something_else", Something, None),
            // Follows: notify only when asked for, languages when any are named.
            (Follow, "notify", Something, Some("notify")),
            (Follow, "notify", False, None),
            (Follow, "notify", Nothing, None),
            (Follow, "languages[]", Something, Some("languages")),
            (Follow, "languages", Nothing, None),
            (Follow, "reblogs", Something, None),
            (Follow, "poll", Something, None),
        ];
        for (endpoint, key, given, refused) in cases {
            let got = check(*endpoint, [(*key, *given)]).err().map(|e| e.field);
            assert_eq!(got, *refused, "{endpoint:?} {key} {given:?}");
        }
    }

    #[test]
    fn the_first_refused_field_is_reported_with_its_reason() {
        let fields = [("status", Something), ("scheduled_at", Something), ("poll", Something)];
        let err = check(V1Publish, fields).unwrap_err();
        assert_eq!(
            (err.field, err.reason.as_str()),
            (
                "scheduled_at",
                "scheduled_at: schedule posts through POST /api/v1/statuses (it would be published at once)"
            )
        );
        let fields = [("status", Something), ("notify", Something), ("poll", Something)];
        assert_eq!(check(Edit, fields).unwrap_err().field, "poll");
        assert!(check(Publish, []).is_ok());
    }

    #[test]
    fn form_values() {
        assert_eq!(Given::of_text(""), Nothing);
        assert_eq!(Given::of_text(" "), Nothing);
        assert_eq!(Given::of_text("false"), False);
        assert_eq!(Given::of_text("0"), False);
        assert_eq!(Given::of_text("true"), Something);
        assert_eq!(Given::of_text("123"), Something);
        assert_eq!(param_of("a[b][]"), "a");
        assert_eq!(param_of("plain"), "plain");
    }
}
