//! Path + method -> `Route`. Pure, so every route and every 404/405 is unit-tested natively.

use crate::domain::ids::parse_id;
use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Health,
    Register,
    Me,
    User(i64),
    Follow(i64),
    Unfollow(i64),
    Followers(i64),
    Following(i64),
    Block(i64),
    Unblock(i64),
    Publish,
    GetPost(i64),
    EditPost(i64),
    DeletePost(i64),
    AuthorPosts(i64),
    Feed,
    Like(i64),
    Unlike(i64),
    Likers(i64),
    CreateComment(i64),
    ListComments(i64),
    DeleteComment(i64),
    AdminImportPost,
    AdminImportComment,
    AdminStats,
    AdminReconcile,
    /// Test-only hooks (fault injection, replay); answer 404 unless `TEST_HOOKS` is on.
    AdminTest(TestHook),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestHook {
    Fault,
    ReplayOutbox,
    OutboxState,
    WindowState,
    Drift,
}

fn pick(method: &str, choices: &[(&'static str, Route)]) -> Result<Route, ApiError> {
    choices.iter().find(|(m, _)| *m == method).map(|(_, r)| *r).ok_or(ApiError::MethodNotAllowed {
        allow: match choices {
            [(a, _)] => a,
            [("PUT", _), ("DELETE", _)] => "PUT, DELETE",
            [("GET", _), ("PATCH", _), ("DELETE", _)] => "GET, PATCH, DELETE",
            [("GET", _), ("POST", _)] => "GET, POST",
            _ => "GET",
        },
    })
}

/// An id segment that does not parse names nothing that exists: 404, like a missing id.
fn id(seg: &str) -> Result<i64, ApiError> {
    parse_id(seg).ok_or(ApiError::NotFound("no such resource"))
}

pub fn route(method: &str, path: &str) -> Result<Route, ApiError> {
    use Route::*;
    let path = path.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(path);
    let segs: Vec<&str> = path.split('/').skip(1).collect();
    match segs.as_slice() {
        ["v1", "health"] => pick(method, &[("GET", Health)]),
        ["v1", "users"] => pick(method, &[("POST", Register)]),
        ["v1", "me"] => pick(method, &[("GET", Me)]),
        ["v1", "users", u] => pick(method, &[("GET", User(id(u)?))]),
        ["v1", "users", u, "followers"] => pick(method, &[("GET", Followers(id(u)?))]),
        ["v1", "users", u, "following"] => pick(method, &[("GET", Following(id(u)?))]),
        ["v1", "users", u, "posts"] => pick(method, &[("GET", AuthorPosts(id(u)?))]),
        ["v1", "me", "following", u] => {
            let u = id(u)?;
            pick(method, &[("PUT", Follow(u)), ("DELETE", Unfollow(u))])
        }
        ["v1", "me", "blocks", u] => {
            let u = id(u)?;
            pick(method, &[("PUT", Block(u)), ("DELETE", Unblock(u))])
        }
        ["v1", "posts"] => pick(method, &[("POST", Publish)]),
        ["v1", "posts", p] => {
            let p = id(p)?;
            pick(method, &[("GET", GetPost(p)), ("PATCH", EditPost(p)), ("DELETE", DeletePost(p))])
        }
        ["v1", "posts", p, "like"] => {
            let p = id(p)?;
            pick(method, &[("PUT", Like(p)), ("DELETE", Unlike(p))])
        }
        ["v1", "posts", p, "likes"] => pick(method, &[("GET", Likers(id(p)?))]),
        ["v1", "posts", p, "comments"] => {
            let p = id(p)?;
            pick(method, &[("GET", ListComments(p)), ("POST", CreateComment(p))])
        }
        ["v1", "comments", c] => pick(method, &[("DELETE", DeleteComment(id(c)?))]),
        ["v1", "feed"] => pick(method, &[("GET", Feed)]),
        ["v1", "admin", "import", "posts"] => pick(method, &[("POST", AdminImportPost)]),
        ["v1", "admin", "import", "comments"] => pick(method, &[("POST", AdminImportComment)]),
        ["v1", "admin", "stats"] => pick(method, &[("GET", AdminStats)]),
        ["v1", "admin", "reconcile"] => pick(method, &[("POST", AdminReconcile)]),
        ["v1", "admin", "test", "fault"] => pick(method, &[("POST", AdminTest(TestHook::Fault))]),
        ["v1", "admin", "test", "replay"] => pick(method, &[("POST", AdminTest(TestHook::ReplayOutbox))]),
        ["v1", "admin", "test", "outbox"] => pick(method, &[("POST", AdminTest(TestHook::OutboxState))]),
        ["v1", "admin", "test", "drift"] => pick(method, &[("POST", AdminTest(TestHook::Drift))]),
        ["v1", "admin", "test", "window"] => pick(method, &[("POST", AdminTest(TestHook::WindowState))]),
        _ => Err(ApiError::NotFound("no such route")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_resolve() {
        assert_eq!(route("GET", "/v1/health").ok(), Some(Route::Health));
        assert_eq!(route("GET", "/v1/health/").ok(), Some(Route::Health));
        assert_eq!(route("PUT", "/v1/me/following/12").ok(), Some(Route::Follow(12)));
        assert_eq!(route("DELETE", "/v1/me/following/12").ok(), Some(Route::Unfollow(12)));
        assert_eq!(route("PATCH", "/v1/posts/9").ok(), Some(Route::EditPost(9)));
        assert_eq!(route("GET", "/v1/posts/9/comments").ok(), Some(Route::ListComments(9)));
        assert_eq!(route("POST", "/v1/posts/9/comments").ok(), Some(Route::CreateComment(9)));
        assert_eq!(route("GET", "/v1/users/3/posts").ok(), Some(Route::AuthorPosts(3)));
    }

    #[test]
    fn unknown_paths_and_bad_ids_are_404() {
        for path in ["/", "/v1", "/v2/health", "/v1/users/abc", "/v1/posts/0", "/v1/posts/1/x"] {
            assert_eq!(route("GET", path).unwrap_err().status(), 404, "{path}");
        }
    }

    #[test]
    fn wrong_methods_are_405() {
        let err = route("POST", "/v1/health").unwrap_err();
        assert_eq!(err.status(), 405);
        assert!(matches!(
            route("GET", "/v1/me/following/1").unwrap_err(),
            ApiError::MethodNotAllowed { allow: "PUT, DELETE" }
        ));
    }
}
