//! `POST /v1/admin/shards/{shard}/{freeze|unfreeze|copy|verify|purge}`: the steps of moving a
//! logical shard between physical databases (README "Moving a shard"); each parses its body
//! and calls one function of `services/shard_move.rs`.

use worker::Response;

use super::json;
use crate::domain::snowflake::LogicalShard;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::http::router::ShardStep;
use crate::services::shard_move;

pub async fn step(app: &App, input: &Input, shard: LogicalShard, step: ShardStep) -> ApiResult<Response> {
    let body = input.json(false)?;
    match step {
        ShardStep::Freeze => json(200, &shard_move::freeze(app, shard, index(&body, "database")?).await?),
        ShardStep::Unfreeze => json(200, &shard_move::unfreeze(app, shard, index(&body, "database")?).await?),
        ShardStep::Purge => json(200, &shard_move::purge(app, shard, index(&body, "database")?).await?),
        ShardStep::Copy => {
            let (from, to) = (index(&body, "from")?, index(&body, "to")?);
            json(200, &shard_move::copy(app, shard, from, to, body.str("after")?).await?)
        }
        ShardStep::Verify => {
            let (from, to) = (index(&body, "from")?, index(&body, "to")?);
            json(200, &shard_move::verify(app, shard, from, to).await?)
        }
    }
}

/// A database index field (`i` of `DB_i`); its range is the service's to check.
fn index(body: &JsonObject, field: &'static str) -> ApiResult<usize> {
    let n = body.count(field)?.ok_or_else(|| ApiError::field(field, format!("{field} is required")))?;
    usize::try_from(n).map_err(|_| ApiError::field(field, "no such database"))
}
