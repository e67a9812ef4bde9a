//! Moving a comment of the old kind into a reply post (migration 0034): the ids its reply post
//! may take. The post lives on its author's database, so its id carries the author's shard; the
//! rest comes from the comment's id (its time, its random bits), so every retry of a move tries
//! the same ids in the same order and finds the post an earlier attempt made
//! (`posts.moved_from`). A taken id (another post of that millisecond) moves on to the next
//! millisecond, as a crowded millisecond does for any new id (`store/snowflake.rs`).

use super::snowflake::{snowflake_in, snowflake_time, LogicalShard, ID_RANDOM_BITS};

/// Ids tried per comment before the move waits for a later pass.
pub const ATTEMPTS: i64 = 8;

/// The ids the reply post of `comment` (written by an author on `shard`) may take, in the order
/// tried: never the comment's own id (its thread row must make way for the reply post's).
pub fn candidates(comment: i64, shard: LogicalShard) -> impl Iterator<Item = i64> {
    let random = (comment & ((1 << ID_RANDOM_BITS) - 1)) as u64;
    let time = snowflake_time(comment);
    (0..ATTEMPTS)
        .filter_map(move |step| snowflake_in(time + step, shard, random))
        .filter(move |id| *id != comment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snowflake::shard_of_id;

    #[test]
    fn candidates_carry_the_authors_shard_and_the_comments_time_onwards() {
        let comment = snowflake_in(1_700_000_000_000, LogicalShard::new(3), 5).unwrap();
        let shard = LogicalShard::new(200);
        let ids: Vec<i64> = candidates(comment, shard).collect();
        assert_eq!(ids.len(), ATTEMPTS as usize);
        assert!(ids.iter().all(|id| shard_of_id(*id) == shard));
        assert_eq!(snowflake_time(ids[0]), snowflake_time(comment));
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "later milliseconds later");
        assert_eq!(ids, candidates(comment, shard).collect::<Vec<_>>(), "the same every time");
        assert_eq!(ids[0] & 7, comment & 7, "the comment's random bits");
    }

    #[test]
    fn the_comments_own_id_is_never_a_candidate() {
        let shard = LogicalShard::new(9);
        let comment = snowflake_in(1_700_000_000_000, shard, 2).unwrap();
        let ids: Vec<i64> = candidates(comment, shard).collect();
        assert!(!ids.contains(&comment));
        assert_eq!(ids.len(), ATTEMPTS as usize - 1);
        assert_eq!(snowflake_time(ids[0]), snowflake_time(comment) + 1);
    }
}
