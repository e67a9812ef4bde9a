//! Path + method -> `Route`. Pure, so every route and every 404/405 is unit-tested natively.
//!
//! A route's auth level is its type: [`PublicRoute`], [`UserRoute`] or [`AdminRoute`], and
//! `http::dispatch` matches each exhaustively, so a route that is declared but not wired does
//! not compile. The table [`ROUTES`] is the one list of paths and methods: matching and the
//! `Allow` header of a 405 are both derived from it (with `HEAD` wherever there is a `GET`).

use crate::domain::ids::{CommentId, ListId, MediaId, NotificationId, PostId, UserId};
use crate::domain::media::{parse_served, ServedFile};
use crate::domain::moderation::{Action, Target};
use crate::domain::notifications::GroupKey;
use crate::domain::oauth::Scopes;
use crate::domain::placement::parse_shard;
use crate::domain::snowflake::LogicalShard;
use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// No token.
    Public(PublicRoute),
    /// A user's bearer token.
    User(UserRoute),
    /// The admin token.
    Admin(AdminRoute),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicRoute {
    Health,
    Register,
    /// The live feed socket: authenticated by its one-use ticket, not a header.
    LiveFeed,
    /// An upload's bytes (`GET /media/{id}-{key}.{ext}`): the unguessable URL is the capability,
    /// as image tags send no token.
    Media(ServedFile),
    /// The Mastodon API's routes without a user token.
    Mastodon(MastodonPublic),
}

