//! Mastodon's filters with their keywords and statuses (migration 0037), on the owner's home
//! database. Every statement names the owner, so an id never reaches someone else's filter. Ids
//! are per owner: `MAX(the next id, now)` in the insert itself, so an id is never reused (a
//! client holding a deleted filter's id never reaches a newer one). A viewer's filters are read
//! with their keywords and statuses in ONE statement ([`all_of`]): what a status list loads.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::StoreResult;
use super::{all, batch, changed_rows, first, int, opt_int, stmt, text, UserDb};
use crate::domain::filters::{Action, Contexts, Filter, Keyword, StatusRef, MAX_FILTERS, MAX_PER_FILTER};
use crate::domain::ids::UserId;

/// A filter's own fields as a create or an update gives them (`None`: keep).
#[derive(Default)]
pub struct FilterFields {
    pub title: Option<String>,
    pub contexts: Option<Contexts>,
    pub action: Option<Action>,
    /// `Some(None)`: never expires.
    pub expires_at: Option<Option<i64>>,
}

/// One change to a filter's keywords (`keywords_attributes`).
pub enum KeywordChange {
    Add { keyword: String, whole_word: bool },
    Edit { id: i64, keyword: Option<String>, whole_word: Option<bool> },
    Remove { id: i64 },
}

#[derive(Deserialize)]
struct FilterRow {
    id: i64,
    title: String,
    context: String,
    action: String,
    expires_at: Option<i64>,
    keywords: String,
    statuses: String,
}

#[derive(Deserialize)]
struct KeywordJson {
    id: i64,
    keyword: String,
    whole_word: i64,
}

#[derive(Deserialize)]
struct StatusJson {
    id: i64,
    status_id: i64,
}

impl FilterRow {
    fn into_filter(self) -> Filter {
        let mut keywords: Vec<KeywordJson> = serde_json::from_str(&self.keywords).unwrap_or_default();
        keywords.sort_by_key(|k| k.id);
        let mut statuses: Vec<StatusJson> = serde_json::from_str(&self.statuses).unwrap_or_default();
        statuses.sort_by_key(|s| s.id);
        Filter {
            id: self.id,
            title: self.title,
            contexts: Contexts::from_stored(&self.context),
            action: Action::parse(&self.action).unwrap_or(Action::Warn),
            expires_at: self.expires_at,
            keywords: keywords
                .into_iter()
                .map(|k| Keyword { id: k.id, keyword: k.keyword, whole_word: k.whole_word != 0 })
                .collect(),
            statuses: statuses.into_iter().map(|s| StatusRef { id: s.id, status_id: s.status_id }).collect(),
        }
    }
}

/// The owner's filters (`?1`), each with its keywords and statuses as JSON arrays, oldest
/// first; `extra` narrows them (`AND f.id = ?2`).
fn select_sql(extra: &str) -> String {
    format!(
        "SELECT f.id, f.title, f.context, f.action, f.expires_at, \
           (SELECT json_group_array(json_object('id', k.id, 'keyword', k.keyword, 'whole_word', k.whole_word)) \
              FROM filter_keywords k WHERE k.user_id = f.user_id AND k.filter_id = f.id) AS keywords, \
           (SELECT json_group_array(json_object('id', s.id, 'status_id', s.status_id)) \
              FROM filter_statuses s WHERE s.user_id = f.user_id AND s.filter_id = f.id) AS statuses \
         FROM filters f WHERE f.user_id = ?1 {extra} ORDER BY f.id"
    )
}

/// Every filter of the owner, with keywords and statuses: one statement.
pub async fn all_of(db: UserDb<'_>, owner: UserId) -> StoreResult<Vec<Filter>> {
    let rows: Vec<FilterRow> = all(db, &select_sql(""), &[int(owner)]).await?;
    Ok(rows.into_iter().map(FilterRow::into_filter).collect())
}

pub async fn get(db: UserDb<'_>, owner: UserId, id: i64) -> StoreResult<Option<Filter>> {
    let row: Option<FilterRow> = first(db, &select_sql("AND f.id = ?2"), &[int(owner), int(id)]).await?;
    Ok(row.map(FilterRow::into_filter))
}

/// The next id of `table` for owner `?1` at `now` (a parameter).
fn next_id(table: &str, now: &str) -> String {
    format!("MAX(COALESCE((SELECT MAX(id) FROM {table} WHERE user_id = ?1), 0) + 1, {now})")
}

