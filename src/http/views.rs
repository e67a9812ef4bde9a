//! The JSON shapes of the contract (User, Post, pages). Ids leave as strings, times as RFC 3339.

use serde::Serialize;

use crate::domain::quotes::QuoteState;

use crate::domain::time::format_rfc3339;
use crate::store::moderation::AuditRow;
use crate::store::posts::PostRow;
use crate::store::users::UserRow;

#[derive(Serialize)]
pub struct UserView {
    pub id: String,
    pub handle: String,
    pub display_name: String,
    pub created_at: String,
    pub followers_count: i64,
    pub following_count: i64,
    pub posts_count: i64,
    /// Whether the viewer follows this user: on a single profile of someone else only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub following: Option<bool>,
}

impl From<&UserRow> for UserView {
    fn from(u: &UserRow) -> Self {
        Self {
            id: u.id.to_string(),
            handle: u.handle.clone(),
            display_name: u.display_name.clone(),
            created_at: format_rfc3339(u.created_at),
            followers_count: u.followers_count,
            following_count: u.following_count,
            posts_count: u.posts_count,
            following: None,
        }
    }
}

#[derive(Serialize)]
pub struct AuthorView {
    pub id: String,
    pub handle: String,
    pub display_name: String,
}

#[derive(Serialize)]
pub struct PostView {
    pub id: String,
    pub author: AuthorView,
    pub body: String,
    pub visibility: &'static str,
    pub created_at: String,
    pub edited_at: Option<String>,
    pub like_count: i64,
    pub comment_count: i64,
    pub liked_by_me: bool,
    /// The content warning (an extension, Mastodon's fields): shown in place of the body until
    /// the reader opens it (`""`: none); `sensitive` is true whenever there is one.
    pub spoiler_text: String,
    pub sensitive: bool,
    /// The attachments, in order (an extension; `[]`: none).
    pub media: Vec<MediaView>,
    /// `"taken_down"` on a post an operator took down (only its author still sees it, by id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moderation: Option<&'static str>,
    /// Boosts of the post (an extension: Mastodon's `reblogs_count`), exact.
    pub repost_count: i64,
    /// Whether the viewer boosts the post: on the answers of `PUT` and `DELETE .../repost`
    /// (elsewhere not read: the viewer's boosts are on their home, a round trip a feed page does
    /// not spend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reposted_by_me: Option<bool>,
    /// The accounts the post mentions (an extension: Mastodon's `mentions`), in the order first
    /// mentioned.
    pub mentions: Vec<MentionView>,
    /// On a feed item that reached the reader as a boost: who boosted it, when, and the boost's
    /// id (the post shown is the original, with its own id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repost: Option<RepostView>,
    /// On a reply (an extension: Mastodon's `in_reply_to_id`, `in_reply_to_account_id`): the
    /// post, reply or comment it answers, and that one's author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<ReplyView>,
    /// Quotes of the post (an extension: Mastodon's `quotes_count`), exact.
    pub quote_count: i64,
    /// On a quote: the quoted post as the reader may see it now, or why not (an extension:
    /// Mastodon 4.5's `quote`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<QuoteView>,
}

/// What a reply answers.
#[derive(Serialize)]
pub struct ReplyView {
    pub id: String,
    pub author_id: String,
    /// The post at the root of the thread (whose comments list the reply).
    pub thread_id: String,
}

/// A quote's quoted post: `state` says whether it is shown (`accepted`) or why not (`deleted`,
/// `unauthorized`, `blocked_account`, `muted_account`); `post` is there when shown and read.
#[derive(Serialize)]
pub struct QuoteView {
    pub id: String,
    pub state: QuoteState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post: Option<Box<PostView>>,
}

/// An account a post mentions.
#[derive(Serialize)]
pub struct MentionView {
    pub id: String,
    pub handle: String,
}

/// Who brought a feed item to the reader by boosting it.
#[derive(Serialize)]
pub struct RepostView {
    pub id: String,
    pub by: AuthorView,
    pub created_at: String,
}

impl From<&PostRow> for PostView {
    fn from(p: &PostRow) -> Self {
        match p.original.as_deref() {
            Some(original) => Self {
                repost: Some(RepostView {
                    id: p.id.to_string(),
                    by: author_view(p),
                    created_at: format_rfc3339(p.created_at),
                }),
                ..Self::of_original(original)
            },
            None => Self::of_original(p),
        }
    }
}

fn author_view(p: &PostRow) -> AuthorView {
    AuthorView { id: p.author_id.to_string(), handle: p.handle.clone(), display_name: p.display_name.clone() }
}

impl PostView {
    fn of_original(p: &PostRow) -> Self {
        Self {
            id: p.id.to_string(),
            author: author_view(p),
            body: p.body.clone(),
            visibility: p.visibility.as_str(),
            created_at: format_rfc3339(p.created_at),
            edited_at: p.edited_at.map(format_rfc3339),
            like_count: p.like_count,
            comment_count: p.comment_count,
            liked_by_me: p.liked_by_me != 0,
            spoiler_text: p.spoiler_text.clone(),
            sensitive: p.is_sensitive(),
            media: p.attachments().iter().map(MediaView::from).collect(),
            moderation: p.is_taken_down().then_some("taken_down"),
            mentions: p
                .mentioned()
                .into_iter()
                .map(|m| MentionView { id: m.id.to_string(), handle: m.handle })
                .collect(),
            repost_count: p.reblog_count,
            reposted_by_me: p.reblogged_by_me,
            repost: None,
            in_reply_to: p.in_reply_to_id.zip(p.in_reply_to_account_id).map(|(id, author)| ReplyView {
                id: id.to_string(),
                author_id: author.to_string(),
                thread_id: p.thread_id.map_or_else(String::new, |t| t.to_string()),
            }),
            quote_count: p.quote_count,
            quote: p.quote_of.map(|id| QuoteView {
                id: id.to_string(),
                state: p.quoted.as_ref().map_or(QuoteState::Accepted, |q| q.state),
                post: p.quoted.as_ref().and_then(|q| q.post.as_ref()).map(|q| Box::new(Self::of_original(q))),
            }),
        }
    }
}

