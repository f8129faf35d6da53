//! SQLite storage: schema and migrations, element ids, and row access.
//!
//! Concepts and propositions share one id sequence, so a proposition's
//! subject or object is a single integer that names either kind, and ids are
//! never reused (the counter only grows).

pub mod copy;
pub mod db;
pub mod fts;
pub mod ids;
pub mod keys;
pub mod meta;
pub mod migrations;
pub mod pg_session;
pub mod place;
pub mod postgres;
pub mod read_file;

use crate::kip::{KipError, KipResult};
use db::{Backend, Db, Row, Val};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

pub use fts::{sync_fts, sync_fts_for_read};

pub const SCHEMA_VERSION: i64 = migrations::MIGRATIONS.len() as i64;

fn wait_for_lock(attempt: i32) -> bool {
    if attempt >= 10_000 {
        return false;
    }
    std::thread::sleep(std::time::Duration::from_millis(1));
    true
}

/// How a memory is opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Open without writing anything: no migration, no bootstrap; every
    /// write is refused by SQLite itself. Works on files this user cannot
    /// write.
    pub readonly: bool,
    /// Take over a SQLite file that other software created (its tables are
    /// left alone; somnus adds its own). Refused otherwise.
    pub adopt: bool,
}

/// `PRAGMA application_id` of a somnus memory ("SMNS").
pub const APPLICATION_ID: i64 = 0x534D_4E53;

/// A SQLite URI for the file at `path` with `query` (the characters a
/// URI reserves escaped).
pub fn sqlite_uri(path: &std::path::Path, query: &str) -> String {
    let enc = path
        .to_string_lossy()
        .replace('%', "%25")
        .replace('?', "%3f")
        .replace('#', "%23");
    format!("file:{enc}?{query}")
}

/// Sets up a connection: the busy handler, planner stability, caches and,
/// for a writable file, WAL. Writes nothing to the database.
pub fn configure(conn: &mut Connection, readonly: bool) -> KipResult<()> {
    // Wait up to ~10 s for another writer, polling every millisecond: a
    // writer that releases the lock for a moment between two transactions
    // (a sleep cycle between phases) lets the waiting ones in, where
    // SQLite's default back-off would poll too rarely to notice.
    conn.busy_handler(Some(wait_for_lock))?;
    // Plans never depend on bound values (the query planner stability
    // guarantee). Without it, a cached statement whose parameter meets an
    // indexed column, a LIMIT or a full-text scan is re-prepared on every
    // call once statistics exist: a one-hop read would pay a full
    // re-prepare each time.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    // The planner's statement shapes, the store's lookups and the audit
    // trail's statements all stay prepared.
    conn.set_prepared_statement_cache_capacity(256);
    register_functions(conn)?;
    if !readonly {
        // WAL for files; in-memory databases keep their own journal.
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    }
    // Page cache in KiB (`SOMNUS_CACHE_KB`, default 256 MiB; SQLite only takes
    // what it uses).
    let cache_kb: i64 = std::env::var("SOMNUS_CACHE_KB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(262144);
    conn.execute_batch(&format!(
        "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -{cache_kb}; \
         PRAGMA wal_autocheckpoint = 8192; PRAGMA journal_size_limit = {};",
        if wal_bound() { WAL_LIMIT_BYTES as i64 } else { -1 }
    ))?;
    Ok(())
}

/// The SQL functions the store's own statements call: `somnus_terms(text
/// [, 'all' | 'words' | 'codes'])`, a text as the full-text index holds it
/// (`analysis::document`), and `somnus_rest(attributes)`, the texts of a
/// concept's attributes the index keeps in its last column (`fts::rest`).
pub fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    for args in [1, 2] {
        conn.create_scalar_function("somnus_terms", args, flags, |ctx| {
            let text: Option<String> = ctx.get(0)?;
            let part = if ctx.len() > 1 {
                let p: String = ctx.get(1)?;
                crate::analysis::Part::parse(&p).ok_or_else(|| {
                    rusqlite::Error::UserFunctionError(
                        format!("somnus_terms: no part {p:?}").into(),
                    )
                })?
            } else {
                crate::analysis::Part::All
            };
            Ok(text.map(|t| crate::analysis::document(&t, part)))
        })?;
    }
    conn.create_scalar_function("somnus_rest", 1, flags, |ctx| {
        let text: Option<String> = ctx.get(0)?;
        Ok(text
            .map(|t| fts::rest_of_text(&t))
            .filter(|r| !r.is_empty()))
    })?;
    Ok(())
}

/// Whether the write-ahead log is bounded (always, but for `somnus bench
/// --wal`'s side-by-side run with SQLite's defaults).
static WAL_BOUND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

pub fn wal_bound() -> bool {
    WAL_BOUND.load(std::sync::atomic::Ordering::SeqCst)
}

