//! Memory health: the probes of the sleep-mode assessment, each measured
//! through KIP against the target the maintenance instructions set.

use crate::Nexus;
use crate::kip::{KipError, KipResult};
use crate::protocol::{Outcome, Request};
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Warn,
    Bad,
    /// Observed, no target.
    Info,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Bad => "bad",
            Status::Info => "info",
        }
    }
}

/// One line of the health table.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub key: &'static str,
    pub label: &'static str,
    pub value: f64,
    pub target: &'static str,
    pub status: Status,
    /// What to do when it is off target.
    pub action: &'static str,
    /// The elements behind the number (names), at most a few dozen.
    pub items: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    pub at: String,
    pub metrics: Vec<Metric>,
}

impl Health {
    pub fn get(&self, key: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.key == key)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "at": self.at,
            "metrics": self.metrics.iter().map(|m| json!({
                "key": m.key, "metric": m.label, "value": m.value, "target": m.target,
                "status": m.status.as_str(), "action": m.action, "items": m.items,
            })).collect::<Vec<_>>(),
        })
    }
}

/// The clauses that keep an Event still waiting for consolidation: not
/// archived or consolidated by an earlier cycle (`consolidation_status`,
/// which an archived Event keeps without a `consolidated_to` link), not
/// pinned (kept as it is, never archived). The health metric and phase 5
/// read stale Events through it alike.
pub const STILL_WAITING: &str = r#"FILTER(IS_NULL(?e.attributes.consolidation_status) || (?e.attributes.consolidation_status != "archived" && ?e.attributes.consolidation_status != "completed"))
  FILTER(IS_NULL(?e.metadata.pinned) || ?e.metadata.pinned != true)"#;

