//! Phase 5D and the `compile_to_skill` SleepTask: procedural consolidation,
//! Experience → Skill, as the Experience Learning profile describes. The
//! Skill is proposed for approval, never written at once: its procedure
//! comes from the steps of the Experiences that succeeded, its failure
//! signals from those that did not (contrast before compilation), and a
//! Experience whose goal a Skill already serves is evidence for that Skill
//! (5E, `skill_evidence`), never the makings of a twin.

use super::context::*;
use super::experiences::{self, Exp};
use super::skill_evidence::{self, PROVEN_EXPERIENCES, SAME_GOAL_OVERLAP, skill_for, update_draft};

/// Learning value from which a pending Experience is compiled in 5D.
pub const MIN_LEARNING_VALUE: f64 = 70.0;

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
            out.push(experiences::read(nx, x)?);
        }
    }
    Ok(out)
}

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
    // a Skill for this goal already: the Experiences are evidence for it
    // (5E), never the makings of a twin
    let skills = skill_evidence::skills(nx)?;
    let served = exps
        .iter()
        .filter(|e| names.contains(&e.name))
        .find_map(|e| skill_for(&skills, &e.goal));
    if let Some(i) = served {
        let done = skill_evidence::counted(nx)?;
        let news: Vec<Exp> = exps
            .into_iter()
            .filter(|e| !done.contains(&(skills[i].name.clone(), e.name.clone())))
            .collect();
        return Ok(update_draft(cx, &skills[i], &news).into_iter().collect());
    }
    let won: Vec<&Exp> = exps
        .iter()
        .filter(|e| e.success == Some(true) && e.steps.iter().any(|s| s.is_procedure()))
        .collect();
    let Some(best) = won.first() else {
        return Ok(vec![]);
    };
    let lost: Vec<&Exp> = exps.iter().filter(|e| e.success == Some(false)).collect();
    let mut procedure: Vec<String> = Vec::new();
    for st in &best.steps {
        if st.is_procedure() && !st.summary.is_empty() && !procedure.contains(&st.summary) {
            procedure.push(st.summary.clone());
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
        for st in &e.steps {
            if st.surprise() && !st.actual.is_empty() {
                failure_signals.push(format!("{} after \"{}\"", st.actual, st.summary));
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
    let name = best.goal.chars().take(80).collect::<String>();
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
    Ok(vec![Draft {
        class: "skill".into(),
        key: format!("skill:{}", best.id),
        title: format!("New Skill \"{name}\" from {} Experiences", exps.len()),
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
    let names = strs(Some(&v));
    let skills = if names.is_empty() {
        vec![]
    } else {
        skill_evidence::skills(nx)?
    };
    let goals = find(
        nx,
        r#"FIND(?x.name, ?x.attributes.goal) WHERE { ?x {type: "Experience"} FILTER(IN(?x.name, :n)) } LIMIT 50"#,
        json!({"n": names}),
    )?;
    let goal_of: HashMap<String, String> = rows(&goals, 2)
        .into_iter()
        .map(|r| {
            (
                r.first()
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                r.get(1)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    for name in names {
        // a goal a Skill serves: evidence for that Skill, counted by 5E
        if done.contains(&name)
            || goal_of
                .get(&name)
                .is_some_and(|g| skill_for(&skills, g).is_some())
        {
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
