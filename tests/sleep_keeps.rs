//! The sleep cycle keeps what must be kept: each rule on its own small
//! memory, built for it (not the demo).

use serde_json::{Map, Value, json};
use somnus::protocol::{Outcome, Request};
use somnus::review::proposals;
use somnus::sleep::{self, Heuristic, Options, Scope};
use somnus::{Nexus, Response};

const NOW: &str = "2026-11-20T03:00:00Z";
const PAST: &str = "2026-06-01T00:00:00Z";

fn kip(nx: &mut Nexus, cmd: &str) -> Value {
    let req = Request::command(cmd).with_params(Map::new());
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

fn cycle(nx: &mut Nexus) -> sleep::Report {
    sleep::run(
        nx,
        &Options::new(Scope::Full, NOW),
        &mut Heuristic,
        None,
        None,
    )
    .expect("cycle")
}

/// An Event that finished consolidating and whose TTL has passed.
fn expired_event(nx: &mut Nexus, name: &str, salience: u32, status: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}}
                 SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-01-10T10:00:00Z",
                   content_summary: "{name}", salience_score: {salience}, consolidation_status: "{status}" }} }}
               WITH METADATA {{ expires_at: "{PAST}" }} }}"#
        ),
    );
}

fn derived(nx: &mut Nexus, ty: &str, name: &str, from: &[&str]) {
    let links: String = from
        .iter()
        .map(|e| format!(r#"("derived_from", {{type: "Event", name: "{e}"}}) "#))
        .collect();
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?k {{ {{type: "{ty}", name: "{name}"}} SET ATTRIBUTES {{ description: "{name}" }}
                 SET PROPOSITIONS {{ {links} }} }} }}"#
        ),
    );
}

fn event(nx: &mut Nexus, name: &str) -> Value {
    kip(
        nx,
        &format!(r#"FIND(?e) WHERE {{ ?e {{type: "Event", name: "{name}"}} }}"#),
    )
    .as_array()
    .and_then(|a| a.first().cloned())
    .unwrap_or(Value::Null)
}

fn after_now(t: &Value) -> bool {
    let t = t.as_str().unwrap_or("");
    chrono::DateTime::parse_from_rfc3339(t)
        .is_ok_and(|x| x > chrono::DateTime::parse_from_rfc3339(NOW).expect("now"))
}

#[test]
fn a_landmark_event_is_promoted_not_reclaimed() {
    let mut nx = Nexus::open_in_memory().expect("open");
    expired_event(
        &mut nx,
        "First concert at the Wigmore Hall",
        97,
        "completed",
    );
    let rep = cycle(&mut nx);
    let e = event(&mut nx, "First concert at the Wigmore Hall");
    assert!(!e.is_null(), "the landmark was deleted: {:?}", rep.issues);
    assert_eq!(e["metadata"]["memory_tier"], "long-term", "{e}");
    assert!(e["metadata"].get("expires_at").is_none(), "{e}");
    // and the next cycle leaves it alone
    cycle(&mut nx);
    assert!(!event(&mut nx, "First concert at the Wigmore Hall").is_null());
}

#[test]
fn an_event_cited_by_several_insights_is_a_landmark() {
    let mut nx = Nexus::open_in_memory().expect("open");
    expired_event(&mut nx, "Lesson with Anna", 40, "completed");
    expired_event(&mut nx, "Lesson with Ben", 40, "completed");
    derived(
        &mut nx,
        "Insight",
        "Practises best in the morning",
        &["Lesson with Anna", "Lesson with Ben"],
    );
    derived(
        &mut nx,
        "Insight",
        "Prefers Bach to Brahms",
        &["Lesson with Anna", "Lesson with Ben"],
    );
    cycle(&mut nx);
    for n in ["Lesson with Anna", "Lesson with Ben"] {
        let e = event(&mut nx, n);
        assert_eq!(e["metadata"]["memory_tier"], "long-term", "{n}: {e}");
    }
}

#[test]
fn sole_evidence_is_found_by_identity_not_by_name() {
    let mut nx = Nexus::open_in_memory().expect("open");
    expired_event(&mut nx, "Shared", 30, "completed");
    expired_event(&mut nx, "Other", 30, "completed");
    // an Insight whose only evidence is the Event, and a Preference of the
    // same name with two sources: the name alone would count three
    derived(&mut nx, "Insight", "Shared", &["Shared"]);
    derived(&mut nx, "Preference", "Shared", &["Shared", "Other"]);
    let rep = cycle(&mut nx);
    let e = event(&mut nx, "Shared");
    assert!(
        !e.is_null(),
        "the sole evidence was deleted: {:?}",
        rep.issues
    );
    assert!(
        after_now(&e["metadata"]["expires_at"]),
        "its TTL was not extended: {e}"
    );
    let ev = kip(
        &mut nx,
        r#"FIND(?e.name) WHERE { ?k {type: "Insight", name: "Shared"} (?k, "derived_from", ?e) }"#,
    );
    assert_eq!(ev, json!(["Shared"]));
    assert!(
        rep.issues
            .iter()
            .any(|i| i.contains("sole evidence of Insight:Shared")),
        "{:?}",
        rep.issues
    );
}

#[test]
fn a_held_event_keeps_its_links_and_its_archive() {
    let mut nx = Nexus::open_in_memory().expect("open");
    expired_event(&mut nx, "Old chat", 20, "archived");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
           CONCEPT ?c { {type: "Topic", name: "Cello"} }
           CONCEPT ?e { {type: "Event", name: "Old chat"}
             SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Archived"}) ("consolidated_to", ?c) } }
           WITH METADATA { expires_at: "2026-06-01T00:00:00Z" } }"#,
    );
    derived(&mut nx, "Insight", "Loves the cello", &["Old chat"]);
    cycle(&mut nx);
    // archived with nothing extracted, it is the only copy of what it
    // says: kept for good, its TTL and its links' dropped
    let e = event(&mut nx, "Old chat");
    assert!(!e.is_null());
    assert!(e["metadata"].get("expires_at").is_none(), "{e}");
    let links = kip(
        &mut nx,
        r#"FIND(?l) WHERE { ?e {type: "Event", name: "Old chat"} ?l (?e, ?p, ?o) }"#,
    );
    let mut preds: Vec<String> = links
        .as_array()
        .expect("links")
        .iter()
        .map(|l| l["predicate"].as_str().unwrap_or("").to_string())
        .collect();
    preds.sort();
    assert_eq!(preds, ["belongs_to_domain", "consolidated_to"], "{links}");
    for l in links.as_array().expect("links") {
        assert!(
            l["metadata"].get("expires_at").is_none(),
            "a kept Event's link keeps a passed TTL: {l}"
        );
    }
    // and the next cycle, later still, deletes neither
    let rep = sleep::run(
        &mut nx,
        &sleep::Options::new(sleep::Scope::Full, "2027-06-01T03:00:00Z"),
        &mut sleep::Heuristic,
        None,
        None,
    )
    .expect("cycle");
    assert_eq!(rep.count("deleted_nodes"), 0);
    let links = kip(
        &mut nx,
        r#"FIND(?l) WHERE { ?e {type: "Event", name: "Old chat"} ?l (?e, ?p, ?o) }"#,
    );
    assert_eq!(links.as_array().map(Vec::len), Some(2), "{links}");
}

