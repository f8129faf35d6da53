//! The sleep cycle: the thirteen phases of the sleep-mode instructions,
//! run through the engine's own KIP API as `$system`.
//!
//! Each phase is one transaction (`Nexus::atomically`): its writes, its
//! staged proposal items and its phase record commit together, so a cycle
//! killed in the middle of a phase leaves the memory exactly as the phase
//! found it. Mechanical steps (assessment, salience, SleepTask bookkeeping,
//! commitment TTLs, memory-strength decay, TTL reclamation, the maintenance
//! log) apply directly; judgement outcomes (merges, supersessions, new
//! knowledge, archival, reclassification, self-model edits) become items of
//! the run's reflection proposal, unless the operator's policy applies a
//! class without review.

use super::proposals::{self, Draft};
use super::reasoner::*;
use super::similarity;
use crate::Nexus;
use crate::audit::Who;
use crate::kip::{self, ErrorCode, KipError, KipResult};
use crate::store;
use rusqlite::{OptionalExtension, params};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Daydream,
    Quick,
    Full,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "daydream" => Some(Scope::Daydream),
            "quick" => Some(Scope::Quick),
            "full" => Some(Scope::Full),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Daydream => "daydream",
            Scope::Quick => "quick",
            Scope::Full => "full",
        }
    }
    /// The phases the scope runs; finalisation (13) ends every cycle.
    pub fn phases(self) -> Vec<u8> {
        match self {
            Scope::Daydream => vec![1, 13],
            Scope::Quick => vec![1, 2, 13],
            Scope::Full => (1..=13).collect(),
        }
    }
}

pub const PHASES: [(&str, &str); 13] = [
    ("Assessment & salience", "NREM"),
    ("SleepTasks", "NREM"),
    ("Unsorted inbox", "NREM"),
    ("Orphans", "NREM"),
    ("Consolidation", "NREM"),
    ("Duplicates", "NREM"),
    ("Decay", "NREM"),
    ("Self-model", "REM"),
    ("Contradictions", "REM"),
    ("Cross-domain", "REM"),
    ("Domain health", "Pre-Wake"),
    ("TTL reclamation", "Pre-Wake"),
    ("Finalisation", "Pre-Wake"),
];

pub fn phase_name(p: u8) -> &'static str {
    PHASES.get(p as usize - 1).map(|x| x.0).unwrap_or("?")
}

/// The input parameters of the sleep-mode instructions, plus the lifecycle
/// rules of the decay model and the memory lifecycle.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Params {
    pub stale_event_threshold_days: i64,
    pub memory_strength_decay_factor: f64,
    pub unsorted_max_backlog: i64,
    pub orphan_max_count: i64,
    /// Relevance decay rate λ (0.03: a half-life of about 23 days).
    pub relevance_lambda: f64,
    /// Below this relevance a fact is proposed for archival.
    pub archive_threshold: f64,
    /// Facts under 0.40 confidence unconfirmed this long are speculative
    /// and proposed for archival.
    pub speculative_ttl_days: i64,
    /// Resolved commitments get a TTL this long.
    pub commitment_decay_days: i64,
    /// Old, unimportant, unused facts are proposed for archival after this.
    pub fact_archival_age_days: i64,
    /// Archived Events are reclaimable after this.
    pub archive_ttl_days: i64,
    /// Completed SleepTasks are reclaimable after this.
    pub task_ttl_days: i64,
    /// Hard deletions per cycle (nodes and links).
    pub cleanup_cap: usize,
    /// Items of one class per proposal.
    pub proposal_cap: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            stale_event_threshold_days: 7,
            memory_strength_decay_factor: 0.95,
            unsorted_max_backlog: 20,
            orphan_max_count: 20,
            relevance_lambda: 0.03,
            archive_threshold: 0.05,
            speculative_ttl_days: 30,
            commitment_decay_days: 90,
            fact_archival_age_days: 90,
            archive_ttl_days: 30,
            task_ttl_days: 14,
            cleanup_cap: 500,
            proposal_cap: 200,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub scope: Scope,
    /// scheduled, threshold, on_demand
    pub trigger: String,
    /// The cycle's clock (RFC 3339).
    pub now: String,
    pub params: Params,
}

impl Options {
    pub fn new(scope: Scope, now: &str) -> Options {
        Options {
            scope,
            trigger: "on_demand".into(),
            now: now.to_string(),
            params: Params::default(),
        }
    }
}

/// A progress event: the phase, the step in it, counts, elapsed time.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub run: i64,
    pub phase: u8,
    pub name: &'static str,
    pub step: String,
    pub done: u64,
    pub total: u64,
    pub elapsed_ms: u64,
    /// A line for the log tail.
    pub log: Option<String>,
    /// The phase finished (its counts are in the report).
    pub phase_done: bool,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PhaseReport {
    pub phase: u8,
    pub name: String,
    pub stage: String,
    pub millis: u64,
    pub lines: Vec<String>,
    pub counts: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Report {
    pub run: i64,
    pub status: String,
    pub scope: String,
    pub trigger: String,
    pub reasoner: String,
    pub now: String,
    pub started_at: String,
    pub finished_at: String,
    pub millis: u64,
    pub phases: Vec<PhaseReport>,
    pub proposal: Option<i64>,
    pub proposed_items: usize,
    pub issues: Vec<String>,
    pub recommendations: Vec<String>,
    pub error: Option<String>,
    /// The health metrics measured at the start of the cycle (phase 1),
    /// by key, unrounded: the history the health trend is drawn from.
    pub health: BTreeMap<String, f64>,
    /// The parameters the cycle ran with.
    pub params: Params,
}

impl Report {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub fn count(&self, key: &str) -> i64 {
        self.phases.iter().filter_map(|p| p.counts.get(key)).sum()
    }

    /// The report in the shape the sleep-mode instructions give.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "Status: {}\nScope: {}\nTrigger: {}\nRun: #{} ({} reasoner, {} ms)\n",
            self.status, self.scope, self.trigger, self.run, self.reasoner, self.millis
        );
        let (now, default) = (
            serde_json::to_value(&self.params).unwrap_or_default(),
            serde_json::to_value(Params::default()).unwrap_or_default(),
        );
        let changed: Vec<String> = now
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, v)| default.get(k.as_str()) != Some(v))
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect()
            })
            .unwrap_or_default();
        if !changed.is_empty() {
            s.push_str(&format!("Parameters: {}\n", changed.join(", ")));
        }
        for stage in ["NREM", "REM", "Pre-Wake"] {
            let ps: Vec<&PhaseReport> = self.phases.iter().filter(|p| p.stage == stage).collect();
            if ps.is_empty() {
                continue;
            }
            let title = match stage {
                "NREM" => "NREM (Deep Consolidation)",
                "REM" => "REM (Memory Evolution)",
                _ => "Pre-Wake",
            };
            s.push_str(&format!("\n## {title}\n"));
            for p in ps {
                for l in &p.lines {
                    s.push_str(&format!("- {l}\n"));
                }
            }
        }
        if let Some(p) = self.proposal {
            s.push_str(&format!(
                "\n## Awaiting approval\n- Proposal #{p}: {} items (`somnus proposals show {p}`)\n",
                self.proposed_items
            ));
        }
        s.push_str("\n## Issues\n");
        if self.issues.is_empty() {
            s.push_str("- none\n");
        }
        for i in &self.issues {
            s.push_str(&format!("- {i}\n"));
        }
        s.push_str("\n## Next Recommendations\n");
        if self.recommendations.is_empty() {
            s.push_str("- none\n");
        }
        for r in &self.recommendations {
            s.push_str(&format!("- {r}\n"));
        }
        if let Some(e) = &self.error {
            s.push_str(&format!("\n## Error\n- {e}\n"));
        }
        s
    }
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
}

/// Past sleep runs, newest first.
pub fn runs(nx: &Nexus, limit: usize) -> KipResult<Vec<RunSummary>> {
    let mut st = nx.conn().prepare_cached(
        "SELECT id, started_at, finished_at, scope, reasoner, status, phase, error FROM sleep_runs ORDER BY id DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit as i64], |r| {
        Ok(RunSummary {
            run: r.get(0)?,
            started_at: r.get(1)?,
            finished_at: r.get(2)?,
            scope: r.get(3)?,
            reasoner: r.get(4)?,
            status: r.get(5)?,
            phase: r.get(6)?,
            error: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The report a run left (as far as it got), if the run exists.
pub fn report(nx: &Nexus, run: i64) -> KipResult<Option<Report>> {
    let rep: Option<Option<String>> = nx
        .conn()
        .query_row("SELECT report FROM sleep_runs WHERE id = ?1", [run], |r| {
            r.get(0)
        })
        .optional()?;
    Ok(rep.map(|r| {
        r.and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| Report {
                run,
                ..Default::default()
            })
    }))
}

struct Beat {
    run: i64,
    started: Instant,
    phase: u8,
    step: String,
    done: u64,
    total: u64,
    /// When the last progress event went out.
    last: Instant,
}

impl Beat {
    /// A progress event for where the cycle is now (and marks it sent).
    fn event(&mut self, log: Option<String>, phase_done: bool) -> Progress {
        self.last = Instant::now();
        Progress {
            run: self.run,
            phase: self.phase,
            name: phase_name(self.phase.max(1)),
            step: self.step.clone(),
            done: self.done,
            total: self.total,
            elapsed_ms: self.started.elapsed().as_millis() as u64,
            log,
            phase_done,
        }
    }
}

struct Cx<'a> {
    run: i64,
    opts: &'a Options,
    reasoner: &'a mut dyn Reasoner,
    beat: Arc<Mutex<Beat>>,
    tx: Option<Arc<Mutex<std::sync::mpsc::Sender<Progress>>>>,
    cancel: Arc<AtomicBool>,
    report: Report,
    phase: PhaseReport,
    /// The lookback window's Events, once read.
    recent: Option<Vec<EventView>>,
}

fn send(tx: &Option<Arc<Mutex<std::sync::mpsc::Sender<Progress>>>>, p: Progress) {
    if let Some(t) = tx
        && let Ok(t) = t.lock()
    {
        let _ = t.send(p);
    }
}

impl Cx<'_> {
    fn progress(&self, log: Option<String>, phase_done: bool) {
        let event = match self.beat.lock() {
            Ok(mut b) => b.event(log, phase_done),
            Err(_) => return,
        };
        send(&self.tx, event);
    }

    fn step(&self, step: &str, done: u64, total: u64) {
        let due = match self.beat.lock() {
            Ok(mut b) => {
                let changed = b.step != step;
                b.step = step.to_string();
                b.done = done;
                b.total = total;
                changed || b.last.elapsed().as_millis() >= 100
            }
            Err(_) => false,
        };
        if due {
            self.progress(None, false);
        }
    }

    fn line(&mut self, l: String) {
        self.progress(Some(l.clone()), false);
        self.phase.lines.push(l);
    }

    fn count(&mut self, k: &str, n: i64) {
        *self.phase.counts.entry(k.to_string()).or_default() += n;
    }

    fn cancelled(&self) -> KipResult<()> {
        if self.cancel.load(Ordering::SeqCst) {
            Err(KipError::new(
                ErrorCode::ExecutionTimeout,
                "the sleep cycle was cancelled",
            ))
        } else {
            Ok(())
        }
    }

    fn who(&self, reason: impl Into<String>) -> Who {
        Who {
            actor: "$system".into(),
            trigger: format!("sleep #{} phase {}", self.run, self.phase.phase),
            reason: Some(reason.into()),
        }
    }

    fn days_ago(&self, days: i64) -> String {
        shift(&self.opts.now, -days)
    }
}

/// `at` moved by `days` (RFC 3339, seconds).
pub fn shift(at: &str, days: i64) -> String {
    chrono::DateTime::parse_from_rfc3339(at)
        .map(|t| {
            (t + chrono::Duration::days(days)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        })
        .unwrap_or_else(|_| at.to_string())
}

/// Days from `from` to `to` (both RFC 3339); None if either is not a time.
pub fn days_between(from: &str, to: &str) -> Option<f64> {
    let a = chrono::DateTime::parse_from_rfc3339(from).ok()?;
    let b = chrono::DateTime::parse_from_rfc3339(to).ok()?;
    Some((b - a).num_seconds() as f64 / 86_400.0)
}

fn obj(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn pm(v: Value) -> Map<String, Value> {
    obj(&v)
}

/// A read through KIP, inside the phase's transaction.
fn find(nx: &mut Nexus, text: &str, params: Value) -> KipResult<Value> {
    let p = obj(&params);
    let cmd = kip::parse(text, &p)?;
    let who = Who {
        actor: "$system".into(),
        trigger: "sleep".into(),
        reason: None,
    };
    match nx.exec_as(&cmd, text, &who, false, false) {
        Ok((v, _)) => Ok(v),
        // a named concept that does not exist: nothing matches
        Err(e) if e.code == ErrorCode::NotFound => Ok(json!([])),
        Err(e) => Err(e),
    }
}

/// The number a `FIND(COUNT(...))` answers (0 when nothing matched).
fn count_of(v: &Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_array().and_then(|a| a.first()).and_then(Value::as_i64))
        .unwrap_or(0)
}

/// Rows of a multi-variable FIND (one expression per variable): the
/// engine answers column groups per variable.
fn rows(result: &Value, vars: usize) -> Vec<Vec<Value>> {
    let Some(a) = result.as_array() else {
        return vec![];
    };
    if vars == 1 {
        return a.iter().map(|v| vec![v.clone()]).collect();
    }
    let n = a.first().and_then(Value::as_array).map_or(0, |c| c.len());
    (0..n)
        .map(|i| {
            a.iter()
                .map(|c| c.get(i).cloned().unwrap_or(Value::Null))
                .collect()
        })
        .collect()
}

fn write(cx: &Cx, nx: &mut Nexus, text: &str, params: Value, reason: &str) -> KipResult<Value> {
    let p = obj(&params);
    let cmd = kip::parse(text, &p)?;
    Ok(nx.exec_as(&cmd, text, &cx.who(reason), false, false)?.0)
}

fn s(v: &Value, path: &[&str]) -> String {
    let mut cur = v;
    for k in path {
        cur = match cur.get(*k) {
            Some(x) => x,
            None => return String::new(),
        };
    }
    match cur {
        Value::String(x) => x.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn strs(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn event_view(v: &Value) -> EventView {
    let a = v.get("attributes").cloned().unwrap_or(Value::Null);
    EventView {
        id: s(v, &["id"]),
        name: s(v, &["name"]),
        class: s(&a, &["event_class"]),
        summary: s(&a, &["content_summary"]),
        start: s(&a, &["start_time"]),
        key_concepts: strs(a.get("key_concepts")),
        participants: strs(a.get("participants")),
        salience: a.get("salience_score").and_then(Value::as_f64),
        linked: vec![],
        domains: vec![],
        expires_at: v
            .get("metadata")
            .and_then(|m| m.get("expires_at"))
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

/// Concept types, minus the schema's own.
fn concept_types(nx: &mut Nexus) -> KipResult<Vec<String>> {
    let v = find(
        nx,
        r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} } LIMIT 1000"#,
        json!({}),
    )?;
    Ok(strs(Some(&v))
        .into_iter()
        .filter(|t| !matches!(t.as_str(), "$ConceptType" | "$PropositionType"))
        .collect())
}

fn predicates(nx: &mut Nexus) -> KipResult<Vec<(String, Value)>> {
    let v = find(
        nx,
        r#"FIND(?p) WHERE { ?p {type: "$PropositionType"} } LIMIT 1000"#,
        json!({}),
    )?;
    Ok(v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        s(p, &["name"]),
                        p.get("attributes").cloned().unwrap_or(Value::Null),
                    )
                })
                .collect()
        })
        .unwrap_or_default())
}

