//! The sleep cycle does what the sleep-mode rules say: each rule on its own
//! small memory, built for it (not the demo).

mod common;

use serde_json::{Map, Value, json};
use somnus::protocol::{Outcome, Request};
use somnus::review::proposals;
use somnus::sleep::{self, Heuristic, Options, Params, Scope};
use somnus::{Nexus, Response};

const NOW: &str = "2026-11-20T03:00:00Z";

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let req = Request::command(cmd).with_params(Map::new());
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

fn cycle_at(nx: &mut Nexus, now: &str, params: Params) -> sleep::Report {
    let mut o = Options::new(Scope::Full, now);
    o.params = params;
    sleep::run(nx, &o, &mut Heuristic, None, None).expect("cycle")
}

fn cycle(nx: &mut Nexus) -> sleep::Report {
    cycle_at(nx, NOW, Params::default())
}

fn proposed(nx: &Nexus, rep: &sleep::Report, class: &str) -> Vec<String> {
    rep.proposal
        .map(|id| proposals::items(nx, id).expect("items"))
        .unwrap_or_default()
        .into_iter()
        .filter(|i| i.class == class)
        .map(|i| i.title)
        .collect()
}

/// Ada and a few registered predicates of every kind.
fn schema(nx: &mut Nexus) {
    kip(
        nx,
        r#"UPSERT {
  CONCEPT ?city { {type: "$ConceptType", name: "City"} }
  CONCEPT ?topic { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?a { {type: "$PropositionType", name: "interested_in"} SET ATTRIBUTES { description: "an interest" } }
  CONCEPT ?b { {type: "$PropositionType", name: "works_with"} SET ATTRIBUTES { description: "a colleague" } }
  CONCEPT ?c { {type: "$PropositionType", name: "married_to"} SET ATTRIBUTES { description: "spouse" } }
  CONCEPT ?d { {type: "$PropositionType", name: "lives_in"} SET ATTRIBUTES { description: "home" } }
  CONCEPT ?ada { {type: "Person", name: "Ada"} }
}"#,
    );
}

/// One fact of Ada's, with the metadata given.
fn fact(nx: &mut Nexus, pred: &str, ty: &str, object: &str, meta: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?o {{ {{type: "{ty}", name: "{object}"}} }}
  CONCEPT ?ada {{ {{type: "Person", name: "Ada"}} SET PROPOSITIONS {{ ("{pred}", ?o) WITH METADATA {meta} }} }} }}"#
        ),
    );
}

fn link_meta(nx: &mut Nexus, pred: &str, object: &str) -> Value {
    let v = kip(
        nx,
        &format!(
            r#"FIND(?l) WHERE {{ ?l ({{type: "Person", name: "Ada"}}, "{pred}", ?o) FILTER(?o.name == "{object}") }}"#
        ),
    );
    v[0]["metadata"].clone()
}

fn strength(nx: &mut Nexus, pred: &str, object: &str) -> f64 {
    link_meta(nx, pred, object)["memory_strength"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

#[test]
fn decay_counts_weeks_elapsed_the_same_for_hourly_daily_or_weekly_cycles() {
    let mut results = vec![];
    // weekly, daily and every six hours over the same fortnight
    for step_hours in [168i64, 24, 6] {
        let mut nx = Nexus::open_in_memory().expect("open");
        schema(&mut nx);
        fact(
            &mut nx,
            "interested_in",
            "Topic",
            "Jazz",
            r#"{ confidence: 0.7, memory_strength: 0.8, observed_at: "2026-09-21T03:00:00Z" }"#,
        );
        let start = chrono::DateTime::parse_from_rfc3339(NOW).expect("now");
        let mut h = 0;
        while h <= 14 * 24 {
            let at = (start + chrono::Duration::hours(h))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            cycle_at(&mut nx, &at, Params::default());
            h += step_hours;
        }
        results.push(strength(&mut nx, "interested_in", "Jazz"));
    }
    // stale since 2026-09-28 (observed + 7 days), decayed until 2026-12-04:
    // 67 days at 0.95 per week
    let expected = 0.8 * 0.95f64.powf(67.0 / 7.0);
    for r in &results {
        assert!((r - expected).abs() < 1e-6, "{results:?} vs {expected}");
    }
}

#[test]
fn a_fact_younger_than_the_threshold_does_not_decay() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    // observed 16 hours before the cycle, and 8 days before it
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Chess",
        r#"{ confidence: 0.7, memory_strength: 0.8, observed_at: "2026-11-19T11:00:00Z" }"#,
    );
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Go",
        r#"{ confidence: 0.7, memory_strength: 0.8, observed_at: "2026-11-12T03:00:00Z" }"#,
    );
    cycle(&mut nx);
    let m = link_meta(&mut nx, "interested_in", "Chess");
    assert_eq!(m["memory_strength"], json!(0.8), "{m}");
    assert!(m.get("strength_decay_applied_at").is_none(), "{m}");
    // one day past the threshold: one seventh of a week's decay
    let go = strength(&mut nx, "interested_in", "Go");
    assert!((go - 0.8 * 0.95f64.powf(1.0 / 7.0)).abs() < 1e-9, "{go}");
}

#[test]
fn bands_follow_evidence_salience_and_confidence() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    let old = r#"observed_at: "2026-10-23T03:00:00Z""#; // 28 days: 3 weeks stale
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Cello",
        &format!("{{ confidence: 0.8, memory_strength: 0.8, evidence_count: 5, {old} }}"),
    );
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Opera",
        &format!("{{ confidence: 0.8, memory_strength: 0.8, salience_score: 85, {old} }}"),
    );
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Knitting",
        &format!("{{ confidence: 0.8, memory_strength: 0.8, {old} }}"),
    );
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Rumours",
        &format!("{{ confidence: 0.3, memory_strength: 0.8, evidence_count: 1, {old} }}"),
    );
    cycle(&mut nx);
    let f: f64 = 0.95;
    for (o, band, factor) in [
        ("Cello", "reinforced", f.sqrt()),
        ("Opera", "reinforced", f.sqrt()),
        ("Knitting", "neglected", f),
        ("Rumours", "clutter", f * f),
    ] {
        let m = link_meta(&mut nx, "interested_in", o);
        let got = m["memory_strength"].as_f64().expect("strength");
        assert!(
            (got - 0.8 * factor.powi(3)).abs() < 1e-9,
            "{o}: {got} vs {}",
            0.8 * factor.powi(3)
        );
        assert!(
            m["strength_decay_rule"]
                .as_str()
                .is_some_and(|r| r.starts_with(band)),
            "{o}: {m}"
        );
    }
}

#[test]
fn commitments_identity_pinned_and_certain_facts_do_not_decay() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    let old = r#"observed_at: "2026-01-01T00:00:00Z""#;
    fact(
        &mut nx,
        "married_to",
        "Person",
        "Ben",
        &format!("{{ confidence: 0.9, memory_strength: 0.8, {old} }}"),
    );
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Bach",
        &format!("{{ confidence: 0.9, memory_strength: 0.8, pinned: true, {old} }}"),
    );
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Maths",
        &format!("{{ confidence: 1.0, memory_strength: 0.8, {old} }}"),
    );
    cycle(&mut nx);
    for (p, o) in [
        ("married_to", "Ben"),
        ("interested_in", "Bach"),
        ("interested_in", "Maths"),
    ] {
        assert_eq!(strength(&mut nx, p, o), 0.8, "{p} {o}");
    }
}

