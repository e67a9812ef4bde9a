//! Notification rows on the recipient's home database (migration 0015): the statements the
//! like, comment and follow-mirror batches add (`domain/notifications.rs` says why each is
//! written on its change's transition), and the reads, with the read-time rules in SQL.
//!
//! The statements are plain SQL in those write paths rather than triggers: a shard move's copy
//! also writes `likes`, `comments` and `followers` rows, and a trigger would mint duplicates
//! there.

use crate::store::SqlStatement;
use serde::Deserialize;

use super::users::not_blocked_between;
use super::StoreResult;
use super::{all, batch, changed_rows, id_list, int, stmt, text, PostDb, UserDb};
use crate::domain::boosts::BoostMirror;
use crate::domain::ids::{CommentId, PostId, UserId, MAX_ID};
use crate::domain::likes::LikeOp;
use crate::domain::notifications::{Kind, KindFilter, Notice, GROUP_WINDOW_MS};
use crate::domain::quotes::QuoteMirror;

/// `notifications.filtered` of a dismissed notification (migration 0044): a tombstone, in no
/// list or count (those read 0, shown, or 1, a request's), kept so that a late second write of
/// the same notification (a mention's outbox event after the request's own) finds it and adds
/// nothing; withdrawing the cause deletes it whatever its flag.
pub const DISMISSED: i64 = 2;

/// The next notification id of `recipient` (an SQL expression) made at `now` (a parameter):
/// `domain/notifications.rs::next_id` in SQL, one seek on the primary key.
fn new_id_sql(recipient: &str, now: &str) -> String {
    format!(
        "(SELECT MAX(({now} << 11) | ({recipient} & 2040), COALESCE(CASE WHEN (m & 7) < 7 THEN m + 1 \
           ELSE (((m >> 11) + 1) << 11) | ({recipient} & 2040) END, 0)) \
         FROM (SELECT MAX(COALESCE((SELECT MAX(id) FROM notifications WHERE recipient_id = {recipient}), 0), \
           COALESCE((SELECT notice_max FROM users WHERE id = {recipient}), 0)) AS m))"
    )
}

/// `INSERT ... SELECT` of one notification for `recipient`, unless one of the same subject
/// exists; `from_where` supplies the `FROM ... WHERE ...` that decides whether it is due. It
/// returns the row it made with the recipient's `live_until` and whether they have a push
/// subscription (read by [`notice`]); a filtered notification (held as a request) has neither.
fn insert_sql(
    recipient: &str,
    now: &str,
    kind: Kind,
    actor: &str,
    post: &str,
    comment: &str,
    from_where: &str,
) -> String {
    let kind = kind.as_str();
    let policy = policy_sql(recipient, actor);
    format!(
        "INSERT INTO notifications (recipient_id, id, kind, actor_id, post_id, comment_id, filtered) \
         SELECT {recipient}, {id}, '{kind}', {actor}, {post}, {comment}, {policy} = 1 {from_where} \
           AND {policy} < 2 \
           AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.recipient_id = {recipient} AND n.kind = '{kind}' \
             AND n.actor_id = {actor} AND n.post_id = {post} AND n.comment_id = {comment}) \
         RETURNING recipient_id, id, \
           (SELECT u.live_until FROM users u WHERE u.id = recipient_id AND filtered = 0) AS live_until, \
           (filtered = 0 AND EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.user_id = recipient_id)) AS pushed",
        id = new_id_sql(recipient, now),
    )
}

/// What the recipient's notification policy (migration 0037) does with a notification from
/// `actor`, as an SQL expression: 0 accept, 1 filter (held out of the lists, into a request),
/// 2 drop (never stored); the strictest of the criteria the actor meets. An actor whose
/// request the recipient accepted passes. Both criteria read the recipient's home, where the
/// notification is written: their `follows` (whom they follow) and `followers` (the mirror of
/// who follows them). `for_new_accounts`, `for_private_mentions` and `for_limited_accounts`
/// are stored and answered, not applied (docs/mastodon.md).
fn policy_sql(recipient: &str, actor: &str) -> String {
    let level = |column: &str| format!("CASE p.{column} WHEN 'drop' THEN 2 WHEN 'filter' THEN 1 ELSE 0 END");
    format!(
        "COALESCE((SELECT MAX( \
           CASE WHEN EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = {recipient} AND f.author_id = {actor}) \
             THEN 0 ELSE {not_following} END, \
           CASE WHEN EXISTS (SELECT 1 FROM followers f WHERE f.author_id = {recipient} AND f.follower_id = {actor}) \
             THEN 0 ELSE {not_followers} END) \
         FROM notification_policies p WHERE p.user_id = {recipient} \
           AND NOT EXISTS (SELECT 1 FROM notification_accepted a WHERE a.user_id = {recipient} AND a.actor_id = {actor})), 0)",
        not_following = level("for_not_following"),
        not_followers = level("for_not_followers"),
    )
}

