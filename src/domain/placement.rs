//! Which rows belong to a logical shard: the catalog of every per-user table (what decides a
//! row's shard, its key, its columns) that moving a shard between physical databases walks
//! (`services/shard_move.rs`, README "Moving a shard"), and the move's cursor. Pure: the SQL
//! fragments here are built from this file's constants only, never from input.
//!
//! The catalog's order is the copy order: children first, then `posts`, then `users`, because
//! the counters on `posts` and `users` are kept by triggers that fire on the target as edges,
//! likes and comments are copied; copying the counted row after what it counts overwrites
//! whatever those triggers added with the source's exact values. The purge walks it backwards
//! (`users` and `posts` first), so the counter triggers fired by deleting children find no row
//! to update.

use serde::{Deserialize, Serialize};

use super::shard::{LogicalShard, ID_RANDOM_BITS, LOGICAL_SHARDS};

/// What decides a row's logical shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardBy {
    /// A snowflake id column (user, post): its shard bits.
    Id(&'static str),
    /// The first non-null of two id columns (the outbox: a reader-scoped event lives with its
    /// reader, a post event with its author).
    FirstOf(&'static str, &'static str),
    /// A column holding the shard itself (the handle directory: the shard of the handle's
    /// hash, which SQL cannot compute, is stored beside it by the sign-up's claim).
    Stored(&'static str),
}

impl ShardBy {
    /// The SQL expression of the row's shard; `row` prefixes the columns (`NEW.`, `t.`, or
    /// nothing).
    pub fn sql(self, row: &str) -> String {
        let bits = |col: String| format!("(({col} >> {ID_RANDOM_BITS}) & {})", LOGICAL_SHARDS - 1);
        match self {
            Self::Id(col) => bits(format!("{row}{col}")),
            Self::FirstOf(a, b) => bits(format!("COALESCE({row}{a}, {row}{b})")),
            Self::Stored(col) => format!("{row}{col}"),
        }
    }
}

/// How a row is identified on the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keying {
    /// By its own primary key, the same on every database.
    Natural,
    /// By `(moved_from_db, moved_from_id)`: the row gets a new `id` from the target's own
    /// sequence (outbox ids are per database, so the source's would collide with the
    /// target's), assigned in source order above every source id.
    Renumbered,
}

/// One per-user table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    pub shard: ShardBy,
    /// The primary key on the source, in order (the copy pages by it).
    pub key: &'static [&'static str],
    /// Every column, key included, as the migrations leave them (the move's own bookkeeping
    /// columns, `moved_from_*`, excepted).
    pub columns: &'static [&'static str],
    pub keying: Keying,
    /// Rows per copy or purge page: small where a row may carry 5,000 characters, so a page
    /// stays far below D1's limit on a bound string.
    pub page: usize,
    /// Whether the freeze refuses deletes: not for rows only ever deleted when they expire
    /// (a purge of history cannot lose anything the final copy did not already see or drop).
    pub freeze_deletes: bool,
    /// Whether the freeze refuses updates: not for the outbox, whose events must still be
    /// carried out (progress, done) while the shard is frozen, so that it drains.
    pub freeze_updates: bool,
}

const EDGE_PAGE: usize = 200;
const TEXT_PAGE: usize = 50;

const fn table(
    name: &'static str,
    shard: ShardBy,
    key: &'static [&'static str],
    columns: &'static [&'static str],
    page: usize,
) -> Table {
    Table {
        name,
        shard,
        key,
        columns,
        keying: Keying::Natural,
        page,
        freeze_deletes: true,
        freeze_updates: true,
    }
}

