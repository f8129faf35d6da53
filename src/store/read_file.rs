//! A SQLite memory's read log lives in a file of its own beside the
//! memory (`<memory>-reads`, with its own `-wal` and `-shm`), written by
//! a connection of its own. Logging every request an agent sends then
//! never takes the memory's one writer (agents' writes never queue behind
//! a batch of log rows) and never grows the memory's write-ahead log.
//!
//! The connection attaches the memory read-only as `memory`: the log's
//! questions that meet the graph (what was never read, which counted
//! elements are gone) join across the two files. A PostgreSQL memory
//! keeps its log in its own schema (no single writer to spare there).
//!
//! Memories from before the split had the log in the memory file; on the
//! first read-write open it moves here (`move_from_memory`).

use crate::kip::{KipError, KipResult};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// The log's write transactions begin DEFERRED, not IMMEDIATE (the
/// argument to `Db::begin`): BEGIN IMMEDIATE opens a read transaction on
/// every attached file, and the memory's checkpoints could not pass the
/// log's snapshot of it for as long as a batch is written. Deferred, the
/// memory is read only by a statement that names it (pruning).
pub const BEGIN_IMMEDIATE: bool = false;

/// How much the log's write-ahead log grows before a checkpoint.
pub const CHECKPOINT_BYTES: i64 = 64 * 1024 * 1024;

/// The read log's tables (the same columns as the memory file had).
const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS read_log (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    caller TEXT NOT NULL,
    channel TEXT NOT NULL,
    kind TEXT NOT NULL,
    command TEXT NOT NULL,
    parameters TEXT NOT NULL,
    elements TEXT NOT NULL,
    rows INTEGER NOT NULL,
    micros INTEGER NOT NULL,
    error TEXT
);
CREATE TABLE IF NOT EXISTS read_use (
    element INTEGER NOT NULL,
    caller TEXT NOT NULL,
    count INTEGER NOT NULL,
    last_at TEXT NOT NULL,
    PRIMARY KEY (element, caller)
) WITHOUT ROWID;
"#;

/// The read log's file beside the memory at `memory`.
pub fn path_of(memory: &Path) -> PathBuf {
    let mut p = memory.as_os_str().to_owned();
    p.push("-reads");
    PathBuf::from(p)
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> KipError {
    KipError::internal(format!("{what} {}: {e}", path.display()))
}

/// Opens the read log of the memory at `memory` (creating it unless
/// `readonly`), with the memory attached read-only as `memory`. A
/// read-only open of a memory whose log was never written sees an empty
/// log (nothing is created).
pub fn open(memory: &Path, readonly: bool) -> KipResult<Connection> {
    let path = path_of(memory);
    let conn = if readonly && !path.exists() {
        let c = Connection::open_in_memory()?;
        c.execute_batch(SCHEMA)?;
        c
    } else {
        let flags = if readonly {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let c = Connection::open_with_flags(&path, flags)
            .map_err(|e| failed("cannot open", &path, e))?;
        c.busy_timeout(std::time::Duration::from_secs(10))?;
        if !readonly {
            let _: String = c.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
            // Checkpoints (the only moments the log syncs to disk) come
            // every 64 MiB of log rows rather than SQLite's 4 MiB: a burst
            // of requests is written down without touching the disk the
            // memory syncs to; the log file shrinks back after each.
            c.execute_batch(&format!(
                "PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = {}; PRAGMA journal_size_limit = {};",
                CHECKPOINT_BYTES / 4096,
                CHECKPOINT_BYTES
            ))?;
            c.execute_batch(SCHEMA)?;
        }
        c
    };
    attach(&conn, memory)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

fn attach(conn: &Connection, memory: &Path) -> KipResult<()> {
    conn.execute(
        "ATTACH DATABASE ?1 AS memory",
        [super::sqlite_uri(memory, "mode=ro")],
    )
    .map_err(|e| failed("cannot attach", memory, e))?;
    Ok(())
}

/// Moves a read log kept in the memory file (memories from before the
/// split) into its own file, then empties the memory's copy. Run inside
/// the memory's write transaction `tx` (so of several processes opening
/// it together, one moves it); safe to run again after a crash between
/// the two steps: rows already moved are kept once, counts are not added
/// twice. Says how many log rows moved.
pub fn move_from_memory(tx: &Connection, memory: &Path) -> KipResult<u64> {
    let any: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM main.read_log) OR EXISTS (SELECT 1 FROM main.read_use)",
        [],
        |r| r.get(0),
    )?;
    if !any {
        return Ok(0);
    }
    let log = open(memory, false)?;
    // (the memory's copy is read through the writer's attachment, which
    // sees the memory as committed; `tx` has not changed these tables)
    if let Err(e) = log.execute_batch(
        "BEGIN IMMEDIATE;
         INSERT OR IGNORE INTO main.read_log SELECT * FROM memory.read_log;
         INSERT INTO main.read_use SELECT * FROM memory.read_use WHERE true
           ON CONFLICT (element, caller) DO UPDATE SET
             count = MAX(read_use.count, excluded.count),
             last_at = MAX(read_use.last_at, excluded.last_at);
         COMMIT;",
    ) {
        let _ = log.execute_batch("ROLLBACK");
        return Err(failed("cannot move the read log into", &path_of(memory), e));
    }
    let n: i64 = tx.query_row("SELECT COUNT(*) FROM main.read_log", [], |r| r.get(0))?;
    tx.execute_batch("DELETE FROM main.read_log; DELETE FROM main.read_use;")?;
    Ok(n.max(0) as u64)
}
