//! The Experience Learning profile's rules: experiences scored, compiled
//! into Skills and kept up to date by later ones, repeated failures sent
//! to review, the growth timeline curated.

use super::*;

/// An Experience with its steps: (kind, summary, actual observation,
/// prediction error).
fn experience(
    nx: &mut Nexus,
    name: &str,
    success: bool,
    learning: u32,
    steps: &[(&str, &str, &str, bool)],
) {
    experience_in(
        nx,
        name,
        "Staging reads stale rows after a deploy",
        success,
        learning,
        steps,
    );
}

fn experience_in(
    nx: &mut Nexus,
    name: &str,
    state: &str,
    success: bool,
    learning: u32,
    steps: &[(&str, &str, &str, bool)],
) {
    let mut blocks = String::new();
    let mut links = String::new();
    for (i, (kind, summary, actual, surprise)) in steps.iter().enumerate() {
        let pe = if *surprise {
            r#", prediction_error: "expected the tables to match""#
        } else {
            ""
        };
        blocks.push_str(&format!(
            r#"CONCEPT ?s{i} {{ {{type: "ExperienceStep", name: "{name} step {i}"}} SET ATTRIBUTES {{ index: {i}, kind: "{kind}", summary: "{summary}", actual_observation: "{actual}"{pe} }} }}
"#
        ));
        links.push_str(&format!(r#"("has_step", ?s{i}) "#));
    }
    kip(
        nx,
        &format!(
            r#"UPSERT {{ {blocks}
  CONCEPT ?x {{ {{type: "Experience", name: "{name}"}}
    SET ATTRIBUTES {{ experience_class: "problem_solving", goal: "Diagnose a deployment database mismatch",
      initial_state: "{state}", status: "completed", success: {success},
      outcome: "{}", learning_value: {learning}, consolidation_status: "pending" }}
    SET PROPOSITIONS {{ {links} }} }} }}"#,
            if success {
                "Found the migration that had not run"
            } else {
                "Restarted the service; the mismatch stayed"
            }
        ),
    );
}

fn deployments(nx: &mut Nexus, learning: u32) {
    let ok = [
        (
            "observation",
            "Compare schema versions",
            "versions differ",
            false,
        ),
        ("action", "List pending migrations", "one pending", false),
        ("action", "Run the pending migration", "tables match", false),
    ];
    experience(nx, "Deploy 41 mismatch", true, learning, &ok);
    experience(nx, "Deploy 44 mismatch", true, 40, &ok);
    experience(
        nx,
        "Deploy 45 mismatch",
        false,
        40,
        &[("action", "Restart the service", "rows still stale", true)],
    );
}

#[test]
fn compile_to_skill_proposes_a_skill_from_contrasted_experiences() {
    let mut nx = Nexus::open_in_memory().expect("open");
    deployments(&mut nx, 50);
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?t { {type: "SleepTask", name: "compile deploys"}
             SET ATTRIBUTES { target_type: "Experience", target_name: "Deploy 41 mismatch", requested_action: "compile_to_skill", reason: "test", status: "pending", priority: 3 }
             SET PROPOSITIONS { ("assigned_to", {type: "Person", name: "$system"}) } } }"#,
    );
    let rep = cycle_at(&mut nx, NOW, Params::default());
    assert!(
        !rep.issues.iter().any(|i| i.contains("compile_to_skill")),
        "{:?}",
        rep.issues
    );
    let id = rep.proposal.expect("proposal");
    let items = proposals::items(&nx, id).expect("items");
    let skill = items
        .iter()
        .find(|i| i.class == "skill")
        .expect("a skill item");
    assert!(
        skill.title.contains("from 3 Experiences"),
        "{}",
        skill.title
    );
    assert_eq!(
        skill.params["procedure"],
        json!(["List pending migrations", "Run the pending migration"])
    );
    assert!(
        skill.params["failure_signals"][0]
            .as_str()
            .is_some_and(|f| f.contains("the mismatch stayed")),
        "{}",
        skill.params["failure_signals"]
    );
    assert_eq!(skill.params["maturity"], "candidate");
    // nothing is written before approval
    assert_eq!(
        kip(&mut nx, r#"FIND(COUNT(?k)) WHERE { ?k {type: "Skill"} }"#),
        json!(0)
    );
    let who = somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    };
    let done = proposals::approve(&mut nx, id, Some(&[skill.seq]), &Default::default(), &who)
        .expect("approve");
    assert_eq!(done.applied, vec![skill.seq], "{done:?}");
    let k = kip(
        &mut nx,
        r#"FIND(?x.name) WHERE { ?k {type: "Skill"} (?k, "derived_from", ?x) }"#,
    );
    assert_eq!(k.as_array().map(Vec::len), Some(3), "{k}");
    let c = kip(
        &mut nx,
        r#"FIND(COUNT(?x)) WHERE { ?x {type: "Experience"} (?x, "compiled_to", ?k) }"#,
    );
    assert_eq!(c, json!(3));
    let t = kip(
        &mut nx,
        r#"FIND(?t.attributes.status) WHERE { ?t {type: "SleepTask", name: "compile deploys"} }"#,
    );
    assert_eq!(t, json!(["completed"]));
}