/// The window of a notification id (an SQL expression), as `notifications_by_group` indexes it.
fn window_of(id: &str) -> String {
    format!("(({id} >> 11) / {GROUP_WINDOW_MS})")
}

/// The first id of the window of `id` (an SQL expression).
fn window_start(id: &str) -> String {
    format!("(((({id} >> 11) / {GROUP_WINDOW_MS}) * {GROUP_WINDOW_MS}) << 11)")
}

/// How far a like's notification id may run ahead of its `liked_at`: an id takes the next
/// millisecond after 8 in one (`domain/notifications.rs::next_id`), so only a recipient sent
/// thousands of notifications a second for an hour would pass it. Bounds the `liked_at` range
/// a window's likes are read in (`likes_by_post_time`).
const NOTICE_DRIFT_MS: i64 = 3_600_000;

/// The `likes l` rows that are shown favourites of post `post` in window `b` (SQL
/// expressions): one range of `likes_by_post_time`, then the window of the notice itself.
pub(super) fn window_likes_sql(post: &str, b: &str) -> String {
    format!(
        "l.post_id = {post} AND l.liked = 1 AND l.liked_at < ((({b}) + 1) * {GROUP_WINDOW_MS}) \
         AND l.liked_at > (({b}) * {GROUP_WINDOW_MS}) - {NOTICE_DRIFT_MS} AND l.notice_id > 0 \
         AND {} = ({b})",
        window_of("l.notice_id")
    )
}

/// A group row of recipient `?1` (alias `g`): a post's favourites of one window (migration 0048).
pub(super) const GROUP_ROW: &str = "g.recipient_id = ?1 AND g.kind = 'favourite' AND g.actor_id = 0";

/// The notification id a like gets when it turns on (`likes.notice_id`, written by its upsert,
/// `store/likes.rs`): a new id of the post's author when the like notifies them and their
/// policy accepts the liker (a filtered like is a row of its own: [`on_like_op`]); else NULL.
/// `?1` post, `?2` liker, `?3` liked, `?5` now.
pub fn like_notice_sql() -> String {
    let author = "(SELECT author_id FROM posts WHERE id = ?1)";
    format!(
        "CASE WHEN ?3 = 1 AND {author} <> ?2 AND {} = 0 THEN {} END",
        policy_sql(author, "?2"),
        new_id_sql(author, "?5")
    )
}

/// After a like request's upsert. A like that just turned on (its `liked_at` is this request's
/// time) and got a notice id (see [`like_notice_sql`]) makes its window's group row if the
/// post has none yet, or else raises its recipient's highest id (each answers the notice for
/// their live socket and push); a like the policy filters is a notification row of its own. An
/// unlike that left the like off removes its row, and the group rows of its window that no
/// like holds any more. Never for a like of your own post.
pub fn on_like_op(db: PostDb<'_>, op: &LikeOp) -> StoreResult<[SqlStatement; 3]> {
    if op.like {
        let params = [int(op.post_id), int(op.user_id), int(op.now)];
        return Ok([
            stmt(db, &like_group_sql(), &params)?,
            stmt(db, &like_max_sql(), &params)?,
            stmt(db, &like_filtered_sql(), &params)?,
        ]);
    }
    let row = format!(
        "DELETE FROM notifications WHERE recipient_id = (SELECT author_id FROM posts WHERE id = ?1) \
           AND kind = '{}' AND actor_id = ?2 AND post_id = ?1 AND comment_id = 0 \
           AND NOT EXISTS (SELECT 1 FROM likes WHERE post_id = ?1 AND user_id = ?2 AND liked = 1)",
        Kind::Favourite.as_str()
    );
    let params = [int(op.post_id), int(op.user_id)];
    Ok([stmt(db, &row, &params)?, stmt(db, &unlike_group_sql(), &params)?, stmt(db, "SELECT 1", &[])?])
}

/// The like just turned on, with its notice id (`?1` post, `?2` liker, `?3` now).
const LIKE_TURNED_ON: &str =
    "l.post_id = ?1 AND l.user_id = ?2 AND l.liked = 1 AND l.liked_at = ?3 AND l.notice_id > 0";

