//! Phase 5D and the `compile_to_skill` SleepTask: procedural consolidation,
//! Experience → Skill, as the Experience Learning profile describes. The
//! Skill is proposed for approval, never written at once: its procedure
//! comes from the steps of the Experiences that succeeded, its failure
//! signals from those that did not (contrast before compilation), and a
//! Skill with a similar goal is refined rather than twinned.

use super::*;

/// Learning value from which a pending Experience is compiled in 5D.
pub const MIN_LEARNING_VALUE: f64 = 70.0;

/// One Experience with its ordered steps.
struct Exp {
    id: String,
    name: String,
    class: String,
    goal: String,
    initial_state: String,
    outcome: String,
    success: Option<bool>,
    domains: Vec<String>,
    /// (kind, summary, actual observation, prediction error)
    steps: Vec<(String, String, String, bool)>,
}

fn experience(nx: &mut Nexus, x: &Value) -> KipResult<Exp> {
    let a = x.get("attributes").cloned().unwrap_or(Value::Null);
    let id = s(x, &["id"]);
    let v = find(
        nx,
        r#"FIND(?st) WHERE { ?x {id: :id} (?x, "has_step", ?st) } LIMIT 200"#,
        json!({"id": id}),
    )?;
    let mut steps: Vec<(i64, (String, String, String, bool))> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|st| {
            let b = st.get("attributes").cloned().unwrap_or(Value::Null);
            (
                b.get("index").and_then(Value::as_i64).unwrap_or(i64::MAX),
                (
                    s(&b, &["kind"]),
                    s(&b, &["summary"]),
                    s(&b, &["actual_observation"]),
                    b.get("prediction_error")
                        .is_some_and(|p| !p.is_null() && p != &json!(false) && p != &json!("")),
                ),
            )
        })
        .collect();
    steps.sort_by_key(|(i, _)| *i);
    let d = find(
        nx,
        r#"FIND(?d.name) WHERE { ?x {id: :id} (?x, "belongs_to_domain", ?d) } LIMIT 10"#,
        json!({"id": id}),
    )?;
    Ok(Exp {
        id,
        name: s(x, &["name"]),
        class: s(&a, &["experience_class"]),
        goal: s(&a, &["goal"]),
        initial_state: s(&a, &["initial_state"]),
        outcome: s(&a, &["outcome"]),
        success: a.get("success").and_then(Value::as_bool).or_else(|| {
            match s(&a, &["status"]).as_str() {
                "aborted" => Some(false),
                _ => None,
            }
        }),
        domains: strs(Some(&d))
            .into_iter()
            .filter(|d| !SYSTEM_DOMAINS.contains(&d.as_str()))
            .collect(),
        steps: steps.into_iter().map(|(_, st)| st).collect(),
    })
}

fn skill_class(experience_class: &str, goal: &str) -> &'static str {
    let g = goal.to_lowercase();
    if g.contains("diagnos") || g.contains("debug") || g.contains("investigat") {
        "diagnostic"
    } else if g.contains("recover") || g.contains("restore") || g.contains("roll back") {
        "recovery"
    } else {
        match experience_class {
            "decision_making" => "decision_policy",
            "interaction" => "communication",
            _ => "procedure",
        }
    }
}

/// The Experiences named, and the others with a goal like theirs (for
/// contrast), each read once.
fn cluster(nx: &mut Nexus, names: &[String]) -> KipResult<Vec<Exp>> {
    let all = find(
        nx,
        r#"FIND(?x) WHERE { ?x {type: "Experience"} } LIMIT 2000"#,
        json!({}),
    )?;
    let all = all.as_array().cloned().unwrap_or_default();
    let goals: Vec<String> = all
        .iter()
        .filter(|x| names.contains(&s(x, &["name"])))
        .map(|x| s(x, &["attributes", "goal"]))
        .collect();
    let mut out = Vec::new();
    for x in &all {
        let g = s(x, &["attributes", "goal"]);
        if names.contains(&s(x, &["name"]))
            || goals
                .iter()
                .any(|h| !g.is_empty() && similarity::overlap(h, &g) >= SAME_GOAL_OVERLAP)
        {
            out.push(experience(nx, x)?);
        }
    }
    Ok(out)
}

