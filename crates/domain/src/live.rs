//! Live feed updates: the ticket a browser trades for a WebSocket, what each open socket
//! remembers about the credential behind it, and what a delivery announces.
//!
//! Browsers cannot set headers on a WebSocket, so the bearer token is traded first for a
//! ticket (`POST /v1/feed/live/ticket`): signed, valid for [`TICKET_TTL_SECS`], single use (the
//! reader's timeline object records the nonces it accepted), and carrying the token's `iat` and
//! `exp`, so the socket closes when that token expires or a logout revokes it.
//!
//! The socket only ever says *that* the feed has news and where to read it from; what the
//! reader may see is decided by the feed read, as for every other read.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::Mac;
use serde::{Deserialize, Serialize};

use super::cursor::SortKey;
use super::ids::{PostId, UserId};
use super::policy::FanoutMode;
use super::sign::hmac;
use super::token;
use super::window::Entry;

/// How long a ticket may wait before it is used: a page opens its socket right after asking.
pub const TICKET_TTL_SECS: i64 = 60;
/// How long a reader counts as live after their object last confirmed an open socket.
pub const LEASE_MS: i64 = 10 * 60 * 1000;
/// How often the object re-checks its sockets' credentials and renews the lease (well inside
/// [`LEASE_MS`], so a live reader's lease never lapses between two checks).
pub const REVIEW_MS: i64 = 4 * 60 * 1000;
/// How long a reader's live marks on their pulled edges last (migration 0050, on each author's
/// database): longer than the lease, because rewriting them costs a statement per author
/// database they follow, and a lapsed-but-unrenewed mark only costs a delivery an idle
/// object's call (the object has no socket left to tell).
pub const MARK_LEASE_MS: i64 = 20 * 60 * 1000;
/// How long a reader's lease on the control database (`live_readers`, which only an edit's
/// frames page now) lasts: an hour, so the one database every socket renews on takes a
/// write per socket per hour, not per review (100k open sockets renewing every review would
/// be 400 statements a second there, most of its share); a lease outliving its socket costs
/// an edit's frame one idle object's call.
pub const READER_LEASE_MS: i64 = 60 * 60 * 1000;
/// How late a review may run past [`REVIEW_MS`] before a lease it should have rewritten lapses.
const RENEW_SLACK_MS: i64 = 60 * 1000;

/// Until when to rewrite a lease of `lease_ms` at `now`, if it is due: never written (its end
/// unknown), or it would lapse before the review after this one could rewrite it. Rewriting
/// only then keeps a long session at one write per lease less the margin, and a reconnect
/// within it writes nothing.
pub fn lease_due(until: Option<i64>, now: i64, lease_ms: i64) -> Option<i64> {
    let fresh = until.is_some_and(|until| until - now >= REVIEW_MS + RENEW_SLACK_MS);
    (!fresh).then_some(now + lease_ms)
}

/// Which of a live reader's edges carry their marks, by the fan-out's mode: those a delivery
/// does not push (hybrid's pulled edges, every edge in pull mode), which is what its live
/// page looks for (`fanout_plan::live_page`); none in push mode, which has no live page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkedEdges {
    None,
    Pulled,
    All,
}

impl MarkedEdges {
    pub fn of(mode: FanoutMode) -> Self {
        match mode {
            FanoutMode::Push => MarkedEdges::None,
            FanoutMode::Hybrid => MarkedEdges::Pulled,
            FanoutMode::Pull => MarkedEdges::All,
        }
    }
}

/// Close code for a socket whose credential ended (expired, revoked, account suspended):
/// the 4000-4999 range is the application's; 4001 mirrors HTTP 401.
pub const CLOSE_UNAUTHORIZED: u16 = 4001;
/// The text a client sends to keep the connection warm; the runtime answers [`PONG`] without
/// waking the object (hibernation auto-response).
pub const PING: &str = "ping";
/// A logout mark that revokes every token (a suspension): far beyond any `iat`, and a safe
/// integer in JavaScript (it crosses into the object as a JSON number, which must be one).
pub const EVERY_TOKEN: i64 = (1 << 53) - 1;
pub const PONG: &str = "pong";

