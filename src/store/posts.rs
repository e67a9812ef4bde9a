//! Posts: publish (with outbox + idempotency), read with the viewer's relationship to each
//! author, edit, delete, and the author index used by author lists and the feed's pull path.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::error::Conflict;
use super::outbox::{post_event, returned_events};
use super::replica_bump::{bump_of, bump_statement, Bump};
use super::snowflake::insert_with_fresh_id;
use super::users::relationship_columns;
use super::{
    all, batch, first, first_id, id_list, int, opt_flag, opt_int, opt_text, run, stmt, text, AnyDb, PostDb,
    UserDb,
};
use super::{StoreError, StoreResult};
use crate::domain::cursor::SortKey;
use crate::domain::edit::PostEdit;
use crate::domain::feed::LiveState;
use crate::domain::ids::{OutboxId, PostId, UserId};
use crate::domain::media::Attachment;
use crate::domain::mentions::Mentioned;
use crate::domain::outbox::EventKind;
use crate::domain::polls::PollDraft;
use crate::domain::quotes::{QuotePolicy, QuoteState};
use crate::domain::read::{AuthorRelation, FeedRow};
use crate::domain::replica::HeldPost;
use crate::domain::snowflake::{shard_of_id, snowflake_time, IdSeed};
use crate::domain::validate::{IdempotencyKey, PostBody};
use crate::domain::visibility::{may_see_post, Relationship, Visibility};
use crate::domain::warning::ContentWarning;

/// D1 allows 100 bound parameters per statement; one is the viewer.
pub const IDS_PER_QUERY: usize = 90;

/// A post with its author and the viewer-relative columns (`?1` is the viewer).
pub fn post_select() -> String {
    format!("{} FROM posts p JOIN users u ON u.id = p.author_id", post_columns())
}

/// The columns of a [`PostRow`] over `posts p` and its author `users u`.
pub fn post_columns() -> String {
    format!("{}, {}", feed_columns(), relationship_columns("p.author_id"))
}

/// [`post_columns`] without the viewer's relationship to the author: feed reads read it once
/// per distinct author ([`relationships`]) instead of once per row.
pub fn feed_columns() -> String {
    "SELECT p.id, p.author_id, u.handle, u.display_name, u.indexable AS author_indexable, p.body, p.visibility, p.created_at, \
            p.edited_at, p.like_count, p.comment_count, p.taken_down_at IS NOT NULL AS taken_down, \
            p.spoiler_text, p.sensitive, p.media, p.reblog_of, p.reblog_count, p.mentions, \
            p.quote_of, p.quote_policy, p.quote_count, p.in_reply_to_id, p.in_reply_to_account_id, p.thread_id, \
            p.unlisted, EXISTS (SELECT 1 FROM likes l WHERE l.post_id = p.id AND l.user_id = ?1 AND l.liked = 1) \
              AS liked_by_me, \
            (SELECT json_object('options', json(pl.options), 'multiple', pl.multiple, 'hide_totals', \
               pl.hide_totals, 'expires_at', pl.expires_at, 'voters_count', pl.voters_count, 'votes', \
               json_array(pl.votes_0, pl.votes_1, pl.votes_2, pl.votes_3), 'own', \
               (SELECT json(v.choices) FROM poll_voters v WHERE v.post_id = pl.post_id AND v.user_id = ?1)) \
             FROM polls pl WHERE pl.post_id = p.id) AS poll"
        .to_string()
}

/// The viewer's (`?1`) relationship to each of `authors` (all on this database): one row per
/// author, read beside the page's posts.
pub fn relationships(db: AnyDb<'_>, viewer: UserId, authors: &[UserId]) -> StoreResult<SqlStatement> {
    let sql =
        format!("SELECT e.value AS author_id, {} FROM json_each(?2) e", relationship_columns("e.value"));
    stmt(db, &sql, &[int(viewer), text(&id_list(authors))])
}

/// One author's relationship to the viewer, as [`relationships`] reads it.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct AuthorRelationship {
    pub author_id: UserId,
    viewer_follows: i64,
    blocked: i64,
    suspended: i64,
}

impl AuthorRelationship {
    /// As the feed read takes it (which overrides the follow with the reader's own side of the
    /// edge, the authoritative one: the author's copy follows it through the queue).
    pub fn relation(&self) -> AuthorRelation {
        AuthorRelation {
            author: self.author_id,
            follows: self.viewer_follows != 0,
            blocked: self.blocked != 0,
            suspended: self.suspended != 0,
        }
    }
}

