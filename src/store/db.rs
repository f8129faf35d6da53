//! The seam between the engine and the database a memory lives in: one
//! handle, [`Db`], over a SQLite connection or a PostgreSQL client, with
//! one value type for parameters and columns ([`Val`]) and one row type
//! ([`Row`]).
//!
//! SQL passed through the seam is written once, with SQLite's numbered
//! parameters (`?1`, `?2`); PostgreSQL receives them as `$1`, `$2`. What
//! the two dialects spell differently (a JSON path, full-text search) is
//! asked of [`Backend`] by the code that writes the SQL, so no caller
//! branches on the backend itself. JSON columns are `TEXT` in SQLite and
//! `jsonb` in PostgreSQL; [`Row::obj`] reads either as an object.

use crate::kip::{KipError, KipResult};
use serde_json::{Map, Value};
use std::cell::RefCell;

/// Which database a handle speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The JSON value at `path` (a bound parameter made by
    /// [`Backend::json_path`]) inside the JSON column `col`.
    pub fn json_get(self, col: &str, path: &str) -> String {
        match self {
            Backend::Sqlite => format!("json_extract({col}, {path})"),
            Backend::Postgres => format!("({col} #> ({path}::text)::text[])"),
        }
    }

    /// The parameter naming a path of keys for [`Backend::json_get`]:
    /// `$."a"."b"` for SQLite, `{"a","b"}` for PostgreSQL.
    pub fn json_path(self, keys: &[&str]) -> Val {
        // an array element escapes backslashes and quotes; a SQLite path
        // key only quotes (as the planner writes it)
        let quoted = |k: &str| format!("\"{}\"", k.replace('\\', "\\\\").replace('"', "\\\""));
        Val::Text(match self {
            Backend::Sqlite => {
                let mut p = String::from("$");
                for k in keys {
                    p.push_str(".\"");
                    p.push_str(&k.replace('"', "\\\""));
                    p.push('"');
                }
                p
            }
            Backend::Postgres => format!(
                "{{{}}}",
                keys.iter().map(|k| quoted(k)).collect::<Vec<_>>().join(",")
            ),
        })
    }

    /// The name this backend is shown by.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// A parameter or a column's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// A JSON document: `TEXT` in SQLite, `jsonb` in PostgreSQL.
    Json(Value),
    /// A JSON document already serialised (written as is, no copy made).
    JsonText(String),
    Bytes(Vec<u8>),
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(v)
    }
}

impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(v.to_string())
    }
}

impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(v)
    }
}

impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Text(v.clone())
    }
}

impl From<f64> for Val {
    fn from(v: f64) -> Val {
        Val::Real(v)
    }
}

impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Int(v.into())
    }
}

macro_rules! int_val {
    ($($t:ty),*) => {$(
        impl From<$t> for Val {
            fn from(v: $t) -> Val {
                Val::Int(i64::try_from(v).unwrap_or(i64::MAX))
            }
        }
    )*};
}
int_val!(i32, u8, u32, u64, usize);

impl From<&Value> for Val {
    fn from(v: &Value) -> Val {
        Val::JsonText(v.to_string())
    }
}

/// The arguments of a statement, each converted to a [`Val`]:
/// `args![id, name, None::<i64>]`.
#[macro_export]
macro_rules! args {
    () => { &[] as &[$crate::store::db::Val] };
    ($($a:expr),+ $(,)?) => { &[$($crate::store::db::Val::from($a)),+] as &[$crate::store::db::Val] };
}

impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Val {
        v.map_or(Val::Null, Into::into)
    }
}

/// One row of an answer, its columns in the order selected.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Val>);

impl Row {
    fn at(&self, i: usize) -> KipResult<&Val> {
        self.0.get(i).ok_or_else(|| {
            KipError::internal(format!("no column {i} in a row of {}", self.0.len()))
        })
    }

    pub fn i64(&self, i: usize) -> KipResult<i64> {
        match self.at(i)? {
            Val::Int(v) => Ok(*v),
            Val::Real(f) if f.fract() == 0.0 => Ok(*f as i64),
            other => Err(KipError::internal(format!(
                "column {i} is {other:?}, not an integer"
            ))),
        }
    }

    pub fn opt_i64(&self, i: usize) -> KipResult<Option<i64>> {
        match self.at(i)? {
            Val::Null => Ok(None),
            _ => self.i64(i).map(Some),
        }
    }

