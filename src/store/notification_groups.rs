//! Grouped notifications (Mastodon 4.3's `/api/v2/notifications`) on the recipient's home
//! database: the page walk that finds a page's groups, the aggregates of those groups, and a
//! group's dismiss. The groups are `domain/notifications.rs::GroupKey`s: a post's favourites in
//! one fixed 12-hour window, a window's follows, and every other notification alone.
//!
//! **The walk costs seeks per group, never a scan of a big group.** A walk over rows that skips
//! those of groups already seen (Mastodon's own query) reads every like of a viral post. Here
//! the walk goes by windows instead, newest first (oldest first for `min_id`): one seek finds
//! the next window that has a grouped kind, `notifications_by_group` (migration 0017) skips
//! from one of the window's posts to the next in one seek each, and one more seek per group
//! finds its newest (oldest) row in the range that a block does not hide. A window's posts are
//! few next to its likes; a deleted or taken-down post is checked once per group, not per row.
//! Ungrouped notifications are rows, read in id order as `/v1` reads them.
//!
//! At most `limit` windows per kind are walked (each shown window is at least one group). When
//! that stops a kind's walk early, the answer includes an edge row: the range is only complete
//! down to (up to) the edge, so the caller cuts the page there and goes on from it.

use serde::Deserialize;

use super::notifications::{
    expanded_edge_sql, expanded_sql, shown_sql, window_likes_sql, Expanded, COLUMNS, DISMISSED,
};
use super::users::not_blocked_between;
use super::StoreResult;
use super::{all, batch, int, stmt, text, UserDb};
use crate::domain::ids::{UserId, MAX_ID};
use crate::domain::notifications::{GroupKey, GroupQuery, Kind, KindFilter, GROUP_COUNT_CAP, SAMPLE_SCAN};

/// The window of a notification id, spelled as `notifications_by_group` indexes it.
const WINDOW: &str = "((x.id >> 11) / 43200000)";

/// What a row of the walk is.
pub const ROLE_UNGROUPED: i64 = 0;
pub const ROLE_GROUPED: i64 = 1;
/// Not a notification: `id` is the edge down to (oldest first: up to) which the walk is complete.
pub const ROLE_EDGE: i64 = 2;

/// A row of the walk: a group's representative (its newest row in the range; oldest first,
/// its oldest), or the edge.
#[derive(Debug, Clone, Deserialize)]
pub struct WalkRow {
    pub id: i64,
    pub kind: String,
    pub actor_id: UserId,
    pub post_id: i64,
    pub comment_id: i64,
    pub role: i64,
}

/// The SQL pieces that differ between the two directions of a walk.
struct Direction {
    order: &'static str,
    /// The range past a window `gb.b`, towards the walk's end, as one bound on each side (with
    /// the window as a filter instead, SQLite would step over the window's rows to leave it).
    past_window: &'static str,
    /// The edge of a walk stopped early, from its last window `b` (over every stopped kind).
    edge: &'static str,
    /// How a group's representative from its rows loses to the one from its likes (ids).
    beats: &'static str,
}

const NEWEST_FIRST: Direction = Direction {
    order: "DESC",
    past_window: "x.id < MIN(?3, (gb.b * 43200000) << 11) AND x.id > ?4",
    edge: "(MAX(b) * 43200000) << 11",
    beats: "<",
};
const OLDEST_FIRST: Direction = Direction {
    order: "ASC",
    past_window: "x.id > MAX(?4, (((gb.b + 1) * 43200000) << 11) - 1) AND x.id < ?3",
    edge: "(((MIN(b) + 1) * 43200000) << 11) - 1",
    beats: ">",
};

