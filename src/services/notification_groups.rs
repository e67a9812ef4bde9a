//! A recipient's notifications in groups (Mastodon 4.3's grouped notifications): the page walk
//! of `store/notification_groups.rs`, then each group's figures, less what the read-time rules
//! hide now. Blocks, deleted and taken-down posts and deleted comments are filtered in SQL; a
//! suspended actor (a flag on their own home) is taken out of the group's samples and count
//! here, and a group with no shown actor left is dropped. Only the [`SAMPLE_SCAN`] newest rows
//! of a group are checked for suspension, so beyond them a count may include a suspended
//! actor's like: approximate, and documented (docs/mastodon.md).

use std::collections::{HashMap, HashSet};

use super::notifications::{hydrate, one, with_shown_actors, Hydrated};
use crate::context::Ctx;
use crate::domain::ids::{UserId, MAX_ID};
use crate::domain::notifications::{
    window_ids, GroupKey, GroupQuery, Kind, KindFilter, SAMPLE_ACCOUNTS, SAMPLE_SCAN,
};
use crate::error::ApiResult;
use crate::store::graph::LIST_ROUNDS;
use crate::store::markers::{self, Timeline};
use crate::store::notification_groups::{self as store, Span, WalkRow, ROLE_EDGE, ROLE_GROUPED};
use crate::store::notifications::StoredNotification;
use crate::store::users::{self, UserRow};

/// One group, ready to render.
#[derive(Debug, Clone)]
pub struct Group {
    pub key: GroupKey,
    pub count: i64,
    /// Its newest shown actors, newest first (at most [`SAMPLE_ACCOUNTS`]).
    pub samples: Vec<UserRow>,
    /// Its newest shown notification (the kind, the time, the post or comment).
    pub latest: Hydrated,
    pub page_min_id: i64,
    pub page_max_id: i64,
}

/// A page of groups, newest first, and the ids its `Link` continues from.
#[derive(Debug, Default)]
pub struct GroupPage {
    pub groups: Vec<Group>,
    /// Older groups may exist below `next_max`.
    pub more: bool,
    pub next_max: Option<i64>,
    pub prev_min: Option<i64>,
}

/// What to aggregate: a lone notification, or a group and the page bounds to count it in.
enum Candidate {
    Alone(StoredNotification),
    Group(Span),
}

/// One walk of the range and what it leaves to the next: the representatives to show (at
/// most `need`), whether more lie beyond, and where a next walk would start.
struct Walked {
    reps: Vec<WalkRow>,
    more: bool,
    resume: Option<i64>,
}

async fn walk_once(ctx: &Ctx, recipient: UserId, q: &GroupQuery, need: usize) -> ApiResult<Walked> {
    let rows = store::walk(ctx.shards.user(recipient), recipient, q, need + 1).await?;
    // The walk's own edge and its expanded favourites' (the stricter is where it is complete).
    let edges = rows.iter().filter(|r| r.role == ROLE_EDGE).map(|r| r.id);
    let edge = if q.oldest_first { edges.min() } else { edges.max() };
    let before_edge = |id: i64| edge.is_none_or(|e| if q.oldest_first { id <= e } else { id >= e });
    let mut reps: Vec<WalkRow> =
        rows.into_iter().filter(|r| r.role != ROLE_EDGE && before_edge(r.id)).collect();
    let more = reps.len() > need || edge.is_some();
    reps.truncate(need);
    let resume = reps.last().map(|r| r.id).or(edge);
    Ok(Walked { reps, more, resume })
}

/// Up to `limit` groups of the query's range, newest first. A walk whose groups were all
/// hidden (suspended actors) goes on past them while the page is short (at most
/// [`LIST_ROUNDS`] walks), like `/v1`'s pages.
pub async fn page(ctx: &Ctx, recipient: UserId, q: &GroupQuery, limit: usize) -> ApiResult<GroupPage> {
    let mut q = q.clone();
    let mut out = GroupPage::default();
    for _ in 0..LIST_ROUNDS {
        let walked = walk_once(ctx, recipient, &q, limit - out.groups.len()).await?;
        let ids = walked.reps.iter().map(|r| r.id);
        let (top, bottom) = match q.oldest_first {
            false => (ids.clone().max(), ids.min()),
            true => (ids.max(), Some(q.above + 1)),
        };
        if let (Some(top), Some(bottom)) = (top, bottom) {
            let candidates = walked.reps.iter().map(|r| candidate(&q, r, top, bottom)).collect();
            let built = build(ctx, recipient, candidates).await?;
            // Oldest first, the page reaches down to its groups' oldest ids above `min_id`.
            let oldest =
                built.iter().map(|g| g.page_min_id).min().filter(|_| q.oldest_first).unwrap_or(bottom);
            merge(&mut out.groups, built);
            out.prev_min = Some(out.prev_min.map_or(top, |p| p.max(top)));
            out.next_max = Some(out.next_max.map_or(oldest, |n| n.min(oldest)));
        }
        out.more = walked.more;
        match walked.resume {
            Some(resume) if walked.more && out.groups.len() < limit => {
                if q.oldest_first {
                    q.above = resume;
                } else {
                    q.below = resume;
                    out.next_max = Some(resume);
                }
            }
            _ => break,
        }
    }
    out.groups.sort_by_key(|g| std::cmp::Reverse(g.page_max_id));
    Ok(out)
}

