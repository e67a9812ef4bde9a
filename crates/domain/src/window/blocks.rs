//! How a window's entries are stored: packed in blocks, one storage row per block of up to
//! [`block_size`] entries, so a delivery rewrites one row instead of inserting a row (and its
//! index entries) and trimming another. Durable Object SQLite bills every row a statement
//! writes or deletes and every row it scans; per entry rows cost one write to insert and one to
//! trim, before any count or index is kept.
//!
//! Blocks partition the key space: a block holds every entry with `lo <= key < next.lo` (its
//! `lo` never changes). An entry goes into the block with the greatest `lo` at or below its key;
//! a key below every block starts a block of its own. A full block either starts a new block
//! above it (a key above all it holds: the usual case, posts arrive newest) or splits in two.
//!
//! [`Working`] is the set of blocks one write op works on: loaded from the newest block down
//! only as far as the op needs (a new post: the newest block, one row), changed in memory and
//! written back once at the end (one row per block changed). The trim is by whole blocks, so
//! it runs only when the window can have grown past its bound: when the op made a block or
//! grew one that is not the newest (see [`Working::trim`] for the bounds).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::super::cursor::SortKey;
use super::super::ids::{PostId, UserId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub created_at: i64,
    pub post_id: PostId,
    pub author_id: UserId,
    /// The post's `state_version` in D1 when this entry was read or sent.
    #[serde(default)]
    pub version: i64,
}

impl Entry {
    /// A post's key never changes (its creation time is fixed at publish), so the key finds
    /// the post's entry.
    pub fn key(&self) -> SortKey {
        SortKey::new(self.created_at, self.post_id.get())
    }
}

/// Entries per block for a window capped at `cap`: a sixteenth of the cap (50 for the default
/// 800), at least 1 and at most 64 (a block row stays a few KB).
pub fn block_size(cap: usize) -> usize {
    (cap / 16).clamp(1, 64)
}

/// One stored block: its lower bound and its entries, ascending by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub lo: SortKey,
    pub entries: Vec<Entry>,
}

const ENTRY_BYTES: usize = 32;

impl Block {
    /// The entries packed as little-endian `i64`s: created_at, post id, author id, version.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.entries.len() * ENTRY_BYTES);
        for e in &self.entries {
            for n in [e.created_at, e.post_id.get(), e.author_id.get(), e.version] {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        out
    }

    /// The block [`Block::encode`] wrote; `None` for bytes it cannot have written.
    pub fn decode(lo: SortKey, bytes: &[u8]) -> Option<Block> {
        if bytes.len() % ENTRY_BYTES != 0 {
            return None;
        }
        let word = |chunk: &[u8], i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&chunk[i * 8..i * 8 + 8]);
            i64::from_le_bytes(b)
        };
        let entries = bytes
            .chunks_exact(ENTRY_BYTES)
            .map(|c| Entry {
                created_at: word(c, 0),
                post_id: PostId::from_trusted(word(c, 1)),
                author_id: UserId::from_trusted(word(c, 2)),
                version: word(c, 3),
            })
            .collect();
        Some(Block { lo, entries })
    }
}

/// Packs entries (any order, unique by key) into full blocks, each starting at its lowest key.
pub fn pack(mut entries: Vec<Entry>, block: usize) -> Vec<Block> {
    entries.sort_by_key(Entry::key);
    entries.chunks(block.max(1)).map(|chunk| Block { lo: chunk[0].key(), entries: chunk.to_vec() }).collect()
}

/// The block rows a window backend stores.
pub trait BlockStore {
    type Error;
    /// Blocks whose `lo` is strictly below `below`, newest (highest `lo`) first, at most `limit`.
    fn blocks_below(&self, below: SortKey, limit: usize) -> Result<Vec<Block>, Self::Error>;
    /// Writes the block (a new one, or a new content for its `lo`).
    fn put_block(&mut self, block: &Block) -> Result<(), Self::Error>;
    fn delete_block(&mut self, lo: SortKey) -> Result<(), Self::Error>;
}

