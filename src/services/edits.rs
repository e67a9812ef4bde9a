//! What an edit tells others: Mastodon's `update` notification to the accounts that boost the
//! edited post, and a `status.update` frame on the `user` stream of the author and of their
//! followers with a socket open (issue 42).

use futures_util::future::join_all;

use crate::context::Ctx;
use crate::domain::ids::{PostId, UserId};
use crate::domain::live::{Event, TimelineNews};
use crate::domain::shard::group_by_database;
use crate::domain::snowflake::shard_of_id;
use crate::error::ApiResult;
use crate::objects::timeline::Windows;
use crate::store::{edits, live};

/// After an edit that changed what `post` shows: its boosters (the newest
/// [`edits::BOOSTERS_TOLD`]) are notified on their homes, one batch per database. Best effort
/// after the edit's commit: a stop between them loses these notifications, never the edit.
pub async fn tell_boosters(ctx: &Ctx, (post, author): (PostId, UserId)) -> ApiResult<()> {
    let boosters = edits::boosters(ctx.post_db(post), post).await?;
    let homes = boosters.into_iter().filter(|b| *b != author).map(|b| (shard_of_id(b.get()), b));
    let groups: Vec<_> =
        group_by_database(ctx.shard_map(), homes).into_iter().map(|(i, g)| (ctx.database(i), g)).collect();
    let now = ctx.now;
    ctx.shards
        .across(
            groups,
            |db, users| async move { edits::tell_boosters(db, &users, (post, author), now).await },
        )
        .await?;
    Ok(())
}

/// Live readers scanned per page of the live set, and pages scanned per edit: an edit tells at
/// most this many live readers' sockets (the live set is every open socket on the instance, so
/// an unbounded scan would grow with it; past the bound a follower sees the edit on their next
/// read, as after a lost frame).
const LIVE_SCAN: usize = 500;
const LIVE_PAGES: usize = 8;

/// After an edit: the `status.update` frame for the `user` streams of the author and of their
/// followers with a socket open now, each rendered by the reader's window object for that
/// reader when sent (a follower who may no longer see the post gets nothing). Best effort
/// after the answer, as every stream frame.
pub async fn tell_live_followers(ctx: &Ctx, (post, author): (PostId, UserId)) {
    let env = ctx.env.clone();
    ctx.after_response(async move {
        let Ok(ctx) = Ctx::new(env) else { return };
        let mut readers = vec![author];
        let mut after = 0;
        for _ in 0..LIVE_PAGES {
            match live::live_followers_by_lease(&ctx.shards, author, after, ctx.now, LIVE_SCAN, false).await {
                Ok((found, next)) => {
                    readers.extend(found);
                    let Some(next) = next else { break };
                    after = next;
                }
                Err(e) => {
                    worker::console_error!("live followers of {author} not read for an edit: {e}");
                    break;
                }
            }
        }
        let news = TimelineNews {
            post,
            event: Event::StatusUpdate,
            public: false,
            media: false,
            tags: Vec::new(),
            home: true,
        };
        let Ok(windows) = Windows::new(&ctx) else { return };
        let told = join_all(
            readers.iter().map(|&reader| windows.timeline_news(reader, std::slice::from_ref(&news))),
        )
        .await;
        for (reader, result) in readers.iter().zip(told) {
            if let Err(e) = result {
                worker::console_error!("status.update of {post} for {reader} not sent: {e}");
            }
        }
    })
    .await;
}
