//! The audit trail. Every write statement opens an entry (who, through
//! what, why, the command); triggers on the graph tables record the before
//! and after image of every element it touches, so no write path can skip
//! the trail. Entries can be rolled back, and a rollback is itself an entry
//! that can be rolled back.

use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store;
use rusqlite::functions::FunctionFlags;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The entry the connection's writes belong to right now (0: none).
#[derive(Clone, Default)]
pub struct Context(Arc<AtomicI64>);

impl Context {
    pub fn set(&self, entry: i64) {
        self.0.store(entry, Ordering::SeqCst);
    }
    pub fn clear(&self) {
        self.0.store(0, Ordering::SeqCst);
    }
}

/// Makes `somnus_audit_entry()` available to the triggers.
pub fn register(conn: &Connection, ctx: &Context) -> KipResult<()> {
    let c = ctx.0.clone();
    conn.create_scalar_function(
        "somnus_audit_entry",
        0,
        FunctionFlags::SQLITE_UTF8,
        move |_| {
            let v = c.load(Ordering::SeqCst);
            Ok(if v == 0 { None } else { Some(v) })
        },
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

pub fn begin(
    conn: &Connection,
    who: &Who,
    command: &str,
    kind: &str,
    rolls_back: Option<i64>,
) -> KipResult<i64> {
    // changes of one entry are contiguous: writes are serialised
    conn.execute(
        "INSERT INTO audit_log(at, actor, trigger_name, reason, command, kind, rolls_back, first_change) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT COALESCE(MAX(id), 0) + 1 FROM audit_changes))",
        params![store::now(), who.actor, who.trigger, who.reason, command, kind, rolls_back],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Drops an entry that changed nothing (a write statement that matched no
/// element), keeping the trail to real changes.
pub fn finish(conn: &Connection, entry: i64) -> KipResult<usize> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM audit_changes WHERE id >= (SELECT first_change FROM audit_log WHERE id = ?1) AND entry = ?1",
        [entry],
        |r| r.get(0),
    )?;
    if n == 0 {
        conn.execute("DELETE FROM audit_log WHERE id = ?1", [entry])?;
    } else {
        conn.execute(
            "UPDATE audit_log SET n_changes = ?2 WHERE id = ?1",
            params![entry, n],
        )?;
    }
    Ok(n as usize)
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
    pub changes: i64,
}

impl Entry {
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "at": self.at, "actor": self.actor, "trigger": self.trigger, "reason": self.reason,
            "kind": self.kind, "command": self.command, "changes": self.changes,
            "rolls_back": self.rolls_back, "rolled_back_by": self.rolled_back_by,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub id: i64,
    pub entry: i64,
    pub element: i64,
    pub table: String,
    pub op: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
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
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub actor: Option<String>,
    pub kind: Option<String>,
    pub element: Option<i64>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: usize,
}

fn entry_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    Ok(Entry {
        id: r.get(0)?,
        at: r.get(1)?,
        actor: r.get(2)?,
        trigger: r.get(3)?,
        reason: r.get(4)?,
        command: r.get(5)?,
        kind: r.get(6)?,
        rolls_back: r.get(7)?,
        rolled_back_by: r.get(8)?,
        changes: r.get(9)?,
    })
}

const ENTRY_COLS: &str = "l.id, l.at, l.actor, l.trigger_name, l.reason, l.command, l.kind, l.rolls_back, l.rolled_back_by, l.n_changes";

pub fn list(conn: &Connection, f: &Filter) -> KipResult<Vec<Entry>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {ENTRY_COLS} FROM audit_log l \
         WHERE (?1 IS NULL OR l.actor = ?1) AND (?2 IS NULL OR l.kind = ?2) \
           AND (?3 IS NULL OR EXISTS (SELECT 1 FROM audit_changes c WHERE c.element = ?3 AND c.entry = l.id)) \
           AND (?4 IS NULL OR l.at >= ?4) AND (?5 IS NULL OR l.at <= ?5) \
         ORDER BY l.id DESC LIMIT ?6"
    ))?;
    let rows = st.query_map(
        params![
            f.actor,
            f.kind,
            f.element,
            f.since,
            f.until,
            f.limit.max(1) as i64
        ],
        entry_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn entry(conn: &Connection, id: i64) -> KipResult<Option<Entry>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {ENTRY_COLS} FROM audit_log l WHERE l.id = ?1"
    ))?;
    Ok(st.query_row([id], entry_row).optional()?)
}

