//! HTTP layer: route, authenticate, call one handler, map errors to problem+json.

pub mod app;
pub mod handlers;
pub mod input;
pub mod router;
pub mod views;

use worker::{Env, Request, Response};

use crate::error::{ApiError, ApiResult};
use crate::store::graph::Direction;
use app::App;
use handlers::{engagement, feed, graph, posts, users};
use input::Input;
use router::Route;

pub async fn handle(mut req: Request, env: Env) -> Response {
    match dispatch(&mut req, env).await {
        Ok(response) => response,
        Err(err) => problem(&err),
    }
}

async fn dispatch(req: &mut Request, env: Env) -> ApiResult<Response> {
    let url = req.url()?;
    let route = router::route(req.method().as_ref(), url.path())?;
    if route == Route::Health {
        // Liveness only: no storage access, so it answers even when D1 is unreachable.
        return handlers::json(200, &serde_json::json!({ "ok": true }));
    }
    let input = Input::read(req).await?;
    let app = App::new(env)?;
    if route == Route::Register {
        return users::register(&app, &input).await;
    }
    if let Route::AdminImportPost
    | Route::AdminImportComment
    | Route::AdminStats
    | Route::AdminReconcile
    | Route::AdminTest(_) = route
    {
        app.require_admin(&input)?;
        return admin(&app, &input, route).await;
    }
    let viewer = app.viewer(&input)?;
    match route {
        Route::Me => users::me(&app, viewer).await,
        Route::User(id) => users::get(&app, viewer, id).await,
        Route::Followers(id) => users::follow_list(&app, &input, viewer, id, Direction::Followers).await,
        Route::Following(id) => users::follow_list(&app, &input, viewer, id, Direction::Following).await,
        Route::Follow(id) => graph::follow(&app, &input, viewer, id).await,
        Route::Unfollow(id) => graph::unfollow(&app, viewer, id).await,
        Route::Block(id) => graph::block(&app, viewer, id).await,
        Route::Unblock(id) => graph::unblock(&app, viewer, id).await,
        Route::Publish => posts::publish(&app, &input, viewer).await,
        Route::GetPost(id) => posts::get(&app, viewer, id).await,
        Route::EditPost(id) => posts::edit(&app, &input, viewer, id).await,
        Route::DeletePost(id) => posts::delete(&app, viewer, id).await,
        Route::AuthorPosts(id) => posts::author_posts(&app, &input, viewer, id).await,
        Route::Feed => feed::read(&app, &input, viewer).await,
        Route::Like(id) => engagement::set_like(&app, &input, viewer, id, true).await,
        Route::Unlike(id) => engagement::set_like(&app, &input, viewer, id, false).await,
        Route::Likers(id) => engagement::likers(&app, &input, viewer, id).await,
        Route::CreateComment(id) => engagement::create_comment(&app, &input, viewer, id).await,
        Route::ListComments(id) => engagement::list_comments(&app, &input, viewer, id).await,
        Route::DeleteComment(id) => engagement::delete_comment(&app, viewer, id).await,
        _ => Err(ApiError::NotFound("no such route")),
    }
}

async fn admin(app: &App, input: &Input, route: Route) -> ApiResult<Response> {
    match route {
        Route::AdminImportPost => posts::import(app, input).await,
        Route::AdminImportComment => engagement::import_comment(app, input).await,
        Route::AdminStats => handlers::admin::stats(app).await,
        Route::AdminReconcile => handlers::admin::reconcile(app, input).await,
        Route::AdminTest(hook) => handlers::admin::test_hook(app, input, hook).await,
        _ => Err(ApiError::NotFound("no such route")),
    }
}

/// The single place where errors become responses.
pub fn problem(err: &ApiError) -> Response {
    if let ApiError::Internal(detail) = err {
        worker::console_error!("internal error: {detail}");
    }
    let body = err.to_problem().to_string();
    let mut response = Response::ok(body)
        .map(|r| r.with_status(err.status()))
        .unwrap_or_else(|_| Response::error("internal error", 500).expect("static response")); // ok: static
    let headers = response.headers_mut();
    let _ = headers.set("content-type", "application/problem+json");
    if let ApiError::MethodNotAllowed { allow } = err {
        let _ = headers.set("allow", allow);
    }
    response
}
