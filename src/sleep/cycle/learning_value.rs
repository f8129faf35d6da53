//! Phase 1B, the Experience half: `learning_value`, how much a trajectory
//! may improve later decisions if recalled and consolidated, scored from
//! the signals the sleep-mode instructions list (expectation violation,
//! outcome, human feedback, novelty against reuse, a failure/recovery
//! branch). A value the recorder (Formation) set is kept: only Experiences
//! without one are scored, and a trajectory still going on waits for its
//! end. Procedural consolidation (5D) then compiles the valuable ones.

use super::context::*;
use super::experiences::{self, ended_well, truthy};

/// Experiences scored per cycle at most.
pub const SCORED_PER_CYCLE: usize = 500;

/// The signals of one Experience, and its goal's company.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Signals {
    /// `surprise_score` as recorded (0–100).
    pub surprise: Option<f64>,
    /// A prediction error on the Experience or any of its steps.
    pub prediction_error: bool,
    /// The goal was not reached (`success: false`, or `status: aborted`).
    pub failed: bool,
    /// A step failed and the Experience still succeeded: a recovery.
    pub recovered: bool,
    /// A `feedback` step (a person said how it went).
    pub feedback: bool,
    /// Action or decision steps: a procedure to reuse.
    pub procedure_steps: usize,
    /// Other Experiences with a goal like this one.
    pub same_goal: usize,
    /// One of those ended the other way (a success beside a failure).
    pub contrast: bool,
}

/// The learning value of an Experience with these signals (0–100), and
/// the signals that made it, for `learning_value_basis`.
pub fn score(x: &Signals) -> (f64, String) {
    let mut v = 30.0;
    let mut basis = vec!["base 30".to_string()];
    let mut add = |points: f64, why: String| {
        if points > 0.0 {
            v += points;
            basis.push(format!("+{points:.0} {why}"));
        }
    };
    if let Some(s) = x.surprise {
        add(
            (s.clamp(0.0, 100.0) * 0.25).round(),
            format!("surprise {s:.0}"),
        );
    }
    if x.prediction_error {
        add(15.0, "a prediction error".into());
    }
    if x.failed {
        add(15.0, "the goal was not reached".into());
    } else if x.recovered {
        add(15.0, "a failure it recovered from".into());
    }
    if x.feedback {
        add(10.0, "human feedback".into());
    }
    if x.same_goal > 0 {
        add(
            15.0,
            format!(
                "the goal recurs ({} other Experience{})",
                x.same_goal,
                if x.same_goal == 1 { "" } else { "s" }
            ),
        );
    }
    if x.contrast {
        add(10.0, "a success and a failure to contrast".into());
    }
    if x.procedure_steps >= 3 {
        add(5.0, format!("{} steps of procedure", x.procedure_steps));
    }
    (v.min(100.0), basis.join(", "))
}

