//! Method + path -> the endpoint's [`Call`]. Pure, so every route, what each needs and every
//! 404/405 are unit-tested natively.
//!
//! One row per endpoint. [`ROUTES`] lists each path once with its methods, and each method's
//! [`Endpoint`] declares everything about it in one place: its auth level (the variant: no token,
//! a user's token, the admin token); for a user's token the [`Scope`] a scoped token needs and
//! whether it reads or writes ([`Access`]); its rate limit ([`Limit`]: a class or none, always
//! said); and its handler, the typed route it builds from the path's parameter, which
//! `http::dispatch` and `mastodon::user` match exhaustively (no `_ =>` arm). Nothing has a
//! default: a row that leaves one of these out does not compile, nor does a route without its
//! handler. Matching and the `Allow` header of a 405 are both derived from the table (with
//! `HEAD` wherever there is a `GET`).

use super::limits::{Limit, LimitClass};
use crate::domain::ids::{CommentId, FilterId, ListId, MediaId, NotificationId, PostId, ScheduledId, UserId};
use crate::domain::media::{parse_served, ServedFile};
use crate::domain::moderation::{Action, Target};
use crate::domain::notifications::GroupKey;
use crate::domain::oauth::Scopes;
use crate::domain::placement::parse_shard;
use crate::domain::profile::Image;
use crate::domain::snowflake::LogicalShard;
use crate::domain::tags::TagName;
use crate::error::ApiError;
use crate::services::saved::Saved;

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
    /// `POST /api/v1/accounts`: registration by an app (its token authenticates it).
    RegisterAccount,
    /// `GET /api/v1/apps/verify_credentials`: the token's app.
    AppCredentials,
    /// `GET /api/v1/instance/{peers,activity,...}` (`http/mastodon/instance.rs`).
    InstancePart(InstancePart),
    /// The streaming WebSocket: authenticated by the token in its query, header or subprotocol.
    Streaming,
    StreamingHealth,
    /// The same streams as server-sent events (`true`: `user:notification`).
    StreamingEvents {
        notifications_only: bool,
    },
}

/// The instance's sub-resources, as Mastodon answers them for one domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstancePart {
    /// `[]`: no other domain is known (no federation).
    Peers,
    Activity,
    Languages,
    /// `{}`: no translation service.
    TranslationLanguages,
    ExtendedDescription,
    Rules,
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
    /// `PUT` / `DELETE /v1/posts/{id}/repost`: boost, unboost.
    Repost(PostId, bool),
    /// `GET /v1/posts/{id}/reposts`: who boosts it.
    Reposters(PostId),
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

/// What a method does to the token's Web Push subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushRoute {
    Get,
    /// `POST`: subscribe, replacing the token's subscription.
    Create,
    /// `PUT`: its alerts and policy.
    Update,
    Delete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MastodonRoute {
    /// What apps read at startup and edgefeed has none of: each answers an empty list
    /// (announcements, ...) or the defaults (preferences).
    Preferences,
    /// Filters, v2 and v1 (`http/mastodon/filters.rs`).
    Filters(FilterRoute),
    Announcements,
    /// `/api/v1/push/subscription`: the token's Web Push subscription (`http/mastodon/push.rs`).
    PushSubscription(PushRoute),
    /// `GET /api/v1/accounts/{id}/identity_proofs`: none (Mastodon removed them; apps still ask).
    IdentityProofs(UserId),
    /// Mastodon's admin API (`/api/v1/admin/...`): nobody is staff through this API.
    Admin,
    VerifyCredentials,
    Account(UserId),
    LookupAccount,
    /// `GET /api/v1/accounts/search?q=`: by handle prefix.
    SearchAccounts,
    /// `GET /api/v1/accounts/familiar_followers?id[]=`.
    FamiliarFollowers,
    /// `POST /api/v1/accounts/{id}/remove_from_followers`.
    RemoveFromFollowers(UserId),
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
    /// `POST .../reblog` and `.../unreblog`.
    Reblog(PostId, bool),
    RebloggedBy(PostId),
    /// `GET .../quotes`: the statuses quoting it.
    Quotes(PostId),
    Context(PostId),
    HomeTimeline,
    Search,
    /// Notifications, grouped notifications and markers.
    Notifications(NotificationRoute),
    /// Lists and their timelines.
    Lists(ListRoute),
    /// Direct conversations (`http/mastodon/conversations.rs`).
    Conversations(ConversationRoute),
    /// Public and tag timelines, hashtags (`http/mastodon/tags.rs`).
    Tags(TagRoute),
    /// Trends, suggestions, the directory (`http/mastodon/discovery.rs`).
    Discovery(DiscoveryRoute),
    /// One's profile and what one keeps about others (issue 42).
    Profile(ProfileRoute),
    /// A status's extras (`http/mastodon/extras.rs`): history, source, mute, pin.
    Extra(StatusExtra),
    /// Scheduled statuses (`http/mastodon/scheduled.rs`).
    Scheduled(ScheduledRoute),
}

/// The Mastodon routes of scheduled statuses (made by `POST /api/v1/statuses` with
/// `scheduled_at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduledRoute {
    List,
    Get(ScheduledId),
    /// `PUT`: a new `scheduled_at`.
    Reschedule(ScheduledId),
    Cancel(ScheduledId),
}

/// The Mastodon routes of discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryRoute {
    TrendingTags,
    TrendingStatuses,
    TrendingLinks,
    /// `GET /api/v1/suggestions` (accounts) and `/api/v2/suggestions` (with their source).
    Suggestions {
        v2: bool,
    },
    Directory,
}

/// The Mastodon routes of the timelines beyond follows and of hashtags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagRoute {
    PublicTimeline,
    TagTimeline(TagName),
    Tag(TagName),
    /// `POST .../follow` (`true`) and `.../unfollow`.
    Follow(TagName, bool),
    /// `POST .../feature` (`true`) and `.../unfeature`.
    Feature(TagName, bool),
    Followed,
    Featured,
    CreateFeatured,
    DeleteFeatured(i64),
    FeaturedSuggestions,
    AccountFeatured(UserId),
}

/// The Mastodon routes of one's profile, follow requests, notes, endorsements, reports and
/// domain blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileRoute {
    /// `PATCH /api/v1/accounts/update_credentials`.
    UpdateCredentials,
    /// `DELETE /api/v1/profile/avatar` and `/header`.
    RemoveImage(crate::domain::profile::Image),
    /// `POST /api/v1/emails/confirmations`: nothing to resend.
    EmailConfirmation,
    /// Follow requests to the viewer's locked account (`http/mastodon/follow_requests.rs`).
    FollowRequests,
    FollowRequest(UserId),
    /// `POST /api/v1/follow_requests/{id}/authorize` (`true`) and `reject`.
    AnswerFollowRequest(UserId, bool),
    /// `POST /api/v1/accounts/{id}/note`: the viewer's private note.
    Note(UserId),
    /// `POST .../endorse` (and `pin`: `true`), `.../unendorse` (and `unpin`).
    Endorse(UserId, bool),
    /// `GET /api/v1/endorsements` (`None`: the viewer's) and `/api/v1/accounts/{id}/endorsements`.
    Endorsements(Option<UserId>),
    /// `POST /api/v1/reports`.
    Report,
    DomainBlocks,
    /// `POST` (`true`) and `DELETE /api/v1/domain_blocks`.
    DomainBlock(bool),
}

/// The Mastodon routes of a status's extras (issue 42).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusExtra {
    /// `GET .../history`: its versions, oldest first.
    History(PostId),
    /// `GET .../source`: its plain text and content warning.
    Source(PostId),
    /// `POST .../mute` (`true`) and `.../unmute`: its conversation, for the viewer.
    Mute(PostId, bool),
    /// `POST .../pin` (`true`) and `.../unpin`.
    Pin(PostId, bool),
    /// `GET /api/v1/polls/{id}` (a poll's id is its status's).
    Poll(PostId),
    /// `POST /api/v1/polls/{id}/votes`.
    Vote(PostId),
}

/// The Mastodon routes of filters (`http/mastodon/filters.rs`): v2 filters with their keywords
/// and statuses, and v1 filters (each one keyword of a v2 filter, named by the keyword's id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterRoute {
    List,
    Create,
    Get(FilterId),
    Update(FilterId),
    Delete(FilterId),
    Keywords(FilterId),
    AddKeyword(FilterId),
    Keyword(FilterId),
    UpdateKeyword(FilterId),
    DeleteKeyword(FilterId),
    Statuses(FilterId),
    AddStatus(FilterId),
    Status(FilterId),
    DeleteStatus(FilterId),
    V1List,
    V1Create,
    V1Get(FilterId),
    V1Update(FilterId),
    V1Delete(FilterId),
}

/// The Mastodon routes of conversations: the list, one removed, one marked read or unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversationRoute {
    Conversations,
    Remove(PostId),
    /// `POST .../read` (`false`) and `.../unread` (`true`).
    Unread(PostId, bool),
}

/// The Mastodon routes of notifications (`http/mastodon/notifications.rs`), grouped
/// notifications (`grouped.rs`) and markers (`markers.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationRoute {
    Notifications,
    Notification(NotificationId),
    ClearNotifications,
    DismissNotification(NotificationId),
    /// `POST /api/v1/notifications/dismiss` with the id in the form (Mastodon before 3.1; what
    /// Mastodon.py still calls when it does not know the instance's version).
    DismissNotificationLegacy,
    UnreadCount,
    /// Mastodon 4.3's notification requests: the notifications the policy filtered, one
    /// request per actor (named by the actor's account id).
    NotificationRequests,
    NotificationRequest(UserId),
    /// `POST .../requests/{id}/accept` (`true`) and `.../dismiss`.
    AnswerRequest(UserId, bool),
    /// `POST .../requests/accept` (`true`) and `.../dismiss` with `id[]`.
    AnswerRequests(bool),
    RequestsMerged,
    NotificationPolicy,
    /// `PUT` or `PATCH /api/v2/notifications/policy`.
    SetNotificationPolicy,
    /// Mastodon 4.2's policy (`/api/v1/notifications/policy`): booleans over the same row;
    /// `true` when it is a `PUT`.
    V1NotificationPolicy(bool),
    /// Mastodon 4.3's grouped notifications (`/api/v2/notifications`).
    GroupedNotifications,
    GroupedUnreadCount,
    NotificationGroup(GroupKey),
    DismissGroup(GroupKey),
    GroupAccounts(GroupKey),
    Markers,
    SetMarkers,
}

/// The Mastodon routes of lists (`http/mastodon/lists.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRoute {
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
    /// `GET /api/v1/blocks`.
    Blocks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountAction {
    Follow,
    Unfollow,
    Block,
    Unblock,
}

impl Route {
    /// The largest body the route reads: an upload's image, else [`MAX_BODY_BYTES`] (a form's
    /// or JSON's).
    pub fn body_limit(self) -> usize {
        match self {
            Route::User(UserRoute::Upload | UserRoute::Mastodon(MastodonRoute::Upload)) => {
                crate::domain::media::MAX_IMAGE_BYTES + MAX_BODY_BYTES
            }
            // An avatar and a header beside the profile's fields.
            Route::User(UserRoute::Mastodon(MastodonRoute::Profile(ProfileRoute::UpdateCredentials))) => {
                2 * crate::domain::profile::MAX_IMAGE_BYTES + MAX_BODY_BYTES
            }
            _ => MAX_BODY_BYTES,
        }
    }
}

