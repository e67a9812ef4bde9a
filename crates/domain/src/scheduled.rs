//! Scheduled posts (Mastodon's ScheduledStatus): when one may be scheduled, its limits, and the
//! request it keeps until the cron publishes it. The request is checked when it is scheduled, by
//! the same rules as a publish, and kept in Mastodon's `params` shape ([`StatusParams`]), which
//! is also what the API shows; the cron turns it back into a [`StatusRequest`] by the same
//! parsers, so what was accepted is what publishes (less what changed meanwhile: a parent
//! deleted, an upload gone, a block, which the publish checks again).

use serde::{Deserialize, Serialize};

use super::ids::{PostId, UserId};
use super::mastodon::{visibility_from_mastodon, visibility_to_mastodon};
use super::polls::{PollDraft, RawPoll};
use super::quotes::QuotePolicy;
use super::time::{parse_rfc3339, Millis};
use super::validate::{Invalid, PostBody};
use super::visibility::Visibility;
use super::warning::ContentWarning;

/// How soon a post may be scheduled: Mastodon's 5 minutes (sooner is a 422, never a post
/// published at once).
pub const MIN_AHEAD_MS: Millis = 5 * 60_000;
/// How far ahead: a year. Mastodon sets none; a bound keeps a mistyped year from holding its
/// uploads (which the sweep leaves alone while they wait) and a slot of the limits for decades.
pub const MAX_AHEAD_MS: Millis = 365 * DAY_MS;
/// Mastodon's limits: posts waiting per user, and per user per (UTC) day they are due on.
pub const MAX_PENDING: i64 = 300;
pub const MAX_PER_DAY: i64 = 25;
const DAY_MS: Millis = 86_400_000;

/// `scheduled_at` as sent: an RFC 3339 time at least [`MIN_AHEAD_MS`] and at most
/// [`MAX_AHEAD_MS`] after `now`, else a 422 on the field.
pub fn scheduled_at(raw: &str, now: Millis) -> Result<Millis, Invalid> {
    let at = parse_rfc3339(raw.trim()).ok_or_else(|| {
        Invalid::new("scheduled_at", "scheduled_at: not an ISO 8601 time (2030-01-31T08:00:00.000Z)")
    })?;
    if at < now + MIN_AHEAD_MS {
        return Err(Invalid::new("scheduled_at", "scheduled_at: must be at least 5 minutes in the future"));
    }
    if at > now + MAX_AHEAD_MS {
        return Err(Invalid::new("scheduled_at", "scheduled_at: must be at most a year in the future"));
    }
    Ok(at)
}

/// The UTC day `at` falls on, as `[start, end)`: what [`MAX_PER_DAY`] counts over.
pub fn day_of(at: Millis) -> (Millis, Millis) {
    let start = at.div_euclid(DAY_MS) * DAY_MS;
    (start, start + DAY_MS)
}

/// Which limit a schedule (or a reschedule) met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    Pending,
    Day,
}

impl Full {
    /// Which one `pending` waiting posts, `on_day` of them due that day, meet (`None`: neither).
    pub fn of(pending: i64, on_day: i64) -> Option<Full> {
        if pending >= MAX_PENDING {
            Some(Full::Pending)
        } else if on_day >= MAX_PER_DAY {
            Some(Full::Day)
        } else {
            None
        }
    }

    pub fn refusal(self) -> Invalid {
        match self {
            Full::Pending => Invalid::new("scheduled_at", "at most 300 posts may be scheduled at once"),
            Full::Day => Invalid::new("scheduled_at", "at most 25 posts may be scheduled for one day"),
        }
    }
}

/// A status request, checked (`POST /api/v1/statuses`): what a publish and a schedule start
/// from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRequest {
    pub text: PostBody,
    pub visibility: Visibility,
    /// Mastodon's `unlisted` (with `Public`).
    pub unlisted: bool,
    pub warning: ContentWarning,
    /// Uploads to attach, in order.
    pub media: Vec<i64>,
    pub in_reply_to: Option<PostId>,
    pub poll: Option<PollDraft>,
    pub quote: Option<PostId>,
    pub quote_policy: QuotePolicy,
    /// `None`: anyone may be mentioned.
    pub allowed_mentions: Option<Vec<UserId>>,
}

/// A poll as [`StatusParams`] shows it (Mastodon's `params.poll`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PollParams {
    pub options: Vec<String>,
    pub expires_in: i64,
    pub multiple: bool,
    pub hide_totals: bool,
}