#[test]
fn archival_weighs_importance_and_leaves_true_stable_facts_alone() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    let old = r#"observed_at: "2026-04-01T00:00:00Z""#; // 233 days
    // stable facts nobody recalled for months: colleagues, a home, a
    // marriage
    for i in 0..12 {
        fact(
            &mut nx,
            "works_with",
            "Person",
            &format!("Colleague {i}"),
            &format!("{{ confidence: 0.9, {old} }}"),
        );
    }
    fact(
        &mut nx,
        "lives_in",
        "City",
        "Oslo",
        &format!("{{ confidence: 0.8, {old} }}"),
    );
    fact(
        &mut nx,
        "married_to",
        "Person",
        "Ben",
        &format!("{{ confidence: 0.6, memory_strength: 0.05, {old} }}"),
    );
    // a faint, weak, unconfirmed one: this deserves a look
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Curling",
        &format!("{{ confidence: 0.45, memory_strength: 0.1, {old} }}"),
    );
    // as faint, but a correction of an earlier fact
    fact(
        &mut nx,
        "lives_in",
        "City",
        "Bergen",
        &format!(
            "{{ confidence: 0.45, memory_strength: 0.1, source: \"user correction\", {old} }}"
        ),
    );
    let rep = cycle(&mut nx);
    let titles = proposed(&nx, &rep, "archive");
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(
        titles[0].contains("Ada interested_in Curling"),
        "{titles:?}"
    );
}

fn commitment(nx: &mut Nexus, name: &str, due: &str, made: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?c {{ {{type: "Commitment", name: "{name}"}}
  SET ATTRIBUTES {{ status: "pending", due_at: "{due}", commitment_class: "promise" }} }}
  WITH METADATA {{ source: "conversation", author: "$self", created_at: "{made}" }} }}"#
        ),
    );
}

fn status(nx: &mut Nexus, name: &str) -> Value {
    kip(
        nx,
        &format!(r#"FIND(?c) WHERE {{ ?c {{type: "Commitment", name: "{name}"}} }}"#),
    )[0]
    .clone()
}

#[test]
fn due_dates_and_expiries_are_compared_as_instants() {
    let mut nx = Nexus::open_in_memory().expect("open");
    // 10:00 in Tokyo is 01:00Z, two hours before the cycle's clock; 22:00
    // in Chicago the evening before is 04:00Z, an hour after it
    commitment(
        &mut nx,
        "Call the bank",
        "2026-11-20T10:00:00+09:00",
        "2026-11-01T00:00:00Z",
    );
    commitment(
        &mut nx,
        "Water the plants",
        "2026-11-19T22:00:00-06:00",
        "2026-11-01T00:00:00Z",
    );
    for (name, exp) in [
        ("Tokyo chat", "2026-11-20T10:00:00+09:00"),
        ("Chicago chat", "2026-11-19T22:00:00-06:00"),
    ] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}}
  SET ATTRIBUTES {{ event_class: "ToolUse", start_time: "2026-11-01T10:00:00Z", content_summary: "lookup", consolidation_status: "completed", salience_score: 5 }} }}
  WITH METADATA {{ expires_at: "{exp}" }} }}"#
            ),
        );
    }
    let h = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    assert_eq!(
        h.get("overdue_commitments").expect("metric").items,
        vec!["Call the bank".to_string()]
    );
    let rep = cycle(&mut nx);
    let overdue: Vec<&String> = rep
        .issues
        .iter()
        .filter(|i| i.starts_with("Overdue commitment: \""))
        .collect();
    assert_eq!(overdue.len(), 1, "{overdue:?}");
    assert!(overdue[0].contains("Call the bank"), "{overdue:?}");
    let gone = |nx: &mut Nexus, n: &str| {
        kip(
            nx,
            &format!(
                r#"FIND(COUNT(?e)) WHERE {{ ?e {{type: "Event"}} FILTER(?e.name == "{n}") }}"#
            ),
        ) == json!(0)
    };
    assert!(gone(&mut nx, "Tokyo chat"), "expired before now");
    assert!(!gone(&mut nx, "Chicago chat"), "expires an hour after now");
}

#[test]
fn a_commitment_a_later_event_delivered_is_closed() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let made = "2026-11-01T09:00:00Z";
    commitment(
        &mut nx,
        "Send Priya the migration checklist",
        "2026-11-30T12:00:00Z",
        made,
    );
    commitment(
        &mut nx,
        "Book the Kyoto hotel",
        "2026-12-15T12:00:00Z",
        made,
    );
    commitment(
        &mut nx,
        "Send the invoice to Acme",
        "2026-12-15T12:00:00Z",
        made,
    );
    commitment(
        &mut nx,
        "Return the library books",
        "2026-12-15T12:00:00Z",
        made,
    );
    let event = |nx: &mut Nexus, name: &str, start: &str, summary: &str, about: Option<&str>| {
        let link = about
            .map(|c| {
                format!(
                    r#"SET PROPOSITIONS {{ ("mentions", {{type: "Commitment", name: "{c}"}}) }}"#
                )
            })
            .unwrap_or_default();
        kip(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "{start}", content_summary: "{summary}" }} {link} }} }}"#
            ),
        );
    };
    // linked, after the promise, says it plainly: closed
    event(
        &mut nx,
        "Email to Priya",
        "2026-11-05T10:00:00Z",
        "Sent Priya the migration checklist by email",
        Some("Send Priya the migration checklist"),
    );
    // not linked, the words match: proposed
    event(
        &mut nx,
        "Travel planning",
        "2026-11-10T10:00:00Z",
        "Booked the Kyoto hotel for March",
        None,
    );
    // linked but says it was not done: left pending
    event(
        &mut nx,
        "Accounts chat",
        "2026-11-12T10:00:00Z",
        "Did not send the invoice to Acme yet",
        Some("Send the invoice to Acme"),
    );
    // linked and done, but before the promise was made: not this one
    event(
        &mut nx,
        "Library visit",
        "2026-10-20T10:00:00Z",
        "Returned the library books",
        Some("Return the library books"),
    );
    let rep = cycle(&mut nx);
    let c = status(&mut nx, "Send Priya the migration checklist");
    assert_eq!(c["attributes"]["status"], "fulfilled", "{c}");
    assert_eq!(c["attributes"]["fulfilled_by"], "Email to Priya", "{c}");
    assert_eq!(
        c["attributes"]["fulfilled_at"], "2026-11-05T10:00:00Z",
        "{c}"
    );
    // where it came from is untouched
    assert_eq!(c["metadata"]["source"], "conversation", "{c}");
    assert_eq!(c["metadata"]["created_at"], made, "{c}");
    let titles = proposed(&nx, &rep, "commitment");
    assert!(
        titles
            .iter()
            .any(|t| t.contains("Book the Kyoto hotel") && t.contains("Travel planning")),
        "{titles:?}"
    );
    for n in [
        "Book the Kyoto hotel",
        "Send the invoice to Acme",
        "Return the library books",
    ] {
        assert_eq!(status(&mut nx, n)["attributes"]["status"], "pending", "{n}");
    }
    assert!(
        !titles
            .iter()
            .any(|t| t.contains("invoice") || t.contains("library")),
        "{titles:?}"
    );
}

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
    let line = rep
        .phases
        .iter()
        .flat_map(|p| p.lines.iter())
        .find(|l| l.starts_with("Growth timeline curated"))
        .cloned()
        .unwrap_or_default();
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