#[test]
fn an_archived_event_keeps_the_ttl_its_archive_promises() {
    let mut nx = Nexus::open_in_memory().expect("open");
    // stale, pending, about nothing: both will be archived; the tool
    // call's log carries an expiry a day away
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Small talk"}
             SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z", content_summary: "weather" } }
           CONCEPT ?t { {type: "Event", name: "Lookup"}
             SET ATTRIBUTES { event_class: "ToolUse", start_time: "2026-10-01T10:00:00Z", content_summary: "weather api call" } }
           WITH METADATA { expires_at: "2026-11-21T00:00:00Z" } }"#,
    );
    let rep = cycle(&mut nx);
    let id = rep.proposal.expect("a proposal");
    let items = proposals::items(&nx, id).expect("items");
    let item = |name: &str| {
        items
            .iter()
            .find(|i| i.class == "archive" && i.title.contains(name))
            .unwrap_or_else(|| panic!("an archive item for {name}"))
            .clone()
    };
    // a conversation archived with nothing extracted is kept: no TTL
    let talk = item("Small talk");
    assert_eq!(talk.commands.len(), 1, "{:?}", talk.commands);
    assert!(!talk.commands[0].contains("expires_at"));
    assert!(talk.rationale.contains("kept whole"), "{}", talk.rationale);
    // a tool call's log gets its TTL, at least archive_ttl_days away, on
    // the node alone (the Archived link does not inherit it)
    let lookup = item("Lookup");
    let ttl = lookup.params["archive_expires_at"].as_str().unwrap_or("");
    let floor = sleep::cycle::shift(NOW, 30);
    assert!(ttl >= floor.as_str(), "{ttl} < {floor}");
    assert!(lookup.commands.len() == 2 && !lookup.commands[0].contains("expires_at"));
    proposals::approve(
        &mut nx,
        id,
        Some(&[lookup.seq, talk.seq]),
        &Default::default(),
        &who(),
    )
    .expect("approve");
    let l = kip(
        &mut nx,
        r#"FIND(?l) WHERE { ?e {type: "Event", name: "Lookup"} ?l (?e, "belongs_to_domain", ?d) }"#,
    );
    assert!(l[0]["metadata"].get("expires_at").is_none(), "{l}");
}

fn who() -> somnus::audit::Who {
    somnus::audit::Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    }
}

/// Ada, her cities and tastes; `lives_in` holds one value at a time.
fn people(nx: &mut Nexus) {
    kip(
        nx,
        r#"UPSERT {
  CONCEPT ?city { {type: "$ConceptType", name: "City"} }
  CONCEPT ?topic { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?b { {type: "$PropositionType", name: "born_in"} SET ATTRIBUTES { description: "birthplace" } }
  CONCEPT ?l { {type: "$PropositionType", name: "lives_in"} SET ATTRIBUTES { description: "home", cardinality: "single" } }
  CONCEPT ?k { {type: "$PropositionType", name: "likes"} SET ATTRIBUTES { description: "taste" } }
  CONCEPT ?f { {type: "$PropositionType", name: "follows"} SET ATTRIBUTES { description: "keeps up with" } }
  CONCEPT ?ada { {type: "Person", name: "Ada"} }
}"#,
    );
}

#[test]
fn pinned_and_certain_facts_are_never_proposed_for_archival() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?oslo { {type: "City", name: "Oslo"} }
  CONCEPT ?bergen { {type: "City", name: "Bergen"} }
  CONCEPT ?jazz { {type: "Topic", name: "Jazz"} }
  CONCEPT ?ada { {type: "Person", name: "Ada"}
    SET PROPOSITIONS {
      ("born_in", ?oslo) WITH METADATA { pinned: true, confidence: 0.3, created_at: "2025-01-01T00:00:00Z" }
      ("likes", ?bergen) WITH METADATA { confidence: 1.0, created_at: "2025-01-01T00:00:00Z" }
      ("follows", ?jazz) WITH METADATA { confidence: 0.3, created_at: "2025-01-01T00:00:00Z" }
    } }
}"#,
    );
    let rep = cycle(&mut nx);
    let titles: Vec<String> = rep
        .proposal
        .map(|id| proposals::items(&nx, id).expect("items"))
        .unwrap_or_default()
        .into_iter()
        .filter(|i| i.class == "archive")
        .map(|i| i.title)
        .collect();
    assert!(
        titles.iter().any(|t| t.contains("Ada follows Jazz")),
        "the control fact: {titles:?}"
    );
    assert!(
        !titles
            .iter()
            .any(|t| t.contains("Oslo") || t.contains("Bergen")),
        "{titles:?}"
    );
}

