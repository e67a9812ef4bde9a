//! The feed's pull path: a merge of the followed authors' author-index ranges by the feed's
//! sort key, done by D1. It serves readers without a window, group feeds, and everything below
//! a window's floor, and it is the snapshot a new window is built from.

use crate::store::{SqlResult, SqlStatement};
use wasm_bindgen::JsValue;

use serde::Deserialize;

use super::posts::{feed_columns, post_columns};
use super::shards::Shards;
use super::StoreResult;
use super::{all, first, id_list, int, stmt, text, AnyDb, Count, UserDb};
use crate::domain::ids::{ListId, UserId};
use crate::domain::plan::{InFlight, ReaderEdge};
use crate::domain::read::{Slab, SlabRows};
use crate::domain::tags::FollowedTags;
use crate::domain::window::Entry;

use crate::domain::plan::Bounds;

/// `extra`: more conditions (`AND ...`) of the select's own tables.
fn scope_sql(extra: &str) -> String {
    // ?1 viewer, ?2/?3 upper key, ?4 slab start, ?5 limit, ?6/?7 lower key, ?8 the authors.
    // Every numbered parameter must appear in the SQL (D1 checks the binding count).
    format!(
        "WHERE p.author_id IN (SELECT value FROM json_each(?8)) AND p.deleted_at IS NULL \
           AND p.taken_down_at IS NULL {extra} \
           AND (p.author_id = ?1 OR p.visibility <> 'private') \
           AND (p.created_at, p.id) < (?2, ?3) AND p.created_at >= ?4 AND (p.created_at, p.id) > (?6, ?7) \
         ORDER BY p.created_at DESC, p.id DESC LIMIT ?5"
    )
}

/// One time slab of a full pull (`domain::read` widens through them, one per step): the
/// slab's authors' posts in `(lower, upper)` from its start, newest first, at most its limit.
/// Feed rows carry the viewer's relationship to their author, so a pull needs no step after its
/// slabs.
pub fn slab_statement(db: AnyDb<'_>, viewer: UserId, slab: &Slab) -> StoreResult<SqlStatement> {
    // Posts of suspended authors are left out here rather than filtered after (which would
    // spend the page's scan budget on them); window entries keep them, for reinstatement.
    // The slab's keys are chosen and sorted first, so the row's columns (bodies, the viewer's
    // like and relationship) are read for the rows returned only, not for every post the
    // sort goes through.
    let sql = match slab.rows {
        SlabRows::Posts => format!(
            "{} FROM (SELECT p.id FROM posts p JOIN users u ON u.id = p.author_id {}) s \
             JOIN posts p ON p.id = s.id JOIN users u ON u.id = p.author_id \
             ORDER BY p.created_at DESC, p.id DESC",
            post_columns(),
            scope_sql(SHOWN_AUTHOR)
        ),
        SlabRows::Entries => format!(
            "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p {}",
            scope_sql("")
        ),
    };
    let params: Vec<JsValue> = vec![
        int(viewer),
        int(slab.upper.primary),
        int(slab.upper.id),
        int(slab.start),
        int(slab.limit as i64),
        int(slab.lower.primary),
        int(slab.lower.id),
        text(&id_list(&slab.authors)),
    ];
    stmt(db, &sql, &params)
}

