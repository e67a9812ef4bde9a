use serde::Deserialize;

use crate::domain::snowflake::snowflake_time;
use wasm_bindgen::JsValue;

use super::shards::Shards;
use super::{all, exec, first, id_list, int, opt_text, text, AnyDb, HandleDb, UserDb};
use super::{StoreError, StoreResult};
use crate::domain::ids::UserId;
use crate::domain::validate::{DisplayName, Handle};
use crate::domain::visibility::Relationship;

/// Columns of a User as selected from `users u`; every user query uses this list so rows
/// always deserialize into `UserRow`.
pub const USER_COLUMNS: &str =
    "u.id, u.handle, u.display_name, u.created_at, u.followers_count, u.following_count, u.posts_count, \
     u.note, u.fields, u.avatar, u.header, u.locked, u.bot, u.discoverable, \
     u.post_privacy, u.post_sensitive, u.post_language, u.indexable";

#[derive(Debug, Clone, Deserialize)]
pub struct UserRow {
    pub id: UserId,
    pub handle: String,
    pub display_name: String,
    pub created_at: i64,
    pub followers_count: i64,
    pub following_count: i64,
    pub posts_count: i64,
    /// List queries also select the list's sort time here (follow time, like time).
    #[serde(default)]
    pub sort_at: i64,
    /// The profile (migration 0036); a row read without it has the defaults.
    #[serde(flatten)]
    pub profile: Profile,
}

/// What a user edits of their profile (`services/profile.rs`), as their row holds it.
#[derive(Debug, Clone, Deserialize)]
pub struct Profile {
    #[serde(default)]
    pub note: String,
    /// A JSON array of `domain::profile::Field`; `None`: no fields.
    #[serde(default)]
    pub fields: Option<String>,
    /// The served path of the avatar's upload; `None`: the default image.
    #[serde(default)]
    pub avatar: Option<String>,
    #[serde(default)]
    pub header: Option<String>,
    #[serde(default)]
    pub locked: i64,
    #[serde(default)]
    pub bot: i64,
    #[serde(default = "one")]
    pub discoverable: i64,
    #[serde(default = "public")]
    pub post_privacy: String,
    #[serde(default)]
    pub post_sensitive: i64,
    #[serde(default)]
    pub post_language: Option<String>,
    /// Mastodon's `indexable` (migration 0041): public posts found by anyone's search.
    #[serde(default)]
    pub indexable: i64,
}

fn one() -> i64 {
    1
}

fn public() -> String {
    "public".into()
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            note: String::new(),
            fields: None,
            avatar: None,
            header: None,
            locked: 0,
            bot: 0,
            discoverable: 1,
            post_privacy: public(),
            post_sensitive: 0,
            post_language: None,
            indexable: 0,
        }
    }
}

impl UserRow {
    /// A row known only by its name (a post's author when the page read no account for it):
    /// counts zero, the default profile.
    pub fn named(id: UserId, handle: &str, display_name: &str) -> UserRow {
        UserRow {
            id,
            handle: handle.to_owned(),
            display_name: display_name.to_owned(),
            created_at: 0,
            followers_count: 0,
            following_count: 0,
            posts_count: 0,
            sort_at: 0,
            profile: Profile::default(),
        }
    }

    pub fn locked(&self) -> bool {
        self.profile.locked != 0
    }
}

/// The SQL expressions for the viewer (`?1`) relationship to a user id column (an author's),
/// read from that user's side alone, so they run on the author's database beside the posts:
/// the author-side copy of the viewer's follow (`followers`; the home feed overrides it with the
/// reader's own side, which is authoritative: `services/feed_io.rs`), a block either way as the
/// author's side knows it (see [`not_blocked_between`]), and the author's suspension.
pub fn relationship_columns(user_col: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM followers fr WHERE fr.author_id = {user_col} AND fr.follower_id = ?1) AS viewer_follows, \
         NOT {} AS blocked, {} AS suspended",
        not_blocked_between(user_col, "?1"),
        suspended(user_col)
    )
}

/// The SQL condition "this user is suspended" (the partial index holds only suspended users,
/// so this is one probe of a tiny index).
fn suspended(user_col: &str) -> String {
    format!("EXISTS (SELECT 1 FROM users su WHERE su.id = {user_col} AND su.suspended_at IS NOT NULL)")
}

/// The SQL condition "this user is not suspended".
pub fn not_suspended(user_col: &str) -> String {
    format!("NOT {}", suspended(user_col))
}

/// The SQL condition for a user shown in the viewer's (`?1`) lists (likers, comments, follow
/// lists): no block either way, and not suspended.
pub fn shown_to_viewer(user_col: &str) -> String {
    format!("{} AND {}", not_blocked_between("?1", user_col), not_suspended(user_col))
}

/// The SQL condition "no block either way between these two user expressions", read from the
/// side of `side` alone: its own `blocks` (authoritative) and `blocked_by` (the mirror of the
/// other's blocks, which appears when the block's event applies: normally within the request).
pub fn not_blocked_between(side: &str, other: &str) -> String {
    format!(
        "(NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = {side} AND b.blocked_id = {other}) \
         AND NOT EXISTS (SELECT 1 FROM blocked_by bb WHERE bb.blocked_id = {side} AND bb.blocker_id = {other}))"
    )
}

