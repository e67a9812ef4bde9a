//! The hybrid fan-out's D1 side: authors' posting rates, readers' reported activity, and the
//! mode of each follow edge, kept on both copies of the edge (migrations 0005, 0010): the
//! follower side's `follows.pull` is what feed reads pull, the author side's `followers.push`
//! is what fan-out writes to. `services/policy.rs` moves them in the order that keeps every edge
//! pushed or pulled (or both) at every moment. Every statement touches one side: the author's
//! (`followers`, the author's users row) or the reader's (`follows`, the reader's users row).

use crate::store::SqlStatement;
use serde::Deserialize;

use super::shards::Shards;
use super::StoreResult;
use super::{all, exec, first, id_list, int, run, stmt, text, AnyDb, UserDb};
use crate::domain::activity::ActivityReport;
use crate::domain::ids::UserId;
use crate::domain::policy::{CopiedFacts, EdgeMode, Rate, DAY_MS, RATE_TAU_DAYS};

/// Brings the author's posting rate up to date with one post made at `created_at` (an import
/// carries its own, older time and counts for less), for the publish batch. Same formula as
/// `Rate::with_event`, in SQL so it costs no extra round trip.
pub fn count_post(db: UserDb<'_>, author: UserId, created_at: i64, now: i64) -> StoreResult<SqlStatement> {
    let tau_ms = RATE_TAU_DAYS * DAY_MS as f64;
    stmt(
        db,
        "UPDATE users SET \
           post_rate = post_rate * exp(-MAX(?3 - post_rate_at, 0) / ?4) + exp(-MAX(?3 - ?2, 0) / ?4) / ?5, \
           post_rate_at = MAX(post_rate_at, ?3) \
         WHERE id = ?1",
        &[int(author), int(created_at), int(now), tau_ms.into(), RATE_TAU_DAYS.into()],
    )
}

/// Records what a reader's window object reported, on the reader's own row.
pub async fn record_activity(
    db_of_reader: UserDb<'_>,
    reader: UserId,
    report: &ActivityReport,
) -> StoreResult<()> {
    exec(
        db_of_reader,
        "UPDATE users SET read_rate = ?2, last_read_at = MAX(COALESCE(last_read_at, 0), ?3) WHERE id = ?1",
        &[int(reader), report.read_rate.into(), int(report.last_read_at)],
    )
    .await
}

/// Copies a reader's reported facts onto their author-side edges (`followers` rows of
/// `authors`, on the authors' side), where the authors' policy selects and ranks readers
/// without reading their rows. The caller passes only the authors whose comparisons the new
/// report flips (`Policy::copy_due`); of those, only rows whose facts really move are written.
/// A report comes from the reader's window, so the reader has one. Returns the rows written.
pub async fn copy_reader_facts(
    shards: &Shards,
    reader: UserId,
    authors: &[UserId],
    report: &ActivityReport,
) -> StoreResult<usize> {
    let written = shards
        .across(shards.users_by_database(authors.iter().copied()), |db, authors| async move {
            let mut written = 0;
            for chunk in authors.chunks(500) {
                let list = id_list(chunk);
                written += run(
                    db,
                    "UPDATE followers SET read_rate = ?2, last_read_at = MAX(COALESCE(last_read_at, 0), ?3), \
                       reader_active = 1 \
                     WHERE follower_id = ?1 AND author_id IN (SELECT value FROM json_each(?4)) \
                       AND (read_rate <> ?2 OR COALESCE(last_read_at, 0) < ?3 OR reader_active = 0)",
                    &[int(reader), report.read_rate.into(), int(report.last_read_at), text(&list)],
                )
                .await?;
            }
            Ok(written)
        })
        .await?;
    Ok(written.into_iter().sum())
}

/// The reader's facts as copied on their edges to `authors` (author side, each on its
/// author's home): `(author, copy)`; an edge whose mirror is not applied yet is absent.
pub async fn copied_facts(
    shards: &Shards,
    reader: UserId,
    authors: &[UserId],
) -> StoreResult<Vec<(UserId, CopiedFacts)>> {
    #[derive(Deserialize)]
    struct Row {
        author_id: UserId,
        read_rate: f64,
        last_read_at: Option<i64>,
        reader_active: i64,
    }
    let found = shards
        .across(shards.users_by_database(authors.iter().copied()), |db, authors| async move {
            let list = id_list(&authors);
            all::<Row>(
                db,
                "SELECT author_id, read_rate, last_read_at, reader_active FROM followers \
                 WHERE follower_id = ?1 AND author_id IN (SELECT value FROM json_each(?2))",
                &[int(reader), text(&list)],
            )
            .await
        })
        .await?;
    let copy = |r: Row| {
        let facts = CopiedFacts {
            read_rate: r.read_rate,
            last_read_at: r.last_read_at,
            reader_active: r.reader_active != 0,
        };
        (r.author_id, facts)
    };
    Ok(found.into_iter().flatten().map(copy).collect())
}

