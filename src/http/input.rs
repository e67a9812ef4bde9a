//! Reading a request: size-capped body, query string, the headers we care about, and typed
//! access to JSON fields that reports *which* field is wrong.

use serde_json::{Map, Value};
use worker::Request;

use crate::domain::cursor::SortKey;
use crate::domain::ids::parse_id;
use crate::domain::validate;
use crate::error::{ApiError, ApiResult};

pub const MAX_BODY_BYTES: usize = 64 * 1024;

pub struct Input {
    query: Vec<(String, String)>,
    body: Vec<u8>,
    pub authorization: Option<String>,
    pub idempotency_key: Option<String>,
}

impl Input {
    pub async fn read(req: &mut Request) -> ApiResult<Self> {
        let headers = req.headers();
        let declared: Option<usize> =
            headers.get("content-length").ok().flatten().and_then(|v| v.trim().parse().ok());
        if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
            return Err(ApiError::PayloadTooLarge);
        }
        let authorization = headers.get("authorization").ok().flatten();
        let idempotency_key = headers.get("idempotency-key").ok().flatten();
        let query = req.url()?.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        // A chunked body has no content-length: check the bytes actually read as well.
        let body = req.bytes().await.unwrap_or_default();
        if body.len() > MAX_BODY_BYTES {
            return Err(ApiError::PayloadTooLarge);
        }
        Ok(Self { query, body, authorization, idempotency_key })
    }

    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn limit(&self) -> ApiResult<usize> {
        validate::limit(self.query("limit")).map_err(|m| ApiError::field("limit", m))
    }

    /// The JSON object body; an empty body counts as `{}` only where `allow_empty`.
    pub fn json(&self, allow_empty: bool) -> ApiResult<JsonObject> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return if allow_empty {
                Ok(JsonObject(Map::new()))
            } else {
                Err(ApiError::InvalidJson("the request needs a JSON object body".into()))
            };
        }
        match serde_json::from_slice::<Value>(&self.body) {
            Ok(Value::Object(map)) => Ok(JsonObject(map)),
            Ok(_) => Err(ApiError::field("body", "the request body must be a JSON object")),
            Err(e) => Err(ApiError::InvalidJson(format!("line {} column {}", e.line(), e.column()))),
        }
    }

    pub fn idempotency_key(&self) -> ApiResult<Option<String>> {
        self.idempotency_key
            .as_deref()
            .map(|k| validate::idempotency_key(k).map_err(|m| ApiError::field("Idempotency-Key", m)))
            .transpose()
    }
}

pub struct JsonObject(Map<String, Value>);

impl JsonObject {
    /// Whether the field is present at all (even as `null`).
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A string field; absent or `null` is `None`, any other type is a 422 naming the field.
    pub fn str(&self, name: &'static str) -> ApiResult<Option<&str>> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ApiError::field(name, format!("{name} must be a string"))),
        }
    }

    pub fn required_str(&self, name: &'static str) -> ApiResult<&str> {
        self.str(name)?.ok_or_else(|| ApiError::field(name, format!("{name} is required")))
    }

    /// A non-negative integer field; absent or `null` is `None`.
    pub fn count(&self, name: &'static str) -> ApiResult<Option<u64>> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| ApiError::field(name, format!("{name} must be a non-negative integer"))),
        }
    }

    /// An id given as a decimal string (the API's form) or as a JSON integer.
    pub fn required_id(&self, name: &'static str) -> ApiResult<i64> {
        let bad = || ApiError::field(name, format!("{name} must be an id (a decimal string)"));
        match self.0.get(name) {
            Some(Value::String(s)) => parse_id(s).ok_or_else(bad),
            Some(Value::Number(n)) => n.as_i64().and_then(|n| parse_id(&n.to_string())).ok_or_else(bad),
            _ => Err(bad()),
        }
    }
}

/// Reads `?cursor=` with the codec, bound to the viewer and the list identity.
pub fn cursor_key(
    input: &Input,
    codec: &crate::domain::cursor::CursorCodec,
    viewer: i64,
    list: &str,
) -> ApiResult<Option<SortKey>> {
    match input.query("cursor") {
        None => Ok(None),
        Some(c) => Ok(Some(codec.decode(viewer, list, c)?)),
    }
}