#[test]
fn superseding_a_fact_keeps_where_it_came_from() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?leeds { {type: "City", name: "Leeds"} }
  CONCEPT ?york { {type: "City", name: "York"} }
  CONCEPT ?ada { {type: "Person", name: "Ada"}
    SET PROPOSITIONS {
      ("lives_in", ?leeds) WITH METADATA { source: "chat:2025-02-01", author: "agent", created_at: "2025-02-01T10:00:00Z", observed_at: "2025-02-01T10:00:00Z", confidence: 0.8 }
      ("lives_in", ?york) WITH METADATA { source: "chat:2026-05-01", author: "agent", created_at: "2026-05-01T10:00:00Z", observed_at: "2026-05-01T10:00:00Z", confidence: 0.8 }
    } }
}"#,
    );
    cycle(&mut nx);
    let open = sleep::contradictions::list(&nx, Some("open")).expect("list");
    let c = open
        .iter()
        .find(|c| c.conflict.predicate == "lives_in")
        .expect("the two homes conflict");
    sleep::contradictions::resolve(
        &mut nx,
        c.id,
        sleep::reasoner::Verdict::KeepNewer,
        None,
        &who(),
    )
    .expect("resolve");
    let old = kip(
        &mut nx,
        r#"FIND(?l.metadata) WHERE { ?l ({type: "Person", name: "Ada"}, "lives_in", {type: "City", name: "Leeds"}) }"#,
    );
    let m = &old[0];
    assert_eq!(m["superseded"], true, "{m}");
    assert_eq!(m["source"], "chat:2025-02-01", "{m}");
    assert_eq!(m["author"], "agent", "{m}");
    assert_eq!(m["created_at"], "2025-02-01T10:00:00Z", "{m}");
    assert!(m["confidence"].as_f64().unwrap_or(1.0) < 0.8, "{m}");
    assert!(
        m["superseded_by"]
            .as_str()
            .is_some_and(|s| s.starts_with("P:")),
        "{m}"
    );
    let new = kip(
        &mut nx,
        r#"FIND(?l.metadata) WHERE { ?l ({type: "Person", name: "Ada"}, "lives_in", {type: "City", name: "York"}) }"#,
    );
    assert_eq!(new[0]["source"], "chat:2026-05-01", "{new}");
}

/// The heuristic, except that judging Events for consolidation (phase 5)
/// always fails, as an unreachable model would.
struct Flaky {
    inner: Heuristic,
    calls: usize,
}

impl sleep::Reasoner for Flaky {
    fn name(&self) -> &'static str {
        "flaky"
    }
    fn salience(
        &mut self,
        l: &mut dyn sleep::reasoner::Lookup,
        e: &[sleep::reasoner::EventView],
    ) -> somnus::kip::KipResult<Vec<sleep::reasoner::Scored>> {
        self.inner.salience(l, e)
    }
    fn classify(
        &mut self,
        l: &mut dyn sleep::reasoner::Lookup,
        i: &[sleep::reasoner::ItemView],
        d: &[sleep::reasoner::DomainView],
    ) -> somnus::kip::KipResult<Vec<sleep::reasoner::Classification>> {
        self.inner.classify(l, i, d)
    }
    fn gist(
        &mut self,
        _: &mut dyn sleep::reasoner::Lookup,
        _: &[sleep::reasoner::EventView],
    ) -> somnus::kip::KipResult<Vec<sleep::reasoner::Gist>> {
        self.calls += 1;
        Err(somnus::kip::KipError::internal("the model is unreachable")
            .with_hint("Check the endpoint."))
    }
    fn patterns(
        &mut self,
        l: &mut dyn sleep::reasoner::Lookup,
        c: &[sleep::reasoner::Cluster],
    ) -> somnus::kip::KipResult<Vec<Option<sleep::reasoner::Pattern>>> {
        self.inner.patterns(l, c)
    }
    fn same_entity(
        &mut self,
        l: &mut dyn sleep::reasoner::Lookup,
        p: &[sleep::reasoner::Candidate],
    ) -> somnus::kip::KipResult<Vec<sleep::reasoner::SameJudgement>> {
        self.inner.same_entity(l, p)
    }
    fn current_fact(
        &mut self,
        l: &mut dyn sleep::reasoner::Lookup,
        c: &[sleep::reasoner::Conflict],
    ) -> somnus::kip::KipResult<Vec<sleep::reasoner::Resolution>> {
        self.inner.current_fact(l, c)
    }
    fn self_model(
        &mut self,
        l: &mut dyn sleep::reasoner::Lookup,
        c: &Value,
        i: &[sleep::reasoner::InsightView],
    ) -> somnus::kip::KipResult<Vec<sleep::reasoner::SelfEdit>> {
        self.inner.self_model(l, c, i)
    }
}