/// Every per-user table, in copy order (see the module comment).
pub const TABLES: &[Table] = &[
    table(
        "follows",
        ShardBy::Id("follower_id"),
        &["follower_id", "author_id"],
        &["follower_id", "author_id", "group_name", "created_at", "push", "pull"],
        EDGE_PAGE,
    ),
    table(
        "followers",
        ShardBy::Id("author_id"),
        &["author_id", "follower_id"],
        &[
            "author_id",
            "follower_id",
            "created_at",
            "push",
            "pull",
            "read_rate",
            "last_read_at",
            "reader_active",
        ],
        EDGE_PAGE,
    ),
    table(
        "blocks",
        ShardBy::Id("blocker_id"),
        &["blocker_id", "blocked_id"],
        &["blocker_id", "blocked_id", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "blocked_by",
        ShardBy::Id("blocked_id"),
        &["blocked_id", "blocker_id"],
        &["blocked_id", "blocker_id", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "likes",
        ShardBy::Id("post_id"),
        &["post_id", "user_id"],
        &["post_id", "user_id", "liked", "seq", "updated_at", "liked_at"],
        EDGE_PAGE,
    ),
    table(
        "comments",
        ShardBy::Id("post_id"),
        &["id"],
        &["id", "post_id", "author_id", "body", "created_at", "deleted_at"],
        TEXT_PAGE,
    ),
    Table {
        freeze_deletes: false,
        ..table(
            "idempotency_keys",
            ShardBy::Id("user_id"),
            &["user_id", "key"],
            &["user_id", "key", "request_hash", "post_id", "created_at"],
            EDGE_PAGE,
        )
    },
    Table {
        keying: Keying::Renumbered,
        freeze_deletes: false,
        freeze_updates: false,
        ..table(
            "outbox",
            ShardBy::FirstOf("reader_id", "author_id"),
            &["id"],
            &[
                "id",
                "kind",
                "post_id",
                "author_id",
                "reader_id",
                "post_created_at",
                "created_at",
                "state",
                "cursor_follower_id",
                "delivered",
                "attempts",
                "sent_at",
                "done_at",
            ],
            EDGE_PAGE,
        )
    },
    table(
        "handles",
        ShardBy::Stored("shard"),
        &["handle"],
        &["handle", "user_id", "created_at", "shard"],
        EDGE_PAGE,
    ),
    table(
        "posts",
        ShardBy::Id("id"),
        &["id"],
        &[
            "id",
            "author_id",
            "body",
            "visibility",
            "created_at",
            "edited_at",
            "deleted_at",
            "like_count",
            "comment_count",
            "touched_at",
            "state_version",
            "taken_down_at",
        ],
        TEXT_PAGE,
    ),
    table(
        "users",
        ShardBy::Id("id"),
        &["id"],
        &[
            "id",
            "handle",
            "display_name",
            "created_at",
            "followers_count",
            "following_count",
            "posts_count",
            "feed_active_at",
            "tokens_valid_after",
            "post_rate",
            "post_rate_at",
            "post_rate_modes",
            "read_rate",
            "last_read_at",
            "push_min_read_rate",
            "suspended_at",
            "password_hash",
            "pulled_count",
        ],
        EDGE_PAGE,
    ),
];

/// The tables that are not per user: they live on `DB_0` and never move (plus the move's own
/// `frozen_shards`, which is per database).
pub const CONTROL_TABLES: &[&str] = &[
    "stats",
    "latency_samples",
    "test_faults",
    "audit_log",
    "minute_counts",
    "live_readers",
    "oauth_apps",
    "oauth_codes",
    "revoked_tokens",
    "frozen_shards",
];

/// The outbox rows an unfinished move must not leave behind: `pending` events would run after
/// the switch under new ids, and `dead` ones be replayed so (see [`Keying::Renumbered`]).
/// `held` events are post deliveries parked by a suspension and released by the post's state,
/// so they move like finished ones.
pub const UNFINISHED_EVENT_STATES: &[&str] = &["pending", "dead"];

/// A table's columns that are not its key (what an upsert overwrites).
pub fn value_columns(table: &Table) -> impl Iterator<Item = &'static str> + '_ {
    table.columns.iter().copied().filter(|c| !table.key.contains(c))
}

/// One value of a key, as it travels in a cursor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KeyValue {
    Int(i64),
    Text(String),
}

/// Where a copy or purge of one shard continues: the table (an index into [`TABLES`]) and,
/// for a copy, the key of the last row done in it (empty: from its start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveCursor {
    pub table: usize,
    #[serde(default)]
    pub after: Vec<KeyValue>,
}

