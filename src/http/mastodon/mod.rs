//! The Mastodon client API subset (`/api/v1`, `/api/v2`, `/oauth`, and the discovery documents
//! under `/.well-known/` and `/nodeinfo/`): a thin adapter that maps Mastodon's requests and
//! entities onto the same services as `/v1` (the same users, posts, likes as favourites,
//! comments as replies, the same feed read). Nothing here decides what a viewer may see: the
//! services it calls do.

mod account_marks;
mod accounts;
mod conversations;
mod discovery;
mod extras;
mod filters;
mod follow_requests;
mod grouped;
mod instance;
mod lists;
mod markers;
mod media;
mod mutes;
mod notifications;
mod oauth;
mod own;
mod profile;
mod push;
mod registration;
mod relations;
mod reports;
mod requests;
mod saved;
mod scheduled;
mod search;
mod startup;
mod statuses;
mod streaming;
mod tags;
mod wellknown;

use serde::Serialize;
use worker::Response;

use super::app::App;
use super::input::Input;
use super::router::{
    ListRoute, MastodonPublic, MastodonRoute as M, NotificationRoute as N, ProfileRoute as PR,
};
use crate::domain::filters::{Applied, Context};
use crate::domain::ids::UserId;
use crate::error::{ApiError, ApiResult};
use crate::services::filters as services_filters;
use crate::store::users;
use entities::Accounts;
use std::rc::Rc;

/// The entities are pure mappers over store rows, in the services (the live sockets render them
/// too): here under their old name.
pub use crate::services::mastodon_entities as entities;

/// Paths answered in Mastodon's shapes (errors as `{"error": ...}`), the discovery documents
/// included: what reads them is Mastodon-speaking software.
pub fn is_mastodon_path(path: &str) -> bool {
    ["/api/", "/oauth/", "/.well-known/", "/nodeinfo/"].iter().any(|prefix| path.starts_with(prefix))
}

/// Errors as Mastodon clients read them: `{"error": "<description>"}` under `/api`, and
/// RFC 6749's `{"error": "<code>", "error_description": "..."}` under `/oauth`.
pub fn error_body(err: &ApiError, path: &str) -> serde_json::Value {
    let detail = err.to_problem()["detail"].clone();
    if path.starts_with("/oauth/") {
        serde_json::json!({ "error": err.code(), "error_description": detail })
    } else {
        serde_json::json!({ "error": detail })
    }
}

pub async fn public(app: &App, input: &Input, route: MastodonPublic) -> ApiResult<Response> {
    match route {
        MastodonPublic::CustomEmojis => startup::empty_list(),
        MastodonPublic::NodeInfoLinks => wellknown::nodeinfo_links(input),
        MastodonPublic::NodeInfo => wellknown::nodeinfo(app),
        MastodonPublic::HostMeta => wellknown::host_meta(input),
        MastodonPublic::OAuthMetadata => json(&crate::domain::wellknown::oauth_metadata(&input.origin)),
        MastodonPublic::WebFinger => wellknown::webfinger(app, input).await,
        MastodonPublic::Apps => oauth::register_app(app, input).await,
        MastodonPublic::AppCredentials => registration::app_credentials(app, input).await,
        MastodonPublic::RegisterAccount => registration::register(app, input).await,
        MastodonPublic::AuthorizePage => oauth::authorize_page(app, input).await,
        MastodonPublic::Authorize => oauth::authorize(app, input).await,
        MastodonPublic::Token => oauth::token(app, input).await,
        MastodonPublic::Revoke => oauth::revoke(app, input).await,
        MastodonPublic::Instance { v1 } => oauth::instance(app, input, v1),
        MastodonPublic::InstancePart(part) => instance::part(app, part).await,
        MastodonPublic::Streaming => streaming::connect(app, input).await,
        MastodonPublic::StreamingHealth => streaming::health(),
        MastodonPublic::StreamingEvents { notifications_only } => {
            streaming::events(app, input, notifications_only).await
        }
    }
}

