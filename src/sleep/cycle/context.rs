//! What every phase works with: the cycle's context (`Cx`: the run, its
//! options and reasoner, progress, cancel, the report in progress), the
//! KIP helpers phases read and write through, staging into the run's
//! proposal, and batches: how a phase keeps the write lock short. A phase
//! that only proposes reads unlocked and stages in short transactions
//! (`locked`); a phase that writes commits at yield points
//! (`Cx::yield_lock`), reads what it may without the lock
//! (`Cx::unlocked`), and writes only what is unchanged since it was read
//! (`versions`).

pub(crate) use super::options::Options;
pub(crate) use super::report::*;
pub(crate) use crate::Nexus;
pub(crate) use crate::audit::Who;
pub(crate) use crate::kip::{self, ErrorCode, KipError, KipResult};
pub(crate) use crate::review::proposals::{self, Draft};
pub(crate) use crate::sleep::clock::*;
pub(crate) use crate::sleep::matcher;
pub(crate) use crate::sleep::reasoner::*;
pub(crate) use crate::sleep::similarity;
pub(crate) use crate::store;
pub(crate) use serde_json::{Map, Value, json};
pub(crate) use std::collections::{BTreeMap, HashMap, HashSet};
pub(crate) use std::sync::atomic::{AtomicBool, Ordering};
pub(crate) use std::sync::{Arc, Mutex};
pub(crate) use std::time::Instant;

pub(crate) struct Beat {
    pub(crate) run: i64,
    pub(crate) started: Instant,
    pub(crate) phase: u8,
    /// The running phase's name.
    pub(crate) name: &'static str,
    pub(crate) step: String,
    pub(crate) done: u64,
    pub(crate) total: u64,
    /// When the last progress event went out.
    pub(crate) last: Instant,
}

impl Beat {
    /// A progress event for where the cycle is now (and marks it sent).
    pub(crate) fn event(&mut self, log: Option<String>, phase_done: bool) -> Progress {
        self.last = Instant::now();
        Progress {
            run: self.run,
            phase: self.phase,
            name: self.name,
            step: self.step.clone(),
            done: self.done,
            total: self.total,
            elapsed_ms: self.started.elapsed().as_millis() as u64,
            log,
            phase_done,
        }
    }
}

pub(crate) struct Cx<'a> {
    pub(crate) run: i64,
    pub(crate) opts: &'a Options,
    pub(crate) reasoner: &'a mut dyn Reasoner,
    pub(crate) beat: Arc<Mutex<Beat>>,
    pub(crate) tx: Option<Arc<Mutex<std::sync::mpsc::Sender<Progress>>>>,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) report: Report,
    pub(crate) phase: PhaseReport,
    /// The lookback window's Events, once read.
    pub(crate) recent: Option<Vec<EventView>>,
    /// The stale Events phase 5 read this cycle.
    pub(crate) stale: Option<Vec<EventView>>,
    /// The Events phase 5 proposed archived this cycle as a log's regular
    /// entries (a status written every half hour): who they name is no
    /// link worth proposing.
    pub(crate) regular_entries: std::collections::HashSet<String>,
    /// When the phase's current transaction began.
    pub(crate) slice_start: Instant,
    /// How long a phase holds the write lock before it commits a batch at
    /// its next yield point.
    pub(crate) slice: std::time::Duration,
    /// The issues phase 1's assessment found, measured again once the
    /// phases are done (the report says what is true after the cycle).
    pub(crate) health_issues: Vec<String>,
}

pub(crate) fn send(tx: &Option<Arc<Mutex<std::sync::mpsc::Sender<Progress>>>>, p: Progress) {
    if let Some(t) = tx
        && let Ok(t) = t.lock()
    {
        let _ = t.send(p);
    }
}

impl Cx<'_> {
    pub(crate) fn progress(&self, log: Option<String>, phase_done: bool) {
        let event = match self.beat.lock() {
            Ok(mut b) => b.event(log, phase_done),
            Err(_) => return,
        };
        send(&self.tx, event);
    }

    pub(crate) fn step(&self, step: &str, done: u64, total: u64) {
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

    pub(crate) fn line(&mut self, l: String) {
        self.progress(Some(l.clone()), false);
        // a step repeated for several tasks says it once in the report
        if !self.phase.lines.contains(&l) {
            self.phase.lines.push(l);
        }
    }

    /// One candidate of a rule, proposed or dropped.
    pub(crate) fn rule(&mut self, rule: &str, proposed: bool) {
        let r = self.phase.rules.entry(rule.to_string()).or_default();
        r.seen += 1;
        if proposed {
            r.proposed += 1;
        } else {
            r.dropped += 1;
        }
    }

    pub(crate) fn count(&mut self, k: &str, n: i64) {
        *self.phase.counts.entry(k.to_string()).or_default() += n;
    }

    pub(crate) fn cancelled(&self) -> KipResult<()> {
        if self.cancel.load(Ordering::SeqCst) {
            Err(KipError::new(
                ErrorCode::ExecutionTimeout,
                "the sleep cycle was cancelled",
            ))
        } else {
            Ok(())
        }
    }

    pub(crate) fn who(&self, reason: impl Into<String>) -> Who {
        Who {
            actor: "$system".into(),
            trigger: format!("sleep #{} phase {}", self.run, self.phase.phase),
            reason: Some(reason.into()),
        }
    }

    pub(crate) fn days_ago(&self, days: i64) -> String {
        shift(&self.opts.now, -days)
    }
}