/// Readers' own facts (their users rows, each on its home), for decisions made from an
/// author's side: the copies there are only kept on the right side of the author's cuts.
#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize)]
pub struct ReaderFacts {
    pub id: UserId,
    read_rate: f64,
    last_read_at: Option<i64>,
    has_window: i64,
}

pub async fn readers_facts(shards: &Shards, readers: &[UserId]) -> StoreResult<Vec<ReaderFacts>> {
    let found = shards
        .across(shards.users_by_database(readers.iter().copied()), |db, readers| async move {
            all::<ReaderFacts>(
                db,
                "SELECT id, read_rate, last_read_at, feed_active_at IS NOT NULL AS has_window FROM users \
                 WHERE id IN (SELECT value FROM json_each(?1))",
                &[text(&id_list(&readers))],
            )
            .await
        })
        .await?;
    Ok(found.into_iter().flatten().collect())
}

/// An author as the policy sees them.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct AuthorFacts {
    pub author_id: UserId,
    post_rate: f64,
    post_rate_at: i64,
    /// The rate the author's edges were last decided with.
    pub post_rate_modes: f64,
    pub followers_count: i64,
    pub push_min_read_rate: f64,
}

impl AuthorFacts {
    pub fn post_rate(&self) -> Rate {
        Rate { per_day: self.post_rate, at: self.post_rate_at }
    }
}

/// A follow edge with what its mode depends on, from either end.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct EdgeRow {
    pub author_id: UserId,
    pub follower_id: UserId,
    push: i64,
    pull: i64,
    read_rate: f64,
    pub last_read_at: Option<i64>,
    has_window: i64,
}

impl EdgeRow {
    /// The mode the edge is in; a switch in progress counts as pull (it is not done).
    pub fn mode(&self) -> EdgeMode {
        if self.push == 1 && self.pull == 0 {
            EdgeMode::Push
        } else {
            EdgeMode::Pull
        }
    }

    pub fn is_switching(&self) -> bool {
        self.push == 1 && self.pull == 1
    }

    pub fn has_window(&self) -> bool {
        self.has_window != 0
    }

    pub fn read_rate(&self) -> Rate {
        Rate { per_day: self.read_rate, at: self.last_read_at.unwrap_or(0) }
    }

    /// The rate as reported (not decayed to now): what the author's cap ranks readers by.
    pub fn reported_read_rate(&self) -> f64 {
        self.read_rate
    }

    /// The edge with the reader's facts taken from their own row instead of the copy.
    pub fn with_reader(self, reader: &ReaderFacts) -> Self {
        Self {
            read_rate: reader.read_rate,
            last_read_at: reader.last_read_at,
            has_window: reader.has_window,
            ..self
        }
    }
}

const AUTHOR_FACTS: &str =
    "SELECT id AS author_id, post_rate, post_rate_at, post_rate_modes, followers_count, \
     push_min_read_rate FROM users";

pub async fn author_facts(db_of_author: UserDb<'_>, author: UserId) -> StoreResult<Option<AuthorFacts>> {
    first(db_of_author, &format!("{AUTHOR_FACTS} WHERE id = ?1"), &[int(author)]).await
}

/// Every author the reader follows, from the reader's side (their `follows` and their own row:
/// the same side), and those authors' facts (their own rows).
pub async fn reader_edges(shards: &Shards, reader: UserId) -> StoreResult<(Vec<EdgeRow>, Vec<AuthorFacts>)> {
    let edges: Vec<EdgeRow> = all(
        shards.user(reader),
        "SELECT f.author_id, f.follower_id, f.push, f.pull, r.read_rate, r.last_read_at, \
           r.feed_active_at IS NOT NULL AS has_window \
         FROM follows f JOIN users r ON r.id = f.follower_id WHERE f.follower_id = ?1",
        &[int(reader)],
    )
    .await?;
    let sql = format!("{AUTHOR_FACTS} WHERE id IN (SELECT value FROM json_each(?1))");
    let sql = &sql;
    let groups = shards.users_by_database(edges.iter().map(|e| e.author_id));
    let authors = shards
        .across(groups, |db, ids| async move { all::<AuthorFacts>(db, sql, &[text(&id_list(&ids))]).await })
        .await?;
    Ok((edges, authors.into_iter().flatten().collect()))
}

/// The author-side columns of an [`EdgeRow`]: the reader's facts are the copies on the edge.
const AUTHOR_EDGE_COLUMNS: &str =
    "author_id, follower_id, push, pull, read_rate, last_read_at, reader_active AS has_window";