pub async fn user(app: &App, input: &Input, viewer: UserId, route: M) -> ApiResult<Response> {
    match route {
        M::Announcements | M::IdentityProofs(_) => startup::empty_list(),
        M::Admin => startup::not_staff(),
        M::Filters(route) => filters::route(app, input, viewer, route).await,
        M::Preferences => startup::preferences(),
        M::PushSubscription(route) => push::route(app, input, viewer, route).await,
        M::VerifyCredentials => accounts::verify_credentials(app, input, viewer).await,
        M::Account(id) => accounts::get(app, input, viewer, id).await,
        M::LookupAccount => accounts::lookup(app, input, viewer).await,
        M::Relationships => accounts::relationships(app, input, viewer).await,
        M::SearchAccounts => search::search_accounts(app, input, viewer).await,
        M::FamiliarFollowers => relations::familiar_followers(app, input, viewer).await,
        M::RemoveFromFollowers(id) => relations::remove_from_followers(app, viewer, id).await,
        M::AccountStatuses(id) => accounts::statuses(app, input, viewer, id).await,
        M::AccountFollowers(id) => accounts::follow_list(app, input, viewer, id, true).await,
        M::AccountFollowing(id) => accounts::follow_list(app, input, viewer, id, false).await,
        M::AccountAction(id, action) => accounts::act(app, input, viewer, id, action).await,
        M::PostStatus => statuses::post(app, input, viewer).await,
        M::Upload => media::upload(app, input, viewer).await,
        M::Media(id) => media::get(app, input, viewer, id).await,
        M::DescribeMedia(id) => media::describe(app, input, viewer, id).await,
        M::Status(id) => statuses::get(app, input, viewer, id).await,
        M::EditStatus(id) => statuses::edit(app, input, viewer, id).await,
        M::DeleteStatus(id) => statuses::delete(app, input, viewer, id).await,
        M::Favourite(id, on) => statuses::favourite(app, input, viewer, id, on).await,
        M::FavouritedBy(id) => statuses::favourited_by(app, input, viewer, id).await,
        M::Reblog(id, on) => statuses::reblog(app, input, viewer, id, on).await,
        M::RebloggedBy(id) => statuses::reblogged_by(app, input, viewer, id).await,
        M::Quotes(id) => statuses::quotes(app, input, viewer, id).await,
        M::Context(id) => statuses::context(app, input, viewer, id).await,
        M::Own(own) => own::route(app, input, viewer, own).await,
        M::HomeTimeline => statuses::home(app, input, viewer).await,
        M::Search => search::search(app, input, viewer).await,
        M::Notifications(route) => notification_route(app, input, viewer, route).await,
        M::Lists(route) => list_route(app, input, viewer, route).await,
        M::Conversations(route) => conversations::route(app, input, viewer, route).await,
        M::Tags(route) => tags::route(app, input, viewer, route).await,
        M::Discovery(route) => discovery::route(app, input, viewer, route).await,
        M::Profile(route) => profile_route(app, input, viewer, route).await,
        M::Extra(route) => extras::route(app, input, viewer, route).await,
        M::Scheduled(route) => scheduled::route(app, input, viewer, route).await,
    }
}

/// The profile, follow-request, note, endorsement, report and domain-block routes of [`user`].
async fn profile_route(app: &App, input: &Input, viewer: UserId, route: PR) -> ApiResult<Response> {
    match route {
        PR::UpdateCredentials => profile::update_credentials(app, input, viewer).await,
        PR::RemoveImage(image) => profile::remove_image(app, input, viewer, image).await,
        PR::EmailConfirmation => registration::email_confirmation(viewer),
        PR::FollowRequests => follow_requests::list(app, input, viewer).await,
        PR::FollowRequest(id) => follow_requests::get(app, input, viewer, id).await,
        PR::AnswerFollowRequest(id, true) => follow_requests::authorize(app, viewer, id).await,
        PR::AnswerFollowRequest(id, false) => follow_requests::reject(app, viewer, id).await,
        PR::Note(id) => account_marks::note(app, input, viewer, id).await,
        PR::Endorse(id, on) => account_marks::endorse(app, viewer, id, on).await,
        PR::Endorsements(user) => {
            account_marks::endorsements(app, input, viewer, user.unwrap_or(viewer), user.is_none()).await
        }
        PR::Report => reports::report(app, input, viewer).await,
        PR::DomainBlocks => reports::domain_blocks(app, viewer).await,
        PR::DomainBlock(on) => reports::set_domain_block(app, input, viewer, on).await,
    }
}

/// The notification, grouped-notification and marker routes of [`user`].
async fn notification_route(app: &App, input: &Input, viewer: UserId, route: N) -> ApiResult<Response> {
    match route {
        N::Notifications => notifications::list_all(app, input, viewer).await,
        N::Notification(id) => notifications::get(app, input, viewer, id).await,
        N::ClearNotifications => notifications::clear(app, viewer).await,
        N::DismissNotification(id) => notifications::dismiss(app, viewer, id.get()).await,
        N::DismissNotificationLegacy => notifications::dismiss_legacy(app, input, viewer).await,
        N::UnreadCount => notifications::unread_count(app, input, viewer).await,
        N::NotificationRequests => requests::requests(app, input, viewer).await,
        N::NotificationRequest(actor) => requests::request(app, input, viewer, actor).await,
        N::AnswerRequest(actor, accept) => requests::answer(app, viewer, actor, accept).await,
        N::AnswerRequests(accept) => requests::answer_many(app, input, viewer, accept).await,
        // Accepting merges at once: there is never a merge under way.
        N::RequestsMerged => json(&serde_json::json!({ "merged": true })),
        N::NotificationPolicy => requests::policy(app, viewer).await,
        N::SetNotificationPolicy => requests::set_policy(app, input, viewer).await,
        N::V1NotificationPolicy(put) => requests::v1_policy(app, input, viewer, put).await,
        N::GroupedNotifications => grouped::list(app, input, viewer).await,
        N::GroupedUnreadCount => grouped::unread_count(app, input, viewer).await,
        N::NotificationGroup(key) => grouped::get(app, input, viewer, key).await,
        N::DismissGroup(key) => grouped::dismiss(app, viewer, key).await,
        N::GroupAccounts(key) => grouped::accounts(app, input, viewer, key).await,
        N::Markers => markers::get(app, input, viewer).await,
        N::SetMarkers => markers::set(app, input, viewer).await,
    }
}

