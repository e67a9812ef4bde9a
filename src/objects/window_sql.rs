//! SQLite storage of the TimelineWindow Durable Object: the [`WindowStorage`] primitives over
//! the object's own `ctx.storage.sql`, plus its versioned schema. The rules themselves live in
//! `domain::window` (the packing of entries in blocks too); nothing here decides what to keep.
//!
//! Schema versions: a one-row `schema_version` table records how far the schema has been
//! migrated, and [`migrate`] runs the missing steps in order. Version 1 is the schema the
//! object had before versioning, written with `IF NOT EXISTS`, so an object created by the
//! older code (tables present, no version row) migrates to version 1 without touching data.
//! Durable Object SQL rejects `BEGIN`/`SAVEPOINT`, so every step must stay idempotent: a step
//! that fails half-way is simply run again by the next instance (version 5's move of the
//! entries into blocks is built to be run again from any point, see [`repack_entries`]).
//!
//! Each op's statements, and the rows their cursors count as read and written (what Durable
//! Object SQLite bills: every row scanned, every row and index entry written or deleted), are
//! summed for the cost profile. Every cursor is drained: workerd cannot commit while a
//! statement is still in progress (`SQLITE_BUSY`).

use serde::de::IgnoredAny;
use serde::Deserialize;
use std::cell::Cell;

use worker::{Error, Result, SqlCursor, SqlStorage, SqlStorageValue};

use crate::domain::activity::Activity;
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};
use crate::domain::window::{self, block_size, Block, BlockStore, Entry, WindowStorage};

/// Version 1: the window's entries (unique by post id, indexed in feed order and by author)
/// and the one-row `meta` table holding the floor, present once initialized.
const SCHEMA_V1: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS entries (post_id INTEGER PRIMARY KEY, created_at INTEGER NOT NULL, \
     author_id INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS entries_order ON entries (created_at DESC, post_id DESC)",
    "CREATE INDEX IF NOT EXISTS entries_author ON entries (author_id)",
    "CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 1), floor_primary INTEGER NOT NULL, \
     floor_id INTEGER NOT NULL)",
];

/// Version 2: events applied by version, not arrival order. Entries carry the post's state
/// version; removed posts leave a tombstone (with their key, so trims can drop it below the
/// floor); reader-scoped events leave a per-author mark of the newest event applied.
const SCHEMA_V2: &[&str] = &[
    "ALTER TABLE entries ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
    "CREATE TABLE IF NOT EXISTS tombstones (post_id INTEGER PRIMARY KEY, created_at INTEGER NOT NULL, \
     version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS author_marks (author_id INTEGER PRIMARY KEY, event INTEGER NOT NULL)",
];

/// Version 3: the reader's feed-read activity (one row), for the hybrid fan-out policy.
const SCHEMA_V3: &[&str] =
    &["CREATE TABLE IF NOT EXISTS reader_activity (id INTEGER PRIMARY KEY CHECK (id = 1), \
     activity TEXT NOT NULL)"];

/// Version 4: the live-feed tickets this reader's object accepted (each works once), kept
/// until they expire.
const SCHEMA_V4: &[&str] =
    &["CREATE TABLE IF NOT EXISTS live_tickets (nonce INTEGER PRIMARY KEY, expires_at INTEGER NOT NULL)"];

/// Version 5: entries packed in blocks (`domain::window`'s blocks), one row per block keyed by
/// its lower bound, without a rowid or any index: a delivery rewrites one row where version 4
/// inserted a row with two index entries and trimmed another (about 7 rows written and, with
/// its count and offset over the whole window, 1,600 read). Version 4's entry rows move into
/// blocks ([`repack_entries`]).
const SCHEMA_V5: &[&str] = &["CREATE TABLE IF NOT EXISTS blocks (lo_primary INTEGER NOT NULL, \
     lo_id INTEGER NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (lo_primary, lo_id)) WITHOUT ROWID"];

