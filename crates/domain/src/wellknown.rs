//! The discovery documents software reads before (or instead of) the client API: NodeInfo (what
//! runs here), host-meta (where WebFinger is) and WebFinger (who a handle is). Pure: their shapes
//! and the parsing of a WebFinger resource; `http/mastodon/wellknown.rs` serves them.

use serde_json::{json, Value};

use super::mastodon::{domain_of, escape_into};

/// The NodeInfo schema served, as its discovery link names it.
pub const NODEINFO_SCHEMA: &str = "http://nodeinfo.diaspora.software/ns/schema/2.0";
/// The NodeInfo 2.0 document's media type (the schema's profile, as the spec asks).
pub const NODEINFO_CONTENT_TYPE: &str =
    "application/json; profile=\"http://nodeinfo.diaspora.software/ns/schema/2.0#\"";
/// The WebFinger link relation of an account's profile page.
const PROFILE_PAGE: &str = "http://webfinger.net/rel/profile-page";
/// The service's version, as the OpenAPI document and the instance documents give it.
pub const SOFTWARE_VERSION: &str = "1.1.0";

/// `/.well-known/nodeinfo`: where the NodeInfo document is.
pub fn nodeinfo_links(origin: &str) -> Value {
    json!({ "links": [{ "rel": NODEINFO_SCHEMA, "href": format!("{origin}/nodeinfo/2.0") }] })
}

/// `/nodeinfo/2.0`. `protocols` is empty because edgefeed federates with nothing (the schema
/// wants at least one; claiming `activitypub` would send servers to endpoints that do not
/// exist). Usage is not counted: zeros, as in the instance documents.
pub fn nodeinfo(open_registrations: bool) -> Value {
    json!({
        "version": "2.0",
        "software": { "name": "edgefeed", "version": SOFTWARE_VERSION },
        "protocols": [],
        "services": { "inbound": [], "outbound": [] },
        "usage": { "users": { "total": 0, "activeMonth": 0, "activeHalfyear": 0 }, "localPosts": 0 },
        "openRegistrations": open_registrations,
        "metadata": {},
    })
}

/// RFC 8414 authorization server metadata (`/.well-known/oauth-authorization-server`), as
/// Mastodon 4.3 publishes it. Browser apps read its presence as "PKCE is supported" (Phanpy
/// does), so it names S256 and the `none` client authentication (a public client proving
/// itself with the verifier). The scope families are those `domain/oauth.rs` accepts: a
/// granular `read:statuses` counts as its family.
pub fn oauth_metadata(origin: &str) -> Value {
    json!({
        "issuer": format!("{origin}/"),
        "service_documentation": "https://docs.joinmastodon.org/",
        "authorization_endpoint": format!("{origin}/oauth/authorize"),
        "token_endpoint": format!("{origin}/oauth/token"),
        "revocation_endpoint": format!("{origin}/oauth/revoke"),
        "app_registration_endpoint": format!("{origin}/api/v1/apps"),
        "scopes_supported": ["read", "write", "follow", "push"],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code", "password"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
    })
}

/// `/.well-known/host-meta` (RFC 6415): the WebFinger template, in XRD.
pub fn host_meta(origin: &str) -> String {
    let mut template = String::new();
    escape_into(&mut template, &format!("{origin}/.well-known/webfinger?resource={{uri}}"));
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<XRD xmlns=\"http://docs.oasis-open.org/ns/xri/xrd-1.0\">\n  \
         <Link rel=\"lrdd\" template=\"{template}\"/>\n</XRD>\n"
    )
}

