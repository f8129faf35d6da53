//! `somnus bench --compare`: the same KIP workloads run side by side, in one
//! process, against somnus, the reference KIP engine (`anda_cognitive_nexus`,
//! with the `reference` feature) and hand-written SQL on the same SQLite
//! file somnus uses.
//!
//! The hand-written SQL is what a skilled person would write for each
//! workload: one prepared statement (or a few) per answer, the JSON answer
//! built from its rows. Its writes keep the file's guarantees, as somnus's
//! do: each write is one transaction with an audit entry, and the audit
//! triggers record before and after images. Every answer the SQL gives is
//! checked against the answer somnus gives, so the two do the same work.

use super::Lcg;
pub use super::workload::{BATCH, HUB_LINKS, MERGE_LINKS, Shape, Workload};
use super::workload::{json_array, merged, top_hits};
use crate::Nexus;
use crate::audit::Who;
use crate::protocol::Outcome;
use rusqlite::{Connection, params};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// The engines measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Side {
    Somnus,
    Reference,
    Sql,
    /// somnus on a PostgreSQL memory.
    SomnusPostgres,
    /// Hand-written SQL on the same PostgreSQL memory.
    SqlPostgres,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Somnus => "somnus",
            Side::Reference => "reference (anda_cognitive_nexus 0.11.0)",
            Side::Sql => "hand-written SQL",
            Side::SomnusPostgres => "somnus on PostgreSQL",
            Side::SqlPostgres => "hand-written SQL on PostgreSQL",
        }
    }
    /// A tag that keeps each side's own writes apart in the shared file.
    fn tag(self) -> &'static str {
        match self {
            Side::Somnus => "s",
            Side::Reference => "r",
            Side::Sql => "q",
            Side::SomnusPostgres => "sp",
            Side::SqlPostgres => "qp",
        }
    }
}

/// The schema every side starts from (the rest comes with the bootstrap
/// capsules: Domain, belongs_to_domain).
pub const SCHEMA: &str = r#"UPSERT {
    CONCEPT ?e { {type: "$ConceptType", name: "Entity"} SET ATTRIBUTES { description: "A generated entity" } }
    CONCEPT ?x { {type: "$ConceptType", name: "Extra"} SET ATTRIBUTES { description: "A concept of the insert workload" } }
    CONCEPT ?l { {type: "$PropositionType", name: "links_to"} SET ATTRIBUTES { description: "A generated directed link" } }
}"#;

