//! Which rows belong to a logical shard: the catalog of every per-user table (what decides a
//! row's shard, its key, its columns) that moving a shard between physical databases walks
//! (`services/shard_move.rs`, README "Moving a shard"), and the move's cursor. Pure: the SQL
//! fragments here are built from this file's constants only, never from input.
//!
//! The catalog's order is the copy order: parents first (`users`, then `posts`: the foreign
//! keys from posts to users and from likes and comments to posts hold on every database), then
//! everything else, then the counters of `posts` and `users` once more. Their counters are kept
//! by triggers that also fire on the target as likes, comments, posts and edges are copied;
//! copying the counter columns after what they count overwrites whatever those triggers added
//! with the source's exact values. The purge walks the row phases backwards (children first,
//! `users` last), inside the freeze's `purging` mode, which lets the counter updates that the
//! children's deletes fire through.

use serde::{Deserialize, Serialize};

use super::snowflake::{LogicalShard, ID_RANDOM_BITS, LOGICAL_SHARDS};

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

/// What one step of a copy pass does with a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Makes the target's rows equal to the source's (upsert, and delete the extra ones).
    Rows,
    /// Overwrites the trigger-kept counters of rows the target already has with the source's.
    Counters,
}

/// One per-user table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    pub shard: ShardBy,
    /// The primary key on the source, in order (the copy pages by it).
    pub key: &'static [&'static str],
    /// Every column, key included, as the migrations leave them (for [`Phase::Counters`]: the
    /// key and the counters).
    pub columns: &'static [&'static str],
    pub phase: Phase,
    /// Rows per copy or purge page: small where a row may carry 5,000 characters, so a page
    /// stays far below D1's limit on a bound string.
    pub page: usize,
    /// Whether the freeze refuses deletes: not for rows only ever deleted when they expire
    /// (a purge of history cannot lose anything the final copy did not already see or drop).
    pub freeze_deletes: bool,
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
    Table { name, shard, key, columns, phase: Phase::Rows, page, freeze_deletes: true }
}

