//! A command's limits inside SQLite: its deadline and the cancel tick,
//! checked by the connection's progress handler.

use super::Tick;
use crate::kip::KipResult;
use rusqlite::Connection;

/// A command's limits as SQLite's progress handler reads them: its
/// deadline and the tick. The handler is installed once per connection
/// (installing one per command costs an allocation and two calls into
/// SQLite); between commands it is disarmed and interrupts nothing.
pub(crate) struct Limits {
    /// When the limits were made: deadlines count from it.
    base: std::time::Instant,
    /// The armed command's deadline, in nanoseconds after `base`
    /// (`u64::MAX`: disarmed).
    deadline: std::sync::atomic::AtomicU64,
    tick: std::sync::Mutex<Option<Tick>>,
}

impl Limits {
    pub(crate) fn new() -> std::sync::Arc<Limits> {
        std::sync::Arc::new(Limits {
            base: std::time::Instant::now(),
            deadline: std::sync::atomic::AtomicU64::new(u64::MAX),
            tick: std::sync::Mutex::new(None),
        })
    }

    /// Installs the handler that checks `limits` on `conn`.
    pub(crate) fn install(limits: &std::sync::Arc<Limits>, conn: &mut Connection) -> KipResult<()> {
        let l = limits.clone();
        conn.progress_handler(10_000, Some(move || l.exceeded()))?;
        Ok(())
    }

    pub(super) fn arm(&self, timeout: std::time::Duration, tick: Option<Tick>) {
        let until = self.base.elapsed().saturating_add(timeout).as_nanos();
        if let Ok(mut t) = self.tick.lock() {
            *t = tick;
        }
        self.deadline.store(
            u64::try_from(until).unwrap_or(u64::MAX - 1),
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    pub(super) fn disarm(&self) {
        self.deadline
            .store(u64::MAX, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut t) = self.tick.lock() {
            *t = None;
        }
    }

    /// Whether the armed command is to stop: cancelled, or past its
    /// deadline.
    fn exceeded(&self) -> bool {
        let deadline = self.deadline.load(std::sync::atomic::Ordering::Relaxed);
        if deadline == u64::MAX {
            return false;
        }
        let cancelled = self
            .tick
            .lock()
            .ok()
            .is_some_and(|t| t.as_ref().is_some_and(|t| t()));
        cancelled || self.base.elapsed().as_nanos() > u128::from(deadline)
    }
}