/// The reader's edges as the reader's side stores them (whom they follow, each edge's mode
/// and group, and whether the author counts in `list`, one of the reader's lists: it lives
/// beside the follows), and for each whether a follow backfill into the reader's window is
/// unfinished (that event is the reader's: it commits with the follow). One statement on the
/// reader's database, in the read's first wave beside the window. A followed author the reader
/// mutes now (`mutes`, beside the follows) is left out: the read neither pulls their posts nor
/// counts them followed, so window entries of theirs are hidden as unfollowed, at once.
pub fn edges_statement(
    db: UserDb<'_>,
    viewer: UserId,
    list: Option<ListId>,
    tags: bool,
) -> StoreResult<SqlStatement> {
    // With `tags` (the home feed), the same statement also reads the tags the reader follows
    // and, only if there are any, whom they mute: the rows a followed tag admits are checked
    // against both (`domain/tags.rs::FollowedTags`) at no extra statement or round trip.
    let sql = format!(
        "SELECT 0 AS kind, f.author_id, f.push, f.pull, f.group_name, \
           EXISTS (SELECT 1 FROM list_accounts la WHERE la.list_id = ?2 AND {}) AS in_list, \
           EXISTS (SELECT 1 FROM outbox o WHERE o.author_id = f.author_id AND o.kind = 'backfill' \
             AND o.state <> 'done' AND o.reader_id = ?1) AS backfilling, NULL AS tag_key, NULL AS since \
         FROM follows f WHERE f.follower_id = ?1 AND NOT {} \
         UNION ALL SELECT 1, NULL, 0, 0, NULL, 0, 0, t.tag_key, t.created_at \
           FROM followed_tags t WHERE ?3 = 1 AND t.user_id = ?1 \
         UNION ALL SELECT 2, m.muted_id, 0, 0, NULL, 0, 0, NULL, NULL FROM mutes m \
           WHERE ?3 = 1 AND {} AND EXISTS (SELECT 1 FROM followed_tags t WHERE t.user_id = ?1)",
        super::lists::MEMBER,
        super::mutes::muted_sql("?1", "f.author_id", false),
        super::mutes::standing_sql("?1")
    );
    // No list: an id no list has (ids are positive).
    let list = list.map_or(0, ListId::get);
    stmt(db, &sql, &[int(viewer), int(list), int(i64::from(tags))])
}

/// The edges [`edges_statement`] read, and the tags the reader follows (with whom they mute).
pub fn edges_of(result: &SqlResult) -> StoreResult<(Vec<ReaderEdge>, FollowedTags)> {
    #[derive(Deserialize)]
    struct Row {
        kind: i64,
        author_id: Option<UserId>,
        push: i64,
        pull: i64,
        group_name: Option<String>,
        in_list: i64,
        backfilling: i64,
        tag_key: Option<String>,
        since: Option<i64>,
    }
    let rows: Vec<Row> = result.results()?;
    let (mut edges, mut tags, mut muted) = (Vec::new(), Vec::new(), Vec::new());
    for r in rows {
        match (r.kind, r.author_id, r.tag_key) {
            (0, Some(author), _) => edges.push(ReaderEdge {
                author,
                push: r.push != 0,
                pull: r.pull != 0,
                group: r.group_name,
                in_list: r.in_list != 0,
                backfilling: r.backfilling != 0,
            }),
            (1, _, Some(key)) => tags.push((key, r.since.unwrap_or(0))),
            (2, Some(author), _) => muted.push(author),
            _ => {}
        }
    }
    Ok((edges, FollowedTags::new(tags, muted)))
}

/// Post reads leave out suspended authors (`u`, the post's author, is joined).
const SHOWN_AUTHOR: &str = "AND u.suspended_at IS NULL";

/// The in-flight horizon of one pushed author (`author`, an SQL expression): the time from
/// which the author's posts may be missing from the viewer's window because their fan-out
/// has not finished, capped at `since` (the young-post cushion).
///
/// Why merging every post of the author at or above this horizon from D1 makes a read exact
/// (nothing a pushed reader may see is skipped, however late the fan-out): a post P of a
/// pushed author A, above the window's floor, is either in the window or its delivery to this
/// reader has not happened. A delivery happens inside P's `post` event, which is committed
/// atomically with P (or with the edit / restore / import that made P deliverable) on A's
/// database and is marked `done` only after its last chunk's window writes returned
/// (`domain/fanout_plan.rs`, invariant 2). So while P can be missing, an outbox
/// row of A with `state <> 'done'` and `post_created_at = P.created_at` exists (pending,
/// retrying, dead or held: none of them is finished), and the horizon is at or below P. The
/// other way a pushed author's posts reach a window is the follow backfill: while that event
/// for (viewer, A) is unfinished (read with the reader's edges, on the reader's database:
/// [`edges_statement`]), all of A's posts may be missing, so the plan drops the horizon to the
/// bottom (`domain::plan::BOTTOM_TIME`). Edges switching from pull keep `pull = 1` until their
/// backfill is written (pulled), new windows are built from a snapshot taken after the reader
/// is activated, and posts below the floor are served by the pull below it. Read in the same
/// statement as the posts, so it is exactly as current as they are: no cache, no extra round
/// trip, no write on the read path. Cost: one probe of the partial index
/// `outbox_unfinished_by_author` (unfinished events only: empty when the pipeline is healthy)
/// per pushed author.
fn in_flight_horizon(author: &str, since: &str) -> String {
    format!(
        "MIN({since}, COALESCE((SELECT MIN(o.post_created_at) FROM outbox o \
           WHERE o.author_id = {author} AND o.state <> 'done' AND o.kind = 'post'), {since}))"
    )
}