/// Every per-user table, in copy order (see the module comment).
pub const TABLES: &[Table] = &[
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
            "live_until",
            "replicas",
            "replica_seq",
            "note",
            "fields",
            "avatar",
            "header",
            "locked",
            "bot",
            "discoverable",
            "post_privacy",
            "post_sensitive",
            "post_language",
            "indexable",
            "notice_max",
        ],
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
            "spoiler_text",
            "sensitive",
            "media",
            "reblog_of",
            "reblog_count",
            "mentions",
            "quote_of",
            "quote_policy",
            "quote_count",
            "in_reply_to_id",
            "in_reply_to_account_id",
            "thread_id",
            "moved_from",
            "unlisted",
            "pinned_at",
        ],
        TEXT_PAGE,
    ),
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
        &["post_id", "user_id", "liked", "seq", "updated_at", "liked_at", "notice_id"],
        EDGE_PAGE,
    ),
    table(
        "comments",
        ShardBy::Id("post_id"),
        &["id"],
        &[
            "id",
            "post_id",
            "author_id",
            "body",
            "created_at",
            "deleted_at",
            "spoiler_text",
            "sensitive",
            "edited_at",
            "parent_id",
            "like_count",
            "reply_post",
            "moved_to",
        ],
        TEXT_PAGE,
    ),
    // Who boosted a post (migration 0029): the mirror on the original's database, placed by
    // the original; `posts.reblog_count` moves with it by triggers (overwritten below).
    table(
        "reblogs",
        ShardBy::Id("post_id"),
        &["post_id", "boost_id"],
        &["post_id", "boost_id", "booster_id", "created_at", "active"],
        EDGE_PAGE,
    ),
    // Who quoted a post (migration 0032): the mirror on the quoted post's database, as
    // `reblogs`; `posts.quote_count` moves with it by triggers (overwritten below).
    table(
        "quotes",
        ShardBy::Id("post_id"),
        &["post_id", "quote_id"],
        &["post_id", "quote_id", "quoter_id", "created_at", "active"],
        EDGE_PAGE,
    ),
    // Comment likes (migration 0028) live with the comment's post; `comments.like_count` is
    // recomputed by statements, not triggers, so copying both tables counts nothing twice.
    table(
        "comment_likes",
        ShardBy::Id("post_id"),
        &["comment_id", "user_id"],
        &["comment_id", "user_id", "post_id", "created_at"],
        EDGE_PAGE,
    ),
    // A notification's id carries its recipient's shard too (migration 0015); dismiss and
    // clear are real deletes, so the freeze refuses them.
    table(
        "notifications",
        ShardBy::Id("recipient_id"),
        &["recipient_id", "id"],
        &["recipient_id", "id", "kind", "actor_id", "post_id", "comment_id", "filtered"],
        EDGE_PAGE,
    ),
    table(
        "markers",
        ShardBy::Id("user_id"),
        &["user_id", "timeline"],
        &["user_id", "timeline", "last_read_id", "version", "updated_at"],
        EDGE_PAGE,
    ),
    // Lists and their members live with their owner (migration 0016); a list before its
    // members, so the purge (backwards) deletes the members first.
    table(
        "lists",
        ShardBy::Id("user_id"),
        &["user_id", "id"],
        &["user_id", "id", "title", "replies_policy", "exclusive", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "list_accounts",
        ShardBy::Id("user_id"),
        &["user_id", "list_id", "account_id"],
        &["user_id", "list_id", "account_id", "created_at"],
        EDGE_PAGE,
    ),
    // The liker's side of likes (migration 0023): a mirror on the liker's home, converged
    // from the post's `likes` (`services/liked.rs`).
    table(
        "liked_posts",
        ShardBy::Id("user_id"),
        &["user_id", "post_id"],
        &["user_id", "post_id", "liked_at"],
        EDGE_PAGE,
    ),
    // A user's bookmarks (migration 0024), on their home only.
    table(
        "bookmarks",
        ShardBy::Id("user_id"),
        &["user_id", "post_id"],
        &["user_id", "post_id", "created_at"],
        EDGE_PAGE,
    ),
    // Uploads (migration 0027): an id carries its uploader's shard (the post it is attached to
    // is theirs too); the bytes stay in R2, which every database shares. Gone rows are deleted
    // by the cron's sweep, on the source too (the copy's next pass deletes them on the target).
    Table {
        freeze_deletes: false,
        ..table(
            "media",
            ShardBy::Id("id"),
            &["id"],
            &[
                "id",
                "user_id",
                "url_key",
                "kind",
                "width",
                "height",
                "size",
                "description",
                "focus_x",
                "focus_y",
                "created_at",
                "post_id",
                "gone_at",
                "profile",
                "scheduled_id",
            ],
            TEXT_PAGE,
        )
    },
    // Conversations (migration 0031): each participant's row on their own home.
    table(
        "conversations",
        ShardBy::Id("user_id"),
        &["user_id", "post_id"],
        &["user_id", "post_id", "author_id", "accounts", "unread", "removed", "updated_at"],
        EDGE_PAGE,
    ),
    // Mutes (migration 0025), on the muter's home only.
    table(
        "mutes",
        ShardBy::Id("user_id"),
        &["user_id", "muted_id"],
        &["user_id", "muted_id", "notifications", "expires_at", "created_at"],
        EDGE_PAGE,
    ),
    // Issue 42 (migration 0036): pending follow requests on the target's home; notes,
    // endorsements and domain blocks on their author's; reports on the reporter's.
    table(
        "follow_requests",
        ShardBy::Id("target_id"),
        &["target_id", "requester_id"],
        &["target_id", "requester_id", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "account_notes",
        ShardBy::Id("user_id"),
        &["user_id", "account_id"],
        &["user_id", "account_id", "comment", "updated_at"],
        TEXT_PAGE,
    ),
    table(
        "endorsements",
        ShardBy::Id("user_id"),
        &["user_id", "account_id"],
        &["user_id", "account_id", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "reports",
        ShardBy::Id("reporter_id"),
        &["id"],
        &[
            "id",
            "reporter_id",
            "account_id",
            "status_ids",
            "comment",
            "category",
            "forward",
            "created_at",
            "resolved_at",
        ],
        TEXT_PAGE,
    ),
    table(
        "domain_blocks",
        ShardBy::Id("user_id"),
        &["user_id", "domain"],
        &["user_id", "domain", "created_at"],
        EDGE_PAGE,
    ),
    // A post's earlier versions (migration 0038), with the post.
    table(
        "post_edits",
        ShardBy::Id("post_id"),
        &["post_id", "seq"],
        &["post_id", "seq", "body", "spoiler_text", "sensitive", "replaced_at"],
        TEXT_PAGE,
    ),
    // Muted conversations (migration 0038), on the muter's home only.
    table(
        "conversation_mutes",
        ShardBy::Id("user_id"),
        &["user_id", "thread_id"],
        &["user_id", "thread_id", "created_at"],
        EDGE_PAGE,
    ),
    // Polls and their voters (migration 0038), with the post; the counts are kept by a trigger
    // on `poll_voters` (overwritten below, as the posts' counters are).
    table(
        "polls",
        ShardBy::Id("post_id"),
        &["post_id"],
        &[
            "post_id",
            "author_id",
            "options",
            "multiple",
            "hide_totals",
            "expires_at",
            "voters_count",
            "votes_0",
            "votes_1",
            "votes_2",
            "votes_3",
            "notified_at",
        ],
        TEXT_PAGE,
    ),
    table(
        "poll_voters",
        ShardBy::Id("post_id"),
        &["post_id", "user_id"],
        &["post_id", "user_id", "choices", "nonce", "created_at"],
        EDGE_PAGE,
    ),
    // Scheduled posts (migrations 0038, 0043), on their author's home; published ones are
    // deleted, so the freeze refuses deletes (a publish waits for the move).
    table(
        "scheduled_statuses",
        ShardBy::Id("user_id"),
        &["user_id", "id"],
        &["user_id", "id", "scheduled_at", "params", "created_at", "idempotency"],
        TEXT_PAGE,
    ),
    // Filters, their keywords and statuses, the notification policy and its accepted actors
    // (migration 0037), on their owner's home only; a filter before its keywords and statuses.
    table(
        "filters",
        ShardBy::Id("user_id"),
        &["user_id", "id"],
        &["user_id", "id", "title", "context", "action", "expires_at", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "filter_keywords",
        ShardBy::Id("user_id"),
        &["user_id", "id"],
        &["user_id", "id", "filter_id", "keyword", "whole_word", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "filter_statuses",
        ShardBy::Id("user_id"),
        &["user_id", "id"],
        &["user_id", "id", "filter_id", "status_id", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "notification_policies",
        ShardBy::Id("user_id"),
        &["user_id"],
        &[
            "user_id",
            "for_not_following",
            "for_not_followers",
            "for_new_accounts",
            "for_private_mentions",
            "for_limited_accounts",
            "updated_at",
        ],
        EDGE_PAGE,
    ),
    table(
        "notification_accepted",
        ShardBy::Id("user_id"),
        &["user_id", "actor_id"],
        &["user_id", "actor_id", "created_at"],
        EDGE_PAGE,
    ),
    // Web Push subscriptions (migration 0040), one per access token, on the user's home.
    table(
        "push_subscriptions",
        ShardBy::Id("user_id"),
        &["user_id", "token_id"],
        &[
            "user_id",
            "token_id",
            "id",
            "endpoint",
            "p256dh",
            "auth",
            "alerts",
            "policy",
            "access_token",
            "origin",
            "token_issued_at",
            "token_expires_at",
            "sent",
            "created_at",
        ],
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
    // A token id carries its user's shard (`domain/shard.rs::with_shard`, migration 0014);
    // expired rows are purged by the cron, on the source too.
    Table {
        freeze_deletes: false,
        ..table(
            "revoked_tokens",
            ShardBy::Id("token_id"),
            &["token_id"],
            &["token_id", "expires_at"],
            EDGE_PAGE,
        )
    },
    // An event's id carries the shard of the user whose database commits it (the flip's
    // `store/outbox.rs::new_id_sql`), so it keeps its id on the target: queued messages find
    // it there, and the target's counter continues above it.
    Table {
        freeze_deletes: false,
        ..table(
            "outbox",
            ShardBy::Id("id"),
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
                "segments",
            ],
            EDGE_PAGE,
        )
    },
    // Audit ids are snowflakes on the moderated user's or post's shard.
    table(
        "audit_log",
        ShardBy::Id("id"),
        &["id"],
        &["id", "created_at", "actor", "action", "target_kind", "target_id", "reason"],
        EDGE_PAGE,
    ),
    table(
        "handles",
        ShardBy::Stored("shard"),
        &["handle"],
        &["handle", "user_id", "created_at", "shard"],
        EDGE_PAGE,
    ),
    // Issue 42's timelines (migration 0039): the index and stream leases by their key's
    // stored shard, followed and featured tags with their user.
    table(
        "timeline_index",
        ShardBy::Stored("shard"),
        &["key", "post_id"],
        &["shard", "key", "post_id", "author_id", "flags"],
        EDGE_PAGE,
    ),
    table(
        "stream_listeners",
        ShardBy::Stored("shard"),
        &["key", "user_id"],
        &["shard", "key", "user_id", "expires_at"],
        EDGE_PAGE,
    ),
    table(
        "tag_followers",
        ShardBy::Stored("shard"),
        &["key", "user_id"],
        &["shard", "key", "user_id"],
        EDGE_PAGE,
    ),
    // Search (migration 0041): every term's rows by their stored shard (a hash, or the user's
    // home for a personal term).
    table(
        "search_terms",
        ShardBy::Stored("shard"),
        &["term", "word", "item"],
        &["shard", "term", "word", "item", "owner", "name"],
        EDGE_PAGE,
    ),
    table(
        "followed_tags",
        ShardBy::Id("user_id"),
        &["user_id", "tag_key"],
        &["user_id", "tag_key", "name", "created_at"],
        EDGE_PAGE,
    ),
    table(
        "featured_tags",
        ShardBy::Id("user_id"),
        &["user_id", "tag_key"],
        &["user_id", "tag_key", "name", "created_at"],
        EDGE_PAGE,
    ),
    // The counter repair's marks (migration 0049), last of the rows: the copy's upserts of
    // edges and posts mark their owners on the target, and this phase then makes the target's
    // marks the source's (a mark is a hint to recount, so either would do).
    table("count_marks", ShardBy::Id("user_id"), &["user_id"], &["user_id", "marked_at"], EDGE_PAGE),
    // Live readers' marks on their pulled edges (migration 0050), beside the author's side of
    // the edge: leases, so a move may as well carry them (dropped, they come back within a
    // mark refresh).
    table(
        "live_edges",
        ShardBy::Id("author_id"),
        &["author_id", "reader_id"],
        &["author_id", "reader_id", "until"],
        EDGE_PAGE,
    ),
    Table {
        phase: Phase::Counters,
        ..table(
            "posts",
            ShardBy::Id("id"),
            &["id"],
            &["id", "like_count", "comment_count", "reblog_count", "quote_count"],
            EDGE_PAGE,
        )
    },
    Table {
        phase: Phase::Counters,
        ..table(
            "polls",
            ShardBy::Id("post_id"),
            &["post_id"],
            &["post_id", "voters_count", "votes_0", "votes_1", "votes_2", "votes_3"],
            EDGE_PAGE,
        )
    },
    Table {
        phase: Phase::Counters,
        ..table(
            "users",
            ShardBy::Id("id"),
            &["id"],
            &["id", "followers_count", "following_count", "posts_count", "pulled_count"],
            EDGE_PAGE,
        )
    },
];

/// The row phases of [`TABLES`]: one per per-user table.
pub fn row_tables() -> impl DoubleEndedIterator<Item = &'static Table> {
    TABLES.iter().filter(|t| t.phase == Phase::Rows)
}

/// The tables that are not per user: they stay on their database (`DB_0`'s control tables,
/// and each database's own figures and the move's own `frozen_shards`).
pub const CONTROL_TABLES: &[&str] = &[
    "stats",
    "latency_samples",
    "test_faults",
    "minute_counts",
    "live_readers",
    "oauth_apps",
    "oauth_codes",
    "frozen_shards",
    "sign_in_failures",
    "discovery",
];

/// Per-user tables a move cannot carry yet, and why (README "Moving a shard").
pub const NOT_MOVABLE: &[(&str, &str)] = &[];

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
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        let mut files: Vec<_> =
            std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
        files.sort();
        let mut tables: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut current: Option<String> = None;
            for line in text.lines().map(str::trim) {
                let words: Vec<&str> = line.split_whitespace().collect();
                match words[..] {
                    ["CREATE", "TABLE", name, ..] => {
                        let name = name.trim_end_matches('(').to_string();
                        tables.insert(name.clone(), BTreeSet::new());
                        current = Some(name);
                    }
                    ["ALTER", "TABLE", name, "ADD", "COLUMN", col, ..] => {
                        tables.entry(name.to_string()).or_default().insert(col.to_string());
                    }
                    ["ALTER", "TABLE", from, "RENAME", "TO", to] => {
                        let columns = tables.remove(from).unwrap_or_default();
                        tables.insert(to.trim_end_matches(';').to_string(), columns);
                    }
                    ["DROP", "TABLE", name] => {
                        tables.remove(name.trim_end_matches(';'));
                    }
                    _ if line.starts_with(')') => current = None,
                    _ => {
                        if let Some(t) = &current {
                            tables.entry(t.clone()).or_default().extend(column_names(line));
                        }
                    }
                }
            }
        }
        tables
    }

    /// The column names a line of a CREATE TABLE body defines (several may share a line; a
    /// comma inside parentheses, as in a CHECK, separates nothing).
    fn column_names(line: &str) -> Vec<String> {
        let line = line.split("--").next().unwrap_or("");
        let (mut depth, mut parts, mut part) = (0, Vec::new(), String::new());
        for c in line.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => parts.push(std::mem::take(&mut part)),
                _ => {}
            }
            if c != ',' || depth != 0 {
                part.push(c);
            }
        }
        parts.push(part);
        let constraint = |w: &str| ["PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].iter().any(|k| w.starts_with(k));
        parts
            .iter()
            .filter_map(|p| p.split_whitespace().next())
            .filter(|w| !constraint(w))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn every_table_of_the_migrations_is_in_the_catalog_or_a_control_table() {
        let schema = schema();
        assert!(schema.len() > 15, "the reader found the tables: {schema:?}");
        for name in schema.keys() {
            let known = TABLES.iter().any(|t| t.name == name)
                || CONTROL_TABLES.contains(&name.as_str())
                || NOT_MOVABLE.iter().any(|(t, _)| t == name);
            assert!(known, "{name}: add it to placement::TABLES (per user) or CONTROL_TABLES");
        }
        for name in CONTROL_TABLES {
            assert!(schema.contains_key(*name), "{name} is no table of the migrations");
        }
    }

    #[test]
    fn the_catalog_names_every_column_of_its_tables_and_keys_among_them() {
        let schema = schema();
        for table in row_tables() {
            let columns: BTreeSet<String> = schema.get(table.name).cloned().unwrap_or_default();
            let listed: BTreeSet<String> = table.columns.iter().map(|c| c.to_string()).collect();
            assert_eq!(listed, columns, "{}: the catalog's columns vs the migrations'", table.name);
            assert!(table.key.iter().all(|k| table.columns.contains(k)), "{}", table.name);
            assert!(value_columns(table).count() > 0, "{}: an upsert needs a column to set", table.name);
        }
    }

    #[test]
    fn the_freeze_migration_has_the_triggers_the_catalog_asks_for() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        // Every migration from the freeze's own (0013) on: later tables bring their triggers.
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|f| f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n >= "0013"));
        files.sort();
        assert!(files.len() >= 3, "the migrations from 0013 on: {files:?}");
        let sql: String = files.iter().map(|f| std::fs::read_to_string(f).unwrap_or_default()).collect();
        for table in row_tables() {
            let insert =
                format!("CREATE TRIGGER {}_frozen_insert BEFORE INSERT ON {}", table.name, table.name);
            assert!(sql.contains(&insert), "{insert}");
            assert!(sql.contains(&table.shard.sql("NEW.")), "{}: {}", table.name, table.shard.sql("NEW."));
            let update =
                format!("CREATE TRIGGER {}_frozen_update BEFORE UPDATE ON {}", table.name, table.name);
            assert!(sql.contains(&update), "{update}");
            let delete =
                format!("CREATE TRIGGER {}_frozen_delete BEFORE DELETE ON {}", table.name, table.name);
            assert_eq!(sql.contains(&delete), table.freeze_deletes, "{delete}");
        }
    }

    #[test]
    fn parents_come_first_and_counters_last() {
        let rows: Vec<&str> = row_tables().map(|t| t.name).collect();
        assert_eq!(rows[..2], ["users", "posts"], "foreign keys: posts -> users, likes/comments -> posts");
        let counters: Vec<&str> =
            TABLES.iter().filter(|t| t.phase == Phase::Counters).map(|t| t.name).collect();
        assert_eq!(counters, ["posts", "polls", "users"]);
        assert!(
            TABLES[TABLES.len() - 3..].iter().all(|t| t.phase == Phase::Counters),
            "after every row phase"
        );
        for counted in TABLES.iter().filter(|t| t.phase == Phase::Counters) {
            let rows = row_tables().find(|t| t.name == counted.name).map(|t| t.columns).unwrap_or_default();
            assert!(counted.columns.iter().all(|c| rows.contains(c)), "{}", counted.name);
        }
    }

    #[test]
    fn shard_expressions_match_the_id_layout() {
        assert_eq!(ShardBy::Id("id").sql("NEW."), "((NEW.id >> 3) & 255)");
        assert_eq!(ShardBy::FirstOf("a", "b").sql(""), "((COALESCE(a, b) >> 3) & 255)");
        assert_eq!(ShardBy::Stored("shard").sql("t."), "t.shard");
        let id = crate::snowflake::snowflake_in(1_796_026_502_123, LogicalShard::new(201), 5).unwrap_or(0);
        assert_eq!((id >> 3) & 255, 201);
    }

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let c = MoveCursor { table: 4, after: vec![KeyValue::Int(12), KeyValue::Int(7)] };
        assert_eq!(MoveCursor::decode(&c.encode()), Some(c));
        let handles = TABLES.iter().position(|t| t.name == "handles").unwrap_or(0);
        assert!(handles > 0);
        let h = MoveCursor { table: handles, after: vec![KeyValue::Text("ann".into())] };
        assert_eq!(MoveCursor::decode(&h.encode()), Some(h));
        for junk in ["", "{}", "[1]", r#"{"table":99}"#, r#"{"table":0,"after":[1,2]}"#, r#"{"table":-1}"#] {
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
