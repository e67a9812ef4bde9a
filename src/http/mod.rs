//! HTTP layer: route, authenticate by the route's level, call one handler, map errors to
//! problem+json in one place.

pub mod app;
pub mod handlers;
pub mod input;
pub mod limits;
pub mod mastodon;
pub mod router;
pub mod uploads;
pub mod views;

use std::rc::Rc;

use futures_util::future::join;
use worker::{Context, Env, Method, Request, Response};

use crate::domain::cors::{is_open_path, CorsPolicy, ANY_METHOD};
use crate::domain::ids::UserId;
use crate::error::{ApiError, ApiResult};
use crate::store::graph::Direction;
use crate::store::Io;
use app::App;
use handlers::{admin, engagement, feed, graph, live, media, notifications, posts, shards, users};
use input::Input;
use router::{Access, AdminRoute, Call, Guard, PublicRoute, Route, UserRoute};

pub async fn handle(mut req: Request, env: Env, invocation: Context) -> Response {
    let path = req.path();
    let cors = cors_policy(&env, &path);
    let origin = req.headers().get("origin").ok().flatten();
    if let Some(preflight) = preflight(&req, &path, &cors, origin.as_deref()) {
        return preflight;
    }
    let head = req.method() == Method::Head;
    let started = worker::Date::now().as_millis();
    let io = Rc::new(Io::default());
    let mut response = match dispatch(&mut req, env, io.clone(), Rc::new(invocation)).await {
        Ok(response) => response,
        Err(err) if mastodon::is_mastodon_path(&path) => mastodon_error(&err, &path),
        Err(err) => problem(&err),
    };
    let total = worker::Date::now().as_millis().saturating_sub(started);
    let _ = response.headers_mut().set("server-timing", &server_timing(&io, total));
    for (name, value) in cors.response_headers(origin.as_deref()) {
        let _ = response.headers_mut().set(name, &value);
    }
    finish(response, head).await
}

/// The path's CORS policy: the Mastodon API's paths are open to every origin; `/v1` follows
/// `CORS_ORIGINS`, read here rather than in `Config` because the preflight answers before
/// anything else runs (and the health route reads no other var).
fn cors_policy(env: &Env, path: &str) -> CorsPolicy {
    if is_open_path(path) {
        return CorsPolicy::open();
    }
    CorsPolicy::parse(&env.var("CORS_ORIGINS").map(|v| v.to_string()).unwrap_or_default())
}

/// A CORS preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered
/// here, before routing and authentication (browsers send it without credentials): `204` with
/// the path's methods for an allowed origin, `403 cors_origin_not_allowed` otherwise, `404` for
/// a path that names nothing. Any other `OPTIONS` is routed as usual (`405` with `Allow`). On an
/// open path every origin is allowed, and a path that names nothing still answers `204` (with
/// every method), so the app can read the real request's `404` instead of a failed preflight.
fn preflight(req: &Request, path: &str, cors: &CorsPolicy, origin: Option<&str>) -> Option<Response> {
    let asks = req.headers().get("access-control-request-method").ok().flatten().is_some();
    let origin = origin.filter(|_| req.method() == Method::Options && asks)?;
    let methods = match router::route("OPTIONS", path) {
        Err(ApiError::MethodNotAllowed { allow }) => allow,
        Err(_) if cors.is_open() => ANY_METHOD.to_string(),
        Err(e) => return Some(problem(&e)),
        Ok(_) => return None,
    };
    let requested = req.headers().get("access-control-request-headers").ok().flatten();
    let Some(headers) = cors.preflight_headers(origin, &methods, requested.as_deref()) else {
        let refused = ApiError::Forbidden {
            code: "cors_origin_not_allowed",
            detail: "this origin is not in CORS_ORIGINS",
        };
        return Some(problem(&refused));
    };
    let mut response = Response::empty().ok()?.with_status(204);
    for (name, value) in headers {
        let _ = response.headers_mut().set(name, &value);
    }
    Some(response)
}