/// A like into a group row made before it raises the recipient's highest id to its notice id
/// (a like that makes its group row has its id in `notifications` already), answering it as
/// [`notice`] reads it. A repeated write of the same request finds the id reached and answers
/// nothing.
fn like_max_sql() -> String {
    format!(
        "UPDATE users SET notice_max = l.notice_id FROM likes l WHERE {LIKE_TURNED_ON} \
           AND users.id = (SELECT author_id FROM posts WHERE id = ?1) AND users.notice_max < l.notice_id \
           AND EXISTS (SELECT 1 FROM notifications g WHERE g.recipient_id = users.id AND g.kind = 'favourite' \
             AND g.actor_id = 0 AND g.post_id = ?1 AND g.comment_id = 0 AND {} = {} AND g.id < l.notice_id) \
         RETURNING users.id AS recipient_id, users.notice_max AS id, users.live_until AS live_until, \
           EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.user_id = users.id) AS pushed",
        window_of("g.id"),
        window_of("l.notice_id")
    )
}

/// The window's group row, unless the post has one there (`notifications_by_subject`),
/// answering the like's notice as [`notice`] reads it.
fn like_group_sql() -> String {
    format!(
        "INSERT INTO notifications (recipient_id, id, kind, actor_id, post_id, comment_id, filtered) \
         SELECT p.author_id, l.notice_id, 'favourite', 0, ?1, 0, 0 FROM posts p JOIN likes l ON {LIKE_TURNED_ON} \
         WHERE p.id = ?1 AND NOT EXISTS (SELECT 1 FROM notifications g WHERE g.recipient_id = p.author_id \
           AND g.kind = 'favourite' AND g.actor_id = 0 AND g.post_id = ?1 AND g.comment_id = 0 \
           AND {} = {}) \
         RETURNING recipient_id, id, (SELECT u.live_until FROM users u WHERE u.id = recipient_id) AS live_until, \
           EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.user_id = recipient_id) AS pushed",
        window_of("g.id"),
        window_of("l.notice_id")
    )
}

/// A like the recipient's policy filters: a row of its own, held as the liker's request.
fn like_filtered_sql() -> String {
    let from_where = format!(
        "FROM posts p JOIN likes l ON l.post_id = p.id AND l.user_id = ?2 \
         WHERE p.id = ?1 AND p.author_id <> ?2 AND l.liked = 1 AND l.liked_at = ?3 AND {} = 1",
        policy_sql("p.author_id", "?2")
    );
    insert_sql("p.author_id", "?3", Kind::Favourite, "?2", "?1", "0", &from_where)
}

/// After an unlike: the post's group rows in the windows its like could have notified in
/// (from its `liked_at`, which an unlike keeps) go when no like holds an id in them, shown or
/// dismissed (a dismissed like keeps its group, so the row's window stays found).
fn unlike_group_sql() -> String {
    let liked_at = "(SELECT liked_at FROM likes WHERE post_id = ?1 AND user_id = ?2 AND liked = 0)";
    format!(
        "DELETE FROM notifications WHERE recipient_id = (SELECT author_id FROM posts WHERE id = ?1) \
           AND kind = 'favourite' AND actor_id = 0 AND post_id = ?1 AND comment_id = 0 \
           AND {w} BETWEEN {liked_at} / {GROUP_WINDOW_MS} AND ({liked_at} + {NOTICE_DRIFT_MS}) / {GROUP_WINDOW_MS} \
           AND NOT EXISTS (SELECT 1 FROM likes l WHERE l.post_id = ?1 AND l.liked = 1 \
             AND l.liked_at < (({w} + 1) * {GROUP_WINDOW_MS}) AND l.liked_at > ({w} * {GROUP_WINDOW_MS}) - {NOTICE_DRIFT_MS} \
             AND l.notice_id IS NOT NULL AND ((abs(l.notice_id) >> 11) / {GROUP_WINDOW_MS}) = {w})",
        w = window_of("notifications.id")
    )
}

/// Before the original's `reblogs` mirror is written (`store/reblogs.rs::converge`): a boost the
/// mirror does not hold yet notifies the original's author (never for a boost of one's own
/// post). A repeated convergence finds the row held and does nothing, so a dismissed
/// notification stays dismissed.
pub fn on_reblog(db: PostDb<'_>, boost: &BoostMirror) -> StoreResult<SqlStatement> {
    let sql = insert_sql(
        "p.author_id",
        "?4",
        Kind::Reblog,
        "?3",
        "?1",
        "0",
        "FROM posts p WHERE p.id = ?1 AND p.author_id <> ?3 \
           AND NOT EXISTS (SELECT 1 FROM reblogs r WHERE r.post_id = ?1 AND r.boost_id = ?2)",
    );
    stmt(db, &sql, &[int(boost.original), int(boost.boost), int(boost.booster), int(boost.now)])
}

