//! Phase 5E: contrastive evidence on the Skills the memory already holds.
//! An Experience that ended (well or badly) with a goal a Skill serves,
//! and that the Skill has not counted yet, updates that Skill as the
//! sleep-mode 5E says:
//! - a success under the Skill's conditions: `evidence_count + 1`,
//!   `success_count + 1`, utility may rise, a candidate proven often
//!   enough becomes `validated`;
//! - a failure under its conditions: `evidence_count + 1`,
//!   `failure_count + 1`, its failure signals added, utility may fall, and
//!   below `NEEDS_REVIEW_UTILITY` the Skill is `needs_review`;
//! - a failure outside its conditions narrows where the Skill applies
//!   (`applicability_context.not_when`) and does not count against it;
//! - a success outside its conditions counts, and its state joins the
//!   Skill's trigger conditions.
//!
//! Repeating an action is never evidence: only an Experience's recorded
//! outcome counts, and each Experience once (the `derived_from` link it
//! gets records that it was counted). Each update is proposed, under the
//! Skill's version, so an approval on a Skill changed since is refused.

use super::context::*;
use super::experiences::{self, Exp};

/// Two goals that share this share of their (stemmed) words are one goal:
/// half the words is the same task said two ways.
pub const SAME_GOAL_OVERLAP: f64 = 0.5;
/// A Skill whose name shares this share of a goal's words is the Skill for
/// that goal (a name is shorter than a goal, so more must match).
pub const GOAL_NAMES_SKILL_OVERLAP: f64 = 0.6;
/// A Skill drawn from this many Experiences is proven (confidence 0.8);
/// from fewer, it is emerging (0.6), as the sleep-mode 5D maturity says.
pub const PROVEN_EXPERIENCES: usize = 3;

/// An Experience whose initial state shares this share of its words with
/// one of a Skill's conditions happened under those conditions.
pub const MATCHING_CONDITIONS: f64 = 0.3;

/// A Skill whose utility falls under this after a failure under its own
/// conditions is marked `needs_review`.
pub const NEEDS_REVIEW_UTILITY: f64 = 0.5;

/// A candidate with this utility or more, and `PROVEN_EXPERIENCES`
/// successes, becomes `validated`.
pub const VALIDATED_UTILITY: f64 = 0.75;

/// Skills and Experiences read per cycle at most.
pub const READ: usize = 2000;

/// A Skill as 5E weighs it.
#[derive(Debug, Clone)]
pub(super) struct SkillView {
    pub id: String,
    pub name: String,
    pub version: i64,
    pub attrs: Value,
}

impl SkillView {
    fn goal(&self) -> String {
        s(&self.attrs, &["goal"])
    }

    /// Whether an Experience with this goal is one this Skill serves.
    pub fn serves(&self, goal: &str) -> bool {
        !goal.is_empty()
            && (similarity::overlap(goal, &self.goal()) >= SAME_GOAL_OVERLAP
                || similarity::overlap(goal, &self.name) >= GOAL_NAMES_SKILL_OVERLAP)
    }

    /// The texts that say when the Skill applies: its trigger conditions,
    /// preconditions and applicability context (not what it excludes).
    fn conditions(&self) -> Vec<String> {
        let mut out = strs(self.attrs.get("trigger_conditions"));
        out.extend(strs(self.attrs.get("preconditions")));
        if let Some(Value::Object(m)) = self.attrs.get("applicability_context") {
            for (k, v) in m {
                if k == "not_when" {
                    continue;
                }
                match v {
                    Value::String(t) => out.push(t.clone()),
                    Value::Array(_) => out.extend(strs(Some(v))),
                    _ => {}
                }
            }
        }
        out.retain(|t| !t.trim().is_empty());
        out
    }

    fn excluded(&self) -> Vec<String> {
        strs(
            self.attrs
                .get("applicability_context")
                .and_then(|c| c.get("not_when")),
        )
    }
}

