//! Mastodon's filters: v2 (`/api/v2/filters`, with keywords and statuses) and v1
//! (`/api/v1/filters`: each v1 filter is one keyword of a v2 filter, named by the keyword's id;
//! a v1 create makes a filter with that one keyword). All on the owner's home database; an id
//! is only ever looked up with its owner, so someone else's is 404 like a missing one. Read at
//! request time by the status lists (`services/filters.rs`).

use worker::Response;

use super::{json, list};
use crate::domain::filters::{self as rules, Action, Contexts, Filter};
use crate::domain::ids::{FilterId, PostId, UserId};
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::http::router::FilterRoute as F;
use crate::services::filters::{FilterEntity, KeywordEntity, StatusEntity, V1Filter};
use crate::store::filters::{self as store, FilterFields, KeywordChange, KeywordRow};

const NOT_FOUND: ApiError = ApiError::NotFound("Record not found");
const TOO_MANY: ApiError =
    ApiError::Conflict { code: "limit_reached", detail: "a user may have at most 100 filters" };

pub async fn route(app: &App, input: &Input, viewer: UserId, route: F) -> ApiResult<Response> {
    match route {
        F::List => list_v2(app, viewer).await,
        F::Create => create_v2(app, input, viewer).await,
        F::Get(id) => answer_v2(app, viewer, id.get()).await,
        F::Update(id) => update_v2(app, input, viewer, id.get()).await,
        F::Delete(id) => delete_v2(app, viewer, id.get()).await,
        F::Keywords(id) => keywords(app, viewer, id.get()).await,
        F::AddKeyword(id) => add_keyword(app, input, viewer, id.get()).await,
        F::Keyword(id) => json(&KeywordEntity::of(&keyword_of(app, viewer, id.get()).await?)),
        F::UpdateKeyword(id) => update_keyword(app, input, viewer, id.get()).await,
        F::DeleteKeyword(id) => deleted(store::delete_keyword(app.user_db(viewer), viewer, id.get()).await?),
        F::Statuses(id) => statuses(app, viewer, id.get()).await,
        F::AddStatus(id) => add_status(app, input, viewer, id.get()).await,
        F::Status(id) => status(app, viewer, id.get()).await,
        F::DeleteStatus(id) => deleted(store::delete_status(app.user_db(viewer), viewer, id.get()).await?),
        F::V1List => list(&V1Filter::all(&store::all_of(app.user_db(viewer), viewer).await?), None),
        F::V1Create => create_v1(app, input, viewer).await,
        F::V1Get(id) => answer_v1(app, viewer, id.get()).await,
        F::V1Update(id) => update_v1(app, input, viewer, id.get()).await,
        F::V1Delete(id) => delete_v1(app, viewer, id.get()).await,
    }
}

fn deleted(found: bool) -> ApiResult<Response> {
    if !found {
        return Err(NOT_FOUND);
    }
    json(&serde_json::json!({}))
}

async fn owned(app: &App, viewer: UserId, id: i64) -> ApiResult<Filter> {
    store::get(app.user_db(viewer), viewer, id).await?.ok_or(NOT_FOUND)
}

async fn list_v2(app: &App, viewer: UserId) -> ApiResult<Response> {
    let filters = store::all_of(app.user_db(viewer), viewer).await?;
    list(&filters.iter().map(|f| FilterEntity::of(f, app.now)).collect::<Vec<_>>(), None)
}

async fn answer_v2(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    json(&FilterEntity::of(&owned(app, viewer, id).await?, app.now))
}

/// The filter's own fields of a create (`creating`: title and context required) or an update.
fn fields(app: &App, input: &Input, body: &JsonObject, creating: bool) -> ApiResult<FilterFields> {
    let title = match body.str("title")? {
        None if !creating => None,
        text => Some(rules::parse_title(text.unwrap_or(""))?),
    };
    let contexts = contexts(input, creating)?;
    let action = body.optional("filter_action", Action::parse)?;
    Ok(FilterFields { title, contexts, action, expires_at: expiry(app, body)? })
}

/// `context[]` (form, query or JSON array): required on a create.
fn contexts(input: &Input, required: bool) -> ApiResult<Option<Contexts>> {
    if !required && !input.names("context")? {
        return Ok(None);
    }
    Ok(Some(Contexts::parse_list(&input.values_of("context")?)?))
}