/// A quote's quoted post as a viewer sees it now: its state, and the post when it is shown.
#[derive(Debug, Clone)]
pub struct Quoted {
    pub id: PostId,
    pub state: QuoteState,
    pub post: Option<PostRow>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PostRow {
    pub id: PostId,
    /// Mastodon's `unlisted`: public, kept out of the public and tag timelines (migration 0039;
    /// rows cached before it read as listed).
    #[serde(default)]
    unlisted: i64,
    pub author_id: UserId,
    pub handle: String,
    pub display_name: String,
    pub body: String,
    pub visibility: Visibility,
    pub created_at: i64,
    pub edited_at: Option<i64>,
    pub like_count: i64,
    pub comment_count: i64,
    pub liked_by_me: i64,
    taken_down: i64,
    /// The content warning (`''`: none); rows cached before migration 0021 read as none.
    #[serde(default)]
    pub spoiler_text: String,
    #[serde(default)]
    sensitive: i64,
    /// The attachments (JSON, `domain::media::Attachment`; `NULL`: none; migration 0027).
    #[serde(default)]
    media: Option<String>,
    /// A boost's original (migration 0029; rows cached before it read as none).
    #[serde(default)]
    pub reblog_of: Option<PostId>,
    #[serde(default)]
    pub reblog_count: i64,
    /// Whom the post mentions (JSON, `domain::mentions::Mentioned`; `NULL`: nobody; migration
    /// 0030).
    #[serde(default)]
    mentions: Option<String>,
    /// The quoted post, for a quote (migration 0032; rows cached before it read as none).
    #[serde(default)]
    pub quote_of: Option<PostId>,
    /// Who may quote this post (`domain::quotes::QuotePolicy`).
    #[serde(default)]
    quote_policy: Option<String>,
    #[serde(default)]
    pub quote_count: i64,
    /// A reply's parent (a post, a reply post or a comment), its author, and the thread's root
    /// post (migration 0033; rows cached before it read as none).
    #[serde(default)]
    pub in_reply_to_id: Option<i64>,
    #[serde(default)]
    pub in_reply_to_account_id: Option<UserId>,
    #[serde(default)]
    pub thread_id: Option<PostId>,
    /// Its poll with the viewer's choices in it (migration 0038: `store/polls.rs::Stored` as
    /// JSON; `NULL`: none).
    #[serde(default)]
    poll: Option<Box<str>>,
    /// What a quote shows the viewer now, attached by `services/originals.rs::resolve` (never
    /// read from SQL or held by a replica).
    #[serde(skip)]
    pub quoted: Option<Box<Quoted>>,
    /// A boost's original as the viewer sees it now, attached by `services/boosts.rs` to the
    /// boosts a read shows (never read from SQL or held by a replica).
    #[serde(skip)]
    pub original: Option<Box<PostRow>>,
    /// Whether the viewer has an active boost of this post, where it was read (a page's marks,
    /// `services/originals.rs::Marks`, or a boost's own answer); `None`: not read (a row alone
    /// does not know: the viewer's boosts are on their home).
    #[serde(skip)]
    pub reblogged_by_me: Option<bool>,
    /// The relationship columns: read with the row ([`post_columns`]) or set from the
    /// author's [`AuthorRelationship`] (`FeedRow::attach`).
    #[serde(default)]
    viewer_follows: i64,
    #[serde(default)]
    blocked: i64,
    #[serde(default)]
    suspended: i64,
    /// The author's `indexable` now (migration 0041; rows cached before it read as not). A
    /// byte: it fits the row's padding, so the row does not grow.
    #[serde(default)]
    author_indexable: u8,
}

impl PostRow {
    /// Whether the author lets anyone's search find their public posts (Mastodon's flag).
    pub fn author_is_indexable(&self) -> bool {
        self.author_indexable != 0
    }

    pub fn relationship(&self, viewer: UserId) -> Relationship {
        Relationship {
            is_self: self.author_id == viewer,
            follows: self.viewer_follows != 0,
            blocked: self.blocked != 0,
            suspended: self.suspended != 0,
        }
    }

    pub fn is_taken_down(&self) -> bool {
        self.taken_down != 0
    }

    pub fn is_unlisted(&self) -> bool {
        self.unlisted != 0
    }

    pub fn is_sensitive(&self) -> bool {
        self.sensitive != 0
    }

    pub fn attachments(&self) -> Vec<Attachment> {
        Attachment::list_of(self.media.as_deref())
    }