/// Turns the bound off or on for connections opened from now on (the
/// benchmark's comparison only).
pub fn set_wal_bound(on: bool) {
    WAL_BOUND.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// What SQLite trims the write-ahead log to whenever the log restarts
/// (`PRAGMA journal_size_limit`).
pub const WAL_LIMIT_BYTES: u64 = 64 * 1024 * 1024;

/// A log larger than this is checkpointed and truncated by the writer
/// (`truncate_wal`), at most every `WAL_CHECK_SECS`.
pub const WAL_TRUNCATE_BYTES: u64 = 128 * 1024 * 1024;

/// How often the writer looks at the log's size.
pub const WAL_CHECK_SECS: u64 = 5;

/// Checkpoints the whole log and truncates it to nothing, without waiting:
/// when a reader still holds an older snapshot (or another writer works)
/// it gives up at once. Returns whether the log was truncated.
pub fn truncate_wal(conn: &mut Connection) -> bool {
    // no busy waiting for this one call
    let _ = conn.busy_handler(None::<fn(i32) -> bool>);
    let done = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        })
        .is_ok_and(|busy| busy == 0);
    let _ = conn.busy_handler(Some(wait_for_lock));
    done
}

pub fn schema_version(conn: &Connection) -> KipResult<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Checks that the database is a somnus memory this build can read
/// (`version` as read inside the caller's transaction).
pub fn check_identity(conn: &Connection, version: i64, adopt: bool) -> KipResult<()> {
    if version > SCHEMA_VERSION {
        return Err(KipError::internal(format!(
            "database schema {version} is newer than this somnus ({SCHEMA_VERSION}); upgrade somnus"
        )));
    }
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let foreign_app = app != 0 && app != APPLICATION_ID;
    let foreign_tables = if version == 0 {
        let names: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 5")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        (!names.is_empty()).then(|| names.join(", "))
    } else {
        None
    };
    if !adopt && (foreign_app || foreign_tables.is_some()) {
        let what = match foreign_tables {
            Some(t) => format!("it already holds tables of another program ({t})"),
            None => format!("its application id is {app:#x}, not somnus's"),
        };
        return Err(KipError::new(
            crate::kip::ErrorCode::ConstraintViolation,
            format!("this file is not a somnus memory: {what}"),
        )
        .with_hint(
            "Point --db at a new file, or pass --adopt to add somnus's tables to this one.",
        ));
    }
    Ok(())
}

/// Migrates a database inside the caller's (exclusive) transaction, from
/// `version` as read inside it. Returns whether it was new.
pub fn migrate(conn: &Connection, version: i64) -> KipResult<bool> {
    for m in migrations::MIGRATIONS.iter().skip(version as usize) {
        conn.execute_batch(m.sqlite)?;
    }
    if version < SCHEMA_VERSION {
        // a migration that rebuilt the full-text index queued every concept
        fts::sync_fts_raw(conn)?;
        conn.execute_batch(&format!(
            "PRAGMA user_version = {SCHEMA_VERSION}; PRAGMA application_id = {APPLICATION_ID};"
        ))?;
    }
    Ok(version == 0)
}

/// An object as stored JSON text (serialised in place, no copy).
fn obj_text(m: &Map<String, Value>) -> String {
    serde_json::to_string(m).unwrap_or_else(|_| "{}".into())
}

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A concept row.
#[derive(Debug, Clone, PartialEq)]
pub struct Concept {
    pub id: i64,
    pub ty: String,
    pub name: String,
    pub attributes: Map<String, Value>,
    pub metadata: Map<String, Value>,
    pub version: i64,
    pub updated_at: String,
}

/// A proposition row.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposition {
    pub id: i64,
    pub subject: i64,
    pub predicate: String,
    pub object: i64,
    pub attributes: Map<String, Value>,
    pub metadata: Map<String, Value>,
    pub version: i64,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    Concept(Concept),
    Prop(Proposition),
}

impl Element {
    pub fn id(&self) -> i64 {
        match self {
            Element::Concept(c) => c.id,
            Element::Prop(p) => p.id,
        }
    }
    pub fn version(&self) -> i64 {
        match self {
            Element::Concept(c) => c.version,
            Element::Prop(p) => p.version,
        }
    }
}

fn full_metadata(meta: &Map<String, Value>, version: i64, updated_at: &str) -> Value {
    with_version(meta.clone(), version, updated_at.to_string())
}

fn with_version(mut m: Map<String, Value>, version: i64, updated_at: String) -> Value {
    m.insert("_version".into(), Value::Number(version.into()));
    m.insert("_updated_at".into(), Value::String(updated_at));
    Value::Object(m)
}

impl Concept {
    pub fn kip_id(&self) -> String {
        ids::concept_id(self.id)
    }
    /// The concept as KIP returns it.
    pub fn to_json(&self) -> Value {
        self.clone().into_json()
    }
    /// The concept as KIP returns it, built from its own parts (no copy).
    pub fn into_json(self) -> Value {
        let mut m = Map::with_capacity(6);
        m.insert("_type".into(), Value::String("ConceptNode".into()));
        m.insert("id".into(), Value::String(self.kip_id()));
        m.insert("type".into(), Value::String(self.ty));
        m.insert("name".into(), Value::String(self.name));
        m.insert("attributes".into(), Value::Object(self.attributes));
        m.insert(
            "metadata".into(),
            with_version(self.metadata, self.version, self.updated_at),
        );
        Value::Object(m)
    }
}