    pub fn f64(&self, i: usize) -> KipResult<f64> {
        match self.at(i)? {
            Val::Real(f) => Ok(*f),
            Val::Int(v) => Ok(*v as f64),
            other => Err(KipError::internal(format!(
                "column {i} is {other:?}, not a number"
            ))),
        }
    }

    /// A text column, moved out of the row (the row keeps a null).
    pub fn take_text(&mut self, i: usize) -> KipResult<String> {
        match self.0.get_mut(i) {
            Some(Val::Text(s)) => Ok(std::mem::take(s)),
            _ => self.text(i),
        }
    }

    /// A JSON object column, moved out of the row.
    pub fn take_obj(&mut self, i: usize) -> KipResult<Map<String, Value>> {
        match self.0.get_mut(i) {
            Some(Val::Json(Value::Object(m))) => Ok(std::mem::take(m)),
            _ => self.obj(i),
        }
    }

    pub fn text(&self, i: usize) -> KipResult<String> {
        match self.at(i)? {
            Val::Text(s) => Ok(s.clone()),
            Val::Json(v) => Ok(v.to_string()),
            Val::JsonText(s) => Ok(s.clone()),
            Val::Int(v) => Ok(v.to_string()),
            Val::Real(f) => Ok(f.to_string()),
            other => Err(KipError::internal(format!(
                "column {i} is {other:?}, not text"
            ))),
        }
    }

    /// A blob column.
    pub fn bytes(&self, i: usize) -> KipResult<Vec<u8>> {
        match self.at(i)? {
            Val::Bytes(b) => Ok(b.clone()),
            Val::Text(s) => Ok(s.clone().into_bytes()),
            other => Err(KipError::internal(format!(
                "column {i} is {other:?}, not bytes"
            ))),
        }
    }