/// Mastodon-compatible client registration and OAuth (the client authenticates itself), and
/// the instance and discovery documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MastodonPublic {
    /// `GET /api/v1/custom_emojis`: none.
    CustomEmojis,
    /// `GET /.well-known/nodeinfo`: where the NodeInfo document is.
    NodeInfoLinks,
    /// `GET /nodeinfo/2.0`.
    NodeInfo,
    /// `GET /.well-known/host-meta`: where WebFinger is (XRD).
    HostMeta,
    /// `GET /.well-known/webfinger?resource=acct:handle@domain`.
    WebFinger,
    /// `GET /.well-known/oauth-authorization-server` (RFC 8414, with PKCE).
    OAuthMetadata,
    Apps,
    AuthorizePage,
    Authorize,
    Token,
    Revoke,
    /// `GET /api/v1/instance` (`true`) and `/api/v2/instance` (`false`).
    Instance {
        v1: bool,
    },
    /// The streaming WebSocket: authenticated by the token in its query, header or subprotocol.
    Streaming,
    StreamingHealth,
    /// The same streams as server-sent events (`true`: `user:notification`).
    StreamingEvents {
        notifications_only: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserRoute {
    Me,
    Logout,
    /// `GET /v1/users?handle=NAME`.
    Lookup,
    User(UserId),
    Followers(UserId),
    Following(UserId),
    AuthorPosts(UserId),
    Follow(UserId),
    Unfollow(UserId),
    Block(UserId),
    Unblock(UserId),
    /// `PUT` / `DELETE /v1/me/mutes/{id}`.
    Mute(UserId, bool),
    Mutes,
    Publish,
    GetPost(PostId),
    EditPost(PostId),
    DeletePost(PostId),
    Feed,
    LiveTicket,
    Like(PostId),
    Unlike(PostId),
    Likers(PostId),
    /// `PUT` / `DELETE /v1/posts/{id}/bookmark`.
    Bookmark(PostId, bool),
    /// `GET /v1/me/bookmarks` and `/v1/me/likes`: the viewer's saved posts.
    Saved(crate::services::saved::Saved),
    ListComments(PostId),
    CreateComment(PostId),
    DeleteComment(CommentId),
    /// `POST` (or `PUT`) / `DELETE /v1/comments/{id}/like`.
    LikeComment(CommentId, bool),
    /// `POST /v1/media`: an upload.
    Upload,
    GetMedia(MediaId),
    DescribeMedia(MediaId),
    Notifications,
    UnreadNotifications,
    SetNotificationMarker,
    DismissNotification(NotificationId),
    ClearNotifications,
    /// The Mastodon client API (`/api/v1`), on the same users, posts, likes and comments.
    Mastodon(MastodonRoute),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MastodonRoute {
    /// What apps read at startup and edgefeed has none of: each answers an empty list (filters,
    /// announcements, ...), the defaults (preferences) or Mastodon's "none registered" (push).
    FollowRequests,
    Preferences,
    /// `GET /api/v1/filters` (`v2: false`) and `/api/v2/filters`.
    Filters {
        v2: bool,
    },
    Announcements,
    FollowedTags,
    /// Any method: Mastodon's "none registered" (there is no Web Push).
    PushSubscription,
    /// `GET /api/v1/accounts/{id}/featured_tags`: none (edgefeed has no hashtags).
    FeaturedTags(UserId),
    /// Mastodon's admin API (`/api/v1/admin/...`): nobody is staff through this API.
    Admin,
    VerifyCredentials,
    Account(UserId),
    LookupAccount,
    Relationships,
    AccountStatuses(UserId),
    AccountFollowers(UserId),
    AccountFollowing(UserId),
    AccountAction(UserId, AccountAction),
    /// The viewer's own collections: bookmarks, favourites, mutes.
    Own(Own),
    PostStatus,
    /// `POST /api/v1/media` and `/api/v2/media`.
    Upload,
    Media(MediaId),
    DescribeMedia(MediaId),
    /// A status id names a post or a comment (both are statuses to Mastodon).
    Status(PostId),
    EditStatus(PostId),
    DeleteStatus(PostId),
    Favourite(PostId, bool),
    FavouritedBy(PostId),
    Context(PostId),
    HomeTimeline,
    Search,
    Notifications,
    Notification(NotificationId),
    ClearNotifications,
    DismissNotification(NotificationId),
    /// `POST /api/v1/notifications/dismiss` with the id in the form (Mastodon before 3.1; what
    /// Mastodon.py still calls when it does not know the instance's version).
    DismissNotificationLegacy,
    UnreadCount,
    /// Always `[]`: edgefeed accepts every notification (Mastodon 4.3's filtered requests).
    NotificationRequests,
    NotificationPolicy,
    /// Mastodon 4.3's grouped notifications (`/api/v2/notifications`).
    GroupedNotifications,
    GroupedUnreadCount,
    NotificationGroup(GroupKey),
    DismissGroup(GroupKey),
    GroupAccounts(GroupKey),
    Markers,
    SetMarkers,
    Lists,
    CreateList,
    List(ListId),
    UpdateList(ListId),
    DeleteList(ListId),
    ListAccounts(ListId),
    AddListAccounts(ListId),
    RemoveListAccounts(ListId),
    ListTimeline(ListId),
    /// The viewer's lists that hold an account.
    AccountLists(UserId),
}

/// The Mastodon routes of the viewer's own collections (`http/mastodon/own.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// `POST /api/v1/statuses/{id}/bookmark` (`true`) and `unbookmark`.
    Bookmark(PostId, bool),
    Bookmarks,
    Favourites,
    /// `POST /api/v1/accounts/{id}/mute` (`true`) and `unmute`.
    Mute(UserId, bool),
    Mutes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountAction {
    Follow,
    Unfollow,
    Block,
    Unblock,
}

impl MastodonRoute {
    fn is_read(self) -> bool {
        use MastodonRoute as M;
        !matches!(
            self,
            M::AccountAction(..)
                | M::Own(Own::Mute(..) | Own::Bookmark(..))
                | M::PostStatus
                | M::Upload
                | M::DescribeMedia(_)
                | M::EditStatus(_)
                | M::DeleteStatus(_)
                | M::Favourite(..)
                | M::ClearNotifications
                | M::DismissNotification(_)
                | M::DismissNotificationLegacy
                | M::DismissGroup(_)
                | M::SetMarkers
                | M::CreateList
                | M::UpdateList(_)
                | M::DeleteList(_)
                | M::AddListAccounts(_)
                | M::RemoveListAccounts(_)
        )
    }
}

impl UserRoute {
    /// Routes that only read (GET): no rate limit class, and their revocation check may run
    /// beside them (see `http::dispatch`).
    pub fn is_read(self) -> bool {
        use UserRoute as U;
        if let U::Mastodon(m) = self {
            return m.is_read();
        }
        matches!(
            self,
            U::Me
                | U::Lookup
                | U::User(_)
                | U::Followers(_)
                | U::Following(_)
                | U::AuthorPosts(_)
                | U::GetPost(_)
                | U::Feed
                | U::Likers(_)
                | U::Saved(_)
                | U::Mutes
                | U::ListComments(_)
                | U::GetMedia(_)
                | U::Notifications
                | U::UnreadNotifications
        )
    }
}

impl Route {
    /// The largest body the route reads: an upload's image, else [`MAX_BODY_BYTES`] (a form's
    /// or JSON's).
    pub fn body_limit(self) -> usize {
        match self {
            Route::User(UserRoute::Upload | UserRoute::Mastodon(MastodonRoute::Upload)) => {
                crate::domain::media::MAX_IMAGE_BYTES + MAX_BODY_BYTES
            }
            _ => MAX_BODY_BYTES,
        }
    }
}

/// A request body's limit (64 KiB) on every route but uploads.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

impl UserRoute {
    /// Whether a token with `granted` scopes may call the route: the route's [`Self::scope`],
    /// or for `verify_credentials` also `profile` (Mastodon 4.3: that scope reads one's own
    /// account and nothing else).
    pub fn allowed_by(self, granted: Scopes) -> bool {
        granted.contains(self.scope())
            || (self == UserRoute::Mastodon(MastodonRoute::VerifyCredentials)
                && granted.contains(Scopes::PROFILE))
    }

    /// The OAuth scope a scoped token needs for this route: reads `read`, follows and blocks
    /// `follow`, every other write `write` (tokens without scopes may do everything).
    pub fn scope(self) -> Scopes {
        use MastodonRoute as M;
        use UserRoute as U;
        match self {
            U::Follow(_)
            | U::Unfollow(_)
            | U::Block(_)
            | U::Unblock(_)
            | U::Mute(..)
            | U::Mastodon(M::AccountAction(..) | M::Own(Own::Mute(..))) => Scopes::FOLLOW,
            // As Mastodon: push subscriptions need `push`, which apps ask for when they use it.
            U::Mastodon(M::PushSubscription) => Scopes::PUSH,
            U::Mastodon(M::Admin) => Scopes::ADMIN_READ,
            route if route.is_read() || route == U::LiveTicket => Scopes::READ,
            _ => Scopes::WRITE,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminRoute {
    ImportPost,
    ImportComment,
    Stats,
    Reconcile,
    /// Suspend / reinstate a user, take down / restore a post.
    Moderate(Target, Action),
    Audit,
    /// One step of moving a logical shard between databases (README "Moving a shard").
    Shard(LogicalShard, ShardStep),
    /// Test-only hooks (fault injection, replay); answer 404 unless `TEST_HOOKS` is on.
    Test(TestHook),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardStep {
    Freeze,
    Unfreeze,
    Copy,
    Verify,
    Purge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestHook {
    Fault,
    ReplayOutbox,
    OutboxState,
    WindowState,
    Drift,
    /// Put one follow edge into a mode through the real switch protocol.
    Edge,
    /// Move a reader's last read into the past (D1 and their window object).
    AgeReader,
    /// Run a reader's window object's alarm work (live review, idle check) now.
    WindowAlarm,
    /// An author's follow edges with their modes.
    Edges,
    /// Move a post and its outbox events into the past (a stalled fan-out grown old).
    AgePost,
    /// Make a reader's window object fail its next feed reads.
    WindowFault,
    /// Put a reader's window object back into its storage's old layout (schema version 4).
    WindowV4,
    /// Both sides of a pair of users (follows, blocks and their mirrors); optionally delete a
    /// mirror row behind the events' back, or point the graph check at the pair.
    Graph,
    /// Make every statement on one physical database fail as an outage does (or heal it).
    DbOutage,
    /// A fault on one of a hot author's replicas (or ask which replica a reader reads).
    ReplicaFault,
    /// End a sign-in throttle key's window now, as if its period had passed.
    EndSignInWindow,
    /// A like's liker-side row (`liked_posts`); optionally delete it behind the like's back.
    Liked,
    /// An upload's row and bytes (whether they exist); optionally move its times into the past.
    Media,
    /// Bare calls to readers' window objects that do nothing, timed inside the Worker: the
    /// object-call floor the feed read and the fan-out are built on.
    FloorObject,
    /// Bare D1 batches (`SELECT 1`), on one database or on every one at once, in series, timed
    /// inside the Worker: the D1 floor of a page's batches and of the likes' group commit.
    FloorD1,
}

impl TestHook {
    /// Every hook by its path name (`/v1/admin/test/{name}`): the router's table, and what the
    /// gating test walks to see each one answer 404 without `TEST_HOOKS`.
    pub const ALL: &'static [(&'static str, TestHook)] = &[
        ("fault", Self::Fault),
        ("replay", Self::ReplayOutbox),
        ("outbox", Self::OutboxState),
        ("window", Self::WindowState),
        ("drift", Self::Drift),
        ("edge", Self::Edge),
        ("age_reader", Self::AgeReader),
        ("window_alarm", Self::WindowAlarm),
        ("edges", Self::Edges),
        ("age_post", Self::AgePost),
        ("window_fault", Self::WindowFault),
        ("window_v4", Self::WindowV4),
        ("graph", Self::Graph),
        ("db_outage", Self::DbOutage),
        ("replica_fault", Self::ReplicaFault),
        ("end_sign_in_window", Self::EndSignInWindow),
        ("liked", Self::Liked),
        ("media", Self::Media),
        ("floor_object", Self::FloorObject),
        ("floor_d1", Self::FloorD1),
    ];

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, hook)| *hook)
    }
}

/// Builds a route from the path's parameter segment (`""` when the pattern has none); `None`
/// when the segment is not well formed: such a path names nothing, so it answers 404.
type Build = fn(&str) -> Option<Route>;

/// One path of the route table: a pattern whose segments are literals or one `{param}`, and
/// the methods it answers, in the order `Allow` lists them.
pub struct PathRow {
    pub pattern: &'static str,
    pub methods: &'static [(&'static str, Build)],
}