/// A page of an author's pushed (or switching) edges, in follower order after `after`, from
/// the author's side (index `followers_push`).
pub async fn pushed_edges(
    db_of_author: UserDb<'_>,
    author: UserId,
    after: i64,
    limit: usize,
) -> StoreResult<Vec<EdgeRow>> {
    all(
        db_of_author,
        &format!(
            "SELECT {AUTHOR_EDGE_COLUMNS} FROM followers \
             WHERE author_id = ?1 AND push = 1 AND follower_id > ?2 ORDER BY follower_id LIMIT ?3"
        ),
        &[int(author), int(after), int(limit as i64)],
    )
    .await
}

/// A page of an author's pulled edges whose reader (with a window) reported a read rate of at
/// least `cut`, from the highest rate down after `(rate, follower)`, from the author's side
/// (index `followers_by_rate`, whose entries end with the follower id: the order is exact).
pub async fn push_candidates(
    db_of_author: UserDb<'_>,
    author: UserId,
    cut: f64,
    (rate, after): (f64, i64),
    limit: usize,
) -> StoreResult<Vec<EdgeRow>> {
    all(
        db_of_author,
        &format!(
            "SELECT {AUTHOR_EDGE_COLUMNS} FROM followers INDEXED BY followers_by_rate \
             WHERE author_id = ?1 AND reader_active = 1 AND read_rate >= ?2 \
               AND (read_rate < ?3 OR (read_rate = ?3 AND follower_id > ?4)) \
             ORDER BY read_rate DESC, follower_id LIMIT ?5"
        ),
        &[int(author), cut.into(), rate.into(), int(after), int(limit as i64)],
    )
    .await
}

/// For an author over the cap: the read rate of the `cap`-th most active reader (active since
/// `active_since`, with a window), or 0 when fewer readers than that are active. From the
/// author's side: the readers' facts copied on the edges, walked down the partial index
/// `followers_by_rate` from the top, so the cost is about `cap` rows (plus the inactive readers
/// ranked above the cut), never the follower count.
pub async fn cap_threshold(
    db_of_author: UserDb<'_>,
    author: UserId,
    cap: usize,
    active_since: i64,
) -> StoreResult<f64> {
    #[derive(Deserialize)]
    struct Row {
        read_rate: f64,
    }
    let row: Option<Row> = first(
        db_of_author,
        "SELECT read_rate FROM followers INDEXED BY followers_by_rate \
         WHERE author_id = ?1 AND reader_active = 1 AND last_read_at >= ?2 \
         ORDER BY read_rate DESC LIMIT 1 OFFSET ?3",
        &[int(author), int(active_since), int(cap.saturating_sub(1) as i64)],
    )
    .await?;
    Ok(row.map_or(0.0, |r| r.read_rate))
}

/// Remembers what the author's edges were decided with.
pub async fn record_author_decision(
    db: UserDb<'_>,
    author: &AuthorFacts,
    threshold: f64,
    now: i64,
) -> StoreResult<()> {
    exec(
        db,
        "UPDATE users SET post_rate_modes = ?2, push_min_read_rate = ?3 WHERE id = ?1",
        &[int(author.author_id), author.post_rate().at(now).into(), threshold.into()],
    )
    .await
}

/// Which flags an edge in a given phase carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// push = 0, pull = 1.
    Pull,
    /// push = 1, pull = 1: fan-out pushes, reads still pull, until the backfill is written.
    Switching,
    /// push = 1, pull = 0 (only from `Switching`, so a switch is never skipped).
    Push,
}

impl Phase {
    fn set_clause(self) -> (&'static str, &'static str) {
        match self {
            Phase::Pull => ("SET push = 0, pull = 1", ""),
            Phase::Switching => ("SET push = 1, pull = 1", ""),
            Phase::Push => ("SET push = 1, pull = 0", " AND push = 1"),
        }
    }
}

/// Moves the follower-side copies of edges `(follower, author)` into `phase` (what feed reads
/// pull). Returns the edges changed.
pub async fn set_reader_phase(
    shards: &Shards,
    edges: &[(UserId, UserId)],
    phase: Phase,
) -> StoreResult<Vec<(UserId, UserId)>> {
    let groups = shards.by_home(edges.iter().copied(), |(reader, _)| *reader);
    set_phase_on(shards, groups, "follows", phase).await
}

/// Author side (what fan-out reads): sets the phase on the `followers` copies of `edges`
/// (`(follower, author)` pairs, each on its author's home); the edges it changed.
pub async fn set_author_phase(
    shards: &Shards,
    edges: &[(UserId, UserId)],
    phase: Phase,
) -> StoreResult<Vec<(UserId, UserId)>> {
    let groups = shards.by_home(edges.iter().copied(), |(_, author)| *author);
    set_phase_on(shards, groups, "followers", phase).await
}

