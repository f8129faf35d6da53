//! Reviewing in the console: the Reflections pane (approve, edit,
//! discard, a sub-agent's proposal, a stale preview shown again, what an
//! item changes in recent reads) and the Conflicts pane.

use super::*;

/// The Reflections tab after a full sleep cycle on the demo memory:
/// tick two items, approve them behind a confirmation, reject the rest
/// with a typed reason; the memory shows exactly those decisions.
#[test]
fn reflections_approve_ticked_items_and_reject_the_rest() {
    let mut a = app();
    a.with_nexus(|nx| {
        let mut r = somnus::sleep::Heuristic;
        let rep = somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut r,
            None,
            None,
        )
        .expect("cycle");
        assert_eq!(rep.status, "completed");
    });
    alt(&mut a, '4');
    assert_eq!(a.tab, Tab::Reflections);
    insta::assert_snapshot!("reflections", screen(&mut a, 120, 36));
    let items = a.reflections.proposals[0].items.clone();
    let js = items
        .iter()
        .position(|i| i.title.contains(r#"Merge Topic "JS""#))
        .expect("JS merge");
    let lives = items
        .iter()
        .position(|i| i.title.contains("lives_in"))
        .expect("lives_in");
    let (first, second) = (js.min(lives), js.max(lives));
    for _ in 0..first {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char(' '));
    for _ in first + 1..second {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char(' '));
    key(&mut a, KeyCode::Char('a'));
    insta::assert_snapshot!("reflections_confirm", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Char('y'));
    let p = &a.reflections.proposals[0];
    assert_eq!(
        p.count("applied"),
        2,
        "{:?}",
        p.items
            .iter()
            .filter(|i| i.status == "applied")
            .map(|i| &i.title)
            .collect::<Vec<_>>()
    );
    // reject the rest, with a reason typed into the popup
    key(&mut a, KeyCode::Char('X'));
    assert!(a.reflections.captures_text_now());
    typed(&mut a, "not tonight");
    insta::assert_snapshot!("reflections_reject", screen(&mut a, 120, 36));
    key(&mut a, KeyCode::Enter);
    let p = &a.reflections.proposals[0];
    assert_eq!(p.status, "partially_applied");
    assert_eq!(p.count("rejected"), p.items.len() - 2);
    assert!(
        p.items
            .iter()
            .filter(|i| i.status == "rejected")
            .all(|i| i.reason.as_deref() == Some("not tonight"))
    );
    // the memory: JS merged into JavaScript, Lisbon superseded, Postgres kept
    let (js_left, pg_left, current) = a.with_nexus(|nx| {
        let q = |nx: &mut somnus::Nexus, c: &str| nx.execute(&somnus::Request::readonly(c)).to_json()["result"].clone();
        (
            q(nx, r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#),
            q(nx, r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "Postgres") }"#),
            q(nx, r#"FIND(?o.name) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "lives_in", ?o) FILTER(IS_NULL(?l.metadata.superseded)) }"#),
        )
    });
    assert_eq!(js_left, serde_json::json!(0));
    assert_eq!(pg_left, serde_json::json!(1));
    assert_eq!(current, serde_json::json!(["Berlin"]));
    insta::assert_snapshot!("reflections_decided", screen(&mut a, 120, 36));
}

/// Conflicts after a cycle: both facts side by side; "both valid" on a key,
/// confirmed, sets validity windows through the proposal path.
#[test]
fn conflicts_pane_resolves_a_contradiction() {
    let mut a = app();
    alt(&mut a, '6');
    a.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    key(&mut a, KeyCode::Char('s'));
    alt(&mut a, '5');
    assert_eq!(a.tab, Tab::Conflicts);
    assert_eq!(a.conflicts.items.len(), 2);
    let diet = a
        .conflicts
        .items
        .iter()
        .position(|c| c.conflict.predicate == "prefers")
        .expect("diet");
    for _ in 0..diet {
        key(&mut a, KeyCode::Down);
    }
    insta::assert_snapshot!("conflicts", masked(screen(&mut a, 120, 36)));
    key(&mut a, KeyCode::Char('b'));
    let s = masked(screen(&mut a, 120, 36));
    // the confirmation names both facts
    assert!(s.contains("keep both Mira Chen prefers"), "{s}");
    assert!(s.contains("and Mira Chen prefers"), "{s}");
    insta::assert_snapshot!("conflicts_confirm", s);
    key(&mut a, KeyCode::Char('y'));
    // decided: no verdict keys, on the bar or in the pane
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("decided: undo its resolution in Audit"), "{s}");
    assert!(!s.contains("keep newer"), "{s}");
    // `/` narrows the list
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "lives");
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("/ lives (Esc clears)"), "{s}");
    assert!(s.contains("lives_in"), "{s}");
    assert!(!s.contains(" prefers"), "{s}");
    key(&mut a, KeyCode::Esc);
    assert!(screen(&mut a, 120, 36).contains(" prefers"));
    let c = a
        .conflicts
        .items
        .iter()
        .find(|c| c.conflict.predicate == "prefers")
        .expect("diet");
    assert_eq!(c.status, "resolved");
    assert_eq!(c.resolution.as_deref(), Some("both_valid"));
    let v = a.with_nexus(|nx| {
        nx.execute(&somnus::Request::readonly(
            r#"FIND(?l.metadata.valid_until) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "prefers", {type: "Preference", name: "Diet: vegetarian"}) }"#,
        ))
        .to_json()["result"]
            .clone()
    });
    assert_eq!(v, serde_json::json!(["2026-11-16T00:00:00Z"]));
}