/// `expires_in` given (`Some`): seconds from now, or empty / `null` / `0` for never.
fn expiry(app: &App, body: &JsonObject) -> ApiResult<Option<Option<i64>>> {
    if !body.has("expires_in") {
        return Ok(None);
    }
    Ok(Some(rules::expires_at(app.now, body.whole("expires_in")?)?))
}

/// `keywords_attributes`: each adds a keyword, or with an `id` edits one (`_destroy`: removes).
fn keyword_changes(body: &JsonObject) -> ApiResult<Vec<KeywordChange>> {
    let attributes = body.objects("keywords_attributes")?;
    if attributes.len() > rules::MAX_PER_FILTER {
        return Err(ApiError::field("keywords_attributes", "a filter holds at most 100 keywords"));
    }
    attributes.iter().map(keyword_change).collect()
}

fn keyword_change(item: &JsonObject) -> ApiResult<KeywordChange> {
    let keyword = item.optional("keyword", rules::parse_keyword)?;
    let whole_word = item.flag("whole_word")?;
    if !item.has("id") || item.str("id").ok().flatten().is_some_and(str::is_empty) {
        let keyword = keyword.ok_or_else(|| ApiError::field("keyword", "keyword is required"))?;
        return Ok(KeywordChange::Add { keyword, whole_word: whole_word.unwrap_or(true) });
    }
    let id = item.required_id("id", FilterId::parse)?.get();
    if item.flag("_destroy")?.unwrap_or(false) {
        return Ok(KeywordChange::Remove { id });
    }
    Ok(KeywordChange::Edit { id, keyword, whole_word })
}

async fn create_v2(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let fields = fields(app, input, &body, true)?;
    let changes = keyword_changes(&body)?;
    if changes.iter().any(|c| !matches!(c, KeywordChange::Add { .. })) {
        return Err(ApiError::field("keywords_attributes", "a new filter's keywords cannot name ids"));
    }
    let id = make(app, viewer, &fields, &changes).await?;
    answer_v2(app, viewer, id).await
}

/// A new filter with its keywords: its row, then the keywords (the filter's row first, so its
/// id is known; the keywords only attach to a filter that exists).
async fn make(app: &App, viewer: UserId, fields: &FilterFields, changes: &[KeywordChange]) -> ApiResult<i64> {
    let db = app.user_db(viewer);
    let id = store::create(db, viewer, fields, app.now).await?.ok_or(TOO_MANY)?;
    if !changes.is_empty() {
        store::update(db, viewer, id, (&FilterFields::default(), changes), app.now).await?;
    }
    Ok(id)
}

async fn update_v2(app: &App, input: &Input, viewer: UserId, id: i64) -> ApiResult<Response> {
    let body = input.form_or_json(true)?;
    let fields = fields(app, input, &body, false)?;
    let changes = keyword_changes(&body)?;
    if !store::update(app.user_db(viewer), viewer, id, (&fields, &changes), app.now).await? {
        return Err(NOT_FOUND);
    }
    answer_v2(app, viewer, id).await
}

async fn delete_v2(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    deleted(store::delete(app.user_db(viewer), viewer, id).await?)
}

async fn keywords(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    let filter = owned(app, viewer, id).await?;
    list(&filter.keywords.iter().map(KeywordEntity::of).collect::<Vec<_>>(), None)
}

async fn keyword_of(app: &App, viewer: UserId, id: i64) -> ApiResult<rules::Keyword> {
    let row = store::keyword(app.user_db(viewer), viewer, id).await?.ok_or(NOT_FOUND)?;
    Ok(keyword(&row))
}

fn keyword(row: &KeywordRow) -> rules::Keyword {
    rules::Keyword { id: row.id, keyword: row.keyword.clone(), whole_word: row.whole_word != 0 }
}

async fn add_keyword(app: &App, input: &Input, viewer: UserId, id: i64) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let word = body.required("keyword", rules::parse_keyword)?;
    let whole_word = body.flag("whole_word")?.unwrap_or(true);
    let db = app.user_db(viewer);
    let filter = owned(app, viewer, id).await?;
    if filter.keywords.len() >= rules::MAX_PER_FILTER {
        return Err(ApiError::field("keyword", "a filter holds at most 100 keywords"));
    }
    let change = KeywordChange::Add { keyword: word, whole_word };
    store::update(db, viewer, id, (&FilterFields::default(), &[change]), app.now).await?;
    let row = store::newest_keyword(db, viewer, id).await?.ok_or(NOT_FOUND)?;
    json(&KeywordEntity::of(&keyword(&row)))
}

