//! The audit trail. Every write statement opens an entry (who, through
//! what, why, the command). Triggers on the graph tables record the before
//! and after image of every element an entry updates or deletes, so no
//! write path can skip the trail; the elements an entry creates are the id
//! range it allocated (ids only grow), so creating costs no audit row.
//! Entries can be rolled back, and a rollback is itself an entry that can
//! be rolled back.

mod effects;
pub mod reads;
pub use effects::{Preread, effects, effects_of, effects_read};

use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store;
use crate::store::db::{Backend, Db, Row, Val};
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The entry the connection's writes belong to right now (0: none), and
/// the first element id that entry may allocate.
#[derive(Clone, Default)]
pub struct Context {
    entry: Arc<AtomicI64>,
    first_id: Arc<AtomicI64>,
    /// The group the entries opened now belong to (a sleep run, a
    /// proposal's approval, a group rollback), if any.
    batch: Arc<std::sync::Mutex<Option<String>>>,
}

impl Context {
    pub fn set_batch(&self, batch: Option<String>) {
        if let Ok(mut b) = self.batch.lock() {
            *b = batch;
        }
    }
    pub fn batch(&self) -> Option<String> {
        self.batch.lock().ok().and_then(|b| b.clone())
    }
    pub fn set(&self, entry: i64, first_id: i64) {
        self.first_id.store(first_id, Ordering::SeqCst);
        self.entry.store(entry, Ordering::SeqCst);
    }
    pub fn clear(&self) {
        self.entry.store(0, Ordering::SeqCst);
    }
}

/// Makes `somnus_audit_entry()` and `somnus_audit_first_id()` available to
/// the triggers.
pub fn register(conn: &Connection, ctx: &Context) -> KipResult<()> {
    let e = ctx.entry.clone();
    conn.create_scalar_function(
        "somnus_audit_entry",
        0,
        FunctionFlags::SQLITE_UTF8,
        move |_| {
            let v = e.load(Ordering::SeqCst);
            Ok(if v == 0 { None } else { Some(v) })
        },
    )?;
    let f = ctx.first_id.clone();
    conn.create_scalar_function(
        "somnus_audit_first_id",
        0,
        FunctionFlags::SQLITE_UTF8,
        move |_| Ok(f.load(Ordering::SeqCst)),
    )?;
    Ok(())
}

/// Who is writing, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Who {
    pub actor: String,
    pub trigger: String,
    pub reason: Option<String>,
}

/// The first id the next element will get: an entry's created elements
/// are the range between its start and its end. PostgreSQL's writers share
/// one sequence, so ranges would interleave there: its entries have no
/// range, and every insert is recorded as a change instead.
fn next_id(db: Db<'_>) -> KipResult<i64> {
    match db.backend() {
        Backend::Sqlite => db
            .query_i64(
                "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'next_id'",
                &[],
            )?
            .ok_or_else(|| KipError::internal("the memory has no id counter")),
        Backend::Postgres => Ok(0),
    }
}

/// Opens an entry and points the connection's writes at it.
pub fn begin<'a>(
    db: impl Into<Db<'a>>,
    ctx: &Context,
    who: &Who,
    command: &str,
    kind: &str,
    rolls_back: Option<i64>,
) -> KipResult<i64> {
    let db = db.into();
    let (sql, args, first_id) = opening(db, ctx, who, command, kind, rolls_back)?;
    let entry = db
        .query_i64(&sql, &args)?
        .ok_or_else(|| KipError::internal("an audit entry got no id"))?;
    ctx.set(entry, first_id);
    Ok(entry)
}

/// [`begin`] for an entry whose id is wanted only when it closes
/// ([`finish_reading`]): on PostgreSQL the statement that opens it goes
/// with the command's first statement, one round trip for both
/// (`None`); SQLite opens it now (its id).
pub fn begin_deferred<'a>(
    db: impl Into<Db<'a>>,
    ctx: &Context,
    who: &Who,
    command: &str,
    kind: &str,
) -> KipResult<Option<i64>> {
    let db = db.into();
    if db.backend() == Backend::Sqlite {
        return begin(db, ctx, who, command, kind, None).map(Some);
    }
    let (sql, args, first_id) = opening(db, ctx, who, command, kind, None)?;
    ctx.set(0, first_id);
    db.defer(&sql, args)?;
    Ok(None)
}