/// The list routes of [`user`].
async fn list_route(app: &App, input: &Input, viewer: UserId, route: ListRoute) -> ApiResult<Response> {
    match route {
        ListRoute::Lists => lists::all(app, viewer).await,
        ListRoute::CreateList => lists::create(app, input, viewer).await,
        ListRoute::List(id) => lists::get(app, viewer, id).await,
        ListRoute::UpdateList(id) => lists::update(app, input, viewer, id).await,
        ListRoute::DeleteList(id) => lists::delete(app, viewer, id).await,
        ListRoute::ListAccounts(id) => lists::accounts(app, input, viewer, id).await,
        ListRoute::AddListAccounts(id) => lists::add_accounts(app, input, viewer, id).await,
        ListRoute::RemoveListAccounts(id) => lists::remove_accounts(app, input, viewer, id).await,
        ListRoute::ListTimeline(id) => lists::timeline(app, input, viewer, id).await,
        ListRoute::AccountLists(id) => lists::holding(app, viewer, id).await,
    }
}

fn json<T: Serialize>(value: &T) -> ApiResult<Response> {
    Ok(Response::from_json(value)?)
}

/// A list answer with its `Link` header (pagination), when there is one.
fn list<T: Serialize>(items: &[T], link: Option<String>) -> ApiResult<Response> {
    with_link(items, link)
}

/// Any answer with its `Link` header, when there is one (grouped notifications page an object).
fn with_link<T: Serialize + ?Sized>(body: &T, link: Option<String>) -> ApiResult<Response> {
    let mut response = Response::from_json(&body)?;
    if let Some(link) = link {
        response.headers_mut().set("link", &link)?;
    }
    Ok(response)
}

/// A page of posts as Statuses: each boost with its original (resolved here unless a feed read
/// did, and left out if the viewer may not see the original now), their authors' accounts and
/// the viewer's marks (bookmarked, boosted), read side by side.
async fn statuses_of(
    app: &App,
    input: &Input,
    viewer: UserId,
    rows: &[crate::store::posts::PostRow],
) -> ApiResult<Vec<entities::Status>> {
    statuses_in(app, input, viewer, rows, None).await
}

/// [`statuses_of`] with the viewer's filters of the list's context: a status a `hide` filter
/// matches is left out, one a `warn` or `blur` filter matches carries it in `filtered`.
async fn statuses_in(
    app: &App,
    input: &Input,
    viewer: UserId,
    rows: &[crate::store::posts::PostRow],
    filters: Option<&Applied>,
) -> ApiResult<Vec<entities::Status>> {
    let (mut rows, _) = crate::services::originals::resolve(app, viewer, rows.to_vec(), None).await?;
    if let Some(applied) = filters {
        rows.retain(|p| !services_filters::hides(applied, viewer, p));
    }
    let ids: Vec<_> = rows.iter().map(|p| p.shown().id).collect();
    let authors = rows.iter().flat_map(|p| [p.author_id, p.shown().author_id]).collect();
    let (both, extra) = futures_util::future::join(
        accounts_and_marks(app, input, viewer, authors, &ids),
        crate::services::post_extras::marks(app, viewer, &rows),
    )
    .await;
    let ((accounts, marks), extra) = (both?, extra?);
    marks.apply(&mut rows);
    Ok(rows
        .iter()
        .map(|p| {
            let shown = p.shown();
            let filtered = filters.map(|f| services_filters::results(f, viewer, p)).unwrap_or_default();
            entities::Status::of_post(&input.origin, &accounts, p)
                .bookmarked(marks.bookmarked(shown.id))
                .muted_pinned(extra.muted(shown), extra.pinned(shown.id))
                .polled(p, viewer, app.now)
                .filtered(filtered)
        })
        .collect())
}

/// The viewer's filters of a context: one read on their home.
async fn filters_for(app: &App, viewer: UserId, context: Context) -> ApiResult<Rc<Applied>> {
    services_filters::load(app, viewer, context).await
}

/// The accounts a page names and the viewer's marks on its posts, read side by side (the marks
/// on the viewer's home): what a page of statuses or notifications needs.
async fn accounts_and_marks(
    app: &App,
    input: &Input,
    viewer: UserId,
    accounts: Vec<UserId>,
    posts: &[crate::domain::ids::PostId],
) -> ApiResult<(Accounts, crate::services::originals::Marks)> {
    let (accounts, marks) = futures_util::future::join(
        accounts_of(app, input, accounts),
        crate::services::originals::marks_among(app, viewer, posts),
    )
    .await;
    Ok((accounts?, marks?))
}

/// The accounts (with their counts) of everyone a page of statuses shows: one query.
async fn accounts_of(app: &App, input: &Input, mut ids: Vec<UserId>) -> ApiResult<Accounts> {
    ids.sort_unstable();
    ids.dedup();
    Ok(entities::accounts(&input.origin, &users::by_ids(&app.shards, &ids).await?))
}
