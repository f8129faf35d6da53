//! Every mutation is attributable and reversible: the audit trail records
//! who, why and the before/after images, and rollback restores the graph.

use serde_json::Value;
use somnus::Nexus;
use somnus::audit::{Filter, Who};
use somnus::protocol::{Actor, Request};

fn kip_as(nx: &mut Nexus, actor: &str, cmd: &str) -> Value {
    let mut r = Request::command(cmd);
    r.actor = Actor {
        id: actor.into(),
        trigger: "test".into(),
        reason: Some("because".into()),
    };
    nx.execute(&r).to_json()
}

fn snapshot(nx: &mut Nexus) -> Value {
    let r = kip_as(
        nx,
        "agent",
        r#"EXPORT ?x WHERE { ?x {type: "Drug"} UNION { ?x {type: "Symptom"} } UNION { ?x (?s, "treats", ?o) } UNION { ?x (?s, "about", ?o) } } LIMIT 1000"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    r["result"]["capsule"].clone()
}

fn memory() -> Nexus {
    let mut nx = Nexus::open_in_memory().expect("open");
    for c in [
        r#"UPSERT { CONCEPT ?a { {type: "$ConceptType", name: "Drug"} } CONCEPT ?b { {type: "$ConceptType", name: "Symptom"} } CONCEPT ?c { {type: "$PropositionType", name: "treats"} } CONCEPT ?d { {type: "$PropositionType", name: "about"} } }"#,
        r#"UPSERT { CONCEPT ?h { {type: "Symptom", name: "Headache"} } CONCEPT ?f { {type: "Symptom", name: "Fever"} }
           CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk: 2, aliases: ["ASA"] } SET PROPOSITIONS { ("treats", ?h) ("treats", ?f) } }
           CONCEPT ?x { {type: "Drug", name: "Acetylsalicylic acid"} SET ATTRIBUTES { origin: "willow" } SET PROPOSITIONS { ("treats", ?h) } } }"#,
        r#"UPSERT { PROPOSITION ?p { ({type: "Drug", name: "Acetylsalicylic acid"}, "about", ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Fever"})) } }"#,
    ] {
        let r = kip_as(&mut nx, "setup", c);
        assert!(r.get("error").is_none(), "{r}");
    }
    nx
}

fn last_entry(nx: &Nexus) -> somnus::audit::Entry {
    nx.audit_list(&Filter {
        limit: 1,
        ..Default::default()
    })
    .expect("list")
    .remove(0)
}

fn operator() -> Who {
    Who {
        actor: "operator".into(),
        trigger: "test".into(),
        reason: Some("undo".into()),
    }
}

#[test]
fn every_write_is_recorded_with_who_why_and_images() {
    let mut nx = memory();
    let r = kip_as(
        &mut nx,
        "agent-7",
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk: 3 } } }"#,
    );
    assert!(r.get("error").is_none());
    let e = last_entry(&nx);
    assert_eq!(
        (
            e.actor.as_str(),
            e.trigger.as_str(),
            e.reason.as_deref(),
            e.kind.as_str()
        ),
        ("agent-7", "test", Some("because"), "UPSERT")
    );
    assert!(e.command.contains("risk: 3"));
    let (_, changes) = nx.audit_entry(e.id).expect("entry").expect("exists");
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].op, "update");
    assert_eq!(
        changes[0]
            .before
            .as_ref()
            .map(|b| b["attributes"]["risk"].clone()),
        Some(Value::from(2))
    );
    assert_eq!(
        changes[0]
            .after
            .as_ref()
            .map(|b| b["attributes"]["risk"].clone()),
        Some(Value::from(3))
    );

    // a failed write leaves no entry, and reads leave none either
    let before = last_entry(&nx).id;
    let r = kip_as(
        &mut nx,
        "agent-7",
        r#"UPSERT { CONCEPT ?a { {type: "Nope", name: "x"} } }"#,
    );
    assert!(r.get("error").is_some());
    kip_as(
        &mut nx,
        "agent-7",
        r#"FIND(?d) WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!(last_entry(&nx).id, before);
    // the bootstrap itself is attributed to $system
    let boot = nx
        .audit_list(&Filter {
            kind: Some("BOOTSTRAP".into()),
            limit: 5,
            ..Default::default()
        })
        .expect("list");
    assert_eq!(boot.len(), 1);
    assert_eq!(boot[0].actor, "$system");
}