/// Scores the Experiences that have no learning value yet.
pub(super) fn score_experiences(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("learning value", 0, 0);
    let (todo, all) = cx.unlocked(nx, |nx| {
        let todo = find(
            nx,
            &format!(
                r#"FIND(?x) WHERE {{ ?x {{type: "Experience"}} FILTER(IS_NULL(?x.attributes.learning_value)) }} LIMIT {SCORED_PER_CYCLE}"#
            ),
            json!({}),
        )?;
        let all = find(
            nx,
            r#"FIND(?x.name, ?x.attributes.goal, ?x.attributes.success, ?x.attributes.status) WHERE { ?x {type: "Experience"} } LIMIT 5000"#,
            json!({}),
        )?;
        Ok((todo, all))
    })?;
    let todo = todo.as_array().cloned().unwrap_or_default();
    if todo.is_empty() {
        return Ok(());
    }
    // (name, goal, outcome known: Some(success))
    let goals: Vec<(String, String, Option<bool>)> = all
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let ok = match (
                r.get(2).and_then(Value::as_bool),
                r.get(3).and_then(Value::as_str),
            ) {
                (Some(b), _) => Some(b),
                (None, Some("aborted")) => Some(false),
                _ => None,
            };
            (
                r.get(0).and_then(Value::as_str).unwrap_or("").to_string(),
                r.get(1).and_then(Value::as_str).unwrap_or("").to_string(),
                ok,
            )
        })
        .collect();
    let mut scored = 0usize;
    for (i, x) in todo.iter().enumerate() {
        cx.cancelled()?;
        cx.step("learning value", i as u64, todo.len() as u64);
        let a = x.get("attributes").cloned().unwrap_or(Value::Null);
        // a trajectory still going on is scored once it ends
        if s(&a, &["status"]) == "ongoing" {
            continue;
        }
        let name = s(x, &["name"]);
        let id = s(x, &["id"]);
        let steps = experiences::steps(nx, &id)?;
        let success = ended_well(&a);
        let goal = s(&a, &["goal"]);
        let peers: Vec<&(String, String, Option<bool>)> = goals
            .iter()
            .filter(|(n, g, _)| {
                *n != name
                    && !goal.is_empty()
                    && !g.is_empty()
                    && similarity::overlap(&goal, g) >= super::skill_evidence::SAME_GOAL_OVERLAP
            })
            .collect();
        let signals = Signals {
            surprise: a.get("surprise_score").and_then(Value::as_f64),
            prediction_error: truthy(a.get("prediction_error"))
                || steps.iter().any(|st| st.surprise()),
            failed: success == Some(false),
            recovered: success == Some(true) && steps.iter().any(|st| st.success == Some(false)),
            feedback: steps.iter().any(|st| st.kind == "feedback"),
            procedure_steps: steps.iter().filter(|st| st.is_procedure()).count(),
            same_goal: peers.len(),
            contrast: success.is_some_and(|me| peers.iter().any(|(_, _, ok)| *ok == Some(!me))),
        };
        let (value, basis) = score(&signals);
        cx.yield_lock(nx)?;
        write(
            cx,
            nx,
            r#"UPSERT { CONCEPT ?x { {id: :id} SET ATTRIBUTES { learning_value: :v, learning_value_scored_at: :ts, learning_value_basis: :b } } WITH METADATA { source: "LearningValueScoring", author: "$system" } }"#,
            json!({"id": id, "v": value, "ts": cx.opts.now, "b": basis}),
            &format!("learning value of Experience \"{name}\": {value:.0} ({basis})"),
        )?;
        scored += 1;
    }
    cx.count("learning_value_scored", scored as i64);
    if scored > 0 {
        cx.line(format!("Scored the learning value of {scored} Experiences"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_makes_an_experience_worth_learning_from() {
        let lone_success = Signals {
            procedure_steps: 3,
            ..Default::default()
        };
        let quiet_failure = Signals {
            prediction_error: true,
            failed: true,
            ..Default::default()
        };
        let contrasted_failure = Signals {
            same_goal: 2,
            contrast: true,
            ..quiet_failure.clone()
        };
        let (a, _) = score(&lone_success);
        let (b, _) = score(&quiet_failure);
        let (c, basis) = score(&contrasted_failure);
        assert!(a < b && b < c, "{a} {b} {c}");
        assert!(a < super::super::skills::MIN_LEARNING_VALUE);
        assert!(b < super::super::skills::MIN_LEARNING_VALUE);
        assert!(c >= super::super::skills::MIN_LEARNING_VALUE, "{c}");
        assert!(basis.contains("goal recurs"), "{basis}");
        let everything = Signals {
            surprise: Some(1000.0),
            prediction_error: true,
            failed: true,
            recovered: true,
            feedback: true,
            procedure_steps: 9,
            same_goal: 9,
            contrast: true,
        };
        assert_eq!(score(&everything).0, 100.0);
    }
}