    pub fn quote_policy(&self) -> QuotePolicy {
        self.quote_policy.as_deref().and_then(QuotePolicy::parse).unwrap_or_default()
    }

    /// Its poll as stored now (with its counts), if it has one.
    pub fn poll(&self) -> Option<crate::domain::polls::PollState> {
        super::polls::state_of(self.poll.as_deref()?).map(|(state, _)| state)
    }

    /// The viewer's choices in its poll (empty: none).
    pub fn own_votes(&self) -> Vec<u8> {
        self.poll.as_deref().and_then(super::polls::state_of).map(|(_, own)| own).unwrap_or_default()
    }

    pub fn mentioned(&self) -> Vec<Mentioned> {
        Mentioned::list_of(self.mentions.as_deref())
    }

    /// Whether the post is addressed to `user` (who may then see it though followers-only or
    /// direct): it mentions them, or it is a reply to them (Mastodon's clients mention the
    /// account replied to; a `/v1` comment addresses it without a mention).
    pub fn addresses(&self, user: UserId) -> bool {
        self.in_reply_to_account_id == Some(user)
            || (self.mentions.is_some() && self.mentioned().iter().any(|m| m.id == user))
    }

    /// Whether the viewer may open the post by its id now. Rows only ever come from queries
    /// that exclude deleted posts; a taken-down post stays visible to its author alone.
    pub fn visible_to(&self, viewer: UserId) -> bool {
        (!self.is_taken_down() || self.author_id == viewer)
            && may_see_post(self.relationship(viewer), self.visibility, self.addresses(viewer))
    }

    pub fn sort_key(&self) -> SortKey {
        SortKey::new(self.created_at, self.id.get())
    }

    /// What a status shows: the original of a boost whose original is attached, else the row.
    pub fn shown(&self) -> &PostRow {
        self.original.as_deref().unwrap_or(self)
    }
}

impl FeedRow for PostRow {
    fn key(&self) -> SortKey {
        self.sort_key()
    }

    fn author(&self) -> UserId {
        self.author_id
    }

    fn live_state(&self, viewer: UserId) -> LiveState {
        LiveState {
            relationship: self.relationship(viewer),
            visibility: self.visibility,
            taken_down: self.is_taken_down(),
            addresses_viewer: self.addresses(viewer),
            followed_tag: false,
            author_muted: false,
        }
    }

    fn tag_text(&self) -> Option<&str> {
        let listed = self.reblog_of.is_none() && self.visibility == Visibility::Public && !self.is_unlisted();
        listed.then_some(self.body.as_str())
    }

    fn attach(&mut self, r: &AuthorRelation) {
        self.viewer_follows = i64::from(r.follows);
        self.blocked = i64::from(r.blocked);
        self.suspended = i64::from(r.suspended);
    }

    fn relation(&self) -> AuthorRelation {
        AuthorRelation {
            author: self.author_id,
            follows: self.viewer_follows != 0,
            blocked: self.blocked != 0,
            suspended: self.suspended != 0,
        }
    }

    fn set_liked_by_me(&mut self, liked: bool) {
        self.liked_by_me = i64::from(liked);
    }

