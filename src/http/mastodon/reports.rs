//! `POST /api/v1/reports` (answer: Mastodon's Report) and `GET|POST|DELETE
//! /api/v1/domain_blocks` (`services/reports.rs` says what each keeps).

use worker::Response;

use super::entities::Account;
use super::json;
use crate::domain::ids::UserId;
use crate::domain::time::format_rfc3339;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::Input;
use crate::services::reports::{self as service, Asked};

pub async fn report(app: &App, input: &Input, viewer: UserId) -> ApiResult<Response> {
    let body = input.form_or_json(false)?;
    let account = body.required_id("account_id", UserId::parse)?;
    let status_ids = input.values_of("status_ids")?;
    let asked = Asked {
        account,
        status_ids: &status_ids,
        comment: body.str("comment")?,
        category: body.str("category")?,
        forward: body.flag("forward")?.unwrap_or(false),
    };
    let (row, target) = service::report(app, viewer, &asked).await?;
    let status_ids: Vec<String> = serde_json::from_str(&row.status_ids).unwrap_or_default();
    json(&serde_json::json!({
        "id": row.id.to_string(),
        "action_taken": false,
        "action_taken_at": null,
        "category": row.category,
        "comment": row.comment,
        // There is no other server to forward to.
        "forwarded": false,
        "created_at": format_rfc3339(row.created_at),
        "status_ids": status_ids,
        "rule_ids": [],
        "target_account": Account::new(&input.origin, &target),
    }))
}

pub async fn domain_blocks(app: &App, viewer: UserId) -> ApiResult<Response> {
    json(&service::domain_blocks(app, viewer).await?)
}

/// `POST` (`true`) or `DELETE` with `domain` in the body or the query; `{}`.
pub async fn set_domain_block(app: &App, input: &Input, viewer: UserId, on: bool) -> ApiResult<Response> {
    let body = input.form_or_json(true)?;
    let domain = match body.str("domain")? {
        Some(domain) => domain.to_owned(),
        None => {
            input.query("domain").ok_or_else(|| ApiError::field("domain", "domain is required"))?.to_owned()
        }
    };
    service::set_domain_block(app, viewer, &domain, on).await?;
    json(&serde_json::json!({}))
}