#[test]
fn a_failing_phase_is_retried_once_logged_and_skipped() {
    let mut nx = Nexus::open_in_memory().expect("open");
    // a stale Event, so phase 5 asks the reasoner
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Small talk"}
             SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z", content_summary: "weather" } } }"#,
    );
    let mut r = Flaky {
        inner: Heuristic,
        calls: 0,
    };
    let rep = sleep::run(&mut nx, &Options::new(Scope::Full, NOW), &mut r, None, None)
        .expect("the cycle still ends");
    assert_eq!(r.calls, 2, "tried once more");
    assert_eq!(rep.status, "completed with issues");
    assert!(
        rep.issues.iter().any(|i| i.contains("Phase 5")
            && i.contains("unreachable")
            && i.contains("Check the endpoint")),
        "{:?}",
        rep.issues
    );
    // the phases after it ran, and the cycle was logged
    let phases: Vec<u8> = rep.phases.iter().map(|p| p.phase).collect();
    assert_eq!(phases, (1..=13).collect::<Vec<u8>>());
    let log = kip(
        &mut nx,
        r#"FIND(?s.attributes.maintenance_log) WHERE { ?s {type: "Person", name: "$system"} }"#,
    );
    let last = log[0]
        .as_array()
        .and_then(|a| a.last())
        .cloned()
        .unwrap_or(Value::Null);
    assert!(
        last["issues_found"].to_string().contains("Phase 5"),
        "{last}"
    );
}

fn task(nx: &mut Nexus, name: &str, action: &str, target: (&str, &str)) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?t {{ {{type: "SleepTask", name: "{name}"}}
                 SET ATTRIBUTES {{ target_type: "{}", target_name: "{}", requested_action: "{action}", reason: "test", status: "pending", priority: 2 }}
                 SET PROPOSITIONS {{ ("assigned_to", {{type: "Person", name: "$system"}}) }} }} }}"#,
            target.0, target.1
        ),
    );
}

fn task_state(nx: &mut Nexus, name: &str) -> Value {
    kip(
        nx,
        &format!(r#"FIND(?t.attributes) WHERE {{ ?t {{type: "SleepTask", name: "{name}"}} }}"#),
    )[0]
    .clone()
}

#[test]
fn a_sleep_task_waits_for_the_decision_on_its_proposal() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Small talk"}
             SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z", content_summary: "weather" } } }"#,
    );
    task(
        &mut nx,
        "archive small talk",
        "archive",
        ("Event", "Small talk"),
    );
    task(&mut nx, "dance", "do_a_dance", ("Event", "Small talk"));
    let rep = cycle(&mut nx);
    let t = task_state(&mut nx, "archive small talk");
    assert_eq!(t["status"], "in_progress", "{t}");
    assert!(
        t["result"]
            .as_str()
            .unwrap_or("")
            .starts_with("awaiting approval"),
        "{t}"
    );
    let id = rep.proposal.expect("proposal");
    assert_eq!(t["awaiting_proposal"], id);
    assert!(
        rep.issues.iter().any(|i| i.contains("do_a_dance")),
        "an unknown action is an issue: {:?}",
        rep.issues
    );
    // the operator rejects the item: the task completes, saying so
    let seq = t["awaiting_items"][0].as_i64().expect("seq");
    proposals::reject(&mut nx, id, Some(&[seq]), "keep it", "operator").expect("reject");
    let t = task_state(&mut nx, "archive small talk");
    assert_eq!(t["status"], "completed", "{t}");
    assert!(
        t["result"]
            .as_str()
            .unwrap_or("")
            .contains("rejected (keep it)"),
        "{t}"
    );
}

#[test]
fn a_daydream_queues_what_matters_and_marks_what_does_not() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Event", name: "Told me she quit the orchestra"}
    SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-11-19T20:00:00Z", content_summary: "quit the orchestra", salience_score: 88 } }
  CONCEPT ?b { {type: "Event", name: "weather lookup 1"}
    SET ATTRIBUTES { event_class: "ToolUse", start_time: "2026-11-19T08:00:00Z", content_summary: "weather", salience_score: 8 } }
  CONCEPT ?c { {type: "Event", name: "weather lookup 2"}
    SET ATTRIBUTES { event_class: "ToolUse", start_time: "2026-11-19T09:00:00Z", content_summary: "weather", salience_score: 8 } }
}"#,
    );
    let rep = sleep::run(
        &mut nx,
        &Options::new(Scope::Daydream, NOW),
        &mut Heuristic,
        None,
        None,
    )
    .expect("daydream");
    assert!(
        rep.recommendations
            .iter()
            .any(|r| r.contains("Told me she quit the orchestra")),
        "{:?}",
        rep.recommendations
    );
    assert!(
        rep.recommendations
            .iter()
            .any(|r| r.contains("2 low-salience Events")),
        "{:?}",
        rep.recommendations
    );
    let t = task_state(&mut nx, "Consolidate Told me she quit the orchestra");
    assert_eq!(t["requested_action"], "consolidate_to_semantic", "{t}");
    assert_eq!(t["status"], "pending");
    let marked = kip(
        &mut nx,
        r#"FIND(?e.name) WHERE { ?e {type: "Event"} FILTER(?e.attributes.archival_candidate == true) }"#,
    );
    assert_eq!(marked.as_array().map(Vec::len), Some(2), "{marked}");
    // a second daydream queues nothing twice
    let rep = sleep::run(
        &mut nx,
        &Options::new(Scope::Daydream, NOW),
        &mut Heuristic,
        None,
        None,
    )
    .expect("daydream");
    assert_eq!(rep.count("daydream_queued"), 0);
    assert_eq!(rep.count("daydream_marked"), 0);
}

