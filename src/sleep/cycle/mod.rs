//! The sleep cycle: the thirteen phases of the sleep-mode instructions,
//! run through the engine's own KIP API as `$system`.
//!
//! Each phase is one atomic group (`Nexus::atomically`, audit group
//! `sleep:N`) committed in batches, so agents never wait long for the write
//! lock: a phase that only proposes reads without the lock and stages each
//! proposal in a short transaction; a phase that writes the memory commits
//! at its yield points (`Cx::yield_lock`), where nothing read is left
//! unwritten. A cycle killed in the middle of a phase loses only the batch
//! in progress; the run record says what is committed, and the next cycle
//! goes on from it. Mechanical steps (assessment, salience, SleepTask bookkeeping,
//! commitment TTLs, memory-strength decay, TTL reclamation, the maintenance
//! log) apply directly; judgement outcomes (merges, supersessions, new
//! knowledge, archival, reclassification, self-model edits) become items of
//! the run's reflection proposal, unless the operator's policy applies a
//! class without review.

use context::*;
use run_lock::alive;
use std::sync::atomic::{AtomicBool, Ordering};

mod assess;
mod classify;
mod completeness;
mod connections;
mod consolidate;
mod context;
pub mod contradictions;
pub mod decay;
mod domains;
mod duplicates;
mod experience_lessons;
mod experiences;
mod fading;
mod finalise;
mod growth_timeline;
mod inbox;
mod learning_value;
mod mentions;
pub mod options;
mod orphans;
mod prospective;
mod reclaim;
mod report;
mod routine;
pub(crate) mod run_lock;
pub mod secrets;
mod self_model;
mod skill_evidence;
mod skills;
mod tasks;
pub use super::clock::*;
pub use assess::*;
pub use contradictions::*;
pub use decay::*;
pub use duplicates::{scored_candidates, why_not_merged};
pub use options::{Options, Params, phase_for_target};
pub use reclaim::*;
pub use report::*;

/// One phase of the cycle: its name, its stage, and what runs it.
pub struct Phase {
    pub name: &'static str,
    pub stage: &'static str,
    run: fn(&mut Cx<'_>, &mut Nexus) -> KipResult<()>,
    /// A phase whose writes are proposal items (and a few short writes,
    /// each `locked` on its own) reads without holding the write lock
    /// (each staging is a short transaction of its own); the
    /// others write the memory directly, in batches (`Cx::yield_lock`).
    pub proposes_only: bool,
}

/// The thirteen phases in the order the runner walks them; each lives in
/// the module named for what it does.
pub const PHASES: [Phase; 13] = [
    Phase {
        name: "Assessment & salience",
        stage: "NREM",
        run: assess::assess,
        proposes_only: false,
    },
    Phase {
        name: "SleepTasks",
        stage: "NREM",
        run: tasks::sleep_tasks,
        proposes_only: false,
    },
    Phase {
        name: "Unsorted inbox",
        stage: "NREM",
        run: inbox::inbox,
        proposes_only: true,
    },
    Phase {
        name: "Orphans",
        stage: "NREM",
        run: orphans::orphans,
        proposes_only: true,
    },
    Phase {
        name: "Consolidation",
        stage: "NREM",
        run: consolidate::consolidate,
        proposes_only: true,
    },
    Phase {
        name: "Duplicates",
        stage: "NREM",
        run: duplicates::duplicates,
        proposes_only: true,
    },
    Phase {
        name: "Decay",
        stage: "NREM",
        run: fading::decay_and_fade,
        proposes_only: false,
    },
    Phase {
        name: "Self-model",
        stage: "REM",
        run: self_model::self_model,
        proposes_only: true,
    },
    Phase {
        name: "Contradictions",
        stage: "REM",
        run: contradictions::contradictions,
        proposes_only: false,
    },
    Phase {
        name: "Cross-domain",
        stage: "REM",
        run: connections::connections,
        proposes_only: true,
    },
    Phase {
        name: "Domain health",
        stage: "Pre-Wake",
        run: domains::domain_health,
        proposes_only: true,
    },
    Phase {
        name: "TTL reclamation",
        stage: "Pre-Wake",
        run: reclaim::reclaim,
        proposes_only: false,
    },
    Phase {
        name: "Finalisation",
        stage: "Pre-Wake",
        run: finalise::finalise,
        proposes_only: false,
    },
];

pub fn phase_name(p: u8) -> &'static str {
    PHASES
        .get((p as usize).wrapping_sub(1))
        .map(|x| x.name)
        .unwrap_or("?")
}

