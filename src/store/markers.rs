//! Read markers (migration 0015), on the user's home database: where the user stopped reading
//! their home timeline and their notifications, so another device can continue there.

use serde::Deserialize;

use super::{all, batch, int, stmt, text, UserDb};
use super::{StoreError, StoreResult};
use crate::domain::ids::UserId;

/// A timeline with a marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeline {
    Home,
    Notifications,
}

impl Timeline {
    pub const ALL: [Timeline; 2] = [Timeline::Home, Timeline::Notifications];

    pub fn as_str(self) -> &'static str {
        match self {
            Timeline::Home => "home",
            Timeline::Notifications => "notifications",
        }
    }

    pub fn parse(name: &str) -> Option<Timeline> {
        Timeline::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct MarkerRow {
    pub timeline: String,
    pub last_read_id: i64,
    /// Starts at 1 and grows with every write (Mastodon's optimistic-locking counter).
    pub version: i64,
    pub updated_at: i64,
}

/// The user's markers of these timelines (those never set are left out).
pub async fn get(db: UserDb<'_>, user: UserId, timelines: &[Timeline]) -> StoreResult<Vec<MarkerRow>> {
    let names: Vec<&str> = timelines.iter().map(|t| t.as_str()).collect();
    let names = serde_json::to_string(&names).unwrap_or_default();
    all(
        db,
        "SELECT timeline, last_read_id, version, updated_at FROM markers \
         WHERE user_id = ?1 AND timeline IN (SELECT value FROM json_each(?2)) ORDER BY timeline",
        &[int(user), text(&names)],
    )
    .await
}

/// Sets markers in one atomic batch; each write moves its version on. Returns them as stored.
pub async fn set(
    db: UserDb<'_>,
    user: UserId,
    marks: &[(Timeline, i64)],
    now: i64,
) -> StoreResult<Vec<MarkerRow>> {
    let mut statements = Vec::with_capacity(marks.len());
    for (timeline, last_read_id) in marks {
        statements.push(stmt(
            db,
            "INSERT INTO markers (user_id, timeline, last_read_id, version, updated_at) VALUES (?1, ?2, ?3, 1, ?4) \
             ON CONFLICT (user_id, timeline) DO UPDATE SET last_read_id = excluded.last_read_id, \
               version = markers.version + 1, updated_at = excluded.updated_at \
             RETURNING timeline, last_read_id, version, updated_at",
            &[int(user), text(timeline.as_str()), int(*last_read_id), int(now)],
        )?);
    }
    let mut rows = Vec::with_capacity(marks.len());
    for result in batch(db, statements).await? {
        rows.extend(result.results::<MarkerRow>()?);
    }
    if rows.len() != marks.len() {
        return Err(StoreError::Internal("a marker write returned no row".into()));
    }
    Ok(rows)
}
