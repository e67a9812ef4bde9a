//! Reading a request: size-capped body, query string, the headers we care about, and typed
//! access to JSON fields that reports *which* field is wrong.

use futures_util::StreamExt;
use serde_json::{Map, Value};
use worker::Request;

use crate::domain::cursor::{CursorCodec, SortKey};
use crate::domain::ids::UserId;
use crate::domain::params::{self, Endpoint, Given};
use crate::domain::polls::RawPoll;
use crate::domain::validate::{self, IdempotencyKey, Invalid};
use crate::error::{ApiError, ApiResult};

/// A body's parameters, by name, as sent.
pub type Params = Vec<(String, String)>;
/// A body's files, by parameter name.
pub type Files<'a> = Vec<(String, &'a [u8])>;

pub struct Input {
    query: Vec<(String, String)>,
    body: Vec<u8>,
    pub authorization: Option<String>,
    pub idempotency_key: Option<String>,
    /// `CF-Connecting-IP`: the client address Cloudflare saw (the key of per-IP limits).
    pub client_ip: Option<String>,
    /// `Upgrade: websocket` was asked for.
    pub websocket: bool,
    /// `Sec-WebSocket-Protocol`: where browser streaming clients put their token.
    pub websocket_protocol: Option<String>,
    pub content_type: Option<String>,
    /// `scheme://host[:port]` of the request, for absolute links (`Link`, Mastodon `url`s).
    pub origin: String,
}

/// How much of an oversized body is read and thrown away before giving up on it. Draining a
/// modestly oversized body lets the client's connection carry its next request; beyond this the
/// stream is cancelled (bounded work for a flood; the client may then lose the connection).
const DRAIN_BYTES: usize = 1024 * 1024;

/// The body, read chunk by chunk and never buffered past `limit` (the route's: 64 KiB but for
/// uploads, `Route::body_limit`) plus one chunk, whether or not `Content-Length` was sent
/// (chunked) or true: past the limit the rest is discarded as it arrives (up to
/// [`DRAIN_BYTES`]) and the answer is 413.
async fn read_body(req: &mut Request, limit: usize) -> ApiResult<Vec<u8>> {
    let Ok(stream) = req.stream() else {
        return Ok(Vec::new()); // no body at all
    };
    let mut stream = std::pin::pin!(stream);
    let (mut body, mut seen) = (Vec::new(), 0usize);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| ApiError::InvalidJson("the request body could not be read".into()))?;
        seen += chunk.len();
        if seen > limit + DRAIN_BYTES {
            return Err(ApiError::PayloadTooLarge); // dropping the stream cancels it
        }
        if seen <= limit {
            body.extend_from_slice(&chunk);
        }
    }
    if seen > limit {
        return Err(ApiError::PayloadTooLarge);
    }
    Ok(body)
}

impl Input {
    pub async fn read(req: &mut Request, limit: usize) -> ApiResult<Self> {
        let headers = req.headers();
        let declared: Option<usize> =
            headers.get("content-length").ok().flatten().and_then(|v| v.trim().parse().ok());
        if declared.is_some_and(|n| n > limit) {
            return Err(ApiError::PayloadTooLarge);
        }
        let authorization = headers.get("authorization").ok().flatten();
        let idempotency_key = headers.get("idempotency-key").ok().flatten();
        let client_ip = headers.get("cf-connecting-ip").ok().flatten();
        let websocket =
            headers.get("upgrade").ok().flatten().is_some_and(|v| v.trim().eq_ignore_ascii_case("websocket"));
        let websocket_protocol = headers.get("sec-websocket-protocol").ok().flatten();
        let content_type = headers.get("content-type").ok().flatten();
        let url = req.url()?;
        let query = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        let origin = url.origin().ascii_serialization();
        let body = read_body(req, limit).await?;
        Ok(Self {
            query,
            body,
            authorization,
            idempotency_key,
            client_ip,
            websocket,
            websocket_protocol,
            content_type,
            origin,
        })
    }

    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of a repeated query parameter (`id[]=1&id[]=2`), in order.
    pub fn query_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.query.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The body as an object: a form (`application/x-www-form-urlencoded` or
    /// `multipart/form-data`, how most Mastodon clients send parameters, every value a string)
    /// or JSON.
    pub fn form_or_json(&self, allow_empty: bool) -> ApiResult<JsonObject> {
        match self.form_pairs()? {
            Some(pairs) => Ok(JsonObject(pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect())),
            None => self.json(allow_empty),
        }
    }

    /// An upload: a `multipart/form-data` body's `file` part and its `description` and `focus`
    /// fields (how Mastodon clients send one); or, on `/v1` (`raw_allowed`), any other body is
    /// the file itself, with `description` and `focus` in the query. What the bytes are is
    /// sniffed later, never taken from the name or the content type.
    pub fn upload(&self, raw_allowed: bool) -> ApiResult<Upload<'_>> {
        let boundary = self.content_type.as_deref().and_then(crate::domain::multipart::boundary);
        let Some(boundary) = boundary else {
            if !raw_allowed {
                return Err(ApiError::field(
                    "file",
                    "send the file as multipart/form-data, in a part named file",
                ));
            }
            let field = |name: &str| self.query(name).map(str::to_owned);
            return Ok(Upload { file: &self.body, description: field("description"), focus: field("focus") });
        };
        let parts = crate::domain::multipart::parts(&self.body, boundary)
            .map_err(|why| ApiError::InvalidJson(why.into()))?;
        let text = |name: &str| {
            parts
                .iter()
                .find(|p| p.name == name && !p.is_file)
                .map(|p| String::from_utf8_lossy(p.bytes).into_owned())
        };
        let file = parts.iter().find(|p| p.name == "file").map(|p| p.bytes);
        let file = file.ok_or_else(|| ApiError::field("file", "file is required"))?;
        Ok(Upload { file, description: text("description"), focus: text("focus") })
    }