    pub fn opt_text(&self, i: usize) -> KipResult<Option<String>> {
        match self.at(i)? {
            Val::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    /// A JSON column as a value (text parsed; SQL null is JSON null).
    pub fn json(&self, i: usize) -> KipResult<Value> {
        Ok(match self.at(i)? {
            Val::Json(v) => v.clone(),
            Val::Text(s) | Val::JsonText(s) => {
                serde_json::from_str(s).unwrap_or(Value::String(s.clone()))
            }
            Val::Int(v) => Value::from(*v),
            Val::Real(f) => Value::from(*f),
            Val::Null => Value::Null,
            Val::Bytes(_) => {
                return Err(KipError::internal(format!("column {i} is bytes, not JSON")));
            }
        })
    }

    /// A JSON column holding an object (anything else reads as empty).
    pub fn obj(&self, i: usize) -> KipResult<Map<String, Value>> {
        Ok(match self.json(i)? {
            Value::Object(m) => m,
            _ => Map::new(),
        })
    }
}

/// A PostgreSQL client and the statements it has prepared (a statement is
/// parsed and planned by the server once per connection, as SQLite's
/// statement cache does).
pub struct PgConn {
    /// (dropped by hand: see `Drop`)
    pub client: std::mem::ManuallyDrop<super::pg_session::PgSession>,
    /// The open transaction's `BEGIN`, not sent yet: it goes with the
    /// first statement (one round trip for both).
    pending_begin: Option<&'static str>,
    /// A query whose answer is not wanted yet ([`Db::defer`]): it goes,
    /// right behind any `BEGIN`, with the next statement.
    deferred: Option<(String, Prepared, Vec<Val>)>,
    /// The first row of the deferred query, once sent.
    deferred_row: Option<Option<Row>>,
    cache: std::collections::HashMap<String, Prepared>,
    /// A transaction is open (`begin`, or a savepoint's own).
    in_tx: bool,
    /// The open transaction was begun by a savepoint, and ends with it
    /// (as SQLite's outermost savepoint does).
    savepoint_tx: bool,
    /// The open transaction writes: rows read to be written are locked.
    write_tx: bool,
    /// The next statement carries the transaction's `COMMIT` behind it
    /// ([`Db::commit_with_next`]).
    commit_next: bool,
    /// The transaction ended with a statement that carried its `COMMIT`:
    /// [`Db::commit`] has nothing left to send.
    committed: bool,
}

/// A prepared statement and, for each of its parameters, the argument it
/// takes.
#[derive(Clone)]
struct Prepared {
    statement: postgres::Statement,
    args: std::sync::Arc<[usize]>,
}

/// Prepared statements a connection keeps; past this the cache starts over.
const PG_STATEMENT_CACHE: usize = 512;

impl PgConn {
    pub fn new(client: super::pg_session::PgSession) -> PgConn {
        PgConn {
            client: std::mem::ManuallyDrop::new(client),
            pending_begin: None,
            commit_next: false,
            committed: false,
            deferred: None,
            deferred_row: None,
            cache: Default::default(),
            in_tx: false,
            savepoint_tx: false,
            write_tx: false,
        }
    }

    /// The prepared form of `sql` (written with `?N` parameters).
    fn statement(&mut self, sql: &str) -> KipResult<Prepared> {
        if let Some(st) = self.cache.get(sql) {
            return Ok(st.clone());
        }
        let (text, args) = compact(sql);
        let statement = self
            .client
            .prepare(&text)
            .map_err(|e| super::postgres::pg_error("a statement", &e))?;
        if self.cache.len() >= PG_STATEMENT_CACHE {
            self.cache.clear();
        }
        let st = Prepared {
            statement,
            args: args.into(),
        };
        self.cache.insert(sql.to_string(), st.clone());
        Ok(st)
    }

    /// Keeps the first row of the deferred query a statement carried.
    fn took_deferred(&mut self, rows: Option<Vec<postgres::Row>>) -> KipResult<()> {
        if let Some(rows) = rows {
            self.deferred_row = Some(rows.first().map(pg_row).transpose()?);
        }
        Ok(())
    }

    /// The `COMMIT` the next statement carries, if [`Db::commit_with_next`]
    /// asked for one.
    fn take_commit(&mut self) -> Option<&'static str> {
        std::mem::take(&mut self.commit_next).then_some("COMMIT")
    }

    /// After a statement: one that carried the `COMMIT` ended the
    /// transaction, committed (or, if anything in it failed, rolled back:
    /// a failed transaction's `COMMIT` is a `ROLLBACK`).
    fn finished(&mut self, carried_commit: bool) {
        if carried_commit {
            self.ended();
            self.committed = true;
        }
    }

    /// No transaction is open any more.
    fn ended(&mut self) {
        self.pending_begin = None;
        self.deferred = None;
        self.deferred_row = None;
        self.in_tx = false;
        self.savepoint_tx = false;
        self.write_tx = false;
        self.commit_next = false;
    }

    /// Forgets prepared statements (after the schema changed).
    pub fn forget_statements(&mut self) {
        self.cache.clear();
    }
}

/// A client says goodbye to the server on its own small runtime, which
/// cannot start inside another: a connection dropped where async code
/// runs (a server shutting down) is closed on a thread of its own.
impl Drop for PgConn {
    fn drop(&mut self) {
        // SAFETY: `client` is taken once, here, and never used again
        let client = unsafe { std::mem::ManuallyDrop::take(&mut self.client) };
        if tokio::runtime::Handle::try_current().is_ok() {
            let _ = std::thread::Builder::new()
                .name("somnus-pg-close".into())
                .spawn(move || drop(client));
        } else {
            drop(client);
        }
    }
}

/// A memory's database as the engine owns it: a SQLite connection or a
/// PostgreSQL connection.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<RefCell<PgConn>>),
}

impl Conn {
    /// The handle the engine's readers and writers take.
    pub fn db(&self) -> Db<'_> {
        match self {
            Conn::Sqlite(c) => Db::Sqlite(c),
            Conn::Postgres(c) => Db::Postgres(c),
        }
    }
}