#[test]
fn missing_core_structure_is_reported_and_restored() {
    let dir = std::env::temp_dir().join(format!("somnus-structure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join("m.db");
    let _ = std::fs::remove_file(&db);
    drop(Nexus::open(&db).expect("open"));
    // edited outside somnus: the SleepTask type, the Unsorted domain and
    // the consolidated_to predicate are gone
    {
        let c = rusqlite::Connection::open(&db).expect("sqlite");
        // somnus's audit triggers call its functions: an outside tool
        // has none, so these answer "no audit context"
        for f in ["somnus_audit_entry", "somnus_audit_first_id"] {
            c.create_scalar_function(
                f,
                0,
                rusqlite::functions::FunctionFlags::SQLITE_UTF8,
                |_| Ok(None::<i64>),
            )
            .expect("function");
        }
        c.execute_batch(
            r#"DELETE FROM concepts WHERE (type = '$ConceptType' AND name = 'SleepTask')
                 OR (type = 'Domain' AND name = 'Unsorted')
                 OR (type = '$PropositionType' AND name = 'consolidated_to');"#,
        )
        .expect("delete");
    }
    let mut nx = Nexus::open(&db).expect("reopen");
    let h = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    let m = h.get("missing_structure").expect("metric");
    assert_eq!(m.value, 3.0, "{:?}", m.items);
    assert!(m.items.contains(&"$ConceptType:SleepTask".to_string()));
    let rep = cycle(&mut nx);
    assert_eq!(rep.status, "completed", "{:?}", rep.issues);
    assert_eq!(
        rep.count("structure_restored"),
        3,
        "{:?} {:?}",
        rep.issues,
        rep.phases[0].lines
    );
    let h = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    assert_eq!(h.get("missing_structure").expect("metric").value, 0.0);
    // restored by $system, with the reason, in the audit trail
    let f = somnus::audit::Filter {
        actor: Some("$system".into()),
        limit: 1000,
        ..Default::default()
    };
    let entries = nx.audit_list(&f).expect("audit");
    assert!(
        entries.iter().any(|e| e
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("restoring missing core structure"))),
        "no audit entry says why"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn strength_of(nx: &mut Nexus, ty: &str, name: &str) -> Option<f64> {
    let v = kip(
        nx,
        &format!(
            r#"FIND(?c.metadata) WHERE {{ ?c {{type: "{ty}"}} FILTER(?c.name == "{name}") }}"#
        ),
    );
    v[0]["memory_strength"].as_f64()
}

#[test]
fn concepts_fade_like_links_but_not_people_promises_or_certainties() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Event", name: "Chat about harbour jazz"} SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-05-01T10:00:00Z", content_summary: "we talked about harbour jazz" } }
  CONCEPT ?b { {type: "Event", name: "Chat about cellar jazz"} SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-11-19T10:00:00Z", content_summary: "we talked about cellar jazz" } }
  CONCEPT ?c { {type: "Event", name: "Wedding toast"} SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-05-01T10:00:00Z", content_summary: "the toast at the wedding", salience_score: 95 } }
  CONCEPT ?d { {type: "Topic", name: "Garden jazz"} SET ATTRIBUTES { description: "jazz in the garden" } }
  CONCEPT ?e { {type: "Topic", name: "Rooftop jazz"} SET ATTRIBUTES { description: "jazz on the roof" } }
  WITH METADATA { confidence: 1.0 }
  CONCEPT ?p { {type: "Person", name: "Old friend Ines"} SET ATTRIBUTES { person_class: "Human" } }
} WITH METADATA { source: "conversation", author: "$self", created_at: "2026-05-01T10:00:00Z", confidence: 0.8 }"#,
    );
    let rep = cycle(&mut nx);
    let old = strength_of(&mut nx, "Event", "Chat about harbour jazz").expect("faded");
    assert!(old < 0.3, "{old}");
    // a salient Event is reinforced: it fades, more slowly
    let toast = strength_of(&mut nx, "Event", "Wedding toast").expect("faded");
    assert!(toast > old && toast < 0.7, "{toast} vs {old}");
    // a node stale for the same time fades as much as an Event
    assert!(strength_of(&mut nx, "Topic", "Garden jazz").is_some());
    // fresh, certain, a person: untouched
    assert_eq!(
        strength_of(&mut nx, "Event", "Chat about cellar jazz"),
        None
    );
    assert_eq!(strength_of(&mut nx, "Topic", "Rooftop jazz"), None);
    assert_eq!(strength_of(&mut nx, "Person", "Old friend Ines"), None);
    // confidence is never what fades
    let c = kip(
        &mut nx,
        r#"FIND(?c.metadata.confidence) WHERE { ?c {type: "Event"} FILTER(?c.name == "Chat about harbour jazz") }"#,
    );
    assert_eq!(c, json!([0.8]));
    let line = rep
        .phases
        .iter()
        .flat_map(|p| p.lines.iter())
        .find(|l| l.contains("concepts:"))
        .cloned()
        .unwrap_or_default();
    assert!(
        line.starts_with("Decayed memory strength on 3 concepts"),
        "{line}"
    );
    // the same night again: nothing decays twice
    cycle(&mut nx);
    assert_eq!(
        strength_of(&mut nx, "Event", "Chat about harbour jazz"),
        Some(old)
    );
    // and a faded node ranks after a fresh one in SEARCH
    let v = kip(
        &mut nx,
        r#"SEARCH CONCEPT "chat about jazz" WITH TYPE "Event" LIMIT 5"#,
    );
    let names: Vec<&str> = v
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names.first(), Some(&"Chat about cellar jazz"), "{v}");
}