/// Mastodon's ScheduledStatus `params`, as stored and shown. Ids are strings, as Mastodon's
/// JSON has them; `scheduled_at` and `idempotency` are always null and `with_rate_limit` false
/// (Mastodon clears them: the publish is not itself scheduled, keyed or rate-limited).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusParams {
    pub text: String,
    pub media_ids: Option<Vec<String>>,
    pub sensitive: bool,
    pub spoiler_text: String,
    pub visibility: String,
    pub in_reply_to_id: Option<String>,
    pub poll: Option<PollParams>,
    pub language: Option<String>,
    pub application_id: Option<String>,
    pub scheduled_at: Option<String>,
    pub idempotency: Option<String>,
    pub with_rate_limit: bool,
    pub quoted_status_id: Option<String>,
    pub quote_approval_policy: QuotePolicy,
    pub allowed_mentions: Option<Vec<String>>,
}

impl StatusParams {
    pub fn of(request: &StatusRequest) -> StatusParams {
        let ids = |ids: &[i64]| ids.iter().map(i64::to_string).collect::<Vec<_>>();
        let visibility = match (request.visibility, request.unlisted) {
            (Visibility::Public, true) => "unlisted",
            (v, _) => visibility_to_mastodon(v),
        };
        StatusParams {
            text: request.text.as_str().to_owned(),
            media_ids: (!request.media.is_empty()).then(|| ids(&request.media)),
            sensitive: request.warning.sensitive,
            spoiler_text: request.warning.spoiler_text.clone(),
            visibility: visibility.to_owned(),
            in_reply_to_id: request.in_reply_to.map(|id| id.to_string()),
            poll: request.poll.as_ref().map(|p| PollParams {
                options: p.options.clone(),
                expires_in: p.expires_in_secs,
                multiple: p.multiple,
                hide_totals: p.hide_totals,
            }),
            language: None,
            application_id: None,
            scheduled_at: None,
            idempotency: None,
            with_rate_limit: false,
            quoted_status_id: request.quote.map(|id| id.to_string()),
            quote_approval_policy: request.quote_policy,
            allowed_mentions: request
                .allowed_mentions
                .as_ref()
                .map(|a| a.iter().map(|id| id.to_string()).collect()),
        }
    }

    /// The request back, through the parsers that checked it: an error means the row was
    /// not written by [`StatusParams::of`] (it is dropped, never published as something else).
    pub fn request(&self) -> Result<StatusRequest, Invalid> {
        let bad = |field: &'static str| move || Invalid::new(field, format!("{field}: not as scheduled"));
        let media = match &self.media_ids {
            None => Vec::new(),
            Some(ids) => ids
                .iter()
                .map(|id| id.parse::<i64>().ok())
                .collect::<Option<_>>()
                .ok_or_else(bad("media_ids"))?,
        };
        let visibility = visibility_from_mastodon(&self.visibility).ok_or_else(bad("visibility"))?;
        let post_id = |id: &Option<String>, field| {
            id.as_deref().map(|id| PostId::parse(id).ok_or_else(bad(field))).transpose()
        };
        let poll = self.poll.as_ref().map(|p| {
            PollDraft::parse(&RawPoll {
                options: p.options.clone(),
                expires_in: Some(p.expires_in.to_string()),
                multiple: Some(p.multiple),
                hide_totals: Some(p.hide_totals),
            })
        });
        let allowed = self.allowed_mentions.as_ref().map(|ids| {
            ids.iter()
                .map(|id| UserId::parse(id))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(bad("allowed_mentions"))
        });
        Ok(StatusRequest {
            text: PostBody::parse_beside_media(&self.text, !media.is_empty())?,
            visibility,
            unlisted: self.visibility == "unlisted",
            warning: ContentWarning::parse(Some(&self.spoiler_text), Some(self.sensitive))?,
            media,
            in_reply_to: post_id(&self.in_reply_to_id, "in_reply_to_id")?,
            poll: poll.transpose()?,
            quote: post_id(&self.quoted_status_id, "quoted_status_id")?,
            quote_policy: self.quote_approval_policy,
            allowed_mentions: allowed.transpose()?,
        })
    }
}

/// What a row's `params` column holds: the params, and the domain `@handle@domain` mentions
/// were written against (the request's host; the cron has no request to take it from).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    pub params: StatusParams,
    pub domain: String,
}

