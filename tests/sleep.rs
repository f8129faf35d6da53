//! The sleep cycle on the demo memory: every planted case is found,
//! nothing absurd is proposed, approvals apply exactly the chosen items,
//! rejections change nothing, and rollbacks restore the memory exactly.

use serde_json::{Map, Value, json};
use somnus::audit::Who;
use somnus::protocol::{Outcome, Request};
use somnus::review::{proposals, undo};
use somnus::sleep::{self, Heuristic, Options, Scope};
use somnus::{Nexus, Response};
use std::collections::BTreeMap;

const NOW: &str = "2026-11-20T03:00:00Z";

fn kip(nx: &mut Nexus, cmd: &str, params: Value) -> Value {
    let req =
        Request::command(cmd).with_params(params.as_object().cloned().unwrap_or_else(Map::new));
    match nx.execute(&req) {
        Response::Single(Outcome::Ok { result, .. }) => result,
        other => panic!("{cmd}: {other:?}"),
    }
}

/// The whole graph as KIP capsules: every concept type and every
/// predicate, exported; SleepTasks (bookkeeping that records each decision
/// on the work they asked for) are left out.
fn export_all(nx: &mut Nexus) -> String {
    let mut out = String::new();
    let types = kip(
        nx,
        r#"FIND(?t.name) WHERE { ?t {type: "$ConceptType"} } LIMIT 1000"#,
        json!({}),
    );
    for t in types.as_array().unwrap() {
        if t == "SleepTask" {
            continue;
        }
        let r = kip(
            nx,
            r#"EXPORT ?x WHERE { ?x {type: :t} } LIMIT 100000"#,
            json!({"t": t}),
        );
        out.push_str(r["capsule"].as_str().unwrap_or(""));
    }
    let preds = kip(
        nx,
        r#"FIND(?p.name) WHERE { ?p {type: "$PropositionType"} } LIMIT 1000"#,
        json!({}),
    );
    for p in preds.as_array().unwrap() {
        if p == "assigned_to" {
            continue;
        }
        let text = format!(r#"EXPORT ?x WHERE {{ ?x (?s, {p}, ?o) }} LIMIT 100000"#);
        let r = kip(nx, &text, json!({}));
        out.push_str(r["capsule"].as_str().unwrap_or(""));
    }
    out
}

fn demo() -> Nexus {
    somnus::demo::in_memory().expect("demo memory")
}

fn cycle(nx: &mut Nexus, now: &str) -> sleep::Report {
    let mut r = Heuristic;
    let rep =
        sleep::run(nx, &Options::new(Scope::Full, now), &mut r, None, None).expect("cycle runs");
    assert_eq!(rep.status, "completed", "{:?}", rep.error);
    rep
}

fn operator() -> Who {
    Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: None,
    }
}

fn item<'a>(p: &'a proposals::Proposal, title: &str) -> &'a proposals::Item {
    p.items
        .iter()
        .find(|i| i.title.contains(title))
        .unwrap_or_else(|| {
            panic!(
                "no item like {title:?} in {:#?}",
                p.items.iter().map(|i| &i.title).collect::<Vec<_>>()
            )
        })
}

fn status(nx: &mut Nexus, ty: &str, name: &str) -> Value {
    kip(
        nx,
        r#"FIND(?x.attributes.status) WHERE { ?x {type: :t, name: :n} }"#,
        json!({"t": ty, "n": name}),
    )
}

