//! The fan-out plan's reads (`domain/fanout_plan.rs`), run against D1 and answered as the
//! plan's replies: the event, the post, a chunk's lanes side by side, a reader.

use futures_util::future::{join, join4};

use crate::context::Ctx;
use crate::domain::boosts::BoostMirror;
use crate::domain::fanout::{split_lookahead, PostNow};
use crate::domain::fanout_budget::cap_databases;
use crate::domain::fanout_plan::{
    delivery_recipients, ChunkFound, ChunkReads, Event, FollowerPage, LivePage, PostRead, Reply, Split,
    TagPage,
};
use crate::domain::fanout_segments::{boundary_step, followers_to_split, segments_for, Segments};
use crate::domain::ids::{PostId, UserId};
use crate::domain::mentions::Mentioned;
use crate::domain::policy::AuthorRates;
use crate::domain::queue::FanoutMessage;
use crate::domain::quotes::QuoteMirror;
use crate::domain::snowflake::shard_of_id;
use crate::domain::tags::{self, IndexKey};
use crate::domain::visibility::Visibility;
use crate::error::ApiResult;
use crate::services::{direct, mentions, quotes, replies, tally, timelines};
use crate::store::engagement::ReplyMirror;
use crate::store::fanout_ahead::{self, PageAhead};
use crate::store::outbox::{self, OutboxRow};
use crate::store::posts::{self, PostState};
use crate::store::timelines as index;
use crate::store::OnDb;
use crate::store::{feed as pull, graph, live, policy as edges, reblogs};

/// What a message's event read brought ahead of the steps that use it (each taken once).
#[derive(Default)]
pub struct Ahead {
    /// The event's post, as read with the row (`None` inside: no such row there).
    pub post: Option<(PostId, Option<PostState>)>,
    /// The author's followers after the message's progress.
    pub page: Option<(PageAhead, Vec<UserId>)>,
}

/// The outbox row (kept by the caller: marking it done needs all of it), the plan's view, and
/// for a pending post event its post and next page of followers read in the same statement
/// (`store/fanout_ahead.rs`), where they share the event's database.
pub async fn event(ctx: &Ctx, message: FanoutMessage) -> ApiResult<(Option<OutboxRow>, Reply, Ahead)> {
    let id = message.outbox_id;
    let page = page_ahead(ctx, message);
    let read = fanout_ahead::event_ahead(ctx.outbox_db(id), id, page).await?;
    let row = read.row;
    let here = |db: usize| db == ctx.outbox_db(id).on().index();
    let post = row
        .as_ref()
        .and_then(|r| Some((r.post_id?, read.post?)))
        .filter(|(p, _)| here(ctx.post_db(*p).on().index()));
    let page = page
        .zip(read.page)
        .filter(|_| row.as_ref().is_some_and(|r| here(ctx.user_db(r.author_id).on().index())));
    let event = row.as_ref().map(|row| Event {
        id: row.id,
        kind: row.kind,
        post_id: row.post_id,
        author: row.author_id,
        reader: row.reader_id,
        state: row.state,
        cursor: row.cursor_follower_id,
    });
    Ok((row, Reply::Event(event), Ahead { post, page }))
}

/// The page a post event's chunk reads first: after the message's progress, a chunk and one
/// row of lookahead, pushed edges only in hybrid mode (a delivery's recipients,
/// `domain/fanout_plan.rs::recipients`); none in pull mode, where no chunk pages followers.
fn page_ahead(ctx: &Ctx, message: FanoutMessage) -> Option<PageAhead> {
    let pushed_only = delivery_recipients(ctx.config.policy.mode)?;
    Some(PageAhead { after: message.after_follower_id, limit: ctx.config.fanout_chunk + 1, pushed_only })
}

/// The post's state now. A boost's event first makes the original's side agree with it
/// (`store/reblogs.rs::converge`), and a post's event its mentioned users' notifications
/// (`services/mentions.rs::notify`), both idempotent: the request did so already unless it
/// stopped between the databases, and then the outbox's resend of this event repairs it.
pub async fn post(
    ctx: &Ctx,
    post_id: PostId,
    converge: bool,
    ahead: Option<Option<PostState>>,
) -> ApiResult<Reply> {
    if ctx.config.profile_io {
        // As a chunk's page ([`count_page_ahead`]): a post read apart is a statement more on the
        // author's database (a live page's post is always read apart: it has no event read).
        let name = if ahead.is_some() { "fanout_ahead_post_used" } else { "fanout_ahead_post_apart" };
        tally::add(name, 1);
    }
    let post = match ahead {
        Some(read) => read,
        None => posts::state(ctx.post_db(post_id), post_id).await?,
    };
    if let Some(state) = post.as_ref().filter(|_| converge) {
        converge_sides(ctx, post_id, state).await?;
    }
    Ok(Reply::Post(post.as_ref().map(post_read)))
}

