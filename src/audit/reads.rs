//! The read log: every request an agent sent over HTTP, MCP or `somnus
//! rpc` (who, when, the command and its parameters, which elements came
//! back, how long it took, the error), and per element how often and when
//! each caller read it. The console's and the sleep cycle's own reads are
//! not agents' use and are never logged. Reading never changes an
//! element: the log lives in tables of its own.
//!
//! `read_use` keeps the counts when the log itself is pruned: the log
//! answers "what was asked lately", the counts "which memories are used".

use crate::kip::{KipError, KipResult};
use crate::store::db::{Backend, Db, Val};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Bytes of a command's text kept in the log (a longer one is cut, marked
/// `…`).
pub const MAX_LOGGED_COMMAND: usize = 16 * 1024;
/// Bytes of a command's parameters (as JSON) kept; longer ones are
/// replaced by a note of their size.
pub const MAX_LOGGED_PARAMETERS: usize = 16 * 1024;
/// Element ids a log row lists (the count of rows is kept whole).
pub const MAX_LOGGED_ELEMENTS: usize = 200;
/// Elements one request counts as read (a FIND returning more counts the
/// first ones).
pub const MAX_COUNTED_ELEMENTS: usize = 1_000;
/// The time `days` before now (RFC 3339): what a retention of `days`
/// prunes before.
pub fn days_ago(days: u32) -> String {
    (chrono::Utc::now() - chrono::Duration::days(i64::from(days)))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Log rows written per INSERT statement.
const ROWS_PER_INSERT: usize = 100;
/// Read counts added per statement.
const USES_PER_UPSERT: usize = 200;
/// How long the log keeps a request, by default (`--read-log-days`).
pub const DEFAULT_RETENTION_DAYS: u32 = 30;
/// The most requests the log keeps, by default (the oldest go first).
pub const DEFAULT_MAX_ROWS: u64 = 1_000_000;

/// One command an agent sent, as the engine answered it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Served {
    /// FIND, SEARCH, DESCRIBE, UPSERT, … ("" when it did not parse).
    pub kind: String,
    /// The command and its parameters as sent (the log masks their
    /// secrets as it writes them: `record_rows`).
    pub command: String,
    pub parameters: Value,
    /// The elements that came back (FIND's bound elements, SEARCH's hits),
    /// at most `MAX_COUNTED_ELEMENTS`.
    pub elements: Vec<i64>,
    pub rows: u64,
    pub micros: u64,
    /// The error's code and message, if it failed.
    pub error: Option<String>,
    /// A dry run: logged, never counted as use.
    pub dry_run: bool,
}

impl Served {
    /// A successful recall (FIND or SEARCH) counts as use of what it
    /// returned.
    pub fn counts_as_use(&self) -> bool {
        self.error.is_none() && !self.dry_run && matches!(self.kind.as_str(), "FIND" | "SEARCH")
    }
}

/// A served command with who asked, when and how.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Logged {
    pub at: String,
    pub caller: String,
    /// `http`, `mcp` or `rpc`.
    pub channel: String,
    pub served: Served,
}

impl Logged {
    /// The commands of one request, each as the log keeps it.
    pub fn all(served: Vec<Served>, caller: &str, channel: &str, at: &str) -> Vec<Logged> {
        served
            .into_iter()
            .map(|s| Logged {
                at: at.to_string(),
                caller: caller.to_string(),
                channel: channel.to_string(),
                served: s,
            })
            .collect()
    }
}

/// A row of the log as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    pub id: i64,
    pub at: String,
    pub caller: String,
    pub channel: String,
    pub kind: String,
    pub command: String,
    pub parameters: Value,
    pub elements: Vec<i64>,
    pub rows: i64,
    pub micros: i64,
    pub error: Option<String>,
}