/// After the mirror turned a boost off: its notification goes, unless the booster boosts the
/// post again meanwhile (a new boost row, active).
pub fn off_reblog(db: PostDb<'_>, boost: &BoostMirror) -> StoreResult<SqlStatement> {
    let sql = format!(
        "DELETE FROM notifications WHERE recipient_id = (SELECT author_id FROM posts WHERE id = ?1) \
           AND kind = '{}' AND actor_id = ?2 AND post_id = ?1 AND comment_id = 0 \
           AND NOT EXISTS (SELECT 1 FROM reblogs WHERE post_id = ?1 AND booster_id = ?2 AND active = 1)",
        Kind::Reblog.as_str()
    );
    stmt(db, &sql, &[int(boost.original), int(boost.booster)])
}

/// A quote the quoted post's mirror does not hold yet notifies the quoted post's author (never
/// for quoting oneself); the notification's post is the quote. A repeated convergence finds the
/// row held and does nothing.
pub fn on_quote(db: PostDb<'_>, quote: &QuoteMirror) -> StoreResult<SqlStatement> {
    let sql = insert_sql(
        "p.author_id",
        "?4",
        Kind::Quote,
        "?3",
        "?2",
        "0",
        "FROM posts p WHERE p.id = ?1 AND p.author_id <> ?3 \
           AND NOT EXISTS (SELECT 1 FROM quotes q WHERE q.post_id = ?1 AND q.quote_id = ?2)",
    );
    stmt(db, &sql, &[int(quote.quoted), int(quote.quote), int(quote.quoter), int(quote.now)])
}

/// A quote gone: its notification goes with it.
pub fn off_quote(db: PostDb<'_>, quote: &QuoteMirror) -> StoreResult<SqlStatement> {
    let sql = format!(
        "DELETE FROM notifications WHERE recipient_id = (SELECT author_id FROM posts WHERE id = ?1) \
           AND kind = '{}' AND actor_id = ?3 AND post_id = ?2 AND comment_id = 0",
        Kind::Quote.as_str()
    );
    stmt(db, &sql, &[int(quote.quoted), int(quote.quote), int(quote.quoter)])
}

/// On a mentioned user's home: a post of `author` that mentions `recipient` notifies them, once,
/// unless either blocks the other or the recipient mutes the author's notifications (a mention
/// lets its account see the post whatever its visibility: `domain/visibility.rs::may_see_post`).
/// A repeated call (the post's redelivered event) finds it made and does nothing.
pub fn on_mention(db: UserDb<'_>, mention: &MentionOf, now: i64) -> StoreResult<SqlStatement> {
    let from_where = format!(
        "WHERE ?1 <> ?2 AND {} AND NOT {} \
           AND NOT EXISTS (SELECT 1 FROM conversation_mutes m WHERE m.user_id = ?1 AND m.thread_id = ?5)",
        not_blocked_between("?1", "?2"),
        super::mutes::muted_sql("?1", "?2", true)
    );
    let sql = insert_sql("?1", "?4", Kind::Mention, "?2", "?3", "0", &from_where);
    let params =
        [int(mention.recipient), int(mention.author), int(mention.post), int(now), int(mention.thread)];
    stmt(db, &sql, &params)
}

/// The mention's notification goes (its post deleted or narrowed).
pub fn off_mention(db: UserDb<'_>, mention: &MentionOf) -> StoreResult<SqlStatement> {
    let sql = format!(
        "DELETE FROM notifications WHERE recipient_id = ?1 AND kind = '{}' AND actor_id = ?2 AND post_id = ?3",
        Kind::Mention.as_str()
    );
    stmt(db, &sql, &[int(mention.recipient), int(mention.author), int(mention.post)])
}

/// Makes (`on`) or takes back a mention's notification on the recipient's home; what to tell
/// their live socket, if one was made for an open one.
/// `also`: a statement of the same recipient's committed in the same batch (a direct post's
/// conversation row, `store/conversations.rs::record`); its notice is the second.
pub async fn set_mention(
    db: UserDb<'_>,
    mention: &MentionOf,
    on: bool,
    now: i64,
    also: Option<SqlStatement>,
) -> StoreResult<(Option<Notice>, Option<Notice>)> {
    let statement = if on { on_mention(db, mention, now)? } else { off_mention(db, mention)? };
    let results = batch(db, std::iter::once(statement).chain(also).collect()).await?;
    if !on {
        return Ok((None, None));
    }
    Ok((notice(results.first(), now), notice(results.get(1), now)))
}