async fn set_phase_on<'a>(
    shards: &'a Shards,
    groups: Vec<(AnyDb<'a>, Vec<(UserId, UserId)>)>,
    table: &'static str,
    phase: Phase,
) -> StoreResult<Vec<(UserId, UserId)>> {
    let changed = shards
        .across(groups, |db, edges| async move { set_side_phase(db, table, &edges, phase).await })
        .await?;
    Ok(changed.into_iter().flatten().collect())
}

async fn set_side_phase(
    db: AnyDb<'_>,
    table: &str,
    edges: &[(UserId, UserId)],
    phase: Phase,
) -> StoreResult<Vec<(UserId, UserId)>> {
    #[derive(Deserialize)]
    struct Changed {
        follower_id: UserId,
        author_id: UserId,
    }
    let (set, guard) = phase.set_clause();
    let mut changed = Vec::new();
    // 2 parameters an edge, at most 100 a statement.
    for chunk in edges.chunks(45) {
        let pairs: Vec<String> =
            (0..chunk.len()).map(|i| format!("(?{}, ?{})", 2 * i + 1, 2 * i + 2)).collect();
        let params: Vec<_> =
            chunk.iter().flat_map(|(follower, author)| [int(*follower), int(*author)]).collect();
        let statement = format!(
            "UPDATE {table} {set} WHERE (follower_id, author_id) IN (VALUES {}){guard} \
             RETURNING follower_id, author_id",
            pairs.join(", ")
        );
        let rows: Vec<Changed> = all(db, &statement, &params).await?;
        changed.extend(rows.into_iter().map(|r| (r.follower_id, r.author_id)));
    }
    Ok(changed)
}

/// A bounded slice of readers with a window, by id after `after`: `(reader, inactive with
/// pushed edges)`. From the readers' own side (their rows and their `follows`): the pushed-edge
/// probe runs only for readers inactive since `cutoff`. Readers from before activity was
/// reported fall back to when their window was made.
pub async fn reader_slice(
    db_of_readers: AnyDb<'_>,
    after: i64,
    cutoff: i64,
    limit: usize,
) -> StoreResult<Vec<(UserId, bool)>> {
    #[derive(Deserialize)]
    struct Row {
        id: UserId,
        sweep: i64,
    }
    let rows: Vec<Row> = all(
        db_of_readers,
        "SELECT u.id, CASE WHEN COALESCE(u.last_read_at, u.feed_active_at) < ?2 \
           THEN EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = u.id AND f.push = 1) ELSE 0 END AS sweep \
         FROM users u WHERE u.id > ?1 AND u.feed_active_at IS NOT NULL ORDER BY u.id LIMIT ?3",
        &[int(after), int(cutoff), int(limit as i64)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.sweep != 0)).collect())
}

/// The authors whose edge from `reader` is pushed on the reader's side (or switching).
pub async fn pushed_authors(db_of_reader: UserDb<'_>, reader: UserId) -> StoreResult<Vec<UserId>> {
    #[derive(Deserialize)]
    struct Row {
        author_id: UserId,
    }
    let rows: Vec<Row> = all(
        db_of_reader,
        "SELECT author_id FROM follows WHERE follower_id = ?1 AND push = 1",
        &[int(reader)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.author_id).collect())
}

/// Test hook: moves a reader's last read back by `days`, as if they had been away: their own
/// row, then the copies on their author-side edges (the authors listed from the reader's side).
pub async fn age_reader(shards: &Shards, reader: UserId, days: i64) -> StoreResult<()> {
    let ms = days * DAY_MS;
    let db = shards.user(reader);
    exec(
        db,
        "UPDATE users SET last_read_at = COALESCE(last_read_at, feed_active_at) - ?2, \
           feed_active_at = feed_active_at - ?2 WHERE id = ?1",
        &[int(reader), int(ms)],
    )
    .await?;
    #[derive(Deserialize)]
    struct Row {
        author_id: UserId,
    }
    let authors: Vec<Row> =
        all(db, "SELECT author_id FROM follows WHERE follower_id = ?1", &[int(reader)]).await?;
    let groups = shards.users_by_database(authors.into_iter().map(|a| a.author_id));
    shards
        .across(groups, |db, authors| async move {
            let list = id_list(&authors);
            exec(
                db,
                "UPDATE followers SET last_read_at = last_read_at - ?2 \
                 WHERE follower_id = ?1 AND author_id IN (SELECT value FROM json_each(?3))",
                &[int(reader), int(ms), text(&list)],
            )
            .await
        })
        .await?;
    Ok(())
}
