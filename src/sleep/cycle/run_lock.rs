//! One sleep cycle at a time per memory. On SQLite the run record is the
//! lock: a run recorded as running whose process is alive holds it, and
//! taking it happens inside the write transaction that records the new
//! run. A PostgreSQL memory can be shared by processes on several
//! machines, where a process id says nothing: there the lock is a session
//! advisory lock on the memory's schema, held by the connection running
//! the cycle and freed by the server when that connection ends (a killed
//! process included).

use crate::Nexus;
use crate::kip::KipResult;
use crate::store::db::Backend;

/// The advisory lock's key: the memory's schema, so memories sharing a
/// database do not block each other.
const KEY: &str = "hashtext('somnus sleep ' || current_schema())";

/// Takes the lock; false if another session holds it (on SQLite always
/// true: the run record decides, see `start_run`).
pub(super) fn take(nx: &Nexus) -> KipResult<bool> {
    match nx.backend() {
        Backend::Sqlite => Ok(true),
        Backend::Postgres => Ok(nx
            .db()
            .query_i64(&format!("SELECT pg_try_advisory_lock({KEY})::int"), &[])?
            == Some(1)),
    }
}

/// Frees the lock this session holds (nothing on SQLite).
pub(super) fn release(nx: &Nexus) {
    if nx.backend() == Backend::Postgres {
        let _ = nx
            .db()
            .query_i64(&format!("SELECT pg_advisory_unlock({KEY})::int"), &[]);
    }
}

/// Whether some session (this one included) holds the lock, where the
/// database can tell: `None` on SQLite, where a run's process id tells.
pub(super) fn held(nx: &Nexus) -> KipResult<Option<bool>> {
    match nx.backend() {
        Backend::Sqlite => Ok(None),
        Backend::Postgres => Ok(Some(
            nx.db().query_i64(
                &format!(
                    // a bigint key is held as its high and low 32 bits
                    "WITH k AS (SELECT ({KEY})::bigint AS k) \
                     SELECT COUNT(*) FROM pg_locks, k WHERE locktype = 'advisory' AND granted AND objsubid = 1 \
                       AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                       AND classid = ((k.k >> 32) & 4294967295)::oid AND objid = (k.k & 4294967295)::oid"
                ),
                &[],
            )? != Some(0),
        )),
    }
}

/// Whether process `pid` (on this machine) is still running.
pub(crate) fn alive(pid: i64) -> bool {
    if pid == std::process::id() as i64 {
        return true;
    }
    if cfg!(target_os = "linux") {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}