impl Request {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "at": self.at,
            "caller": self.caller,
            "channel": self.channel,
            "kind": self.kind,
            "command": self.command,
            "parameters": self.parameters,
            "elements": self.elements,
            "rows": self.rows,
            "latency_ms": self.micros as f64 / 1000.0,
            "error": self.error,
        })
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Reads counted per element and caller: how many, and the last.
#[derive(Debug, Clone, PartialEq)]
pub struct UseCount {
    pub element: i64,
    pub caller: String,
    pub count: i64,
    pub last: String,
}

/// The reads a batch counts as use, summed per element and caller (one
/// write per pair, however many requests returned it).
pub fn count_uses(batch: &[Logged]) -> Vec<UseCount> {
    let mut uses: rustc_hash::FxHashMap<(i64, &str), (i64, &str)> = Default::default();
    let mut seen: rustc_hash::FxHashSet<i64> = Default::default();
    for l in batch {
        let s = &l.served;
        if !s.counts_as_use() {
            continue;
        }
        // (an element returned twice by one request is one read)
        seen.clear();
        for &e in s.elements.iter().take(MAX_COUNTED_ELEMENTS) {
            if !seen.insert(e) {
                continue;
            }
            let u = uses.entry((e, l.caller.as_str())).or_insert((0, ""));
            u.0 += 1;
            if l.at.as_str() > u.1 {
                u.1 = l.at.as_str();
            }
        }
    }
    let mut out: Vec<UseCount> = uses
        .into_iter()
        .map(|((element, caller), (count, last))| UseCount {
            element,
            caller: caller.to_string(),
            count,
            last: last.to_string(),
        })
        .collect();
    // in key order: each statement walks the table's index forward
    out.sort_unstable_by(|a, b| (a.element, &a.caller).cmp(&(b.element, &b.caller)));
    out
}

/// Writes a batch of served requests, masking their secrets, and counts
/// the reads among them, in the caller's transaction.
pub fn record(db: Db<'_>, batch: &[Logged]) -> KipResult<()> {
    record_paced(db, batch, ROWS_PER_INSERT, &mut || {})
}

/// `record`, `per_statement` rows an INSERT with `between` run between
/// two of them (the log's own thread pauses there, so that a long batch
/// never holds a processor for long). The batch's read counts are summed
/// first and written once each, at the end: a memory read by many
/// requests gets one write per batch, not one per request.
pub fn record_paced(
    db: Db<'_>,
    batch: &[Logged],
    per_statement: usize,
    between: &mut dyn FnMut(),
) -> KipResult<()> {
    let mut masked = Masked::default();
    for (i, chunk) in batch
        .chunks(per_statement.clamp(1, ROWS_PER_INSERT))
        .enumerate()
    {
        if i > 0 {
            between();
        }
        insert_rows(db, chunk, &mut masked)?;
    }
    record_uses(db, &count_uses(batch))
}

/// Writes the log rows of a batch, each command and its parameters with
/// their secrets masked (the counts apart: `record_uses`).
pub fn record_rows(db: Db<'_>, batch: &[Logged]) -> KipResult<()> {
    let mut masked = Masked::default();
    for chunk in batch.chunks(ROWS_PER_INSERT) {
        insert_rows(db, chunk, &mut masked)?;
    }
    Ok(())
}

/// Command texts already masked in this batch (an agent sends the same
/// command, its values in parameters, many times: it is scanned once).
#[derive(Default)]
struct Masked(std::collections::HashMap<String, String>);

impl Masked {
    /// Distinct texts remembered at most, each of at most `MAX_BYTES`
    /// (a longer one is scanned each time it comes).
    const MAX: usize = 1_000;
    const MAX_BYTES: usize = 4_096;

    fn command(&mut self, text: &str) -> String {
        if let Some(m) = self.0.get(text) {
            return m.clone();
        }
        let m = cut(&crate::secrets::redact(text).0, MAX_LOGGED_COMMAND);
        if self.0.len() < Self::MAX && text.len() <= Self::MAX_BYTES {
            self.0.insert(text.to_string(), m.clone());
        }
        m
    }
}