#[test]
fn valuable_experiences_are_compiled_in_a_full_cycle_once() {
    let mut nx = Nexus::open_in_memory().expect("open");
    deployments(&mut nx, 85);
    let rep = cycle(&mut nx);
    let skills = proposed(&nx, &rep, "skill");
    assert_eq!(skills.len(), 1, "{skills:?}");
    // Experiences of little learning value alone are not compiled
    let mut nx = Nexus::open_in_memory().expect("open");
    deployments(&mut nx, 40);
    let rep = cycle(&mut nx);
    assert!(proposed(&nx, &rep, "skill").is_empty());
}

/// A Skill already compiled from two successful deploys.
fn deploy_skill(nx: &mut Nexus, maturity: &str, utility: f64, evidence: u32) {
    let ok = [("action", "Run the pending migration", "tables match", false)];
    experience(nx, "Deploy 41 mismatch", true, 50, &ok);
    experience(nx, "Deploy 44 mismatch", true, 50, &ok);
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?k {{ {{type: "Skill", name: "Diagnose a deployment database mismatch"}}
  SET ATTRIBUTES {{ skill_class: "diagnostic", description: "Find the migration a deploy missed", goal: "Diagnose a deployment database mismatch",
    trigger_conditions: ["Staging reads stale rows after a deploy"], procedure: ["List pending migrations", "Run the pending migration"],
    expected_outcome: "Tables match", failure_signals: [], maturity: "{maturity}", utility: {utility},
    evidence_count: {evidence}, success_count: {evidence}, failure_count: 0 }}
  SET PROPOSITIONS {{ ("derived_from", {{type: "Experience", name: "Deploy 41 mismatch"}}) ("derived_from", {{type: "Experience", name: "Deploy 44 mismatch"}}) }} }} }}
WITH METADATA {{ source: "ProceduralConsolidation", author: "$system", created_at: "2026-10-01T00:00:00Z", confidence: 0.8 }}"#
        ),
    );
}

fn skill_item(nx: &Nexus, rep: &sleep::Report) -> proposals::Item {
    let items = proposals::items(nx, rep.proposal.expect("a proposal")).expect("items");
    let skills: Vec<_> = items.into_iter().filter(|i| i.class == "skill").collect();
    assert_eq!(
        skills.len(),
        1,
        "{:?}",
        skills.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
    skills.into_iter().next().expect("one")
}

fn operator() -> somnus::audit::Who {
    somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    }
}