/// An upload or attachment (`/v1/media`): `url` is a path on the API's own origin, stable for
/// the upload's life.
#[derive(Serialize)]
pub struct MediaView {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub url: String,
    pub content_type: &'static str,
    pub width: u32,
    pub height: u32,
    pub size: u64,
    pub description: String,
    pub focus: Option<crate::domain::media::Focus>,
}

impl From<&crate::domain::media::Attachment> for MediaView {
    fn from(a: &crate::domain::media::Attachment) -> Self {
        Self {
            id: a.id.to_string(),
            kind: "image",
            url: a.path(),
            content_type: a.kind.mime(),
            width: a.width,
            height: a.height,
            size: a.size,
            description: a.description.clone(),
            focus: a.focus,
        }
    }
}

#[derive(Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

#[derive(Serialize)]
pub struct CommentView {
    pub id: String,
    pub post_id: String,
    pub author: AuthorView,
    pub body: String,
    pub created_at: String,
    /// Extensions (docs/contract.md "Comment likes and top comments").
    pub like_count: i64,
    pub liked_by_me: bool,
}

impl CommentView {
    /// A reply post as a comment on its thread's root.
    pub fn of_reply(p: &PostRow) -> Self {
        Self {
            id: p.id.to_string(),
            post_id: p.thread_id.unwrap_or(p.id).to_string(),
            author: author_view(p),
            body: p.body.clone(),
            created_at: format_rfc3339(p.created_at),
            like_count: p.like_count,
            liked_by_me: p.liked_by_me != 0,
        }
    }
}

impl From<&crate::services::comments::Comment> for CommentView {
    fn from(c: &crate::services::comments::Comment) -> Self {
        match c {
            crate::services::comments::Comment::Reply(reply) => Self::of_reply(reply),
            crate::services::comments::Comment::Old(old) => Self::from(old),
        }
    }
}

impl From<&crate::store::engagement::CommentRow> for CommentView {
    fn from(c: &crate::store::engagement::CommentRow) -> Self {
        Self {
            id: c.id.to_string(),
            post_id: c.post_id.to_string(),
            author: AuthorView {
                id: c.author_id.to_string(),
                handle: c.handle.clone(),
                display_name: c.display_name.clone(),
            },
            body: c.body.clone(),
            created_at: format_rfc3339(c.created_at),
            like_count: c.like_count,
            liked_by_me: c.liked_by_me,
        }
    }
}

/// One audit log entry (`GET /v1/admin/audit`).
#[derive(Debug, Serialize)]
pub struct AuditView {
    pub id: String,
    pub at: String,
    pub operator: String,
    pub action: String,
    pub target: serde_json::Value,
    pub reason: String,
}

impl From<&AuditRow> for AuditView {
    fn from(r: &AuditRow) -> Self {
        Self {
            id: r.id.to_string(),
            at: format_rfc3339(r.created_at),
            operator: r.actor.clone(),
            action: r.action.clone(),
            target: serde_json::json!({ "kind": r.target_kind, "id": r.target_id.to_string() }),
            reason: r.reason.clone(),
        }
    }
}

/// One notification (`GET /v1/notifications`).
#[derive(Serialize)]
pub struct NotificationView {
    pub id: String,
    pub kind: &'static str,
    pub created_at: String,
    pub actor: UserView,
    /// The recipient's post a favourite or reply is about.
    pub post: Option<PostView>,
    /// A reply's comment.
    pub comment: Option<CommentView>,
}

impl From<&crate::services::notifications::Hydrated> for NotificationView {
    fn from(n: &crate::services::notifications::Hydrated) -> Self {
        Self {
            id: n.id.to_string(),
            kind: n.kind.as_str(),
            created_at: format_rfc3339(crate::domain::snowflake::snowflake_time(n.id)),
            actor: UserView::from(&n.actor),
            post: n.post.as_ref().map(PostView::from),
            comment: n.comment.as_ref().map(CommentView::from),
        }
    }
}

/// The unread count above the read marker (`GET /v1/notifications/unread`).
#[derive(Serialize)]
pub struct UnreadView {
    pub count: usize,
    /// The count stopped at the asked limit: there may be more.
    pub capped: bool,
    pub last_read_id: Option<String>,
}

/// A read marker (`PUT /v1/notifications/marker`).
#[derive(Serialize)]
pub struct MarkerView {
    pub last_read_id: String,
    pub version: i64,
    pub updated_at: String,
}

impl From<&crate::store::markers::MarkerRow> for MarkerView {
    fn from(m: &crate::store::markers::MarkerRow) -> Self {
        Self {
            last_read_id: m.last_read_id.to_string(),
            version: m.version,
            updated_at: format_rfc3339(m.updated_at),
        }
    }
}