/// `Server-Timing`: the request's total and its storage round trips (D1 statements and round
/// trips, Durable Object calls, queue sends), from counters cheap enough to stay on; then each
/// D1 database the request touched (`d1-<i>`, for `DB_i`) and how many it touched. The
/// per-database entries come after them so the older entries keep their place for parsers, and
/// last the rows the reader's window object wrote for a feed read (its own storage, billed like
/// D1's rows).
pub fn server_timing(io: &Io, total_ms: u64) -> String {
    let mut header = format!(
        "total;dur={total_ms}, d1;desc=\"{} statements in {} round trips\";dur={}, \
         do;desc=\"{} calls\";dur={}, queue;desc=\"{} sends; {} messages\", storage;desc=\"{} sequential round trips\"",
        io.d1_statements.get(),
        io.d1_trips.get(),
        io.d1_ms.get(),
        io.do_calls.get(),
        io.do_ms.get(),
        io.queue_sends.get(),
        io.queue_messages.get(),
        io.sequential.get(),
    );
    let touched = io.databases_touched();
    for (index, db) in &touched {
        header.push_str(&format!(
            ", d1-{index};desc=\"{} statements in {} round trips; {} rows read; {} rows written\";dur={}",
            db.statements, db.trips, db.rows_read, db.rows_written, db.ms
        ));
    }
    header.push_str(&format!(", d1-databases;desc=\"{} databases touched\"", touched.len()));
    let window = io.window_rows_written.get();
    header.push_str(&format!(", window-storage;desc=\"{window} window rows written\""));
    header
}

/// What every response carries: `nosniff`, and `no-store` (every answer is per-viewer, a
/// token, or an error, none of which a cache should keep; an upload's bytes, the one answer
/// that is none of those, say how long to keep them). A `HEAD` request was routed like
/// `GET`; its answer keeps the status and headers, with the length the body would have had,
/// and drops the body.
async fn finish(mut response: Response, head: bool) -> Response {
    let headers = response.headers_mut();
    let _ = headers.set("x-content-type-options", "nosniff");
    if !headers.has("cache-control").unwrap_or(false) {
        let _ = headers.set("cache-control", "no-store"); // an upload's bytes set their own
    }
    if !head {
        return response;
    }
    let (status, headers) = (response.status_code(), response.headers().clone());
    let length = response.bytes().await.map_or(0, |body| body.len());
    let _ = headers.set("content-length", &length.to_string());
    match Response::empty() {
        Ok(empty) => empty.with_status(status).with_headers(headers),
        Err(_) => response,
    }
}

async fn dispatch(req: &mut Request, env: Env, io: Rc<Io>, invocation: Rc<Context>) -> ApiResult<Response> {
    let url = req.url()?;
    let call = router::route(req.method().as_ref(), url.path())?;
    if call.route() == Route::Public(PublicRoute::Health) {
        // Liveness only: no storage access, so it answers even when D1 is unreachable.
        return handlers::json(200, &serde_json::json!({ "ok": true }));
    }
    let input = Input::read(req, call.route().body_limit()).await?;
    let app = App::new(env, io, invocation)?;
    match call {
        Call::Public { route, limit } => {
            // Per client IP; without CF-Connecting-IP (only off Cloudflare) all share one key.
            limits::check(&app, limit, input.client_ip.as_deref().unwrap_or("local")).await?;
            public(&app, &input, route).await
        }
        Call::User { route, guard } => guarded(&app, &input, route, guard).await,
        Call::Admin { route } => {
            app.require_admin(&input)?;
            admin_route(&app, &input, route).await
        }
    }
}

/// A user endpoint behind its row's guard: the token, its scope, then by the row's access the
/// revocation check and the limit (per user).
async fn guarded(app: &App, input: &Input, route: UserRoute, guard: Guard) -> ApiResult<Response> {
    let token = app.verified_token(input)?;
    if token.scopes.is_some_and(|granted| !guard.scope.allows(granted)) {
        return Err(ApiError::InsufficientScope(guard.scope.needed()));
    }
    let key = token.user.to_string();
    match guard.access {
        Access::Read => {
            // No read is limited today; one declared with a class would still be counted.
            limits::check(app, guard.limit, &key).await?;
            // A read's revocation check (a D1 read) runs beside the handler rather than
            // before it, saving a sequential round trip: a revoked token still gets 401 and
            // no data, and a read changes nothing but the reader's own activity figures.
            let (confirmed, response) =
                join(app.confirm_not_revoked(&token), user(app, input, token.user, route)).await;
            confirmed.and(response)
        }
        Access::Write => {
            app.confirm_not_revoked(&token).await?;
            limits::check(app, guard.limit, &key).await?;
            user(app, input, token.user, route).await
        }
    }
}

