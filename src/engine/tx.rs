//! The transaction a command runs in.

use crate::kip::KipResult;
use crate::store::db::Db;

/// The transaction a command runs in, as its caller opened it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum InTx {
    /// A savepoint of the caller's (a group's) transaction.
    Savepoint,
    /// Its own.
    Own,
    /// Its own, and the statement that closes a write's audit entry
    /// carries its commit.
    CommitAtClose,
    /// None begun: a FIND on SQLite, which begins one itself should it
    /// run more than one statement.
    Unbegun,
}

impl InTx {
    pub(super) fn own(commit_at_close: bool, unbegun: bool) -> InTx {
        if unbegun {
            InTx::Unbegun
        } else if commit_at_close {
            InTx::CommitAtClose
        } else {
            InTx::Own
        }
    }
}

/// One command's transaction (on SQLite, cached `BEGIN`/`COMMIT`/
/// `ROLLBACK` statements: rusqlite's own transaction re-parses them on
/// every call, a measurable share of a point read). Rolled back unless
/// committed.
pub(super) struct Tx<'c> {
    pub(super) db: Db<'c>,
    open: bool,
}

impl<'c> Tx<'c> {
    pub(super) fn begin(db: Db<'c>, write: bool) -> KipResult<Self> {
        db.begin(write)?;
        Ok(Tx { db, open: true })
    }

    /// Nothing begun: what is begun inside (a read's snapshot) is
    /// rolled back with it.
    pub(super) fn unbegun(db: Db<'c>) -> Self {
        Tx { db, open: true }
    }

    pub(super) fn commit(mut self) -> KipResult<()> {
        self.db.commit()?;
        self.open = false;
        Ok(())
    }

    pub(super) fn rollback(mut self) -> KipResult<()> {
        self.open = false;
        self.db.rollback()
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.db.rollback();
        }
    }
}