impl Proposition {
    pub fn kip_id(&self) -> String {
        ids::prop_id(self.id, &self.predicate)
    }
}

const CONCEPT_COLS: &str = "id, type, name, attributes, metadata, version, updated_at";
const PROP_COLS: &str = "id, subject, predicate, object, attributes, metadata, version, updated_at";

fn concept_row(mut r: Row) -> KipResult<Concept> {
    Ok(Concept {
        id: r.i64(0)?,
        ty: r.take_text(1)?,
        name: r.take_text(2)?,
        attributes: r.take_obj(3)?,
        metadata: r.take_obj(4)?,
        version: r.i64(5)?,
        updated_at: r.take_text(6)?,
    })
}

fn prop_row(mut r: Row) -> KipResult<Proposition> {
    Ok(Proposition {
        id: r.i64(0)?,
        subject: r.i64(1)?,
        predicate: r.take_text(2)?,
        object: r.i64(3)?,
        attributes: r.take_obj(4)?,
        metadata: r.take_obj(5)?,
        version: r.i64(6)?,
        updated_at: r.take_text(7)?,
    })
}

/// The columns of [`CONCEPT_COLS`] of `k` as one `jsonb` array
/// (PostgreSQL), read back by [`concept_of_array`].
pub const CONCEPT_ARRAY: &str =
    "jsonb_build_array(k.id, k.type, k.name, k.attributes, k.metadata, k.version, k.updated_at)";
/// [`CONCEPT_ARRAY`] for a proposition, read back by [`prop_of_array`].
pub const PROP_ARRAY: &str = "jsonb_build_array(k.id, k.subject, k.predicate, k.object, k.attributes, k.metadata, k.version, k.updated_at)";

/// A row whose columns came as one JSON array.
fn row_of_array(a: Vec<Value>) -> Row {
    Row(a
        .into_iter()
        .map(|v| match v {
            Value::Null => Val::Null,
            Value::Number(n) => match n.as_i64() {
                Some(i) => Val::Int(i),
                None => Val::Real(n.as_f64().unwrap_or(0.0)),
            },
            Value::String(s) => Val::Text(s),
            other => Val::Json(other),
        })
        .collect())
}

/// A concept from a [`CONCEPT_ARRAY`].
pub fn concept_of_array(a: Vec<Value>) -> KipResult<Concept> {
    concept_row(row_of_array(a))
}

/// A proposition from a [`PROP_ARRAY`].
pub fn prop_of_array(a: Vec<Value>) -> KipResult<Proposition> {
    prop_row(row_of_array(a))
}

pub fn concept_by_id<'a>(db: impl Into<Db<'a>>, id: i64) -> KipResult<Option<Concept>> {
    let db = db.into();
    // (read to be written: locked until the write commits)
    let lock = db.row_lock();
    db.query_opt(
        &format!("SELECT {CONCEPT_COLS} FROM concepts WHERE id = ?1{lock}"),
        &[Val::Int(id)],
    )?
    .map(concept_row)
    .transpose()
}

pub fn concept_by_type_name<'a>(
    db: impl Into<Db<'a>>,
    ty: &str,
    name: &str,
) -> KipResult<Option<Concept>> {
    let db = db.into();
    // (read to be written: locked until the write commits)
    let lock = db.row_lock();
    db.query_opt(
        &format!("SELECT {CONCEPT_COLS} FROM concepts WHERE type = ?1 AND name = ?2{lock}"),
        &[Val::from(ty), Val::from(name)],
    )?
    .map(concept_row)
    .transpose()
}

/// A concept's type and name; `None` when `id` is not a concept.
pub fn concept_label<'a>(db: impl Into<Db<'a>>, id: i64) -> KipResult<Option<(String, String)>> {
    db.into()
        .query_opt(
            "SELECT type, name FROM concepts WHERE id = ?1",
            &[Val::Int(id)],
        )?
        .map(|mut r| Ok((r.take_text(0)?, r.take_text(1)?)))
        .transpose()
}

pub fn concept_id_by_type_name<'a>(
    db: impl Into<Db<'a>>,
    ty: &str,
    name: &str,
) -> KipResult<Option<i64>> {
    db.into()
        .query_opt(
            "SELECT id FROM concepts WHERE type = ?1 AND name = ?2",
            &[Val::from(ty), Val::from(name)],
        )?
        .map(|r| r.i64(0))
        .transpose()
}

pub fn prop_by_id<'a>(db: impl Into<Db<'a>>, id: i64) -> KipResult<Option<Proposition>> {
    let db = db.into();
    // (read to be written: locked until the write commits)
    let lock = db.row_lock();
    db.query_opt(
        &format!("SELECT {PROP_COLS} FROM propositions WHERE id = ?1{lock}"),
        &[Val::Int(id)],
    )?
    .map(prop_row)
    .transpose()
}

