//! An Experience as the cycle reads it, once: its goal, how it ended, its
//! domains and its ordered steps. Learning value (1B), lessons (the
//! `consolidate_to_semantic` task), procedural consolidation (5D) and the
//! Skill evidence updates (5E) all read Experiences through here.

use super::context::*;

/// Steps read per Experience at most.
pub const STEPS_READ: usize = 200;

/// One step of an Experience.
#[derive(Debug, Clone, Default)]
pub(super) struct Step {
    pub kind: String,
    pub summary: String,
    pub actual: String,
    /// The prediction error as written: a text, or "true" when it is only
    /// flagged; empty when there was none.
    pub prediction_error: String,
    /// The step's own outcome, when recorded.
    pub success: Option<bool>,
}

impl Step {
    /// Whether the step went against expectation.
    pub fn surprise(&self) -> bool {
        !self.prediction_error.is_empty()
    }

    /// What went against expectation, in words: the error's text, else
    /// what was seen instead.
    pub fn surprise_text(&self) -> Option<String> {
        match self.prediction_error.as_str() {
            "" => None,
            "true" if self.actual.is_empty() => None,
            "true" => Some(self.actual.clone()),
            t => Some(t.to_string()),
        }
    }

    /// An action or a decision: part of a procedure.
    pub fn is_procedure(&self) -> bool {
        matches!(self.kind.as_str(), "action" | "decision")
    }
}

/// One Experience with its ordered steps.
#[derive(Debug, Clone, Default)]
pub(super) struct Exp {
    pub id: String,
    pub name: String,
    pub attrs: Value,
    pub class: String,
    pub goal: String,
    pub initial_state: String,
    pub outcome: String,
    pub status: String,
    pub success: Option<bool>,
    pub domains: Vec<String>,
    pub steps: Vec<Step>,
}

/// A value that says yes: anything but null, false or "".
pub(super) fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(|p| !p.is_null() && p != &json!(false) && p != &json!(""))
}

/// How an Experience ended: `success` as recorded, else an aborted one
/// failed; None while unknown.
pub(super) fn ended_well(a: &Value) -> Option<bool> {
    a.get("success")
        .and_then(Value::as_bool)
        .or_else(|| (s(a, &["status"]) == "aborted").then_some(false))
}

fn step(b: &Value) -> (i64, Step) {
    let pe = match b.get("prediction_error") {
        Some(v) if truthy(Some(v)) => match v.as_str() {
            Some(t) => t.to_string(),
            None => "true".into(),
        },
        _ => String::new(),
    };
    (
        b.get("index").and_then(Value::as_i64).unwrap_or(i64::MAX),
        Step {
            kind: s(b, &["kind"]),
            summary: s(b, &["summary"]),
            actual: s(b, &["actual_observation"]),
            prediction_error: pe,
            success: b.get("success").and_then(Value::as_bool),
        },
    )
}

/// The steps of the Experience with this id, in their `index` order.
pub(super) fn steps(nx: &mut Nexus, id: &str) -> KipResult<Vec<Step>> {
    let v = find(
        nx,
        &format!(
            r#"FIND(?st) WHERE {{ ?x {{id: :id}} (?x, "has_step", ?st) }} LIMIT {STEPS_READ}"#
        ),
        json!({"id": id}),
    )?;
    let mut out: Vec<(i64, Step)> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|st| step(st.get("attributes").unwrap_or(&Value::Null)))
        .collect();
    out.sort_by_key(|(i, _)| *i);
    Ok(out.into_iter().map(|(_, st)| st).collect())
}

/// Reads the Experience `x` (a concept as FIND returns it): its steps and
/// its domains (system domains left out).
pub(super) fn read(nx: &mut Nexus, x: &Value) -> KipResult<Exp> {
    let a = x.get("attributes").cloned().unwrap_or(Value::Null);
    let id = s(x, &["id"]);
    let steps = steps(nx, &id)?;
    let d = find(
        nx,
        r#"FIND(?d.name) WHERE { ?x {id: :id} (?x, "belongs_to_domain", ?d) } LIMIT 10"#,
        json!({"id": id}),
    )?;
    Ok(Exp {
        name: s(x, &["name"]),
        class: s(&a, &["experience_class"]),
        goal: s(&a, &["goal"]),
        initial_state: s(&a, &["initial_state"]),
        outcome: s(&a, &["outcome"]),
        status: s(&a, &["status"]),
        success: ended_well(&a),
        domains: strs(Some(&d))
            .into_iter()
            .filter(|d| !SYSTEM_DOMAINS.contains(&d.as_str()))
            .collect(),
        steps,
        attrs: a,
        id,
    })
}