#[test]
fn memory_strength_ranks_search_results_without_hiding_any() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Topic", name: "Harbour jazz night"} SET ATTRIBUTES { description: "jazz by the harbour" } }
  WITH METADATA { memory_strength: 0.1 }
  CONCEPT ?b { {type: "Topic", name: "Cellar jazz night"} SET ATTRIBUTES { description: "jazz in the cellar" } }
  CONCEPT ?c { {type: "Topic", name: "Rooftop jazz night"} SET ATTRIBUTES { description: "jazz on the roof", status: "archived" } }
  CONCEPT ?d { {type: "Topic", name: "Garden jazz night"} SET ATTRIBUTES { description: "jazz in the garden" } }
  WITH METADATA { memory_strength: 0.35 }
}"#,
    );
    let v = kip(&mut nx, r#"SEARCH CONCEPT "jazz night" LIMIT 10"#);
    let names: Vec<&str> = v
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "Cellar jazz night",
            "Garden jazz night",
            "Harbour jazz night",
            "Rooftop jazz night"
        ],
        "{v}"
    );
    // the unweighted relevance is shown beside a lowered score
    let harbour = &v[2]["metadata"];
    assert!(
        harbour["_score"].as_f64() < harbour["_relevance"].as_f64(),
        "{harbour}"
    );
    // links: the stronger first within a predicate's page
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Cellar jazz night",
        "{ memory_strength: 0.9 }",
    );
    fact(
        &mut nx,
        "interested_in",
        "Topic",
        "Harbour jazz night",
        "{ memory_strength: 0.1 }",
    );
    let v = kip(&mut nx, r#"SEARCH PROPOSITION "interest" LIMIT 10"#);
    let strengths: Vec<f64> = v
        .as_array()
        .expect("links")
        .iter()
        .filter_map(|l| l["metadata"]["memory_strength"].as_f64())
        .collect();
    assert_eq!(strengths, [0.9, 0.1], "{v}");
}

#[test]
fn the_newer_of_two_facts_is_the_later_instant_not_the_larger_string() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?city { {type: "$ConceptType", name: "City"} }
  CONCEPT ?l { {type: "$PropositionType", name: "lives_in"} SET ATTRIBUTES { description: "home", cardinality: "single" } }
  CONCEPT ?ada { {type: "Person", name: "Ada"} }
}"#,
    );
    // 08:00 in Tokyo on the 10th is 23:00Z on the 9th; 20:00 in Chicago on
    // the 9th is 02:00Z on the 10th: Chicago is the newer, though its
    // string sorts first
    fact(
        &mut nx,
        "lives_in",
        "City",
        "Tokyo",
        r#"{ confidence: 0.8, observed_at: "2026-11-10T08:00:00+09:00" }"#,
    );
    fact(
        &mut nx,
        "lives_in",
        "City",
        "Chicago",
        r#"{ confidence: 0.8, observed_at: "2026-11-09T20:00:00-06:00" }"#,
    );
    let chicago = kip(
        &mut nx,
        r#"FIND(?l) WHERE { ?l ({type: "Person", name: "Ada"}, "lives_in", {type: "City", name: "Chicago"}) }"#,
    )[0]["id"]
        .clone();
    let rep = cycle(&mut nx);
    let id = rep.proposal.expect("proposal");
    let item = proposals::items(&nx, id)
        .expect("items")
        .into_iter()
        .find(|i| i.class == "contradiction")
        .expect("a contradiction item");
    assert_eq!(
        item.params["current_link_id"], chicago,
        "{}",
        item.rationale
    );
}

/// 5A: a stale Event that states a preference outright gets a new
/// Preference, proposed, derived from it, with its holder's `prefers`
/// link; a decision the memory has no type for is reported, not forced
/// into another type; what the Event already links to is not made twice.
#[test]
fn consolidation_extracts_what_an_event_states() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?ada { {type: "Person", name: "Ada Park"} }
  CONCEPT ?e { {type: "Event", name: "Conversation:2026-10-01:travel"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z",
      content_summary: "Planning the Lisbon trip. Ada prefers window seats on long flights because she sleeps; decided to book the night train" }
    SET PROPOSITIONS { ("involves", {type: "Person", name: "Ada Park"}) } }
}"#,
    );
    let rep = cycle(&mut nx);
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let it = p
        .items
        .iter()
        .find(|i| i.class == "consolidate" && i.title.contains("Conversation:2026-10-01:travel"))
        .unwrap_or_else(|| panic!("{:?}", p.items.iter().map(|i| &i.title).collect::<Vec<_>>()));
    assert!(
        it.title
            .contains("Preference:Prefers window seats on long flights"),
        "{}",
        it.title
    );
    assert!(it.rationale.contains("\"prefers\""), "{}", it.rationale);
    let text = rep.markdown();
    assert!(
        text.contains("Events state 1 thing the memory has no Decision type to keep in: \"Book the night train\""),
        "{text}"
    );
    // nothing is created before approval
    let v = kip(
        &mut nx,
        r#"FIND(COUNT(?p)) WHERE { ?p {type: "Preference"} }"#,
    );
    assert_eq!(v, json!(0));
    proposals::approve(
        &mut nx,
        p.id,
        Some(&[it.seq]),
        &Default::default(),
        &somnus::audit::Who {
            actor: "operator".into(),
            trigger: "test".into(),
            reason: None,
        },
    )
    .unwrap();
    let v = kip(
        &mut nx,
        r#"FIND(?p.name, ?e.name) WHERE {
  ?a {type: "Person", name: "Ada Park"}
  (?a, "prefers", ?p)
  (?p, "derived_from", ?e)
  (?e, "consolidated_to", ?p)
}"#,
    );
    assert_eq!(
        v,
        json!([
            ["Prefers window seats on long flights"],
            ["Conversation:2026-10-01:travel"]
        ]),
        "{v}"
    );
    // the next cycle makes nothing twice
    let rep = cycle(&mut nx);
    assert!(
        proposed(&nx, &rep, "consolidate")
            .iter()
            .all(|t| !t.contains("Prefers window seats"))
    );
}

/// 5B: a pattern drawn from Events marks them consolidated into it.
#[test]
fn a_pattern_marks_its_source_events_consolidated() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada Park"} } CONCEPT ?t { {type: "$ConceptType", name: "Topic"} } CONCEPT ?c { {type: "Topic", name: "Cello"} } }"#,
    );
    for d in ["14", "16", "18"] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Lesson:2026-11-{d}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-11-{d}T10:00:00Z", content_summary: "Cello lesson with Ada", key_concepts: ["Cello"], participants: ["Ada Park"] }}
  SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "Ada Park"}}) ("mentions", {{type: "Topic", name: "Cello"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let it = p
        .items
        .iter()
        .find(|i| i.class == "pattern")
        .unwrap_or_else(|| panic!("{:?}", p.items.iter().map(|i| &i.title).collect::<Vec<_>>()));
    proposals::approve(
        &mut nx,
        p.id,
        Some(&[it.seq]),
        &Default::default(),
        &somnus::audit::Who {
            actor: "operator".into(),
            trigger: "test".into(),
            reason: None,
        },
    )
    .unwrap();
    let v = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} (?e, "consolidated_to", ?i) ?i {type: "Insight"} FILTER(?e.attributes.consolidation_status == "completed") }"#,
    );
    assert_eq!(v, json!(3), "{v}");
}

