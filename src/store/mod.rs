//! D1 repositories: SQL lives here and nowhere else. Every statement is parameterized.
//!
//! D1 binds JS numbers (f64), so ids and times are bound through `int`, which is exact for
//! every value below 2^53 (all our ids and millisecond timestamps).

pub mod account_marks;
pub mod bookmarks;
pub mod comment_likes;
pub mod comment_moves;
pub mod conversations;
pub mod counters;
pub mod data_plane;
pub mod discovery;
pub mod edits;
pub mod engagement;
pub mod error;
pub mod fanout_ahead;
pub mod feed;
pub mod filters;
pub mod follow_requests;
pub mod graph;
pub mod handles;
pub mod liked;
pub mod likes;
pub mod lists;
pub mod live;
pub mod markers;
pub mod media;
pub mod mirror;
pub mod moderation;
pub mod mutes;
pub mod notification_groups;
pub mod notification_requests;
pub mod notifications;
pub mod oauth;
pub mod outbox;
pub mod policy;
pub mod polls;
pub mod post_marks;
pub mod posts;
pub mod profile;
pub mod push;
pub mod quotes;
pub mod reblogs;
pub mod remote;
pub mod replica;
pub mod replica_bump;
pub mod reports;
pub mod scheduled;
pub mod search;
pub mod shard_move;
pub mod shards;
pub mod snowflake;
pub mod stats;
pub mod tags;
pub mod test_hooks;
pub mod timelines;
pub mod users;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;
use worker::D1Database;

pub use error::{StoreError, StoreResult};
pub use handles::{AnyDb, ControlDb, HandleDb, OnDb, OutboxDb, PostDb, UserDb};

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

/// A flag as SQLite's 0/1, or `NULL`.
pub fn opt_flag(v: Option<bool>) -> JsValue {
    v.map_or(JsValue::NULL, |b| int(i64::from(b)))
}

/// An integer, or `NULL`.
pub fn opt_int(v: Option<i64>) -> JsValue {
    v.map_or(JsValue::NULL, int)
}

/// A real number, or `NULL`.
pub fn opt_num(v: Option<f64>) -> JsValue {
    v.map_or(JsValue::NULL, JsValue::from_f64)
}

/// Ids as a JSON array, bound as one parameter with [`text`] and read with `json_each` (any
/// number of ids in one statement, under D1's 100-parameter limit).
pub fn id_list<I: Copy + Into<i64>>(ids: &[I]) -> String {
    let items: Vec<String> = ids.iter().map(|&id| id.into().to_string()).collect();
    format!("[{}]", items.join(","))
}

/// The storage round trips one request (or job) made, for its `Server-Timing` header: cheap
/// counters, so they stay on in production.
#[derive(Debug, Default)]
pub struct Io {
    pub d1_statements: Cell<u32>,
    pub d1_trips: Cell<u32>,
    pub d1_ms: Cell<f64>,
    /// Rows D1 reports having read and written (its billing units), over every database.
    pub d1_rows_read: Cell<u64>,
    pub d1_rows_written: Cell<u64>,
    pub do_calls: Cell<u32>,
    pub do_ms: Cell<f64>,
    pub queue_sends: Cell<u32>,
    /// Messages in those sends (a send carries up to 100).
    pub queue_messages: Cell<u32>,
    /// Sequential storage round trips (D1 or Durable Object): a trip that starts after another
    /// one has finished counts as a new one (it may depend on it); trips started together share
    /// one. This is the number of waits the request's latency is made of.
    pub sequential: Cell<u32>,
    /// Rows the reader's timeline window object wrote to its own storage for a feed read (the
    /// activity record, a window build), from its reply.
    pub window_rows_written: Cell<u64>,
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
    pub rows_read: u64,
    pub rows_written: u64,
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

    /// Adds the rows D1 says `results` read and wrote (on database `index`) to the counters.
    pub fn record_rows(&self, index: usize, results: &[SqlResult]) {
        let (read, written) = results.iter().filter_map(|r| r.meta().ok().flatten()).fold(
            (0u64, 0u64),
            |(read, written), meta| {
                (read + meta.rows_read.unwrap_or(0) as u64, written + meta.rows_written.unwrap_or(0) as u64)
            },
        );
        self.add_rows(index, read, written);
    }

