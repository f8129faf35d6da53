//! `somnus copy`: a memory moved between databases (SQLite and
//! PostgreSQL, either way, or between two of the same) whole: the graph,
//! the audit trail with its before/after images, the sleep runs, the
//! proposals and their decisions, contradictions, policies, keys and the
//! console's history, every row with its id, so rollback, `why` and the
//! proposals go on where they were. EXPORT and import would keep only the
//! graph.
//!
//! The target must be a new memory (bootstrapped and nothing since). The
//! copy is one transaction there: a failure leaves it as it was.

use super::db::{Backend, Db, Val};
use crate::kip::{ErrorCode, KipError, KipResult};

/// The tables a memory keeps, in the order they are copied, and the order
/// their rows are read in on PostgreSQL (SQLite reads by rowid, the order
/// they were written in). Left out: the full-text index (rebuilt from
/// the concepts), the processes maintaining the memory now
/// (`maintainers`: they belong to the source's machine) and the change
/// counts of PostgreSQL sessions.
const TABLES: &[(&str, &str)] = &[
    ("concepts", "id"),
    ("propositions", "id"),
    ("embeddings", "id"),
    ("embed_queue", "id"),
    ("console_history", "id"),
    ("audit_log", "id"),
    ("audit_changes", "id"),
    ("sleep_runs", "id"),
    ("sleep_phases", "run, phase"),
    ("proposals", "id"),
    ("proposal_items", "proposal, seq"),
    ("proposal_conflicts", "id"),
    ("contradictions", "id"),
    ("sleep_policy", "class"),
    ("sleep_notes", "id"),
    ("api_keys", "name"),
    ("match_labels", "id"),
];

/// The read log's tables: a SQLite file memory keeps them in a file of
/// its own (`read_file`), so they are copied between the logs' handles.
const LOG_TABLES: &[(&str, &str)] = &[("read_log", "id"), ("read_use", "element, caller")];

/// `meta` rows that describe the database rather than the memory.
const OWN_META: &[&str] = &["schema_version", "bootstrapped", "next_id"];

/// What a copy moved: rows per table, in copy order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Copied {
    pub tables: Vec<(String, u64)>,
    /// The next element id the target will give.
    pub next_id: i64,
}

impl Copied {
    pub fn rows(&self, table: &str) -> u64 {
        self.tables
            .iter()
            .find(|(t, _)| t == table)
            .map_or(0, |(_, n)| *n)
    }
}

/// Copies the memory at `from` into the new memory at `to`, and the
/// read log at `from_log` into the one at `to_log` (each pair the same
/// handle or not: `Nexus::reads_db`). The target's log is committed just
/// before the memory; a failure before leaves both as they were.
pub fn copy(from: Db<'_>, to: Db<'_>, from_log: Db<'_>, to_log: Db<'_>) -> KipResult<Copied> {
    let own_from_log = !from.same(from_log);
    let own_to_log = !to.same(to_log);
    from.begin(false)?;
    if own_from_log && let Err(e) = from_log.begin(false) {
        let _ = from.rollback();
        return Err(e);
    }
    let out = (|| {
        // (checked inside the write, so nothing lands in between)
        to.begin(true)?;
        if own_to_log && let Err(e) = to_log.begin(true) {
            let _ = to.rollback();
            return Err(e);
        }
        let copied = fresh(to).and_then(|()| {
            let mut c = copy_rows(from, to, TABLES)?;
            let log = copy_rows(from_log, to_log, LOG_TABLES)?;
            c.tables.extend(log.tables);
            c.next_id = next_id(from)?.max(max_element(from)? + 1);
            set_counters(to, c.next_id)?;
            super::sync_fts(to)?;
            if own_to_log {
                to_log.commit()?;
            }
            Ok(c)
        });
        match copied.and_then(|c| to.commit().map(|()| c)) {
            Ok(c) => Ok(c),
            Err(e) => {
                if own_to_log {
                    let _ = to_log.rollback();
                }
                let _ = to.rollback();
                Err(e)
            }
        }
    })();
    if own_from_log {
        let _ = from_log.rollback();
    }
    let _ = from.rollback();
    out
}

/// A target holding anything beyond its bootstrap is refused: a copy
/// never merges into, or replaces, a memory someone wrote.
fn fresh(to: Db<'_>) -> KipResult<()> {
    let count = |sql: &str| -> KipResult<i64> { Ok(to.query_i64(sql, &[])?.unwrap_or(0)) };
    let written = count("SELECT COUNT(*) FROM audit_log WHERE kind <> 'BOOTSTRAP'")?
        + count("SELECT COUNT(*) FROM sleep_runs")?
        + count("SELECT COUNT(*) FROM proposals")?
        + count("SELECT COUNT(*) FROM api_keys")?;
    if written > 0 {
        return Err(KipError::new(
            ErrorCode::VersionConflict,
            "the target memory is not new: it was written since its bootstrap; nothing was copied",
        )
        .with_hint("Copy into a new file, or a new --memory name in the PostgreSQL database."));
    }
    Ok(())
}

