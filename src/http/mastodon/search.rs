//! Search: `GET /api/v2/search` (accounts, hashtags, statuses) and `GET /api/v1/accounts/search`
//! (its accounts part), over `services/search`. Parameters are checked before anything is
//! read; a bad one answers 422 naming it.

use futures_util::future::join3;
use serde_json::Value;
use worker::Response;

use super::accounts::handle_of;
use super::entities::{Account, Status};
use super::{json, list, statuses_of};
use crate::domain::ids::{parse_id, UserId};
use crate::domain::mastodon::{domain_of, local_acct, query_flag};
use crate::domain::search::{self, Kind, Resolved};
use crate::domain::validate::Handle;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::search::{self as find, StatusQuery, Window, TERM_BOUND};
use crate::services::users::visible_with_relationship;
use crate::store::users::{UserKey, UserRow};

/// The most accounts `/api/v1/accounts/search` answers (Mastodon's bound on its `limit`).
const MAX_ACCOUNTS: i64 = 80;
/// The most results of each kind `/api/v2/search` answers (Mastodon's bound on its `limit`).
const MAX_RESULTS: i64 = 40;

fn number(input: &Input, name: &'static str, default: i64) -> ApiResult<i64> {
    match input.query(name).map(str::trim) {
        None | Some("") => Ok(default),
        Some(v) => v.parse::<i64>().map_err(|_| ApiError::field(name, format!("{name} must be a number"))),
    }
}

fn required_q(input: &Input) -> ApiResult<&str> {
    let q = input.query("q").map(str::trim).filter(|q| !q.is_empty());
    q.ok_or_else(|| ApiError::field("q", "q is required"))
}

/// `limit` (clamped into `1..=max`, as Mastodon does) and `offset` (clamped to what the
/// bounded term reads can reach).
fn window(input: &Input, default: i64, max: i64) -> ApiResult<Window> {
    let limit = number(input, "limit", default)?.clamp(1, max) as usize;
    let offset = number(input, "offset", 0)?.clamp(0, TERM_BOUND as i64) as usize;
    Ok((offset, limit))
}

fn id_param(input: &Input, name: &'static str) -> ApiResult<Option<i64>> {
    match input.query(name).map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => {
            parse_id(v).map(Some).ok_or_else(|| ApiError::field(name, format!("{name} must be an id")))
        }
    }
}

/// What an account search looks for: the query's words (of its local handle part when it is
/// `@handle@domain`) and the handle it names exactly, if any; `None` for another domain.
fn account_terms(q: &str, origin: &str) -> Option<(Vec<String>, Option<Handle>)> {
    let local = local_acct(q, domain_of(origin))?;
    let exact = handle_of(local);
    let words = if exact.is_some() {
        vec![local.trim_start_matches('@').to_lowercase()]
    } else {
        search::query_words(local)
    };
    Some((words, exact))
}

async fn accounts_for(
    app: &App,
    input: &Input,
    viewer: UserId,
    q: &str,
    following: bool,
    page: Window,
) -> ApiResult<Vec<UserRow>> {
    let Some((words, exact)) = account_terms(q, &input.origin) else { return Ok(Vec::new()) };
    find::accounts(app, viewer, &words, exact.as_ref(), following, page).await
}

/// `GET /api/v1/accounts/search?q=&limit=&offset=&resolve=&following=`: the accounts part of
/// search v2 (nothing is remote, so `resolve` changes nothing here).
pub async fn search_accounts(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let q = required_q(input)?;
    let page = window(input, 40, MAX_ACCOUNTS)?;
    let following = query_flag("following", input.query("following"))?;
    query_flag("resolve", input.query("resolve"))?;
    let rows = accounts_for(app, input, viewer, q, following, page).await?;
    list(&rows.iter().map(|u| Account::new(&input.origin, u)).collect::<Vec<_>>(), None)
}

/// A v2 search's parameters.
struct Params<'a> {
    q: &'a str,
    kind: Option<Kind>,
    resolve: bool,
    following: bool,
    statuses: StatusQuery,
    page: Window,
}