fn candidate(q: &GroupQuery, r: &WalkRow, top: i64, bottom: i64) -> Candidate {
    let stored = stored(r);
    match stored.kind() {
        Some(kind) if r.role == ROLE_GROUPED => {
            Candidate::Group(Span { key: q.key_of(r.id, kind, r.post_id), top, bottom })
        }
        _ => Candidate::Alone(stored),
    }
}

/// A later walk of one page may meet a group again (its older rows): one entry, whose page
/// reaches down to them.
fn merge(groups: &mut Vec<Group>, more: Vec<Group>) {
    for g in more {
        match groups.iter_mut().find(|have| have.key == g.key) {
            Some(have) => have.page_min_id = have.page_min_id.min(g.page_min_id),
            None => groups.push(g),
        }
    }
}

/// One group of the recipient, whole (no page bounds), or `None` when nothing of it is shown.
pub async fn group(ctx: &Ctx, recipient: UserId, key: GroupKey) -> ApiResult<Option<Group>> {
    let candidate = match key {
        GroupKey::Ungrouped(id) => match one(ctx, recipient, id).await? {
            Some(n) => return Ok(Some(alone(n))),
            None => return Ok(None),
        },
        GroupKey::Grouped { window, .. } => {
            Candidate::Group(Span { key, top: MAX_ID, bottom: window_ids(window).0 })
        }
    };
    Ok(build(ctx, recipient, vec![candidate]).await?.pop())
}

fn alone(n: Hydrated) -> Group {
    Group {
        key: GroupKey::Ungrouped(n.id),
        count: 1,
        samples: vec![n.actor.clone()],
        page_min_id: n.id,
        page_max_id: n.id,
        latest: n,
    }
}

/// A group's shown actors, newest first, at most `limit`; `None` when none is shown.
pub async fn accounts(
    ctx: &Ctx,
    recipient: UserId,
    key: GroupKey,
    limit: usize,
) -> ApiResult<Option<Vec<UserRow>>> {
    if let GroupKey::Ungrouped(id) = key {
        return Ok(one(ctx, recipient, id).await?.map(|n| vec![n.actor]));
    }
    let ids = store::actors(ctx.shards.user(recipient), recipient, key, limit).await?;
    let shown = users::shown_by_ids(&ctx.shards, &ids).await?;
    let ordered: Vec<UserRow> =
        ids.iter().filter_map(|id| shown.iter().find(|u| u.id == *id).cloned()).collect();
    Ok((!ordered.is_empty()).then_some(ordered))
}

/// Dismisses every notification of the group (none is an answer too, as in Mastodon).
pub async fn dismiss(ctx: &Ctx, recipient: UserId, key: GroupKey) -> ApiResult<()> {
    let db = ctx.shards.user(recipient);
    match key {
        GroupKey::Ungrouped(id) => super::notifications::dismiss(ctx, recipient, id).await.map(|_| ()),
        GroupKey::Grouped { .. } => Ok(store::dismiss(db, recipient, key).await?),
    }
}

/// How many groups have a shown notification above the recipient's `notifications` marker,
/// counting at most `cap`. A group whose newest unread actor is suspended counts when one of
/// its [`SAMPLE_SCAN`] newest is shown and above the marker.
pub async fn unread(
    ctx: &Ctx,
    recipient: UserId,
    kinds: &KindFilter,
    grouped: Vec<Kind>,
    cap: usize,
) -> ApiResult<usize> {
    let db = ctx.shards.user(recipient);
    let marker = markers::get(db, recipient, &[Timeline::Notifications]).await?;
    let above = marker.first().map_or(0, |m| m.last_read_id);
    let q = GroupQuery { kinds: kinds.clone(), grouped, below: MAX_ID, above, oldest_first: false };
    let reps = walk_once(ctx, recipient, &q, cap).await?.reps;
    let shown = with_shown_actors(ctx, reps.iter().map(stored).collect()).await?;
    let shown_ids: HashSet<i64> = shown.iter().map(|(r, _)| r.id).collect();
    let retry: Vec<Candidate> = reps
        .iter()
        .filter(|r| r.role == ROLE_GROUPED && !shown_ids.contains(&r.id))
        .map(|r| candidate(&q, r, MAX_ID, above + 1))
        .collect();
    let rescued = match retry.is_empty() {
        true => 0,
        false => build(ctx, recipient, retry).await?.iter().filter(|g| g.latest.id > above).count(),
    };
    Ok(shown.len() + rescued)
}

