//! Fresh snowflake ids for inserts. The layout is pure ([`crate::domain::ids::snowflake_in`]);
//! this draws its random bits and retries an insert whose id collided.

use std::future::Future;

use crate::context::random_bytes;
use crate::domain::ids::snowflake_in;
use crate::domain::shard::LogicalShard;
use crate::error::{ApiError, ApiResult};

/// Inserts tried before giving up. An id has 3 random bits per millisecond and shard, so an
/// attempt collides with probability k/8 when k rows already hold that millisecond on that
/// shard. Every [`ATTEMPTS_PER_MS`] attempts the id moves one millisecond on (callers take
/// the row's time from the id, so the row moves with it): a bulk import of rows sharing one
/// timestamp spreads over the following milliseconds instead of failing.
pub const ATTEMPTS: usize = 32;
pub const ATTEMPTS_PER_MS: usize = 4;

/// A new id for something created at `time_ms` on `shard`.
pub fn fresh(time_ms: i64, shard: LogicalShard) -> ApiResult<i64> {
    snowflake_in(time_ms, shard, u64::from_le_bytes(random_bytes()?))
        .ok_or_else(|| ApiError::Internal(format!("time {time_ms} ms does not fit a snowflake id")))
}

/// Runs `insert` with a fresh id on `shard` until it does not collide on the primary key `pk`
/// (as SQLite names it, e.g. `posts.id`). `insert` must be atomic, so a collision leaves
/// nothing behind, and must take the row's time from the id (`snowflake_time`): after
/// [`ATTEMPTS_PER_MS`] collisions the id is for a later millisecond (at most 8 ms later).
pub async fn insert_with_fresh_id<T, F, Fut>(
    time_ms: i64,
    shard: LogicalShard,
    pk: &str,
    mut insert: F,
) -> ApiResult<T>
where
    F: FnMut(i64) -> Fut,
    Fut: Future<Output = ApiResult<T>>,
{
    for attempt in 0..ATTEMPTS {
        let time = time_ms + (attempt / ATTEMPTS_PER_MS) as i64;
        match insert(fresh(time, shard)?).await {
            Err(e) if e.is_unique_violation(pk) => continue,
            done => return done,
        }
    }
    Err(ApiError::Internal(format!("no free {pk} after {ATTEMPTS} attempts")))
}
