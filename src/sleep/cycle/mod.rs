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

use super::matcher;
use super::reasoner::*;
use super::similarity;
use crate::Nexus;
use crate::audit::Who;
use crate::kip::{self, ErrorCode, KipError, KipResult};
use crate::review::proposals::{self, Draft};
use crate::store;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

mod assess;
mod batches;
use batches::{locked, slice, versions};
mod classify;
mod completeness;
mod connections;
mod consolidate;
mod contradictions;
mod decay;
mod domains;
mod duplicates;
mod experience_lessons;
mod experiences;
mod fading;
mod finalise;
mod growth_timeline;
mod inbox;
mod learning_value;
mod options;
mod orphans;
mod prospective;
mod reclaim;
mod run_lock;
pub mod secrets;
mod self_model;
mod skill_evidence;
mod skills;
mod tasks;
pub use assess::*;
use classify::*;
use consolidate::*;
pub use contradictions::*;
pub use decay::*;
use duplicates::*;
pub use duplicates::{scored_candidates, why_not_merged};
use inbox::unsorted_drafts;
pub use options::{Options, Params, phase_for_target};
use prospective::*;
pub use reclaim::*;
use skills::*;

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
    /// Per rule of the phase: candidates it saw, proposed and dropped.
    pub rules: BTreeMap<String, RuleCount>,
    /// Transactions the phase committed (it commits between batches, so
    /// agents' writes get in; see `Cx::yield_lock`).
    pub batches: u64,
    /// The longest time the phase held the write lock at once.
    pub longest_hold_ms: u64,
}