fn stored(r: &WalkRow) -> StoredNotification {
    StoredNotification {
        id: r.id,
        kind: r.kind.clone(),
        actor_id: r.actor_id,
        post_id: r.post_id,
        comment_id: r.comment_id,
    }
}

/// The groups of these candidates, in their order: the aggregates in one read, the actors in
/// one more, then the newest shown notification of each with its post or comment.
async fn build(ctx: &Ctx, recipient: UserId, candidates: Vec<Candidate>) -> ApiResult<Vec<Group>> {
    let db = ctx.shards.user(recipient);
    let spans: Vec<Span> = candidates
        .iter()
        .filter_map(|c| if let Candidate::Group(s) = c { Some(s.clone()) } else { None })
        .collect();
    let parsed = parse(store::aggregates(db, recipient, &spans).await?);
    let mut actor_ids: Vec<UserId> =
        parsed.values().flat_map(|(_, s, _)| s.iter().map(|(_, a)| *a)).collect();
    actor_ids.extend(candidates.iter().filter_map(|c| {
        if let Candidate::Alone(n) = c {
            Some(n.actor_id)
        } else {
            None
        }
    }));
    actor_ids.sort_unstable();
    actor_ids.dedup();
    let shown: HashMap<UserId, UserRow> =
        users::shown_by_ids(&ctx.shards, &actor_ids).await?.into_iter().map(|u| (u.id, u)).collect();
    let drafts: Vec<Draft> = candidates.into_iter().filter_map(|c| draft(c, &parsed, &shown)).collect();
    let latest =
        hydrate(ctx, recipient, drafts.iter().map(|d| (d.latest.clone(), d.samples[0].clone())).collect())
            .await?;
    Ok(drafts
        .into_iter()
        .filter_map(|d| {
            let latest = latest.iter().find(|n| n.id == d.latest.id)?.clone();
            let page_max_id = latest.id;
            Some(Group {
                key: d.key,
                count: d.count,
                samples: d.samples,
                latest,
                page_min_id: d.page_min_id,
                page_max_id,
            })
        })
        .collect())
}

/// The groups' figures by key: a group's rows and its likes (migration 0048) merged.
fn parse(aggregates: Vec<store::Aggregate>) -> Parsed {
    let mut parsed = Parsed::new();
    for a in aggregates {
        let mut samples: Vec<(i64, i64)> = serde_json::from_str(&a.samples).unwrap_or_default();
        let likes: Vec<(i64, i64)> = serde_json::from_str(&a.like_samples).unwrap_or_default();
        samples.extend(likes);
        samples.sort_unstable_by_key(|(id, _)| std::cmp::Reverse(*id));
        samples.truncate(SAMPLE_SCAN);
        let samples = samples.into_iter().map(|(id, actor)| (id, UserId::from_trusted(actor))).collect();
        let page_min_id = a.page_min_id.into_iter().chain(a.like_page_min_id).min();
        parsed.insert(a.key, (a.count + a.like_count, samples, page_min_id));
    }
    parsed
}

/// A group before its notification is hydrated.
struct Draft {
    key: GroupKey,
    count: i64,
    samples: Vec<UserRow>,
    latest: StoredNotification,
    page_min_id: i64,
}

type Parsed = HashMap<String, (i64, Vec<(i64, UserId)>, Option<i64>)>;

/// A candidate's shown figures: suspended actors leave the samples and the count; `None`
/// when none is left.
fn draft(c: Candidate, parsed: &Parsed, shown: &HashMap<UserId, UserRow>) -> Option<Draft> {
    let span = match c {
        Candidate::Alone(n) => {
            let actor = shown.get(&n.actor_id)?.clone();
            let key = GroupKey::Ungrouped(n.id);
            return Some(Draft { key, count: 1, samples: vec![actor], page_min_id: n.id, latest: n });
        }
        Candidate::Group(span) => span,
    };
    let GroupKey::Grouped { kind, post_id, .. } = span.key else { return None };
    let (count, samples, page_min_id) = parsed.get(&span.key.to_string())?;
    let visible: Vec<&(i64, UserId)> = samples.iter().filter(|(_, a)| shown.contains_key(a)).collect();
    let (newest, actor) = **visible.first()?;
    let hidden = (samples.len() - visible.len()) as i64;
    let latest = StoredNotification {
        id: newest,
        kind: kind.as_str().to_string(),
        actor_id: actor,
        post_id,
        comment_id: 0,
    };
    Some(Draft {
        key: span.key,
        count: (count - hidden).max(visible.len() as i64),
        samples: visible.iter().take(SAMPLE_ACCOUNTS).filter_map(|(_, a)| shown.get(a).cloned()).collect(),
        page_min_id: page_min_id.unwrap_or(newest).min(newest),
        latest,
    })
}

const _: () = assert!(SAMPLE_ACCOUNTS <= SAMPLE_SCAN);
