//! Fresh snowflake ids for inserts. The layout is pure ([`crate::domain::ids::snowflake`]);
//! this draws its random bits and retries an insert whose id collided.

use std::future::Future;

use crate::context::random_bytes;
use crate::domain::ids::snowflake;
use crate::error::{ApiError, ApiResult};

/// Inserts tried before giving up. A collision needs another row in the same millisecond with
/// the same 11 random bits: with k rows already in that millisecond one attempt collides with
/// probability k/2048, so even 300 rows sharing one millisecond (a bulk import) fail ten
/// attempts in a row with probability (300/2048)^10, about 5e-9.
pub const ATTEMPTS: usize = 10;

/// A new id for something created at `time_ms`.
pub fn fresh(time_ms: i64) -> ApiResult<i64> {
    snowflake(time_ms, u64::from_le_bytes(random_bytes()?))
        .ok_or_else(|| ApiError::Internal(format!("time {time_ms} ms does not fit a snowflake id")))
}

/// Runs `insert` with a fresh id until it does not collide on the primary key `pk` (as SQLite
/// names it, e.g. `posts.id`). `insert` must be atomic, so a collision leaves nothing behind.
pub async fn insert_with_fresh_id<T, F, Fut>(time_ms: i64, pk: &str, mut insert: F) -> ApiResult<T>
where
    F: FnMut(i64) -> Fut,
    Fut: Future<Output = ApiResult<T>>,
{
    for _ in 0..ATTEMPTS {
        match insert(fresh(time_ms)?).await {
            Err(e) if e.is_unique_violation(pk) => continue,
            done => return done,
        }
    }
    Err(ApiError::Internal(format!("no free {pk} after {ATTEMPTS} attempts")))
}