#[test]
fn a_full_cycle_finds_every_planted_case_and_nothing_absurd() {
    let mut nx = demo();
    let rep = cycle(&mut nx, NOW);
    let p = proposals::get(&nx, rep.proposal.expect("a proposal"))
        .unwrap()
        .unwrap();
    let titles: Vec<&str> = p.items.iter().map(|i| i.title.as_str()).collect();

    // duplicates: exactly the three planted pairs, never across types;
    // "Postgres" and "PostgreSQL" share no neighbour and their notes name
    // different things: asked about, not merged
    let merges: Vec<&proposals::Item> = p
        .items
        .iter()
        .filter(|i| i.class == "merge" || i.class == "same_or_different")
        .collect();
    assert_eq!(merges.len(), 3, "{titles:#?}");
    item(&p, r#"Merge Topic "JS" into "JavaScript""#);
    item(
        &p,
        r#"Same or different? Topic "Postgres" and "PostgreSQL""#,
    );
    item(&p, r#"Merge Person "Tom Ruiz" into "Tomás Ruiz""#);
    for m in &merges {
        assert!(
            m.commands[0].starts_with("MERGE CONCEPT"),
            "{:?}",
            m.commands
        );
        assert!(m.params.get("type").is_some(), "one type for both ends");
    }

    // contradictions: where Mira lives and her diet, nothing else; the
    // already superseded editor preference is history, not a conflict
    let conflicts: Vec<&proposals::Item> = p
        .items
        .iter()
        .filter(|i| i.class == "contradiction")
        .collect();
    assert_eq!(conflicts.len(), 2, "{titles:#?}");
    let lives = item(
        &p,
        r#"Mira Chen lives_in: "Lisbon" vs "Berlin" → keep_newer"#,
    );
    item(
        &p,
        r#"Mira Chen prefers: "Diet: vegetarian" vs "Diet: pescatarian" → keep_newer"#,
    );
    assert!(!titles.iter().any(|t| t.contains("Editor")), "{titles:#?}");
    let cs = sleep::contradictions::list(&nx, Some("open")).unwrap();
    assert_eq!(cs.len(), 2);
    for c in &cs {
        assert_eq!(c.conflict.subject, "Mira Chen", "never across subjects");
    }
    assert!(rep.phases.iter().any(|ph| {
        ph.lines
            .iter()
            .any(|l| l.contains("Trajectory") && l.contains("Editor: VS Code"))
    }));
    assert!(
        lives
            .preview
            .iter()
            .any(|c| c["before"]["metadata"]["observed_at"] == json!("2026-10-03T18:20:00Z"))
    );

    // stale unconsolidated events: 22 (19 conversations, 3 tool calls)
    assert_eq!(rep.count("stale_events"), 22);
    item(
        &p,
        "Consolidate Conversation:2026-10-09:atlas_schema_review into Topic:PostgreSQL, Project:Atlas",
    );
    for t in ["weather_lookup", "flight_search", "currency_rates"] {
        let a = p
            .items
            .iter()
            .find(|i| i.class == "archive" && i.title.contains(t))
            .expect(t);
        assert!(a.title.contains("ToolUse"));
    }

    // unscored events are scored: none left
    assert_eq!(rep.count("salience_scored"), 18);
    let left = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} FILTER(IS_NULL(?e.attributes.salience_score)) }"#,
        json!({}),
    );
    assert_eq!(left, json!(0));

    // orphans (Zig, Porto, three tool calls) and the Unsorted inbox
    assert_eq!(rep.count("orphans"), 5);
    item(&p, r#"Place "Porto" under Travel"#);
    item(&p, r#"Topic "Zig""#);
    item(
        &p,
        r#"File Topic "Vinyl records" under Personal (out of Unsorted)"#,
    );
    item(
        &p,
        r#"File Topic "Board games" under Personal (out of Unsorted)"#,
    );

    // expired nodes are found and held until their consolidation is approved
    for t in ["weather_lookup", "flight_search", "currency_rates"] {
        assert!(
            rep.issues
                .iter()
                .any(|i| i.contains("held back") && i.contains(t)),
            "{:#?}",
            rep.issues
        );
    }

    // the low-confidence old fact, explained by its rule
    let leo = item(
        &p,
        r#"Archive the fact "Mira Chen knows Leo Martin" (speculative TTL)"#,
    );
    assert!(
        leo.rationale.contains("confidence 0.3"),
        "{}",
        leo.rationale
    );

    // commitments: the fulfilled one gets its TTL, the overdue one is surfaced
    let exp = kip(
        &mut nx,
        r#"FIND(?c.metadata.expires_at) WHERE { ?c {type: "Commitment", name: "Send Priya the Atlas migration checklist"} }"#,
        json!({}),
    );
    assert_eq!(exp, json!(["2027-01-17T16:40:00Z"]));
    assert!(
        rep.issues
            .iter()
            .any(|i| i.contains("Remind Mira to renew her passport"))
    );
    assert!(
        !rep.issues
            .iter()
            .any(|i| i.contains("Draft Orchard 3.2 release notes"))
    );

    // the three pending sleep tasks were worked on: their work waits for
    // the operator's decision on the proposal
    for t in [
        "Reclassify the Unsorted inbox",
        "Review Postgres duplicates",
        "Archive tool-use events",
    ] {
        assert_eq!(
            status(&mut nx, "SleepTask", t),
            json!(["in_progress"]),
            "{t}"
        );
    }

    // the maintenance log has this cycle
    let log = kip(
        &mut nx,
        r#"FIND(?s.attributes.maintenance_log) WHERE { ?s {type: "Person", name: "$system"} }"#,
        json!({}),
    );
    let log = log[0].as_array().expect("a log");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["scope"], json!("full"));
    assert_eq!(log[0]["proposal"], json!(p.id));

    // every item carries a preview and its rationale
    for i in &p.items {
        assert!(!i.preview.is_empty(), "{}", i.title);
        assert!(!i.rationale.is_empty(), "{}", i.title);
    }
}

