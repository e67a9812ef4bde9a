//! The viewer's own collections (`router::Own`): bookmarks and favourites (`saved.rs`) and
//! mutes (`mutes.rs`) and blocks (`relations.rs`), one arm of `mastodon::user`.

use worker::Response;

use super::{mutes, relations, saved};
use crate::domain::ids::UserId;
use crate::error::ApiResult;
use crate::http::app::App;
use crate::http::input::Input;
use crate::http::router::Own;
use crate::services::saved::Saved;

pub async fn route(app: &App, input: &Input, viewer: UserId, route: Own) -> ApiResult<Response> {
    match route {
        Own::Bookmark(id, on) => saved::bookmark(app, input, viewer, id, on).await,
        Own::Bookmarks => saved::list_of(app, input, viewer, Saved::Bookmarks).await,
        Own::Favourites => saved::list_of(app, input, viewer, Saved::Favourites).await,
        Own::Mute(id, true) => mutes::mute(app, input, viewer, id).await,
        Own::Mute(id, false) => mutes::unmute(app, viewer, id).await,
        Own::Mutes => mutes::muted_accounts(app, input, viewer).await,
        Own::Blocks => relations::blocked_accounts(app, input, viewer).await,
    }
}
