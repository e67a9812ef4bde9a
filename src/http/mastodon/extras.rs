//! A status's extras (issue 42): its edit history and source, the viewer's mute of its
//! conversation, the author's pin (`services/post_extras.rs`), its poll (`services/polls.rs`).

use worker::Response;

use super::entities::{Poll, StatusEdit, StatusSource};
use super::statuses::{answer, target, Target};
use super::{accounts_of, json};
use crate::domain::ids::{PostId, UserId};
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::StatusExtra;
use crate::services::{polls, post_extras};

pub async fn route(app: &App, input: &Input, viewer: UserId, route: StatusExtra) -> ApiResult<Response> {
    match route {
        StatusExtra::History(id) => history(app, input, viewer, id).await,
        StatusExtra::Source(id) => source(app, viewer, id).await,
        StatusExtra::Mute(id, on) => {
            let post = post_extras::mute_conversation(app, viewer, id, on).await?;
            answer(app, input, viewer, &Target::Post(post)).await
        }
        StatusExtra::Pin(id, on) => {
            let post = post_extras::pin(app, viewer, id, on).await?;
            answer(app, input, viewer, &Target::Post(post)).await
        }
        StatusExtra::Poll(id) => {
            let (post, poll) = polls::get(app, viewer, id).await?;
            json(&Poll::new(&post, &poll, viewer, app.now))
        }
        StatusExtra::Vote(id) => {
            let (post, poll) = polls::vote(app, viewer, id, &input.values_of("choices")?).await?;
            json(&Poll::new(&post, &poll, viewer, app.now))
        }
    }
}

/// `GET .../history`: every version, oldest first, the original first and the current one
/// last (a status never edited has one). A reply of the old kind (a comment) keeps no versions:
/// its current one.
async fn history(app: &App, input: &Input, viewer: UserId, id: PostId) -> ApiResult<Response> {
    let (post, versions) = match target(app, viewer, id).await? {
        Target::Post(_) => post_extras::history(app, viewer, id).await?,
        Target::Comment(c, _) => {
            let accounts = accounts_of(app, input, vec![c.author_id]).await?;
            let Some(account) = accounts.get(&c.author_id) else { return json(&Vec::<StatusEdit>::new()) };
            let current = (c.body.as_str(), c.spoiler_text.as_str(), c.sensitive);
            let made = c.edited_at.unwrap_or(c.created_at);
            return json(&[StatusEdit::new(&input.origin, account, current, made, &[])]);
        }
    };
    let accounts = accounts_of(app, input, vec![post.author_id]).await?;
    let Some(account) = accounts.get(&post.author_id) else { return json(&Vec::<StatusEdit>::new()) };
    let media = post.attachments();
    let mut made = post.created_at;
    let mut edits = Vec::with_capacity(versions.len() + 1);
    for v in &versions {
        let shown = (v.body.as_str(), v.spoiler_text.as_str(), v.is_sensitive());
        edits.push(StatusEdit::new(&input.origin, account, shown, made, &media));
        made = v.replaced_at;
    }
    let current = (post.body.as_str(), post.spoiler_text.as_str(), post.is_sensitive());
    edits.push(StatusEdit::new(&input.origin, account, current, made, &media));
    json(&edits)
}

/// `GET .../source`: for anyone who may read the status (as Mastodon answers it).
async fn source(app: &App, viewer: UserId, id: PostId) -> ApiResult<Response> {
    match target(app, viewer, id).await? {
        Target::Post(post) => json(&StatusSource::new(id, &post.body, &post.spoiler_text)),
        Target::Comment(c, _) => json(&StatusSource::new(id, &c.body, &c.spoiler_text)),
    }
}