/// Each of `authors` (rows of `author_id`, `since`)'s top `?6` posts at or above that author's
/// `since` in the bounds: one index range per author, cut at the page inside the subquery, so
/// the cost is bounded by the page (`?6` per author) and never by how old the backlog is.
fn top_posts_sql(authors: &str) -> String {
    let columns = feed_columns();
    format!(
        "{columns} FROM ({authors}) a \
           JOIN posts p ON p.id IN ( \
             SELECT q.id FROM posts q WHERE q.author_id = a.author_id AND q.created_at >= a.since \
               AND q.deleted_at IS NULL AND q.taken_down_at IS NULL \
               AND (q.author_id = ?1 OR q.visibility <> 'private') \
               AND (q.created_at, q.id) < (?2, ?3) AND (q.created_at, q.id) > (?4, ?5) \
             ORDER BY q.created_at DESC, q.id DESC LIMIT ?6) \
           JOIN users u ON u.id = p.author_id \
         WHERE 1 = 1 {SHOWN_AUTHOR} ORDER BY p.created_at DESC, p.id DESC LIMIT ?6"
    )
}

fn bound_params(viewer: UserId, bounds: Bounds) -> Vec<JsValue> {
    vec![
        int(viewer),
        int(bounds.before.primary),
        int(bounds.before.id),
        int(bounds.after.primary),
        int(bounds.after.id),
        int(bounds.limit as i64),
    ]
}

/// Pulled authors beside a window (all on this database): each one's top `limit` posts in
/// the bounds, merged, newest first. Rows without the viewer's relationship (read once per
/// author: [`super::posts::relationships`]).
pub fn pulled_statement(
    db: AnyDb<'_>,
    viewer: UserId,
    authors: &[UserId],
    bounds: Bounds,
) -> StoreResult<SqlStatement> {
    let sql = top_posts_sql("SELECT value AS author_id, -1 AS since FROM json_each(?7)");
    let mut params = bound_params(viewer, bounds);
    params.push(text(&id_list(authors)));
    stmt(db, &sql, &params)
}

/// Posts that may still be on their way to the window (all authors on this database): each
/// author's posts from its `since`, or from its oldest unfinished post event when that is
/// older ([`in_flight_horizon`]), top `limit` each, merged.
pub fn in_flight_statement(
    db: AnyDb<'_>,
    viewer: UserId,
    reads: &[InFlight],
    bounds: Bounds,
) -> StoreResult<SqlStatement> {
    // [[author, since, horizon], ...] in one parameter.
    let items: Vec<String> = reads
        .iter()
        .map(|r| format!("[{},{},{}]", r.author.get(), r.since, u8::from(r.outbox_horizon)))
        .collect();
    let horizon = in_flight_horizon("e.author_id", "e.since");
    let authors = format!(
        "SELECT e.author_id, CASE WHEN e.horizon = 1 THEN {horizon} ELSE e.since END AS since FROM ( \
           SELECT json_extract(j.value, '$[0]') AS author_id, json_extract(j.value, '$[1]') AS since, \
             json_extract(j.value, '$[2]') AS horizon FROM json_each(?7) j) e"
    );
    let mut params = bound_params(viewer, bounds);
    params.push(text(&format!("[{}]", items.join(","))));
    stmt(db, &top_posts_sql(&authors), &params)
}

/// Marks the reader's window as live so fan-out starts delivering to it. Must happen before
/// the window's snapshot is read: a post committed after this is delivered, one committed
/// before is in the snapshot (or both, which the window dedups).
pub fn activate_statement(db: UserDb<'_>, reader: UserId, now: i64) -> StoreResult<SqlStatement> {
    const ACTIVATE: &str = "UPDATE users SET feed_active_at = ?2 WHERE id = ?1 AND feed_active_at IS NULL";
    stmt(db, ACTIVATE, &[int(reader), int(now)])
}

