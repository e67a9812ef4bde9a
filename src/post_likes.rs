//! PostLikes Durable Object: one per post, serializes like/unlike. (Filled in by the likes issue.)

use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

#[durable_object]
pub struct PostLikes {
    _state: State,
}

impl DurableObject for PostLikes {
    fn new(state: State, _env: Env) -> Self {
        Self { _state: state }
    }

    async fn fetch(&self, _req: Request) -> Result<Response> {
        Response::error("not implemented", 501)
    }
}