/// Predicates that hold the graph's structure and provenance, not facts
/// that fade.
const STRUCTURAL: &[&str] = &[
    "belongs_to_domain",
    "derived_from",
    "consolidated_to",
    "compiled_to",
    "has_step",
    "caused_by",
    "supersedes",
    "assigned_to",
    "mentions",
    "involves",
    "derived_insight",
];

/// Engram's protected categories: facts about these never fade out.
const PROTECTED_PREDICATES: &[&str] = &["prefers", "committed_to", "owed_to", "learned"];

/// Domains the cycle itself keeps.
const SYSTEM_DOMAINS: &[&str] = &["CoreSchema", "Unsorted", "Archived", "System", "SelfModel"];

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
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
    let cancel = cancel.unwrap_or_default();
    let tx = progress.map(|t| Arc::new(Mutex::new(t)));
    let started = Instant::now();
    let beat = Arc::new(Mutex::new(Beat {
        run,
        started,
        phase: 0,
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
    };
    cx.report.reasoner = cx.reasoner.name().into();
    let mut failure: Option<(String, KipError)> = None;
    let mut failed_phases = 0usize;
    let hold: Option<u8> = std::env::var("SOMNUS_SLEEP_HOLD_PHASE")
        .ok()
        .and_then(|v| v.parse().ok());
    for p in opts.scope.phases() {
        if cx.cancel.load(Ordering::SeqCst) {
            failure = Some((
                "cancelled".into(),
                KipError::new(ErrorCode::ExecutionTimeout, "cancelled"),
            ));
            break;
        }
        let t0 = Instant::now();
        cx.phase = PhaseReport {
            phase: p,
            name: phase_name(p).into(),
            stage: PHASES[p as usize - 1].1.into(),
            ..Default::default()
        };
        if let Ok(mut b) = cx.beat.lock() {
            b.phase = p;
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
                stage: PHASES[p as usize - 1].1.into(),
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
            Err(e) if cx.cancel.load(Ordering::SeqCst) => {
                // the phase's transaction rolled back: so does its report
                cx.report = saved_report;
                failure = Some(("cancelled".into(), e));
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
                    stage: PHASES[p as usize - 1].1.into(),
                    millis: t0.elapsed().as_millis() as u64,
                    lines: vec![issue.clone()],
                    counts: BTreeMap::from([("failed".to_string(), 1)]),
                });
                cx.report.issues.push(issue.clone());
                failed_phases += 1;
                cx.progress(Some(issue), true);
            }
        }
    }
    nx.set_tick(None);
    stop.store(true, Ordering::SeqCst);
    let _ = heart.join();
    cx.report.finished_at = store::now();
    cx.report.millis = started.elapsed().as_millis() as u64;
    match failure {
        Some((status, e)) => {
            cx.report.status = status;
            cx.report.error = Some(format!("{}: {}", e.code, e.message));
        }
        None if failed_phases > 0 => cx.report.status = "completed with issues".into(),
        None => cx.report.status = "completed".into(),
    }
    nx.conn().execute(
        "UPDATE sleep_runs SET status = ?2, finished_at = ?3, report = ?4, error = ?5 WHERE id = ?1",
        params![run, cx.report.status, cx.report.finished_at, cx.report.to_json().to_string(), cx.report.error],
    )?;
    cx.progress(Some(format!("cycle {}", cx.report.status)), true);
    Ok(cx.report)
}

/// One phase in its own transaction, with its bookkeeping rows.
fn phase_in_tx(cx: &mut Cx, nx: &mut Nexus, p: u8, hold: Option<u8>, t0: Instant) -> KipResult<()> {
    let run = cx.run;
    nx.atomically(&format!("sleep:{run}"), |nx| {
        run_phase(cx, nx, p)?;
        if hold == Some(p) {
            // fault injection for crash tests: the phase's writes are
            // done but not committed
            cx.progress(Some(format!("holding phase {p} open (SOMNUS_SLEEP_HOLD_PHASE)")), false);
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        cx.phase.millis = t0.elapsed().as_millis() as u64;
        nx.conn().execute(
            "INSERT OR REPLACE INTO sleep_phases(run, phase, name, started_at, finished_at, millis, counts, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                run,
                p,
                cx.phase.name,
                store::now(),
                store::now(),
                cx.phase.millis as i64,
                serde_json::to_string(&cx.phase.counts).unwrap_or_default(),
                serde_json::to_string(&cx.phase.lines).unwrap_or_default()
            ],
        )?;
        nx.conn().execute(
            "UPDATE sleep_runs SET phase = ?2, report = ?3 WHERE id = ?1",
            params![run, p, cx.report.to_json().to_string()],
        )?;
        Ok(())
    })
}

fn alive(pid: i64) -> bool {
    if pid == std::process::id() as i64 {
        return true;
    }
    if cfg!(target_os = "linux") {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

fn start_run(nx: &mut Nexus, opts: &Options, reasoner: &str) -> KipResult<i64> {
    nx.atomically("sleep:start", |nx| {
        let running: Vec<(i64, i64)> = {
            let mut st = nx.conn().prepare("SELECT id, pid FROM sleep_runs WHERE status = 'running'")?;
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?
        };
        for (id, pid) in running {
            if alive(pid) && pid != std::process::id() as i64 {
                return Err(KipError::new(
                    ErrorCode::VersionConflict,
                    format!("sleep run #{id} is still running (process {pid})"),
                )
                .with_hint("Wait for it to finish, or stop that process."));
            }
            nx.conn().execute(
                "UPDATE sleep_runs SET status = 'interrupted', finished_at = ?2, error = 'the process stopped during the cycle; the phase it was in was rolled back' WHERE id = ?1",
                params![id, store::now()],
            )?;
        }
        nx.conn().execute(
            "INSERT INTO sleep_runs(started_at, scope, trigger_name, reasoner, actor, pid, now, parameters, status) VALUES (?1, ?2, ?3, ?4, '$system', ?5, ?6, ?7, 'running')",
            params![
                store::now(),
                opts.scope.as_str(),
                opts.trigger,
                reasoner,
                std::process::id() as i64,
                opts.now,
                serde_json::to_string(&opts.params).unwrap_or_default()
            ],
        )?;
        Ok(nx.conn().last_insert_rowid())
    })
}

fn run_phase(cx: &mut Cx, nx: &mut Nexus, p: u8) -> KipResult<()> {
    match p {
        1 => phase1(cx, nx),
        2 => phase2(cx, nx),
        3 => phase3(cx, nx),
        4 => phase4(cx, nx),
        5 => phase5(cx, nx),
        6 => phase6(cx, nx),
        7 => phase7(cx, nx),
        8 => phase8(cx, nx),
        9 => phase9(cx, nx),
        10 => phase10(cx, nx),
        11 => phase11(cx, nx),
        12 => phase12(cx, nx),
        13 => phase13(cx, nx),
        _ => Ok(()),
    }
}

/// Read access for reasoners (the LLM's `execute_kip` tool): reads run,
/// writes are refused here and captured by the reasoner itself.
struct Look<'a>(&'a mut Nexus);

impl Lookup for Look<'_> {
    fn read(&mut self, command: &str, parameters: &Map<String, Value>) -> Value {
        let cmd = match kip::parse(command, parameters) {
            Ok(c) => c,
            Err(e) => return json!({"error": e.to_json()}),
        };
        if cmd.is_write() {
            return json!({"error": {"code": "KIP_3004", "message": "writes are captured for review, not run"}});
        }
        let who = Who {
            actor: "$system".into(),
            trigger: "sleep reasoner".into(),
            reason: None,
        };
        match self.0.exec_as(&cmd, command, &who, true, false) {
            Ok((result, next)) => json!({"result": result, "next_cursor": next}),
            Err(e) => json!({"error": e.to_json()}),
        }
    }
}

/// Stages drafts into the run's proposal (created on first use).
fn stage(
    cx: &mut Cx,
    nx: &mut Nexus,
    drafts: Vec<Draft>,
) -> KipResult<BTreeMap<String, (i64, i64)>> {
    let mut fresh = Vec::new();
    let mut per_class: HashMap<String, usize> = HashMap::new();
    for d in drafts {
        let n = per_class.entry(d.class.clone()).or_default();
        if *n >= cx.opts.params.proposal_cap {
            continue;
        }
        *n += 1;
        fresh.push(d);
    }
    if fresh.is_empty() {
        return Ok(BTreeMap::new());
    }
    let title = format!(
        "Reflection of sleep run #{} ({})",
        cx.run,
        cx.opts.scope.as_str()
    );
    let out = proposals::stage(
        nx,
        Some(cx.run),
        "$system",
        &title,
        fresh,
        cx.report.proposal,
    )?;
    for (k, why) in &out.skipped {
        cx.count("skipped", 1);
        cx.progress(Some(format!("not proposed: {k}: {why}")), false);
    }
    if let Some(p) = out.proposal {
        cx.report.proposal = Some(p);
    }
    cx.report.proposed_items += out.items;
    cx.count("proposed", out.items as i64);
    if out.auto_applied > 0 {
        cx.count("auto_applied", out.auto_applied as i64);
    }
    Ok(out.keys)
}

// ---------------------------------------------------------------- phase 1

fn phase1(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("state assessment", 0, 0);
    let h = super::health::assess(nx, &cx.opts.now, cx.opts.params.stale_event_threshold_days)?;
    let mut off = 0;
    for m in &h.metrics {
        cx.count(&format!("health.{}", m.key), m.value.round() as i64);
        // (JSON has no NaN: a metric with nothing to average is left out)
        if m.value.is_finite() {
            cx.report.health.insert(m.key.to_string(), m.value);
        }
        if matches!(
            m.status,
            super::health::Status::Warn | super::health::Status::Bad
        ) {
            off += 1;
            cx.report.issues.push(format!(
                "{}: {} (target {}) — {}",
                m.label, m.value, m.target, m.action
            ));
        }
    }
    cx.line(format!(
        "Assessed {} health metrics ({} off target)",
        h.metrics.len(),
        off
    ));
    cx.cancelled()?;
    // 1B: salience of unscored Events
    cx.step("salience scoring", 0, 0);
    let v = find(
        nx,
        r#"FIND(?e) WHERE { ?e {type: "Event"} FILTER(IS_NULL(?e.attributes.salience_score)) } LIMIT 20000"#,
        json!({}),
    )?;
    let events: Vec<EventView> = v
        .as_array()
        .map(|a| a.iter().map(event_view).collect())
        .unwrap_or_default();
    let total = events.len() as u64;
    let mut scored_n = 0;
    for (i, chunk) in events.chunks(200).enumerate() {
        cx.cancelled()?;
        cx.step("salience scoring", (i * 200) as u64, total);
        let scored = cx.reasoner.salience(&mut Look(nx), chunk)?;
        if scored.is_empty() {
            continue;
        }
        let mut text = String::from("UPSERT {\n");
        let mut params = Map::new();
        for (j, sc) in scored.iter().enumerate() {
            text.push_str(&format!(
                "  CONCEPT ?e{j} {{ {{type: \"Event\", name: :n{j}}} SET ATTRIBUTES {{ salience_score: :s{j}, salience_scored_at: :ts, salience_basis: :b{j} }} }}\n"
            ));
            params.insert(format!("n{j}"), json!(sc.name));
            params.insert(format!("s{j}"), json!(sc.score.round()));
            params.insert(format!("b{j}"), json!(sc.basis));
        }
        text.push_str("}\nWITH METADATA { source: \"SalienceScoring\", author: \"$system\" }");
        params.insert("ts".into(), json!(cx.opts.now));
        write(
            cx,
            nx,
            &text,
            Value::Object(params),
            &format!(
                "salience of {} unscored Events ({} reasoner)",
                scored.len(),
                cx.reasoner.name()
            ),
        )?;
        scored_n += scored.len();
    }
    cx.count("salience_scored", scored_n as i64);
    if scored_n > 0 {
        cx.line(format!("Scored salience of {scored_n} Events"));
    }
    if cx.opts.scope == Scope::Daydream {
        daydream_flags(cx, nx)?;
    }
    // daydream: flag valuable Experiences for the next full cycle
    let v = find(
        nx,
        r#"FIND(?x.name) WHERE { ?x {type: "Experience"} FILTER(?x.attributes.learning_value >= 70) FILTER(?x.attributes.consolidation_status == "pending") } LIMIT 200"#,
        json!({}),
    )?;
    let flagged = strs(Some(&v)).len();
    if flagged > 0 {
        cx.count("experiences_flagged", flagged as i64);
        cx.report.recommendations.push(format!(
            "{flagged} high-learning-value Experiences await procedural consolidation"
        ));
    }
    Ok(())
}