/// Where the cycle is, shared by the phases and the heartbeat thread.
/// One past sleep run, as listed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub run: i64,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub scope: String,
    pub reasoner: String,
    /// running, completed, failed, cancelled, interrupted
    pub status: String,
    /// The last phase that committed.
    pub phase: i64,
    pub error: Option<String>,
    /// What started it: `on_demand`, or the schedule's trigger and reason
    /// (`idle: …`, `threshold: …`, `scheduled: …`, `catch_up: …`).
    pub trigger: String,
}

/// Past sleep runs, newest first.
pub fn runs(nx: &Nexus, limit: usize) -> KipResult<Vec<RunSummary>> {
    let rows = nx.db().query(
        "SELECT id, started_at, finished_at, scope, reasoner, status, phase, error, pid, trigger_name FROM sleep_runs ORDER BY id DESC LIMIT ?1",
        crate::args![limit],
    )?;
    let lock = run_lock::held(nx)?;
    rows.iter()
        .map(|r| {
            let status = r.text(5)?;
            let gone = gone(&status, r.opt_i64(8)?, lock);
            Ok(RunSummary {
                run: r.i64(0)?,
                started_at: r.text(1)?,
                finished_at: r.opt_text(2)?,
                scope: r.text(3)?,
                reasoner: r.text(4)?,
                status: if gone { "interrupted".into() } else { status },
                phase: r.i64(6)?,
                error: if gone {
                    Some(INTERRUPTED.into())
                } else {
                    r.opt_text(7)?
                },
                trigger: r.text(9)?,
            })
        })
        .collect()
}

/// What an interrupted run says: its process stopped mid-cycle.
const INTERRUPTED: &str =
    "the process stopped during the cycle; the phase it was in was rolled back";

/// A run recorded as running whose process is gone was interrupted (the
/// next cycle records it so; until then it is shown so).
/// Where the database holds the run lock (PostgreSQL), a running run
/// whose lock nobody holds was interrupted, wherever its process ran.
fn gone(status: &str, pid: Option<i64>, lock: Option<bool>) -> bool {
    status == "running"
        && match lock {
            Some(held) => !held,
            None => pid.is_some_and(|p| !alive(p)),
        }
}

/// The report a run left (as far as it got), if the run exists.
pub fn report(nx: &Nexus, run: i64) -> KipResult<Option<Report>> {
    let lock = run_lock::held(nx)?;
    let row = match nx.db().query_opt(
        "SELECT report, status, scope, reasoner, started_at, finished_at, pid, error, trigger_name FROM sleep_runs WHERE id = ?1",
        crate::args![run],
    )? {
        Some(r) => Some((
            r.opt_text(0)?,
            r.text(1)?,
            r.text(2)?,
            r.text(3)?,
            r.text(4)?,
            r.opt_text(5)?,
            r.opt_i64(6)?,
            r.opt_text(7)?,
            r.text(8)?,
        )),
        None => None,
    };
    Ok(row.map(
        |(rep, status, scope, reasoner, started_at, finished_at, pid, error, trigger)| {
            // what the run row knows, for a run that left no report yet
            let mut r = rep
                .and_then(|t| serde_json::from_str::<Report>(&t).ok())
                .unwrap_or_else(|| Report {
                    run,
                    status: status.clone(),
                    scope,
                    reasoner,
                    trigger,
                    started_at,
                    finished_at: finished_at.unwrap_or_default(),
                    error: error.clone(),
                    ..Default::default()
                });
            if gone(&status, pid, lock) {
                r.status = "interrupted".into();
                r.error = Some(INTERRUPTED.into());
            } else if r.status == "running" && status != "running" {
                // the row was finished after the report was last written
                r.status = status;
                r.error = r.error.or(error);
            }
            r
        },
    ))
}

/// Runs one cycle. Progress goes to `progress`; setting `cancel` stops the
/// cycle (the running phase is rolled back).
pub fn run(
    nx: &mut Nexus,
    opts: &Options,
    reasoner: &mut dyn Reasoner,
    progress: Option<std::sync::mpsc::Sender<Progress>>,
    cancel: Option<Arc<AtomicBool>>,
) -> KipResult<Report> {
    if chrono::DateTime::parse_from_rfc3339(&opts.now).is_err() {
        return Err(KipError::syntax(format!(
            "`{}` is not an RFC 3339 time",
            opts.now
        )));
    }
    opts.params
        .validate()
        .map_err(|e| KipError::constraint(format!("sleep parameters: {e}")))?;
    let run = start_run(nx, opts, reasoner.name())?;
    let out = run_started(nx, opts, reasoner, progress, cancel, run);
    run_lock::release(nx);
    out
}