/// 5B: a preference stated in several recent Events (with different key
/// concepts alongside) becomes its holder's Preference, and Events on one
/// weekday a routine.
#[test]
fn patterns_are_preferences_and_routines_as_well_as_insights() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?ada { {type: "Person", name: "Ada Park"} } CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?c { {type: "Topic", name: "Coffee"} } CONCEPT ?q { {type: "Topic", name: "Quartet"} } }"#,
    );
    let ev = |nx: &mut Nexus, name: &str, at: &str, summary: &str, concepts: &str, topic: &str| {
        kip(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "{at}", content_summary: "{summary}", key_concepts: {concepts}, participants: ["Ada Park"] }}
  SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "Ada Park"}}) ("mentions", {{type: "Topic", name: "{topic}"}}) }} }} }}"#
            ),
        );
    };
    // three mornings, other subjects alongside each time
    ev(
        &mut nx,
        "Chat:1",
        "2026-11-02T08:00:00Z",
        "Ada prefers oat milk in her coffee",
        r#"["Coffee", "Travel"]"#,
        "Coffee",
    );
    ev(
        &mut nx,
        "Chat:2",
        "2026-11-06T08:00:00Z",
        "Ada prefers oat milk in her coffee. Long day ahead",
        r#"["Coffee", "Work"]"#,
        "Coffee",
    );
    ev(
        &mut nx,
        "Chat:3",
        "2026-11-12T08:00:00Z",
        "Coffee order; Ada prefers oat milk in her coffee",
        r#"["Coffee"]"#,
        "Coffee",
    );
    // Tuesday evenings, three weeks running
    for d in ["03", "10", "17"] {
        ev(
            &mut nx,
            &format!("Quartet:{d}"),
            &format!("2026-11-{d}T19:00:00Z"),
            "Quartet rehearsal",
            r#"["Quartet"]"#,
            "Quartet",
        );
    }
    let rep = cycle(&mut nx);
    let titles = proposed(&nx, &rep, "pattern");
    assert!(
        titles
            .iter()
            .any(|t| t == "New Preference \"Prefers oat milk in her coffee\" from 3 Events"),
        "{titles:?}"
    );
    assert!(
        titles.iter().any(
            |t| t == "New Insight \"Routine: Quartet with Ada Park on Tuesdays\" from 3 Events"
        ),
        "{titles:?}"
    );
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    let seqs: Vec<i64> = p
        .items
        .iter()
        .filter(|i| i.class == "pattern")
        .map(|i| i.seq)
        .collect();
    proposals::approve(
        &mut nx,
        p.id,
        Some(&seqs),
        &Default::default(),
        &somnus::audit::Who {
            actor: "operator".into(),
            trigger: "test".into(),
            reason: None,
        },
    )
    .unwrap();
    let v = kip(
        &mut nx,
        r#"FIND(?p.attributes.pattern_kind, ?p.attributes.evidence_count) WHERE { ({type: "Person", name: "Ada Park"}, "prefers", ?p) }"#,
    );
    assert_eq!(v, json!([["preference", 3]]), "{v}");
    let v = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} (?e, "consolidated_to", ?p) FILTER(?e.attributes.consolidation_status == "completed") }"#,
    );
    assert_eq!(v, json!(6), "{v}");
    // the next cycle proposes none of them again
    let rep = cycle(&mut nx);
    assert!(proposed(&nx, &rep, "pattern").is_empty());
}