fn parse(s: Option<String>) -> Option<Value> {
    s.and_then(|t| serde_json::from_str(&t).ok())
}

pub fn changes(conn: &Connection, entry: i64) -> KipResult<Vec<Change>> {
    let mut st = conn.prepare_cached(
        "SELECT id, entry, element, tbl, op, before, after FROM audit_changes \
         WHERE id >= (SELECT first_change FROM audit_log WHERE id = ?1) \
           AND id < (SELECT first_change + n_changes FROM audit_log WHERE id = ?1) AND entry = ?1 ORDER BY id",
    )?;
    let rows = st.query_map([entry], |r| {
        Ok(Change {
            id: r.get(0)?,
            entry: r.get(1)?,
            element: r.get(2)?,
            table: r.get(3)?,
            op: r.get(4)?,
            before: parse(r.get(5)?),
            after: parse(r.get(6)?),
        })
    })?;
    let mut out: Vec<Change> = rows.collect::<Result<_, _>>()?;
    for c in out.iter_mut() {
        if c.op == "insert" && c.after.is_none() {
            c.after = inserted_image(conn, c)?;
        }
    }
    Ok(out)
}

/// What an insert wrote: the before image of the element's next change,
/// or the row as it is now.
fn inserted_image(conn: &Connection, c: &Change) -> KipResult<Option<Value>> {
    let next: Option<String> = conn
        .query_row("SELECT before FROM audit_changes WHERE element = ?1 AND id > ?2 AND before IS NOT NULL ORDER BY id LIMIT 1", params![c.element, c.id], |r| r.get(0))
        .optional()?;
    if let Some(n) = next {
        return Ok(serde_json::from_str(&n).ok());
    }
    let row: Option<String> = if c.table == "concepts" {
        conn.query_row(
            "SELECT json_object('id', id, 'type', type, 'name', name, 'attributes', json(attributes), 'metadata', json(metadata), 'version', version, 'updated_at', updated_at) FROM concepts WHERE id = ?1",
            [c.element],
            |r| r.get(0),
        )
        .optional()?
    } else {
        conn.query_row(
            "SELECT json_object('id', id, 'subject', subject, 'predicate', predicate, 'object', object, 'attributes', json(attributes), 'metadata', json(metadata), 'version', version, 'updated_at', updated_at) FROM propositions WHERE id = ?1",
            [c.element],
            |r| r.get(0),
        )
        .optional()?
    };
    Ok(row.and_then(|t| serde_json::from_str(&t).ok()))
}

/// Every recorded change to one element, newest first, with its entry.
pub fn history_of(conn: &Connection, element: i64) -> KipResult<Vec<(Entry, Change)>> {
    let mut st = conn.prepare_cached("SELECT id, entry, element, tbl, op, before, after FROM audit_changes WHERE element = ?1 ORDER BY id DESC")?;
    let rows = st.query_map([element], |r| {
        Ok(Change {
            id: r.get(0)?,
            entry: r.get(1)?,
            element: r.get(2)?,
            table: r.get(3)?,
            op: r.get(4)?,
            before: parse(r.get(5)?),
            after: parse(r.get(6)?),
        })
    })?;
    let mut out = Vec::new();
    for c in rows {
        let mut c = c?;
        if c.op == "insert" && c.after.is_none() {
            c.after = inserted_image(conn, &c)?;
        }
        if let Some(e) = entry(conn, c.entry)? {
            out.push((e, c));
        }
    }
    Ok(out)
}

fn conflict(msg: String) -> KipError {
    KipError::new(ErrorCode::VersionConflict, msg).with_hint("Roll back the later entries first (newest first), or inspect them with `somnus audit show`.")
}

