//! Admin routes: pipeline stats, reconciliation on demand, and (only with TEST_HOOKS) fault
//! injection, replay and state dumps for the black-box tests.

use serde_json::json as value;
use worker::Response;

use super::{json, page};
use crate::domain::cursor::SortKey;
use crate::domain::ids::{MediaId, OutboxId, PostId, UserId};
use crate::domain::moderation::{parse_operator, parse_reason, Action, AuditEntry, Target};
use crate::domain::policy::{EdgeMode, DAY_MS};
use crate::domain::replica::Fault;
use crate::domain::window::WindowOp;
use crate::error::{ApiError, ApiResult};
use crate::http::app::App;
use crate::http::input::{Input, JsonObject};
use crate::http::router::TestHook;
use crate::http::views::AuditView;
use crate::objects::timeline::Windows;
use crate::services::{fanout, moderation, policy, reconcile, replicas, stats};
use crate::store::moderation::AuditRow;
use crate::store::{mirror, test_hooks};

pub async fn stats(app: &App) -> ApiResult<Response> {
    json(200, &stats::pipeline_stats(app).await?)
}

/// `POST /v1/admin/{users|posts}/{id}/{action}` `{"reason", "operator"?}`: 200 with the target's
/// moderation state and whether this call changed it (a repeated action changes nothing and
/// logs nothing).
pub async fn moderate(app: &App, input: &Input, target: Target, action: Action) -> ApiResult<Response> {
    let body = input.json(false)?;
    let reason = body.required("reason", parse_reason)?;
    let actor = body.optional("operator", parse_operator)?.unwrap_or_else(|| "admin".to_string());
    let entry = AuditEntry { actor, action, target, reason };
    match target {
        Target::User(id) => {
            let changed = moderation::moderate_user(app, id, &entry).await?;
            let suspended = action == Action::Suspend;
            json(200, &value!({ "id": id.to_string(), "suspended": suspended, "changed": changed }))
        }
        Target::Post(id) => {
            let changed = moderation::moderate_post(app, id, &entry).await?;
            let state = (action == Action::Takedown).then_some("taken_down");
            json(200, &value!({ "id": id.to_string(), "moderation": state, "changed": changed }))
        }
    }
}

/// `GET /v1/admin/audit`: every moderation action, oldest first, paged by a signed cursor.
pub async fn audit(app: &App, input: &Input) -> ApiResult<Response> {
    const LIST: &str = "audit";
    let limit = input.limit()?;
    let after = input.cursor(&app.cursors, OPERATOR, LIST)?.map_or(0, |k| k.id);
    let rows = crate::services::moderation::audit_page(app, after, limit).await?;
    let key = |r: &AuditRow| SortKey::new(r.id, r.id);
    json(200, &page(rows, limit, key, |r| AuditView::from(r), &app.cursors, OPERATOR, LIST))
}

/// `GET /v1/admin/reports?limit=`: users' unresolved reports (`POST /api/v1/reports`), newest
/// first across every database (`limit` as other lists, default 20, at most 100; no cursor).
pub async fn reports(app: &App, input: &Input) -> ApiResult<Response> {
    let rows = crate::services::reports::newest(app, input.limit()?).await?;
    let reports: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id.to_string(),
                "reporter_id": r.reporter_id.to_string(),
                "account_id": r.account_id.to_string(),
                "status_ids": serde_json::from_str::<Vec<String>>(&r.status_ids).unwrap_or_default(),
                "comment": r.comment,
                "category": r.category,
                "forward": r.forward != 0,
                "created_at": crate::domain::time::format_rfc3339(r.created_at),
            })
        })
        .collect();
    json(200, &serde_json::json!({ "reports": reports }))
}

/// Cursors of admin lists are bound to this pseudo-viewer (no user has id 0).
const OPERATOR: UserId = UserId::from_trusted(0);

