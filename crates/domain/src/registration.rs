//! Registering an account through the Mastodon API (`POST /api/v1/accounts`): the rules of
//! `POST /v1/users` (the handle's pattern, the password's length), Mastodon's other parameters
//! (`email`, `agreement`), and every problem reported at once in Mastodon's error shape
//! (`{"error": "Validation failed: ...", "details": {"field": [{"error", "description"}]}}`).

use serde_json::{json, Map, Value};

use crate::validate::Handle;

/// One problem with one parameter, as Mastodon names it (`ERR_BLANK`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub field: &'static str,
    pub error: &'static str,
    pub description: String,
}

fn problem(field: &'static str, error: &'static str, description: impl Into<String>) -> Problem {
    Problem { field, error, description: description.into() }
}

/// A registration whose parameters are all valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    pub handle: Handle,
    pub password: String,
}

/// What a registration sends (each as given; `None`: absent).
pub struct Given<'a> {
    pub username: Option<&'a str>,
    pub email: Option<&'a str>,
    pub password: Option<&'a str>,
    pub agreement: Option<&'a str>,
}

const BLANK: &str = "can't be blank";

fn username(given: &str) -> Result<Handle, Problem> {
    let given = given.trim();
    if given.is_empty() {
        return Err(problem("username", "ERR_BLANK", BLANK));
    }
    if given.chars().count() > 30 {
        return Err(problem("username", "ERR_TOO_LONG", "is too long (maximum is 30 characters)"));
    }
    Handle::parse(&given.to_ascii_lowercase())
        .map_err(|_| problem("username", "ERR_INVALID", "must be 3 to 30 letters, numbers and underscores"))
}

/// An address: something before one `@`, a domain with a dot after it, no spaces.
fn email_valid(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else { return false };
    !local.is_empty()
        && email.len() <= 320
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn email_problems(email: &str) -> Vec<Problem> {
    let email = email.trim();
    let mut out = Vec::new();
    if email.is_empty() {
        out.push(problem("email", "ERR_BLANK", BLANK));
    }
    if !email_valid(email) {
        out.push(problem("email", "ERR_INVALID", "is invalid"));
    }
    out
}

fn password(given: &str) -> Result<String, Problem> {
    if given.is_empty() {
        return Err(problem("password", "ERR_BLANK", BLANK));
    }
    crate::password::acceptable(given).map(|()| given.to_owned()).map_err(|reason| {
        let error = if reason.contains("least") { "ERR_TOO_SHORT" } else { "ERR_TOO_LONG" };
        problem("password", error, reason)
    })
}

/// Checks every parameter; all the problems when any is wrong.
pub fn check(given: &Given<'_>) -> Result<Registration, Vec<Problem>> {
    let mut problems = Vec::new();
    if !given.agreement.and_then(crate::mastodon::form_bool).unwrap_or(false) {
        problems.push(problem("agreement", "ERR_ACCEPTED", "must be accepted"));
    }
    problems.extend(email_problems(given.email.unwrap_or("")));
    let password = password(given.password.unwrap_or("")).map_err(|p| problems.push(p)).ok();
    let handle = username(given.username.unwrap_or("")).map_err(|p| problems.push(p)).ok();
    match (handle, password) {
        (Some(handle), Some(password)) if problems.is_empty() => Ok(Registration { handle, password }),
        _ => Err(problems),
    }
}

/// The handle someone already holds, as Mastodon reports it.
pub fn taken() -> Vec<Problem> {
    vec![problem("username", "ERR_TAKEN", "has already been taken")]
}

/// Mastodon's 422 body for these problems.
pub fn error_body(problems: &[Problem]) -> Value {
    let mut details = Map::new();
    for p in problems {
        let entry = json!({ "error": p.error, "description": p.description });
        match details.get_mut(p.field) {
            Some(Value::Array(list)) => list.push(entry),
            _ => {
                details.insert(p.field.to_owned(), json!([entry]));
            }
        }
    }
    let summary: Vec<String> =
        problems.iter().map(|p| format!("{} {}", capitalized(p.field), p.description)).collect();
    json!({ "error": format!("Validation failed: {}", summary.join(", ")), "details": details })
}

fn capitalized(field: &str) -> String {
    let mut chars = field.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given<'a>(username: &'a str, email: &'a str, password: &'a str, agreement: &'a str) -> Given<'a> {
        Given {
            username: Some(username),
            email: Some(email),
            password: Some(password),
            agreement: Some(agreement),
        }
    }

    #[test]
    fn a_valid_registration() {
        let ok = check(&given("NewUser_1", "a@example.com", "long enough pass", "true")).unwrap();
        assert_eq!(ok.handle.as_str(), "newuser_1");
    }

    #[test]
    fn masto_js_malformed_case_gets_mastodons_details() {
        let problems = check(&given("", "", "", "false")).unwrap_err();
        let body = error_body(&problems);
        assert_eq!(
            body["details"],
            json!({
                "agreement": [{ "error": "ERR_ACCEPTED", "description": "must be accepted" }],
                "email": [
                    { "error": "ERR_BLANK", "description": "can't be blank" },
                    { "error": "ERR_INVALID", "description": "is invalid" },
                ],
                "password": [{ "error": "ERR_BLANK", "description": "can't be blank" }],
                "username": [{ "error": "ERR_BLANK", "description": "can't be blank" }],
            })
        );
        assert!(body["error"].as_str().unwrap().starts_with("Validation failed: Agreement must be accepted"));
    }

    #[test]
    fn the_v1_rules_apply() {
        let short = check(&given("someone", "a@b.co", "short", "1")).unwrap_err();
        assert_eq!(
            short,
            vec![problem("password", "ERR_TOO_SHORT", "password must be at least 10 characters")]
        );
        let bad = check(&given("no spaces", "a@b.co", "long enough pass", "1")).unwrap_err();
        assert_eq!(bad[0].error, "ERR_INVALID");
        let email = check(&given("someone", "not an email", "long enough pass", "1")).unwrap_err();
        assert_eq!(email, vec![problem("email", "ERR_INVALID", "is invalid")]);
        assert!(check(&given("someone", "a@b.co", "long enough pass", "")).is_err());
    }
}
