//! TimelineWindow Durable Object: one per reader, a capped index of the post ids in that
//! reader's home feed, ordered by `(created_at DESC, post_id DESC)`. It never holds bodies.
//!
//! A thin shell: the rules (and the invariant they keep) live in `domain::window`, the SQLite
//! storage and its schema in `objects::window_sql`. This file only turns requests into ops.
//! Each op runs synchronously, without awaiting, so it is atomic.

use worker::{
    durable_object, DurableObject, Env, ObjectNamespace, Request, Response, Result, SqlStorage, State,
};

use std::rc::Rc;

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::window;
use crate::error::{ApiError, ApiResult, StorageKind};
use crate::objects::window_sql::{self, SqlWindow};
use crate::store::Io;

pub use crate::domain::window::{Entry, WindowOp, WindowReply};

#[durable_object]
pub struct TimelineWindow {
    sql: SqlStorage,
    /// Why the schema could not be brought up to date, if it could not: every request then
    /// fails with it, rather than running ops against a schema this code does not know.
    schema_error: Option<String>,
}

impl DurableObject for TimelineWindow {
    fn new(state: State, _env: Env) -> Self {
        let sql = state.storage().sql();
        let schema_error = window_sql::migrate(&sql).err().map(|e| e.to_string());
        if let Some(e) = &schema_error {
            worker::console_error!("timeline window schema migration failed: {e}");
        }
        Self { sql, schema_error }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        if let Some(e) = &self.schema_error {
            return Response::error(
                format!("timeline window unavailable: schema migration failed: {e}"),
                500,
            );
        }
        let op: WindowOp = match req.json().await {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad window op: {e}"), 400),
        };
        match window::apply(&mut SqlWindow::new(&self.sql), op) {
            Ok(reply) => Response::from_json(&reply),
            Err(e) => super::failure(&ApiError::Storage {
                kind: StorageKind::Other,
                detail: format!("window op failed: {e}"),
            }),
        }
    }
}

/// Worker-side handle to readers' windows.
pub struct Windows {
    namespace: ObjectNamespace,
    io: Rc<Io>,
}

impl Windows {
    pub fn new(ctx: &Ctx) -> ApiResult<Self> {
        Ok(Self { namespace: ctx.env.durable_object("TIMELINE")?, io: ctx.io.clone() })
    }

    pub async fn call(&self, reader: UserId, op: &WindowOp) -> ApiResult<WindowReply> {
        crate::objects::call(&self.namespace, &self.io, &format!("reader:{reader}"), op).await
    }
}
