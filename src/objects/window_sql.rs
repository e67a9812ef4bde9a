//! SQLite storage of the TimelineWindow Durable Object: the [`WindowStorage`] primitives over
//! the object's own `ctx.storage.sql`, plus its versioned schema. The rules themselves live in
//! `domain::window`; nothing here decides what to keep.
//!
//! Schema versions: a one-row `schema_version` table records how far the schema has been
//! migrated, and [`migrate`] runs the missing steps in order. Version 1 is the schema the
//! object had before versioning, written with `IF NOT EXISTS`, so an object created by the
//! older code (tables present, no version row) migrates to version 1 without touching data.
//! Durable Object SQL rejects `BEGIN`/`SAVEPOINT`, so every step must stay idempotent: a step
//! that fails half-way is simply run again by the next instance.
//!
//! Counts come from `RETURNING` rows rather than `rows_written()`, which is a billing metric
//! that also counts index writes (one insert here reports 3); that metric (with `rows_read()`)
//! is summed per op for the cost profile. Every cursor is drained: workerd cannot commit while
//! a statement is still in progress (`SQLITE_BUSY`).

use serde::de::IgnoredAny;
use serde::Deserialize;
use std::cell::Cell;

use worker::{Error, Result, SqlCursor, SqlStorage, SqlStorageValue};

use crate::domain::activity::Activity;
use crate::domain::cursor::SortKey;
use crate::domain::ids::{PostId, UserId};
use crate::domain::window::{Entry, WindowStorage};

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

/// `MIGRATIONS[i]` takes the schema from version `i` to version `i + 1`.
const MIGRATIONS: &[&[&str]] = &[SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4];

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

const ENTRY_COLUMNS: &str = "SELECT created_at, post_id, author_id, version FROM entries";

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
struct CountRow {
    n: i64,
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
struct KeyRow {
    created_at: i64,
    post_id: i64,
}

fn int(value: i64) -> SqlStorageValue {
    SqlStorageValue::Integer(value)
}

/// Limits and offsets are `usize` in Rust and `INTEGER` in SQL; anything beyond i64 means "all".
fn int_usize(value: usize) -> SqlStorageValue {
    int(i64::try_from(value).unwrap_or(i64::MAX))
}

fn key_bindings(key: SortKey) -> [SqlStorageValue; 2] {
    [int(key.primary), int(key.id)]
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
        for statement in *step {
            sql.exec(statement, None)?;
        }
        set_version(sql, from as i64 + 1)?;
    }
    Ok(found)
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
}

impl<'a> SqlWindow<'a> {
    /// Expects [`migrate`] to have succeeded on `sql`.
    pub fn new(sql: &'a SqlStorage) -> Self {
        Self { sql, statements: Cell::new(0), rows_read: Cell::new(0), rows_written: Cell::new(0) }
    }

    /// `(statements, rows read, rows written)` so far.
    pub fn profile(&self) -> (usize, usize, usize) {
        (self.statements.get(), self.rows_read.get(), self.rows_written.get())
    }

    /// Runs one statement to its end and counts it; returns its rows. Draining the cursor is
    /// what makes its counts final (and workerd cannot commit while a statement is still in
    /// progress).
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

    /// Runs a statement with a `RETURNING post_id` clause; returns how many rows it touched.
    fn returned_rows(&self, statement: &str, bindings: Vec<SqlStorageValue>) -> Result<usize> {
        // Only the number of rows matters: one per row inserted or deleted.
        Ok(self.rows::<IgnoredAny>(statement, bindings)?.len())
    }

    /// The `version` column of the row `statement` selects by one id, if there is one.
    fn one_version(&self, statement: &str, id: i64) -> Result<Option<i64>> {
        let rows: Vec<VersionOf> = self.rows(statement, vec![int(id)])?;
        Ok(rows.first().map(|row| row.version))
    }

    /// Entries matching `condition` (two key bounds), newest first, at most `limit`.
    fn select(&self, condition: &str, key: SortKey, floor: SortKey, limit: usize) -> Result<Vec<Entry>> {
        let statement =
            format!("{ENTRY_COLUMNS} WHERE {condition} ORDER BY created_at DESC, post_id DESC LIMIT ?");
        let mut bindings = Vec::from(key_bindings(key));
        bindings.extend(key_bindings(floor));
        bindings.push(int_usize(limit));
        self.rows(&statement, bindings)
    }
}