#[test]
fn new_experiences_update_the_skill_they_bear_on() {
    let mut nx = Nexus::open_in_memory().expect("open");
    deploy_skill(&mut nx, "candidate", 1.0, 2);
    let ok = [("action", "Run the pending migration", "tables match", false)];
    // valuable enough for 5D: still evidence for the Skill, never a twin
    experience(&mut nx, "Deploy 47 mismatch", true, 85, &ok);
    experience(
        &mut nx,
        "Deploy 48 mismatch",
        false,
        85,
        &[("action", "Restart the service", "rows still stale", true)],
    );
    experience_in(
        &mut nx,
        "Failover mismatch",
        "Production database is read-only during a regional failover",
        false,
        40,
        &[("action", "Run the pending migration", "write refused", true)],
    );
    let rep = cycle(&mut nx);
    let it = skill_item(&nx, &rep);
    assert!(
        it.title
            .starts_with("Skill \"Diagnose a deployment database mismatch\": 3 new Experiences"),
        "{}",
        it.title
    );
    let v = &it.params["values"];
    // two under its conditions counted; the failover failure only narrows it
    assert_eq!(v["evidence_count"], json!(4), "{v}");
    assert_eq!(v["success_count"], json!(3), "{v}");
    assert_eq!(v["failure_count"], json!(1), "{v}");
    assert_eq!(v["utility"], json!(0.75), "{v}");
    assert_eq!(v["maturity"], "validated", "{v}");
    assert_eq!(
        v["applicability_context"]["not_when"],
        json!(["Production database is read-only during a regional failover"])
    );
    assert!(
        v["failure_signals"].as_array().is_some_and(|f| f
            .iter()
            .any(|s| s.as_str().is_some_and(|s| s.contains("Deploy 48")))),
        "{v}"
    );
    assert!(
        it.rationale.contains("its record not penalised"),
        "{}",
        it.rationale
    );
    // nothing written before approval
    assert_eq!(
        kip(
            &mut nx,
            r#"FIND(?k.attributes.evidence_count) WHERE { ?k {type: "Skill"} }"#
        ),
        json!([2])
    );
    let done = proposals::approve(
        &mut nx,
        rep.proposal.expect("p"),
        Some(&[it.seq]),
        &Default::default(),
        &operator(),
    )
    .expect("approve");
    assert_eq!(done.applied, vec![it.seq], "{done:?}");
    let k = kip(
        &mut nx,
        r#"FIND(?k.attributes.success_count, ?k.attributes.maturity, ?k.metadata.source) WHERE { ?k {type: "Skill"} }"#,
    );
    // the Skill's origin stays where it came from
    assert_eq!(
        k,
        json!([[3, "validated", "ProceduralConsolidation"]]),
        "{k}"
    );
    assert_eq!(
        kip(
            &mut nx,
            r#"FIND(COUNT(?x)) WHERE { ?k {type: "Skill"} (?k, "derived_from", ?x) }"#
        ),
        json!(5)
    );
    // counted once: the next cycle proposes nothing more for the Skill
    let rep = cycle_at(&mut nx, "2026-11-21T03:00:00Z", Params::default());
    assert!(
        proposed(&nx, &rep, "skill").is_empty(),
        "{:?}",
        proposed(&nx, &rep, "skill")
    );
}

#[test]
fn repeated_failures_send_a_skill_to_review_and_never_reinforce_it() {
    let mut nx = Nexus::open_in_memory().expect("open");
    deploy_skill(&mut nx, "validated", 0.8, 3);
    // the same action, three times, three failures
    for n in [
        "Deploy 50 mismatch",
        "Deploy 51 mismatch",
        "Deploy 52 mismatch",
    ] {
        experience(
            &mut nx,
            n,
            false,
            40,
            &[(
                "action",
                "Run the pending migration",
                "rows still stale",
                true,
            )],
        );
    }
    let rep = cycle(&mut nx);
    let it = skill_item(&nx, &rep);
    let v = &it.params["values"];
    assert_eq!(v["success_count"], json!(3), "{v}");
    assert_eq!(v["failure_count"], json!(3), "{v}");
    assert_eq!(v["utility"], json!(0.4), "{v}");
    assert_eq!(v["maturity"], "needs_review", "{v}");
    assert!(
        it.title.contains("validated → needs_review"),
        "{}",
        it.title
    );
    // the Skill changed since the proposal: its approval is refused as stale
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?k { {type: "Skill", name: "Diagnose a deployment database mismatch"} SET ATTRIBUTES { utility: 0.9 } } }"#,
    );
    let done = proposals::approve(
        &mut nx,
        rep.proposal.expect("p"),
        Some(&[it.seq]),
        &Default::default(),
        &operator(),
    )
    .expect("approve");
    assert!(done.applied.is_empty(), "{done:?}");
    assert_eq!(
        kip(
            &mut nx,
            r#"FIND(?k.attributes.utility) WHERE { ?k {type: "Skill"} }"#
        ),
        json!([0.9])
    );
}