pub fn prop_by_spo<'a>(
    db: impl Into<Db<'a>>,
    s: i64,
    p: &str,
    o: i64,
) -> KipResult<Option<Proposition>> {
    let db = db.into();
    // (read to be written: locked until the write commits)
    let lock = db.row_lock();
    db
        .query_opt(
            &format!(
                "SELECT {PROP_COLS} FROM propositions WHERE subject = ?1 AND predicate = ?2 AND object = ?3{lock}"
            ),
            &[Val::Int(s), Val::from(p), Val::Int(o)],
        )?
        .map(prop_row)
        .transpose()
}

pub fn element<'a>(db: impl Into<Db<'a>>, id: i64) -> KipResult<Option<Element>> {
    let db = db.into();
    if let Some(c) = concept_by_id(db, id)? {
        return Ok(Some(Element::Concept(c)));
    }
    Ok(prop_by_id(db, id)?.map(Element::Prop))
}

/// The KIP id string of any element id ("C:12" or "P:40:treats").
pub fn kip_id_of<'a>(db: impl Into<Db<'a>>, id: i64) -> KipResult<Option<String>> {
    let db = db.into();
    if db
        .query_opt("SELECT 1 FROM concepts WHERE id = ?1", &[Val::Int(id)])?
        .is_some()
    {
        return Ok(Some(ids::concept_id(id)));
    }
    Ok(db
        .query_opt(
            "SELECT predicate FROM propositions WHERE id = ?1",
            &[Val::Int(id)],
        )?
        .map(|mut r| r.take_text(0))
        .transpose()?
        .map(|p| ids::prop_id(id, &p)))
}

/// `col` is one of the ids parameter `?1` holds (a JSON array). On
/// PostgreSQL the ids become an array first, so each is found by its key
/// (as a relation of unknown size, PostgreSQL would hash them against a
/// whole table).
pub fn id_in(db: Db<'_>, col: &str) -> String {
    match db.backend() {
        Backend::Sqlite => format!("{col} IN (SELECT value FROM json_each(?1))"),
        Backend::Postgres => format!(
            "{col} = ANY(ARRAY(SELECT value::bigint FROM jsonb_array_elements_text(?1::jsonb)))"
        ),
    }
}

/// `FROM` a table's rows whose `col` is one of the ids of `?1` (as
/// [`id_in`]), and `WHERE` for more conditions (`… AND x`). On SQLite the
/// ids drive the loop (each one an index lookup): with `id IN (SELECT …
/// json_each)` the planner may scan the whole table instead when its
/// statistics are older than the table (inside a long write, such as an
/// import, every read by id would then cost the table's size).
pub fn from_ids(db: Db<'_>, table: &str, col: &str) -> String {
    match db.backend() {
        Backend::Sqlite => format!(
            "(SELECT value AS id_ FROM json_each(?1)) AS ids_ CROSS JOIN {table} ON {table}.{col} = ids_.id_ WHERE 1"
        ),
        Backend::Postgres => format!("{table} WHERE {}", id_in(db, col)),
    }
}

/// The argument [`id_in`] reads: the ids as a JSON array.
pub fn id_list_arg(ids: &[i64]) -> Val {
    Val::Text(serde_json::to_string(ids).unwrap_or_else(|_| "[]".into()))
}

/// Ids per query of the readers by many ids.
const IDS_PER_QUERY: usize = 10_000;

/// Elements by id, two queries per [`IDS_PER_QUERY`] ids (concepts, then
/// the rest among propositions), for readers that would otherwise fetch
/// them one by one. Ids that name nothing are left out.
pub fn elements_by_ids<'a>(db: impl Into<Db<'a>>, ids: &[i64]) -> KipResult<HashMap<i64, Element>> {
    let db = db.into();
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let list = id_list_arg(chunk);
        for r in db.query(
            &format!(
                "SELECT {CONCEPT_COLS} FROM {}",
                from_ids(db, "concepts", "id")
            ),
            std::slice::from_ref(&list),
        )? {
            let c = concept_row(r)?;
            out.insert(c.id, Element::Concept(c));
        }
        let rest: Vec<i64> = chunk
            .iter()
            .copied()
            .filter(|i| !out.contains_key(i))
            .collect();
        if rest.is_empty() {
            continue;
        }
        let list = id_list_arg(&rest);
        for r in db.query(
            &format!(
                "SELECT {PROP_COLS} FROM {}",
                from_ids(db, "propositions", "id")
            ),
            &[list],
        )? {
            let p = prop_row(r)?;
            out.insert(p.id, Element::Prop(p));
        }
    }
    Ok(out)
}

