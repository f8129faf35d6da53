//! The servers' read log writer. A request answered over HTTP or MCP is
//! queued as it is answered, never waited on: when the queue is full the
//! request goes unlogged and is counted (`GET /` says how many). A task
//! writes the queue in batches and applies the retention once an hour. On
//! shutdown what is queued is written.
//!
//! A SQLite file memory's log is a file of its own (`store::read_file`):
//! the task writes it from a connection of its own, a batch a
//! transaction, and never takes the memory's writer (agents' writes never
//! queue behind log rows). A PostgreSQL memory's log is written through
//! the pool's writer, a few rows a transaction.

use super::pool::Pool;
use crate::audit::reads::{self, Logged, Served};
use crate::kip::KipResult;
use crate::store::db::Db;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Requests queued at most (beyond: unlogged, counted).
pub const QUEUE: usize = 10_000;
/// A batch waits this long for more requests after its first.
pub const FLUSH_AFTER: Duration = Duration::from_millis(250);
/// Requests taken from the queue at once at most.
pub const BATCH: usize = 1_000;
/// Requests written per transaction through the pool's writer: it is held
/// a millisecond or so at a time, and agents' writes queued meanwhile go
/// between. (The log's own file takes a whole batch a transaction.)
pub const PER_TRANSACTION: usize = 25;
/// Requests written per statement to the log's own file (tens of
/// microseconds of work), with `FILE_PAUSE` after each (paced, up to
/// about 18,000 requests a second; while more than half the queue waits,
/// without pauses). A batch is one transaction there. Measured: 50 a
/// statement showed in the agents' slowest answers (+6–8% p99), 20 did
/// not (+1–4%); 10 cost more work for nothing.
pub const FILE_PER_STATEMENT: usize = 20;
pub const FILE_PAUSE: Duration = Duration::from_millis(1);
/// The log file's thread's nice value on Linux: the lowest priority. At
/// nice 10 (the maintainer's) its turns showed in the agents' slowest
/// answers (`bench --server`, p99 with the log against without: +1.7% to
/// +8.2% over seven runs, median +6.0%; at 19, +1.4% to +9.3% over eight,
/// median +4.6%); at 19 it still keeps up with a server under full load
/// (every request logged, none dropped).
pub const NICE: i32 = 19;
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
    /// `file`: the SQLite memory's path, to open its log's file now
    /// (before the server answers anyone); without it the task asks the
    /// pool where the memory is.
    pub fn start(
        pool: Arc<Pool>,
        settings: Settings,
        file: Option<&std::path::Path>,
    ) -> Arc<ReadLog> {
        let ready = file.and_then(|p| Sink::file(p).ok());
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Logged>(QUEUE);
        let stop = Arc::new(tokio::sync::Notify::new());
        let (written, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let task = {
            let (stop, written, failed) = (stop.clone(), written.clone(), failed.clone());
            tokio::spawn(async move {
                let sink = match ready {
                    Some(s) => s,
                    None => Sink::of(pool).await,
                };
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
                            sink.prune(settings).await;
                            continue;
                        }
                    }
                    if !closing {
                        // more requests join the batch meanwhile
                        tokio::time::sleep(FLUSH_AFTER).await;
                    }
                    // full batches are written until one is not full, then
                    // the task waits again: a busy server is written in
                    // batches of `BATCH` (one batch per wait would fall
                    // behind it and drop what overflows the queue), and
                    // the few requests that arrive while a batch is written
                    // wait for the next (written at once, each would be a
                    // transaction of a few rows, several times the work)
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
                        let full = batch.len() == BATCH;
                        // more than half the queue waiting: written
                        // without pauses until it is not
                        let hurry = closing || rx.len() > QUEUE / 2;
                        let (w, f) = sink.write(std::mem::take(&mut batch), hurry).await;
                        written.fetch_add(w, Ordering::Relaxed);
                        failed.fetch_add(f, Ordering::Relaxed);
                        if !full && !closing {
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

/// Where the log is written: the log's own file, or the memory through
/// the pool's writer.
enum Sink {
    File(FileWriter),
    Pool(Arc<Pool>),
}

/// A job for the log file's thread: runs on its connection.
type Job = Box<dyn FnOnce(&rusqlite::Connection) + Send>;

/// The log file's own thread and connection. The thread runs at the
/// lowest priority (`NICE`): while the machine is busy, agents' requests
/// come before writing down what they asked; the queue holds what waits.
struct FileWriter {
    jobs: std::sync::mpsc::Sender<Job>,
}

impl FileWriter {
    fn start(conn: rusqlite::Connection) -> Result<FileWriter, String> {
        let (jobs, rx) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("somnus-read-log".into())
            .spawn(move || {
                crate::sleep::maintainer::lower_priority_to(NICE);
                while let Ok(job) = rx.recv() {
                    job(&conn);
                    // a short transaction, then the processor goes back
                    // to the agents' requests (a long run of log rows on
                    // one core shows in their slowest answers)
                    std::thread::sleep(FILE_PAUSE);
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(FileWriter { jobs })
    }
}

impl Sink {
    /// The log's own file for a SQLite file memory (the pool's writer if
    /// it cannot be opened: said on stderr, nothing lost), else the pool.
    async fn of(pool: Arc<Pool>) -> Sink {
        let file = pool
            .write(|nx| nx.path().map(std::path::Path::to_path_buf))
            .await
            .ok()
            .flatten();
        let Some(path) = file else {
            return Sink::Pool(pool);
        };
        let opened = tokio::task::spawn_blocking(move || Sink::file(&path))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r);
        match opened {
            Ok(sink) => sink,
            Err(e) => {
                eprintln!(
                    "somnus: the read log's own file: {e}; it is written through the memory's writer"
                );
                Sink::Pool(pool)
            }
        }
    }

    /// The log's own file beside the SQLite memory at `memory`.
    fn file(memory: &std::path::Path) -> Result<Sink, String> {
        crate::store::read_file::open(memory, false)
            .map_err(|e| e.message)
            .and_then(FileWriter::start)
            .map(Sink::File)
    }

    /// Runs `f` in one write transaction of the log.
    async fn in_transaction<T: Send + 'static>(
        &self,
        f: impl FnOnce(Db<'_>) -> KipResult<T> + Send + 'static,
    ) -> Result<T, String> {
        match self {
            Sink::File(w) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let job: Job = Box::new(move |c: &rusqlite::Connection| {
                    let db = Db::Sqlite(c);
                    let out = db
                        .begin(crate::store::read_file::BEGIN_IMMEDIATE)
                        .and_then(|()| match f(db) {
                            Ok(v) => db.commit().map(|()| v),
                            Err(e) => {
                                let _ = db.rollback();
                                Err(e)
                            }
                        });
                    let _ = tx.send(out);
                });
                w.jobs
                    .send(job)
                    .map_err(|_| "the read log's thread stopped".to_string())?;
                rx.await
                    .map_err(|_| "the read log's thread stopped".to_string())?
                    .map_err(|e| e.message)
            }
            Sink::Pool(p) => p
                .write(move |nx| nx.in_reads_transaction(f))
                .await
                .map_err(|e| e.message)?
                .map_err(|e| e.message),
        }
    }

    /// Writes a batch; says how many requests were written and how many
    /// transactions failed. To the log's own file: one transaction, a few
    /// rows a statement with a pause between unless `hurry` (the batch's
    /// counts at the end). Through the pool's writer: a few rows a
    /// transaction, the counts with the last (a crash between leaves rows
    /// uncounted, never a count without its rows).
    async fn write(&self, batch: Vec<Logged>, hurry: bool) -> (u64, u64) {
        let n = batch.len() as u64;
        if let Sink::File(_) = self {
            let out = self
                .in_transaction(move |db| {
                    reads::record_paced(db, &batch, FILE_PER_STATEMENT, &mut || {
                        if !hurry {
                            std::thread::sleep(FILE_PAUSE)
                        }
                    })
                })
                .await;
            return if out.is_ok() { (n, 0) } else { (0, 1) };
        }
        let (mut written, mut failed) = (0, 0);
        let mut uses = Some(reads::count_uses(&batch));
        let mut rest = batch;
        while !rest.is_empty() {
            let tail = rest.split_off(rest.len().min(PER_TRANSACTION));
            let rows = std::mem::replace(&mut rest, tail);
            let k = rows.len() as u64;
            let uses = if rest.is_empty() { uses.take() } else { None };
            let out = self
                .in_transaction(move |db| {
                    reads::record_rows(db, &rows)?;
                    match uses {
                        Some(u) => reads::record_uses(db, &u),
                        None => Ok(()),
                    }
                })
                .await;
            match out {
                Ok(()) => written += k,
                Err(_) => failed += 1,
            }
        }
        (written, failed)
    }

    async fn prune(&self, s: Settings) {
        let before = reads::days_ago(s.retention_days);
        let _ = self
            .in_transaction(move |db| reads::prune(db, &before, Some(s.max_rows), false))
            .await;
    }
}
