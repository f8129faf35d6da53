//! The connections a server answers with: one writer, and readers handed
//! out to whichever request comes next while one is idle. Nothing here
//! blocks an async worker: a request waits for a connection on an async
//! semaphore or lock, and the engine runs on a blocking thread.

use crate::Nexus;
use crate::kip::KipError;
use std::sync::Arc;
use tokio::sync::{Mutex, Semaphore};

pub struct Pool {
    writer: Arc<Mutex<Nexus>>,
    /// Idle readers; a permit of `free` is held for each one taken.
    idle: std::sync::Mutex<Vec<Nexus>>,
    free: Arc<Semaphore>,
    readers: usize,
    db: Option<crate::store::place::Place>,
    timeout: std::time::Duration,
}

impl Pool {
    pub fn new(writer: Nexus, readers: Vec<Nexus>) -> Pool {
        let n = readers.len();
        let db = writer.place();
        Pool {
            writer: Arc::new(Mutex::new(writer)),
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

    /// Runs `f` on the writer connection (writes are serialised).
    pub async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Nexus) -> T + Send + 'static,
    ) -> Result<T, KipError> {
        let mut guard = self.writer.clone().lock_owned().await;
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
        let permit = self
            .free
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| KipError::internal("the server is shutting down"))?;
        // a permit guarantees an idle reader; the lock is held for a pop
        let nx = self.take_idle()?;
        let out = tokio::task::spawn_blocking(move || {
            let mut nx = nx;
            let out = f(&mut nx);
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
