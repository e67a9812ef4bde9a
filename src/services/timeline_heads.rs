//! The public and tag timelines' heads on replicated objects (`objects/head.rs`,
//! `domain/timeline_head.rs`): a page reads its reader's replica of each key instead of the
//! key's database, and an index write tells its author's replica, so an author sees their own
//! post at once. Both best effort: a replica that fails, or a range below its head, is read
//! from the database as without replicas.

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::tags::IndexKey;
use crate::domain::timeline_head::{replica_for, HeadAnswer, HeadEntry, HeadKey, HeadOp, Range};
use crate::objects::head::Heads;

/// The key's range from the viewer's replica; `None` when replicas are off, the range reaches
/// below the head, or the replica failed (the caller reads the database).
pub async fn read(ctx: &Ctx, viewer: UserId, key: &HeadKey, range: Range) -> Option<Vec<HeadEntry>> {
    let replicas = ctx.config.heads.replicas;
    if replicas == 0 {
        return None;
    }
    let op = HeadOp::Read { key: key.clone(), range };
    let answer = match Heads::new(&ctx.env, ctx.io.clone()) {
        Ok(heads) => heads.call(replica_for(viewer, replicas), &op).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(HeadAnswer::Rows(rows)) => Some(rows),
        Ok(HeadAnswer::Beyond) => None,
        Err(e) => {
            worker::console_error!("timeline head {} not read: {e}; reading its database", key.name());
            None
        }
    }
}

/// Tells the author's replica of each head the keys belong to about the entry.
pub async fn tell(ctx: &Ctx, keys: &[IndexKey], entry: HeadEntry) {
    let replicas = ctx.config.heads.replicas;
    if replicas == 0 || keys.is_empty() {
        return;
    }
    let Ok(heads) = Heads::new(&ctx.env, ctx.io.clone()) else { return };
    let mut heads_of: Vec<HeadKey> = keys.iter().map(HeadKey::of_index_key).collect();
    heads_of.dedup();
    let replica = replica_for(entry.author_id, replicas);
    let ops: Vec<HeadOp> = heads_of.into_iter().map(|key| HeadOp::Tell { key, entry }).collect();
    for (op, told) in ops.iter().zip(join_all(ops.iter().map(|op| heads.call(replica, op))).await) {
        if let (HeadOp::Tell { key, .. }, Err(e)) = (op, told) {
            worker::console_error!("timeline head {} not told of {}: {e}", key.name(), entry.post_id);
        }
    }
}
