//! Fresh snowflake ids for inserts. The layout is pure ([`crate::domain::snowflake::snowflake_in`]);
//! this retries an insert whose id collided, with random bits the caller drew ([`IdSeed`]).

use std::future::Future;

use super::{StoreError, StoreResult};
use crate::domain::snowflake::{snowflake_in, IdSeed, LogicalShard};

/// Inserts tried before giving up. An id has 3 random bits per millisecond and shard, so an
/// attempt collides with probability k/8 when k rows already hold that millisecond on that
/// shard. The first [`ATTEMPTS_AT_TIME`] attempts keep the asked millisecond; after that each
/// attempt draws a millisecond at random from a spread after it that doubles every attempt
/// (2, 4, 8, .. up to [`MAX_SPREAD_MS`]), and the row takes its time from the id. So a row
/// keeps its time unless its millisecond is full on its shard, and a bulk import of hundreds
/// of rows claiming one millisecond spreads over the next few dozen instead of failing, in a
/// handful of attempts each.
pub const ATTEMPTS: usize = 32;
pub const ATTEMPTS_AT_TIME: usize = 4;
pub const MAX_SPREAD_MS: i64 = 1024;

/// The millisecond attempt `attempt` uses for a row asked at `time_ms` (`random` picks within
/// the spread).
pub fn attempt_time(time_ms: i64, attempt: usize, random: u64) -> i64 {
    if attempt < ATTEMPTS_AT_TIME {
        return time_ms;
    }
    let doublings = (attempt - ATTEMPTS_AT_TIME + 1).min(10) as u32;
    let spread = (1i64 << doublings).min(MAX_SPREAD_MS);
    time_ms + (random % spread as u64) as i64
}

/// The id attempt `attempt` tries for a row created at `time_ms` on `shard`.
pub fn attempt_id(time_ms: i64, attempt: usize, shard: LogicalShard, seed: &mut IdSeed) -> StoreResult<i64> {
    let time = attempt_time(time_ms, attempt, seed.next_bits());
    snowflake_in(time, shard, seed.next_bits())
        .ok_or_else(|| StoreError::Internal(format!("time {time} ms does not fit a snowflake id")))
}

/// Runs `insert` with a fresh id on `shard` until it does not collide on the primary key `pk`
/// (as SQLite names it, e.g. `posts.id`). `insert` must be atomic, so a collision leaves
/// nothing behind, and must take the row's time from the id (`snowflake_time`): after
/// [`ATTEMPTS_AT_TIME`] collisions the id is for a later millisecond (see [`ATTEMPTS`]).
pub async fn insert_with_fresh_id<T, F, Fut>(
    mut seed: IdSeed,
    time_ms: i64,
    shard: LogicalShard,
    pk: &str,
    mut insert: F,
) -> StoreResult<T>
where
    F: FnMut(i64) -> Fut,
    Fut: Future<Output = StoreResult<T>>,
{
    for attempt in 0..ATTEMPTS {
        match insert(attempt_id(time_ms, attempt, shard, &mut seed)?).await {
            Err(e) if e.is_unique_violation(pk) => continue,
            done => return done,
        }
    }
    Err(StoreError::Internal(format!("no free {pk} after {ATTEMPTS} attempts")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_keeps_its_time_until_its_millisecond_is_full_then_spreads_after_it() {
        for attempt in 0..ATTEMPTS_AT_TIME {
            assert_eq!(attempt_time(1_000, attempt, u64::MAX), 1_000);
        }
        assert!((1_000..1_002).contains(&attempt_time(1_000, ATTEMPTS_AT_TIME, 7)));
        let last = ATTEMPTS - 1;
        let spread: Vec<i64> = (0..4096u64).map(|r| attempt_time(1_000, last, r)).collect();
        assert_eq!(spread.iter().min(), Some(&1_000));
        assert_eq!(spread.iter().max(), Some(&(1_000 + MAX_SPREAD_MS - 1)));
    }
}