/// One INSERT of at most `ROWS_PER_INSERT` rows (well within SQLite's and
/// PostgreSQL's parameter limits).
fn insert_rows(db: Db<'_>, chunk: &[Logged], masked: &mut Masked) -> KipResult<()> {
    let mut args: Vec<Val> = Vec::with_capacity(chunk.len() * 10);
    let mut values = String::with_capacity(chunk.len() * 64);
    for l in chunk {
        let s = &l.served;
        // a secret an agent sent is never kept in the log
        let params = if s.parameters.as_object().is_some_and(|m| m.is_empty()) {
            "{}".to_string()
        } else {
            let mut params = s.parameters.clone();
            crate::secrets::redact_value(&mut params);
            params.to_string()
        };
        let params = if params.len() > MAX_LOGGED_PARAMETERS {
            json!({ "_cut": format!("{} bytes of parameters not kept", params.len()) }).to_string()
        } else {
            params
        };
        // `[1,2,3]`, the ids written straight into the text
        let mut listed = String::with_capacity(2 + 8 * s.elements.len().min(MAX_LOGGED_ELEMENTS));
        listed.push('[');
        let mut digits = itoa::Buffer::new();
        for (i, &e) in s.elements.iter().take(MAX_LOGGED_ELEMENTS).enumerate() {
            if i > 0 {
                listed.push(',');
            }
            listed.push_str(digits.format(e));
        }
        listed.push(']');
        if !values.is_empty() {
            values.push_str(", ");
        }
        let n = args.len();
        values.push('(');
        for k in 1..=10 {
            if k > 1 {
                values.push_str(", ");
            }
            values.push('?');
            values.push_str(digits.format(n + k));
        }
        values.push(')');
        args.extend([
            Val::Text(l.at.clone()),
            Val::Text(l.caller.clone()),
            Val::Text(l.channel.clone()),
            Val::Text(s.kind.clone()),
            Val::Text(masked.command(&s.command)),
            Val::Text(params),
            Val::Text(listed),
            Val::Int(s.rows.min(i64::MAX as u64) as i64),
            Val::Int(s.micros.min(i64::MAX as u64) as i64),
            match &s.error {
                // (an error may quote the command)
                Some(e) => Val::Text(crate::secrets::redact(e).0),
                None => Val::Null,
            },
        ]);
    }
    db.execute(
        &format!(
            "INSERT INTO read_log(at, caller, channel, kind, command, parameters, elements, rows, micros, error) VALUES {values}"
        ),
        &args,
    )?;
    Ok(())
}

/// Adds read counts (each pair once: `count_uses`), several a statement.
pub fn record_uses(db: Db<'_>, uses: &[UseCount]) -> KipResult<()> {
    for chunk in uses.chunks(USES_PER_UPSERT) {
        let mut args: Vec<Val> = Vec::with_capacity(chunk.len() * 4);
        let mut values = Vec::with_capacity(chunk.len());
        for u in chunk {
            let n = args.len();
            values.push(format!("(?{}, ?{}, ?{}, ?{})", n + 1, n + 2, n + 3, n + 4));
            args.extend([
                Val::Int(u.element),
                Val::Text(u.caller.clone()),
                Val::Int(u.count),
                Val::Text(u.last.clone()),
            ]);
        }
        db.execute(
            &format!(
                "INSERT INTO read_use(element, caller, count, last_at) VALUES {} \
                 ON CONFLICT (element, caller) DO UPDATE SET count = read_use.count + excluded.count, \
                 last_at = CASE WHEN excluded.last_at > read_use.last_at THEN excluded.last_at ELSE read_use.last_at END",
                values.join(", ")
            ),
            &args,
        )?;
    }
    Ok(())
}

/// How often one caller read an element, and when last.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ByCaller {
    pub caller: String,
    pub count: i64,
    pub last: String,
}

/// How often an element was read, and by whom.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Use {
    pub count: i64,
    pub last: Option<String>,
    pub by: Vec<ByCaller>,
}

