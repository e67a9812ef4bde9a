//! Moving one logical shard from one physical database to another (README "Moving a shard"):
//! copy while live, freeze on the old database, copy again (the catch-up: it also deletes what
//! the old database no longer has), verify, switch `SHARD_MAP`, purge the old rows. Each step
//! is one admin call doing one bounded page, so a step never outlives a request's limits and
//! any step may be repeated: a copy converges, a purge finishes, a freeze is idempotent.
//!
//! What makes it lose and duplicate nothing:
//! - every page makes the target's rows of a key range equal to the source's (deletes the
//!   extra ones, upserts the rest) in one transaction, so a full pass taken while the source
//!   no longer changes leaves the target equal to it;
//! - the freeze (triggers, migrations/0013) makes the source stop changing: the shard's writes
//!   get a retryable 503 until the new map is deployed; cross-shard writes whose other side is
//!   frozen wait in their authoritative side's outbox, which is retried;
//! - `verify` says when the copy is exact and the source frozen;
//!   only then may the map switch;
//! - the purge refuses while the map still sends the shard to the database it purges.

use futures_util::future::join;
use serde::Serialize;

use crate::context::Ctx;
use crate::domain::placement::{key_of, row_tables, MoveCursor, Table};
use crate::domain::shard::shard_of_handle;
use crate::domain::snowflake::LogicalShard;
use crate::error::{ApiError, ApiResult};
use crate::store::shard_move::{self as store, Fingerprint, Page, PageWrite};
use crate::store::AnyDb;

/// What a freeze or unfreeze left.
#[derive(Debug, Serialize)]
pub struct FreezeReport {
    pub shard: usize,
    pub database: usize,
    pub frozen: bool,
    /// Whether this call changed anything.
    pub changed: bool,
}

/// One copy page.
#[derive(Debug, Serialize)]
pub struct CopyReport {
    pub table: &'static str,
    #[serde(flatten)]
    pub write: PageWrite,
    /// Handle directory rows given their shard by this call (rows claimed before 0013).
    pub placed: usize,
    /// Where the next call continues (`after`); `None` when this pass is complete.
    pub next: Option<String>,
    pub done: bool,
}

/// One purge page.
#[derive(Debug, Serialize)]
pub struct PurgeReport {
    pub table: Option<&'static str>,
    pub deleted: usize,
    pub done: bool,
}

/// One table on both sides.
#[derive(Debug, Serialize)]
pub struct TableCheck {
    pub table: &'static str,
    pub source: Fingerprint,
    pub target: Fingerprint,
    pub equal: bool,
}

#[derive(Debug, Serialize)]
pub struct VerifyReport {
    /// Safe to switch the map: every table equal and the source frozen.
    pub ok: bool,
    pub source_frozen: bool,
    pub tables: Vec<TableCheck>,
}

const NOT_HOME: ApiError =
    ApiError::Conflict { code: "shard_not_home", detail: "SHARD_MAP does not place the shard on `from`" };

/// Physical database `index`, or 422 naming the field.
fn database<'c>(ctx: &'c Ctx, field: &'static str, index: usize) -> ApiResult<AnyDb<'c>> {
    ctx.shards.database(index).ok_or_else(|| ApiError::field(field, "no such database (DB_0 .. DB_{P-1})"))
}

fn is_frozen(mode: Option<String>) -> bool {
    mode.is_some()
}

/// Freezes the shard on `index`: from now on that database refuses its writes.
pub async fn freeze(ctx: &Ctx, shard: LogicalShard, index: usize) -> ApiResult<FreezeReport> {
    let db = database(ctx, "database", index)?;
    let report = |changed| FreezeReport { shard: shard.index(), database: index, frozen: true, changed };
    if is_frozen(store::freeze_mode(db, shard).await?) {
        return Ok(report(false));
    }
    if store::freeze(db, shard, ctx.now).await? {
        return Ok(report(true));
    }
    Err(ApiError::Conflict {
        code: "handles_unplaced",
        detail: "handle directory rows without their shard: run a copy from this database first",
    })
}

/// Lifts the freeze where the map places the shard (aborting a move), or where no row of the
/// shard is left (a purged old database, before the shard moves back to it). Anywhere else
/// the freeze is what stops a stale map's writes from landing where nobody reads.
pub async fn unfreeze(ctx: &Ctx, shard: LogicalShard, index: usize) -> ApiResult<FreezeReport> {
    let db = database(ctx, "database", index)?;
    if ctx.shard_map().database(shard) != index && holds_rows(db, shard).await? {
        return Err(ApiError::Conflict {
            code: "shard_not_home",
            detail: "SHARD_MAP places the shard elsewhere and rows of it are still here: purge first",
        });
    }
    let changed = store::unfreeze(db, shard).await? > 0;
    Ok(FreezeReport { shard: shard.index(), database: index, frozen: false, changed })
}