/// `POST /v1/admin/reconcile[?replay_dead=true][&fanout=true]`: a pass, every database's share
/// in this request and its report (200); with `fanout=true` as the cron runs it, one queue
/// message per database (202, the shares' figures then land in the stats).
pub async fn reconcile(app: &App, input: &Input) -> ApiResult<Response> {
    let replay_dead = input.query("replay_dead") == Some("true");
    if input.query("fanout") == Some("true") {
        return json(202, &reconcile::fan_out(app, replay_dead).await?);
    }
    json(200, &reconcile::run_pass(app, replay_dead).await?)
}

pub async fn test_hook(app: &App, input: &Input, hook: TestHook) -> ApiResult<Response> {
    if !app.config.test_hooks {
        return Err(ApiError::NotFound("no such route"));
    }
    let body = input.json(true)?;
    match hook {
        TestHook::Fault => set_fault(app, &body).await,
        TestHook::ReplayOutbox => replay(app, &body).await,
        TestHook::OutboxState => outbox_state(app, &body).await,
        TestHook::WindowState => window_state(app, &body).await,
        TestHook::Drift => drift(app, &body).await,
        TestHook::Edge => force_edge(app, &body).await,
        TestHook::AgeReader => age_reader(app, &body).await,
        TestHook::WindowFault => window_fault(app, &body).await,
        TestHook::WindowV4 => {
            let reader = body.required_id("reader_id", UserId::parse)?;
            json(200, &Windows::new(app)?.back_to_v4(reader).await?)
        }
        TestHook::AgePost => age_post(app, &body).await,
        TestHook::EndSignInWindow => {
            let key = body.required_str("key")?;
            let ended = test_hooks::end_sign_in_window(app.control(), key).await?;
            json(200, &value!({ "key": key, "ended": ended }))
        }
        TestHook::WindowAlarm => {
            let reader = body.required_id("reader_id", UserId::parse)?;
            json(200, &Windows::new(app)?.run_alarm(reader).await?)
        }
        TestHook::Graph => graph_pair(app, &body).await,
        TestHook::Edges => author_edges(app, &body).await,
        TestHook::DbOutage => db_outage(app, &body),
        TestHook::ReplicaFault => replica_fault(app, &body).await,
        TestHook::Liked => liked_side(app, &body).await,
        TestHook::Media => media_state(app, &body).await,
        TestHook::FloorObject => super::floors::object(app, &body).await,
        TestHook::FloorD1 => super::floors::d1(app, input, &body).await,
        TestHook::OldComment => old_comment(app, &body).await,
        TestHook::Scheduled => make_due(app, &body).await,
        TestHook::PushAgain => push_again(app, &body).await,
        TestHook::Relay => relay_stats(app, &body).await,
    }
}

/// `{"tag"}` or `{"stripe"}`: that key's stream relay's figures (`domain::stream_relay::RelayStats`).
async fn relay_stats(app: &App, body: &JsonObject) -> ApiResult<Response> {
    use crate::domain::tags::{parse_name, IndexKey, PUBLIC_STRIPES};
    let key = match (body.str("tag")?, body.count("stripe")?) {
        (Some(tag), _) => IndexKey::tag(parse_name(tag).ok_or_else(|| ApiError::field("tag", "not a tag"))?),
        (None, Some(stripe)) if stripe < PUBLIC_STRIPES => IndexKey::public_stripe(stripe),
        _ => return Err(ApiError::field("stripe", "a tag or a stripe 0 .. 15 is required")),
    };
    json(200, &crate::objects::relay::Relays::new(app)?.stats(&key).await?)
}

/// `{"post_id", "author_id", "body", "parent_id"?}`: a comment of the old kind on the post, now.
async fn old_comment(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let post = body.required_id("post_id", PostId::parse)?;
    let author = body.required_id("author_id", UserId::parse)?;
    let text = body.required_str("body")?;
    let parent = body.optional("parent_id", |v| {
        PostId::parse(v).ok_or(crate::domain::validate::Invalid::new("parent_id", "not an id"))
    })?;
    let seed = crate::context::id_seed()?;
    let id = test_hooks::old_comment(app.post_db(post), (post, author, parent), text, app.now, seed).await?;
    json(200, &value!({ "id": id.to_string() }))
}