    fn filter_subject(&self) -> Option<(i64, Vec<String>)> {
        if self.reblog_of.is_some() {
            return None;
        }
        let mut texts = vec![self.body.clone(), self.spoiler_text.clone()];
        texts.extend(self.attachments().into_iter().map(|a| a.description));
        Some((self.id.get(), texts))
    }
}

/// Loads the live (not deleted) posts among `ids` with viewer-relative columns, in batched
/// queries of at most `IDS_PER_QUERY` ids. Does not filter by visibility; callers do.
pub async fn load_live(db: AnyDb<'_>, viewer: UserId, ids: &[PostId]) -> StoreResult<Vec<PostRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    rows_of(&batch(db, live_statements(db, viewer, ids)?).await?)
}

/// [`load_live`] as statements, to join a batch with other reads (one round trip).
pub fn live_statements(db: AnyDb<'_>, viewer: UserId, ids: &[PostId]) -> StoreResult<Vec<SqlStatement>> {
    live_statements_of(db, viewer, ids, &post_select())
}

/// The feed's hydration of at most [`IDS_PER_QUERY`] ids: [`live_statements`] without the
/// relationship columns, one statement.
pub fn feed_live_statement(db: AnyDb<'_>, viewer: UserId, ids: &[PostId]) -> StoreResult<SqlStatement> {
    let select = format!("{} FROM posts p JOIN users u ON u.id = p.author_id", feed_columns());
    live_statement(db, viewer, &ids[..ids.len().min(IDS_PER_QUERY)], &select)
}

fn live_statements_of(
    db: AnyDb<'_>,
    viewer: UserId,
    ids: &[PostId],
    select: &str,
) -> StoreResult<Vec<SqlStatement>> {
    ids.chunks(IDS_PER_QUERY).map(|chunk| live_statement(db, viewer, chunk, select)).collect()
}

fn live_statement(
    db: AnyDb<'_>,
    viewer: UserId,
    chunk: &[PostId],
    select: &str,
) -> StoreResult<SqlStatement> {
    let numbered: Vec<String> = (0..chunk.len()).map(|i| format!("?{}", i + 2)).collect();
    let sql = format!("{select} WHERE p.id IN ({}) AND p.deleted_at IS NULL", numbered.join(","));
    let mut params = vec![int(viewer)];
    params.extend(chunk.iter().map(|&id| int(id)));
    stmt(db, &sql, &params)
}

/// The rows of batch results that each returned [`PostRow`]s.
pub fn rows_of(results: &[crate::store::SqlResult]) -> StoreResult<Vec<PostRow>> {
    let mut rows = Vec::new();
    for result in results {
        rows.extend(result.results::<PostRow>()?);
    }
    Ok(rows)
}

/// One post if the viewer may see it now; `None` otherwise (absent, deleted, or hidden).
pub async fn get_visible(db: PostDb<'_>, viewer: UserId, id: PostId) -> StoreResult<Option<PostRow>> {
    Ok(load_live(db.any(), viewer, &[id]).await?.into_iter().find(|p| p.visible_to(viewer)))
}

/// One page of an author's posts at the given visibility levels, newest first, strictly after
/// `before`; fetches `limit + 1` rows so the caller can tell whether more exist.
pub async fn author_page(
    db: UserDb<'_>,
    viewer: UserId,
    author: UserId,
    levels: &[Visibility],
    before: Option<SortKey>,
    limit: usize,
) -> StoreResult<Vec<PostRow>> {
    if levels.is_empty() {
        return Ok(Vec::new());
    }
    let before = before.unwrap_or(SortKey::TOP);
    let level_params: Vec<String> = (0..levels.len()).map(|i| format!("?{}", i + 6)).collect();
    let sql = format!(
        "{} WHERE p.author_id = ?2 AND p.deleted_at IS NULL AND p.taken_down_at IS NULL \
           AND (p.created_at, p.id) < (?3, ?4) \
         AND p.visibility IN ({}) ORDER BY p.created_at DESC, p.id DESC LIMIT ?5",
        post_select(),
        level_params.join(",")
    );
    let mut params =
        vec![int(viewer), int(author), int(before.primary), int(before.id), int(limit as i64 + 1)];
    params.extend(levels.iter().map(|v| text(v.as_str())));
    all(db, &sql, &params).await
}

/// An `Idempotency-Key` in its scope (the user it belongs to, and the route: `publish:`,
/// `import:`), with the fingerprint of the request it was first used for.
pub struct IdempotencyScope {
    pub user: UserId,
    pub key: String,
    pub request_hash: String,
}

impl IdempotencyScope {
    pub fn new(user: UserId, route: &str, key: &IdempotencyKey, request_hash: String) -> Self {
        Self { user, key: format!("{route}:{key}"), request_hash }
    }
}

/// A reply's place: its parent (a post or a comment id), the parent's author, the thread's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyTo {
    pub parent: i64,
    pub parent_author: UserId,
    pub root: PostId,
}

pub struct NewPost<'a> {
    pub author_id: UserId,
    /// The text (`''` for a boost, which has none of its own).
    pub body: &'a str,
    /// The original, for a boost.
    pub reblog_of: Option<PostId>,
    /// Whom it mentions, resolved (`domain::mentions::Mentioned::column`; `None`: nobody).
    pub mentions: Option<&'a str>,
    /// The quoted post, for a quote (checked by `services::quotes::check`).
    pub quote_of: Option<PostId>,
    pub quote_policy: QuotePolicy,
    /// What a reply replies to (checked by `services::replies::target`).
    pub reply: Option<ReplyTo>,
    pub visibility: Visibility,
    /// Mastodon's `unlisted` (with `Public`): kept out of the public and tag timelines.
    pub unlisted: bool,
    pub warning: &'a ContentWarning,
    /// Uploads of the author's to attach, in order (checked by `services::media::for_post`).
    pub media: &'a [Attachment],
    pub created_at: i64,
    pub idempotency: Option<IdempotencyScope>,
    /// Its poll (checked by `domain::polls::PollDraft::parse`).
    pub poll: Option<&'a PollDraft>,
    /// The scheduled post it publishes (`store/scheduled.rs`): its row is deleted in this batch,
    /// which aborts if the row is gone or not due (needs `idempotency`).
    pub scheduled: Option<i64>,
}

