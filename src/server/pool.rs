//! The connections a server answers with: on SQLite one writer (SQLite
//! has one writer at a time) and readers handed out to whichever request
//! comes next while one is idle; on PostgreSQL every connection reads and
//! writes, so writes to different elements proceed together (the
//! database locks the rows a write touches). Nothing here
//! blocks an async worker: a request waits for a connection on an async
//! semaphore or lock, and the engine runs on a blocking thread.

use crate::Nexus;
use crate::kip::KipError;
use std::sync::Arc;
use tokio::sync::{Mutex, Semaphore};

pub struct Pool {
    /// The one writer (SQLite); none where any connection writes.
    writer: Option<Arc<Mutex<Nexus>>>,
    /// Idle readers; a permit of `free` is held for each one taken.
    idle: std::sync::Mutex<Vec<Nexus>>,
    free: Arc<Semaphore>,
    readers: usize,
    db: Option<crate::store::place::Place>,
    timeout: std::time::Duration,
}

impl Pool {
    pub fn new(writer: Nexus, mut readers: Vec<Nexus>) -> Pool {
        let db = writer.place();
        let writer = match writer.backend() {
            crate::store::db::Backend::Sqlite => Some(Arc::new(Mutex::new(writer))),
            crate::store::db::Backend::Postgres => {
                readers.push(writer);
                None
            }
        };
        let n = readers.len();
        Pool {
            writer,
            idle: std::sync::Mutex::new(readers),
            free: Arc::new(Semaphore::new(n)),
            readers: n,
            db,
            timeout: crate::engine::DEFAULT_TIMEOUT,
        }
    }

    /// The per-command time limit new reader connections get.
    pub fn with_timeout(mut self, t: std::time::Duration) -> Pool {
        self.timeout = t;
        self
    }

    /// Runs `f` on the writer connection (writes are serialised), or
    /// where every connection writes, on an idle one.
    pub async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Nexus) -> T + Send + 'static,
    ) -> Result<T, KipError> {
        let Some(writer) = &self.writer else {
            return self.any(f).await;
        };
        let mut guard = writer.clone().lock_owned().await;
        tokio::task::spawn_blocking(move || f(&mut guard))
            .await
            .map_err(|e| KipError::internal(format!("the request failed: {e}")))
    }

    /// Runs `f` on an idle reader, waiting for one only while all are busy;
    /// on the writer when the pool has no readers.
    pub async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Nexus) -> T + Send + 'static,
    ) -> Result<T, KipError> {
        if self.readers == 0 {
            return self.write(f).await;
        }
        self.any(f).await
    }

    /// Whether reads go elsewhere than writes (SQLite with readers): only
    /// then is it worth parsing a request to know whether it only reads.
    /// On PostgreSQL every connection writes, and both go to the next idle.
    pub fn separates_reads(&self) -> bool {
        self.writer.is_some() && self.readers > 0
    }

    /// Runs `f` on an idle connection of the shared set.
    async fn any<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Nexus) -> T + Send + 'static,
    ) -> Result<T, KipError> {
        let permit = self
            .free
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| KipError::internal("the server is shutting down"))?;
        // a permit guarantees an idle reader; the lock is held for a pop
        let nx = self.take_idle()?;
        let (place, timeout) = (self.db.clone(), self.timeout);
        let out = tokio::task::spawn_blocking(move || {
            let mut nx = nx;
            let out = f(&mut nx);
            // a connection the database closed (a restart, a terminated
            // backend) is replaced before it is handed out again; if the
            // database is still away, the next request says so and tries
            // again
            if nx.connection_lost()
                && let Some(place) = place
                && let Ok(mut fresh) = Nexus::open_place(&place, Default::default())
            {
                fresh.set_timeout(timeout);
                nx = fresh;
            }
            (nx, out)
        })
        .await;
        match out {
            Ok((nx, out)) => {
                self.put_idle(nx);
                drop(permit);
                Ok(out)
            }
            Err(e) => {
                // the connection went with the failed task: open another
                let reopened = match self.db.clone() {
                    Some(db) => tokio::task::spawn_blocking(move || {
                        Nexus::open_place(&db, Default::default()).ok()
                    })
                    .await
                    .ok()
                    .flatten(),
                    None => None,
                };
                if let Some(mut nx) = reopened {
                    nx.set_timeout(self.timeout);
                    self.put_idle(nx);
                    drop(permit);
                } else {
                    permit.forget();
                }
                Err(KipError::internal(format!("the request failed: {e}")))
            }
        }
    }

    fn take_idle(&self) -> Result<Nexus, KipError> {
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .ok_or_else(|| KipError::internal("no idle reader connection"))
    }

    fn put_idle(&self, nx: Nexus) {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(nx);
    }
}