/// The cycle, its run recorded and its lock taken.
fn run_started(
    nx: &mut Nexus,
    opts: &Options,
    reasoner: &mut dyn Reasoner,
    progress: Option<std::sync::mpsc::Sender<Progress>>,
    cancel: Option<Arc<AtomicBool>>,
    run: i64,
) -> KipResult<Report> {
    let cancel = cancel.unwrap_or_default();
    let tx = progress.map(|t| Arc::new(Mutex::new(t)));
    let started = Instant::now();
    let beat = Arc::new(Mutex::new(Beat {
        run,
        started,
        phase: 0,
        name: phase_name(1),
        step: "starting".into(),
        done: 0,
        total: 0,
        last: started,
    }));
    // cancellation interrupts SQLite inside a running statement
    {
        let cancel = cancel.clone();
        nx.set_tick(Some(Arc::new(move || cancel.load(Ordering::SeqCst))));
    }
    // a heartbeat every 100 ms whatever the phase is doing (long statements
    // and Rust-side steps alike), so a watcher always sees the cycle alive
    let stop = Arc::new(AtomicBool::new(false));
    let heart = {
        let (beat, tx, stop) = (beat.clone(), tx.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(50));
                let due = match beat.lock() {
                    Ok(mut b) if b.last.elapsed().as_millis() >= 100 => Some(b.event(None, false)),
                    _ => None,
                };
                if let Some(e) = due {
                    send(&tx, e);
                }
            }
        })
    };
    let mut cx = Cx {
        run,
        opts,
        reasoner,
        beat,
        tx,
        cancel,
        report: Report {
            run,
            status: "running".into(),
            scope: opts.scope.as_str().into(),
            trigger: opts.trigger.clone(),
            now: opts.now.clone(),
            started_at: store::now(),
            params: opts.params.clone(),
            ..Default::default()
        },
        phase: PhaseReport::default(),
        recent: None,
        stale: None,
        regular_entries: Default::default(),
        slice_start: Instant::now(),
        slice: slice(),
        health_issues: Vec::new(),
    };
    cx.report.reasoner = cx.reasoner.name().into();
    cx.report.issues.extend(opts.notes.iter().cloned());
    // (status, what the report says)
    let mut failure: Option<(String, String)> = None;
    let mut failed_phases = 0usize;
    let hold: Option<u8> = std::env::var("SOMNUS_SLEEP_HOLD_PHASE")
        .ok()
        .and_then(|v| v.parse().ok());
    for p in opts.phases() {
        if cx.cancel.load(Ordering::SeqCst) {
            failure = Some((
                "cancelled".into(),
                format!("cancelled before phase {p} ({})", phase_name(p)),
            ));
            break;
        }
        let t0 = Instant::now();
        cx.phase = PhaseReport {
            phase: p,
            name: phase_name(p).into(),
            stage: PHASES[p as usize - 1].stage.into(),
            ..Default::default()
        };
        if let Ok(mut b) = cx.beat.lock() {
            b.phase = p;
            b.name = phase_name(p);
            b.step = "starting".into();
            b.done = 0;
            b.total = 0;
        }
        cx.progress(None, false);
        let saved_report = cx.report.clone();
        let mut res = phase_in_tx(&mut cx, nx, p, hold, t0);
        // a phase that fails is tried once more (its transaction rolled
        // back, so it starts from the same memory); failing again, it is
        // recorded as an issue and the cycle moves on
        if let Err(e) = &res
            && !cx.cancel.load(Ordering::SeqCst)
        {
            let first = format!("{}: {}", e.code, e.message);
            cx.report = saved_report.clone();
            cx.phase = PhaseReport {
                phase: p,
                name: phase_name(p).into(),
                stage: PHASES[p as usize - 1].stage.into(),
                ..Default::default()
            };
            cx.progress(
                Some(format!("phase {p} failed ({first}); trying it once more")),
                false,
            );
            res = phase_in_tx(&mut cx, nx, p, hold, t0);
        }
        match res {
            Ok(()) => {
                // let writers waiting on the lock (an agent) in between phases
                std::thread::sleep(std::time::Duration::from_millis(3));
                let ph = std::mem::take(&mut cx.phase);
                cx.report.phases.push(ph);
                cx.progress(Some(format!("phase {p} done")), true);
            }
            Err(_) if cx.cancel.load(Ordering::SeqCst) => {
                // the batch in progress rolled back: so does the phase's
                // report, which keeps a line saying so and how many batches
                // were committed before it
                let committed = cx.phase.batches;
                cx.report = saved_report;
                let said = if committed == 0 {
                    format!(
                        "cancelled during phase {p} ({}); its changes were rolled back",
                        phase_name(p)
                    )
                } else {
                    format!(
                        "cancelled during phase {p} ({}); its batch in progress was rolled back, the {committed} batch{} it committed before stay (undo them with `somnus rollback --run {}`; the next cycle goes on from them)",
                        phase_name(p),
                        if committed == 1 { "" } else { "es" },
                        cx.run
                    )
                };
                cx.report.phases.push(PhaseReport {
                    phase: p,
                    name: phase_name(p).into(),
                    stage: PHASES[p as usize - 1].stage.into(),
                    millis: t0.elapsed().as_millis() as u64,
                    lines: vec![said.clone()],
                    counts: BTreeMap::from([("cancelled".to_string(), 1)]),
                    ..Default::default()
                });
                failure = Some(("cancelled".into(), said));
                break;
            }
            Err(e) => {
                cx.report = saved_report;
                let hint = e
                    .hint
                    .as_deref()
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                let issue = format!(
                    "Phase {p} ({}) failed twice and was skipped: {}: {}{hint}",
                    phase_name(p),
                    e.code,
                    e.message
                );
                cx.report.phases.push(PhaseReport {
                    phase: p,
                    name: phase_name(p).into(),
                    stage: PHASES[p as usize - 1].stage.into(),
                    millis: t0.elapsed().as_millis() as u64,
                    lines: vec![issue.clone()],
                    counts: BTreeMap::from([("failed".to_string(), 1)]),
                    ..Default::default()
                });
                cx.report.issues.push(issue.clone());
                failed_phases += 1;
                cx.progress(Some(issue), true);
            }
        }
    }
    // what the assessment found off target is measured again: a phase may
    // have fixed it ("Scored 18 Events" then "Unscored Events: 18" would
    // contradict itself); the heartbeat goes on while it reads
    if failure.is_none() && !cx.health_issues.is_empty() {
        cx.step("measuring the memory's health again", 0, 0);
        let (now, stale) = (
            cx.opts.now.clone(),
            cx.opts.params.stale_event_threshold_days,
        );
        if let Ok(h) = crate::sleep::health::assess(nx, &now, stale) {
            let old = std::mem::take(&mut cx.health_issues);
            cx.report.issues.retain(|i| !old.contains(i));
            let after: Vec<String> = h
                .metrics
                .iter()
                .filter(|m| {
                    matches!(
                        m.status,
                        crate::sleep::health::Status::Warn | crate::sleep::health::Status::Bad
                    )
                })
                .map(assess::issue_line)
                .collect();
            for (k, line) in after.into_iter().enumerate() {
                cx.report.issues.insert(k, line);
            }
            for m in &h.metrics {
                if m.value.is_finite() {
                    cx.report.health_after.insert(m.key.to_string(), m.value);
                }
            }
        }
    }
    nx.set_tick(None);
    stop.store(true, Ordering::SeqCst);
    let _ = heart.join();
    cx.report.reasoner_usage = cx.reasoner.usage();
    cx.report.finished_at = store::now();
    cx.report.millis = started.elapsed().as_millis() as u64;
    match failure {
        Some((status, said)) => {
            cx.report.status = status;
            cx.report.error = Some(said);
        }
        None if failed_phases > 0 => cx.report.status = "completed with issues".into(),
        None => cx.report.status = "completed".into(),
    }
    nx.db().execute(
        "UPDATE sleep_runs SET status = ?2, finished_at = ?3, report = ?4, error = ?5 WHERE id = ?1",
        crate::args![run, &cx.report.status, &cx.report.finished_at, cx.report.to_json().to_string(), cx.report.error.clone()],
    )?;
    cx.progress(Some(format!("cycle {}", cx.report.status)), true);
    Ok(cx.report)
}