async fn update_keyword(app: &App, input: &Input, viewer: UserId, id: i64) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let new = body.optional("keyword", rules::parse_keyword)?;
    let whole_word = body.flag("whole_word")?;
    let db = app.user_db(viewer);
    let row = store::keyword(db, viewer, id).await?.ok_or(NOT_FOUND)?;
    let change = KeywordChange::Edit { id, keyword: new, whole_word };
    store::update(db, viewer, row.filter_id, (&FilterFields::default(), &[change]), app.now).await?;
    json(&KeywordEntity::of(&keyword_of(app, viewer, id).await?))
}

async fn statuses(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    let filter = owned(app, viewer, id).await?;
    list(&filter.statuses.iter().map(StatusEntity::of).collect::<Vec<_>>(), None)
}

/// Adds a status the viewer may see (404 otherwise, as a missing one) to the filter.
async fn add_status(app: &App, input: &Input, viewer: UserId, id: i64) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let status = body.required_id("status_id", PostId::parse)?;
    owned(app, viewer, id).await?;
    crate::services::posts::visible(app, viewer, status).await?;
    let row = store::add_status(app.user_db(viewer), viewer, id, status.get(), app.now).await?;
    let row = row.ok_or_else(|| ApiError::field("status_id", "a filter holds at most 100 statuses"))?;
    json(&StatusEntity::of(&rules::StatusRef { id: row.id, status_id: row.status_id }))
}

async fn status(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    let row = store::status(app.user_db(viewer), viewer, id).await?.ok_or(NOT_FOUND)?;
    json(&StatusEntity::of(&rules::StatusRef { id: row.id, status_id: row.status_id }))
}

/// A v1 filter's fields: `phrase`, `context`, `irreversible` (hide), `whole_word`,
/// `expires_in`.
fn v1_fields(app: &App, input: &Input, body: &JsonObject, creating: bool) -> ApiResult<FilterFields> {
    let contexts = contexts(input, creating)?;
    let action = body.flag("irreversible")?.map(|hide| if hide { Action::Hide } else { Action::Warn });
    Ok(FilterFields { title: None, contexts, action, expires_at: expiry(app, body)? })
}

async fn create_v1(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let phrase = body.required("phrase", rules::parse_keyword)?;
    let mut fields = v1_fields(app, input, &body, true)?;
    fields.title = Some(phrase.clone());
    let whole_word = body.flag("whole_word")?.unwrap_or(true);
    let id = make(app, viewer, &fields, &[KeywordChange::Add { keyword: phrase, whole_word }]).await?;
    let row = store::newest_keyword(app.user_db(viewer), viewer, id).await?.ok_or(NOT_FOUND)?;
    answer_v1(app, viewer, row.id).await
}

/// The v1 filter a keyword id names: the keyword with its filter.
async fn v1_of(app: &App, viewer: UserId, id: i64) -> ApiResult<(Filter, rules::Keyword)> {
    let row = store::keyword(app.user_db(viewer), viewer, id).await?.ok_or(NOT_FOUND)?;
    let filter = owned(app, viewer, row.filter_id).await?;
    Ok((filter, keyword(&row)))
}

async fn answer_v1(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    let (filter, keyword) = v1_of(app, viewer, id).await?;
    json(&V1Filter::of(&filter, &keyword))
}

async fn update_v1(app: &App, input: &Input, viewer: UserId, id: i64) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let phrase = body.optional("phrase", rules::parse_keyword)?;
    let fields = v1_fields(app, input, &body, false)?;
    let whole_word = body.flag("whole_word")?;
    let db = app.user_db(viewer);
    let row = store::keyword(db, viewer, id).await?.ok_or(NOT_FOUND)?;
    let change = KeywordChange::Edit { id, keyword: phrase, whole_word };
    store::update(db, viewer, row.filter_id, (&fields, &[change]), app.now).await?;
    answer_v1(app, viewer, id).await
}

/// Deletes the keyword, and its filter with it when nothing else is left in it.
async fn delete_v1(app: &App, viewer: UserId, id: i64) -> ApiResult<Response> {
    let (filter, _) = v1_of(app, viewer, id).await?;
    let db = app.user_db(viewer);
    if filter.keywords.len() <= 1 && filter.statuses.is_empty() {
        store::delete(db, viewer, filter.id).await?;
    } else {
        store::delete_keyword(db, viewer, id).await?;
    }
    json(&serde_json::json!({}))
}
