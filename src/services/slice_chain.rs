//! A backlog worked through in slices on one database (old comments' moves, due scheduled
//! posts): the cron share runs one slice, and a full one starts a chain of queue messages, one
//! slice each, each sending the next while the backlog lasts. A chain marks when it last took a
//! step (in the database's `stats`); a share starts a new one only when none ran within
//! `stale_ms`, so a chain whose message was lost is restarted then, and two never run at once
//! for long.

use crate::context::Ctx;
use crate::domain::queue::ReconcileDatabase;
use crate::error::ApiResult;
use crate::services::queue::send::send_batch;
use crate::store::{batch, stats, AnyDb};

pub struct SliceChain {
    /// The `stats` name of the mark.
    pub mark: &'static str,
    pub stale_ms: i64,
    /// The chain's message for a database.
    pub message: fn(usize) -> ReconcileDatabase,
}

impl SliceChain {
    /// After a share's slice: starts a chain when the slice was full and none runs.
    pub async fn start_if_full(&self, ctx: &Ctx, db: AnyDb<'_>, full: bool) -> ApiResult<()> {
        if !full {
            return Ok(());
        }
        let running = stats::value(db, self.mark).await?.is_some_and(|at| ctx.now - at < self.stale_ms);
        if running {
            return Ok(());
        }
        self.next(ctx, db).await
    }

    /// After a chain's slice: the next message while the backlog lasts.
    pub async fn continue_if_full(&self, ctx: &Ctx, db: AnyDb<'_>, full: bool) -> ApiResult<()> {
        if full {
            self.next(ctx, db).await?;
        }
        Ok(())
    }

    async fn next(&self, ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<()> {
        batch(db, vec![stats::set(db, self.mark, ctx.now)?]).await?;
        send_batch(ctx, [(self.message)(db.index()).into()]).await
    }
}