/// Concepts' types and names by id, one query per [`IDS_PER_QUERY`] ids.
/// The JSON value at `keys` inside each element's `column` (`attributes`
/// or `metadata`), by id: one field of many elements, read in the
/// database rather than each whole element parsed (an aggregate over
/// `?l.metadata.confidence` of every link). Ids that name nothing and
/// elements without the field are left out.
pub fn values_at<'a>(
    db: impl Into<Db<'a>>,
    ids: &[i64],
    column: &str,
    keys: &[&str],
) -> KipResult<HashMap<i64, Value>> {
    let db = db.into();
    if !matches!(column, "attributes" | "metadata") || keys.is_empty() {
        return Err(KipError::internal(format!("no field {column}")));
    }
    let path = db.backend().json_path(keys);
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let list = id_list_arg(chunk);
        for table in ["concepts", "propositions"] {
            let field = match db.backend() {
                Backend::Sqlite => format!("{table}.{column} -> ?2"),
                Backend::Postgres => format!("({table}.{column} #> (?2::text)::text[])::text"),
            };
            for r in db.query(
                &format!(
                    "SELECT {table}.id, {field} FROM {}",
                    from_ids(db, table, "id")
                ),
                &[list.clone(), path.clone()],
            )? {
                if let Some(text) = r.opt_text(1)?
                    && let Ok(v) = serde_json::from_str::<Value>(&text)
                {
                    out.insert(r.i64(0)?, v);
                }
            }
        }
    }
    Ok(out)
}

pub fn labels_by_ids<'a>(
    db: impl Into<Db<'a>>,
    ids: &[i64],
) -> KipResult<HashMap<i64, (String, String)>> {
    let db = db.into();
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let list = id_list_arg(chunk);
        for mut r in db.query(
            &format!(
                "SELECT id, type, name FROM {}",
                from_ids(db, "concepts", "id")
            ),
            &[list],
        )? {
            out.insert(r.i64(0)?, (r.take_text(1)?, r.take_text(2)?));
        }
    }
    Ok(out)
}

/// The KIP ids of elements ("C:12", "P:40:treats"), one query per table
/// and [`IDS_PER_QUERY`] ids.
pub fn kip_ids_by_ids<'a>(db: impl Into<Db<'a>>, ids: &[i64]) -> KipResult<HashMap<i64, String>> {
    let db = db.into();
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let list = id_list_arg(chunk);
        for r in db.query(
            &format!("SELECT id FROM {}", from_ids(db, "concepts", "id")),
            std::slice::from_ref(&list),
        )? {
            let id = r.i64(0)?;
            out.insert(id, ids::concept_id(id));
        }
        for mut r in db.query(
            &format!(
                "SELECT id, predicate FROM {}",
                from_ids(db, "propositions", "id")
            ),
            &[list],
        )? {
            let id = r.i64(0)?;
            out.insert(id, ids::prop_id(id, &r.take_text(1)?));
        }
    }
    Ok(out)
}

/// [`element_json`] with the endpoints' KIP ids already known (`None`: a
/// dangling endpoint, as `element_json` gives it).
pub fn element_json_known(el: &Element, kip_ids: &HashMap<i64, String>) -> Value {
    match el {
        Element::Concept(c) => c.to_json(),
        Element::Prop(p) => prop_json(
            p,
            kip_ids.get(&p.subject).cloned().unwrap_or_default(),
            kip_ids.get(&p.object).cloned().unwrap_or_default(),
        ),
    }
}

fn prop_json(p: &Proposition, subject: String, object: String) -> Value {
    let mut m = Map::with_capacity(7);
    m.insert("_type".into(), Value::String("PropositionLink".into()));
    m.insert("id".into(), Value::String(p.kip_id()));
    m.insert("subject".into(), Value::String(subject));
    m.insert("predicate".into(), Value::String(p.predicate.clone()));
    m.insert("object".into(), Value::String(object));
    if !p.attributes.is_empty() {
        m.insert("attributes".into(), Value::Object(p.attributes.clone()));
    }
    m.insert(
        "metadata".into(),
        full_metadata(&p.metadata, p.version, &p.updated_at),
    );
    Value::Object(m)
}

/// The element as KIP returns it (a proposition's endpoints as KIP ids).
pub fn element_json<'a>(db: impl Into<Db<'a>>, el: &Element) -> KipResult<Value> {
    let conn = db.into();
    Ok(match el {
        Element::Concept(c) => c.to_json(),
        Element::Prop(p) => prop_json(
            p,
            kip_id_of(conn, p.subject)?.unwrap_or_default(),
            kip_id_of(conn, p.object)?.unwrap_or_default(),
        ),
    })
}

/// [`element_json`] of an element no longer needed otherwise (a concept is
/// not copied).
pub fn element_into_json<'a>(db: impl Into<Db<'a>>, el: Element) -> KipResult<Value> {
    match el {
        Element::Concept(c) => Ok(c.into_json()),
        el => element_json(db, &el),
    }
}

/// Hands out element ids inside one write transaction: the counter is read
/// once and written back when the statement finishes.
pub struct IdAllocator {
    next: std::cell::Cell<Option<i64>>,
    /// PostgreSQL: ids taken from the sequence and not yet handed out.
    taken: std::cell::RefCell<std::collections::VecDeque<i64>>,
    /// PostgreSQL: how many ids the next trip to the sequence takes.
    block: std::cell::Cell<i64>,
}