    /// Adds rows read and written to the totals and to database `index`'s share (after that
    /// database's [`Io::record_database`]).
    pub fn add_rows(&self, index: usize, read: u64, written: u64) {
        self.d1_rows_read.set(self.d1_rows_read.get() + read);
        self.d1_rows_written.set(self.d1_rows_written.get() + written);
        let mut per = self.per_database.borrow_mut();
        if let Some(entry) = per.get_mut(index) {
            entry.rows_read += read;
            entry.rows_written += written;
        }
    }

    /// Counts D1 work a Durable Object did for this request (see [`ObjectD1`]) on its database.
    pub fn record_object_d1(&self, d1: ObjectD1) {
        if d1.statements == 0 {
            return;
        }
        self.d1_statements.set(self.d1_statements.get() + d1.statements);
        self.record_database(d1.database, d1.statements, 0.0);
        self.add_rows(d1.database, d1.rows_read, d1.rows_written);
    }

    /// Adds the D1 work another tally counted to this one. A reconciliation share counts on its
    /// own (its bound is per share), and the invocation that ran it still reports all of it.
    pub fn absorb(&self, other: &Io) {
        for (database, d) in other.databases_touched() {
            let (rows_read, rows_written) = (d.rows_read, d.rows_written);
            self.record_object_d1(ObjectD1 { database, statements: d.statements, rows_read, rows_written });
        }
    }

    /// The databases this request made at least one round trip to, with their figures.
    pub fn databases_touched(&self) -> Vec<(usize, DatabaseIo)> {
        let per = self.per_database.borrow();
        per.iter().enumerate().filter(|(_, d)| d.trips > 0).map(|(i, d)| (i, *d)).collect()
    }
}

/// The D1 work a Durable Object did on one database on behalf of a request (a like's group
/// commit runs in the post's object): sent back in a response header so the request's
/// `Server-Timing` and the capacity bench count it where it belongs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ObjectD1 {
    pub database: usize,
    pub statements: u32,
    pub rows_read: u64,
    pub rows_written: u64,
}

impl ObjectD1 {
    /// What `db`'s counters hold so far.
    pub fn of<'a>(db: impl OnDb<'a>) -> Self {
        let db = db.on();
        let touched = db.io.databases_touched();
        let found =
            touched.iter().find(|(index, _)| *index == db.index).map(|(_, io)| *io).unwrap_or_default();
        Self {
            database: db.index,
            statements: found.statements,
            rows_read: found.rows_read,
            rows_written: found.rows_written,
        }
    }

    /// All the work a fresh tally counted, when it touched one database (an object whose
    /// work is all on one database: a hot author's replica reads only the author's).
    pub fn only(io: &Io) -> Self {
        io.databases_touched()
            .first()
            .map(|(database, d)| Self {
                database: *database,
                statements: d.statements,
                rows_read: d.rows_read,
                rows_written: d.rows_written,
            })
            .unwrap_or_default()
    }

    /// The work done between `before` and `self` (same database).
    pub fn since(self, before: Self) -> Self {
        Self {
            database: self.database,
            statements: self.statements.saturating_sub(before.statements),
            rows_read: self.rows_read.saturating_sub(before.rows_read),
            rows_written: self.rows_written.saturating_sub(before.rows_written),
        }
    }

    /// One of `n` requests' share of a group's work, rounded to the nearest unit.
    pub fn share(self, n: usize) -> Self {
        let n = n.max(1) as u64;
        let part = |total: u64| (total + n / 2) / n;
        Self {
            database: self.database,
            statements: part(u64::from(self.statements)) as u32,
            rows_read: part(self.rows_read),
            rows_written: part(self.rows_written),
        }
    }

    pub fn to_header(self) -> String {
        format!("{} {} {} {}", self.database, self.statements, self.rows_read, self.rows_written)
    }

    /// Entries on several databases (a like's commit and its liker side) in one header value.
    pub fn list_header(entries: &[Self]) -> String {
        entries.iter().map(|e| e.to_header()).collect::<Vec<_>>().join(",")
    }

    /// What [`Self::list_header`] (or [`Self::to_header`], a list of one) wrote.
    pub fn parse_list(header: &str) -> Option<Vec<Self>> {
        header.split(',').map(Self::parse).collect()
    }

    pub fn parse(header: &str) -> Option<Self> {
        let mut parts = header.split(' ').map(str::parse::<u64>);
        let mut next = || parts.next()?.ok();
        let parsed = Self {
            database: usize::try_from(next()?).ok()?,
            statements: u32::try_from(next()?).ok()?,
            rows_read: next()?,
            rows_written: next()?,
        };
        parts.next().is_none().then_some(parsed)
    }
}

