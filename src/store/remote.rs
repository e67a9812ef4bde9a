//! The data plane: a deployment with more D1 databases than one Worker script may bind (about
//! 5,000 bindings a script) splits them over *data scripts*, each binding a contiguous range
//! `DB_i` (ARCHITECTURE.md "More than one Worker script"). A data script is this same bundle
//! with `ROLE = "data"`: it answers only [`PATH`], which runs statements on one of its
//! databases, and refuses everything else. The front Worker reaches it over a service binding
//! (`DATA_k` holds databases `k*M .. k*M+M-1`, `M = DATA_PER_SCRIPT`), through [`DataScript`],
//! the remote backend of [`super::Db`]: the same statements, the same atomic batches (the data
//! script runs a batch as one D1 batch), the same error texts and the same D1 meta come back,
//! so nothing above `Db` can tell the two apart.
//!
//! Bodies are parsed with `serde_json` (never JS's `JSON.parse`, which turns integers above
//! 2^53 into floats); bound values travel as JSON numbers, strings, booleans and nulls, exactly
//! the JS values the local path binds (D1 binds every number as an f64).

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsValue;
use worker::{Env, Fetcher, Headers, Method, Request, RequestInit};

use super::{error, Mode, SqlResult, SqlStatement, StoreError, StoreResult};

/// The one path a data script answers.
pub const PATH: &str = "/internal/d1";
/// The header carrying the shared token ([`TOKEN_VAR`]): defence in depth, as a data script has
/// no public route and only the front holds a service binding to it.
pub const TOKEN_HEADER: &str = "x-edgefeed-data-token";
/// The secret (or, in generated local configs, var) both the front and every data script hold.
/// A data script without it refuses every call.
pub const TOKEN_VAR: &str = "DATA_PLANE_TOKEN";
/// The var that makes this bundle a data script.
pub const ROLE_VAR: &str = "ROLE";
/// 2^53 - 1: the integers an f64 holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Whether this invocation runs as a data script (`ROLE = "data"`).
pub fn is_data_script(env: &Env) -> bool {
    env.var(ROLE_VAR).map(|v| v.to_string() == "data").unwrap_or(false)
}

/// The data script holding some databases, as the front reaches it.
#[derive(Clone)]
pub struct DataScript {
    fetcher: Fetcher,
    /// Which binding (`DATA_k`), for the logs.
    name: Rc<str>,
    token: Rc<str>,
}

/// One call: statements for one database.
#[derive(Serialize, Deserialize)]
pub(super) struct Call {
    pub(super) database: usize,
    pub(super) mode: Mode,
    pub(super) statements: Vec<WireStatement>,
}

#[derive(Serialize, Deserialize)]
pub(super) struct WireStatement {
    pub(super) sql: String,
    pub(super) params: Vec<Value>,
}

/// What a data script answers (200): D1's results, or the text of D1's failure (classified by
/// the front exactly as a local failure, [`error::classify`]).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Answer {
    Results(Vec<Answered>),
    Failed(String),
}

/// One statement's result as the data script saw it.
#[derive(Serialize, Deserialize)]
pub struct Answered {
    rows: Vec<Value>,
    meta: WireMeta,
}

/// D1's meta, field for field (`worker::D1ResultMeta` is not serializable).
#[derive(Serialize, Deserialize, Default)]
struct WireMeta {
    changed_db: Option<bool>,
    changes: Option<usize>,
    duration: Option<f64>,
    last_row_id: Option<i64>,
    rows_read: Option<usize>,
    rows_written: Option<usize>,
    size_after: Option<usize>,
}

impl Answered {
    pub fn results<T: serde::de::DeserializeOwned>(&self) -> worker::Result<Vec<T>> {
        self.rows
            .iter()
            .map(|row| T::deserialize(row).map_err(|e| worker::Error::RustError(e.to_string())))
            .collect()
    }

    pub fn meta(&self) -> worker::D1ResultMeta {
        let m = &self.meta;
        worker::D1ResultMeta {
            changed_db: m.changed_db,
            changes: m.changes,
            duration: m.duration,
            last_row_id: m.last_row_id,
            rows_read: m.rows_read,
            rows_written: m.rows_written,
            size_after: m.size_after,
        }
    }

    pub(super) fn of(result: &worker::D1Result) -> worker::Result<Self> {
        let meta = result.meta()?.map(|m| WireMeta {
            changed_db: m.changed_db,
            changes: m.changes,
            duration: m.duration,
            last_row_id: m.last_row_id,
            rows_read: m.rows_read,
            rows_written: m.rows_written,
            size_after: m.size_after,
        });
        Ok(Self { rows: result.results()?, meta: meta.unwrap_or_default() })
    }
}

impl DataScript {
    pub fn new(fetcher: Fetcher, name: Rc<str>, token: Rc<str>) -> Self {
        Self { fetcher, name, token }
    }