impl Stored {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(json: &str) -> Option<Stored> {
        serde_json::from_str(json).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = 1_800_000_000_000;

    fn request() -> StatusRequest {
        StatusRequest {
            text: PostBody::parse("hello @bob").unwrap(),
            visibility: Visibility::Public,
            unlisted: true,
            warning: ContentWarning::parse(Some("cw"), None).unwrap(),
            media: vec![7, 3],
            in_reply_to: PostId::parse("42"),
            poll: Some(PollDraft {
                options: vec!["a".into(), "b".into()],
                expires_in_secs: 3600,
                multiple: true,
                hide_totals: false,
            }),
            quote: PostId::parse("9"),
            quote_policy: QuotePolicy::Followers,
            allowed_mentions: Some(vec![UserId::from_trusted(5)]),
        }
    }

    #[test]
    fn a_request_round_trips_through_its_params() {
        let request = request();
        let params = StatusParams::of(&request);
        assert_eq!(params.visibility, "unlisted");
        assert_eq!(params.media_ids, Some(vec!["7".to_string(), "3".to_string()]));
        assert_eq!(params.request(), Ok(request.clone()));
        let stored = Stored { params, domain: "example.test".into() };
        assert_eq!(Stored::from_json(&stored.to_json()), Some(stored));
        let plain = StatusRequest {
            visibility: Visibility::Followers,
            unlisted: false,
            media: vec![],
            poll: None,
            in_reply_to: None,
            quote: None,
            allowed_mentions: None,
            warning: ContentWarning::default(),
            ..request
        };
        let params = StatusParams::of(&plain);
        assert_eq!((params.visibility.as_str(), params.media_ids.as_ref()), ("private", None));
        assert_eq!(params.request(), Ok(plain));
    }

    #[test]
    fn params_not_written_by_of_are_refused() {
        let mut params = StatusParams::of(&request());
        params.visibility = "everyone".into();
        assert_eq!(params.request().unwrap_err().field, "visibility");
        let mut params = StatusParams::of(&request());
        params.media_ids = Some(vec!["x".into()]);
        assert_eq!(params.request().unwrap_err().field, "media_ids");
        let mut params = StatusParams::of(&request());
        params.poll.as_mut().unwrap().options.truncate(1);
        assert_eq!(params.request().unwrap_err().field, "poll");
        assert_eq!(Stored::from_json("{\"params\": 1}"), None);
    }

    #[test]
    fn the_time_is_between_five_minutes_and_a_year_ahead() {
        let at = |ms: Millis| super::super::time::format_rfc3339(ms);
        assert_eq!(scheduled_at(&at(NOW + MIN_AHEAD_MS), NOW), Ok(NOW + MIN_AHEAD_MS));
        assert_eq!(scheduled_at(&at(NOW + MAX_AHEAD_MS), NOW), Ok(NOW + MAX_AHEAD_MS));
        for refused in [at(NOW + MIN_AHEAD_MS - 1), at(NOW - 1000), at(NOW + MAX_AHEAD_MS + 1)] {
            assert_eq!(scheduled_at(&refused, NOW).unwrap_err().field, "scheduled_at", "{refused}");
        }
        for malformed in ["", "tomorrow", "2030-13-01T00:00:00Z", "1800000000000"] {
            let err = scheduled_at(malformed, NOW).unwrap_err();
            assert!(err.reason.contains("ISO 8601"), "{malformed}: {}", err.reason);
        }
        assert_eq!(scheduled_at(" 2027-01-16T09:00:00+01:00 ", NOW), Ok(NOW + DAY_MS));
    }

    #[test]
    fn limits_and_days() {
        assert_eq!(Full::of(0, 0), None);
        assert_eq!(Full::of(MAX_PENDING - 1, MAX_PER_DAY - 1), None);
        assert_eq!(Full::of(MAX_PENDING, 0), Some(Full::Pending));
        assert_eq!(Full::of(10, MAX_PER_DAY), Some(Full::Day));
        let noon = parse_rfc3339("2027-01-15T12:00:00Z").unwrap();
        let (start, end) = day_of(noon);
        assert_eq!(start, parse_rfc3339("2027-01-15T00:00:00Z").unwrap());
        assert_eq!(end - start, DAY_MS);
        assert_eq!(day_of(start), (start, end));
        assert_eq!(day_of(end - 1), (start, end));
    }
}