/// The whole review, through the console only: run a full cycle, approve
/// part of its proposal, resolve a contradiction, reject the rest, roll
/// back one approval; the memory, read through KIP, is exactly what those
/// decisions imply.
#[test]
fn a_night_reviewed_through_the_console_only() {
    let mut a = app();
    // run a full cycle
    alt(&mut a, '6');
    a.sleep.clock = Some("2026-11-20T03:00:00Z".into());
    key(&mut a, KeyCode::Char('s'));
    assert_eq!(
        a.sleep.report.as_ref().map(|r| r.status.as_str()),
        Some("completed")
    );
    // approve two items: the JS merge and where Mira lives
    alt(&mut a, '4');
    let items = a.reflections.proposals[0].items.clone();
    let at = |t: &str| items.iter().position(|i| i.title.contains(t)).expect(t);
    let (js, lives) = (at(r#"Merge Topic "JS""#), at("lives_in"));
    for i in 0..items.len() {
        if i == js || i == lives {
            key(&mut a, KeyCode::Char(' '));
        } else {
            key(&mut a, KeyCode::Down);
        }
    }
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(a.reflections.proposals[0].count("applied"), 2);
    // resolve the diet contradiction: both were true in their time
    alt(&mut a, '5');
    let diet = a
        .conflicts
        .items
        .iter()
        .position(|c| c.conflict.predicate == "prefers")
        .expect("diet");
    for _ in 0..diet {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char('b'));
    key(&mut a, KeyCode::Char('y'));
    // reject the rest
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('X'));
    typed(&mut a, "not tonight");
    key(&mut a, KeyCode::Enter);
    // roll back the JS merge from the audit trail
    alt(&mut a, '8');
    assert_eq!(a.tab, Tab::Audit);
    let merge = a
        .audit
        .entries
        .iter()
        .position(|e| e.kind == "MERGE" && e.trigger.starts_with("proposal #1"))
        .expect("the approved merge");
    for _ in 0..merge {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Enter);
    insta::assert_snapshot!("audit_entry", masked(screen(&mut a, 120, 36)));
    key(&mut a, KeyCode::Char('u'));
    key(&mut a, KeyCode::Char('y'));
    assert!(
        a.audit.entries[0].kind == "ROLLBACK",
        "{:?}",
        a.audit.entries.first()
    );

    let q = |a: &App, c: &str| {
        a.with_nexus(|nx| nx.execute(&somnus::Request::readonly(c)).to_json()["result"].clone())
    };
    use serde_json::json;
    // the rolled-back merge: JS is back, on its own
    assert_eq!(
        q(
            &a,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#
        ),
        json!(1)
    );
    // the kept approval: Berlin current, Lisbon superseded
    assert_eq!(
        q(
            &a,
            r#"FIND(?o.name) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "lives_in", ?o) FILTER(IS_NULL(?l.metadata.superseded)) }"#
        ),
        json!(["Berlin"])
    );
    // the resolution: both diets valid, each in its window, none superseded
    assert_eq!(
        q(
            &a,
            r#"FIND(?l.metadata.valid_until) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "prefers", {type: "Preference", name: "Diet: vegetarian"}) }"#
        ),
        json!(["2026-11-16T00:00:00Z"])
    );
    assert_eq!(
        q(
            &a,
            r#"FIND(COUNT(?l)) WHERE { ?l ({type: "Person", name: "Mira Chen"}, "prefers", ?o) FILTER(?l.metadata.superseded == true) }"#
        ),
        json!(1),
        "only the editor preference planted as superseded"
    );
    // the rejected items changed nothing: Postgres unmerged, Vinyl records unsorted
    assert_eq!(
        q(
            &a,
            r#"FIND(COUNT(?t)) WHERE { ?t {type: "Topic"} FILTER(?t.name == "Postgres") }"#
        ),
        json!(1)
    );
    assert_eq!(
        q(
            &a,
            r#"FIND(?d.name) WHERE { ({type: "Topic", name: "Vinyl records"}, "belongs_to_domain", ?d) }"#
        ),
        json!(["Unsorted"])
    );
}

/// Rewriting an item's KIP in the Reflections editor before approving it:
/// a broken edit is refused with its KIP code and position and keeps the
/// popup open; the fixed edit is what approval applies, and what the
/// proposal records.
#[test]
fn reflections_item_edited_in_the_editor_before_approval() {
    let mut a = app();
    a.with_nexus(|nx| {
        let rep = somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut somnus::sleep::Heuristic,
            None,
            None,
        )
        .expect("cycle");
        assert_eq!(rep.status, "completed");
    });
    alt(&mut a, '4');
    let vinyl = a.reflections.proposals[0]
        .items
        .iter()
        .position(|i| i.title.contains("Vinyl records"))
        .expect("the Vinyl records reclassification");
    for _ in 0..vinyl {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Char('e'));
    assert!(a.reflections.captures_text_now());
    // line 3 ends with `name: :domain})`: file it under Work instead
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::End);
    for _ in 0..":domain})".len() {
        key(&mut a, KeyCode::Backspace);
    }
    typed(&mut a, "\"Work\"");
    // no closing brackets yet: refused, with where and why
    ctrl(&mut a, 's');
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("KIP_1001"), "{s}");
    assert!(s.contains("line"), "{s}");
    typed(&mut a, "})");
    insta::assert_snapshot!("reflections_edit", screen(&mut a, 120, 36));
    ctrl(&mut a, 's');
    assert!(!a.reflections.captures_text_now());
    assert_eq!(a.reflections.edits.len(), 1);
    // the title and the preview are those of the edit now
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains("edited: insert Topic: Vinyl records belongs_to_domain Domain: Work"),
        "{s}"
    );
    assert!(s.contains("proposed as:"), "{s}");
    insta::assert_snapshot!("reflections_edited", s);
    // `]` pages the item down as far as its last line, no further
    for _ in 0..20 {
        key(&mut a, KeyCode::Char(']'));
        let _ = screen(&mut a, 120, 36);
    }
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("what the edit changes now"), "{s}");
    assert!(s.contains("+ id:"), "the last line is on screen: {s}");
    for _ in 0..20 {
        key(&mut a, KeyCode::Char('['));
    }
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("(1 as edited)"), "{s}");
    key(&mut a, KeyCode::Char('y'));
    let it = &a.reflections.proposals[0].items[vinyl];
    assert_eq!(it.status, "applied");
    let edited = it.edited.clone().expect("the edit is recorded");
    assert!(edited[0].contains("name: \"Work\"})"), "{edited:?}");
    // W3: the record is what was applied, and what was proposed is kept
    assert!(it.title.contains("Domain: Work"), "{}", it.title);
    assert_eq!(it.commands, edited);
    assert!(
        it.preview
            .to_vec()
            .iter()
            .any(|c| c.to_string().contains("Work")),
        "{:?}",
        it.preview
    );
    let proposed = it.proposed.clone().expect("what was proposed is kept");
    assert!(
        proposed["title"]
            .as_str()
            .unwrap_or("")
            .contains("Vinyl records"),
        "{proposed}"
    );
    assert!(
        !proposed["title"].as_str().unwrap_or("").contains("Work"),
        "{proposed}"
    );
    let s = screen(&mut a, 120, 36);
    assert!(
        s.contains("proposed as: File Topic \"Vinyl records\" under Personal"),
        "{s}"
    );
    assert!(a.reflections.edits.is_empty());
    let domains = a.with_nexus(|nx| {
        let r = nx.execute(&somnus::protocol::Request::readonly(
            r#"FIND(?d.name) WHERE { (?n, "belongs_to_domain", ?d) ?n {type: "Topic", name: "Vinyl records"} }"#,
        ));
        r.to_json()["result"].clone()
    });
    assert_eq!(domains, serde_json::json!(["Work"]));
}