/// The most ids one trip to a PostgreSQL sequence takes.
pub const MAX_ID_BLOCK: i64 = 256;

impl Default for IdAllocator {
    fn default() -> Self {
        IdAllocator {
            next: std::cell::Cell::new(None),
            taken: Default::default(),
            block: std::cell::Cell::new(1),
        }
    }
}

impl IdAllocator {
    /// The next element id. SQLite counts in `meta` (persisted by
    /// [`IdAllocator::flush`]); PostgreSQL takes it from the memory's
    /// sequence, which concurrent writers share without waiting. A
    /// statement that keeps asking takes twice as many each time (1, 2,
    /// 4, … up to [`MAX_ID_BLOCK`]), so a bulk write pays one round trip
    /// per block and a small one wastes none; ids taken and not used are
    /// never used (ids are never reused).
    pub fn alloc<'a>(&self, db: impl Into<Db<'a>>) -> KipResult<i64> {
        let db = db.into();
        if db.backend() == Backend::Postgres {
            if let Some(id) = self.taken.borrow_mut().pop_front() {
                return Ok(id);
            }
            let k = self.block.get();
            self.block.set((k * 2).min(MAX_ID_BLOCK));
            let mut ids = db
                .query(
                    "SELECT nextval('element_ids') FROM generate_series(1, ?1::bigint)",
                    &[Val::Int(k)],
                )?
                .iter()
                .map(|r| r.i64(0))
                .collect::<KipResult<std::collections::VecDeque<i64>>>()?;
            let id = ids
                .pop_front()
                .ok_or_else(|| KipError::internal("the id sequence gave nothing"))?;
            *self.taken.borrow_mut() = ids;
            return Ok(id);
        }
        let id = match self.next.get() {
            Some(n) => n,
            None => db
                .query_opt(
                    "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'next_id'",
                    &[],
                )?
                .ok_or_else(|| KipError::internal("the memory has no id counter"))?
                .i64(0)?,
        };
        self.next.set(Some(id + 1));
        Ok(id)
    }

    /// An id, or on PostgreSQL `None` for a statement's first: the insert
    /// then takes it from the sequence itself (`COALESCE(?1,
    /// nextval(...))`), saving a round trip for the common one-element
    /// write. Later ones come in blocks as [`IdAllocator::alloc`] gives them.
    pub fn alloc_or_inline<'a>(&self, db: impl Into<Db<'a>>) -> KipResult<Option<i64>> {
        let db = db.into();
        if db.backend() == Backend::Postgres
            && self.block.get() == 1
            && self.taken.borrow().is_empty()
        {
            self.block.set(2);
            return Ok(None);
        }
        self.alloc(db).map(Some)
    }

    /// Gives back `id` when it was the last one handed out and went unused.
    pub fn release(&self, id: i64) {
        if self.next.get() == Some(id + 1) {
            self.next.set(Some(id));
        }
        // (PostgreSQL: the next id handed out is this one again)
        let mut taken = self.taken.borrow_mut();
        if self.next.get().is_none() && taken.front().is_none_or(|f| *f > id) {
            taken.push_front(id);
        }
    }

    /// Persists the counter; call before the transaction commits.
    pub fn flush<'a>(&self, db: impl Into<Db<'a>>) -> KipResult<()> {
        if let Some(n) = self.next.get() {
            db.into().execute(
                "UPDATE meta SET value = ?1 WHERE key = 'next_id'",
                &[Val::Text(n.to_string())],
            )?;
        }
        Ok(())
    }
}

/// The arguments of a new concept's insert: `?1` its id (`None`: taken
/// from the sequence inside the insert), then type, name, attributes,
/// metadata and the time.
fn new_concept_args(
    id: Option<i64>,
    ty: &str,
    name: &str,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
) -> [Val; 6] {
    [
        id.into(),
        Val::from(ty),
        Val::from(name),
        Val::JsonText(obj_text(attrs)),
        Val::JsonText(obj_text(meta)),
        Val::Text(now()),
    ]
}

/// Gives back an id taken for an insert that wrote nothing.
fn release_unused(ids: &IdAllocator, id: Option<i64>, made: Option<i64>) {
    if made.is_none()
        && let Some(id) = id
    {
        ids.release(id);
    }
}

/// Inserts a concept unless one with its type and name exists; returns the
/// new id, or `None` (nothing written) when it exists.
pub fn insert_concept_if_new<'a>(
    db: impl Into<Db<'a>>,
    ids: &IdAllocator,
    ty: &str,
    name: &str,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
) -> KipResult<Option<i64>> {
    let db = db.into();
    let id = ids.alloc_or_inline(db)?;
    let made = db
        .query_opt(
            &format!(
                "INSERT INTO concepts (id, type, name, attributes, metadata, version, updated_at) VALUES ({}, ?2, ?3, ?4, ?5, 1, ?6) \
                 ON CONFLICT(type, name) DO NOTHING RETURNING id",
                new_id(db)
            ),
            &new_concept_args(id, ty, name, attrs, meta),
        )?
        .map(|r| r.i64(0))
        .transpose()?;
    release_unused(ids, id, made);
    Ok(made)
}