/// A memory's database, as the code that reads and writes it holds it
/// (borrowed: the connection stays where it lives).
#[derive(Clone, Copy)]
pub enum Db<'a> {
    Sqlite(&'a rusqlite::Connection),
    /// A client needs `&mut` to talk; the engine's reads take `&self`.
    Postgres(&'a RefCell<PgConn>),
}

impl<'a> From<&'a rusqlite::Connection> for Db<'a> {
    fn from(c: &'a rusqlite::Connection) -> Db<'a> {
        Db::Sqlite(c)
    }
}

impl<'a> From<&'a RefCell<PgConn>> for Db<'a> {
    fn from(c: &'a RefCell<PgConn>) -> Db<'a> {
        Db::Postgres(c)
    }
}

impl<'a> From<&'a Conn> for Db<'a> {
    fn from(c: &'a Conn) -> Db<'a> {
        c.db()
    }
}

impl<'a> Db<'a> {
    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Whether its statements run outside any transaction, each seeing
    /// the memory as it is when it starts (SQLite, nothing begun).
    pub fn outside_transaction(&self) -> bool {
        matches!(self, Db::Sqlite(c) if c.is_autocommit())
    }

    /// Whether both are the same connection.
    pub fn same(&self, other: Db<'_>) -> bool {
        match (self, other) {
            (Db::Sqlite(a), Db::Sqlite(b)) => std::ptr::eq(*a, b),
            (Db::Postgres(a), Db::Postgres(b)) => std::ptr::eq(*a, b),
            _ => false,
        }
    }

    /// The SQLite connection, for what has not yet moved behind the seam.
    pub fn sqlite(&self) -> Option<&'a rusqlite::Connection> {
        match self {
            Db::Sqlite(c) => Some(c),
            Db::Postgres(_) => None,
        }
    }

    /// Runs a statement; how many rows it changed.
    pub fn execute(&self, sql: &str, args: &[Val]) -> KipResult<u64> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let n = st.parameter_count();
                Ok(st.execute(rusqlite::params_from_iter(args.iter().take(n)))? as u64)
            }
            Db::Postgres(c) => {
                let mut c = c.borrow_mut();
                let st = c.statement(sql)?;
                let args = pg_args(&st, args)?;
                let begin = c.pending_begin.take();
                let last = c.take_commit();
                let deferred = c.deferred.take();
                let pa = deferred
                    .as_ref()
                    .map(|(_, p, a)| pg_args(p, a))
                    .transpose()?;
                let pre = deferred
                    .as_ref()
                    .zip(pa.as_deref())
                    .map(|((_, p, _), a)| (&p.statement, a));
                let out = c
                    .client
                    .execute_with(begin, pre, &st.statement, &args, last)
                    .map_err(|e| super::postgres::pg_error("a statement", &e));
                c.finished(last.is_some());
                let (first, n) = out?;
                c.took_deferred(first)?;
                Ok(n)
            }
        }
    }

    /// Runs a query; its rows. Parameters past the ones the statement
    /// uses are ignored.
    pub fn query(&self, sql: &str, args: &[Val]) -> KipResult<Vec<Row>> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let n = st.column_count();
                let np = st.parameter_count();
                let rows = st.query_map(rusqlite::params_from_iter(args.iter().take(np)), |r| {
                    let mut row = Vec::with_capacity(n);
                    for i in 0..n {
                        row.push(sqlite_val(r.get_ref(i)?)?);
                    }
                    Ok(row)
                })?;
                let mut out = Vec::new();
                for r in rows {
                    out.push(Row(r?));
                }
                Ok(out)
            }
            Db::Postgres(c) => {
                let mut c = c.borrow_mut();
                let st = c.statement(sql)?;
                let args = pg_args(&st, args)?;
                let begin = c.pending_begin.take();
                let last = c.take_commit();
                let deferred = c.deferred.take();
                let pa = deferred
                    .as_ref()
                    .map(|(_, p, a)| pg_args(p, a))
                    .transpose()?;
                let pre = deferred
                    .as_ref()
                    .zip(pa.as_deref())
                    .map(|((_, p, _), a)| (&p.statement, a));
                let out = c
                    .client
                    .query_with(begin, pre, &st.statement, &args, last)
                    .map_err(|e| super::postgres::pg_error("a query", &e));
                c.finished(last.is_some());
                let (first, rows) = out?;
                c.took_deferred(first)?;
                rows.iter().map(pg_row).collect()
            }
        }
    }

    /// The first row of a query, if any.
    pub fn query_opt(&self, sql: &str, args: &[Val]) -> KipResult<Option<Row>> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// The first column of the first row, as an integer (None: no row or
    /// a null).
    pub fn query_i64(&self, sql: &str, args: &[Val]) -> KipResult<Option<i64>> {
        match self.query_opt(sql, args)? {
            Some(r) => r.opt_i64(0),
            None => Ok(None),
        }
    }

    /// Queues a query whose answer is wanted later ([`Db::deferred`]), on
    /// PostgreSQL: it is sent with the next statement (one round trip for
    /// both; its error comes first). (SQLite has no round trips to save.)
    pub fn defer(&self, sql: &str, args: Vec<Val>) -> KipResult<()> {
        match self {
            Db::Sqlite(_) => Err(KipError::internal("a deferred query on SQLite")),
            Db::Postgres(c) => {
                let pending = c.borrow().deferred.is_some();
                if pending {
                    // (one at a time: the one before is sent first)
                    self.deferred()?;
                }
                let mut c = c.borrow_mut();
                let st = c.statement(sql)?;
                c.deferred = Some((sql.to_string(), st, args));
                c.deferred_row = None;
                Ok(())
            }
        }
    }

    /// The first row of the query [`Db::defer`] queued: sent now if no
    /// statement has carried it yet.
    pub fn deferred(&self) -> KipResult<Option<Row>> {
        let Db::Postgres(c) = self else {
            return Err(KipError::internal("a deferred query on SQLite"));
        };
        let unsent = c.borrow_mut().deferred.take();
        if let Some((sql, _, args)) = unsent {
            return self.query_opt(&sql, &args);
        }
        c.borrow_mut()
            .deferred_row
            .take()
            .ok_or_else(|| KipError::internal("no deferred query was sent"))
    }

    /// Opens a transaction. A write transaction takes SQLite's write lock
    /// at once (retrying a few times while another process commits); on
    /// PostgreSQL rows are locked as they are written. A read sees one
    /// snapshot of the memory on both.
    pub fn begin(&self, write: bool) -> KipResult<()> {
        match self {
            Db::Sqlite(c) => {
                let sql = if write {
                    "BEGIN IMMEDIATE"
                } else {
                    "BEGIN DEFERRED"
                };
                let mut attempt = 0;
                loop {
                    match c.prepare_cached(sql).and_then(|mut st| st.execute([])) {
                        Ok(_) => return Ok(()),
                        Err(rusqlite::Error::SqliteFailure(e, _))
                            if e.code == rusqlite::ErrorCode::DatabaseBusy && attempt < 3 =>
                        {
                            attempt += 1;
                            std::thread::sleep(std::time::Duration::from_millis(50 * attempt));
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            Db::Postgres(c) => {
                let mut c = c.borrow_mut();
                // The snapshot is taken by the first statement anyway:
                // BEGIN waits to travel with it, one round trip for both.
                // BEGIN fails only on a broken connection or inside a
                // failed transaction, and there the statement behind it
                // fails as well; its error is returned first.
                c.pending_begin = Some(if write {
                    "BEGIN"
                } else {
                    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                });
                c.in_tx = true;
                c.write_tx = write;
                c.committed = false;
                c.commit_next = false;
                Ok(())
            }
        }
    }

    /// What a query reading a row it will write appends: on PostgreSQL,
    /// inside a write, `FOR UPDATE` (a concurrent writer of the same row
    /// waits for this one to commit, then reads what it wrote: no update
    /// is lost and `EXPECT VERSION` compares with the version it
    /// replaces). SQLite has one writer at a time.
    pub fn row_lock(&self) -> &'static str {
        match self {
            Db::Postgres(c) if c.borrow().write_tx => " FOR UPDATE",
            _ => "",
        }
    }

    /// Opens savepoint `name`. Outside a transaction it opens one that
    /// [`Db::release`] of the same savepoint ends (SQLite's rule, kept on
    /// PostgreSQL).
    pub fn savepoint(&self, name: &str) -> KipResult<()> {
        if let Db::Postgres(c) = self {
            let open = c.borrow().in_tx;
            if !open {
                self.batch(&format!("BEGIN; SAVEPOINT {name}"))?;
                let mut c = c.borrow_mut();
                c.in_tx = true;
                c.savepoint_tx = true;
                c.write_tx = true;
                c.committed = false;
                return Ok(());
            }
        }
        self.batch(&format!("SAVEPOINT {name}"))
    }

    /// Ends savepoint `name`: keeps what was done since (`keep`), or undoes
    /// it. A transaction the savepoint opened ends with it.
    pub fn release(&self, name: &str, keep: bool) -> KipResult<()> {
        let sql = if keep {
            format!("RELEASE {name}")
        } else {
            format!("ROLLBACK TO {name}; RELEASE {name}")
        };
        match self {
            Db::Sqlite(_) => self.batch(&sql),
            Db::Postgres(c) => {
                let own = c.borrow().savepoint_tx;
                let out = self.batch(&sql);
                if own {
                    c.borrow_mut().ended();
                    return match out {
                        Ok(()) => self.batch("COMMIT"),
                        Err(e) => {
                            let _ = self.batch("ROLLBACK");
                            Err(e)
                        }
                    };
                }
                out
            }
        }
    }

    /// Commits the open transaction.
    pub fn commit(&self) -> KipResult<()> {
        match self {
            Db::Sqlite(c) => {
                c.prepare_cached("COMMIT")?.execute([])?;
                Ok(())
            }
            Db::Postgres(c) => {
                let (unsent, committed) = {
                    let c = c.borrow();
                    (c.pending_begin.is_some(), c.committed)
                };
                c.borrow_mut().ended();
                if unsent || committed {
                    return Ok(());
                }
                self.batch("COMMIT")
            }
        }
    }

    /// On PostgreSQL, the open transaction's `COMMIT` travels right behind
    /// the next statement, in its round trip, and the transaction ends
    /// with it: committed if the statement (and all before it) succeeded,
    /// rolled back otherwise ([`Db::commit`] then has nothing to send).
    /// For a write whose last statement is known; only what comes after
    /// it reads outside the transaction. SQLite commits in process:
    /// nothing to save, [`Db::commit`] commits.
    pub fn commit_with_next(&self) {
        if let Db::Postgres(c) = self {
            let mut c = c.borrow_mut();
            if c.in_tx && !c.savepoint_tx {
                c.commit_next = true;
            }
        }
    }

    /// Whether the transaction already ended with a statement that carried
    /// its `COMMIT` ([`Db::commit_with_next`]).
    pub fn committed(&self) -> bool {
        match self {
            Db::Postgres(c) => c.borrow().committed,
            Db::Sqlite(_) => false,
        }
    }

    /// Rolls the open transaction back (nothing open: nothing to do).
    pub fn rollback(&self) -> KipResult<()> {
        match self {
            Db::Sqlite(c) => {
                if !c.is_autocommit() {
                    c.prepare_cached("ROLLBACK")?.execute([])?;
                }
                Ok(())
            }
            Db::Postgres(c) => {
                let mut c = c.borrow_mut();
                let unsent = c.pending_begin.is_some();
                let read = !c.write_tx;
                let over = c.committed && !c.in_tx;
                c.ended();
                if unsent || over {
                    // nothing was sent: nothing to end
                    Ok(())
                } else if read {
                    // nothing waits on a read's end: it is sent, and its
                    // answer read with the next request's
                    c.client.send("ROLLBACK");
                    Ok(())
                } else {
                    c.client
                        .batch_execute("ROLLBACK")
                        .map_err(|e| super::postgres::pg_error("statements", &e))
                }
            }
        }
    }

    /// Runs statements separated by `;`, without parameters.
    pub fn batch(&self, sql: &str) -> KipResult<()> {
        match self {
            Db::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Db::Postgres(c) => {
                let mut c = c.borrow_mut();
                let begin = c.pending_begin.take();
                let last = c.take_commit();
                let deferred = c.deferred.take();
                let pa = deferred
                    .as_ref()
                    .map(|(_, p, a)| pg_args(p, a))
                    .transpose()?;
                let pre = deferred
                    .as_ref()
                    .zip(pa.as_deref())
                    .map(|((_, p, _), a)| (&p.statement, a));
                let out = c
                    .client
                    .batch_with(begin, pre, sql, last)
                    .map_err(|e| super::postgres::pg_error("statements", &e));
                c.finished(last.is_some());
                c.took_deferred(out?)
            }
        }
    }
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value as V};
        Ok(match self {
            Val::Null => ToSqlOutput::Owned(V::Null),
            Val::Int(i) => ToSqlOutput::Owned(V::Integer(*i)),
            Val::Real(f) => ToSqlOutput::Owned(V::Real(*f)),
            Val::Text(s) => ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(s.as_bytes())),
            Val::Json(v) => ToSqlOutput::Owned(V::Text(v.to_string())),
            Val::JsonText(s) => {
                ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(s.as_bytes()))
            }
            Val::Bytes(b) => ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Blob(b)),
        })
    }
}