/// One physical D1 database (`DB_{index}`) with the request's round-trip counters.
pub struct Db {
    backend: Backend,
    index: usize,
    pub io: Rc<Io>,
}

/// How this invocation reaches a database: its own `DB_i` binding, or the data-plane script
/// that binds it, over a service binding (a deployment past one script's binding limit:
/// [`remote`]). Everything above the two `execute` arms is the same for both.
enum Backend {
    Local(D1Database),
    Remote(remote::DataScript),
}

/// What a round trip runs: one statement for its rows, one write, or an atomic batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    All,
    Run,
    Batch,
}

impl Db {
    /// Database `DB_{index}` through this invocation's own binding; only the placement rules
    /// (`shards`) bind one.
    pub(super) fn local(d1: D1Database, index: usize, io: Rc<Io>) -> Self {
        Self { backend: Backend::Local(d1), index, io }
    }

    /// Database `DB_{index}` through the data-plane script that binds it.
    pub(super) fn remote(script: remote::DataScript, index: usize, io: Rc<Io>) -> Self {
        Self { backend: Backend::Remote(script), index, io }
    }

    /// Which physical database this is: `i` of `DB_i`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// One round trip of `statements` statements, counted; its failure classified as
    /// [`d1_error`] on this database. Every statement passes here, so this is also where the
    /// `db_outage` test hook fails them ([`test_hooks::outage`]).
    async fn trip<T>(
        &self,
        statements: usize,
        trip: impl std::future::Future<Output = StoreResult<T>>,
    ) -> StoreResult<T> {
        let io = &self.io;
        let statements = statements as u32;
        io.d1_statements.set(io.d1_statements.get() + statements);
        let start = worker::Date::now().as_millis();
        let reached = async {
            match test_hooks::outage(self.index) {
                Some(down) => Err(d1_error(self.index, down)),
                None => trip.await,
            }
        };
        let out = io.timed(&io.d1_trips, &io.d1_ms, reached).await;
        let ms = worker::Date::now().as_millis().saturating_sub(start) as f64;
        io.record_database(self.index, statements, ms);
        out
    }

    /// Runs `statements` (one for `All` and `Run`) as one counted round trip, here or on the
    /// data script, and counts the rows D1 says they read and wrote.
    async fn execute(&self, mode: Mode, statements: Vec<SqlStatement>) -> StoreResult<Vec<SqlResult>> {
        let n = statements.len();
        let results = self
            .trip(n, async {
                match &self.backend {
                    Backend::Local(d1) => execute_local(d1, mode, statements)
                        .await
                        .map(|rs| rs.into_iter().map(SqlResult::Local).collect())
                        .map_err(|e| d1_error(self.index, e)),
                    Backend::Remote(script) => script.call(self.index, mode, statements).await,
                }
            })
            .await?;
        self.io.record_rows(self.index, &results);
        Ok(results)
    }

    /// [`Self::execute`] of one statement, its one result.
    async fn execute_one(&self, mode: Mode, statement: SqlStatement) -> StoreResult<SqlResult> {
        let results = self.execute(mode, vec![statement]).await?;
        results.into_iter().next().ok_or_else(|| StoreError::Internal("D1 gave no result".into()))
    }
}

/// Runs statements on a D1 binding of this invocation: the front's own `DB_i`, or (in a data
/// script) the database a call names. `All` and `Run` take exactly one statement.
pub(crate) async fn execute_local(
    d1: &D1Database,
    mode: Mode,
    statements: Vec<SqlStatement>,
) -> worker::Result<Vec<worker::D1Result>> {
    let count = statements.len();
    let mut prepared = Vec::with_capacity(count);
    for statement in statements {
        prepared.push(d1.prepare(statement.sql).bind(&statement.params)?);
    }
    if mode == Mode::Batch {
        return d1.batch(prepared).await;
    }
    let Some(one) = prepared.pop().filter(|_| count == 1) else {
        return Err(worker::Error::RustError(format!("{mode:?} takes one statement, not {count}")));
    };
    let result = if mode == Mode::All { one.all().await? } else { one.run().await? };
    Ok(vec![result])
}

