//! The maintainer: a thread of `somnus serve`, `somnus mcp` or `somnus
//! maintain` that keeps a memory maintained on its own. Every `poll` it
//! asks the schedule what is due and runs it (one cycle at a time per
//! memory, across processes: the run lock), within a time budget. It
//! records itself in the memory's `maintainers` table (its process, its
//! settings, when it last looked, what comes next, what it last did), so the
//! console and `GET /` can say who maintains a memory and what happens next.

use super::schedule::{self, Schedule};
use crate::engine::Nexus;
use crate::kip::KipResult;
use crate::store;
use chrono::Utc;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a maintainer runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub schedule: Schedule,
    /// A cycle running longer than this is cancelled (its phase rolled back).
    pub budget: Duration,
    /// How often it looks at what is due.
    pub poll: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            schedule: Schedule::default(),
            budget: Duration::from_secs(1800),
            poll: Duration::from_secs(30),
        }
    }
}

impl Settings {
    pub fn to_json(&self) -> Value {
        json!({
            "idle_secs": self.schedule.idle.as_secs(),
            "daydream_events": self.schedule.events,
            "full_every_hours": self.schedule.full_every.as_secs_f64() / 3600.0,
            "quick_every_mins": self.schedule.quick_every.as_secs_f64() / 60.0,
            "stale_days": self.schedule.stale_days,
            "budget_secs": self.budget.as_secs(),
            "poll_secs": self.poll.as_secs_f64(),
            "quick_targets": ["unsorted", "orphans", "stale_events"],
        })
    }
}

/// A process maintaining a memory, as it recorded itself.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Holder {
    pub pid: i64,
    /// serve, mcp or maintain
    pub kind: String,
    pub started_at: String,
    /// When it last recorded a change in what comes next or what it did.
    pub beat_at: String,
    pub settings: Value,
    /// When the next cycle runs, if one is foreseen.
    pub next_at: Option<String>,
    /// What the next cycle is and why ("full (catch_up): …").
    pub next: Option<String>,
    /// What it last did.
    pub last: Option<String>,
}

/// The processes that maintain this memory now (a process that is gone
/// without saying so is left out).
pub fn holders(nx: &Nexus) -> KipResult<Vec<Holder>> {
    // a memory not yet migrated (opened read-only) has no maintainers
    let Ok(rows) = nx.db().query(
        "SELECT pid, kind, started_at, beat_at, settings, next_at, next, last FROM maintainers ORDER BY started_at",
        &[],
    ) else {
        return Ok(Vec::new());
    };
    let holder = |r: &crate::store::db::Row| -> KipResult<Holder> {
        Ok(Holder {
            pid: r.i64(0)?,
            kind: r.text(1)?,
            started_at: r.text(2)?,
            beat_at: r.text(3)?,
            settings: serde_json::from_str(&r.text(4)?).unwrap_or(Value::Null),
            next_at: r.opt_text(5)?,
            next: r.opt_text(6)?,
            last: r.opt_text(7)?,
        })
    };
    let here = |h: &Holder| -> bool {
        match nx.backend() {
            crate::store::db::Backend::Sqlite => super::cycle::run_lock::alive(h.pid),
            // a maintainer may run on another machine: its connection's
            // lock says it is alive, not a process id here
            crate::store::db::Backend::Postgres => nx
                .db()
                .query_i64(
                    &format!(
                        "WITH k AS (SELECT ({})::bigint AS k) \
                         SELECT COUNT(*) FROM pg_locks, k WHERE locktype = 'advisory' AND granted AND objsubid = 1 \
                           AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                           AND classid = ((k.k >> 32) & 4294967295)::oid AND objid = (k.k & 4294967295)::oid",
                        presence_key("?1", "?2")
                    ),
                    crate::args![h.pid, h.kind.as_str()],
                )
                .ok()
                .flatten()
                .is_some_and(|n| n > 0),
        }
    };
    Ok(rows
        .iter()
        .filter_map(|r| holder(r).ok())
        .filter(here)
        .collect())
}

/// The advisory lock a maintainer's PostgreSQL connection holds while it
/// runs: the memory's schema, its process id and kind.
fn presence_key(pid: &str, kind: &str) -> String {
    format!(
        "hashtext('somnus maintainer ' || current_schema() || ' ' || CAST({pid} AS TEXT) || ' ' || CAST({kind} AS TEXT))"
    )
}