impl MoveCursor {
    pub const START: MoveCursor = MoveCursor { table: 0, after: Vec::new() };

    /// Parses the opaque form [`MoveCursor::encode`] makes; `None` if it is not one this
    /// catalog could have made.
    pub fn decode(text: &str) -> Option<Self> {
        // An object only (serde would also take a struct from an array).
        let value: serde_json::Value =
            serde_json::from_str(text).ok().filter(serde_json::Value::is_object)?;
        let cursor: Self = serde_json::from_value(value).ok()?;
        let table = TABLES.get(cursor.table)?;
        (cursor.after.is_empty() || cursor.after.len() == table.key.len()).then_some(cursor)
    }

    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn table(&self) -> &'static Table {
        // In range: built from an index below TABLES.len() (decode checks, START is 0).
        &TABLES[self.table.min(TABLES.len() - 1)]
    }

    /// The next table's start, or `None` after the last one.
    pub fn next_table(&self) -> Option<Self> {
        (self.table + 1 < TABLES.len()).then(|| Self { table: self.table + 1, after: Vec::new() })
    }
}

/// The key of a row read as JSON (an object of column -> value), in key order; `None` when a
/// key column is missing or of a type no key has.
pub fn key_of(table: &Table, row: &serde_json::Map<String, serde_json::Value>) -> Option<Vec<KeyValue>> {
    table
        .key
        .iter()
        .map(|col| match row.get(*col)? {
            serde_json::Value::String(s) => Some(KeyValue::Text(s.clone())),
            serde_json::Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .map(KeyValue::Int),
            _ => None,
        })
        .collect()
}