fn milestone(nx: &mut Nexus, name: &str, kind: &str, start: &str, summary: &str, meta: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{
  CONCEPT ?d {{ {{type: "Domain", name: "SelfModel"}} }}
  CONCEPT ?m {{ {{type: "Event", name: "{name}"}}
    SET ATTRIBUTES {{ event_class: "GrowthMilestone", start_time: "{start}", content_summary: "{summary}", participants: ["$self"], context: {{ kind: "{kind}" }} }}
    SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "$self"}}) ("belongs_to_domain", ?d) }} }}
  WITH METADATA {{ {meta} }}
}} WITH METADATA {{ source: "Formation", author: "$self", created_at: "{start}", confidence: 0.9 }}"#
        ),
    );
}

/// `[[metadata], [attributes]]` of the Event named (`[[], []]` when gone).
fn event_meta(nx: &mut Nexus, name: &str) -> Value {
    let of = |nx: &mut Nexus, part: &str| {
        kip(
            nx,
            &format!(
                r#"FIND(?e.{part}) WHERE {{ ?e {{type: "Event"}} FILTER(?e.name == "{name}") }}"#
            ),
        )
    };
    json!([of(nx, "metadata"), of(nx, "attributes")])
}

#[test]
fn the_growth_timeline_is_curated_and_a_legacy_growth_log_migrated() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?s { {type: "Person", name: "$self"} SET ATTRIBUTES {
  self_model_updated_at: "2026-11-01T00:00:00Z", strengths: ["Explaining SQL query plans clearly"],
  growth_log: [
    {date: "2026-01-15", kind: "persona_shift", summary: "I became more concise"},
    "2026-02-01: learned to read Rust borrow errors",
    {timestamp: "2026-03-01T09:00:00Z", kind: "capability_gain", event: "Shipped my first migration"}
  ] } } }"#,
    );
    milestone(
        &mut nx,
        "GrowthMilestone:2026-06-01T10:00:identity",
        "identity_milestone",
        "2026-06-01T10:00:00Z",
        "I decided I am a careful database assistant",
        r#"expires_at: "2026-12-01T00:00:00Z""#,
    );
    milestone(
        &mut nx,
        "GrowthMilestone:2026-10-01T09:00:sql",
        "capability_gain",
        "2026-10-01T09:00:00Z",
        "I learned to explain SQL query plans clearly",
        r#"expires_at: "2026-11-25T00:00:00Z""#,
    );
    milestone(
        &mut nx,
        "GrowthMilestone:2026-10-05T09:00:tz",
        "weakness_acknowledged",
        "2026-10-05T09:00:00Z",
        "I rush answers about time zones",
        r#"expires_at: "2026-11-22T00:00:00Z""#,
    );
    for (i, month) in ["04", "04", "05", "05", "06"].iter().enumerate() {
        milestone(
            &mut nx,
            &format!("GrowthMilestone:2026-{month}-1{i}T09:00:values"),
            "values_emerged",
            &format!("2026-{month}-1{i}T09:00:00Z"),
            &format!("I value honesty about uncertainty ({i})"),
            r#"expires_at: "2027-05-01T00:00:00Z""#,
        );
    }
    let rep = cycle(&mut nx);
    // 1. an identity milestone is a landmark
    let a = event_meta(&mut nx, "GrowthMilestone:2026-06-01T10:00:identity");
    assert_eq!(a[0][0]["memory_tier"], "long-term", "{a}");
    assert!(a[0][0].get("expires_at").is_none(), "{a}");
    // 2. absorbed (a strength says it): left to lapse, marked consolidated
    let b = event_meta(&mut nx, "GrowthMilestone:2026-10-01T09:00:sql");
    assert_eq!(b[0][0]["expires_at"], "2026-11-25T00:00:00Z", "{b}");
    assert_eq!(b[1][0]["consolidation_status"], "completed", "{b}");
    // not absorbed: kept 90 days more
    let c = event_meta(&mut nx, "GrowthMilestone:2026-10-05T09:00:tz");
    assert_eq!(c[0][0]["expires_at"], "2027-02-18T03:00:00Z", "{c}");
    // 3. a crowded quarter: one summary proposed, nothing shortened yet
    let crowd: Vec<String> = proposed(&nx, &rep, "self_model")
        .into_iter()
        .filter(|t| t.starts_with("Summarise"))
        .collect();
    assert_eq!(
        crowd,
        vec![
            "Summarise 5 values emerged milestones of 2026-Q2 as one; the originals expire in 30 days"
        ]
    );
    // 4. the legacy array: three Events, the array gone
    let g = kip(
        &mut nx,
        r#"FIND(?s.attributes.growth_log) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(g, json!([null]), "{g}");
    let p = event_meta(&mut nx, "GrowthMilestone:2026-01-15T00:00:persona_shift");
    assert_eq!(p[0][0]["memory_tier"], "long-term", "{p}");
    assert_eq!(p[0][0]["source"], "GrowthLogMigration", "{p}");
    assert_eq!(p[1][0]["content_summary"], "I became more concise", "{p}");
    let u = event_meta(&mut nx, "GrowthMilestone:2026-02-01T00:00:unclassified");
    assert_eq!(
        u[1][0]["content_summary"], "learned to read Rust borrow errors",
        "{u}"
    );
    assert!(u[0][0].get("expires_at").is_none(), "{u}");
    let m = event_meta(&mut nx, "GrowthMilestone:2026-03-01T09:00:capability_gain");
    assert_eq!(m[0][0]["expires_at"], "2027-11-20T03:00:00Z", "{m}");
    let line = report_line(&rep, "Growth timeline curated");
    assert!(
        line.contains("legacy growth_log migrated (3 entries"),
        "{line}"
    );
    // idempotent: the next cycle migrates and promotes nothing again
    let rep = cycle_at(&mut nx, "2026-11-21T03:00:00Z", Params::default());
    let again = rep
        .phases
        .iter()
        .find(|p| p.phase == 8)
        .map(|p| p.counts.clone())
        .unwrap_or_default();
    assert_eq!(again.get("growth_log_migrated"), Some(&0), "{again:?}");
    assert_eq!(again.get("milestones_promoted"), Some(&0), "{again:?}");
    // the absorbed one lapses with its TTL
    cycle_at(&mut nx, "2026-11-27T03:00:00Z", Params::default());
    assert_eq!(
        event_meta(&mut nx, "GrowthMilestone:2026-10-01T09:00:sql"),
        json!([[], []])
    );
}

