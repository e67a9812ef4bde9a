//! The tags a user follows and features (`followed_tags`, `featured_tags`, migration 0039), on
//! the user's home database.

use serde::Deserialize;

use super::handles::UserDb;
use super::{all, exec, int, text, StoreResult};
use crate::domain::ids::UserId;
use crate::domain::tags::key_of;

/// Which of the user's tag lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagList {
    Followed,
    Featured,
}

impl TagList {
    fn table(self) -> &'static str {
        match self {
            TagList::Followed => "followed_tags",
            TagList::Featured => "featured_tags",
        }
    }
}

/// One tag of a list.
#[derive(Debug, Clone, Deserialize)]
pub struct TagRow {
    pub tag_key: String,
    pub name: String,
    pub created_at: i64,
}

/// Adds the tag (as first written) to the list, or takes it off; idempotent.
pub async fn set(
    db: UserDb<'_>,
    list: TagList,
    user: UserId,
    name: &str,
    on: bool,
    now: i64,
) -> StoreResult<()> {
    let table = list.table();
    if on {
        let sql = format!(
            "INSERT OR IGNORE INTO {table} (user_id, tag_key, name, created_at) VALUES (?1, ?2, ?3, ?4)"
        );
        exec(db, &sql, &[int(user), text(&key_of(name)), text(name), int(now)]).await
    } else {
        let sql = format!("DELETE FROM {table} WHERE user_id = ?1 AND tag_key = ?2");
        exec(db, &sql, &[int(user), text(&key_of(name))]).await
    }
}

/// The list's tags among `keys` (all of them when `keys` is `None`), newest first, at most `limit`.
pub async fn list(
    db: UserDb<'_>,
    list: TagList,
    user: UserId,
    keys: Option<&[String]>,
    limit: usize,
) -> StoreResult<Vec<TagRow>> {
    let table = list.table();
    let keys_json = keys.map(|k| serde_json::to_string(k).unwrap_or_default());
    let sql = format!(
        "SELECT tag_key, name, created_at FROM {table} WHERE user_id = ?1 \
           AND (?2 IS NULL OR tag_key IN (SELECT value FROM json_each(?2))) \
         ORDER BY created_at DESC, tag_key LIMIT ?3"
    );
    let keys_param = keys_json.as_deref().map_or(wasm_bindgen::JsValue::NULL, text);
    all(db, &sql, &[int(user), keys_param, int(limit as i64)]).await
}
