//! The sleep cycle does what the sleep-mode rules say: each rule on its own
//! small memory, built for it (not the demo). Here decay, archival,
//! commitments, the core structure and the cycle's own bookkeeping;
//! `sleep_rules/consolidation.rs` what Events become and where things are
//! filed; `sleep_rules/daily_logs.rs` how an agent's own daily logs are
//! read; `sleep_rules/learning.rs` the Experience Learning profile.

mod common;
#[path = "sleep_rules/consolidation.rs"]
mod consolidation;
#[path = "sleep_rules/daily_logs.rs"]
mod daily_logs;
#[path = "sleep_rules/learning.rs"]
mod learning;

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

/// The person who approves in these tests.
fn operator() -> somnus::audit::Who {
    somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    }
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

/// The titles of the new domains a cycle proposes.
fn new_domains(nx: &Nexus, rep: &sleep::Report) -> Vec<String> {
    proposed(nx, rep, "domain")
        .into_iter()
        .filter(|t| t.starts_with("New domain"))
        .collect()
}

/// The report's line that contains `needle` (every line, should none).
fn report_line(rep: &sleep::Report, needle: &str) -> String {
    let lines: Vec<&String> = rep.phases.iter().flat_map(|p| p.lines.iter()).collect();
    lines
        .iter()
        .find(|l| l.contains(needle))
        .map(|l| l.to_string())
        .unwrap_or_else(|| panic!("no line says {needle:?}: {lines:?}"))
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
    let line = report_line(&rep, "concepts:");
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