/// What a publish answers: the post as its author sees it, read in the publish's own round trip
/// (the batch's last statement, or beside the key for a replay).
#[derive(Debug, Clone)]
pub struct Published {
    pub post_id: PostId,
    /// True when an earlier request with the same key already created the post.
    pub replayed: bool,
    /// The post as its author sees it (`None`: a replayed post deleted or hidden since).
    pub post: Option<PostRow>,
    /// The fan-out event to announce (`None` for a replay: the first request announced it).
    pub outbox_id: Option<OutboxId>,
    /// The author's replicas to tell (`None`: none, or a replay), and the post as they hold it.
    pub bump: Option<(Bump, HeldPost)>,
}

#[derive(Deserialize)]
struct IdempotentRow {
    post_id: PostId,
    request_hash: String,
}

/// What an earlier request under `scope` (the viewer's own key) made, in one round trip: its key
/// and its post as the viewer sees it, side by side. `None` if the key is unused; a different
/// request under the same key is refused with 409.
pub async fn replay(db: UserDb<'_>, scope: &IdempotencyScope) -> StoreResult<Option<Published>> {
    let viewer = scope.user;
    let key = "SELECT post_id, request_hash FROM idempotency_keys WHERE user_id = ?1 AND key = ?2";
    let post = format!(
        "{} WHERE p.id = (SELECT post_id FROM idempotency_keys WHERE user_id = ?1 AND key = ?2) \
           AND p.deleted_at IS NULL",
        post_select()
    );
    let params = [int(viewer), text(&scope.key)];
    let results = batch(db, vec![stmt(db, key, &params)?, stmt(db, &post, &params)?]).await?;
    let row: Option<IdempotentRow> = match results.first() {
        Some(result) => result.results()?.into_iter().next(),
        None => None,
    };
    match row {
        None => Ok(None),
        Some(r) if r.request_hash == scope.request_hash => Ok(Some(Published {
            post_id: r.post_id,
            replayed: true,
            post: rows_of(results.get(1..).unwrap_or_default())?.into_iter().find(|p| p.visible_to(viewer)),
            outbox_id: None,
            bump: None,
        })),
        Some(r) => Err(StoreError::Conflict {
            reason: Conflict::KeyReused,
            detail: format!("the idempotency key made post {} for another request", r.post_id.get()),
        }),
    }
}

/// The publish batch: the post (with snowflake id `id`), its outbox event, and the key.
fn insert_post_statement(
    db: UserDb<'_>,
    post: &NewPost<'_>,
    id: i64,
    created_at: i64,
) -> StoreResult<SqlStatement> {
    stmt(
        db,
        "INSERT INTO posts (id, author_id, body, visibility, created_at, spoiler_text, sensitive, media, reblog_of, \
           mentions, quote_of, quote_policy, in_reply_to_id, in_reply_to_account_id, thread_id, unlisted) \
         VALUES (?5, ?1, ?2, ?3, ?4, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) RETURNING id",
        &[
            int(post.author_id),
            text(post.body),
            text(post.visibility.as_str()),
            int(created_at),
            int(id),
            text(&post.warning.spoiler_text),
            int(i64::from(post.warning.sensitive)),
            media_column(post.media)?,
            opt_int(post.reblog_of.map(PostId::get)),
            opt_text(post.mentions),
            opt_int(post.quote_of.map(PostId::get)),
            text(post.quote_policy.as_str()),
            opt_int(post.reply.map(|r| r.parent)),
            opt_int(post.reply.map(|r| r.parent_author.get())),
            opt_int(post.reply.map(|r| r.root.get())),
            int(i64::from(post.unlisted && post.visibility == Visibility::Public)),
        ],
    )
}

/// The `media` column of a post with `media` (`NULL` for none).
fn media_column(media: &[Attachment]) -> StoreResult<worker::wasm_bindgen::JsValue> {
    let json = (!media.is_empty()).then(|| serde_json::to_string(media)).transpose();
    Ok(opt_text(json.map_err(|e| StoreError::Internal(e.to_string()))?.as_deref()))
}

