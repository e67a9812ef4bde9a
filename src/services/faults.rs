//! The test-fault seam of the fan-out pipeline: the one place its production path asks whether
//! a black-box test armed a fault (`POST /v1/admin/test/fault`, docs/operations.md "Test
//! hooks"). Built once per request or queue batch; without `TEST_HOOKS` it reads nothing and
//! every fault point passes.
//!
//! Faults are scoped to a user id, so concurrent tests cannot trip each other's; each firing
//! consumes one of the armed count (`store/test_hooks.rs::take_fault`).

use crate::context::Ctx;
use crate::domain::fanout_plan::FaultPoint;
use crate::domain::ids::UserId;
use crate::error::{ApiError, ApiResult};
use crate::store::{test_hooks, ControlDb};

pub struct Faults<'a> {
    /// Where the armed faults are (the control database), with test hooks on.
    armed_in: Option<ControlDb<'a>>,
}

impl<'a> Faults<'a> {
    pub fn of(ctx: &'a Ctx) -> Self {
        Self { armed_in: ctx.config.test_hooks.then(|| ctx.control()) }
    }

    /// `skip_announce:{actor}`: the queue send after a commit is lost, as a crash right after
    /// the commit would lose it (the sweep resends the event). A failed check loses nothing.
    pub async fn announce_lost(&self, actor: UserId) -> bool {
        self.take(format!("skip_announce:{actor}")).await.unwrap_or(false)
    }

    /// `boost_mirror_lost:{booster}`: a crash between a boost's two databases (the booster's row
    /// and its outbox event committed, the original's side not yet written): an error.
    pub async fn boost_mirror_lost(&self, booster: UserId) -> ApiResult<()> {
        match self.take(format!("boost_mirror_lost:{booster}")).await? {
            true => Err(ApiError::Internal("injected fault: stopped before the original's side".into())),
            false => Ok(()),
        }
    }

    /// A fault point of the fan-out plan: an error when its fault fires.
    pub async fn at(&self, point: FaultPoint) -> ApiResult<()> {
        match point {
            FaultPoint::StallFanout { author } => self.stall_fanout(author).await,
            FaultPoint::AfterChunk { author } => self.after_chunk(author).await,
        }
    }

    /// `stall_fanout:{author}`: an outage of the author's post fan-out (each attempt fails and
    /// is retried, until the queue dead-letters it), for as many attempts as it is armed.
    async fn stall_fanout(&self, author: UserId) -> ApiResult<()> {
        match self.take(format!("stall_fanout:{author}")).await? {
            true => Err(ApiError::Internal("injected fault: fan-out stalled".into())),
            false => Ok(()),
        }
    }

    /// `fanout_after_chunk:{author}`: a crash after delivering a chunk, before its progress is
    /// recorded.
    async fn after_chunk(&self, author: UserId) -> ApiResult<()> {
        match self.take(format!("fanout_after_chunk:{author}")).await? {
            true => Err(ApiError::Internal("injected fault after delivering a chunk".into())),
            false => Ok(()),
        }
    }

    async fn take(&self, name: String) -> ApiResult<bool> {
        match self.armed_in {
            Some(db) => Ok(test_hooks::take_fault(db, &name).await?),
            None => Ok(false),
        }
    }
}