/// `?1` recipient, `?2` ungrouped kinds (JSON), `?3` / `?4` the exclusive upper / lower id
/// bounds, `?5` how many rows, `?6` the grouped kinds (JSON).
fn walk_sql(d: &Direction, ungrouped: &KindFilter) -> String {
    let order = d.order;
    let ungrouped = ungrouped_sql(ungrouped, order);
    let in_range = "x.recipient_id = ?1 AND x.filtered = 0 AND x.id < ?3 AND x.id > ?4";
    let past = d.past_window;
    let edge = d.edge;
    format!(
        "WITH RECURSIVE \
         gb(kind, b, n) AS ( \
           SELECT k.value, (SELECT x.id >> 11 FROM notifications x WHERE {in_range} AND x.kind = k.value \
             ORDER BY x.id {order} LIMIT 1) / 43200000, 1 FROM json_each(?6) k \
           UNION ALL \
           SELECT gb.kind, (SELECT x.id >> 11 FROM notifications x WHERE x.recipient_id = ?1 \
             AND x.kind = gb.kind AND {past} ORDER BY x.id {order} LIMIT 1) / 43200000, gb.n + 1 \
           FROM gb WHERE gb.b IS NOT NULL AND gb.n < ?5), \
         gp(kind, b, p) AS ( \
           SELECT gb.kind, gb.b, (SELECT MIN(x.post_id) FROM notifications x WHERE x.recipient_id = ?1 \
             AND x.kind = gb.kind AND {WINDOW} = gb.b) FROM gb WHERE gb.b IS NOT NULL \
           UNION ALL \
           SELECT gp.kind, gp.b, (SELECT MIN(x.post_id) FROM notifications x WHERE x.recipient_id = ?1 \
             AND x.kind = gp.kind AND {WINDOW} = gp.b AND x.post_id > gp.p) FROM gp WHERE gp.p IS NOT NULL), \
         {reps} \
         edge(id) AS (SELECT {edge} FROM gb WHERE gb.n = ?5 AND gb.b IS NOT NULL \
           UNION ALL SELECT {expanded_edge}) \
         SELECT * FROM ( \
           SELECT id, kind, actor_id, post_id, comment_id, {ROLE_GROUPED} AS role FROM reps \
           {ungrouped} \
           ORDER BY 1 {order} LIMIT ?5) \
         UNION ALL \
         SELECT id, '', 0, 0, 0, {ROLE_EDGE} FROM edge WHERE id IS NOT NULL",
        reps = reps_sql(d),
        expanded_edge = expanded_edge_sql("?2", "?3", "?4", d.order == "ASC", "?5"),
    )
}

/// The walk's `reps`: each group's representative, the newest (oldest first: oldest) of its
/// rows and of its likes (a group row's, migration 0048), in range and not hidden by a block.
fn reps_sql(d: &Direction) -> String {
    let (in_range, order) = ("x.recipient_id = ?1 AND x.filtered = 0 AND x.id < ?3 AND x.id > ?4", d.order);
    format!(
        "cand(kind, p, rid, lj) AS ( \
           SELECT gp.kind, gp.p, (SELECT x.id FROM notifications x INDEXED BY notifications_by_group WHERE {in_range} \
             AND x.kind = gp.kind AND {WINDOW} = gp.b AND x.post_id = gp.p AND x.actor_id <> 0 AND {not_blocked} \
             ORDER BY x.id {order} LIMIT 1), \
             CASE WHEN gp.kind = 'favourite' THEN (SELECT json_array(l.notice_id, l.user_id) FROM likes l \
               WHERE {likes} AND l.notice_id < ?3 AND l.notice_id > ?4 AND {liker_not_blocked} \
               ORDER BY l.liked_at {order}, l.notice_id {order} LIMIT 1) END FROM gp \
           WHERE gp.p IS NOT NULL AND (gp.p = 0 OR EXISTS (SELECT 1 FROM posts p WHERE p.id = gp.p \
             AND p.deleted_at IS NULL AND p.taken_down_at IS NULL))), \
         reps(id, kind, actor_id, post_id, comment_id) AS ( \
           SELECT n.id, n.kind, n.actor_id, n.post_id, n.comment_id FROM cand JOIN notifications n \
             ON n.recipient_id = ?1 AND n.id = cand.rid WHERE cand.lj IS NULL OR (cand.lj ->> '$[0]') {beats} n.id \
           UNION ALL \
           SELECT cand.lj ->> '$[0]', cand.kind, cand.lj ->> '$[1]', cand.p, 0 FROM cand \
             WHERE cand.lj IS NOT NULL AND (cand.rid IS NULL OR cand.rid {beats} (cand.lj ->> '$[0]'))),",
        not_blocked = not_blocked_between("?1", "x.actor_id"),
        liker_not_blocked = not_blocked_between("?1", "l.user_id"),
        likes = window_likes_sql("gp.p", "gp.b"),
        beats = d.beats,
    )
}