fn params(input: &Input) -> ApiResult<Params<'_>> {
    let q = required_q(input)?;
    let kind = match input.query("type").map(str::trim) {
        None | Some("") => None,
        Some(t) => Some(
            Kind::parse(t)
                .ok_or_else(|| ApiError::field("type", "type must be accounts, hashtags or statuses"))?,
        ),
    };
    let resolve = query_flag("resolve", input.query("resolve"))?;
    let following = query_flag("following", input.query("following"))?;
    // Every tag counts as reviewed: there is no review of tags here.
    query_flag("exclude_unreviewed", input.query("exclude_unreviewed"))?;
    let statuses = StatusQuery {
        author: id_param(input, "account_id")?.map(UserId::from_trusted),
        max_id: id_param(input, "max_id")?,
        min_id: id_param(input, "min_id")?,
    };
    Ok(Params { q, kind, resolve, following, statuses, page: window(input, 20, MAX_RESULTS)? })
}

/// `GET /api/v2/search`: see the module comment and docs/mastodon.md "Search".
pub async fn search(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let p = params(input)?;
    let wants = |kind: Kind| p.kind.is_none_or(|k| k == kind);
    let is_url = p.q.starts_with("https://") || p.q.starts_with("http://");
    if is_url {
        let found = match (p.resolve, search::resolve_url(p.q, &input.origin)) {
            (true, Some(named)) => resolved(app, viewer, named).await?,
            _ => (None, None),
        };
        let accounts: Vec<Account> = found
            .0
            .iter()
            .filter(|_| wants(Kind::Accounts))
            .map(|u| Account::new(&input.origin, u))
            .collect();
        let posts: Vec<_> = found.1.into_iter().filter(|_| wants(Kind::Statuses)).collect();
        return answer(accounts, statuses_of(app, input, viewer, &posts).await?, Vec::new());
    }
    let accounts = async {
        if !wants(Kind::Accounts) {
            return Ok(Vec::new());
        }
        accounts_for(app, input, viewer, p.q, p.following, p.page).await
    };
    let hashtags = async {
        match search::tag_prefix(p.q).filter(|_| wants(Kind::Hashtags)) {
            Some(prefix) => find::hashtags(app, viewer, &prefix, p.page).await,
            None => Ok(Vec::new()),
        }
    };
    let statuses = async {
        if !wants(Kind::Statuses) {
            return Ok(Vec::new());
        }
        find::statuses(app, viewer, &search::query_words(p.q), p.statuses, p.page).await
    };
    let (accounts, hashtags, statuses) = join3(accounts, hashtags, statuses).await;
    let accounts: Vec<Account> = accounts?.iter().map(|u| Account::new(&input.origin, u)).collect();
    let hashtags: Vec<Value> = hashtags?.iter().map(|t| super::tags::tag_entity(app, input, t)).collect();
    answer(accounts, statuses_of(app, input, viewer, &statuses?).await?, hashtags)
}

fn answer(accounts: Vec<Account>, statuses: Vec<Status>, hashtags: Vec<Value>) -> ApiResult<Response> {
    json(&serde_json::json!({ "accounts": accounts, "statuses": statuses, "hashtags": hashtags }))
}

/// The account or status a URL of this instance names, if the viewer may see it now.
async fn resolved(
    app: &App,
    viewer: UserId,
    named: Resolved,
) -> ApiResult<(Option<UserRow>, Option<crate::store::posts::PostRow>)> {
    match named {
        Resolved::Status(id) => match crate::services::posts::visible(app, viewer, id).await {
            Ok(post) => Ok((None, Some(post))),
            Err(ApiError::NotFound(_)) => Ok((None, None)),
            Err(e) => Err(e),
        },
        Resolved::AccountId(id) => Ok((visible_account(app, viewer, UserKey::Id(id)).await?, None)),
        Resolved::Handle(handle) => match Handle::parse(&handle) {
            Ok(handle) => Ok((visible_account(app, viewer, UserKey::Handle(&handle)).await?, None)),
            Err(_) => Ok((None, None)),
        },
    }
}

async fn visible_account(app: &App, viewer: UserId, key: UserKey<'_>) -> ApiResult<Option<UserRow>> {
    match visible_with_relationship(app, viewer, key).await {
        Ok((user, _)) => Ok(Some(user)),
        Err(ApiError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}