/// Items waiting in Unsorted whose names share only their type's word
/// ("Project Alpha", "Project Beta", …) get no domain named after the
/// type.
#[test]
fn a_type_name_is_no_theme_for_a_new_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Project"} } }"#,
    );
    for (name, about) in [
        ("Project Alpha", "a birdwatching survey of wetlands"),
        ("Project Beta", "a kitchen renovation"),
        ("Project Gamma", "learning the cello"),
        ("Project Delta", "tax returns for the year"),
    ] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?p {{ {{type: "Project", name: "{name}"}} SET ATTRIBUTES {{ description: "{about}" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let domains = proposed(&nx, &rep, "domain");
    assert!(
        domains
            .iter()
            .all(|t| !t.starts_with("New domain \"Project\"")),
        "{domains:?}"
    );
}

/// Three spellings of one person and two of another are two merge items,
/// one per group (a canonical and its duplicates), and approving the
/// three-way one is one step: one person is left, holding every fact the
/// three held; nothing is marked stale.
#[test]
fn duplicates_are_proposed_per_cluster_and_a_cluster_merges_in_one_step() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?city { {type: "City", name: "Arlington"} }
  CONCEPT ?a { {type: "Person", name: "Grace Hopper"} SET ATTRIBUTES { description: "Rear admiral, wrote the first compiler" } SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?b { {type: "Person", name: "grace hopper"} SET ATTRIBUTES { description: "Computer scientist" } SET PROPOSITIONS { ("lives_in", {type: "City", name: "Arlington"}) ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?c { {type: "Person", name: "Grace  Hopper."} SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?d { {type: "Person", name: "Alan Turing"} SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?e { {type: "Person", name: "alan turing"} SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
}"#,
    );
    let rep = cycle(&mut nx);
    let merges = proposed(&nx, &rep, "merge");
    assert_eq!(merges.len(), 2, "{merges:?}");
    let three = merges
        .iter()
        .find(|t| t.contains("Grace") || t.contains("grace"))
        .expect("the Hopper group");
    assert!(three.starts_with("Merge 2 Person ("), "{three}");
    let id = rep.proposal.expect("a proposal");
    let item = proposals::items(&nx, id)
        .expect("items")
        .into_iter()
        .find(|i| &i.title == three)
        .expect("item");
    assert_eq!(item.commands.len(), 2, "{item:?}");
    let done = proposals::approve(
        &mut nx,
        id,
        Some(&[item.seq]),
        &Default::default(),
        &somnus::audit::Who {
            actor: "operator".into(),
            trigger: "test".into(),
            reason: None,
        },
    )
    .expect("approve");
    assert_eq!(done.applied, vec![item.seq]);
    assert!(done.stale.is_empty());
    let people = kip(&mut nx, r#"FIND(?p.name) WHERE { ?p {type: "Person"} }"#);
    let left: Vec<String> = people
        .as_array()
        .expect("names")
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.to_lowercase().contains("hopper"))
        .map(str::to_string)
        .collect();
    assert_eq!(left.len(), 1, "{people}");
    let name = left[0].clone();
    for (pred, ty, object) in [
        ("lives_in", "City", "Arlington"),
        ("works_with", "Person", "Ada"),
    ] {
        let held = kip(
            &mut nx,
            &format!(
                r#"FIND(COUNT(?o)) WHERE {{ ?p {{type: "Person", name: "{name}"}} (?p, "{pred}", ?o) ?o {{type: "{ty}", name: "{object}"}} }}"#
            ),
        );
        assert_eq!(held, json!(1), "{pred}");
    }
}

/// A password and an API token kept in memory are counted by health,
/// proposed for redaction by the cycle, and gone once approved; the
/// memory still says a secret was there, the element keeps its source,
/// and neither the health list, the report nor the proposal shows the
/// value.
#[test]
fn secrets_are_counted_proposed_for_redaction_and_never_shown() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    kip(
        &mut nx,
        &format!(
            r#"UPSERT {{
  CONCEPT ?a {{ {{type: "Person", name: "Ada"}} SET ATTRIBUTES {{ notes: ["likes tea", "her email password: Tr0ub4dor&3"], bio: "Mathematician" }} }}
  CONCEPT ?t {{ {{type: "Topic", name: "Deploys"}} SET ATTRIBUTES {{ description: "deploy with {token} from CI" }} }}
}} WITH METADATA {{ source: "moltbot:MEMORY.md:4", author: "moltbot" }}"#
        ),
    );
    let health = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    let all = format!("{health:?}");
    assert!(!all.contains("Tr0ub4dor") && !all.contains(&token), "{all}");
    let m = health
        .metrics
        .iter()
        .find(|m| m.key == "secrets")
        .expect("a secrets metric");
    assert_eq!(m.value, 2.0);
    assert!(
        m.items.iter().any(|i| i.contains("Ada (notes: password)")),
        "{:?}",
        m.items
    );

    let rep = cycle(&mut nx);
    let said = serde_json::to_string(&rep).expect("json");
    assert!(
        !said.contains("Tr0ub4dor") && !said.contains(&token),
        "{said}"
    );
    let titles = proposed(&nx, &rep, "redact");
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles
            .iter()
            .any(|t| t == "Redact 1 secret (github-pat) in Topic \"Deploys\": description"),
        "{titles:?}"
    );
    let id = rep.proposal.expect("proposal");
    let items: Vec<i64> = proposals::items(&nx, id)
        .expect("items")
        .into_iter()
        .filter(|i| i.class == "redact")
        .map(|i| {
            assert!(!i.rationale.contains("Tr0ub4dor"), "{i:?}");
            // the preview an operator reviews (before and after) never
            // shows the secret either
            let preview = serde_json::to_string(&i.preview).expect("json");
            assert!(
                !preview.contains("Tr0ub4dor") && !preview.contains(&token),
                "{preview}"
            );
            i.seq
        })
        .collect();
    let done = proposals::approve(
        &mut nx,
        id,
        Some(&items),
        &Default::default(),
        &somnus::audit::Who {
            actor: "operator".into(),
            trigger: "test".into(),
            reason: None,
        },
    )
    .expect("approve");
    assert_eq!(done.applied.len(), 2);
    let ada = kip(
        &mut nx,
        r#"FIND(?a) WHERE { ?a {type: "Person", name: "Ada"} }"#,
    );
    assert_eq!(
        ada[0]["attributes"]["notes"],
        json!(["likes tea", "her email password: [redacted password]"])
    );
    assert_eq!(ada[0]["metadata"]["source"], json!("moltbot:MEMORY.md:4"));
    assert_eq!(ada[0]["metadata"]["redacted_secrets"], json!(["password"]));
    let topic = kip(
        &mut nx,
        r#"FIND(?t.attributes.description) WHERE { ?t {type: "Topic", name: "Deploys"} }"#,
    );
    assert_eq!(topic, json!(["deploy with [redacted github-pat] from CI"]));
    let after = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    let m = after
        .metrics
        .iter()
        .find(|m| m.key == "secrets")
        .expect("metric");
    assert_eq!(m.value, 0.0);
}

/// Daily-note Events waiting in Unsorted, named by their file and heading
/// ("2026-03-18-final", "Afternoon"), get a domain only for a theme their
/// text shares: never a date, a time of day, a file-name word or heading
/// scaffolding ("Created", "Final", "Summary").
#[test]
fn a_new_domain_is_named_by_a_theme_the_text_shares_never_by_scaffolding() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    for (name, text) in [
        (
            "2026-03-18-final: Afternoon",
            "Created: the invoice run for the bakery finished. Summary: fine.",
        ),
        (
            "2026-03-19-final: Afternoon",
            "Created: the bakery supplier sent new prices. Summary: higher.",
        ),
        (
            "2026-03-20-final: Morning",
            "Created: paid the bakery invoice by transfer. Summary: done.",
        ),
        (
            "2026-03-21-final: Afternoon",
            "Created: called the bakery about Sunday bread. Summary: ok.",
        ),
    ] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}} SET ATTRIBUTES {{ event_class: "Note", content_summary: "{text}", start_time: "2026-11-19T10:00:00Z" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let domains: Vec<String> = proposed(&nx, &rep, "domain")
        .into_iter()
        .filter(|t| t.starts_with("New domain"))
        .collect();
    common::assert_no_new_domain(
        &domains,
        &[
            "Final",
            "Afternoon",
            "Morning",
            "Created",
            "Summary",
            "2026",
        ],
        true,
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Bakery\" for 4 items")),
        "{domains:?}"
    );
}

/// What real daily notes showed: a note that mentions a routine in
/// passing ("… during the heartbeat window") is not that routine's when its
/// name says what it is about ("Security Event"); a product's name is one
/// theme ("PolyCop", never "Poly"), an emoji no word ("✅" is not "white
/// check mark"), and a note is filed by what is particular to it, never by
/// the dates, times and log words every note shares.
#[test]
fn notes_are_filed_by_what_they_are_about_never_by_a_passing_mention_or_a_date() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    let event = |nx: &mut Nexus, name: &str, text: &str, domain: &str| {
        kip(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}} SET ATTRIBUTES {{ event_class: "Note", content_summary: "{text}", start_time: "2026-11-19T10:00:00Z" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "{domain}"}}) }} }} }}"#
            ),
        );
    };
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Heartbeat"} SET ATTRIBUTES { description: "heartbeat checks", status: "active" } } }"#,
    );
    for h in ["08", "09", "10", "11"] {
        event(
            &mut nx,
            &format!("2026-02-24 {h}:00 Heartbeat"),
            "Heartbeat check: gateway up, inbox empty. Session agent ok, Feb 24 2026 morning ✅",
            "Heartbeat",
        );
    }
    for (i, t) in ["9:53 PM", "1:25 AM", "4:00 AM"].iter().enumerate() {
        event(
            &mut nx,
            &format!("2026-02-2{i} Security Event — {t}"),
            "Security: injection attempt blocked, a prompt asked for the wallet key; refused and logged during the heartbeat window ✅",
            "Unsorted",
        );
    }
    for i in 0..3 {
        event(
            &mut nx,
            &format!("2026-03-2{i} 案例学习 {i}"),
            "Studied the PolyCop case: PolyCop copies whale trades on OpenClaw ✅",
            "Unsorted",
        );
    }
    // the agent's own name is who writes the notes, not what they are about
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?s { {type: "Person", name: "$self"} SET ATTRIBUTES { identity: { name: "Xiaomo" } } } }"#,
    );
    for (i, t) in [
        "Xiaomo restarted the gateway.",
        "Xiaomo wrote the weekly digest.",
        "Xiaomo archived old logs.",
    ]
    .iter()
    .enumerate()
    {
        event(&mut nx, &format!("2026-04-0{i} note"), t, "Unsorted");
    }
    // shares with Heartbeat only what every note says: a day, a time of
    // day, "session", "agent", a tick
    event(
        &mut nx,
        "2026-02-25 20:00 Crypto Full Analysis",
        "Session agent ran the crypto portfolio analysis, Feb 25 2026 morning: solana weak, ether steady ✅",
        "Unsorted",
    );
    let rep = cycle(&mut nx);
    let domains = proposed(&nx, &rep, "domain");
    let filed = proposed(&nx, &rep, "reclassify");
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"Security\" for 3 items")),
        "{domains:?}"
    );
    assert!(
        domains
            .iter()
            .any(|t| t.starts_with("New domain \"PolyCop\" for 3 items")),
        "{domains:?}"
    );
    common::assert_no_new_domain(
        &domains,
        &[
            "Poly\"", "Claw", "White", "Check", "Mark", "Morning", "Session",
        ],
        false,
    );
    assert!(
        filed.iter().all(|t| !t.contains("under Heartbeat")),
        "nothing here is a heartbeat: {filed:?}"
    );
}