/// D1 refuses a compound SELECT of more than 5 terms ("too many terms in compound SELECT"), so
/// the per-kind reads are nested: each nested compound holds at most this many.
const KINDS_PER_COMPOUND: usize = 4;

/// The ungrouped rows, read kind by kind on `notifications_by_kind`: read by id with the
/// kinds as a filter, a reply page would step over every like. The kinds' reads are nested in
/// compounds of [`KINDS_PER_COMPOUND`], each one term of the walk's own compound.
fn ungrouped_sql(kinds: &KindFilter, order: &str) -> String {
    let shown = shown_sql();
    let reads: Vec<String> = kinds
        .kinds()
        .iter()
        .map(|k| {
            format!(
                "SELECT * FROM (SELECT {COLUMNS}, {ROLE_UNGROUPED} AS role FROM notifications n \
                   INDEXED BY notifications_by_kind WHERE {shown} AND n.kind = '{kind}' AND n.id < ?3 \
                   AND n.id > ?4 ORDER BY n.id {order} LIMIT ?5)",
                kind = k.as_str()
            )
        })
        .collect();
    let mut terms: Vec<String> = reads
        .chunks(KINDS_PER_COMPOUND)
        .map(|chunk| format!("UNION ALL SELECT * FROM ({})", chunk.join(" UNION ALL ")))
        .collect();
    if kinds.kinds().contains(&Kind::Favourite) {
        // Ungrouped favourites are also the likes of group rows, one per liker, read up to
        // the walk's expanded edge (`edge` in [`walk_sql`]).
        let groups = match order {
            "ASC" => format!("g.id <= COALESCE((SELECT MIN(id) FROM edge), {MAX_ID})"),
            _ => "g.id >= COALESCE((SELECT MAX(id) FROM edge), 0)".to_string(),
        };
        let e = Expanded { kinds: "?2", below: "?3", above: "?4", actor: None, groups, order, limit: "?5" };
        terms.push(format!("UNION ALL SELECT *, {ROLE_UNGROUPED} FROM ({})", expanded_sql(&e)));
    }
    terms.join(" ")
}

/// Up to `limit` group representatives of the query's range, in its order, and the edge row
/// when the walk stopped early.
pub async fn walk(
    db: UserDb<'_>,
    recipient: UserId,
    q: &GroupQuery,
    limit: usize,
) -> StoreResult<Vec<WalkRow>> {
    let ungrouped = q.ungrouped_kinds();
    let sql = walk_sql(if q.oldest_first { &OLDEST_FIRST } else { &NEWEST_FIRST }, &ungrouped);
    let params = [
        int(recipient),
        text(&ungrouped.json()),
        int(q.below),
        int(q.above),
        int(limit as i64),
        text(&q.grouped_kinds().json()),
    ];
    all(db, &sql, &params).await
}

/// One group's figures up to the page's top: how many shown rows (less those of actors a block
/// hides; suspended actors are the service's), the newest [`SAMPLE_SCAN`] as `[[id, actor]]`
/// (JSON), and its oldest row from the page's bottom on.
#[derive(Debug, Clone, Deserialize)]
pub struct Aggregate {
    pub key: String,
    pub count: i64,
    pub samples: String,
    pub page_min_id: Option<i64>,
    /// The same figures of the group's likes (a group row's, migration 0048), merged by the
    /// service: a group may hold both (rows written before, or filtered then accepted).
    pub like_count: i64,
    pub like_samples: String,
    pub like_page_min_id: Option<i64>,
}