/// [`insert_concept_if_new`] on PostgreSQL for a type not yet known to
/// be defined: whether the type is defined, and the new id (`None`:
/// nothing written, as the type is not defined or the concept exists),
/// in one round trip instead of two.
pub fn insert_concept_if_typed<'a>(
    db: impl Into<Db<'a>>,
    ids: &IdAllocator,
    ty: &str,
    name: &str,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
) -> KipResult<(bool, Option<i64>)> {
    let db = db.into();
    let id = ids.alloc_or_inline(db)?;
    let r = db
        .query_opt(
            &format!(
                "WITH t AS (SELECT 1 FROM concepts WHERE type = '$ConceptType' AND name = CAST(?2 AS TEXT)), \
                 ins AS (INSERT INTO concepts (id, type, name, attributes, metadata, version, updated_at) \
                   SELECT {}, CAST(?2 AS TEXT), CAST(?3 AS TEXT), CAST(?4 AS JSONB), CAST(?5 AS JSONB), 1, CAST(?6 AS TEXT) \
                   WHERE EXISTS (SELECT 1 FROM t) ON CONFLICT(type, name) DO NOTHING RETURNING id) \
                 SELECT EXISTS (SELECT 1 FROM t), (SELECT id FROM ins)",
                new_id(db)
            ),
            &new_concept_args(id, ty, name, attrs, meta),
        )?
        .ok_or_else(|| KipError::internal("an insert answered no row"))?;
    let defined = r.i64(0)? == 1;
    let made = r.opt_i64(1)?;
    release_unused(ids, id, made);
    Ok((defined, made))
}

/// Inserts a concept the caller knows is new.
pub fn insert_concept<'a>(
    db: impl Into<Db<'a>>,
    ids: &IdAllocator,
    ty: &str,
    name: &str,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
) -> KipResult<i64> {
    insert_concept_if_new(db, ids, ty, name, attrs, meta)?
        .ok_or_else(|| KipError::internal(format!("concept {ty}:{name} already exists")))
}

pub fn update_concept<'a>(
    db: impl Into<Db<'a>>,
    id: i64,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
) -> KipResult<()> {
    db.into().execute(
        "UPDATE concepts SET attributes = ?2, metadata = ?3, version = version + 1, updated_at = ?4 WHERE id = ?1",
        &[
            Val::Int(id),
            Val::JsonText(obj_text(attrs)),
            Val::JsonText(obj_text(meta)),
            Val::Text(now()),
        ],
    )?;
    Ok(())
}

/// A concept to insert, its id given ([`insert_concepts`]).
pub struct NewConcept {
    pub id: i64,
    pub ty: String,
    pub name: String,
    pub attributes: Map<String, Value>,
    pub metadata: Map<String, Value>,
}

/// Inserts concepts the caller found absent, in their order, one
/// statement per [`LINKS_PER_INSERT`]. One that exists after all (another
/// writer made it since) fails the statement: on PostgreSQL a collision
/// the command is run again for.
pub fn insert_concepts<'a>(db: impl Into<Db<'a>>, concepts: &[NewConcept]) -> KipResult<()> {
    let db = db.into();
    let sql = match db.backend() {
        Backend::Sqlite => {
            "INSERT INTO concepts (id, type, name, attributes, metadata, version, updated_at) \
             SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
                    json_extract(value, '$[3]'), json_extract(value, '$[4]'), 1, ?2 \
             FROM json_each(?1) ORDER BY key"
        }
        Backend::Postgres => {
            "INSERT INTO concepts (id, type, name, attributes, metadata, version, updated_at) \
             SELECT (r->>0)::bigint, r->>1, r->>2, (r->>3)::jsonb, (r->>4)::jsonb, 1, ?2 \
             FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS t(r, n) ORDER BY n"
        }
    };
    let rows: Vec<Value> = concepts
        .iter()
        .map(|c| {
            json!([
                c.id,
                c.ty,
                c.name,
                obj_text(&c.attributes),
                obj_text(&c.metadata)
            ])
        })
        .collect();
    insert_rows(db, sql, rows, "concepts")
}

/// The ids of the concepts named by (type, name), in one query per
/// [`IDS_PER_QUERY`] names; names of nothing are left out.
pub fn concept_ids_by_type_names<'a>(
    db: impl Into<Db<'a>>,
    names: &[(String, String)],
) -> KipResult<HashMap<(String, String), i64>> {
    let db = db.into();
    let sql = match db.backend() {
        Backend::Sqlite => {
            "SELECT c.id, c.type, c.name FROM json_each(?1) j \
             JOIN concepts c ON c.type = json_extract(j.value, '$[0]') AND c.name = json_extract(j.value, '$[1]')"
        }
        Backend::Postgres => {
            "SELECT c.id, c.type, c.name FROM jsonb_array_elements(?1::jsonb) r \
             JOIN concepts c ON c.type = r->>0 AND c.name = r->>1"
        }
    };
    let mut out = HashMap::new();
    for chunk in names.chunks(IDS_PER_QUERY) {
        let arg = Value::Array(chunk.iter().map(|(t, n)| json!([t, n])).collect()).to_string();
        for r in db.query(sql, &[Val::Text(arg)])? {
            out.insert((r.text(1)?, r.text(2)?), r.i64(0)?);
        }
    }
    Ok(out)
}

