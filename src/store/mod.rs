//! D1 repositories: SQL lives here and nowhere else. Every statement is parameterized.
//!
//! D1 binds JS numbers (f64), so ids and times are bound through `int`, which is exact for
//! every value below 2^53 (all our ids and millisecond timestamps).

pub mod counters;
pub mod engagement;
pub mod feed;
pub mod graph;
pub mod likes;
pub mod live;
pub mod mirror;
pub mod moderation;
pub mod oauth;
pub mod outbox;
pub mod policy;
pub mod posts;
pub mod shard_move;
pub mod shards;
pub mod snowflake;
pub mod stats;
pub mod test_hooks;
pub mod users;

use std::cell::{Cell, RefCell};
use std::ops::Deref;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement};

use crate::error::{ApiError, ApiResult, StorageKind};

/// Binds an integer (a count, a time, or any of the id newtypes).
pub fn int(v: impl Into<i64>) -> JsValue {
    JsValue::from_f64(v.into() as f64)
}

pub fn text(v: &str) -> JsValue {
    JsValue::from_str(v)
}

pub fn opt_text(v: Option<&str>) -> JsValue {
    v.map_or(JsValue::NULL, JsValue::from_str)
}

/// The storage round trips one request (or job) made, for its `Server-Timing` header: cheap
/// counters, so they stay on in production.
#[derive(Debug, Default)]
pub struct Io {
    pub d1_statements: Cell<u32>,
    pub d1_trips: Cell<u32>,
    pub d1_ms: Cell<f64>,
    pub do_calls: Cell<u32>,
    pub do_ms: Cell<f64>,
    pub queue_sends: Cell<u32>,
    /// Sequential storage round trips (D1 or Durable Object): a trip that starts after another
    /// one has finished counts as a new one (it may depend on it); trips started together share
    /// one. This is the number of waits the request's latency is made of.
    pub sequential: Cell<u32>,
    finished_since_last: Cell<bool>,
    /// The D1 figures again, per physical database (index `i` is `DB_i`; grown on first use):
    /// which databases a request touched and what it spent on each.
    per_database: RefCell<Vec<DatabaseIo>>,
}

/// One physical database's share of a request's D1 round trips.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct DatabaseIo {
    pub statements: u32,
    pub trips: u32,
    pub ms: f64,
}

impl Io {
    /// Runs one storage round trip, adding its duration to `ms` and one to `trips`.
    pub async fn timed<T>(
        &self,
        trips: &Cell<u32>,
        ms: &Cell<f64>,
        trip: impl std::future::Future<Output = T>,
    ) -> T {
        if self.sequential.get() == 0 || self.finished_since_last.replace(false) {
            self.sequential.set(self.sequential.get() + 1);
        }
        let start = worker::Date::now().as_millis();
        let out = trip.await;
        self.finished_since_last.set(true);
        trips.set(trips.get() + 1);
        ms.set(ms.get() + worker::Date::now().as_millis().saturating_sub(start) as f64);
        out
    }

    /// Adds one D1 round trip of `statements` statements and `ms` to database `index`'s share.
    pub fn record_database(&self, index: usize, statements: u32, ms: f64) {
        let mut per = self.per_database.borrow_mut();
        if per.len() <= index {
            per.resize(index + 1, DatabaseIo::default());
        }
        let entry = &mut per[index];
        entry.statements += statements;
        entry.trips += 1;
        entry.ms += ms;
    }

    /// The databases this request made at least one round trip to, with their figures.
    pub fn databases_touched(&self) -> Vec<(usize, DatabaseIo)> {
        let per = self.per_database.borrow();
        per.iter().enumerate().filter(|(_, d)| d.trips > 0).map(|(i, d)| (i, *d)).collect()
    }
}

/// One physical D1 database (`DB_{index}`) with the request's round-trip counters; derefs to
/// the binding.
pub struct Db {
    d1: D1Database,
    index: usize,
    pub io: Rc<Io>,
}

impl Db {
    /// The control database, `DB_0` (see [`shards`]).
    pub fn new(d1: D1Database, io: Rc<Io>) -> Self {
        Self::indexed(d1, 0, io)
    }