#[test]
fn rolling_back_delete_merge_update_restores_the_export_exactly() {
    for cmd in [
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
        r#"MERGE CONCEPT ?s INTO ?t WHERE { ?s {type: "Drug", name: "Acetylsalicylic acid"} ?t {type: "Drug", name: "Aspirin"} }"#,
        r#"UPDATE ?l SET METADATA { confidence: 0.1 } WHERE { ?l (?s, "treats", ?o) }"#,
        r#"DELETE PROPOSITIONS ?l WHERE { ?l (?s, "treats", {type: "Symptom", name: "Fever"}) }"#,
        r#"UPSERT { CONCEPT ?n { {type: "Drug", name: "Naproxen"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Fever"}) } } }"#,
    ] {
        let mut nx = memory();
        let before = snapshot(&mut nx);
        let r = kip_as(&mut nx, "agent", cmd);
        assert!(r.get("error").is_none(), "{cmd}: {r}");
        let changed = snapshot(&mut nx);
        assert_ne!(changed, before, "{cmd} changed nothing");
        let e = last_entry(&nx);
        let undo = nx.rollback(e.id, &operator()).expect("rollback");
        assert_eq!(snapshot(&mut nx), before, "rollback of {cmd}");
        // the rollback is itself an entry, and undoing it redoes the change
        let u = nx.audit_entry(undo).expect("entry").expect("exists").0;
        assert_eq!(
            (u.kind.as_str(), u.rolls_back, u.actor.as_str()),
            ("ROLLBACK", Some(e.id), "operator")
        );
        nx.rollback(undo, &operator()).expect("redo");
        assert_eq!(snapshot(&mut nx), changed, "redo of {cmd}");
    }
}

#[test]
fn rollback_refuses_when_a_later_change_depends_on_it() {
    let mut nx = memory();
    kip_as(
        &mut nx,
        "a",
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk: 5 } } }"#,
    );
    let first = last_entry(&nx).id;
    kip_as(
        &mut nx,
        "b",
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk: 7 } } }"#,
    );
    let second = last_entry(&nx).id;
    let err = nx.rollback(first, &operator()).expect_err("must refuse");
    assert_eq!(err.code.code(), "KIP_3005");
    assert!(
        err.message.contains(&format!("#{second}")),
        "{}",
        err.message
    );
    nx.rollback(second, &operator()).expect("newest first");
    nx.rollback(first, &operator()).expect("then the older one");
    let r = kip_as(
        &mut nx,
        "x",
        r#"FIND(?a.attributes.risk) WHERE { ?a {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(r["result"], serde_json::json!([2]));
    assert!(
        nx.rollback(first, &operator()).is_err(),
        "an entry rolls back once"
    );
}

#[test]
fn why_explains_a_deleted_element() {
    let mut nx = memory();
    let r = kip_as(
        &mut nx,
        "x",
        r#"FIND(?d.id) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let id = r["result"][0].as_str().expect("id").to_string();
    kip_as(
        &mut nx,
        "sleep-cycle",
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let h = nx.element_history(&id).expect("history");
    let (e, c) = &h[0];
    assert_eq!((e.actor.as_str(), c.op.as_str()), ("sleep-cycle", "delete"));
    assert_eq!(
        c.before.as_ref().map(|b| b["name"].clone()),
        Some(Value::from("Aspirin"))
    );
    assert_eq!(h.last().map(|(_, c)| c.op.as_str()), Some("insert"));
}

/// The names SEARCH finds for `term`.
fn found(nx: &mut Nexus, term: &str) -> Vec<String> {
    let r = kip_as(nx, "agent", &format!(r#"SEARCH CONCEPT "{term}" LIMIT 20"#));
    assert!(r.get("error").is_none(), "{r}");
    r["result"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn search_follows_every_write_path_including_groups_and_rollback() {
    let mut nx = memory();
    assert_eq!(found(&mut nx, "ASA"), ["Aspirin"]);
    // an alias added and one taken away
    let r = kip_as(
        &mut nx,
        "agent",
        r#"UPDATE ?d SET ATTRIBUTES { aliases: ["Bayer"] } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(found(&mut nx, "Bayer"), ["Aspirin"]);
    assert!(found(&mut nx, "ASA").is_empty());
    // a deleted concept is gone from the index; its rollback brings it back
    kip_as(
        &mut nx,
        "agent",
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert!(found(&mut nx, "Bayer").is_empty());
    let deleted = last_entry(&nx).id;
    nx.rollback(deleted, &operator()).expect("rollback");
    assert_eq!(found(&mut nx, "Bayer"), ["Aspirin"]);
    // inside one group, a later command finds what an earlier one wrote,
    // and a failed group leaves no trace in the index
    let seen = nx
        .atomically("test", |nx| {
            let r = nx.kip(r#"UPSERT { CONCEPT ?w { {type: "Drug", name: "Willowbark"} } }"#);
            assert!(matches!(r, somnus::protocol::Outcome::Ok { .. }));
            Ok(found(nx, "Willowbark"))
        })
        .expect("group");
    assert_eq!(seen, ["Willowbark"]);
    let failed: Result<(), _> = nx.atomically("test", |nx| {
        nx.kip(r#"UPSERT { CONCEPT ?w { {type: "Drug", name: "Meadowsweet"} } }"#);
        assert_eq!(found(nx, "Meadowsweet"), ["Meadowsweet"]);
        Err(somnus::kip::KipError::internal("abandon"))
    });
    assert!(failed.is_err());
    assert!(found(&mut nx, "Meadowsweet").is_empty());
    assert_eq!(found(&mut nx, "Willowbark"), ["Willowbark"]);
}
