//! edgefeed: a follow-feed backend on Cloudflare Workers.
//!
//! Entry points only; see README "Architecture" for the map.

pub mod config;
pub mod domain;
pub mod error;
pub mod fanout;
pub mod feed;
pub mod http;
pub mod objects;
pub mod post_likes;
pub mod reconcile;
pub mod store;
pub mod timeline;

use worker::{event, Context, Env, MessageBatch, Request, Response, Result, ScheduleContext, ScheduledEvent};

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    Ok(http::handle(req, env).await)
}

#[event(queue)]
async fn queue(batch: MessageBatch<serde_json::Value>, env: Env, _ctx: Context) -> Result<()> {
    fanout::consume(batch, env).await;
    Ok(())
}

#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    let pass = async {
        let db = env.d1("DB")?;
        let config = config::Config::from_env(&env);
        reconcile::run_pass(&env, &db, &config, http::app::now_ms(), false).await
    };
    match pass.await {
        Ok(report) => worker::console_log!("reconcile: {report:?}"),
        Err(e) => worker::console_error!("reconcile failed: {e}"),
    }
}