/// Claims `handle` for the new user `user` in the handle directory (on the handle's shard):
/// the one place handles are unique across databases. [`StoreError::AlreadyExists`] on
/// `handles.handle` if someone holds it.
pub async fn claim_handle(db: HandleDb<'_>, handle: &Handle, user: i64, now: i64) -> StoreResult<()> {
    // The row's shard is stored beside it: the freeze of a shard move (migrations/0013)
    // cannot compute the handle's hash in SQL.
    let claim = "INSERT INTO handles (handle, user_id, created_at, shard) VALUES (?1, ?2, ?3, ?4)";
    let shard = int(crate::domain::shard::shard_of_handle(handle.as_str()).index() as i64);
    exec(db, claim, &[text(handle.as_str()), int(user), int(now), shard]).await
}

/// Gives a claim back (a sign-up whose user row was not written); only the claim of `user`.
pub async fn release_handle(db: AnyDb<'_>, handle: &str, user: i64) -> StoreResult<()> {
    exec(db, "DELETE FROM handles WHERE handle = ?1 AND user_id = ?2", &[text(handle), int(user)]).await
}

/// Who holds a handle, by the directory.
pub async fn handle_owner(db: HandleDb<'_>, handle: &Handle) -> StoreResult<Option<UserId>> {
    #[derive(Deserialize)]
    struct Row {
        user_id: UserId,
    }
    let row: Option<Row> =
        first(db, "SELECT user_id FROM handles WHERE handle = ?1", &[text(handle.as_str())]).await?;
    Ok(row.map(|r| r.user_id))
}

/// Claims made between `from` and `to` (ms), for the pass that releases claims left without
/// a user by a crashed sign-up.
pub async fn recent_claims(db: AnyDb<'_>, from: i64, to: i64) -> StoreResult<Vec<(String, UserId)>> {
    #[derive(Deserialize)]
    struct Row {
        handle: String,
        user_id: UserId,
    }
    let rows: Vec<Row> = all(
        db,
        "SELECT handle, user_id FROM handles WHERE created_at >= ?1 AND created_at < ?2 LIMIT 500",
        &[int(from), int(to)],
    )
    .await?;
    Ok(rows.into_iter().map(|r| (r.handle, r.user_id)).collect())
}

/// Which of `ids` have a user row (each on its home database).
pub async fn existing(shards: &Shards, ids: &[UserId]) -> StoreResult<Vec<UserId>> {
    Ok(by_ids(shards, ids).await?.into_iter().map(|u| u.id).collect())
}

/// A new user row with the id `id` (claimed in the directory first); `password_hash` (see
/// `domain::password`) lets them also sign in with a password.
pub async fn insert(
    db: UserDb<'_>,
    id: i64,
    handle: &Handle,
    display_name: &DisplayName,
    password_hash: Option<&str>,
) -> StoreResult<UserRow> {
    let sql = "INSERT INTO users (id, handle, display_name, created_at, password_hash) VALUES (?1, ?2, ?3, ?4, ?5) \
               RETURNING id, handle, display_name, created_at, followers_count, following_count, posts_count";
    let params = [
        int(id),
        text(handle.as_str()),
        text(display_name.as_str()),
        int(snowflake_time(id)),
        opt_text(password_hash),
    ];
    match first::<UserRow>(db, sql, &params).await {
        Ok(Some(user)) => Ok(user),
        Ok(None) => Err(StoreError::Internal("INSERT ... RETURNING gave no row".into())),
        Err(e) => Err(e),
    }
}

#[derive(Deserialize)]
struct UserWithSuspension {
    #[serde(flatten)]
    user: UserRow,
    suspended: i64,
}

impl UserWithSuspension {
    fn user(self) -> UserRow {
        self.user
    }
}

#[derive(Deserialize)]
struct ViewerSide {
    viewer_follows: i64,
    blocked: i64,
}

/// How a user is named in a request.
#[derive(Debug, Clone, Copy)]
pub enum UserKey<'a> {
    Id(UserId),
    Handle(&'a Handle),
}

/// A user and what the viewer is to them; `None` if the user does not exist. The user comes
/// from their own row on their home database, the relationship from the viewer's side on the
/// viewer's: two statements, side by side.
pub async fn get_with_relationship(
    shards: &Shards,
    viewer: UserId,
    id: UserId,
) -> StoreResult<Option<(UserRow, Relationship)>> {
    let sql = format!(
        "SELECT {USER_COLUMNS}, u.suspended_at IS NOT NULL AS suspended FROM users u WHERE u.id = ?1"
    );
    let params = [int(id)];
    let user = first::<UserWithSuspension>(shards.user(id), &sql, &params);
    let (user, side) = futures_util::future::join(user, viewer_side(shards.user(viewer), viewer, id)).await;
    let Some(row) = user? else { return Ok(None) };
    let side = side?.unwrap_or(ViewerSide { viewer_follows: 0, blocked: 0 });
    let rel = Relationship {
        is_self: row.user.id == viewer,
        follows: side.viewer_follows != 0,
        blocked: side.blocked != 0,
        suspended: row.suspended != 0,
    };
    Ok(Some((row.user(), rel)))
}

