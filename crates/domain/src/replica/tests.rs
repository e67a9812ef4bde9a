use super::*;
use crate::snowflake::snowflake;

const TIMING: Timing = Timing { lease_ms: 10_000, counts_ms: 30_000 };
const T0: i64 = 1_800_000_000_000;

fn post(at: i64) -> HeldPost {
    let id = snowflake(at, 7).expect("a valid time");
    HeldPost {
        id: PostId::from_trusted(id),
        created_at: at,
        row: serde_json::json!({ "id": id }).to_string().into(),
    }
}

fn snapshot(seq: i64, posts: &[HeldPost], full: bool) -> Snapshot {
    let mut posts = posts.to_vec();
    posts.sort_by_key(|p| std::cmp::Reverse(p.key()));
    Snapshot { seq, suspended: false, blocks: vec![UserId::from_trusted(99)], posts, full }
}

fn query(after: SortKey, before: SortKey, limit: usize, ids: Vec<PostId>) -> ReplicaQuery {
    ReplicaQuery { viewer: UserId::from_trusted(99), after, before, limit, ids }
}

fn loaded(posts: &[HeldPost], full: bool) -> Replica {
    let mut r = Replica::new(3);
    r.load(snapshot(5, posts, full), (T0, 0), TIMING);
    r
}

#[test]
fn replica_counts_follow_the_followers_within_bounds() {
    assert_eq!(replica_count(1, 50_000), MIN_REPLICAS);
    assert_eq!(replica_count(120_000, 50_000), 3);
    assert_eq!(replica_count(10_000_000, 50_000), 200);
    assert_eq!(replica_count(1_000_000_000, 50_000), MAX_REPLICAS);
    assert_eq!(replica_count(5, 0), 5, "a zero divisor counts as one follower per replica");
}

#[test]
fn readers_spread_over_the_replicas_and_keep_theirs() {
    let mut seen = [0usize; 8];
    for n in 0..8_000 {
        let reader = UserId::from_trusted(snowflake(T0 + n, n as u64).expect("valid"));
        let i = replica_for(reader, 8);
        assert_eq!(i, replica_for(reader, 8));
        seen[i as usize] += 1;
    }
    assert!(seen.iter().all(|&n| (800..1_200).contains(&n)), "uneven: {seen:?}");
}

#[test]
fn a_new_replica_reads_everything_before_its_first_answer() {
    let r = Replica::new(3);
    assert_eq!(r.before_answer(T0, TIMING), Before::Reload);
    let r = loaded(&[post(T0 - 5)], false);
    assert_eq!(r.before_answer(T0 + 1, TIMING), Before::Nothing);
}

#[test]
fn the_lease_runs_out_and_a_counter_read_renews_it() {
    let mut r = loaded(&[post(T0 - 5)], false);
    assert_eq!(r.before_answer(T0 + TIMING.lease_ms, TIMING), Before::CheckSeq);
    assert!(!r.confirm(5, (T0 + TIMING.lease_ms, 0), TIMING), "same counter: nothing to read");
    assert_eq!(r.before_answer(T0 + TIMING.lease_ms + 1, TIMING), Before::Nothing);
    assert!(r.confirm(6, (T0 + 2 * TIMING.lease_ms, 0), TIMING), "the counter moved: read the rows");
    assert_eq!(r.before_answer(T0 + 2 * TIMING.lease_ms, TIMING), Before::CheckSeq, "not renewed");
    // Counts are refreshed with the rows however recently the counter was confirmed.
    assert_eq!(r.before_answer(T0 + TIMING.counts_ms, TIMING), Before::Reload);
}

#[test]
fn changes_apply_in_order_and_a_gap_makes_the_replica_read_again() {
    let mut r = loaded(&[post(T0 - 5)], false);
    let new = post(T0 + 1);
    assert_eq!(r.apply(6, T0 + 1, Change::Post(new.clone()), TIMING), Applied::InOrder);
    let q = query(SortKey::BOTTOM, SortKey::TOP, 10, vec![new.id]);
    assert_eq!(r.answer(&q).posts.first(), Some(&new));
    assert_eq!(r.apply(6, T0 + 1, Change::Post(new.clone()), TIMING), Applied::AlreadyHeld);
    assert_eq!(r.apply(8, T0 + 2, Change::Gone(new.id), TIMING), Applied::WillReread);
    assert_eq!(r.before_answer(T0 + 3, TIMING), Before::Reload);
    // While stale, even an in-order change waits for the re-read.
    assert_eq!(r.apply(9, T0 + 3, Change::Gone(new.id), TIMING), Applied::WillReread);
}

