//! Abuse limits: which requests count against which Workers rate-limiting binding, by which key.
//!
//! One binding per class, because a binding has a single limit (`[[ratelimits]]` in
//! wrangler.toml: `simple = { limit, period }`, period 10 or 60 s). Writes are keyed by the
//! authenticated user, registration by the client IP. Every request to a limited route counts,
//! including ones later refused for bad input: a flood of bad requests is still a flood.

use super::app::App;
use super::router::{MastodonPublic, MastodonRoute, Own, PublicRoute, Route, UserRoute};
use crate::error::{ApiError, ApiResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitClass {
    /// `POST /v1/users`, per client IP.
    Register,
    /// Publish, edit and delete posts, per user.
    Posts,
    /// Create and delete comments, per user.
    Comments,
    /// Like and unlike, per user.
    Likes,
    /// Follow, unfollow, block and unblock, and list writes (lists and their members), per user.
    Graph,
}

impl LimitClass {
    pub const ALL: [Self; 5] = [Self::Register, Self::Posts, Self::Comments, Self::Likes, Self::Graph];

    /// The `[[ratelimits]]` binding name.
    pub fn binding(self) -> &'static str {
        match self {
            Self::Register => "RL_REGISTER",
            Self::Posts => "RL_POSTS",
            Self::Comments => "RL_COMMENTS",
            Self::Likes => "RL_LIKES",
            Self::Graph => "RL_GRAPH",
        }
    }

    /// The binding's period (wrangler.toml; a unit test keeps them in step). The binding does
    /// not say when its window ends, so `Retry-After` is the whole period: waiting that long
    /// always suffices.
    pub fn period_secs(self) -> u32 {
        60
    }

    /// The limited class of a route, if any (reads and admin routes are not limited).
    pub fn of(route: Route) -> Option<Self> {
        use MastodonPublic as MP;
        use MastodonRoute as M;
        use PublicRoute as P;
        use UserRoute as U;
        match route {
            // Sign-in attempts (password guessing) count against the sign-up limit per address.
            Route::Public(P::Register | P::Mastodon(MP::Apps | MP::Token | MP::Authorize)) => {
                Some(Self::Register)
            }
            Route::User(U::Mastodon(
                M::PostStatus | M::EditStatus(_) | M::DeleteStatus(_) | M::Upload | M::DescribeMedia(_),
            )) => Some(Self::Posts),
            Route::User(U::Mastodon(M::Favourite(..) | M::Own(Own::Bookmark(..)))) => Some(Self::Likes),
            Route::User(U::Mastodon(
                M::AccountAction(..)
                | M::Own(Own::Mute(..))
                | M::CreateList
                | M::UpdateList(_)
                | M::DeleteList(_)
                | M::AddListAccounts(_)
                | M::RemoveListAccounts(_),
            )) => Some(Self::Graph),
            // Uploads count as posts: each stores bytes, so a flood of them is what the limit is for.
            Route::User(U::Publish | U::EditPost(_) | U::DeletePost(_) | U::Upload | U::DescribeMedia(_)) => {
                Some(Self::Posts)
            }
            Route::User(U::CreateComment(_) | U::DeleteComment(_)) => Some(Self::Comments),
            Route::User(U::Like(_) | U::Unlike(_) | U::Bookmark(..) | U::LikeComment(..)) => {
                Some(Self::Likes)
            }
            Route::User(U::Follow(_) | U::Unfollow(_) | U::Block(_) | U::Unblock(_) | U::Mute(..)) => {
                Some(Self::Graph)
            }
            _ => None,
        }
    }
}