/// One migration step: its statements, then its code (a step that moves data).
struct Step {
    statements: &'static [&'static str],
    then: Option<fn(&SqlStorage) -> Result<()>>,
}

const fn sql_only(statements: &'static [&'static str]) -> Step {
    Step { statements, then: None }
}

/// `MIGRATIONS[i]` takes the schema from version `i` to version `i + 1`.
const MIGRATIONS: &[Step] = &[
    sql_only(SCHEMA_V1),
    sql_only(SCHEMA_V2),
    sql_only(SCHEMA_V3),
    sql_only(SCHEMA_V4),
    Step { statements: SCHEMA_V5, then: Some(repack_entries) },
];

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Version 4's entry rows, as that version made them (versions 1 and 2), for the move into
/// blocks and for the test hook that puts a window back into that layout.
const V4_ENTRIES: &str = "CREATE TABLE IF NOT EXISTS entries (post_id INTEGER PRIMARY KEY, \
     created_at INTEGER NOT NULL, author_id INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 0)";
const V4_INDEXES: &[&str] = &[SCHEMA_V1[1], SCHEMA_V1[2]];

/// Version 4's rows are packed in blocks of the default cap's size (`FEED_WINDOW` 800). Any
/// size is valid later: a write splits or starts blocks by the cap it carries.
const REPACK_CAP: usize = 800;

const PUT_BLOCK: &str = "INSERT INTO blocks (lo_primary, lo_id, entries) VALUES (?, ?, ?) \
     ON CONFLICT (lo_primary, lo_id) DO UPDATE SET entries = excluded.entries";

#[derive(Deserialize)]
struct VersionRow {
    version: i64,
}

#[derive(Deserialize)]
struct FloorRow {
    floor_primary: i64,
    floor_id: i64,
}

#[derive(Deserialize)]
struct ActivityRow {
    activity: String,
}

#[derive(Deserialize)]
struct VersionOf {
    version: i64,
}

#[derive(Deserialize)]
struct EntryRow {
    created_at: i64,
    post_id: i64,
    author_id: i64,
    version: i64,
}

fn int(value: i64) -> SqlStorageValue {
    SqlStorageValue::Integer(value)
}

/// Limits are `usize` in Rust and `INTEGER` in SQL; anything beyond i64 means "all".
fn int_usize(value: usize) -> SqlStorageValue {
    int(i64::try_from(value).unwrap_or(i64::MAX))
}

fn key_bindings(key: SortKey) -> [SqlStorageValue; 2] {
    [int(key.primary), int(key.id)]
}

fn block_bindings(block: &Block) -> Vec<SqlStorageValue> {
    vec![int(block.lo.primary), int(block.lo.id), SqlStorageValue::Blob(block.encode())]
}

/// Brings the schema up to [`SCHEMA_VERSION`]; returns the version it found. Refuses a schema
/// newer than this code (a rollback), rather than guessing at its meaning. Also makes the whole
/// schema again on the empty database an idle window's deletion leaves (`domain::idle`).
pub fn migrate(sql: &SqlStorage) -> Result<i64> {
    sql.exec(
        "CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), \
         version INTEGER NOT NULL)",
        None,
    )?;
    let found = stored_version(sql)?;
    if found > SCHEMA_VERSION {
        return Err(Error::RustError(format!(
            "timeline window schema is version {found}, newer than this code's {SCHEMA_VERSION}"
        )));
    }
    for (from, step) in MIGRATIONS.iter().enumerate().skip(usize::try_from(found).unwrap_or(0)) {
        for statement in step.statements {
            sql.exec(statement, None)?;
        }
        if let Some(then) = step.then {
            then(sql)?;
        }
        set_version(sql, from as i64 + 1)?;
    }
    Ok(found)
}