/// The statement that opens an entry, its arguments, and the first id the
/// entry may allocate.
fn opening(
    db: Db<'_>,
    ctx: &Context,
    who: &Who,
    command: &str,
    kind: &str,
    rolls_back: Option<i64>,
) -> KipResult<(String, Vec<Val>, i64)> {
    let first_id = next_id(db)?;
    let insert = "INSERT INTO audit_log(at, actor, trigger_name, reason, command, kind, rolls_back, first_change, first_id, end_id, batch) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT COALESCE(MAX(id), 0) + 1 FROM audit_changes), ?8, ?8, ?9) RETURNING id";
    let sql = match db.backend() {
        Backend::Sqlite => insert.to_string(),
        // the triggers read the entry from the transaction's settings;
        // every insert is recorded (no id range): one round trip
        Backend::Postgres => format!(
            "WITH e AS ({insert}) SELECT id, set_config('somnus.audit_entry', id::text, true), \
             set_config('somnus.audit_first_id', ?10, true) FROM e"
        ),
    };
    Ok((
        sql,
        vec![
            store::now().into(),
            who.actor.as_str().into(),
            who.trigger.as_str().into(),
            who.reason.clone().into(),
            command.into(),
            kind.into(),
            rolls_back.into(),
            first_id.into(),
            ctx.batch().into(),
            Val::Text(i64::MAX.to_string()),
        ],
        first_id,
    ))
}

/// Closes an entry: records the ids it allocated and how many elements it
/// changed; an entry that changed nothing is dropped. Returns the count.
pub fn finish<'a>(db: impl Into<Db<'a>>, ctx: &Context, entry: i64) -> KipResult<Span> {
    Ok(finish_reading(db, ctx, Some(entry), None, false)?.0)
}

/// [`finish`] of an entry [`begin_deferred`] opened (`None`: its id
/// comes from the deferred statement), and on PostgreSQL, when `listed`
/// is given, what the entry's effects read ([`effects::Preread`]) in the
/// same statement: one round trip instead of three or four. SQLite reads
/// them in process ([`effects_of`]). With `commit`, the closing statement
/// is the transaction's last: on PostgreSQL its `COMMIT` goes in the same
/// round trip ([`Db::commit_with_next`]).
pub fn finish_reading<'a>(
    db: impl Into<Db<'a>>,
    ctx: &Context,
    entry: Option<i64>,
    listed: Option<usize>,
    commit: bool,
) -> KipResult<(Span, Option<effects::Preread>)> {
    let db = db.into();
    ctx.clear();
    let entry = match entry {
        Some(e) => e,
        None => db
            .deferred()?
            .ok_or_else(|| KipError::internal("an audit entry got no id"))?
            .i64(0)?,
    };
    let end_id = next_id(db)?;
    let gone = || KipError::internal(format!("audit entry #{entry} is gone"));
    if db.backend() == Backend::Postgres {
        // one round trip: count, then keep the entry with its count or
        // drop it (no id range on PostgreSQL: the count is every change),
        // and point the triggers away from it. (Every part of the
        // statement sees the entry as it was before it.)
        // with the effects wanted, the entry's first changes come as rows,
        // each with its element's image now
        let (join, cols) = match listed {
            Some(_) => (effects::CHANGES_JOIN, effects::CHANGES_COLS),
            None => ("", ""),
        };
        if commit {
            db.commit_with_next();
        }
        let rows = db.query(
            &format!(
                "WITH c AS (SELECT COUNT(*) AS n FROM audit_changes x, audit_log l \
                   WHERE l.id = ?1 AND x.entry = l.id AND x.id >= l.first_change), \
                 gone AS (DELETE FROM audit_log WHERE id = ?1 AND (SELECT n FROM c) = 0), \
                 kept AS (UPDATE audit_log SET n_changes = (SELECT n FROM c), end_id = ?2 \
                   WHERE id = ?1 AND (SELECT n FROM c) > 0) \
                 SELECT c.n, l.first_change, l.first_id{cols} FROM c CROSS JOIN audit_log l \
                   CROSS JOIN (SELECT set_config('somnus.audit_entry', '', true)) s{join} \
                 WHERE l.id = ?1"
            ),
            &[
                entry.into(),
                end_id.into(),
                (listed
                    .unwrap_or(0)
                    .max(effects::CHANGE_ROWS)
                    .min(i64::MAX as usize) as i64)
                    .into(),
            ],
        )?;
        let r = rows.first().ok_or_else(gone)?;
        let span = Span {
            entry,
            first_change: r.i64(1)?,
            recorded: r.i64(0)?,
            first_id: r.i64(2)?,
            end_id,
        };
        let pre = match listed {
            Some(listed) => {
                let brought = rows
                    .iter()
                    .filter(|r| r.0.get(3) != Some(&Val::Null))
                    .count();
                if span.recorded as usize > brought {
                    // a sweep: its elements listed are read on their own
                    let r = db
                        .query_opt(
                            &effects::preread_sql(),
                            &[entry.into(), (listed.min(i64::MAX as usize) as i64).into()],
                        )?
                        .ok_or_else(gone)?;
                    Some(effects::Preread::read(r, 0)?)
                } else {
                    Some(effects::Preread::of_changes(rows, 3, listed)?)
                }
            }
            None => None,
        };
        return Ok((span, pre));
    }
    // the changes recorded for the entry (from its first, so the index on
    // ids serves), and its first id
    let r = db
        .query_opt(
            "SELECT (SELECT COUNT(*) FROM audit_changes c WHERE c.id >= l.first_change AND c.entry = l.id), l.first_id, l.first_change \
             FROM audit_log l WHERE l.id = ?1",
            &[entry.into()],
        )?
        .ok_or_else(gone)?;
    let span = Span {
        entry,
        first_change: r.i64(2)?,
        recorded: r.i64(0)?,
        first_id: r.i64(1)?,
        end_id,
    };
    if span.changes() == 0 {
        db.execute("DELETE FROM audit_log WHERE id = ?1", &[entry.into()])?;
    } else {
        db.execute(
            "UPDATE audit_log SET n_changes = ?2, end_id = ?3 WHERE id = ?1",
            &[entry.into(), span.recorded.into(), end_id.into()],
        )?;
    }
    Ok((span, None))
}