/// The publish batch's idempotency key, and for a scheduled post its row's delete after it
/// (the key's `request_hash` is read from that row: gone or not due, the batch aborts).
fn key_statements(db: UserDb<'_>, post: &NewPost<'_>, now: i64) -> StoreResult<Vec<SqlStatement>> {
    let Some(scope) = &post.idempotency else { return Ok(Vec::new()) };
    let mut params = vec![int(scope.user), text(&scope.key), text(&scope.request_hash), int(now)];
    let hash = match post.scheduled {
        Some(scheduled) => {
            params.push(int(scheduled));
            super::scheduled::guard_sql("?3", "?5", "?4")
        }
        None => "?3".to_owned(),
    };
    let mut statements = vec![stmt(
        db,
        &format!(
            "INSERT INTO idempotency_keys (user_id, key, request_hash, post_id, created_at) \
             VALUES (?1, ?2, {hash}, (SELECT post_id FROM outbox WHERE id = last_insert_rowid()), ?4)"
        ),
        &params,
    )?];
    if let Some(scheduled) = post.scheduled {
        statements.push(super::scheduled::consume_statement(db, post.author_id, scheduled)?);
    }
    Ok(statements)
}

fn publish_statements(
    db: UserDb<'_>,
    post: &NewPost<'_>,
    id: i64,
    now: i64,
) -> StoreResult<Vec<SqlStatement>> {
    // The post's time is its id's: a crowded millisecond moves both (store::snowflake).
    let created_at = snowflake_time(id);
    let mut statements = vec![
        insert_post_statement(db, post, id, created_at)?,
        stmt(
            db,
            &format!(
                "INSERT INTO outbox (id, kind, post_id, author_id, post_created_at, created_at) \
                 VALUES ({}, 'post', last_insert_rowid(), ?1, ?2, ?3) RETURNING id",
                super::outbox::new_id_sql("?4")
            ),
            &[int(post.author_id), int(created_at), int(now), super::outbox::shard_param(post.author_id)],
        )?,
    ];
    statements.extend(key_statements(db, post, now)?);
    if let Some(poll) = post.poll {
        statements.push(super::polls::insert_statement(db, (id, post.author_id), poll, created_at)?);
    }
    statements.extend(super::media::attach_statements(db, (id, post.scheduled), post.author_id, post.media)?);
    // The author's posting rate (hybrid fan-out policy) moves in the same batch, no extra trip,
    // and so does the rolling count the fan-out health figure divides by.
    statements.push(super::policy::count_post(db, post.author_id, created_at, now)?);
    // (Imports are not publications: their fan-out health is not the product's.) Then the
    // replicas' change number, and last the post as its author sees it, read back in the same
    // round trip ([`published`]).
    let published = i64::from(post.created_at == now);
    statements.push(super::stats::count_minute(db, "published", now, published)?);
    statements.push(bump_statement(db, post.author_id)?);
    statements.push(live_statement(db.any(), post.author_id, &[PostId::from_trusted(id)], &post_select())?);
    Ok(statements)
}

/// The publish batch's answer ([`publish_statements`]): the post's and the event's ids first,
/// the replicas' bump and the post read back last.
fn published(results: &[crate::store::SqlResult]) -> StoreResult<Published> {
    let [.., bump, read_back] = results else {
        return Err(StoreError::Internal("the publish batch gave too few results".into()));
    };
    let post = rows_of(std::slice::from_ref(read_back))?.into_iter().next();
    let bump = match (bump_of(Some(bump))?, &post) {
        (Some(bump), Some(post)) => {
            let row = read_back.results::<serde_json::Value>()?.into_iter().next().unwrap_or_default();
            Some((bump, held_of_authors_row(row, post)))
        }
        (Some(_), None) => return Err(StoreError::Internal("the new post was not read back".into())),
        (None, _) => None,
    };
    Ok(Published {
        post_id: PostId::from_trusted(first_id(results.first())?),
        replayed: false,
        post,
        outbox_id: Some(OutboxId::from_trusted(first_id(results.get(1))?)),
        bump,
    })
}

/// A new post as its author's replicas hold it (`store::replica::held_post`'s row: the feed
/// columns for no viewer), from the row its author read ([`post_columns`]): the same less the
/// author's relationship to itself (a post in the batch that made it has no likes, so its
/// `liked_by_me` is 0 for anyone).
fn held_of_authors_row(mut row: serde_json::Value, post: &PostRow) -> HeldPost {
    if let Some(columns) = row.as_object_mut() {
        for relationship in ["viewer_follows", "blocked", "suspended"] {
            columns.remove(relationship);
        }
    }
    HeldPost { id: post.id, created_at: post.created_at, row: row.to_string().into() }
}

