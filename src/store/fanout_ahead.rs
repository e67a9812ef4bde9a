//! An outbox event's row read together with what its message reads next, in one statement on
//! the event's database: the post's state and its author's next page of followers. A post
//! event's row, its post and its author's side of the edges all live on the author's database,
//! and every chunk of a big post's fan-out reads all three there: one statement instead of
//! three is what lets the author's database carry a 10M-follower post within a minute
//! (docs/fanout.md, "Parallel segments").

use serde::Deserialize;

use super::outbox::{follower_page_sql, OutboxRow, ROW_COLUMNS};
use super::posts::{state_object_sql, PostState};
use super::{int, stmt, Mode, OnDb, OutboxDb, StoreResult};
use crate::domain::ids::{OutboxId, UserId};

/// The page read ahead: the followers after `after` (pushed edges only, or all), `limit` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageAhead {
    pub after: i64,
    pub limit: usize,
    pub pushed_only: bool,
}

/// The row, and for a pending post event the post and the page: `post` is `Some(None)` when
/// the post's row is not on the event's database (absent or elsewhere), `None` when not read.
#[derive(Debug, Clone, Default)]
pub struct EventAhead {
    pub row: Option<OutboxRow>,
    pub post: Option<Option<PostState>>,
    pub page: Option<Vec<UserId>>,
}

#[derive(Deserialize)]
struct Extras {
    post_state: Option<String>,
    page: Option<String>,
}

/// The event `id`, and for a pending `post` event its post's state and the page `ahead` (none
/// asked: the post only).
pub async fn event_ahead(
    db: OutboxDb<'_>,
    id: OutboxId,
    ahead: Option<PageAhead>,
) -> StoreResult<EventAhead> {
    let page_sql = match ahead {
        Some(ahead) => page_sql(ahead.pushed_only),
        None => "NULL".to_string(),
    };
    // 'null' (no post row) is told apart from NULL (not a pending post event: nothing read).
    let sql = format!(
        "SELECT {ROW_COLUMNS}, \
           CASE WHEN kind = 'post' AND state = 'pending' THEN \
             COALESCE((SELECT {post} FROM posts WHERE posts.id = outbox.post_id), 'null') END AS post_state, \
           CASE WHEN kind = 'post' AND state = 'pending' THEN {page_sql} END AS page \
         FROM outbox WHERE id = ?1",
        post = state_object_sql(),
    );
    let on = db.on();
    let (after, limit) = ahead.map_or((0, 0), |a| (a.after, a.limit as i64));
    let params = [int(id), int(after), int(limit)];
    let result = on.execute_one(Mode::All, stmt(db, &sql, &params)?).await?;
    let row = result.results::<OutboxRow>()?.into_iter().next();
    let extras = result.results::<Extras>()?.into_iter().next();
    let Some(Extras { post_state, page }) = extras else { return Ok(EventAhead::default()) };
    // What does not parse counts as not read: the message then reads it on its own.
    let post = post_state.and_then(|json| match json.as_str() {
        "null" => Some(None),
        json => PostState::from_object(json).map(Some),
    });
    Ok(EventAhead { row, post, page: page.and_then(|json| followers_of(&json)) })
}

/// The page as one JSON array: `outbox::follower_chunk`'s rows (without its segment's end:
/// the reader cuts the page there).
fn page_sql(pushed_only: bool) -> String {
    let page = follower_page_sql("outbox.author_id", None, pushed_only);
    format!("(SELECT json_group_array(follower_id) FROM ({page}))")
}

/// The page's follower ids, ascending (the aggregate's order is not promised).
fn followers_of(json: &str) -> Option<Vec<UserId>> {
    let mut ids: Vec<i64> = serde_json::from_str(json).ok()?;
    ids.sort_unstable();
    Some(ids.into_iter().map(UserId::from_trusted).collect())
}
