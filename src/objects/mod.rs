//! Durable Objects: the classes (thin shells over their own storage) and the Worker-side
//! clients that call them: one JSON request in, one JSON reply out.

pub mod post_likes;
pub mod timeline;
pub mod window_sql;

use serde::de::DeserializeOwned;
use serde::Serialize;
use worker::{Method, ObjectNamespace, Request, RequestInit};

use crate::error::ApiResult;
use crate::store::storage_error;

/// Sends `body` to the object named `name`; a non-200 answer carries the object's error text.
pub async fn call<B: Serialize, R: DeserializeOwned>(
    namespace: &ObjectNamespace,
    name: &str,
    body: &B,
) -> ApiResult<R> {
    let stub = namespace.id_from_name(name)?.get_stub()?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(serde_json::to_string(body).unwrap_or_default().into()));
    let mut resp =
        stub.fetch_with_request(Request::new_with_init("https://durable-object/op", &init)?).await?;
    if resp.status_code() != 200 {
        let text = resp.text().await.unwrap_or_default();
        return Err(storage_error(format!("{name}: {text}")));
    }
    Ok(resp.json().await?)
}