async fn public(app: &App, input: &Input, route: PublicRoute) -> ApiResult<Response> {
    match route {
        PublicRoute::Health => handlers::json(200, &serde_json::json!({ "ok": true })),
        PublicRoute::Register => users::register(app, input).await,
        PublicRoute::LiveFeed => live::connect(app, input).await,
        PublicRoute::Media(file) => media::serve(app, file).await,
        PublicRoute::Mastodon(route) => mastodon::public(app, input, route).await,
    }
}

async fn user(app: &App, input: &Input, viewer: UserId, route: UserRoute) -> ApiResult<Response> {
    use UserRoute as U;
    match route {
        U::Me => users::get(app, viewer, viewer).await,
        U::Lookup => users::lookup(app, input, viewer).await,
        U::Logout => users::logout(app, viewer).await,
        U::User(id) => users::get(app, viewer, id).await,
        U::Followers(id) => users::follow_list(app, input, viewer, id, Direction::Followers).await,
        U::Following(id) => users::follow_list(app, input, viewer, id, Direction::Following).await,
        U::AuthorPosts(id) => posts::author_posts(app, input, viewer, id).await,
        U::Follow(id) => graph::follow(app, input, viewer, id).await,
        U::Unfollow(id) => graph::unfollow(app, viewer, id).await,
        U::Block(id) => graph::block(app, viewer, id).await,
        U::Unblock(id) => graph::unblock(app, viewer, id).await,
        U::Mute(id, true) => graph::mute(app, input, viewer, id).await,
        U::Mute(id, false) => graph::unmute(app, viewer, id).await,
        U::Mutes => graph::muted(app, input, viewer).await,
        U::Publish => posts::publish(app, input, viewer).await,
        U::GetPost(id) => posts::get(app, viewer, id).await,
        U::EditPost(id) => posts::edit(app, input, viewer, id).await,
        U::DeletePost(id) => posts::delete(app, viewer, id).await,
        U::Feed => feed::read(app, input, viewer).await,
        U::LiveTicket => live::ticket(app, input).await,
        U::Like(id) => engagement::set_like(app, input, viewer, id, true).await,
        U::Unlike(id) => engagement::set_like(app, input, viewer, id, false).await,
        U::Likers(id) => engagement::likers(app, input, viewer, id).await,
        U::Repost(id, on) => engagement::repost(app, viewer, id, on).await,
        U::Reposters(id) => engagement::reposters(app, input, viewer, id).await,
        U::Bookmark(id, on) => engagement::bookmark(app, viewer, id, on).await,
        U::Saved(which) => engagement::saved(app, input, viewer, which).await,
        U::ListComments(id) => engagement::list_comments(app, input, viewer, id).await,
        U::CreateComment(id) => engagement::create_comment(app, input, viewer, id).await,
        U::DeleteComment(id) => engagement::delete_comment(app, viewer, id).await,
        U::LikeComment(id, on) => engagement::like_comment(app, viewer, id, on).await,
        U::Upload => media::upload(app, input, viewer).await,
        U::GetMedia(id) => media::get(app, viewer, id).await,
        U::DescribeMedia(id) => media::describe(app, input, viewer, id).await,
        U::Notifications => notifications::list(app, input, viewer).await,
        U::UnreadNotifications => notifications::unread(app, input, viewer).await,
        U::SetNotificationMarker => notifications::set_marker(app, input, viewer).await,
        U::DismissNotification(id) => notifications::dismiss(app, viewer, id).await,
        U::ClearNotifications => notifications::clear(app, viewer).await,
        U::Mastodon(route) => mastodon::user(app, input, viewer, route).await,
    }
}