    /// Every parameter of a form or JSON body as Rails names them (a JSON body flattened:
    /// `source[privacy]`, `fields_attributes[0][name]`; `domain::profile::flatten_json`), and
    /// apart from them the bytes of the parameters named in `files` (a multipart body's parts;
    /// another body cannot carry a file: a non-empty value there is a 422 naming it).
    pub fn params_and_files(&self, files: &[&'static str]) -> ApiResult<(Params, Files<'_>)> {
        let boundary = self.content_type.as_deref().and_then(crate::domain::multipart::boundary);
        let (mut params, mut found) = (Vec::new(), Vec::new());
        if let Some(boundary) = boundary {
            let parts = crate::domain::multipart::parts(&self.body, boundary)
                .map_err(|why| ApiError::InvalidJson(why.into()))?;
            for part in parts {
                if files.contains(&part.name.as_str()) {
                    found.push((part.name, part.bytes));
                } else {
                    params.push((part.name, String::from_utf8_lossy(part.bytes).into_owned()));
                }
            }
            return Ok((params, found));
        }
        let pairs = match self.form_pairs()? {
            Some(pairs) => pairs,
            None => crate::domain::profile::flatten_json(&self.json(true)?.0),
        };
        for (name, value) in pairs {
            match files.iter().find(|f| **f == name) {
                // A file can only come as a multipart part; an empty value is none given.
                Some(file) if !value.is_empty() => {
                    return Err(ApiError::field(
                        file,
                        format!("send {file} as a file in a multipart/form-data body"),
                    ));
                }
                Some(_) => {}
                None => params.push((name, value)),
            }
        }
        Ok((params, found))
    }

    /// The fields of a form body, in order, repeated ones included; `None` for another body.
    fn form_pairs(&self) -> ApiResult<Option<Vec<(String, String)>>> {
        let Some(content_type) = self.content_type.as_deref() else { return Ok(None) };
        if content_type.trim_start().to_ascii_lowercase().starts_with("application/x-www-form-urlencoded") {
            let pairs = url::form_urlencoded::parse(&self.body);
            return Ok(Some(pairs.map(|(k, v)| (k.into_owned(), v.into_owned())).collect()));
        }
        match crate::domain::multipart::boundary(content_type) {
            Some(boundary) => crate::domain::multipart::fields(&self.body, boundary)
                .map(Some)
                .map_err(|why| ApiError::InvalidJson(why.into())),
            None => Ok(None),
        }
    }

    /// Refuses (422, naming it) the first parameter of the body `endpoint` does not build
    /// ([`params::check`]), before anything changes.
    pub fn check_params(&self, endpoint: Endpoint) -> ApiResult<()> {
        let given: Vec<(String, Given)> = match self.form_pairs()? {
            Some(pairs) => pairs.into_iter().map(|(k, v)| (k, Given::of_text(&v))).collect(),
            None => self.json(true)?.0.into_iter().map(|(k, v)| (k, given_json(&v))).collect(),
        };
        Ok(params::check(endpoint, given.iter().map(|(k, g)| (k.as_str(), *g)))?)
    }

    /// Every value of an array parameter (`account_ids`), however a Mastodon client sends it:
    /// repeated form fields or query parameters (`account_ids[]=1&account_ids[]=2`, or without
    /// `[]`), or a JSON array (or one value) in a JSON body. A form object keeps only the last of
    /// repeated fields, so arrays are read here.
    pub fn values_of(&self, name: &str) -> ApiResult<Vec<String>> {
        let array = format!("{name}[]");
        let wanted = |k: &str| k == name || k == array;
        let mut values: Vec<String> =
            self.query.iter().filter(|(k, _)| wanted(k)).map(|(_, v)| v.clone()).collect();
        if let Some(pairs) = self.form_pairs()? {
            values.extend(pairs.into_iter().filter(|(k, _)| wanted(k)).map(|(_, v)| v));
            return Ok(values);
        }
        let body = self.json(true)?;
        let one = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        match body.0.get(name).or_else(|| body.0.get(&array)) {
            Some(Value::Array(items)) => values.extend(items.iter().filter_map(one)),
            Some(v) => values.extend(one(v)),
            None => {}
        }
        Ok(values)
    }

    /// Mastodon's `poll` of a new status, however it is sent: a form's `poll[options][]`,
    /// `poll[expires_in]`, `poll[multiple]`, `poll[hide_totals]`, or a JSON object `poll`
    /// (`None`: no poll, or an empty one, which means none).
    pub fn poll(&self) -> ApiResult<Option<RawPoll>> {
        let bad = || ApiError::field("poll", "poll: options[], expires_in, multiple, hide_totals");
        let flag = |v: &str| crate::domain::mastodon::form_bool(v).ok_or_else(bad);
        let mut raw = RawPoll::default();
        if let Some(pairs) = self.form_pairs()? {
            for (k, v) in pairs {
                match k.as_str() {
                    "poll[options][]" | "poll[options]" => raw.options.push(v),
                    "poll[expires_in]" => raw.expires_in = Some(v),
                    "poll[multiple]" => raw.multiple = Some(flag(&v)?),
                    "poll[hide_totals]" => raw.hide_totals = Some(flag(&v)?),
                    _ => {}
                }
            }
        } else {
            let body = self.json(true)?;
            match body.0.get("poll") {
                None | Some(Value::Null) => {}
                Some(Value::Object(poll)) => raw = raw_poll_of(poll).ok_or_else(bad)?,
                Some(_) => return Err(bad()),
            }
        }
        Ok((raw != RawPoll::default()).then_some(raw))
    }

    /// Whether the request names the field at all (`name` or `name[]`, in the query, the form
    /// or the JSON body), even with no value: an empty list given is not a list left out.
    pub fn names(&self, name: &str) -> ApiResult<bool> {
        let array = format!("{name}[]");
        let wanted = |k: &str| k == name || k == array;
        if self.query.iter().any(|(k, _)| wanted(k)) {
            return Ok(true);
        }
        if let Some(pairs) = self.form_pairs()? {
            return Ok(pairs.iter().any(|(k, _)| wanted(k)));
        }
        let body = self.json(true)?;
        Ok(body.0.contains_key(name) || body.0.contains_key(&array))
    }

    /// The raw body, for the few routes whose fields nest (Mastodon's markers).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    pub fn limit(&self) -> ApiResult<usize> {
        Ok(validate::limit(self.query("limit"))?)
    }