/// What one rule did in one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RuleCount {
    pub seen: i64,
    pub proposed: i64,
    pub dropped: i64,
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
    /// The health metrics measured again after the phases (when phase 1
    /// found any off target), by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub health_after: BTreeMap<String, f64>,
    pub recommendations: Vec<String>,
    pub error: Option<String>,
    /// The health metrics measured at the start of the cycle (phase 1),
    /// by key, unrounded: the history the health trend is drawn from.
    pub health: BTreeMap<String, f64>,
    /// The parameters the cycle ran with.
    pub params: Params,
    /// What the reasoner's calls cost (an LLM's tokens per call and in
    /// all, its budgets, the judgements that fell back).
    pub reasoner_usage: Option<Value>,
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
        if let Some(u) = &self.reasoner_usage {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let b = |k: &str| {
                u.get(k)
                    .and_then(Value::as_u64)
                    .map_or("none".to_string(), |x| x.to_string())
            };
            s.push_str(&format!(
                "\n## Reasoner cost\n- {} calls, {} prompt + {} completion tokens (budget {} in all, {} completion); {} judgements answered by the model, {} by the heuristic ({} because a budget was spent)\n",
                u.get("calls").and_then(Value::as_array).map_or(0, Vec::len),
                n("prompt_tokens"),
                n("completion_tokens"),
                b("token_budget"),
                b("output_budget"),
                n("answered"),
                n("fell_back"),
                n("over_budget")
            ));
        }
        let rules: Vec<(u8, &String, &RuleCount)> = self
            .phases
            .iter()
            .flat_map(|p| p.rules.iter().map(move |(r, c)| (p.phase, r, c)))
            .collect();
        if !rules.is_empty() {
            s.push_str("\n## Rules (candidates seen / proposed / dropped)\n");
            for (phase, r, c) in rules {
                s.push_str(&format!(
                    "- phase {phase}, {r}: {} / {} / {}\n",
                    c.seen, c.proposed, c.dropped
                ));
            }
        }
        if let Some(p) = self.proposal {
            s.push_str(&format!(
                "\n## Awaiting approval\n- Proposal #{p}: {} items (the console's Reflections pane, or `somnus proposals show {p}`)\n",
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
    /// When the phase's current transaction began.
    slice_start: Instant,
    /// How long a phase holds the write lock before it commits a batch at
    /// its next yield point.
    slice: std::time::Duration,
    /// The issues phase 1's assessment found, measured again once the
    /// phases are done (the report says what is true after the cycle).
    health_issues: Vec<String>,
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
        // a step repeated for several tasks says it once in the report
        if !self.phase.lines.contains(&l) {
            self.phase.lines.push(l);
        }
    }

    /// One candidate of a rule, proposed or dropped.
    fn rule(&mut self, rule: &str, proposed: bool) {
        let r = self.phase.rules.entry(rule.to_string()).or_default();
        r.seen += 1;
        if proposed {
            r.proposed += 1;
        } else {
            r.dropped += 1;
        }
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

/// A time read as an instant: RFC 3339 with any offset, or a date or a
/// time without an offset, read as UTC. Every time the cycle and `somnus
/// health` compare goes through here, never through string order.
pub fn instant(at: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let at = at.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(at) {
        return Some(t);
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(at, f) {
            return Some(t.and_utc().fixed_offset());
        }
    }
    chrono::NaiveDate::parse_from_str(at, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().fixed_offset())
}

/// `a` is strictly before `b`, both read as instants; None when either is
/// not a time.
pub fn before(a: &str, b: &str) -> Option<bool> {
    Some(instant(a)? < instant(b)?)
}

/// `at` moved by `days` (RFC 3339 in UTC, seconds).
pub fn shift(at: &str, days: i64) -> String {
    instant(at)
        .map(|t| {
            (t + chrono::Duration::days(days))
                .to_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        })
        .unwrap_or_else(|| at.to_string())
}

/// A string bound for a coarse KIP prefilter on times (string order): a
/// day wider than `at` on the side given, so that times written with any
/// offset (±14 h at most) are all read; the exact test is `before`.
pub fn widened(at: &str, later: bool) -> String {
    shift(at, if later { 1 } else { -1 })
}

/// Days from `from` to `to`, read as instants; None if either is not a time.
pub fn days_between(from: &str, to: &str) -> Option<f64> {
    let (a, b) = (instant(from)?, instant(to)?);
    Some((b - a).num_milliseconds() as f64 / 86_400_000.0)
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

/// A read that answers one page and the cursor of the next.
fn find_page(nx: &mut Nexus, text: &str, params: Value) -> KipResult<(Value, Option<String>)> {
    let p = obj(&params);
    let cmd = kip::parse(text, &p)?;
    let who = Who {
        actor: "$system".into(),
        trigger: "sleep".into(),
        reason: None,
    };
    match nx.exec_as(&cmd, text, &who, false, false) {
        Ok(x) => Ok(x),
        Err(e) if e.code == ErrorCode::NotFound => Ok((json!([]), None)),
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
    locked(nx, |nx| {
        Ok(nx.exec_as(&cmd, text, &cx.who(reason), false, false)?.0)
    })
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

/// The kind of fact a predicate states, read from the words of its name:
/// commitments and identity facts do not fade for want of recall (7B);
/// those and Engram's protected categories (preferences, decisions,
/// principles) are never proposed for fact archival.
pub(super) fn category(predicate: &str) -> Option<&'static str> {
    const KINDS: &[(&str, &[&str])] = &[
        (
            "commitment",
            &[
                "commit",
                "committed",
                "commitment",
                "owed",
                "owes",
                "promised",
                "promise",
                "pledged",
            ],
        ),
        (
            "identity",
            &[
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
                "alias",
                "nationality",
                "citizen",
                "named",
            ],
        ),
        (
            "preference",
            &[
                "prefers",
                "prefer",
                "preference",
                "likes",
                "dislikes",
                "favourite",
                "favorite",
            ],
        ),
        (
            "decision",
            &["decided", "decision", "chose", "chosen", "resolved"],
        ),
        (
            "principle",
            &["principle", "believes", "belief", "values", "rule"],
        ),
    ];
    let words: Vec<String> = predicate
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .collect();
    KINDS
        .iter()
        .find(|(_, ws)| words.iter().any(|w| ws.contains(&w.as_str())))
        .map(|(k, _)| *k)
}

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
    nx.set_tick(None);
    stop.store(true, Ordering::SeqCst);
    let _ = heart.join();
    // what the assessment found off target is measured again: a phase may
    // have fixed it ("Scored 18 Events" then "Unscored Events: 18" would
    // contradict itself)
    if failure.is_none() && !cx.health_issues.is_empty() {
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

/// Whether process `pid` (on this machine) is still running.
pub(crate) fn alive(pid: i64) -> bool {
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
    stage_in(cx, nx, drafts, STAGE_BATCH)
}

/// Drafts staged per transaction: a proposal of a hundred items does not
/// hold the write lock while all of them are previewed.
const STAGE_BATCH: usize = 2;

/// Stages drafts `per` at a time, each lot in a transaction of its own
/// (`usize::MAX`: all in the phase's transaction in progress, when what
/// the phase writes next refers to them).
fn stage_in(
    cx: &mut Cx,
    nx: &mut Nexus,
    drafts: Vec<Draft>,
    per: usize,
) -> KipResult<BTreeMap<String, (i64, i64)>> {
    let mut fresh = Vec::new();
    let mut per_class: HashMap<String, usize> = HashMap::new();
    let mut waiting: BTreeMap<String, usize> = BTreeMap::new();
    for d in drafts {
        let n = per_class.entry(d.class.clone()).or_default();
        if *n >= cx.opts.params.proposal_cap {
            *waiting.entry(d.class.clone()).or_default() += 1;
            continue;
        }
        *n += 1;
        fresh.push(d);
    }
    // past the cap: found again, and proposed, by the next cycle
    for (class, n) in waiting {
        cx.count("waiting", n as i64);
        cx.line(format!(
            "{n} more {class} proposals wait for the next cycle (at most {} per class a cycle: proposal_cap)",
            cx.opts.params.proposal_cap
        ));
    }
    if fresh.is_empty() {
        return Ok(BTreeMap::new());
    }
    let title = format!(
        "Reflection of sleep run #{} ({})",
        cx.run,
        cx.opts.scope.as_str()
    );
    let mut keys = BTreeMap::new();
    let mut rest = fresh;
    while !rest.is_empty() {
        let lot: Vec<Draft> = rest.drain(..per.min(rest.len())).collect();
        if per != usize::MAX {
            cx.yield_lock(nx)?;
        }
        let proposal = cx.report.proposal;
        let out = locked(nx, |nx| {
            proposals::stage(nx, Some(cx.run), "$system", &title, lot, proposal)
        })?;
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
        keys.extend(out.keys);
    }
    Ok(keys)
}
