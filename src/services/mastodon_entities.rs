//! Mastodon's JSON entities (Account, Status, Relationship, Notification), built from
//! edgefeed's rows. Every field Mastodon documents as always present is present: what edgefeed
//! has no concept of (polls, boosts, emojis) gets a neutral value, because
//! clients crash on missing fields, not on empty ones.

use std::collections::HashMap;

use serde::Serialize;

use crate::domain::ids::{PostId, UserId};
use crate::domain::mastodon::{content_html, visibility_to_mastodon};
use crate::domain::media::Attachment;
use crate::domain::mentions::Mentioned;
use crate::domain::notifications::GroupKey;
use crate::domain::quotes::{QuotePolicy, QuoteState};
use crate::domain::snowflake::snowflake_time;
use crate::domain::time::format_rfc3339;
use crate::domain::visibility::Visibility;
use crate::services::filters::FilterResult;
use crate::services::notifications::Hydrated;
use crate::services::originals::Marks;
use crate::store::engagement::CommentRow;
use crate::store::graph::Mutual;
use crate::store::posts::PostRow;
use crate::store::users::UserRow;

/// An always-empty list (`[]`).
type Empty = [(); 0];

#[derive(Debug, Clone, Serialize)]
pub struct Account {
    id: String,
    username: String,
    acct: String,
    display_name: String,
    locked: bool,
    bot: bool,
    discoverable: bool,
    /// Whether public posts may be found by anyone's search (`services/search`).
    indexable: bool,
    noindex: bool,
    group: bool,
    created_at: String,
    /// The profile's note as HTML (`source.note` has it as typed).
    note: String,
    url: String,
    uri: String,
    avatar: String,
    avatar_static: String,
    header: String,
    header_static: String,
    followers_count: i64,
    following_count: i64,
    statuses_count: i64,
    last_status_at: Option<String>,
    emojis: Empty,
    fields: Vec<AccountField>,
    /// Highlighted roles: none.
    roles: Empty,
}

/// A profile field as Mastodon shows it: the value as HTML (escaped text), never verified (there
/// are no rel=me links to check).
#[derive(Debug, Clone, Serialize)]
pub struct AccountField {
    name: String,
    value: String,
    verified_at: Option<String>,
}

impl AccountField {
    fn of(f: &crate::domain::profile::Field) -> Self {
        let mut value = String::with_capacity(f.value.len());
        crate::domain::mastodon::escape_into(&mut value, &f.value);
        Self { name: f.name.clone(), value, verified_at: None }
    }
}

/// An account's `uri`, its identifier (there is no ActivityPub actor to name instead).
pub fn account_uri(origin: &str, id: UserId) -> String {
    format!("{origin}/api/v1/accounts/{id}")
}

impl Account {
    /// An account's own avatar and header (uploads, `services/profile.rs`), else the same
    /// raster images for everyone (`public/avatar.png`, `public/header.png`): clients draw them
    /// with image decoders that do not all read SVG (Android's and iOS's do not), and Mastodon
    /// always gives a header URL, never `""`.
    pub fn new(origin: &str, u: &UserRow) -> Self {
        let url = crate::domain::wellknown::profile_page(origin, &u.handle);
        let p = &u.profile;
        let image = |own: &Option<String>, default: &str| match own {
            Some(path) => format!("{origin}{path}"),
            None => format!("{origin}{default}"),
        };
        let (avatar, header) = (image(&p.avatar, "/avatar.png"), image(&p.header, "/header.png"));
        Self {
            id: u.id.to_string(),
            username: u.handle.clone(),
            acct: u.handle.clone(),
            display_name: u.display_name.clone(),
            locked: p.locked != 0,
            bot: p.bot != 0,
            discoverable: p.discoverable != 0,
            indexable: p.indexable != 0,
            noindex: false,
            group: false,
            created_at: format_rfc3339(u.created_at),
            note: content_html(&p.note),
            uri: account_uri(origin, u.id),
            url,
            avatar_static: avatar.clone(),
            avatar,
            header_static: header.clone(),
            header,
            followers_count: u.followers_count,
            following_count: u.following_count,
            statuses_count: u.posts_count,
            last_status_at: None,
            emojis: [],
            fields: crate::domain::profile::fields_of(p.fields.as_deref())
                .iter()
                .map(AccountField::of)
                .collect(),
            roles: [],
        }
    }
}

/// The accounts a page of statuses embeds, by user id (read in one query beforehand).
pub type Accounts = HashMap<UserId, Account>;