/// The item editor asks before throwing changes away, and closes at once
/// when nothing changed; `c` ticks every undecided item of the selected
/// item's class; `/` narrows the items to a class.
#[test]
fn reflections_discard_asks_ticks_a_class_and_filters() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('s'));
    alt(&mut a, '4');
    // unchanged: Esc closes
    key(&mut a, KeyCode::Char('e'));
    assert!(a.reflections.captures_text_now());
    key(&mut a, KeyCode::Esc);
    assert!(!a.reflections.captures_text_now());
    // changed: Esc asks; n keeps editing, y discards
    key(&mut a, KeyCode::Char('e'));
    typed(&mut a, "x");
    key(&mut a, KeyCode::Esc);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Discard your changes to this item?"), "{s}");
    key(&mut a, KeyCode::Char('n'));
    assert!(a.reflections.captures_text_now(), "still editing");
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('y'));
    assert!(!a.reflections.captures_text_now());
    assert!(a.reflections.edits.is_empty(), "nothing kept");
    // `c` on the first item ticks every undecided item of its class
    let p = a.reflections.proposals[0].clone();
    let class = p.items[0].class.clone();
    let same = p
        .items
        .iter()
        .filter(|i| i.class == class && i.status == "pending")
        .count();
    assert!(same >= 2, "a class with several items: {class}");
    key(&mut a, KeyCode::Char('c'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains(&format!("— {same} ticked")), "{s}");
    key(&mut a, KeyCode::Char('c'));
    assert!(screen(&mut a, 120, 36).contains("— 0 ticked"));
    // `/merge` shows only the merges
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "merge");
    key(&mut a, KeyCode::Enter);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("/ merge (Esc clears)"), "{s}");
    assert!(s.contains("Tom Ruiz"), "{s}");
    assert!(!s.contains("Vinyl records"), "{s}");
    // the item's KIP reads with its values, not its placeholders
    assert!(
        s.contains("?dup {type: \"Person\", name: \"Tom Ruiz\"}"),
        "{s}"
    );
    assert!(!s.contains(":duplicate_name"), "{s}");
    insta::assert_snapshot!("reflections_filtered", s);
    // Space ticks within the filtered list; approving asks about that item
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Merge"), "{s}");
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Esc);
    assert!(screen(&mut a, 120, 36).contains("Vinyl records"));
}