async fn admin_route(app: &App, input: &Input, route: AdminRoute) -> ApiResult<Response> {
    match route {
        AdminRoute::ImportPost => posts::import(app, input).await,
        AdminRoute::ImportComment => engagement::import_comment(app, input).await,
        AdminRoute::Stats => admin::stats(app).await,
        AdminRoute::Reconcile => admin::reconcile(app, input).await,
        AdminRoute::Moderate(target, action) => admin::moderate(app, input, target, action).await,
        AdminRoute::Audit => admin::audit(app, input).await,
        AdminRoute::Reports => admin::reports(app, input).await,
        AdminRoute::Shard(shard, step) => shards::step(app, input, shard, step).await,
        AdminRoute::Test(hook) => admin::test_hook(app, input, hook).await,
    }
}

/// The single place where errors become responses.
pub fn problem(err: &ApiError) -> Response {
    error_response(err, err.to_problem().to_string(), "application/problem+json")
}

/// An error under the Mastodon API's paths, in Mastodon's shape (see `mastodon::error_body`).
fn mastodon_error(err: &ApiError, path: &str) -> Response {
    error_response(err, mastodon::error_body(err, path).to_string(), "application/json")
}

fn error_response(err: &ApiError, body: String, content_type: &str) -> Response {
    if let ApiError::Internal(detail) | ApiError::Storage { detail, .. } = err {
        worker::console_error!("{}: {detail}", err.code());
    }
    let mut response = Response::ok(body)
        .map(|r| r.with_status(err.status()))
        .unwrap_or_else(|_| Response::error("internal error", 500).expect("static response")); // ok: static
    let headers = response.headers_mut();
    let _ = headers.set("content-type", content_type);
    if let Some(seconds) = err.retry_after() {
        let _ = headers.set("retry-after", &seconds.to_string());
    }
    match err {
        ApiError::MethodNotAllowed { allow } => {
            let _ = headers.set("allow", allow);
        }
        // RFC 6750: no error code when no credential came, `invalid_token` when one did.
        ApiError::Unauthorized(_) => {
            let _ = headers.set("www-authenticate", r#"Bearer realm="edgefeed""#);
        }
        ApiError::InvalidToken(detail) => {
            let challenge =
                format!(r#"Bearer realm="edgefeed", error="invalid_token", error_description="{detail}""#);
            let _ = headers.set("www-authenticate", &challenge);
        }
        ApiError::Suspended => {
            let challenge =
                r#"Bearer realm="edgefeed", error="invalid_token", error_description="account suspended""#;
            let _ = headers.set("www-authenticate", challenge);
        }
        _ => {}
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_timing_names_every_round_trip() {
        let io = Io::default();
        io.d1_statements.set(3);
        io.d1_trips.set(2);
        io.do_calls.set(1);
        io.queue_sends.set(1);
        io.record_database(0, 2, 1.0);
        io.record_database(2, 1, 4.0);
        io.add_rows(2, 7, 1);
        let header = server_timing(&io, 12);
        assert!(
            header.starts_with("total;dur=12, d1;desc=\"3 statements in 2 round trips\";dur=0"),
            "{header}"
        );
        assert!(
            header.contains("do;desc=\"1 calls\";dur=0")
                && header.contains("queue;desc=\"1 sends; 0 messages\"")
        );
        assert!(header.contains("storage;desc=\"0 sequential round trips\", d1-0;"), "{header}");
        assert!(
            header.contains("d1-0;desc=\"2 statements in 1 round trips; 0 rows read; 0 rows written\";dur=1"),
            "{header}"
        );
        assert!(
            header.contains("d1-2;desc=\"1 statements in 1 round trips; 7 rows read; 1 rows written\";dur=4"),
            "{header}"
        );
        assert!(!header.contains("d1-1;"), "an untouched database is not listed: {header}");
        assert!(header.contains("d1-databases;desc=\"2 databases touched\""), "{header}");
        assert!(header.ends_with("window-storage;desc=\"0 window rows written\""), "{header}");
    }
}