fn read(nx: &mut Nexus, cmd: &str, params: Value) -> KipResult<Value> {
    let mut req =
        Request::readonly(cmd).with_params(params.as_object().cloned().unwrap_or_else(Map::new));
    req.actor.id = "$system".into();
    req.actor.trigger = "health".into();
    match nx.execute(&req) {
        crate::Response::Single(Outcome::Ok { result, .. }) => Ok(result),
        // a grounded name that is missing (a core domain gone): nothing
        // matches; the missing structure is its own metric
        crate::Response::Single(Outcome::Err(e)) if e.code == crate::kip::ErrorCode::NotFound => {
            Ok(Value::Array(vec![]))
        }
        crate::Response::Single(Outcome::Err(e)) => Err(e),
        crate::Response::Batch(_) => Err(KipError::internal("unexpected batch answer")),
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .map(|p| {
                            p.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| p.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join(": "),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A metric whose value is how many elements a probe lists, on target
/// while below `limit`.
/// A metric whose value is how many elements a probe lists (or `total`,
/// when the list was cut short: the items are then the first of them), on
/// target while below `limit`.
fn listed(
    key: &'static str,
    label: &'static str,
    limit: f64,
    target: &'static str,
    action: &'static str,
    items: Vec<String>,
    total: Option<f64>,
) -> Metric {
    let value = total.unwrap_or(items.len() as f64).max(items.len() as f64);
    Metric {
        key,
        label,
        value,
        target,
        status: below(value, limit),
        action,
        items,
    }
}

fn below(value: f64, limit: f64) -> Status {
    if value < limit {
        Status::Ok
    } else if value < limit * 2.0 {
        Status::Warn
    } else {
        Status::Bad
    }
}

/// The names of a `FIND(?x.name, ?x.<time>)` answer (one column group:
/// `[name, time]` per element) whose time is before `than`, compared as
/// instants (offsets included).
fn named_before(v: &Value, than: &str) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            r.get(1)
                .and_then(Value::as_str)
                .and_then(|t| super::clock::before(t, than))
                .unwrap_or(false)
        })
        .filter_map(|r| r.get(0).and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The exact number behind a list cut at `limit` (`None` when the list is
/// whole): the count query, without a limit.
fn total_if_cut(
    nx: &mut Nexus,
    listed: usize,
    limit: usize,
    count: &str,
    params: Value,
) -> KipResult<Option<f64>> {
    if listed < limit {
        return Ok(None);
    }
    Ok(read(nx, count, params)?.as_f64())
}

/// Measures the memory at time `now` (RFC 3339) with the instructions'
/// default parameters (stale after 7 days).
pub fn assess(nx: &mut Nexus, now: &str, stale_days: i64) -> KipResult<Health> {
    super::params::check_days("the stale threshold", stale_days).map_err(KipError::constraint)?;
    let cutoff = chrono::DateTime::parse_from_rfc3339(now)
        .map(|t| {
            (t - chrono::Duration::days(stale_days))
                .to_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        })
        .map_err(|e| KipError::syntax(format!("invalid time {now}: {e}")))?;
    let mut metrics = Vec::new();

    // Orphans: concepts in no domain (domains and the system actors excepted).
    let mut orphan_items = Vec::new();
    let mut orphan_total = 0.0;
    let types = strings(&read(
        nx,
        r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} }"#,
        json!({}),
    )?);
    for t in types.iter().filter(|t| t.as_str() != "Domain") {
        let v = read(
            nx,
            r#"FIND(?n.name) WHERE { ?n {type: :t} NOT { (?n, "belongs_to_domain", ?d) } } LIMIT 200"#,
            json!({ "t": t }),
        )?;
        let names = strings(&v);
        let cut = total_if_cut(
            nx,
            names.len(),
            200,
            r#"FIND(COUNT(?n)) WHERE { ?n {type: :t} NOT { (?n, "belongs_to_domain", ?d) } }"#,
            json!({ "t": t }),
        )?;
        let mut kept = 0.0;
        for n in names {
            if !(t == "Person" && (n == "$self" || n == "$system")) {
                orphan_items.push(format!("{t}: {n}"));
                kept += 1.0;
            }
        }
        orphan_total += cut.map(|c| c - (200.0 - kept)).unwrap_or(kept);
    }
    metrics.push(listed(
        "orphans",
        "Orphan count",
        10.0,
        "< 10",
        "Classify or archive",
        orphan_items,
        Some(orphan_total),
    ));

    let unsorted = strings(&read(
        nx,
        r#"FIND(?n.type, ?n.name) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) } LIMIT 500"#,
        json!({}),
    )?);
    let total = total_if_cut(
        nx,
        unsorted.len(),
        500,
        r#"FIND(COUNT(?n)) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Unsorted"}) }"#,
        json!({}),
    )?;
    metrics.push(listed(
        "unsorted",
        "Unsorted backlog",
        20.0,
        "< 20",
        "Reclassify to topic domains",
        unsorted,
        total,
    ));

    // a coarse string prefilter a day wide, then the exact test as instants
    let raw = read(
        nx,
        &format!(
            r#"FIND(?e.name, ?e.attributes.start_time) WHERE {{ ?e {{type: "Event"}} FILTER(?e.attributes.start_time < :cutoff) NOT {{ (?e, "consolidated_to", ?k) }} {STILL_WAITING} }} LIMIT 1000"#
        ),
        json!({ "cutoff": super::clock::widened(&cutoff, true) }),
    )?;
    let listed_n = raw.as_array().map_or(0, Vec::len);
    let stale = named_before(&raw, &cutoff);
    // past the list, counted by the cutoff as written (UTC)
    let total = total_if_cut(
        nx,
        listed_n,
        1000,
        &format!(
            r#"FIND(COUNT(?e)) WHERE {{ ?e {{type: "Event"}} FILTER(?e.attributes.start_time < :cutoff) NOT {{ (?e, "consolidated_to", ?k) }} {STILL_WAITING} }}"#
        ),
        json!({ "cutoff": cutoff }),
    )?;
    metrics.push(listed(
        "stale_events",
        "Stale Events (unconsolidated, older than the threshold)",
        30.0,
        "< 30",
        "Consolidate or archive",
        stale,
        total,
    ));

    let experiences = strings(&read(
        nx,
        r#"FIND(?x.name) WHERE { ?x {type: "Experience"} FILTER(?x.attributes.consolidation_status == "pending" || ?x.attributes.consolidation_status == "partially_consolidated") } LIMIT 500"#,
        json!({}),
    )?);
    let total = total_if_cut(
        nx,
        experiences.len(),
        500,
        r#"FIND(COUNT(?x)) WHERE { ?x {type: "Experience"} FILTER(?x.attributes.consolidation_status == "pending" || ?x.attributes.consolidation_status == "partially_consolidated") }"#,
        json!({}),
    )?;
    metrics.push(listed(
        "pending_experiences",
        "Pending high-value Experiences",
        20.0,
        "< 20",
        "Run semantic/procedural consolidation",
        experiences,
        total,
    ));

    let skills = strings(&read(
        nx,
        r#"FIND(?s.name) WHERE { ?s {type: "Skill"} FILTER(?s.attributes.maturity == "needs_review") } LIMIT 500"#,
        json!({}),
    )?);
    let total = total_if_cut(
        nx,
        skills.len(),
        500,
        r#"FIND(COUNT(?s)) WHERE { ?s {type: "Skill"} FILTER(?s.attributes.maturity == "needs_review") }"#,
        json!({}),
    )?;
    metrics.push(listed(
        "skills_review",
        "Skills needing review",
        10.0,
        "< 10",
        "Validate, refine scope, or deprecate",
        skills,
        total,
    ));

    let strength = read(
        nx,
        r#"FIND(AVG(?l.metadata.memory_strength)) WHERE { ?l (?s, ?p, ?o) FILTER(IS_NOT_NULL(?l.metadata.memory_strength)) } LIMIT 1000000"#,
        json!({}),
    )?;
    let avg_conf = read(
        nx,
        r#"FIND(AVG(?l.metadata.confidence)) WHERE { ?l (?s, ?p, ?o) FILTER(?p != "belongs_to_domain") } LIMIT 1000000"#,
        json!({}),
    )?;
    metrics.push(Metric {
        key: "avg_memory_strength",
        label: "Average memory strength",
        value: strength.as_f64().unwrap_or(f64::NAN),
        target: "observe",
        status: Status::Info,
        action: "Investigate inaccessible clutter; do not infer truth from strength",
        items: vec![],
    });
    metrics.push(Metric {
        key: "avg_confidence",
        label: "Average confidence (links)",
        value: avg_conf.as_f64().unwrap_or(f64::NAN),
        target: "observe",
        status: Status::Info,
        action: "Confidence changes with evidence, not with time",
        items: vec![],
    });

    let domains = read(
        nx,
        r#"FIND(?d.name, COUNT(?n)) WHERE { ?d {type: "Domain"} OPTIONAL { (?n, "belongs_to_domain", ?d) } }"#,
        json!({}),
    )?;
    let names = strings(&domains[0]);
    let counts: Vec<i64> = domains[1]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_i64().unwrap_or(0)).collect())
        .unwrap_or_default();
    let mut off: Vec<String> = Vec::new();
    for (n, c) in names.iter().zip(counts.iter()) {
        let operational = matches!(
            n.as_str(),
            "Unsorted" | "Archived" | "System" | "CoreSchema"
        );
        if !operational && !(5..=100).contains(c) {
            off.push(format!("{n}: {c}"));
        }
    }
    metrics.push(Metric {
        key: "domain_utilisation",
        label: "Domains outside 5–100 members",
        value: off.len() as f64,
        target: "0 (5–100 each)",
        status: if off.is_empty() {
            Status::Ok
        } else {
            Status::Warn
        },
        action: "Merge small, split large",
        items: off,
    });

    let tasks = strings(&read(
        nx,
        r#"FIND(?t.name) WHERE { ?t {type: "SleepTask"} (?t, "assigned_to", {type: "Person", name: "$system"}) FILTER(?t.attributes.status == "pending") } LIMIT 500"#,
        json!({}),
    )?);
    let total = total_if_cut(
        nx,
        tasks.len(),
        500,
        r#"FIND(COUNT(?t)) WHERE { ?t {type: "SleepTask"} (?t, "assigned_to", {type: "Person", name: "$system"}) FILTER(?t.attributes.status == "pending") }"#,
        json!({}),
    )?;
    metrics.push(listed(
        "pending_sleep_tasks",
        "Pending SleepTasks",
        10.0,
        "< 10",
        "Process all pending tasks",
        tasks,
        total,
    ));

    let unscored = strings(&read(
        nx,
        r#"FIND(?e.name) WHERE { ?e {type: "Event"} FILTER(IS_NULL(?e.attributes.salience_score)) } LIMIT 1000"#,
        json!({}),
    )?);
    let total = total_if_cut(
        nx,
        unscored.len(),
        1000,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} FILTER(IS_NULL(?e.attributes.salience_score)) }"#,
        json!({}),
    )?;
    metrics.push(listed(
        "unscored_events",
        "Unscored Events",
        10.0,
        "< 10",
        "Run a daydream cycle for salience scoring",
        unscored,
        total,
    ));

    // secrets kept in memory: where and of what kind, never the value
    let held = super::cycle::secrets::scan(nx)?;
    let secret_items: Vec<String> = held
        .iter()
        .map(|h| {
            format!(
                "{}: {} ({}: {})",
                h.ty,
                h.name,
                h.attribute,
                super::cycle::secrets::rule_list(&h.rules)
            )
        })
        .collect();
    let secret_count: usize = held.iter().map(|h| h.rules.len()).sum();
    metrics.push(Metric {
        key: "secrets",
        label: "Secrets in memory",
        value: secret_count as f64,
        target: "0",
        status: if secret_count == 0 {
            Status::Ok
        } else {
            Status::Bad
        },
        action: "Approve the cycle's redactions (class redact)",
        items: secret_items,
    });

    let overdue = named_before(
        &read(
            nx,
            r#"FIND(?c.name, ?c.attributes.due_at) WHERE { ?c {type: "Commitment"} FILTER(?c.attributes.status == "pending" && ?c.attributes.due_at < :now) } LIMIT 500"#,
            json!({ "now": super::clock::widened(now, true) }),
        )?,
        now,
    );
    metrics.push(Metric {
        key: "overdue_commitments",
        label: "Overdue commitments",
        value: overdue.len() as f64,
        target: "0",
        status: if overdue.is_empty() {
            Status::Ok
        } else {
            Status::Bad
        },
        action: "Sweep in Phase 5C; surface in briefing",
        items: overdue,
    });

    let superseded = read(
        nx,
        r#"FIND(COUNT(?l)) WHERE { ?l (?s, ?p, ?o) FILTER(?l.metadata.superseded == true) } LIMIT 1000000"#,
        json!({}),
    )?;
    metrics.push(Metric {
        key: "superseded",
        label: "Superseded propositions",
        value: superseded.as_f64().unwrap_or(0.0),
        target: "audit",
        status: Status::Info,
        action: "Verify temporal context preserved",
        items: vec![],
    });

    // The bootstrap structure the cycle relies on.
    let gone: Vec<String> = super::structure::missing(nx)?
        .into_iter()
        .flat_map(|m| m.elements)
        .collect();
    metrics.push(Metric {
        key: "missing_structure",
        label: "Missing core structure",
        value: gone.len() as f64,
        target: "0",
        status: if gone.is_empty() {
            Status::Ok
        } else {
            Status::Bad
        },
        action: "A sleep cycle restores it from the bootstrap capsules",
        items: gone,
    });

    Ok(Health {
        at: now.to_string(),
        metrics,
    })
}

