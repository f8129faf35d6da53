//! The audit trail. Every write statement opens an entry (who, through
//! what, why, the command). Triggers on the graph tables record the before
//! and after image of every element an entry updates or deletes, so no
//! write path can skip the trail; the elements an entry creates are the id
//! range it allocated (ids only grow), so creating costs no audit row.
//! Entries can be rolled back, and a rollback is itself an entry that can
//! be rolled back.

mod effects;
pub use effects::effects;

use crate::kip::{ErrorCode, KipError, KipResult};
use crate::store;
use rusqlite::functions::FunctionFlags;
use rusqlite::{Connection, OptionalExtension, params};
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

fn next_id(conn: &Connection) -> KipResult<i64> {
    Ok(conn
        .prepare_cached("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'next_id'")?
        .query_row([], |r| r.get(0))?)
}

/// Opens an entry and points the connection's writes at it.
pub fn begin(
    conn: &Connection,
    ctx: &Context,
    who: &Who,
    command: &str,
    kind: &str,
    rolls_back: Option<i64>,
) -> KipResult<i64> {
    let first_id = next_id(conn)?;
    // an entry's recorded changes are contiguous: writes are serialised
    conn.prepare_cached(
        "INSERT INTO audit_log(at, actor, trigger_name, reason, command, kind, rolls_back, first_change, first_id, end_id, batch) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT COALESCE(MAX(id), 0) + 1 FROM audit_changes), ?8, ?8, ?9)",
    )?
    .execute(params![store::now(), who.actor, who.trigger, who.reason, command, kind, rolls_back, first_id, ctx.batch()])?;
    let entry = conn.last_insert_rowid();
    ctx.set(entry, first_id);
    Ok(entry)
}

