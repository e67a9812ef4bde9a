//! Durable Objects: the classes (thin shells over their own storage) and the Worker-side
//! clients that call them: one JSON request in, one JSON reply out. A failed op answers 500
//! with a [`Relayed`] body, so the storage error's kind survives the hop.

pub mod alarm;
pub mod head;
pub mod live;
pub mod post_likes;
pub mod relay;
pub mod replica;
pub mod timeline;
pub mod window_sql;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use worker::{Method, ObjectNamespace, Request, RequestInit, Response};

use crate::error::{ApiError, ApiResult, StorageKind};
use crate::store::{Io, ObjectD1};

/// Response header in which an object reports the D1 work it did for the request
/// ([`ObjectD1`]).
pub const OBJECT_D1_HEADER: &str = "x-edgefeed-object-d1";

/// A failure as a Durable Object reports it to its caller.
#[derive(Debug, Serialize, Deserialize)]
pub struct Relayed {
    #[serde(flatten)]
    kind: StorageKind,
    detail: String,
}

/// The object's answer to an op that failed.
pub fn failure(e: &ApiError) -> worker::Result<Response> {
    let relayed = match e {
        ApiError::Storage { kind, detail } => Relayed { kind: kind.clone(), detail: detail.clone() },
        other => Relayed { kind: StorageKind::Other, detail: other.to_string() },
    };
    Ok(Response::from_json(&relayed)?.with_status(500))
}

/// Sends `body` to the object named `name`; a failure keeps the kind the object reported.
pub async fn call<B: Serialize, R: DeserializeOwned>(
    namespace: &ObjectNamespace,
    io: &Io,
    name: &str,
    body: &B,
) -> ApiResult<R> {
    let stub = namespace.id_from_name(name)?.get_stub()?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(serde_json::to_string(body).unwrap_or_default().into()));
    let request = Request::new_with_init("https://durable-object/op", &init)?;
    let mut resp = io.timed(&io.do_calls, &io.do_ms, stub.fetch_with_request(request)).await?;
    if resp.status_code() != 200 {
        let text = resp.text().await.unwrap_or_default();
        return Err(match serde_json::from_str::<Relayed>(&text) {
            Ok(r) => ApiError::Storage { kind: r.kind, detail: format!("{name}: {}", r.detail) },
            Err(_) => ApiError::Internal(format!("{name}: {text}")),
        });
    }
    let header = resp.headers().get(OBJECT_D1_HEADER).ok().flatten();
    for d1 in header.and_then(|h| ObjectD1::parse_list(&h)).unwrap_or_default() {
        io.record_object_d1(d1);
    }
    Ok(resp.json().await?)
}