/// Salience at which a daydream queues an Event for consolidation, and
/// under which it marks one for archival.
pub const DAYDREAM_HIGH: f64 = 80.0;
pub const DAYDREAM_LOW: f64 = 10.0;

/// What a daydream leaves for the next full cycle: Events scored 80+ get a
/// `consolidate_to_semantic` SleepTask (phase 2 of the full cycle takes it
/// up), Events under 10 are marked `archival_candidate`, and the report
/// recommends both. Only unconsolidated Events count; an Event already
/// queued is not queued again.
fn daydream_flags(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let open = |e: &Value| {
        !matches!(
            s(e, &["attributes", "consolidation_status"]).as_str(),
            "completed" | "archived" | "consolidated"
        )
    };
    let high = find(
        nx,
        r#"FIND(?e) WHERE { ?e {type: "Event"} FILTER(?e.attributes.salience_score >= :hi) NOT { (?e, "consolidated_to", ?x) } } LIMIT 50"#,
        json!({"hi": DAYDREAM_HIGH}),
    )?;
    let mut queued = Vec::new();
    for e in high
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|e| open(e))
    {
        let name = s(e, &["name"]);
        let task = format!("Consolidate {name}");
        let exists = find(
            nx,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "SleepTask", name: :n} }"#,
            json!({"n": task}),
        )?;
        if count_of(&exists) > 0 {
            continue;
        }
        write(
            cx,
            nx,
            r#"UPSERT { CONCEPT ?t { {type: "SleepTask", name: :task}
  SET ATTRIBUTES { target_type: "Event", target_name: :n, requested_action: "consolidate_to_semantic",
    reason: :why, status: "pending", priority: 3 }
  SET PROPOSITIONS { ("assigned_to", {type: "Person", name: "$system"}) ("belongs_to_domain", {type: "Domain", name: "System"}) } } }
WITH METADATA { source: "Daydream", author: "$system", created_at: :ts }"#,
            json!({"task": task, "n": name, "ts": cx.opts.now,
                   "why": format!("salience {} ≥ {DAYDREAM_HIGH}: consolidate in the next full cycle", s(e, &["attributes", "salience_score"]))}),
            "daydream: a high-salience Event queued for consolidation",
        )?;
        queued.push(name);
    }
    let low = find(
        nx,
        r#"FIND(?e) WHERE { ?e {type: "Event"} FILTER(?e.attributes.salience_score < :lo) FILTER(IS_NULL(?e.attributes.archival_candidate)) } LIMIT 500"#,
        json!({"lo": DAYDREAM_LOW}),
    )?;
    let mut marked = 0;
    for e in low
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|e| open(e))
    {
        write(
            cx,
            nx,
            r#"UPDATE ?e SET ATTRIBUTES { archival_candidate: true, archival_candidate_at: :ts } WHERE { ?e {id: :id} }"#,
            json!({"id": s(e, &["id"]), "ts": cx.opts.now}),
            "daydream: a low-salience Event marked for archival",
        )?;
        marked += 1;
    }
    cx.count("daydream_queued", queued.len() as i64);
    cx.count("daydream_marked", marked);
    if !queued.is_empty() {
        cx.report.recommendations.push(format!(
            "Run a full cycle: {} high-salience Event{} queued for consolidation ({})",
            queued.len(),
            if queued.len() == 1 { "" } else { "s" },
            queued.join(", ")
        ));
    }
    if marked > 0 {
        cx.report.recommendations.push(format!(
            "{marked} low-salience Event{} (under {DAYDREAM_LOW}) marked as archival candidates for the next full cycle",
            if marked == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- phase 2

fn phase2(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("pending SleepTasks", 0, 0);
    let v = find(
        nx,
        r#"FIND(?task) WHERE {
  ?task {type: "SleepTask"}
  (?task, "assigned_to", {type: "Person", name: "$system"})
  FILTER(?task.attributes.status == "pending")
} ORDER BY ?task.attributes.priority DESC LIMIT 100"#,
        json!({}),
    )?;
    let tasks = v.as_array().cloned().unwrap_or_default();
    let mut by_action: BTreeMap<String, i64> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        cx.cancelled()?;
        let name = s(t, &["name"]);
        let action = s(t, &["attributes", "requested_action"]);
        let (tt, tn) = (
            s(t, &["attributes", "target_type"]),
            s(t, &["attributes", "target_name"]),
        );
        cx.step(&format!("task: {name}"), i as u64, tasks.len() as u64);
        write(
            cx,
            nx,
            r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :n} SET ATTRIBUTES { status: "in_progress", started_at: :ts } } } WITH METADATA { source: "SleepCycle", author: "$system", created_at: :ts }"#,
            json!({"n": name, "ts": cx.opts.now}),
            "SleepTask taken up",
        )?;
        let drafts = match action.as_str() {
            "reclassify" if tt == "Domain" && tn == "Unsorted" => unsorted_drafts(cx, nx)?,
            "reclassify" => classify_drafts(cx, nx, &[(tt.clone(), tn.clone())], "reclassify")?,
            "merge_check" | "merge_duplicates" => duplicate_drafts(cx, nx, Some((&tt, &tn)))?,
            "archive" => archive_drafts(cx, nx, &tt, &tn, &format!("SleepTask \"{name}\""))?,
            "consolidate_to_semantic" => {
                let ev = find(
                    nx,
                    r#"FIND(?e) WHERE { ?e {type: "Event", name: :n} }"#,
                    json!({"n": tn}),
                )?;
                let evs: Vec<EventView> = ev
                    .as_array()
                    .map(|a| a.iter().map(event_view).collect())
                    .unwrap_or_default();
                consolidation_drafts(cx, nx, evs)?
            }
            "resolve_contradiction" => {
                let found = conflicts(nx, Some(&tn))?;
                contradiction_drafts(cx, nx, &found)?
                    .into_iter()
                    .map(|(d, _)| d)
                    .collect()
            }
            _ => vec![],
        };
        let known = matches!(
            action.as_str(),
            "reclassify"
                | "merge_check"
                | "merge_duplicates"
                | "archive"
                | "consolidate_to_semantic"
                | "resolve_contradiction"
                | "review"
        );
        let n = drafts.len();
        let keys = stage(cx, nx, drafts)?;
        if !known {
            cx.report.issues.push(format!(
                "SleepTask \"{name}\" asks for `{action}`, which this cycle does not know how to do; marked failed"
            ));
        }
        // work that became proposal items waits for the operator: the task
        // stays in progress until every item is decided
        if known && !keys.is_empty() {
            let proposal = keys.values().next().map(|(p, _)| *p).unwrap_or(0);
            let seqs: Vec<i64> = keys.values().map(|(_, s)| *s).collect();
            let result = format!(
                "awaiting approval: proposal #{proposal} item{} {}",
                if seqs.len() == 1 { "" } else { "s" },
                seqs.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            write(
                cx,
                nx,
                r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :n} SET ATTRIBUTES { result: :r, awaiting_proposal: :p, awaiting_items: :items } } } WITH METADATA { source: "SleepCycle", author: "$system", created_at: :ts }"#,
                json!({"n": name, "r": result, "p": proposal, "items": seqs, "ts": cx.opts.now}),
                "SleepTask awaiting approval",
            )?;
            // items a policy applied at once settle it now
            proposals::settle_tasks(nx, proposal, &cx.who("SleepTask settled"))?;
            *by_action.entry(action.clone()).or_default() += 1;
            cx.progress(Some(format!("task \"{name}\": {result}")), false);
            continue;
        }
        let result = if !known {
            format!("unknown requested_action `{action}`")
        } else if action == "review" {
            format!("reviewed {tt} {tn}: findings in sleep run #{}", cx.run)
        } else if keys.is_empty() {
            if n == 0 {
                "nothing to change".to_string()
            } else {
                "already proposed or decided before".to_string()
            }
        } else {
            let items: Vec<String> = keys.values().map(|(_, s)| s.to_string()).collect();
            format!(
                "proposed for approval: proposal #{} item{} {}",
                cx.report.proposal.unwrap_or(0),
                if items.len() == 1 { "" } else { "s" },
                items.join(", ")
            )
        };
        let status = if known { "completed" } else { "failed" };
        write(
            cx,
            nx,
            r#"UPSERT { CONCEPT ?task { {type: "SleepTask", name: :n} SET ATTRIBUTES { status: :st, completed_at: :ts, result: :r } } WITH METADATA { expires_at: :exp } } WITH METADATA { source: "SleepCycle", author: "$system", created_at: :ts }"#,
            json!({"n": name, "st": status, "ts": cx.opts.now, "r": result, "exp": shift(&cx.opts.now, cx.opts.params.task_ttl_days)}),
            "SleepTask finished",
        )?;
        *by_action.entry(action.clone()).or_default() += 1;
        cx.progress(Some(format!("task \"{name}\": {result}")), false);
    }
    cx.count("tasks", tasks.len() as i64);
    if !tasks.is_empty() {
        cx.line(format!(
            "Processed {} SleepTasks ({})",
            tasks.len(),
            by_action
                .iter()
                .map(|(a, n)| format!("{n} {a}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- phases 3, 4

fn domain_views(
    nx: &mut Nexus,
    ty: &str,
    cache: &mut HashMap<String, Vec<DomainView>>,
) -> KipResult<Vec<DomainView>> {
    if let Some(v) = cache.get(ty) {
        return Ok(v.clone());
    }
    let v = find(
        nx,
        r#"FIND(?d) WHERE { ?d {type: "Domain"} } LIMIT 500"#,
        json!({}),
    )?;
    let mut out = Vec::new();
    for d in v.as_array().cloned().unwrap_or_default() {
        let name = s(&d, &["name"]);
        if SYSTEM_DOMAINS.contains(&name.as_str()) || s(&d, &["attributes", "status"]) == "archived"
        {
            continue;
        }
        let m = find(
            nx,
            r#"FIND(?m) WHERE { ?m {type: :t} (?m, "belongs_to_domain", {type: "Domain", name: :d}) } LIMIT 40"#,
            json!({"t": ty, "d": name}),
        )?;
        let member_texts = m
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| {
                        format!(
                            "{} {}",
                            s(x, &["name"]),
                            s(x, &["attributes", "description"])
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(DomainView {
            description: s(&d, &["attributes", "description"]),
            name,
            member_texts,
        });
    }
    cache.insert(ty.to_string(), out.clone());
    Ok(out)
}

fn item_view(nx: &mut Nexus, ty: &str, name: &str) -> KipResult<Option<ItemView>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { ?n {type: :t, name: :n} }"#,
        json!({"t": ty, "n": name}),
    )?;
    let Some(node) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(None);
    };
    let mut neighbour_domains = Vec::new();
    for text in [
        r#"FIND(?d.name) WHERE { ?x {type: :t, name: :n} (?x, ?p, ?y) (?y, "belongs_to_domain", ?d) } LIMIT 200"#,
        r#"FIND(?d.name) WHERE { ?x {type: :t, name: :n} (?y, ?p, ?x) (?y, "belongs_to_domain", ?d) } LIMIT 200"#,
    ] {
        let d = find(nx, text, json!({"t": ty, "n": name}))?;
        neighbour_domains.extend(
            strs(Some(&d))
                .into_iter()
                .filter(|d| !SYSTEM_DOMAINS.contains(&d.as_str())),
        );
    }
    Ok(Some(ItemView {
        id: s(&node, &["id"]),
        ty: ty.to_string(),
        name: name.to_string(),
        text: s(&node, &["attributes", "description"]),
        neighbour_domains,
    }))
}

fn classify_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    items: &[(String, String)],
    class: &str,
) -> KipResult<Vec<Draft>> {
    let mut cache = HashMap::new();
    let mut drafts = Vec::new();
    for (ty, name) in items {
        cx.cancelled()?;
        let Some(view) = item_view(nx, ty, name)? else {
            continue;
        };
        let domains = domain_views(nx, ty, &mut cache)?;
        let c = cx
            .reasoner
            .classify(&mut Look(nx), std::slice::from_ref(&view), &domains)?
            .into_iter()
            .next();
        let Some(c) = c else { continue };
        let in_unsorted = class == "unsorted";
        match (&c.domain, in_unsorted) {
            (Some(d), _) => {
                let mut commands = vec![r#"UPSERT {
  PROPOSITION ?membership {
    ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: :domain})
  }
}
WITH METADATA { source: "SleepReclassification", author: "$system", confidence: :confidence, created_at: :ts }"#
                    .to_string()];
                if in_unsorted {
                    commands.push(
                        r#"DELETE PROPOSITIONS ?link
WHERE {
  ?link ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: "Unsorted"})
}"#
                        .to_string(),
                    );
                }
                drafts.push(Draft {
                    class: "reclassify".into(),
                    key: format!("domain:{}>{d}", view.id),
                    title: format!("File {ty} \"{name}\" under {d}{}", if in_unsorted { " (out of Unsorted)" } else { "" }),
                    commands,
                    params: pm(json!({"item_type": ty, "item_name": name, "domain": d, "confidence": (c.confidence * 100.0).round() / 100.0, "ts": cx.opts.now})),
                    rationale: c.rationale.clone(),
                    evidence: vec![view.id.clone()],
                    confidence: c.confidence,
                });
            }
            (None, false) if class == "orphan" => {
                drafts.push(Draft {
                    class: "reclassify".into(),
                    key: format!("domain:{}>Unsorted", view.id),
                    title: format!("File orphan {ty} \"{name}\" in Unsorted for review"),
                    commands: vec![
                        r#"UPSERT {
  PROPOSITION ?membership {
    ({type: :item_type, name: :item_name}, "belongs_to_domain", {type: "Domain", name: "Unsorted"})
  }
}
WITH METADATA { source: "OrphanResolution", author: "$system", confidence: 0.5, created_at: :ts }"#
                            .to_string(),
                    ],
                    params: pm(json!({"item_type": ty, "item_name": name, "ts": cx.opts.now})),
                    rationale: c.rationale.clone(),
                    evidence: vec![view.id.clone()],
                    confidence: 0.5,
                });
            }
            _ => {
                cx.progress(
                    Some(format!("{ty} \"{name}\" stays: {}", c.rationale)),
                    false,
                );
            }
        }
    }
    Ok(drafts)
}