/// A running maintainer; dropping it stops it (a cycle in progress is
/// cancelled and its phase rolled back).
pub struct Maintainer {
    stop: Arc<AtomicBool>,
    status: Arc<Mutex<Value>>,
    thread: Option<JoinHandle<()>>,
}

impl Maintainer {
    /// Starts maintaining the memory at `db` on a thread of its own, with a
    /// connection of its own. `kind` names the process (serve, mcp,
    /// maintain).
    pub fn start(
        db: impl Into<crate::store::place::Place>,
        kind: &'static str,
        settings: Settings,
    ) -> Maintainer {
        let db = db.into();
        let stop = Arc::new(AtomicBool::new(false));
        let status = Arc::new(Mutex::new(json!({
            "enabled": true,
            "settings": settings.to_json(),
        })));
        let thread = {
            let (stop, status) = (stop.clone(), status.clone());
            std::thread::Builder::new()
                .name("somnus-maintainer".into())
                .stack_size(8 * 1024 * 1024)
                .spawn(move || run(db, kind, settings, stop, status))
                .ok()
        };
        Maintainer {
            stop,
            status,
            thread,
        }
    }

    /// What `GET /` shows: the settings, what comes next, what ran last.
    pub fn status(&self) -> Value {
        public(&self.status)
    }

    /// The status, shared (it changes as the maintainer works).
    pub fn status_handle(&self) -> Arc<Mutex<Value>> {
        self.status.clone()
    }

    /// Stops it and waits for it (a running cycle is cancelled first).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Maintainer {
    fn drop(&mut self) {
        self.halt();
    }
}

/// A status as shown (without its bookkeeping).
pub fn public(status: &Arc<Mutex<Value>>) -> Value {
    let mut v = status.lock().map(|s| s.clone()).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("recorded");
    }
    v
}

/// The status `GET /` shows when the server maintains nothing.
pub fn disabled() -> Value {
    json!({ "enabled": false, "why": "started with --maintenance off" })
}

fn set(status: &Arc<Mutex<Value>>, key: &str, value: Value) {
    if let Ok(mut s) = status.lock()
        && let Some(o) = s.as_object_mut()
    {
        o.insert(key.into(), value);
    }
}

/// The maintainer's nice value: a cycle takes the CPU the agents leave.
pub const MAINTAINER_NICE: i32 = 10;

/// Lowers the calling thread's scheduling priority (nice
/// `MAINTAINER_NICE` on Linux), so a maintenance cycle takes the CPU the
/// agents leave; elsewhere nothing.
pub fn lower_priority() {
    lower_priority_to(MAINTAINER_NICE);
}

/// Lowers the calling thread's scheduling priority to `nice` on Linux
/// (never raises it); elsewhere nothing.
pub fn lower_priority_to(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on this thread's own id changes only its nice
    // value; the result is ignored (an unprivileged raise fails harmlessly)
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

fn run(
    db: crate::store::place::Place,
    kind: &'static str,
    settings: Settings,
    stop: Arc<AtomicBool>,
    status: Arc<Mutex<Value>>,
) {
    lower_priority();
    let pid = std::process::id() as i64;
    let started_at = store::now();
    let mut nx: Option<Nexus> = None;
    let mut last: Option<String> = None;
    let mut health = schedule::HealthCache::default();
    // concepts still waiting for their vectors after the last look
    let mut embedding = false;
    while !stop.load(Ordering::SeqCst) {
        if nx.is_none() {
            match Nexus::open_place(&db, Default::default()) {
                Ok(n) => {
                    // on PostgreSQL the maintainer says it is alive by a
                    // lock its connection holds (see `holders`)
                    if n.backend() == crate::store::db::Backend::Postgres {
                        let _ = n.db().query(
                            &format!("SELECT pg_try_advisory_lock({})", presence_key("?1", "?2")),
                            crate::args![pid, kind],
                        );
                    }
                    nx = Some(n)
                }
                Err(e) => set(
                    &status,
                    "error",
                    json!(format!("cannot open the memory: {}", e.message)),
                ),
            }
        }
        if let Some(n) = nx.as_mut() {
            match step(
                n,
                pid,
                kind,
                &started_at,
                &settings,
                &stop,
                &status,
                &mut last,
                &mut health,
            ) {
                Ok(waiting) => {
                    embedding = waiting;
                    if let Ok(mut s) = status.lock()
                        && let Some(o) = s.as_object_mut()
                    {
                        o.remove("error");
                    }
                }
                Err(e) => {
                    let line = format!("{}: {}", e.code, e.message);
                    crate::say_err!("maintenance: {line}");
                    set(&status, "error", json!(line));
                }
            }
            // the database closed the connection: open another next time
            if n.connection_lost() {
                nx = None;
            }
        }
        // wait out the poll in short slices, so a stop is prompt; while
        // concepts wait for their vectors, look again within a second
        let wait = if embedding {
            settings.poll.min(Duration::from_secs(1))
        } else {
            settings.poll
        };
        let until = std::time::Instant::now() + wait;
        while !stop.load(Ordering::SeqCst) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50).min(settings.poll));
        }
    }
    if let Some(n) = nx {
        let _ = n.db().execute(
            "DELETE FROM maintainers WHERE pid = ?1 AND kind = ?2",
            &[(pid as i64).into(), kind.into()],
        );
    }
}

