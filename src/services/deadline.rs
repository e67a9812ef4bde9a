//! A deadline on queued work: a storage call that never answers must not hold the whole batch,
//! and with it the queue (locally the consumer gets the next batch only when this one is done).

use futures_util::future::{select, Either};

use crate::error::{ApiError, ApiResult};

/// `work`, or an error once `limit` has passed (the work is dropped; whatever it committed
/// stands, and its message is retried, which events applied by current state allow).
pub async fn within<T>(
    limit: std::time::Duration,
    work: impl std::future::Future<Output = ApiResult<T>>,
) -> ApiResult<T> {
    let work = std::pin::pin!(work);
    let timer = std::pin::pin!(worker::Delay::from(limit));
    match select(work, timer).await {
        Either::Left((done, _)) => done,
        Either::Right(_) => {
            Err(ApiError::Internal(format!("still running after {limit:?}: given back to the queue")))
        }
    }
}