/// What a ticket grants, and what the socket keeps (as its hibernation attachment).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Session {
    #[serde(rename = "u")]
    pub user: UserId,
    /// The ticket's nonce: the object accepts each once.
    #[serde(rename = "n")]
    pub nonce: u64,
    /// When the ticket stops being accepted (unix seconds).
    #[serde(rename = "x")]
    pub ticket_expires_at: i64,
    /// The bearer token's `iat` (`None` if it had none) and `exp` (unix seconds).
    #[serde(rename = "i")]
    pub token_issued_at: Option<f64>,
    #[serde(rename = "e")]
    pub token_expires_at: f64,
    /// The token's id when it is an OAuth token (`POST /oauth/revoke` ends it alone).
    #[serde(rename = "j", default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<i64>,
}

impl Session {
    /// Whether the socket must close at `now_secs`: the token expired, or a logout revoked
    /// every token issued up to `valid_after`.
    pub fn ended(&self, now_secs: i64, valid_after: Option<i64>) -> bool {
        self.token_expires_at <= now_secs as f64 || token::revoked(self.token_issued_at, valid_after)
    }

    pub fn revoked_by(&self, revocation: Revocation) -> bool {
        match revocation {
            Revocation::IssuedUpTo(valid_after) => token::revoked(self.token_issued_at, Some(valid_after)),
            Revocation::Token(id) => self.token_id == Some(id),
        }
    }
}

/// A credential change that ends sockets at once: every token issued up to a second (a
/// logout; a suspension with [`EVERY_TOKEN`]), or one OAuth token by id (`POST /oauth/revoke`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Revocation {
    IssuedUpTo(i64),
    Token(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TicketError {
    Malformed,
    BadSignature,
    Expired,
}

impl TicketError {
    pub fn detail(self) -> &'static str {
        match self {
            TicketError::Malformed => "the ticket is malformed",
            TicketError::BadSignature => "the ticket signature does not verify",
            TicketError::Expired => "the ticket expired; ask for a new one",
        }
    }
}

/// Signs and verifies tickets with a key of their own, so a ticket can never pass as a token
/// or a cursor (and back).
pub struct TicketCodec {
    key: Vec<u8>,
}

impl TicketCodec {
    pub fn new(secret: &[u8]) -> Self {
        let mut mac = hmac(secret);
        mac.update(b"edgefeed/live-ticket-key/v1");
        Self { key: mac.finalize().into_bytes().to_vec() }
    }

    pub fn issue(&self, session: &Session) -> String {
        let body = B64.encode(serde_json::to_vec(session).unwrap_or_default());
        let mut mac = hmac(&self.key);
        mac.update(body.as_bytes());
        format!("{body}.{}", B64.encode(mac.finalize().into_bytes()))
    }

    pub fn verify(&self, ticket: &str, now_secs: i64) -> Result<Session, TicketError> {
        let (body, tag) = ticket.split_once('.').ok_or(TicketError::Malformed)?;
        let tag = B64.decode(tag).map_err(|_| TicketError::Malformed)?;
        let mut mac = hmac(&self.key);
        mac.update(body.as_bytes());
        mac.verify_slice(&tag).map_err(|_| TicketError::BadSignature)?;
        let raw = B64.decode(body).map_err(|_| TicketError::Malformed)?;
        let session: Session = serde_json::from_slice(&raw).map_err(|_| TicketError::Malformed)?;
        if session.ticket_expires_at <= now_secs {
            return Err(TicketError::Expired);
        }
        Ok(session)
    }
}

/// What a delivery tells the reader's open sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announcement {
    /// Delivered posts newer than everything the window held before.
    pub count: usize,
    /// Just below them: the newest key the window held before (`?after=` it returns them).
    pub since: SortKey,
}