pub fn accounts(origin: &str, users: &[UserRow]) -> Accounts {
    users.iter().map(|u| (u.id, Account::new(origin, u))).collect()
}

/// Mastodon's Conversation: a direct post's participants as the viewer has them.
#[derive(Debug, Serialize)]
pub struct Conversation {
    id: String,
    unread: bool,
    /// The other participants (the viewer left out).
    accounts: Vec<Account>,
    last_status: Option<Status>,
}

impl Conversation {
    pub fn new(id: PostId, unread: bool, accounts: Vec<Account>, last_status: Status) -> Self {
        Self { id: id.to_string(), unread, accounts, last_status: Some(last_status) }
    }
}

#[derive(Debug, Serialize)]
pub struct Status {
    id: String,
    uri: String,
    url: String,
    created_at: String,
    edited_at: Option<String>,
    account: Account,
    content: String,
    /// The plain text: only in the answer to a delete (for "delete and redraft").
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    visibility: &'static str,
    sensitive: bool,
    spoiler_text: String,
    media_attachments: Vec<MediaAttachment>,
    application: Option<()>,
    mentions: Vec<StatusMention>,
    tags: Vec<StatusTag>,
    emojis: Empty,
    reblogs_count: i64,
    favourites_count: i64,
    replies_count: i64,
    in_reply_to_id: Option<String>,
    in_reply_to_account_id: Option<String>,
    /// A boost: the original as the viewer sees it now (its own `reblog` is always null).
    reblog: Option<Box<Status>>,
    /// A quote (Mastodon 4.5): the quoted status as the viewer sees it now, or why none.
    quote: Option<Quote>,
    quotes_count: i64,
    quote_approval: QuoteApproval,
    poll: Option<Poll>,
    card: Option<()>,
    language: Option<&'static str>,
    favourited: bool,
    reblogged: bool,
    muted: bool,
    bookmarked: bool,
    pinned: bool,
    filtered: Vec<FilterResult>,
}

/// Mastodon 4.5's Quote: the quoted status resolved for the viewer (with its state), or, one
/// level down and where a read did not resolve it, the ShallowQuote (its id).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Quote {
    Full { state: QuoteState, quoted_status: Option<Box<Status>> },
    Shallow { state: QuoteState, quoted_status_id: Option<String> },
}

/// Mastodon 4.5's quote approval: who is quoted automatically (no manual approval here: a quote
/// the policy does not allow is refused).
#[derive(Debug, Serialize)]
pub struct QuoteApproval {
    automatic: Vec<&'static str>,
    manual: [(); 0],
    /// `automatic` when anyone may quote it, else `unknown` (the row does not say who asks).
    current_user: &'static str,
}

impl QuoteApproval {
    fn of(policy: QuotePolicy, visibility: Visibility) -> Self {
        let public = visibility == Visibility::Public;
        let automatic = match policy {
            QuotePolicy::Public if public => vec!["public"],
            QuotePolicy::Followers if public => vec!["followers"],
            _ => Vec::new(),
        };
        let everyone = public && policy == QuotePolicy::Public;
        Self { automatic, manual: [], current_user: if everyone { "automatic" } else { "unknown" } }
    }
}

/// Mastodon's Status::Mention: an account the status mentions.
#[derive(Debug, Clone, Serialize)]
pub struct StatusMention {
    id: String,
    username: String,
    url: String,
    acct: String,
}

impl StatusMention {
    fn new(origin: &str, m: &Mentioned) -> Self {
        Self {
            id: m.id.to_string(),
            username: m.handle.clone(),
            url: crate::domain::wellknown::profile_page(origin, &m.handle),
            acct: m.handle.clone(),
        }
    }
}

/// A hashtag of a status (Mastodon's Status::Tag): its name lower-cased, as Mastodon keys it.
#[derive(Debug, Clone, Serialize)]
pub struct StatusTag {
    name: String,
    url: String,
}

impl StatusTag {
    fn new(origin: &str, name: &str) -> Self {
        let name = crate::domain::tags::key_of(name);
        Self { url: format!("{origin}/tags/{name}"), name }
    }
}

/// Mastodon's ScheduledStatus: the request as `params` (`domain::scheduled::StatusParams`), the
/// time with milliseconds (as Mastodon's JSON renders times, and clients compare what they sent),
/// and the uploads it holds.
#[derive(Debug, Clone, Serialize)]
pub struct ScheduledStatus {
    id: String,
    scheduled_at: String,
    params: crate::domain::scheduled::StatusParams,
    media_attachments: Vec<MediaAttachment>,
}