#[test]
fn backlog_and_orphan_limits_decide_what_is_flagged() {
    let run = |backlog: i64, orphans: i64| {
        let mut nx = Nexus::open_in_memory().expect("open");
        kip(
            &mut nx,
            r#"UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Topic"} }
  CONCEPT ?a { {type: "Topic", name: "Cello"} SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Unsorted"}) } }
  CONCEPT ?b { {type: "Topic", name: "Bach"} SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Unsorted"}) } }
  CONCEPT ?c { {type: "Topic", name: "Rosin"} }
  CONCEPT ?d { {type: "Topic", name: "Endpin"} }
}"#,
        );
        let mut o = Options::new(Scope::Full, NOW);
        o.params = o
            .params
            .with_json(&json!({"unsorted_max_backlog": backlog, "orphan_max_count": orphans}))
            .expect("params");
        sleep::run(&mut nx, &o, &mut Heuristic, None, None)
            .expect("cycle")
            .issues
    };
    let strict = run(1, 1);
    assert!(
        strict.iter().any(|i| i.contains("unsorted_max_backlog 1")),
        "{strict:?}"
    );
    assert!(
        strict.iter().any(|i| i.contains("orphan_max_count 1")),
        "{strict:?}"
    );
    let lax = run(20, 20);
    assert!(
        !lax.iter()
            .any(|i| i.contains("unsorted_max_backlog") || i.contains("orphan_max_count")),
        "{lax:?}"
    );
}

#[test]
fn shared_events_never_suggest_family_identity_or_a_second_single_value() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let preds: String = [
        ("married_to", "Person", "Person", ""),
        ("parent_of", "Person", "Person", ""),
        ("lives_with", "Person", "Person", r#", cardinality: "single""#),
        ("works_with", "Person", "Person", ""),
        ("collaborates_with", "Person", "Person", r#", cardinality: "single""#),
    ]
    .iter()
    .enumerate()
    .map(|(i, (n, s, o, extra))| {
        format!(
            r#"CONCEPT ?p{i} {{ {{type: "$PropositionType", name: "{n}"}} SET ATTRIBUTES {{ description: "{n}", subject_types: ["{s}"], object_types: ["{o}"]{extra} }} }}
"#
        )
    })
    .collect();
    kip(
        &mut nx,
        &format!(
            r#"UPSERT {{ {preds}
  CONCEPT ?olga {{ {{type: "Person", name: "Olga"}} }}
  CONCEPT ?sam {{ {{type: "Person", name: "Sam"}} }}
  CONCEPT ?kim {{ {{type: "Person", name: "Kim"}} SET PROPOSITIONS {{ }} }}
  CONCEPT ?o2 {{ {{type: "Person", name: "Olga"}} SET PROPOSITIONS {{ ("collaborates_with", ?kim) }} }}
}}"#
        ),
    );
    // seven weekly lessons with both of them
    for w in 0..7 {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "Lesson {w}"}}
                 SET ATTRIBUTES {{ event_class: "Lesson", start_time: "2026-11-{:02}T10:00:00Z", content_summary: "cello lesson",
                   participants: ["Olga", "Sam"], key_concepts: ["Sam"], salience_score: 50 }} }} }}"#,
                (w + 1) * 2
            ),
        );
    }
    let rep = cycle(&mut nx);
    let titles: Vec<String> = rep
        .proposal
        .map(|id| proposals::items(&nx, id).expect("items"))
        .unwrap_or_default()
        .into_iter()
        .filter(|i| i.class == "connection")
        .map(|i| i.title)
        .collect();
    assert!(
        titles.iter().any(|t| t == "Olga works_with Sam?"),
        "{titles:?}"
    );
    for bad in ["married_to", "parent_of", "lives_with", "collaborates_with"] {
        assert!(!titles.iter().any(|t| t.contains(bad)), "{bad}: {titles:?}");
    }
}

// ------------------------------------------------ issue 39: harms 1, 2, 8

fn cycle_at(nx: &mut Nexus, now: &str) -> sleep::Report {
    sleep::run(
        nx,
        &Options::new(Scope::Full, now),
        &mut Heuristic,
        None,
        None,
    )
    .expect("cycle")
}