/// Two goals that share this share of their (stemmed) words are one goal:
/// half the words is the same task said two ways.
pub const SAME_GOAL_OVERLAP: f64 = 0.5;

/// A Skill whose name shares this share of a goal's words is the Skill for
/// that goal (a name is shorter than a goal, so more must match).
pub const GOAL_NAMES_SKILL_OVERLAP: f64 = 0.6;

/// A Skill drawn from this many Experiences is proven (confidence 0.8);
/// from fewer, it is emerging (0.6), as the sleep-mode 5D maturity says.
pub const PROVEN_EXPERIENCES: usize = 3;

fn skill_confidence(experiences: usize) -> f64 {
    if experiences >= PROVEN_EXPERIENCES {
        0.8
    } else {
        0.6
    }
}

/// The Skill proposal for a group of Experiences; None when none of them
/// succeeded with steps to learn from (nothing to compile).
pub(super) fn skill_drafts(cx: &mut Cx, nx: &mut Nexus, names: &[String]) -> KipResult<Vec<Draft>> {
    let exps = cluster(nx, names)?;
    let won: Vec<&Exp> = exps
        .iter()
        .filter(|e| {
            e.success == Some(true) && e.steps.iter().any(|s| s.0 == "action" || s.0 == "decision")
        })
        .collect();
    let Some(best) = won.first() else {
        return Ok(vec![]);
    };
    let lost: Vec<&Exp> = exps.iter().filter(|e| e.success == Some(false)).collect();
    // a Skill with a goal like this one is refined, not twinned
    let existing = find(
        nx,
        r#"FIND(?k) WHERE { ?k {type: "Skill"} } LIMIT 2000"#,
        json!({}),
    )?;
    let twin = existing.as_array().into_iter().flatten().find(|k| {
        let g = s(k, &["attributes", "goal"]);
        let n = s(k, &["name"]);
        similarity::overlap(&best.goal, &g) >= SAME_GOAL_OVERLAP
            || similarity::overlap(&best.goal, &n) >= GOAL_NAMES_SKILL_OVERLAP
    });
    let mut procedure: Vec<String> = Vec::new();
    for (kind, summary, _, _) in &best.steps {
        if matches!(kind.as_str(), "action" | "decision")
            && !summary.is_empty()
            && !procedure.contains(summary)
        {
            procedure.push(summary.clone());
        }
    }
    let mut triggers: Vec<String> = Vec::new();
    for e in &exps {
        if !e.initial_state.is_empty()
            && !triggers.contains(&e.initial_state)
            && e.success != Some(false)
        {
            triggers.push(e.initial_state.clone());
        }
    }
    if triggers.is_empty() {
        triggers.push(format!("The goal is to {}", best.goal.to_lowercase()));
    }
    let mut failure_signals: Vec<String> = Vec::new();
    for e in &lost {
        if !e.outcome.is_empty() {
            failure_signals.push(format!("{} (seen in {})", e.outcome, e.name));
        }
        for (_, summary, actual, surprise) in &e.steps {
            if *surprise && !actual.is_empty() {
                failure_signals.push(format!("{actual} after \"{summary}\""));
            }
        }
    }
    failure_signals.dedup();
    let (succ, fail) = (
        exps.iter().filter(|e| e.success == Some(true)).count(),
        lost.len(),
    );
    let maturity = if succ >= 3 && fail == 0 {
        "validated"
    } else {
        "candidate"
    };
    let utility = ((succ as f64 / (succ + fail).max(1) as f64) * 100.0).round() / 100.0;
    let name = match twin {
        Some(k) => s(k, &["name"]),
        None => best.goal.chars().take(80).collect::<String>(),
    };
    let domain = best
        .domains
        .first()
        .cloned()
        .unwrap_or_else(|| "Unsorted".into());
    let mut commands = vec![format!(
        r#"UPSERT {{
  CONCEPT ?skill {{
    {{type: "Skill", name: :skill_name}}
    SET ATTRIBUTES {{
      skill_class: :skill_class, description: :description, goal: :goal,
      trigger_conditions: :trigger_conditions, procedure: :procedure,
      expected_outcome: :expected_outcome, failure_signals: :failure_signals,
      execution_mode: "advisory", maturity: :maturity, utility: :utility,
      evidence_count: :evidence_count, success_count: :success_count, failure_count: :failure_count,
      last_validated_at: :ts
    }}
    SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: :domain}}) {} }}
  }}
}}
WITH METADATA {{ source: "ProceduralConsolidation", author: "$system", confidence: :confidence, memory_strength: 0.8, created_at: :ts }}"#,
        exps.iter()
            .enumerate()
            .map(|(i, _)| format!(r#"("derived_from", {{type: "Experience", name: :x{i}}})"#))
            .collect::<Vec<_>>()
            .join(" ")
    )];
    let mut params = json!({
        "skill_name": name, "skill_class": skill_class(&best.class, &best.goal),
        "description": format!("{} (compiled from {} Experiences: {succ} succeeded, {fail} failed)", best.goal, exps.len()),
        "goal": best.goal, "trigger_conditions": triggers, "procedure": procedure,
        "expected_outcome": if best.outcome.is_empty() { best.goal.clone() } else { best.outcome.clone() },
        "failure_signals": failure_signals, "maturity": maturity, "utility": utility,
        "evidence_count": exps.len(), "success_count": succ, "failure_count": fail,
        "domain": domain, "ts": cx.opts.now,
        "confidence": skill_confidence(exps.len()),
    });
    for (i, e) in exps.iter().enumerate() {
        params[format!("x{i}")] = json!(e.name);
        commands.push(format!(
            r#"UPSERT {{ PROPOSITION ?c {{ ({{type: "Experience", name: :x{i}}}, "compiled_to", {{type: "Skill", name: :skill_name}}) }} }} WITH METADATA {{ source: "ProceduralConsolidation", author: "$system", created_at: :ts }}"#
        ));
        commands.push(format!(
            r#"UPDATE ?x SET ATTRIBUTES {{ consolidation_status: "partially_consolidated" }} WHERE {{ ?x {{type: "Experience", name: :x{i}}} FILTER(IS_NULL(?x.attributes.consolidation_status) || (?x.attributes.consolidation_status != "completed" && ?x.attributes.consolidation_status != "archived")) }}"#
        ));
    }
    let verb = if twin.is_some() {
        "Refine the Skill"
    } else {
        "New Skill"
    };
    Ok(vec![Draft {
        class: "skill".into(),
        key: format!("skill:{}", best.id),
        title: format!("{verb} \"{name}\" from {} Experiences", exps.len()),
        commands,
        params: pm(params),
        rationale: format!(
            "procedure from the steps of \"{}\" (succeeded); {} failure signal{} from {fail} failed attempt{}; {maturity}: {succ} success{} and {fail} failure{}",
            best.name,
            failure_signals.len(),
            if failure_signals.len() == 1 { "" } else { "s" },
            if fail == 1 { "" } else { "s" },
            if succ == 1 { "" } else { "es" },
            if fail == 1 { "" } else { "s" },
        ),
        evidence: exps.iter().map(|e| e.id.clone()).collect(),
        confidence: skill_confidence(exps.len()),
    }])
}