/// The announcement for `delivered` entries arriving at a window whose newest key was `top`
/// (`None`: empty). Only posts above the old top are news: a redelivery is already there, and
/// an older post (a backfill, an import) lands below what the reader has already scrolled past.
pub fn announcement(delivered: &[Entry], top: Option<SortKey>) -> Option<Announcement> {
    let news = news_posts(delivered, top);
    (!news.is_empty()).then_some(Announcement { count: news.len(), since: top.unwrap_or(SortKey::BOTTOM) })
}

/// The message sent on the socket (`newest_cursor` is a signed feed cursor for `since`).
#[derive(Debug, Serialize)]
pub struct NewPosts<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub count: usize,
    pub newest_cursor: &'a str,
}

impl<'a> NewPosts<'a> {
    pub fn new(count: usize, newest_cursor: &'a str) -> Self {
        Self { kind: "new_posts", count, newest_cursor }
    }
}

/// The delivered posts that are news (above the old top), once each; see [`announcement`].
pub fn news_posts(delivered: &[Entry], top: Option<SortKey>) -> Vec<PostId> {
    let since = top.unwrap_or(SortKey::BOTTOM);
    let mut news: Vec<_> = delivered.iter().filter(|e| e.key() > since).map(|e| e.post_id).collect();
    news.sort_unstable();
    news.dedup();
    news
}

/// The Mastodon streams a socket can carry: `user` (home timeline updates, deletes and
/// notifications), `user:notification` (notifications only), `direct` (conversations), and the
/// public timeline's (`public`, `public:local`, each also `:media`; on one domain local is all).
/// `hashtag` and `hashtag:local` take a tag: [`Subscription::Hashtag`]. `list` is not built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    User,
    UserNotification,
    Direct,
    Public,
    PublicLocal,
    PublicMedia,
    PublicLocalMedia,
}

const STREAMS: [Stream; 7] = [
    Stream::User,
    Stream::UserNotification,
    Stream::Direct,
    Stream::Public,
    Stream::PublicLocal,
    Stream::PublicMedia,
    Stream::PublicLocalMedia,
];

impl Stream {
    pub fn parse(name: &str) -> Option<Stream> {
        STREAMS.into_iter().find(|s| s.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Stream::User => "user",
            Stream::UserNotification => "user:notification",
            Stream::Direct => "direct",
            Stream::Public => "public",
            Stream::PublicLocal => "public:local",
            Stream::PublicMedia => "public:media",
            Stream::PublicLocalMedia => "public:local:media",
        }
    }

    fn bit(self) -> u8 {
        1 << STREAMS.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// A public stream: whether it carries only posts with media.
    fn public_media(self) -> Option<bool> {
        match self {
            Stream::Public | Stream::PublicLocal => Some(false),
            Stream::PublicMedia | Stream::PublicLocalMedia => Some(true),
            _ => None,
        }
    }
}

/// What a client subscribes to: a stream by its name, or a tag's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscription {
    Fixed(Stream),
    /// `hashtag` (or `hashtag:local`, the same on one domain) with its tag as the client wrote it.
    Hashtag {
        name: String,
        local: bool,
    },
}

/// Why a subscription is refused (Mastodon's error frames).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscribeError {
    Unknown(String),
    /// `hashtag` without a valid tag.
    NoTag,
}

impl SubscribeError {
    /// The error frame (or the `400` detail) Mastodon answers.
    pub fn message(&self) -> &'static str {
        match self {
            SubscribeError::Unknown(_) => "Unknown stream type",
            SubscribeError::NoTag => "No tag for stream provided",
        }
    }
}

impl Subscription {
    pub fn parse(stream: &str, tag: Option<&str>) -> Result<Subscription, SubscribeError> {
        if let Some(found) = Stream::parse(stream) {
            return Ok(Subscription::Fixed(found));
        }
        let local = match stream {
            "hashtag" => false,
            "hashtag:local" => true,
            _ => return Err(SubscribeError::Unknown(stream.to_string())),
        };
        let name = tag.and_then(super::tags::parse_name).ok_or(SubscribeError::NoTag)?;
        Ok(Subscription::Hashtag { name: name.to_string(), local })
    }
}

