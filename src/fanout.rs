//! Fan-out: queue producer and consumer. (Filled in by the publishing-pipeline issue.)

use crate::http::app::App;
use crate::store::posts::Published;

/// Sends the fan-out message for a freshly committed outbox event.
pub async fn announce(_app: &App, _published: &Published) {}

/// Nudges delivery of pending cleanup events.
pub async fn kick(_app: &App) {}