#[test]
fn approving_some_applies_exactly_them_rejecting_changes_nothing_and_rollback_restores() {
    let mut nx = demo();
    let rep = cycle(&mut nx, NOW);
    let pid = rep.proposal.unwrap();
    let after_run = export_all(&mut nx);
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    let js = item(&p, r#"Merge Topic "JS" into "JavaScript""#).seq;
    let lives = item(&p, r#"Mira Chen lives_in"#).seq;
    let a = proposals::approve(
        &mut nx,
        pid,
        Some(&[js, lives]),
        &BTreeMap::new(),
        &operator(),
    )
    .unwrap();
    assert_eq!(a.applied, vec![js, lives]);
    assert!(a.stale.is_empty());
    // exactly those: JS merged, Lisbon superseded; Postgres untouched
    let js_left = kip(
        &mut nx,
        r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#,
        json!({}),
    );
    assert_eq!(js_left, json!(0));
    let aliases = kip(
        &mut nx,
        r#"FIND(?t.attributes.aliases) WHERE { ?t {type: "Topic", name: "JavaScript"} }"#,
        json!({}),
    );
    assert!(aliases.to_string().contains("JS"));
    let pg = kip(
        &mut nx,
        r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "Postgres") }"#,
        json!({}),
    );
    assert_eq!(pg, json!(1));
    let current = kip(
        &mut nx,
        r#"FIND(?o.name) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "lives_in", ?o) FILTER(IS_NULL(?l.metadata.superseded) || ?l.metadata.superseded != true) }"#,
        json!({}),
    );
    assert_eq!(current, json!(["Berlin"]));
    let old = kip(
        &mut nx,
        r#"FIND(?l.metadata.superseded_by, ?l.metadata.confidence) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "lives_in", {type: "Place", name: "Lisbon"}) }"#,
        json!({}),
    );
    assert_eq!(old[0][1], json!(0.1), "{old}");
    let c = sleep::contradictions::list(&nx, Some("resolved")).unwrap();
    assert_eq!(c.len(), 1);

    // rejecting the rest changes nothing in the graph
    let after_approval = export_all(&mut nx);
    let n = proposals::reject(&mut nx, pid, None, "not now", "operator").unwrap();
    assert_eq!(n, p.items.len() - 2);
    assert_eq!(export_all(&mut nx), after_approval);
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    assert_eq!(p.status, "partially_applied");

    // rolling back the approval restores the memory as the run left it
    undo::proposal(&mut nx, pid, &operator()).unwrap();
    assert_eq!(export_all(&mut nx), after_run);
    // and rejected ideas are not proposed again unchanged
    let rep2 = cycle(&mut nx, "2026-11-20T04:00:00Z");
    if let Some(p2) = rep2.proposal {
        let p2 = proposals::get(&nx, p2).unwrap().unwrap();
        assert!(
            !p2.items.iter().any(|i| i.title.contains(r#""Postgres""#)),
            "a rejected merge came back"
        );
    }
}

#[test]
fn rejecting_a_whole_proposal_leaves_the_export_identical() {
    let mut nx = demo();
    let rep = cycle(&mut nx, NOW);
    let before = export_all(&mut nx);
    proposals::reject(
        &mut nx,
        rep.proposal.unwrap(),
        None,
        "I disagree",
        "operator",
    )
    .unwrap();
    assert_eq!(export_all(&mut nx), before);
    let p = proposals::get(&nx, rep.proposal.unwrap()).unwrap().unwrap();
    assert_eq!(p.status, "rejected");
    // the SleepTasks that asked for the work record the decision
    assert_eq!(
        status(&mut nx, "SleepTask", "Archive tool-use events"),
        json!(["completed"])
    );
    assert!(
        p.items
            .iter()
            .all(|i| i.reason.as_deref() == Some("I disagree"))
    );
    // a rejection needs a reason
    assert!(proposals::reject(&mut nx, rep.proposal.unwrap(), None, " ", "operator").is_err());
}

#[test]
fn rolling_back_a_run_restores_the_export_from_before_it() {
    let mut nx = demo();
    let before = export_all(&mut nx);
    let rep = cycle(&mut nx, NOW);
    assert_ne!(export_all(&mut nx), before, "the run changed the memory");
    let undone = undo::group(&mut nx, &format!("sleep:{}", rep.run), &operator()).unwrap();
    assert!(!undone.is_empty());
    assert_eq!(export_all(&mut nx), before);
    // the rollback is itself undoable
    undo::group(&mut nx, &format!("rollback:sleep:{}", rep.run), &operator()).unwrap();
    assert_ne!(export_all(&mut nx), before);
}

#[test]
fn an_edited_item_applies_the_edit_and_stale_items_are_not_applied() {
    let mut nx = demo();
    let rep = cycle(&mut nx, NOW);
    let pid = rep.proposal.unwrap();
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    let vinyl = item(&p, r#"File Topic "Vinyl records" under Personal"#).seq;
    let edited = item(&p, r#"File Topic "Vinyl records" under Personal"#)
        .text()
        .replace(
            r#"{type: "Domain", name: :domain}"#,
            r#"{type: "Domain", name: "Travel"}"#,
        );
    let mut edits = BTreeMap::new();
    edits.insert(vinyl, edited);
    proposals::approve(&mut nx, pid, Some(&[vinyl]), &edits, &operator()).unwrap();
    let d = kip(
        &mut nx,
        r#"FIND(?d.name) WHERE { (?x, "belongs_to_domain", ?d) ?x {type: "Topic", name: "Vinyl records"} }"#,
        json!({}),
    );
    assert_eq!(d, json!(["Travel"]));
    // the record is what was applied; what was proposed is kept beside it
    let now = proposals::get(&nx, pid).unwrap().unwrap();
    let it = now.items.iter().find(|i| i.seq == vinyl).unwrap();
    assert!(it.title.contains("Domain: Travel"), "{}", it.title);
    assert!(
        it.commands[0].contains(r#"name: "Travel""#),
        "{:?}",
        it.commands
    );
    assert!(it.preview.iter().any(|c| c.to_string().contains("Travel")));
    let was = it.proposed.clone().expect("the proposal is kept");
    assert!(
        was["title"].as_str().unwrap().contains("under Personal"),
        "{was}"
    );
    assert!(
        was["commands"][0].as_str().unwrap().contains(":domain"),
        "{was}"
    );
    let shown = it.to_json();
    assert_eq!(shown["proposed"]["title"], was["title"]);
    // an agent changes a target after the proposal: that item goes stale
    let pg = item(
        &p,
        r#"Same or different? Topic "Postgres" and "PostgreSQL""#,
    )
    .seq;
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?t { {type: "Topic", name: "Postgres"} SET ATTRIBUTES { note: "changed" } } }"#,
        json!({}),
    );
    let a = proposals::approve(&mut nx, pid, Some(&[pg]), &BTreeMap::new(), &operator()).unwrap();
    assert_eq!(a.stale, vec![pg]);
    assert!(a.applied.is_empty());
    let still = kip(
        &mut nx,
        r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "Postgres") }"#,
        json!({}),
    );
    assert_eq!(still, json!(1));
    // re-checked, it is pending again and applies
    proposals::refresh(&mut nx, pid, "operator").unwrap();
    let a = proposals::approve(&mut nx, pid, Some(&[pg]), &BTreeMap::new(), &operator()).unwrap();
    assert_eq!(a.applied, vec![pg]);
}

#[test]
fn a_failing_item_undoes_the_whole_approval() {
    let mut nx = demo();
    let rep = cycle(&mut nx, NOW);
    let pid = rep.proposal.unwrap();
    let before = export_all(&mut nx);
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    let a = item(&p, r#"Merge Topic "JS""#).seq;
    let b = item(&p, r#"Place "Porto""#).seq;
    let mut edits = BTreeMap::new();
    edits.insert(b, "UPSERT { CONCEPT ?x { {type: \"Place\" ".to_string());
    let e = proposals::approve(&mut nx, pid, Some(&[a, b]), &edits, &operator()).unwrap_err();
    assert_eq!(e.code.code(), "KIP_1001");
    assert_eq!(export_all(&mut nx), before);
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    assert!(p.items.iter().all(|i| i.status == "pending"));
}

#[test]
fn contradictions_resolve_through_the_proposal_path() {
    let mut nx = demo();
    cycle(&mut nx, NOW);
    let cs = sleep::contradictions::list(&nx, Some("open")).unwrap();
    let diet = cs
        .iter()
        .find(|c| c.conflict.predicate == "prefers")
        .unwrap();
    // the operator knows both held at their times
    let (pid, seq) = sleep::contradictions::resolve(
        &mut nx,
        diet.id,
        sleep::reasoner::Verdict::BothValid,
        Some("vegetarian until November"),
        &operator(),
    )
    .unwrap();
    let it = proposals::items(&nx, pid)
        .unwrap()
        .into_iter()
        .find(|i| i.seq == seq)
        .unwrap();
    assert_eq!(it.status, "applied");
    let v = kip(
        &mut nx,
        r#"FIND(?l.metadata.valid_until, ?l.metadata.superseded) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "prefers", {type: "Preference", name: "Diet: vegetarian"}) }"#,
        json!({}),
    );
    assert_eq!(v[0][0], json!("2026-11-16T00:00:00Z"), "{v}");
    assert_eq!(v[0][1], Value::Null, "both valid: nothing superseded");
    let c = sleep::contradictions::get(&nx, diet.id).unwrap().unwrap();
    assert_eq!(c.status, "resolved");
    assert_eq!(c.resolution.as_deref(), Some("both_valid"));
}

/// A contradiction judged "needs context" is a question that stands: the
/// next cycle does not file it again as a new one while neither fact
/// changed; once one of them changes, it is looked at afresh.
#[test]
fn a_contradiction_that_needs_context_is_not_filed_again() {
    let mut nx = demo();
    cycle(&mut nx, NOW);
    let cs = sleep::contradictions::list(&nx, None).unwrap();
    let before = cs.len();
    let diet = cs
        .iter()
        .find(|c| c.conflict.predicate == "prefers")
        .unwrap();
    sleep::contradictions::resolve(
        &mut nx,
        diet.id,
        sleep::reasoner::Verdict::NeedsContext,
        Some("ask Mira"),
        &operator(),
    )
    .unwrap();
    cycle(&mut nx, NOW);
    let again = sleep::contradictions::list(&nx, None).unwrap();
    assert!(
        !again
            .iter()
            .any(|c| c.id != diet.id && c.conflict.predicate == "prefers" && c.status == "open"),
        "filed again: {again:?}"
    );
    assert!(
        again.len() < before * 2,
        "the other contradictions only: {before} then {}",
        again.len()
    );
    // one of the facts changes: the question is looked at again
    kip(
        &mut nx,
        r#"UPSERT { CONCEPT ?m { {type: "Person", name: "Mira Chen"} SET PROPOSITIONS { ("prefers", {type: "Preference", name: "Diet: vegetarian"}) WITH METADATA { note: "said so again" } } } }"#,
        json!({}),
    );
    cycle(&mut nx, NOW);
    let third = sleep::contradictions::list(&nx, None).unwrap();
    assert!(
        third
            .iter()
            .any(|c| c.id != diet.id && c.conflict.predicate == "prefers" && c.status == "open"),
        "looked at again once a fact changed: {third:?}"
    );
}

/// Undoing the operator's verdict on a contradiction opens it again with
/// what the cycle proposed, not with the verdict taken back.
#[test]
fn an_undone_verdict_shows_the_cycles_proposal_again() {
    let mut nx = demo();
    cycle(&mut nx, NOW);
    let cs = sleep::contradictions::list(&nx, Some("open")).unwrap();
    let diet = cs
        .iter()
        .find(|c| c.conflict.predicate == "prefers")
        .unwrap();
    let proposed = diet.resolution.clone().expect("the cycle proposes");
    assert_ne!(proposed, "both_valid");
    sleep::contradictions::resolve(
        &mut nx,
        diet.id,
        sleep::reasoner::Verdict::BothValid,
        None,
        &operator(),
    )
    .unwrap();
    let group = somnus::audit::list(
        nx.db(),
        &somnus::audit::Filter {
            limit: 1,
            ..Default::default()
        },
    )
    .unwrap()[0]
        .batch
        .clone()
        .expect("an approval group");
    somnus::review::undo::group(&mut nx, &group, &operator()).unwrap();
    let c = sleep::contradictions::get(&nx, diet.id).unwrap().unwrap();
    assert_eq!(c.status, "open");
    assert_eq!(c.resolution.as_deref(), Some(proposed.as_str()));
}

/// A fact only proposed for archival is never said to be archived: `why`
/// and the proposal name its relevance band, and an Event consolidated
/// for what it states says what that is.
#[test]
fn why_never_says_archived_of_what_is_only_proposed() {
    let mut nx = demo();
    cycle(&mut nx, NOW);
    let p = &proposals::list(&nx, None, 10).unwrap()[0];
    let it = item(p, "Mira Chen knows Leo Martin");
    assert!(it.rationale.contains("(archival band)"), "{}", it.rationale);
    let id = somnus::store::ids::parse_element_id(&it.evidence[0]).unwrap();
    let v = sleep::explain::explain(&nx, id, NOW).unwrap();
    let lines = sleep::explain_text::element_lines(&it.evidence[0], &v).join("\n");
    assert!(
        lines.contains("relevance now: 0.0002 (archival band)"),
        "{lines}"
    );
    assert!(!lines.contains("(archived)"), "{lines}");
    assert!(!lines.contains("  archived:"), "{lines}");
    let caffeine = item(p, "Conversation:2026-10-24:sleep_and_caffeine");
    assert!(
        !caffeine.rationale.contains("is about ;"),
        "{}",
        caffeine.rationale
    );
    assert!(
        caffeine
            .rationale
            .contains("says \"decided no coffee after 2pm\" (a decision)"),
        "{}",
        caffeine.rationale
    );
}

#[test]
fn approved_archival_lets_the_next_cycle_reclaim_expired_events_and_why_explains() {
    let mut nx = demo();
    let rep = cycle(&mut nx, NOW);
    proposals::approve(
        &mut nx,
        rep.proposal.unwrap(),
        None,
        &BTreeMap::new(),
        &operator(),
    )
    .unwrap();
    // an archived Event keeps the 30 days its archive promised, whatever
    // expiry it carried before: the cycle after that reclaims it
    let rep2 = cycle(&mut nx, "2026-11-21T03:00:00Z");
    assert_eq!(rep2.count("deleted_nodes"), 0, "{:#?}", rep2.phases);
    let rep2 = cycle(&mut nx, "2026-12-21T03:00:00Z");
    // the three archived tool calls among them, with what else expired
    assert!(rep2.count("deleted_nodes") >= 3, "{:#?}", rep2.phases);
    let left = kip(
        &mut nx,
        r#"FIND(COUNT(?e)) WHERE { ?e {type: "Event"} FILTER(?e.attributes.event_class == "ToolUse") }"#,
        json!({}),
    );
    assert_eq!(left, json!(0));
    let (id, _) = sleep::explain::resolve(&nx, "Event:ToolUse:2026-10-20:weather_lookup")
        .unwrap()
        .expect("known");
    let why = sleep::explain::explain(&nx, id, "2026-12-21T03:00:00Z").unwrap();
    assert_eq!(why["state"]["exists"], json!(false));
    assert_eq!(why["notes"][0]["action"], json!("deleted"));
    assert_eq!(
        why["notes"][0]["inputs"]["expires_at"],
        json!("2026-12-20T03:00:00Z")
    );
    assert!(
        why["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["op"] == json!("delete"))
    );
}

#[test]
fn scopes_run_their_phases_and_policy_applies_a_class_without_review() {
    let mut nx = demo();
    let mut r = Heuristic;
    let d = sleep::run(
        &mut nx,
        &Options::new(Scope::Daydream, NOW),
        &mut r,
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        d.phases.iter().map(|p| p.phase).collect::<Vec<_>>(),
        vec![1, 13]
    );
    let q = sleep::run(
        &mut nx,
        &Options::new(Scope::Quick, NOW),
        &mut r,
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        q.phases.iter().map(|p| p.phase).collect::<Vec<_>>(),
        vec![1, 2, 13]
    );
    proposals::set_policy(&nx, "merge", "auto", "operator").unwrap();
    let (f, events) = full_watched(&mut nx, &mut r);
    assert_eq!(f.phases.len(), 13);
    assert!(f.count("auto_applied") >= 2, "{:#?}", f.phases);
    let js = kip(
        &mut nx,
        r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#,
        json!({}),
    );
    assert_eq!(js, json!(0));
    assert!(events.iter().any(|e| e.phase == 7 && e.phase_done));
    assert!(events.last().unwrap().log.as_deref() == Some("cycle completed"));
}

#[test]
fn cancelling_rolls_back_the_running_phase() {
    let mut nx = demo();
    let before = export_all(&mut nx);
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut r = Heuristic;
    let rep = sleep::run(
        &mut nx,
        &Options::new(Scope::Full, NOW),
        &mut r,
        None,
        Some(cancel),
    )
    .unwrap();
    assert_eq!(rep.status, "cancelled");
    assert_eq!(export_all(&mut nx), before);
}

#[test]
fn a_cycle_killed_mid_phase_leaves_no_half_applied_phase() {
    use std::io::{BufRead, BufReader};
    let dir = std::env::temp_dir().join(format!("somnus-sleep-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("memory.db");
    let bin = env!("CARGO_BIN_EXE_somnus");
    let st = std::process::Command::new(bin)
        .arg("--db")
        .arg(&db)
        .args(["demo", "--no-console"])
        .output()
        .unwrap();
    assert!(st.status.success());
    let original = export_all(&mut Nexus::open(&db).unwrap());
    let mut child = std::process::Command::new(bin)
        .arg("--db")
        .arg(&db)
        .args(["sleep", "--now", NOW])
        .env("SOMNUS_SLEEP_HOLD_PHASE", "7")
        // one transaction per phase here (batches are the next test's)
        .env("SOMNUS_SLEEP_SLICE_MS", "phase")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    for line in BufReader::new(err).lines() {
        let line = line.unwrap();
        if line.contains("holding phase 7") {
            break;
        }
    }
    // phase 7's decay UPDATEs have run in its open transaction: kill now
    child.kill().unwrap();
    child.wait().unwrap();

    let mut nx = Nexus::open(&db).unwrap();
    let ok: String = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let (phase, status): (i64, String) = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row(
            "SELECT phase, status FROM sleep_runs WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((phase, status.as_str()), (6, "running"));
    // nothing of phase 7 is in the memory: no decay, no entry
    let decayed = kip(
        &mut nx,
        r#"FIND(COUNT(?l)) WHERE { ?l (?s, "knows", ?o) FILTER(IS_NOT_NULL(?l.metadata.memory_strength)) }"#,
        json!({}),
    );
    assert_eq!(decayed, json!(0));
    let n7: i64 = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row(
            "SELECT COUNT(*) FROM audit_log WHERE trigger_name = 'sleep #1 phase 7'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n7, 0);
    let phases: i64 = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("SELECT COUNT(*) FROM sleep_phases WHERE run = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(phases, 6);
    // phases 1-6 are whole: undoing them gives back the original exactly
    let with_six = export_all(&mut nx);
    undo::group(&mut nx, "sleep:1", &operator()).unwrap();
    assert_eq!(export_all(&mut nx), original);
    undo::group(&mut nx, "rollback:sleep:1", &operator()).unwrap();
    assert_eq!(export_all(&mut nx), with_six);
    // the next cycle completes, and the killed one is marked interrupted
    let rep = cycle(&mut nx, NOW);
    assert_eq!(rep.phases.len(), 13);
    let status: String = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("SELECT status FROM sleep_runs WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(status, "interrupted");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With batches (a phase commits at every yield point), a cycle killed in
/// the middle of phase 7 keeps the batches it committed, whole, and its run
/// record says how far it got; the batch in progress is gone; the next
/// cycle completes without decaying a fact twice.
#[test]
fn a_cycle_killed_between_batches_keeps_whole_batches_and_a_true_record() {
    use std::io::{BufRead, BufReader};
    let dir = std::env::temp_dir().join(format!("somnus-sleep-batches-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("memory.db");
    let bin = env!("CARGO_BIN_EXE_somnus");
    let st = std::process::Command::new(bin)
        .arg("--db")
        .arg(&db)
        .args(["demo", "--no-console"])
        .output()
        .unwrap();
    assert!(st.status.success());
    let mut child = std::process::Command::new(bin)
        .arg("--db")
        .arg(&db)
        .args(["sleep", "--now", NOW])
        .env("SOMNUS_SLEEP_HOLD_PHASE", "7")
        .env("SOMNUS_SLEEP_SLICE_MS", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    for line in BufReader::new(err).lines() {
        if line.unwrap().contains("holding phase 7") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let mut nx = Nexus::open(&db).unwrap();
    let ok: String = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let (phase, report): (i64, String) = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row(
            "SELECT phase, report FROM sleep_runs WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(phase, 6, "phase 7 never finished");
    let report: Value = serde_json::from_str(&report).unwrap();
    let phases = report["phases"].as_array().unwrap();
    let p7 = phases.last().unwrap();
    assert_eq!(p7["phase"], json!(7), "{report}");
    assert!(
        p7["lines"].to_string().contains("batch"),
        "the record says phase 7 is in progress: {p7}"
    );
    // what the record counts is what the memory holds: every decay it
    // counts is written, whole, and marked
    let recorded = p7["counts"]["decayed"].as_i64().unwrap_or(0);
    let marked = |nx: &Nexus| -> Vec<(i64, f64)> {
        let c = nx.connection_for_checks().expect("a SQLite memory");
        let mut st = c
            .prepare("SELECT id, json_extract(metadata, '$.memory_strength') FROM propositions WHERE json_extract(metadata, '$.strength_decay_applied_at') = ?1 ORDER BY id")
            .unwrap();
        st.query_map([NOW], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let decayed = marked(&nx);
    assert!(recorded > 0, "the demo has facts to decay: {p7}");
    assert_eq!(decayed.len() as i64, recorded, "{p7}");
    // the final batch (relevance notes, archival proposals, the phase row)
    // was in progress: none of it is there
    let rows: i64 = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row(
            "SELECT COUNT(*) FROM sleep_phases WHERE run = 1 AND phase = 7",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 0);
    // the next cycle completes and decays nothing twice
    let rep = cycle(&mut nx, NOW);
    assert_eq!(rep.phases.len(), 13);
    let again = marked(&nx);
    assert!(
        decayed.iter().all(|d| again.contains(d)),
        "{decayed:?} {again:?}"
    );
    let status: String = nx
        .connection_for_checks()
        .expect("a SQLite memory")
        .query_row("SELECT status FROM sleep_runs WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(status, "interrupted");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An approval undone entry by entry (the way `somnus rollback N` and the
/// console's `u` do it) turns the item back: `rolled_back`, its
/// contradiction open again, decidable again; undoing the undo makes it
/// applied again.
#[test]
fn item_status_follows_the_rollback_of_its_entries() {
    let mut nx = demo();
    let rep = cycle(&mut nx, "2026-11-20T03:00:00Z");
    let pid = rep.proposal.expect("a proposal");
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    let it = p
        .items
        .iter()
        .find(|i| i.class == "contradiction" && i.title.contains("lives_in"))
        .expect("the lives_in contradiction")
        .clone();
    proposals::approve(&mut nx, pid, Some(&[it.seq]), &BTreeMap::new(), &operator()).unwrap();
    let status = |nx: &Nexus| {
        proposals::get(nx, pid)
            .unwrap()
            .unwrap()
            .items
            .iter()
            .find(|i| i.seq == it.seq)
            .unwrap()
            .status
            .clone()
    };
    assert_eq!(status(&nx), "applied");
    let open = |nx: &Nexus| {
        sleep::contradictions::list(nx, Some("open"))
            .unwrap()
            .iter()
            .any(|c| c.conflict.predicate == "lives_in")
    };
    assert!(!open(&nx));
    // the item's entries, undone one by one
    let entries: Vec<i64> = nx
        .audit_list(&somnus::audit::Filter {
            batch: Some(format!("proposal:{pid}")),
            limit: 100,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .filter(|e| e.trigger == format!("proposal #{pid} item {}", it.seq))
        .map(|e| e.id)
        .collect();
    assert!(!entries.is_empty());
    let mut undos = Vec::new();
    for e in &entries {
        undos.push(undo::entry(&mut nx, *e, &operator()).expect("undo"));
    }
    assert_eq!(status(&nx), "rolled_back");
    assert!(open(&nx), "the contradiction is open again");
    // undoing the undo applies it again
    for u in undos.iter().rev() {
        undo::entry(&mut nx, *u, &operator()).expect("redo");
    }
    assert_eq!(status(&nx), "applied");
    assert!(!open(&nx));
    // undone once more, it can be decided again
    let again = nx
        .audit_list(&somnus::audit::Filter {
            limit: 5,
            ..Default::default()
        })
        .unwrap();
    for e in again
        .iter()
        .filter(|e| e.kind == "ROLLBACK")
        .take(undos.len())
    {
        undo::entry(&mut nx, e.id, &operator()).expect("undo the redo");
    }
    assert_eq!(status(&nx), "rolled_back");
    let a = proposals::approve(&mut nx, pid, Some(&[it.seq]), &BTreeMap::new(), &operator())
        .expect("decided again");
    assert!(
        a.applied.contains(&it.seq) || a.stale.contains(&it.seq),
        "{a:?}"
    );
}

/// A cycle cancelled mid-way says so (not a timeout), and its report keeps
/// the phase that was rolled back.
#[test]
fn a_cancelled_cycle_is_reported_as_cancelled_with_its_phase() {
    let mut nx = demo();
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<sleep::Progress>();
    let flag = cancel.clone();
    let watcher = std::thread::spawn(move || {
        for p in rx {
            if p.phase >= 3 {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    let mut r = Heuristic;
    let rep = sleep::run(
        &mut nx,
        &Options::new(Scope::Full, NOW),
        &mut r,
        Some(tx),
        Some(cancel),
    )
    .unwrap();
    let _ = watcher.join();
    assert_eq!(rep.status, "cancelled");
    let err = rep.error.clone().unwrap_or_default();
    assert!(err.starts_with("cancelled"), "{err}");
    assert!(
        !err.contains("execution limit") && !err.contains("KIP_4001"),
        "{err}"
    );
    if err.contains("during phase") {
        let last = rep.phases.last().expect("the phase rolled back is listed");
        assert_eq!(last.counts.get("cancelled"), Some(&1), "{last:?}");
        assert!(last.lines[0].contains("rolled back"), "{last:?}");
    }
    // the run as listed says the same
    let runs = sleep::cycle::runs(&nx, 5).unwrap();
    assert_eq!(runs[0].status, "cancelled");
}

/// A command stopped by its tick before its time limit is cancelled, not
/// timed out.
#[test]
fn a_command_cancelled_before_its_limit_says_cancelled() {
    let mut nx = demo();
    nx.set_tick(Some(std::sync::Arc::new(|| true)));
    let req = Request::command(
        r#"FIND(?a.name, ?b.name) WHERE { ?a {type: "Event"} ?b {type: "Event"} } LIMIT 100000"#,
    )
    .with_params(Map::new());
    let out = serde_json::to_string(&nx.execute(&req).to_json()).unwrap();
    nx.set_tick(None);
    assert!(out.contains("cancelled after"), "{out}");
    assert!(!out.contains("execution limit"), "{out}");
}

/// Each approval is its own audit group (`proposal:ID/N`): undoing the
/// second leaves the first applied; undoing the proposal undoes both; the
/// group filter `proposal:ID` lists every decision's entries.
#[test]
fn each_approval_is_one_group() {
    let mut nx = demo();
    let rep = cycle(&mut nx, "2026-11-20T03:00:00Z");
    let pid = rep.proposal.expect("a proposal");
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    let pending: Vec<i64> = p
        .items
        .iter()
        .filter(|i| i.status == "pending" && i.class == "contradiction")
        .map(|i| i.seq)
        .take(2)
        .collect();
    assert_eq!(pending.len(), 2, "two contradictions to decide");
    let (first, second) = (pending[0], pending[1]);
    for s in [first, second] {
        let a =
            proposals::approve(&mut nx, pid, Some(&[s]), &BTreeMap::new(), &operator()).unwrap();
        assert_eq!(a.applied, vec![s]);
    }
    let groups = |nx: &Nexus| -> Vec<String> {
        let mut g: Vec<String> = nx
            .audit_list(&somnus::audit::Filter {
                batch: Some(format!("proposal:{pid}")),
                limit: 1000,
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .filter_map(|e| e.batch)
            .collect();
        g.sort();
        g.dedup();
        g
    };
    assert_eq!(
        groups(&nx),
        vec![format!("proposal:{pid}/1"), format!("proposal:{pid}/2")]
    );
    let status = |nx: &Nexus, seq: i64| {
        proposals::get(nx, pid)
            .unwrap()
            .unwrap()
            .items
            .iter()
            .find(|i| i.seq == seq)
            .unwrap()
            .status
            .clone()
    };
    // the second approval alone
    let undone = undo::group(&mut nx, &format!("proposal:{pid}/2"), &operator())
        .expect("undo the second approval");
    assert!(!undone.is_empty());
    assert_eq!(status(&nx, second), "rolled_back");
    assert_eq!(status(&nx, first), "applied");
    // the whole proposal: what is still in effect
    undo::proposal(&mut nx, pid, &operator()).expect("undo the proposal");
    assert_eq!(status(&nx, first), "rolled_back");
    assert!(
        undo::proposal(&mut nx, pid, &operator()).is_err(),
        "nothing left to undo"
    );
}

/// A step repeated for several SleepTasks says it once in the report.
#[test]
fn a_report_says_each_line_once() {
    let mut nx = demo();
    let mut r = Heuristic;
    for scope in [Scope::Daydream, Scope::Daydream] {
        sleep::run(&mut nx, &Options::new(scope, NOW), &mut r, None, None).expect("daydream");
    }
    let rep = cycle(&mut nx, NOW);
    for p in &rep.phases {
        let mut seen = std::collections::HashSet::new();
        for l in &p.lines {
            assert!(seen.insert(l), "phase {} says twice: {l}", p.phase);
        }
    }
}

/// W7: a SleepTask waits for an item whose approval was undone: deciding
/// another item of the same proposal leaves it in progress (the item is
/// waiting to be decided again), and it completes once the item is.
#[test]
fn a_task_waits_while_its_item_is_undone_and_decided_again() {
    let mut nx = demo();
    let rep = cycle(&mut nx, NOW);
    let pid = rep.proposal.unwrap();
    let tasks = kip(
        &mut nx,
        r#"FIND(?t.name, ?t.attributes.awaiting_items) WHERE { ?t {type: "SleepTask"} FILTER(?t.attributes.status == "in_progress" && ?t.attributes.awaiting_proposal == :p) }"#,
        json!({"p": pid}),
    );
    let row = tasks
        .as_array()
        .and_then(|a| a.first())
        .cloned()
        .expect("a task awaits the proposal");
    let (task, waits) = (row[0].clone(), row[1].clone());
    let seq = waits[0].as_i64().expect("an item");
    let task_status = |nx: &mut Nexus| {
        kip(
            nx,
            r#"FIND(?t.attributes.status) WHERE { ?t {type: "SleepTask", name: :n} }"#,
            json!({"n": task}),
        )
    };
    let items: Vec<i64> = waits
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    proposals::approve(&mut nx, pid, Some(&items), &BTreeMap::new(), &operator()).unwrap();
    assert_eq!(task_status(&mut nx), json!(["completed"]));
    undo::proposal(&mut nx, pid, &operator()).unwrap();
    assert_eq!(task_status(&mut nx), json!(["in_progress"]));
    // another item of the proposal is decided
    let p = proposals::get(&nx, pid).unwrap().unwrap();
    let other = p
        .items
        .iter()
        .find(|i| i.status == "pending" && !items.contains(&i.seq))
        .expect("another pending item")
        .seq;
    proposals::reject(&mut nx, pid, Some(&[other]), "not now", "operator").unwrap();
    assert_eq!(
        task_status(&mut nx),
        json!(["in_progress"]),
        "item {seq} waits to be decided again"
    );
    proposals::refresh(&mut nx, pid, "operator").unwrap();
    let again: Vec<i64> = proposals::get(&nx, pid)
        .unwrap()
        .unwrap()
        .items
        .iter()
        .filter(|i| {
            items.contains(&i.seq)
                && matches!(i.status.as_str(), "pending" | "stale" | "rolled_back")
        })
        .map(|i| i.seq)
        .collect();
    proposals::reject(&mut nx, pid, Some(&again), "no after all", "operator").unwrap();
    assert_eq!(task_status(&mut nx), json!(["completed"]));
}

/// The health measured again after the last phase is part of the cycle a
/// watcher sees: its step is reported (the heartbeat goes on while it
/// reads), after phase 13 and before "cycle completed".
#[test]
fn the_health_measured_again_is_reported_while_it_reads() {
    let mut nx = demo();
    let (rep, events) = full_watched(&mut nx, &mut Heuristic);
    assert!(
        !rep.health_after.is_empty(),
        "the demo has metrics off target"
    );
    let last_phase = events
        .iter()
        .position(|e| e.phase == 13 && e.phase_done)
        .expect("phase 13 done");
    let again = events
        .iter()
        .position(|e| e.step == "measuring the memory's health again")
        .expect("the step is reported");
    assert!(again > last_phase);
    assert_eq!(
        events.last().unwrap().log.as_deref(),
        Some("cycle completed")
    );
}

/// A full cycle at `NOW` and every progress event it sent.
fn full_watched(
    nx: &mut somnus::Nexus,
    r: &mut Heuristic,
) -> (sleep::Report, Vec<sleep::Progress>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let rep = sleep::run(nx, &Options::new(Scope::Full, NOW), r, Some(tx), None).unwrap();
    (rep, rx.try_iter().collect())
}