/// Inserts the post, its outbox event and (if given) its idempotency key in one atomic batch,
/// so a post never exists without the event that fans it out, and a retried request can never
/// create a second post: a repeat (or a concurrent duplicate) fails the key's primary key and
/// rolls back, and then the key says what the first request made ([`replay`]). The key is
/// not read before: a first request is the batch alone, one round trip with its post read back.
pub async fn publish(db: UserDb<'_>, post: NewPost<'_>, now: i64, seed: IdSeed) -> StoreResult<Published> {
    let post = &post;
    let insert = |id: i64| async move { batch(db, publish_statements(db, post, id, now)?).await };
    // A new id per attempt: the batch is atomic, so a colliding one leaves nothing behind.
    match insert_with_fresh_id(seed, post.created_at, shard_of_id(post.author_id.get()), "posts.id", insert)
        .await
    {
        Ok(results) => published(&results),
        Err(e) if e.is_unique_violation("idempotency_keys") => {
            let scope = post.idempotency.as_ref().ok_or(e)?;
            replay(db, scope)
                .await?
                .ok_or_else(|| StoreError::Internal("idempotency key vanished after conflict".into()))
        }
        Err(e) => Err(e),
    }
}

/// Applies an edit by the author (and whether it changed what the post shows: its earlier
/// version archived, `store/edits.rs`). A visibility change that matters to followers' windows
/// (to or from `private`: followers see both other levels) records its outbox event and raises
/// the post's state version in the same atomic batch, both decided by the row's value *inside*
/// the transaction, never by a read taken before it: two concurrent edits each record the
/// transition they really made, in commit order.
pub async fn edit(
    db: PostDb<'_>,
    (post_id, author): (PostId, UserId),
    edit: &PostEdit,
    now: i64,
) -> StoreResult<(Vec<OutboxId>, Option<Bump>, bool)> {
    let (body, visibility) = (edit.text.as_ref(), edit.visibility);
    let visibility = opt_text(visibility.map(Visibility::as_str));
    let event = stmt(
        db,
        &format!(
            "INSERT INTO outbox (id, kind, post_id, author_id, post_created_at, created_at) \
             SELECT {}, CASE WHEN ?2 = 'private' THEN 'remove_post' ELSE 'post' END, id, author_id, created_at, ?3 \
             FROM posts WHERE id = ?1 AND deleted_at IS NULL AND ?2 IS NOT NULL \
               AND (visibility = 'private') <> (?2 = 'private') RETURNING id",
            super::outbox::new_id_sql("?4")
        ),
        &[int(post_id), visibility.clone(), int(now), super::outbox::shard_param(post_id)],
    )?;
    let update = stmt(
        db,
        &format!(
            "UPDATE posts SET body = COALESCE(?2, body), visibility = COALESCE(?3, visibility), edited_at = ?4, \
               unlisted = COALESCE(?7, unlisted), \
               state_version = state_version + (?3 IS NOT NULL AND (visibility = 'private') <> (?3 = 'private')), \
               {} \
             WHERE id = ?1 AND deleted_at IS NULL",
            warning_edit("?5", "?6")
        ),
        &[
            int(post_id),
            opt_text(body.map(PostBody::as_str)),
            visibility,
            int(now),
            opt_text(edit.warning.spoiler_text.as_deref()),
            opt_flag(edit.warning.sensitive),
            opt_flag(edit.unlisted),
        ],
    )?;
    let archive = super::edits::archive_statement(db, post_id, edit, now)?;
    let bump = bump_statement(db, author)?;
    let results = batch(db, vec![event, archive, update, bump]).await?;
    // Only the event's statement returns rows; the archive's changed row says the edit changed
    // what the post shows.
    let archived = super::changed_rows(results.get(1)) > 0;
    Ok((returned_events(&results[..1.min(results.len())]), bump_of(results.get(3))?, archived))
}

/// The content warning's part of an edit (the parameters `text` and `flag` hold the new values,
/// either `NULL` to keep): a status stays sensitive while it has a warning text
/// (`domain::warning`).
pub fn warning_edit(text: &str, flag: &str) -> String {
    format!(
        "spoiler_text = COALESCE({text}, spoiler_text), \
         sensitive = (COALESCE({flag}, sensitive) OR COALESCE({text}, spoiler_text) <> '')"
    )
}