/// A sub-agent's staged write in Reflections: its source, its reason, its
/// KIP with values and what it would change; approving it applies exactly
/// that.
#[test]
fn a_subagents_proposal_is_reviewed_and_approved_in_reflections() {
    let mut a = app();
    let staged = a.with_nexus(|nx| {
        let mut req = somnus::protocol::Request::command(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} SET PROPOSITIONS { (\"works_on\", {type: \"Project\", name: \"Atlas\"}) } } }",
        );
        req.args.parameters.insert("n".into(), serde_json::json!("Ines Duarte"));
        req.args.reason = Some("introduced herself at the Atlas kickoff".into());
        let who = somnus::store::keys::Identity {
            name: "scout".into(),
            role: somnus::store::keys::Role::Subagent,
        };
        somnus::server::gate::stage(nx, &req, &who).to_json()
    });
    assert_eq!(
        staged["result"]["staged"],
        serde_json::json!(true),
        "{staged}"
    );
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Sub-agent scout"), "{s}");
    assert!(s.contains("introduced herself at the Atlas kickoff"), "{s}");
    assert!(s.contains("name: \"Ines Duarte\""), "{s}");
    insta::assert_snapshot!("reflections_subagent", s);
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Apply"), "{s}");
    key(&mut a, KeyCode::Char('y'));
    let n = a.with_nexus(|nx| {
        nx.execute(&somnus::Request::readonly(
            "FIND(COUNT(?o)) WHERE { ?p {type: \"Person\"} FILTER(?p.name == \"Ines Duarte\") (?p, \"works_on\", ?o) }",
        ))
        .to_json()["result"]
            .clone()
    });
    assert_eq!(n, serde_json::json!(1));
}

#[test]
fn conflicting_subagent_writes_are_marked_in_reflections() {
    let mut a = app();
    a.with_nexus(|nx| {
        for (who, r) in [("researcher", "vendor"), ("scheduler", "client")] {
            let mut req = somnus::protocol::Request::command(
                "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Ines Duarte\"} SET ATTRIBUTES { role: :r } } }",
            );
            req.args.parameters.insert("r".into(), serde_json::json!(r));
            let id = somnus::store::keys::Identity {
                name: who.into(),
                role: somnus::store::keys::Role::Subagent,
            };
            somnus::server::gate::stage(nx, &req, &id);
        }
    });
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("⚠ conflicts with #"), "{s}");
}

