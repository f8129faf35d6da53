//! Semantic consolidation of an Experience (the `consolidate_to_semantic`
//! SleepTask on an Experience): "what is true?" beside the Skill's "what
//! works?". The lesson an Experience states (what it was for, how it ended,
//! what went against expectation) is proposed as an `Insight` derived from
//! it, learned by `$self`, the Experience marked partially consolidated
//! (its procedure is still for 5D). Proposed, never written at once.

use super::context::*;
use super::experiences;

/// What a `consolidate_to_semantic` task on an Experience proposes, or why
/// there is nothing to propose.
pub(super) fn lesson_drafts(
    nx: &mut Nexus,
    name: &str,
    now: &str,
) -> KipResult<(Vec<Draft>, Option<String>)> {
    let v = find(
        nx,
        r#"FIND(?x) WHERE { ?x {type: "Experience"} FILTER(?x.name == :n) } LIMIT 1"#,
        json!({"n": name}),
    )?;
    let Some(x) = v.as_array().and_then(|a| a.first()).cloned() else {
        return Ok((vec![], Some(format!("no Experience named \"{name}\""))));
    };
    let a = x.get("attributes").cloned().unwrap_or(Value::Null);
    let id = s(&x, &["id"]);
    if a.get("status").and_then(Value::as_str) == Some("ongoing") {
        return Ok((
            vec![],
            Some("the Experience is still going on: its lesson waits for its end".into()),
        ));
    }
    let surprises: Vec<String> = experiences::steps(nx, &id)?
        .iter()
        .filter_map(|st| st.surprise_text())
        .collect();
    let goal = s(&a, &["goal"]);
    let outcome = s(&a, &["outcome"]);
    let expected = {
        let pe = s(&a, &["prediction_error"]);
        if pe.is_empty() {
            surprises.first().cloned().unwrap_or_default()
        } else {
            pe
        }
    };
    if outcome.is_empty() && expected.is_empty() {
        return Ok((
            vec![],
            Some(
                "nothing to extract: the Experience records no outcome and no prediction error"
                    .into(),
            ),
        ));
    }
    let success = a.get("success").and_then(Value::as_bool);
    let class = if success == Some(false) || !expected.is_empty() {
        "lesson_learned"
    } else {
        "operational_discovery"
    };
    let about = if goal.is_empty() {
        name.to_string()
    } else {
        goal.clone()
    };
    let description = match (success, outcome.is_empty()) {
        (Some(false), false) => format!("{about}: {outcome} (it did not work)"),
        (_, false) => format!("{about}: {outcome}"),
        (_, true) => format!("{about}: {expected}"),
    };
    let title_name: String = about.chars().take(80).collect();
    let insight = format!("Lesson: {title_name}");
    let context = s(&a, &["initial_state"]);
    let when = [s(&a, &["ended_at"]), s(&a, &["started_at"])]
        .into_iter()
        .find(|t| instant(t).is_some())
        .unwrap_or_default();
    let next_status = match s(&a, &["consolidation_status"]).as_str() {
        "completed" | "archived" => s(&a, &["consolidation_status"]),
        _ => "partially_consolidated".to_string(),
    };
    let cmd = r#"UPSERT {
  CONCEPT ?i { {type: "Insight", name: :insight}
    SET ATTRIBUTES { insight_class: :class, description: :description, trigger: :trigger, correction: :correction, context: :context, evidence_count: 1, first_observed: :when, last_observed: :when }
    SET PROPOSITIONS { ("derived_from", {type: "Experience", name: :x}) } }
  CONCEPT ?x { {type: "Experience", name: :x}
    SET ATTRIBUTES { consolidation_status: :status, semantic_consolidated_at: :ts }
    SET PROPOSITIONS { ("derived_insight", ?i) } }
  CONCEPT ?self { {type: "Person", name: "$self"} SET PROPOSITIONS { ("learned", ?i) } }
} WITH METADATA { source: "SleepConsolidation", author: "$system", created_at: :ts, confidence: 0.7 }"#;
    let params = json!({
        "insight": insight,
        "class": class,
        "description": description,
        "trigger": expected,
        "correction": if success == Some(true) { outcome.clone() } else { String::new() },
        "context": context,
        "when": when,
        "x": name,
        "status": next_status,
        "ts": now,
    });
    Ok((
        vec![Draft {
            class: "consolidate".into(),
            key: format!("lesson:{id}"),
            title: format!("Insight \"{insight}\" from Experience \"{name}\""),
            commands: vec![cmd.to_string()],
            params: pm(params),
            rationale: format!(
                "the Experience states {}{}: {description}",
                if expected.is_empty() {
                    "its outcome".to_string()
                } else {
                    format!("what went against expectation ({expected})")
                },
                if outcome.is_empty() || expected.is_empty() {
                    ""
                } else {
                    " and its outcome"
                }
            ),
            evidence: vec![id],
            confidence: 0.7,
        }],
        None,
    ))
}