fn count(nx: &mut Nexus, ty: &str, name: &str) -> Value {
    kip(
        nx,
        &format!(r#"FIND(COUNT(?x)) WHERE {{ ?x {{type: "{ty}"}} FILTER(?x.name == "{name}") }}"#),
    )
}

#[test]
fn a_promise_repeated_is_not_a_promise_kept() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?c { {type: "Commitment", name: "Send Omar the Orion budget spreadsheet"}
  SET ATTRIBUTES { status: "pending", due_at: "2026-11-27T17:00:00Z", commitment_class: "promise" } }
  WITH METADATA { source: "conversation", author: "$self", created_at: "2026-11-02T09:00:00Z" } }"#,
    );
    for (name, start, summary) in [
        (
            "Omar follow-up",
            "2026-11-18T10:00:00Z",
            "Omar asked again about the Orion budget spreadsheet; I said I'd send it Friday",
        ),
        (
            "Budget call",
            "2026-11-19T10:00:00Z",
            "Told Omar I will send the Orion budget spreadsheet after the review",
        ),
    ] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?e {{ {{type: "Event", name: "{name}"}}
  SET ATTRIBUTES {{ event_class: "Conversation", start_time: "{start}", content_summary: "{summary}" }}
  SET PROPOSITIONS {{ ("mentions", {{type: "Commitment", name: "Send Omar the Orion budget spreadsheet"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let c = kip(
        &mut nx,
        r#"FIND(?c) WHERE { ?c {type: "Commitment", name: "Send Omar the Orion budget spreadsheet"} }"#,
    )[0]
    .clone();
    assert_eq!(c["attributes"]["status"], "pending", "{c}");
    assert!(c["metadata"].get("expires_at").is_none(), "{c}");
    let items = rep
        .proposal
        .map(|id| proposals::items(&nx, id).expect("items"))
        .unwrap_or_default();
    assert!(
        !items
            .iter()
            .any(|i| i.class == "commitment" && i.title.contains("fulfilled")),
        "nothing proposes it kept: {:?}",
        items.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
    // months on, it is still owed (overdue, reported), never reclaimed
    let rep = cycle_at(&mut nx, "2027-03-01T03:00:00Z");
    assert_eq!(
        count(
            &mut nx,
            "Commitment",
            "Send Omar the Orion budget spreadsheet"
        ),
        json!(1)
    );
    assert!(
        rep.issues
            .iter()
            .any(|i| i.starts_with("Overdue commitment") && i.contains("Omar")),
        "{:?}",
        rep.issues
    );
}

/// An Experience (with its TTL and consolidation state) and its steps.
fn trace(nx: &mut Nexus, name: &str, status: &str, consolidation: &str, expires: &str) {
    kip(
        nx,
        &format!(
            r#"UPSERT {{
  CONCEPT ?s0 {{ {{type: "ExperienceStep", name: "{name} step 0"}} SET ATTRIBUTES {{ index: 0, kind: "action", summary: "Ran the migration" }} }} WITH METADATA {{ expires_at: "{PAST}" }}
  CONCEPT ?s1 {{ {{type: "ExperienceStep", name: "{name} step 1"}} SET ATTRIBUTES {{ index: 1, kind: "observation", summary: "Tables matched" }} }} WITH METADATA {{ expires_at: "{PAST}" }}
  CONCEPT ?x {{ {{type: "Experience", name: "{name}"}}
    SET ATTRIBUTES {{ experience_class: "problem_solving", goal: "Fix the stale rows", status: "{status}",
      learning_value: 85, consolidation_status: "{consolidation}" }}
    SET PROPOSITIONS {{ ("has_step", ?s0) ("has_step", ?s1) }} }} WITH METADATA {{ expires_at: "{expires}" }}
}}"#
        ),
    );
}

#[test]
fn a_learning_trace_still_to_be_learnt_from_is_never_reclaimed() {
    let mut nx = Nexus::open_in_memory().expect("open");
    let later = "2027-06-01T00:00:00Z";
    // pending, partly consolidated, still going on: each kept, steps too
    trace(&mut nx, "Pending deploy", "completed", "pending", PAST);
    trace(
        &mut nx,
        "Half-learnt deploy",
        "completed",
        "partially_consolidated",
        PAST,
    );
    trace(&mut nx, "Live deploy", "ongoing", "completed", PAST);
    // consolidated but not yet expired: its expired steps wait for it
    trace(&mut nx, "Fresh deploy", "completed", "completed", later);
    // consolidated and expired: it and its steps go (the control)
    trace(&mut nx, "Learnt deploy", "completed", "completed", PAST);
    let rep = cycle(&mut nx);
    for name in [
        "Pending deploy",
        "Half-learnt deploy",
        "Live deploy",
        "Fresh deploy",
    ] {
        if name != "Fresh deploy" {
            assert_eq!(count(&mut nx, "Experience", name), json!(1), "{name}");
        }
        for i in 0..2 {
            assert_eq!(
                count(&mut nx, "ExperienceStep", &format!("{name} step {i}")),
                json!(1),
                "{name} step {i}"
            );
        }
    }
    assert_eq!(count(&mut nx, "Experience", "Fresh deploy"), json!(1));
    assert_eq!(count(&mut nx, "Experience", "Learnt deploy"), json!(0));
    assert_eq!(
        count(&mut nx, "ExperienceStep", "Learnt deploy step 0"),
        json!(0)
    );
    // the report says why each is held, and never calls it consolidated
    let held: Vec<&String> = rep
        .issues
        .iter()
        .filter(|i| i.contains("expired elements held back"))
        .collect();
    assert_eq!(held.len(), 1, "{:?}", rep.issues);
    for why in [
        "Experience:Pending deploy (expired",
        "consolidation pending",
        "consolidation partially_consolidated",
        "still going on",
        "a step of Experience \"Fresh deploy\"",
    ] {
        assert!(held[0].contains(why), "{why}: {}", held[0]);
    }
    // `why` on a kept trace names the hold, not a deletion
    let (id, _) = sleep::explain::resolve(&nx, "Experience:Pending deploy")
        .expect("resolve")
        .expect("known");
    let text = sleep::explain::explain(&nx, id, NOW)
        .expect("why")
        .to_string();
    assert!(text.contains("held back"), "{text}");
    assert!(!text.contains("consolidated, not sole evidence"), "{text}");
}

#[test]
fn sleep_tasks_run_most_urgent_first_however_the_priority_is_written() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?e { {type: "Event", name: "Small talk"}
             SET ATTRIBUTES { event_class: "Conversation", start_time: "2026-10-01T10:00:00Z", content_summary: "weather" } } }"#,
    );
    for (name, priority, made) in [
        ("unset", "", "2026-11-01T00:00:00Z"),
        ("zero", "priority: 0,", "2026-11-01T00:00:00Z"),
        ("high word", r#"priority: "high","#, "2026-11-01T00:00:00Z"),
        ("four", "priority: 4,", "2026-11-02T00:00:00Z"),
        ("older four", "priority: 4,", "2026-11-01T00:00:00+09:00"),
        ("two as text", r#"priority: "2","#, "2026-11-01T00:00:00Z"),
    ] {
        kip(
            &mut nx,
            &format!(
                r#"UPSERT {{ CONCEPT ?t {{ {{type: "SleepTask", name: "{name}"}}
                 SET ATTRIBUTES {{ target_type: "Event", target_name: "Small talk", requested_action: "review", reason: "test", status: "pending", {priority} created_at: "{made}" }}
                 SET PROPOSITIONS {{ ("assigned_to", {{type: "Person", name: "$system"}}) }} }} }}"#
            ),
        );
    }
    let rep = cycle(&mut nx);
    let line = rep
        .phases
        .iter()
        .flat_map(|p| p.lines.iter())
        .find(|l| l.starts_with("SleepTasks by priority"))
        .cloned()
        .unwrap_or_default();
    let order: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    assert_eq!(
        order,
        vec![
            "older four",
            "four",
            "high word",
            "two as text",
            "unset",
            "zero"
        ],
        "{line}"
    );
}