pub(super) fn stage_role(a: &mut App, who: &str, role: &str) {
    a.with_nexus(|nx| {
        let mut req = somnus::protocol::Request::command(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Ines Duarte\"} SET ATTRIBUTES { role: :r } } }",
        );
        req.args.parameters.insert("r".into(), serde_json::json!(role));
        let id = somnus::store::keys::Identity {
            name: who.into(),
            role: somnus::store::keys::Role::Subagent,
        };
        somnus::server::gate::stage(nx, &req, &id);
    });
}

pub(super) fn role_of_ines(a: &mut App) -> serde_json::Value {
    a.with_nexus(|nx| {
        nx.execute(&somnus::Request::readonly(
            r#"FIND(?p.attributes.role) WHERE { ?p {type: "Person", name: "Ines Duarte"} }"#,
        ))
        .to_json()["result"]
            .clone()
    })
}

/// W4 in the console: two sub-agents give Ines Duarte two roles. After the
/// first is approved, approving the second is refused with what changed,
/// the item is shown again with what it does now (an update of the role
/// the first set), and approving that applies it.
#[test]
fn a_stale_preview_is_shown_again_before_it_applies() {
    let mut a = app();
    stage_role(&mut a, "researcher", "vendor");
    stage_role(&mut a, "scheduler", "client");
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    // the newest first: the scheduler's "client"
    assert_eq!(a.reflections.proposals[0].actor, "scheduler");
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(role_of_ines(&mut a), serde_json::json!(["client"]));
    // the researcher's "vendor", previewed as an insert
    key(&mut a, KeyCode::Tab);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Tab);
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("insert Person: Ines Duarte"), "{s}");
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(
        role_of_ines(&mut a),
        serde_json::json!(["client"]),
        "nothing applied unseen"
    );
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("refused, nothing changed"), "{s}");
    assert!(
        s.contains("Person: Ines Duarte was created by operator"),
        "{s}"
    );
    assert!(s.contains("from scheduler)"), "{s}");
    assert!(s.contains("update Person: Ines Duarte"), "{s}");
    assert!(s.contains("what it does now"), "{s}");
    assert!(
        s.contains("\"client\""),
        "the role it replaces is shown: {s}"
    );
    insta::assert_snapshot!("reflections_shown_again", s);
    key(&mut a, KeyCode::Char('a'));
    key(&mut a, KeyCode::Char('y'));
    assert_eq!(role_of_ines(&mut a), serde_json::json!(["vendor"]));
}

/// Reflections keeps its cursor on the proposal and item it was on, by id:
/// a sub-agent's proposal arriving at the top of the list does not move the
/// highlight to another proposal.
#[test]
fn the_reflections_cursor_stays_on_its_item_when_proposals_arrive() {
    let mut a = app();
    stage_role(&mut a, "researcher", "vendor");
    a.with_nexus(|nx| {
        somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut somnus::sleep::Heuristic,
            None,
            None,
        )
        .expect("cycle");
    });
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    // on the cycle's proposal, third item
    let cycle = a.reflections.proposals[0].id;
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    let seq = a.reflections.proposals[0].items[2].seq;
    stage_role(&mut a, "scheduler", "client");
    key(&mut a, KeyCode::Char('r'));
    assert_ne!(
        a.reflections.proposals[0].id, cycle,
        "the new one is listed first"
    );
    let s = screen(&mut a, 120, 36);
    let title = a
        .reflections
        .proposals
        .iter()
        .find(|p| p.id == cycle)
        .and_then(|p| p.items.iter().find(|i| i.seq == seq))
        .map(|i| i.title.clone())
        .expect("the item");
    let head: String = title.chars().take(30).collect();
    assert!(s.contains(&format!("#{cycle} Reflection")), "{s}");
    assert!(s.lines().any(|l| l.contains("item ─")), "{s}");
    // the item panel shows the same item
    let detail = s.split("item ─").nth(1).unwrap_or("");
    assert!(detail.contains(&head), "{head} not in {detail}");
}