/// The Skills of the memory.
pub(super) fn skills(nx: &mut Nexus) -> KipResult<Vec<SkillView>> {
    let v = find(
        nx,
        &format!(r#"FIND(?k) WHERE {{ ?k {{type: "Skill"}} }} LIMIT {READ}"#),
        json!({}),
    )?;
    Ok(v.as_array()
        .into_iter()
        .flatten()
        .map(|k| SkillView {
            id: s(k, &["id"]),
            name: s(k, &["name"]),
            version: k
                .get("metadata")
                .and_then(|m| m.get("_version"))
                .and_then(Value::as_i64)
                .unwrap_or(1),
            attrs: k.get("attributes").cloned().unwrap_or(Value::Null),
        })
        .collect())
}

/// The Skill an Experience with this goal bears on, if any (a deprecated
/// Skill guides nothing and gathers no evidence).
pub(super) fn skill_for(skills: &[SkillView], goal: &str) -> Option<usize> {
    skills
        .iter()
        .position(|k| s(&k.attrs, &["maturity"]) != "deprecated" && k.serves(goal))
}

/// (Skill name, Experience name) pairs already counted: the Skill is
/// derived from the Experience, or the Experience compiled to the Skill.
pub(super) fn counted(nx: &mut Nexus) -> KipResult<HashSet<(String, String)>> {
    let mut out = HashSet::new();
    for q in [
        r#"FIND(?k.name, ?x.name) WHERE { ?k {type: "Skill"} ?x {type: "Experience"} (?k, "derived_from", ?x) } LIMIT 100000"#,
        r#"FIND(?k.name, ?x.name) WHERE { ?k {type: "Skill"} ?x {type: "Experience"} (?x, "compiled_to", ?k) } LIMIT 100000"#,
    ] {
        let v = find(nx, q, json!({}))?;
        for r in rows(&v, 2) {
            let n = |i: usize| {
                r.get(i)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            out.insert((n(0), n(1)));
        }
    }
    Ok(out)
}

/// What one Experience is to a Skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// It succeeded under the Skill's conditions.
    Success,
    /// It succeeded elsewhere: the Skill applies there too.
    Broadens,
    /// It failed under the Skill's conditions.
    Failure,
    /// It failed elsewhere: the Skill does not apply there.
    Counterexample,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Success => "success",
            Role::Broadens => "success_new_conditions",
            Role::Failure => "failure",
            Role::Counterexample => "counterexample",
        }
    }
}

/// The role of Experience `e` for Skill `k`; None while its outcome is
/// unknown or it is still going on.
pub(super) fn role(k: &SkillView, e: &Exp) -> Option<Role> {
    if e.status == "ongoing" {
        return None;
    }
    let ok = e.success?;
    let conditions = k.conditions();
    let matching = conditions.is_empty()
        || e.initial_state.is_empty()
        || conditions
            .iter()
            .any(|c| similarity::overlap(c, &e.initial_state) >= MATCHING_CONDITIONS);
    Some(match (ok, matching) {
        (true, true) => Role::Success,
        (true, false) => Role::Broadens,
        (false, true) => Role::Failure,
        (false, false) => Role::Counterexample,
    })
}