pub(crate) fn obj(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

pub(crate) fn pm(v: Value) -> Map<String, Value> {
    obj(&v)
}

/// A read through KIP, inside the phase's transaction.
pub(crate) fn find(nx: &mut Nexus, text: &str, params: Value) -> KipResult<Value> {
    find_page(nx, text, params).map(|(v, _)| v)
}

/// A read that answers one page and the cursor of the next.
pub(crate) fn find_page(
    nx: &mut Nexus,
    text: &str,
    params: Value,
) -> KipResult<(Value, Option<String>)> {
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
pub(crate) fn count_of(v: &Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_array().and_then(|a| a.first()).and_then(Value::as_i64))
        .unwrap_or(0)
}

/// Rows of a multi-variable FIND (one expression per variable): the
/// engine answers column groups per variable.
pub(crate) fn rows(result: &Value, vars: usize) -> Vec<Vec<Value>> {
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

pub(crate) fn write(
    cx: &Cx,
    nx: &mut Nexus,
    text: &str,
    params: Value,
    reason: &str,
) -> KipResult<Value> {
    let p = obj(&params);
    let cmd = kip::parse(text, &p)?;
    locked(nx, |nx| {
        Ok(nx.exec_as(&cmd, text, &cx.who(reason), false, false)?.0)
    })
}

pub(crate) fn s(v: &Value, path: &[&str]) -> String {
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

pub(crate) fn strs(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn event_view(v: &Value) -> EventView {
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
pub(crate) fn concept_types(nx: &mut Nexus) -> KipResult<Vec<String>> {
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

pub(crate) fn predicates(nx: &mut Nexus) -> KipResult<Vec<(String, Value)>> {
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
pub(crate) const STRUCTURAL: &[&str] = &[
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
pub(crate) const PROTECTED_PREDICATES: &[&str] = &["prefers", "committed_to", "owed_to", "learned"];

/// The kind of fact a predicate states, read from the words of its name:
/// commitments and identity facts do not fade for want of recall (7B);
/// those and Engram's protected categories (preferences, decisions,
/// principles) are never proposed for fact archival.
pub(crate) fn category(predicate: &str) -> Option<&'static str> {
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
pub(crate) const SYSTEM_DOMAINS: &[&str] =
    &["CoreSchema", "Unsorted", "Archived", "System", "SelfModel"];

pub(crate) fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Read access for reasoners (the LLM's `execute_kip` tool): reads run,
/// writes are refused here and captured by the reasoner itself.
pub(crate) struct Look<'a>(pub(crate) &'a mut Nexus);

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
pub(crate) fn stage(
    cx: &mut Cx,
    nx: &mut Nexus,
    drafts: Vec<Draft>,
) -> KipResult<BTreeMap<String, (i64, i64)>> {
    stage_in(cx, nx, drafts, STAGE_BATCH)
}

/// Drafts staged per transaction: a proposal of a hundred items does not
/// hold the write lock while all of them are previewed.
pub(crate) const STAGE_BATCH: usize = 2;

/// Stages drafts `per` at a time, each lot in a transaction of its own
/// (`usize::MAX`: all in the phase's transaction in progress, when what
/// the phase writes next refers to them).
pub(crate) fn stage_in(
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

impl Cx<'_> {
    /// A yield point, where the phase has nothing read but not yet written:
    /// once the phase's transaction has held the write lock for the slice,
    /// its work so far commits as one batch (audited under the run's group,
    /// the run record updated to match), agents' writes waiting on the lock
    /// get in, and the phase goes on in a new transaction. A kill or cancel
    /// loses only the batch in progress; a later cycle picks up where the
    /// committed ones left off (each phase skips what it already did: decay
    /// markers, scores, proposals already staged).
    /// Returns whether it committed (what was read before may have changed
    /// since: a caller holding a read re-reads it).
    pub(crate) fn yield_lock(&mut self, nx: &mut Nexus) -> KipResult<bool> {
        let held = self.slice_start.elapsed();
        if held < self.slice || nx.is_suspended() {
            return Ok(false);
        }
        self.cancelled()?;
        self.phase.batches += 1;
        // the run record says what is committed: the phases done and this
        // one's batches so far
        let mut partial = self.report.clone();
        let mut ph = self.phase.clone();
        ph.lines.push(format!(
            "(in progress: {} batch{} committed)",
            ph.batches,
            if ph.batches == 1 { "" } else { "es" }
        ));
        partial.phases.push(ph);
        nx.db().execute(
            "UPDATE sleep_runs SET report = ?2 WHERE id = ?1",
            crate::args![self.run, partial.to_json().to_string()],
        )?;
        nx.checkpoint(YIELD_PAUSE)?;
        self.slice_start = Instant::now();
        Ok(true)
    }

    /// Runs `f`, which only reads, without holding the write lock: what
    /// the phase wrote so far commits first (as at a yield point).
    pub(crate) fn unlocked<T>(
        &mut self,
        nx: &mut Nexus,
        f: impl FnOnce(&mut Nexus) -> KipResult<T>,
    ) -> KipResult<T> {
        if nx.is_suspended() || !self.batched() {
            return f(nx);
        }
        self.phase.batches += 1;
        nx.suspend_group()?;
        let out = f(nx);
        nx.resume_group()?;
        self.slice_start = Instant::now();
        out
    }

    /// Whether the phase commits in batches (see `slice`).
    pub(crate) fn batched(&self) -> bool {
        self.slice != WHOLE_PHASE
    }
}

/// How long a phase holds the write lock before it commits a batch at its
/// next yield point (`SOMNUS_SLEEP_SLICE_MS` sets it; 0: commit at every
/// yield point; `phase`: no batches, each phase one transaction).
pub(crate) fn slice() -> std::time::Duration {
    match std::env::var("SOMNUS_SLEEP_SLICE_MS").ok().as_deref() {
        Some("phase") => WHOLE_PHASE,
        Some(v) => v
            .parse::<u64>()
            .map(std::time::Duration::from_millis)
            .unwrap_or(DEFAULT_SLICE),
        None => DEFAULT_SLICE,
    }
}

/// The slice that means "no batches".
pub(crate) const WHOLE_PHASE: std::time::Duration = std::time::Duration::MAX;

/// A phase's batches hold the write lock about this long at most.
pub(crate) const DEFAULT_SLICE: std::time::Duration = std::time::Duration::from_millis(8);
/// Between batches the phase waits this long: writers of other processes,
/// which poll for the lock every millisecond, get in.
pub(crate) const YIELD_PAUSE: std::time::Duration = std::time::Duration::from_millis(2);

/// Runs `f` holding the write lock: in a phase that reads unlocked, as a
/// short transaction of its own (left open on failure, so the phase's
/// group rolls it back).
pub(crate) fn locked<T>(
    nx: &mut Nexus,
    f: impl FnOnce(&mut Nexus) -> KipResult<T>,
) -> KipResult<T> {
    if !nx.is_suspended() {
        return f(nx);
    }
    nx.resume_group()?;
    let out = f(nx)?;
    nx.suspend_group()?;
    Ok(out)
}

/// The current version of each of these elements (`C:12`, `P:12:knows`)
/// in `table` (concepts or propositions), by id; one that is gone is
/// missing. A batch read without the write lock writes only what is
/// unchanged since.
pub(crate) fn versions<'a>(
    nx: &Nexus,
    table: &str,
    ids: impl Iterator<Item = &'a str>,
) -> KipResult<HashMap<&'a str, i64>> {
    let mut out = HashMap::new();
    let sql = match table {
        "concepts" => "SELECT version FROM concepts WHERE id = ?1",
        _ => "SELECT version FROM propositions WHERE id = ?1",
    };
    let db = nx.db();
    for id in ids {
        let Some(n) = id.split(':').nth(1).and_then(|n| n.parse::<i64>().ok()) else {
            continue;
        };
        if let Some(v) = db.query_i64(sql, crate::args![n])? {
            out.insert(id, v);
        }
    }
    Ok(out)
}

/// The Events of the lookback window (at most 5,000), read once per run:
/// patterns (phase 5) and connections (phase 10) both work on them, and no
/// phase between them changes an Event.
pub(crate) fn recent_events(cx: &mut Cx, nx: &mut Nexus) -> KipResult<Vec<EventView>> {
    if let Some(r) = &cx.recent {
        return Ok(r.clone());
    }
    let v = find(
        nx,
        r#"FIND(?e) WHERE { ?e {type: "Event"} FILTER(?e.attributes.start_time >= :lookback_start) } LIMIT 5000"#,
        json!({"lookback_start": widened(&cx.days_ago(LOOKBACK_DAYS), false)}),
    )?;
    let from = cx.days_ago(LOOKBACK_DAYS);
    let r: Vec<EventView> = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(event_view)
                .filter(|e| before(&e.start, &from) == Some(false))
                .collect()
        })
        .unwrap_or_default();
    cx.recent = Some(r.clone());
    Ok(r)
}

/// How far back patterns and connections look.
pub(crate) const LOOKBACK_DAYS: i64 = 60;