/// A new filter (its own row), unless the owner has [`MAX_FILTERS`] already (`None`).
pub async fn create(
    db: UserDb<'_>,
    owner: UserId,
    fields: &FilterFields,
    now: i64,
) -> StoreResult<Option<i64>> {
    let sql = format!(
        "INSERT INTO filters (user_id, id, title, context, action, expires_at, created_at) \
         SELECT ?1, {id}, ?3, ?4, ?5, ?6, ?2 WHERE (SELECT COUNT(*) FROM filters WHERE user_id = ?1) < {MAX_FILTERS} \
         RETURNING id",
        id = next_id("filters", "?2"),
    );
    let params = [
        int(owner),
        int(now),
        text(fields.title.as_deref().unwrap_or("")),
        text(&fields.contexts.unwrap_or_default().stored()),
        text(fields.action.unwrap_or(Action::Warn).as_str()),
        opt_int(fields.expires_at.flatten()),
    ];
    Ok(first::<super::IdRow>(db, &sql, &params).await?.map(|r| r.id))
}

/// Changes the filter's fields and keywords in one batch; whether the filter exists. A keyword
/// change names keywords of this filter only; an addition past [`MAX_PER_FILTER`] is dropped.
pub async fn update(
    db: UserDb<'_>,
    owner: UserId,
    id: i64,
    (fields, changes): (&FilterFields, &[KeywordChange]),
    now: i64,
) -> StoreResult<bool> {
    let mut statements = vec![update_fields(db, owner, id, fields)?];
    for change in changes {
        statements.push(keyword_statement(db, owner, id, change, now)?);
    }
    let results = batch(db, statements).await?;
    Ok(changed_rows(results.first()) > 0)
}

fn update_fields(db: UserDb<'_>, owner: UserId, id: i64, fields: &FilterFields) -> StoreResult<SqlStatement> {
    // `?6`: whether `expires_at` is given (`?7`, possibly null).
    let sql = "UPDATE filters SET title = COALESCE(?3, title), context = COALESCE(?4, context), \
                 action = COALESCE(?5, action), expires_at = CASE WHEN ?6 = 1 THEN ?7 ELSE expires_at END \
               WHERE user_id = ?1 AND id = ?2";
    let params = [
        int(owner),
        int(id),
        super::opt_text(fields.title.as_deref()),
        super::opt_text(fields.contexts.map(Contexts::stored).as_deref()),
        super::opt_text(fields.action.map(Action::as_str)),
        int(i64::from(fields.expires_at.is_some())),
        opt_int(fields.expires_at.flatten()),
    ];
    stmt(db, sql, &params)
}

/// One keyword change of filter `id` as a statement.
pub fn keyword_statement(
    db: UserDb<'_>,
    owner: UserId,
    id: i64,
    change: &KeywordChange,
    now: i64,
) -> StoreResult<SqlStatement> {
    match change {
        KeywordChange::Add { keyword, whole_word } => {
            let sql = format!(
                "INSERT INTO filter_keywords (user_id, id, filter_id, keyword, whole_word, created_at) \
                 SELECT ?1, {next}, ?2, ?4, ?5, ?3 \
                 WHERE EXISTS (SELECT 1 FROM filters WHERE user_id = ?1 AND id = ?2) \
                   AND (SELECT COUNT(*) FROM filter_keywords WHERE user_id = ?1 AND filter_id = ?2) < {MAX_PER_FILTER}",
                next = next_id("filter_keywords", "?3"),
            );
            let params = [int(owner), int(id), int(now), text(keyword), int(i64::from(*whole_word))];
            stmt(db, &sql, &params)
        }
        KeywordChange::Edit { id: keyword_id, keyword, whole_word } => {
            let sql = "UPDATE filter_keywords SET keyword = COALESCE(?4, keyword), \
                         whole_word = COALESCE(?5, whole_word) WHERE user_id = ?1 AND filter_id = ?2 AND id = ?3";
            let whole = whole_word.map(|w| int(i64::from(w))).unwrap_or(wasm_bindgen::JsValue::NULL);
            let params = [int(owner), int(id), int(*keyword_id), super::opt_text(keyword.as_deref()), whole];
            stmt(db, sql, &params)
        }
        KeywordChange::Remove { id: keyword_id } => stmt(
            db,
            "DELETE FROM filter_keywords WHERE user_id = ?1 AND filter_id = ?2 AND id = ?3",
            &[int(owner), int(id), int(*keyword_id)],
        ),
    }
}