/// The viewer's follow of `other` and a block either way, from the viewer's side alone.
async fn viewer_side(
    db_of_viewer: UserDb<'_>,
    viewer: UserId,
    other: UserId,
) -> StoreResult<Option<ViewerSide>> {
    let sql = format!(
        "SELECT EXISTS (SELECT 1 FROM follows WHERE follower_id = ?1 AND author_id = ?2) AS viewer_follows, \
         NOT {} AS blocked",
        not_blocked_between("?1", "?2")
    );
    first(db_of_viewer, &sql, &[int(viewer), int(other)]).await
}

/// What authentication needs of a user.
#[derive(Debug, Deserialize)]
pub struct AuthState {
    /// When the user last revoked their tokens (unix seconds; `None` if never).
    pub tokens_valid_after: Option<i64>,
    /// 0 or 1: suspended by an operator.
    suspended: i64,
    /// 0 or 1: the token asked about was revoked by id (`POST /oauth/revoke`).
    token_revoked: i64,
}

impl AuthState {
    pub fn is_suspended(&self) -> bool {
        self.suspended != 0
    }

    pub fn token_revoked(&self) -> bool {
        self.token_revoked != 0
    }
}

/// The user's [`AuthState`] (and whether the token `token_id` was revoked by id), or `None` if
/// there is no such user. One primary-key read and one primary-key probe, one round trip.
pub async fn auth_state(db: UserDb<'_>, id: UserId, token_id: Option<i64>) -> StoreResult<Option<AuthState>> {
    const SQL: &str = "SELECT tokens_valid_after, suspended_at IS NOT NULL AS suspended, \
                       EXISTS (SELECT 1 FROM revoked_tokens WHERE token_id = ?2) AS token_revoked \
                       FROM users WHERE id = ?1";
    first(db, SQL, &[int(id), token_id.map_or(JsValue::NULL, int)]).await
}

/// Revokes every token of the user issued up to `now_secs` (never moves the mark backwards).
pub async fn revoke_tokens(db: UserDb<'_>, id: UserId, now_secs: i64) -> StoreResult<()> {
    const REVOKE: &str =
        "UPDATE users SET tokens_valid_after = MAX(COALESCE(tokens_valid_after, 0), ?2) WHERE id = ?1";
    exec(db, REVOKE, &[int(id), int(now_secs)]).await
}

/// What a password sign-in needs of the user with this handle.
#[derive(Debug, Deserialize)]
pub struct Credentials {
    pub id: UserId,
    pub password_hash: Option<String>,
    suspended: i64,
}

impl Credentials {
    pub fn is_suspended(&self) -> bool {
        self.suspended != 0
    }
}

/// A user's sign-in credentials, by id (a handle is resolved by the directory first).
pub async fn credentials(db: UserDb<'_>, id: UserId) -> StoreResult<Option<Credentials>> {
    const SQL: &str =
        "SELECT id, password_hash, suspended_at IS NOT NULL AS suspended FROM users WHERE id = ?1";
    first(db, SQL, &[int(id)]).await
}

/// The users with these ids (any order; missing ids are left out): one statement per home
/// database, all sent at once.
pub async fn by_ids(shards: &Shards, ids: &[UserId]) -> StoreResult<Vec<UserRow>> {
    rows_by_ids(shards, ids, "").await
}

/// The users with these ids who are not suspended (any order; missing ids are left out).
pub async fn shown_by_ids(shards: &Shards, ids: &[UserId]) -> StoreResult<Vec<UserRow>> {
    rows_by_ids(shards, ids, "AND u.suspended_at IS NULL").await
}

async fn rows_by_ids(shards: &Shards, ids: &[UserId], and: &str) -> StoreResult<Vec<UserRow>> {
    let sql =
        format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id IN (SELECT value FROM json_each(?1)) {and}");
    let groups = shards.users_by_database(ids.iter().copied());
    let sql = &sql;
    let found = shards
        .across(groups, |db, ids| async move { all::<UserRow>(db, sql, &[text(&id_list(&ids))]).await })
        .await?;
    Ok(found.into_iter().flatten().collect())
}

/// Sign-ups per week from one database's share of the handle directory (`handles_by_time`):
/// `(week index from `from`, count)` for claims at or after `from` (ms). One indexed range read,
/// bounded by the claims of the weeks asked.
pub async fn claims_by_week(db: AnyDb<'_>, from: i64, week_ms: i64) -> StoreResult<Vec<(i64, i64)>> {
    #[derive(Deserialize)]
    struct Week {
        week: i64,
        n: i64,
    }
    let rows: Vec<Week> = all(
        db,
        "SELECT CAST((created_at - ?1) / ?2 AS INTEGER) AS week, COUNT(*) AS n FROM handles \
         WHERE created_at >= ?1 GROUP BY week",
        &[int(from), int(week_ms)],
    )
    .await?;
    Ok(rows.into_iter().map(|w| (w.week, w.n)).collect())
}