/// The post's other sides brought to its state now (the event's first message only).
async fn converge_sides(ctx: &Ctx, post_id: PostId, state: &PostState) -> ApiResult<()> {
    if let Some(original) = state.reblog_of {
        let mirror = BoostMirror {
            original,
            boost: post_id,
            booster: state.author_id,
            created_at: state.created_at,
            active: !state.is_deleted(),
            now: ctx.now,
        };
        reblogs::converge(ctx.post_db(original), &mirror).await?;
    }
    if let Some(quoted) = state.quote_of {
        // Likewise the quoted post's mirror, with the quote's notification.
        let mirror = QuoteMirror {
            quoted,
            quote: post_id,
            quoter: state.author_id,
            created_at: state.created_at,
            active: !state.is_deleted(),
            now: ctx.now,
        };
        quotes::converge(ctx, &mirror).await?;
    }
    if state.thread_id.is_some() {
        // Likewise a reply's row in its thread, from the reply as it is now.
        reply_mirror(ctx, post_id, state).await?;
    }
    if state.mentions.is_some() {
        // Likewise the mentioned users' notifications, made or taken back by the post's state.
        // A direct post also reaches the homes of those it mentions.
        let live = !state.is_deleted() && !state.is_taken_down() && !state.author_is_suspended();
        let mentioned = Mentioned::list_of(state.mentions.as_deref());
        let thread = state.thread_id.unwrap_or(post_id);
        mentions::notify(ctx, (post_id, thread, state.author_id, state.visibility), &mentioned, live).await?;
        if live && state.visibility == Visibility::Private {
            direct::deliver(ctx, post_id, state, &mentioned).await?;
        }
    }
    if indexable(state) {
        index_entries(ctx, post_id, state).await?;
    }
    Ok(())
}

/// Likewise a public post's timeline entries, from the post as it is now. Best effort: the keys
/// live on other databases, and one of them being down must not hold the post's delivery to
/// its followers (an outage stays local); the post then misses that timeline until it is edited.
async fn index_entries(ctx: &Ctx, post_id: PostId, state: &PostState) -> ApiResult<()> {
    let row = posts::load_live(ctx.post_db(post_id).any(), state.author_id, &[post_id]).await?;
    if let Err(e) = timelines::converge(ctx, row.first(), None).await {
        worker::console_error!("timeline index of {post_id}: {e}; its delivery goes on");
    }
    // Its search rows likewise (idempotent; best effort inside).
    crate::services::search::index::post(ctx, row.first(), None).await;
    Ok(())
}

/// A live public post of its own: what the timeline index may hold.
fn indexable(p: &PostState) -> bool {
    p.visibility == Visibility::Public && p.reblog_of.is_none() && !p.is_deleted() && !p.is_taken_down()
}

async fn reply_mirror(ctx: &Ctx, post_id: PostId, state: &PostState) -> ApiResult<()> {
    let row = if state.is_deleted() {
        None
    } else {
        posts::load_live(ctx.post_db(post_id).any(), state.author_id, &[post_id]).await?.into_iter().next()
    };
    match row {
        Some(row) => match replies::mirror_of(ctx, &row, true) {
            Some(mirror) => replies::converge(ctx, &mirror).await,
            None => Ok(()),
        },
        None => {
            let Some(root) = state.thread_id else { return Ok(()) };
            let mirror = ReplyMirror {
                reply: post_id,
                root,
                parent: state.in_reply_to_id.filter(|parent| *parent != root.get()),
                author: state.author_id,
                body: "",
                spoiler_text: "",
                sensitive: false,
                created_at: state.created_at,
                active: false,
                notify: false,
                mentioned: Vec::new(),
                now: ctx.now,
            };
            replies::converge(ctx, &mirror).await
        }
    }
}

/// The keys of the tags that deliver the post into their followers' homes: a public, listed
/// post of its own (what the tag index holds), live; none otherwise.
fn delivering_tags(p: &PostState) -> Vec<IndexKey> {
    let listed = p.visibility == Visibility::Public && !p.is_unlisted() && p.reblog_of.is_none();
    if listed && !p.is_deleted() && !p.is_taken_down() {
        tags::tag_keys(&p.body)
    } else {
        Vec::new()
    }
}