/// 5D: pending Experiences worth learning from, compiled group by group.
pub(super) fn procedural_consolidation(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("procedural consolidation", 0, 0);
    let v = find(
        nx,
        r#"FIND(?x.name) WHERE {
  ?x {type: "Experience"}
  FILTER(?x.attributes.consolidation_status == "pending" || ?x.attributes.consolidation_status == "partially_consolidated")
  FILTER(?x.attributes.learning_value >= :min)
  NOT { (?x, "compiled_to", ?k) }
} ORDER BY ?x.attributes.learning_value DESC LIMIT 50"#,
        json!({"min": MIN_LEARNING_VALUE}),
    )?;
    let mut done: HashSet<String> = HashSet::new();
    let mut drafts = Vec::new();
    for name in strs(Some(&v)) {
        if done.contains(&name) {
            continue;
        }
        cx.cancelled()?;
        let d = skill_drafts(cx, nx, std::slice::from_ref(&name))?;
        done.insert(name);
        for x in &d {
            for p in x.params.iter().filter(|(k, _)| k.starts_with('x')) {
                if let Some(n) = p.1.as_str() {
                    done.insert(n.to_string());
                }
            }
        }
        drafts.extend(d);
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("skills_proposed", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed {n} Skills from Experiences (procedural consolidation)"
        ));
    }
    Ok(())
}