/// A statement as the store builds it: its SQL and bound values. It becomes a D1 statement
/// only where it runs, on a binding of this invocation or of the data script holding its
/// database, so every store function builds the same value either way.
pub struct SqlStatement {
    sql: String,
    params: Vec<JsValue>,
}

impl SqlStatement {
    pub(crate) fn new(sql: String, params: Vec<JsValue>) -> Self {
        Self { sql, params }
    }

    pub fn sql(&self) -> &str {
        &self.sql
    }

    pub fn params(&self) -> &[JsValue] {
        &self.params
    }
}

/// What one statement gave: D1's own result on a local binding, or the same rows and meta as
/// the data script sent them back.
pub enum SqlResult {
    Local(worker::D1Result),
    Remote(remote::Answered),
}

impl SqlResult {
    /// The rows, as `worker::D1Result::results` reads them.
    pub fn results<T: DeserializeOwned>(&self) -> worker::Result<Vec<T>> {
        match self {
            Self::Local(result) => result.results(),
            Self::Remote(answered) => answered.results(),
        }
    }

    /// D1's meta (rows read and written, changes, size after, last row id).
    pub fn meta(&self) -> worker::Result<Option<worker::D1ResultMeta>> {
        match self {
            Self::Local(result) => result.meta(),
            Self::Remote(answered) => Ok(Some(answered.meta())),
        }
    }
}

/// A statement on `db` (the handle says where it runs; the statement is the same anywhere).
pub fn stmt<'a>(_db: impl OnDb<'a>, sql: &str, params: &[JsValue]) -> StoreResult<SqlStatement> {
    Ok(SqlStatement { sql: sql.to_owned(), params: params.to_vec() })
}

pub async fn all<'a, T: DeserializeOwned>(
    db: impl OnDb<'a>,
    sql: &str,
    params: &[JsValue],
) -> StoreResult<Vec<T>> {
    let db = db.on();
    let result = db.execute_one(Mode::All, stmt(db, sql, params)?).await?;
    Ok(result.results()?)
}

/// A query's rows, and the size of the database's file after it (D1's `size_after`, bytes).
pub async fn all_sized<'a, T: DeserializeOwned>(
    db: impl OnDb<'a>,
    sql: &str,
    params: &[JsValue],
) -> StoreResult<(Vec<T>, Option<u64>)> {
    let db = db.on();
    let result = db.execute_one(Mode::All, stmt(db, sql, params)?).await?;
    let size = result.meta()?.and_then(|m| m.size_after).map(|bytes| bytes as u64);
    Ok((result.results()?, size))
}

/// The first row of a query (read with `all`, whose result carries the rows-read figures).
pub async fn first<'a, T: DeserializeOwned>(
    db: impl OnDb<'a>,
    sql: &str,
    params: &[JsValue],
) -> StoreResult<Option<T>> {
    Ok(all(db, sql, params).await?.into_iter().next())
}

/// Runs a write; returns the number of rows it changed.
pub async fn run<'a>(db: impl OnDb<'a>, sql: &str, params: &[JsValue]) -> StoreResult<usize> {
    let db = db.on();
    let result = db.execute_one(Mode::Run, stmt(db, sql, params)?).await?;
    Ok(result.meta()?.and_then(|m| m.changes).unwrap_or(0))
}

/// How many rows a batch's write statement changed (0 when there is no result).
pub fn changed_rows(result: Option<&SqlResult>) -> usize {
    result.and_then(|r| r.meta().ok().flatten()).and_then(|m| m.changes).unwrap_or(0)
}

/// Runs a write whose row count does not matter.
pub async fn exec<'a>(db: impl OnDb<'a>, sql: &str, params: &[JsValue]) -> StoreResult<()> {
    run(db, sql, params).await.map(|_| ())
}