fn sqlite_val(v: rusqlite::types::ValueRef<'_>) -> rusqlite::Result<Val> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(i) => Val::Int(i),
        ValueRef::Real(f) => Val::Real(f),
        // (checked whole first, the common case, which is faster than
        // the lossy reading byte by byte)
        ValueRef::Text(t) => Val::Text(match std::str::from_utf8(t) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(t).into_owned(),
        }),
        ValueRef::Blob(b) => Val::Bytes(b.to_vec()),
    })
}

/// The arguments a prepared statement takes (the first as many as it has
/// parameters), each converted to the type the server inferred for it.
fn pg_args<'v>(
    st: &Prepared,
    args: &'v [Val],
) -> KipResult<Vec<&'v (dyn postgres::types::ToSql + Sync)>> {
    st.args
        .iter()
        .map(|&i| {
            args.get(i)
                .map(|a| a as &(dyn postgres::types::ToSql + Sync))
                .ok_or_else(|| {
                    KipError::internal(format!(
                        "a statement uses parameter {}; {} were given",
                        i + 1,
                        args.len()
                    ))
                })
        })
        .collect()
}

impl postgres::types::ToSql for Val {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        use postgres::types::{IsNull, Type};
        let mismatch = || -> Box<dyn std::error::Error + Sync + Send> {
            format!("a {self:?} cannot be sent as PostgreSQL {ty}").into()
        };
        match (self, ty) {
            (Val::Null, _) => Ok(IsNull::Yes),
            (Val::Int(i), t) if *t == Type::INT8 => i.to_sql(ty, out),
            (Val::Int(i), t) if *t == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            (Val::Int(i), t) if *t == Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
            (Val::Int(i), t) if *t == Type::BOOL => (*i != 0).to_sql(ty, out),
            (Val::Int(i), t) if *t == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            (Val::Real(f), t) if *t == Type::FLOAT8 => f.to_sql(ty, out),
            (Val::Real(f), t) if *t == Type::FLOAT4 => (*f as f32).to_sql(ty, out),
            (Val::Real(f), t) if *t == Type::INT8 && f.fract() == 0.0 => {
                (*f as i64).to_sql(ty, out)
            }
            (Val::Bytes(b), t) if *t == Type::BYTEA => b.to_sql(ty, out),
            (v, t) if *t == Type::JSONB || *t == Type::JSON => {
                if *t == Type::JSONB {
                    // jsonb's binary form: a version byte, then the text
                    out.extend_from_slice(&[1]);
                }
                match v {
                    Val::Json(j) => out.extend_from_slice(j.to_string().as_bytes()),
                    Val::JsonText(s) | Val::Text(s) => out.extend_from_slice(s.as_bytes()),
                    Val::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
                    Val::Real(f) => out.extend_from_slice(Value::from(*f).to_string().as_bytes()),
                    _ => return Err(mismatch()),
                }
                Ok(IsNull::No)
            }
            (v, t)
                if *t == Type::TEXT
                    || *t == Type::VARCHAR
                    || *t == Type::NAME
                    || *t == Type::BPCHAR
                    || *t == Type::UNKNOWN =>
            {
                let s = match v {
                    Val::Text(s) | Val::JsonText(s) => std::borrow::Cow::Borrowed(s.as_str()),
                    Val::Json(j) => j.to_string().into(),
                    Val::Int(i) => i.to_string().into(),
                    Val::Real(f) => f.to_string().into(),
                    _ => return Err(mismatch()),
                };
                out.extend_from_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            _ => Err(mismatch()),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn pg_row(r: &postgres::Row) -> KipResult<Row> {
    use postgres::types::Type;
    let mut out = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let err = |e: postgres::Error| super::postgres::pg_error("reading a column", &e);
        let t = col.type_();
        let v = if *t == Type::INT8 {
            r.try_get::<_, Option<i64>>(i).map_err(err)?.map(Val::Int)
        } else if *t == Type::INT4 {
            r.try_get::<_, Option<i32>>(i)
                .map_err(err)?
                .map(|v| Val::Int(v.into()))
        } else if *t == Type::INT2 {
            r.try_get::<_, Option<i16>>(i)
                .map_err(err)?
                .map(|v| Val::Int(v.into()))
        } else if *t == Type::BOOL {
            r.try_get::<_, Option<bool>>(i)
                .map_err(err)?
                .map(|v| Val::Int(v.into()))
        } else if *t == Type::FLOAT8 {
            r.try_get::<_, Option<f64>>(i).map_err(err)?.map(Val::Real)
        } else if *t == Type::FLOAT4 {
            r.try_get::<_, Option<f32>>(i)
                .map_err(err)?
                .map(|v| Val::Real(v.into()))
        } else if *t == Type::JSONB || *t == Type::JSON {
            r.try_get::<_, Option<Value>>(i)
                .map_err(err)?
                .map(Val::Json)
        } else if *t == Type::BYTEA {
            r.try_get::<_, Option<Vec<u8>>>(i)
                .map_err(err)?
                .map(Val::Bytes)
        } else if *t == Type::TEXT || *t == Type::VARCHAR || *t == Type::NAME || *t == Type::BPCHAR
        {
            r.try_get::<_, Option<String>>(i)
                .map_err(err)?
                .map(Val::Text)
        } else {
            return Err(KipError::internal(format!(
                "column {} is of PostgreSQL type {t}, which somnus does not read",
                col.name()
            )));
        };
        out.push(v.unwrap_or(Val::Null));
    }
    Ok(Row(out))
}

/// SQLite's `?1` parameters as PostgreSQL's `$1`, outside string literals
/// and quoted names (a bare `?` counts on from the last number, as SQLite
/// numbers it).
pub fn numbered(sql: &str) -> String {
    compact(sql).0
}

/// `numbered`, with the parameters renumbered densely in the order they
/// first appear (PostgreSQL must know the type of every `$n` up to the
/// highest, so an argument the statement never uses cannot keep a
/// number): the text, and for each `$k` the index of the argument it
/// takes.
fn compact(sql: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    let mut last = 0usize;
    let mut order: Vec<usize> = Vec::new();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n = digits.parse::<usize>().unwrap_or(last + 1);
                last = last.max(n);
                let arg = n.saturating_sub(1);
                let k = match order.iter().position(|a| *a == arg) {
                    Some(k) => k,
                    None => {
                        order.push(arg);
                        order.len() - 1
                    }
                };
                out.push('$');
                out.push_str(&(k + 1).to_string());
            }
            None => out.push(c),
        }
    }
    (out, order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_are_renumbered_outside_literals() {
        assert_eq!(
            numbered("SELECT a FROM t WHERE x = ?1 AND y = ?2 AND z = '?3' AND \"q?\" = ?"),
            "SELECT a FROM t WHERE x = $1 AND y = $2 AND z = '?3' AND \"q?\" = $3"
        );
        assert_eq!(numbered("VALUES (?, ?, ?2)"), "VALUES ($1, $2, $2)");
        assert_eq!(numbered("SELECT 'it''s ?1'"), "SELECT 'it''s ?1'");
    }

    #[test]
    fn sqlite_reads_and_writes_through_the_seam() {
        let conn = rusqlite::Connection::open_in_memory().expect("open");
        let db = Db::from(&conn);
        assert_eq!(db.backend(), Backend::Sqlite);
        db.batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, doc TEXT, score REAL, raw BLOB)",
        )
        .expect("create");
        let n = db
            .execute(
                "INSERT INTO t(id, name, doc, score, raw) VALUES (?1, ?2, ?3, ?4, ?5)",
                &[
                    Val::Int(7),
                    Val::from("Ada"),
                    Val::Json(json!({"role": "lead", "n": 2})),
                    Val::Real(0.5),
                    Val::Bytes(vec![0, 1]),
                ],
            )
            .expect("insert");
        assert_eq!(n, 1);
        let r = db
            .query_opt(
                "SELECT id, name, doc, score, raw, NULL FROM t WHERE id = ?1",
                &[Val::Int(7)],
            )
            .expect("query")
            .expect("row");
        assert_eq!(r.i64(0).expect("id"), 7);
        assert_eq!(r.text(1).expect("name"), "Ada");
        assert_eq!(r.obj(2).expect("doc")["role"], json!("lead"));
        assert_eq!(r.f64(3).expect("score"), 0.5);
        assert_eq!(r.0[4], Val::Bytes(vec![0, 1]));
        assert_eq!(r.opt_text(5).expect("null"), None);
        assert!(r.i64(1).is_err());
        assert!(r.text(9).is_err());
        let path = db.backend().json_get("doc", "?1");
        let r = db
            .query(
                &format!("SELECT id FROM t WHERE {path} = ?2"),
                &[db.backend().json_path(&["n"]), Val::Int(2)],
            )
            .expect("path");
        assert_eq!(r.len(), 1);
        assert!(db.query("SELECT * FROM nowhere", &[]).is_err());
    }
}