/// What a finished entry covers: where its recorded changes are, and the
/// ids it handed out (the elements it created, on SQLite; PostgreSQL
/// records creations as changes). An entry with no changes is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub entry: i64,
    /// Its first change is at or after this change id.
    pub first_change: i64,
    /// How many changes it recorded.
    pub recorded: i64,
    /// The ids it handed out: `first_id..end_id`.
    pub first_id: i64,
    pub end_id: i64,
}

impl Span {
    /// Every change: the recorded ones and the elements created.
    pub fn changes(&self) -> i64 {
        self.recorded + (self.end_id - self.first_id)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub trigger: String,
    pub reason: Option<String>,
    pub command: String,
    pub kind: String,
    pub rolls_back: Option<i64>,
    pub rolled_back_by: Option<i64>,
    /// The group the entry belongs to: `sleep:N` (a sleep run),
    /// `proposal:N` (an approval), `rollback:...` (a group rollback).
    pub batch: Option<String>,
    /// When the entry's before/after images were pruned (it can no longer
    /// be undone).
    pub pruned_at: Option<String>,
    /// Elements changed: updated, deleted, re-inserted, and created.
    pub changes: i64,
    first_change: i64,
    recorded: i64,
    first_id: i64,
    end_id: i64,
}

impl Entry {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "at": self.at, "actor": self.actor, "trigger": self.trigger, "reason": self.reason,
            "kind": self.kind, "command": self.command, "changes": self.changes,
            "rolls_back": self.rolls_back, "rolled_back_by": self.rolled_back_by, "batch": self.batch,
            "pruned_at": self.pruned_at,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub entry: i64,
    pub element: i64,
    pub table: String,
    pub op: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
    /// Position in the trail (created elements sort by id before the
    /// recorded changes of the same entry).
    seq: (i64, i64),
}

impl Change {
    /// `C:12` or `P:40:treats`, from whichever image there is.
    pub fn kip_id(&self) -> String {
        let img = self.after.as_ref().or(self.before.as_ref());
        match (self.table.as_str(), img) {
            ("propositions", Some(v)) => {
                store::ids::prop_id(self.element, v["predicate"].as_str().unwrap_or(""))
            }
            ("propositions", None) => format!("P:{}", self.element),
            _ => store::ids::concept_id(self.element),
        }
    }
    pub fn to_json(&self) -> Value {
        json!({ "entry": self.entry, "element": self.kip_id(), "op": self.op, "before": self.before, "after": self.after })
    }
}

/// Filters for listing the trail.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub actor: Option<String>,
    pub kind: Option<String>,
    pub element: Option<i64>,
    pub since: Option<String>,
    pub until: Option<String>,
    /// Entries of one group (`sleep:3`, `proposal:7/2`) and of its
    /// sub-groups (`proposal:7` covers every decision on proposal 7), or
    /// of every group with that prefix when it ends in `:` (`sleep:`).
    pub batch: Option<String>,
    pub limit: usize,
}

const ENTRY_COLS: &str = "l.id, l.at, l.actor, l.trigger_name, l.reason, l.command, l.kind, l.rolls_back, l.rolled_back_by, l.n_changes, l.first_change, l.first_id, l.end_id, l.batch, l.pruned_at";

fn entry_row(r: &Row) -> KipResult<Entry> {
    let recorded = r.i64(9)?;
    let (first_id, end_id) = (r.i64(11)?, r.i64(12)?);
    Ok(Entry {
        id: r.i64(0)?,
        at: r.text(1)?,
        actor: r.text(2)?,
        trigger: r.text(3)?,
        reason: r.opt_text(4)?,
        command: r.text(5)?,
        kind: r.text(6)?,
        rolls_back: r.opt_i64(7)?,
        rolled_back_by: r.opt_i64(8)?,
        batch: r.opt_text(13)?,
        pruned_at: r.opt_text(14)?,
        changes: recorded + (end_id - first_id),
        first_change: r.i64(10)?,
        recorded,
        first_id,
        end_id,
    })
}