/// Closes an entry: records the ids it allocated and how many elements it
/// changed; an entry that changed nothing is dropped. Returns the count.
pub fn finish(conn: &Connection, ctx: &Context, entry: i64) -> KipResult<usize> {
    ctx.clear();
    let end_id = next_id(conn)?;
    let (first_change, first_id): (i64, i64) = conn
        .prepare_cached("SELECT first_change, first_id FROM audit_log WHERE id = ?1")?
        .query_row([entry], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let recorded: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM audit_changes WHERE id >= ?1 AND entry = ?2")?
        .query_row(params![first_change, entry], |r| r.get(0))?;
    let n = recorded + (end_id - first_id);
    if n == 0 {
        conn.prepare_cached("DELETE FROM audit_log WHERE id = ?1")?
            .execute([entry])?;
    } else {
        conn.prepare_cached("UPDATE audit_log SET n_changes = ?2, end_id = ?3 WHERE id = ?1")?
            .execute(params![entry, recorded, end_id])?;
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

fn entry_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    let recorded: i64 = r.get(9)?;
    let (first_id, end_id): (i64, i64) = (r.get(11)?, r.get(12)?);
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
        batch: r.get(13)?,
        pruned_at: r.get(14)?,
        changes: recorded + (end_id - first_id),
        first_change: r.get(10)?,
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

pub fn list(conn: &Connection, f: &Filter) -> KipResult<Vec<Entry>> {
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
    let mut st = conn.prepare_cached(&format!(
        "SELECT {ENTRY_COLS} FROM audit_log l \
         WHERE (?1 IS NULL OR l.actor = ?1) AND (?2 IS NULL OR l.kind = ?2) \
           AND (?3 IS NULL OR (l.first_id <= ?3 AND ?3 < l.end_id) OR EXISTS (SELECT 1 FROM audit_changes c WHERE c.element = ?3 AND c.entry = l.id)) \
           AND (?4 IS NULL OR l.at >= ?4) AND (?5 IS NULL OR l.at <= ?5) \
           AND (?7 IS NULL OR l.batch = ?7 OR substr(l.batch, 1, length(?7) + 1) = ?7 || '/' OR (substr(?7, -1) = ':' AND substr(l.batch, 1, length(?7)) = ?7)) \
         ORDER BY l.id DESC LIMIT ?6"
    ))?;
    let rows = st.query_map(
        params![
            f.actor,
            f.kind,
            f.element,
            since,
            until,
            f.limit.max(1) as i64,
            f.batch
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

fn recorded(conn: &Connection, e: &Entry) -> KipResult<Vec<Change>> {
    let mut st = conn.prepare_cached("SELECT id, entry, element, tbl, op, before, after FROM audit_changes WHERE id >= ?1 AND id < ?2 AND entry = ?3 ORDER BY id")?;
    let rows = st.query_map(
        params![e.first_change, e.first_change + e.recorded, e.id],
        change_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One recorded change (`SELECT id, entry, element, tbl, op, before, after`).
fn change_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Change> {
    Ok(Change {
        entry: r.get(1)?,
        element: r.get(2)?,
        table: r.get(3)?,
        op: r.get(4)?,
        before: parse(r.get(5)?),
        after: parse(r.get(6)?),
        seq: (1, r.get(0)?),
    })
}

/// What the element looks like: after its first later change's before
/// image, else as it is now.
fn image_after(
    conn: &Connection,
    element: i64,
    after_change: i64,
) -> KipResult<Option<(String, Value)>> {
    let next: Option<(String, String)> = conn
        .query_row(
            "SELECT tbl, before FROM audit_changes WHERE element = ?1 AND id >= ?2 AND before IS NOT NULL ORDER BY id LIMIT 1",
            params![element, after_change],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((t, b)) = next {
        return Ok(serde_json::from_str(&b).ok().map(|v| (t, v)));
    }
    let c: Option<String> = conn
        .query_row(
            "SELECT json_object('id', id, 'type', type, 'name', name, 'attributes', json(attributes), 'metadata', json(metadata), 'version', version, 'updated_at', updated_at) FROM concepts WHERE id = ?1",
            [element],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(c) = c {
        return Ok(serde_json::from_str(&c)
            .ok()
            .map(|v| ("concepts".to_string(), v)));
    }
    let p: Option<String> = conn
        .query_row(
            "SELECT json_object('id', id, 'subject', subject, 'predicate', predicate, 'object', object, 'attributes', json(attributes), 'metadata', json(metadata), 'version', version, 'updated_at', updated_at) FROM propositions WHERE id = ?1",
            [element],
            |r| r.get(0),
        )
        .optional()?;
    Ok(p.and_then(|p| serde_json::from_str(&p).ok())
        .map(|v| ("propositions".to_string(), v)))
}

fn created(conn: &Connection, e: &Entry, only: Option<i64>) -> KipResult<Vec<Change>> {
    let mut out = Vec::new();
    let ids: Vec<i64> = match only {
        Some(x) if x >= e.first_id && x < e.end_id => vec![x],
        Some(_) => vec![],
        None => (e.first_id..e.end_id).collect(),
    };
    let after_change = e.first_change + e.recorded;
    for id in ids {
        let (table, img) = match image_after(conn, id, after_change)? {
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
pub fn changes(conn: &Connection, entry_id: i64) -> KipResult<Vec<Change>> {
    let Some(e) = entry(conn, entry_id)? else {
        return Ok(vec![]);
    };
    let mut out = created(conn, &e, None)?;
    let mut rec = recorded(conn, &e)?;
    for c in rec.iter_mut() {
        if c.op == "insert" && c.after.is_none() {
            c.after = image_after(conn, c.element, c.seq.1 + 1)?.map(|(_, v)| v);
        }
    }
    out.extend(rec);
    Ok(out)
}

/// Every recorded change to one element, newest first, with its entry.
pub fn history_of(conn: &Connection, element: i64) -> KipResult<Vec<(Entry, Change)>> {
    let mut out = Vec::new();
    let mut st = conn.prepare_cached("SELECT id, entry, element, tbl, op, before, after FROM audit_changes WHERE element = ?1 ORDER BY id DESC")?;
    let rows: Vec<Change> = st
        .query_map([element], change_row)?
        .collect::<Result<_, _>>()?;
    for mut c in rows {
        if c.op == "insert" && c.after.is_none() {
            c.after = image_after(conn, c.element, c.seq.1 + 1)?.map(|(_, v)| v);
        }
        if let Some(e) = entry(conn, c.entry)? {
            out.push((e, c));
        }
    }
    // the entry that created it
    let creator: Option<i64> = conn
        .query_row("SELECT id FROM audit_log WHERE first_id <= ?1 AND ?1 < end_id ORDER BY id DESC LIMIT 1", [element], |r| r.get(0))
        .optional()?;
    if let Some(e) = match creator {
        Some(cid) => entry(conn, cid)?,
        None => None,
    } {
        for c in created(conn, &e, Some(element))? {
            out.push((e.clone(), c));
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
    let rec = recorded(conn, &e)?;
    // later changes, still in effect, to what this entry touched or created
    let later_sql = "SELECT c.entry, c.element FROM audit_changes c JOIN audit_log l ON l.id = c.entry \
         WHERE c.element >= ?1 AND c.element < ?2 AND c.entry > ?3 AND l.rolled_back_by IS NULL \
           AND (l.rolls_back IS NULL OR l.rolls_back < ?3) LIMIT 1";
    let mut st = conn.prepare_cached(later_sql)?;
    let mut ranges: Vec<(i64, i64)> = rec.iter().map(|c| (c.element, c.element + 1)).collect();
    if e.end_id > e.first_id {
        ranges.push((e.first_id, e.end_id));
    }
    for (a, b) in ranges {
        if let Some((later, el)) = st
            .query_row(params![a, b, id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })
            .optional()?
        {
            let label = store::kip_id_of(conn, el)?.unwrap_or_else(|| format!("element {el}"));
            return Err(conflict(format!(
                "{label} was changed again by entry #{later} after #{id}"
            )));
        }
    }
    let new = begin(
        conn,
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
            undo(conn, c, &inserted, (e.first_id, e.end_id))?;
        }
        // then the elements the entry created
        if e.end_id > e.first_id {
            inserted.extend(e.first_id..e.end_id);
            let outside: Option<i64> = conn
                .query_row(
                    "SELECT id FROM propositions WHERE (subject >= ?1 AND subject < ?2 OR object >= ?1 AND object < ?2) AND NOT (id >= ?1 AND id < ?2) LIMIT 1",
                    params![e.first_id, e.end_id],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(p) = outside.filter(|p| !inserted.contains(p)) {
                let label = store::kip_id_of(conn, p)?.unwrap_or_default();
                return Err(conflict(format!(
                    "{label}, written later, refers to an element entry #{id} created"
                )));
            }
            conn.execute(
                "DELETE FROM propositions WHERE id >= ?1 AND id < ?2",
                params![e.first_id, e.end_id],
            )?;
            conn.execute(
                "DELETE FROM concepts WHERE id >= ?1 AND id < ?2",
                params![e.first_id, e.end_id],
            )?;
        }
        Ok(())
    })();
    if let Err(err) = res {
        ctx.clear();
        return Err(err);
    }
    finish(conn, ctx, new)?;
    conn.execute(
        "UPDATE audit_log SET rolled_back_by = ?1 WHERE id = ?2",
        params![new, id],
    )?;
    // an approved proposal item follows its changes (in this transaction)
    crate::sleep::proposals::follow_rollback(conn, id)?;
    Ok(new)
}

/// Undoes, newest first, every entry of a group still in effect (a sleep
/// run, an approval). Returns the new entries, newest undone first.
pub fn rollback_batch(
    conn: &Connection,
    ctx: &Context,
    batch: &str,
    who: &Who,
) -> KipResult<Vec<i64>> {
    let ids: Vec<i64> = {
        let mut st = conn.prepare(
            "SELECT id FROM audit_log WHERE batch = ?1 AND rolled_back_by IS NULL ORDER BY id DESC",
        )?;
        st.query_map([batch], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    if ids.is_empty() {
        return Err(KipError::not_found(format!(
            "no change of `{batch}` is in effect"
        )));
    }
    let saved = ctx.batch();
    ctx.set_batch(Some(format!("rollback:{batch}")));
    let res = ids
        .iter()
        .map(|id| rollback(conn, ctx, *id, who))
        .collect::<KipResult<Vec<i64>>>();
    ctx.set_batch(saved);
    res
}

/// Restores the memory as it was right after entry `after`: undoes, newest
/// first, every later entry still in effect (an entry and a rollback of it
/// that both came later cancel out and are left alone).
pub fn rollback_after(
    conn: &Connection,
    ctx: &Context,
    after: i64,
    who: &Who,
) -> KipResult<Vec<i64>> {
    let boot: i64 = conn.query_row(
        "SELECT COALESCE(MAX(id), 0) FROM audit_log WHERE kind = 'BOOTSTRAP'",
        [],
        |r| r.get(0),
    )?;
    if after < boot {
        return Err(KipError::immutable(format!(
            "the memory's bootstrap (entry #{boot}) is never undone: the earliest point to restore is #{boot}"
        ))
        .with_hint(format!("Roll back to #{boot} or later.")));
    }
    let ids: Vec<i64> = {
        let mut st = conn.prepare(
            "SELECT id FROM audit_log WHERE id > ?1 AND rolled_back_by IS NULL \
             AND (rolls_back IS NULL OR rolls_back <= ?1) ORDER BY id DESC",
        )?;
        st.query_map([after], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    let saved = ctx.batch();
    ctx.set_batch(Some(format!("rollback:after:{after}")));
    let res = ids
        .iter()
        .map(|id| rollback(conn, ctx, *id, who))
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
pub fn prune(conn: &Connection, through: i64, dry_run: bool) -> KipResult<Pruned> {
    let (images, bytes): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(length(before) + length(after)), 0) FROM audit_changes WHERE entry <= ?1",
        [through],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let entries: i64 = conn.query_row(
        "SELECT COUNT(*) FROM audit_log WHERE id <= ?1 AND pruned_at IS NULL",
        [through],
        |r| r.get(0),
    )?;
    if !dry_run {
        conn.execute("DELETE FROM audit_changes WHERE entry <= ?1", [through])?;
        conn.execute(
            "UPDATE audit_log SET pruned_at = ?2 WHERE id <= ?1 AND pruned_at IS NULL",
            params![through, crate::store::now()],
        )?;
    }
    Ok(Pruned {
        entries,
        images,
        bytes,
    })
}

/// The last entry written at or before `at` (RFC 3339), 0 if none.
pub fn entry_at(conn: &Connection, at: &str) -> KipResult<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(id), 0) FROM audit_log WHERE at <= ?1",
        [at],
        |r| r.get(0),
    )?)
}

fn undo(
    conn: &Connection,
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
        ("insert", t) => {
            let mut st = conn.prepare_cached(
                "SELECT id FROM propositions WHERE (subject = ?1 OR object = ?1) AND id != ?1",
            )?;
            let refs: Vec<i64> = st
                .query_map([c.element], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            if let Some(p) = refs
                .into_iter()
                .find(|p| !(inserted_together.contains(p) || (created.0..created.1).contains(p)))
            {
                return Err(conflict(format!(
                    "{} is referenced by proposition {p}, written after it",
                    c.kip_id()
                )));
            }
            conn.execute(&format!("DELETE FROM {t} WHERE id = ?1"), [c.element])?;
        }
        ("update" | "delete", t @ ("concepts" | "propositions")) => {
            // restore the before image; the version moves on, never back
            let b = c.before.clone().unwrap_or(Value::Null);
            let current: Option<i64> = conn
                .query_row(
                    &format!("SELECT version FROM {t} WHERE id = ?1"),
                    [c.element],
                    |r| r.get(0),
                )
                .optional()?;
            let version = current.unwrap_or_else(|| b["version"].as_i64().unwrap_or(1)) + 1;
            let cols: &[&str] = if t == "concepts" {
                &["type", "name"]
            } else {
                &["subject", "predicate", "object"]
            };
            let mut values: Vec<rusqlite::types::Value> = vec![c.element.into()];
            for col in cols {
                values.push(match s(&b, col) {
                    Value::Number(n) => n.as_i64().unwrap_or(0).into(),
                    Value::String(x) => x.into(),
                    _ => rusqlite::types::Value::Null,
                });
            }
            values.extend([
                text(&b, "attributes").into(),
                text(&b, "metadata").into(),
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
            conn.execute(
                &format!(
                    "INSERT INTO {t}({}) VALUES ({}) ON CONFLICT(id) DO UPDATE SET {}",
                    all.join(", "),
                    marks.join(", "),
                    sets.join(", ")
                ),
                rusqlite::params_from_iter(values),
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
