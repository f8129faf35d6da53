//! The read log as the engine reaches it: where it lives (a SQLite file
//! memory's own log file, `store::read_file`; else the memory's
//! database), and the transactions that write and prune it.

use super::{Nexus, Tx};
use crate::audit::reads;
use crate::kip::KipResult;
use crate::store::db::{Conn, Db};

impl Nexus {
    /// Writes a batch of served requests to the read log (one
    /// transaction), their secrets masked.
    pub fn record_reads(&mut self, batch: &[reads::Logged]) -> KipResult<()> {
        self.in_reads_transaction(|db| reads::record(db, batch))
    }

    /// Runs `f` in one write transaction of the read log (`reads_db`).
    pub fn in_reads_transaction<T>(
        &mut self,
        f: impl FnOnce(Db<'_>) -> KipResult<T>,
    ) -> KipResult<T> {
        let tx = Tx::begin(self.reads_db()?, self.reads_write_lock())?;
        let v = f(tx.db)?;
        tx.commit()?;
        Ok(v)
    }

    /// Whether the log's write transactions take the write lock at once:
    /// in the memory's database, yes; in the log's own file, no
    /// (`store::read_file::BEGIN_IMMEDIATE`). After `reads_db`.
    fn reads_write_lock(&self) -> bool {
        self.reads.get().is_none() || crate::store::read_file::BEGIN_IMMEDIATE
    }

    /// Where the read log lives: a SQLite file memory's own log file
    /// (`store::read_file`, opened at first use), else the memory's
    /// database.
    pub fn reads_db(&self) -> KipResult<Db<'_>> {
        let (Conn::Sqlite(_), Some(path)) = (&self.conn, &self.path) else {
            return Ok(self.conn.db());
        };
        if let Some(c) = self.reads.get() {
            return Ok(c.db());
        }
        let c = crate::store::read_file::open(path, self.readonly)?;
        let _ = self.reads.set(Conn::Sqlite(c));
        Ok(self.reads.get().map_or_else(|| self.conn.db(), Conn::db))
    }

    /// The requests agents sent, newest first (`audit::reads::recent`).
    pub fn recent_reads(&self, f: &reads::Filter, limit: usize) -> KipResult<Vec<reads::Request>> {
        reads::recent(self.reads_db()?, f, limit)
    }

    /// What agents read most and never (`audit::reads::usage`).
    pub fn read_usage(&self, limit: usize) -> KipResult<reads::Usage> {
        reads::usage(self.reads_db()?, limit)
    }

    /// The read log's retention (`audit::reads::prune`), in one
    /// transaction.
    pub fn prune_reads(
        &mut self,
        before: &str,
        max_rows: Option<u64>,
        dry_run: bool,
    ) -> KipResult<reads::Pruned> {
        let tx = Tx::begin(self.reads_db()?, self.reads_write_lock())?;
        let p = reads::prune(tx.db, before, max_rows, dry_run)?;
        if dry_run {
            tx.rollback()?;
        } else {
            tx.commit()?;
        }
        Ok(p)
    }
}