/// A `since` / `until` bound as stored times compare: an RFC 3339 time
/// (any offset) or a date (`YYYY-MM-DD`, its start for `since`, its end for
/// `until`), in UTC with milliseconds. Anything else is refused.
pub fn time_bound(text: &str, end_of_day: bool) -> KipResult<String> {
    let t = text.trim();
    let utc = if let Ok(d) = chrono::DateTime::parse_from_rfc3339(t) {
        d.with_timezone(&chrono::Utc)
    } else if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        let time = if end_of_day {
            chrono::NaiveTime::from_hms_milli_opt(23, 59, 59, 999)
        } else {
            chrono::NaiveTime::from_hms_opt(0, 0, 0)
        };
        d.and_time(time.unwrap_or_default()).and_utc()
    } else {
        return Err(KipError::syntax(format!(
            "`{text}` is not a time: give an RFC 3339 time (2026-05-01T09:00:00Z) or a date (2026-05-01)"
        )));
    };
    Ok(utc.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

pub fn list<'a>(db: impl Into<Db<'a>>, f: &Filter) -> KipResult<Vec<Entry>> {
    let since = f
        .since
        .as_deref()
        .map(|t| time_bound(t, false))
        .transpose()?;
    let until = f
        .until
        .as_deref()
        .map(|t| time_bound(t, true))
        .transpose()?;
    // parameters are typed where they are first tested (PostgreSQL infers
    // a parameter's type from its first use)
    db.into()
        .query(
            &format!(
                "SELECT {ENTRY_COLS} FROM audit_log l \
         WHERE (CAST(?1 AS TEXT) IS NULL OR l.actor = ?1) AND (CAST(?2 AS TEXT) IS NULL OR l.kind = ?2) \
           AND (CAST(?3 AS BIGINT) IS NULL OR (l.first_id <= ?3 AND ?3 < l.end_id) OR EXISTS (SELECT 1 FROM audit_changes c WHERE c.element = ?3 AND c.entry = l.id)) \
           AND (CAST(?4 AS TEXT) IS NULL OR l.at >= ?4) AND (CAST(?5 AS TEXT) IS NULL OR l.at <= ?5) \
           AND (CAST(?7 AS TEXT) IS NULL OR l.batch = ?7 OR substr(l.batch, 1, length(?7) + 1) = ?7 || '/' OR (substr(?7, length(?7), 1) = ':' AND substr(l.batch, 1, length(?7)) = ?7)) \
         ORDER BY l.id DESC LIMIT ?6"
            ),
            &[
                f.actor.clone().into(),
                f.kind.clone().into(),
                f.element.into(),
                since.into(),
                until.into(),
                (f.limit.max(1) as i64).into(),
                f.batch.clone().into(),
            ],
        )?
        .iter()
        .map(entry_row)
        .collect()
}

pub fn entry<'a>(db: impl Into<Db<'a>>, id: i64) -> KipResult<Option<Entry>> {
    db.into()
        .query_opt(
            &format!("SELECT {ENTRY_COLS} FROM audit_log l WHERE l.id = ?1"),
            &[id.into()],
        )?
        .as_ref()
        .map(entry_row)
        .transpose()
}

fn parse(s: Option<String>) -> Option<Value> {
    s.and_then(|t| serde_json::from_str(&t).ok())
}

/// The changes an entry recorded, in order. They follow its first change
/// (contiguous in SQLite, where writes are serialised; interleaved with
/// other writers' on PostgreSQL).
fn recorded(db: Db<'_>, e: &Entry) -> KipResult<Vec<Change>> {
    db.query(
        "SELECT id, entry, element, tbl, op, before, after FROM audit_changes WHERE id >= ?1 AND entry = ?3 ORDER BY id LIMIT ?2",
        &[e.first_change.into(), e.recorded.into(), e.id.into()],
    )?
    .iter()
    .map(change_row)
    .collect()
}

/// One recorded change (`SELECT id, entry, element, tbl, op, before, after`).
fn change_row(r: &Row) -> KipResult<Change> {
    Ok(Change {
        entry: r.i64(1)?,
        element: r.i64(2)?,
        table: r.text(3)?,
        op: r.text(4)?,
        before: parse(r.opt_text(5)?),
        after: parse(r.opt_text(6)?),
        seq: (1, r.i64(0)?),
    })
}

/// What the element looks like: after its first later change's before
/// image, else as it is now.
fn image_after(db: Db<'_>, element: i64, after_change: i64) -> KipResult<Option<(String, Value)>> {
    if let Some(r) = db.query_opt(
        "SELECT tbl, before FROM audit_changes WHERE element = ?1 AND id >= ?2 AND before IS NOT NULL ORDER BY id LIMIT 1",
        &[element.into(), after_change.into()],
    )? {
        let table = r.text(0)?;
        return Ok(parse(r.opt_text(1)?).map(|v| (table, v)));
    }
    let (concept, prop) = match db.backend() {
        Backend::Sqlite => (
            "SELECT json_object('id', id, 'type', type, 'name', name, 'attributes', json(attributes), 'metadata', json(metadata), 'version', version, 'updated_at', updated_at) FROM concepts WHERE id = ?1",
            "SELECT json_object('id', id, 'subject', subject, 'predicate', predicate, 'object', object, 'attributes', json(attributes), 'metadata', json(metadata), 'version', version, 'updated_at', updated_at) FROM propositions WHERE id = ?1",
        ),
        Backend::Postgres => (
            "SELECT concept_image(c) FROM concepts c WHERE id = ?1",
            "SELECT proposition_image(p) FROM propositions p WHERE id = ?1",
        ),
    };
    for (sql, table) in [(concept, "concepts"), (prop, "propositions")] {
        if let Some(r) = db.query_opt(sql, &[element.into()])? {
            return Ok(parse(r.opt_text(0)?).map(|v| (table.to_string(), v)));
        }
    }
    Ok(None)
}