fn unsorted_drafts(cx: &mut Cx, nx: &mut Nexus) -> KipResult<Vec<Draft>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) } LIMIT 50"#,
        json!({}),
    )?;
    let items: Vec<(String, String)> = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| (s(n, &["type"]), s(n, &["name"])))
                .collect()
        })
        .unwrap_or_default();
    classify_drafts(cx, nx, &items, "unsorted")
}

fn phase3(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("Unsorted inbox", 0, 0);
    let backlog = count_of(&find(
        nx,
        r#"FIND(COUNT(?n)) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) }"#,
        json!({}),
    )?);
    cx.count("unsorted_backlog", backlog);
    if backlog > cx.opts.params.unsorted_max_backlog {
        cx.report.issues.push(format!(
            "Unsorted backlog {backlog} exceeds unsorted_max_backlog {}: reclassify to topic domains",
            cx.opts.params.unsorted_max_backlog
        ));
    }
    let drafts = unsorted_drafts(cx, nx)?;
    let n = drafts.len();
    let keys = stage(cx, nx, drafts)?;
    cx.count("unsorted_reclassified", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed filing {n} Unsorted items into topic domains{}",
            if keys.len() < n {
                format!(" ({} already proposed)", n - keys.len())
            } else {
                String::new()
            }
        ));
    }
    Ok(())
}

fn phase4(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let mut orphans = Vec::new();
    let mut left_to_consolidation = 0;
    for t in concept_types(nx)? {
        if t == "Domain" {
            continue;
        }
        cx.step(&format!("orphans of type {t}"), 0, 0);
        let v = find(
            nx,
            r#"FIND(?n) WHERE { ?n {type: :type} NOT { (?n, "belongs_to_domain", ?d) } } LIMIT 100"#,
            json!({"type": t}),
        )?;
        for n in v.as_array().cloned().unwrap_or_default() {
            let name = s(&n, &["name"]);
            if name.starts_with('$') {
                continue;
            }
            // Events wait for consolidation (phase 5), which files or archives them
            if t == "Event" && s(&n, &["attributes", "consolidation_status"]) != "completed" {
                left_to_consolidation += 1;
                continue;
            }
            orphans.push((t.clone(), name));
        }
    }
    cx.count("orphans", (orphans.len() + left_to_consolidation) as i64);
    let all = (orphans.len() + left_to_consolidation) as i64;
    if all > cx.opts.params.orphan_max_count {
        cx.report.issues.push(format!(
            "{all} orphans exceed orphan_max_count {}: classify or archive them",
            cx.opts.params.orphan_max_count
        ));
    }
    let drafts = classify_drafts(cx, nx, &orphans, "orphan")?;
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    if n > 0 || left_to_consolidation > 0 {
        cx.line(format!(
            "Found {} orphans: proposed a domain for {n}; {left_to_consolidation} unconsolidated Events left to consolidation",
            orphans.len() + left_to_consolidation
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- phase 5

fn linked_of(nx: &mut Nexus, e: &mut EventView) -> KipResult<()> {
    let v = find(
        nx,
        r#"FIND(?x) WHERE { ?e {type: "Event", name: :n} (?e, "mentions" | "involves", ?x) } LIMIT 50"#,
        json!({"n": e.name}),
    )?;
    e.linked = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| (s(x, &["type"]), s(x, &["name"])))
                .collect()
        })
        .unwrap_or_default();
    let d = find(
        nx,
        r#"FIND(?d.name) WHERE { ?e {type: "Event", name: :n} (?e, "belongs_to_domain", ?d) } LIMIT 10"#,
        json!({"n": e.name}),
    )?;
    e.domains = strs(Some(&d));
    Ok(())
}

/// The TTL an archived Event gets: `archived_at + archive_ttl_days` is the
/// floor (an earlier expiry would let the next cycle delete what this one
/// promises to keep for that long); a later one stands.
fn archive_ttl(cx: &Cx, e: &EventView) -> String {
    let ttl = shift(&cx.opts.now, cx.opts.params.archive_ttl_days);
    match &e.expires_at {
        Some(x) if later(x, &ttl) => x.clone(),
        _ => ttl,
    }
}

/// Whether RFC 3339 time `a` is after `b`, compared as instants.
fn later(a: &str, b: &str) -> bool {
    match (
        chrono::DateTime::parse_from_rfc3339(a),
        chrono::DateTime::parse_from_rfc3339(b),
    ) {
        (Ok(x), Ok(y)) => x > y,
        _ => false,
    }
}

fn consolidation_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    mut events: Vec<EventView>,
) -> KipResult<Vec<Draft>> {
    for e in events.iter_mut() {
        linked_of(nx, e)?;
    }
    let gists = cx.reasoner.gist(&mut Look(nx), &events)?;
    let mut drafts = Vec::new();
    for (g, e) in gists.iter().zip(&events) {
        if e.salience.unwrap_or(0.0) >= 90.0 {
            drafts.push(Draft {
                class: "consolidate".into(),
                key: format!("landmark:{}", e.id),
                title: format!("Keep {} as a landmark (salience {})", e.name, e.salience.unwrap_or(0.0)),
                commands: vec![
                    r#"UPSERT { CONCEPT ?landmark { {type: "Event", name: :event_name} SET ATTRIBUTES { consolidation_status: "completed", consolidated_at: :ts } } WITH METADATA { memory_tier: "long-term" } } WITH METADATA { source: "LandmarkPromotion", author: "$system", created_at: :ts }"#.to_string(),
                    r#"DELETE METADATA {"expires_at"} FROM ?landmark WHERE { ?landmark {type: "Event", name: :event_name} }"#.to_string(),
                ],
                params: pm(json!({"event_name": e.name, "ts": cx.opts.now})),
                rationale: "salience ≥ 90 makes an Event autobiographical: promoted instead of archived".into(),
                evidence: vec![e.id.clone()],
                confidence: 0.9,
            });
            continue;
        }
        if g.archive {
            drafts.push(Draft {
                class: "archive".into(),
                key: format!("archive:{}", e.id),
                title: format!("Archive {} (nothing durable to extract)", e.name),
                // the TTL goes on the node alone, in its own statement: a
                // block's metadata would land on the Archived link too
                commands: vec![
                    r#"UPSERT {
  CONCEPT ?event {
    {type: "Event", name: :event_name}
    SET ATTRIBUTES { consolidation_status: "archived", consolidated_at: :ts }
    SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) }
  }
}
WITH METADATA { source: "SleepConsolidation", author: "$system", created_at: :ts }"#
                        .to_string(),
                    r#"UPSERT { CONCEPT ?event { {type: "Event", name: :event_name} } WITH METADATA { expires_at: :archive_expires_at } }"#
                        .to_string(),
                ],
                params: pm(json!({"event_name": e.name, "ts": cx.opts.now, "archive_expires_at": archive_ttl(cx, e)})),
                rationale: format!("{}; archived with a {}-day TTL so TTL reclamation can free it", g.rationale, cx.opts.params.archive_ttl_days),
                evidence: vec![e.id.clone()],
                confidence: 0.8,
            });
        } else {
            let mut text = String::from(
                "UPSERT {\n  CONCEPT ?event {\n    {type: \"Event\", name: :event_name}\n    SET ATTRIBUTES { consolidation_status: \"completed\", consolidated_at: :ts }\n    SET PROPOSITIONS {\n",
            );
            let mut params = pm(json!({"event_name": e.name, "ts": cx.opts.now}));
            for (i, (t, n)) in g.into.iter().enumerate() {
                text.push_str(&format!(
                    "      (\"consolidated_to\", {{type: :t{i}, name: :n{i}}})\n"
                ));
                params.insert(format!("t{i}"), json!(t));
                params.insert(format!("n{i}"), json!(n));
            }
            text.push_str("    }\n  }\n}\nWITH METADATA { source: \"SleepConsolidation\", author: \"$system\", created_at: :ts, confidence: 0.8 }");
            drafts.push(Draft {
                class: "consolidate".into(),
                key: format!("consolidate:{}", e.id),
                title: format!(
                    "Consolidate {} into {}",
                    e.name,
                    g.into
                        .iter()
                        .map(|(t, n)| format!("{t}:{n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                commands: vec![text],
                params,
                rationale: g.rationale.clone(),
                evidence: vec![e.id.clone()],
                confidence: 0.8,
            });
        }
    }
    Ok(drafts)
}

/// How far back patterns and connections look.
const LOOKBACK_DAYS: i64 = 60;

/// The Events of the lookback window (at most 5,000), read once per run:
/// patterns (phase 5) and connections (phase 10) both work on them, and no
/// phase between them changes an Event.
fn recent_events(cx: &mut Cx, nx: &mut Nexus) -> KipResult<Vec<EventView>> {
    if let Some(r) = &cx.recent {
        return Ok(r.clone());
    }
    let v = find(
        nx,
        r#"FIND(?e) WHERE { ?e {type: "Event"} FILTER(?e.attributes.start_time >= :lookback_start) } LIMIT 5000"#,
        json!({"lookback_start": cx.days_ago(LOOKBACK_DAYS)}),
    )?;
    let r: Vec<EventView> = v
        .as_array()
        .map(|a| a.iter().map(event_view).collect())
        .unwrap_or_default();
    cx.recent = Some(r.clone());
    Ok(r)
}

fn phase5(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    // 5A: stale unconsolidated Events
    cx.step("stale Events", 0, 0);
    let cutoff = cx.days_ago(cx.opts.params.stale_event_threshold_days);
    let v = find(
        nx,
        r#"FIND(?e) WHERE {
  ?e {type: "Event"}
  FILTER(?e.attributes.start_time < :cutoff_date)
  NOT { (?e, "consolidated_to", ?semantic) }
} ORDER BY ?e.attributes.start_time ASC LIMIT 200"#,
        json!({"cutoff_date": cutoff}),
    )?;
    let stale: Vec<EventView> = v
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|e| {
                    !matches!(
                        s(e, &["attributes", "consolidation_status"]).as_str(),
                        "archived" | "completed"
                    )
                })
                .map(event_view)
                .collect()
        })
        .unwrap_or_default();
    let n_stale = stale.len();
    cx.step("stale Events", 0, n_stale as u64);
    let drafts = consolidation_drafts(cx, nx, stale)?;
    let archive = drafts.iter().filter(|d| d.class == "archive").count();
    stage(cx, nx, drafts)?;
    cx.count("stale_events", n_stale as i64);
    if n_stale > 0 {
        cx.line(format!(
            "Proposed consolidating {} stale Events ({} into semantic concepts, {archive} archived)",
            n_stale,
            n_stale - archive
        ));
    }
    cx.cancelled()?;
    // 5B: cross-event patterns
    cx.step("cross-event patterns", 0, 0);
    let lookback = cx.days_ago(LOOKBACK_DAYS);
    let recent = recent_events(cx, nx)?;
    let consolidated: HashSet<String> = {
        let c = find(
            nx,
            r#"FIND(?e.name) WHERE { ?e {type: "Event"} (?e, "consolidated_to", ?s) FILTER(?e.attributes.start_time >= :lookback_start) } LIMIT 20000"#,
            json!({"lookback_start": lookback}),
        )?;
        strs(Some(&c)).into_iter().collect()
    };
    let mut groups: BTreeMap<(String, Vec<String>), Vec<EventView>> = BTreeMap::new();
    for e in &recent {
        if e.key_concepts.is_empty() || e.class == "ToolUse" {
            continue;
        }
        let mut k = e.key_concepts.clone();
        k.sort();
        let holder = e.participants.first().cloned().unwrap_or_default();
        groups.entry((holder, k)).or_default().push(e.clone());
    }
    let mut clusters: Vec<Cluster> = groups
        .into_iter()
        .filter(|(_, evs)| evs.len() >= 3 && evs.iter().any(|e| !consolidated.contains(&e.name)))
        .map(|((holder, key_concepts), events)| Cluster {
            holder,
            key_concepts,
            events,
        })
        .collect();
    clusters.sort_by_key(|c| std::cmp::Reverse(c.events.len()));
    clusters.truncate(50);
    for c in clusters.iter_mut() {
        for e in c.events.iter_mut().take(20) {
            linked_of(nx, e)?;
        }
    }
    let patterns = cx.reasoner.patterns(&mut Look(nx), &clusters)?;
    let mut drafts = Vec::new();
    for (c, p) in clusters.iter().zip(patterns) {
        let Some(p) = p else { continue };
        // ground first: an existing concept of that name is reinforced
        let existing = find(
            nx,
            r#"FIND(?x) WHERE { ?x {type: :t, name: :n} }"#,
            json!({"t": p.ty, "n": p.name}),
        )?;
        let first = c
            .events
            .iter()
            .map(|e| e.start.clone())
            .min()
            .unwrap_or_default();
        let last = c
            .events
            .iter()
            .map(|e| e.start.clone())
            .max()
            .unwrap_or_default();
        let mut text = String::from(
            "UPSERT {\n  CONCEPT ?pattern {\n    {type: :ptype, name: :pname}\n    SET ATTRIBUTES { description: :description, evidence_count: :evidence_count, first_observed: :first_observed, last_observed: :last_observed }\n    SET PROPOSITIONS {\n      (\"belongs_to_domain\", {type: \"Domain\", name: :domain})\n",
        );
        let mut params = pm(json!({
            "ptype": p.ty, "pname": p.name, "description": p.description, "evidence_count": c.events.len(),
            "first_observed": first, "last_observed": last, "domain": p.domain, "ts": cx.opts.now, "confidence": p.confidence,
        }));
        for (i, e) in c.events.iter().take(10).enumerate() {
            text.push_str(&format!(
                "      (\"derived_from\", {{type: \"Event\", name: :ev{i}}})\n"
            ));
            params.insert(format!("ev{i}"), json!(e.name));
        }
        text.push_str("    }\n  }\n}\nWITH METADATA { source: \"CrossEventConsolidation\", author: \"$system\", confidence: :confidence, created_at: :ts }");
        let have = existing.as_array().and_then(|a| a.first()).cloned();
        let reinforce = have.is_some();
        if let Some(h) = &have
            && h.get("attributes")
                .and_then(|a| a.get("evidence_count"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
                >= c.events.len() as u64
        {
            continue; // already knows all of it
        }
        drafts.push(Draft {
            class: "pattern".into(),
            key: format!(
                "pattern:{}:{}:{}",
                p.ty,
                similarity::normalise(&p.name),
                c.events.len()
            ),
            title: if reinforce {
                format!(
                    "Reinforce {} \"{}\" ({} Events)",
                    p.ty,
                    p.name,
                    c.events.len()
                )
            } else {
                format!("New {} \"{}\" from {} Events", p.ty, p.name, c.events.len())
            },
            commands: vec![text],
            params,
            rationale: p.rationale.clone(),
            evidence: c.events.iter().take(10).map(|e| e.id.clone()).collect(),
            confidence: p.confidence,
        });
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("patterns", n as i64);
    if n > 0 {
        cx.line(format!("Proposed {n} cross-event patterns as Insights"));
    }
    // 5C: commitments
    cx.step("commitments", 0, 0);
    let v = find(
        nx,
        r#"FIND(?c) WHERE { ?c {type: "Commitment"} } LIMIT 1000"#,
        json!({}),
    )?;
    let (mut fulfilled, mut overdue, mut pending) = (0, 0, 0);
    let mut drafts = Vec::new();
    for c in v.as_array().cloned().unwrap_or_default() {
        let name = s(&c, &["name"]);
        let status = s(&c, &["attributes", "status"]);
        let due = s(&c, &["attributes", "due_at"]);
        match status.as_str() {
            "fulfilled" | "cancelled" | "expired" => {
                fulfilled += 1;
                if c.get("metadata")
                    .and_then(|m| m.get("expires_at"))
                    .is_none()
                {
                    let closed = [
                        s(&c, &["attributes", "fulfilled_at"]),
                        s(&c, &["attributes", "closed_at"]),
                    ]
                    .into_iter()
                    .find(|x| !x.is_empty())
                    .unwrap_or_else(|| cx.opts.now.clone());
                    let exp = shift(&closed, cx.opts.params.commitment_decay_days);
                    write(
                        cx,
                        nx,
                        r#"UPSERT { CONCEPT ?c { {type: "Commitment", name: :n} } WITH METADATA { expires_at: :exp } } WITH METADATA { source: "ProspectiveSweep", author: "$system", created_at: :ts }"#,
                        json!({"n": name, "exp": exp, "ts": cx.opts.now}),
                        &format!(
                            "commitment decay: a {status} commitment is reclaimable {} days after it closed",
                            cx.opts.params.commitment_decay_days
                        ),
                    )?;
                    cx.line(format!(
                        "Commitment \"{name}\" is {status}: reclaimable after {exp}"
                    ));
                }
            }
            "pending" if !due.is_empty() && due < cx.opts.now => {
                overdue += 1;
                let late = days_between(&due, &cx.opts.now).unwrap_or(0.0);
                cx.report.issues.push(format!(
                    "Overdue commitment: \"{name}\" (due {due}, {late:.0} days ago)"
                ));
                if late >= 30.0 {
                    drafts.push(Draft {
                        class: "commitment".into(),
                        key: format!("expire:{}", s(&c, &["id"])),
                        title: format!("Mark \"{name}\" expired (30+ days overdue)"),
                        commands: vec![r#"UPSERT { CONCEPT ?c { {type: "Commitment", name: :n} SET ATTRIBUTES { status: "expired", outcome: :outcome } } WITH METADATA { expires_at: :exp } } WITH METADATA { source: "ProspectiveSweep", author: "$system", confidence: 0.85, created_at: :ts }"#.to_string()],
                        params: pm(json!({"n": name, "outcome": format!("no activity {late:.0} days past due"), "exp": shift(&cx.opts.now, cx.opts.params.commitment_decay_days), "ts": cx.opts.now})),
                        rationale: format!("due {due}, {late:.0} days past with no sign of delivery: abandoned (history, not deletion)"),
                        evidence: vec![s(&c, &["id"])],
                        confidence: 0.6,
                    });
                } else {
                    cx.report
                        .recommendations
                        .push(format!("Nudge in the next briefing: \"{name}\""));
                }
            }
            _ => pending += 1,
        }
    }
    stage(cx, nx, drafts)?;
    cx.count("commitments_closed", fulfilled);
    cx.count("commitments_overdue", overdue);
    cx.count("commitments_pending", pending);
    cx.line(format!(
        "Prospective sweep: {fulfilled} closed, {overdue} overdue, {pending} pending"
    ));
    Ok(())
}

/// Archival of one named concept: an Event is archived with a TTL (its
/// consolidation path); anything else by the safe-archive pattern.
fn archive_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    ty: &str,
    name: &str,
    why: &str,
) -> KipResult<Vec<Draft>> {
    let v = find(
        nx,
        r#"FIND(?n) WHERE { ?n {type: :t, name: :n} }"#,
        json!({"t": ty, "n": name}),
    )?;
    let Some(node) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(vec![]);
    };
    if ty == "Event" {
        let mut e = event_view(&node);
        linked_of(nx, &mut e)?;
        let mut d = consolidation_drafts(cx, nx, vec![e])?;
        for x in d.iter_mut() {
            x.rationale = format!("{why}: {}", x.rationale);
        }
        return Ok(d.into_iter().filter(|x| x.class == "archive").collect());
    }
    let id = s(&node, &["id"]);
    Ok(vec![Draft {
        class: "archive".into(),
        key: format!("archive:{id}"),
        title: format!("Archive {ty} \"{name}\""),
        commands: vec![
            r#"UPSERT {
  CONCEPT ?item {
    {type: :type, name: :name}
    SET ATTRIBUTES { status: "archived", archived_at: :ts, archived_by: "$system" }
    SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) }
  }
}
WITH METADATA { source: "SleepArchive", author: "$system", created_at: :ts }"#
                .to_string(),
            r#"DELETE PROPOSITIONS ?link
WHERE {
  ?d {type: "Domain"}
  FILTER(?d.name != "Archived")
  ?link ({type: :type, name: :name}, "belongs_to_domain", ?d)
}"#
            .to_string(),
        ],
        params: pm(json!({"type": ty, "name": name, "ts": cx.opts.now})),
        rationale: format!("{why} asks to archive it (safe archive: kept, moved to Archived)"),
        evidence: vec![id],
        confidence: 0.8,
    }])
}