/// Soft-deletes (the row stays for counts and audit; every read excludes it) and records the
/// event that removes it from timeline windows.
pub async fn delete(
    db: PostDb<'_>,
    (post_id, author): (PostId, UserId),
    now: i64,
) -> StoreResult<(Vec<OutboxId>, Option<Bump>)> {
    let results = batch(
        db,
        vec![
            stmt(
                db,
                "UPDATE posts SET deleted_at = ?2, state_version = state_version + 1 \
                 WHERE id = ?1 AND deleted_at IS NULL",
                &[int(post_id), int(now)],
            )?,
            post_event(db, EventKind::RemovePost, post_id, now)?,
            bump_statement(db, author)?,
            super::media::gone_statement(db.any(), post_id, now)?,
        ],
    )
    .await?;
    Ok((returned_events(&results[..2.min(results.len())]), bump_of(results.get(2))?))
}

/// Drops idempotency keys created before `before` (retries only come within minutes).
pub async fn purge_idempotency_keys(db: AnyDb<'_>, before: i64) -> StoreResult<usize> {
    run(db, "DELETE FROM idempotency_keys WHERE created_at < ?1", &[int(before)]).await
}

/// A post's state as window events need it, read when the event is applied.
#[derive(Debug, Clone, Deserialize)]
pub struct PostState {
    pub author_id: UserId,
    pub created_at: i64,
    pub visibility: Visibility,
    /// 0 or 1 (SQLite has no booleans).
    deleted: i64,
    taken_down: i64,
    author_suspended: i64,
    pub state_version: i64,
    /// A boost's original (migration 0029).
    pub reblog_of: Option<PostId>,
    /// Whom it mentions (migration 0030, JSON).
    pub mentions: Option<String>,
    /// The quoted post, for a quote (migration 0032).
    pub quote_of: Option<PostId>,
    /// A reply's parent, its author and the thread's root (migration 0033).
    pub in_reply_to_id: Option<i64>,
    pub in_reply_to_account_id: Option<UserId>,
    pub thread_id: Option<PostId>,
    /// Its text, for the tags it is delivered under (`domain/tags.rs`).
    #[serde(default)]
    pub body: String,
    /// Mastodon's `unlisted` (migration 0039): never delivered to a tag's followers.
    #[serde(default)]
    unlisted: i64,
}

impl PostState {
    pub fn is_unlisted(&self) -> bool {
        self.unlisted != 0
    }

    pub fn is_deleted(&self) -> bool {
        self.deleted != 0
    }

    pub fn is_taken_down(&self) -> bool {
        self.taken_down != 0
    }

    pub fn author_is_suspended(&self) -> bool {
        self.author_suspended != 0
    }
}

/// [`PostState`]'s fields: each name and its expression over a `posts` row.
const STATE_FIELDS: [(&str, &str); 15] = [
    ("author_id", "author_id"),
    ("created_at", "created_at"),
    ("visibility", "visibility"),
    ("deleted", "deleted_at IS NOT NULL"),
    ("taken_down", "taken_down_at IS NOT NULL"),
    ("state_version", "state_version"),
    ("author_suspended", "(SELECT suspended_at IS NOT NULL FROM users WHERE id = posts.author_id)"),
    ("reblog_of", "reblog_of"),
    ("mentions", "mentions"),
    ("quote_of", "quote_of"),
    ("in_reply_to_id", "in_reply_to_id"),
    ("in_reply_to_account_id", "in_reply_to_account_id"),
    ("thread_id", "thread_id"),
    ("body", "body"),
    ("unlisted", "unlisted"),
];

/// The post's current state, deleted or not; `None` if no such row exists.
pub async fn state(db: PostDb<'_>, post_id: PostId) -> StoreResult<Option<PostState>> {
    let columns: Vec<String> = STATE_FIELDS.iter().map(|(name, expr)| format!("{expr} AS {name}")).collect();
    first(db, &format!("SELECT {} FROM posts WHERE id = ?1", columns.join(", ")), &[int(post_id)]).await
}

/// [`state`] as one JSON object, an SQL expression over the `posts` row in scope: to read the
/// state inside another statement (`store/fanout_ahead.rs`).
pub fn state_object_sql() -> String {
    let pairs: Vec<String> = STATE_FIELDS.iter().map(|(name, expr)| format!("'{name}', {expr}")).collect();
    format!("json_object({})", pairs.join(", "))
}

impl PostState {
    /// The state as [`state_object_sql`] wrote it.
    pub fn from_object(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }
}
