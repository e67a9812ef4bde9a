//! The timelines beyond follows (`/api/v1/timelines/public`, `/api/v1/timelines/tag/{tag}`)
//! and hashtags (`/api/v1/tags/{tag}`, following, featuring, `/api/v1/followed_tags`,
//! `/api/v1/featured_tags`).

use serde_json::{json, Value};
use worker::Response;

use super::{json, list};
use crate::domain::ids::{parse_id, UserId};
use crate::domain::mastodon::{form_bool, kept_params, limit, link_header};
use crate::domain::snowflake::snowflake_time;
use crate::domain::tags::{featured_id, parse_name};
use crate::domain::time::format_rfc3339;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::TagRoute;
use crate::services::tags::{self, Featured, TagView};
use crate::services::timelines::{self, Query, Source};
use crate::store::users::UserKey;

pub async fn route(app: &App, input: &Input, viewer: UserId, route: TagRoute) -> ApiResult<Response> {
    match route {
        TagRoute::PublicTimeline => timeline(app, input, viewer, Source::Public, "timelines/public").await,
        TagRoute::TagTimeline(name) => {
            let source = Source::Tag {
                name: name.as_str().to_string(),
                any: tag_list(input, "any[]")?,
                all: tag_list(input, "all[]")?,
                none: tag_list(input, "none[]")?,
            };
            timeline(app, input, viewer, source, &format!("timelines/tag/{}", name.as_str())).await
        }
        TagRoute::Tag(name) => json(&tag_entity(app, input, &tags::tag(app, viewer, name.as_str()).await?)),
        TagRoute::Follow(name, on) => {
            json(&tag_entity(app, input, &tags::follow(app, viewer, name.as_str(), on).await?))
        }
        TagRoute::Feature(name, on) => {
            json(&tag_entity(app, input, &tags::feature(app, viewer, name.as_str(), on).await?))
        }
        TagRoute::Followed => followed(app, input, viewer).await,
        TagRoute::Featured => featured(app, input, viewer, viewer).await,
        TagRoute::AccountFeatured(user) => featured(app, input, viewer, user).await,
        TagRoute::CreateFeatured => create_featured(app, input, viewer).await,
        TagRoute::DeleteFeatured(id) => delete_featured(app, viewer, id).await,
        TagRoute::FeaturedSuggestions => {
            let names = tags::suggestions(app, viewer).await?;
            let views: Vec<Value> = names
                .into_iter()
                .map(|name| {
                    tag_entity(
                        app,
                        input,
                        &TagView { name, history: Vec::new(), following: false, featuring: false },
                    )
                })
                .collect();
            json(&views)
        }
    }
}

/// The tags of a repeated query parameter (`any[]=a&any[]=b`); a value that is no tag is refused.
fn tag_list(input: &Input, name: &'static str) -> ApiResult<Vec<String>> {
    input
        .query_all(name)
        .filter(|v| !v.trim().is_empty())
        .map(|v| {
            parse_name(v)
                .map(str::to_string)
                .ok_or_else(|| ApiError::field(name, format!("{name}: {v:?} is no tag")))
        })
        .collect()
}

/// A status id bound of the query (`max_id`, `since_id`, `min_id`).
fn id_bound(input: &Input, name: &'static str) -> ApiResult<Option<i64>> {
    match input.query(name).map(str::trim) {
        None | Some("") => Ok(None),
        Some(id) => {
            parse_id(id).map(Some).ok_or_else(|| ApiError::field(name, format!("{name} must be a status id")))
        }
    }
}

fn query_flag(input: &Input, name: &'static str) -> ApiResult<bool> {
    match input.query(name).map(str::trim) {
        None | Some("") => Ok(false),
        Some(v) => form_bool(v).ok_or_else(|| ApiError::field(name, format!("{name} must be a boolean"))),
    }
}