/// One mentioned user of one post.
#[derive(Debug, Clone, Copy)]
pub struct MentionOf {
    pub recipient: UserId,
    pub author: UserId,
    pub post: PostId,
    /// The conversation the post is in (its thread's root): a recipient who muted it is not
    /// notified (migration 0038).
    pub thread: PostId,
}

/// A reply's row arriving in its thread notifies the thread's author (unless they wrote it,
/// muted the conversation, or the reply mentions them: its `mention` notification says it already, and Mastodon's
/// clients mention the account replied to). Before the row is written
/// (`store/engagement.rs::mirror_reply`): only the first time, so a dismissed notification
/// stays dismissed when the reply's event converges again.
pub fn on_comment(
    db: PostDb<'_>,
    comment: i64,
    (post, author): (PostId, UserId),
    mentioned: &[UserId],
    now: i64,
) -> StoreResult<SqlStatement> {
    let sql = insert_sql(
        "p.author_id",
        "?4",
        Kind::Reply,
        "?3",
        "?2",
        "?1",
        "FROM posts p WHERE p.id = ?2 AND p.author_id <> ?3 \
           AND p.author_id NOT IN (SELECT value FROM json_each(?5)) \
           AND NOT EXISTS (SELECT 1 FROM comments c WHERE c.id = ?1 AND c.reply_post = 1) \
           AND NOT EXISTS (SELECT 1 FROM conversation_mutes m WHERE m.user_id = p.author_id AND m.thread_id = ?2)",
    );
    stmt(db, &sql, &[int(comment), int(post), int(author), int(now), text(&id_list(mentioned))])
}

/// A deleted comment takes its notification with it.
pub fn off_comment(db: PostDb<'_>, comment: CommentId, post: PostId) -> StoreResult<SqlStatement> {
    let sql = format!(
        "DELETE FROM notifications WHERE recipient_id = (SELECT author_id FROM posts WHERE id = ?2) \
           AND kind = '{}' AND post_id = ?2 AND comment_id = ?1",
        Kind::Reply.as_str()
    );
    stmt(db, &sql, &[int(comment), int(post)])
}

/// On the author's side, before its `followers` mirror is written: a follow the mirror does not
/// hold yet (this incarnation: its `created_at`) notifies the author. A redelivered event or a
/// repeated convergence finds it held and does nothing.
pub fn on_follow(
    db: UserDb<'_>,
    author: UserId,
    follower: UserId,
    follow_created_at: i64,
    now: i64,
) -> StoreResult<SqlStatement> {
    let sql = insert_sql(
        "?1",
        "?4",
        Kind::Follow,
        "?2",
        "0",
        "0",
        "WHERE ?1 <> ?2 AND NOT EXISTS (SELECT 1 FROM followers WHERE author_id = ?1 AND follower_id = ?2 \
           AND created_at = ?3)",
    );
    stmt(db, &sql, &[int(author), int(follower), int(follow_created_at), int(now)])
}

/// On a locked account's side, before its request row is written: a request it does not hold
/// yet notifies it (`follow_request`); a retried request finds it held and does nothing.
pub fn on_follow_request(
    db: UserDb<'_>,
    target: UserId,
    requester: UserId,
    now: i64,
) -> StoreResult<SqlStatement> {
    let sql = insert_sql(
        "?1",
        "?3",
        Kind::FollowRequest,
        "?2",
        "0",
        "0",
        "WHERE ?1 <> ?2 AND NOT EXISTS (SELECT 1 FROM follow_requests WHERE target_id = ?1 AND requester_id = ?2)",
    );
    stmt(db, &sql, &[int(target), int(requester), int(now)])
}

/// A request that is gone (authorized, rejected, withdrawn, blocked): its notification goes.
pub fn off_follow_request(db: UserDb<'_>, target: UserId, requester: UserId) -> StoreResult<SqlStatement> {
    let sql = format!(
        "DELETE FROM notifications WHERE recipient_id = ?1 AND kind = '{}' AND actor_id = ?2",
        Kind::FollowRequest.as_str()
    );
    stmt(db, &sql, &[int(target), int(requester)])
}

/// The author's side no longer has this follower (unfollow, block): the follow notification
/// goes.
pub fn off_follow(db: UserDb<'_>, author: UserId, follower: UserId) -> StoreResult<SqlStatement> {
    let sql = format!(
        "DELETE FROM notifications WHERE recipient_id = ?1 AND kind = '{}' AND actor_id = ?2",
        Kind::Follow.as_str()
    );
    stmt(db, &sql, &[int(author), int(follower)])
}

