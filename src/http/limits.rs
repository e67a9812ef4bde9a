//! Abuse limits: which requests count against which Workers rate-limiting binding, by which key.
//!
//! One binding per class, because a binding has a single limit (`[[ratelimits]]` in
//! wrangler.toml: `simple = { limit, period }`, period 10 or 60 s). Writes are keyed by the
//! authenticated user, registration by the client IP. Every request to a limited route counts,
//! including ones later refused for bad input: a flood of bad requests is still a flood.

use super::app::App;
use crate::error::{ApiError, ApiResult};

/// An endpoint's rate limit, declared on its row of the route table (`http/router.rs`): a class,
/// or none. Always said: there is no default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Class(LimitClass),
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitClass {
    /// `POST /v1/users`, and Mastodon's app registration and sign-in (password guessing), per
    /// client IP.
    Register,
    /// Publish, edit and delete posts, upload and describe media, per user.
    Posts,
    /// Create and delete comments, per user.
    Comments,
    /// Like and unlike posts and comments, bookmarks, per user.
    Likes,
    /// Follow, unfollow, block, unblock, mute and unmute, and list writes (lists and their
    /// members), per user.
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
}

/// Counts the request against its class's limit under `key`; over the limit is
/// `429 rate_limited`. Fails open (logs, lets the request through) when the binding is missing
/// or errors: the limiter protects the service, it must not take it down. `RATE_LIMITS=false`
/// switches limiting off (benchmarks).
pub async fn check(app: &App, limit: Limit, key: &str) -> ApiResult<()> {
    let Limit::Class(class) = limit else {
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
    use super::*;

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
