//! A viewer's own marks on posts beyond bookmarks and boosts (migration 0038): the
//! conversations they muted (`conversation_mutes`, by thread root, on their home) and the posts
//! they pinned (`posts.pinned_at`: their own posts, so on their home too).

use std::collections::HashSet;

use serde::Deserialize;

use super::{all, id_list, int, run, text, StoreResult, UserDb};
use crate::domain::ids::{PostId, UserId};

/// Most posts an author may pin (Mastodon's default).
pub const MAX_PINS: i64 = 5;

/// Mutes (`on`) or unmutes the conversation whose root is `thread` for `user`; idempotent.
pub async fn set_mute(db: UserDb<'_>, user: UserId, thread: PostId, on: bool, now: i64) -> StoreResult<()> {
    let sql = if on {
        "INSERT INTO conversation_mutes (user_id, thread_id, created_at) VALUES (?1, ?2, ?3) \
         ON CONFLICT (user_id, thread_id) DO NOTHING"
    } else {
        "DELETE FROM conversation_mutes WHERE user_id = ?1 AND thread_id = ?2 AND ?3 = ?3"
    };
    run(db, sql, &[int(user), int(thread), int(now)]).await.map(|_| ())
}

/// What a pin asked for came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pinned {
    /// Pinned now, or already.
    Yes,
    /// The author already has [`MAX_PINS`] pinned posts.
    Full,
}

/// Pins (`on`) or unpins the author's own post. The count of pins is read inside the update's
/// own statement, so two pins at once cannot pass the limit together (one database applies
/// statements one at a time).
pub async fn set_pin(
    db: UserDb<'_>,
    author: UserId,
    post: PostId,
    on: bool,
    now: i64,
) -> StoreResult<Pinned> {
    if !on {
        run(
            db,
            "UPDATE posts SET pinned_at = NULL WHERE id = ?1 AND author_id = ?2 AND pinned_at IS NOT NULL",
            &[int(post), int(author)],
        )
        .await?;
        return Ok(Pinned::Yes);
    }
    let changed = run(
        db,
        "UPDATE posts SET pinned_at = ?3 WHERE id = ?1 AND author_id = ?2 AND pinned_at IS NULL \
           AND deleted_at IS NULL \
           AND (SELECT COUNT(*) FROM posts q WHERE q.author_id = ?2 AND q.pinned_at IS NOT NULL \
                  AND q.deleted_at IS NULL) < ?4",
        &[int(post), int(author), int(now), int(MAX_PINS)],
    )
    .await?;
    if changed > 0 {
        return Ok(Pinned::Yes);
    }
    Ok(if pinned_among(db, author, &[post]).await?.contains(&post) { Pinned::Yes } else { Pinned::Full })
}

#[derive(Deserialize)]
struct Mark {
    kind: String,
    id: PostId,
}

/// The viewer's marks among a page: which of `threads` they muted, which of `own` (their own
/// posts) they pinned. One statement on their home; none for nothing to ask.
pub async fn among(
    db: UserDb<'_>,
    viewer: UserId,
    threads: &[PostId],
    own: &[PostId],
) -> StoreResult<(HashSet<PostId>, HashSet<PostId>)> {
    if threads.is_empty() && own.is_empty() {
        return Ok(Default::default());
    }
    let rows: Vec<Mark> = all(
        db,
        "SELECT 'mute' AS kind, m.thread_id AS id FROM json_each(?2) e \
           JOIN conversation_mutes m ON m.user_id = ?1 AND m.thread_id = e.value \
         UNION ALL \
         SELECT 'pin' AS kind, p.id AS id FROM json_each(?3) e \
           JOIN posts p ON p.id = e.value AND p.author_id = ?1 AND p.pinned_at IS NOT NULL",
        &[int(viewer), text(&id_list(threads)), text(&id_list(own))],
    )
    .await?;
    let of = |kind: &str| rows.iter().filter(|m| m.kind == kind).map(|m| m.id).collect();
    Ok((of("mute"), of("pin")))
}

async fn pinned_among(db: UserDb<'_>, author: UserId, ids: &[PostId]) -> StoreResult<HashSet<PostId>> {
    Ok(among(db, author, &[], ids).await?.1)
}

#[derive(Deserialize)]
struct IdOf {
    id: PostId,
}

/// The author's pinned posts (live ones), most recently pinned first.
pub async fn pinned(db: UserDb<'_>, author: UserId) -> StoreResult<Vec<PostId>> {
    let rows: Vec<IdOf> = all(
        db,
        "SELECT id FROM posts WHERE author_id = ?1 AND pinned_at IS NOT NULL AND deleted_at IS NULL \
         ORDER BY pinned_at DESC, id DESC LIMIT ?2",
        &[int(author), int(MAX_PINS)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}