/// The handle a WebFinger `resource` names on this server: `acct:handle@domain` (the domain
/// must be ours), `acct:handle`, `handle@domain` without the scheme (Mastodon accepts it), or the
/// profile page `{origin}/?user=handle` (or Mastodon's `{origin}/@handle`). `None` for anything
/// else, including other domains.
pub fn webfinger_handle<'a>(resource: &'a str, origin: &str) -> Option<&'a str> {
    let resource = resource.trim();
    let path = resource.strip_prefix(origin);
    let profile = path.and_then(|rest| rest.strip_prefix("/?user=").or_else(|| rest.strip_prefix("/@")));
    let handle = match profile {
        Some(handle) => handle,
        None => {
            let acct = resource.strip_prefix("acct:").unwrap_or(resource);
            let acct = acct.strip_prefix('@').unwrap_or(acct);
            match acct.split_once('@') {
                Some((handle, domain)) if domain.eq_ignore_ascii_case(domain_of(origin)) => handle,
                Some(_) => return None,
                None => acct,
            }
        }
    };
    let well_formed = !handle.is_empty() && !handle.contains(['/', '@', ':', '?', '#']);
    well_formed.then_some(handle)
}

/// An account's page: the web client opens `?user=` (the Account entity's `url` too).
pub fn profile_page(origin: &str, handle: &str) -> String {
    format!("{origin}/?user={handle}")
}

/// The JRD (RFC 7033) for a local account: its `acct:` subject, its profile page and its
/// account URI as aliases, and the profile page link.
pub fn webfinger(origin: &str, handle: &str, account_uri: &str) -> Value {
    let profile = profile_page(origin, handle);
    json!({
        "subject": format!("acct:{handle}@{}", domain_of(origin)),
        "aliases": [profile, account_uri],
        "links": [{ "rel": PROFILE_PAGE, "type": "text/html", "href": profile }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: &str = "https://edge.example";

    #[test]
    fn resources_name_local_handles_only() {
        for resource in [
            "acct:ana@edge.example",
            "acct:ana@EDGE.example",
            "acct:ana",
            "ana@edge.example",
            "@ana@edge.example",
            " acct:ana@edge.example ",
            "https://edge.example/@ana",
            "https://edge.example/?user=ana",
        ] {
            assert_eq!(webfinger_handle(resource, ORIGIN), Some("ana"), "{resource}");
        }
        for resource in [
            "acct:ana@other.example",
            "acct:",
            "",
            "https://other.example/@ana",
            "https://edge.example/users/ana",
            "https://edge.example/@ana/1",
            "acct:ana@edge.example@x",
            "mailto:ana",
        ] {
            assert_eq!(webfinger_handle(resource, ORIGIN), None, "{resource}");
        }
        assert_eq!(webfinger_handle("acct:ana@127.0.0.1:8787", "http://127.0.0.1:8787"), Some("ana"));
    }

    #[test]
    fn the_jrd_names_the_account_on_this_domain() {
        let jrd = webfinger(ORIGIN, "ana", "https://edge.example/api/v1/accounts/7");
        assert_eq!(jrd["subject"], "acct:ana@edge.example");
        assert_eq!(
            jrd["aliases"],
            json!(["https://edge.example/?user=ana", "https://edge.example/api/v1/accounts/7"])
        );
        assert_eq!(jrd["links"][0]["href"], "https://edge.example/?user=ana");
    }

    #[test]
    fn nodeinfo_is_found_from_its_links_and_host_meta_points_at_webfinger() {
        assert_eq!(nodeinfo_links(ORIGIN)["links"][0]["href"], "https://edge.example/nodeinfo/2.0");
        assert_eq!(nodeinfo_links(ORIGIN)["links"][0]["rel"], NODEINFO_SCHEMA);
        let doc = nodeinfo(false);
        assert_eq!((doc["version"].as_str(), doc["openRegistrations"].as_bool()), (Some("2.0"), Some(false)));
        assert_eq!(doc["software"]["name"], "edgefeed");
        let xml = host_meta(ORIGIN);
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), "{xml}");
        assert!(
            xml.contains(
                r#"<Link rel="lrdd" template="https://edge.example/.well-known/webfinger?resource={uri}"/>"#
            ),
            "{xml}"
        );
        assert!(host_meta("https://a&b").contains("https://a&amp;b/"), "the origin is escaped");
    }
}