fn num(a: &Value, k: &str) -> f64 {
    a.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

fn push_new(list: &mut Vec<String>, t: String) -> bool {
    if t.trim().is_empty() || list.contains(&t) {
        return false;
    }
    list.push(t);
    true
}

/// When an Experience happened: its end, else its start.
fn when(e: &Exp) -> Option<String> {
    [s(&e.attrs, &["ended_at"]), s(&e.attrs, &["started_at"])]
        .into_iter()
        .find(|t| instant(t).is_some())
}

/// The proposal updating Skill `k` with the Experiences `news` (not
/// counted yet); None when none of them is evidence.
pub(super) fn update_draft(cx: &Cx, k: &SkillView, news: &[Exp]) -> Option<Draft> {
    let roles: Vec<(&Exp, Role)> = news
        .iter()
        .filter_map(|e| role(k, e).map(|r| (e, r)))
        .collect();
    if roles.is_empty() {
        return None;
    }
    let a = &k.attrs;
    let (n0, s0, f0) = (
        num(a, "evidence_count"),
        num(a, "success_count"),
        num(a, "failure_count"),
    );
    let u0 = a.get("utility").and_then(Value::as_f64);
    let mut triggers = strs(a.get("trigger_conditions"));
    let mut signals = strs(a.get("failure_signals"));
    let mut not_when = k.excluded();
    let mut outcomes: Vec<f64> = Vec::new();
    let mut last_validated = s(a, &["last_validated_at"]);
    let mut why: Vec<String> = Vec::new();
    for (e, r) in &roles {
        match r {
            Role::Success | Role::Broadens => {
                outcomes.push(1.0);
                let t = when(e).unwrap_or_else(|| cx.opts.now.clone());
                if instant(&t) > instant(&last_validated) {
                    last_validated = t;
                }
                if *r == Role::Broadens && push_new(&mut triggers, e.initial_state.clone()) {
                    why.push(format!(
                        "\"{}\" succeeded in a state the Skill did not list (\"{}\"): added to its trigger conditions",
                        e.name, e.initial_state
                    ));
                } else {
                    why.push(format!("\"{}\" succeeded under its conditions", e.name));
                }
            }
            Role::Failure => {
                outcomes.push(0.0);
                let mut added = 0;
                if !e.outcome.is_empty()
                    && push_new(&mut signals, format!("{} (seen in {})", e.outcome, e.name))
                {
                    added += 1;
                }
                for st in &e.steps {
                    if st.surprise()
                        && !st.actual.is_empty()
                        && push_new(
                            &mut signals,
                            format!("{} after \"{}\"", st.actual, st.summary),
                        )
                    {
                        added += 1;
                    }
                }
                why.push(format!(
                    "\"{}\" failed under its conditions ({added} failure signal{} added)",
                    e.name,
                    if added == 1 { "" } else { "s" }
                ));
            }
            Role::Counterexample => {
                push_new(&mut not_when, e.initial_state.clone());
                why.push(format!(
                    "\"{}\" failed in a state the Skill does not claim (\"{}\"): its scope is narrowed, its record not penalised",
                    e.name, e.initial_state
                ));
            }
        }
    }
    let wins = outcomes.iter().filter(|o| **o > 0.5).count() as f64;
    let losses = outcomes.len() as f64 - wins;
    let (n1, s1, f1) = (n0 + outcomes.len() as f64, s0 + wins, f0 + losses);
    // a running mean: the utility the Skill had weighs as the evidence
    // behind it (at least one Experience when it has a utility but no count)
    let u1 = if outcomes.is_empty() {
        u0
    } else {
        let w = if u0.is_some() { n0.max(1.0) } else { 0.0 };
        let sum: f64 = outcomes.iter().sum();
        Some(
            (((u0.unwrap_or(0.0) * w + sum) / (w + outcomes.len() as f64)) * 100.0).round() / 100.0,
        )
    };
    let m0 = match s(a, &["maturity"]).as_str() {
        "" => "candidate".to_string(),
        m => m.to_string(),
    };
    let failed_here = roles.iter().any(|(_, r)| *r == Role::Failure);
    let m1 = if m0 == "deprecated" {
        m0.clone()
    } else if failed_here && u1.is_some_and(|u| u < NEEDS_REVIEW_UTILITY) {
        "needs_review".to_string()
    } else if m0 == "candidate"
        && s1 >= PROVEN_EXPERIENCES as f64
        && u1.is_some_and(|u| u >= VALIDATED_UTILITY)
    {
        "validated".to_string()
    } else {
        m0.clone()
    };
    let mut context = match a.get("applicability_context") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    if !not_when.is_empty() {
        context.insert("not_when".into(), json!(not_when));
    }
    let mut values = Map::new();
    values.insert("evidence_count".into(), json!(n1.round() as i64));
    values.insert("success_count".into(), json!(s1.round() as i64));
    values.insert("failure_count".into(), json!(f1.round() as i64));
    if let Some(u) = u1 {
        values.insert("utility".into(), json!(u));
    }
    values.insert("maturity".into(), json!(m1));
    values.insert("trigger_conditions".into(), json!(triggers));
    values.insert("failure_signals".into(), json!(signals));
    if !context.is_empty() {
        values.insert("applicability_context".into(), Value::Object(context));
    }
    if !last_validated.is_empty() {
        values.insert("last_validated_at".into(), json!(last_validated));
    }
    let mut commands = vec![
        r#"UPSERT {
  CONCEPT ?k {
    {type: "Skill", name: :skill}
    EXPECT VERSION :v
    SET ATTRIBUTES :values
  }
}
WITH METADATA { source: "SkillEvidence", author: "$system", created_at: :ts }"#
            .to_string(),
    ];
    let mut params = json!({"skill": k.name, "v": k.version, "values": values, "ts": cx.opts.now});
    for (i, (e, r)) in roles.iter().enumerate() {
        params[format!("x{i}")] = json!(e.name);
        params[format!("r{i}")] = json!(r.as_str());
        commands.push(format!(
            r#"UPSERT {{ PROPOSITION ?d {{ ({{type: "Skill", name: :skill}}, "derived_from", {{type: "Experience", name: :x{i}}}) }} }} WITH METADATA {{ source: "SkillEvidence", author: "$system", created_at: :ts, evidence_role: :r{i} }}"#
        ));
        if *r != Role::Counterexample {
            commands.push(format!(
                r#"UPSERT {{ PROPOSITION ?c {{ ({{type: "Experience", name: :x{i}}}, "compiled_to", {{type: "Skill", name: :skill}}) }} }} WITH METADATA {{ source: "SkillEvidence", author: "$system", created_at: :ts }}"#
            ));
            commands.push(format!(
                r#"UPDATE ?x SET ATTRIBUTES {{ consolidation_status: "partially_consolidated" }} WHERE {{ ?x {{type: "Experience", name: :x{i}}} FILTER(IS_NULL(?x.attributes.consolidation_status) || (?x.attributes.consolidation_status != "completed" && ?x.attributes.consolidation_status != "archived")) }}"#
            ));
        }
    }
    let fmt_u = |u: Option<f64>| u.map_or("none".to_string(), |u| format!("{u:.2}"));
    let mut change = format!("utility {} → {}", fmt_u(u0), fmt_u(u1));
    if m1 != m0 {
        change.push_str(&format!(", {m0} → {m1}"));
    }
    let mut ids: Vec<&str> = roles.iter().map(|(e, _)| e.id.as_str()).collect();
    ids.sort_unstable();
    Some(Draft {
        class: "skill".into(),
        key: format!("skill-evidence:{}:{}", k.id, ids.join(",")),
        title: format!(
            "Skill \"{}\": {} new Experience{} ({} succeeded, {} failed); {change}",
            k.name,
            roles.len(),
            if roles.len() == 1 { "" } else { "s" },
            roles
                .iter()
                .filter(|(_, r)| matches!(r, Role::Success | Role::Broadens))
                .count(),
            roles
                .iter()
                .filter(|(_, r)| matches!(r, Role::Failure | Role::Counterexample))
                .count(),
        ),
        commands,
        params: pm(params),
        rationale: format!(
            "{}; evidence {} → {}, successes {} → {}, failures {} → {}",
            why.join("; "),
            n0.round() as i64,
            n1.round() as i64,
            s0.round() as i64,
            s1.round() as i64,
            f0.round() as i64,
            f1.round() as i64
        ),
        evidence: std::iter::once(k.id.clone())
            .chain(roles.iter().map(|(e, _)| e.id.clone()))
            .collect(),
        confidence: 0.8,
    })
}