/// Undoes one entry inside the caller's transaction, as a new entry by
/// `who`. Refuses when an element it touched was changed by a later entry
/// that is still in effect.
pub fn rollback(conn: &Connection, ctx: &Context, id: i64, who: &Who) -> KipResult<i64> {
    let e = entry(conn, id)?
        .ok_or_else(|| KipError::not_found(format!("audit entry #{id} does not exist")))?;
    if let Some(by) = e.rolled_back_by {
        return Err(KipError::new(
            ErrorCode::DuplicateExists,
            format!("entry #{id} was already rolled back by #{by}"),
        ));
    }
    let chs = changes(conn, id)?;
    // later changes to the same elements that are still in effect
    let mut st = conn.prepare_cached(
        "SELECT c.entry FROM audit_changes c JOIN audit_log l ON l.id = c.entry \
         WHERE c.element = ?1 AND c.entry > ?2 AND l.rolled_back_by IS NULL \
           AND (l.rolls_back IS NULL OR l.rolls_back < ?2) LIMIT 1",
    )?;
    for c in &chs {
        if let Some(later) = st
            .query_row(params![c.element, id], |r| r.get::<_, i64>(0))
            .optional()?
        {
            return Err(conflict(format!(
                "{} was changed again by entry #{later} after #{id}",
                c.kip_id()
            )));
        }
    }
    let new = begin(conn, who, &format!("ROLLBACK #{id}"), "ROLLBACK", Some(id))?;
    ctx.set(new);
    let res = (|| -> KipResult<()> {
        let inserted: std::collections::HashSet<i64> = chs
            .iter()
            .filter(|c| c.op == "insert")
            .map(|c| c.element)
            .collect();
        for c in chs.iter().rev() {
            undo(conn, c, &inserted)?;
        }
        Ok(())
    })();
    ctx.clear();
    res?;
    finish(conn, new)?;
    conn.execute(
        "UPDATE audit_log SET rolled_back_by = ?1 WHERE id = ?2",
        params![new, id],
    )?;
    Ok(new)
}

fn undo(
    conn: &Connection,
    c: &Change,
    inserted_together: &std::collections::HashSet<i64>,
) -> KipResult<()> {
    let now = store::now();
    let s = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    let text = |v: &Value, k: &str| {
        v.get(k)
            .map(|x| x.to_string())
            .unwrap_or_else(|| "{}".into())
    };
    match (c.op.as_str(), c.table.as_str()) {
        ("insert", t) => {
            let mut st = conn.prepare_cached(
                "SELECT id FROM propositions WHERE (subject = ?1 OR object = ?1) AND id != ?1",
            )?;
            let refs: Vec<i64> = st
                .query_map([c.element], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            if let Some(p) = refs.into_iter().find(|p| !inserted_together.contains(p)) {
                return Err(conflict(format!(
                    "{} is referenced by proposition {p}, written after it",
                    c.kip_id()
                )));
            }
            conn.execute(&format!("DELETE FROM {t} WHERE id = ?1"), [c.element])?;
        }
        ("update", "concepts") | ("delete", "concepts") => {
            let b = c.before.clone().unwrap_or(Value::Null);
            let current: Option<i64> = conn
                .query_row(
                    "SELECT version FROM concepts WHERE id = ?1",
                    [c.element],
                    |r| r.get(0),
                )
                .optional()?;
            let version = current.unwrap_or_else(|| b["version"].as_i64().unwrap_or(1)) + 1;
            if current.is_some() {
                conn.execute(
                    "UPDATE concepts SET type = ?2, name = ?3, attributes = ?4, metadata = ?5, version = ?6, updated_at = ?7 WHERE id = ?1",
                    params![c.element, s(&b, "type").as_str(), s(&b, "name").as_str(), text(&b, "attributes"), text(&b, "metadata"), version, now],
                )?;
            } else {
                conn.execute(
                    "INSERT INTO concepts(id, type, name, attributes, metadata, version, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![c.element, s(&b, "type").as_str(), s(&b, "name").as_str(), text(&b, "attributes"), text(&b, "metadata"), version, now],
                )?;
            }
        }
        ("update", "propositions") | ("delete", "propositions") => {
            let b = c.before.clone().unwrap_or(Value::Null);
            let current: Option<i64> = conn
                .query_row(
                    "SELECT version FROM propositions WHERE id = ?1",
                    [c.element],
                    |r| r.get(0),
                )
                .optional()?;
            let version = current.unwrap_or_else(|| b["version"].as_i64().unwrap_or(1)) + 1;
            let (sub, pred, obj) = (
                s(&b, "subject").as_i64(),
                s(&b, "predicate"),
                s(&b, "object").as_i64(),
            );
            if current.is_some() {
                conn.execute(
                    "UPDATE propositions SET subject = ?2, predicate = ?3, object = ?4, attributes = ?5, metadata = ?6, version = ?7, updated_at = ?8 WHERE id = ?1",
                    params![c.element, sub, pred.as_str(), obj, text(&b, "attributes"), text(&b, "metadata"), version, now],
                )?;
            } else {
                conn.execute(
                    "INSERT INTO propositions(id, subject, predicate, object, attributes, metadata, version, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![c.element, sub, pred.as_str(), obj, text(&b, "attributes"), text(&b, "metadata"), version, now],
                )?;
            }
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