fn created(db: Db<'_>, e: &Entry, only: Option<i64>) -> KipResult<Vec<Change>> {
    let mut out = Vec::new();
    let ids: Vec<i64> = match only {
        Some(x) if x >= e.first_id && x < e.end_id => vec![x],
        Some(_) => vec![],
        None => (e.first_id..e.end_id).collect(),
    };
    let after_change = e.first_change + e.recorded;
    for id in ids {
        let (table, img) = match image_after(db, id, after_change)? {
            Some((t, v)) => (t, Some(v)),
            None => ("concepts".to_string(), None),
        };
        out.push(Change {
            entry: e.id,
            element: id,
            table,
            op: "insert".into(),
            before: None,
            after: img,
            seq: (0, id),
        });
    }
    Ok(out)
}

/// An entry's changes: the elements it created, then what it recorded.
pub fn changes<'a>(db: impl Into<Db<'a>>, entry_id: i64) -> KipResult<Vec<Change>> {
    let db = db.into();
    let Some(e) = entry(db, entry_id)? else {
        return Ok(vec![]);
    };
    let mut out = created(db, &e, None)?;
    let mut rec = recorded(db, &e)?;
    for c in rec.iter_mut() {
        if c.op == "insert" && c.after.is_none() {
            c.after = image_after(db, c.element, c.seq.1 + 1)?.map(|(_, v)| v);
        }
    }
    out.extend(rec);
    Ok(out)
}

/// The changes an entry recorded (updates, deletions, re-insertions),
/// without the elements it created: cheaper than [`changes`] where only
/// what existed before matters.
pub fn recorded_changes<'a>(db: impl Into<Db<'a>>, entry_id: i64) -> KipResult<Vec<Change>> {
    let db = db.into();
    match entry(db, entry_id)? {
        Some(e) => recorded(db, &e),
        None => Ok(vec![]),
    }
}

/// Every recorded change to one element, newest first, with its entry.
pub fn history_of<'a>(db: impl Into<Db<'a>>, element: i64) -> KipResult<Vec<(Entry, Change)>> {
    let db = db.into();
    let mut out = Vec::new();
    let rows: Vec<Change> = db
        .query(
            "SELECT id, entry, element, tbl, op, before, after FROM audit_changes WHERE element = ?1 ORDER BY id DESC",
            &[element.into()],
        )?
        .iter()
        .map(change_row)
        .collect::<KipResult<_>>()?;
    for mut c in rows {
        if c.op == "insert" && c.after.is_none() {
            c.after = image_after(db, c.element, c.seq.1 + 1)?.map(|(_, v)| v);
        }
        if let Some(e) = entry(db, c.entry)? {
            out.push((e, c));
        }
    }
    // the entry that created it
    let creator = db.query_i64(
        "SELECT id FROM audit_log WHERE first_id <= ?1 AND ?1 < end_id ORDER BY id DESC LIMIT 1",
        &[element.into()],
    )?;
    if let Some(e) = match creator {
        Some(cid) => entry(db, cid)?,
        None => None,
    } {
        for c in created(db, &e, Some(element))? {
            out.push((e.clone(), c));
        }
    }
    Ok(out)
}

/// The element as it is now (its id, type or endpoints, attributes,
/// metadata, version), or None when it is gone.
pub fn image_now<'a>(db: impl Into<Db<'a>>, element: i64) -> KipResult<Option<Value>> {
    Ok(image_after(db.into(), element, i64::MAX)?.map(|(_, v)| v))
}