/// Chinese text is segmented by a dictionary, and a theme is a word rare
/// enough in general text to say what the items are about: "心跳"
/// (heartbeat), never "工作" (work) or "测试" (test), which every note
/// uses, nor the user's name; and one routine written in two languages is
/// one domain, not one per word.
#[test]
fn chinese_themes_are_segmented_words_that_say_something_and_one_routine_is_one_domain() {
    let mut nx = Nexus::open_in_memory().expect("memory");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?u { {type: "Person", name: "SAYELF"} SET ATTRIBUTES { relationship_to_self: "user" } } }"#,
    );
    for (i, text) in [
        "05:23 心跳检查：服务器心跳正常，SAYELF 的工作测试继续。",
        "06:23 heartbeat: 网关心跳超时一次，已重启，工作测试继续。",
        "07:23 heartbeat: 心跳检查通过，SAYELF 工作测试暂停。",
        "08:23 heartbeat check passed; the heartbeat log rotated.",
        "09:23 heartbeat check passed after the gateway restart.",
        "今天和 SAYELF 讨论了工作计划和测试安排。",
        "整理了工作笔记，测试了新的脚本，SAYELF 同意。",
    ]
    .iter()
    .enumerate()
    {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "2026-03-2{i} 记录"}} SET ATTRIBUTES {{ event_class: "Note", content_summary: "{text}", start_time: "2026-11-19T10:00:00Z" }} SET PROPOSITIONS {{ ("belongs_to_domain", {{type: "Domain", name: "Unsorted"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let domains: Vec<String> = proposed(&nx, &rep, "domain")
        .into_iter()
        .filter(|t| t.starts_with("New domain"))
        .collect();
    common::assert_no_new_domain(
        &domains,
        &["工作", "测试", "Sayelf", "SAYELF", "检查"],
        true,
    );
    assert_eq!(domains.len(), 1, "one routine, one domain: {domains:?}");
    assert!(
        domains[0].starts_with("New domain \"心跳\" for 5 items")
            || domains[0].starts_with("New domain \"Heartbeat\" for 5 items"),
        "{domains:?}"
    );
}

/// An item that went stale (its element changed before it was approved)
/// does not block the change for good: the next cycle proposes it afresh
/// against the memory as it is now, the stale item is marked replaced (and
/// approving it says which item to decide instead), and the secret is
/// gone once the new item is approved.
#[test]
fn a_stale_item_is_proposed_again_by_the_next_cycle_and_the_old_one_replaced() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    let topic = |nx: &mut Nexus, extra: &str| {
        kip(
            nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?t {{ {{type: "Topic", name: "Deploys"}} SET ATTRIBUTES {{ description: "deploy with {token} from CI{extra}" }} }} }} WITH METADATA {{ source: "moltbot:MEMORY.md:4", author: "moltbot" }}"#
            ),
        );
    };
    topic(&mut nx, "");
    let who = somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    };
    let first = cycle(&mut nx);
    let p1 = first.proposal.expect("proposal");
    let seq = proposals::items(&nx, p1)
        .expect("items")
        .into_iter()
        .find(|i| i.class == "redact")
        .expect("a redaction")
        .seq;
    // the agent writes to the element before the operator approves
    topic(&mut nx, " on Fridays");
    let done =
        proposals::approve(&mut nx, p1, Some(&[seq]), &Default::default(), &who).expect("approve");
    assert_eq!(done.stale, vec![seq]);

    let second = cycle(&mut nx);
    let p2 = second.proposal.expect("a second proposal");
    let fresh = proposals::items(&nx, p2)
        .expect("items")
        .into_iter()
        .find(|i| i.class == "redact")
        .expect("the redaction proposed again");
    let old = proposals::items(&nx, p1)
        .expect("items")
        .into_iter()
        .find(|i| i.seq == seq)
        .expect("old item");
    assert_eq!(old.status, "replaced");
    assert_eq!(
        old.decided_by.as_deref(),
        Some(format!("proposal #{p2} item {}", fresh.seq).as_str())
    );
    let again = proposals::approve(&mut nx, p1, Some(&[seq]), &Default::default(), &who)
        .expect_err("a replaced item is not approved");
    assert!(
        again
            .hint
            .as_deref()
            .unwrap_or("")
            .contains(&format!("proposal #{p2}")),
        "{again:?}"
    );
    proposals::approve(&mut nx, p2, Some(&[fresh.seq]), &Default::default(), &who)
        .expect("approve the fresh item");
    let text = kip(
        &mut nx,
        r#"FIND(?t.attributes.description) WHERE { ?t {type: "Topic", name: "Deploys"} }"#,
    );
    assert_eq!(
        text,
        json!(["deploy with [redacted github-pat] from CI on Fridays"])
    );
}

/// A report says what is true after the cycle: a daydream that scored the
/// unscored Events does not then list "Unscored Events" among its issues
/// (they were measured before it scored them), and `health` agrees.
#[test]
fn a_daydream_that_scored_the_events_does_not_report_them_unscored() {
    let mut nx = Nexus::open_in_memory().expect("open");
    for i in 0..18 {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Standup {i}"}} SET ATTRIBUTES {{ event_class: "Meeting", content_summary: "Standup number {i}", start_time: "2026-11-19T10:00:00Z" }} }} }}"#
            ),
        );
    }
    let before = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    let unscored = |h: &sleep::health::Health| {
        h.metrics
            .iter()
            .find(|m| m.label.starts_with("Unscored Events"))
            .map(|m| m.value)
    };
    assert_eq!(unscored(&before), Some(18.0));
    let o = Options::new(Scope::Daydream, NOW);
    let rep = sleep::run(&mut nx, &o, &mut Heuristic, None, None).expect("daydream");
    let text = rep.markdown();
    assert!(text.contains("Scored salience of 18 Events"), "{text}");
    assert!(
        rep.issues.iter().all(|i| !i.starts_with("Unscored Events")),
        "{:?}",
        rep.issues
    );
    assert_eq!(
        rep.health_after.get("unscored_events"),
        Some(&0.0),
        "{:?}",
        rep.health_after
    );
    let after = sleep::health::assess(&mut nx, NOW, 7).expect("health");
    assert_eq!(unscored(&after), Some(0.0));
}