/// A group, and the page's bounds to aggregate it in.
#[derive(Debug, Clone)]
pub struct Span {
    pub key: GroupKey,
    pub top: i64,
    pub bottom: i64,
}

/// `?1` recipient, `?2` `[[key, kind, post, window, top, bottom]]`. The count is one range of
/// `notifications_by_group`, read up to [`GROUP_COUNT_CAP`] rows (a viral post's group is not
/// read whole on every page), less the rows of blocked actors, found through the block lists
/// (short) and `notifications_by_subject`, so no row is checked one by one.
fn aggregates_sql() -> String {
    let group = format!(
        "x.recipient_id = ?1 AND x.filtered = 0 AND x.actor_id <> 0 AND x.kind = g.kind AND {WINDOW} = g.b AND x.post_id = g.post AND x.id <= g.top"
    );
    let not_blocked = not_blocked_between("?1", "x.actor_id");
    let liker_not_blocked = not_blocked_between("?1", "l.user_id");
    // A group key names any post: its likes are the recipient's only if the post is theirs.
    let likes = format!(
        "g.kind = 'favourite' AND {} AND l.notice_id <= g.top \
         AND EXISTS (SELECT 1 FROM posts p WHERE p.id = g.post AND p.author_id = ?1)",
        window_likes_sql("g.post", "g.b")
    );
    format!(
        "WITH g(key, kind, post, b, top, bottom) AS (SELECT value ->> '$[0]', value ->> '$[1]', \
           value ->> '$[2]', value ->> '$[3]', value ->> '$[4]', value ->> '$[5]' FROM json_each(?2)) \
         SELECT g.key AS key, \
           (SELECT COUNT(*) FROM (SELECT 1 FROM notifications x INDEXED BY notifications_by_group WHERE {group} LIMIT {GROUP_COUNT_CAP})) \
           - (SELECT COUNT(*) FROM notifications x INDEXED BY notifications_by_subject WHERE {group} \
               AND x.comment_id = 0 AND x.actor_id IN ( \
               SELECT blocked_id FROM blocks WHERE blocker_id = ?1 \
               UNION SELECT blocker_id FROM blocked_by WHERE blocked_id = ?1)) AS count, \
           (SELECT json_group_array(json_array(s.id, s.actor_id)) FROM (SELECT x.id, x.actor_id \
             FROM notifications x INDEXED BY notifications_by_group WHERE {group} AND {not_blocked} \
             ORDER BY x.id DESC LIMIT {SAMPLE_SCAN}) s) AS samples, \
           (SELECT x.id FROM notifications x INDEXED BY notifications_by_group WHERE {group} AND x.id >= g.bottom AND {not_blocked} \
             ORDER BY x.id ASC LIMIT 1) AS page_min_id, \
           (SELECT COUNT(*) FROM (SELECT 1 FROM likes l WHERE {likes} LIMIT {GROUP_COUNT_CAP})) \
           - (SELECT COUNT(*) FROM likes l WHERE {likes} AND l.user_id IN ( \
               SELECT blocked_id FROM blocks WHERE blocker_id = ?1 \
               UNION SELECT blocker_id FROM blocked_by WHERE blocked_id = ?1)) AS like_count, \
           (SELECT json_group_array(json_array(s.id, s.actor_id)) FROM (SELECT l.notice_id AS id, l.user_id AS actor_id \
             FROM likes l WHERE {likes} AND {liker_not_blocked} \
             ORDER BY l.liked_at DESC, l.notice_id DESC LIMIT {SAMPLE_SCAN}) s) AS like_samples, \
           (SELECT l.notice_id FROM likes l WHERE {likes} AND l.notice_id >= g.bottom AND {liker_not_blocked} \
             ORDER BY l.liked_at ASC, l.notice_id ASC LIMIT 1) AS like_page_min_id \
         FROM g WHERE g.post = 0 OR EXISTS (SELECT 1 FROM posts p WHERE p.id = g.post \
           AND p.deleted_at IS NULL AND p.taken_down_at IS NULL)"
    )
}