#[test]
fn an_applied_change_extends_the_lease_from_its_send_time() {
    let mut r = loaded(&[], false);
    let sent = T0 + TIMING.lease_ms - 1;
    assert_eq!(r.apply(6, sent, Change::Post(post(sent)), TIMING), Applied::InOrder);
    assert_eq!(r.before_answer(sent + TIMING.lease_ms - 1, TIMING), Before::Nothing);
    assert_eq!(r.before_answer(sent + TIMING.lease_ms, TIMING), Before::CheckSeq);
}

#[test]
fn a_delete_removes_the_post_and_a_reread_change_forces_a_reload() {
    let kept = post(T0 - 10);
    let gone = post(T0 - 5);
    let mut r = loaded(&[kept.clone(), gone.clone()], false);
    assert_eq!(r.apply(6, T0, Change::Gone(gone.id), TIMING), Applied::InOrder);
    let a = r.answer(&query(SortKey::BOTTOM, SortKey::TOP, 10, vec![gone.id, kept.id]));
    assert_eq!(a.posts, vec![kept.clone()]);
    assert_eq!(a.found, vec![kept]);
    assert!(a.unknown.is_empty(), "a held range answers for its deleted posts: absent");
    assert_eq!(r.apply(7, T0, Change::Reread, TIMING), Applied::WillReread);
    assert_eq!(r.before_answer(T0 + 1, TIMING), Before::Reload);
}

#[test]
fn answers_hold_the_bounds_and_say_when_they_are_complete() {
    let posts: Vec<HeldPost> = (1..=3).map(|i| post(T0 - 100 * i)).collect();
    let r = loaded(&posts, true);
    // Full at capacity 3: it holds down to the oldest of the three, no further.
    let all = r.answer(&query(SortKey::BOTTOM, SortKey::TOP, 10, vec![]));
    assert_eq!(all.posts.len(), 3);
    assert!(!all.complete, "below its oldest post the author may have more");
    let top = r.answer(&query(SortKey::BOTTOM, SortKey::TOP, 2, vec![]));
    assert_eq!(top.posts, posts[..2].to_vec());
    assert!(top.complete, "a full answer is complete down to its last row");
    let inside = r.answer(&query(posts[2].key(), posts[0].key(), 5, vec![]));
    assert_eq!(inside.posts, vec![posts[1].clone()]);
    assert!(inside.complete);
    let older = PostId::from_trusted(snowflake(T0 - 10_000, 1).expect("valid"));
    assert_eq!(r.answer(&query(SortKey::BOTTOM, SortKey::TOP, 1, vec![older])).unknown, vec![older]);
    let none = r.answer(&query(SortKey::TOP, SortKey::BOTTOM, 5, vec![]));
    assert!(none.posts.is_empty(), "inverted bounds answer nothing, and do not panic");
}

#[test]
fn a_replica_that_holds_all_of_an_author_is_complete_everywhere() {
    let r = loaded(&[post(T0 - 50)], false);
    let a = r.answer(&query(SortKey::BOTTOM, SortKey::TOP, 10, vec![]));
    assert!(a.complete);
    assert!(a.blocks_viewer, "the snapshot's block list names the viewer");
}

#[test]
fn over_capacity_the_oldest_goes_and_the_range_shrinks() {
    let posts: Vec<HeldPost> = (1..=3).map(|i| post(T0 - 100 * i)).collect();
    let mut r = loaded(&posts, false);
    let new = post(T0);
    assert_eq!(r.apply(6, T0, Change::Post(new.clone()), TIMING), Applied::InOrder);
    let a = r.answer(&query(SortKey::BOTTOM, SortKey::TOP, 10, vec![posts[2].id]));
    assert_eq!(a.posts.len(), 3);
    assert_eq!(a.unknown, vec![posts[2].id], "dropped: read from D1");
    assert!(!a.complete);
}

#[test]
fn a_writer_without_every_acknowledgement_waits_out_the_lease() {
    assert_eq!(unacknowledged_wait_until(T0, TIMING.lease_ms, 500), T0 + 10_500);
}

#[test]
fn a_change_during_a_reload_leaves_the_replica_stale() {
    let mut r = loaded(&[], false);
    let before = r.changes_seen();
    // The reload's D1 read is under way when change 6 arrives (and is applied in order).
    assert_eq!(r.apply(6, T0, Change::Post(post(T0)), TIMING), Applied::InOrder);
    r.load(snapshot(5, &[], false), (T0, before), TIMING);
    assert_eq!(r.before_answer(T0 + 1, TIMING), Before::Reload, "the read may predate change 6");
    let seen = r.changes_seen();
    r.load(snapshot(6, &[post(T0)], false), (T0 + 1, seen), TIMING);
    assert_eq!(r.before_answer(T0 + 2, TIMING), Before::Nothing);
    // The same for a counter check.
    let seen = r.changes_seen();
    r.apply(7, T0 + 3, Change::Gone(post(T0).id), TIMING);
    assert!(r.confirm(7, (T0 + 4, seen), TIMING), "a change during the check: read again");
}