impl ScheduledStatus {
    /// Scheduled post `id` due `at`, its request and the uploads it holds.
    pub fn new(
        origin: &str,
        (id, at): (i64, i64),
        params: &crate::domain::scheduled::StatusParams,
        media: &[Attachment],
    ) -> ScheduledStatus {
        ScheduledStatus {
            id: id.to_string(),
            scheduled_at: format_rfc3339(at),
            params: params.clone(),
            media_attachments: media.iter().map(|a| MediaAttachment::new(origin, a)).collect(),
        }
    }
}

/// Mastodon's MediaAttachment (images only: `type` is always `image`; no thumbnails are made, so
/// the preview is the original, and `meta.small` is absent as Mastodon allows).
#[derive(Debug, Clone, Serialize)]
pub struct MediaAttachment {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    url: String,
    preview_url: String,
    remote_url: Option<()>,
    preview_remote_url: Option<()>,
    text_url: Option<()>,
    meta: MediaMeta,
    description: Option<String>,
    blurhash: Option<()>,
}

#[derive(Debug, Clone, Serialize)]
struct MediaMeta {
    original: MediaSize,
    #[serde(skip_serializing_if = "Option::is_none")]
    focus: Option<crate::domain::media::Focus>,
}

#[derive(Debug, Clone, Serialize)]
struct MediaSize {
    width: u32,
    height: u32,
    size: String,
    aspect: f64,
}

impl MediaAttachment {
    pub fn new(origin: &str, a: &Attachment) -> MediaAttachment {
        let url = format!("{origin}{}", a.path());
        MediaAttachment {
            id: a.id.to_string(),
            kind: "image",
            preview_url: url.clone(),
            url,
            remote_url: None,
            preview_remote_url: None,
            text_url: None,
            meta: MediaMeta {
                original: MediaSize {
                    width: a.width,
                    height: a.height,
                    size: format!("{}x{}", a.width, a.height),
                    aspect: f64::from(a.width) / f64::from(a.height.max(1)),
                },
                focus: a.focus,
            },
            description: Some(a.description.clone()).filter(|d| !d.is_empty()),
            blurhash: None,
        }
    }
}

/// What makes a Status of a post or of a comment.
struct StatusParts<'a> {
    id: String,
    created_at: i64,
    edited_at: Option<i64>,
    account: Account,
    body: &'a str,
    spoiler_text: &'a str,
    sensitive: bool,
    visibility: Visibility,
    favourites: i64,
    favourited: bool,
    reblogs: i64,
    reblogged: bool,
    replies: i64,
    reply_to: Option<(String, String)>,
    media: Vec<Attachment>,
    mentioned: Vec<Mentioned>,
    /// The post the web client opens for it (`?post=`): a reply's is its post's.
    page: crate::domain::ids::PostId,
    quotes: i64,
    quote_policy: QuotePolicy,
}

fn status(origin: &str, p: StatusParts<'_>) -> Status {
    Status {
        uri: format!("{origin}/api/v1/statuses/{}", p.id),
        url: format!("{origin}/?post={}", p.page),
        id: p.id,
        created_at: format_rfc3339(p.created_at),
        edited_at: p.edited_at.map(format_rfc3339),
        account: p.account,
        content: content_html(p.body),
        text: None,
        visibility: visibility_to_mastodon(p.visibility),
        sensitive: p.sensitive,
        spoiler_text: p.spoiler_text.to_owned(),
        media_attachments: p.media.iter().map(|a| MediaAttachment::new(origin, a)).collect(),
        application: None,
        mentions: p.mentioned.iter().map(|m| StatusMention::new(origin, m)).collect(),
        tags: crate::domain::tags::hashtags(p.body)
            .into_iter()
            .map(|name| StatusTag::new(origin, name))
            .collect(),
        emojis: [],
        reblogs_count: p.reblogs,
        favourites_count: p.favourites,
        replies_count: p.replies,
        in_reply_to_account_id: p.reply_to.as_ref().map(|(_, account)| account.clone()),
        in_reply_to_id: p.reply_to.map(|(id, _)| id),
        reblog: None,
        quote: None,
        quotes_count: p.quotes,
        quote_approval: QuoteApproval::of(p.quote_policy, p.visibility),
        poll: None,
        card: None,
        language: None,
        favourited: p.favourited,
        reblogged: p.reblogged,
        muted: false,
        bookmarked: false,
        pinned: false,
        filtered: Vec::new(),
    }
}

