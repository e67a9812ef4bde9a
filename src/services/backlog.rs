//! The delivery-backlog alert: computes the state from every database's lag figures
//! (`domain/backlog.rs` is the rule) and records each change of state with its time on the
//! control database's `stats`, so "since" holds across requests and isolates. Both the stats
//! read and the cron pass call [`refresh`], so the state moves even when nobody looks.

use serde::Serialize;

use crate::context::Ctx;
use crate::domain::backlog::{next_mark, BacklogState, Lag, Mark};
use crate::domain::feed::percentile;
use crate::error::ApiResult;
use crate::store::stats;

/// The `backlog` object of `GET /v1/admin/stats`.
#[derive(Debug, Clone, Serialize)]
pub struct Backlog {
    pub state: BacklogState,
    /// When the backlog entered this state (RFC 3339).
    pub since: String,
    pub since_ms: i64,
    pub oldest_unfinished_age_ms: i64,
    /// `null` when no delivery finished within the window.
    pub lag_p99_ms: Option<i64>,
    pub lag_window_ms: i64,
    pub warn_at_ms: i64,
    pub alert_at_ms: i64,
}

/// The lag figures of every database, merged.
async fn lag(ctx: &Ctx) -> ApiResult<Lag> {
    let from = ctx.now - ctx.config.backlog.lag_window_ms;
    let parts = ctx.on_every_database(|db| stats::lag_figures(db, from)).await?;
    let oldest = parts.iter().filter_map(|p| p.oldest_pending_at).min();
    let samples: Vec<i64> = parts.into_iter().flat_map(|p| p.recent_ms).collect();
    Ok(Lag {
        oldest_unfinished_age_ms: oldest.map_or(0, |t| (ctx.now - t).max(0)),
        lag_p99_ms: percentile(&samples, 99.0),
    })
}

/// Computes the state now and records it if it changed.
pub async fn refresh(ctx: &Ctx) -> ApiResult<Backlog> {
    let thresholds = ctx.config.backlog;
    let (lag, recorded) = futures_util::future::join(lag(ctx), stats::backlog_mark(ctx.control())).await;
    let (lag, raw) = (lag?, recorded?);
    let recorded = raw.and_then(|(code, since)| Some(Mark { state: BacklogState::from_code(code)?, since }));
    let current = recorded.map_or(BacklogState::Ok, |m| m.state);
    let state = thresholds.state(&lag, current);
    let mark = match next_mark(recorded, state, ctx.now) {
        Some(mark) => {
            let was = raw.map(|(code, _)| code);
            stats::set_backlog_mark(ctx.control(), was, mark.state.code(), mark.since).await?;
            mark
        }
        None => recorded.unwrap_or(Mark { state, since: ctx.now }),
    };
    Ok(Backlog {
        state: mark.state,
        since: crate::domain::time::format_rfc3339(mark.since),
        since_ms: mark.since,
        oldest_unfinished_age_ms: lag.oldest_unfinished_age_ms,
        lag_p99_ms: lag.lag_p99_ms,
        lag_window_ms: thresholds.lag_window_ms,
        warn_at_ms: thresholds.warn_ms,
        alert_at_ms: thresholds.alert_ms,
    })
}
