//! The instance figures that read storage (`/api/v1/instance/activity`).

use crate::context::Ctx;
use crate::domain::instance::{self, Activity, WEEK_MS};
use crate::error::ApiResult;
use crate::store::users;

/// The last 12 weeks' activity, this week first. Registrations are the handle directory's
/// claims per week: one indexed range read per database (its share of the directory), in waves;
/// statuses and logins are not counted anywhere cheap, so they answer `0`.
pub async fn activity(ctx: &Ctx) -> ApiResult<Vec<Activity>> {
    let from = instance::oldest_week(ctx.now);
    let counts = ctx.shards.on_every_database(|db| users::claims_by_week(db, from, WEEK_MS)).await?;
    Ok(instance::activity(ctx.now, &counts.concat()))
}
