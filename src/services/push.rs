//! Web Push (docs/mastodon.md "Web Push"): a token's subscription, and the delivery of a
//! notification to its recipient's subscriptions by the fan-out queue's consumer.
//!
//! A notification's write learns in its own statement whether the recipient has a
//! subscription (`store/notifications.rs::notice`) and `streaming::tell` queues a
//! [`PushDelivery`] after the answer. The consumer ([`deliver`]) re-reads everything when it
//! runs: the notification through the lists' rules (dismissed or hidden since: nothing is
//! sent), the subscriptions, their tokens and policies now; each push is claimed in one
//! statement before it is sent (`store/push.rs::claim`), so a duplicate delivery sends nothing
//! twice, and a push that failed in a way worth retrying gives its claim back and the message
//! is retried (the queue's `max_retries`, then it is dropped as a dead letter).

use std::cell::RefCell;

use wasm_bindgen::JsValue;
use worker::{Fetch, Headers, Method, Request, RequestInit};

use super::deadline::within;
use super::notifications::{self, Hydrated};
use super::queue::send::send_job_after_response;
use crate::context::{random_bytes, Ctx};
use crate::domain::ids::UserId;
use crate::domain::notifications::Notice;
use crate::domain::push::{self as rules, Alerts, Endpoint, Outcome, Payload, PushData};
use crate::domain::queue::PushDelivery;
use crate::domain::webpush::{self, Sealing, VapidKey};
use crate::error::{ApiError, ApiResult};
use crate::store::push::{self as store, Claimed, NewSubscription, SubscriptionRow};

/// The secret holding the VAPID private key (README "Configuration").
pub const VAPID_SECRET: &str = "VAPID_PRIVATE_KEY";

/// How long a push service keeps an undelivered message (`TTL`, seconds): Mastodon's 48 hours.
const PUSH_TTL_SECS: u32 = 48 * 60 * 60;

/// How long one push service request may take: past it the push is retried, its claim given
/// back before the message's own deadline would drop it with the claim held.
const SEND_DEADLINE: std::time::Duration = std::time::Duration::from_secs(8);

thread_local! {
    /// The isolate's parsed key, by the secret it came from (deriving the public key is a
    /// scalar multiplication: not redone on every instance document).
    static VAPID: RefCell<Option<(String, Option<VapidKey>)>> = const { RefCell::new(None) };
}

/// The server's VAPID key, if `VAPID_PRIVATE_KEY` is set (an invalid one is logged and counts
/// as none: Web Push is off, nothing is sent).
pub fn vapid_key(ctx: &Ctx) -> Option<VapidKey> {
    let raw = ctx.env.secret(VAPID_SECRET).ok().map(|s| s.to_string()).filter(|s| !s.trim().is_empty())?;
    VAPID.with(|cell| {
        let mut cached = cell.borrow_mut();
        if let Some((seen, key)) = cached.as_ref().filter(|(seen, _)| *seen == raw) {
            let _ = seen;
            return key.clone();
        }
        let key = VapidKey::parse(&raw);
        if key.is_none() {
            worker::console_error!("{VAPID_SECRET} is not a base64url P-256 scalar: Web Push is off");
        }
        *cached = Some((raw, key.clone()));
        key
    })
}

/// The public key clients subscribe with (`vapid_key`, `server_key`), if Web Push is on.
pub fn server_key(ctx: &Ctx) -> Option<String> {
    vapid_key(ctx).map(|key| key.public_key())
}

/// Without a key there is no Web Push: every subscription route answers this 404, as it did
/// before Web Push was built (apps treat a missing push API as optional).
fn not_configured() -> ApiError {
    ApiError::NotFound("Web Push is not configured on this server")
}

/// A subscription and the key its pushes are signed with.
pub struct Subscription {
    pub row: SubscriptionRow,
    pub server_key: String,
}

fn subscription(ctx: &Ctx, row: Option<SubscriptionRow>) -> ApiResult<Subscription> {
    let server_key = server_key(ctx).ok_or_else(not_configured)?;
    let row = row.ok_or(ApiError::NotFound("Record not found"))?;
    Ok(Subscription { row, server_key })
}