/// 1B: Experiences the recorder left unscored get a learning value from
/// their signals, so 5D compiles them (issue 39: before, no Skill was ever
/// compiled unless the recorder set one); a value already set is kept.
#[test]
fn experiences_are_scored_for_learning_value_and_then_compiled() {
    let mut nx = Nexus::open_in_memory().expect("open");
    deployments(&mut nx, 85);
    kip(
        &mut nx,
        r#"DELETE ATTRIBUTES {"learning_value"} FROM ?x WHERE { ?x {type: "Experience"} }"#,
    );
    // one the recorder scored: kept as it is
    experience(
        &mut nx,
        "Renamed a variable",
        true,
        12,
        &[("action", "Rename the variable", "tests pass", false)],
    );
    let rep = cycle(&mut nx);
    let v = kip(
        &mut nx,
        r#"FIND(?x.name, ?x.attributes.learning_value, ?x.attributes.learning_value_basis) WHERE { ?x {type: "Experience"} } ORDER BY ?x.name ASC"#,
    );
    let rows: Vec<(String, f64, String)> = v
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap_or("").to_string(),
                r[1].as_f64().unwrap_or(-1.0),
                r[2].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let get = |n: &str| rows.iter().find(|r| r.0 == n).cloned().expect(n);
    // the failed attempt with a prediction error, beside successes of the
    // same goal, is the one most worth learning from
    let failed = get("Deploy 45 mismatch");
    assert!(failed.1 >= 70.0, "{failed:?}");
    assert!(failed.2.contains("prediction error"), "{failed:?}");
    assert!(failed.2.contains("goal recurs"), "{failed:?}");
    let ok = get("Deploy 41 mismatch");
    assert!(ok.1 > 30.0 && ok.1 < failed.1, "{ok:?}");
    assert_eq!(get("Renamed a variable").1, 12.0);
    assert_eq!(get("Renamed a variable").2, "");
    assert_eq!(rep.count("learning_value_scored"), 3);
    let skills = proposed(&nx, &rep, "skill");
    assert_eq!(skills.len(), 1, "{skills:?}");
    // (the helper gives every Experience the same goal: all four are one
    // group)
    assert!(skills[0].contains("from 4 Experiences"), "{skills:?}");
    // where the Experiences came from is untouched
    let src = kip(
        &mut nx,
        r#"FIND(?x.metadata.source) WHERE { ?x {type: "Experience", name: "Deploy 45 mismatch"} }"#,
    );
    assert_ne!(src, json!(["LearningValueScoring"]), "{src}");
}

