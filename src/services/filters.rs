//! Mastodon's filters: the viewer's filters loaded for a status list (ONE statement on their
//! home, only where a list of statuses is read), matched by `domain/filters.rs`, and the
//! entities they answer as (Filter, FilterKeyword, FilterStatus, v1 Filter, FilterResult).
//! `hide` leaves a status out (inside the feed read, so pages stay full: `domain/feed.rs`'s
//! `PageBuilder`; elsewhere before mapping); `warn` and `blur` mark it (`filtered`).

use std::rc::Rc;

use serde::Serialize;

use crate::context::Ctx;
use crate::domain::filters::{Action, Applied, Context, Filter, Keyword, Matched, StatusRef, Subject};
use crate::domain::ids::UserId;
use crate::domain::read::FeedRow;
use crate::domain::time::format_rfc3339;
use crate::error::ApiResult;
use crate::services::notifications::Hydrated;
use crate::store::filters as store;
use crate::store::posts::PostRow;

/// The viewer's filters active in `context` now: one read on their home.
pub async fn load(ctx: &Ctx, viewer: UserId, context: Context) -> ApiResult<Rc<Applied>> {
    let filters = store::all_of(ctx.user_db(viewer), viewer).await?;
    Ok(Rc::new(Applied::new(filters, context, ctx.now)))
}

/// What a post offers to filters: its id and texts (a boost's are its original's, once
/// resolved; an unresolved boost offers nothing).
pub fn subject_texts(p: &PostRow) -> Option<(i64, Vec<String>)> {
    p.shown().filter_subject()
}

/// The filters the post matches (none on the viewer's own posts, as Mastodon).
pub fn matches(applied: &Applied, viewer: UserId, p: &PostRow) -> Vec<Matched> {
    if p.shown().author_id == viewer {
        return Vec::new();
    }
    let Some((id, texts)) = subject_texts(p) else { return Vec::new() };
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    applied.matches(Subject { id, texts: &texts })
}

/// Whether a `hide` filter matches the post.
pub fn hides(applied: &Applied, viewer: UserId, p: &PostRow) -> bool {
    !applied.is_empty()
        && matches(applied, viewer, p).iter().any(|m| applied.filters[m.filter].action == Action::Hide)
}

/// The `filtered` of a post's Status: its `warn` and `blur` matches.
pub fn results(applied: &Applied, viewer: UserId, p: &PostRow) -> Vec<FilterResult> {
    if applied.is_empty() {
        return Vec::new();
    }
    matches(applied, viewer, p)
        .into_iter()
        .filter(|m| applied.filters[m.filter].action != Action::Hide)
        .map(|m| {
            let filter = &applied.filters[m.filter];
            FilterResult {
                filter: FilterEntity::of(filter, applied.now),
                keyword_matches: (!m.keywords.is_empty()).then_some(m.keywords),
                status_matches: (!m.statuses.is_empty())
                    .then(|| m.statuses.iter().map(i64::to_string).collect()),
            }
        })
        .collect()
}

/// The post a notification shows as its status (a reply post, or the post of a favourite, a
/// boost, a mention), which the notifications context's filters match.
pub fn notification_post(n: &Hydrated) -> Option<&PostRow> {
    match (&n.reply, &n.comment) {
        (Some(reply), _) => Some(reply),
        (None, Some(_)) => None,
        (None, None) => n.post.as_ref(),
    }
}

/// A notification's verdict: `None` when a `hide` filter matches its status (it is left
/// out), else the `filtered` of its status.
pub fn of_notification(applied: &Applied, viewer: UserId, n: &Hydrated) -> Option<Vec<FilterResult>> {
    let Some(post) = notification_post(n) else { return Some(Vec::new()) };
    if hides(applied, viewer, post) {
        return None;
    }
    Some(results(applied, viewer, post))
}

/// Mastodon's FilterResult.
#[derive(Debug, Clone, Serialize)]
pub struct FilterResult {
    pub filter: FilterEntity,
    pub keyword_matches: Option<Vec<String>>,
    pub status_matches: Option<Vec<String>>,
}

/// Mastodon's v2 Filter.
#[derive(Debug, Clone, Serialize)]
pub struct FilterEntity {
    id: String,
    title: String,
    context: Vec<&'static str>,
    expires_at: Option<String>,
    filter_action: &'static str,
    keywords: Vec<KeywordEntity>,
    statuses: Vec<StatusEntity>,
}

fn expiry(at: Option<i64>) -> Option<String> {
    at.map(format_rfc3339)
}

impl FilterEntity {
    pub fn of(f: &Filter, _now: i64) -> FilterEntity {
        FilterEntity {
            id: f.id.to_string(),
            title: f.title.clone(),
            context: f.contexts.names(),
            expires_at: expiry(f.expires_at),
            filter_action: f.action.as_str(),
            keywords: f.keywords.iter().map(KeywordEntity::of).collect(),
            statuses: f.statuses.iter().map(StatusEntity::of).collect(),
        }
    }
}

/// Mastodon's FilterKeyword.
#[derive(Debug, Clone, Serialize)]
pub struct KeywordEntity {
    id: String,
    keyword: String,
    whole_word: bool,
}

impl KeywordEntity {
    pub fn of(k: &Keyword) -> KeywordEntity {
        KeywordEntity { id: k.id.to_string(), keyword: k.keyword.clone(), whole_word: k.whole_word }
    }
}

/// Mastodon's FilterStatus.
#[derive(Debug, Clone, Serialize)]
pub struct StatusEntity {
    id: String,
    status_id: String,
}

impl StatusEntity {
    pub fn of(s: &StatusRef) -> StatusEntity {
        StatusEntity { id: s.id.to_string(), status_id: s.status_id.to_string() }
    }
}

/// Mastodon's v1 Filter: one keyword of a v2 filter, named by the keyword's id.
#[derive(Debug, Clone, Serialize)]
pub struct V1Filter {
    id: String,
    phrase: String,
    context: Vec<&'static str>,
    whole_word: bool,
    expires_at: Option<String>,
    irreversible: bool,
}

impl V1Filter {
    pub fn of(f: &Filter, k: &Keyword) -> V1Filter {
        V1Filter {
            id: k.id.to_string(),
            phrase: k.keyword.clone(),
            context: f.contexts.names(),
            whole_word: k.whole_word,
            expires_at: expiry(f.expires_at),
            irreversible: f.action == Action::Hide,
        }
    }

    /// Every keyword of every filter, as v1 filters.
    pub fn all(filters: &[Filter]) -> Vec<V1Filter> {
        filters.iter().flat_map(|f| f.keywords.iter().map(move |k| V1Filter::of(f, k))).collect()
    }
}