/// The access token a subscription belongs to.
#[derive(Debug, Clone, Copy)]
pub struct TokenRef<'a> {
    pub user: UserId,
    /// Its `jti` (0: a token without one).
    pub token_id: i64,
    pub bearer: &'a str,
    pub issued_at_ms: Option<i64>,
    pub expires_at_ms: i64,
}

/// `POST`: the token's subscription, replacing the one it had.
pub async fn subscribe(
    ctx: &Ctx,
    token: TokenRef<'_>,
    origin: &str,
    endpoint: &Endpoint,
    data: PushData,
) -> ApiResult<Subscription> {
    server_key(ctx).ok_or_else(not_configured)?;
    let id = (u64::from_le_bytes(random_bytes()?) >> 12) as i64;
    let (p256dh, auth) = (webpush::base64url(&endpoint.p256dh), webpush::base64url(&endpoint.auth));
    let new = NewSubscription {
        user: token.user,
        token_id: token.token_id,
        id: id.max(1),
        endpoint: &endpoint.endpoint,
        p256dh: &p256dh,
        auth: &auth,
        data,
        access_token: token.bearer,
        origin,
        token_issued_at: token.issued_at_ms,
        token_expires_at: token.expires_at_ms,
    };
    let row = store::replace(ctx.user_db(token.user), &new, ctx.now).await?;
    subscription(ctx, Some(row))
}

/// `GET`: the token's subscription (404 without one).
pub async fn current(ctx: &Ctx, user: UserId, token_id: i64) -> ApiResult<Subscription> {
    server_key(ctx).ok_or_else(not_configured)?;
    subscription(ctx, store::get(ctx.user_db(user), user, token_id).await?)
}

/// `PUT`: replaces the token's subscription's alerts and policy (404 without one).
pub async fn change(ctx: &Ctx, user: UserId, token_id: i64, data: PushData) -> ApiResult<Subscription> {
    server_key(ctx).ok_or_else(not_configured)?;
    subscription(ctx, store::set_data(ctx.user_db(user), user, token_id, data).await?)
}

/// `DELETE`: the token's subscription goes (none is no error, as Mastodon answers).
pub async fn unsubscribe(ctx: &Ctx, user: UserId, token_id: i64) -> ApiResult<()> {
    server_key(ctx).ok_or_else(not_configured)?;
    store::remove(ctx.user_db(user), user, token_id, None).await?;
    Ok(())
}

/// A token revoked by id takes its subscription with it (a logout's tokens lose theirs at
/// their next push: the delivery checks each token).
pub async fn forget_token(ctx: &Ctx, user: UserId, token_id: i64) -> ApiResult<()> {
    store::remove(ctx.user_db(user), user, token_id, None).await?;
    Ok(())
}

/// Queues the push of a notification just made, after the answer (best effort).
pub async fn announce(ctx: &Ctx, notice: Notice) {
    let job = PushDelivery { push_recipient: notice.recipient, push_notification: notice.id };
    send_job_after_response(ctx, job.into()).await;
}

/// The queue's handler: pushes the notification to each of the recipient's subscriptions that
/// admits it now. An error gives the message back to the queue; the pushes already made are
/// remembered and not made again.
pub async fn deliver(ctx: &Ctx, job: PushDelivery) -> ApiResult<()> {
    let Some(key) = vapid_key(ctx) else { return Ok(()) };
    let recipient = job.push_recipient;
    let Some(found) = notifications::one(ctx, recipient, job.push_notification).await? else {
        return Ok(());
    };
    let bit = Alerts::kind_bit(found.kind);
    let db = ctx.user_db(recipient);
    let mut failed = None;
    for target in store::targets(db, recipient, found.actor.id, bit, ctx.now).await? {
        let which = (recipient, target.token_id, target.id);
        if !target.token_valid() {
            store::remove(db, recipient, target.token_id, Some(target.id)).await?;
        } else if target.admitted() {
            if let Err(e) = push_one(ctx, &key, &found, which, bit).await {
                failed = Some(e);
            }
        }
    }
    failed.map_or(Ok(()), Err)
}