    /// Runs `statements` on database `database` of this script. A script that cannot be reached
    /// or fails as a whole is the database being unavailable; D1's own failure comes back as
    /// its text and is classified as it would be locally.
    pub async fn call(
        &self,
        database: usize,
        mode: Mode,
        statements: Vec<SqlStatement>,
    ) -> StoreResult<Vec<SqlResult>> {
        let statements = statements.iter().map(wire_statement).collect::<StoreResult<Vec<_>>>()?;
        let body = serde_json::to_string(&Call { database, mode, statements })
            .map_err(|e| StoreError::Internal(format!("a D1 call did not serialize: {e}")))?;
        let unavailable = |why: String| StoreError::Unavailable {
            database,
            detail: format!("DB_{database} on {}: {why}", self.name),
        };
        let mut response =
            self.fetcher.fetch_request(self.request(&body)?).await.map_err(|e| unavailable(e.to_string()))?;
        let status = response.status_code();
        let text = response.text().await.map_err(|e| unavailable(e.to_string()))?;
        if status != 200 {
            let detail = format!("DB_{database} on {}: {status} {text}", self.name);
            return Err(if status >= 500 {
                StoreError::Unavailable { database, detail }
            } else {
                StoreError::Misconfigured(detail)
            });
        }
        match serde_json::from_str::<Answer>(&text) {
            Ok(Answer::Results(results)) => Ok(results.into_iter().map(SqlResult::Remote).collect()),
            Ok(Answer::Failed(message)) => {
                Err(error::classify(&message, database, format!("DB_{database}: {message}")))
            }
            Err(e) => {
                Err(StoreError::Internal(format!("DB_{database} on {}: unreadable answer: {e}", self.name)))
            }
        }
    }

    fn request(&self, body: &str) -> StoreResult<Request> {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        headers.set(TOKEN_HEADER, &self.token)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_headers(headers).with_body(Some(JsValue::from_str(body)));
        Ok(Request::new_with_init(&format!("https://data-plane{PATH}"), &init)?)
    }
}

/// A bound value as JSON: what `int`, `text` and the other binders make (numbers are f64, as
/// D1 binds them).
fn wire_param(value: &JsValue) -> StoreResult<Value> {
    if value.is_null() || value.is_undefined() {
        return Ok(Value::Null);
    }
    if let Some(n) = value.as_f64() {
        // Integers (every id and time) as JSON integers: exact whatever parses them.
        if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
            return Ok(Value::from(n as i64));
        }
        return serde_json::Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| StoreError::Internal(format!("a bound number D1 cannot take: {n}")));
    }
    if let Some(s) = value.as_string() {
        return Ok(Value::String(s));
    }
    value
        .as_bool()
        .map(Value::Bool)
        .ok_or_else(|| StoreError::Internal("a bound value D1 cannot take".into()))
}

fn wire_statement(statement: &SqlStatement) -> StoreResult<WireStatement> {
    let params = statement.params().iter().map(wire_param).collect::<StoreResult<Vec<_>>>()?;
    Ok(WireStatement { sql: statement.sql().to_owned(), params })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_round_trips_its_json_with_exact_integers() {
        let text = r#"{"database":3,"mode":"batch","statements":[{"sql":"SELECT ?1","params":[9007199254740991.0,"x",null]}]}"#;
        let call: Call = serde_json::from_str(text).expect("parses");
        assert_eq!((call.database, call.mode), (3, Mode::Batch));
        let n = call.statements[0].params[0].as_f64();
        assert_eq!(n, Some(9_007_199_254_740_991.0));
        let tenth: Value =
            serde_json::from_str(&serde_json::to_string(&Value::from(0.1f64)).unwrap_or_default())
                .unwrap_or_default();
        assert_eq!(tenth.as_f64(), Some(0.1));
        for bad in [
            "",
            "{}",
            r#"{"database":-1,"mode":"all","statements":[]}"#,
            r#"{"database":0,"mode":"drop","statements":[]}"#,
        ] {
            assert!(serde_json::from_str::<Call>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_answer_reads_rows_and_meta() {
        let text = r#"{"results":[{"rows":[{"id":7,"name":"a"}],"meta":{"changes":1,"rows_read":2,"rows_written":3,"size_after":4096,"last_row_id":7}}]}"#;
        let Ok(Answer::Results(results)) = serde_json::from_str::<Answer>(text) else { panic!("results") };
        #[derive(Deserialize)]
        struct Row {
            id: i64,
            name: String,
        }
        let rows: Vec<Row> = results[0].results().unwrap_or_default();
        assert_eq!((rows[0].id, rows[0].name.as_str()), (7, "a"));
        let meta = results[0].meta();
        assert_eq!(
            (meta.changes, meta.rows_read, meta.rows_written, meta.size_after),
            (Some(1), Some(2), Some(3), Some(4096))
        );
        let failed: Answer =
            serde_json::from_str(r#"{"failed":"D1: UNIQUE constraint failed: users.handle"}"#)
                .expect("parses");
        assert!(matches!(failed, Answer::Failed(m) if m.contains("UNIQUE")));
    }
}