/// A pending item says which of the agents' recent reads it would answer
/// differently: weighed in the background when the item is shown.
#[test]
fn reflections_show_which_recent_reads_an_item_changes() {
    let mut a = app();
    a.with_nexus(|nx| {
        let mut r = somnus::sleep::Heuristic;
        somnus::sleep::run(
            nx,
            &somnus::sleep::Options::new(somnus::sleep::Scope::Full, "2026-11-20T03:00:00Z"),
            &mut r,
            None,
            None,
        )
        .expect("cycle");
        // an agent asked for the JS topic an hour ago
        let at = (chrono::Utc::now() - chrono::Duration::hours(1))
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        nx.record_reads(&[somnus::audit::reads::Logged {
            at,
            caller: "scout".into(),
            channel: "http".into(),
            served: somnus::audit::reads::Served {
                kind: "FIND".into(),
                command: r#"FIND(?t.name) WHERE { ?t {type: "Topic"} FILTER(?t.name == "JS") }"#
                    .into(),
                parameters: serde_json::json!({}),
                elements: vec![],
                rows: 1,
                micros: 40,
                error: None,
                dry_run: false,
            },
        }])
        .expect("logged");
    });
    alt(&mut a, '4');
    let items = a.reflections.proposals[0].items.clone();
    let js = items
        .iter()
        .position(|i| i.title.contains(r#"Merge Topic "JS""#))
        .expect("JS merge");
    for _ in 0..js {
        key(&mut a, KeyCode::Down);
    }
    let shown = masked(screen(&mut a, 120, 36));
    assert!(
        shown.contains("recall changes the answer to 1 of scout's recent reads"),
        "{shown}"
    );
    insta::assert_snapshot!("reflections_impact", shown);
    // another item, whose answer it does not change
    key(&mut a, KeyCode::Down);
    let other = masked(screen(&mut a, 120, 36));
    assert!(
        other.contains("changes none of the 1 recent reads weighed"),
        "{other}"
    );
}

/// At 80 columns the Conflicts pane puts the two facts one above the
/// other, never side by side with their words run together, and a line
/// too long for its column ends in `…`.
#[test]
fn conflicts_at_80_columns_keep_the_two_facts_apart() {
    let mut a = app();
    alt(&mut a, '6');
    key(&mut a, KeyCode::Char('s'));
    alt(&mut a, '5');
    assert_eq!(a.tab, Tab::Conflicts);
    let s = screen(&mut a, 80, 30);
    let older = s.lines().position(|l| l.contains("││older"));
    let newer = s.lines().position(|l| l.contains("││newer"));
    if let (Some(o), Some(n)) = (older, newer) {
        assert!(n > o, "the newer fact below the older one:\n{s}");
    } else {
        panic!("no contradiction shown:\n{s}");
    }
    let wide = screen(&mut a, 200, 40);
    let row = wide
        .lines()
        .find(|l| l.contains("older") && l.contains("newer"))
        .expect("side by side when wide");
    assert!(row.contains(" │ "), "a gap between the two facts:\n{wide}");
}

/// Items that disagree are marked in the proposal and item lists, and the
/// approve confirmation names the conflict before anything applies.
#[test]
fn conflicts_are_marked_in_the_lists_and_named_before_approving() {
    let mut a = app();
    stage_role(&mut a, "researcher", "vendor");
    stage_role(&mut a, "scheduler", "client");
    alt(&mut a, '4');
    key(&mut a, KeyCode::Char('r'));
    let s = screen(&mut a, 120, 36);
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("│#2 ") || l.contains("│#1 "))
        .collect();
    assert!(
        rows.len() >= 2 && rows.iter().take(2).all(|r| r.contains("⚠ ")),
        "{s}"
    );
    assert!(
        s.contains("[ ] ○⚠") || s.lines().any(|l| l.contains("[ ]") && l.contains('⚠')),
        "{s}"
    );
    key(&mut a, KeyCode::Char('a'));
    let s = screen(&mut a, 120, 36);
    assert!(s.contains("Conflicts:"), "{s}");
    assert!(s.contains("⚠ item 1:"), "{s}");
    assert!(s.contains("vendor") && s.contains("client"), "{s}");
    key(&mut a, KeyCode::Esc);
}
