//! The delivery-backlog alert: computes the state from every database's lag figures
//! (`domain/backlog.rs` is the rule) and records each change of state with its time on the
//! control database's `stats`, so "since" holds across requests and isolates. Both the stats
//! read and the cron pass call [`refresh`], so the state moves even when nobody looks.

use serde::Serialize;

use crate::context::Ctx;
use crate::domain::backlog::{next_mark, BacklogState, Lag, Mark};
use crate::domain::feed::percentile;
use crate::error::ApiResult;
use crate::store::stats::{self, LagFigures};

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

/// The alert's figures from every database's, merged: the p99 over the samples recorded
/// within the lag window only.
fn lag(ctx: &Ctx, figures: &LagFigures) -> Lag {
    let from = ctx.now - ctx.config.backlog.lag_window_ms;
    let recent: Vec<i64> = figures.samples.iter().filter(|s| s.created_at >= from).map(|s| s.ms).collect();
    Lag {
        oldest_unfinished_age_ms: figures.oldest_pending_at.map_or(0, |t| (ctx.now - t).max(0)),
        lag_p99_ms: percentile(&recent, 99.0),
    }
}

/// Reads every database's lag figures, computes the state now and records it if it changed
/// (the cron's call).
pub async fn refresh(ctx: &Ctx) -> ApiResult<Backlog> {
    let mut figures = LagFigures::default();
    for part in ctx.on_every_database(stats::lag_figures).await? {
        figures.merge(part);
    }
    refresh_from(ctx, &figures).await
}

/// [`refresh`] from figures already read (the stats page reads them for itself).
pub async fn refresh_from(ctx: &Ctx, figures: &LagFigures) -> ApiResult<Backlog> {
    let thresholds = ctx.config.backlog;
    let lag = lag(ctx, figures);
    let raw = stats::backlog_mark(ctx.control()).await?;
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