// ---------------------------------------------------------------- phase 6

/// Types whose nodes are episodes or bookkeeping, never deduplicated.
const NO_DEDUP: &[&str] = &[
    "Event",
    "SleepTask",
    "Commitment",
    "Domain",
    "$ConceptType",
    "$PropositionType",
];

fn concept_view(nx: &mut Nexus, node: &Value) -> KipResult<ConceptView> {
    let id = s(node, &["id"]);
    let links = {
        let c = store::ids::parse_concept_id(&id).unwrap_or(0);
        nx.conn().query_row(
            "SELECT (SELECT COUNT(*) FROM propositions WHERE subject = ?1) + (SELECT COUNT(*) FROM propositions WHERE object = ?1)",
            [c],
            |r| r.get::<_, i64>(0),
        )?
    };
    let attrs = node.get("attributes").cloned().unwrap_or(Value::Null);
    Ok(ConceptView {
        id,
        ty: s(node, &["type"]),
        name: s(node, &["name"]),
        aliases: strs(attrs.get("aliases")),
        description: s(&attrs, &["description"]),
        attributes: attrs,
        links,
    })
}

fn duplicate_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    only: Option<(&str, &str)>,
) -> KipResult<Vec<Draft>> {
    let types: Vec<String> = match only {
        Some((t, _)) => vec![t.to_string()],
        None => concept_types(nx)?,
    };
    let mut nodes = Vec::new();
    for t in types.iter().filter(|t| !NO_DEDUP.contains(&t.as_str())) {
        cx.step(&format!("duplicates among {t}"), 0, 0);
        let v = find(
            nx,
            r#"FIND(?c) WHERE { ?c {type: :t} } LIMIT 50000"#,
            json!({"t": t}),
        )?;
        nodes.extend(
            v.as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|n| !s(n, &["name"]).starts_with('$')),
        );
    }
    let named: Vec<similarity::Named> = nodes
        .iter()
        .map(|n| similarity::Named {
            id: store::ids::parse_concept_id(&s(n, &["id"])).unwrap_or(0),
            ty: s(n, &["type"]),
            name: s(n, &["name"]),
            aliases: strs(n.get("attributes").and_then(|a| a.get("aliases"))),
        })
        .collect();
    let matches = similarity::duplicates(&named);
    let mut cands = Vec::new();
    for m in matches {
        if let Some((_, target)) = only
            && named[m.a].name != target
            && named[m.b].name != target
        {
            continue;
        }
        cands.push(Candidate {
            a: concept_view(nx, &nodes[m.a])?,
            b: concept_view(nx, &nodes[m.b])?,
            rule: m.rule.into(),
            score: m.score,
        });
    }
    let judged = cx.reasoner.same_entity(&mut Look(nx), &cands)?;
    let mut drafts = Vec::new();
    for (c, j) in cands.iter().zip(judged) {
        if !j.same || c.a.ty != c.b.ty {
            continue;
        }
        let (keep, dup) = if j.keep_a { (&c.a, &c.b) } else { (&c.b, &c.a) };
        let (x, y) = if c.a.id < c.b.id {
            (&c.a.id, &c.b.id)
        } else {
            (&c.b.id, &c.a.id)
        };
        drafts.push(Draft {
            class: "merge".into(),
            key: format!("merge:{x}|{y}"),
            title: format!("Merge {} \"{}\" into \"{}\"", dup.ty, dup.name, keep.name),
            commands: vec![
                r#"MERGE CONCEPT ?dup INTO ?canonical
WHERE {
  ?dup {type: :type, name: :duplicate_name}
  ?canonical {type: :type, name: :canonical_name}
}"#
                .to_string(),
            ],
            params: pm(
                json!({"type": keep.ty, "duplicate_name": dup.name, "canonical_name": keep.name}),
            ),
            rationale: j.rationale.clone(),
            evidence: vec![dup.id.clone(), keep.id.clone()],
            confidence: j.confidence,
        });
    }
    Ok(drafts)
}

fn phase6(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let drafts = duplicate_drafts(cx, nx, None)?;
    let n = drafts.len();
    let titles: Vec<String> = drafts.iter().map(|d| d.title.clone()).collect();
    stage(cx, nx, drafts)?;
    cx.count("duplicates", n as i64);
    if n > 0 {
        cx.line(format!("Found {n} duplicate pairs: {}", titles.join("; ")));
    }
    Ok(())
}

// ---------------------------------------------------------------- phase 7

/// The relevance score of the decay model: base × e^(−λ·days) ×
/// log2(access+1) × type weight, with its status band.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Relevance {
    pub score: f64,
    pub status: &'static str,
    pub base: f64,
    pub days_since_access: f64,
    pub access_count: f64,
    pub type_weight: f64,
    pub lambda: f64,
}

pub fn relevance(meta: &Value, kind: &str, now: &str, lambda: f64) -> Relevance {
    let pinned = meta.get("pinned").and_then(Value::as_bool).unwrap_or(false);
    let base = meta
        .get("base_relevance")
        .and_then(Value::as_f64)
        .or_else(|| meta.get("confidence").and_then(Value::as_f64))
        .unwrap_or(0.7);
    let last = [
        "last_accessed_at",
        "last_accessed",
        "observed_at",
        "created_at",
        "_updated_at",
    ]
    .iter()
    .find_map(|k| meta.get(*k).and_then(Value::as_str).map(str::to_string))
    .unwrap_or_else(|| now.to_string());
    let days = days_between(&last, now).unwrap_or(0.0).max(0.0);
    let access = meta
        .get("access_count")
        .and_then(Value::as_f64)
        .unwrap_or(1.0)
        .max(1.0);
    let type_weight = match kind {
        "core" => 1.5,
        "episodic" => 0.8,
        "procedural" => 1.0,
        _ => 1.2,
    };
    let score = if pinned || meta.get("confidence").and_then(Value::as_f64) == Some(1.0) {
        f64::INFINITY
    } else {
        base * (-lambda * days).exp() * (access + 1.0).log2() * type_weight
    };
    let status = if score >= 0.5 {
        "active"
    } else if score >= 0.2 {
        "fading"
    } else if score >= 0.05 {
        "dormant"
    } else {
        "archived"
    };
    Relevance {
        score,
        status,
        base,
        days_since_access: (days * 10.0).round() / 10.0,
        access_count: access,
        type_weight,
        lambda,
    }
}