/// On a poll's author's or voter's home: the poll `post` by `author` ended (once: a repeated
/// pass finds it made and does nothing). Never to someone who blocks the author or is blocked.
pub fn on_poll_ended(
    db: super::AnyDb<'_>,
    recipient: UserId,
    (post, author): (PostId, UserId),
    now: i64,
) -> StoreResult<SqlStatement> {
    let from_where = format!("WHERE {}", not_blocked_between("?1", "?2"));
    let sql = insert_sql("?1", "?4", Kind::Poll, "?2", "?3", "0", &from_where);
    stmt(db, &sql, &[int(recipient), int(author), int(post), int(now)])
}

/// On a booster's home: the boosted `post` by `author` was edited. An earlier `update` of the
/// same post gives way (one per post, the latest); not for a blocked or muted author.
pub fn on_update(
    db: super::AnyDb<'_>,
    recipient: UserId,
    (post, author): (PostId, UserId),
    now: i64,
) -> StoreResult<[SqlStatement; 2]> {
    let gone = format!(
        "DELETE FROM notifications WHERE recipient_id = ?1 AND kind = '{}' AND post_id = ?2",
        Kind::Update.as_str()
    );
    let from_where = format!(
        "WHERE ?1 <> ?2 AND {} AND NOT {}",
        not_blocked_between("?1", "?2"),
        super::mutes::muted_sql("?1", "?2", true)
    );
    let sql = insert_sql("?1", "?4", Kind::Update, "?2", "?3", "0", &from_where);
    Ok([
        stmt(db, &gone, &[int(recipient), int(post)])?,
        stmt(db, &sql, &[int(recipient), int(author), int(post), int(now)])?,
    ])
}

#[derive(Deserialize)]
struct Made {
    recipient_id: UserId,
    id: i64,
    live_until: Option<i64>,
    /// Whether the recipient has a push subscription (absent: a conversation's row).
    #[serde(default)]
    pushed: Option<i64>,
}

/// What an insert above made, if it made a notification for a recipient whose live socket is
/// open at `now` or who has a push subscription: the notice to send them.
pub fn notice(result: Option<&crate::store::SqlResult>, now: i64) -> Option<Notice> {
    let made: Vec<Made> = result?.results().ok()?;
    let made = made.into_iter().next()?;
    let live = made.live_until.unwrap_or(0) > now;
    let push = made.pushed.unwrap_or(0) != 0;
    (live || push).then_some(Notice { recipient: made.recipient_id, id: made.id, live, push })
}

/// A notification as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredNotification {
    pub id: i64,
    pub kind: String,
    pub actor_id: UserId,
    pub post_id: i64,
    pub comment_id: i64,
}

impl StoredNotification {
    pub fn kind(&self) -> Option<Kind> {
        Kind::parse(&self.kind)
    }
}

/// Which of a recipient's notifications a read wants: ids strictly between `above` and
/// `below`, of these kinds (and this actor), the newest (or, `oldest_first`, the oldest) first.
#[derive(Debug, Clone)]
pub struct Range<'a> {
    pub kinds: &'a KindFilter,
    pub actor: Option<UserId>,
    pub below: Option<i64>,
    pub above: Option<i64>,
    pub oldest_first: bool,
}

/// The read-time rules that SQL can check on the recipient's side (`?1`): no block either way
/// with the actor, the actor not muted with notifications (`mutes`); the post (if any) neither deleted nor taken down; the comment not deleted.
/// A suspended actor, whose flag lives on their own home, is dropped by the service.
pub(super) fn shown_sql() -> String {
    // A mention's, a quote's, an ended poll's or an edited boost's post is its author's, on another database:
    // checked where it is read (`services/notifications.rs::posts_seen`), and a mention's
    // deletion takes the row back.
    format!(
        "n.recipient_id = ?1 AND n.filtered = 0 AND n.actor_id <> 0 AND n.kind IN (SELECT value FROM json_each(?2)) AND {} AND NOT {} \
         AND (n.post_id = 0 OR n.kind IN ('{}', '{}', '{}', '{}') OR EXISTS (SELECT 1 FROM posts p WHERE p.id = n.post_id \
               AND p.deleted_at IS NULL AND p.taken_down_at IS NULL)) \
         AND (n.comment_id = 0 OR EXISTS (SELECT 1 FROM comments c WHERE c.id = n.comment_id \
               AND c.deleted_at IS NULL))",
        not_blocked_between("?1", "n.actor_id"),
        super::mutes::muted_sql("?1", "n.actor_id", true),
        Kind::Mention.as_str(),
        Kind::Quote.as_str(),
        Kind::Poll.as_str(),
        Kind::Update.as_str()
    )
}

pub(super) const COLUMNS: &str = "n.id, n.kind, n.actor_id, n.post_id, n.comment_id";

