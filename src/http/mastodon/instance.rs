//! The instance's sub-resources (`/api/v1/instance/...`), as Mastodon answers them for a
//! single-domain server: no peers, no translation, the configured rules, the languages a post
//! may be tagged with, the activity that is cheap to count (`services/instance.rs`).

use worker::Response;

use super::json;
use crate::domain::instance::{rules, LANGUAGES};
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::router::InstancePart;
use crate::services::instance;

pub async fn part(app: &App, part: InstancePart) -> ApiResult<Response> {
    match part {
        InstancePart::Peers => json(&Vec::<String>::new()),
        InstancePart::Activity => activity(app).await,
        InstancePart::Languages => json(&LANGUAGES),
        InstancePart::TranslationLanguages => json(&serde_json::json!({})),
        InstancePart::ExtendedDescription => json(&extended_description()),
        InstancePart::Rules => json(&rules(&app.config.instance_rules)),
    }
}

/// Twelve weeks, this week first; public and the same for everyone, so caches may keep it an
/// hour (a count per database on each miss).
async fn activity(app: &App) -> ApiResult<Response> {
    let mut response = Response::from_json(&instance::activity(app).await?)?;
    response.headers_mut().set("cache-control", "public, max-age=3600")?;
    Ok(response)
}

/// Mastodon's `ExtendedDescription` as a server answers it whose operator wrote none: empty, and
/// never updated (the short description is `/api/v2/instance`'s `description`).
fn extended_description() -> serde_json::Value {
    serde_json::json!({ "updated_at": null, "content": "" })
}