/// A post's author as an Account: from `accounts` when read, else from the post row alone
/// (counts unknown: zero).
fn author_of(origin: &str, accounts: &Accounts, id: UserId, handle: &str, display_name: &str) -> Account {
    accounts
        .get(&id)
        .cloned()
        .unwrap_or_else(|| Account::new(origin, &UserRow::named(id, handle, display_name)))
}

impl Status {
    /// A post, or a boost (`original` attached by `services/boosts.rs::resolve`) as Mastodon
    /// shows one: the booster's status around the original's, with no content of its own; its
    /// flags repeat the original's (clients read either).
    pub fn of_post(origin: &str, accounts: &Accounts, p: &PostRow) -> Status {
        let Some(original) = p.original.as_deref() else { return Self::of_original(origin, accounts, p) };
        let inner = Self::of_original(origin, accounts, original);
        let mut outer = Self::of_original(origin, accounts, p);
        (outer.favourited, outer.reblogged) = (inner.favourited, inner.reblogged);
        (outer.url, outer.media_attachments) = (inner.url.clone(), Vec::new());
        outer.reblog = Some(Box::new(inner));
        outer
    }

    fn of_original(origin: &str, accounts: &Accounts, p: &PostRow) -> Status {
        let parts = StatusParts {
            id: p.id.to_string(),
            created_at: p.created_at,
            edited_at: p.edited_at,
            account: author_of(origin, accounts, p.author_id, &p.handle, &p.display_name),
            body: &p.body,
            spoiler_text: &p.spoiler_text,
            sensitive: p.is_sensitive(),
            visibility: p.visibility,
            favourites: p.like_count,
            favourited: p.liked_by_me != 0,
            reblogs: p.reblog_count,
            reblogged: p.reblogged_by_me.unwrap_or(false),
            replies: p.comment_count,
            reply_to: p
                .in_reply_to_id
                .zip(p.in_reply_to_account_id)
                .map(|(id, to)| (id.to_string(), to.to_string())),
            media: p.attachments(),
            mentioned: p.mentioned(),
            page: p.id,
            quotes: p.quote_count,
            quote_policy: p.quote_policy(),
        };
        let mut status = status(origin, parts);
        status.quote = p.quote_of.map(|id| match p.quoted.as_deref() {
            Some(quoted) => Quote::Full {
                state: quoted.state,
                quoted_status: quoted.post.as_ref().map(|q| Box::new(Self::of_original(origin, accounts, q))),
            },
            None => Quote::Shallow { state: QuoteState::Accepted, quoted_status_id: Some(id.to_string()) },
        });
        if p.is_unlisted() && p.visibility == Visibility::Public {
            status.visibility = "unlisted";
        }
        status
    }

    /// A comment as a reply to its post (which has the visibility it inherits).
    pub fn of_comment(origin: &str, accounts: &Accounts, c: &CommentRow, post: &PostRow) -> Status {
        Self::of_reply(origin, accounts, c, post.visibility)
    }

    /// A reply whose post its author can no longer see (its author deleting it): who else may
    /// see it is not theirs to know, so it says the narrowest, `direct`.
    pub fn of_orphan_reply(origin: &str, accounts: &Accounts, c: &CommentRow) -> Status {
        Self::of_reply(origin, accounts, c, Visibility::Private)
    }

    fn of_reply(origin: &str, accounts: &Accounts, c: &CommentRow, visibility: Visibility) -> Status {
        let parts = StatusParts {
            id: c.id.to_string(),
            created_at: c.created_at,
            edited_at: c.edited_at,
            account: author_of(origin, accounts, c.author_id, &c.handle, &c.display_name),
            body: &c.body,
            spoiler_text: &c.spoiler_text,
            sensitive: c.sensitive,
            visibility,
            favourites: c.like_count,
            favourited: c.liked_by_me,
            reblogs: 0,
            reblogged: false,
            replies: 0,
            reply_to: Some(match (c.parent_id, c.parent_author_id) {
                (Some(parent), Some(author)) => (parent.to_string(), author.to_string()),
                _ => (c.post_id.to_string(), c.post_author_id.to_string()),
            }),
            media: Vec::new(),
            mentioned: Vec::new(),
            page: c.post_id,
            quotes: 0,
            quote_policy: QuotePolicy::Nobody,
        };
        status(origin, parts)
    }