/// The values `path` (`["attributes", "timezone"]`) of an element held
/// after each entry that touched it before entry `before`, newest first:
/// `(entry, the value it left)`. It stops at the entry that created the
/// element, or where an image was pruned (older values cannot be told).
pub fn values_left<'a>(
    db: impl Into<Db<'a>>,
    element: i64,
    before: i64,
    path: &[&str],
) -> KipResult<Vec<(Entry, Value)>> {
    let db = db.into();
    let at = |img: &Value| -> Value {
        let mut v = img;
        for k in path {
            match v.get(*k) {
                Some(x) => v = x,
                None => return Value::Null,
            }
        }
        v.clone()
    };
    let history = history_of(db, element)?;
    // the value just before `before`: the before-image of the first
    // change at or after it (else the element as it is now)
    let mut value = None;
    for (e, c) in history.iter().rev() {
        if e.id >= before && c.op != "insert" {
            value = c.before.as_ref().map(at);
            break;
        }
    }
    let mut value = match value {
        Some(v) => v,
        None => match image_now(db, element)? {
            Some(img) => at(&img),
            None => return Ok(vec![]),
        },
    };
    let mut out = Vec::new();
    for (e, c) in history {
        if e.id >= before {
            continue;
        }
        out.push((e, value.clone()));
        match c.before.as_ref() {
            Some(b) if c.op != "insert" => value = at(b),
            // created here, or an image pruned
            _ => break,
        }
    }
    Ok(out)
}

/// The entry that wrote the value `path` held just before entry
/// `before`: of [`values_left`], the oldest of the newest run that left
/// that same value. None when no entry is known for it, or the run
/// reaches a pruned image (the writer cannot be told).
pub fn writer_of<'a>(
    db: impl Into<Db<'a>>,
    element: i64,
    before: i64,
    path: &[&str],
) -> KipResult<Option<Entry>> {
    let db = db.into();
    let left = values_left(db, element, before, path)?;
    let Some((_, value)) = left.first() else {
        return Ok(None);
    };
    let mut writer = None;
    for (i, (e, v)) in left.iter().enumerate() {
        if v != value {
            break;
        }
        // the run goes on past this entry unless it is the last one told
        // (the creator, or the last before a pruned image)
        writer = Some((i, e.clone()));
    }
    let Some((i, e)) = writer else {
        return Ok(None);
    };
    if i + 1 == left.len() && !created_by(db, element, &e)? {
        return Ok(None); // a pruned image lies before it
    }
    Ok(Some(e))
}

/// Whether entry `e` created `element`.
fn created_by(db: Db<'_>, element: i64, e: &Entry) -> KipResult<bool> {
    if element >= e.first_id && element < e.end_id {
        return Ok(true);
    }
    // re-inserted by it (an undone delete)
    Ok(db
        .query_i64(
            "SELECT COUNT(*) FROM audit_changes WHERE entry = ?1 AND element = ?2 AND op = 'insert'",
            &[e.id.into(), element.into()],
        )?
        .unwrap_or(0)
        > 0)
}

fn conflict(msg: String) -> KipError {
    KipError::new(ErrorCode::VersionConflict, msg).with_hint("Roll back the later entries first (newest first), or inspect them with `somnus audit show`.")
}

/// Called, inside the undo's transaction, with each entry an undo took
/// back, so that what records decisions about entries (the review layer's
/// items) follows them. The audit trail knows nothing of those records.
pub type Follow<'f> = &'f dyn Fn(Db<'_>, i64) -> KipResult<()>;

/// A [`Follow`] that does nothing.
pub fn unfollowed(_: Db<'_>, _: i64) -> KipResult<()> {
    Ok(())
}

/// Undoes one entry inside the caller's transaction, as a new entry by
/// `who`. Refuses when an element it touched was changed by a later entry
/// that is still in effect. `follow` is told of the entry once undone.
pub fn rollback<'a>(
    db: impl Into<Db<'a>>,
    ctx: &Context,
    id: i64,
    who: &Who,
    follow: Follow<'_>,
) -> KipResult<i64> {
    let db = db.into();
    let e = entry(db, id)?
        .ok_or_else(|| KipError::not_found(format!("audit entry #{id} does not exist")))?;
    if let Some(by) = e.rolled_back_by {
        return Err(KipError::new(
            ErrorCode::DuplicateExists,
            format!("entry #{id} was already rolled back by #{by}"),
        ));
    }
    if let Some(at) = &e.pruned_at {
        return Err(KipError::new(
            ErrorCode::ResourceExhausted,
            format!(
                "entry #{id} can no longer be undone: its before/after images were pruned at {at}"
            ),
        ));
    }
    if e.kind == "BOOTSTRAP" {
        return Err(KipError::immutable(format!(
            "entry #{id} is the memory's bootstrap (its schema and protected definitions): it is never undone"
        )));
    }
    let rec = recorded(db, &e)?;
    // later changes, still in effect, to what this entry touched or created
    let later_sql = "SELECT c.entry, c.element FROM audit_changes c JOIN audit_log l ON l.id = c.entry \
         WHERE c.element >= ?1 AND c.element < ?2 AND c.entry > ?3 AND l.rolled_back_by IS NULL \
           AND (l.rolls_back IS NULL OR l.rolls_back < ?3) LIMIT 1";
    let mut ranges: Vec<(i64, i64)> = rec.iter().map(|c| (c.element, c.element + 1)).collect();
    if e.end_id > e.first_id {
        ranges.push((e.first_id, e.end_id));
    }
    for (a, b) in ranges {
        if let Some(r) = db.query_opt(later_sql, &[a.into(), b.into(), id.into()])? {
            let (later, el) = (r.i64(0)?, r.i64(1)?);
            let label = store::kip_id_of(db, el)?.unwrap_or_else(|| format!("element {el}"));
            return Err(conflict(format!(
                "{label} was changed again by entry #{later} after #{id}"
            )));
        }
    }
    let new = begin(
        db,
        ctx,
        who,
        &format!("ROLLBACK #{id}"),
        "ROLLBACK",
        Some(id),
    )?;
    let res = (|| -> KipResult<()> {
        let mut inserted: HashSet<i64> = rec
            .iter()
            .filter(|c| c.op == "insert")
            .map(|c| c.element)
            .collect();
        // recorded changes, newest first
        for c in rec.iter().rev() {
            undo(db, c, &inserted, (e.first_id, e.end_id))?;
        }
        // then the elements the entry created
        if e.end_id > e.first_id {
            inserted.extend(e.first_id..e.end_id);
            let range = [Val::Int(e.first_id), Val::Int(e.end_id)];
            let outside = db.query_i64(
                "SELECT id FROM propositions WHERE (subject >= ?1 AND subject < ?2 OR object >= ?1 AND object < ?2) AND NOT (id >= ?1 AND id < ?2) LIMIT 1",
                &range,
            )?;
            if let Some(p) = outside.filter(|p| !inserted.contains(p)) {
                let label = store::kip_id_of(db, p)?.unwrap_or_default();
                return Err(conflict(format!(
                    "{label}, written later, refers to an element entry #{id} created"
                )));
            }
            db.execute(
                "DELETE FROM propositions WHERE id >= ?1 AND id < ?2",
                &range,
            )?;
            db.execute("DELETE FROM concepts WHERE id >= ?1 AND id < ?2", &range)?;
        }
        Ok(())
    })();
    if let Err(err) = res {
        ctx.clear();
        return Err(err);
    }
    finish(db, ctx, new)?;
    db.execute(
        "UPDATE audit_log SET rolled_back_by = ?1 WHERE id = ?2",
        &[new.into(), id.into()],
    )?;
    // what recorded a decision about the entry follows it (in this
    // transaction)
    follow(db, id)?;
    Ok(new)
}