/// 12D: a superseded link is history; one carrying a TTL is kept and
/// reported, never deleted (issue 39: it was kept without a word).
#[test]
fn a_superseded_link_with_a_ttl_is_kept_and_reported() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?p { {type: "$PropositionType", name: "lives_in"} SET ATTRIBUTES { description: "home" } }
  CONCEPT ?t { {type: "$ConceptType", name: "City"} }
  CONCEPT ?c { {type: "City", name: "Lyon"} }
  CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("lives_in", ?c) WITH METADATA { superseded: true, superseded_at: "2026-03-01T00:00:00Z", expires_at: "2026-06-01T00:00:00Z" } } }
}"#,
    );
    let rep = cycle(&mut nx);
    let left = kip(
        &mut nx,
        r#"FIND(COUNT(?l)) WHERE { ?l ({type: "Person", name: "Ada"}, "lives_in", ?c) }"#,
    );
    assert_eq!(left, json!(1));
    assert!(
        rep.issues
            .iter()
            .any(|i| i.contains("superseded link Ada lives_in Lyon") && i.contains("history")),
        "{:?}",
        rep.issues
    );
    assert_eq!(rep.count("superseded_links_with_ttl"), 1);
}

/// 12A.2: a node whose type is not TTL-deletable but carries an expired
/// TTL is kept, logged, and gets one review SleepTask (issue 39: it was
/// only logged).
#[test]
fn a_ttl_on_a_node_that_may_not_expire_is_kept_and_queued_for_review() {
    let mut nx = Nexus::open_in_memory().expect("open");
    kip(
        &mut nx,
        &format!(
            r#"UPSERT {{ CONCEPT ?p {{ {{type: "Person", name: "Omar"}} SET ATTRIBUTES {{ role: "finance lead" }} }} WITH METADATA {{ expires_at: "{PAST}" }} }}"#
        ),
    );
    let rep = cycle(&mut nx);
    assert_eq!(count(&mut nx, "Person", "Omar"), json!(1));
    assert!(
        rep.issues
            .iter()
            .any(|i| i.contains("Person:Omar carries expires_at")),
        "{:?}",
        rep.issues
    );
    let t = kip(
        &mut nx,
        r#"FIND(?t.attributes) WHERE { ?t {type: "SleepTask", name: "Review TTL on Person:Omar"} }"#,
    );
    assert_eq!(t[0]["requested_action"], "review", "{t}");
    assert_eq!(t[0]["target_name"], "Omar", "{t}");
    // the next cycle takes the task up and does not queue another
    let rep = cycle(&mut nx);
    assert_eq!(rep.count("ttl_review_tasks"), 0);
    assert_eq!(count(&mut nx, "Person", "Omar"), json!(1));
}

fn items_of(nx: &Nexus, rep: &sleep::Report, class: &str) -> Vec<proposals::Item> {
    rep.proposal
        .map(|id| proposals::items(nx, id).expect("items"))
        .unwrap_or_default()
        .into_iter()
        .filter(|i| i.class == class)
        .collect()
}

/// Two Preferences named in one slot both hold unless the slot is declared
/// single or this memory has seen one replace another in it.
#[test]
fn two_preferences_sharing_a_name_prefix_both_hold() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?a { {type: "Preference", name: "Snack: salted almonds on night shifts"} SET ATTRIBUTES { category: "food", description: "salted almonds on night shifts" } }
  CONCEPT ?b { {type: "Preference", name: "Snack: rice crackers on Saturday mornings"} SET ATTRIBUTES { category: "food", description: "rice crackers on Saturday mornings" } }
  CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS {
    ("prefers", ?a) WITH METADATA { created_at: "2026-09-01T00:00:00Z", confidence: 0.8 }
    ("prefers", ?b) WITH METADATA { created_at: "2026-10-01T00:00:00Z", confidence: 0.8 } } }
}"#,
    );
    let rep = cycle(&mut nx);
    let c = items_of(&nx, &rep, "contradiction");
    assert!(
        c.iter().all(|i| !i.title.contains("Snack")),
        "{:?}",
        c.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
    // the memory's own history shows "Coffee" holds one value at a time
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?o { {type: "Preference", name: "Coffee: oat flat white"} SET ATTRIBUTES { category: "drinks" } }
  CONCEPT ?a { {type: "Preference", name: "Coffee: black filter"} SET ATTRIBUTES { category: "drinks" } }
  CONCEPT ?b { {type: "Preference", name: "Coffee: cortado"} SET ATTRIBUTES { category: "drinks" } }
  CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS {
    ("prefers", ?o) WITH METADATA { created_at: "2026-03-01T00:00:00Z", superseded: true, confidence: 0.1 }
    ("prefers", ?a) WITH METADATA { created_at: "2026-09-01T00:00:00Z", confidence: 0.8 }
    ("prefers", ?b) WITH METADATA { created_at: "2026-10-01T00:00:00Z", confidence: 0.8 } } }
}"#,
    );
    let rep = cycle(&mut nx);
    let c = items_of(&nx, &rep, "contradiction");
    assert!(
        c.iter().any(|i| i.title.contains("Coffee: black filter")),
        "{:?}",
        c.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
}

