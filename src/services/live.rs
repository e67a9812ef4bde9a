//! Live feed sockets, from the service side: closing them when their credential ends, and the
//! fan-out's reach to live readers of authors it does not push to (see `services::fanout`).

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::live::Revocation;
use crate::objects::timeline::Windows;

/// Closes the user's open feed sockets that `revocation` ends. Best effort: a failure is
/// logged, and the object's own review closes them within `live::REVIEW_MS` anyway.
pub async fn close_sockets(ctx: &Ctx, user: UserId, revocation: Revocation) {
    let closed = match Windows::new(ctx) {
        Ok(windows) => windows.close_live(user, ctx.now.div_euclid(1000), revocation).await,
        Err(e) => Err(e),
    };
    if let Err(e) = closed {
        worker::console_error!("closing the live sockets of {user} failed (the review will): {e}");
    }
}