/// `consolidate_to_semantic` on an Experience proposes the lesson it
/// states as an Insight (issue 39: the task ended "nothing to change").
#[test]
fn an_experience_consolidated_to_semantic_gives_its_lesson_as_an_insight() {
    let mut nx = Nexus::open_in_memory().expect("open");
    deployments(&mut nx, 50);
    experience(&mut nx, "Quiet attempt", true, 20, &[]);
    kip(
        &mut nx,
        r#"DELETE ATTRIBUTES {"outcome"} FROM ?x WHERE { ?x {type: "Experience", name: "Quiet attempt"} }"#,
    );
    for (task, target) in [
        ("learn from deploy 45", "Deploy 45 mismatch"),
        ("learn from the quiet one", "Quiet attempt"),
    ] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?t {{ {{type: "SleepTask", name: "{task}"}}
             SET ATTRIBUTES {{ target_type: "Experience", target_name: "{target}", requested_action: "consolidate_to_semantic", reason: "test", status: "pending", priority: 2 }}
             SET PROPOSITIONS {{ ("assigned_to", {{type: "Person", name: "$system"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let items: Vec<proposals::Item> = proposals::items(&nx, rep.proposal.expect("proposal"))
        .expect("items")
        .into_iter()
        .filter(|i| i.title.starts_with("Insight"))
        .collect();
    assert_eq!(items.len(), 1, "{items:?}");
    let it = &items[0];
    assert!(it.title.contains("Deploy 45 mismatch"), "{}", it.title);
    assert_eq!(it.params["class"], "lesson_learned");
    assert_eq!(it.params["trigger"], "expected the tables to match");
    let quiet = kip(
        &mut nx,
        r#"FIND(?t.attributes.result) WHERE { ?t {type: "SleepTask", name: "learn from the quiet one"} }"#,
    );
    assert!(
        quiet[0]
            .as_str()
            .is_some_and(|r| r.contains("no outcome and no prediction error")),
        "{quiet}"
    );
    let who = somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    };
    proposals::approve(
        &mut nx,
        it.proposal,
        Some(&[it.seq]),
        &Default::default(),
        &who,
    )
    .expect("approve");
    let v = kip(
        &mut nx,
        r#"FIND(?i.name, ?x.attributes.consolidation_status) WHERE {
  ?x {type: "Experience", name: "Deploy 45 mismatch"}
  (?x, "derived_insight", ?i)
  (?i, "derived_from", ?x)
  ({type: "Person", name: "$self"}, "learned", ?i)
}"#,
    );
    assert_eq!(
        v,
        json!([
            ["Lesson: Diagnose a deployment database mismatch"],
            ["partially_consolidated"]
        ]),
        "{v}"
    );
}