    /// Whether the viewer bookmarked it (read from the viewer's home beside the page's
    /// accounts: `services/saved.rs::bookmarked_among`).
    pub fn bookmarked(mut self, on: bool) -> Status {
        self.bookmarked = on;
        self.reblog = self.reblog.map(|inner| Box::new(inner.bookmarked(on)));
        self
    }

    /// Whether the viewer muted its conversation, and (their own post) pinned it
    /// (`services/post_extras.rs::marks`); a boost's flags repeat its original's.
    pub fn muted_pinned(mut self, muted: bool, pinned: bool) -> Status {
        (self.muted, self.pinned) = (muted, pinned);
        self.reblog = self.reblog.map(|inner| Box::new(inner.muted_pinned(muted, pinned)));
        self
    }

    /// The viewer's `warn` and `blur` filters it matches (a boost's are its original's: on
    /// both, as clients read either).
    pub fn filtered(mut self, results: Vec<FilterResult>) -> Status {
        if results.is_empty() {
            return self;
        }
        if let Some(inner) = self.reblog.take() {
            self.reblog = Some(Box::new(inner.filtered(results.clone())));
        }
        self.filtered = results;
        self
    }

    /// The answer to a delete carries the text, for "delete and redraft".
    pub fn with_text(mut self, text: &str) -> Status {
        self.text = Some(text.to_owned());
        self
    }
}

#[derive(Debug, Serialize)]
pub struct Relationship {
    id: String,
    following: bool,
    showing_reblogs: bool,
    notifying: bool,
    languages: Empty,
    followed_by: bool,
    blocking: bool,
    blocked_by: bool,
    muting: bool,
    muting_notifications: bool,
    requested: bool,
    requested_by: bool,
    domain_blocking: bool,
    endorsed: bool,
    /// The viewer's private note on the account.
    note: String,
}

impl From<&Mutual> for Relationship {
    fn from(m: &Mutual) -> Self {
        Self {
            id: m.id.to_string(),
            following: m.following(),
            showing_reblogs: m.following(),
            notifying: false,
            languages: [],
            followed_by: m.followed_by(),
            blocking: m.blocking(),
            blocked_by: m.blocked_by(),
            muting: m.muting(),
            muting_notifications: m.muting_notifications(),
            requested: false,
            requested_by: false,
            domain_blocking: false,
            endorsed: false,
            note: String::new(),
        }
    }
}

impl Relationship {
    /// The follow requests between them: the viewer's pending one to the account, and theirs to
    /// the viewer.
    pub fn with_requests(mut self, requested: bool, requested_by: bool) -> Self {
        (self.requested, self.requested_by) =
            (requested && !self.following, requested_by && !self.followed_by);
        self
    }

    /// The viewer's own marks: their note on the account, their endorsement of it.
    pub fn with_marks(mut self, note: Option<&str>, endorsed: bool) -> Self {
        (self.note, self.endorsed) = (note.unwrap_or("").to_owned(), endorsed);
        self
    }
}

/// Mastodon's Notification entity.
#[derive(Serialize)]
pub struct Notification {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    created_at: String,
    /// Mastodon 4.3's grouping key: the group v2 files it under (`GroupKey::default_of`).
    group_key: String,
    account: Account,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

impl Notification {
    /// `marked`: the viewer's marks on the notifications' posts (`services/saved.rs::marks_among`).
    pub fn new(origin: &str, accounts: &Accounts, n: &Hydrated, marked: &Marks) -> Notification {
        let status = notification_status(origin, accounts, n, marked);
        Notification {
            id: n.id.to_string(),
            kind: n.kind.mastodon(),
            created_at: format_rfc3339(snowflake_time(n.id)),
            group_key: GroupKey::default_of(n.id, n.kind, n.post.as_ref().map_or(0, |p| p.id.get()))
                .to_string(),
            account: Account::new(origin, &n.actor),
            status,
        }
    }