/// A link to insert, its id given ([`insert_links`]).
pub struct NewLink {
    pub id: i64,
    pub subject: i64,
    pub predicate: String,
    pub object: i64,
    pub attributes: Map<String, Value>,
    pub metadata: Map<String, Value>,
}

/// Links per statement of [`insert_links`].
pub const LINKS_PER_INSERT: usize = 1_000;

/// Inserts links the caller knows are new, in their order, one statement
/// per [`LINKS_PER_INSERT`] (their rows travel as one JSON array: a bulk
/// write is a few round trips, not one per link). The triggers record
/// each row as an insert of its own.
pub fn insert_links<'a>(db: impl Into<Db<'a>>, links: &[NewLink]) -> KipResult<()> {
    let db = db.into();
    let sql = match db.backend() {
        Backend::Sqlite => {
            "INSERT INTO propositions (id, subject, predicate, object, attributes, metadata, version, updated_at) \
             SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
                    json_extract(value, '$[3]'), json_extract(value, '$[4]'), json_extract(value, '$[5]'), 1, ?2 \
             FROM json_each(?1) ORDER BY key"
        }
        Backend::Postgres => {
            "INSERT INTO propositions (id, subject, predicate, object, attributes, metadata, version, updated_at) \
             SELECT (r->>0)::bigint, (r->>1)::bigint, r->>2, (r->>3)::bigint, (r->>4)::jsonb, (r->>5)::jsonb, 1, ?2 \
             FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS t(r, n) ORDER BY n"
        }
    };
    let rows: Vec<Value> = links
        .iter()
        .map(|l| {
            json!([
                l.id,
                l.subject,
                l.predicate,
                l.object,
                obj_text(&l.attributes),
                obj_text(&l.metadata)
            ])
        })
        .collect();
    insert_rows(db, sql, rows, "links")
}

/// Runs an insert that reads its rows from a JSON array (`?1`, with the
/// time as `?2`), [`LINKS_PER_INSERT`] rows per statement, and checks
/// that every row went in.
fn insert_rows(db: Db<'_>, sql: &str, rows: Vec<Value>, what: &str) -> KipResult<()> {
    let at = now();
    for chunk in rows.chunks(LINKS_PER_INSERT) {
        let n = db.execute(
            sql,
            &[
                Val::Text(Value::Array(chunk.to_vec()).to_string()),
                Val::Text(at.clone()),
            ],
        )?;
        if n != chunk.len() as u64 {
            return Err(KipError::internal(format!(
                "{n} of {} {what} were inserted",
                chunk.len()
            )));
        }
    }
    Ok(())
}

pub fn insert_prop<'a>(
    db: impl Into<Db<'a>>,
    ids: &IdAllocator,
    s: i64,
    p: &str,
    o: i64,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
) -> KipResult<i64> {
    let db = db.into();
    let id = ids.alloc_or_inline(db)?;
    let made = db.query_opt(
        &format!(
            "INSERT INTO propositions (id, subject, predicate, object, attributes, metadata, version, updated_at) \
             VALUES ({}, ?2, ?3, ?4, ?5, ?6, 1, ?7) RETURNING id",
            new_id(db)
        ),
        &[
            id.into(),
            Val::Int(s),
            Val::from(p),
            Val::Int(o),
            Val::JsonText(obj_text(attrs)),
            Val::JsonText(obj_text(meta)),
            Val::Text(now()),
        ],
    )?;
    made.ok_or_else(|| KipError::internal("an inserted proposition got no id"))?
        .i64(0)
}

/// The id of a row being inserted: the allocated `?1`, or on PostgreSQL,
/// when none was allocated, the sequence's next.
fn new_id(db: Db<'_>) -> &'static str {
    match db.backend() {
        Backend::Sqlite => "?1",
        Backend::Postgres => "COALESCE(CAST(?1 AS BIGINT), nextval('element_ids'))",
    }
}

pub fn update_prop<'a>(
    db: impl Into<Db<'a>>,
    id: i64,
    attrs: &Map<String, Value>,
    meta: &Map<String, Value>,
) -> KipResult<()> {
    db.into().execute(
        "UPDATE propositions SET attributes = ?2, metadata = ?3, version = version + 1, updated_at = ?4 WHERE id = ?1",
        &[
            Val::Int(id),
            Val::JsonText(obj_text(attrs)),
            Val::JsonText(obj_text(meta)),
            Val::Text(now()),
        ],
    )?;
    Ok(())
}