fn post_read(p: &PostState) -> PostRead {
    PostRead {
        tags: u8::try_from(delivering_tags(p).len()).unwrap_or(u8::MAX),
        author: p.author_id,
        created_at: p.created_at,
        version: p.state_version,
        reply_to: p.in_reply_to_account_id.filter(|account| *account != p.author_id),
        now: PostNow {
            visibility: p.visibility,
            deleted: p.is_deleted(),
            taken_down: p.is_taken_down(),
            author_suspended: p.author_is_suspended(),
        },
    }
}

/// The post now, for a page of its tags' followers, with its delivering tags' keys. Unlike
/// [`post`] it converges nothing: the post's own event does.
pub async fn tagged(ctx: &Ctx, post_id: PostId) -> ApiResult<Reply> {
    let post = posts::state(ctx.post_db(post_id), post_id).await?;
    Ok(Reply::Tagged(post.map(|p| (post_read(&p), delivering_tags(&p)))))
}

/// A page of a tag's followers (on the tag key's database, with one row of lookahead), then
/// those of them with a window (their own rows), as a chunk's follower lane answers; cut where
/// its readers would span more than `databases` databases, as a chunk's.
pub async fn tag_followers(ctx: &Ctx, page: TagPage, databases: usize) -> ApiResult<Reply> {
    let TagPage { key, after, chunk } = page;
    let rows = index::tag_followers(ctx.shards.index(&key), &key, after, chunk + 1).await?;
    let (scanned, more) = within_databases(ctx, split_lookahead(rows, chunk), databases);
    let active = outbox::active_among(&ctx.shards, &scanned).await?;
    Ok(Reply::Chunk(ChunkFound { scanned, more, active, ..ChunkFound::default() }))
}

/// Whether the reader has a window, beside (for a backfill) the author's newest posts the
/// reader may see *now*, from an author still followed.
pub async fn reader(ctx: &Ctx, reader: UserId, backfill: Option<(UserId, usize)>) -> ApiResult<Reply> {
    let entries = async {
        match backfill {
            Some((author, limit)) => pull::backfill_entries(ctx.user_db(author), reader, author, limit).await,
            None => Ok(Vec::new()),
        }
    };
    let (active, entries) = join(pull::is_active_reader(ctx.user_db(reader), reader), entries).await;
    Ok(Reply::Reader { active: active?, entries: entries? })
}

/// The event's segments: the row's (as read by this message), else, asked to split, made now
/// if the author's followers call for more than one chain (`domain/fanout_segments.rs`):
/// their number from the author's follower count, their ends from one walk of the author's
/// side of the edges.
pub async fn segments(ctx: &Ctx, row: &OutboxRow, split: Option<Split>) -> ApiResult<Reply> {
    let found = row.segments();
    let Some(Split { author, pushed_only, target }) = split.filter(|_| found.0.is_empty()) else {
        return Ok(Reply::Segments(found));
    };
    let count = edges::author_facts(ctx.user_db(author), author).await?.map_or(0, |f| f.followers_count);
    let push_max = ctx.config.policy.push_max_followers;
    let followers = followers_to_split(u64::try_from(count).unwrap_or(0), pushed_only, push_max);
    let wanted = segments_for(followers, target);
    if wanted < 2 {
        return Ok(Reply::Segments(Segments::default()));
    }
    let step = boundary_step(followers, wanted);
    let ends = outbox::segment_ends(ctx.user_db(author), author, pushed_only, step, wanted).await?;
    let cut = Segments::cut(&ends);
    if cut.0.len() < 2 {
        return Ok(Reply::Segments(Segments::default()));
    }
    Ok(Reply::Segments(outbox::split(ctx.outbox_db(row.id), row.id, &cut).await?))
}

/// A chunk's reads, each lane waiting only for its own; its followers span at most
/// `databases` databases (the consumer batch's budget: `domain/fanout_budget.rs`).
pub async fn chunk(
    ctx: &Ctx,
    reads: ChunkReads,
    databases: usize,
    ahead: Option<(PageAhead, Vec<UserId>)>,
) -> ApiResult<Reply> {
    let (followers, live, rates, author_active) = join4(
        followers(ctx, reads.followers, databases, ahead),
        live_page(ctx, reads.live),
        author_rates(ctx, reads.author_rates),
        has_window(ctx, reads.author_window),
    )
    .await;
    let ((scanned, more, active), (live, live_next)) = (followers?, live?);
    let (author_rates, author_active) = (rates?, author_active?);
    Ok(Reply::Chunk(ChunkFound { scanned, more, active, live, live_next, author_rates, author_active }))
}