/// A request body's limit (64 KiB) on every route but uploads.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminRoute {
    ImportPost,
    ImportComment,
    Stats,
    Reconcile,
    /// Suspend / reinstate a user, take down / restore a post.
    Moderate(Target, Action),
    Audit,
    /// `GET /v1/admin/reports`: users' reports, newest first.
    Reports,
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
    /// Also the post's favourite notification rows and group rows (migration 0048).
    Liked,
    /// An upload's row and bytes (whether they exist); optionally move its times into the past.
    Media,
    /// Bare calls to readers' window objects that do nothing, timed inside the Worker: the
    /// object-call floor the feed read and the fan-out are built on.
    FloorObject,
    /// Bare D1 batches (`SELECT 1`), on one database or on every one at once, in series, timed
    /// inside the Worker: the D1 floor of a page's batches and of the likes' group commit.
    FloorD1,
    /// Write a comment of the old kind (as comments were before replies were posts), with its
    /// notification: what the moves of old comments start from (migration 0034).
    OldComment,
    /// Make a scheduled post due now (its time moved to the present).
    Scheduled,
    /// Run a notification's Web Push delivery again, now (a duplicate queue delivery).
    PushAgain,
    /// A timeline key's stream relay's figures (`{"tag"}` or `{"stripe"}`).
    Relay,
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
        ("old_comment", Self::OldComment),
        ("scheduled", Self::Scheduled),
        ("push_again", Self::PushAgain),
        ("relay", Self::Relay),
    ];

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, hook)| *hook)
    }
}

/// Whether a user endpoint reads or writes. A read's token-revocation check (a D1 read) runs
/// beside its handler rather than before it, saving a sequential round trip: a revoked token
/// still gets 401 and no data, and a read changes nothing but the reader's own activity
/// figures. A write's check runs before it, then its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The OAuth scope a scoped token needs for a user endpoint (a token without scopes may do
/// everything): as Mastodon, reads `read`, follows, blocks and mutes `follow`, other writes
/// `write`, push subscriptions `push`, its admin API `admin:read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Needs(Scopes),
    /// `read`, or `profile` (Mastodon 4.3: that scope reads one's own account and nothing else):
    /// `verify_credentials`.
    ReadOrProfile,
}

impl Scope {
    /// Whether a token with `granted` scopes may call the endpoint.
    pub fn allows(self, granted: Scopes) -> bool {
        match self {
            Scope::Needs(needed) => granted.contains(needed),
            Scope::ReadOrProfile => granted.contains(Scopes::READ) || granted.contains(Scopes::PROFILE),
        }
    }

    /// The scope a refusal names (`403 insufficient_scope`).
    pub fn needed(self) -> Scopes {
        match self {
            Scope::Needs(needed) => needed,
            Scope::ReadOrProfile => Scopes::READ,
        }
    }
}

/// What a user endpoint checks before its handler runs (`http::dispatch`): the token's scope,
/// then by its access the revocation check (beside a read, before a write) and its limit, per
/// user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    pub scope: Scope,
    pub access: Access,
    pub limit: Limit,
}

/// One endpoint: a method of a [`PathRow`]. The variant is its auth level; the handler builds
/// the typed route from the path's parameter segment (`""` when the pattern has none), `None`
/// when the segment is not well formed: such a path names nothing, so it answers 404.
#[derive(Clone, Copy)]
pub enum Endpoint {
    /// No token; a limit counts per client IP.
    Public { limit: Limit, handler: fn(&str) -> Option<PublicRoute> },
    /// A user's bearer token.
    User { guard: Guard, handler: fn(&str) -> Option<UserRoute> },
    /// The admin token: the operator's, not rate limited.
    Admin { handler: fn(&str) -> Option<AdminRoute> },
}

/// A request's endpoint with its parameter parsed: what `http::dispatch` authenticates, limits
/// and runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Public { route: PublicRoute, limit: Limit },
    User { route: UserRoute, guard: Guard },
    Admin { route: AdminRoute },
}

impl Call {
    pub fn route(self) -> Route {
        match self {
            Call::Public { route, .. } => Route::Public(route),
            Call::User { route, .. } => Route::User(route),
            Call::Admin { route } => Route::Admin(route),
        }
    }
}

impl Endpoint {
    fn bind(self, param: &str) -> Option<Call> {
        Some(match self {
            Endpoint::Public { limit, handler } => Call::Public { route: handler(param)?, limit },
            Endpoint::User { guard, handler } => Call::User { route: handler(param)?, guard },
            Endpoint::Admin { handler } => Call::Admin { route: handler(param)? },
        })
    }
}

/// An endpoint without a token: its limit (per client IP) and its handler.
const fn public(limit: Limit, handler: fn(&str) -> Option<PublicRoute>) -> Endpoint {
    Endpoint::Public { limit, handler }
}

/// An endpoint for a user's token: the scope it needs, whether it reads or writes, its limit
/// (per user) and its handler. Every one is required: there is no default to fall back on.
const fn user(
    scope: Scope,
    access: Access,
    limit: Limit,
    handler: fn(&str) -> Option<UserRoute>,
) -> Endpoint {
    Endpoint::User { guard: Guard { scope, access, limit }, handler }
}

/// An endpoint for the admin token: its handler.
const fn admin(handler: fn(&str) -> Option<AdminRoute>) -> Endpoint {
    Endpoint::Admin { handler }
}

/// One path of the route table: a pattern whose segments are literals or one `{param}`, and
/// its endpoints by method, in the order `Allow` lists them.
pub struct PathRow {
    pub pattern: &'static str,
    pub methods: &'static [(&'static str, Endpoint)],
}

