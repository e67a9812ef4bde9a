//! Polls (migration 0038), on their post's database: created in the publish batch, voted on
//! once per voter, counted by the trigger on `poll_voters` in the vote's own statement, and
//! told ended once by the cron.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::{all, batch, int, stmt, text, AnyDb, PostDb, StoreResult, UserDb};
use crate::domain::ids::{PostId, UserId};
use crate::domain::polls::{PollDraft, PollState};

/// The poll's row, in the publish batch of its post `id` (made at `created_at`).
pub fn insert_statement(
    db: UserDb<'_>,
    (id, author): (i64, UserId),
    poll: &PollDraft,
    created_at: i64,
) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "INSERT INTO polls (post_id, author_id, options, multiple, hide_totals, expires_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &[
            int(id),
            int(author),
            text(&poll.options_json()),
            int(i64::from(poll.multiple)),
            int(i64::from(poll.hide_totals)),
            int(created_at + poll.expires_in_secs * 1000),
        ],
    )
}

/// The poll as `store/posts.rs::feed_columns` reads it (a JSON object).
#[derive(Deserialize)]
struct Stored {
    options: Vec<String>,
    multiple: i64,
    hide_totals: i64,
    expires_at: i64,
    voters_count: i64,
    votes: Vec<i64>,
    /// The viewer's choices (`null`: no vote).
    #[serde(default)]
    own: Option<Vec<u8>>,
}

/// The stored JSON of a poll as its state and the viewer's choices (`None` if it is not one).
pub fn state_of(json: &str) -> Option<(PollState, Vec<u8>)> {
    let s: Stored = serde_json::from_str(json).ok()?;
    let votes = s.votes.into_iter().take(s.options.len()).collect();
    let state = PollState {
        options: s.options,
        multiple: s.multiple != 0,
        hide_totals: s.hide_totals != 0,
        expires_at: s.expires_at,
        voters_count: s.voters_count,
        votes,
    };
    Some((state, s.own.unwrap_or_default()))
}

/// What a vote came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vote {
    /// This request's vote counts.
    Counted,
    /// The voter had voted already (another request's row holds the vote).
    Already,
    /// The poll has ended (or is gone).
    Ended,
}

#[derive(Deserialize)]
struct VoterRow {
    nonce: String,
}

/// Votes `choices` (checked) for `voter`, once: `INSERT OR IGNORE` on the voter's key, while
/// the poll runs, in one statement whose trigger counts it. The one database applies statements
/// one at a time, so of any number of concurrent votes by one voter exactly one row is made and
/// counted, and votes by different voters each count once: the counts are exact. `nonce` tells
/// this request's row from an earlier one's, read back in the same batch.
pub async fn vote(
    db: PostDb<'_>,
    (post, voter): (PostId, UserId),
    choices: &[u8],
    nonce: &str,
    now: i64,
) -> StoreResult<Vote> {
    let choices = serde_json::to_string(choices).unwrap_or_else(|_| "[]".into());
    let insert = stmt(
        db,
        "INSERT OR IGNORE INTO poll_voters (post_id, user_id, choices, nonce, created_at) \
         SELECT post_id, ?2, ?3, ?4, ?5 FROM polls WHERE post_id = ?1 AND expires_at > ?5 AND author_id <> ?2",
        &[int(post), int(voter), text(&choices), text(nonce), int(now)],
    )?;
    let read = stmt(
        db,
        "SELECT nonce FROM poll_voters WHERE post_id = ?1 AND user_id = ?2",
        &[int(post), int(voter)],
    )?;
    let results = batch(db, vec![insert, read]).await?;
    let row: Option<VoterRow> =
        results.get(1).map(|r| r.results()).transpose()?.and_then(|r| r.into_iter().next());
    Ok(match row {
        Some(r) if r.nonce == nonce => Vote::Counted,
        Some(_) => Vote::Already,
        None => Vote::Ended,
    })
}

/// A poll that has ended and whose author and voters are not told yet.
#[derive(Debug, Deserialize)]
pub struct Ended {
    pub post_id: PostId,
    pub author_id: UserId,
}

/// Polls per pass told ended; the rest wait for the next pass (the cron runs every minute).
const ENDED_PER_PASS: i64 = 20;
/// Voters told per poll (a poll's voters past this many are not told: see docs/mastodon.md).
pub const VOTERS_TOLD: i64 = 500;

/// Ended polls on this database not yet told, oldest first.
pub async fn ended(db: AnyDb<'_>, now: i64) -> StoreResult<Vec<Ended>> {
    all(
        db,
        "SELECT post_id, author_id FROM polls WHERE notified_at IS NULL AND expires_at <= ?1 \
         ORDER BY expires_at LIMIT ?2",
        &[int(now), int(ENDED_PER_PASS)],
    )
    .await
}

#[derive(Deserialize)]
struct Voter {
    user_id: UserId,
}

/// A poll's voters (the first [`VOTERS_TOLD`]).
pub async fn voters(db: AnyDb<'_>, post: PostId) -> StoreResult<Vec<UserId>> {
    let rows: Vec<Voter> = all(
        db,
        "SELECT user_id FROM poll_voters WHERE post_id = ?1 ORDER BY user_id LIMIT ?2",
        &[int(post), int(VOTERS_TOLD)],
    )
    .await?;
    Ok(rows.into_iter().map(|v| v.user_id).collect())
}

/// On one database: the `poll` notifications of the ended poll `post` by `author` for those of
/// its recipients whose home it is, in one batch, each once (a repeat finds it made:
/// `store/notifications.rs`'s subject rule).
pub async fn notify_ended(
    db: AnyDb<'_>,
    recipients: &[UserId],
    (post, author): (PostId, UserId),
    now: i64,
) -> StoreResult<()> {
    let statements = recipients
        .iter()
        .map(|&r| super::notifications::on_poll_ended(db, r, (post, author), now))
        .collect::<StoreResult<Vec<_>>>()?;
    batch(db, statements).await.map(|_| ())
}

/// Marks the poll told, after every notification was made.
pub async fn mark_told(db: AnyDb<'_>, post: PostId, now: i64) -> StoreResult<()> {
    super::run(
        db,
        "UPDATE polls SET notified_at = ?2 WHERE post_id = ?1 AND notified_at IS NULL",
        &[int(post), int(now)],
    )
    .await
    .map(|_| ())
}