fn phase7(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let f = cx.opts.params.memory_strength_decay_factor;
    let stale_cutoff = cx.days_ago(cx.opts.params.stale_event_threshold_days);
    let preds: Vec<String> = predicates(nx)?
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !STRUCTURAL.contains(&n.as_str()))
        .collect();
    // 7A/7B: strength-aware decay of memory_strength, one UPDATE per
    // predicate and band; confidence 1.0, pinned and superseded links and
    // links decayed this cycle are left alone.
    let bands: [(&str, f64, &str); 3] = [
        ("reinforced", f.sqrt(), "?link.metadata.access_count >= 3"),
        (
            "neglected",
            f,
            "(IS_NULL(?link.metadata.access_count) || ?link.metadata.access_count < 3) && (IS_NULL(?link.metadata.confidence) || ?link.metadata.confidence >= 0.5)",
        ),
        (
            "clutter",
            f * f,
            "(IS_NULL(?link.metadata.access_count) || ?link.metadata.access_count < 3) && ?link.metadata.confidence < 0.5",
        ),
    ];
    let mut decayed = 0i64;
    for (i, p) in preds.iter().enumerate() {
        cx.cancelled()?;
        cx.step(
            &format!("memory-strength decay: {p}"),
            i as u64,
            preds.len() as u64,
        );
        for (band, factor, cond) in &bands {
            let text = format!(
                r#"UPDATE ?link
SET METADATA {{
  memory_strength: CLAMP(MUL(COALESCE(?link.metadata.memory_strength, 0.7), :decay_factor), 0.0, 1.0),
  strength_decay_applied_at: :timestamp,
  strength_decay_rule: :rule
}}
WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.pinned) || ?link.metadata.pinned != true)
  FILTER(IS_NULL(?link.metadata.confidence) || ?link.metadata.confidence < 1.0)
  FILTER(IS_NULL(?link.metadata.observed_at) || ?link.metadata.observed_at < :stale_cutoff)
  FILTER(IS_NULL(?link.metadata.memory_strength) || ?link.metadata.memory_strength > 0.05)
  FILTER(IS_NULL(?link.metadata.strength_decay_applied_at) || ?link.metadata.strength_decay_applied_at < :cycle_start)
  FILTER({cond})
}}"#,
                q(p)
            );
            let rule = format!("{band}: memory_strength × {factor:.4} (decay factor {f})");
            let r = write(
                cx,
                nx,
                &text,
                json!({"decay_factor": (factor * 10000.0).round() / 10000.0, "timestamp": cx.opts.now, "stale_cutoff": stale_cutoff, "cycle_start": cx.opts.now, "rule": rule}),
                &format!("memory-strength decay, band {rule}"),
            )?;
            decayed += r.get("updated").and_then(Value::as_i64).unwrap_or(0);
        }
    }
    cx.count("decayed", decayed);
    cx.line(format!(
        "Decayed memory strength on {decayed} propositions (confidence untouched)"
    ));
    // Relevance and the lifecycle rules: speculative TTL and fact archival
    // are proposals (archival is a judgement), explained by rule and inputs.
    let spec_cut = cx.days_ago(cx.opts.params.speculative_ttl_days);
    let arch_cut = cx.days_ago(cx.opts.params.fact_archival_age_days);
    let mut drafts = Vec::new();
    let mut bands_count: BTreeMap<&str, i64> = BTreeMap::new();
    for (i, p) in preds.iter().enumerate() {
        if PROTECTED_PREDICATES.contains(&p.as_str()) {
            continue;
        }
        cx.cancelled()?;
        cx.step(&format!("relevance: {p}"), i as u64, preds.len() as u64);
        let text = format!(
            r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.archived) || ?link.metadata.archived != true)
  FILTER((?link.metadata.confidence < 0.4 && (?link.metadata.observed_at < :spec_cut || (IS_NULL(?link.metadata.observed_at) && ?link.metadata.created_at < :spec_cut))) || ?link.metadata.observed_at < :arch_cut || (IS_NULL(?link.metadata.observed_at) && ?link.metadata.created_at < :arch_cut))
}} LIMIT 500"#,
            q(p)
        );
        let v = find(
            nx,
            &text,
            json!({"spec_cut": spec_cut, "arch_cut": arch_cut}),
        )?;
        for row in rows(&v, 3) {
            let (l, sn, on) = (&row[0], &row[1], &row[2]);
            let meta = l.get("metadata").cloned().unwrap_or(Value::Null);
            // pinned and certain facts are never decayed or archived
            if meta.get("pinned").and_then(Value::as_bool) == Some(true)
                || meta
                    .get("confidence")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    >= 1.0
            {
                continue;
            }
            let r = relevance(
                &meta,
                "semantic",
                &cx.opts.now,
                cx.opts.params.relevance_lambda,
            );
            *bands_count.entry(r.status).or_default() += 1;
            let conf = meta
                .get("confidence")
                .and_then(Value::as_f64)
                .unwrap_or(0.7);
            let access = meta
                .get("access_count")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let label = format!("{} {} {}", s(sn, &["name"]), p, s(on, &["name"]));
            let (rule, why) = if conf < 0.4 {
                (
                    "speculative TTL",
                    format!(
                        "confidence {conf} < 0.40 and unconfirmed for {:.0} days (> {})",
                        r.days_since_access, cx.opts.params.speculative_ttl_days
                    ),
                )
            } else if conf < 0.3 + 1e-9
                || (access <= 2.0 && r.score < cx.opts.params.archive_threshold)
            {
                (
                    "fact archival",
                    format!(
                        "{:.0} days old (> {}), relevance {:.4} < {}, accessed {access} times (≤ 2)",
                        r.days_since_access,
                        cx.opts.params.fact_archival_age_days,
                        r.score,
                        cx.opts.params.archive_threshold
                    ),
                )
            } else {
                continue;
            };
            let id = s(l, &["id"]);
            let inputs = json!({"rule": rule, "relevance": r, "confidence": conf, "access_count": access, "now": cx.opts.now});
            drafts.push(Draft {
                class: "archive".into(),
                key: format!("archive:{id}"),
                title: format!("Archive the fact \"{label}\" ({rule})"),
                commands: vec![r#"UPSERT {
  PROPOSITION ?link { (id: :link_id) }
}
WITH METADATA { archived: true, archived_at: :ts, archived_by: "$system", archive_rule: :rule, archive_reason: :why, memory_tier: "archived", relevance: :relevance }"#
                    .to_string()],
                params: pm(json!({"link_id": id, "ts": cx.opts.now, "rule": rule, "why": why, "relevance": (r.score * 10000.0).round() / 10000.0})),
                rationale: format!("{rule}: {why}; relevance {:.4} ({}) = base {} × e^(−{}×{:.0}) × log2({}+1) × {}", r.score, r.status, r.base, r.lambda, r.days_since_access, r.access_count, r.type_weight),
                evidence: vec![id.clone()],
                confidence: 0.7,
            });
            note(nx, &id, &label, cx.run, "proposed archival", rule, &inputs)?;
        }
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("archival_proposed", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed archiving {n} faded facts ({})",
            bands_count
                .iter()
                .map(|(b, n)| format!("{n} {b}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

/// Records why the cycle acted on an element (for `somnus why`).
fn note(
    nx: &Nexus,
    kip_id: &str,
    label: &str,
    run: i64,
    action: &str,
    rule: &str,
    inputs: &Value,
) -> KipResult<()> {
    let el = store::ids::parse_element_id(kip_id).unwrap_or(0);
    nx.conn().execute(
        "INSERT INTO sleep_notes(element, label, run, at, action, rule, inputs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![el, label, run, store::now(), action, rule, inputs.to_string()],
    )?;
    Ok(())
}

// ---------------------------------------------------------------- phase 8

fn phase8(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("self-evidence", 0, 0);
    let v = find(
        nx,
        r#"FIND(?self) WHERE { ?self {type: "Person", name: "$self"} }"#,
        json!({}),
    )?;
    let Some(me) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok(());
    };
    let attrs = me.get("attributes").cloned().unwrap_or(Value::Null);
    let version = me
        .get("metadata")
        .and_then(|m| m.get("_version"))
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let sys = find(
        nx,
        r#"FIND(?s.attributes.last_sleep_cycle) WHERE { ?s {type: "Person", name: "$system"} }"#,
        json!({}),
    )?;
    let since = sys
        .as_array()
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let v = find(
        nx,
        r#"FIND(?insight, ?link) WHERE {
  ?self {type: "Person", name: "$self"}
  ?link (?self, "learned", ?insight)
} LIMIT 200"#,
        json!({}),
    )?;
    let insights: Vec<InsightView> = rows(&v, 2)
        .into_iter()
        .filter(|r| {
            let at = s(&r[1], &["metadata", "created_at"]);
            since.is_empty() || at.is_empty() || at >= since
        })
        .map(|r| InsightView {
            id: s(&r[0], &["id"]),
            name: s(&r[0], &["name"]),
            class: s(&r[0], &["attributes", "insight_class"]),
            description: s(&r[0], &["attributes", "description"]),
        })
        .collect();
    cx.count("insights_reviewed", insights.len() as i64);
    let edits = cx.reasoner.self_model(&mut Look(nx), &attrs, &insights)?;
    // one read-modify-write of $self for all edits
    let edits: Vec<SelfEdit> = edits
        .into_iter()
        .filter(|e| {
            !matches!(
                e.attribute.as_str(),
                "core_directives" | "name" | "type" | "id" | "person_class"
            )
        })
        .collect();
    let mut drafts = Vec::new();
    if !edits.is_empty() {
        let mut values = Map::new();
        for e in &edits {
            let mut merged: Vec<Value> = values
                .get(&e.attribute)
                .or_else(|| attrs.get(&e.attribute))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for a in &e.add {
                if !merged.iter().any(|m| m.as_str() == Some(a)) {
                    merged.push(json!(a));
                }
            }
            values.insert(e.attribute.clone(), Value::Array(merged));
        }
        values.insert("self_model_updated_at".into(), json!(cx.opts.now));
        let e = SelfEdit {
            attribute: edits
                .iter()
                .map(|e| e.attribute.clone())
                .collect::<Vec<_>>()
                .join(", "),
            add: edits
                .iter()
                .flat_map(|e| e.add.iter().map(|a| format!("{}: {a}", e.attribute)))
                .collect(),
            evidence: edits.iter().flat_map(|e| e.evidence.clone()).collect(),
            rationale: edits
                .iter()
                .map(|e| format!("{}: {}", e.attribute, e.rationale))
                .collect::<Vec<_>>()
                .join("; "),
        };
        drafts.push(Draft {
            class: "self_model".into(),
            key: format!("self:{}", similarity::normalise(&e.add.join("|"))),
            title: format!("Refine $self: {} additions to {}", e.add.len(), e.attribute),
            commands: vec![r#"UPSERT {
  CONCEPT ?self {
    {type: "Person", name: "$self"}
    EXPECT VERSION :v
    SET ATTRIBUTES { :attr_values }
  }
}
WITH METADATA { source: "SelfModelConsolidation", author: "$system", confidence: 0.85, created_at: :ts }"#
                .replace("{ :attr_values }", ":attr_values")],
            params: pm(json!({"v": version, "attr_values": values, "ts": cx.opts.now})),
            rationale: e.rationale.clone(),
            evidence: e.evidence.clone(),
            confidence: 0.7,
        });
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("self_model_edits", n as i64);
    cx.line(format!(
        "Reviewed {} Insights for the self-model; proposed {n} edits",
        insights.len()
    ));
    Ok(())
}

// ---------------------------------------------------------------- phase 9

fn fact(l: &Value, o: &Value) -> FactView {
    let m = l.get("metadata").cloned().unwrap_or(Value::Null);
    let attrs = o.get("attributes").cloned().unwrap_or(Value::Null);
    FactView {
        link: s(l, &["id"]),
        object_type: s(o, &["type"]),
        object: s(o, &["name"]),
        observed_at: m
            .get("observed_at")
            .and_then(Value::as_str)
            .or_else(|| attrs.get("last_observed").and_then(Value::as_str))
            .map(str::to_string),
        confidence: m.get("confidence").and_then(Value::as_f64),
        source: m.get("source").and_then(Value::as_str).map(str::to_string),
    }
}

/// A link with its subject and object, as FIND returns them.
type Triple = (Value, Value, Value);

/// Conflicting facts: two active links of a single-valued predicate from
/// one subject, or two active links from one subject and predicate to
/// objects in the same slot (`Diet: vegetarian` / `Diet: pescatarian`).
/// Never across subjects or predicates.
fn conflicts(nx: &mut Nexus, subject: Option<&str>) -> KipResult<Vec<Conflict>> {
    let mut out = Vec::new();
    for (p, attrs) in predicates(nx)? {
        if STRUCTURAL.contains(&p.as_str()) {
            continue;
        }
        let single = attrs.get("cardinality").and_then(Value::as_str) == Some("single");
        let text = format!(
            r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.archived) || ?link.metadata.archived != true)
  {}
}} LIMIT 20000"#,
            q(&p),
            if single {
                ""
            } else {
                r#"FILTER(CONTAINS(?o.name, ": "))"#
            }
        );
        let v = find(nx, &text, json!({}))?;
        let mut groups: BTreeMap<(String, String), Vec<Triple>> = BTreeMap::new();
        for r in rows(&v, 3) {
            let sid = s(&r[0], &["subject"]);
            if let Some(want) = subject
                && s(&r[1], &["name"]) != want
            {
                continue;
            }
            let slot = if single {
                "single-valued predicate".to_string()
            } else {
                let on = s(&r[2], &["name"]);
                let slot = s(&r[2], &["attributes", "slot"]);
                if !slot.is_empty() {
                    slot
                } else {
                    format!(
                        "{}: {}",
                        s(&r[2], &["type"]),
                        on.split(": ").next().unwrap_or("")
                    )
                }
            };
            groups
                .entry((sid, slot))
                .or_default()
                .push((r[0].clone(), r[1].clone(), r[2].clone()));
        }
        for ((_, slot), g) in groups {
            if g.len() < 2 {
                continue;
            }
            // each pair with the newest: n-1 conflicts
            let mut facts: Vec<(FactView, &Value)> =
                g.iter().map(|(l, sj, o)| (fact(l, o), sj)).collect();
            facts.sort_by(|a, b| a.0.observed_at.cmp(&b.0.observed_at));
            let (newest, subj) = facts
                .last()
                .cloned()
                .unwrap_or_else(|| (fact(&Value::Null, &Value::Null), &Value::Null));
            for (f, _) in facts.iter().take(facts.len() - 1) {
                out.push(Conflict {
                    subject_type: s(subj, &["type"]),
                    subject: s(subj, &["name"]),
                    predicate: p.clone(),
                    slot: slot.clone(),
                    a: f.clone(),
                    b: newest.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// The commands that carry out a resolution of a conflict.
pub fn resolution_commands(
    c: &Conflict,
    verdict: Verdict,
    now: &str,
    note: &str,
) -> (Vec<String>, Map<String, Value>) {
    let (older, newer) = if c.a.observed_at <= c.b.observed_at {
        (&c.a, &c.b)
    } else {
        (&c.b, &c.a)
    };
    let supersede = |old: &FactView, cur: &FactView| -> (Vec<String>, Map<String, Value>) {
        (
            vec![r#"UPSERT {
  PROPOSITION ?old_link { (id: :old_link_id) }
  WITH METADATA { superseded: true, superseded_at: :timestamp, superseded_by: :current_link_id, superseded_reason: :reason, resolved_by: "ContradictionResolution", confidence: 0.1 }
  PROPOSITION ?current_link { (id: :current_link_id) }
  WITH METADATA { supersedes: :old_link_id, evolution_note: :temporal_context, resolved_by: "ContradictionResolution", confidence: :boosted_confidence }
}"#
                .to_string()],
            pm(json!({
                "old_link_id": old.link, "current_link_id": cur.link, "timestamp": now,
                "reason": note,
                "temporal_context": format!("{} {} {} from {}; before that {} (observed {})", c.subject, c.predicate, cur.object, cur.observed_at.as_deref().unwrap_or("?"), old.object, old.observed_at.as_deref().unwrap_or("?")),
                "boosted_confidence": ((cur.confidence.unwrap_or(0.8) + 0.05).min(0.99) * 100.0).round() / 100.0,
            })),
        )
    };
    match verdict {
        Verdict::KeepNewer => supersede(older, newer),
        Verdict::KeepOlder => supersede(newer, older),
        Verdict::BothValid => (
            vec![r#"UPSERT {
  PROPOSITION ?old_link { (id: :old_link_id) }
  WITH METADATA { valid_until: :boundary, evolution_note: :note, resolved_by: "ContradictionResolution" }
  PROPOSITION ?current_link { (id: :current_link_id) }
  WITH METADATA { valid_from: :boundary, evolution_note: :note, resolved_by: "ContradictionResolution" }
}"#
                .to_string()],
            pm(json!({"old_link_id": older.link, "current_link_id": newer.link, "boundary": newer.observed_at.clone().unwrap_or_else(|| now.to_string()), "timestamp": now, "note": note})),
        ),
        Verdict::Merge => (
            vec![r#"MERGE CONCEPT ?dup INTO ?canonical
WHERE {
  ?dup {type: :old_type, name: :old_name}
  ?canonical {type: :new_type, name: :new_name}
}"#
            .to_string()],
            pm(json!({"old_type": older.object_type, "old_name": older.object, "new_type": newer.object_type, "new_name": newer.object})),
        ),
        Verdict::NeedsContext => (
            vec![r#"UPSERT {
  PROPOSITION ?a { (id: :a_id) }
  PROPOSITION ?b { (id: :b_id) }
}
WITH METADATA { disputed: true, disputed_at: :timestamp, dispute_note: :note }"#
                .to_string()],
            pm(json!({"a_id": older.link, "b_id": newer.link, "timestamp": now, "note": note})),
        ),
    }
}

/// A conflict's identity, whichever fact came first.
fn conflict_key(c: &Conflict) -> String {
    let (x, y) = if c.a.link < c.b.link {
        (&c.a.link, &c.b.link)
    } else {
        (&c.b.link, &c.a.link)
    };
    format!("conflict:{x}|{y}")
}

/// Each conflict's proposed resolution, as a draft with its verdict.
fn contradiction_drafts(
    cx: &mut Cx,
    nx: &mut Nexus,
    found: &[Conflict],
) -> KipResult<Vec<(Draft, Verdict)>> {
    cx.step("contradictions", 0, 0);
    let resolutions = cx.reasoner.current_fact(&mut Look(nx), found)?;
    let mut drafts = Vec::new();
    for (c, r) in found.iter().zip(resolutions) {
        let (commands, params) = resolution_commands(c, r.verdict, &cx.opts.now, &r.rationale);
        drafts.push((
            Draft {
                class: "contradiction".into(),
                key: conflict_key(c),
                title: format!(
                    "{} {}: \"{}\" vs \"{}\" → {}",
                    c.subject,
                    c.predicate,
                    c.a.object,
                    c.b.object,
                    r.verdict.as_str()
                ),
                commands,
                params,
                rationale: format!("{} ({})", r.rationale, c.slot),
                evidence: vec![c.a.link.clone(), c.b.link.clone()],
                confidence: r.confidence,
            },
            r.verdict,
        ));
    }
    Ok(drafts)
}

fn phase9(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let found = conflicts(nx, None)?;
    let drafts = contradiction_drafts(cx, nx, &found)?;
    let verdicts: Vec<Verdict> = drafts.iter().map(|(_, v)| *v).collect();
    let keys = stage(cx, nx, drafts.into_iter().map(|(d, _)| d).collect())?;
    for (c, verdict) in found.iter().zip(verdicts) {
        let key = conflict_key(c);
        let Some((proposal, item)) = keys.get(&key) else {
            continue;
        };
        let id = |l: &str| store::ids::parse_element_id(l).unwrap_or(0);
        let subject: i64 = nx
            .conn()
            .query_row(
                "SELECT subject FROM propositions WHERE id = ?1",
                [id(&c.a.link)],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0);
        nx.conn().execute(
            "INSERT INTO contradictions(run, found_at, subject, predicate, slot, fact_a, fact_b, detail, status, resolution, proposal, item) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'open', ?9, ?10, ?11)",
            params![cx.run, store::now(), subject, c.predicate, c.slot, id(&c.a.link), id(&c.b.link), serde_json::to_string(c).unwrap_or_default(), verdict.as_str(), proposal, item],
        )?;
        cx.line(format!(
            "Contradiction: {} {} \"{}\" (observed {}) vs \"{}\" (observed {})",
            c.subject,
            c.predicate,
            c.a.object,
            c.a.observed_at.as_deref().unwrap_or("?"),
            c.b.object,
            c.b.observed_at.as_deref().unwrap_or("?")
        ));
    }
    cx.count("contradictions", found.len() as i64);
    if found.is_empty() {
        cx.line("No contradictions".into());
    }
    Ok(())
}

// ---------------------------------------------------------------- phase 10

/// Words of predicates that co-occurrence can support: weak, associative
/// relations (an interest, a use, a collaboration).
const ASSOCIATIVE_WORDS: &[&str] = &[
    "related",
    "associated",
    "interested",
    "interest",
    "uses",
    "use",
    "works",
    "mentions",
    "involves",
    "participates",
    "collaborates",
    "attends",
    "frequents",
    "likes",
    "enjoys",
    "studies",
    "practises",
    "practices",
    "plays",
    "follows",
    "discusses",
    "visits",
];

/// Words of relations co-occurrence never supports: family, identity,
/// origin and other facts that need to be said, not inferred.
const NEVER_INFERRED_WORDS: &[&str] = &[
    "married",
    "spouse",
    "husband",
    "wife",
    "partner",
    "parent",
    "child",
    "son",
    "daughter",
    "father",
    "mother",
    "sibling",
    "brother",
    "sister",
    "family",
    "relative",
    "grandparent",
    "grandchild",
    "born",
    "birth",
    "identity",
    "same",
    "alias",
    "is",
    "owns",
    "employed",
];

/// Whether co-occurrence may propose this predicate: the schema says so
/// (`associative: true`), or its name reads as a weak association and
/// never as a family, identity or origin relation.
fn associative(name: &str, attrs: &Value) -> bool {
    if let Some(b) = attrs.get("associative").and_then(Value::as_bool) {
        return b;
    }
    let words: Vec<String> = name
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .collect();
    !words
        .iter()
        .any(|w| NEVER_INFERRED_WORDS.contains(&w.as_str()))
        && words
            .iter()
            .any(|w| ASSOCIATIVE_WORDS.contains(&w.as_str()))
}

fn phase10(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    // 10A: implicit connections, only through registered predicates
    cx.step("implicit connections", 0, 0);
    let mut pairs: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for ev in recent_events(cx, nx)? {
        for p in &ev.participants {
            for k in &ev.key_concepts {
                if k != p {
                    pairs
                        .entry((p.clone(), k.clone()))
                        .or_default()
                        .push(ev.id.clone());
                }
            }
        }
    }
    let preds: Vec<(String, Value)> = predicates(nx)?;
    let mut drafts = Vec::new();
    for ((person, concept), evs) in pairs.into_iter().filter(|(_, e)| e.len() >= 5) {
        cx.cancelled()?;
        let st = find(
            nx,
            r#"FIND(?x.type) WHERE { ?x {name: :n} } LIMIT 2"#,
            json!({"n": person}),
        )?;
        let ot = find(
            nx,
            r#"FIND(?x.type) WHERE { ?x {name: :n} } LIMIT 2"#,
            json!({"n": concept}),
        )?;
        let (Some(st), Some(ot)) = (
            strs(Some(&st)).first().cloned(),
            strs(Some(&ot)).first().cloned(),
        ) else {
            continue;
        };
        for (pn, attrs) in &preds {
            if STRUCTURAL.contains(&pn.as_str()) || pn == "knows" || !associative(pn, attrs) {
                continue;
            }
            let subj_ok = strs(attrs.get("subject_types")).contains(&st);
            let obj_ok = strs(attrs.get("object_types")).contains(&ot);
            if !(subj_ok && obj_ok) {
                continue;
            }
            let text = format!(
                r#"FIND(COUNT(?l)) WHERE {{ ?l ({{type: :st, name: :sn}}, {}, {{type: :ot, name: :on}}) }}"#,
                q(pn)
            );
            let have = find(
                nx,
                &text,
                json!({"st": st, "sn": person, "ot": ot, "on": concept}),
            )?;
            if count_of(&have) > 0 {
                continue;
            }
            // never a second value of a single-valued predicate
            if attrs.get("cardinality").and_then(Value::as_str) == Some("single") {
                let text = format!(
                    r#"FIND(COUNT(?l)) WHERE {{ ?l ({{type: :st, name: :sn}}, {}, ?o) FILTER(IS_NULL(?l.metadata.superseded) || ?l.metadata.superseded != true) }}"#,
                    q(pn)
                );
                let any = find(nx, &text, json!({"st": st, "sn": person}))?;
                if count_of(&any) > 0 {
                    continue;
                }
            }
            drafts.push(Draft {
                class: "connection".into(),
                key: format!("connect:{st}:{person}:{pn}:{ot}:{concept}"),
                title: format!("{person} {pn} {concept}?"),
                commands: vec![format!(
                    r#"UPSERT {{
  PROPOSITION ?link {{
    ({{type: :st, name: :sn}}, {}, {{type: :ot, name: :on}})
  }}
}}
WITH METADATA {{ source: "CrossDomainInference", author: "$system", confidence: 0.6, created_at: :ts }}"#,
                    q(pn)
                )],
                params: pm(json!({"st": st, "sn": person, "ot": ot, "on": concept, "ts": cx.opts.now})),
                rationale: format!("{} Events involve {person} and {concept}, and `{pn}` links a {st} to a {ot}; there is no such link yet", evs.len()),
                evidence: evs.iter().take(10).cloned().collect(),
                confidence: 0.6,
            });
        }
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("connections", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed {n} implicit connections from shared Events"
        ));
    }
    // 10C: belief trajectories
    cx.step("belief trajectories", 0, 0);
    let v = find(
        nx,
        r#"FIND(?link, ?s, ?o) WHERE { ?link (?s, ?p, ?o) FILTER(?link.metadata.superseded == true) } LIMIT 200"#,
        json!({}),
    )?;
    let mut n = 0;
    for r in rows(&v, 3) {
        n += 1;
        cx.line(format!(
            "Trajectory: {} {} \"{}\" superseded by {} on {}",
            s(&r[1], &["name"]),
            s(&r[0], &["predicate"]),
            s(&r[2], &["name"]),
            s(&r[0], &["metadata", "superseded_by"]),
            s(&r[0], &["metadata", "superseded_at"])
        ));
    }
    cx.count("superseded", n);
    Ok(())
}