impl Use {
    pub fn to_json(&self) -> Value {
        json!({
            "count": self.count,
            "last": self.last,
            "by": self.by.iter().map(|b| json!({"caller": b.caller, "count": b.count, "last": b.last})).collect::<Vec<_>>(),
        })
    }
}

/// How often and when `element` was read, per caller (most reads first).
pub fn use_of(db: Db<'_>, element: i64) -> KipResult<Use> {
    let mut u = Use::default();
    for r in db.query(
        "SELECT caller, count, last_at FROM read_use WHERE element = ?1 ORDER BY count DESC, caller",
        &[Val::Int(element)],
    )? {
        let b = ByCaller {
            caller: r.text(0)?,
            count: r.i64(1)?,
            last: r.text(2)?,
        };
        u.count += b.count;
        if u.last.as_deref().is_none_or(|l| b.last.as_str() > l) {
            u.last = Some(b.last.clone());
        }
        u.by.push(b);
    }
    Ok(u)
}

/// Reads of many elements at once: element → (count, last read).
pub fn uses(db: Db<'_>, ids: &[i64]) -> KipResult<HashMap<i64, (i64, String)>> {
    let mut out = HashMap::new();
    for chunk in ids.chunks(500) {
        let list = json!(chunk).to_string();
        let sql = match db.backend() {
            Backend::Sqlite => {
                "SELECT element, SUM(count), MAX(last_at) FROM read_use \
                 WHERE element IN (SELECT value FROM json_each(?1)) GROUP BY element"
            }
            Backend::Postgres => {
                "SELECT element, SUM(count)::bigint, MAX(last_at) FROM read_use \
                 WHERE element = ANY(ARRAY(SELECT value::bigint FROM jsonb_array_elements_text(?1::jsonb))) GROUP BY element"
            }
        };
        for r in db.query(sql, &[Val::Text(list)])? {
            out.insert(r.i64(0)?, (r.i64(1)?, r.text(2)?));
        }
    }
    Ok(out)
}

/// Which requests `recent` lists.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub caller: Option<String>,
    pub kind: Option<String>,
    pub errors_only: bool,
    /// Only requests after this log id (a live view's last seen).
    pub after: Option<i64>,
    /// Only requests at or after this time (RFC 3339).
    pub since: Option<String>,
}

/// The newest requests first, at most `limit`.
pub fn recent(db: Db<'_>, f: &Filter, limit: usize) -> KipResult<Vec<Request>> {
    let mut sql = String::from(
        "SELECT id, at, caller, channel, kind, command, parameters, elements, rows, micros, error FROM read_log WHERE 1 = 1",
    );
    let mut args: Vec<Val> = Vec::new();
    if let Some(c) = &f.caller {
        args.push(Val::Text(c.clone()));
        sql.push_str(&format!(" AND caller = ?{}", args.len()));
    }
    if let Some(k) = &f.kind {
        args.push(Val::Text(k.to_uppercase()));
        sql.push_str(&format!(" AND kind = ?{}", args.len()));
    }
    if f.errors_only {
        sql.push_str(" AND error IS NOT NULL");
    }
    if let Some(a) = f.after {
        args.push(Val::Int(a));
        sql.push_str(&format!(" AND id > ?{}", args.len()));
    }
    if let Some(s) = &f.since {
        args.push(Val::Text(s.clone()));
        sql.push_str(&format!(" AND at >= ?{}", args.len()));
    }
    args.push(Val::Int(limit.min(100_000) as i64));
    sql.push_str(&format!(" ORDER BY id DESC LIMIT ?{}", args.len()));
    db.query(&sql, &args)?
        .into_iter()
        .map(|r| {
            Ok(Request {
                id: r.i64(0)?,
                at: r.text(1)?,
                caller: r.text(2)?,
                channel: r.text(3)?,
                kind: r.text(4)?,
                command: r.text(5)?,
                parameters: serde_json::from_str(&r.text(6)?).unwrap_or(Value::Null),
                elements: serde_json::from_str(&r.text(7)?).unwrap_or_default(),
                rows: r.i64(8)?,
                micros: r.i64(9)?,
                error: r.opt_text(10)?,
            })
        })
        .collect()
}