/// The blocks one write op works on (see the module docs).
#[derive(Debug, Default)]
pub struct Working {
    blocks: BTreeMap<SortKey, Vec<Entry>>,
    /// Every stored block with `lo` at or above this is loaded (`None`: none loaded yet).
    loaded_to: Option<SortKey>,
    /// Every stored block is loaded.
    all: bool,
    changed: BTreeSet<SortKey>,
    deleted: BTreeSet<SortKey>,
    /// A block was made, or one that is not the newest grew: the trim must look.
    grew: bool,
}

impl Working {
    /// Loads blocks from the newest down until the one that would hold `key` is loaded.
    fn load_to<S: BlockStore>(&mut self, store: &S, key: SortKey) -> Result<(), S::Error> {
        while !self.all && self.loaded_to.is_none_or(|lo| lo > key) {
            let below = self.loaded_to.unwrap_or(SortKey::TOP);
            match store.blocks_below(below, 1)?.pop() {
                Some(block) => {
                    self.loaded_to = Some(block.lo);
                    self.blocks.entry(block.lo).or_insert(block.entries);
                }
                None => self.all = true,
            }
        }
        Ok(())
    }

    fn load_all<S: BlockStore>(&mut self, store: &S) -> Result<(), S::Error> {
        if !self.all {
            let below = self.loaded_to.unwrap_or(SortKey::TOP);
            for block in store.blocks_below(below, usize::MAX)? {
                self.blocks.entry(block.lo).or_insert(block.entries);
            }
            self.all = true;
        }
        Ok(())
    }

    /// The `lo` of the block that holds (or would hold) `key`.
    fn block_of<S: BlockStore>(&mut self, store: &S, key: SortKey) -> Result<Option<SortKey>, S::Error> {
        self.load_to(store, key)?;
        Ok(self.blocks.range(..=key).next_back().map(|(lo, _)| *lo))
    }

    /// The entry with this key (the post's), if the window holds it.
    pub fn find<S: BlockStore>(&mut self, store: &S, key: SortKey) -> Result<Option<Entry>, S::Error> {
        let Some(lo) = self.block_of(store, key)? else { return Ok(None) };
        let entries = &self.blocks[&lo];
        Ok(entries.binary_search_by_key(&key, Entry::key).ok().map(|i| entries[i]))
    }

    /// Sets the version of the entry with this key, if there is one.
    pub fn set_version<S: BlockStore>(
        &mut self,
        store: &S,
        key: SortKey,
        version: i64,
    ) -> Result<(), S::Error> {
        let Some(lo) = self.block_of(store, key)? else { return Ok(()) };
        let entries = self.blocks.get_mut(&lo).into_iter().flatten();
        if let Some(entry) = entries.into_iter().find(|e| e.key() == key) {
            entry.version = version;
            self.changed.insert(lo);
        }
        Ok(())
    }

    /// Inserts an entry whose key is not in the window (callers look first).
    pub fn insert<S: BlockStore>(&mut self, store: &S, entry: Entry, block: usize) -> Result<(), S::Error> {
        let key = entry.key();
        let newest = |w: &Self| w.blocks.keys().next_back().copied();
        let Some(lo) = self.block_of(store, key)? else {
            self.start(key, vec![entry]);
            return Ok(());
        };
        let is_newest = newest(self) == Some(lo);
        // `block_of` names a loaded block; a block of its own is a valid home regardless.
        let Some(entries) = self.blocks.get_mut(&lo) else {
            self.start(key, vec![entry]);
            return Ok(());
        };
        let at = entries.partition_point(|e| e.key() < key);
        if entries.len() < block.max(1) {
            entries.insert(at, entry);
            self.changed.insert(lo);
            self.grew |= !is_newest;
        } else if at == entries.len() {
            self.start(key, vec![entry]);
        } else {
            entries.insert(at, entry);
            let upper = entries.split_off(entries.len() / 2);
            self.changed.insert(lo);
            self.start(upper[0].key(), upper);
        }
        Ok(())
    }

    fn start(&mut self, lo: SortKey, entries: Vec<Entry>) {
        self.blocks.insert(lo, entries);
        self.changed.insert(lo);
        self.grew = true;
    }