/// `{"author_id", "replica": i, "fault": "none" | "slow" | "failing" | "wipe", "ms": n}`: a
/// fault on digest `i` (`domain/replica.rs` `Fault`), which holds the replicas of every hot
/// author its readers read; without `replica`, only asks. Answers, if the author is hot as this
/// isolate's directory has it (re-read), the number of digests, with `reader_id` which digest
/// that reader reads, and with `replica` what that digest held (authors, posts, row bytes).
async fn replica_fault(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let author = body.required_id("author_id", UserId::parse)?;
    let mut held = None;
    if let Some(replica) = body.count("replica")? {
        let fault = match body.str("fault")? {
            Some("slow") => Fault::Slow { ms: body.count("ms")?.unwrap_or(2_000) },
            Some("failing") => Fault::Failing,
            Some("wipe") => Fault::Wipe,
            Some("none") | None => Fault::None,
            Some(_) => return Err(ApiError::field("fault", "none, slow, failing or wipe")),
        };
        let replica = u32::try_from(replica).map_err(|_| ApiError::field("replica", "out of range"))?;
        held = Some(replicas::fault(app, replica, fault).await?);
    }
    replicas::forget_directory();
    let count = replicas::directory(app).await.get(&author).copied();
    let reader = match body.has("reader_id") {
        true => Some(body.required_id("reader_id", UserId::parse)?),
        false => None,
    };
    let reads = reader.zip(count).map(|(r, n)| crate::domain::replica::replica_for(r, n));
    json(200, &value!({ "replicas": count, "reader_replica": reads, "digest": held }))
}

/// An author's events on every database; a database in an outage is left out and named
/// (`unavailable`), so a test can watch the others' events wait through it.
async fn outbox_state(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let author = body.required_id("author_id", UserId::parse)?;
    let parts = app
        .on_every_database(|db| async move {
            match test_hooks::author_outbox_on(db, author).await {
                Err(e) if e.unavailable_database().is_some() => Ok(None),
                read => read.map(Some),
            }
        })
        .await?;
    let unavailable: Vec<usize> =
        parts.iter().enumerate().filter(|(_, p)| p.is_none()).map(|(i, _)| i).collect();
    let faults = test_hooks::faults_of(app.control(), author).await?;
    json(200, &test_hooks::AuthorOutbox::merged(parts.into_iter().flatten().collect(), faults, unavailable))
}

/// `{"database": i, "failing": bool}`: every statement on `DB_i` fails from now on as a D1
/// outage does, in every invocation of this isolate (`store::test_hooks::outage`), until
/// healed. Answers the failing databases and the round trips refused on each; `{}` only asks.
fn db_outage(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let change = match body.count("database")? {
        Some(index) => {
            let index = usize::try_from(index).ok().filter(|&i| app.shards.database(i).is_some());
            let index = index.ok_or_else(|| ApiError::field("database", "no such database"))?;
            Some((index, body.flag("failing")?.unwrap_or(true)))
        }
        None => None,
    };
    json(200, &test_hooks::set_database_failing(change))
}

/// An author's edges as the author's side holds them; with `reader_id`, also that reader's own
/// facts (their users row), which the copies on the edges lag between threshold crossings.
async fn author_edges(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let author = body.required_id("author_id", UserId::parse)?;
    let edges = test_hooks::author_edges(app.user_db(author), author).await?;
    let reader = if body.has("reader_id") {
        let reader = body.required_id("reader_id", UserId::parse)?;
        crate::store::policy::readers_facts(&app.shards, &[reader]).await?.into_iter().next()
    } else {
        None
    };
    json(200, &value!({ "edges": edges, "reader": reader }))
}

