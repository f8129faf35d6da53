//! The servers' read log writer. A request answered over HTTP or MCP is
//! queued as it is answered, never waited on: when the queue is full the
//! request goes unlogged and is counted (`GET /` says how many). A task
//! writes the queue in batches, on the pool's writer (SQLite: queued with
//! the agents' writes, never racing them for the lock), and applies the
//! retention once an hour. On shutdown what is queued is written.

use super::pool::Pool;
use crate::audit::reads::{self, Logged, Served};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Requests queued at most (beyond: unlogged, counted).
pub const QUEUE: usize = 10_000;
/// A batch waits this long for more requests after its first.
pub const FLUSH_AFTER: Duration = Duration::from_millis(250);
/// Requests taken from the queue at once at most.
pub const BATCH: usize = 1_000;
/// Requests written per transaction: the writer is held a millisecond or
/// so at a time, and agents' writes queued meanwhile go between.
pub const PER_TRANSACTION: usize = 25;
/// How often the retention runs (and once at start).
pub const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// How long the log keeps what (`--read-log-days`, `--read-log-max`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub retention_days: u32,
    pub max_rows: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            retention_days: reads::DEFAULT_RETENTION_DAYS,
            max_rows: reads::DEFAULT_MAX_ROWS,
        }
    }
}

pub struct ReadLog {
    tx: tokio::sync::mpsc::Sender<Logged>,
    stop: Arc<tokio::sync::Notify>,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Requests not logged because the queue was full.
    pub dropped: AtomicU64,
    /// Requests logged (written).
    written: Arc<AtomicU64>,
    /// Batches that failed to write (their requests are lost to the log).
    failed: Arc<AtomicU64>,
}

impl ReadLog {
    /// Starts the writer task on the current runtime.
    pub fn start(pool: Arc<Pool>, settings: Settings) -> Arc<ReadLog> {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Logged>(QUEUE);
        let stop = Arc::new(tokio::sync::Notify::new());
        let (written, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let task = {
            let (stop, written, failed) = (stop.clone(), written.clone(), failed.clone());
            tokio::spawn(async move {
                let mut prune = tokio::time::interval(PRUNE_EVERY);
                let mut closing = false;
                loop {
                    let mut batch = Vec::new();
                    tokio::select! {
                        first = rx.recv() => match first {
                            Some(l) => batch.push(l),
                            None => closing = true,
                        },
                        _ = stop.notified() => closing = true,
                        _ = prune.tick() => {
                            let before = reads::days_ago(settings.retention_days);
                            let _ = pool
                                .write(move |nx| nx.prune_reads(&before, Some(settings.max_rows), false))
                                .await;
                            continue;
                        }
                    }
                    if !closing {
                        // more requests join the batch meanwhile
                        tokio::time::sleep(FLUSH_AFTER).await;
                    }
                    loop {
                        while batch.len() < BATCH {
                            match rx.try_recv() {
                                Ok(l) => batch.push(l),
                                Err(_) => break,
                            }
                        }
                        if batch.is_empty() {
                            break;
                        }
                        while !batch.is_empty() {
                            let rest = batch.split_off(batch.len().min(PER_TRANSACTION));
                            let b = std::mem::replace(&mut batch, rest);
                            let n = b.len() as u64;
                            match pool.write(move |nx| nx.record_reads(&b)).await {
                                Ok(Ok(())) => written.fetch_add(n, Ordering::Relaxed),
                                _ => failed.fetch_add(1, Ordering::Relaxed),
                            };
                        }
                        // while open, one batch per wait; on close, all
                        if !closing {
                            break;
                        }
                    }
                    if closing {
                        break;
                    }
                }
            })
        };
        Arc::new(ReadLog {
            tx,
            stop,
            task: std::sync::Mutex::new(Some(task)),
            dropped: AtomicU64::new(0),
            written,
            failed,
        })
    }

    /// Queues the commands of one request (never waits).
    pub fn record(&self, caller: &str, channel: &str, at: String, served: Vec<Served>) {
        for l in Logged::all(served, caller, channel, &at) {
            if self.tx.try_send(l).is_err() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// What the log did so far: written, dropped (queue full), failed
    /// batches.
    pub fn status(&self) -> serde_json::Value {
        serde_json::json!({
            "logged": self.written.load(Ordering::Relaxed),
            "dropped": self.dropped.load(Ordering::Relaxed),
            "failed_batches": self.failed.load(Ordering::Relaxed),
        })
    }

    /// Writes what is queued and stops the task (waiting at most `grace`).
    pub async fn close(&self, grace: Duration) {
        self.stop.notify_one();
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = task {
            let _ = tokio::time::timeout(grace, t).await;
        }
    }
}