    /// A validated query parameter, if present.
    pub fn query_as<T>(&self, name: &str, parse: fn(&str) -> Result<T, Invalid>) -> ApiResult<Option<T>> {
        Ok(self.query(name).map(parse).transpose()?)
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

    pub fn idempotency_key(&self) -> ApiResult<Option<IdempotencyKey>> {
        Ok(self.idempotency_key.as_deref().map(IdempotencyKey::parse).transpose()?)
    }

    /// Reads `?cursor=` with the codec, bound to the viewer and the list identity.
    pub fn cursor(&self, codec: &CursorCodec, viewer: UserId, list: &str) -> ApiResult<Option<SortKey>> {
        self.cursor_named("cursor", codec, viewer, list)
    }

    /// The `cursor` query parameter with its below-the-floor mark (the home feed's).
    pub fn cursor_below_floor(
        &self,
        codec: &CursorCodec,
        viewer: UserId,
        list: &str,
    ) -> ApiResult<Option<(SortKey, bool)>> {
        Ok(self.query("cursor").map(|c| codec.decode_below_floor(viewer, list, c)).transpose()?)
    }

    /// A signed cursor in the query parameter `name`.
    pub fn cursor_named(
        &self,
        name: &str,
        codec: &CursorCodec,
        viewer: UserId,
        list: &str,
    ) -> ApiResult<Option<SortKey>> {
        Ok(self.query(name).map(|c| codec.decode(viewer, list, c)).transpose()?)
    }
}

/// A JSON `poll` object's fields (`None` when one has the wrong type).
fn raw_poll_of(poll: &Map<String, Value>) -> Option<RawPoll> {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let flag = |name: &str| match poll.get(name) {
        None | Some(Value::Null) => Some(None),
        Some(Value::Bool(b)) => Some(Some(*b)),
        Some(Value::String(s)) => crate::domain::mastodon::form_bool(s).map(Some),
        Some(_) => None,
    };
    let options = match poll.get("options") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().map(text).collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    let expires_in = match poll.get("expires_in") {
        None | Some(Value::Null) => None,
        Some(v) => Some(text(v)?),
    };
    Some(RawPoll { options, expires_in, multiple: flag("multiple")?, hide_totals: flag("hide_totals")? })
}

/// What a JSON value amounts to for [`params::check`].
fn given_json(value: &Value) -> Given {
    match value {
        Value::Null => Given::Nothing,
        Value::Bool(false) => Given::False,
        Value::String(s) => Given::of_text(s),
        Value::Array(items) => items.iter().map(given_json).max().unwrap_or(Given::Nothing),
        Value::Object(fields) if fields.is_empty() => Given::Nothing,
        _ => Given::Something,
    }
}

/// What an upload request carries.
pub struct Upload<'a> {
    pub file: &'a [u8],
    pub description: Option<String>,
    pub focus: Option<String>,
}

