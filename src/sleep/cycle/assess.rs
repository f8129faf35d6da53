//! Phase 1: state assessment, salience scoring, and what a daydream leaves for the next full cycle.

use super::context::*;

/// A metric off target, as the report's Issues list says it.
pub(super) fn issue_line(m: &crate::sleep::health::Metric) -> String {
    format!(
        "{}: {} (target {}) — {}",
        m.label, m.value, m.target, m.action
    )
}

pub(super) fn assess(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("core structure", 0, 0);
    restore_structure(cx, nx)?;
    cx.step("state assessment", 0, 0);
    // the assessment only reads: it does not hold the write lock
    let (now, stale) = (
        cx.opts.now.clone(),
        cx.opts.params.stale_event_threshold_days,
    );
    let h = cx.unlocked(nx, |nx| crate::sleep::health::assess(nx, &now, stale))?;
    let mut off = 0;
    for m in &h.metrics {
        cx.count(&format!("health.{}", m.key), m.value.round() as i64);
        // (JSON has no NaN: a metric with nothing to average is left out)
        if m.value.is_finite() {
            cx.report.health.insert(m.key.to_string(), m.value);
        }
        if matches!(
            m.status,
            crate::sleep::health::Status::Warn | crate::sleep::health::Status::Bad
        ) {
            off += 1;
            let line = issue_line(m);
            cx.health_issues.push(line.clone());
            cx.report.issues.push(line);
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
    // read and scored without the write lock; written 50 at a time, each
    // Event only if nobody changed or deleted it since it was read
    let v = cx.unlocked(nx, |nx| {
        find(
            nx,
            &format!(
                r#"FIND(?e) WHERE {{ ?e {{type: "Event"}} FILTER(IS_NULL(?e.attributes.salience_score)) }} LIMIT {SCORED_PER_CYCLE}"#
            ),
            json!({}),
        )
    })?;
    let raw = v.as_array().cloned().unwrap_or_default();
    let read: HashMap<String, (String, i64)> = raw
        .iter()
        .map(|e| {
            (
                s(e, &["name"]),
                (
                    s(e, &["id"]),
                    e.pointer("/metadata/_version")
                        .and_then(Value::as_i64)
                        .unwrap_or(0),
                ),
            )
        })
        .collect();
    let events: Vec<EventView> = raw.iter().map(event_view).collect();
    let total = events.len() as u64;
    let mut scored_n = 0;
    for (i, chunk) in events.chunks(SCORE_CHUNK).enumerate() {
        cx.cancelled()?;
        cx.step("salience scoring", (i * SCORE_CHUNK) as u64, total);
        if cx.batched() {
            nx.suspend_group()?;
        }
        let scored = cx.reasoner.salience(&mut Look(nx), chunk)?;
        nx.resume_group()?;
        cx.slice_start = Instant::now();
        for lot in scored.chunks(SCORE_WRITE) {
            cx.yield_lock(nx)?;
            let current = versions(
                nx,
                "concepts",
                lot.iter()
                    .filter_map(|sc| read.get(&sc.name).map(|r| r.0.as_str())),
            )?;
            let lot: Vec<_> = lot
                .iter()
                .filter(|sc| {
                    read.get(&sc.name)
                        .is_some_and(|(id, v)| current.get(id.as_str()) == Some(v))
                })
                .collect();
            if lot.is_empty() {
                continue;
            }
            let mut text = String::from("UPSERT {\n");
            let mut params = Map::new();
            for (j, sc) in lot.iter().enumerate() {
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
                    lot.len(),
                    cx.reasoner.name()
                ),
            )?;
            scored_n += lot.len();
            cx.count("salience_scored", lot.len() as i64);
        }
    }
    if scored_n == 0 {
        cx.count("salience_scored", 0);
    }
    if scored_n > 0 {
        cx.line(format!("Scored salience of {scored_n} Events"));
    }
    // 1B: learning value of the Experiences that have none
    super::learning_value::score_experiences(cx, nx)?;
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

/// Events scored per reasoner call, written per batch, and per cycle at
/// most.
const SCORE_CHUNK: usize = 200;
const SCORE_WRITE: usize = 50;
const SCORED_PER_CYCLE: usize = 20_000;

/// Salience at which a daydream queues an Event for consolidation, and
/// under which it marks one for archival.
pub const DAYDREAM_HIGH: f64 = 80.0;
pub const DAYDREAM_LOW: f64 = 10.0;

/// What a daydream leaves for the next full cycle: Events scored 80+ get a
/// `consolidate_to_semantic` SleepTask (phase 2 of the full cycle takes it
/// up), Events under 10 are marked `archival_candidate`, and the report
/// recommends both. Only unconsolidated Events count; an Event already
/// queued is not queued again.
pub(super) fn daydream_flags(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
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

/// Restores what the cycle relies on from the bootstrap capsules, each on
/// its own: a capsule that cannot be restored is an issue, and the steps
/// that need it fail on their own and are reported (never guessed).
fn restore_structure(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    for m in crate::sleep::structure::missing(nx)? {
        let what = m.elements.join(", ");
        let who = cx.who(format!(
            "restoring missing core structure ({what}) from the {} capsule",
            m.capsule
        ));
        match nx.restore_capsule(m.capsule, &who) {
            Ok(()) => {
                cx.count("structure_restored", m.elements.len() as i64);
                cx.line(format!(
                    "Restored missing core structure from the {} capsule: {what}",
                    m.capsule
                ));
            }
            Err(e) => cx.report.issues.push(format!(
                "Missing core structure {what} could not be restored ({}: {}); the steps that need it are skipped",
                e.code, e.message
            )),
        }
    }
    Ok(())
}