/// The health measured by one past sleep cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub run: i64,
    /// The cycle's clock.
    pub at: String,
    pub values: std::collections::BTreeMap<String, f64>,
}

/// The health each past cycle measured (phase 1), oldest first, at most
/// `limit` of the newest. Cycles that never assessed (cancelled before
/// phase 1 committed) are left out.
pub fn history(nx: &Nexus, limit: usize) -> KipResult<Vec<Point>> {
    let rows = nx.db().query(
        "SELECT id, report FROM sleep_runs WHERE report IS NOT NULL AND phase >= 1 \
         ORDER BY id DESC LIMIT ?1",
        crate::args![limit],
    )?;
    let mut out = Vec::new();
    for row in rows {
        let (run, text) = (row.i64(0)?, row.text(1)?);
        let Ok(rep) = serde_json::from_str::<super::Report>(&text) else {
            continue;
        };
        let mut values = rep.health.clone();
        if values.is_empty() {
            // reports written before the unrounded values were kept
            for p in &rep.phases {
                for (k, v) in &p.counts {
                    if let Some(key) = k.strip_prefix("health.") {
                        values.insert(key.to_string(), *v as f64);
                    }
                }
            }
        }
        if values.is_empty() {
            continue;
        }
        out.push(Point {
            run,
            at: rep.now.clone(),
            values,
        });
    }
    out.reverse();
    Ok(out)
}