pub struct JsonObject(Map<String, Value>);

impl JsonObject {
    /// Whether the field is present at all (even as `null`).
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A string field; absent or `null` is `None`, any other type is a 422 naming the field.
    pub fn str(&self, name: &'static str) -> ApiResult<Option<&str>> {
        Ok(self.string(name)?)
    }

    /// [`Self::str`] for the domain's parsers, which report an [`Invalid`] field.
    pub fn string(&self, name: &'static str) -> Result<Option<&str>, Invalid> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Invalid::new(name, format!("{name} must be a string"))),
        }
    }

    /// A boolean field: JSON `true`/`false`, or a form's string (`crate::domain::mastodon::form_bool`).
    /// Absent or `null` is `None`.
    pub fn flag(&self, name: &'static str) -> ApiResult<Option<bool>> {
        Ok(self.boolean(name)?)
    }

    /// [`Self::flag`] for the domain's parsers.
    pub fn boolean(&self, name: &'static str) -> Result<Option<bool>, Invalid> {
        let not_one = || Invalid::new(name, format!("{name} must be a boolean"));
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) => crate::domain::mastodon::form_bool(s).map(Some).ok_or_else(not_one),
            Some(_) => Err(not_one()),
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

    /// A non-negative integer given as a JSON number or as a decimal string (a form's value).
    pub fn whole(&self, name: &'static str) -> ApiResult<Option<u64>> {
        match self.0.get(name) {
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => s
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| ApiError::field(name, format!("{name} must be a non-negative integer"))),
            _ => self.count(name),
        }
    }

    /// An id given as a decimal string (the API's form) or as a JSON integer, parsed by the
    /// id type's `parse` (e.g. `UserId::parse`).
    pub fn required_id<T>(&self, name: &'static str, parse: fn(&str) -> Option<T>) -> ApiResult<T> {
        let bad = || ApiError::field(name, format!("{name} must be an id (a decimal string)"));
        match self.0.get(name) {
            Some(Value::String(s)) => parse(s).ok_or_else(bad),
            Some(Value::Number(n)) => n.as_i64().and_then(|n| parse(&n.to_string())).ok_or_else(bad),
            _ => Err(bad()),
        }
    }

    /// A list of ids, each as [`Self::required_id`] takes one; absent or `null` is empty.
    pub fn ids<T>(&self, name: &'static str, parse: fn(&str) -> Option<T>) -> ApiResult<Vec<T>> {
        let bad = || ApiError::field(name, format!("{name} must be a list of ids (decimal strings)"));
        let items = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(bad()),
        };
        let one = |v: &Value| match v {
            Value::String(s) => parse(s),
            Value::Number(n) => n.as_i64().and_then(|n| parse(&n.to_string())),
            _ => None,
        };
        items.iter().map(|v| one(v).ok_or_else(bad)).collect()
    }

    /// An array of objects (Rails' nested attributes: a JSON array, or an object keyed by
    /// index); absent or `null` is empty, anything else a 422 naming the field.
    pub fn objects(&self, name: &'static str) -> ApiResult<Vec<JsonObject>> {
        let bad = || ApiError::field(name, format!("{name} must be a list of objects"));
        let items: Vec<&Value> = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().collect(),
            Some(Value::Object(by_index)) => by_index.values().collect(),
            Some(_) => return Err(bad()),
        };
        items
            .into_iter()
            .map(|v| match v {
                Value::Object(map) => Ok(JsonObject(map.clone())),
                _ => Err(bad()),
            })
            .collect()
    }

    /// A required string field, validated by a domain type's `parse`.
    pub fn required<T>(&self, name: &'static str, parse: fn(&str) -> Result<T, Invalid>) -> ApiResult<T> {
        Ok(parse(self.required_str(name)?)?)
    }

    /// An optional string field, validated by a domain type's `parse`.
    pub fn optional<T>(
        &self,
        name: &'static str,
        parse: fn(&str) -> Result<T, Invalid>,
    ) -> ApiResult<Option<T>> {
        Ok(self.str(name)?.map(parse).transpose()?)
    }
}
