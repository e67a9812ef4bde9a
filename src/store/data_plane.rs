//! The data script's side of the data plane ([`super::remote`]): its whole fetch handler, which
//! runs a front's statements on one of the databases this script binds and refuses anything
//! else, with a status and never a panic.

use serde_json::Value;
use wasm_bindgen::JsValue;
use worker::{Env, Method, Request, Response};

use super::remote::{Answer, Answered, Call, PATH, TOKEN_HEADER, TOKEN_VAR};
use super::shards::binding;
use super::{d1_message, execute_local, Mode, SqlStatement};

/// The largest body a data script reads (a batch of statements at D1's statement size).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// D1's own limit on bound parameters per statement.
const MAX_PARAMS: usize = 100;

/// The JS value a JSON parameter binds as; `None` for what no binder makes (arrays, objects).
fn js_param(value: &Value) -> Option<JsValue> {
    match value {
        Value::Null => Some(JsValue::NULL),
        Value::Bool(b) => Some(JsValue::from_bool(*b)),
        Value::Number(n) => n.as_f64().map(JsValue::from_f64),
        Value::String(s) => Some(JsValue::from_str(s)),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// Why a data script refused a call (never a panic: every input gets one of these).
struct Refused(u16, String);

/// The data script's whole fetch handler.
pub async fn serve(req: Request, env: &Env) -> worker::Result<Response> {
    match answer(req, env).await {
        Ok(answer) => Response::from_json(&answer),
        Err(Refused(status, why)) => Response::error(why, status),
    }
}

async fn answer(mut req: Request, env: &Env) -> Result<Answer, Refused> {
    let url = req.url().map_err(|_| Refused(400, "bad url".into()))?;
    if req.method() != Method::Post || url.path() != PATH {
        return Err(Refused(404, "not found".into()));
    }
    let expected = env.var(TOKEN_VAR).map(|v| v.to_string()).unwrap_or_default();
    let given = req.headers().get(TOKEN_HEADER).ok().flatten().unwrap_or_default();
    if expected.is_empty() || !same_token(expected.as_bytes(), given.as_bytes()) {
        return Err(Refused(403, "forbidden".into()));
    }
    let body = req.text().await.map_err(|_| Refused(400, "unreadable body".into()))?;
    if body.len() > MAX_BODY_BYTES {
        return Err(Refused(413, "body too large".into()));
    }
    let call: Call = serde_json::from_str(&body).map_err(|e| Refused(400, format!("bad call: {e}")))?;
    let d1 = env
        .d1(&binding(call.database))
        .map_err(|_| Refused(404, format!("DB_{} is not here", call.database)))?;
    let statements = statements_of(&call)?;
    Ok(match execute_local(&d1, call.mode, statements).await {
        Ok(results) => match results.iter().map(Answered::of).collect::<worker::Result<Vec<_>>>() {
            Ok(answered) => Answer::Results(answered),
            Err(e) => Answer::Failed(d1_message(&e)),
        },
        Err(e) => Answer::Failed(d1_message(&e)),
    })
}

/// The call's statements as the store's values, or why not.
fn statements_of(call: &Call) -> Result<Vec<SqlStatement>, Refused> {
    let count = call.statements.len();
    if count == 0 || (call.mode != Mode::Batch && count != 1) {
        return Err(Refused(400, format!("{:?} with {count} statements", call.mode)));
    }
    let mut out = Vec::with_capacity(count);
    for statement in &call.statements {
        if statement.params.len() > MAX_PARAMS {
            return Err(Refused(400, "too many parameters".into()));
        }
        let params = statement.params.iter().map(js_param).collect::<Option<Vec<_>>>();
        let params = params
            .ok_or_else(|| Refused(400, "a parameter is not a number, string, boolean or null".into()))?;
        out.push(SqlStatement::new(statement.sql.clone(), params));
    }
    Ok(out)
}

/// Compares tokens in time independent of where they differ.
fn same_token(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token(b"abc", b"abc"));
        assert!(!same_token(b"abc", b"abd"));
        assert!(!same_token(b"abc", b"ab"));
        assert!(!same_token(b"", b"x"));
    }
}