/// Version 5's move: version 4's entry rows into blocks, then the rows (and their indexes)
/// dropped. It relies on no transaction: run again from any point it ends the same way, since
/// a set of entries always packs into the same blocks, written by upsert, and the entry rows go
/// only after every block is written (a run after the drop finds no rows and writes nothing).
/// Nothing else runs meanwhile: the object serves no op until its schema is migrated.
fn repack_entries(sql: &SqlStorage) -> Result<()> {
    sql.exec(V4_ENTRIES, None)?;
    let rows: Vec<EntryRow> =
        sql.exec("SELECT created_at, post_id, author_id, version FROM entries", None)?.to_array()?;
    let entries = rows.into_iter().map(|r| Entry {
        created_at: r.created_at,
        post_id: PostId::from_trusted(r.post_id),
        author_id: UserId::from_trusted(r.author_id),
        version: r.version,
    });
    for block in window::pack(entries.collect(), block_size(REPACK_CAP)) {
        sql.exec(PUT_BLOCK, block_bindings(&block))?;
    }
    sql.exec("DROP TABLE entries", None)?;
    Ok(())
}

/// Test hook: puts the window back into version 4's layout (one row per entry, its two
/// indexes, no blocks) and records version 4, as an object last written by that code would be;
/// the next [`migrate`] moves it forward. Returns how many entries it wrote.
pub fn back_to_v4(sql: &SqlStorage) -> Result<usize> {
    let entries = window::older(&SqlWindow::new(sql), SortKey::TOP, SortKey::BOTTOM, usize::MAX)?;
    sql.exec(V4_ENTRIES, None)?;
    for statement in V4_INDEXES {
        sql.exec(statement, None)?;
    }
    for e in &entries {
        sql.exec(
            "INSERT INTO entries (post_id, created_at, author_id, version) VALUES (?, ?, ?, ?)",
            vec![int(e.post_id.get()), int(e.created_at), int(e.author_id.get()), int(e.version)],
        )?;
    }
    sql.exec("DROP TABLE blocks", None)?;
    set_version(sql, 4)?;
    Ok(entries.len())
}

/// The recorded schema version; 0 when none is recorded (a new object, or one created before
/// versioning, whose tables version 1's `IF NOT EXISTS` statements leave as they are).
fn stored_version(sql: &SqlStorage) -> Result<i64> {
    let rows: Vec<VersionRow> =
        sql.exec("SELECT version FROM schema_version WHERE id = 1", None)?.to_array()?;
    Ok(rows.first().map_or(0, |row| row.version))
}

fn set_version(sql: &SqlStorage, version: i64) -> Result<()> {
    sql.exec(
        "INSERT INTO schema_version (id, version) VALUES (1, ?) \
         ON CONFLICT (id) DO UPDATE SET version = excluded.version",
        vec![int(version)],
    )?;
    Ok(())
}

/// Records a live ticket as used; `false` if it was used before. Expired ones are dropped
/// first (an expired ticket is refused before it gets here, so forgetting it is safe).
pub fn use_ticket(sql: &SqlStorage, nonce: i64, expires_at: i64, now: i64) -> Result<bool> {
    sql.exec("DELETE FROM live_tickets WHERE expires_at <= ?", vec![int(now)])?;
    let rows: Vec<IgnoredAny> = sql
        .exec(
            "INSERT OR IGNORE INTO live_tickets (nonce, expires_at) VALUES (?, ?) RETURNING nonce",
            vec![int(nonce), int(expires_at)],
        )?
        .to_array()?;
    Ok(!rows.is_empty())
}

/// When the last live ticket this object remembers expires (seconds), if it remembers any.
pub fn tickets_until(sql: &SqlStorage) -> Result<Option<i64>> {
    #[derive(Deserialize)]
    struct Row {
        until: Option<i64>,
    }
    let rows: Vec<Row> = sql.exec("SELECT MAX(expires_at) AS until FROM live_tickets", None)?.to_array()?;
    Ok(rows.first().and_then(|row| row.until))
}