/// Phase 8 reviews the Insights the agent learned since the last cycle,
/// comparing instants: two written at 22:30 and 23:10 New York time
/// (`-05:00`) are after a last cycle at 02:00 UTC, though their text sorts
/// before it.
#[test]
fn insights_written_after_the_last_cycle_in_another_offset_are_reviewed() {
    let mut nx = Nexus::open_in_memory().expect("open");
    cycle_at(&mut nx, "2026-11-20T02:00:00Z", Params::default());
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: "learned"} SET ATTRIBUTES { description: "what the agent learned" } } }"#,
    );
    for (name, at) in [
        ("Ada prefers morning meetings", "2026-11-19T22:30:00-05:00"),
        ("Ada answers e-mail on Fridays", "2026-11-19T23:10:00-05:00"),
    ] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?i {{ {{type: "Insight", name: "{name}"}} SET ATTRIBUTES {{ description: "{name}", insight_class: "observation" }} }} }} WITH METADATA {{ created_at: "{at}" }}"#
            ),
        );
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ PROPOSITION ?l {{ ({{type: "Person", name: "$self"}}, "learned", {{type: "Insight", name: "{name}"}}) }} }} WITH METADATA {{ created_at: "{at}" }}"#
            ),
        );
    }
    let rep = cycle_at(&mut nx, "2026-11-20T06:00:00Z", Params::default());
    let text = rep.markdown();
    assert!(text.contains("Reviewed 2 Insights"), "{text}");
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

/// Phase 6: the duplicate's better values reach the canonical node before
/// the merge (issue 39: MERGE kept the canonical value on every conflict,
/// so a richer or fuller value on the duplicate was lost); a conflict the
/// canonical value wins is named in the rationale.
#[test]
fn a_merge_keeps_the_duplicates_better_values_and_names_those_it_drops() {
    let mut nx = Nexus::open_in_memory().expect("open");
    schema(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Person", name: "Marie Curie"} SET ATTRIBUTES { born: "1867", city: "Paris", languages: ["Polish"], role: "" } SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
  CONCEPT ?b { {type: "Person", name: "marie curie"} SET ATTRIBUTES { born: "1868", city: "Paris, France", languages: ["French"], role: "physicist" } SET PROPOSITIONS { ("works_with", {type: "Person", name: "Ada"}) } }
}"#,
    );
    let rep = cycle(&mut nx);
    let id = rep.proposal.expect("a proposal");
    let item = proposals::items(&nx, id)
        .expect("items")
        .into_iter()
        .find(|i| i.class == "merge")
        .expect("a merge");
    assert!(item.rationale.contains("born"), "{}", item.rationale);
    proposals::approve(
        &mut nx,
        id,
        Some(&[item.seq]),
        &Default::default(),
        &somnus::audit::Who {
            actor: "operator".into(),
            trigger: "test".into(),
            reason: None,
        },
    )
    .expect("approve");
    let v = kip(
        &mut nx,
        r#"FIND(?p.attributes) WHERE { ?p {type: "Person"} FILTER(?p.name == "Marie Curie" || ?p.name == "marie curie") }"#,
    );
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
    let a = &v[0];
    assert_eq!(a["city"], "Paris, France", "{a}");
    assert_eq!(a["role"], "physicist", "{a}");
    let langs = a["languages"].as_array().cloned().unwrap_or_default();
    assert!(
        langs.contains(&json!("Polish")) && langs.contains(&json!("French")),
        "{a}"
    );
}

/// 10A and 10B: a connection no registered associative predicate can make
/// is logged for review, and the memory's gaps (a Person known by name
/// only, key concepts of Events no concept holds) are reported (issue 39:
/// both were silent).
#[test]
fn unmatched_connections_and_schema_gaps_are_reported() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?c { {type: "Topic", name: "Chess"} }
  CONCEPT ?ada { {type: "Person", name: "Ada"} }
  CONCEPT ?lena { {type: "Person", name: "Lena"} }
  CONCEPT ?kim { {type: "Person", name: "Kim"} SET PROPOSITIONS { ("mentions", ?c) } }
}"#,
    );
    for i in 0..5 {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Chess club {i}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-11-1{i}T18:00:00Z", content_summary: "Ada played chess at the club", participants: ["Ada"], key_concepts: ["Chess", "Queen's Gambit"] }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let recs = rep.recommendations.join("\n");
    assert!(
        recs.contains("no registered associative predicate can link")
            && recs.contains("Ada (Person) and Chess (Topic) share 5 Events"),
        "{recs}"
    );
    assert!(
        recs.contains("Person has nothing but a name") && recs.contains("Lena"),
        "{recs}"
    );
    assert!(!recs.contains("Kim"), "{recs}");
    assert!(
        recs.contains("\"Queen's Gambit\" (5 Events)") && !recs.contains("\"Chess\" ("),
        "{recs}"
    );
    assert_eq!(rep.count("connection_candidates_unmatched"), 1);
}

/// 5A in other languages: a stale Event written in Chinese, French,
/// Japanese or Korean that states a preference outright gets its Preference proposed, as the
/// English one does, instead of being archived with nothing extracted.
#[test]
fn consolidation_extracts_what_an_event_states_in_other_languages() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?u { {type: "Person", name: "王磊"} }
  CONCEPT ?m { {type: "Person", name: "Marie Dubois"} }
  CONCEPT ?e { {type: "Event", name: "Conversation:2026-10-01:偏好"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z",
      content_summary: "聊了周末安排。王磊喜欢深色主题，因为晚上看屏幕眼睛累" }
    SET PROPOSITIONS { ("involves", {type: "Person", name: "王磊"}) } }
  CONCEPT ?f { {type: "Event", name: "Conversation:2026-10-02:thé"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-02T10:00:00Z",
      content_summary: "Discussion du voyage. Marie préfère le thé vert parce que le café l'énerve" }
    SET PROPOSITIONS { ("involves", {type: "Person", name: "Marie Dubois"}) } }
  CONCEPT ?j { {type: "Event", name: "Conversation:2026-10-03:会議"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-03T10:00:00Z",
      content_summary: "週末の話をした。ユーザーは朝の会議が苦手。" } }
  CONCEPT ?k { {type: "Event", name: "Conversation:2026-10-04:음식"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-04T10:00:00Z",
      content_summary: "주말 이야기를 했다. 사용자는 매운 음식을 좋아한다." } }
}"#,
    );
    let rep = cycle(&mut nx);
    let titles = proposed(&nx, &rep, "consolidate");
    for (event, want) in [
        (
            "Conversation:2026-10-01:偏好",
            "Preference:Prefers 深色主题",
        ),
        (
            "Conversation:2026-10-02:thé",
            "Preference:Prefers le thé vert",
        ),
        ("Conversation:2026-10-03:会議", "Preference:Avoids 朝の会議"),
        (
            "Conversation:2026-10-04:음식",
            "Preference:Prefers 매운 음식",
        ),
    ] {
        assert!(
            titles.iter().any(|t| t.contains(event) && t.contains(want)),
            "{event}: {titles:?}"
        );
    }
}