/// Undoes, newest first, every entry of a group still in effect (a sleep
/// run, an approval). Returns the new entries, newest undone first.
pub fn rollback_batch<'a>(
    db: impl Into<Db<'a>>,
    ctx: &Context,
    batch: &str,
    who: &Who,
    follow: Follow<'_>,
) -> KipResult<Vec<i64>> {
    let db = db.into();
    let ids: Vec<i64> = db
        .query(
            "SELECT id FROM audit_log WHERE batch = ?1 AND rolled_back_by IS NULL ORDER BY id DESC",
            &[batch.into()],
        )?
        .iter()
        .map(|r| r.i64(0))
        .collect::<KipResult<_>>()?;
    if ids.is_empty() {
        return Err(KipError::not_found(format!(
            "no change of `{batch}` is in effect"
        )));
    }
    let saved = ctx.batch();
    ctx.set_batch(Some(format!("rollback:{batch}")));
    let res = ids
        .iter()
        .map(|id| rollback(db, ctx, *id, who, follow))
        .collect::<KipResult<Vec<i64>>>();
    ctx.set_batch(saved);
    res
}

/// Restores the memory as it was right after entry `after`: undoes, newest
/// first, every later entry still in effect (an entry and a rollback of it
/// that both came later cancel out and are left alone).
pub fn rollback_after<'a>(
    db: impl Into<Db<'a>>,
    ctx: &Context,
    after: i64,
    who: &Who,
    follow: Follow<'_>,
) -> KipResult<Vec<i64>> {
    let db = db.into();
    let boot = db
        .query_i64(
            "SELECT COALESCE(MAX(id), 0) FROM audit_log WHERE kind = 'BOOTSTRAP'",
            &[],
        )?
        .unwrap_or(0);
    if after < boot {
        return Err(KipError::immutable(format!(
            "the memory's bootstrap (entry #{boot}) is never undone: the earliest point to restore is #{boot}"
        ))
        .with_hint(format!("Roll back to #{boot} or later.")));
    }
    let ids: Vec<i64> = db
        .query(
            "SELECT id FROM audit_log WHERE id > ?1 AND rolled_back_by IS NULL \
             AND (rolls_back IS NULL OR rolls_back <= ?1) ORDER BY id DESC",
            &[after.into()],
        )?
        .iter()
        .map(|r| r.i64(0))
        .collect::<KipResult<_>>()?;
    let saved = ctx.batch();
    ctx.set_batch(Some(format!("rollback:after:{after}")));
    let res = ids
        .iter()
        .map(|id| rollback(db, ctx, *id, who, follow))
        .collect::<KipResult<Vec<i64>>>();
    ctx.set_batch(saved);
    res
}

/// What `prune` freed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pruned {
    pub entries: i64,
    pub images: i64,
    pub bytes: i64,
}

