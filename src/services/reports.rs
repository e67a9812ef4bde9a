//! Reports to the operator and hidden domains (`store/reports.rs`).
//!
//! A report is stored on the reporter's home (nothing is forwarded: there is no other server) and
//! read by the operator with `GET /v1/admin/reports`, newest first across every database; the
//! Mastodon admin API stays closed (nobody is staff through it), so resolving is the operator's
//! moderation (`/v1/admin/users/{id}/suspend`, `/v1/admin/posts/{id}/takedown`).

use crate::context::{id_seed, Ctx};
use crate::domain::ids::{PostId, UserId};
use crate::domain::reports::{self as rules, MAX_STATUSES};
use crate::error::{ApiError, ApiResult};
use crate::services::users::visible;
use crate::store::reports::{self as rows, NewReport, ReportRow};
use crate::store::users::UserRow;

/// What a report asks, as sent.
pub struct Asked<'a> {
    pub account: UserId,
    pub status_ids: &'a [String],
    pub comment: Option<&'a str>,
    pub category: Option<&'a str>,
    pub forward: bool,
}

/// Files a report about an account the reporter may see (not themselves); the row and the
/// account. Every parameter is checked first (`422`).
pub async fn report(ctx: &Ctx, reporter: UserId, asked: &Asked<'_>) -> ApiResult<(ReportRow, UserRow)> {
    if asked.account == reporter {
        return Err(ApiError::field("account_id", "you cannot report yourself"));
    }
    let category = rules::category(asked.category)?;
    let comment = rules::comment(asked.comment)?;
    if asked.status_ids.len() > MAX_STATUSES {
        return Err(ApiError::field("status_ids", format!("a report names at most {MAX_STATUSES} statuses")));
    }
    if asked.status_ids.iter().any(|id| PostId::parse(id).is_none()) {
        return Err(ApiError::field("status_ids", "status_ids must be status ids"));
    }
    let account = visible(ctx, reporter, asked.account).await?;
    let new = NewReport {
        reporter,
        account: asked.account,
        status_ids: asked.status_ids,
        comment: &comment,
        category,
        forward: asked.forward,
    };
    let row = rows::insert(ctx.user_db(reporter), &new, id_seed()?, ctx.now).await?;
    Ok((row, account))
}

/// The newest unresolved reports across every database, at most `limit`.
pub async fn newest(ctx: &Ctx, limit: usize) -> ApiResult<Vec<ReportRow>> {
    let pages = ctx.on_every_database(|db| rows::newest(db, limit)).await?;
    let mut all: Vec<ReportRow> = pages.into_iter().flatten().collect();
    all.sort_by_key(|r| std::cmp::Reverse((r.created_at, r.id)));
    all.truncate(limit);
    Ok(all)
}

/// The most hidden domains a list answers.
pub const MAX_DOMAIN_BLOCKS: usize = 200;

pub async fn domain_blocks(ctx: &Ctx, user: UserId) -> ApiResult<Vec<String>> {
    Ok(rows::domain_blocks(ctx.user_db(user), user, MAX_DOMAIN_BLOCKS).await?)
}

/// Hides (or shows again) a domain. A single-domain server has no accounts of another domain:
/// the list is kept as the user's, with nothing else to hide.
pub async fn set_domain_block(ctx: &Ctx, user: UserId, domain: &str, on: bool) -> ApiResult<()> {
    let domain = rules::domain(domain)?;
    Ok(rows::set_domain_block(ctx.user_db(user), user, &domain, on, ctx.now).await?)
}