/// The Experiences not yet counted by the Skill they bear on, grouped by
/// Skill.
fn uncounted(nx: &mut Nexus, skills: &[SkillView]) -> KipResult<Vec<(usize, Vec<Exp>)>> {
    let done = counted(nx)?;
    let v = find(
        nx,
        &format!(
            r#"FIND(?x) WHERE {{ ?x {{type: "Experience"}} FILTER(!IS_NULL(?x.attributes.success) || ?x.attributes.status == "aborted") }} LIMIT {READ}"#
        ),
        json!({}),
    )?;
    let mut groups: BTreeMap<usize, Vec<Exp>> = BTreeMap::new();
    for x in v.as_array().into_iter().flatten() {
        let goal = s(x, &["attributes", "goal"]);
        let Some(i) = skill_for(skills, &goal) else {
            continue;
        };
        if done.contains(&(skills[i].name.clone(), s(x, &["name"]))) {
            continue;
        }
        groups.entry(i).or_default().push(experiences::read(nx, x)?);
    }
    Ok(groups.into_iter().collect())
}

/// 5E: every Skill brought up to date with the Experiences it has not
/// counted.
pub(super) fn skill_evidence(cx: &mut Cx, nx: &mut Nexus) -> KipResult<()> {
    cx.step("skill evidence", 0, 0);
    let (skills, groups) = cx.unlocked(nx, |nx| {
        let skills = skills(nx)?;
        let groups = if skills.is_empty() {
            vec![]
        } else {
            uncounted(nx, &skills)?
        };
        Ok((skills, groups))
    })?;
    let mut drafts = Vec::new();
    for (i, news) in groups {
        cx.cancelled()?;
        drafts.extend(update_draft(cx, &skills[i], &news));
    }
    let n = drafts.len();
    stage(cx, nx, drafts)?;
    cx.count("skill_evidence_updates", n as i64);
    if n > 0 {
        cx.line(format!(
            "Proposed evidence updates for {n} Skill{} from Experiences they had not counted (5E)",
            if n == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}