/// The expanded favourites of group rows (migration 0048) as notification rows (`id`, `kind`,
/// `actor_id`, `post_id`, `comment_id`), shown by [`shown_sql`]'s rules, of the kinds `kinds`
/// (a JSON parameter), ids strictly between `above` and `below`, of groups whose id passes
/// `groups` (an SQL condition on `g.id`), by id in `order`, at most `limit`.
pub(super) struct Expanded<'a> {
    pub kinds: &'a str,
    pub below: &'a str,
    pub above: &'a str,
    pub actor: Option<&'a str>,
    pub groups: String,
    pub order: &'a str,
    pub limit: &'a str,
}

pub(super) fn expanded_sql(e: &Expanded<'_>) -> String {
    let actor = e.actor.map_or(String::new(), |a| format!("AND ({a} = 0 OR l.user_id = {a})"));
    let order = match e.order {
        "" => String::new(),
        order => format!("ORDER BY l.notice_id {order}"),
    };
    format!(
        "SELECT l.notice_id AS id, 'favourite' AS kind, l.user_id AS actor_id, g.post_id AS post_id, 0 AS comment_id \
         FROM notifications g JOIN likes l ON {likes} \
         WHERE {GROUP_ROW} AND g.id < {below} AND {groups} AND g.id >= {first} \
           AND l.notice_id < {below} AND l.notice_id > {above} {actor} \
           AND 'favourite' IN (SELECT value FROM json_each({kinds})) AND {not_blocked} AND NOT {muted} \
           AND EXISTS (SELECT 1 FROM posts p WHERE p.id = g.post_id AND p.deleted_at IS NULL AND p.taken_down_at IS NULL) \
         {order} LIMIT {limit}",
        likes = window_likes_sql("g.post_id", &window_of("g.id")),
        below = e.below,
        above = e.above,
        groups = e.groups,
        first = window_start(e.above),
        kinds = e.kinds,
        limit = e.limit,
        not_blocked = not_blocked_between("?1", "l.user_id"),
        muted = super::mutes::muted_sql("?1", "l.user_id", true),
    )
}

/// Where a read of `limit` expanded favourites is complete, as an SQL expression (NULL: the
/// whole range). A group's likes all fall in its window, so newest first the `limit` newest
/// group rows below `below` name the oldest window to read: every group from its start on is
/// read (a group's first id is its row's id), and the read is complete down to that start.
/// Oldest first, the same up to the end of the window of the `limit`-th group from `above`'s
/// window on. Without the bound a page would read every group of the recipient.
pub(super) fn expanded_edge_sql(
    kinds: &str,
    below: &str,
    above: &str,
    oldest_first: bool,
    limit: &str,
) -> String {
    let (edge, range, order) = match oldest_first {
        false => (window_start("g.id"), format!("g.id < {below}"), "DESC"),
        true => (
            format!("({} + ({GROUP_WINDOW_MS} << 11) - 1)", window_start("g.id")),
            format!("g.id >= {}", window_start(above)),
            "ASC",
        ),
    };
    format!(
        "(SELECT {edge} FROM notifications g WHERE {GROUP_ROW} AND {range} \
           AND 'favourite' IN (SELECT value FROM json_each({kinds})) ORDER BY g.id {order} LIMIT 1 OFFSET {limit} - 1)"
    )
}

/// A page's rows, and where it is complete to when its expanded favourites stopped early (the
/// caller goes on from there when the page is short: see [`expanded_edge_sql`]).
pub struct Page {
    pub rows: Vec<StoredNotification>,
    pub edge: Option<i64>,
}