/// One subscription's push: claimed, sent, and what the push service said applied.
async fn push_one(
    ctx: &Ctx,
    key: &VapidKey,
    found: &Hydrated,
    which: (UserId, i64, i64),
    bit: i64,
) -> ApiResult<()> {
    let (user, token_id, id) = which;
    let db = ctx.user_db(user);
    let Some(claimed) = store::claim(db, which, found.id, bit).await? else { return Ok(()) };
    let sent = within(SEND_DEADLINE, send(ctx, key, found, &claimed)).await;
    match sent.map(rules::outcome) {
        Ok(Outcome::Delivered) => Ok(()),
        Ok(Outcome::Gone) => {
            store::remove(db, user, token_id, Some(id)).await.map(|_| ()).map_err(Into::into)
        }
        Ok(Outcome::Refused) => {
            worker::console_error!("push service refused notification {} for good", found.id);
            Ok(())
        }
        Ok(Outcome::Retry) | Err(_) => {
            store::release(db, which, found.id).await?;
            Err(ApiError::Internal(format!("push of notification {} not delivered: retried", found.id)))
        }
    }
}

/// Encrypts the payload for the subscription and posts it; the push service's status.
async fn send(ctx: &Ctx, key: &VapidKey, found: &Hydrated, claimed: &Claimed) -> ApiResult<u16> {
    let invalid = |why: &str| ApiError::Internal(format!("subscription unusable: {why}"));
    let p256dh = webpush::parse_p256dh(&claimed.p256dh).ok_or_else(|| invalid("p256dh"))?;
    let auth = webpush::parse_auth(&claimed.auth).ok_or_else(|| invalid("auth"))?;
    let audience = rules::audience(&claimed.endpoint).ok_or_else(|| invalid("endpoint"))?;
    let plaintext = serde_json::to_vec(&payload(found, claimed)).unwrap_or_default();
    let (ephemeral_secret, salt) = (random_bytes::<32>()?, random_bytes::<16>()?);
    let sealing =
        Sealing { ua_public: &p256dh, auth: &auth, ephemeral_secret: &ephemeral_secret, salt: &salt };
    let body = webpush::encrypt(&plaintext, 0, sealing).map_err(|e| invalid(&format!("{e:?}")))?;
    let subject = ctx.config.vapid_subject.as_deref().unwrap_or(&claimed.origin);
    let headers = Headers::new();
    headers.set("authorization", &key.authorization(&audience, subject, ctx.now / 1000))?;
    headers.set("content-encoding", "aes128gcm")?;
    headers.set("content-type", "application/octet-stream")?;
    headers.set("ttl", &PUSH_TTL_SECS.to_string())?;
    headers.set("urgency", "normal")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers);
    init.with_body(Some(JsValue::from(worker::js_sys::Uint8Array::from(body.as_slice()))));
    let request = Request::new_with_init(&claimed.endpoint, &init)?;
    let response = Fetch::Request(request).send().await?;
    Ok(response.status_code())
}

/// Mastodon's payload: the token (so a multi-account app knows whose it is), the
/// notification, and what to show: a title naming the actor, the post's text (its content
/// warning instead, if it has one) or the actor's handle, the actor's avatar.
fn payload<'a>(found: &Hydrated, claimed: &'a Claimed) -> Payload<'a> {
    let actor = &found.actor;
    let name = if actor.display_name.trim().is_empty() { &actor.handle } else { &actor.display_name };
    let post = found.reply.as_ref().or(found.post.as_ref());
    let text = match (post, &found.comment) {
        (Some(p), _) if !p.spoiler_text.trim().is_empty() => p.spoiler_text.clone(),
        (Some(p), _) => p.body.clone(),
        (None, Some(c)) => c.body.clone(),
        (None, None) => format!("@{}", actor.handle),
    };
    let avatar = actor.profile.avatar.as_deref().unwrap_or("/avatar.png");
    Payload {
        access_token: &claimed.access_token,
        preferred_locale: "en",
        notification_id: found.id.to_string(),
        notification_type: found.kind.mastodon(),
        icon: format!("{}{avatar}", claimed.origin),
        title: rules::title(found.kind, name),
        body: rules::truncate_body(&text),
    }
}
