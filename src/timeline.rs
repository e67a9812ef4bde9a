//! TimelineWindow Durable Object: one per reader. (Filled in by the publishing-pipeline issue.)

use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

#[durable_object]
pub struct TimelineWindow {
    _state: State,
}

impl DurableObject for TimelineWindow {
    fn new(state: State, _env: Env) -> Self {
        Self { _state: state }
    }

    async fn fetch(&self, _req: Request) -> Result<Response> {
        Response::error("not implemented", 501)
    }
}
