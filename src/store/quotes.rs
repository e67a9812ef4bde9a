//! Quotes (migration 0032): the quote is a post of the quoter's (`posts.quote_of`, on the
//! quoter's database); here is the quoted post's side, `quotes`, on the QUOTED post's database:
//! the mirror that counts quotes (`posts.quote_count`, moved by trigger on a real transition) and
//! lists them, with its `quote` notification in the same batch.

use serde::Deserialize;

use super::{all, batch, int, notifications, stmt, PostDb, StoreResult};
use crate::domain::ids::PostId;
use crate::domain::notifications::Notice;
use crate::domain::quotes::QuoteMirror;

/// Makes the quoted post's mirror agree with the quote as it is now, with its notification, in
/// one batch: a live quote inserts its row after notifying; a gone one turns the row off (or
/// records it off, if the mirror never saw it) and takes the notification back. Idempotent in
/// any order: nothing turns a row back on. The notification made, if its recipient has a live
/// socket open.
pub async fn converge(db: PostDb<'_>, quote: &QuoteMirror) -> StoreResult<Option<Notice>> {
    let row = [
        int(quote.quoted),
        int(quote.quote),
        int(quote.quoter),
        int(quote.created_at),
        int(i64::from(quote.active)),
    ];
    let upsert = if quote.active { "DO NOTHING" } else { "DO UPDATE SET active = 0" };
    let insert = stmt(
        db,
        &format!(
            "INSERT INTO quotes (post_id, quote_id, quoter_id, created_at, active) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (post_id, quote_id) {upsert}"
        ),
        &row,
    )?;
    let statements = if quote.active {
        vec![notifications::on_quote(db, quote)?, insert]
    } else {
        vec![insert, notifications::off_quote(db, quote)?]
    };
    let results = batch(db, statements).await?;
    Ok(if quote.active { notifications::notice(results.first(), quote.now) } else { None })
}

#[derive(Deserialize)]
struct QuoteIdRow {
    quote_id: PostId,
}

/// The live quotes of `post`, newest first, strictly below the quote id `before`.
pub async fn page(
    db: PostDb<'_>,
    post: PostId,
    before: Option<PostId>,
    limit: usize,
) -> StoreResult<Vec<PostId>> {
    let rows: Vec<QuoteIdRow> = all(
        db,
        "SELECT quote_id FROM quotes WHERE post_id = ?1 AND active = 1 AND quote_id < ?2 \
         ORDER BY quote_id DESC LIMIT ?3",
        &[int(post), int(before.map_or(i64::MAX, PostId::get)), int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.quote_id).collect())
}
