//! Where the stack puts users, for the benches that place their actors on chosen databases
//! (`benches/shards.rs`, `benches/capacity.rs`): the stack's shard map, read from its stats,
//! and a pool of registered users sorted by home database.

// Each bench that includes this uses a part of it.
#![allow(dead_code)]

use crate::common::*;
use edgefeed::domain::snowflake::{shard_of_id, LOGICAL_SHARDS};

/// Concurrent registrations.
const THREADS: usize = 8;

/// Registers users until it has them on the databases asked for, keeping the rest for later.
pub struct Pool {
    /// The physical database of every logical shard, as the stack maps them.
    pub map: Vec<usize>,
    /// The databases that hold at least one logical shard, in order (only `DB_0` while
    /// placement is off).
    pub placed: Vec<usize>,
    spare: Vec<Vec<User>>,
    pub registered: usize,
}

impl Pool {
    pub fn new(map: Vec<usize>, databases: usize) -> Self {
        let placed = (0..databases).filter(|db| map.contains(db)).collect();
        Self { map, placed, spare: vec![Vec::new(); databases], registered: 0 }
    }

    /// Round robin over the databases that hold shards: `n` homes.
    pub fn spread(&self, n: usize) -> Vec<usize> {
        (0..n).map(|i| self.placed[i % self.placed.len()]).collect()
    }

    /// Where each actor (reader, publisher, follower, liker) lives: the second database that
    /// holds shards (`DB_1`, not the control database), or the only one.
    pub fn actor_home(&self) -> usize {
        self.placed[1 % self.placed.len()]
    }

    pub fn home(&self, user: &User) -> usize {
        self.map[shard_of_id(user.id.parse().expect("a numeric user id")).index()]
    }

    /// One user per entry of `wants`, whose home database is that entry.
    pub fn users_on(&mut self, wants: &[usize]) -> Vec<User> {
        loop {
            let mut needed = vec![0usize; self.spare.len()];
            for db in wants {
                needed[*db] += 1;
            }
            let missing: usize = needed.iter().zip(&self.spare).map(|(n, s)| n.saturating_sub(s.len())).sum();
            if missing == 0 {
                break;
            }
            let batch = missing + missing / 2 + self.spare.len();
            for user in parallel(THREADS, batch, |_| register("sh_user")) {
                let home = self.home(&user);
                self.spare[home].push(user);
            }
            self.registered += batch;
        }
        wants.iter().map(|db| self.spare[*db].pop().expect("counted above")).collect()
    }
}

/// The stack's logical-to-physical map, from `/v1/admin/stats` (`shard_map`, `0-63:0,...`).
pub fn shard_map() -> (String, Vec<usize>) {
    let stats = admin("GET", "/v1/admin/stats", None).expect(200);
    let spec = stats["shard_map"].as_str().expect("shard_map in the stats").to_string();
    let mut map = vec![usize::MAX; LOGICAL_SHARDS];
    for part in spec.split(',') {
        let (range, db) = part.split_once(':').expect("FIRST-LAST:DB");
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        let (first, last): (usize, usize) = (first.parse().unwrap(), last.parse().unwrap());
        map[first..=last].fill(db.parse().unwrap());
    }
    assert!(!map.contains(&usize::MAX), "shard_map {spec} misses a shard");
    (spec, map)
}