/// Counts the request against its class's limit under `key`; over the limit is
/// `429 rate_limited`. Fails open (logs, lets the request through) when the binding is missing
/// or errors: the limiter protects the service, it must not take it down. `RATE_LIMITS=false`
/// switches limiting off (benchmarks).
pub async fn check(app: &App, route: Route, key: &str) -> ApiResult<()> {
    let Some(class) = LimitClass::of(route) else {
        return Ok(());
    };
    if !app.config.rate_limits {
        return Ok(());
    }
    let outcome = match app.env.rate_limiter(class.binding()) {
        Ok(limiter) => limiter.limit(key.to_string()).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(outcome) if !outcome.success => Err(ApiError::RateLimited { retry_after: class.period_secs() }),
        Ok(_) => Ok(()),
        Err(e) => {
            worker::console_error!(
                "rate limiter {} unavailable, letting the request through: {e}",
                class.binding()
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn read_routes_have_no_limit_class() {
        use UserRoute as U;
        let (u, p) = (UserId::from_trusted(1), PostId::from_trusted(2));
        let reads = [U::Me, U::User(u), U::Followers(u), U::Following(u), U::AuthorPosts(u), U::GetPost(p)];
        for r in reads.into_iter().chain([U::Feed, U::Likers(p), U::ListComments(p)]) {
            assert!(r.is_read() && LimitClass::of(Route::User(r)).is_none(), "{r:?}");
        }
        assert!(!U::Publish.is_read() && !U::Like(p).is_read() && !U::Logout.is_read());
    }
    use super::*;
    use crate::domain::ids::{CommentId, PostId, UserId};
    use crate::http::router::{route, AdminRoute};

    #[test]
    fn writes_are_limited_by_class_and_reads_are_not() {
        let (u, p, c) = (UserId::from_trusted(2), PostId::from_trusted(3), CommentId::from_trusted(4));
        let l = crate::domain::ids::ListId::from_trusted(5);
        let cases = [
            (Route::Public(PublicRoute::Register), Some(LimitClass::Register)),
            (Route::User(UserRoute::Publish), Some(LimitClass::Posts)),
            (Route::User(UserRoute::EditPost(p)), Some(LimitClass::Posts)),
            (Route::User(UserRoute::DeletePost(p)), Some(LimitClass::Posts)),
            (Route::User(UserRoute::CreateComment(p)), Some(LimitClass::Comments)),
            (Route::User(UserRoute::DeleteComment(c)), Some(LimitClass::Comments)),
            (Route::User(UserRoute::LikeComment(c, true)), Some(LimitClass::Likes)),
            (Route::User(UserRoute::Like(p)), Some(LimitClass::Likes)),
            (Route::User(UserRoute::Unlike(p)), Some(LimitClass::Likes)),
            (Route::User(UserRoute::Follow(u)), Some(LimitClass::Graph)),
            (Route::User(UserRoute::Unfollow(u)), Some(LimitClass::Graph)),
            (Route::User(UserRoute::Block(u)), Some(LimitClass::Graph)),
            (Route::User(UserRoute::Unblock(u)), Some(LimitClass::Graph)),
            (Route::Public(PublicRoute::Mastodon(MastodonPublic::Token)), Some(LimitClass::Register)),
            (Route::Public(PublicRoute::Mastodon(MastodonPublic::Authorize)), Some(LimitClass::Register)),
            (Route::User(UserRoute::Mastodon(MastodonRoute::PostStatus)), Some(LimitClass::Posts)),
            (Route::User(UserRoute::Mastodon(MastodonRoute::Upload)), Some(LimitClass::Posts)),
            (Route::User(UserRoute::Upload), Some(LimitClass::Posts)),
            (Route::User(UserRoute::Mastodon(MastodonRoute::Favourite(p, true))), Some(LimitClass::Likes)),
            (Route::User(UserRoute::Mastodon(MastodonRoute::HomeTimeline)), None),
            (Route::User(UserRoute::Mastodon(MastodonRoute::CreateList)), Some(LimitClass::Graph)),
            (Route::User(UserRoute::Mastodon(MastodonRoute::AddListAccounts(l))), Some(LimitClass::Graph)),
            (Route::User(UserRoute::Mastodon(MastodonRoute::ListTimeline(l))), None),
            (Route::Public(PublicRoute::Health), None),
            (Route::User(UserRoute::Me), None),
            (Route::User(UserRoute::Logout), None),
            (Route::User(UserRoute::Feed), None),
            (Route::User(UserRoute::GetPost(p)), None),
            (Route::Admin(AdminRoute::ImportPost), None),
            (Route::Admin(AdminRoute::ImportComment), None),
        ];
        for (r, class) in cases {
            assert_eq!(LimitClass::of(r), class, "{r:?}");
        }
        // Every GET in the route table is a read.
        for row in crate::http::router::ROUTES {
            let path = row.pattern.replace("{id}", "7").replace("{hook}", "fault");
            if let Ok(r) = route("GET", &path) {
                assert_eq!(LimitClass::of(r), None, "{}", row.pattern);
            }
        }
    }

    /// Each class's binding exists in wrangler.toml with the period `Retry-After` reports.
    #[test]
    fn bindings_match_wrangler_toml() {
        let toml = include_str!("../../wrangler.toml");
        let blocks: Vec<&str> = toml.split("[[ratelimits]]").skip(1).collect();
        for class in LimitClass::ALL {
            let name = format!("name = \"{}\"", class.binding());
            let block = blocks.iter().find(|b| b.contains(&name));
            let block = block.unwrap_or_else(|| panic!("{} is not in wrangler.toml", class.binding()));
            let period = format!("period = {} }}", class.period_secs());
            assert!(block.contains(&period), "{}: {block}", class.binding());
        }
        assert_eq!(blocks.len(), LimitClass::ALL.len());
    }
}