/// Drops the before/after images of every entry up to `through` (its id),
/// the audit trail's retention: the entries stay (who, when, why, the
/// command), are marked pruned, and rollback refuses them by name instead
/// of undoing them from images it no longer has. `dry_run` only counts.
pub fn prune<'a>(db: impl Into<Db<'a>>, through: i64, dry_run: bool) -> KipResult<Pruned> {
    let db = db.into();
    let r = db
        .query_opt(
            "SELECT COUNT(*), COALESCE(SUM(length(before) + length(after)), 0) FROM audit_changes WHERE entry <= ?1",
            &[through.into()],
        )?
        .ok_or_else(|| KipError::internal("counting audit images gave nothing"))?;
    let (images, bytes) = (r.i64(0)?, r.i64(1)?);
    let entries = db
        .query_i64(
            "SELECT COUNT(*) FROM audit_log WHERE id <= ?1 AND pruned_at IS NULL",
            &[through.into()],
        )?
        .unwrap_or(0);
    if !dry_run {
        db.execute(
            "DELETE FROM audit_changes WHERE entry <= ?1",
            &[through.into()],
        )?;
        db.execute(
            "UPDATE audit_log SET pruned_at = ?2 WHERE id <= ?1 AND pruned_at IS NULL",
            &[through.into(), crate::store::now().into()],
        )?;
    }
    Ok(Pruned {
        entries,
        images,
        bytes,
    })
}

/// The last entry written at or before `at` (RFC 3339), 0 if none.
pub fn entry_at<'a>(db: impl Into<Db<'a>>, at: &str) -> KipResult<i64> {
    Ok(db
        .into()
        .query_i64(
            "SELECT COALESCE(MAX(id), 0) FROM audit_log WHERE at <= ?1",
            &[at.into()],
        )?
        .unwrap_or(0))
}

fn undo(
    db: Db<'_>,
    c: &Change,
    inserted_together: &HashSet<i64>,
    created: (i64, i64),
) -> KipResult<()> {
    let now = store::now();
    let s = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    let text = |v: &Value, k: &str| {
        v.get(k)
            .map(|x| x.to_string())
            .unwrap_or_else(|| "{}".into())
    };
    match (c.op.as_str(), c.table.as_str()) {
        ("insert", t @ ("concepts" | "propositions")) => {
            let refs: Vec<i64> = db
                .query(
                    "SELECT id FROM propositions WHERE (subject = ?1 OR object = ?1) AND id != ?1",
                    &[c.element.into()],
                )?
                .iter()
                .map(|r| r.i64(0))
                .collect::<KipResult<_>>()?;
            if let Some(p) = refs
                .into_iter()
                .find(|p| !(inserted_together.contains(p) || (created.0..created.1).contains(p)))
            {
                return Err(conflict(format!(
                    "{} is referenced by proposition {p}, written after it",
                    c.kip_id()
                )));
            }
            db.execute(
                &format!("DELETE FROM {t} WHERE id = ?1"),
                &[c.element.into()],
            )?;
        }
        ("update" | "delete", t @ ("concepts" | "propositions")) => {
            // restore the before image; the version moves on, never back
            let b = c.before.clone().unwrap_or(Value::Null);
            let current = db.query_i64(
                &format!("SELECT version FROM {t} WHERE id = ?1"),
                &[c.element.into()],
            )?;
            let version = current.unwrap_or_else(|| b["version"].as_i64().unwrap_or(1)) + 1;
            let cols: &[&str] = if t == "concepts" {
                &["type", "name"]
            } else {
                &["subject", "predicate", "object"]
            };
            let mut values: Vec<Val> = vec![c.element.into()];
            for col in cols {
                values.push(match s(&b, col) {
                    Value::Number(n) => Val::Int(n.as_i64().unwrap_or(0)),
                    Value::String(x) => Val::Text(x),
                    _ => Val::Null,
                });
            }
            values.extend([
                Val::JsonText(text(&b, "attributes")),
                Val::JsonText(text(&b, "metadata")),
                version.into(),
                now.clone().into(),
            ]);
            let all: Vec<&str> = std::iter::once("id")
                .chain(cols.iter().copied())
                .chain(["attributes", "metadata", "version", "updated_at"])
                .collect();
            let marks: Vec<String> = (1..=all.len()).map(|i| format!("?{i}")).collect();
            let sets: Vec<String> = all[1..]
                .iter()
                .map(|col| format!("{col} = excluded.{col}"))
                .collect();
            db.execute(
                &format!(
                    "INSERT INTO {t}({}) VALUES ({}) ON CONFLICT(id) DO UPDATE SET {}",
                    all.join(", "),
                    marks.join(", "),
                    sets.join(", ")
                ),
                &values,
            )?;
        }
        _ => {
            return Err(KipError::internal(format!(
                "unknown audit change {} on {}",
                c.op, c.table
            )));
        }
    }
    Ok(())
}