/// Copies `tables`' rows (and, with the memory's tables, its `meta`).
fn copy_rows(from: Db<'_>, to: Db<'_>, tables: &[(&str, &str)]) -> KipResult<Copied> {
    let mut out = Copied::default();
    // the target's bootstrap gives way to the source's
    for (t, _) in tables.iter().rev() {
        to.execute(&format!("DELETE FROM {t}"), &[])?;
    }
    let meta = if std::ptr::eq(tables, TABLES) {
        from.query("SELECT key, value FROM meta ORDER BY key", &[])?
    } else {
        Vec::new()
    };
    for r in meta {
        let key = r.text(0)?;
        if OWN_META.contains(&key.as_str()) {
            continue;
        }
        to.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[Val::Text(key), Val::Text(r.text(1)?)],
        )?;
    }
    for (table, pg_order) in tables {
        let cols: Vec<String> = columns(from, table)?
            .into_iter()
            .filter(|c| columns(to, table).is_ok_and(|t| t.contains(c)))
            .collect();
        let order = match from.backend() {
            Backend::Sqlite if ["api_keys", "sleep_policy", "read_use"].contains(table) => pg_order,
            Backend::Sqlite => "rowid",
            Backend::Postgres => pg_order,
        };
        let list = cols.join(", ");
        let rows = from.query(&format!("SELECT {list} FROM {table} ORDER BY {order}"), &[])?;
        // several rows a statement (within SQLite's parameter limit)
        let per = (900 / cols.len().max(1)).max(1);
        for chunk in rows.chunks(per) {
            let values: Vec<String> = (0..chunk.len())
                .map(|i| {
                    let marks: Vec<String> = (1..=cols.len())
                        .map(|c| format!("?{}", i * cols.len() + c))
                        .collect();
                    format!("({})", marks.join(", "))
                })
                .collect();
            let args: Vec<Val> = chunk.iter().flat_map(|r| r.0.iter().cloned()).collect();
            to.execute(
                &format!("INSERT INTO {table}({list}) VALUES {}", values.join(", ")),
                &args,
            )?;
        }
        out.tables.push((table.to_string(), rows.len() as u64));
    }
    Ok(out)
}

/// A table's columns (PostgreSQL's generated ones left out: the database
/// computes them).
fn columns(db: Db<'_>, table: &str) -> KipResult<Vec<String>> {
    let rows = match db.backend() {
        Backend::Sqlite => db.query(
            &format!("SELECT name FROM pragma_table_info('{table}') ORDER BY cid"),
            &[],
        )?,
        Backend::Postgres => db.query(
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = ?1 AND is_generated = 'NEVER' \
             ORDER BY ordinal_position",
            &[Val::from(table)],
        )?,
    };
    rows.iter().map(|r| r.text(0)).collect()
}

/// The next element id the source would give (ids are never reused, so
/// a deleted element's id stays spent in the copy too).
fn next_id(db: Db<'_>) -> KipResult<i64> {
    Ok(match db.backend() {
        Backend::Sqlite => db
            .query_i64("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'next_id'", &[])?
            .unwrap_or(1),
        Backend::Postgres => db
            .query_i64(
                "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM element_ids",
                &[],
            )?
            .unwrap_or(1),
    })
}

fn max_element(db: Db<'_>) -> KipResult<i64> {
    Ok(db
        .query_i64(
            "SELECT MAX(m) FROM (SELECT MAX(id) AS m FROM concepts UNION ALL SELECT MAX(id) FROM propositions) AS x",
            &[],
        )?
        .unwrap_or(0))
}

/// The target's counters continue where the source's were.
fn set_counters(to: Db<'_>, next: i64) -> KipResult<()> {
    match to.backend() {
        Backend::Sqlite => {
            to.execute(
                "UPDATE meta SET value = CAST(?1 AS TEXT) WHERE key = 'next_id'",
                &[Val::Int(next)],
            )?;
        }
        Backend::Postgres => {
            to.query(
                "SELECT setval('element_ids', ?1, false)",
                &[Val::Int(next.max(1))],
            )?;
            for t in [
                "audit_log",
                "audit_changes",
                "sleep_runs",
                "proposals",
                "proposal_conflicts",
                "contradictions",
                "sleep_notes",
                "console_history",
                "match_labels",
            ] {
                to.query(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{t}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM {t}"
                    ),
                    &[],
                )?;
            }
        }
    }
    Ok(())
}