/// Whether any row of the shard is on `db`.
async fn holds_rows(db: AnyDb<'_>, shard: LogicalShard) -> ApiResult<bool> {
    for table in row_tables() {
        if store::fingerprint(db, table, shard).await?.rows > 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The two databases of a copy or verify, checked: distinct and existing.
fn pair(ctx: &Ctx, from: usize, to: usize) -> ApiResult<(AnyDb<'_>, AnyDb<'_>)> {
    if from == to {
        return Err(ApiError::field("to", "from and to must be different databases"));
    }
    Ok((database(ctx, "from", from)?, database(ctx, "to", to)?))
}

/// Copies one page of the shard from `from` to `to`, continuing at `after` (a `next` of an
/// earlier call; `None` starts a pass). Only while the map still places the shard on `from`
/// (after the switch the target is live and a copy would overwrite it) and the target does
/// not refuse the shard's writes.
pub async fn copy(
    ctx: &Ctx,
    shard: LogicalShard,
    from: usize,
    to: usize,
    after: Option<&str>,
) -> ApiResult<CopyReport> {
    let (source, target) = pair(ctx, from, to)?;
    if ctx.shard_map().database(shard) != from {
        return Err(NOT_HOME);
    }
    if is_frozen(store::freeze_mode(target, shard).await?) {
        return Err(ApiError::Conflict {
            code: "target_frozen",
            detail: "the shard is frozen on `to`: unfreeze it",
        });
    }
    let cursor = match after {
        Some(text) => MoveCursor::decode(text).ok_or(ApiError::InvalidCursor)?,
        None => MoveCursor::START,
    };
    let table = cursor.table();
    if table.name == "handles" && cursor.after.is_empty() {
        let placed = place_handles(source).await?;
        if placed > 0 {
            let next = Some(cursor.encode());
            return Ok(CopyReport {
                table: table.name,
                write: PageWrite::default(),
                placed,
                next,
                done: false,
            });
        }
    }
    copy_page(source, target, shard, &cursor).await
}

/// Gives up to a page of unplaced handle rows their shard; how many it placed.
async fn place_handles(db: AnyDb<'_>) -> ApiResult<usize> {
    let handles = store::unplaced_handles(db, 200).await?;
    if handles.is_empty() {
        return Ok(0);
    }
    let placed: Vec<(String, LogicalShard)> = handles
        .into_iter()
        .map(|h| {
            let s = shard_of_handle(&h);
            (h, s)
        })
        .collect();
    Ok(store::place_handles(db, &placed).await?)
}

async fn copy_page(
    source: AnyDb<'_>,
    target: AnyDb<'_>,
    shard: LogicalShard,
    cursor: &MoveCursor,
) -> ApiResult<CopyReport> {
    let table: &Table = cursor.table();
    let rows = store::read_page(source, table, shard, &cursor.after).await?;
    // A full page may have more after it; a short one ends the table.
    let last = match rows.last() {
        Some(row) if rows.len() == table.page => Some(
            key_of(table, row)
                .ok_or_else(|| ApiError::Internal(format!("{}: a key is missing", table.name)))?,
        ),
        _ => None,
    };
    let page = Page { shard, after: &cursor.after, last: last.as_deref(), rows: &rows };
    let write = store::write_page(target, table, &page).await?;
    let next = match last {
        Some(after) => Some(MoveCursor { table: cursor.table, after }),
        None => cursor.next_table(),
    };
    let done = next.is_none();
    Ok(CopyReport { table: table.name, write, placed: 0, next: next.map(|c| c.encode()), done })
}

/// Compares the shard's rows on both databases, table by table, and says whether the map may
/// switch now: every table equal while the source is frozen.
pub async fn verify(ctx: &Ctx, shard: LogicalShard, from: usize, to: usize) -> ApiResult<VerifyReport> {
    let (source, target) = pair(ctx, from, to)?;
    let mut tables = Vec::new();
    for table in row_tables() {
        let (s, t) =
            join(store::fingerprint(source, table, shard), store::fingerprint(target, table, shard)).await;
        let (source, target) = (s?, t?);
        tables.push(TableCheck { table: table.name, source, target, equal: source == target });
    }
    let source_frozen = is_frozen(store::freeze_mode(source, shard).await?);
    let ok = source_frozen && tables.iter().all(|t| t.equal);
    Ok(VerifyReport { ok, source_frozen, tables })
}

/// Deletes one page of the shard's rows from `index`, a database the map no longer places it
/// on and where it is frozen (so nothing writes it meanwhile): children first, `posts` and
/// `users` last (the foreign keys to them hold).
/// `done` once no row of the shard is left there; the freeze stays.
pub async fn purge(ctx: &Ctx, shard: LogicalShard, index: usize) -> ApiResult<PurgeReport> {
    let db = database(ctx, "database", index)?;
    if ctx.shard_map().database(shard) == index {
        return Err(ApiError::Conflict {
            code: "shard_still_home",
            detail: "SHARD_MAP still places the shard on this database: deploy the new map first",
        });
    }
    if !is_frozen(store::freeze_mode(db, shard).await?) {
        return Err(ApiError::Conflict {
            code: "shard_not_frozen",
            detail: "freeze the shard here before purging",
        });
    }
    for table in row_tables().rev() {
        let deleted = store::purge_page(db, table, shard).await?;
        if deleted > 0 {
            return Ok(PurgeReport { table: Some(table.name), deleted, done: false });
        }
    }
    Ok(PurgeReport { table: None, deleted: 0, done: true })
}