const fn path(pattern: &'static str, methods: &'static [(&'static str, Build)]) -> PathRow {
    PathRow { pattern, methods }
}

use AdminRoute as A;
use MastodonPublic as MP;
use MastodonRoute as M;
use PublicRoute as P;
use Route::{Admin, Public, User};
use UserRoute as U;

fn user(id: &str, route: fn(UserId) -> UserRoute) -> Option<Route> {
    UserId::parse(id).map(route).map(User)
}

fn post(id: &str, route: fn(PostId) -> UserRoute) -> Option<Route> {
    PostId::parse(id).map(route).map(User)
}

fn mastodon_public(route: MastodonPublic) -> Option<Route> {
    Some(Public(P::Mastodon(route)))
}

fn mastodon(route: MastodonRoute) -> Option<Route> {
    Some(User(U::Mastodon(route)))
}

fn account(id: &str, route: fn(UserId) -> MastodonRoute) -> Option<Route> {
    mastodon(route(UserId::parse(id)?))
}

fn account_action(id: &str, action: AccountAction) -> Option<Route> {
    mastodon(M::AccountAction(UserId::parse(id)?, action))
}

fn status(id: &str, route: fn(PostId) -> MastodonRoute) -> Option<Route> {
    mastodon(route(PostId::parse(id)?))
}

fn notification(id: &str, route: fn(NotificationId) -> MastodonRoute) -> Option<Route> {
    mastodon(route(NotificationId::parse(id)?))
}

fn group(key: &str, route: fn(GroupKey) -> MastodonRoute) -> Option<Route> {
    mastodon(route(GroupKey::parse(key)?))
}

fn list(id: &str, route: fn(ListId) -> MastodonRoute) -> Option<Route> {
    mastodon(route(ListId::parse(id)?))
}

fn moderate_user(id: &str, action: Action) -> Option<Route> {
    UserId::parse(id).map(|id| Admin(A::Moderate(Target::User(id), action)))
}

fn shard(id: &str, step: ShardStep) -> Option<Route> {
    parse_shard(id).map(|s| Admin(A::Shard(s, step)))
}

fn moderate_post(id: &str, action: Action) -> Option<Route> {
    PostId::parse(id).map(|id| Admin(A::Moderate(Target::Post(id), action)))
}

/// Every route.
pub const ROUTES: &[PathRow] = &[
    path("/v1/health", &[("GET", |_| Some(Public(P::Health)))]),
    path("/v1/users", &[("GET", |_| Some(User(U::Lookup))), ("POST", |_| Some(Public(P::Register)))]),
    path("/v1/me", &[("GET", |_| Some(User(U::Me)))]),
    path("/v1/me/logout", &[("POST", |_| Some(User(U::Logout)))]),
    path("/v1/users/{id}", &[("GET", |id| user(id, U::User))]),
    path("/v1/users/{id}/followers", &[("GET", |id| user(id, U::Followers))]),
    path("/v1/users/{id}/following", &[("GET", |id| user(id, U::Following))]),
    path("/v1/users/{id}/posts", &[("GET", |id| user(id, U::AuthorPosts))]),
    path(
        "/v1/me/following/{id}",
        &[("PUT", |id| user(id, U::Follow)), ("DELETE", |id| user(id, U::Unfollow))],
    ),
    path("/v1/me/blocks/{id}", &[("PUT", |id| user(id, U::Block)), ("DELETE", |id| user(id, U::Unblock))]),
    path("/v1/me/mutes", &[("GET", |_| Some(User(U::Mutes)))]),
    path(
        "/v1/me/mutes/{id}",
        &[("PUT", |id| user(id, |u| U::Mute(u, true))), ("DELETE", |id| user(id, |u| U::Mute(u, false)))],
    ),
    path("/v1/posts", &[("POST", |_| Some(User(U::Publish)))]),
    path(
        "/v1/posts/{id}",
        &[
            ("GET", |id| post(id, U::GetPost)),
            ("PATCH", |id| post(id, U::EditPost)),
            ("DELETE", |id| post(id, U::DeletePost)),
        ],
    ),
    path("/v1/posts/{id}/like", &[("PUT", |id| post(id, U::Like)), ("DELETE", |id| post(id, U::Unlike))]),
    path("/v1/posts/{id}/likes", &[("GET", |id| post(id, U::Likers))]),
    path(
        "/v1/posts/{id}/bookmark",
        &[
            ("PUT", |id| post(id, |p| U::Bookmark(p, true))),
            ("DELETE", |id| post(id, |p| U::Bookmark(p, false))),
        ],
    ),
    path("/v1/me/bookmarks", &[("GET", |_| Some(User(U::Saved(crate::services::saved::Saved::Bookmarks))))]),
    path("/v1/me/likes", &[("GET", |_| Some(User(U::Saved(crate::services::saved::Saved::Favourites))))]),
    path(
        "/v1/posts/{id}/comments",
        &[("GET", |id| post(id, U::ListComments)), ("POST", |id| post(id, U::CreateComment))],
    ),
    path("/v1/comments/{id}", &[("DELETE", |id| Some(User(U::DeleteComment(CommentId::parse(id)?))))]),
    path("/v1/media", &[("POST", |_| Some(User(U::Upload)))]),
    path(
        "/v1/media/{id}",
        &[
            ("GET", |id| Some(User(U::GetMedia(MediaId::parse(id)?)))),
            ("PUT", |id| Some(User(U::DescribeMedia(MediaId::parse(id)?)))),
        ],
    ),
    path("/media/{file}", &[("GET", |file| Some(Public(P::Media(parse_served(file)?))))]),
    path(
        "/v1/comments/{id}/like",
        &[
            ("POST", |id| Some(User(U::LikeComment(CommentId::parse(id)?, true)))),
            ("PUT", |id| Some(User(U::LikeComment(CommentId::parse(id)?, true)))),
            ("DELETE", |id| Some(User(U::LikeComment(CommentId::parse(id)?, false)))),
        ],
    ),
    path(
        "/v1/notifications",
        &[("GET", |_| Some(User(U::Notifications))), ("DELETE", |_| Some(User(U::ClearNotifications)))],
    ),
    path("/v1/notifications/unread", &[("GET", |_| Some(User(U::UnreadNotifications)))]),
    path("/v1/notifications/marker", &[("PUT", |_| Some(User(U::SetNotificationMarker)))]),
    path(
        "/v1/notifications/{id}",
        &[("DELETE", |id| Some(User(U::DismissNotification(NotificationId::parse(id)?))))],
    ),
    path("/v1/feed", &[("GET", |_| Some(User(U::Feed)))]),
    path("/v1/feed/live", &[("GET", |_| Some(Public(P::LiveFeed)))]),
    path("/v1/feed/live/ticket", &[("POST", |_| Some(User(U::LiveTicket)))]),
    path("/v1/admin/import/posts", &[("POST", |_| Some(Admin(A::ImportPost)))]),
    path("/v1/admin/import/comments", &[("POST", |_| Some(Admin(A::ImportComment)))]),
    path("/v1/admin/stats", &[("GET", |_| Some(Admin(A::Stats)))]),
    path("/v1/admin/reconcile", &[("POST", |_| Some(Admin(A::Reconcile)))]),
    path("/v1/admin/users/{id}/suspend", &[("POST", |id| moderate_user(id, Action::Suspend))]),
    path("/v1/admin/users/{id}/reinstate", &[("POST", |id| moderate_user(id, Action::Reinstate))]),
    path("/v1/admin/posts/{id}/takedown", &[("POST", |id| moderate_post(id, Action::Takedown))]),
    path("/v1/admin/posts/{id}/restore", &[("POST", |id| moderate_post(id, Action::Restore))]),
    path("/v1/admin/audit", &[("GET", |_| Some(Admin(A::Audit)))]),
    path("/v1/admin/shards/{id}/freeze", &[("POST", |id| shard(id, ShardStep::Freeze))]),
    path("/v1/admin/shards/{id}/unfreeze", &[("POST", |id| shard(id, ShardStep::Unfreeze))]),
    path("/v1/admin/shards/{id}/copy", &[("POST", |id| shard(id, ShardStep::Copy))]),
    path("/v1/admin/shards/{id}/verify", &[("POST", |id| shard(id, ShardStep::Verify))]),
    path("/v1/admin/shards/{id}/purge", &[("POST", |id| shard(id, ShardStep::Purge))]),
    path("/v1/admin/test/{hook}", &[("POST", |hook| Some(Admin(A::Test(TestHook::parse(hook)?))))]),
    // The Mastodon client API. Literal rows come before `{id}` rows of the same shape.
    path("/api/v1/apps", &[("POST", |_| mastodon_public(MP::Apps))]),
    path("/api/v1/instance", &[("GET", |_| mastodon_public(MP::Instance { v1: true }))]),
    path("/api/v2/instance", &[("GET", |_| mastodon_public(MP::Instance { v1: false }))]),
    path(
        "/oauth/authorize",
        &[("GET", |_| mastodon_public(MP::AuthorizePage)), ("POST", |_| mastodon_public(MP::Authorize))],
    ),
    path("/oauth/token", &[("POST", |_| mastodon_public(MP::Token))]),
    path("/oauth/revoke", &[("POST", |_| mastodon_public(MP::Revoke))]),
    // What apps call at startup, and the discovery documents.
    path("/api/v1/custom_emojis", &[("GET", |_| mastodon_public(MP::CustomEmojis))]),
    path("/.well-known/nodeinfo", &[("GET", |_| mastodon_public(MP::NodeInfoLinks))]),
    path("/nodeinfo/2.0", &[("GET", |_| mastodon_public(MP::NodeInfo))]),
    path("/.well-known/host-meta", &[("GET", |_| mastodon_public(MP::HostMeta))]),
    path("/.well-known/webfinger", &[("GET", |_| mastodon_public(MP::WebFinger))]),
    path("/.well-known/oauth-authorization-server", &[("GET", |_| mastodon_public(MP::OAuthMetadata))]),
    path("/api/v1/follow_requests", &[("GET", |_| mastodon(M::FollowRequests))]),
    path("/api/v1/preferences", &[("GET", |_| mastodon(M::Preferences))]),
    path("/api/v1/filters", &[("GET", |_| mastodon(M::Filters { v2: false }))]),
    path("/api/v2/filters", &[("GET", |_| mastodon(M::Filters { v2: true }))]),
    path("/api/v1/announcements", &[("GET", |_| mastodon(M::Announcements))]),
    path("/api/v1/followed_tags", &[("GET", |_| mastodon(M::FollowedTags))]),
    path(
        "/api/v1/push/subscription",
        &[
            ("GET", |_| mastodon(M::PushSubscription)),
            ("POST", |_| mastodon(M::PushSubscription)),
            ("PUT", |_| mastodon(M::PushSubscription)),
            ("DELETE", |_| mastodon(M::PushSubscription)),
        ],
    ),
    path("/api/v1/admin/accounts", &[("GET", |_| mastodon(M::Admin))]),
    path("/api/v2/admin/accounts", &[("GET", |_| mastodon(M::Admin))]),
    path("/api/v1/admin/reports", &[("GET", |_| mastodon(M::Admin))]),
    path("/api/v1/accounts/verify_credentials", &[("GET", |_| mastodon(M::VerifyCredentials))]),
    path("/api/v1/accounts/lookup", &[("GET", |_| mastodon(M::LookupAccount))]),
    path("/api/v1/accounts/relationships", &[("GET", |_| mastodon(M::Relationships))]),
    path("/api/v1/accounts/{id}", &[("GET", |id| account(id, M::Account))]),
    path("/api/v1/accounts/{id}/statuses", &[("GET", |id| account(id, M::AccountStatuses))]),
    path("/api/v1/accounts/{id}/followers", &[("GET", |id| account(id, M::AccountFollowers))]),
    path("/api/v1/accounts/{id}/following", &[("GET", |id| account(id, M::AccountFollowing))]),
    path("/api/v1/accounts/{id}/lists", &[("GET", |id| account(id, M::AccountLists))]),
    path("/api/v1/accounts/{id}/featured_tags", &[("GET", |id| account(id, M::FeaturedTags))]),
    path("/api/v1/accounts/{id}/follow", &[("POST", |id| account_action(id, AccountAction::Follow))]),
    path("/api/v1/accounts/{id}/unfollow", &[("POST", |id| account_action(id, AccountAction::Unfollow))]),
    path("/api/v1/accounts/{id}/block", &[("POST", |id| account_action(id, AccountAction::Block))]),
    path("/api/v1/accounts/{id}/unblock", &[("POST", |id| account_action(id, AccountAction::Unblock))]),
    path("/api/v1/accounts/{id}/mute", &[("POST", |id| account(id, |u| M::Own(Own::Mute(u, true))))]),
    path("/api/v1/accounts/{id}/unmute", &[("POST", |id| account(id, |u| M::Own(Own::Mute(u, false))))]),
    path("/api/v1/mutes", &[("GET", |_| mastodon(M::Own(Own::Mutes)))]),
    path("/api/v1/statuses", &[("POST", |_| mastodon(M::PostStatus))]),
    path("/api/v1/media", &[("POST", |_| mastodon(M::Upload))]),
    path("/api/v2/media", &[("POST", |_| mastodon(M::Upload))]),
    path(
        "/api/v1/media/{id}",
        &[
            ("GET", |id| mastodon(M::Media(MediaId::parse(id)?))),
            ("PUT", |id| mastodon(M::DescribeMedia(MediaId::parse(id)?))),
        ],
    ),
    path(
        "/api/v1/statuses/{id}",
        &[
            ("GET", |id| status(id, M::Status)),
            ("PUT", |id| status(id, M::EditStatus)),
            ("DELETE", |id| status(id, M::DeleteStatus)),
        ],
    ),
    path("/api/v1/statuses/{id}/favourite", &[("POST", |id| status(id, |p| M::Favourite(p, true)))]),
    path("/api/v1/statuses/{id}/unfavourite", &[("POST", |id| status(id, |p| M::Favourite(p, false)))]),
    path("/api/v1/statuses/{id}/favourited_by", &[("GET", |id| status(id, M::FavouritedBy))]),
    path("/api/v1/statuses/{id}/context", &[("GET", |id| status(id, M::Context))]),
    path("/api/v1/statuses/{id}/bookmark", &[("POST", |id| status(id, |p| M::Own(Own::Bookmark(p, true))))]),
    path(
        "/api/v1/statuses/{id}/unbookmark",
        &[("POST", |id| status(id, |p| M::Own(Own::Bookmark(p, false))))],
    ),
    path("/api/v1/bookmarks", &[("GET", |_| mastodon(M::Own(Own::Bookmarks)))]),
    path("/api/v1/favourites", &[("GET", |_| mastodon(M::Own(Own::Favourites)))]),
    path("/api/v1/timelines/home", &[("GET", |_| mastodon(M::HomeTimeline))]),
    path("/api/v1/timelines/list/{id}", &[("GET", |id| list(id, M::ListTimeline))]),
    path("/api/v1/lists", &[("GET", |_| mastodon(M::Lists)), ("POST", |_| mastodon(M::CreateList))]),
    path(
        "/api/v1/lists/{id}",
        &[
            ("GET", |id| list(id, M::List)),
            ("PUT", |id| list(id, M::UpdateList)),
            ("DELETE", |id| list(id, M::DeleteList)),
        ],
    ),
    path(
        "/api/v1/lists/{id}/accounts",
        &[
            ("GET", |id| list(id, M::ListAccounts)),
            ("POST", |id| list(id, M::AddListAccounts)),
            ("DELETE", |id| list(id, M::RemoveListAccounts)),
        ],
    ),
    path("/api/v2/search", &[("GET", |_| mastodon(M::Search))]),
    path("/api/v1/notifications", &[("GET", |_| mastodon(M::Notifications))]),
    path("/api/v1/notifications/clear", &[("POST", |_| mastodon(M::ClearNotifications))]),
    path("/api/v1/notifications/dismiss", &[("POST", |_| mastodon(M::DismissNotificationLegacy))]),
    path("/api/v1/notifications/unread_count", &[("GET", |_| mastodon(M::UnreadCount))]),
    path("/api/v1/notifications/requests", &[("GET", |_| mastodon(M::NotificationRequests))]),
    path("/api/v1/notifications/{id}", &[("GET", |id| notification(id, M::Notification))]),
    path("/api/v1/notifications/{id}/dismiss", &[("POST", |id| notification(id, M::DismissNotification))]),
    path("/api/v2/notifications", &[("GET", |_| mastodon(M::GroupedNotifications))]),
    path("/api/v2/notifications/policy", &[("GET", |_| mastodon(M::NotificationPolicy))]),
    path("/api/v2/notifications/unread_count", &[("GET", |_| mastodon(M::GroupedUnreadCount))]),
    path("/api/v2/notifications/{group_key}", &[("GET", |key| group(key, M::NotificationGroup))]),
    path("/api/v2/notifications/{group_key}/dismiss", &[("POST", |key| group(key, M::DismissGroup))]),
    path("/api/v2/notifications/{group_key}/accounts", &[("GET", |key| group(key, M::GroupAccounts))]),
    path("/api/v1/markers", &[("GET", |_| mastodon(M::Markers)), ("POST", |_| mastodon(M::SetMarkers))]),
    path("/api/v1/streaming", &[("GET", |_| mastodon_public(MP::Streaming))]),
    path("/api/v1/streaming/health", &[("GET", |_| mastodon_public(MP::StreamingHealth))]),
    path(
        "/api/v1/streaming/user",
        &[("GET", |_| mastodon_public(MP::StreamingEvents { notifications_only: false }))],
    ),
    path(
        "/api/v1/streaming/user/notification",
        &[("GET", |_| mastodon_public(MP::StreamingEvents { notifications_only: true }))],
    ),
];

impl PathRow {
    /// The parameter segment (or `""`) if `segments` has this pattern's shape.
    fn matches<'p>(&self, segments: &[&'p str]) -> Option<&'p str> {
        let pattern = self.pattern.split('/').skip(1);
        if pattern.clone().count() != segments.len() {
            return None;
        }
        let mut param = "";
        for (want, got) in pattern.zip(segments) {
            if want.starts_with('{') {
                param = got;
            } else if want != *got {
                return None;
            }
        }
        Some(param)
    }
}