    /// Its status's `filtered` (the notifications context's filters).
    pub fn filtered(mut self, results: Vec<crate::services::filters::FilterResult>) -> Notification {
        self.status = self.status.map(|s| s.filtered(results));
        self
    }
}

/// The status a notification is about: the comment of a mention, the post of a favourite
/// (`bookmarked` when in `marked`).
pub fn notification_status(
    origin: &str,
    accounts: &Accounts,
    n: &Hydrated,
    marked: &Marks,
) -> Option<Status> {
    if let Some(reply) = &n.reply {
        return Some(Status::of_post(origin, accounts, reply).bookmarked(marked.bookmarked(reply.id)));
    }
    match (&n.comment, &n.post) {
        (Some(c), Some(p)) => Some(Status::of_comment(origin, accounts, c, p)),
        (None, Some(p)) => Some(Status::of_post(origin, accounts, p).bookmarked(marked.bookmarked(p.id))),
        _ => None,
    }
}

/// The posts (reply posts included; not old comments: bookmarks hold posts) that
/// notifications' statuses are.
pub fn notified_posts<'a>(rows: impl IntoIterator<Item = &'a Hydrated>) -> Vec<PostId> {
    let shown = |n: &'a Hydrated| match (&n.reply, &n.comment) {
        (Some(reply), _) => Some(reply.id),
        (None, Some(_)) => None,
        (None, None) => n.post.as_ref().map(|p| p.id),
    };
    rows.into_iter().filter_map(shown).collect()
}

/// Mastodon's StatusEdit: one version of a status, as `GET .../history` lists them.
#[derive(Debug, Serialize)]
pub struct StatusEdit {
    content: String,
    spoiler_text: String,
    sensitive: bool,
    created_at: String,
    account: Account,
    poll: Option<()>,
    media_attachments: Vec<MediaAttachment>,
    emojis: Empty,
}

impl StatusEdit {
    /// A version's text, content warning and time; the attachments are the post's (an edit
    /// keeps them: `http/uploads.rs::keeps_attachments`).
    pub fn new(
        origin: &str,
        account: &Account,
        (body, spoiler_text, sensitive): (&str, &str, bool),
        created_at: i64,
        media: &[Attachment],
    ) -> StatusEdit {
        StatusEdit {
            content: content_html(body),
            spoiler_text: spoiler_text.to_owned(),
            sensitive,
            created_at: format_rfc3339(created_at),
            account: account.clone(),
            poll: None,
            media_attachments: media.iter().map(|a| MediaAttachment::new(origin, a)).collect(),
            emojis: [],
        }
    }
}

/// Mastodon's StatusSource: what an edit starts from.
#[derive(Debug, Serialize)]
pub struct StatusSource {
    id: String,
    text: String,
    spoiler_text: String,
}

impl StatusSource {
    pub fn new(id: PostId, text: &str, spoiler_text: &str) -> StatusSource {
        StatusSource { id: id.to_string(), text: text.to_owned(), spoiler_text: spoiler_text.to_owned() }
    }
}

/// Mastodon's Poll, as one viewer sees it at `now`: `voted` for its author too (as Mastodon
/// answers), the option counts `null` while a `hide_totals` poll runs (except to its author).
#[derive(Debug, Clone, Serialize)]
pub struct Poll {
    id: String,
    expires_at: Option<String>,
    expired: bool,
    multiple: bool,
    votes_count: i64,
    voters_count: Option<i64>,
    options: Vec<PollOption>,
    emojis: Empty,
    voted: bool,
    own_votes: Vec<u8>,
}

#[derive(Debug, Clone, Serialize)]
struct PollOption {
    title: String,
    votes_count: Option<i64>,
}

impl Poll {
    pub fn new(post: &PostRow, poll: &crate::domain::polls::PollState, viewer: UserId, now: i64) -> Poll {
        let is_author = post.author_id == viewer;
        let own_votes = post.own_votes();
        let shown = poll.shown_votes(now, is_author);
        let options = poll
            .options
            .iter()
            .zip(shown)
            .map(|(title, votes_count)| PollOption { title: title.clone(), votes_count })
            .collect();
        Poll {
            id: post.id.to_string(),
            expires_at: Some(format_rfc3339(poll.expires_at)),
            expired: poll.expired(now),
            multiple: poll.multiple,
            votes_count: poll.votes_count(),
            voters_count: Some(poll.voters_count),
            options,
            emojis: [],
            voted: is_author || !own_votes.is_empty(),
            own_votes,
        }
    }
}

impl Status {
    /// The poll of the post a status shows (a boost's original's, inside it), as the viewer
    /// sees it at `now`.
    pub fn polled(mut self, row: &PostRow, viewer: UserId, now: i64) -> Status {
        let shown = row.shown();
        let poll = shown.poll().map(|p| Poll::new(shown, &p, viewer, now));
        match self.reblog.as_deref_mut() {
            Some(inner) => inner.poll = poll,
            None => self.poll = poll,
        }
        self
    }
}
