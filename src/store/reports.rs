//! Reports by users (`reports`, migration 0036), on the reporter's home under an id of the
//! reporter's shard; read by the operator across every database. And the domains a user hides
//! (`domain_blocks`), on their home.

use serde::Deserialize;

use super::snowflake::insert_with_fresh_id;
use super::{all, exec, int, text, AnyDb, StoreResult, UserDb};
use crate::domain::ids::UserId;
use crate::domain::snowflake::{shard_of_id, snowflake_time, IdSeed};

/// A report as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct ReportRow {
    pub id: i64,
    pub reporter_id: UserId,
    pub account_id: UserId,
    /// A JSON array of status ids (strings).
    pub status_ids: String,
    pub comment: String,
    pub category: String,
    pub forward: i64,
    pub created_at: i64,
}

/// What a report says.
pub struct NewReport<'a> {
    pub reporter: UserId,
    pub account: UserId,
    pub status_ids: &'a [String],
    pub comment: &'a str,
    pub category: &'a str,
    pub forward: bool,
}

const COLUMNS: &str = "id, reporter_id, account_id, status_ids, comment, category, forward, created_at";

/// Stores a report under a fresh id; the row.
pub async fn insert(
    db: UserDb<'_>,
    report: &NewReport<'_>,
    seed: IdSeed,
    now: i64,
) -> StoreResult<ReportRow> {
    let status_ids = serde_json::to_string(report.status_ids).unwrap_or_else(|_| "[]".into());
    let status_ids = status_ids.as_str();
    let insert = |id: i64| async move {
        let sql = format!(
            "INSERT INTO reports (id, reporter_id, account_id, status_ids, comment, category, forward, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING {COLUMNS}"
        );
        let params = [
            int(id),
            int(report.reporter),
            int(report.account),
            text(status_ids),
            text(report.comment),
            text(report.category),
            int(i64::from(report.forward)),
            int(snowflake_time(id)),
        ];
        let rows: Vec<ReportRow> = all(db, &sql, &params).await?;
        rows.into_iter()
            .next()
            .ok_or_else(|| super::StoreError::Internal("INSERT ... RETURNING gave no row".into()))
    };
    insert_with_fresh_id(seed, now, shard_of_id(report.reporter.get()), "reports.id", insert).await
}

/// One database's newest unresolved reports, at most `limit`.
pub async fn newest(db: AnyDb<'_>, limit: usize) -> StoreResult<Vec<ReportRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM reports WHERE resolved_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ?1"
    );
    all(db, &sql, &[int(limit as i64)]).await
}

#[derive(Deserialize)]
struct Domain {
    domain: String,
}

/// The user's hidden domains, newest first, at most `limit`.
pub async fn domain_blocks(db: UserDb<'_>, user: UserId, limit: usize) -> StoreResult<Vec<String>> {
    let rows: Vec<Domain> = all(
        db,
        "SELECT domain FROM domain_blocks WHERE user_id = ?1 ORDER BY created_at DESC, domain LIMIT ?2",
        &[int(user), int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|d| d.domain).collect())
}

/// Hides (`true`) or shows again a domain; idempotent.
pub async fn set_domain_block(
    db: UserDb<'_>,
    user: UserId,
    domain: &str,
    on: bool,
    now: i64,
) -> StoreResult<()> {
    if on {
        exec(
            db,
            "INSERT INTO domain_blocks (user_id, domain, created_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (user_id, domain) DO NOTHING",
            &[int(user), text(domain), int(now)],
        )
        .await
    } else {
        exec(db, "DELETE FROM domain_blocks WHERE user_id = ?1 AND domain = ?2", &[int(user), text(domain)])
            .await
    }
}