/// The longest one look spends embedding concepts that changed.
const EMBED_PER_LOOK: Duration = Duration::from_secs(2);

/// One look: embed what changed, record the beat and the plan, run what is due, record it.
/// Says whether concepts still wait for their vectors.
#[allow(clippy::too_many_arguments)]
fn step(
    nx: &mut Nexus,
    pid: i64,
    kind: &str,
    started_at: &str,
    settings: &Settings,
    stop: &Arc<AtomicBool>,
    status: &Arc<Mutex<Value>>,
    last: &mut Option<String>,
    health: &mut schedule::HealthCache,
) -> KipResult<bool> {
    let record = |nx: &Nexus, plan: &schedule::Plan, last: &Option<String>| -> KipResult<()> {
        let now = Utc::now();
        let next_at = plan
            .at(now)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        set(status, "checked_at", json!(store::now()));
        // the row is written when what it says changes, not at every look
        // (a write tells every console "the memory changed elsewhere")
        let said = json!([next_at, plan.describe(), last]);
        let same = status
            .lock()
            .ok()
            .and_then(|s| s.get("recorded").cloned())
            .is_some_and(|r| r == said);
        if same {
            return Ok(());
        }
        nx.db().execute(
            "INSERT INTO maintainers(pid, kind, started_at, beat_at, settings, next_at, next, last) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(pid, kind) DO UPDATE SET beat_at = excluded.beat_at, settings = excluded.settings, next_at = excluded.next_at, next = excluded.next, last = excluded.last",
            crate::args![pid, kind, started_at, store::now(), settings.to_json().to_string(), next_at.clone(), plan.describe(), last.clone()],
        )?;
        set(status, "recorded", said);
        set(status, "next_at", json!(next_at));
        set(status, "next", json!(plan.describe()));
        set(status, "last", json!(last));
        Ok(())
    };
    // concepts that changed since they were last embedded, a few seconds
    // at each look, so that read-only searches rank them by meaning too
    let mut waiting = false;
    if nx.embedder().is_some() {
        let until = std::time::Instant::now() + EMBED_PER_LOOK;
        match nx.sync_embeddings_until(Some(until)) {
            Ok(s) => {
                waiting = s.pending > 0;
                set(status, "not_embedded", json!(s.pending))
            }
            Err(e) => set(
                status,
                "embedding_error",
                json!(format!("{}: {}", e.code, e.message)),
            ),
        }
    }
    let plan = schedule::plan_with(nx, Utc::now(), &settings.schedule, health)?;
    record(nx, &plan, last)?;
    if plan.due.is_none() {
        return Ok(waiting);
    }
    set(status, "running", json!(true));
    let out = schedule::run_due(nx, &settings.schedule, settings.budget, Some(stop));
    set(status, "running", json!(false));
    if let Some(line) = out? {
        crate::say_err!("maintenance: {line}");
        *last = Some(format!("{}: {line}", store::now()));
    }
    let plan = schedule::plan_with(nx, Utc::now(), &settings.schedule, health)?;
    record(nx, &plan, last)?;
    Ok(waiting)
}