// ---------------------------------------------------------------- phase 11

fn phase11(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("domain sizes", 0, 0);
    let v = find(
        nx,
        r#"FIND(?d) WHERE { ?d {type: "Domain"} } LIMIT 500"#,
        json!({}),
    )?;
    let mut drafts = Vec::new();
    let (mut small, mut large) = (Vec::new(), Vec::new());
    for d in v.as_array().cloned().unwrap_or_default() {
        let name = s(&d, &["name"]);
        if SYSTEM_DOMAINS.contains(&name.as_str()) || s(&d, &["attributes", "status"]) == "archived"
        {
            continue;
        }
        let c = find(
            nx,
            r#"FIND(COUNT(?n)) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: :d}) }"#,
            json!({"d": name}),
        )?;
        let n = count_of(&c);
        if n == 0 {
            drafts.push(Draft {
                class: "domain".into(),
                key: format!("archive-domain:{}", s(&d, &["id"])),
                title: format!("Archive the empty domain {name}"),
                commands: vec![
                    r#"UPSERT {
  CONCEPT ?empty_domain {
    {type: "Domain", name: :domain_name}
    SET ATTRIBUTES { status: "archived", archived_at: :ts }
    SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) }
  }
}
WITH METADATA { source: "DomainHealthCheck", author: "$system", created_at: :ts }"#
                        .to_string(),
                ],
                params: pm(json!({"domain_name": name, "ts": cx.opts.now})),
                rationale: "a domain with no members misroutes nothing but clutters the primer"
                    .into(),
                evidence: vec![s(&d, &["id"])],
                confidence: 0.6,
            });
        } else if n <= 2 {
            small.push(format!("{name} ({n})"));
        } else if n > 100 {
            large.push(format!("{name} ({n})"));
        }
        if s(&d, &["attributes", "description"]).is_empty() && n > 0 {
            let m = find(
                nx,
                r#"FIND(?n.type) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: :d}) } LIMIT 500"#,
                json!({"d": name}),
            )?;
            let mut types: BTreeMap<String, usize> = BTreeMap::new();
            for t in strs(Some(&m)) {
                *types.entry(t).or_default() += 1;
            }
            let mut tv: Vec<(String, usize)> = types.into_iter().collect();
            tv.sort_by_key(|x| std::cmp::Reverse(x.1));
            let summary = format!(
                "{n} members, mostly {}.",
                tv.iter()
                    .take(3)
                    .map(|(t, c)| format!("{t} ({c})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            drafts.push(Draft {
                class: "domain".into(),
                key: format!("describe-domain:{}", s(&d, &["id"])),
                title: format!("Describe the domain {name}"),
                commands: vec![r#"UPSERT { CONCEPT ?d { {type: "Domain", name: :domain_name} SET ATTRIBUTES { description: :summary } } } WITH METADATA { source: "DomainHealthCheck", author: "$system", confidence: 0.9, created_at: :ts }"#.to_string()],
                params: pm(json!({"domain_name": name, "summary": summary, "ts": cx.opts.now})),
                rationale: "the primer's domain map is built from descriptions; this one has none".into(),
                evidence: vec![s(&d, &["id"])],
                confidence: 0.7,
            });
        }
    }
    if !small.is_empty() {
        cx.report.recommendations.push(format!(
            "Small domains, keep if meaningful or merge: {}",
            small.join(", ")
        ));
    }
    if !large.is_empty() {
        cx.report.recommendations.push(format!(
            "Large domains, consider splitting: {}",
            large.join(", ")
        ));
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("domain_proposals", n as i64);
    cx.line(format!(
        "Domain health: {} small, {} large, {n} proposals",
        small.len(),
        large.len()
    ));
    Ok(())
}

// ---------------------------------------------------------------- phase 12

fn phase12(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    let cap = cx.opts.params.cleanup_cap;
    let mut deleted = 0usize;
    let mut held = Vec::new();
    let mut held_ids: HashSet<String> = HashSet::new();
    let mut suspicious = Vec::new();
    let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
    for t in concept_types(nx)? {
        if t == "Domain" || deleted >= cap {
            continue;
        }
        cx.cancelled()?;
        cx.step(&format!("expired {t} nodes"), deleted as u64, cap as u64);
        let v = find(
            nx,
            r#"FIND(?n) WHERE {
  ?n {type: :type}
  FILTER(IS_NOT_NULL(?n.metadata.expires_at))
  FILTER(?n.metadata.expires_at < :now)
  FILTER(?n.name != "$self" && ?n.name != "$system")
} LIMIT 200"#,
            json!({"type": t, "now": cx.opts.now}),
        )?;
        for n in v.as_array().cloned().unwrap_or_default() {
            if deleted >= cap {
                break;
            }
            let name = s(&n, &["name"]);
            let id = s(&n, &["id"]);
            let attrs = n.get("attributes").cloned().unwrap_or(Value::Null);
            let status = s(&attrs, &["status"]);
            let tier = s(&n, &["metadata", "memory_tier"]);
            let exp = s(&n, &["metadata", "expires_at"]);
            let whitelisted = matches!(t.as_str(), "Event" | "Experience" | "ExperienceStep")
                || (t == "SleepTask" && matches!(status.as_str(), "completed" | "failed"))
                || (t == "Commitment"
                    && matches!(status.as_str(), "fulfilled" | "cancelled" | "expired"))
                || tier == "short-term";
            if !whitelisted {
                suspicious.push(format!(
                    "{t}:{name} carries expires_at {exp} but is not TTL-deletable"
                ));
                continue;
            }
            let cs = s(&attrs, &["consolidation_status"]);
            // a landmark is autobiographical: promoted, never reclaimed
            let deps = dependents(nx, &id)?;
            if t == "Event" {
                let salience = attrs
                    .get("salience_score")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                let citing = citing_insights(&deps);
                if salience >= LANDMARK_SALIENCE || citing >= 2 {
                    let why = if salience >= LANDMARK_SALIENCE {
                        format!("salience {salience} ≥ {LANDMARK_SALIENCE}")
                    } else {
                        format!("cited by {citing} Insights or milestones")
                    };
                    promote_landmark(cx, nx, &id, &format!("{t}:{name}"), &why)?;
                    cx.count("landmarks_promoted", 1);
                    continue;
                }
            }
            let pending =
                t == "Event" && !matches!(cs.as_str(), "completed" | "archived" | "consolidated");
            // sole evidence of another concept, by element id
            let sole = if pending {
                None
            } else {
                sole_evidence_of(nx, &deps)?
            };
            if pending || sole.is_some() {
                let why = match &sole {
                    Some(k) => format!("sole evidence of {k}"),
                    None => format!(
                        "consolidation {}",
                        if cs.is_empty() { "pending" } else { &cs }
                    ),
                };
                // held items keep living: their TTL and their links' move on
                let until = shift(&cx.opts.now, cx.opts.params.archive_ttl_days);
                extend_ttl(cx, nx, &id, &until, &why)?;
                held_ids.insert(id.clone());
                held.push(format!(
                    "{t}:{name} (expired {exp}, {why}; kept until {until})"
                ));
                continue;
            }
            let inputs = json!({"type": t, "name": name, "expires_at": exp, "status": status, "consolidation_status": cs, "memory_tier": tier, "now": cx.opts.now});
            note(
                nx,
                &id,
                &format!("{t}:{name}"),
                cx.run,
                "deleted",
                "TTL reclamation (expires_at passed, TTL-deletable, consolidated, not sole evidence)",
                &inputs,
            )?;
            write(
                cx,
                nx,
                r#"DELETE CONCEPT ?n DETACH
WHERE {
  ?n {type: :type, name: :name}
  FILTER(IS_NOT_NULL(?n.metadata.expires_at))
  FILTER(?n.metadata.expires_at < :now)
}"#,
                json!({"type": t, "name": name, "now": cx.opts.now}),
                &format!("TTL reclamation: expired {exp}"),
            )?;
            deleted += 1;
            *by_type.entry(t.clone()).or_default() += 1;
        }
    }
    // 12D: expired links, one predicate at a time
    let mut links = 0usize;
    for (p, _) in predicates(nx)? {
        if deleted + links >= cap {
            break;
        }
        let text = format!(
            r#"FIND(?link, ?s, ?o) WHERE {{
  ?link (?s, {}, ?o)
  FILTER(IS_NOT_NULL(?link.metadata.expires_at))
  FILTER(?link.metadata.expires_at < :now)
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
}} LIMIT 200"#,
            q(&p)
        );
        let v = find(nx, &text, json!({"now": cx.opts.now}))?;
        for r in rows(&v, 3) {
            if deleted + links >= cap {
                break;
            }
            let id = s(&r[0], &["id"]);
            let label = format!("{} {} {}", s(&r[1], &["name"]), p, s(&r[2], &["name"]));
            let ends = [s(&r[1], &["id"]), s(&r[2], &["id"])];
            if ends.iter().any(|e| held_ids.contains(e)) {
                let until = shift(&cx.opts.now, cx.opts.params.archive_ttl_days);
                extend_ttl(cx, nx, &id, &until, "its node is held back")?;
                held.push(format!(
                    "link {label} (its node is held back; kept until {until})"
                ));
                continue;
            }
            if s(&r[1], &["type"]) == "Event"
                && !matches!(
                    s(&r[1], &["attributes", "consolidation_status"]).as_str(),
                    "completed" | "archived" | "consolidated"
                )
            {
                held.push(format!("link {label} (its Event is not consolidated)"));
                continue;
            }
            let exp = s(&r[0], &["metadata", "expires_at"]);
            note(
                nx,
                &id,
                &label,
                cx.run,
                "deleted",
                "TTL reclamation of an expired link",
                &json!({"expires_at": exp, "now": cx.opts.now}),
            )?;
            write(
                cx,
                nx,
                r#"DELETE PROPOSITIONS ?link WHERE { ?link (id: :id) }"#,
                json!({"id": id}),
                &format!("TTL reclamation: link expired {exp}"),
            )?;
            links += 1;
        }
    }
    for s in &suspicious {
        cx.report
            .issues
            .push(format!("Suspicious TTL (not deleted): {s}"));
    }
    for h in &held {
        cx.progress(Some(format!("held: {h}")), false);
    }
    if !held.is_empty() {
        cx.report.issues.push(format!(
            "{} expired elements held back: {}",
            held.len(),
            held.join("; ")
        ));
    }
    cx.count("deleted_nodes", deleted as i64);
    cx.count("deleted_links", links as i64);
    cx.count("held", held.len() as i64);
    cx.line(format!(
        "Physical cleanup: hard-deleted {deleted} expired nodes{} and {links} links; {} held",
        if by_type.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                by_type
                    .iter()
                    .map(|(t, n)| format!("{n} {t}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        held.len()
    ));
    Ok(())
}

/// Salience at which an Event is a landmark (5A).
pub const LANDMARK_SALIENCE: f64 = 90.0;

/// The concepts that cite an element as their evidence (`derived_from`
/// it), by element id.
fn dependents(nx: &mut Nexus, id: &str) -> KipResult<Vec<Value>> {
    let v = find(
        nx,
        r#"FIND(?k) WHERE { ?e {id: :id} (?k, "derived_from", ?e) } LIMIT 200"#,
        json!({"id": id}),
    )?;
    Ok(v.as_array().cloned().unwrap_or_default())
}

/// How many of them are Insights or GrowthMilestone Events.
fn citing_insights(deps: &[Value]) -> usize {
    deps.iter()
        .filter(|k| {
            s(k, &["type"]) == "Insight"
                || (s(k, &["type"]) == "Event"
                    && s(k, &["attributes", "event_class"]) == "GrowthMilestone")
        })
        .count()
}

/// The first of them whose only `derived_from` evidence is this element
/// (counted by element id, so a same-name concept of another type does not
/// stand in for it).
fn sole_evidence_of(nx: &mut Nexus, deps: &[Value]) -> KipResult<Option<String>> {
    for k in deps {
        let kid = s(k, &["id"]);
        let c = find(
            nx,
            r#"FIND(COUNT(?src)) WHERE { ?k {id: :k} (?k, "derived_from", ?src) }"#,
            json!({"k": kid}),
        )?;
        if count_of(&c) <= 1 {
            return Ok(Some(format!("{}:{}", s(k, &["type"]), s(k, &["name"]))));
        }
    }
    Ok(None)
}

/// Marks an Event long-term and strips its TTL (5A landmark promotion).
fn promote_landmark(
    cx: &mut Cx,
    nx: &mut Nexus,
    id: &str,
    label: &str,
    why: &str,
) -> KipResult<()> {
    note(
        nx,
        id,
        label,
        cx.run,
        "promoted",
        &format!("landmark ({why}): memory_tier long-term, TTL stripped, never reclaimed"),
        &json!({"why": why, "now": cx.opts.now}),
    )?;
    write(
        cx,
        nx,
        r#"UPDATE ?e SET METADATA { memory_tier: "long-term" } WHERE { ?e {id: :id} }"#,
        json!({"id": id}),
        &format!("landmark promotion: {why}"),
    )?;
    write(
        cx,
        nx,
        r#"DELETE METADATA {"expires_at"} FROM ?e WHERE { ?e {id: :id} }"#,
        json!({"id": id}),
        &format!("landmark promotion: {why}"),
    )?;
    cx.progress(Some(format!("landmark kept: {label} ({why})")), false);
    Ok(())
}

/// Moves an element's `expires_at` to `until` (a held item is not lost to
/// the next cycle either).
fn extend_ttl(cx: &Cx, nx: &mut Nexus, id: &str, until: &str, why: &str) -> KipResult<()> {
    let target = if id.starts_with("P:") {
        r#"UPDATE ?x SET METADATA { expires_at: :until } WHERE { ?x (id: :id) }"#
    } else {
        r#"UPDATE ?x SET METADATA { expires_at: :until } WHERE { ?x {id: :id} }"#
    };
    write(
        cx,
        nx,
        target,
        json!({"id": id, "until": until}),
        &format!("TTL extended: held back ({why})"),
    )?;
    Ok(())
}

// ---------------------------------------------------------------- phase 13

fn phase13(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("maintenance log", 0, 0);
    // captured writes of the reasoner (LLM tool calls) become proposal items
    let captured = cx.reasoner.captured();
    if !captured.is_empty() {
        let drafts = captured
            .into_iter()
            .map(|w| Draft {
                class: "llm".into(),
                // the same write asked twice is one item
                key: format!(
                    "llm:{}",
                    similarity::normalise(&format!(
                        "{} {}",
                        w.command,
                        Value::Object(w.parameters.clone())
                    ))
                ),
                title: w
                    .command
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(80)
                    .collect(),
                commands: vec![w.command],
                params: w.parameters,
                rationale: w.rationale,
                evidence: vec![],
                confidence: 0.5,
            })
            .collect();
        stage(cx, nx, drafts)?;
    }
    // later phases (decay, cleanup) may have moved what earlier items were
    // previewed on: preview this run's items again on the final state
    if let Some(pid) = cx.report.proposal {
        cx.step("re-checking proposal items", 0, 0);
        let (_, dropped) = {
            let c = &*cx;
            proposals::refresh_in_group(nx, pid, true, &mut |n, total| {
                c.step("re-checking proposal items", n as u64, total as u64)
            })?
        };
        if dropped > 0 {
            cx.count("dropped", dropped as i64);
        }
    }
    let mut processed = 0;
    for p in &cx.report.phases {
        processed += p
            .counts
            .iter()
            .filter(|(k, _)| !k.starts_with("health."))
            .map(|(_, v)| *v)
            .sum::<i64>();
    }
    let entry = json!({
        "timestamp": cx.opts.now,
        "trigger": cx.opts.trigger,
        "scope": cx.opts.scope.as_str(),
        "run": cx.run,
        "actions_taken": cx.report.phases.iter().flat_map(|p| p.lines.iter().cloned()).take(12).collect::<Vec<_>>().join("; "),
        "items_processed": processed,
        "issues_found": cx.report.issues.iter().take(10).cloned().collect::<Vec<_>>(),
        "next_recommendations": cx.report.recommendations.iter().take(10).cloned().collect::<Vec<_>>(),
        "proposal": cx.report.proposal,
    });
    for attempt in 0..2 {
        let v = find(
            nx,
            r#"FIND(?system.attributes.maintenance_log, ?system.metadata._version) WHERE { ?system {type: "Person", name: "$system"} }"#,
            json!({}),
        )?;
        let row = v
            .as_array()
            .and_then(|a| a.first())
            .cloned()
            .unwrap_or(Value::Null);
        let mut log: Vec<Value> = row
            .get(0)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let version = row.get(1).and_then(Value::as_i64).unwrap_or(1);
        log.push(entry.clone());
        if log.len() > 50 {
            log.drain(..log.len() - 50);
        }
        let r = write(
            cx,
            nx,
            r#"UPSERT {
  CONCEPT ?system {
    {type: "Person", name: "$system"}
    EXPECT VERSION :v
    SET ATTRIBUTES { last_sleep_cycle: :current_timestamp, maintenance_log: :appended_maintenance_log }
  }
}
WITH METADATA { source: "SleepCycle", author: "$system", created_at: :current_timestamp }"#,
            json!({"v": version, "current_timestamp": cx.opts.now, "appended_maintenance_log": log}),
            "maintenance log entry of the cycle",
        );
        match r {
            Ok(_) => break,
            Err(e) if e.code == ErrorCode::VersionConflict && attempt == 0 => continue,
            Err(e) => return Err(e),
        }
    }
    cx.line(format!(
        "Logged the cycle to $system.maintenance_log{}",
        cx.report
            .proposal
            .map(|p| format!("; proposal #{p} awaits approval"))
            .unwrap_or_default()
    ));
    Ok(())
}
