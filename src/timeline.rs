//! TimelineWindow Durable Object: one per reader, a capped index of the post ids in that
//! reader's home feed, ordered by `(created_at DESC, post_id DESC)`. It never holds bodies.
//!
//! Invariant: once initialized, the window holds every delivered post whose key is at or above
//! its `floor`; anything older is served by the D1 pull path. Trimming to the cap raises the
//! floor to the oldest kept key, so the invariant survives trims, and a late delivery below the
//! floor is dropped (the pull path already covers it). Entries are unique by post id, so a
//! redelivered event is a no-op. Each operation runs without awaiting, so it is atomic.

use serde::{Deserialize, Serialize};
use worker::{
    durable_object, DurableObject, Env, ObjectNamespace, Request, Response, Result, SqlStorage,
    SqlStorageValue, State,
};

use crate::domain::cursor::SortKey;
use crate::error::ApiResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub created_at: i64,
    pub post_id: i64,
    pub author_id: i64,
}

impl Entry {
    pub fn key(&self) -> SortKey {
        SortKey::new(self.created_at, self.post_id)
    }
}

/// Operations, sent as JSON to the object.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum WindowOp {
    /// Add entries (fan-out or follow backfill); trims to `cap`.
    Deliver {
        entries: Vec<Entry>,
        cap: usize,
    },
    /// First build from D1; `complete` when the snapshot holds every candidate there is.
    Init {
        entries: Vec<Entry>,
        complete: bool,
        cap: usize,
    },
    /// Entries strictly older than `before`, newest first.
    Older {
        before: SortKey,
        limit: usize,
    },
    /// Entries strictly newer than `after`, newest first.
    Newer {
        after: SortKey,
        limit: usize,
    },
    RemovePost {
        post_id: i64,
    },
    RemoveAuthor {
        author_id: i64,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WindowReply {
    pub initialized: bool,
    /// Lowest key the window is complete down to (meaningful once initialized).
    pub floor: Option<SortKey>,
    pub entries: Vec<Entry>,
    pub changed: usize,
}

#[durable_object]
pub struct TimelineWindow {
    sql: SqlStorage,
}

#[derive(Deserialize)]
struct MetaRow {
    floor_primary: i64,
    floor_id: i64,
}

#[derive(Deserialize)]
struct CountRow {
    n: i64,
}

fn int(v: i64) -> SqlStorageValue {
    SqlStorageValue::Integer(v)
}

impl TimelineWindow {
    fn migrate(&self) -> Result<()> {
        self.sql.exec(
            "CREATE TABLE IF NOT EXISTS entries (post_id INTEGER PRIMARY KEY, created_at INTEGER NOT NULL, \
             author_id INTEGER NOT NULL)",
            None,
        )?;
        self.sql.exec(
            "CREATE INDEX IF NOT EXISTS entries_order ON entries (created_at DESC, post_id DESC)",
            None,
        )?;
        self.sql.exec("CREATE INDEX IF NOT EXISTS entries_author ON entries (author_id)", None)?;
        // One row: present once initialized.
        self.sql.exec(
            "CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 1), floor_primary INTEGER NOT NULL, \
             floor_id INTEGER NOT NULL)",
            None,
        )?;
        Ok(())
    }

    fn floor(&self) -> Result<Option<SortKey>> {
        let rows: Vec<MetaRow> =
            self.sql.exec("SELECT floor_primary, floor_id FROM meta WHERE id = 1", None)?.to_array()?;
        Ok(rows.first().map(|m| SortKey::new(m.floor_primary, m.floor_id)))
    }

    fn set_floor(&self, floor: SortKey) -> Result<()> {
        self.sql.exec(
            "INSERT INTO meta (id, floor_primary, floor_id) VALUES (1, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET floor_primary = excluded.floor_primary, floor_id = excluded.floor_id",
            vec![int(floor.primary), int(floor.id)],
        )?;
        Ok(())
    }

    fn insert(&self, entries: &[Entry], floor: Option<SortKey>) -> Result<usize> {
        let mut inserted = 0;
        for e in entries {
            if floor.is_some_and(|f| e.key() < f) {
                continue;
            }
            let cursor = self.sql.exec(
                "INSERT OR IGNORE INTO entries (post_id, created_at, author_id) VALUES (?, ?, ?)",
                vec![int(e.post_id), int(e.created_at), int(e.author_id)],
            )?;
            inserted += cursor.rows_written();
        }
        Ok(inserted)
    }

    /// Keeps the newest `cap` entries; if any were dropped, the floor rises to the oldest kept.
    fn trim(&self, cap: usize) -> Result<()> {
        let count: Vec<CountRow> = self.sql.exec("SELECT COUNT(*) AS n FROM entries", None)?.to_array()?;
        if count.first().map_or(0, |c| c.n) as usize <= cap {
            return Ok(());
        }
        let oldest_kept: Vec<Entry> = self
            .sql
            .exec(
                "SELECT created_at, post_id, author_id FROM entries ORDER BY created_at DESC, post_id DESC \
                 LIMIT 1 OFFSET ?",
                vec![int(cap.saturating_sub(1) as i64)],
            )?
            .to_array()?;
        if let Some(k) = oldest_kept.first().map(Entry::key) {
            self.sql.exec(
                "DELETE FROM entries WHERE (created_at, post_id) < (?, ?)",
                vec![int(k.primary), int(k.id)],
            )?;
            if self.floor()?.is_some_and(|f| f < k) {
                self.set_floor(k)?;
            }
        }
        Ok(())
    }

    fn select(&self, sql: &str, key: SortKey, floor: SortKey, limit: usize) -> Result<Vec<Entry>> {
        self.sql
            .exec(
                sql,
                vec![int(key.primary), int(key.id), int(floor.primary), int(floor.id), int(limit as i64)],
            )?
            .to_array()
    }

    fn apply(&self, op: WindowOp) -> Result<WindowReply> {
        let floor = self.floor()?;
        let mut reply = WindowReply { initialized: floor.is_some(), floor, ..WindowReply::default() };
        match op {
            WindowOp::Deliver { entries, cap } => {
                reply.changed = self.insert(&entries, floor)?;
                self.trim(cap)?;
            }
            WindowOp::Init { entries, complete, cap } => {
                if floor.is_none() {
                    let snapshot_floor = match entries.iter().map(Entry::key).min() {
                        Some(oldest) if !complete => oldest,
                        _ => SortKey::BOTTOM,
                    };
                    // Deliveries that raced ahead of the snapshot may sit below its floor.
                    self.sql.exec(
                        "DELETE FROM entries WHERE (created_at, post_id) < (?, ?)",
                        vec![int(snapshot_floor.primary), int(snapshot_floor.id)],
                    )?;
                    self.set_floor(snapshot_floor)?;
                    reply.changed = self.insert(&entries, None)?;
                    self.trim(cap)?;
                }
                reply.initialized = true;
                reply.floor = self.floor()?;
            }
            WindowOp::Older { before, limit } => {
                if let Some(f) = floor {
                    reply.entries = self.select(
                        "SELECT created_at, post_id, author_id FROM entries \
                         WHERE (created_at, post_id) < (?, ?) AND (created_at, post_id) >= (?, ?) \
                         ORDER BY created_at DESC, post_id DESC LIMIT ?",
                        before,
                        f,
                        limit,
                    )?;
                }
            }
            WindowOp::Newer { after, limit } => {
                if let Some(f) = floor {
                    reply.entries = self.select(
                        "SELECT created_at, post_id, author_id FROM entries \
                         WHERE (created_at, post_id) > (?, ?) AND (created_at, post_id) >= (?, ?) \
                         ORDER BY created_at DESC, post_id DESC LIMIT ?",
                        after,
                        f,
                        limit,
                    )?;
                }
            }
            WindowOp::RemovePost { post_id } => {
                reply.changed = self
                    .sql
                    .exec("DELETE FROM entries WHERE post_id = ?", vec![int(post_id)])?
                    .rows_written();
            }
            WindowOp::RemoveAuthor { author_id } => {
                reply.changed = self
                    .sql
                    .exec("DELETE FROM entries WHERE author_id = ?", vec![int(author_id)])?
                    .rows_written();
            }
        }
        Ok(reply)
    }
}

impl DurableObject for TimelineWindow {
    fn new(state: State, _env: Env) -> Self {
        let window = Self { sql: state.storage().sql() };
        if let Err(e) = window.migrate() {
            worker::console_error!("timeline window schema: {e}");
        }
        window
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let op: WindowOp = match req.json().await {
            Ok(op) => op,
            Err(e) => return Response::error(format!("bad window op: {e}"), 400),
        };
        match self.apply(op) {
            Ok(reply) => Response::from_json(&reply),
            Err(e) => Response::error(format!("window op failed: {e}"), 500),
        }
    }
}

/// Worker-side handle to readers' windows.
pub struct Windows {
    namespace: ObjectNamespace,
}

impl Windows {
    pub fn new(env: &Env) -> ApiResult<Self> {
        Ok(Self { namespace: env.durable_object("TIMELINE")? })
    }

    pub async fn call(&self, reader: i64, op: &WindowOp) -> ApiResult<WindowReply> {
        crate::objects::call(&self.namespace, &format!("reader:{reader}"), op).await
    }
}