const fn path(pattern: &'static str, methods: &'static [(&'static str, Endpoint)]) -> PathRow {
    PathRow { pattern, methods }
}

use Access::{Read, Write};
use AdminRoute as A;
use FilterRoute as FR;
use InstancePart as IP;
use Limit::Class;
use LimitClass as L;
use ListRoute as LR;
use MastodonPublic as MP;
use MastodonRoute as M;
use NotificationRoute as N;
use ProfileRoute as PR;
use PublicRoute as P;
use UserRoute as U;

const READ: Scope = Scope::Needs(Scopes::READ);
const WRITE: Scope = Scope::Needs(Scopes::WRITE);
const FOLLOW: Scope = Scope::Needs(Scopes::FOLLOW);
const PUSH: Scope = Scope::Needs(Scopes::PUSH);
const ADMIN_READ: Scope = Scope::Needs(Scopes::ADMIN_READ);

fn mastodon(route: MastodonRoute) -> Option<UserRoute> {
    Some(U::Mastodon(route))
}

fn mastodon_public(route: MastodonPublic) -> Option<PublicRoute> {
    Some(P::Mastodon(route))
}

fn instance_part(part: InstancePart) -> Option<PublicRoute> {
    mastodon_public(MP::InstancePart(part))
}

fn notes(route: NotificationRoute) -> Option<UserRoute> {
    mastodon(M::Notifications(route))
}

fn profile(route: ProfileRoute) -> Option<UserRoute> {
    mastodon(M::Profile(route))
}

fn lists(route: ListRoute) -> Option<UserRoute> {
    mastodon(M::Lists(route))
}

fn filters(route: FilterRoute) -> Option<UserRoute> {
    mastodon(M::Filters(route))
}

fn filter(id: &str, route: fn(FilterId) -> FilterRoute) -> Option<UserRoute> {
    filters(route(FilterId::parse(id)?))
}

fn request(id: &str, accept: bool) -> Option<UserRoute> {
    notes(N::AnswerRequest(UserId::parse(id)?, accept))
}

fn conversation(id: &str, route: impl Fn(PostId) -> ConversationRoute) -> Option<UserRoute> {
    mastodon(M::Conversations(route(PostId::parse(id)?)))
}

fn account(id: &str, route: fn(UserId) -> MastodonRoute) -> Option<UserRoute> {
    mastodon(route(UserId::parse(id)?))
}

fn discover(route: DiscoveryRoute) -> Option<UserRoute> {
    mastodon(M::Discovery(route))
}

fn tags(route: TagRoute) -> Option<UserRoute> {
    mastodon(M::Tags(route))
}

fn tag(segment: &str, route: fn(TagName) -> TagRoute) -> Option<UserRoute> {
    tags(route(TagName::from_path(segment)?))
}

fn account_action(id: &str, action: AccountAction) -> Option<UserRoute> {
    mastodon(M::AccountAction(UserId::parse(id)?, action))
}

fn scheduled(id: &str, route: fn(ScheduledId) -> ScheduledRoute) -> Option<UserRoute> {
    mastodon(M::Scheduled(route(ScheduledId::parse(id)?)))
}

fn status(id: &str, route: fn(PostId) -> MastodonRoute) -> Option<UserRoute> {
    mastodon(route(PostId::parse(id)?))
}

fn list(id: &str, route: fn(ListId) -> ListRoute) -> Option<UserRoute> {
    lists(route(ListId::parse(id)?))
}

fn group(key: &str, route: fn(GroupKey) -> NotificationRoute) -> Option<UserRoute> {
    notes(route(GroupKey::parse(key)?))
}

fn moderate_user(id: &str, action: Action) -> Option<AdminRoute> {
    UserId::parse(id).map(|id| A::Moderate(Target::User(id), action))
}

fn moderate_post(id: &str, action: Action) -> Option<AdminRoute> {
    PostId::parse(id).map(|id| A::Moderate(Target::Post(id), action))
}

fn shard(id: &str, step: ShardStep) -> Option<AdminRoute> {
    parse_shard(id).map(|s| A::Shard(s, step))
}

/// Every endpoint.
pub const ROUTES: &[PathRow] = &[
    path("/v1/health", &[("GET", public(Limit::None, |_| Some(P::Health)))]),
    path(
        "/v1/users",
        &[
            ("GET", user(READ, Read, Limit::None, |_| Some(U::Lookup))),
            ("POST", public(Class(L::Register), |_| Some(P::Register))),
        ],
    ),
    path("/v1/me", &[("GET", user(READ, Read, Limit::None, |_| Some(U::Me)))]),
    // A logout revokes the token it came with: checked first, and not limited.
    path("/v1/me/logout", &[("POST", user(WRITE, Write, Limit::None, |_| Some(U::Logout)))]),
    path("/v1/users/{id}", &[("GET", user(READ, Read, Limit::None, |id| UserId::parse(id).map(U::User)))]),
    path(
        "/v1/users/{id}/followers",
        &[("GET", user(READ, Read, Limit::None, |id| UserId::parse(id).map(U::Followers)))],
    ),
    path(
        "/v1/users/{id}/following",
        &[("GET", user(READ, Read, Limit::None, |id| UserId::parse(id).map(U::Following)))],
    ),
    path(
        "/v1/users/{id}/posts",
        &[("GET", user(READ, Read, Limit::None, |id| UserId::parse(id).map(U::AuthorPosts)))],
    ),
    path(
        "/v1/me/following/{id}",
        &[
            ("PUT", user(FOLLOW, Write, Class(L::Graph), |id| UserId::parse(id).map(U::Follow))),
            ("DELETE", user(FOLLOW, Write, Class(L::Graph), |id| UserId::parse(id).map(U::Unfollow))),
        ],
    ),
    path(
        "/v1/me/blocks/{id}",
        &[
            ("PUT", user(FOLLOW, Write, Class(L::Graph), |id| UserId::parse(id).map(U::Block))),
            ("DELETE", user(FOLLOW, Write, Class(L::Graph), |id| UserId::parse(id).map(U::Unblock))),
        ],
    ),
    path("/v1/me/mutes", &[("GET", user(READ, Read, Limit::None, |_| Some(U::Mutes)))]),
    path(
        "/v1/me/mutes/{id}",
        &[
            ("PUT", user(FOLLOW, Write, Class(L::Graph), |id| Some(U::Mute(UserId::parse(id)?, true)))),
            ("DELETE", user(FOLLOW, Write, Class(L::Graph), |id| Some(U::Mute(UserId::parse(id)?, false)))),
        ],
    ),
    path("/v1/posts", &[("POST", user(WRITE, Write, Class(L::Posts), |_| Some(U::Publish)))]),
    path(
        "/v1/posts/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| PostId::parse(id).map(U::GetPost))),
            ("PATCH", user(WRITE, Write, Class(L::Posts), |id| PostId::parse(id).map(U::EditPost))),
            ("DELETE", user(WRITE, Write, Class(L::Posts), |id| PostId::parse(id).map(U::DeletePost))),
        ],
    ),
    path(
        "/v1/posts/{id}/like",
        &[
            ("PUT", user(WRITE, Write, Class(L::Likes), |id| PostId::parse(id).map(U::Like))),
            ("DELETE", user(WRITE, Write, Class(L::Likes), |id| PostId::parse(id).map(U::Unlike))),
        ],
    ),
    path(
        "/v1/posts/{id}/likes",
        &[("GET", user(READ, Read, Limit::None, |id| PostId::parse(id).map(U::Likers)))],
    ),
    // A boost is a post of the booster's (it fans out as one): the posts limit.
    path(
        "/v1/posts/{id}/repost",
        &[
            ("PUT", user(WRITE, Write, Class(L::Posts), |id| Some(U::Repost(PostId::parse(id)?, true)))),
            ("DELETE", user(WRITE, Write, Class(L::Posts), |id| Some(U::Repost(PostId::parse(id)?, false)))),
        ],
    ),
    path(
        "/v1/posts/{id}/reposts",
        &[("GET", user(READ, Read, Limit::None, |id| PostId::parse(id).map(U::Reposters)))],
    ),
    path(
        "/v1/posts/{id}/bookmark",
        &[
            ("PUT", user(WRITE, Write, Class(L::Likes), |id| Some(U::Bookmark(PostId::parse(id)?, true)))),
            (
                "DELETE",
                user(WRITE, Write, Class(L::Likes), |id| Some(U::Bookmark(PostId::parse(id)?, false))),
            ),
        ],
    ),
    path("/v1/me/bookmarks", &[("GET", user(READ, Read, Limit::None, |_| Some(U::Saved(Saved::Bookmarks))))]),
    path("/v1/me/likes", &[("GET", user(READ, Read, Limit::None, |_| Some(U::Saved(Saved::Favourites))))]),
    path(
        "/v1/posts/{id}/comments",
        &[
            ("GET", user(READ, Read, Limit::None, |id| PostId::parse(id).map(U::ListComments))),
            ("POST", user(WRITE, Write, Class(L::Comments), |id| PostId::parse(id).map(U::CreateComment))),
        ],
    ),
    path(
        "/v1/comments/{id}",
        &[(
            "DELETE",
            user(WRITE, Write, Class(L::Comments), |id| CommentId::parse(id).map(U::DeleteComment)),
        )],
    ),
    // Uploads count as posts: each stores bytes, so a flood of them is what the limit is for.
    path("/v1/media", &[("POST", user(WRITE, Write, Class(L::Posts), |_| Some(U::Upload)))]),
    path(
        "/v1/media/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| MediaId::parse(id).map(U::GetMedia))),
            ("PUT", user(WRITE, Write, Class(L::Posts), |id| MediaId::parse(id).map(U::DescribeMedia))),
        ],
    ),
    // The unguessable URL is the capability: image tags send no token.
    path("/media/{file}", &[("GET", public(Limit::None, |file| Some(P::Media(parse_served(file)?))))]),
    path(
        "/v1/comments/{id}/like",
        &[
            (
                "POST",
                user(WRITE, Write, Class(L::Likes), |id| Some(U::LikeComment(CommentId::parse(id)?, true))),
            ),
            (
                "PUT",
                user(WRITE, Write, Class(L::Likes), |id| Some(U::LikeComment(CommentId::parse(id)?, true))),
            ),
            (
                "DELETE",
                user(WRITE, Write, Class(L::Likes), |id| Some(U::LikeComment(CommentId::parse(id)?, false))),
            ),
        ],
    ),
    // The viewer's own notifications: not limited (they touch only the viewer's rows).
    path(
        "/v1/notifications",
        &[
            ("GET", user(READ, Read, Limit::None, |_| Some(U::Notifications))),
            ("DELETE", user(WRITE, Write, Limit::None, |_| Some(U::ClearNotifications))),
        ],
    ),
    path(
        "/v1/notifications/unread",
        &[("GET", user(READ, Read, Limit::None, |_| Some(U::UnreadNotifications)))],
    ),
    path(
        "/v1/notifications/marker",
        &[("PUT", user(WRITE, Write, Limit::None, |_| Some(U::SetNotificationMarker)))],
    ),
    path(
        "/v1/notifications/{id}",
        &[(
            "DELETE",
            user(WRITE, Write, Limit::None, |id| NotificationId::parse(id).map(U::DismissNotification)),
        )],
    ),
    path("/v1/feed", &[("GET", user(READ, Read, Limit::None, |_| Some(U::Feed)))]),
    // The live socket is authenticated by its one-use ticket, not a header; a ticket only
    // opens that read-only socket, so asking for one needs `read`.
    path("/v1/feed/live", &[("GET", public(Limit::None, |_| Some(P::LiveFeed)))]),
    path("/v1/feed/live/ticket", &[("POST", user(READ, Write, Limit::None, |_| Some(U::LiveTicket)))]),
    path("/v1/admin/import/posts", &[("POST", admin(|_| Some(A::ImportPost)))]),
    path("/v1/admin/import/comments", &[("POST", admin(|_| Some(A::ImportComment)))]),
    path("/v1/admin/stats", &[("GET", admin(|_| Some(A::Stats)))]),
    path("/v1/admin/reconcile", &[("POST", admin(|_| Some(A::Reconcile)))]),
    path("/v1/admin/users/{id}/suspend", &[("POST", admin(|id| moderate_user(id, Action::Suspend)))]),
    path("/v1/admin/users/{id}/reinstate", &[("POST", admin(|id| moderate_user(id, Action::Reinstate)))]),
    path("/v1/admin/posts/{id}/takedown", &[("POST", admin(|id| moderate_post(id, Action::Takedown)))]),
    path("/v1/admin/posts/{id}/restore", &[("POST", admin(|id| moderate_post(id, Action::Restore)))]),
    path("/v1/admin/audit", &[("GET", admin(|_| Some(A::Audit)))]),
    path("/v1/admin/reports", &[("GET", admin(|_| Some(A::Reports)))]),
    path("/v1/admin/shards/{id}/freeze", &[("POST", admin(|id| shard(id, ShardStep::Freeze)))]),
    path("/v1/admin/shards/{id}/unfreeze", &[("POST", admin(|id| shard(id, ShardStep::Unfreeze)))]),
    path("/v1/admin/shards/{id}/copy", &[("POST", admin(|id| shard(id, ShardStep::Copy)))]),
    path("/v1/admin/shards/{id}/verify", &[("POST", admin(|id| shard(id, ShardStep::Verify)))]),
    path("/v1/admin/shards/{id}/purge", &[("POST", admin(|id| shard(id, ShardStep::Purge)))]),
    path("/v1/admin/test/{hook}", &[("POST", admin(|hook| Some(A::Test(TestHook::parse(hook)?))))]),
    // The Mastodon client API. Literal rows come before `{id}` rows of the same shape.
    // Registering an app and signing in (password guessing) count against the sign-up limit per
    // address; a revocation authenticates by the client's secret and only ends a token.
    path("/api/v1/apps", &[("POST", public(Class(L::Register), |_| mastodon_public(MP::Apps)))]),
    // An app authenticates these with its token (`http/mastodon/registration.rs`): a sign-up
    // counts against the sign-up limit per address, as `POST /v1/users`.
    path(
        "/api/v1/apps/verify_credentials",
        &[("GET", public(Limit::None, |_| mastodon_public(MP::AppCredentials)))],
    ),
    path(
        "/api/v1/accounts",
        &[("POST", public(Class(L::Register), |_| mastodon_public(MP::RegisterAccount)))],
    ),
    // Nothing is sent or stored: a read of the caller's state, as push subscriptions.
    path(
        "/api/v1/emails/confirmations",
        &[("POST", user(WRITE, Read, Limit::None, |_| profile(PR::EmailConfirmation)))],
    ),
    path("/api/v1/instance", &[("GET", public(Limit::None, |_| mastodon_public(MP::Instance { v1: true })))]),
    path(
        "/api/v2/instance",
        &[("GET", public(Limit::None, |_| mastodon_public(MP::Instance { v1: false })))],
    ),
    path("/api/v1/instance/peers", &[("GET", public(Limit::None, |_| instance_part(IP::Peers)))]),
    path("/api/v1/instance/activity", &[("GET", public(Limit::None, |_| instance_part(IP::Activity)))]),
    path("/api/v1/instance/languages", &[("GET", public(Limit::None, |_| instance_part(IP::Languages)))]),
    path(
        "/api/v1/instance/translation_languages",
        &[("GET", public(Limit::None, |_| instance_part(IP::TranslationLanguages)))],
    ),
    path(
        "/api/v1/instance/extended_description",
        &[("GET", public(Limit::None, |_| instance_part(IP::ExtendedDescription)))],
    ),
    path("/api/v1/instance/rules", &[("GET", public(Limit::None, |_| instance_part(IP::Rules)))]),
    path(
        "/oauth/authorize",
        &[
            ("GET", public(Limit::None, |_| mastodon_public(MP::AuthorizePage))),
            ("POST", public(Class(L::Register), |_| mastodon_public(MP::Authorize))),
        ],
    ),
    path("/oauth/token", &[("POST", public(Class(L::Register), |_| mastodon_public(MP::Token)))]),
    path("/oauth/revoke", &[("POST", public(Limit::None, |_| mastodon_public(MP::Revoke)))]),
    // What apps call at startup, and the discovery documents.
    path("/api/v1/custom_emojis", &[("GET", public(Limit::None, |_| mastodon_public(MP::CustomEmojis)))]),
    path("/.well-known/nodeinfo", &[("GET", public(Limit::None, |_| mastodon_public(MP::NodeInfoLinks)))]),
    path("/nodeinfo/2.0", &[("GET", public(Limit::None, |_| mastodon_public(MP::NodeInfo)))]),
    path("/.well-known/host-meta", &[("GET", public(Limit::None, |_| mastodon_public(MP::HostMeta)))]),
    path("/.well-known/webfinger", &[("GET", public(Limit::None, |_| mastodon_public(MP::WebFinger)))]),
    path(
        "/.well-known/oauth-authorization-server",
        &[("GET", public(Limit::None, |_| mastodon_public(MP::OAuthMetadata)))],
    ),
    path(
        "/api/v1/follow_requests",
        &[("GET", user(READ, Read, Limit::None, |_| profile(PR::FollowRequests)))],
    ),
    path(
        "/api/v1/follow_requests/{id}",
        &[("GET", user(READ, Read, Limit::None, |id| profile(PR::FollowRequest(UserId::parse(id)?))))],
    ),
    path(
        "/api/v1/follow_requests/{id}/authorize",
        &[(
            "POST",
            user(FOLLOW, Write, Class(L::Graph), |id| {
                profile(PR::AnswerFollowRequest(UserId::parse(id)?, true))
            }),
        )],
    ),
    path(
        "/api/v1/follow_requests/{id}/reject",
        &[(
            "POST",
            user(FOLLOW, Write, Class(L::Graph), |id| {
                profile(PR::AnswerFollowRequest(UserId::parse(id)?, false))
            }),
        )],
    ),
    path("/api/v1/preferences", &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Preferences)))]),
    // Filter writes count as graph writes: they change what a timeline shows.
    path(
        "/api/v1/filters",
        &[
            ("GET", user(READ, Read, Limit::None, |_| filters(FR::V1List))),
            ("POST", user(WRITE, Write, Class(L::Graph), |_| filters(FR::V1Create))),
        ],
    ),
    path(
        "/api/v1/filters/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| filter(id, FR::V1Get))),
            ("PUT", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::V1Update))),
            ("DELETE", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::V1Delete))),
        ],
    ),
    path(
        "/api/v2/filters",
        &[
            ("GET", user(READ, Read, Limit::None, |_| filters(FR::List))),
            ("POST", user(WRITE, Write, Class(L::Graph), |_| filters(FR::Create))),
        ],
    ),
    path(
        "/api/v2/filters/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| filter(id, FR::Get))),
            ("PUT", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::Update))),
            ("DELETE", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::Delete))),
        ],
    ),
    path(
        "/api/v2/filters/keywords/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| filter(id, FR::Keyword))),
            ("PUT", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::UpdateKeyword))),
            ("DELETE", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::DeleteKeyword))),
        ],
    ),
    path(
        "/api/v2/filters/statuses/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| filter(id, FR::Status))),
            ("DELETE", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::DeleteStatus))),
        ],
    ),
    path(
        "/api/v2/filters/{id}/keywords",
        &[
            ("GET", user(READ, Read, Limit::None, |id| filter(id, FR::Keywords))),
            ("POST", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::AddKeyword))),
        ],
    ),
    path(
        "/api/v2/filters/{id}/statuses",
        &[
            ("GET", user(READ, Read, Limit::None, |id| filter(id, FR::Statuses))),
            ("POST", user(WRITE, Write, Class(L::Graph), |id| filter(id, FR::AddStatus))),
        ],
    ),
    path("/api/v1/announcements", &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Announcements)))]),
    // As Mastodon: push subscriptions need `push` (which `read` and `write` do not imply), which
    // apps ask for when they use it.
    path(
        "/api/v1/push/subscription",
        &[
            ("GET", user(PUSH, Read, Limit::None, |_| mastodon(M::PushSubscription(PushRoute::Get)))),
            ("POST", user(PUSH, Write, Limit::None, |_| mastodon(M::PushSubscription(PushRoute::Create)))),
            ("PUT", user(PUSH, Write, Limit::None, |_| mastodon(M::PushSubscription(PushRoute::Update)))),
            ("DELETE", user(PUSH, Write, Limit::None, |_| mastodon(M::PushSubscription(PushRoute::Delete)))),
        ],
    ),
    path("/api/v1/admin/accounts", &[("GET", user(ADMIN_READ, Read, Limit::None, |_| mastodon(M::Admin)))]),
    path("/api/v2/admin/accounts", &[("GET", user(ADMIN_READ, Read, Limit::None, |_| mastodon(M::Admin)))]),
    path("/api/v1/admin/reports", &[("GET", user(ADMIN_READ, Read, Limit::None, |_| mastodon(M::Admin)))]),
    path(
        "/api/v1/accounts/verify_credentials",
        &[("GET", user(Scope::ReadOrProfile, Read, Limit::None, |_| mastodon(M::VerifyCredentials)))],
    ),
    // A profile edit stores up to two images: the posts limit, as uploads.
    path(
        "/api/v1/accounts/update_credentials",
        &[("PATCH", user(WRITE, Write, Class(L::Posts), |_| profile(PR::UpdateCredentials)))],
    ),
    path(
        "/api/v1/profile/avatar",
        &[("DELETE", user(WRITE, Write, Class(L::Posts), |_| profile(PR::RemoveImage(Image::Avatar))))],
    ),
    path(
        "/api/v1/profile/header",
        &[("DELETE", user(WRITE, Write, Class(L::Posts), |_| profile(PR::RemoveImage(Image::Header))))],
    ),
    path(
        "/api/v1/accounts/lookup",
        &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::LookupAccount)))],
    ),
    path(
        "/api/v1/accounts/search",
        &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::SearchAccounts)))],
    ),
    path(
        "/api/v1/accounts/familiar_followers",
        &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::FamiliarFollowers)))],
    ),
    path(
        "/api/v1/accounts/relationships",
        &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Relationships)))],
    ),
    path("/api/v1/accounts/{id}", &[("GET", user(READ, Read, Limit::None, |id| account(id, M::Account)))]),
    path(
        "/api/v1/accounts/{id}/statuses",
        &[("GET", user(READ, Read, Limit::None, |id| account(id, M::AccountStatuses)))],
    ),
    path(
        "/api/v1/accounts/{id}/followers",
        &[("GET", user(READ, Read, Limit::None, |id| account(id, M::AccountFollowers)))],
    ),
    path(
        "/api/v1/accounts/{id}/following",
        &[("GET", user(READ, Read, Limit::None, |id| account(id, M::AccountFollowing)))],
    ),
    path(
        "/api/v1/accounts/{id}/lists",
        &[("GET", user(READ, Read, Limit::None, |id| lists(LR::AccountLists(UserId::parse(id)?))))],
    ),
    path(
        "/api/v1/accounts/{id}/identity_proofs",
        &[("GET", user(READ, Read, Limit::None, |id| account(id, M::IdentityProofs)))],
    ),
    path(
        "/api/v1/accounts/{id}/endorsements",
        &[("GET", user(READ, Read, Limit::None, |id| profile(PR::Endorsements(Some(UserId::parse(id)?)))))],
    ),
    // A note and an endorsement are the viewer's own rows about an account: graph writes.
    path(
        "/api/v1/accounts/{id}/note",
        &[("POST", user(WRITE, Write, Class(L::Graph), |id| profile(PR::Note(UserId::parse(id)?))))],
    ),
    path(
        "/api/v1/accounts/{id}/endorse",
        &[("POST", user(WRITE, Write, Class(L::Graph), |id| profile(PR::Endorse(UserId::parse(id)?, true))))],
    ),
    path(
        "/api/v1/accounts/{id}/unendorse",
        &[(
            "POST",
            user(WRITE, Write, Class(L::Graph), |id| profile(PR::Endorse(UserId::parse(id)?, false))),
        )],
    ),
    path(
        "/api/v1/accounts/{id}/pin",
        &[("POST", user(WRITE, Write, Class(L::Graph), |id| profile(PR::Endorse(UserId::parse(id)?, true))))],
    ),
    path(
        "/api/v1/accounts/{id}/unpin",
        &[(
            "POST",
            user(WRITE, Write, Class(L::Graph), |id| profile(PR::Endorse(UserId::parse(id)?, false))),
        )],
    ),
    path(
        "/api/v1/endorsements",
        &[("GET", user(READ, Read, Limit::None, |_| profile(PR::Endorsements(None))))],
    ),
    // A report stores a row for the operator: limited as a comment is.
    path("/api/v1/reports", &[("POST", user(WRITE, Write, Class(L::Comments), |_| profile(PR::Report)))]),
    path(
        "/api/v1/domain_blocks",
        &[
            ("GET", user(READ, Read, Limit::None, |_| profile(PR::DomainBlocks))),
            ("POST", user(FOLLOW, Write, Class(L::Graph), |_| profile(PR::DomainBlock(true)))),
            ("DELETE", user(FOLLOW, Write, Class(L::Graph), |_| profile(PR::DomainBlock(false)))),
        ],
    ),
    path(
        "/api/v1/accounts/{id}/follow",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |id| account_action(id, AccountAction::Follow)))],
    ),
    path(
        "/api/v1/accounts/{id}/unfollow",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |id| account_action(id, AccountAction::Unfollow)))],
    ),
    path(
        "/api/v1/accounts/{id}/block",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |id| account_action(id, AccountAction::Block)))],
    ),
    path(
        "/api/v1/accounts/{id}/unblock",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |id| account_action(id, AccountAction::Unblock)))],
    ),
    path(
        "/api/v1/accounts/{id}/mute",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |id| account(id, |u| M::Own(Own::Mute(u, true)))))],
    ),
    path(
        "/api/v1/accounts/{id}/unmute",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |id| account(id, |u| M::Own(Own::Mute(u, false)))))],
    ),
    path(
        "/api/v1/accounts/{id}/remove_from_followers",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |id| account(id, M::RemoveFromFollowers)))],
    ),
    path("/api/v1/mutes", &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Own(Own::Mutes))))]),
    path("/api/v1/blocks", &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Own(Own::Blocks))))]),
    path("/api/v1/statuses", &[("POST", user(WRITE, Write, Class(L::Posts), |_| mastodon(M::PostStatus)))]),
    path("/api/v1/media", &[("POST", user(WRITE, Write, Class(L::Posts), |_| mastodon(M::Upload)))]),
    path("/api/v2/media", &[("POST", user(WRITE, Write, Class(L::Posts), |_| mastodon(M::Upload)))]),
    path(
        "/api/v1/media/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| mastodon(M::Media(MediaId::parse(id)?)))),
            (
                "PUT",
                user(WRITE, Write, Class(L::Posts), |id| mastodon(M::DescribeMedia(MediaId::parse(id)?))),
            ),
        ],
    ),
    path(
        "/api/v1/statuses/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| status(id, M::Status))),
            ("PUT", user(WRITE, Write, Class(L::Posts), |id| status(id, M::EditStatus))),
            ("DELETE", user(WRITE, Write, Class(L::Posts), |id| status(id, M::DeleteStatus))),
        ],
    ),
    path(
        "/api/v1/statuses/{id}/favourite",
        &[("POST", user(WRITE, Write, Class(L::Likes), |id| status(id, |p| M::Favourite(p, true))))],
    ),
    path(
        "/api/v1/statuses/{id}/unfavourite",
        &[("POST", user(WRITE, Write, Class(L::Likes), |id| status(id, |p| M::Favourite(p, false))))],
    ),
    path(
        "/api/v1/statuses/{id}/favourited_by",
        &[("GET", user(READ, Read, Limit::None, |id| status(id, M::FavouritedBy)))],
    ),
    path(
        "/api/v1/statuses/{id}/reblog",
        &[("POST", user(WRITE, Write, Class(L::Posts), |id| status(id, |p| M::Reblog(p, true))))],
    ),
    path(
        "/api/v1/statuses/{id}/unreblog",
        &[("POST", user(WRITE, Write, Class(L::Posts), |id| status(id, |p| M::Reblog(p, false))))],
    ),
    path(
        "/api/v1/statuses/{id}/reblogged_by",
        &[("GET", user(READ, Read, Limit::None, |id| status(id, M::RebloggedBy)))],
    ),
    path(
        "/api/v1/statuses/{id}/quotes",
        &[("GET", user(READ, Read, Limit::None, |id| status(id, M::Quotes)))],
    ),
    path(
        "/api/v1/statuses/{id}/context",
        &[("GET", user(READ, Read, Limit::None, |id| status(id, M::Context)))],
    ),
    path(
        "/api/v1/statuses/{id}/bookmark",
        &[("POST", user(WRITE, Write, Class(L::Likes), |id| status(id, |p| M::Own(Own::Bookmark(p, true)))))],
    ),
    path(
        "/api/v1/statuses/{id}/unbookmark",
        &[(
            "POST",
            user(WRITE, Write, Class(L::Likes), |id| status(id, |p| M::Own(Own::Bookmark(p, false)))),
        )],
    ),
    path(
        "/api/v1/statuses/{id}/history",
        &[("GET", user(READ, Read, Limit::None, |id| status(id, |p| M::Extra(StatusExtra::History(p)))))],
    ),
    path(
        "/api/v1/statuses/{id}/source",
        &[("GET", user(READ, Read, Limit::None, |id| status(id, |p| M::Extra(StatusExtra::Source(p)))))],
    ),
    path(
        "/api/v1/statuses/{id}/mute",
        &[(
            "POST",
            user(WRITE, Write, Class(L::Likes), |id| status(id, |p| M::Extra(StatusExtra::Mute(p, true)))),
        )],
    ),
    path(
        "/api/v1/statuses/{id}/unmute",
        &[(
            "POST",
            user(WRITE, Write, Class(L::Likes), |id| status(id, |p| M::Extra(StatusExtra::Mute(p, false)))),
        )],
    ),
    path(
        "/api/v1/statuses/{id}/pin",
        &[(
            "POST",
            user(WRITE, Write, Class(L::Posts), |id| status(id, |p| M::Extra(StatusExtra::Pin(p, true)))),
        )],
    ),
    path(
        "/api/v1/statuses/{id}/unpin",
        &[(
            "POST",
            user(WRITE, Write, Class(L::Posts), |id| status(id, |p| M::Extra(StatusExtra::Pin(p, false)))),
        )],
    ),
    path(
        "/api/v1/polls/{id}",
        &[("GET", user(READ, Read, Limit::None, |id| status(id, |p| M::Extra(StatusExtra::Poll(p)))))],
    ),
    path(
        "/api/v1/polls/{id}/votes",
        &[("POST", user(WRITE, Write, Class(L::Likes), |id| status(id, |p| M::Extra(StatusExtra::Vote(p)))))],
    ),
    path(
        "/api/v1/scheduled_statuses",
        &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Scheduled(ScheduledRoute::List))))],
    ),
    path(
        "/api/v1/scheduled_statuses/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| scheduled(id, ScheduledRoute::Get))),
            ("PUT", user(WRITE, Write, Class(L::Posts), |id| scheduled(id, ScheduledRoute::Reschedule))),
            ("DELETE", user(WRITE, Write, Class(L::Posts), |id| scheduled(id, ScheduledRoute::Cancel))),
        ],
    ),
    path(
        "/api/v1/bookmarks",
        &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Own(Own::Bookmarks))))],
    ),
    // Conversations are the viewer's own rows: their writes are not limited.
    path(
        "/api/v1/conversations",
        &[(
            "GET",
            user(READ, Read, Limit::None, |_| mastodon(M::Conversations(ConversationRoute::Conversations))),
        )],
    ),
    path(
        "/api/v1/conversations/{id}",
        &[("DELETE", user(WRITE, Write, Limit::None, |id| conversation(id, ConversationRoute::Remove)))],
    ),
    path(
        "/api/v1/conversations/{id}/read",
        &[(
            "POST",
            user(WRITE, Write, Limit::None, |id| conversation(id, |c| ConversationRoute::Unread(c, false))),
        )],
    ),
    path(
        "/api/v1/conversations/{id}/unread",
        &[(
            "POST",
            user(WRITE, Write, Limit::None, |id| conversation(id, |c| ConversationRoute::Unread(c, true))),
        )],
    ),
    path(
        "/api/v1/favourites",
        &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Own(Own::Favourites))))],
    ),
    path("/api/v1/timelines/home", &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::HomeTimeline)))]),
    path(
        "/api/v1/timelines/public",
        &[("GET", user(READ, Read, Limit::None, |_| tags(TagRoute::PublicTimeline)))],
    ),
    path(
        "/api/v1/timelines/tag/{tag}",
        &[("GET", user(READ, Read, Limit::None, |t| tag(t, TagRoute::TagTimeline)))],
    ),
    path("/api/v1/tags/{tag}", &[("GET", user(READ, Read, Limit::None, |t| tag(t, TagRoute::Tag)))]),
    // Following or featuring a tag counts as a graph write: it changes what reaches the user.
    path(
        "/api/v1/tags/{tag}/follow",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |t| tag(t, |n| TagRoute::Follow(n, true))))],
    ),
    path(
        "/api/v1/tags/{tag}/unfollow",
        &[("POST", user(FOLLOW, Write, Class(L::Graph), |t| tag(t, |n| TagRoute::Follow(n, false))))],
    ),
    path(
        "/api/v1/tags/{tag}/feature",
        &[("POST", user(WRITE, Write, Class(L::Graph), |t| tag(t, |n| TagRoute::Feature(n, true))))],
    ),
    path(
        "/api/v1/tags/{tag}/unfeature",
        &[("POST", user(WRITE, Write, Class(L::Graph), |t| tag(t, |n| TagRoute::Feature(n, false))))],
    ),
    path("/api/v1/followed_tags", &[("GET", user(READ, Read, Limit::None, |_| tags(TagRoute::Followed)))]),
    path(
        "/api/v1/trends",
        &[("GET", user(READ, Read, Limit::None, |_| discover(DiscoveryRoute::TrendingTags)))],
    ),
    path(
        "/api/v1/trends/tags",
        &[("GET", user(READ, Read, Limit::None, |_| discover(DiscoveryRoute::TrendingTags)))],
    ),
    path(
        "/api/v1/trends/statuses",
        &[("GET", user(READ, Read, Limit::None, |_| discover(DiscoveryRoute::TrendingStatuses)))],
    ),
    path(
        "/api/v1/trends/links",
        &[("GET", user(READ, Read, Limit::None, |_| discover(DiscoveryRoute::TrendingLinks)))],
    ),
    path(
        "/api/v1/suggestions",
        &[("GET", user(READ, Read, Limit::None, |_| discover(DiscoveryRoute::Suggestions { v2: false })))],
    ),
    path(
        "/api/v2/suggestions",
        &[("GET", user(READ, Read, Limit::None, |_| discover(DiscoveryRoute::Suggestions { v2: true })))],
    ),
    path(
        "/api/v1/directory",
        &[("GET", user(READ, Read, Limit::None, |_| discover(DiscoveryRoute::Directory)))],
    ),
    path(
        "/api/v1/featured_tags",
        &[
            ("GET", user(READ, Read, Limit::None, |_| tags(TagRoute::Featured))),
            ("POST", user(WRITE, Write, Class(L::Graph), |_| tags(TagRoute::CreateFeatured))),
        ],
    ),
    path(
        "/api/v1/featured_tags/suggestions",
        &[("GET", user(READ, Read, Limit::None, |_| tags(TagRoute::FeaturedSuggestions)))],
    ),
    path(
        "/api/v1/featured_tags/{id}",
        &[(
            "DELETE",
            user(WRITE, Write, Class(L::Graph), |id| {
                tags(TagRoute::DeleteFeatured(crate::domain::ids::parse_id(id)?))
            }),
        )],
    ),
    path(
        "/api/v1/accounts/{id}/featured_tags",
        &[("GET", user(READ, Read, Limit::None, |id| tags(TagRoute::AccountFeatured(UserId::parse(id)?))))],
    ),
    path(
        "/api/v1/timelines/list/{id}",
        &[("GET", user(READ, Read, Limit::None, |id| list(id, LR::ListTimeline)))],
    ),
    // List writes count as graph writes: they change whose posts a timeline pulls.
    path(
        "/api/v1/lists",
        &[
            ("GET", user(READ, Read, Limit::None, |_| lists(LR::Lists))),
            ("POST", user(WRITE, Write, Class(L::Graph), |_| lists(LR::CreateList))),
        ],
    ),
    path(
        "/api/v1/lists/{id}",
        &[
            ("GET", user(READ, Read, Limit::None, |id| list(id, LR::List))),
            ("PUT", user(WRITE, Write, Class(L::Graph), |id| list(id, LR::UpdateList))),
            ("DELETE", user(WRITE, Write, Class(L::Graph), |id| list(id, LR::DeleteList))),
        ],
    ),
    path(
        "/api/v1/lists/{id}/accounts",
        &[
            ("GET", user(READ, Read, Limit::None, |id| list(id, LR::ListAccounts))),
            ("POST", user(WRITE, Write, Class(L::Graph), |id| list(id, LR::AddListAccounts))),
            ("DELETE", user(WRITE, Write, Class(L::Graph), |id| list(id, LR::RemoveListAccounts))),
        ],
    ),
    path("/api/v2/search", &[("GET", user(READ, Read, Limit::None, |_| mastodon(M::Search)))]),
    // Notifications and markers: the viewer's own rows, so their writes are not limited.
    path("/api/v1/notifications", &[("GET", user(READ, Read, Limit::None, |_| notes(N::Notifications)))]),
    path(
        "/api/v1/notifications/clear",
        &[("POST", user(WRITE, Write, Limit::None, |_| notes(N::ClearNotifications)))],
    ),
    path(
        "/api/v1/notifications/dismiss",
        &[("POST", user(WRITE, Write, Limit::None, |_| notes(N::DismissNotificationLegacy)))],
    ),
    path(
        "/api/v1/notifications/unread_count",
        &[("GET", user(READ, Read, Limit::None, |_| notes(N::UnreadCount)))],
    ),
    path(
        "/api/v1/notifications/requests",
        &[("GET", user(READ, Read, Limit::None, |_| notes(N::NotificationRequests)))],
    ),
    path(
        "/api/v1/notifications/policy",
        &[
            ("GET", user(READ, Read, Limit::None, |_| notes(N::V1NotificationPolicy(false)))),
            ("PUT", user(WRITE, Write, Limit::None, |_| notes(N::V1NotificationPolicy(true)))),
        ],
    ),
    path(
        "/api/v1/notifications/requests/merged",
        &[("GET", user(READ, Read, Limit::None, |_| notes(N::RequestsMerged)))],
    ),
    path(
        "/api/v1/notifications/requests/accept",
        &[("POST", user(WRITE, Write, Limit::None, |_| notes(N::AnswerRequests(true))))],
    ),
    path(
        "/api/v1/notifications/requests/dismiss",
        &[("POST", user(WRITE, Write, Limit::None, |_| notes(N::AnswerRequests(false))))],
    ),
    path(
        "/api/v1/notifications/requests/{id}",
        &[("GET", user(READ, Read, Limit::None, |id| notes(N::NotificationRequest(UserId::parse(id)?))))],
    ),
    path(
        "/api/v1/notifications/requests/{id}/accept",
        &[("POST", user(WRITE, Write, Limit::None, |id| request(id, true)))],
    ),
    path(
        "/api/v1/notifications/requests/{id}/dismiss",
        &[("POST", user(WRITE, Write, Limit::None, |id| request(id, false)))],
    ),
    path(
        "/api/v1/notifications/{id}",
        &[("GET", user(READ, Read, Limit::None, |id| notes(N::Notification(NotificationId::parse(id)?))))],
    ),
    path(
        "/api/v1/notifications/{id}/dismiss",
        &[(
            "POST",
            user(WRITE, Write, Limit::None, |id| notes(N::DismissNotification(NotificationId::parse(id)?))),
        )],
    ),
    path(
        "/api/v2/notifications",
        &[("GET", user(READ, Read, Limit::None, |_| notes(N::GroupedNotifications)))],
    ),
    // masto.js updates the policy with PUT, Mastodon documents PATCH: both.
    path(
        "/api/v2/notifications/policy",
        &[
            ("GET", user(READ, Read, Limit::None, |_| notes(N::NotificationPolicy))),
            ("PUT", user(WRITE, Write, Limit::None, |_| notes(N::SetNotificationPolicy))),
            ("PATCH", user(WRITE, Write, Limit::None, |_| notes(N::SetNotificationPolicy))),
        ],
    ),
    path(
        "/api/v2/notifications/unread_count",
        &[("GET", user(READ, Read, Limit::None, |_| notes(N::GroupedUnreadCount)))],
    ),
    path(
        "/api/v2/notifications/{group_key}",
        &[("GET", user(READ, Read, Limit::None, |key| group(key, N::NotificationGroup)))],
    ),
    path(
        "/api/v2/notifications/{group_key}/dismiss",
        &[("POST", user(WRITE, Write, Limit::None, |key| group(key, N::DismissGroup)))],
    ),
    path(
        "/api/v2/notifications/{group_key}/accounts",
        &[("GET", user(READ, Read, Limit::None, |key| group(key, N::GroupAccounts)))],
    ),
    path(
        "/api/v1/markers",
        &[
            ("GET", user(READ, Read, Limit::None, |_| notes(N::Markers))),
            ("POST", user(WRITE, Write, Limit::None, |_| notes(N::SetMarkers))),
        ],
    ),
    // The streaming socket and events: authenticated by the token in the query, a header or the
    // subprotocol, checked by the handshake itself (`http/mastodon/streaming.rs`).
    path("/api/v1/streaming", &[("GET", public(Limit::None, |_| mastodon_public(MP::Streaming)))]),
    path(
        "/api/v1/streaming/health",
        &[("GET", public(Limit::None, |_| mastodon_public(MP::StreamingHealth)))],
    ),
    path(
        "/api/v1/streaming/user",
        &[(
            "GET",
            public(Limit::None, |_| mastodon_public(MP::StreamingEvents { notifications_only: false })),
        )],
    ),
    path(
        "/api/v1/streaming/user/notification",
        &[(
            "GET",
            public(Limit::None, |_| mastodon_public(MP::StreamingEvents { notifications_only: true })),
        )],
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

/// The endpoint a request calls: `404` for a path no row has (or whose parameter does not
/// parse), `405` with `Allow` for a method its row does not have.
pub fn route(method: &str, path: &str) -> Result<Call, ApiError> {
    // HEAD is routed like GET; `http::handle` drops the body.
    let method = if method == "HEAD" { "GET" } else { method };
    let path = path.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(path);
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let Some((row, param)) = ROUTES.iter().find_map(|row| Some((row, row.matches(&segments)?))) else {
        return Err(ApiError::NotFound("no such route"));
    };
    for (allowed, endpoint) in row.methods {
        // A parameter that does not parse names nothing that exists: 404, like a missing id.
        let call = endpoint.bind(param).ok_or(ApiError::NotFound("no such resource"))?;
        if *allowed == method {
            return Ok(call);
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

    /// The route a request resolves to, without its guard.
    fn resolve(method: &str, path: &str) -> Option<Route> {
        route(method, path).ok().map(Call::route)
    }

    use Route::{Admin, Public, User};

    /// Every endpoint and what it needs, one line each in table order:
    /// `METHOD PATTERN AUTH ACCESS LIMIT`. AUTH is `public`, `admin`, or the scope a scoped user
    /// token needs; ACCESS is a user endpoint's `read` (its revocation check beside it) or
    /// `write` (the check first, then the limit); LIMIT is its rate-limit class or `-`. Written
    /// out by hand on purpose: a new endpoint, or a changed scope, access or limit, is a change
    /// here that a review sees.
    const EXPECTED: &str = "
        GET    /v1/health                                 public       -     -
        GET    /v1/users                                  read         read  -
        POST   /v1/users                                  public       -     register
        GET    /v1/me                                     read         read  -
        POST   /v1/me/logout                              write        write -
        GET    /v1/users/{id}                             read         read  -
        GET    /v1/users/{id}/followers                   read         read  -
        GET    /v1/users/{id}/following                   read         read  -
        GET    /v1/users/{id}/posts                       read         read  -
        PUT    /v1/me/following/{id}                      follow       write graph
        DELETE /v1/me/following/{id}                      follow       write graph
        PUT    /v1/me/blocks/{id}                         follow       write graph
        DELETE /v1/me/blocks/{id}                         follow       write graph
        GET    /v1/me/mutes                               read         read  -
        PUT    /v1/me/mutes/{id}                          follow       write graph
        DELETE /v1/me/mutes/{id}                          follow       write graph
        POST   /v1/posts                                  write        write posts
        GET    /v1/posts/{id}                             read         read  -
        PATCH  /v1/posts/{id}                             write        write posts
        DELETE /v1/posts/{id}                             write        write posts
        PUT    /v1/posts/{id}/like                        write        write likes
        DELETE /v1/posts/{id}/like                        write        write likes
        GET    /v1/posts/{id}/likes                       read         read  -
        PUT    /v1/posts/{id}/repost                      write        write posts
        DELETE /v1/posts/{id}/repost                      write        write posts
        GET    /v1/posts/{id}/reposts                     read         read  -
        PUT    /v1/posts/{id}/bookmark                    write        write likes
        DELETE /v1/posts/{id}/bookmark                    write        write likes
        GET    /v1/me/bookmarks                           read         read  -
        GET    /v1/me/likes                               read         read  -
        GET    /v1/posts/{id}/comments                    read         read  -
        POST   /v1/posts/{id}/comments                    write        write comments
        DELETE /v1/comments/{id}                          write        write comments
        POST   /v1/media                                  write        write posts
        GET    /v1/media/{id}                             read         read  -
        PUT    /v1/media/{id}                             write        write posts
        GET    /media/{file}                              public       -     -
        POST   /v1/comments/{id}/like                     write        write likes
        PUT    /v1/comments/{id}/like                     write        write likes
        DELETE /v1/comments/{id}/like                     write        write likes
        GET    /v1/notifications                          read         read  -
        DELETE /v1/notifications                          write        write -
        GET    /v1/notifications/unread                   read         read  -
        PUT    /v1/notifications/marker                   write        write -
        DELETE /v1/notifications/{id}                     write        write -
        GET    /v1/feed                                   read         read  -
        GET    /v1/feed/live                              public       -     -
        POST   /v1/feed/live/ticket                       read         write -
        POST   /v1/admin/import/posts                     admin        -     -
        POST   /v1/admin/import/comments                  admin        -     -
        GET    /v1/admin/stats                            admin        -     -
        POST   /v1/admin/reconcile                        admin        -     -
        POST   /v1/admin/users/{id}/suspend               admin        -     -
        POST   /v1/admin/users/{id}/reinstate             admin        -     -
        POST   /v1/admin/posts/{id}/takedown              admin        -     -
        POST   /v1/admin/posts/{id}/restore               admin        -     -
        GET    /v1/admin/audit                            admin        -     -
        GET    /v1/admin/reports                          admin        -     -
        POST   /v1/admin/shards/{id}/freeze               admin        -     -
        POST   /v1/admin/shards/{id}/unfreeze             admin        -     -
        POST   /v1/admin/shards/{id}/copy                 admin        -     -
        POST   /v1/admin/shards/{id}/verify               admin        -     -
        POST   /v1/admin/shards/{id}/purge                admin        -     -
        POST   /v1/admin/test/{hook}                      admin        -     -
        POST   /api/v1/apps                               public       -     register
        GET    /api/v1/apps/verify_credentials            public       -     -
        POST   /api/v1/accounts                           public       -     register
        POST   /api/v1/emails/confirmations               write        read  -
        GET    /api/v1/instance                           public       -     -
        GET    /api/v2/instance                           public       -     -
        GET    /api/v1/instance/peers                     public       -     -
        GET    /api/v1/instance/activity                  public       -     -
        GET    /api/v1/instance/languages                 public       -     -
        GET    /api/v1/instance/translation_languages     public       -     -
        GET    /api/v1/instance/extended_description      public       -     -
        GET    /api/v1/instance/rules                     public       -     -
        GET    /oauth/authorize                           public       -     -
        POST   /oauth/authorize                           public       -     register
        POST   /oauth/token                               public       -     register
        POST   /oauth/revoke                              public       -     -
        GET    /api/v1/custom_emojis                      public       -     -
        GET    /.well-known/nodeinfo                      public       -     -
        GET    /nodeinfo/2.0                              public       -     -
        GET    /.well-known/host-meta                     public       -     -
        GET    /.well-known/webfinger                     public       -     -
        GET    /.well-known/oauth-authorization-server    public       -     -
        GET    /api/v1/follow_requests                    read         read  -
        GET    /api/v1/follow_requests/{id}               read         read  -
        POST   /api/v1/follow_requests/{id}/authorize     follow       write graph
        POST   /api/v1/follow_requests/{id}/reject        follow       write graph
        GET    /api/v1/preferences                        read         read  -
        GET    /api/v1/filters                            read         read  -
        POST   /api/v1/filters                            write        write graph
        GET    /api/v1/filters/{id}                       read         read  -
        PUT    /api/v1/filters/{id}                       write        write graph
        DELETE /api/v1/filters/{id}                       write        write graph
        GET    /api/v2/filters                            read         read  -
        POST   /api/v2/filters                            write        write graph
        GET    /api/v2/filters/{id}                       read         read  -
        PUT    /api/v2/filters/{id}                       write        write graph
        DELETE /api/v2/filters/{id}                       write        write graph
        GET    /api/v2/filters/keywords/{id}              read         read  -
        PUT    /api/v2/filters/keywords/{id}              write        write graph
        DELETE /api/v2/filters/keywords/{id}              write        write graph
        GET    /api/v2/filters/statuses/{id}              read         read  -
        DELETE /api/v2/filters/statuses/{id}              write        write graph
        GET    /api/v2/filters/{id}/keywords              read         read  -
        POST   /api/v2/filters/{id}/keywords              write        write graph
        GET    /api/v2/filters/{id}/statuses              read         read  -
        POST   /api/v2/filters/{id}/statuses              write        write graph
        GET    /api/v1/announcements                      read         read  -
        GET    /api/v1/push/subscription                  push         read  -
        POST   /api/v1/push/subscription                  push         write -
        PUT    /api/v1/push/subscription                  push         write -
        DELETE /api/v1/push/subscription                  push         write -
        GET    /api/v1/admin/accounts                     admin:read   read  -
        GET    /api/v2/admin/accounts                     admin:read   read  -
        GET    /api/v1/admin/reports                      admin:read   read  -
        GET    /api/v1/accounts/verify_credentials        read|profile read  -
        PATCH  /api/v1/accounts/update_credentials        write        write posts
        DELETE /api/v1/profile/avatar                     write        write posts
        DELETE /api/v1/profile/header                     write        write posts
        GET    /api/v1/accounts/lookup                    read         read  -
        GET    /api/v1/accounts/search                    read         read  -
        GET    /api/v1/accounts/familiar_followers        read         read  -
        GET    /api/v1/accounts/relationships             read         read  -
        GET    /api/v1/accounts/{id}                      read         read  -
        GET    /api/v1/accounts/{id}/statuses             read         read  -
        GET    /api/v1/accounts/{id}/followers            read         read  -
        GET    /api/v1/accounts/{id}/following            read         read  -
        GET    /api/v1/accounts/{id}/lists                read         read  -
        GET    /api/v1/accounts/{id}/identity_proofs      read         read  -
        GET    /api/v1/accounts/{id}/endorsements         read         read  -
        POST   /api/v1/accounts/{id}/note                 write        write graph
        POST   /api/v1/accounts/{id}/endorse              write        write graph
        POST   /api/v1/accounts/{id}/unendorse            write        write graph
        POST   /api/v1/accounts/{id}/pin                  write        write graph
        POST   /api/v1/accounts/{id}/unpin                write        write graph
        GET    /api/v1/endorsements                       read         read  -
        POST   /api/v1/reports                            write        write comments
        GET    /api/v1/domain_blocks                      read         read  -
        POST   /api/v1/domain_blocks                      follow       write graph
        DELETE /api/v1/domain_blocks                      follow       write graph
        POST   /api/v1/accounts/{id}/follow               follow       write graph
        POST   /api/v1/accounts/{id}/unfollow             follow       write graph
        POST   /api/v1/accounts/{id}/block                follow       write graph
        POST   /api/v1/accounts/{id}/unblock              follow       write graph
        POST   /api/v1/accounts/{id}/mute                 follow       write graph
        POST   /api/v1/accounts/{id}/unmute               follow       write graph
        POST   /api/v1/accounts/{id}/remove_from_followers follow       write graph
        GET    /api/v1/mutes                              read         read  -
        GET    /api/v1/blocks                             read         read  -
        POST   /api/v1/statuses                           write        write posts
        POST   /api/v1/media                              write        write posts
        POST   /api/v2/media                              write        write posts
        GET    /api/v1/media/{id}                         read         read  -
        PUT    /api/v1/media/{id}                         write        write posts
        GET    /api/v1/statuses/{id}                      read         read  -
        PUT    /api/v1/statuses/{id}                      write        write posts
        DELETE /api/v1/statuses/{id}                      write        write posts
        POST   /api/v1/statuses/{id}/favourite            write        write likes
        POST   /api/v1/statuses/{id}/unfavourite          write        write likes
        GET    /api/v1/statuses/{id}/favourited_by        read         read  -
        POST   /api/v1/statuses/{id}/reblog               write        write posts
        POST   /api/v1/statuses/{id}/unreblog             write        write posts
        GET    /api/v1/statuses/{id}/reblogged_by         read         read  -
        GET    /api/v1/statuses/{id}/quotes               read         read  -
        GET    /api/v1/statuses/{id}/context              read         read  -
        POST   /api/v1/statuses/{id}/bookmark             write        write likes
        POST   /api/v1/statuses/{id}/unbookmark           write        write likes
        GET    /api/v1/statuses/{id}/history              read         read  -
        GET    /api/v1/statuses/{id}/source               read         read  -
        POST   /api/v1/statuses/{id}/mute                 write        write likes
        POST   /api/v1/statuses/{id}/unmute               write        write likes
        POST   /api/v1/statuses/{id}/pin                  write        write posts
        POST   /api/v1/statuses/{id}/unpin                write        write posts
        GET    /api/v1/polls/{id}                         read         read  -
        POST   /api/v1/polls/{id}/votes                   write        write likes
        GET    /api/v1/scheduled_statuses                 read         read  -
        GET    /api/v1/scheduled_statuses/{id}            read         read  -
        PUT    /api/v1/scheduled_statuses/{id}            write        write posts
        DELETE /api/v1/scheduled_statuses/{id}            write        write posts
        GET    /api/v1/bookmarks                          read         read  -
        GET    /api/v1/conversations                      read         read  -
        DELETE /api/v1/conversations/{id}                 write        write -
        POST   /api/v1/conversations/{id}/read            write        write -
        POST   /api/v1/conversations/{id}/unread          write        write -
        GET    /api/v1/favourites                         read         read  -
        GET    /api/v1/timelines/home                     read         read  -
        GET    /api/v1/timelines/public                   read         read  -
        GET    /api/v1/timelines/tag/{tag}                read         read  -
        GET    /api/v1/tags/{tag}                         read         read  -
        POST   /api/v1/tags/{tag}/follow                  follow       write graph
        POST   /api/v1/tags/{tag}/unfollow                follow       write graph
        POST   /api/v1/tags/{tag}/feature                 write        write graph
        POST   /api/v1/tags/{tag}/unfeature               write        write graph
        GET    /api/v1/followed_tags                      read         read  -
        GET    /api/v1/trends                             read         read  -
        GET    /api/v1/trends/tags                        read         read  -
        GET    /api/v1/trends/statuses                    read         read  -
        GET    /api/v1/trends/links                       read         read  -
        GET    /api/v1/suggestions                        read         read  -
        GET    /api/v2/suggestions                        read         read  -
        GET    /api/v1/directory                          read         read  -
        GET    /api/v1/featured_tags                      read         read  -
        POST   /api/v1/featured_tags                      write        write graph
        GET    /api/v1/featured_tags/suggestions          read         read  -
        DELETE /api/v1/featured_tags/{id}                 write        write graph
        GET    /api/v1/accounts/{id}/featured_tags        read         read  -
        GET    /api/v1/timelines/list/{id}                read         read  -
        GET    /api/v1/lists                              read         read  -
        POST   /api/v1/lists                              write        write graph
        GET    /api/v1/lists/{id}                         read         read  -
        PUT    /api/v1/lists/{id}                         write        write graph
        DELETE /api/v1/lists/{id}                         write        write graph
        GET    /api/v1/lists/{id}/accounts                read         read  -
        POST   /api/v1/lists/{id}/accounts                write        write graph
        DELETE /api/v1/lists/{id}/accounts                write        write graph
        GET    /api/v2/search                             read         read  -
        GET    /api/v1/notifications                      read         read  -
        POST   /api/v1/notifications/clear                write        write -
        POST   /api/v1/notifications/dismiss              write        write -
        GET    /api/v1/notifications/unread_count         read         read  -
        GET    /api/v1/notifications/requests             read         read  -
        GET    /api/v1/notifications/policy               read         read  -
        PUT    /api/v1/notifications/policy               write        write -
        GET    /api/v1/notifications/requests/merged      read         read  -
        POST   /api/v1/notifications/requests/accept      write        write -
        POST   /api/v1/notifications/requests/dismiss     write        write -
        GET    /api/v1/notifications/requests/{id}        read         read  -
        POST   /api/v1/notifications/requests/{id}/accept write        write -
        POST   /api/v1/notifications/requests/{id}/dismiss write       write -
        GET    /api/v1/notifications/{id}                 read         read  -
        POST   /api/v1/notifications/{id}/dismiss         write        write -
        GET    /api/v2/notifications                      read         read  -
        GET    /api/v2/notifications/policy               read         read  -
        PUT    /api/v2/notifications/policy               write        write -
        PATCH  /api/v2/notifications/policy               write        write -
        GET    /api/v2/notifications/unread_count         read         read  -
        GET    /api/v2/notifications/{group_key}          read         read  -
        POST   /api/v2/notifications/{group_key}/dismiss  write        write -
        GET    /api/v2/notifications/{group_key}/accounts read         read  -
        GET    /api/v1/markers                            read         read  -
        POST   /api/v1/markers                            write        write -
        GET    /api/v1/streaming                          public       -     -
        GET    /api/v1/streaming/health                   public       -     -
        GET    /api/v1/streaming/user                     public       -     -
        GET    /api/v1/streaming/user/notification        public       -     -
";

    fn describe(method: &str, pattern: &str, endpoint: &Endpoint) -> String {
        let class = |limit| match limit {
            Limit::Class(class) => format!("{class:?}").to_lowercase(),
            Limit::None => "-".into(),
        };
        let (auth, access, limit) = match *endpoint {
            Endpoint::Public { limit, .. } => ("public".into(), "-", class(limit)),
            Endpoint::Admin { .. } => ("admin".into(), "-", "-".into()),
            Endpoint::User { guard, .. } => {
                let scope = match guard.scope {
                    Scope::Needs(scopes) => scopes.to_string().replace(' ', "+"),
                    Scope::ReadOrProfile => "read|profile".into(),
                };
                let access = match guard.access {
                    Access::Read => "read",
                    Access::Write => "write",
                };
                (scope, access, class(guard.limit))
            }
        };
        format!("{method} {pattern} {auth} {access} {limit}")
    }

    #[test]
    fn every_endpoint_needs_the_scope_access_and_limit_expected() {
        let declared: Vec<String> = ROUTES
            .iter()
            .flat_map(|row| row.methods.iter().map(|(method, e)| describe(method, row.pattern, e)))
            .collect();
        let expected: Vec<String> = EXPECTED
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        for (declared, expected) in declared.iter().zip(&expected) {
            assert_eq!(declared, expected);
        }
        assert_eq!(declared.len(), expected.len(), "endpoints declared vs expected");
        // What `http::dispatch` receives for each is its row's declaration, HEAD as GET.
        assert_eq!(
            route("HEAD", "/v1/feed").ok(),
            Some(Call::User {
                route: U::Feed,
                guard: Guard { scope: READ, access: Read, limit: Limit::None }
            })
        );
        let graph = Guard { scope: FOLLOW, access: Write, limit: Class(L::Graph) };
        assert_eq!(
            route("PUT", "/v1/me/following/12").ok(),
            Some(Call::User { route: U::Follow(uid(12)), guard: graph })
        );
        let register = Call::Public { route: P::Register, limit: Class(L::Register) };
        assert_eq!(route("POST", "/v1/users").ok(), Some(register));
    }

    /// What a forgotten or wrong declaration does. Forgotten: nothing in a row has a default or
    /// a fallback. `user(..)` takes the scope, the access and the limit by position (no
    /// `Default`, distinct types), so a row that leaves one out does not compile (`E0061: this
    /// function takes 4 arguments but 3 arguments were supplied`), and a route without its
    /// handler does not either: `http::dispatch`, `mastodon::user` and their sub-matches have no
    /// `_ =>` arm (`E0004: non-exhaustive patterns`). A path or method without a row names
    /// nothing: 404 or 405, never another endpoint. Wrong: what still compiles is a wrong value,
    /// and the one that used to fail open (a write missing from the old negative read list got
    /// `read` scope, no limit, and its revocation check beside it instead of before) is refused
    /// here: every endpoint that is not a GET must be a write, limited, needing more than `read`,
    /// unless it is listed below with its reason. So a new write fails closed until someone
    /// says otherwise on purpose.
    #[test]
    fn a_write_is_never_taken_for_a_read_unless_listed() {
        let reads = ["POST /api/v1/emails/confirmations"];
        // Writes to the caller's own rows that a flood cannot grow: logout, the notifications'
        // clear, dismiss and markers, conversations' read state and removal, a live ticket (signed, stores nothing); and the OAuth
        // revocation (authenticated by the client's secret, only ends a token).
        let unlimited = [
            "POST /v1/me/logout",
            "DELETE /v1/notifications",
            "PUT /v1/notifications/marker",
            "DELETE /v1/notifications/{id}",
            "POST /v1/feed/live/ticket",
            "POST /oauth/revoke",
            "POST /api/v1/notifications/clear",
            "POST /api/v1/notifications/dismiss",
            "POST /api/v1/notifications/{id}/dismiss",
            "POST /api/v2/notifications/{group_key}/dismiss",
            "POST /api/v1/markers",
            // The notification policy and its requests: the caller's own rows.
            "PUT /api/v2/notifications/policy",
            "PUT /api/v1/notifications/policy",
            "PATCH /api/v2/notifications/policy",
            "POST /api/v1/notifications/requests/accept",
            "POST /api/v1/notifications/requests/dismiss",
            "POST /api/v1/notifications/requests/{id}/accept",
            "POST /api/v1/notifications/requests/{id}/dismiss",
            // A conversation's read state and removal: the caller's own rows, changed in place.
            "DELETE /api/v1/conversations/{id}",
            "POST /api/v1/conversations/{id}/read",
            "POST /api/v1/conversations/{id}/unread",
            // The token's one push subscription: replaced or changed in place, never more rows.
            "POST /api/v1/push/subscription",
            "PUT /api/v1/push/subscription",
            "DELETE /api/v1/push/subscription",
        ];
        let unlimited = [&unlimited[..], &reads].concat();
        // A ticket only opens the read-only live socket.
        let read_scope = ["POST /v1/feed/live/ticket"];
        for row in ROUTES {
            for (method, endpoint) in row.methods.iter().filter(|(method, _)| *method != "GET") {
                let name = format!("{method} {}", row.pattern);
                let limited = match endpoint {
                    Endpoint::User { guard, .. } => {
                        assert_eq!(guard.access == Write, !reads.contains(&name.as_str()), "{name}");
                        let needs_read_only = guard.scope.allows(Scopes::READ);
                        assert_eq!(needs_read_only, read_scope.contains(&name.as_str()), "{name}");
                        guard.limit != Limit::None
                    }
                    Endpoint::Public { limit, .. } => *limit != Limit::None,
                    Endpoint::Admin { .. } => continue,
                };
                assert_eq!(limited, !unlimited.contains(&name.as_str()), "{name}");
            }
        }
    }

    /// Each class is some endpoint's limit (`bindings_match_wrangler_toml` checks its binding).
    #[test]
    fn every_limit_class_limits_some_endpoint() {
        let limit_of = |endpoint: &Endpoint| match *endpoint {
            Endpoint::Public { limit, .. } | Endpoint::User { guard: Guard { limit, .. }, .. } => limit,
            Endpoint::Admin { .. } => Limit::None,
        };
        for class in LimitClass::ALL {
            let used = ROUTES.iter().flat_map(|row| row.methods).any(|(_, e)| limit_of(e) == Class(class));
            assert!(used, "{class:?}");
        }
    }

    #[test]
    fn scopes_allow_what_they_name_and_verify_credentials_also_profile() {
        let all = [Scopes::READ, Scopes::WRITE, Scopes::FOLLOW, Scopes::PUSH, Scopes::PROFILE];
        for granted in all {
            assert_eq!(READ.allows(granted), granted == Scopes::READ, "{granted}");
            assert_eq!(FOLLOW.allows(granted), granted == Scopes::FOLLOW, "{granted}");
            let own = granted == Scopes::READ || granted == Scopes::PROFILE;
            assert_eq!(Scope::ReadOrProfile.allows(granted), own, "{granted}");
        }
        assert!(WRITE.allows(Scopes::ALL));
        assert_eq!(Scope::ReadOrProfile.needed(), Scopes::READ);
        assert_eq!(PUSH.needed(), Scopes::PUSH);
    }

    #[test]
    fn routes_resolve() {
        assert_eq!(resolve("GET", "/v1/health"), Some(Public(P::Health)));
        assert_eq!(resolve("GET", "/v1/health/"), Some(Public(P::Health)));
        assert_eq!(resolve("PUT", "/v1/me/following/12"), Some(User(U::Follow(uid(12)))));
        assert_eq!(resolve("DELETE", "/v1/me/following/12"), Some(User(U::Unfollow(uid(12)))));
        assert_eq!(resolve("PATCH", "/v1/posts/9"), Some(User(U::EditPost(pid(9)))));
        assert_eq!(resolve("GET", "/v1/posts/9/comments"), Some(User(U::ListComments(pid(9)))));
        assert_eq!(resolve("POST", "/v1/posts/9/comments"), Some(User(U::CreateComment(pid(9)))));
        let comment = CommentId::from_trusted(7);
        assert_eq!(resolve("POST", "/v1/comments/7/like"), Some(User(U::LikeComment(comment, true))));
        assert_eq!(resolve("DELETE", "/v1/comments/7/like"), Some(User(U::LikeComment(comment, false))));
        assert_eq!(resolve("GET", "/v1/users/3/posts"), Some(User(U::AuthorPosts(uid(3)))));
        assert_eq!(resolve("GET", "/v1/admin/stats"), Some(Admin(A::Stats)));
        assert_eq!(resolve("POST", "/v1/me/logout"), Some(User(U::Logout)));
        let copy = Admin(A::Shard(LogicalShard::new(255), ShardStep::Copy));
        assert_eq!(resolve("POST", "/v1/admin/shards/255/copy"), Some(copy));
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
            let param =
                [("{hook}", "fault"), ("{group_key}", "ungrouped-7"), ("{file}", file), ("{tag}", "Rust")]
                    .into_iter()
                    .find_map(|(name, example)| row.pattern.contains(name).then_some(example))
                    .unwrap_or("7");
            let path = ["{id}", "{hook}", "{group_key}", "{file}", "{tag}"]
                .iter()
                .fold(row.pattern.to_string(), |p, name| p.replace(name, param));
            for (method, endpoint) in row.methods {
                let built = endpoint.bind(if row.pattern.contains('{') { param } else { "" });
                assert!(built.is_some(), "{method} {}", row.pattern);
                assert_eq!(route(method, &path).ok(), built, "{method} {}", row.pattern);
                if *method == "GET" {
                    assert_eq!(route("HEAD", &path).ok(), built, "HEAD {}", row.pattern);
                }
                let same = row.methods.iter().filter(|(m, _)| m == method).count();
                assert_eq!(same, 1, "{method} {} listed twice", row.pattern);
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
            assert_eq!(resolve("POST", &format!("/v1/admin/test/{name}")), Some(Admin(A::Test(*hook))));
            assert_eq!(TestHook::ALL.iter().filter(|(_, h)| h == hook).count(), 1, "{name}");
        }
    }

    #[test]
    fn mastodon_literal_paths_win_over_ids() {
        assert_eq!(resolve("GET", "/api/v1/accounts/lookup"), Some(User(U::Mastodon(M::LookupAccount))));
        assert_eq!(resolve("GET", "/api/v1/accounts/42"), Some(User(U::Mastodon(M::Account(uid(42))))));
        assert_eq!(resolve("GET", "/api/v1/accounts/search"), Some(User(U::Mastodon(M::SearchAccounts))));
        assert_eq!(
            resolve("GET", "/api/v1/accounts/familiar_followers"),
            Some(User(U::Mastodon(M::FamiliarFollowers)))
        );
        assert_eq!(
            resolve("POST", "/api/v1/accounts/42/remove_from_followers"),
            Some(User(U::Mastodon(M::RemoveFromFollowers(uid(42)))))
        );
        assert_eq!(
            resolve("GET", "/api/v1/instance/peers"),
            Some(Route::Public(P::Mastodon(MP::InstancePart(IP::Peers))))
        );
        assert_eq!(route("GET", "/api/v1/accounts/nope").unwrap_err().status(), 404);
    }

    #[test]
    fn startup_and_discovery_routes_resolve_with_their_levels() {
        let public = |path| resolve("GET", path);
        assert_eq!(public("/api/v1/custom_emojis"), Some(Public(P::Mastodon(MP::CustomEmojis))));
        assert_eq!(public("/.well-known/nodeinfo"), Some(Public(P::Mastodon(MP::NodeInfoLinks))));
        assert_eq!(public("/nodeinfo/2.0"), Some(Public(P::Mastodon(MP::NodeInfo))));
        assert_eq!(public("/.well-known/host-meta"), Some(Public(P::Mastodon(MP::HostMeta))));
        assert_eq!(public("/.well-known/webfinger"), Some(Public(P::Mastodon(MP::WebFinger))));
        assert_eq!(public("/api/v2/filters"), Some(User(U::Mastodon(M::Filters(FR::List)))));
        assert_eq!(route("GET", "/nodeinfo/2.1").unwrap_err().status(), 404);
        assert_eq!(route("POST", "/api/v1/preferences").unwrap_err().status(), 405);
    }

    #[test]
    fn grouped_notification_literals_win_over_group_keys() {
        let m = |r| Some(User(U::Mastodon(M::Notifications(r))));
        assert_eq!(resolve("GET", "/api/v2/notifications/unread_count"), m(N::GroupedUnreadCount));
        assert_eq!(resolve("GET", "/api/v2/notifications/policy"), m(N::NotificationPolicy));
        let key = GroupKey::Grouped {
            kind: crate::domain::notifications::Kind::Favourite,
            post_id: 12,
            window: 39_000,
        };
        assert_eq!(resolve("GET", "/api/v2/notifications/favourite-12-39000"), m(N::NotificationGroup(key)));
        let follows =
            GroupKey::Grouped { kind: crate::domain::notifications::Kind::Follow, post_id: 0, window: 3 };
        assert_eq!(resolve("POST", "/api/v2/notifications/follow-3/dismiss"), m(N::DismissGroup(follows)));
        assert_eq!(route("GET", "/api/v2/notifications/favourite-x-1").unwrap_err().status(), 404);
        assert_eq!(route("GET", "/api/v2/notifications/42").unwrap_err().status(), 404);
    }

    #[test]
    fn list_routes_resolve() {
        let l = ListId::from_trusted(5);
        let m = |r| Some(User(U::Mastodon(M::Lists(r))));
        assert_eq!(resolve("GET", "/api/v1/lists"), m(LR::Lists));
        assert_eq!(resolve("PUT", "/api/v1/lists/5"), m(LR::UpdateList(l)));
        assert_eq!(resolve("DELETE", "/api/v1/lists/5/accounts"), m(LR::RemoveListAccounts(l)));
        assert_eq!(resolve("GET", "/api/v1/timelines/list/5"), m(LR::ListTimeline(l)));
        assert_eq!(resolve("GET", "/api/v1/accounts/3/lists"), m(LR::AccountLists(uid(3))));
        assert_eq!(route("GET", "/api/v1/timelines/list/nope").unwrap_err().status(), 404);
    }
}