fn domains() -> String {
    let mut d = String::from("UPSERT {");
    for k in 0..20 {
        d.push_str(&format!(r#" CONCEPT ?d{k} {{ {{type: "Domain", name: "Area{k}"}} SET ATTRIBUTES {{ description: "Generated area {k}" }} }}"#));
    }
    d.push('}');
    d
}

/// The KIP commands that build the memory, in order.
pub fn build_commands(shape: Shape) -> Vec<String> {
    let n = shape.n;
    let mut out = vec![SCHEMA.to_string(), domains()];
    for start in (0..n).step_by(BATCH) {
        let mut s = String::with_capacity(BATCH * 200);
        s.push_str("UPSERT {");
        for i in start..(start + BATCH).min(n) {
            s.push_str(&format!(
                r#" CONCEPT ?c{i} {{ {{type: "Entity", name: "e{i}"}} SET ATTRIBUTES {{ score: {}, kind: "k{}" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Area{}"}}) }} }}"#,
                shape.score(i),
                i % 7,
                i % 20
            ));
        }
        s.push_str(" } WITH METADATA { source: \"bench\", confidence: 0.8 }");
        out.push(s);
    }
    for start in (0..n).step_by(BATCH) {
        let mut s = String::with_capacity(BATCH * 200);
        s.push_str("UPSERT {");
        for i in start..(start + BATCH).min(n) {
            s.push_str(&format!(
                r#" PROPOSITION ?p{i} {{ ({{type: "Entity", name: "e{i}"}}, "links_to", {{type: "Entity", name: "e{}"}}) }}"#,
                shape.target(i)
            ));
        }
        s.push_str(" } WITH METADATA { source: \"bench\", confidence: 0.7 }");
        out.push(s);
    }
    out
}

/// What a workload does, as KIP, for run `i`.
fn kip_text(w: Workload, shape: Shape, side: Side, i: usize, k: usize) -> String {
    let t = side.tag();
    match w {
        Workload::Insert => {
            let mut s = String::from("UPSERT {");
            for j in 0..BATCH {
                s.push_str(&format!(
                    r#" CONCEPT ?x{j} {{ {{type: "Extra", name: "{t}{i}_{j}"}} SET ATTRIBUTES {{ score: {j}, kind: "x" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Area{}"}}) }} }}"#,
                    j % 20
                ));
            }
            s.push_str(" } WITH METADATA { source: \"bench\", confidence: 0.8 }");
            s
        }
        Workload::Lookup => format!(r#"FIND(?n) WHERE {{ ?n {{type: "Entity", name: "e{k}"}} }}"#),
        Workload::Scan => format!(
            r#"FIND(?n.name) WHERE {{ ?n {{type: "Entity"}} FILTER(?n.attributes.score >= {}) }}"#,
            shape.top()
        ),
        Workload::Hop => format!(
            r#"FIND(?o) WHERE {{ ({{type: "Entity", name: "e{k}"}}, "links_to", ?o) }}"#
        ),
        Workload::GroupCount => {
            r#"FIND(?d.name, COUNT(?n)) WHERE { ?d {type: "Domain"} (?n, "belongs_to_domain", ?d) }"#
                .to_string()
        }
        Workload::Path => format!(
            r#"FIND(?d.name) WHERE {{ ({{type: "Entity", name: "e{k}"}}, "links_to"{{5}}, ?d) }}"#
        ),
        Workload::AntiJoin => format!(
            r#"FIND(?n.name) WHERE {{ ?n {{type: "Entity"}} FILTER(?n.attributes.score < {}) NOT {{ (?m, "links_to", ?n) }} }}"#,
            shape.low()
        ),
        Workload::TopK => r#"FIND(?n.name, ?n.attributes.score) WHERE { ?n {type: "Entity"} } ORDER BY ?n.attributes.score DESC LIMIT 10"#.to_string(),
        Workload::Search => format!(r#"SEARCH CONCEPT "e{k}" LIMIT 10"#),
        Workload::UpdateSmall | Workload::UpdateLarge => format!(
            r#"UPDATE ?n SET ATTRIBUTES {{ reviewed: "{t}{i}" }} WHERE {{ ?n {{type: "Entity"}} FILTER(?n.attributes.score < {}) }}"#,
            w.sweep(shape)
        ),
        Workload::Merge => format!(
            r#"MERGE CONCEPT ?a INTO ?b WHERE {{ ?a {{type: "Entity", name: "dup{t}{i}"}} ?b {{type: "Entity", name: "canon{t}{i}"}} }}"#
        ),
        Workload::Delete => format!(
            r#"DELETE CONCEPT ?h DETACH WHERE {{ ?h {{type: "Entity", name: "hub{t}{i}"}} }}"#
        ),
    }
}

/// Untimed preparation of run `i` (the twins a MERGE folds, the hub a
/// DELETE removes), as KIP.
fn setup_text(w: Workload, shape: Shape, side: Side, i: usize) -> Option<String> {
    let t = side.tag();
    let n = shape.n;
    match w {
        Workload::Merge => {
            let mut s = format!(
                r#"UPSERT {{ CONCEPT ?a {{ {{type: "Entity", name: "dup{t}{i}"}} SET ATTRIBUTES {{ score: -1, kind: "dup", aliases: ["d{t}{i}"] }} SET PROPOSITIONS {{"#
            );
            for k in 0..MERGE_LINKS {
                s.push_str(&format!(
                    r#" ("links_to", {{type: "Entity", name: "e{}"}})"#,
                    (k * 97 + i) % n
                ));
            }
            s.push_str(&format!(
                r#" }} }} CONCEPT ?b {{ {{type: "Entity", name: "canon{t}{i}"}} SET ATTRIBUTES {{ kind: "canon" }} SET PROPOSITIONS {{"#
            ));
            for k in 0..MERGE_LINKS / 10 {
                s.push_str(&format!(
                    r#" ("links_to", {{type: "Entity", name: "e{}"}})"#,
                    (k * 97 + i) % n
                ));
            }
            s.push_str(" } } } WITH METADATA { source: \"bench\", confidence: 0.6 }");
            Some(s)
        }
        Workload::Delete => {
            let mut s = format!(
                r#"UPSERT {{ CONCEPT ?h {{ {{type: "Entity", name: "hub{t}{i}"}} SET PROPOSITIONS {{"#
            );
            for k in 0..HUB_LINKS {
                s.push_str(&format!(
                    r#" ("links_to", {{type: "Entity", name: "e{}"}})"#,
                    (k * 31 + i) % n
                ));
            }
            s.push_str(" } } } WITH METADATA { source: \"bench\", confidence: 0.6 }");
            Some(s)
        }
        _ => None,
    }
}

/// One measurement: a workload on one side at one size.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Measure {
    pub workload: Workload,
    pub side: Side,
    pub n: usize,
    pub runs: usize,
    pub median: Duration,
    pub min: Duration,
    pub max: Duration,
}

/// What a comparison produced.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    pub sizes: Vec<usize>,
    pub measures: Vec<Measure>,
    /// How long building each size took on each side.
    pub builds: Vec<(usize, Side, Duration)>,
    /// Answers that differed between somnus and the SQL (none, or the
    /// comparison is void).
    pub mismatches: Vec<String>,
}

impl Comparison {
    pub fn get(&self, w: Workload, side: Side, n: usize) -> Option<&Measure> {
        self.measures
            .iter()
            .find(|m| m.workload == w && m.side == side && m.n == n)
    }
}

pub struct Options {
    pub sizes: Vec<usize>,
    /// Runs per quick workload.
    pub runs: usize,
    /// Where the file databases go.
    pub dir: std::path::PathBuf,
    /// Largest size the reference engine is run at.
    pub reference_max: usize,
    /// Prints progress lines to stderr.
    pub verbose: bool,
    /// A PostgreSQL database (`postgres://…`): somnus and hand-written SQL
    /// run there too, on a throwaway memory per size.
    pub postgres: Option<String>,
    /// The workloads measured, in this order.
    pub workloads: Vec<Workload>,
}

fn ok(o: Outcome, what: &str) -> Result<Value, String> {
    match o {
        Outcome::Ok { result, .. } => Ok(result),
        Outcome::Err(e) => Err(format!("{what}: {} {}", e.code, e.message)),
    }
}

/// somnus: KIP text in, the JSON answer out.
fn somnus_kip(nx: &mut Nexus, text: &str) -> Result<String, String> {
    let v = ok(nx.kip(text), "somnus")?;
    serde_json::to_string(&v).map_err(|e| e.to_string())
}

fn median(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// A picked concept index for run `i` (the same sequence on every side).
fn picks(n: usize, count: usize) -> Vec<usize> {
    let mut r = Lcg(2024);
    (0..count).map(|_| r.next() as usize % n).collect()
}

/// Rows of an answer in a canonical form, for comparison.
fn canonical(v: &Value, ordered: bool) -> Value {
    let Some(a) = v.as_array() else {
        return strip_times(v);
    };
    // a columnar answer: one array per column
    let columnar = !a.is_empty()
        && a.iter().all(Value::is_array)
        && a.iter()
            .map(|c| c.as_array().map_or(0, Vec::len))
            .collect::<std::collections::HashSet<_>>()
            .len()
            == 1;
    let mut rows: Vec<Value> = if columnar {
        let len = a[0].as_array().map_or(0, Vec::len);
        (0..len)
            .map(|r| Value::Array(a.iter().map(|c| strip_times(&c[r])).collect()))
            .collect()
    } else {
        a.iter().map(strip_times).collect()
    };
    if !ordered {
        rows.sort_by_key(|r| r.to_string());
    }
    Value::Array(rows)
}

/// Update times differ by when each side wrote; the rest must match.
fn strip_times(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("_updated_at");
        if let Some(s) = m.get("_score").and_then(Value::as_f64) {
            m.insert("_score".into(), json!((s * 1e9).round() / 1e9));
        }
    }
    v
}

/// Runs the comparison.
pub fn run(opts: &Options) -> Result<Comparison, String> {
    let mut out = Comparison {
        sizes: opts.sizes.clone(),
        ..Default::default()
    };
    std::fs::create_dir_all(&opts.dir).map_err(|e| e.to_string())?;
    for &n in &opts.sizes {
        let shape = Shape { n };
        let path = opts.dir.join(format!("compare-{n}.db"));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut nx = Nexus::open(&path).map_err(|e| e.message)?;
        let t = Instant::now();
        for c in build_commands(shape) {
            ok(nx.kip(&c), "build")?;
        }
        out.builds.push((n, Side::Somnus, t.elapsed()));
        if opts.verbose {
            eprintln!("built {n} concepts in {:.1?}", t.elapsed());
        }
        let mut reference = reference_engine(shape, opts, &mut out)?;
        let mut pg = match &opts.postgres {
            Some(url) => Some(OnPostgres::build(url, shape, opts, &mut out)?),
            None => None,
        };
        for &w in &opts.workloads {
            let runs = w.runs(shape, opts.runs);
            let ks = picks(n, runs);
            let mut sides = vec![Side::Somnus, Side::Sql];
            if pg.is_some() {
                sides.extend([Side::SomnusPostgres, Side::SqlPostgres]);
            }
            if reference.is_some() {
                sides.push(Side::Reference);
            }
            // the first run's answers, compared afterwards
            let mut first: Vec<(Side, String)> = Vec::new();
            let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); sides.len()];
            // Run i goes to every side in turn, and the side that goes first
            // rotates: no side finds the pages of its picks warmed by the
            // others more often than they find its own.
            for (i, &k) in ks.iter().enumerate().take(runs) {
                for j in 0..sides.len() {
                    let slot = (i + j) % sides.len();
                    let side = sides[slot];
                    if let Some(s) = setup_text(w, shape, side, i) {
                        match (side, reference.as_mut(), pg.as_mut()) {
                            (Side::Reference, Some(r), _) => {
                                r.kip(&s)?;
                            }
                            (Side::SomnusPostgres | Side::SqlPostgres, _, Some(pg)) => {
                                ok(pg.nx.kip(&s), "setup on PostgreSQL")?;
                            }
                            _ => {
                                ok(nx.kip(&s), "setup")?;
                            }
                        }
                    }
                    let text = kip_text(w, shape, side, i, k);
                    let started = Instant::now();
                    let answer = match (side, reference.as_mut(), pg.as_mut()) {
                        (Side::Somnus, _, _) => somnus_kip(&mut nx, &text)?,
                        (Side::Sql, _, _) => sql(&nx, w, shape, side, i, k)?,
                        (Side::Reference, Some(r), _) => r.kip(&text)?,
                        (Side::SomnusPostgres, _, Some(pg)) => somnus_kip(&mut pg.nx, &text)?,
                        (Side::SqlPostgres, _, Some(pg)) => {
                            pg.sql.run(w, shape, side.tag(), i, k)?
                        }
                        _ => return Err(format!("{} is not running", side.name())),
                    };
                    times[slot].push(started.elapsed());
                    if i == 0 {
                        if std::env::var_os("SOMNUS_BENCH_ANSWERS").is_some() {
                            eprintln!(
                                "{} {:?}: {}",
                                w.key(),
                                side,
                                answer.chars().take(400).collect::<String>()
                            );
                        }
                        first.push((side, answer));
                    }
                }
            }
            for (slot, t) in times.into_iter().enumerate() {
                let side = sides[slot];
                let (m, lo, hi) = median(t);
                if opts.verbose {
                    eprintln!("{n:>9} {:<48} {:<40} {m:>12.2?}", w.label(), side.name());
                }
                out.measures.push(Measure {
                    workload: w,
                    side,
                    n,
                    runs,
                    median: m,
                    min: lo,
                    max: hi,
                });
            }
            check(w, n, &first, [Side::Somnus, Side::Sql], &mut out.mismatches);
            if pg.is_some() {
                let pair = [Side::SomnusPostgres, Side::SqlPostgres];
                check(w, n, &first, pair, &mut out.mismatches);
            }
        }
        if let Some(pg) = pg {
            pg.drop_memory();
        }
        drop(nx);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
    Ok(out)
}

/// The PostgreSQL sides at one size: a throwaway memory, somnus on it,
/// and the hand-written SQL's own connection to it.
struct OnPostgres {
    loc: crate::store::postgres::Location,
    nx: Nexus,
    sql: super::compare_pg::PgSql,
}

impl OnPostgres {
    fn build(
        url: &str,
        shape: Shape,
        opts: &Options,
        out: &mut Comparison,
    ) -> Result<OnPostgres, String> {
        let memory = format!("bench_compare_{}_{}", shape.n, std::process::id());
        let loc =
            crate::store::postgres::Location::parse(url, Some(&memory)).map_err(|e| e.message)?;
        crate::store::postgres::drop_memory(&loc).map_err(|e| e.message)?;
        let place = crate::store::place::Place::Postgres(loc.clone());
        let mut nx = Nexus::open_place(&place, Default::default()).map_err(|e| e.message)?;
        let t = Instant::now();
        for c in build_commands(shape) {
            ok(nx.kip(&c), "build on PostgreSQL")?;
        }
        out.builds
            .push((shape.n, Side::SomnusPostgres, t.elapsed()));
        if opts.verbose {
            eprintln!(
                "built {} concepts on PostgreSQL in {:.1?}",
                shape.n,
                t.elapsed()
            );
        }
        let mut client = loc.connect().map_err(|e| e.message)?;
        // fresh statistics and a vacuumed table, as autovacuum keeps them
        // for a database in use (left to autovacuum, the vacuum of the
        // rows just written would run during the measurements, on the
        // same cores)
        client
            .batch_execute("VACUUM (ANALYZE) concepts, propositions, audit_log, audit_changes")
            .map_err(|e| e.to_string())?;
        Ok(OnPostgres {
            loc,
            nx,
            sql: super::compare_pg::PgSql::new(client),
        })
    }

    fn drop_memory(self) {
        let loc = self.loc.clone();
        drop(self.nx);
        drop(self.sql);
        let _ = crate::store::postgres::drop_memory(&loc);
    }
}

/// somnus and the SQL must give the same answer (writes: the same
/// counts; inserted ids differ, their number must not).
fn check(
    w: Workload,
    n: usize,
    first: &[(Side, String)],
    [engine, sql]: [Side; 2],
    mismatches: &mut Vec<String>,
) {
    let get = |side: Side| -> Option<Value> {
        first
            .iter()
            .find(|(s, _)| *s == side)
            .and_then(|(_, a)| serde_json::from_str(a).ok())
    };
    let (Some(a), Some(b)) = (get(engine), get(sql)) else {
        mismatches.push(format!(
            "{} at {n}: an answer of {} or {} is not JSON",
            w.key(),
            engine.name(),
            sql.name()
        ));
        return;
    };
    let same = if w == Workload::Insert {
        a["upsert_concept_nodes"].as_array().map(Vec::len)
            == b["upsert_concept_nodes"].as_array().map(Vec::len)
            && a["blocks"] == b["blocks"]
    } else {
        canonical(&a, w.ordered()) == canonical(&b, w.ordered())
    };
    if !same {
        mismatches.push(format!(
            "{} at {n}: {} answered {} but the {} {}",
            w.key(),
            engine.name(),
            short(&a),
            sql.name(),
            short(&b)
        ));
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!("{}…", &s[..s.floor_char_boundary(300)])
    } else {
        s
    }
}

#[cfg(feature = "reference")]
fn reference_engine(
    shape: Shape,
    opts: &Options,
    out: &mut Comparison,
) -> Result<Option<super::reference::Reference>, String> {
    if shape.n > opts.reference_max {
        return Ok(None);
    }
    let mut r = super::reference::Reference::new()?;
    let t = Instant::now();
    for c in build_commands(shape) {
        r.kip(&c)?;
    }
    out.builds.push((shape.n, Side::Reference, t.elapsed()));
    if opts.verbose {
        eprintln!(
            "reference built {} concepts in {:.1?}",
            shape.n,
            t.elapsed()
        );
    }
    Ok(Some(r))
}

/// Without the `reference` feature the reference engine is not compiled.
#[cfg(not(feature = "reference"))]
fn reference_engine(
    _: Shape,
    _: &Options,
    _: &mut Comparison,
) -> Result<Option<NoReference>, String> {
    Ok(None)
}

#[cfg(not(feature = "reference"))]
struct NoReference;

#[cfg(not(feature = "reference"))]
impl NoReference {
    fn kip(&mut self, _: &str) -> Result<String, String> {
        Err("built without the `reference` feature".into())
    }
}

// ------------------------------------------------------------------ SQL

/// The concept as KIP returns it, built by SQLite.
const CONCEPT_JSON: &str = "json_object('_type', 'ConceptNode', 'id', 'C:' || c.id, 'type', c.type, 'name', c.name, \
     'attributes', json(c.attributes), 'metadata', json_set(c.metadata, '$._version', c.version, '$._updated_at', c.updated_at))";

fn e(err: rusqlite::Error) -> String {
    err.to_string()
}

fn strings(conn: &Connection, sql: &str, p: impl rusqlite::Params) -> Result<Vec<String>, String> {
    let mut st = conn.prepare_cached(sql).map_err(e)?;
    let rows = st.query_map(p, |r| r.get::<_, String>(0)).map_err(e)?;
    rows.collect::<Result<_, _>>().map_err(e)
}

/// Runs a hand-written write in one transaction with its audit entry, as
/// every write to the file is.
fn audited<T>(
    nx: &Nexus,
    what: &str,
    kind: &str,
    f: impl FnOnce(&Connection) -> Result<T, String>,
) -> Result<T, String> {
    let conn = nx.conn().map_err(|e| e.message)?;
    conn.execute_batch("BEGIN IMMEDIATE").map_err(e)?;
    let res = (|| {
        let who = Who {
            actor: "sql".into(),
            trigger: "bench".into(),
            reason: None,
        };
        let entry = crate::audit::begin(conn, nx.audit_ctx(), &who, what, kind, None)
            .map_err(|x| x.message)?;
        let out = f(conn);
        nx.audit_ctx().clear();
        let out = out?;
        crate::audit::finish(conn, nx.audit_ctx(), entry).map_err(|x| x.message)?;
        // the schema's full-text upkeep, as every writer does it
        crate::store::sync_fts(conn).map_err(|x| x.message)?;
        Ok(out)
    })();
    match &res {
        Ok(_) => conn.execute_batch("COMMIT").map_err(e)?,
        Err(_) => {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
    res
}

/// Ids come from the file's one counter, read once and written back.
fn take_ids(conn: &Connection, count: i64) -> Result<i64, String> {
    let first: i64 = conn
        .query_row(
            "UPDATE meta SET value = CAST(value AS INTEGER) + ?1 WHERE key = 'next_id' RETURNING CAST(value AS INTEGER) - ?1",
            [count],
            |r| r.get(0),
        )
        .map_err(e)?;
    Ok(first)
}

fn sql(
    nx: &Nexus,
    w: Workload,
    shape: Shape,
    side: Side,
    i: usize,
    k: usize,
) -> Result<String, String> {
    let conn = nx.conn().map_err(|e| e.message)?;
    let t = side.tag();
    match w {
        Workload::Insert => audited(nx, "INSERT concepts, propositions", "UPSERT", |conn| {
            let now = crate::store::now();
            let mut domain = conn
                .prepare_cached("SELECT id FROM concepts WHERE type = 'Domain' AND name = ?1")
                .map_err(e)?;
            let mut area = Vec::with_capacity(20);
            for d in 0..20 {
                area.push(
                    domain
                        .query_row([format!("Area{d}")], |r| r.get::<_, i64>(0))
                        .map_err(e)?,
                );
            }
            let first = take_ids(conn, 2 * BATCH as i64)?;
            let mut ins_c = conn
                .prepare_cached(
                    "INSERT INTO concepts(id, type, name, attributes, metadata, updated_at) VALUES (?1, 'Extra', ?2, ?3, ?4, ?5) \
                     ON CONFLICT(type, name) DO UPDATE SET attributes = json_patch(attributes, excluded.attributes), \
                     metadata = json_patch(metadata, excluded.metadata), version = version + 1, updated_at = excluded.updated_at RETURNING id",
                )
                .map_err(e)?;
            let mut ins_p = conn
                .prepare_cached(
                    "INSERT INTO propositions(id, subject, predicate, object, metadata, updated_at) VALUES (?1, ?2, 'belongs_to_domain', ?3, ?4, ?5) \
                     ON CONFLICT(subject, predicate, object) DO UPDATE SET metadata = json_patch(metadata, excluded.metadata), \
                     version = version + 1, updated_at = excluded.updated_at",
                )
                .map_err(e)?;
            let meta = r#"{"source":"bench","confidence":0.8}"#;
            let mut ids = Vec::with_capacity(BATCH);
            for j in 0..BATCH {
                let attrs = format!(r#"{{"score":{j},"kind":"x"}}"#);
                let id: i64 = ins_c
                    .query_row(
                        params![
                            first + 2 * j as i64,
                            format!("{t}{i}_{j}"),
                            attrs,
                            meta,
                            now
                        ],
                        |r| r.get(0),
                    )
                    .map_err(e)?;
                ins_p
                    .execute(params![
                        first + 2 * j as i64 + 1,
                        id,
                        area[j % 20],
                        meta,
                        now
                    ])
                    .map_err(e)?;
                ids.push(format!("\"C:{id}\""));
            }
            Ok(format!(
                r#"{{"blocks":1,"upsert_concept_nodes":{},"upsert_proposition_links":[]}}"#,
                json_array(ids)
            ))
        }),
        Workload::Lookup => Ok(json_array(strings(
            conn,
            &format!(
                "SELECT {CONCEPT_JSON} FROM concepts c WHERE c.type = 'Entity' AND c.name = ?1"
            ),
            [format!("e{k}")],
        )?)),
        Workload::Scan => {
            let names = strings(
                conn,
                "SELECT name FROM concepts WHERE type = 'Entity' AND json_extract(attributes, '$.score') >= ?1",
                [shape.top() as i64],
            )?;
            serde_json::to_string(&names).map_err(|x| x.to_string())
        }
        Workload::Hop => Ok(json_array(strings(
            conn,
            &format!(
                "SELECT DISTINCT {CONCEPT_JSON} FROM concepts s JOIN propositions p ON p.subject = s.id AND p.predicate = 'links_to' \
                 JOIN concepts c ON c.id = p.object WHERE s.type = 'Entity' AND s.name = ?1"
            ),
            [format!("e{k}")],
        )?)),
        Workload::GroupCount => {
            let mut st = conn
                .prepare_cached(
                    "SELECT d.name, g.n FROM (SELECT object AS o, COUNT(*) AS n FROM propositions \
                     WHERE predicate = 'belongs_to_domain' GROUP BY object) g JOIN concepts d ON d.id = g.o WHERE d.type = 'Domain'",
                )
                .map_err(e)?;
            let (mut names, mut counts) = (Vec::new(), Vec::new());
            let mut rows = st.query([]).map_err(e)?;
            while let Some(r) = rows.next().map_err(e)? {
                names.push(r.get::<_, String>(0).map_err(e)?);
                counts.push(r.get::<_, i64>(1).map_err(e)?);
            }
            serde_json::to_string(&json!([names, counts])).map_err(|x| x.to_string())
        }
        Workload::Path => {
            let names = strings(
                conn,
                "SELECT DISTINCT c.name FROM concepts s \
                 JOIN propositions p1 ON p1.subject = s.id AND p1.predicate = 'links_to' \
                 JOIN propositions p2 ON p2.subject = p1.object AND p2.predicate = 'links_to' \
                 JOIN propositions p3 ON p3.subject = p2.object AND p3.predicate = 'links_to' \
                 JOIN propositions p4 ON p4.subject = p3.object AND p4.predicate = 'links_to' \
                 JOIN propositions p5 ON p5.subject = p4.object AND p5.predicate = 'links_to' \
                 JOIN concepts c ON c.id = p5.object WHERE s.type = 'Entity' AND s.name = ?1",
                [format!("e{k}")],
            )?;
            serde_json::to_string(&names).map_err(|x| x.to_string())
        }
        Workload::AntiJoin => {
            let names = strings(
                conn,
                "SELECT n.name FROM concepts n WHERE n.type = 'Entity' AND json_extract(n.attributes, '$.score') < ?1 \
                 AND NOT EXISTS (SELECT 1 FROM propositions p WHERE p.object = n.id AND p.predicate = 'links_to')",
                [shape.low() as i64],
            )?;
            serde_json::to_string(&names).map_err(|x| x.to_string())
        }
        Workload::TopK => {
            let mut st = conn
                .prepare_cached(
                    "SELECT name, json_extract(attributes, '$.score') AS s FROM concepts WHERE type = 'Entity' ORDER BY s DESC LIMIT 10",
                )
                .map_err(e)?;
            // rows of [name, score] (no aggregate: one array per row)
            let mut out = Vec::with_capacity(10);
            let mut rows = st.query([]).map_err(e)?;
            while let Some(r) = rows.next().map_err(e)? {
                out.push(json!([
                    r.get::<_, String>(0).map_err(e)?,
                    r.get::<_, i64>(1).map_err(e)?
                ]));
            }
            serde_json::to_string(&out).map_err(|x| x.to_string())
        }
        Workload::Search => {
            // the candidates by FTS5's bm25(), ranked again by the same
            // BM25F somnus uses (the ranking is code, not SQL)
            let term = format!("e{k}");
            let mut st = conn
                .prepare_cached(&format!(
                    "SELECT c.id, lower(c.name) = lower(?2), {CONCEPT_JSON}, f.name, f.codes, f.aliases, f.description, f.body, f.rest \
                     FROM concept_fts f JOIN concepts c ON c.id = f.rowid WHERE concept_fts MATCH ?1 \
                     ORDER BY bm25(concept_fts, 10.0, 0.2, 8.0, 2.0, 1.0, 0.5) LIMIT 200"
                ))
                .map_err(e)?;
            let mut cands = Vec::new();
            let mut rest: Vec<(bool, String)> = Vec::new();
            let mut rows = st.query(params![format!("\"{term}\""), term]).map_err(e)?;
            while let Some(r) = rows.next().map_err(e)? {
                let col = |i: usize| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
                cands.push(crate::engine::rank::Candidate {
                    id: r.get(0).map_err(e)?,
                    name: String::new(),
                    columns: [
                        col(3).map_err(e)?,
                        col(4).map_err(e)?,
                        col(5).map_err(e)?,
                        col(6).map_err(e)?,
                        col(7).map_err(e)?,
                        col(8).map_err(e)?,
                    ],
                    on_day: false,
                });
                rest.push((r.get(1).map_err(e)?, r.get(2).map_err(e)?));
            }
            drop(rows);
            let scores = crate::engine::rank::bm25f(conn.into(), &[vec![term.clone()]], &cands)
                .map_err(|x| x.message)?;
            let hits = cands
                .iter()
                .zip(scores)
                .zip(rest)
                .map(|((c, s), (exact, j))| {
                    let s = s * if exact { 2.0 } else { 1.0 };
                    (c.id, s / (1.0 + s), j)
                })
                .collect();
            top_hits(hits)
        }
        Workload::UpdateSmall | Workload::UpdateLarge => {
            audited(nx, "UPDATE concepts SET attributes", "UPDATE", |conn| {
                let n = conn
                    .prepare_cached(
                        "UPDATE concepts SET attributes = json_set(attributes, '$.reviewed', ?1), version = version + 1, updated_at = ?2 \
                         WHERE type = 'Entity' AND json_extract(attributes, '$.score') < ?3",
                    )
                    .map_err(e)?
                    .execute(params![format!("{t}{i}"), crate::store::now(), w.sweep(shape) as i64])
                    .map_err(e)?;
                Ok(format!(r#"{{"updated":{n},"matched":{n}}}"#))
            })
        }
        Workload::Merge => audited(nx, "merge twins", "MERGE", |conn| {
            sql_merge(conn, &format!("dup{t}{i}"), &format!("canon{t}{i}"))
        }),
        Workload::Delete => audited(nx, "delete hub", "DELETE", |conn| {
            let id: i64 = conn
                .query_row(
                    "SELECT id FROM concepts WHERE type = 'Entity' AND name = ?1",
                    [format!("hub{t}{i}")],
                    |r| r.get(0),
                )
                .map_err(e)?;
            // links, and links about those links, all the way down
            let links = conn
                .prepare_cached(
                    "WITH RECURSIVE doomed(id) AS (SELECT id FROM propositions WHERE subject = ?1 OR object = ?1 \
                     UNION SELECT p.id FROM propositions p JOIN doomed d ON p.subject = d.id OR p.object = d.id) \
                     DELETE FROM propositions WHERE id IN (SELECT id FROM doomed)",
                )
                .map_err(e)?
                .execute([id])
                .map_err(e)?;
            let concepts = conn
                .execute("DELETE FROM concepts WHERE id = ?1", [id])
                .map_err(e)?;
            Ok(format!(
                r#"{{"deleted_concepts":{concepts},"deleted_propositions":{links}}}"#
            ))
        }),
    }
}

/// MERGE by hand: links that would duplicate one of the target's (or join
/// the twins) go, the rest move over; the target takes the source's
/// missing attributes, its name as an alias, and the provenance trail.
fn sql_merge(conn: &Connection, source: &str, target: &str) -> Result<String, String> {
    let row = |name: &str| -> Result<(i64, String, String), String> {
        conn.query_row(
            "SELECT id, attributes, metadata FROM concepts WHERE type = 'Entity' AND name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(e)
    };
    let (sid, s_attrs, s_meta) = row(source)?;
    let (tid, t_attrs, t_meta) = row(target)?;
    // the twin's copy of a link the target has: fold its metadata into the
    // target's (the target's values win), then drop it
    let dups: Vec<(i64, i64, String)> = {
        let mut st = conn
            .prepare_cached(
                "SELECT l.id, k.id, l.metadata FROM propositions l JOIN propositions k \
                   ON k.predicate = l.predicate AND k.subject = CASE WHEN l.subject = ?1 THEN ?2 ELSE l.subject END \
                  AND k.object = CASE WHEN l.object = ?1 THEN ?2 ELSE l.object END \
                 WHERE (l.subject = ?1 OR l.object = ?1) AND k.id != l.id",
            )
            .map_err(e)?;
        st.query_map([sid, tid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(e)?
            .collect::<Result<_, _>>()
            .map_err(e)?
    };
    let mut fold = conn
        .prepare_cached(
            "UPDATE propositions SET metadata = json_patch(?2, metadata), version = version + 1 \
             WHERE id = ?1 AND json_patch(?2, metadata) != metadata",
        )
        .map_err(e)?;
    let mut drop_link = conn
        .prepare_cached("DELETE FROM propositions WHERE id = ?1")
        .map_err(e)?;
    for (lid, keep, meta) in &dups {
        fold.execute(params![keep, meta]).map_err(e)?;
        drop_link.execute([lid]).map_err(e)?;
    }
    let selfloops = conn
        .execute(
            "DELETE FROM propositions WHERE (subject = ?1 AND object = ?2) OR (subject = ?2 AND object = ?1)",
            [sid, tid],
        )
        .map_err(e)?;
    let now = crate::store::now();
    let moved = conn
        .execute(
            "UPDATE propositions SET subject = CASE WHEN subject = ?1 THEN ?2 ELSE subject END, \
             object = CASE WHEN object = ?1 THEN ?2 ELSE object END, version = version + 1, updated_at = ?3 \
             WHERE subject = ?1 OR object = ?1",
            params![sid, tid, now],
        )
        .map_err(e)?;
    let parse = |s: &str| -> Map<String, Value> { serde_json::from_str(s).unwrap_or_default() };
    let (t_a, t_m, filled) = merged(
        source,
        target,
        parse(&s_attrs),
        parse(&t_attrs),
        parse(&s_meta),
        parse(&t_meta),
    );
    conn.execute(
        "UPDATE concepts SET attributes = ?2, metadata = ?3, version = version + 1, updated_at = ?4 WHERE id = ?1",
        params![tid, Value::Object(t_a).to_string(), Value::Object(t_m).to_string(), now],
    )
    .map_err(e)?;
    conn.execute("DELETE FROM concepts WHERE id = ?1", [sid])
        .map_err(e)?;
    Ok(format!(
        r#"{{"merged":true,"links_repointed":{moved},"links_deduplicated":{},"attributes_filled":{filled}}}"#,
        dups.len() + selfloops
    ))
}

// ------------------------------------------------------------ reports

pub fn fmt_dur(d: Duration) -> String {
    super::fmt_dur(d)
}

/// How many times faster `slow` is than `fast`, to two significant
/// figures ("0.4×", "3.1×", "18×").
fn times(slow: Duration, fast: Duration) -> String {
    let x = slow.as_secs_f64() / fast.as_secs_f64().max(1e-9);
    if x < 10.0 {
        format!("{x:.1}×")
    } else {
        format!("{x:.0}×")
    }
}

/// Against the reference engine: at least ten times faster.
pub const REFERENCE_TARGET: f64 = 10.0;
/// Against the hand-written SQL: within this ratio of it, or within
/// `SQL_SLACK` of it (what matters for statements of a few microseconds,
/// where a fixed cost per command dwarfs the ratio).
pub const SQL_RATIO: f64 = 1.5;
pub const SQL_SLACK: Duration = Duration::from_micros(20);

/// Whether somnus's median `a` is within the target of the SQL's `q`.
pub fn within_sql_target(a: Duration, q: Duration) -> bool {
    a.as_secs_f64() <= SQL_RATIO * q.as_secs_f64() || a <= q + SQL_SLACK
}

fn mark(ok: bool) -> &'static str {
    if ok { "✅" } else { "❌" }
}

/// The Markdown table: per workload and size, each side's median, the
/// ratios that matter (reference ÷ somnus, somnus ÷ SQL) and whether each
/// meets its target (10× the reference; 1.5× the SQL, or 20 µs of it).
pub fn markdown(c: &Comparison) -> String {
    let has_ref = c.measures.iter().any(|m| m.side == Side::Reference);
    let mut s = String::new();
    for &n in &c.sizes {
        s.push_str(&format!("\n**{n} concepts, {} links**\n\n", 2 * n));
        let with_ref = has_ref
            && c.measures
                .iter()
                .any(|m| m.side == Side::Reference && m.n == n);
        if with_ref {
            s.push_str("| workload | somnus | reference | × faster than reference (target ≥ 10×) | SQL | somnus ÷ SQL | somnus − SQL | SQL target |\n|---|---:|---:|---:|---:|---:|---:|:-:|\n");
        } else {
            s.push_str("| workload | somnus | SQL | somnus ÷ SQL | somnus − SQL | SQL target |\n|---|---:|---:|---:|---:|:-:|\n");
        }
        for w in Workload::ALL {
            let (Some(a), Some(q)) = (c.get(w, Side::Somnus, n), c.get(w, Side::Sql, n)) else {
                continue;
            };
            let ratio = a.median.as_secs_f64() / q.median.as_secs_f64().max(1e-9);
            let diff = a.median.as_secs_f64() - q.median.as_secs_f64();
            let diff = format!(
                "{}{}",
                if diff < 0.0 { "−" } else { "+" },
                fmt_dur(Duration::from_secs_f64(diff.abs()))
            );
            let sql_ok = mark(within_sql_target(a.median, q.median));
            if with_ref {
                let r = c.get(w, Side::Reference, n);
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {:.2} | {} | {} |\n",
                    w.label(),
                    fmt_dur(a.median),
                    r.map_or("—".into(), |r| fmt_dur(r.median)),
                    r.map_or("—".into(), |r| format!(
                        "{} {}",
                        times(r.median, a.median),
                        mark(r.median.as_secs_f64() >= REFERENCE_TARGET * a.median.as_secs_f64())
                    )),
                    fmt_dur(q.median),
                    ratio,
                    diff,
                    sql_ok
                ));
            } else {
                s.push_str(&sql_row(w, a, q));
            }
        }
    }
    for &n in &c.sizes {
        if c.measures
            .iter()
            .any(|m| m.side == Side::SomnusPostgres && m.n == n)
        {
            s.push_str(&format!(
                "\n**PostgreSQL: {n} concepts, {} links** (somnus and hand-written SQL on the same PostgreSQL memory)\n\n",
                2 * n
            ));
            s.push_str("| workload | somnus | SQL | somnus ÷ SQL | somnus − SQL | SQL target |\n|---|---:|---:|---:|---:|:-:|\n");
            for w in Workload::ALL {
                if let (Some(a), Some(q)) = (
                    c.get(w, Side::SomnusPostgres, n),
                    c.get(w, Side::SqlPostgres, n),
                ) {
                    s.push_str(&sql_row(w, a, q));
                }
            }
        }
    }
    if !c.mismatches.is_empty() {
        s.push_str("\nAnswers that differed:\n");
        for m in &c.mismatches {
            s.push_str(&format!("- {m}\n"));
        }
    }
    s
}

/// A row of the table without the reference engine: somnus against the
/// SQL.
fn sql_row(w: Workload, a: &Measure, q: &Measure) -> String {
    let ratio = a.median.as_secs_f64() / q.median.as_secs_f64().max(1e-9);
    let diff = a.median.as_secs_f64() - q.median.as_secs_f64();
    format!(
        "| {} | {} | {} | {:.2} | {}{} | {} |\n",
        w.label(),
        fmt_dur(a.median),
        fmt_dur(q.median),
        ratio,
        if diff < 0.0 { "−" } else { "+" },
        fmt_dur(Duration::from_secs_f64(diff.abs())),
        mark(within_sql_target(a.median, q.median))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The comparison on a small memory: every workload is measured on
    /// both sides, and the hand-written SQL gives somnus's answer on every
    /// one (reads, and the counts of the writes).
    #[test]
    fn somnus_and_the_sql_agree_on_every_workload() {
        let dir = std::env::temp_dir().join(format!("somnus-compare-test-{}", std::process::id()));
        let c = run(&Options {
            sizes: vec![400],
            runs: 5,
            dir: dir.clone(),
            reference_max: 0,
            verbose: false,
            postgres: None,
            workloads: Workload::ALL.to_vec(),
        })
        .expect("the comparison runs");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(c.mismatches.is_empty(), "{:#?}", c.mismatches);
        for w in Workload::ALL {
            for side in [Side::Somnus, Side::Sql] {
                let m = c.get(w, side, 400).expect("measured");
                assert!(m.runs >= 3 && m.median > Duration::ZERO, "{w:?} {side:?}");
            }
        }
        let md = markdown(&c);
        assert!(md.contains("| point lookup by {type, name} |"), "{md}");
        let svg = super::super::plot::svg(&c).expect("plot");
        assert!(
            svg.contains("<svg") && svg.contains("MERGE of a concept"),
            "plot"
        );
        // the legend names the sides measured, no others
        assert!(svg.contains("hand-written SQL on the same SQLite file"));
        assert!(!svg.contains("reference engine (anda") && !svg.contains("on PostgreSQL"));
    }

    #[test]
    fn targets_are_a_ratio_or_a_slack_for_fast_statements() {
        let us = Duration::from_micros;
        // 20 µs of slack, whatever the ratio
        assert!(within_sql_target(us(25), us(6)));
        assert!(!within_sql_target(us(27), us(6)));
        // or 1.5 times, however fast the SQL
        assert!(within_sql_target(us(150), us(100)));
        assert!(!within_sql_target(us(151), us(100)));
        assert!(within_sql_target(us(123), us(97)));
        assert!(!within_sql_target(us(146), us(97)));
        assert_eq!(times(us(10), us(25)), "0.4×");
        assert_eq!(times(us(180), us(10)), "18×");
    }

    #[test]
    fn a_recorded_comparison_draws_the_same_table_again() {
        let m = |side, median: u64| Measure {
            workload: Workload::Lookup,
            side,
            n: 5000,
            runs: 5,
            median: Duration::from_micros(median),
            min: Duration::from_micros(median),
            max: Duration::from_micros(median),
        };
        let c = Comparison {
            sizes: vec![5000],
            measures: vec![m(Side::Somnus, 12), m(Side::Sql, 4), m(Side::Reference, 9)],
            ..Default::default()
        };
        let json = serde_json::to_string(&c).expect("json");
        let back: Comparison = serde_json::from_str(&json).expect("reads back");
        let table = markdown(&back);
        assert_eq!(table, markdown(&c));
        assert!(
            table.contains("| point lookup by {type, name} | 12 µs | 9 µs | 0.8× ❌ | 4 µs | 3.00 | +8 µs | ✅ |"),
            "{table}"
        );
    }

    #[test]
    fn canonical_rows_ignore_order_unless_it_matters() {
        let a = json!([["b", "a"], [2, 1]]);
        let b = json!([["a", "b"], [1, 2]]);
        assert_eq!(canonical(&a, false), canonical(&b, false));
        assert_ne!(canonical(&a, true), canonical(&b, true));
    }
}