/// Deletes the filter with its keywords and statuses; whether there was one.
pub async fn delete(db: UserDb<'_>, owner: UserId, id: i64) -> StoreResult<bool> {
    let key = [int(owner), int(id)];
    let results = batch(
        db,
        vec![
            stmt(db, "DELETE FROM filter_keywords WHERE user_id = ?1 AND filter_id = ?2", &key)?,
            stmt(db, "DELETE FROM filter_statuses WHERE user_id = ?1 AND filter_id = ?2", &key)?,
            stmt(db, "DELETE FROM filters WHERE user_id = ?1 AND id = ?2", &key)?,
        ],
    )
    .await?;
    Ok(changed_rows(results.get(2)) > 0)
}

/// A keyword with its filter's id.
#[derive(Deserialize)]
pub struct KeywordRow {
    pub id: i64,
    pub filter_id: i64,
    pub keyword: String,
    pub whole_word: i64,
}

pub async fn keyword(db: UserDb<'_>, owner: UserId, id: i64) -> StoreResult<Option<KeywordRow>> {
    let sql = "SELECT id, filter_id, keyword, whole_word FROM filter_keywords WHERE user_id = ?1 AND id = ?2";
    first(db, sql, &[int(owner), int(id)]).await
}

/// The newest keyword of a filter (the one an add just made).
pub async fn newest_keyword(db: UserDb<'_>, owner: UserId, filter: i64) -> StoreResult<Option<KeywordRow>> {
    let sql = "SELECT id, filter_id, keyword, whole_word FROM filter_keywords \
               WHERE user_id = ?1 AND filter_id = ?2 ORDER BY id DESC LIMIT 1";
    first(db, sql, &[int(owner), int(filter)]).await
}

/// Deletes a keyword; whether there was one.
pub async fn delete_keyword(db: UserDb<'_>, owner: UserId, id: i64) -> StoreResult<bool> {
    let sql = "DELETE FROM filter_keywords WHERE user_id = ?1 AND id = ?2";
    Ok(super::run(db, sql, &[int(owner), int(id)]).await? > 0)
}

/// A status filter with its filter's id.
#[derive(Deserialize)]
pub struct StatusRow {
    pub id: i64,
    pub filter_id: i64,
    pub status_id: i64,
}

/// Adds a status to a filter (once: the same status again answers the existing row), unless the
/// filter does not exist or is full (`None`).
pub async fn add_status(
    db: UserDb<'_>,
    owner: UserId,
    filter: i64,
    status: i64,
    now: i64,
) -> StoreResult<Option<StatusRow>> {
    let insert = format!(
        "INSERT INTO filter_statuses (user_id, id, filter_id, status_id, created_at) \
         SELECT ?1, {next}, ?2, ?4, ?3 WHERE EXISTS (SELECT 1 FROM filters WHERE user_id = ?1 AND id = ?2) \
           AND NOT EXISTS (SELECT 1 FROM filter_statuses WHERE user_id = ?1 AND filter_id = ?2 AND status_id = ?4) \
           AND (SELECT COUNT(*) FROM filter_statuses WHERE user_id = ?1 AND filter_id = ?2) < {MAX_PER_FILTER}",
        next = next_id("filter_statuses", "?3"),
    );
    let params = [int(owner), int(filter), int(now), int(status)];
    let read = "SELECT id, filter_id, status_id FROM filter_statuses \
                WHERE user_id = ?1 AND filter_id = ?2 AND status_id = ?4 AND ?3 = ?3";
    let results = batch(db, vec![stmt(db, &insert, &params)?, stmt(db, read, &params)?]).await?;
    let rows: Vec<StatusRow> = results.get(1).map(|r| r.results()).transpose()?.unwrap_or_default();
    Ok(rows.into_iter().next())
}

pub async fn status(db: UserDb<'_>, owner: UserId, id: i64) -> StoreResult<Option<StatusRow>> {
    let sql = "SELECT id, filter_id, status_id FROM filter_statuses WHERE user_id = ?1 AND id = ?2";
    first(db, sql, &[int(owner), int(id)]).await
}

pub async fn delete_status(db: UserDb<'_>, owner: UserId, id: i64) -> StoreResult<bool> {
    let sql = "DELETE FROM filter_statuses WHERE user_id = ?1 AND id = ?2";
    Ok(super::run(db, sql, &[int(owner), int(id)]).await? > 0)
}