/// A tag subscription kept on a socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HashtagSub {
    #[serde(rename = "n")]
    pub name: String,
    #[serde(rename = "l")]
    pub local: bool,
}

/// The most tag streams one socket keeps (its attachment is capped at 2 KB).
pub const MAX_HASHTAG_STREAMS: usize = 10;

/// A post that joined, changed in or left the public or tag timelines, told to the window
/// object of a user listening to one of them by the key's stream relay, in a flush's list
/// (`services/streams.rs`, `domain/stream_relay.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineNews {
    pub post: PostId,
    pub event: Event,
    /// It is (was) in the public timeline.
    pub public: bool,
    pub media: bool,
    /// The tag keys (`domain::tags::key_of`) it is (was) under.
    pub tags: Vec<String>,
    /// It is in the reader's home timeline (an edit told to the author's live followers): the
    /// `user` stream carries it.
    #[serde(default)]
    pub home: bool,
}

/// What an event is, for which streams carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// A new status in the home timeline (`update`).
    Update,
    /// A status gone from it (`delete`).
    Delete,
    Notification,
    /// A conversation with a new direct post (`conversation`), on `direct` alone.
    Conversation,
    /// A status edited (`status.update`), on the public and tag streams.
    StatusUpdate,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Update => "update",
            Event::Delete => "delete",
            Event::Notification => "notification",
            Event::Conversation => "conversation",
            Event::StatusUpdate => "status.update",
        }
    }
}

/// A Mastodon streaming socket's state (kept in its attachment beside the [`Session`]; small:
/// attachments are capped at 2 KB). Never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MastodonStream {
    /// The subscribed streams, as bits of [`Stream`].
    #[serde(rename = "s")]
    pub streams: u8,
    /// The instance origin the client connected to, for the URLs in the entities sent.
    #[serde(rename = "o")]
    pub origin: String,
    /// The tag streams subscribed (`hashtag`, `hashtag:local`).
    #[serde(default, rename = "h", skip_serializing_if = "Vec::is_empty")]
    pub hashtags: Vec<HashtagSub>,
}

impl MastodonStream {
    pub fn new(origin: &str, first: Option<Subscription>) -> Self {
        let mut stream = Self { streams: 0, origin: origin.to_string(), hashtags: Vec::new() };
        if let Some(first) = first {
            stream.subscribe(&first, true);
        }
        stream
    }

    pub fn set(&mut self, stream: Stream, on: bool) {
        if on {
            self.streams |= stream.bit();
        } else {
            self.streams &= !stream.bit();
        }
    }

    /// Subscribes or unsubscribes; a socket keeps at most [`MAX_HASHTAG_STREAMS`] tags (the
    /// oldest goes).
    pub fn subscribe(&mut self, subscription: &Subscription, on: bool) {
        match subscription {
            Subscription::Fixed(stream) => self.set(*stream, on),
            Subscription::Hashtag { name, local } => {
                let key = super::tags::key_of(name);
                self.hashtags.retain(|h| !(super::tags::key_of(&h.name) == key && h.local == *local));
                if on {
                    if self.hashtags.len() >= MAX_HASHTAG_STREAMS {
                        self.hashtags.remove(0);
                    }
                    self.hashtags.push(HashtagSub { name: name.clone(), local: *local });
                }
            }
        }
    }

