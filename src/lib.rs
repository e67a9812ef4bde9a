//! edgefeed: a follow-feed backend on Cloudflare Workers.
//!
//! Entry points only; see ARCHITECTURE.md for the map. Dependencies run one way:
//! `http -> services -> store / objects -> domain`.

/// The pure domain, its own crate (`crates/domain`: no `worker`, so Cargo keeps it pure).
pub use edgefeed_domain as domain;

pub mod config;
pub mod context;
pub mod error;
pub mod http;
pub mod objects;
pub mod services;
pub mod store;

pub use objects::post_likes::PostLikes;
pub use objects::timeline::TimelineWindow;

use worker::{event, Context, Env, MessageBatch, Request, Response, Result, ScheduleContext, ScheduledEvent};

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
    objects::live::set_renderer(services::streaming::RENDERER);
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    // A data-plane script (ROLE = "data") answers its internal D1 endpoint and nothing else;
    // the front never routes a public request there (store/remote.rs, store/data_plane.rs).
    if store::remote::is_data_script(&env) {
        return store::data_plane::serve(req, &env).await;
    }
    Ok(http::handle(req, env, ctx).await)
}

#[event(queue)]
async fn queue(batch: MessageBatch<serde_json::Value>, env: Env, _ctx: Context) -> Result<()> {
    if store::remote::is_data_script(&env) {
        return Ok(());
    }
    services::queue::consume(batch, env).await;
    Ok(())
}

#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    if store::remote::is_data_script(&env) {
        return;
    }
    // One queue message per database: this invocation's work does not grow with them.
    let pass = async {
        let ctx = context::Ctx::new(env)?;
        let queued = services::reconcile::fan_out(&ctx, false).await;
        // The backlog alert's state moves with the cron, not only when someone reads the stats.
        if let Err(e) = services::backlog::refresh(&ctx).await {
            worker::console_error!("backlog alert: {e}");
        }
        queued
    };
    match pass.await {
        Ok(queued) => worker::console_log!("reconcile: {queued:?}"),
        Err(e) => worker::console_error!("reconcile failed: {e}"),
    }
}
