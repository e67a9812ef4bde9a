//! Likers and comments: the lists, comment writes, and count reconciliation.

use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::graph::{shown_edges, shown_user_page, LIST_ROUNDS};
use super::shards::Shards;
use super::users::UserRow;
use super::StoreResult;
use super::{
    all, batch, first, id_list, int, notifications, opt_flag, opt_text, run, stmt, text, AnyDb, EdgeKey,
    IdRow, PostDb, SqlStatement,
};
use crate::domain::cursor::{Order, SortKey};
use crate::domain::ids::{CommentId, PostId, UserId};
use crate::domain::likes::TOUCH_EVERY_MS;
use crate::domain::notifications::Notice;
use crate::domain::top::{self, CommentOrder};
use crate::domain::validate::CommentBody;
use crate::domain::warning::WarningEdit;

/// Users who like the post now, newest like first, hiding users with a block either way with
/// the viewer and suspended users. The likes come from the post's database, the users from
/// their homes ([`shown_user_page`]). Fetches `limit + 1` rows.
pub async fn likers(
    shards: &Shards,
    viewer: UserId,
    post: PostId,
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<UserRow>> {
    let db = shards.post(post);
    shown_user_page(shards, viewer, before, limit, |before, want| async move {
        all::<EdgeKey>(
            db,
            "SELECT user_id AS other, liked_at AS sort_at FROM likes \
             WHERE post_id = ?1 AND liked = 1 AND (liked_at, user_id) < (?2, ?3) \
             ORDER BY liked_at DESC, user_id DESC LIMIT ?4",
            &[int(post), int(before.primary), int(before.id), int(want as i64)],
        )
        .await
    })
    .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct CommentRow {
    pub id: CommentId,
    pub post_id: PostId,
    pub author_id: UserId,
    pub handle: String,
    pub display_name: String,
    pub body: String,
    pub created_at: i64,
    /// The commented post's author (who may delete any comment on it).
    pub post_author_id: UserId,
    /// The comment replied to (on the same post) and its author; `None`: a reply to the post.
    pub parent_id: Option<CommentId>,
    pub parent_author_id: Option<UserId>,
    pub spoiler_text: String,
    pub sensitive: bool,
    pub edited_at: Option<i64>,
    /// Its likes (migration 0028), and whether the reader asking likes it.
    pub like_count: i64,
    pub liked_by_me: bool,
    /// Its hot score at the page's snapshot (top order only: `domain/top.rs`).
    pub score: Option<f64>,
    /// The row mirrors a reply post of the same id (migration 0033), whose own row decides who
    /// may see it.
    pub reply_post: bool,
}

impl CommentRow {
    /// Its key in `order`.
    pub fn key(&self, order: CommentOrder) -> SortKey {
        order.key(self.created_at, self.id.get(), self.score)
    }
}

/// A comment as its post's database holds it: the author's name comes from the author's home.
#[derive(Debug, Clone, Deserialize)]
struct StoredComment {
    id: CommentId,
    post_id: PostId,
    author_id: UserId,
    body: String,
    created_at: i64,
    post_author_id: UserId,
    parent_id: Option<CommentId>,
    parent_author_id: Option<UserId>,
    spoiler_text: String,
    sensitive: i64,
    edited_at: Option<i64>,
    like_count: i64,
    liked: i64,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    reply_post: i64,
}

impl StoredComment {
    fn with_author(self, author: &UserRow) -> CommentRow {
        CommentRow {
            id: self.id,
            post_id: self.post_id,
            author_id: self.author_id,
            handle: author.handle.clone(),
            display_name: author.display_name.clone(),
            body: self.body,
            created_at: self.created_at,
            post_author_id: self.post_author_id,
            parent_id: self.parent_id,
            parent_author_id: self.parent_author_id,
            spoiler_text: self.spoiler_text,
            sensitive: self.sensitive != 0,
            edited_at: self.edited_at,
            like_count: self.like_count,
            liked_by_me: self.liked != 0,
            score: self.score,
            reply_post: self.reply_post != 0,
        }
    }
}

const COMMENT_COLUMNS: &str = "c.id, c.post_id, c.author_id, c.body, c.created_at, \
     p.author_id AS post_author_id, c.spoiler_text, c.sensitive, c.edited_at, c.parent_id, \
     pc.author_id AS parent_author_id, c.like_count, c.reply_post";
const COMMENT_FROM: &str =
    "FROM comments c JOIN posts p ON p.id = c.post_id LEFT JOIN comments pc ON pc.id = c.parent_id";

/// The comment columns with whether `viewer` (a parameter, or `0`: nobody) likes it.
fn comment_select(viewer: &str) -> String {
    format!("SELECT {COMMENT_COLUMNS}, {} {COMMENT_FROM}", liked_sql(viewer))
}

fn liked_sql(viewer: &str) -> String {
    format!("EXISTS (SELECT 1 FROM comment_likes cl WHERE cl.comment_id = c.id AND cl.user_id = {viewer}) AS liked")
}

/// A live comment (not deleted, on a live post), from its post's database, with its author's
/// name from the author's home, as `viewer` sees it (whether they like it).
pub async fn get(shards: &Shards, viewer: UserId, id: CommentId) -> StoreResult<Option<CommentRow>> {
    let sql =
        format!("{} WHERE c.id = ?1 AND c.deleted_at IS NULL AND p.deleted_at IS NULL", comment_select("?2"));
    let Some(stored) = first::<StoredComment>(shards.comment(id), &sql, &[int(id), int(viewer)]).await?
    else {
        return Ok(None);
    };
    let author = super::users::by_ids(shards, &[stored.author_id]).await?;
    Ok(author.first().map(|a| stored.with_author(a)))
}

/// The live comments among `ids` on one database (a recipient's: comments on their posts),
/// named by their authors among `authors` (comments by anyone else are left out). Notifications
/// read them, whose statuses say `favourited: false` (docs/mastodon.md): nobody's like is read.
pub async fn by_ids(db: AnyDb<'_>, ids: &[CommentId], authors: &[UserRow]) -> StoreResult<Vec<CommentRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let list = id_list(ids);
    let sql = format!(
        "{} WHERE c.id IN (SELECT value FROM json_each(?1)) AND c.deleted_at IS NULL \
           AND p.deleted_at IS NULL",
        comment_select("0")
    );
    let stored: Vec<StoredComment> = all(db, &sql, &[text(&list)]).await?;
    Ok(stored
        .into_iter()
        .filter_map(|c| authors.iter().find(|a| a.id == c.author_id).map(|a| c.with_author(a)))
        .collect())
}

/// One page of a post's comments in `order`, strictly after `cursor`; hides comments by users
/// with a block either way with the viewer, and by suspended users. The comments come from
/// the post's database, their authors from their homes, the blocks from the viewer's side:
/// read again while hidden comments left the page short (at most [`LIST_ROUNDS`] times).
/// Fetches `limit + 1` rows.
pub async fn list(
    shards: &Shards,
    viewer: UserId,
    post: PostId,
    order: CommentOrder,
    cursor: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<CommentRow>> {
    let want = limit + 1;
    let mut cursor = cursor.unwrap_or(order.start());
    let mut rows = Vec::with_capacity(want);
    for _ in 0..LIST_ROUNDS {
        let page = comment_page(shards.post(post), (post, viewer), order, cursor, want).await?;
        let authors: Vec<EdgeKey> =
            page.iter().map(|c| EdgeKey { other: c.author_id, sort_at: c.created_at }).collect();
        let shown = shown_edges(shards, viewer, &authors).await?;
        let next =
            page.last().filter(|_| page.len() == want).map(|c| order.key(c.created_at, c.id.get(), c.score));
        for comment in page {
            if let Some(author) = shown.iter().find(|u| u.id == comment.author_id) {
                rows.push(comment.with_author(author));
            }
        }
        match next {
            Some(next) if rows.len() < want => cursor = next,
            _ => break,
        }
    }
    rows.truncate(want);
    Ok(rows)
}

/// The time orders walk the `(post_id, created_at, id)` index; top scores every live comment
/// of the post at the snapshot and sorts them (no index can hold a time-dependent order): its
/// cost is the post's comment count per page, in rows read (docs/contract.md "Top comments").
async fn comment_page(
    db_of_post: PostDb<'_>,
    (post, viewer): (PostId, UserId),
    order: CommentOrder,
    cursor: SortKey,
    limit: usize,
) -> StoreResult<Vec<StoredComment>> {
    let live = "c.post_id = ?1 AND c.deleted_at IS NULL";
    let mut params = vec![int(post), int(cursor.primary), int(cursor.id), int(limit as i64), int(viewer)];
    let sql = match order {
        CommentOrder::Time(order) => {
            let (cmp, dir) = match order {
                Order::OldestFirst => (">", "ASC"),
                Order::NewestFirst => ("<", "DESC"),
            };
            format!(
                "{} WHERE {live} AND (c.created_at, c.id) {cmp} (?2, ?3) \
                 ORDER BY c.created_at {dir}, c.id {dir} LIMIT ?4",
                comment_select("?5")
            )
        }
        CommentOrder::Top { snapshot } => {
            params[1] = JsValue::from_f64(top::score_of(cursor));
            params.push(int(snapshot));
            let score = top::score_sql("c.like_count", "c.created_at", "?6");
            format!(
                "SELECT {COMMENT_COLUMNS}, {}, {score} AS score {COMMENT_FROM} \
                 WHERE {live} AND ({score}, c.id) < (?2, ?3) ORDER BY score DESC, c.id DESC LIMIT ?4",
                liked_sql("?5")
            )
        }
    };
    all(db_of_post, &sql, &params).await
}

/// Changes a live comment's text and/or warning (`None`: kept), marking it edited.
pub async fn edit(
    db: PostDb<'_>,
    comment: CommentId,
    body: Option<&CommentBody>,
    warning: &WarningEdit,
    now: i64,
) -> StoreResult<()> {
    let sql = format!(
        "UPDATE comments SET body = COALESCE(?2, body), edited_at = ?3, {} WHERE id = ?1 AND deleted_at IS NULL",
        super::posts::warning_edit("?4", "?5")
    );
    let params = [
        int(comment),
        opt_text(body.map(CommentBody::as_str)),
        int(now),
        opt_text(warning.spoiler_text.as_deref()),
        opt_flag(warning.sensitive),
    ];
    run(db, &sql, &params).await?;
    Ok(())
}

/// A reply post as its thread's root mirrors it in `comments` (migration 0033): from the reply's
/// row as it is now.
pub struct ReplyMirror<'a> {
    pub reply: PostId,
    pub root: PostId,
    /// The comment or reply post it answers in the thread (`None`: the root itself).
    pub parent: Option<i64>,
    pub author: UserId,
    pub body: &'a str,
    pub spoiler_text: &'a str,
    pub sensitive: bool,
    pub created_at: i64,
    /// The reply is there (not deleted): never turned back on once off.
    pub active: bool,
    /// Its row's arrival notifies the root's author (`domain/replies.rs::notifies`), unless
    /// the reply mentions them (`mentioned`: whom it mentions).
    pub notify: bool,
    pub mentioned: Vec<UserId>,
    pub now: i64,
}

/// Makes the root's thread agree with a reply post, in one batch on the root's database: a live
/// reply's row is inserted (its count moves by trigger) after notifying the root's author, once;
/// a gone one is marked deleted (or recorded deleted, if the mirror never saw it) and its
/// notification taken back. Idempotent in any order. The notification made, if its recipient
/// has a live socket open.
pub async fn mirror_reply(db: PostDb<'_>, m: &ReplyMirror<'_>) -> StoreResult<Option<Notice>> {
    let deleted_at = if m.active { JsValue::NULL } else { int(m.now) };
    let upsert = if m.active {
        "DO NOTHING"
    } else {
        "DO UPDATE SET deleted_at = COALESCE(comments.deleted_at, excluded.deleted_at), like_count = 0"
    };
    let row = stmt(
        db,
        &format!(
            "INSERT INTO comments (id, post_id, author_id, body, created_at, spoiler_text, sensitive, parent_id, \
               deleted_at, reply_post) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1) ON CONFLICT (id) {upsert}"
        ),
        &[
            int(m.reply),
            int(m.root),
            int(m.author),
            text(m.body),
            int(m.created_at),
            text(m.spoiler_text),
            int(i64::from(m.sensitive)),
            m.parent.map_or(JsValue::NULL, int),
            deleted_at,
        ],
    )?;
    let touched = touch(db, m.root, m.now)?;
    let comment = CommentId::from_trusted(m.reply.get());
    let statements = if m.active && m.notify {
        vec![
            notifications::on_comment(db, m.reply.get(), (m.root, m.author), &m.mentioned, m.now)?,
            row,
            touched,
        ]
    } else if m.active {
        vec![row, touched]
    } else {
        vec![row, touched, notifications::off_comment(db, comment, m.root)?]
    };
    let results = batch(db, statements).await?;
    Ok(if m.active && m.notify { notifications::notice(results.first(), m.now) } else { None })
}

/// A reply post's like count, copied to its thread's row (the comments view's `top` order scores
/// by the row's count).
pub async fn mirror_like_count(db: PostDb<'_>, reply: PostId, count: i64) -> StoreResult<()> {
    let sql = "UPDATE comments SET like_count = ?2 WHERE id = ?1 AND reply_post = 1 AND deleted_at IS NULL";
    run(db, sql, &[int(reply), int(count)]).await?;
    Ok(())
}

/// A reply post's edit, carried to its thread's mirror row.
pub async fn mirror_edit(
    db: PostDb<'_>,
    reply: PostId,
    body: &str,
    warning: (&str, bool),
    now: i64,
) -> StoreResult<()> {
    let sql = "UPDATE comments SET body = ?2, spoiler_text = ?3, sensitive = ?4, edited_at = ?5 \
               WHERE id = ?1 AND reply_post = 1 AND deleted_at IS NULL";
    run(db, sql, &[int(reply), text(body), text(warning.0), int(i64::from(warning.1)), int(now)]).await?;
    Ok(())
}

/// Marks the comment deleted; its likes go with it (the rows, and the count they make).
pub async fn delete(db: PostDb<'_>, comment: &CommentRow, now: i64) -> StoreResult<()> {
    batch(
        db,
        vec![
            stmt(
                db,
                "UPDATE comments SET deleted_at = ?2, like_count = 0 WHERE id = ?1 AND deleted_at IS NULL",
                &[int(comment.id), int(now)],
            )?,
            stmt(db, "DELETE FROM comment_likes WHERE comment_id = ?1", &[int(comment.id)])?,
            touch(db, comment.post_id, now)?,
            notifications::off_comment(db, comment.id, comment.post_id)?,
        ],
    )
    .await?;
    Ok(())
}

/// Marks the post for the count repair's next share (`touched_at`), unless a mark recent
/// enough for that share is there already (`domain/likes.rs`, `TOUCH_EVERY_MS`).
pub fn touch(db: PostDb<'_>, post: impl Into<i64>, now: i64) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "UPDATE posts SET touched_at = ?2 WHERE id = ?1 AND (touched_at IS NULL OR touched_at < ?3)",
        &[int(post.into()), int(now), int(now - TOUCH_EVERY_MS)],
    )
}

/// Recomputes like and comment counts from the relations for posts touched since `since`
/// and fixes any that drifted; returns the ids it repaired.
pub async fn repair_counts(db: AnyDb<'_>, since: i64) -> StoreResult<Vec<i64>> {
    const LIKES: &str = "(SELECT COUNT(*) FROM likes l WHERE l.post_id = posts.id AND l.liked = 1)";
    const COMMENTS: &str =
        "(SELECT COUNT(*) FROM comments c WHERE c.post_id = posts.id AND c.deleted_at IS NULL)";
    // The posts marked since (comments, moves) and those liked or unliked since (a like marks
    // nothing on its post: its row's `updated_at`, on `likes_by_update`, is the mark, and
    // sparing the post's row and its index entry is 2 rows a like). Each side an index range.
    let sql = format!(
        "UPDATE posts SET like_count = {LIKES}, comment_count = {COMMENTS} \
         WHERE id IN (SELECT id FROM posts WHERE touched_at >= ?1 \
                      UNION SELECT post_id FROM likes WHERE updated_at >= ?1) \
           AND (like_count <> {LIKES} OR comment_count <> {COMMENTS}) RETURNING id"
    );
    let rows: Vec<IdRow> = all(db, &sql, &[int(since)]).await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}