/// The page of followers from the author's side (with one row of lookahead), then those of
/// them with a window (from their own rows): `(scanned, more, active)`. Progress moves by the
/// scanned page, so followers without a window are passed over, not revisited. A page whose
/// readers span more than `databases` databases stops before the first reader past them (and
/// says more follow): the window check is one statement per database.
async fn followers(
    ctx: &Ctx,
    page: Option<FollowerPage>,
    databases: usize,
    ahead: Option<(PageAhead, Vec<UserId>)>,
) -> ApiResult<(Vec<UserId>, bool, Vec<UserId>)> {
    let Some(FollowerPage { author, after, chunk, pushed_only, must_follow, until }) = page else {
        return Ok((Vec::new(), false, Vec::new()));
    };
    let asked = PageAhead { after, limit: chunk + 1, pushed_only };
    count_page_ahead(ctx, ahead.as_ref().map(|(read, _)| *read == asked));
    let page = match ahead.filter(|(read, _)| *read == asked) {
        // The same rows the query below reads, cut at the segment's end as it would.
        Some((_, rows)) => rows.into_iter().take_while(|f| f.get() <= until).collect(),
        None => {
            outbox::follower_chunk(ctx.user_db(author), author, (after, until), chunk + 1, pushed_only)
                .await?
        }
    };
    let (scanned, more) = within_databases(ctx, split_lookahead(page, chunk), databases);
    let active = outbox::active_among(&ctx.shards, &scanned).await?;
    Ok((scanned, more, also_following(ctx, must_follow, active).await?))
}

/// With `PROFILE_IO`, whether a chunk's page came with its event's read (`Some(true)`), or
/// was read apart: another page was read ahead (`Some(false)`: the message's progress is not
/// where the chunk starts, as for a resent message whose recorded progress is further), or
/// none (`None`: a removal's, or one not on the event's database). A page read apart is a
/// statement more on the author's database (`docs/fanout.md`).
fn count_page_ahead(ctx: &Ctx, matched: Option<bool>) {
    if ctx.config.profile_io {
        let name = match matched {
            Some(true) => "fanout_ahead_page_used",
            Some(false) => "fanout_ahead_page_apart_other",
            None => "fanout_ahead_page_apart_unread",
        };
        tally::add(name, 1);
    }
}

/// A page (and whether more follow it) cut to the readers spanning at most `databases`.
fn within_databases(ctx: &Ctx, (page, more): (Vec<UserId>, bool), databases: usize) -> (Vec<UserId>, bool) {
    let database_of = |reader: &UserId| ctx.shards.index_of(shard_of_id(reader.get()));
    let (page, cut) = cap_databases(page, database_of, databases);
    (page, more || cut)
}

/// A reply's recipients: those of `readers` who also follow the account replied to (`None`:
/// all of them). Read on that account's side, one statement per chunk.
async fn also_following(ctx: &Ctx, account: Option<UserId>, readers: Vec<UserId>) -> ApiResult<Vec<UserId>> {
    let Some(account) = account else { return Ok(readers) };
    let others: Vec<UserId> = readers.iter().copied().filter(|r| *r != account).collect();
    let following: std::collections::HashSet<UserId> = if others.is_empty() {
        Default::default()
    } else {
        graph::followers_among(ctx.user_db(account), account, &others).await?.into_iter().collect()
    };
    // The account replied to is a recipient itself (`domain/replies.rs::in_feed`): without its
    // window entry a reply to it left its home once the in-flight horizon passed.
    Ok(readers.into_iter().filter(|r| *r == account || following.contains(r)).collect())
}

async fn live_page(ctx: &Ctx, page: Option<LivePage>) -> ApiResult<(Vec<UserId>, Option<i64>)> {
    let Some(LivePage { author, after, scan, unpushed_only, must_follow }) = page else {
        return Ok((Vec::new(), None));
    };
    let (readers, next) =
        live::marked_followers(ctx.user_db(author), author, (after, ctx.now), scan, unpushed_only).await?;
    Ok((also_following(ctx, must_follow, readers).await?, next))
}

async fn author_rates(ctx: &Ctx, author: Option<UserId>) -> ApiResult<Option<AuthorRates>> {
    let Some(author) = author else { return Ok(None) };
    let facts = edges::author_facts(ctx.user_db(author), author).await?;
    Ok(facts.map(|f| AuthorRates {
        post_rate: f.post_rate(),
        post_rate_decided: f.post_rate_modes,
        followers_count: f.followers_count,
        push_min_read_rate: f.push_min_read_rate,
    }))
}

async fn has_window(ctx: &Ctx, user: Option<UserId>) -> ApiResult<bool> {
    match user {
        Some(user) => Ok(pull::is_active_reader(ctx.user_db(user), user).await?),
        None => Ok(false),
    }
}
