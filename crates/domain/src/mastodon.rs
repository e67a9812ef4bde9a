//! The Mastodon client API's vocabulary, mapped onto edgefeed's: visibility, status text as
//! HTML, `max_id`/`since_id`/`min_id` paging on the feed's `(created_at, id)` order, `Link`.

use super::cursor::SortKey;
use super::snowflake::snowflake_time;
use super::visibility::Visibility;

/// Mastodon's four visibilities onto edgefeed's three. `unlisted` (public, but kept out of
/// public timelines) is `public`: edgefeed has no public timelines to keep it out of. `direct`
/// (the author and the mentioned) is `private`, which means exactly that.
pub fn visibility_from_mastodon(text: &str) -> Option<Visibility> {
    match text {
        "public" | "unlisted" => Some(Visibility::Public),
        "private" => Some(Visibility::Followers),
        "direct" => Some(Visibility::Private),
        _ => None,
    }
}

pub fn visibility_to_mastodon(v: Visibility) -> &'static str {
    match v {
        Visibility::Public => "public",
        Visibility::Followers => "private",
        Visibility::Private => "direct",
    }
}

/// Plain text as Mastodon's `content`: HTML-escaped, paragraphs on blank lines, `<br>` on
/// single line breaks.
pub fn content_html(text: &str) -> String {
    let mut html = String::with_capacity(text.len() + 7);
    for (i, paragraph) in text.split("\n\n").filter(|p| !p.trim().is_empty()).enumerate() {
        if i == 0 {
            html.push_str("<p>");
        } else {
            html.push_str("</p><p>");
        }
        for (j, line) in paragraph.trim_matches('\n').split('\n').enumerate() {
            if j > 0 {
                html.push_str("<br>");
            }
            escape_into(&mut html, line);
        }
    }
    if !html.is_empty() {
        html.push_str("</p>");
    }
    html
}

pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// The handle part of an `acct` as clients send it (`handle`, `@handle`, `handle@domain`, or an
/// e-mail-like sign-in name): what comes before any `@`. There is one domain.
pub fn acct_handle(acct: &str) -> &str {
    acct.trim().trim_start_matches('@').split('@').next().unwrap_or("")
}

/// The handle an `acct` names on this server (`handle`, `@handle`, `handle@domain` with our
/// domain, with or without its port, in any case): `None` for an account elsewhere, which no
/// local account stands for (a search for `bob@mastodon.example` must not find our `bob`).
pub fn local_acct<'a>(acct: &'a str, domain: &str) -> Option<&'a str> {
    let acct = acct.trim().trim_start_matches('@');
    match acct.split_once('@') {
        None => Some(acct),
        Some((handle, theirs)) => {
            let host = domain.rsplit_once(':').map_or(domain, |(host, _)| host);
            let ours = theirs.eq_ignore_ascii_case(domain) || theirs.eq_ignore_ascii_case(host);
            ours.then_some(handle)
        }
    }
}

/// The domain part of an origin (`host[:port]`): the one domain every local account is on.
pub fn domain_of(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, domain)| domain)
}

/// The streaming API's URL as the instance documents advertise it: WebSocket on the origin's
/// own scheme (`ws://` for `http://`, `wss://` for `https://`). Clients connect to it as given
/// (Mastodon.py turns `wss:` into `https:`), so a fixed `wss://` fails on a plain-http server.
pub fn streaming_url(origin: &str) -> String {
    match origin.split_once("://") {
        Some(("http", rest)) => format!("ws://{rest}"),
        Some((_, rest)) => format!("wss://{rest}"),
        None => format!("wss://{origin}"),
    }
}

/// The feed position of a status id: ids are snowflakes whose high bits are the creation
/// millisecond, so `(created_at, id)` comes from the id alone (no lookup, and an id of a post
/// deleted meanwhile still pages correctly).
pub fn key_of_status(id: i64) -> SortKey {
    SortKey::new(snowflake_time(id), id)
}

/// Mastodon's `limit`: default 20, clamped to 1..=40 (Mastodon clamps rather than refusing).
pub fn limit(raw: Option<&str>) -> usize {
    raw.and_then(|v| v.trim().parse::<i64>().ok()).map_or(20, |n| n.clamp(1, 40) as usize)
}

/// The query parameters a `Link` keeps from the request: `limit`, as Mastodon does, so a
/// client paging by the links gets pages of the size it asked for (already encoded).
pub fn kept_params(limit: Option<&str>) -> String {
    match limit.map(str::trim).and_then(|v| v.parse::<i64>().ok()) {
        Some(n) => format!("limit={n}"),
        None => String::new(),
    }
}

/// A page's `Link` header: `next` continues below the oldest item (`max_id`), `prev` above the
/// newest (`min_id`); `next` only when there may be more. `base` is the route's absolute URL,
/// `extra` other query parameters to keep (already encoded, `&`-joined).
pub fn link_header(
    base: &str,
    extra: &str,
    newest: Option<&str>,
    oldest: Option<&str>,
    more: bool,
) -> Option<String> {
    let sep = if extra.is_empty() { String::new() } else { format!("&{extra}") };
    let mut links = Vec::new();
    if let (Some(oldest), true) = (oldest, more) {
        links.push(format!("<{base}?max_id={oldest}{sep}>; rel=\"next\""));
    }
    if let Some(newest) = newest {
        links.push(format!("<{base}?min_id={newest}{sep}>; rel=\"prev\""));
    }
    (!links.is_empty()).then(|| links.join(", "))
}