    /// Deletes the entries `gone` picks from one loaded block; returns how many.
    fn delete_in(&mut self, lo: SortKey, gone: impl Fn(&Entry) -> bool) -> usize {
        let Some(entries) = self.blocks.get_mut(&lo) else { return 0 };
        let before = entries.len();
        entries.retain(|e| !gone(e));
        let deleted = before - entries.len();
        if entries.is_empty() {
            self.blocks.remove(&lo);
            self.changed.remove(&lo);
            self.deleted.insert(lo);
        } else if deleted > 0 {
            self.changed.insert(lo);
        }
        deleted
    }

    /// Deletes the entry with this key; returns how many were deleted (0 or 1).
    pub fn delete_key<S: BlockStore>(&mut self, store: &S, key: SortKey) -> Result<usize, S::Error> {
        let Some(lo) = self.block_of(store, key)? else { return Ok(0) };
        Ok(self.delete_in(lo, |e| e.key() == key))
    }

    /// Deletes every entry `gone` picks, looking through the whole window (an author's
    /// entries, a post known only by id, everything below a key); returns how many.
    pub fn delete_where<S: BlockStore>(
        &mut self,
        store: &S,
        gone: impl Fn(&Entry) -> bool,
    ) -> Result<usize, S::Error> {
        self.load_all(store)?;
        let los: Vec<SortKey> = self.blocks.keys().copied().collect();
        Ok(los.into_iter().map(|lo| self.delete_in(lo, &gone)).sum())
    }

    /// Keeps at least `max(cap, 1)` entries by dropping whole oldest blocks; returns the lowest
    /// kept block's `lo` if any were dropped: every entry the window was given at or above it
    /// is still there (it was in that block or a newer one), so it can become the floor.
    ///
    /// Bounds (`B` the block size, `cap' = max(cap, 1)`): it looks only when this op made a
    /// block or grew one other than the newest, and then leaves fewer than `cap' + B` entries
    /// (it drops the oldest block while the rest still hold `cap'`); between two looks only the
    /// newest block grows, by at most `B - 1`. So a window holds at most `cap' + 2B - 2` entries,
    /// and one that a trim dropped blocks from holds at least `cap'` (exactly `cap'` at `B = 1`).
    pub fn trim<S: BlockStore>(&mut self, store: &S, cap: usize) -> Result<Option<SortKey>, S::Error> {
        if !self.grew {
            return Ok(None);
        }
        self.load_all(store)?;
        let mut total: usize = self.blocks.values().map(Vec::len).sum();
        let mut dropped = false;
        while self.blocks.len() > 1 {
            let Some((&lo, oldest)) = self.blocks.first_key_value() else { break };
            if total - oldest.len() < cap.max(1) {
                break;
            }
            total -= oldest.len();
            self.blocks.remove(&lo);
            self.changed.remove(&lo);
            self.deleted.insert(lo);
            dropped = true;
        }
        Ok(dropped.then(|| self.blocks.keys().next().copied()).flatten())
    }

    /// Writes back what the op changed: one row per block changed or deleted.
    pub fn flush<S: BlockStore>(self, store: &mut S) -> Result<(), S::Error> {
        for lo in &self.deleted {
            if !self.blocks.contains_key(lo) {
                store.delete_block(*lo)?;
            }
        }
        for lo in &self.changed {
            if let Some(entries) = self.blocks.get(lo) {
                store.put_block(&Block { lo: *lo, entries: entries.clone() })?;
            }
        }
        Ok(())
    }
}

/// Entries with `key < upper` that `keep` accepts, newest first, at most `limit`, read block by
/// block from the newest down and no further than `stop` (no block below it can hold one).
pub fn scan_down<S: BlockStore>(
    store: &S,
    upper: SortKey,
    stop: SortKey,
    limit: usize,
    keep: impl Fn(SortKey) -> bool,
) -> Result<Vec<Entry>, S::Error> {
    let mut out = Vec::new();
    let mut below = upper;
    while out.len() < limit {
        let Some(block) = store.blocks_below(below, 1)?.pop() else { break };
        let fits = block.entries.iter().rev().filter(|e| e.key() < upper && keep(e.key()));
        out.extend(fits.take(limit - out.len()));
        if block.lo <= stop {
            break;
        }
        below = block.lo;
    }
    Ok(out)
}