    /// The stream listener keys (`domain::tags::IndexKey`) this socket needs leases on: a public
    /// stream listens on every stripe (each stripe's relay reads only its own stripe's listeners).
    pub fn listen_keys(&self) -> Vec<super::tags::IndexKey> {
        let public = STREAMS.iter().any(|s| s.public_media().is_some() && self.streams & s.bit() != 0);
        let stripes = if public { super::tags::IndexKey::public_stripes() } else { Vec::new() };
        let mut keys: Vec<_> = stripes;
        for tag in &self.hashtags {
            let key = super::tags::IndexKey::tag(&tag.name);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys
    }

    /// The subscribed streams that carry `event`, as the frame's `stream` names them.
    pub fn carrying(&self, event: Event) -> Vec<&'static str> {
        let has = |s: Stream| self.streams & s.bit() != 0;
        let mut names = Vec::new();
        if event == Event::Conversation {
            if has(Stream::Direct) {
                names.push(Stream::Direct.name());
            }
            return names;
        }
        if has(Stream::User) {
            names.push(Stream::User.name());
        }
        if event == Event::Notification && has(Stream::UserNotification) {
            names.push(Stream::UserNotification.name());
        }
        names
    }

    /// The `stream` of each frame a timeline change goes out in on this socket: one per
    /// subscription it matches (Mastodon sends a multiplexed socket one frame per stream).
    pub fn carrying_news(&self, news: &TimelineNews) -> Vec<Vec<String>> {
        let mut frames = Vec::new();
        if news.home && self.streams & Stream::User.bit() != 0 {
            frames.push(vec![Stream::User.name().to_string()]);
        }
        for stream in STREAMS {
            let Some(media_only) = stream.public_media() else { continue };
            if self.streams & stream.bit() != 0 && news.public && (news.media || !media_only) {
                frames.push(vec![stream.name().to_string()]);
            }
        }
        for tag in &self.hashtags {
            if news.tags.contains(&super::tags::key_of(&tag.name)) {
                let name = if tag.local { "hashtag:local" } else { "hashtag" };
                frames.push(vec![name.to_string(), tag.name.clone()]);
            }
        }
        frames
    }
}

/// A message a Mastodon streaming client sends: `{"type": "subscribe", "stream": "user"}` (and
/// `"tag"` for a hashtag stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientMessage {
    Subscribe(Subscription),
    Unsubscribe(Subscription),
    /// A stream it may not have (unknown, or a hashtag without a tag): the error frame.
    Refused(SubscribeError),
    /// Not a message we understand: ignored, as Mastodon does.
    Junk,
}

impl ClientMessage {
    pub fn parse(text: &str) -> ClientMessage {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(rename = "type")]
            kind: String,
            stream: String,
            #[serde(default)]
            tag: Option<String>,
        }
        let Ok(raw) = serde_json::from_str::<Raw>(text) else { return ClientMessage::Junk };
        let subscription = Subscription::parse(&raw.stream, raw.tag.as_deref());
        match (raw.kind.as_str(), subscription) {
            ("subscribe", Ok(s)) => ClientMessage::Subscribe(s),
            ("unsubscribe", Ok(s)) => ClientMessage::Unsubscribe(s),
            ("subscribe" | "unsubscribe", Err(e)) => ClientMessage::Refused(e),
            _ => ClientMessage::Junk,
        }
    }
}

/// One event frame: `{"stream": [...], "event": "update", "payload": "<the JSON, as a string>"}`
/// (Mastodon sends the payload as a string: the entity's JSON, or a bare id for `delete`).
pub fn frame(streams: &[&str], event: Event, payload: &str) -> String {
    serde_json::json!({ "stream": streams, "event": event.name(), "payload": payload }).to_string()
}

/// A frame as a server-sent event (Mastodon's HTTP streaming, which Mastodon.py reads):
/// `event: update\ndata: <payload>\n\n`. `None` for what is no event (an error frame).
pub fn sse_event(frame: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(frame).ok()?;
    let event = value.get("event")?.as_str()?;
    let payload = value.get("payload")?.as_str()?;
    // A payload is compact JSON or an id, never multi-line; a line break would end the field.
    if payload.contains('\n') || event.contains('\n') {
        return None;
    }
    Some(format!("event: {event}\ndata: {payload}\n\n"))
}