/// The most read elements: (element, reads, last read), most first.
pub fn most_read(db: Db<'_>, limit: usize) -> KipResult<Vec<(i64, i64, String)>> {
    db.query(
        "SELECT element, SUM(count) AS n, MAX(last_at) FROM read_use GROUP BY element ORDER BY n DESC, element LIMIT ?1",
        &[Val::Int(limit.min(100_000) as i64)],
    )?
    .into_iter()
    .map(|r| Ok((r.i64(0)?, r.i64(1)?, r.text(2)?)))
    .collect()
}

/// Concepts no agent ever read (oldest first), skipping the schema and the
/// house's own (`$ConceptType`, `$PropositionType`, `$self`, `$system`,
/// Domains, SleepTasks).
pub fn never_read(db: Db<'_>, limit: usize) -> KipResult<Vec<(i64, String, String)>> {
    db.query(
        "SELECT c.id, c.type, c.name FROM concepts c \
         WHERE c.type NOT LIKE '$%' AND c.name NOT LIKE '$%' AND c.type NOT IN ('Domain', 'SleepTask') AND NOT EXISTS (SELECT 1 FROM read_use u WHERE u.element = c.id) \
         ORDER BY c.id LIMIT ?1",
        &[Val::Int(limit.min(100_000) as i64)],
    )?
    .into_iter()
    .map(|r| Ok((r.i64(0)?, r.text(1)?, r.text(2)?)))
    .collect()
}

/// What `prune` removed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Pruned {
    /// Log rows older than the retention, or beyond the row limit.
    pub requests: i64,
    /// Counts of elements that no longer exist.
    pub counts: i64,
}

/// The log's retention: drops requests logged before `before` (RFC 3339)
/// and, past `max_rows`, the oldest; and the read counts of elements that
/// no longer exist. The counts of live elements stay. `dry_run` only
/// counts.
pub fn prune(db: Db<'_>, before: &str, max_rows: Option<u64>, dry_run: bool) -> KipResult<Pruned> {
    // rows are appended in time order: the first kept is found by id
    let keep_from = first_at_or_after(db, before)?;
    let old = db
        .query_i64(
            "SELECT COUNT(*) FROM read_log WHERE id < ?1",
            &[Val::Int(keep_from)],
        )?
        .unwrap_or(0);
    let total = db
        .query_i64("SELECT COUNT(*) FROM read_log", &[])?
        .unwrap_or(0);
    let over = match max_rows {
        Some(m) => (total - old - m.min(i64::MAX as u64) as i64).max(0),
        None => 0,
    };
    let gone = "NOT EXISTS (SELECT 1 FROM concepts c WHERE c.id = read_use.element) \
                AND NOT EXISTS (SELECT 1 FROM propositions p WHERE p.id = read_use.element)";
    let counts = db
        .query_i64(&format!("SELECT COUNT(*) FROM read_use WHERE {gone}"), &[])?
        .unwrap_or(0);
    if !dry_run {
        db.execute("DELETE FROM read_log WHERE id < ?1", &[Val::Int(keep_from)])?;
        if over > 0 {
            // the oldest rows left, past the limit
            let cutoff = db
                .query_i64(
                    "SELECT id FROM read_log ORDER BY id LIMIT 1 OFFSET ?1",
                    &[Val::Int(over - 1)],
                )?
                .ok_or_else(|| KipError::internal("the read log shrank while pruned"))?;
            db.execute("DELETE FROM read_log WHERE id <= ?1", &[Val::Int(cutoff)])?;
        }
        db.execute(&format!("DELETE FROM read_use WHERE {gone}"), &[])?;
    }
    Ok(Pruned {
        requests: old + over,
        counts,
    })
}