/// A page of a public or tag timeline. Every account is local on one domain: `local=true`
/// changes nothing and `remote=true` (only other servers' posts) is always empty.
async fn timeline(
    app: &App,
    input: &Input,
    viewer: UserId,
    source: Source,
    path: &str,
) -> ApiResult<Response> {
    query_flag(input, "local")?;
    let only_media = query_flag(input, "only_media")?;
    let query = Query {
        source,
        max_id: id_bound(input, "max_id")?,
        since_id: id_bound(input, "since_id")?,
        min_id: id_bound(input, "min_id")?,
        only_media,
        limit: limit(input.query("limit")),
    };
    if query_flag(input, "remote")? {
        return list::<Value>(&[], None);
    }
    // The public context's filters (Mastodon's, for the public and tag timelines): one read
    // beside the page's.
    let (page, applied) = futures_util::future::join(
        timelines::page(app, viewer, &query),
        super::filters_for(app, viewer, crate::domain::filters::Context::Public),
    )
    .await;
    let (page, applied) = (page?, applied?);
    let items = super::statuses_in(app, input, viewer, &page.posts, Some(&applied)).await?;
    let base = format!("{}/api/v1/{path}", input.origin);
    let mut kept = kept_params(input.query("limit"));
    if only_media {
        kept = if kept.is_empty() { "only_media=true".into() } else { format!("{kept}&only_media=true") };
    }
    let (newest, oldest) = (page.newest.map(|n| n.to_string()), page.oldest.map(|o| o.to_string()));
    list(&items, link_header(&base, &kept, newest.as_deref(), oldest.as_deref(), page.more))
}

/// Mastodon's Tag entity (`history` counts are strings, as Mastodon sends them).
pub(super) fn tag_entity(_app: &App, input: &Input, view: &TagView) -> Value {
    let history: Vec<Value> = view
        .history
        .iter()
        .map(|d| json!({ "day": (d.day * 86_400).to_string(), "uses": d.uses.to_string(), "accounts": d.accounts.to_string() }))
        .collect();
    json!({
        "id": crate::domain::tags::key_of(&view.name),
        "name": view.name,
        "url": format!("{}/tags/{}", input.origin, view.name),
        "history": history,
        "following": view.following,
        "featuring": view.featuring,
    })
}

async fn followed(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let rows = tags::followed(app, viewer).await?;
    let views: Vec<Value> = rows
        .into_iter()
        .map(|r| {
            tag_entity(
                app,
                input,
                &TagView { name: r.name, history: Vec::new(), following: true, featuring: false },
            )
        })
        .collect();
    json(&views)
}

/// Mastodon's FeaturedTag entity for `user`'s tag.
fn featured_entity(input: &Input, handle: &str, user: UserId, tag: &Featured) -> Value {
    let last = tag.newest.map(|id| format_rfc3339(snowflake_time(id)).chars().take(10).collect::<String>());
    json!({
        "id": featured_id(user.get(), &tag.row.name).to_string(),
        "name": tag.row.name,
        "url": format!("{}/@{handle}/tagged/{}", input.origin, tag.row.name),
        "statuses_count": tag.uses,
        "last_status_at": last,
    })
}

async fn featured(app: &App, input: &Input, viewer: UserId, user: UserId) -> ApiResult<Response> {
    let (account, _) =
        crate::services::users::visible_with_relationship(app, viewer, UserKey::Id(user)).await?;
    let tags = tags::featured(app, user).await?;
    let items: Vec<Value> = tags.iter().map(|t| featured_entity(input, &account.handle, user, t)).collect();
    json(&items)
}

async fn create_featured(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let raw = body.required_str("name")?;
    let name = parse_name(raw).ok_or_else(|| ApiError::field("name", "name must be a hashtag"))?;
    tags::feature(app, viewer, name, true).await?;
    let (account, _) =
        crate::services::users::visible_with_relationship(app, viewer, UserKey::Id(viewer)).await?;
    let all = tags::featured(app, viewer).await?;
    let made = all
        .iter()
        .find(|t| crate::domain::tags::key_of(&t.row.name) == crate::domain::tags::key_of(name))
        .ok_or(ApiError::NotFound("no such featured tag"))?;
    json(&featured_entity(input, &account.handle, viewer, made))
}

async fn delete_featured(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    let all = tags::featured(app, viewer).await?;
    let Some(found) = all.iter().find(|t| featured_id(viewer.get(), &t.row.name) == id) else {
        return Err(ApiError::NotFound("no such featured tag"));
    };
    tags::feature(app, viewer, &found.row.name, false).await?;
    json(&json!({}))
}