/// Both sides of the pair `user_id`, `other_id` as stored: each user's own follow and block of
/// the other and the mirrors of the other's. `delete_mirror` (`followers` / `blocked_by`) first
/// deletes that mirror row on `user_id`'s side (a lost write); `rewind` points the next
/// reconciliation pass's graph check at `user_id`'s edges.
async fn graph_pair(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let user = body.required_id("user_id", UserId::parse)?;
    let other = body.required_id("other_id", UserId::parse)?;
    let deleted = match body.str("delete_mirror")? {
        Some("followers") => mirror::delete_mirror(app.user_db(user), user, other, false).await?,
        Some("blocked_by") => mirror::delete_mirror(app.user_db(user), user, other, true).await?,
        Some(_) => return Err(ApiError::field("delete_mirror", "followers or blocked_by")),
        None => 0,
    };
    if body.has("rewind") {
        crate::services::graph::rewind_to(app, user).await?;
    }
    let (mine, theirs) = futures_util::future::join(
        mirror::side_view(app.user_db(user), user, other),
        mirror::side_view(app.user_db(other), other, user),
    )
    .await;
    let (mine, theirs) = (mine?, theirs?);
    json(200, &value!({ "deleted": deleted, "user": mine, "other": theirs }))
}

/// The liker side of (`user_id`, `post_id`) as stored (`{"liked_at": ms | null}`); with
/// `"delete": true` it first deletes it (a write lost to a crash between the two sides).
async fn liked_side(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let user = body.required_id("user_id", UserId::parse)?;
    let post = body.required_id("post_id", PostId::parse)?;
    if body.flag("delete")?.unwrap_or(false) {
        crate::store::liked::write_liker_side(app.user_db(user), user, post, None).await?;
    }
    let liked_at = crate::store::liked::liker_side(app.user_db(user), user, post).await?;
    let (rows, groups) = crate::store::test_hooks::favourite_rows(app.post_db(post), post).await?;
    json(200, &value!({ "liked_at": liked_at, "favourite_rows": rows, "favourite_group_rows": groups }))
}

/// Makes `user_id`'s scheduled post `scheduled_id` due now (`{"row": whether it exists}`).
async fn make_due(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let user = body.required_id("user_id", UserId::parse)?;
    let id = body.required_id("scheduled_id", crate::domain::ids::ScheduledId::parse)?;
    let row = crate::store::test_hooks::move_scheduled(app.user_db(user), user, id.get(), app.now).await?;
    json(200, &value!({ "row": row }))
}

/// An upload's state (`row`, `gone`, `bytes`: whether its R2 object exists), after moving its
/// upload and gone times `age_seconds` into the past (the sweep's clocks).
async fn media_state(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let id = body.required_id("media_id", MediaId::parse)?;
    let age_ms = body.count("age_seconds")?.unwrap_or(0) as i64 * 1000;
    let (row, gone) = crate::store::test_hooks::age_media(app.media_db(id), id, age_ms).await?;
    let bytes = crate::services::media::stored(app, id).await?;
    json(200, &value!({ "row": row, "gone": gone, "bytes": bytes }))
}

/// Puts the edge (reader follows author) into `mode` (`push` or `pull`) the way the policy would.
async fn force_edge(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let reader = body.required_id("reader_id", UserId::parse)?;
    let author = body.required_id("author_id", UserId::parse)?;
    let mode = match body.required_str("mode")? {
        "push" => EdgeMode::Push,
        "pull" => EdgeMode::Pull,
        _ => return Err(ApiError::field("mode", "mode must be push or pull")),
    };
    policy::force_edge(app, reader, author, mode).await?;
    json(200, &value!({ "reader_id": reader.to_string(), "author_id": author.to_string(), "mode": mode }))
}

/// Moves a reader's last read `days` into the past, in D1 and in their window object (whose
/// idle check then runs at once if that makes the reader idle: `WINDOW_IDLE_DAYS`).
async fn age_reader(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let reader = body.required_id("reader_id", UserId::parse)?;
    let days = body.count("days")?.unwrap_or(0).min(3_650) as i64;
    crate::store::policy::age_reader(&app.shards, reader, days).await?;
    Windows::new(app)?.call(reader, &WindowOp::AgeActivity { ms: days * DAY_MS }).await?;
    json(200, &value!({ "reader_id": reader.to_string(), "days": days }))
}