/// One window's storage, borrowed for the duration of one op.
pub struct SqlWindow<'a> {
    sql: &'a SqlStorage,
    /// Statements run so far, and the rows they read and wrote as their cursors count them
    /// (the fan-out's per-delivery profile and the feed read's per-page one report them).
    statements: Cell<usize>,
    rows_read: Cell<usize>,
    rows_written: Cell<usize>,
    /// The object's in-memory copy of the reader's activity, newer than the stored row by the
    /// reads that wrote nothing (`domain::activity`), when the op runs in an object.
    memory: Option<&'a Cell<Option<Activity>>>,
}

impl<'a> SqlWindow<'a> {
    /// Expects [`migrate`] to have succeeded on `sql`.
    pub fn new(sql: &'a SqlStorage) -> Self {
        let zero = || Cell::new(0);
        Self { sql, statements: zero(), rows_read: zero(), rows_written: zero(), memory: None }
    }

    /// The storage of an object that keeps the reader's activity in `memory` between writes.
    pub fn with_memory(sql: &'a SqlStorage, memory: &'a Cell<Option<Activity>>) -> Self {
        Self { memory: Some(memory), ..Self::new(sql) }
    }

    /// The reader's activity as stored, ignoring the memory (the idle check of a cold object).
    pub fn stored_activity(&self) -> Result<Option<Activity>> {
        let rows: Vec<ActivityRow> = self.rows("SELECT activity FROM reader_activity WHERE id = 1", None)?;
        // An unreadable row (a format this code does not know) counts as no history.
        Ok(rows.first().and_then(|row| serde_json::from_str(&row.activity).ok()))
    }

    /// `(statements, rows read, rows written)` so far.
    pub fn profile(&self) -> (usize, usize, usize) {
        (self.statements.get(), self.rows_read.get(), self.rows_written.get())
    }

    /// Runs one statement to its end and counts it; returns its rows. Draining the cursor is
    /// what makes its counts final.
    fn rows<T: serde::de::DeserializeOwned>(
        &self,
        statement: &str,
        bindings: impl Into<Option<Vec<SqlStorageValue>>>,
    ) -> Result<Vec<T>> {
        let cursor = self.sql.exec(statement, bindings)?;
        let rows = cursor.to_array()?;
        self.tally(&cursor);
        Ok(rows)
    }

    fn tally(&self, cursor: &SqlCursor) {
        self.statements.set(self.statements.get() + 1);
        self.rows_read.set(self.rows_read.get() + cursor.rows_read());
        self.rows_written.set(self.rows_written.get() + cursor.rows_written());
    }

    /// Runs a statement whose rows do not matter.
    fn run(&self, statement: &str, bindings: impl Into<Option<Vec<SqlStorageValue>>>) -> Result<()> {
        self.rows::<IgnoredAny>(statement, bindings).map(drop)
    }

    /// The `version` column of the row `statement` selects by one id, if there is one.
    fn one_version(&self, statement: &str, id: i64) -> Result<Option<i64>> {
        let rows: Vec<VersionOf> = self.rows(statement, vec![int(id)])?;
        Ok(rows.first().map(|row| row.version))
    }
}

/// A block from its row (`lo_primary`, `lo_id`, `entries`).
fn block_of_row(row: &[SqlStorageValue]) -> Result<Block> {
    let bad = || Error::RustError("timeline window: a block row this code cannot read".into());
    let [SqlStorageValue::Integer(primary), SqlStorageValue::Integer(id), SqlStorageValue::Blob(bytes)] = row
    else {
        return Err(bad());
    };
    Block::decode(SortKey::new(*primary, *id), bytes).ok_or_else(bad)
}