/// The speculative rule never archives a preference, a lesson or a
/// promise: it asks whether it still holds.
#[test]
fn a_low_confidence_preference_is_asked_about_never_archived() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        r#"UPSERT {
  CONCEPT ?p { {type: "Preference", name: "Window seat on trains"} SET ATTRIBUTES { category: "travel" } }
  CONCEPT ?jazz { {type: "Topic", name: "Jazz"} }
  CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS {
    ("prefers", ?p) WITH METADATA { confidence: 0.3, created_at: "2025-01-01T00:00:00Z" }
    ("follows", ?jazz) WITH METADATA { confidence: 0.3, created_at: "2025-01-01T00:00:00Z" } } }
}"#,
    );
    let rep = cycle(&mut nx);
    let archive = items_of(&nx, &rep, "archive");
    assert!(
        archive.iter().any(|i| i.title.contains("Ada follows Jazz")),
        "the control: {:?}",
        archive.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
    assert!(
        archive.iter().all(|i| !i.title.contains("Window seat")),
        "{:?}",
        archive.iter().map(|i| &i.title).collect::<Vec<_>>()
    );
    let ask = items_of(&nx, &rep, "confirm");
    let it = ask
        .iter()
        .find(|i| i.title.contains("Window seat"))
        .expect("asked");
    assert!(it.title.starts_with("Still true?"), "{}", it.title);
    // approving says it holds: confidence up, observed now
    let done = proposals::approve(
        &mut nx,
        rep.proposal.expect("p"),
        Some(&[it.seq]),
        &Default::default(),
        &who(),
    )
    .expect("approve");
    assert_eq!(done.applied, vec![it.seq]);
    let m = kip(
        &mut nx,
        r#"FIND(?l.metadata) WHERE { ?l ({type: "Person", name: "Ada"}, "prefers", {type: "Preference", name: "Window seat on trains"}) }"#,
    );
    assert_eq!(m[0]["confidence"], json!(0.8), "{m}");
    assert_eq!(m[0]["created_at"], "2025-01-01T00:00:00Z", "{m}");
}

/// A landmark's links are part of it: never reclaimed with their TTL.
#[test]
fn reclamation_never_deletes_a_link_of_a_landmark() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    kip(
        &mut nx,
        &format!(
            r#"UPSERT {{
  CONCEPT ?e {{ {{type: "Event", name: "Ada's wedding"}} SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-01-10T10:00:00Z", content_summary: "Ada married Tom in Bergen", salience_score: 95, consolidation_status: "completed" }}
    SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "Ada"}}) WITH METADATA {{ expires_at: "{PAST}" }} }} }}
  CONCEPT ?f {{ {{type: "Event", name: "Coffee chat"}} SET ATTRIBUTES {{ event_class: "Conversation", start_time: "2026-01-10T10:00:00Z", content_summary: "coffee", salience_score: 20, consolidation_status: "completed" }}
    SET PROPOSITIONS {{ ("involves", {{type: "Person", name: "Ada"}}) WITH METADATA {{ expires_at: "{PAST}" }} }} }}
}}"#
        ),
    );
    let rep = cycle(&mut nx);
    let kept = kip(
        &mut nx,
        r#"FIND(?l.metadata) WHERE { ?l ({type: "Event", name: "Ada's wedding"}, "involves", {type: "Person", name: "Ada"}) }"#,
    );
    assert_eq!(kept.as_array().map(Vec::len), Some(1), "{kept}");
    assert!(kept[0].get("expires_at").is_none(), "{kept}");
    let gone = kip(
        &mut nx,
        r#"FIND(COUNT(?l)) WHERE { ?e {type: "Event"} FILTER(?e.name == "Coffee chat") ?l (?e, "involves", ?p) }"#,
    );
    assert_eq!(gone, json!(0), "the control link is reclaimed");
    let held = rep.to_json().to_string();
    assert!(
        held.contains("a link of landmark Event:Ada's wedding"),
        "{held}"
    );
}

/// A thousand nodes carrying a TTL they should not: each kept, the report
/// names twenty and counts the rest, twenty review tasks, and the one
/// node that may go past them is still reclaimed.
#[test]
fn thousands_of_suspicious_ttls_neither_flood_the_report_nor_block_reclamation() {
    let mut nx = Nexus::open_in_memory().expect("open");
    people(&mut nx);
    for chunk in 0..10 {
        let mut cmd = String::from("UPSERT {");
        for i in 0..100 {
            let n = chunk * 100 + i;
            cmd.push_str(&format!(
                r#" CONCEPT ?t{i} {{ {{type: "Topic", name: "Topic {n}"}} }} WITH METADATA {{ expires_at: "2026-0{}-01T00:00:00Z" }}"#,
                1 + n % 5
            ));
        }
        cmd.push('}');
        kip(&mut nx, &cmd);
    }
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "Scratch note"} } WITH METADATA { memory_tier: "short-term", expires_at: "2026-10-01T00:00:00Z" } }"#,
    );
    let rep = cycle(&mut nx);
    let listed = rep
        .issues
        .iter()
        .filter(|i| i.starts_with("Suspicious TTL"))
        .count();
    assert_eq!(listed, 21, "{:?}", &rep.issues[..3.min(rep.issues.len())]);
    assert!(
        rep.issues
            .iter()
            .any(|i| i.contains("980 more, not listed (1000 in all")),
        "{:?}",
        rep.issues
            .iter()
            .filter(|i| i.contains("more"))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        kip(
            &mut nx,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "Scratch note") }"#
        ),
        json!(0),
        "the deletable node past the kept ones is reclaimed"
    );
    assert_eq!(
        kip(&mut nx, r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} }"#),
        json!(1000)
    );
    assert_eq!(
        kip(
            &mut nx,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "SleepTask"} }"#
        ),
        json!(20)
    );
}