/// Runs a notification's push delivery once more, now, as a queue's duplicate delivery would:
/// when this answers, whatever it would send has been sent.
async fn push_again(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let recipient = body.required_id("recipient_id", UserId::parse)?;
    let notification = body.count("notification_id")?.unwrap_or(0) as i64;
    let job =
        crate::domain::queue::PushDelivery { push_recipient: recipient, push_notification: notification };
    crate::services::push::deliver(app, job).await?;
    json(200, &value!({ "delivered": true }))
}

/// Makes the reader's window object fail its next `times` feed reads (`0` heals it).
async fn window_fault(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let reader = body.required_id("reader_id", UserId::parse)?;
    let times = body.count("times")?.unwrap_or(1).min(10_000) as u32;
    Windows::new(app)?.fail_reads(reader, times).await?;
    json(200, &value!({ "reader_id": reader.to_string(), "failing_reads": times }))
}

/// Moves a post and its outbox events `seconds` into the past (a fan-out stalled that long).
async fn age_post(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let post = body.required_id("post_id", PostId::parse)?;
    let seconds = body.count("seconds")?.unwrap_or(0).min(10 * 365 * 86_400) as i64;
    let aged = test_hooks::age_post(app.post_db(post), post, seconds * 1000).await?;
    json(200, &value!({ "post_id": post.to_string(), "aged": aged, "seconds": seconds }))
}

/// Arms a named fault for its next `times` firings.
async fn set_fault(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let name = body.required_str("name")?;
    let times = body.count("times")?.unwrap_or(1).min(1_000) as i64;
    test_hooks::set_fault(app.control(), name, times).await?;
    json(200, &value!({ "name": name, "remaining": times }))
}

/// Makes a post's fan-out (`post_id`), or one event of any kind (`outbox_id`), pending from
/// the start again and announces it: a redelivered, possibly stale, message.
async fn replay(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let events = if body.has("outbox_id") {
        let event = body.required_id("outbox_id", OutboxId::parse)?;
        test_hooks::reset_event(app.outbox_db(event), event, app.now).await?
    } else {
        let post = body.required_id("post_id", PostId::parse)?;
        test_hooks::reset_for_replay(app.post_db(post), post, app.now).await?
    };
    fanout::announce(app, UserId::from_trusted(0), &events).await;
    json(200, &value!({ "replayed": events.len() }))
}

/// Dumps a reader's whole window (every stored entry, also before init; without changing it),
/// with its object's database size.
async fn window_state(app: &App, body: &JsonObject) -> ApiResult<Response> {
    let reader = body.required_id("reader_id", UserId::parse)?;
    let dump = Windows::new(app)?.dump(reader).await?;
    let reply = dump.window;
    let ids: Vec<String> = reply.entries.iter().map(|e| e.post_id.to_string()).collect();
    let (initialized, floor, bytes) = (reply.initialized, reply.floor, dump.database_bytes);
    json(
        200,
        &value!({ "initialized": initialized, "floor": floor, "post_ids": ids, "database_bytes": bytes }),
    )
}

/// Overwrites a post's like count, as a lost trigger would.
/// Drifts a post's like count (`post_id`, `like_count`) or a user's counters (`user_id`,
/// `followers_count` / `following_count` / `posts_count`), for the reconciliation tests.
async fn drift(app: &App, body: &JsonObject) -> ApiResult<Response> {
    if body.has("user_id") {
        let user = body.required_id("user_id", UserId::parse)?;
        let mut set = Vec::new();
        for column in ["followers_count", "following_count", "posts_count"] {
            if let Some(n) = body.count(column)? {
                set.push((column, n as i64));
            }
        }
        test_hooks::set_user_counts(app.user_db(user), user, &set).await?;
        return json(200, &value!({ "user_id": user.to_string() }));
    }
    let post = body.required_id("post_id", PostId::parse)?;
    let like_count = body.count("like_count")?.unwrap_or(0) as i64;
    let unmarked = body.flag("unmarked")?.unwrap_or(false);
    test_hooks::set_like_count(app.post_db(post), post, like_count, app.now, unmarked).await?;
    json(200, &value!({ "post_id": post.to_string(), "like_count": like_count }))
}