impl BlockStore for SqlWindow<'_> {
    type Error = Error;

    fn blocks_below(&self, below: SortKey, limit: usize) -> Result<Vec<Block>> {
        let mut bindings = Vec::from(key_bindings(below));
        bindings.push(int_usize(limit));
        let cursor = self.sql.exec(
            "SELECT lo_primary, lo_id, entries FROM blocks WHERE (lo_primary, lo_id) < (?, ?) \
             ORDER BY lo_primary DESC, lo_id DESC LIMIT ?",
            bindings,
        )?;
        let blocks = cursor.raw().map(|row| block_of_row(&row?)).collect::<Result<Vec<Block>>>()?;
        self.tally(&cursor);
        Ok(blocks)
    }

    fn put_block(&mut self, block: &Block) -> Result<()> {
        self.run(PUT_BLOCK, block_bindings(block))
    }

    fn delete_block(&mut self, lo: SortKey) -> Result<()> {
        self.run("DELETE FROM blocks WHERE lo_primary = ? AND lo_id = ?", Vec::from(key_bindings(lo)))
    }
}

impl WindowStorage for SqlWindow<'_> {
    fn floor(&self) -> Result<Option<SortKey>> {
        let rows: Vec<FloorRow> = self.rows("SELECT floor_primary, floor_id FROM meta WHERE id = 1", None)?;
        Ok(rows.first().map(|row| SortKey::new(row.floor_primary, row.floor_id)))
    }

    fn set_floor(&mut self, floor: SortKey) -> Result<()> {
        self.run(
            "INSERT INTO meta (id, floor_primary, floor_id) VALUES (1, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET floor_primary = excluded.floor_primary, floor_id = excluded.floor_id",
            Vec::from(key_bindings(floor)),
        )
    }

    fn tombstone(&self, post_id: PostId) -> Result<Option<i64>> {
        self.one_version("SELECT version FROM tombstones WHERE post_id = ?", post_id.get())
    }

    fn put_tombstone(&mut self, post_id: PostId, key: SortKey, version: i64) -> Result<()> {
        self.run(
            "INSERT INTO tombstones (post_id, created_at, version) VALUES (?, ?, ?) \
             ON CONFLICT (post_id) DO UPDATE SET version = MAX(version, excluded.version)",
            vec![int(post_id.get()), int(key.primary), int(version)],
        )
    }

    fn delete_tombstones_below(&mut self, key: SortKey) -> Result<()> {
        self.run("DELETE FROM tombstones WHERE (created_at, post_id) < (?, ?)", Vec::from(key_bindings(key)))
    }

    fn author_mark(&self, author_id: UserId) -> Result<Option<i64>> {
        self.one_version("SELECT event AS version FROM author_marks WHERE author_id = ?", author_id.get())
    }

    fn set_author_mark(&mut self, author_id: UserId, event: i64) -> Result<()> {
        self.run(
            "INSERT INTO author_marks (author_id, event) VALUES (?, ?) \
             ON CONFLICT (author_id) DO UPDATE SET event = excluded.event",
            vec![int(author_id.get()), int(event)],
        )
    }

    fn activity(&self) -> Result<Option<Activity>> {
        if let Some(kept) = self.memory.and_then(Cell::get) {
            return Ok(Some(kept));
        }
        let stored = self.stored_activity()?;
        if let Some(memory) = self.memory {
            memory.set(stored);
        }
        Ok(stored)
    }

    fn set_activity(&mut self, activity: &Activity) -> Result<()> {
        let json = serde_json::to_string(activity).map_err(|e| Error::RustError(e.to_string()))?;
        self.run(
            "INSERT INTO reader_activity (id, activity) VALUES (1, ?) \
             ON CONFLICT (id) DO UPDATE SET activity = excluded.activity",
            vec![SqlStorageValue::String(json)],
        )?;
        if let Some(memory) = self.memory {
            memory.set(Some(*activity));
        }
        Ok(())
    }

    fn keep_activity(&mut self, activity: &Activity) -> Result<()> {
        match self.memory {
            Some(memory) => {
                memory.set(Some(*activity));
                Ok(())
            }
            None => self.set_activity(activity),
        }
    }
}