    /// Database `DB_{index}`.
    pub fn indexed(d1: D1Database, index: usize, io: Rc<Io>) -> Self {
        Self { d1, index, io }
    }

    /// Which physical database this is: `i` of `DB_i`.
    pub fn index(&self) -> usize {
        self.index
    }

    async fn trip<T>(&self, statements: usize, trip: impl std::future::Future<Output = T>) -> T {
        let io = &self.io;
        let statements = statements as u32;
        io.d1_statements.set(io.d1_statements.get() + statements);
        let start = worker::Date::now().as_millis();
        let out = io.timed(&io.d1_trips, &io.d1_ms, trip).await;
        let ms = worker::Date::now().as_millis().saturating_sub(start) as f64;
        io.record_database(self.index, statements, ms);
        out
    }
}

impl Deref for Db {
    type Target = D1Database;

    fn deref(&self) -> &D1Database {
        &self.d1
    }
}

pub fn stmt(db: &D1Database, sql: &str, params: &[JsValue]) -> ApiResult<D1PreparedStatement> {
    Ok(db.prepare(sql).bind(params)?)
}

pub async fn all<T: DeserializeOwned>(db: &Db, sql: &str, params: &[JsValue]) -> ApiResult<Vec<T>> {
    let result = db.trip(1, stmt(db, sql, params)?.all()).await.map_err(d1_error)?;
    Ok(result.results()?)
}

pub async fn first<T: DeserializeOwned>(db: &Db, sql: &str, params: &[JsValue]) -> ApiResult<Option<T>> {
    db.trip(1, stmt(db, sql, params)?.first(None)).await.map_err(d1_error)
}

/// Runs a write; returns the number of rows it changed.
pub async fn run(db: &Db, sql: &str, params: &[JsValue]) -> ApiResult<usize> {
    let result = db.trip(1, stmt(db, sql, params)?.run()).await.map_err(d1_error)?;
    Ok(result.meta()?.and_then(|m| m.changes).unwrap_or(0))
}

/// How many rows a batch's write statement changed (0 when there is no result).
pub fn changed_rows(result: Option<&worker::D1Result>) -> usize {
    result.and_then(|r| r.meta().ok().flatten()).and_then(|m| m.changes).unwrap_or(0)
}

/// Runs a write whose row count does not matter.
pub async fn exec(db: &Db, sql: &str, params: &[JsValue]) -> ApiResult<()> {
    run(db, sql, params).await.map(|_| ())
}

/// Runs statements as one atomic D1 batch (all or nothing).
pub async fn batch(db: &Db, statements: Vec<D1PreparedStatement>) -> ApiResult<Vec<worker::D1Result>> {
    let n = statements.len();
    db.trip(n, db.d1.batch(statements)).await.map_err(d1_error)
}

/// The one place a D1 failure becomes an error: classified by kind (the message is kept for
/// the logs, never sent).
pub fn d1_error(e: worker::Error) -> ApiError {
    let message = match &e {
        worker::Error::D1(d1) => {
            let js: &worker::js_sys::Error = d1.as_ref();
            format!("D1: {} ({})", String::from(js.message()), d1.cause())
        }
        other => format!("D1: {other}"),
    };
    ApiError::Storage { kind: StorageKind::classify(&message), detail: message }
}

/// A row holding one integer column named `n`.
#[derive(serde::Deserialize)]
pub struct Count {
    pub n: i64,
}

/// A row holding one integer column named `id` (`RETURNING id`).
#[derive(serde::Deserialize)]
pub struct IdRow {
    pub id: i64,
}

/// Ids returned by the `RETURNING id` statements of a batch.
pub fn returned_ids(results: &[worker::D1Result]) -> Vec<i64> {
    results.iter().filter_map(|r| r.results::<IdRow>().ok()).flatten().map(|r| r.id).collect()
}

/// The `id` of the first row a batch statement returned.
pub fn first_id(result: Option<&worker::D1Result>) -> ApiResult<i64> {
    let rows: Vec<IdRow> = result.map(|r| r.results()).transpose()?.unwrap_or_default();
    rows.first().map(|r| r.id).ok_or_else(|| ApiError::Internal("a RETURNING statement gave no row".into()))
}