/// Up to `limit` notifications of the range, in its order: the rows, and the favourites of
/// group rows expanded into one per liker.
pub async fn page(db: UserDb<'_>, recipient: UserId, range: &Range<'_>, limit: usize) -> StoreResult<Page> {
    let (order, cut) = match range.oldest_first {
        false => ("DESC", "id >= COALESCE((SELECT e FROM edge), 0)".to_string()),
        true => ("ASC", format!("id <= COALESCE((SELECT e FROM edge), {MAX_ID})")),
    };
    let edge = expanded_edge_sql("?2", "?3", "?4", range.oldest_first, "?6");
    let groups = match range.oldest_first {
        false => "g.id >= COALESCE((SELECT e FROM edge), 0)".to_string(),
        true => format!("g.id <= COALESCE((SELECT e FROM edge), {MAX_ID})"),
    };
    let e = Expanded { kinds: "?2", below: "?3", above: "?4", actor: Some("?5"), groups, order, limit: "?6" };
    let sql = format!(
        "WITH edge(e) AS (SELECT {edge}) \
         SELECT * FROM (SELECT * FROM ( \
           SELECT * FROM (SELECT {COLUMNS} FROM notifications n WHERE {} AND n.id < ?3 AND n.id > ?4 \
             AND (?5 = 0 OR n.actor_id = ?5) ORDER BY n.id {order} LIMIT ?6) \
           UNION ALL SELECT * FROM ({expanded})) WHERE {cut} ORDER BY id {order} LIMIT ?6) \
         UNION ALL SELECT e, '', 0, 0, 0 FROM edge WHERE e IS NOT NULL",
        shown_sql(),
        expanded = expanded_sql(&e),
    );
    let params = [
        int(recipient),
        text(&range.kinds.json()),
        int(range.below.unwrap_or(MAX_ID)),
        int(range.above.unwrap_or(0)),
        int(range.actor.map_or(0, |a| a.get())),
        int(limit as i64),
    ];
    let mut rows: Vec<StoredNotification> = all(db, &sql, &params).await?;
    let edge = rows.iter().position(|r| r.kind.is_empty()).map(|i| rows.remove(i).id);
    Ok(Page { rows, edge })
}

/// How many shown notifications lie above the recipient's `notifications` marker (at most
/// `cap`), as rows: the service drops suspended actors before counting.
pub async fn unread(
    db: UserDb<'_>,
    recipient: UserId,
    kinds: &KindFilter,
    cap: usize,
) -> StoreResult<Vec<StoredNotification>> {
    let marker =
        "COALESCE((SELECT last_read_id FROM markers WHERE user_id = ?1 AND timeline = 'notifications'), 0)";
    // Counting needs no order, so the expanded read stops at `cap` likes.
    let below = MAX_ID.to_string();
    let e = Expanded {
        kinds: "?2",
        below: &below,
        above: marker,
        actor: None,
        groups: "1".to_string(),
        order: "",
        limit: "?3",
    };
    let sql = format!(
        "SELECT * FROM (SELECT * FROM (SELECT {COLUMNS} FROM notifications n WHERE {} AND n.id > {marker} \
           ORDER BY n.id DESC LIMIT ?3) UNION ALL SELECT * FROM ({})) LIMIT ?3",
        shown_sql(),
        expanded_sql(&e)
    );
    all(db, &sql, &[int(recipient), text(&kinds.json()), int(cap as i64)]).await
}

/// The likes of recipient `?1`'s group rows whose notice is `?2`, as [`dismiss`] negates them.
fn dismiss_like_sql() -> String {
    format!(
        "UPDATE likes SET notice_id = -notice_id WHERE notice_id = ?2 AND liked = 1 \
           AND liked_at <= (?2 >> 11) AND liked_at > (?2 >> 11) - {NOTICE_DRIFT_MS} \
           AND post_id IN (SELECT g.post_id FROM notifications g WHERE {GROUP_ROW} AND g.id <= ?2 AND g.id >= {})",
        window_start("?2")
    )
}

/// Dismisses one notification (a tombstone: see [`DISMISSED`]; an expanded favourite's like
/// keeps its notice id negated); whether there was one.
pub async fn dismiss(db: UserDb<'_>, recipient: UserId, id: i64) -> StoreResult<bool> {
    let sql = format!(
        "UPDATE notifications SET filtered = {DISMISSED} WHERE recipient_id = ?1 AND id = ?2 \
           AND filtered <> {DISMISSED} AND actor_id <> 0"
    );
    let params = [int(recipient), int(id)];
    let results = batch(db, vec![stmt(db, &sql, &params)?, stmt(db, &dismiss_like_sql(), &params)?]).await?;
    Ok(results.iter().map(|r| changed_rows(Some(r))).sum::<usize>() > 0)
}

/// Clears all of a recipient's notifications (tombstones, as [`dismiss`]).
pub async fn clear(db: UserDb<'_>, recipient: UserId) -> StoreResult<usize> {
    let sql = format!(
        "UPDATE notifications SET filtered = {DISMISSED} WHERE recipient_id = ?1 AND filtered <> {DISMISSED} \
           AND actor_id <> 0"
    );
    let likes = format!(
        "UPDATE likes SET notice_id = -notice_id WHERE notice_id > 0 \
           AND post_id IN (SELECT g.post_id FROM notifications g WHERE {GROUP_ROW})"
    );
    let results =
        batch(db, vec![stmt(db, &sql, &[int(recipient)])?, stmt(db, &likes, &[int(recipient)])?]).await?;
    Ok(results.iter().map(|r| changed_rows(Some(r))).sum())
}