/// The methods a row answers, in table order, with `HEAD` right after `GET` (every `GET` route
/// answers `HEAD`).
fn allowed(row: &PathRow) -> Vec<&'static str> {
    row.methods.iter().flat_map(|(m, _)| if *m == "GET" { vec!["GET", "HEAD"] } else { vec![*m] }).collect()
}

pub fn route(method: &str, path: &str) -> Result<Route, ApiError> {
    // HEAD is routed like GET; `http::handle` drops the body.
    let method = if method == "HEAD" { "GET" } else { method };
    let path = path.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(path);
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let Some((row, param)) = ROUTES.iter().find_map(|row| Some((row, row.matches(&segments)?))) else {
        return Err(ApiError::NotFound("no such route"));
    };
    for (allowed, build) in row.methods {
        // A parameter that does not parse names nothing that exists: 404, like a missing id.
        let route = build(param).ok_or(ApiError::NotFound("no such resource"))?;
        if *allowed == method {
            return Ok(route);
        }
    }
    Err(ApiError::MethodNotAllowed { allow: allowed(row).join(", ") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uid(n: i64) -> UserId {
        UserId::from_trusted(n)
    }

    fn pid(n: i64) -> PostId {
        PostId::from_trusted(n)
    }

    #[test]
    fn routes_resolve() {
        assert_eq!(route("GET", "/v1/health").ok(), Some(Public(P::Health)));
        assert_eq!(route("GET", "/v1/health/").ok(), Some(Public(P::Health)));
        assert_eq!(route("PUT", "/v1/me/following/12").ok(), Some(User(U::Follow(uid(12)))));
        assert_eq!(route("DELETE", "/v1/me/following/12").ok(), Some(User(U::Unfollow(uid(12)))));
        assert_eq!(route("PATCH", "/v1/posts/9").ok(), Some(User(U::EditPost(pid(9)))));
        assert_eq!(route("GET", "/v1/posts/9/comments").ok(), Some(User(U::ListComments(pid(9)))));
        assert_eq!(route("POST", "/v1/posts/9/comments").ok(), Some(User(U::CreateComment(pid(9)))));
        let comment = CommentId::from_trusted(7);
        assert_eq!(route("POST", "/v1/comments/7/like").ok(), Some(User(U::LikeComment(comment, true))));
        assert_eq!(route("DELETE", "/v1/comments/7/like").ok(), Some(User(U::LikeComment(comment, false))));
        assert_eq!(route("GET", "/v1/users/3/posts").ok(), Some(User(U::AuthorPosts(uid(3)))));
        assert_eq!(route("GET", "/v1/admin/stats").ok(), Some(Admin(A::Stats)));
        assert_eq!(route("POST", "/v1/me/logout").ok(), Some(User(U::Logout)));
        let copy = Admin(A::Shard(LogicalShard::new(255), ShardStep::Copy));
        assert_eq!(route("POST", "/v1/admin/shards/255/copy").ok(), Some(copy));
        assert_eq!(route("POST", "/v1/admin/shards/256/copy").unwrap_err().status(), 404);
    }

    #[test]
    fn unknown_paths_and_bad_ids_are_404() {
        for path in ["/", "/v1", "/v2/health", "/v1/users/abc", "/v1/posts/0", "/v1/posts/1/x"] {
            assert_eq!(route("GET", path).unwrap_err().status(), 404, "{path}");
        }
    }

    #[test]
    fn wrong_methods_are_405_with_allow_from_the_table() {
        let err = route("POST", "/v1/health").unwrap_err();
        assert_eq!(err.status(), 405);
        let allow = |method, path| match route(method, path) {
            Err(ApiError::MethodNotAllowed { allow }) => allow,
            other => panic!("{method} {path}: {other:?}"),
        };
        assert_eq!(allow("GET", "/v1/me/following/1"), "PUT, DELETE");
        assert_eq!(allow("HEAD", "/v1/me/following/1"), "PUT, DELETE");
        assert_eq!(allow("PUT", "/v1/posts/1"), "GET, HEAD, PATCH, DELETE");
        assert_eq!(allow("DELETE", "/v1/posts/1/comments"), "GET, HEAD, POST");
        assert_eq!(allow("DELETE", "/v1/health"), "GET, HEAD");
        assert_eq!(allow("GET", "/v1/admin/reconcile"), "POST");
        assert_eq!(allow("HEAD", "/v1/posts"), "POST");
    }

    #[test]
    fn every_row_is_reachable_and_patterns_are_well_formed() {
        for row in ROUTES {
            let prefixes =
                ["/v1/", "/api/v1/", "/api/v2/", "/oauth/", "/.well-known/", "/nodeinfo/", "/media/"];
            assert!(prefixes.iter().any(|p| row.pattern.starts_with(p)), "{}", row.pattern);
            assert!(row.pattern.matches('{').count() <= 1, "{}", row.pattern);
            // An example value of each parameter that parses.
            let file = "7-0123456789abcdef0123456789abcdef.png";
            let param = [("{hook}", "fault"), ("{group_key}", "ungrouped-7"), ("{file}", file)]
                .into_iter()
                .find_map(|(name, example)| row.pattern.contains(name).then_some(example))
                .unwrap_or("7");
            let path = ["{id}", "{hook}", "{group_key}", "{file}"]
                .iter()
                .fold(row.pattern.to_string(), |p, name| p.replace(name, param));
            for (method, build) in row.methods {
                let built = build(if row.pattern.contains('{') { param } else { "" });
                assert!(built.is_some(), "{method} {}", row.pattern);
                assert_eq!(route(method, &path).ok(), built, "{method} {}", row.pattern);
                if *method == "GET" {
                    assert_eq!(route("HEAD", &path).ok(), built, "HEAD {}", row.pattern);
                }
            }
            let shapes = ROUTES.iter().filter(|r| r.pattern == row.pattern).count();
            assert_eq!(shapes, 1, "{} listed twice", row.pattern);
        }
        assert_eq!(route("POST", "/v1/admin/test/nope").unwrap_err().status(), 404);
    }

    /// The gating test (`tests/api/security.rs`) walks `TestHook::ALL`: every hook is in it
    /// once, under the name it is routed by.
    #[test]
    fn every_test_hook_is_routed_by_its_name_once() {
        for (name, hook) in TestHook::ALL {
            assert_eq!(route("POST", &format!("/v1/admin/test/{name}")).ok(), Some(Admin(A::Test(*hook))));
            assert_eq!(TestHook::ALL.iter().filter(|(_, h)| h == hook).count(), 1, "{name}");
        }
    }

    #[test]
    fn mastodon_literal_paths_win_over_ids_and_scopes_follow_the_route() {
        use MastodonRoute as M;
        assert_eq!(route("GET", "/api/v1/accounts/lookup").ok(), Some(User(U::Mastodon(M::LookupAccount))));
        assert_eq!(
            route("GET", "/api/v1/accounts/42").ok(),
            Some(User(U::Mastodon(M::Account(UserId::from_trusted(42)))))
        );
        assert_eq!(route("GET", "/api/v1/accounts/nope").unwrap_err().status(), 404);
        assert_eq!(U::Feed.scope(), Scopes::READ);
        assert_eq!(U::Publish.scope(), Scopes::WRITE);
        assert_eq!(U::Follow(UserId::from_trusted(1)).scope(), Scopes::FOLLOW);
        assert_eq!(
            U::Mastodon(M::AccountAction(UserId::from_trusted(1), AccountAction::Block)).scope(),
            Scopes::FOLLOW
        );
        assert_eq!(U::Mastodon(M::HomeTimeline).scope(), Scopes::READ);
        assert_eq!(U::Mastodon(M::Favourite(PostId::from_trusted(1), true)).scope(), Scopes::WRITE);
        assert_eq!(U::LiveTicket.scope(), Scopes::READ);
    }

    #[test]
    fn startup_and_discovery_routes_resolve_with_their_levels_and_scopes() {
        use MastodonRoute as M;
        let public = |path| route("GET", path).ok();
        assert_eq!(public("/api/v1/custom_emojis"), Some(Public(P::Mastodon(MP::CustomEmojis))));
        assert_eq!(public("/.well-known/nodeinfo"), Some(Public(P::Mastodon(MP::NodeInfoLinks))));
        assert_eq!(public("/nodeinfo/2.0"), Some(Public(P::Mastodon(MP::NodeInfo))));
        assert_eq!(public("/.well-known/host-meta"), Some(Public(P::Mastodon(MP::HostMeta))));
        assert_eq!(public("/.well-known/webfinger"), Some(Public(P::Mastodon(MP::WebFinger))));
        assert_eq!(public("/api/v2/filters"), Some(User(U::Mastodon(M::Filters { v2: true }))));
        assert_eq!(route("GET", "/nodeinfo/2.1").unwrap_err().status(), 404);
        assert_eq!(route("POST", "/api/v1/preferences").unwrap_err().status(), 405);
        let startup =
            [M::FollowRequests, M::Preferences, M::Filters { v2: false }, M::Announcements, M::FollowedTags];
        for m in startup {
            assert!(U::Mastodon(m).is_read(), "{m:?}");
            assert_eq!(U::Mastodon(m).scope(), Scopes::READ, "{m:?}");
        }
        assert!(U::Mastodon(M::PushSubscription).is_read());
        assert_eq!(U::Mastodon(M::PushSubscription).scope(), Scopes::PUSH);
    }

    #[test]
    fn grouped_notification_literals_win_over_group_keys() {
        use MastodonRoute as M;
        let m = |r| Some(User(U::Mastodon(r)));
        assert_eq!(route("GET", "/api/v2/notifications/unread_count").ok(), m(M::GroupedUnreadCount));
        assert_eq!(route("GET", "/api/v2/notifications/policy").ok(), m(M::NotificationPolicy));
        let key = GroupKey::Grouped {
            kind: crate::domain::notifications::Kind::Favourite,
            post_id: 12,
            window: 39_000,
        };
        assert_eq!(
            route("GET", "/api/v2/notifications/favourite-12-39000").ok(),
            m(M::NotificationGroup(key))
        );
        let follows =
            GroupKey::Grouped { kind: crate::domain::notifications::Kind::Follow, post_id: 0, window: 3 };
        assert_eq!(route("POST", "/api/v2/notifications/follow-3/dismiss").ok(), m(M::DismissGroup(follows)));
        assert_eq!(route("GET", "/api/v2/notifications/favourite-x-1").unwrap_err().status(), 404);
        assert_eq!(route("GET", "/api/v2/notifications/42").unwrap_err().status(), 404);
        assert_eq!(U::Mastodon(M::DismissGroup(key)).scope(), Scopes::WRITE);
        assert_eq!(U::Mastodon(M::GroupAccounts(key)).scope(), Scopes::READ);
    }

    #[test]
    fn list_routes_resolve_and_their_writes_need_write() {
        use MastodonRoute as M;
        let l = ListId::from_trusted(5);
        assert_eq!(route("GET", "/api/v1/lists").ok(), Some(User(U::Mastodon(M::Lists))));
        assert_eq!(route("PUT", "/api/v1/lists/5").ok(), Some(User(U::Mastodon(M::UpdateList(l)))));
        assert_eq!(
            route("DELETE", "/api/v1/lists/5/accounts").ok(),
            Some(User(U::Mastodon(M::RemoveListAccounts(l))))
        );
        assert_eq!(
            route("GET", "/api/v1/timelines/list/5").ok(),
            Some(User(U::Mastodon(M::ListTimeline(l))))
        );
        let lists_of = M::AccountLists(UserId::from_trusted(3));
        assert_eq!(route("GET", "/api/v1/accounts/3/lists").ok(), Some(User(U::Mastodon(lists_of))));
        assert_eq!(route("GET", "/api/v1/timelines/list/nope").unwrap_err().status(), 404);
        for read in [M::Lists, M::List(l), M::ListAccounts(l), M::ListTimeline(l), lists_of] {
            assert_eq!(U::Mastodon(read).scope(), Scopes::READ, "{read:?}");
        }
        for write in [
            M::CreateList,
            M::UpdateList(l),
            M::DeleteList(l),
            M::AddListAccounts(l),
            M::RemoveListAccounts(l),
        ] {
            assert_eq!(U::Mastodon(write).scope(), Scopes::WRITE, "{write:?}");
        }
    }
}