/// One phase in its transactions (one per batch, the last with its
/// bookkeeping rows).
fn phase_in_tx(cx: &mut Cx, nx: &mut Nexus, p: u8, hold: Option<u8>, t0: Instant) -> KipResult<()> {
    let run = cx.run;
    let proposes_only = PHASES
        .get((p as usize).wrapping_sub(1))
        .is_some_and(|ph| ph.proposes_only);
    nx.take_longest_hold();
    nx.atomically(&format!("sleep:{run}"), |nx| {
        cx.slice_start = Instant::now();
        if proposes_only && cx.batched() {
            nx.suspend_group()?;
        }
        run_phase(cx, nx, p)?;
        nx.resume_group()?;
        cx.slice_start = Instant::now();
        if hold == Some(p) {
            // fault injection for crash tests: the phase's writes are
            // done but not committed
            cx.progress(Some(format!("holding phase {p} open (SOMNUS_SLEEP_HOLD_PHASE)")), false);
            // (a cancel ends the hold, as it would a long phase)
            let until = Instant::now() + std::time::Duration::from_secs(60);
            while Instant::now() < until {
                cx.cancelled()?;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        cx.phase.millis = t0.elapsed().as_millis() as u64;
        cx.phase.batches += 1;
        // (the bookkeeping's own transaction is the last of the phase)
        cx.phase.longest_hold_ms = nx.take_longest_hold().as_millis() as u64;
        nx.db().execute(
            "INSERT INTO sleep_phases(run, phase, name, started_at, finished_at, millis, counts, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
             ON CONFLICT (run, phase) DO UPDATE SET name = excluded.name, started_at = excluded.started_at, finished_at = excluded.finished_at, \
             millis = excluded.millis, counts = excluded.counts, notes = excluded.notes",
            crate::args![
                run,
                p,
                &cx.phase.name,
                store::now(),
                store::now(),
                cx.phase.millis as i64,
                serde_json::to_string(&cx.phase.counts).unwrap_or_default(),
                serde_json::to_string(&cx.phase.lines).unwrap_or_default()
            ],
        )?;
        nx.db().execute(
            "UPDATE sleep_runs SET phase = ?2, report = ?3 WHERE id = ?1",
            crate::args![run, p, cx.report.to_json().to_string()],
        )?;
        Ok(())
    })
}

fn start_run(nx: &mut Nexus, opts: &Options, reasoner: &str) -> KipResult<i64> {
    if !run_lock::take(nx)? {
        return Err(KipError::new(
            ErrorCode::VersionConflict,
            "a sleep cycle is running on this memory in another process",
        )
        .with_hint("Wait for it to finish, or stop that process."));
    }
    // (on PostgreSQL the lock just taken says no run is alive elsewhere)
    let locked = run_lock::held(nx)?.is_some();
    let out = nx.atomically("sleep:start", |nx| {
        let running = nx
            .db()
            .query("SELECT id, pid FROM sleep_runs WHERE status = 'running'", &[])?
            .iter()
            .map(|r| Ok((r.i64(0)?, r.i64(1)?)))
            .collect::<KipResult<Vec<(i64, i64)>>>()?;
        for (id, pid) in running {
            if !locked && alive(pid) && pid != std::process::id() as i64 {
                return Err(KipError::new(
                    ErrorCode::VersionConflict,
                    format!("sleep run #{id} is still running (process {pid})"),
                )
                .with_hint("Wait for it to finish, or stop that process."));
            }
            nx.db().execute(
                "UPDATE sleep_runs SET status = 'interrupted', finished_at = ?2, error = ?3 WHERE id = ?1",
                crate::args![id, store::now(), INTERRUPTED],
            )?;
        }
        nx.db()
            .query_i64(
                "INSERT INTO sleep_runs(started_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status) VALUES (?1, ?2, ?3, ?4, '$system', ?5, ?6, ?7, 'running') RETURNING id",
                crate::args![
                    store::now(),
                    opts.scope.as_str(),
                    &opts.trigger,
                    reasoner,
                    std::process::id(),
                    &opts.now,
                    serde_json::to_string(&opts.params).unwrap_or_default()
                ],
            )?
            .ok_or_else(|| KipError::internal("a new sleep run has no id"))
    });
    if out.is_err() {
        run_lock::release(nx);
    }
    out
}

fn run_phase(cx: &mut Cx, nx: &mut Nexus, p: u8) -> KipResult<()> {
    match PHASES.get((p as usize).wrapping_sub(1)) {
        Some(phase) => (phase.run)(cx, nx),
        None => Ok(()),
    }
}