/// The id of the first row logged at or after `at` (one past the last
/// row when none is): a binary search over ids, each step one lookup by
/// the primary key.
fn first_at_or_after(db: Db<'_>, at: &str) -> KipResult<i64> {
    let bound = |sql: &str| -> KipResult<i64> { Ok(db.query_i64(sql, &[])?.unwrap_or(0)) };
    let (mut lo, mut hi) = (
        bound("SELECT COALESCE(MIN(id), 1) FROM read_log")?,
        bound("SELECT COALESCE(MAX(id), 0) + 1 FROM read_log")?,
    );
    // the first id in [lo, hi) whose row (or the next after it) is at or
    // after `at`
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let row = db.query_opt(
            "SELECT id, at FROM read_log WHERE id >= ?1 ORDER BY id LIMIT 1",
            &[Val::Int(mid)],
        )?;
        match row {
            Some(r) if r.text(1)?.as_str() < at => lo = r.i64(0)? + 1,
            _ => hi = mid,
        }
    }
    Ok(lo)
}

/// How many requests the log holds, and its first and last times.
pub fn size(db: Db<'_>) -> KipResult<(i64, Option<String>, Option<String>)> {
    let r = db
        .query_opt("SELECT COUNT(*), MIN(at), MAX(at) FROM read_log", &[])?
        .ok_or_else(|| KipError::internal("counting the read log gave nothing"))?;
    Ok((r.i64(0)?, r.opt_text(1)?, r.opt_text(2)?))
}

/// An element agents read, named for the operator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Used {
    pub id: i64,
    /// `C:12` or `P:40:knows`; None when the element is no longer in the
    /// memory.
    pub kip_id: Option<String>,
    /// `Type:Name` for a concept, the KIP id for a proposition, or a note
    /// that it is gone.
    pub label: String,
    pub reads: i64,
    pub last: String,
}

/// Elements as the operator names them: a concept `Type:Name`, a
/// proposition by its KIP id (`P:40:knows`). Absent: no longer in the
/// memory.
pub fn labels(db: Db<'_>, ids: &[i64]) -> KipResult<HashMap<i64, (String, String)>> {
    let mut out: HashMap<i64, (String, String)> = crate::store::kip_ids_by_ids(db, ids)?
        .into_iter()
        .map(|(id, k)| (id, (k.clone(), k)))
        .collect();
    for (id, (t, n)) in crate::store::labels_by_ids(db, ids)? {
        if let Some(e) = out.get_mut(&id) {
            e.1 = format!("{t}:{n}");
        }
    }
    Ok(out)
}

/// The most read elements, named: most reads first.
pub fn most_read_named(db: Db<'_>, limit: usize) -> KipResult<Vec<Used>> {
    let top = most_read(db, limit)?;
    let ids: Vec<i64> = top.iter().map(|t| t.0).collect();
    let names = labels(db, &ids)?;
    Ok(top
        .into_iter()
        .map(|(id, reads, last)| {
            let named = names.get(&id);
            Used {
                id,
                kip_id: named.map(|n| n.0.clone()),
                label: named
                    .map(|n| n.1.clone())
                    .unwrap_or_else(|| format!("#{id} (no longer in the memory)")),
                reads,
                last,
            }
        })
        .collect())
}

/// What the agents use, and what they never do: the most read elements,
/// the concepts never read, and the log's size and span.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Usage {
    pub most: Vec<Used>,
    /// (id, type, name), oldest first.
    pub never: Vec<(i64, String, String)>,
    /// Requests the log holds, and its first and last times.
    pub logged: i64,
    pub first: Option<String>,
    pub last: Option<String>,
}

/// The most read and never read lists (`limit` each) and the log's size.
pub fn usage(db: Db<'_>, limit: usize) -> KipResult<Usage> {
    let (logged, first, last) = size(db)?;
    Ok(Usage {
        most: most_read_named(db, limit)?,
        never: never_read(db, limit)?,
        logged,
        first,
        last,
    })
}