pub async fn is_active_reader(db: UserDb<'_>, reader: UserId) -> StoreResult<bool> {
    let row: Option<Count> = first(
        db,
        "SELECT COUNT(*) AS n FROM users WHERE id = ?1 AND feed_active_at IS NOT NULL",
        &[int(reader)],
    )
    .await?;
    Ok(row.is_some_and(|c| c.n > 0))
}

/// The newest posts of some followed authors the reader may see, for the window of a reader
/// whose edges to them switch from pull to push: each author's posts on their home, with the
/// follow as the author's side has it (the mirror a switch requires), all databases at once,
/// merged newest first.
pub async fn authors_entries(
    shards: &Shards,
    reader: UserId,
    authors: &[UserId],
    limit: usize,
) -> StoreResult<Vec<Entry>> {
    let found = shards
        .across(shards.users_by_database(authors.iter().copied()), |db, authors| async move {
            let mut entries = Vec::new();
            // 2 fixed parameters, at most 100 a statement.
            for chunk in authors.chunks(90) {
                let list: Vec<String> = (0..chunk.len()).map(|i| format!("?{}", i + 3)).collect();
                let sql = format!(
                    "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p \
                     WHERE p.author_id IN ({}) AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
                       AND p.visibility <> 'private' \
                       AND EXISTS (SELECT 1 FROM followers f WHERE f.author_id = p.author_id AND f.follower_id = ?1) \
                     ORDER BY p.created_at DESC, p.id DESC LIMIT ?2",
                    list.join(", ")
                );
                let mut params = vec![int(reader), int(limit as i64)];
                params.extend(chunk.iter().map(|a| int(*a)));
                entries.extend(all::<Entry>(db, &sql, &params).await?);
            }
            Ok(entries)
        })
        .await?;
    let mut entries: Vec<Entry> = found.into_iter().flatten().collect();
    entries.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.post_id)));
    entries.truncate(limit);
    Ok(entries)
}

/// An author's newest posts a new follower may see, for backfilling the follower's window: on
/// the author's database, with the follow as the author's side has it (the backfill converges
/// the mirror first).
pub async fn backfill_entries(
    db_of_author: UserDb<'_>,
    reader: UserId,
    author: UserId,
    limit: usize,
) -> StoreResult<Vec<Entry>> {
    all(
        db_of_author,
        "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p \
         WHERE p.author_id = ?2 AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
           AND p.visibility <> 'private' \
           AND EXISTS (SELECT 1 FROM followers WHERE author_id = ?2 AND follower_id = ?1) \
         ORDER BY p.created_at DESC, p.id DESC LIMIT ?3",
        &[int(reader), int(author), int(limit as i64)],
    )
    .await
}

/// An author's newest posts strictly below `below` (ms), in any state but deleted: a hot range
/// shared by many readers, so visibility is left to each reader's hydration. A statement, to
/// join the batch of the read that found it missing from the cache.
pub fn hot_range(db: AnyDb<'_>, author: UserId, below: i64, limit: usize) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "SELECT p.created_at, p.id AS post_id, p.author_id, p.state_version AS version FROM posts p \
         WHERE p.author_id = ?1 AND p.created_at < ?2 AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
         ORDER BY p.created_at DESC, p.id DESC LIMIT ?3",
        &[int(author), int(below), int(limit as i64)],
    )
}

/// Which of `authors` (pulled authors of one reader, all on this database) have at least
/// `min_followers` followers and are not suspended (rows of `id`, most followed first): whose
/// recent ranges the reader takes from the hot-range cache. The follower count lives on the
/// author's row, so each database answers for its own authors.
pub fn hot_authors_among(db: AnyDb<'_>, authors: &[UserId], min_followers: i64) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "SELECT u.id, u.followers_count AS n FROM users u WHERE u.id IN (SELECT value FROM json_each(?1)) \
           AND u.followers_count >= ?2 AND u.suspended_at IS NULL ORDER BY u.followers_count DESC LIMIT 32",
        &[text(&id_list(authors)), int(min_followers)],
    )
}
