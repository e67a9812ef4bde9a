//! edgefeed: a follow-feed backend on Cloudflare Workers.
//!
//! Entry points only; see README "Architecture" for the map.

pub mod config;
pub mod domain;
pub mod error;
pub mod fanout;
pub mod http;
pub mod post_likes;
pub mod store;
pub mod timeline;

use worker::{event, Context, Env, Request, Response, Result};

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    Ok(http::handle(req, env).await)
}