/// A shard number as given in a path (`0` .. `255`).
pub fn parse_shard(text: &str) -> Option<LogicalShard> {
    text.parse::<u8>().ok().filter(|_| !text.starts_with('+')).map(LogicalShard::new)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    /// Every table and its columns as `migrations/*.sql` leave them (CREATE TABLE, ALTER
    /// TABLE ... ADD COLUMN): a small reader of this repository's own SQL style.
    fn schema() -> BTreeMap<String, BTreeSet<String>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut files: Vec<_> =
            std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
        files.sort();
        let mut tables: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut current: Option<String> = None;
            for line in text.lines().map(str::trim) {
                let words: Vec<&str> = line.split_whitespace().collect();
                if let ["CREATE", "TABLE", name, ..] = words[..] {
                    current = Some(name.trim_end_matches('(').to_string());
                    tables.entry(name.trim_end_matches('(').to_string()).or_default();
                } else if let ["ALTER", "TABLE", name, "ADD", "COLUMN", col, ..] = words[..] {
                    tables.entry(name.to_string()).or_default().insert(col.to_string());
                } else if line.starts_with(')') {
                    current = None;
                } else if let (Some(t), Some(col)) = (&current, words.first()) {
                    let constraint =
                        ["PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "--"].iter().any(|k| col.starts_with(k));
                    if !constraint {
                        tables.entry(t.clone()).or_default().insert(col.to_string());
                    }
                }
            }
        }
        tables
    }

    #[test]
    fn every_table_of_the_migrations_is_in_the_catalog_or_a_control_table() {
        let schema = schema();
        assert!(schema.len() > 15, "the reader found the tables: {schema:?}");
        for name in schema.keys() {
            let known = TABLES.iter().any(|t| t.name == name) || CONTROL_TABLES.contains(&name.as_str());
            assert!(known, "{name}: add it to placement::TABLES (per user) or CONTROL_TABLES");
        }
        for name in CONTROL_TABLES {
            assert!(schema.contains_key(*name), "{name} is no table of the migrations");
        }
    }

    #[test]
    fn the_catalog_names_every_column_of_its_tables_and_keys_among_them() {
        let schema = schema();
        for table in TABLES {
            let mut columns: BTreeSet<String> = schema.get(table.name).cloned().unwrap_or_default();
            columns.retain(|c| !c.starts_with("moved_from_"));
            let listed: BTreeSet<String> = table.columns.iter().map(|c| c.to_string()).collect();
            assert_eq!(listed, columns, "{}: the catalog's columns vs the migrations'", table.name);
            assert!(table.key.iter().all(|k| table.columns.contains(k)), "{}", table.name);
            assert!(value_columns(table).count() > 0, "{}: an upsert needs a column to set", table.name);
        }
    }

    #[test]
    fn the_freeze_migration_has_the_triggers_the_catalog_asks_for() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/0012_shard_moves.sql");
        let sql = std::fs::read_to_string(path).unwrap_or_default();
        for table in TABLES {
            let insert =
                format!("CREATE TRIGGER {}_frozen_insert BEFORE INSERT ON {}", table.name, table.name);
            assert!(sql.contains(&insert), "{insert}");
            assert!(sql.contains(&table.shard.sql("NEW.")), "{}: {}", table.name, table.shard.sql("NEW."));
            let update =
                format!("CREATE TRIGGER {}_frozen_update BEFORE UPDATE ON {}", table.name, table.name);
            assert_eq!(sql.contains(&update), table.freeze_updates, "{update}");
            let delete =
                format!("CREATE TRIGGER {}_frozen_delete BEFORE DELETE ON {}", table.name, table.name);
            assert_eq!(sql.contains(&delete), table.freeze_deletes, "{delete}");
        }
    }

    #[test]
    fn counted_rows_are_copied_after_what_they_count() {
        let at = |name: &str| TABLES.iter().position(|t| t.name == name);
        assert_eq!(at("users"), Some(TABLES.len() - 1), "users last: its counters count every table");
        assert_eq!(at("posts"), Some(TABLES.len() - 2), "posts before users, after likes and comments");
    }

    #[test]
    fn shard_expressions_match_the_id_layout() {
        assert_eq!(ShardBy::Id("id").sql("NEW."), "((NEW.id >> 3) & 255)");
        assert_eq!(ShardBy::FirstOf("a", "b").sql(""), "((COALESCE(a, b) >> 3) & 255)");
        assert_eq!(ShardBy::Stored("shard").sql("t."), "t.shard");
        let id = crate::domain::ids::snowflake_in(1_796_026_502_123, LogicalShard::new(201), 5).unwrap_or(0);
        assert_eq!((id >> 3) & 255, 201);
    }

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let c = MoveCursor { table: 4, after: vec![KeyValue::Int(12), KeyValue::Int(7)] };
        assert_eq!(MoveCursor::decode(&c.encode()), Some(c));
        let handles = TABLES.iter().position(|t| t.name == "handles").unwrap_or(0);
        let h = MoveCursor { table: handles, after: vec![KeyValue::Text("ann".into())] };
        assert_eq!(MoveCursor::decode(&h.encode()), Some(h));
        for junk in ["", "{}", "[1]", r#"{"table":99}"#, r#"{"table":0,"after":[1]}"#, r#"{"table":-1}"#] {
            assert_eq!(MoveCursor::decode(junk), None, "{junk}");
        }
        assert_eq!(MoveCursor::decode(r#"{"table":0}"#), Some(MoveCursor::START));
        assert_eq!(MoveCursor { table: TABLES.len() - 1, after: vec![] }.next_table(), None);
    }

    #[test]
    fn keys_are_read_from_rows_as_the_cursor_carries_them() {
        let row = serde_json::json!({ "post_id": 9.0, "user_id": 4, "liked": 1 });
        let likes = TABLES.iter().find(|t| t.name == "likes").copied();
        let key = likes.and_then(|t| key_of(&t, row.as_object()?));
        assert_eq!(key, Some(vec![KeyValue::Int(9), KeyValue::Int(4)]));
        assert_eq!(parse_shard("255"), Some(LogicalShard::new(255)));
        assert_eq!(parse_shard("256"), None);
        assert_eq!(parse_shard("+1"), None);
    }
}