/// Runs statements as one atomic D1 batch (all or nothing; a remote batch is still one D1
/// batch, run by the data script).
pub async fn batch<'a>(db: impl OnDb<'a>, statements: Vec<SqlStatement>) -> StoreResult<Vec<SqlResult>> {
    db.on().execute(Mode::Batch, statements).await
}

/// The one place a D1 failure (on database `database`) becomes an error: classified by kind
/// (the message is kept for the logs, never sent).
pub fn d1_error(database: usize, e: worker::Error) -> StoreError {
    let message = d1_message(&e);
    error::classify(&message, database, format!("DB_{database}: {message}"))
}

/// A D1 failure's text as [`d1_error`] classifies it (a data script sends it back as is).
pub fn d1_message(e: &worker::Error) -> String {
    match e {
        worker::Error::D1(d1) => {
            let js: &worker::js_sys::Error = d1.as_ref();
            format!("D1: {} ({})", String::from(js.message()), d1.cause())
        }
        other => format!("D1: {other}"),
    }
}

/// One entry of a list of users (followers, likers, a Mastodon list's members): who, and the
/// list's sort time (follow time, like time, membership time).
#[derive(serde::Deserialize)]
pub struct EdgeKey {
    pub other: crate::domain::ids::UserId,
    pub sort_at: i64,
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
pub fn returned_ids(results: &[SqlResult]) -> Vec<i64> {
    results.iter().filter_map(|r| r.results::<IdRow>().ok()).flatten().map(|r| r.id).collect()
}

/// The `id` of the first row a batch statement returned.
pub fn first_id(result: Option<&SqlResult>) -> StoreResult<i64> {
    let rows: Vec<IdRow> = result.map(|r| r.results()).transpose()?.unwrap_or_default();
    rows.first().map(|r| r.id).ok_or_else(|| StoreError::Internal("a RETURNING statement gave no row".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::UserId;

    #[test]
    fn an_id_list_is_a_json_array_of_numbers() {
        assert_eq!(id_list::<i64>(&[]), "[]");
        assert_eq!(
            id_list(&[UserId::from_trusted(7), UserId::from_trusted(9_007_199_254_740_991)]),
            "[7,9007199254740991]"
        );
        let parsed: Vec<i64> = serde_json::from_str(&id_list(&[1i64, 2, 3])).unwrap_or_default();
        assert_eq!(parsed, vec![1, 2, 3]);
    }

    #[test]
    fn an_objects_d1_work_round_trips_its_header_and_splits_among_a_group() {
        let before = ObjectD1 { database: 2, statements: 4, rows_read: 10, rows_written: 3 };
        let after = ObjectD1 { database: 2, statements: 14, rows_read: 40, rows_written: 9 };
        let group = after.since(before);
        assert_eq!(group, ObjectD1 { database: 2, statements: 10, rows_read: 30, rows_written: 6 });
        assert_eq!(group.share(4), ObjectD1 { database: 2, statements: 3, rows_read: 8, rows_written: 2 });
        assert_eq!(group.share(0), group, "a group of none is treated as one");
        assert_eq!(ObjectD1::parse(&group.to_header()), Some(group));
        for bad in ["", "2 10 30", "2 10 30 6 1", "x 10 30 6", "-1 10 30 6"] {
            assert_eq!(ObjectD1::parse(bad), None, "{bad:?}");
        }
        // A like's commit share and its liker side on another database, in one header.
        let side = ObjectD1 { database: 0, statements: 1, rows_read: 1, rows_written: 2 };
        assert_eq!(ObjectD1::parse_list(&ObjectD1::list_header(&[group, side])), Some(vec![group, side]));
        assert_eq!(ObjectD1::parse_list(&group.to_header()), Some(vec![group]));
        assert_eq!(ObjectD1::parse_list("2 10 30 6,x"), None);
    }

    #[test]
    fn object_work_counts_as_statements_on_its_database() {
        let io = Io::default();
        io.record_object_d1(ObjectD1 { database: 1, statements: 6, rows_read: 5, rows_written: 4 });
        io.record_object_d1(ObjectD1::default());
        assert_eq!(io.d1_statements.get(), 6);
        let touched = io.databases_touched();
        assert_eq!(touched.len(), 1);
        assert_eq!((touched[0].0, touched[0].1.statements, touched[0].1.rows_written), (1, 6, 4));
    }
}