impl WindowStorage for SqlWindow<'_> {
    type Error = Error;

    fn floor(&self) -> Result<Option<SortKey>> {
        let rows: Vec<FloorRow> = self.rows("SELECT floor_primary, floor_id FROM meta WHERE id = 1", None)?;
        Ok(rows.first().map(|row| SortKey::new(row.floor_primary, row.floor_id)))
    }

    fn set_floor(&mut self, floor: SortKey) -> Result<()> {
        self.run(
            "INSERT INTO meta (id, floor_primary, floor_id) VALUES (1, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET floor_primary = excluded.floor_primary, floor_id = excluded.floor_id",
            Vec::from(key_bindings(floor)),
        )?;
        Ok(())
    }

    fn insert_if_absent(&mut self, entry: &Entry) -> Result<bool> {
        let inserted = self.returned_rows(
            "INSERT OR IGNORE INTO entries (post_id, created_at, author_id, version) VALUES (?, ?, ?, ?) \
             RETURNING post_id",
            vec![
                int(entry.post_id.get()),
                int(entry.created_at),
                int(entry.author_id.get()),
                int(entry.version),
            ],
        )?;
        Ok(inserted > 0)
    }

    fn count(&self) -> Result<usize> {
        let rows: Vec<CountRow> = self.rows("SELECT COUNT(*) AS n FROM entries", None)?;
        Ok(rows.first().map_or(0, |row| usize::try_from(row.n).unwrap_or(0)))
    }

    fn nth_newest_key(&self, n: usize) -> Result<Option<SortKey>> {
        let rows: Vec<KeyRow> = self.rows(
            "SELECT created_at, post_id FROM entries ORDER BY created_at DESC, post_id DESC LIMIT 1 OFFSET ?",
            vec![int_usize(n)],
        )?;
        Ok(rows.first().map(|row| SortKey::new(row.created_at, row.post_id)))
    }

    fn delete_below(&mut self, key: SortKey) -> Result<()> {
        for table in ["entries", "tombstones"] {
            let statement = format!("DELETE FROM {table} WHERE (created_at, post_id) < (?, ?)");
            self.run(&statement, Vec::from(key_bindings(key)))?;
        }
        Ok(())
    }

    fn older(&self, before: SortKey, floor: SortKey, limit: usize) -> Result<Vec<Entry>> {
        self.select(
            "(created_at, post_id) < (?, ?) AND (created_at, post_id) >= (?, ?)",
            before,
            floor,
            limit,
        )
    }

    fn newer(&self, after: SortKey, floor: SortKey, limit: usize) -> Result<Vec<Entry>> {
        self.select("(created_at, post_id) > (?, ?) AND (created_at, post_id) >= (?, ?)", after, floor, limit)
    }

    fn delete_post(&mut self, post_id: PostId) -> Result<usize> {
        self.returned_rows(
            "DELETE FROM entries WHERE post_id = ? RETURNING post_id",
            vec![int(post_id.get())],
        )
    }

    fn delete_author(&mut self, author_id: UserId) -> Result<usize> {
        self.returned_rows(
            "DELETE FROM entries WHERE author_id = ? RETURNING post_id",
            vec![int(author_id.get())],
        )
    }

    fn version_of(&self, post_id: PostId) -> Result<Option<i64>> {
        self.one_version("SELECT version FROM entries WHERE post_id = ?", post_id.get())
    }

    fn set_version(&mut self, post_id: PostId, version: i64) -> Result<()> {
        self.run("UPDATE entries SET version = ? WHERE post_id = ?", vec![int(version), int(post_id.get())])?;
        Ok(())
    }

    fn tombstone(&self, post_id: PostId) -> Result<Option<i64>> {
        self.one_version("SELECT version FROM tombstones WHERE post_id = ?", post_id.get())
    }

    fn put_tombstone(&mut self, post_id: PostId, key: SortKey, version: i64) -> Result<()> {
        self.run(
            "INSERT INTO tombstones (post_id, created_at, version) VALUES (?, ?, ?) \
             ON CONFLICT (post_id) DO UPDATE SET version = MAX(version, excluded.version)",
            vec![int(post_id.get()), int(key.primary), int(version)],
        )?;
        Ok(())
    }

    fn author_mark(&self, author_id: UserId) -> Result<Option<i64>> {
        self.one_version("SELECT event AS version FROM author_marks WHERE author_id = ?", author_id.get())
    }

    fn activity(&self) -> Result<Option<Activity>> {
        let rows: Vec<ActivityRow> = self.rows("SELECT activity FROM reader_activity WHERE id = 1", None)?;
        // An unreadable row (a format this code does not know) counts as no history.
        Ok(rows.first().and_then(|row| serde_json::from_str(&row.activity).ok()))
    }

    fn set_activity(&mut self, activity: &Activity) -> Result<()> {
        let json = serde_json::to_string(activity).map_err(|e| Error::RustError(e.to_string()))?;
        self.run(
            "INSERT INTO reader_activity (id, activity) VALUES (1, ?) \
             ON CONFLICT (id) DO UPDATE SET activity = excluded.activity",
            vec![SqlStorageValue::String(json)],
        )?;
        Ok(())
    }

    fn set_author_mark(&mut self, author_id: UserId, event: i64) -> Result<()> {
        self.run(
            "INSERT INTO author_marks (author_id, event) VALUES (?, ?) \
             ON CONFLICT (author_id) DO UPDATE SET event = excluded.event",
            vec![int(author_id.get()), int(event)],
        )?;
        Ok(())
    }
}
