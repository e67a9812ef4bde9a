//! The liker's side of likes (`liked_posts` on the liker's home, migration 0023), kept by the
//! post side's *current* state, as the graph's mirrors are (`services/graph.rs`): the post's
//! `likes` row is the truth; this side only ever copies it.
//!
//! The post's `PostLikes` object writes the liker side right after each group commit, before
//! it answers, in commit order (`objects/post_likes.rs`): the favourites list and `liked_by_me`
//! from this side read the user's own like at once, and no earlier like's write can land after
//! a later one's. A crash between the two sides (or a liker database that failed the write) is
//! repaired by the cron's [`repair_slice`], which walks every database's likes in the order
//! they changed (`likes_by_update`) and [`converge`]s each pair whose liker side differs.

use serde::Serialize;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::shard::prefix_within_databases;
use crate::domain::snowflake::shard_of_id;
use crate::error::{ApiError, ApiResult};
use crate::store::liked::{self, LikeChange};
use crate::store::{batch, stats, AnyDb, StoreResult};

/// Rounds of write-then-check before a converge gives up (a later pass finishes it).
const CONVERGE_ROUNDS: usize = 3;

/// Brings `user`'s liker-side row of `post` to what the post side says now: read the post
/// side, write the liker side, read again and go round while it moved. Whichever converge
/// writes last has read after its write, so concurrent ones end right (as `converge_pair`);
/// the post's object only ever writes a state already committed, in commit order, so a
/// converge racing it ends right too (a stale write of its own is seen by its re-read).
pub async fn converge(ctx: &Ctx, user: UserId, post: PostId) -> ApiResult<()> {
    let mut state = liked::post_side(ctx.post_db(post), post, user).await?;
    for _ in 0..CONVERGE_ROUNDS {
        liked::write_liker_side(ctx.user_db(user), user, post, state).await?;
        let again = liked::post_side(ctx.post_db(post), post, user).await?;
        if again == state {
            return Ok(());
        }
        state = again;
    }
    Err(ApiError::Internal(format!("like ({user}, {post}) kept changing")))
}

/// Likes one pass checks per database, in the order they changed.
pub const LIKES_PER_PASS: usize = 250;
/// Pairs converged per pass at most; the slice stops before the next one.
const REPAIRS_PER_PASS: usize = 50;
/// Liker homes one slice probes at most (one statement each).
const PROBED_DATABASES: usize = 16;
const CURSOR: [&str; 3] = ["reconcile_liked_at", "reconcile_liked_post", "reconcile_liked_user"];

/// What one pass of the liker-side check did on one database.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct LikedRepairs {
    pub likes_checked: usize,
    pub liker_sides_repaired: usize,
}

impl LikedRepairs {
    pub fn add(&mut self, other: LikedRepairs) {
        self.likes_checked += other.likes_checked;
        self.liker_sides_repaired += other.liker_sides_repaired;
    }
}

/// The next slice of `db`'s likes in change order (cursor in its own `stats`), each compared
/// with its liker side (one probe per liker home) and converged where they differ. Only likes
/// changed more than the outbox grace ago are walked: a like is stamped with its request's
/// time and may commit a little later, so the cursor must not pass a time still being written.
/// The first passes after the migration walk every older like, filling the liker side in.
pub async fn repair_slice(ctx: &Ctx, db: AnyDb<'_>) -> ApiResult<LikedRepairs> {
    let mut after = (0, 0, 0);
    for (slot, name) in [&mut after.0, &mut after.1, &mut after.2].into_iter().zip(CURSOR) {
        *slot = stats::value(db, name).await?.unwrap_or(0);
    }
    let until = ctx.now - ctx.config.outbox_grace_ms;
    let fetched = liked::changed_likes(db, after, until, LIKES_PER_PASS).await?;
    let homes = fetched.iter().map(|c| shard_of_id(c.user_id.get()));
    let slice = &fetched[..prefix_within_databases(ctx.shard_map(), homes, PROBED_DATABASES)];
    let differing = differing(ctx, slice).await?;
    // Stop before the first pair beyond this pass's repairs: the next pass starts there.
    let (cut, repairs) = match differing.get(REPAIRS_PER_PASS) {
        Some(&index) => (index, &differing[..REPAIRS_PER_PASS]),
        None => (slice.len(), &differing[..]),
    };
    for &index in repairs {
        let change = slice[index];
        // One pair's failure (its home unavailable) must not cost the rest: a later pass
        // finds it again only if it changes again, so the cursor stops before it.
        if let Err(e) = converge(ctx, change.user_id, change.post_id).await {
            worker::console_error!("liker side check: ({}, {}) failed: {e}", change.user_id, change.post_id);
            return save(
                db,
                slice[..index].last(),
                after,
                LikedRepairs { likes_checked: index, ..Default::default() },
            )
            .await;
        }
    }
    let report = LikedRepairs { likes_checked: cut, liker_sides_repaired: repairs.len() };
    save(db, slice[..cut].last(), after, report).await
}

/// Records where the next slice starts (after `last`, or where this one started).
async fn save(
    db: AnyDb<'_>,
    last: Option<&LikeChange>,
    after: (i64, i64, i64),
    report: LikedRepairs,
) -> ApiResult<LikedRepairs> {
    let next = last.map_or(after, |c| (c.updated_at, c.post_id.get(), c.user_id.get()));
    let values = [next.0, next.1, next.2];
    let statements = CURSOR
        .iter()
        .zip(values)
        .map(|(name, v)| stats::set(db, name, v))
        .collect::<StoreResult<Vec<_>>>()?;
    batch(db, statements).await?;
    Ok(report)
}

/// The indexes in `slice` of the likes whose liker side differs from the post side, probed
/// on each liker home in one statement.
async fn differing(ctx: &Ctx, slice: &[LikeChange]) -> ApiResult<Vec<usize>> {
    let pairs: Vec<(UserId, PostId)> = slice.iter().map(|c| (c.user_id, c.post_id)).collect();
    let groups = ctx.shards.by_home(pairs, |p| p.0);
    let found =
        ctx.shards.across(groups, |db, pairs| async move { liked::liker_rows(db, &pairs).await }).await?;
    let stored: std::collections::HashMap<(UserId, PostId), i64> =
        found.into_iter().flatten().map(|r| ((r.user_id, r.post_id), r.liked_at)).collect();
    Ok(slice
        .iter()
        .enumerate()
        .filter(|(_, c)| stored.get(&(c.user_id, c.post_id)).copied() != c.want())
        .map(|(i, _)| i)
        .collect())
}
