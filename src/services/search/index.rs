//! Keeping the search index in step with the changes it follows: a post's publish, edit and
//! delete, a profile's handle and display name, a favourite or a bookmark. Each write computes
//! the rows the thing has now and the rows it had (`domain/search.rs`), adds the first and
//! removes the rest, grouped by database (one batch each, side by side). All of it is
//! idempotent and best effort: a database that is down costs only its rows (logged), and a row
//! left behind by a crash is hidden by the read's re-check of every hit.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::search::{self, Row};
use crate::domain::shard::group_by_database;
use crate::domain::tags::{hashtags, MAX_TAGS_PER_POST};
use crate::services::timelines::is_indexed;
use crate::store::posts::PostRow;
use crate::store::search as rows;

/// The rows a post is found by: under its author's personal terms and those of everyone it
/// mentions, and, while it is listed public by an indexable author, under the public terms and
/// its tags. `everything`: the public rows whatever the author's flag (what to take back).
fn post_rows(post: &PostRow, everything: bool) -> Vec<Row> {
    if post.reblog_of.is_some() {
        return Vec::new();
    }
    let mut readers = vec![post.author_id];
    readers.extend(post.mentioned().into_iter().map(|m| m.id).filter(|id| *id != post.author_id));
    let mut found: Vec<Row> = readers
        .into_iter()
        .flat_map(|reader| search::status_rows(post.id, post.author_id, &post.body, Some(reader)))
        .collect();
    if is_indexed(post) && (everything || post.author_is_indexable()) {
        found.extend(search::status_rows(post.id, post.author_id, &post.body, None));
    }
    if is_indexed(post) {
        found.extend(hashtags(&post.body).into_iter().take(MAX_TAGS_PER_POST).flat_map(search::tag_rows));
    }
    found
}

/// Brings a post's rows to its state: `post` as it is now (`None`: deleted), `was` as it was
/// before an edit or the deletion. Tags are never taken back: a tag, once used, stays findable
/// (its history says how much it is used now).
pub async fn post(ctx: &Ctx, post: Option<&PostRow>, was: Option<&PostRow>) {
    let now_rows = post.map(|p| post_rows(p, false)).unwrap_or_default();
    let was_rows: Vec<Row> = was
        .map(|p| post_rows(p, true))
        .unwrap_or_default()
        .into_iter()
        .filter(|r| !matches!(r.term, search::Term::Tag(_)))
        .collect();
    let gone = search::left_behind(was_rows, &now_rows);
    apply(ctx, now_rows, gone).await;
}

/// Brings an account's rows to its handle and display name (`was_name`: before an edit).
pub async fn account(ctx: &Ctx, user: UserId, handle: &str, name: &str, was_name: Option<&str>) {
    let now_rows = search::account_rows(user, handle, name);
    let was_rows = was_name.map(|was| search::account_rows(user, handle, was)).unwrap_or_default();
    let gone = search::left_behind(was_rows, &now_rows);
    apply(ctx, now_rows, gone).await;
}

/// A post the user favourited or bookmarked, under their personal terms. Undoing either leaves
/// the rows: the read checks the reason still holds (and the post may be theirs for another).
pub async fn saved(ctx: &Ctx, user: UserId, post: &PostRow) {
    if post.reblog_of.is_none() {
        apply(ctx, search::status_rows(post.id, post.author_id, &post.body, Some(user)), Vec::new()).await;
    }
}

/// Writes `add` and removes `remove`, one batch per database, side by side.
async fn apply(ctx: &Ctx, add: Vec<Row>, remove: Vec<Row>) {
    let tagged = add.into_iter().map(|r| (true, r)).chain(remove.into_iter().map(|r| (false, r)));
    let groups = group_by_database(ctx.shard_map(), tagged.map(|(on, r)| (r.term.shard(), (on, r))));
    let writes = groups.into_iter().map(|(index, group)| async move {
        let (add, remove): (Vec<_>, Vec<_>) = group.into_iter().partition(|(on, _)| *on);
        let add: Vec<Row> = add.into_iter().map(|(_, r)| r).collect();
        let remove: Vec<Row> = remove.into_iter().map(|(_, r)| r).collect();
        if let Err(e) = rows::write(ctx.database(index), &add, &remove).await {
            worker::console_error!(
                "search index on database {index}: {e}; the read re-check hides what it left"
            );
        }
    });
    join_all(writes).await;
}