/// The figures of these (grouped) groups, one read; none for a group whose post is deleted or
/// taken down (its author still reads the post itself, so hydrating would not hide it).
pub async fn aggregates(db: UserDb<'_>, recipient: UserId, spans: &[Span]) -> StoreResult<Vec<Aggregate>> {
    let rows: Vec<serde_json::Value> = spans
        .iter()
        .filter_map(|s| match s.key {
            GroupKey::Grouped { kind, post_id, window } => {
                Some(serde_json::json!([s.key.to_string(), kind.as_str(), post_id, window, s.top, s.bottom]))
            }
            GroupKey::Ungrouped(_) => None,
        })
        .collect();
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    all(db, &aggregates_sql(), &[int(recipient), text(&serde_json::Value::Array(rows).to_string())]).await
}

/// The newest shown actors of a grouped group (a block hides theirs), at most `limit`.
pub async fn actors(
    db: UserDb<'_>,
    recipient: UserId,
    key: GroupKey,
    limit: usize,
) -> StoreResult<Vec<UserId>> {
    #[derive(Deserialize)]
    struct Actor {
        actor_id: UserId,
    }
    let GroupKey::Grouped { kind, post_id, window } = key else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT actor_id FROM (SELECT * FROM (SELECT x.id, x.actor_id FROM notifications x WHERE x.recipient_id = ?1 \
             AND x.filtered = 0 AND x.actor_id <> 0 AND x.kind = ?2 AND {WINDOW} = ?3 AND x.post_id = ?4 AND {} \
             ORDER BY x.id DESC LIMIT ?5) \
           UNION ALL SELECT * FROM (SELECT l.notice_id, l.user_id FROM likes l WHERE ?2 = 'favourite' AND {} AND {} \
             AND EXISTS (SELECT 1 FROM posts p WHERE p.id = ?4 AND p.author_id = ?1) \
             ORDER BY l.liked_at DESC, l.notice_id DESC LIMIT ?5)) \
         ORDER BY 1 DESC LIMIT ?5",
        not_blocked_between("?1", "x.actor_id"),
        window_likes_sql("?4", "?3"),
        not_blocked_between("?1", "l.user_id")
    );
    let params = [int(recipient), text(kind.as_str()), int(window), int(post_id), int(limit as i64)];
    let rows: Vec<Actor> = all(db, &sql, &params).await?;
    Ok(rows.into_iter().map(|a| a.actor_id).collect())
}

/// Dismisses every notification of a grouped group (hidden ones too, as Mastodon does), as
/// tombstones ([`DISMISSED`]).
pub async fn dismiss(db: UserDb<'_>, recipient: UserId, key: GroupKey) -> StoreResult<()> {
    let GroupKey::Grouped { kind, post_id, window } = key else {
        return Ok(());
    };
    let sql = format!(
        "UPDATE notifications AS x SET filtered = {DISMISSED} WHERE x.recipient_id = ?1 AND x.kind = ?2 \
           AND {WINDOW} = ?3 AND x.post_id = ?4"
    );
    let likes = format!(
        "UPDATE likes AS l SET notice_id = -notice_id WHERE ?2 = 'favourite' AND {} \
           AND EXISTS (SELECT 1 FROM posts p WHERE p.id = ?4 AND p.author_id = ?1)",
        window_likes_sql("?4", "?3")
    );
    let params = [int(recipient), text(kind.as_str()), int(window), int(post_id)];
    batch(db, vec![stmt(db, &sql, &params)?, stmt(db, &likes, &params)?]).await?;
    Ok(())
}