/// The `/v1` socket's message for new notifications: only that there is news (the client
/// reads the unread count), as with posts.
pub const NEW_NOTIFICATIONS: &str = r#"{"type":"new_notifications"}"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: i64) -> UserId {
        UserId::parse(&id.to_string()).unwrap()
    }

    #[test]
    fn leases_are_rewritten_only_when_the_next_review_could_come_too_late() {
        let (now, lease) = (1_000_000, MARK_LEASE_MS);
        assert_eq!(lease_due(None, now, lease), Some(now + lease), "never written");
        assert_eq!(lease_due(Some(now - 1), now, lease), Some(now + lease), "lapsed");
        // Written a review ago: a whole lease less one review left, nothing to do.
        assert_eq!(lease_due(Some(now + lease - REVIEW_MS), now, lease), None);
        // Just enough left for the next review to run late by the slack: still fresh.
        assert_eq!(lease_due(Some(now + REVIEW_MS + RENEW_SLACK_MS), now, lease), None);
        // Any less and the next review might find it lapsed: rewrite now.
        let due = lease_due(Some(now + REVIEW_MS + RENEW_SLACK_MS - 1), now, lease);
        assert_eq!(due, Some(now + lease));
        // A session's writes come once per lease less the margin, not every review.
        let writes = |lease| {
            let (mut until, mut writes) = (None, 0);
            for review in 0..60 {
                if let Some(next) = lease_due(until, now + review * REVIEW_MS, lease) {
                    until = Some(next);
                    writes += 1;
                }
            }
            writes
        };
        assert_eq!(writes(MARK_LEASE_MS), 15, "4 hours of reviews every 4 minutes: every 16");
        assert_eq!(writes(READER_LEASE_MS), 5, "every 56 minutes");
    }

    #[test]
    fn marks_go_on_the_edges_a_delivery_does_not_push() {
        assert_eq!(MarkedEdges::of(FanoutMode::Push), MarkedEdges::None);
        assert_eq!(MarkedEdges::of(FanoutMode::Hybrid), MarkedEdges::Pulled);
        assert_eq!(MarkedEdges::of(FanoutMode::Pull), MarkedEdges::All);
    }

    fn session() -> Session {
        Session {
            user: user(7),
            nonce: 42,
            ticket_expires_at: 1_000,
            token_issued_at: Some(500.0),
            token_expires_at: 5_000.0,
            token_id: None,
        }
    }

    fn entry(created_at: i64, id: i64) -> Entry {
        Entry { created_at, post_id: PostId::parse(&id.to_string()).unwrap(), author_id: user(1), version: 0 }
    }

    #[test]
    fn a_ticket_round_trips_until_it_expires() {
        let codec = TicketCodec::new(b"secret");
        let ticket = codec.issue(&session());
        assert_eq!(codec.verify(&ticket, 999), Ok(session()));
        assert_eq!(codec.verify(&ticket, 1_000), Err(TicketError::Expired));
    }

    #[test]
    fn a_forged_or_foreign_ticket_is_refused() {
        let codec = TicketCodec::new(b"secret");
        let ticket = codec.issue(&session());
        assert_eq!(TicketCodec::new(b"other").verify(&ticket, 0), Err(TicketError::BadSignature));
        let (body, tag) = ticket.split_once('.').unwrap();
        let mut forged = session();
        forged.user = user(8);
        let forged_body = B64.encode(serde_json::to_vec(&forged).unwrap());
        assert_eq!(codec.verify(&format!("{forged_body}.{tag}"), 0), Err(TicketError::BadSignature));
        assert_eq!(codec.verify(body, 0), Err(TicketError::Malformed));
        assert_eq!(codec.verify("", 0), Err(TicketError::Malformed));
        assert_eq!(codec.verify("a.b.c", 0), Err(TicketError::Malformed));
    }

    #[test]
    fn a_session_ends_with_its_token() {
        let s = session();
        assert!(!s.ended(4_999, None));
        assert!(s.ended(5_000, None), "expired");
        assert!(s.ended(0, Some(500)), "a logout in the token's second revokes it");
        assert!(!s.ended(0, Some(499)), "a logout before the token was issued does not");
        let no_iat = Session { token_issued_at: None, ..s };
        assert!(no_iat.ended(0, Some(1)), "a token without iat is revoked by any logout");
        assert!(s.revoked_by(Revocation::IssuedUpTo(EVERY_TOKEN)), "a suspension ends every socket");
        assert!(!s.revoked_by(Revocation::IssuedUpTo(499)));
        let oauth = Session { token_id: Some(9), ..s };
        assert!(oauth.revoked_by(Revocation::Token(9)) && !oauth.revoked_by(Revocation::Token(8)));
        assert!(!s.revoked_by(Revocation::Token(9)), "a revocation by id spares other tokens");
    }

    #[test]
    fn only_posts_above_the_old_top_are_news() {
        let top = Some(SortKey::new(100, 5));
        let delivered = [entry(100, 5), entry(100, 6), entry(99, 9), entry(150, 1), entry(150, 1)];
        let a = announcement(&delivered, top).unwrap();
        assert_eq!(a, Announcement { count: 2, since: SortKey::new(100, 5) });
        assert_eq!(announcement(&[entry(100, 5), entry(50, 1)], top), None, "redelivery and old posts");
        let empty = announcement(&[entry(1, 1)], None).unwrap();
        assert_eq!((empty.count, empty.since), (1, SortKey::BOTTOM));
    }

    #[test]
    fn the_event_has_the_documented_shape() {
        let json = serde_json::to_value(NewPosts::new(3, "c")).unwrap();
        assert_eq!(json, serde_json::json!({"type": "new_posts", "count": 3, "newest_cursor": "c"}));
    }

    #[test]
    fn mastodon_client_messages_parse_and_streams_carry_their_events() {
        assert_eq!(
            ClientMessage::parse(r#"{"type":"subscribe","stream":"user"}"#),
            ClientMessage::Subscribe(Subscription::Fixed(Stream::User))
        );
        assert_eq!(
            ClientMessage::parse(r#"{"type":"unsubscribe","stream":"user:notification"}"#),
            ClientMessage::Unsubscribe(Subscription::Fixed(Stream::UserNotification))
        );
        assert_eq!(
            ClientMessage::parse(r#"{"type":"subscribe","stream":"list"}"#),
            ClientMessage::Refused(SubscribeError::Unknown("list".into()))
        );
        assert_eq!(ClientMessage::parse("ping"), ClientMessage::Junk);
        assert_eq!(ClientMessage::parse(r#"{"type":"hello","stream":"user"}"#), ClientMessage::Junk);
        let mut m = MastodonStream::new("http://e.x", Some(Subscription::Fixed(Stream::UserNotification)));
        assert!(m.carrying(Event::Update).is_empty());
        assert_eq!(m.carrying(Event::Notification), ["user:notification"]);
        m.set(Stream::User, true);
        assert_eq!(m.carrying(Event::Notification), ["user", "user:notification"]);
        assert_eq!(m.carrying(Event::Delete), ["user"]);
        assert!(m.carrying(Event::Conversation).is_empty(), "conversations go to direct alone");
        m.set(Stream::Direct, true);
        assert_eq!(m.carrying(Event::Conversation), ["direct"]);
        m.set(Stream::User, false);
        m.set(Stream::UserNotification, false);
        assert!(m.carrying(Event::Notification).is_empty());
        assert_eq!(
            ClientMessage::parse(r#"{"type":"subscribe","stream":"direct"}"#),
            ClientMessage::Subscribe(Subscription::Fixed(Stream::Direct))
        );
    }

    #[test]
    fn public_and_tag_streams_carry_timeline_news_one_frame_per_subscription() {
        let tag = |text: &str| {
            ClientMessage::parse(&format!(r#"{{"type":"subscribe","stream":"hashtag","tag":{text}}}"#))
        };
        assert_eq!(tag(r#""""#), ClientMessage::Refused(SubscribeError::NoTag));
        assert_eq!(tag(r#""two words""#), ClientMessage::Refused(SubscribeError::NoTag));
        let ClientMessage::Subscribe(rust) = tag(r#""Rust""#) else { panic!("a tag subscription") };
        let mut m = MastodonStream::new("http://e.x", Some(rust.clone()));
        m.subscribe(&rust, true);
        assert_eq!(m.hashtags.len(), 1, "one subscription per tag and locality");
        m.set(Stream::PublicLocal, true);
        m.set(Stream::PublicMedia, true);
        let news = |public, media, tags: &[&str]| TimelineNews {
            post: PostId::from_trusted(7),
            event: Event::Update,
            public,
            media,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            home: false,
        };
        assert_eq!(
            m.carrying_news(&news(true, false, &["rust"])),
            [vec!["public:local".to_string()], vec!["hashtag".to_string(), "Rust".to_string()]]
        );
        assert_eq!(m.carrying_news(&news(true, true, &[])).len(), 2, "public:local and public:media");
        assert!(m.carrying_news(&news(false, true, &["go"])).is_empty());
        let keys: Vec<String> = m.listen_keys().iter().map(|k| k.as_str().to_string()).collect();
        let mut expected: Vec<String> =
            (0..super::super::tags::PUBLIC_STRIPES).map(|s| format!("public:{s}")).collect();
        expected.push("tag:rust".to_string());
        assert_eq!(keys, expected, "a public stream listens on every stripe");
        m.subscribe(&rust, false);
        assert!(m.carrying_news(&news(false, false, &["rust"])).is_empty());
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<MastodonStream>(&json).unwrap(), m);
    }

    #[test]
    fn home_news_goes_to_the_user_stream_only() {
        let news = TimelineNews {
            post: PostId::from_trusted(7),
            event: Event::StatusUpdate,
            public: false,
            media: false,
            tags: Vec::new(),
            home: true,
        };
        let mut m = MastodonStream::new("http://e.x", Some(Subscription::Fixed(Stream::Public)));
        assert!(m.carrying_news(&news).is_empty(), "a public stream does not carry home news");
        m.set(Stream::User, true);
        assert_eq!(m.carrying_news(&news), [vec!["user".to_string()]]);
        m.set(Stream::User, false);
        m.set(Stream::UserNotification, true);
        assert!(m.carrying_news(&news).is_empty(), "user:notification carries notifications only");
        // News told before `home` existed still reads.
        let old = r#"{"post":7,"event":"StatusUpdate","public":true,"media":false,"tags":[]}"#;
        assert!(!serde_json::from_str::<TimelineNews>(old).map(|n| n.home).unwrap_or(true));
    }

    #[test]
    fn a_frame_carries_its_payload_as_a_string() {
        let f: serde_json::Value = serde_json::from_str(&frame(&["user"], Event::Delete, "42")).unwrap();
        assert_eq!(f, serde_json::json!({"stream": ["user"], "event": "delete", "payload": "42"}));
        let a = news_posts(&[entry(100, 5), entry(150, 1), entry(150, 1)], Some(SortKey::new(100, 5)));
        assert_eq!(a, vec![PostId::parse("1").unwrap()]);
    }

    #[test]
    fn frames_become_server_sent_events_and_other_messages_do_not() {
        let update = frame(&["user"], Event::Update, r#"{"id":"1"}"#);
        assert_eq!(sse_event(&update).as_deref(), Some("event: update\ndata: {\"id\":\"1\"}\n\n"));
        assert_eq!(sse_event(r#"{"error":"Unknown stream type","status":400}"#), None);
        assert_eq!(sse_event("junk"), None);
        assert_eq!(sse_event(&frame(&["user"], Event::Delete, "a\nb")), None);
    }
}