/// A boolean as a form sends it: `true`, `1`, `on`, `t` and `false`, `0`, `off`, `f` (any case,
/// as Rails casts them); anything else is no boolean (`None`: refused, not guessed).
pub fn form_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "t" => Some(true),
        "false" | "0" | "off" | "f" => Some(false),
        _ => None,
    }
}

/// A boolean query parameter (`true`/`false`, `1`/`0`, ...): absent is `false`, anything else
/// is refused naming it.
pub fn query_flag(name: &'static str, raw: Option<&str>) -> Result<bool, crate::validate::Invalid> {
    match raw {
        None => Ok(false),
        Some(text) => form_bool(text)
            .ok_or_else(|| crate::validate::Invalid::new(name, format!("{name} must be a boolean"))),
    }
}

#[cfg(test)]
mod search_tests {
    use super::*;

    #[test]
    fn query_flags_default_false_and_refuse_junk() {
        assert_eq!(query_flag("following", None), Ok(false));
        assert_eq!(query_flag("following", Some("true")), Ok(true));
        assert!(query_flag("following", Some("maybe")).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snowflake::snowflake;

    #[test]
    fn form_booleans_read_as_rails_casts_them() {
        for yes in ["true", "1", " TRUE ", "on", "t"] {
            assert_eq!(form_bool(yes), Some(true), "{yes}");
        }
        for no in ["false", "0", "Off", "f"] {
            assert_eq!(form_bool(no), Some(false), "{no}");
        }
        assert_eq!(form_bool(""), None);
        assert_eq!(form_bool("yes please"), None);
    }

    #[test]
    fn visibilities_round_trip_through_the_mapping() {
        for v in [Visibility::Public, Visibility::Followers, Visibility::Private] {
            assert_eq!(visibility_from_mastodon(visibility_to_mastodon(v)), Some(v));
        }
        assert_eq!(visibility_from_mastodon("unlisted"), Some(Visibility::Public));
        assert_eq!(visibility_from_mastodon("secret"), None);
    }

    #[test]
    fn content_is_escaped_html_paragraphs() {
        assert_eq!(content_html("a <b> & \"c\""), "<p>a &lt;b&gt; &amp; &quot;c&quot;</p>");
        assert_eq!(content_html("one\ntwo\n\nthree"), "<p>one<br>two</p><p>three</p>");
        assert_eq!(content_html(""), "");
    }

    #[test]
    fn an_acct_names_its_handle() {
        for acct in ["ana", "@ana", "ana@edge.example", " @ana@edge.example "] {
            assert_eq!(acct_handle(acct), "ana", "{acct}");
        }
        assert_eq!(acct_handle("@"), "");
    }

    #[test]
    fn the_streaming_url_follows_the_origins_scheme() {
        assert_eq!(streaming_url("http://127.0.0.1:8787"), "ws://127.0.0.1:8787");
        assert_eq!(streaming_url("https://edge.example"), "wss://edge.example");
        assert_eq!(domain_of("http://127.0.0.1:8787"), "127.0.0.1:8787");
    }

    #[test]
    fn a_status_id_carries_its_feed_position() {
        let id = snowflake(1_700_000_000_123, 77).unwrap();
        assert_eq!(key_of_status(id), SortKey::new(1_700_000_000_123, id));
    }

    #[test]
    fn limits_clamp_like_mastodon() {
        assert_eq!((limit(None), limit(Some("0")), limit(Some("99")), limit(Some("x"))), (20, 1, 40, 20));
    }

    #[test]
    fn link_headers_name_next_and_prev() {
        let link = link_header("https://e.x/api/v1/timelines/home", "", Some("9"), Some("3"), true).unwrap();
        assert_eq!(
            link,
            "<https://e.x/api/v1/timelines/home?max_id=3>; rel=\"next\", \
             <https://e.x/api/v1/timelines/home?min_id=9>; rel=\"prev\""
        );
        let last = link_header("https://e.x/a", "limit=5", Some("9"), Some("3"), false).unwrap();
        assert_eq!(last, "<https://e.x/a?min_id=9&limit=5>; rel=\"prev\"");
        assert_eq!(link_header("https://e.x/a", "", None, None, false), None);
        assert_eq!(kept_params(Some(" 5")), "limit=5");
        assert_eq!(kept_params(Some("many")), "");
        assert_eq!(kept_params(None), "");
    }

    #[test]
    fn local_accts() {
        let domain = "social.example:8443";
        assert_eq!(local_acct("bob", domain), Some("bob"));
        assert_eq!(local_acct("@bob", domain), Some("bob"));
        assert_eq!(local_acct("bob@social.example:8443", domain), Some("bob"));
        assert_eq!(local_acct("bob@Social.Example", domain), Some("bob"));
        assert_eq!(local_acct("@bob@social.example", domain), Some("bob"));
        assert_eq!(local_acct("bob@mastodon.example", domain), None);
        assert_eq!(local_acct("bob@social.example.evil", domain), None);
        assert_eq!(local_acct("bob@", domain), None);
        assert_eq!(local_acct("bob@127.0.0.1", "127.0.0.1:8787"), Some("bob"));
    }
}
