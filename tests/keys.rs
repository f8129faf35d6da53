//! Callers' keys and what their roles allow, below the servers: names,
//! digests, revocation, a sub-agent's staged writes and its policy.

use serde_json::json;
use somnus::protocol::Request;
use somnus::server::gate;
use somnus::store::keys::{self, Identity, Role};

fn scout() -> Identity {
    Identity {
        name: "scout".into(),
        role: Role::Subagent,
    }
}

#[test]
fn keys_are_named_digested_unique_and_revocable() {
    let nx = somnus::demo::in_memory().expect("demo");
    let c = nx.connection_for_checks().expect("a SQLite memory");
    let k = keys::add(c, "scout", Role::Subagent, "test").expect("add");
    assert!(k.starts_with("smk_") && k.len() > 40, "{k}");
    // only the digest is kept
    let stored: String = c
        .query_row(
            "SELECT digest FROM api_keys WHERE name = 'scout'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_ne!(stored, k);
    assert_eq!(keys::lookup(c, &k).expect("lookup"), Some(scout()));
    assert_eq!(keys::lookup(c, "smk_other").expect("lookup"), None);
    // names: unique, never reserved, never odd
    for bad in [
        "scout", "operator", "$self", "$system", "Operator", "", "a b", "x\ny",
    ] {
        assert!(keys::add(c, bad, Role::Agent, "test").is_err(), "{bad:?}");
    }
    // revoked: refused at once, and the name stays taken
    keys::revoke(c, "scout").expect("revoke");
    assert_eq!(keys::lookup(c, &k).expect("lookup"), None);
    assert!(keys::revoke(c, "scout").is_err());
    assert!(keys::add(c, "scout", Role::Agent, "test").is_err());
    assert!(!keys::any_active(c).expect("any"));
}

#[test]
fn a_subagents_writes_wait_for_review_unless_its_policy_is_auto() {
    let mut nx = somnus::demo::in_memory().expect("demo");
    let write = |name: &str| {
        let mut r = Request::command("UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} } }");
        r.args.parameters.insert("n".into(), json!(name));
        r
    };
    let count = |nx: &mut somnus::Nexus, name: &str| {
        nx.execute(&Request::readonly(format!(
            "FIND(COUNT(?p)) WHERE {{ ?p {{type: \"Person\"}} FILTER(?p.name == \"{name}\") }}"
        )))
        .to_json()["result"]
            .clone()
    };
    assert!(gate::stages(&write("A"), &scout()));
    let r = gate::stage(&mut nx, &write("Staged One"), &scout()).to_json();
    assert_eq!(r["result"]["staged"], json!(true), "{r}");
    assert_eq!(r["result"]["status"], json!("pending"), "{r}");
    assert_eq!(count(&mut nx, "Staged One"), json!(0));
    // the same write again is not proposed twice
    let r = gate::stage(&mut nx, &write("Staged One"), &scout()).to_json();
    assert_eq!(r["result"]["staged"], json!(false), "{r}");
    assert!(
        r["result"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("already proposed"),
        "{r}"
    );
    // a batch: reads answer now, writes are staged into one proposal
    let mut batch = Request::command("x");
    batch.args.command = None;
    batch.args.commands = Some(vec![
        somnus::protocol::CommandItem::Text(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"B1\"} } }".into(),
        ),
        somnus::protocol::CommandItem::Text(
            "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }".into(),
        ),
        somnus::protocol::CommandItem::Text(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"B2\"} } }".into(),
        ),
    ]);
    let r = gate::stage(&mut nx, &batch, &scout()).to_json();
    let v = r["result"].as_array().expect("batch");
    assert_eq!(
        v[0]["result"]["proposal"], v[2]["result"]["proposal"],
        "{r}"
    );
    assert!(v[1]["result"].as_i64().is_some_and(|n| n > 0), "{r}");
    // auto: applied at once, still recorded as proposed and approved by policy
    somnus::review::proposals::set_policy(&nx, "subagent:scout", "auto", "test").expect("policy");
    let r = gate::stage(&mut nx, &write("Auto One"), &scout()).to_json();
    assert_eq!(r["result"]["status"], json!("applied"), "{r}");
    assert_eq!(count(&mut nx, "Auto One"), json!(1));
    let pid = r["result"]["proposal"].as_i64().expect("id");
    let p = somnus::review::proposals::get(&nx, pid)
        .expect("get")
        .expect("p");
    assert_eq!(p.actor, "scout");
    assert_eq!(p.items[0].decided_by.as_deref(), Some("policy"));
    // a policy for a name that can't be a key is refused
    assert!(somnus::review::proposals::set_policy(&nx, "subagent:$self", "auto", "t").is_err());
}

#[test]
fn disagreeing_pending_writes_are_marked_on_both() {
    let mut nx = somnus::demo::in_memory().expect("demo");
    let role = |who: &str, name: &str, role: &str| {
        let mut r = Request::command(
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} SET ATTRIBUTES { role: :r } } }",
        );
        r.args.parameters.insert("n".into(), json!(name));
        r.args.parameters.insert("r".into(), json!(role));
        (
            r,
            Identity {
                name: who.into(),
                role: Role::Subagent,
            },
        )
    };
    let (r1, a) = role("researcher", "Ines Duarte", "vendor");
    let first = gate::stage(&mut nx, &r1, &a).to_json();
    assert_eq!(first["result"]["conflicts"], json!([]), "{first}");
    let (r2, b) = role("scheduler", "Ines Duarte", "client");
    let second = gate::stage(&mut nx, &r2, &b).to_json();
    let notes = second["result"]["conflicts"].to_string();
    let p1 = first["result"]["proposal"].as_i64().expect("p1");
    assert!(
        notes.contains(&format!("conflicts with #{p1} item 1"))
            && notes.contains("attributes.role"),
        "{second}"
    );
    // and on the first, naming the second
    let p2 = second["result"]["proposal"].as_i64().expect("p2");
    let it = &somnus::review::proposals::items(&nx, p1).expect("items")[0];
    assert!(
        it.conflicts
            .iter()
            .any(|c| c.contains(&format!("#{p2} item 1"))),
        "{:?}",
        it.conflicts
    );
    // a write that changes what the memory holds says so
    let mut r3 = Request::command(
        "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Mira Chen\"} SET ATTRIBUTES { relationship_to_self: \"stranger\" } } }",
    );
    r3.args.reason = Some("misheard".into());
    let third = gate::stage(&mut nx, &r3, &a).to_json();
    assert!(
        third["result"]["conflicts"]
            .to_string()
            .contains("changes what the memory holds"),
        "{third}"
    );
}

#[test]
fn batch_gathers_an_hours_writes_and_an_agent_defers_or_approves_edited() {
    let mut nx = somnus::demo::in_memory().expect("demo");
    keys::add(
        nx.connection_for_checks().expect("a SQLite memory"),
        "scout",
        Role::Subagent,
        "t",
    )
    .expect("key");
    somnus::review::proposals::set_policy(&nx, "subagent:scout", "batch", "t").expect("batch");
    // batch is for sub-agents only
    assert!(somnus::review::proposals::set_policy(&nx, "merge", "batch", "t").is_err());
    let write = |name: &str| {
        let mut r = Request::command("UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} } }");
        r.args.parameters.insert("n".into(), json!(name));
        r
    };
    let a = gate::stage(&mut nx, &write("Batch One"), &scout()).to_json();
    let b = gate::stage(&mut nx, &write("Batch Two"), &scout()).to_json();
    let pid = a["result"]["proposal"].as_i64().expect("p");
    assert_eq!(b["result"]["proposal"], json!(pid), "{b}");
    assert_eq!(b["result"]["item"], json!(2), "{b}");
    let p = somnus::review::proposals::get(&nx, pid)
        .expect("get")
        .expect("p");
    assert_eq!(p.title, "Sub-agent scout: 2 writes of the hour");
    let main = Identity {
        name: "main".into(),
        role: Role::Agent,
    };
    somnus::review::proposals::set_policy(&nx, "agents_decide", "auto", "t").expect("policy");
    // defer: still pending, with a note
    let d = gate::decide(
        &mut nx,
        &main,
        &json!({"proposal": pid, "decision": "defer", "reason": "ask the user"}),
    )
    .expect("defer");
    assert_eq!(d["deferred"], json!(true));
    let p = somnus::review::proposals::get(&nx, pid)
        .expect("get")
        .expect("p");
    assert_eq!(p.status, "pending");
    assert_eq!(
        p.reason.as_deref(),
        Some("deferred by `main`: ask the user")
    );
    // approve item 2 edited: the edit is what is written
    let r = gate::decide(
        &mut nx,
        &main,
        &json!({"proposal": pid, "decision": "approve", "items": [2],
                "edits": {"2": "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Batch Two (edited)\"} } }"}}),
    )
    .expect("approve");
    assert_eq!(r["applied"], json!([2]), "{r}");
    let n = nx
        .execute(&Request::readonly(
            "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} FILTER(?p.name == \"Batch Two (edited)\") }",
        ))
        .to_json();
    assert_eq!(n["result"], json!(1), "{n}");
    // a new batch opens once the first has a decision
    let c = gate::stage(&mut nx, &write("Batch Three"), &scout()).to_json();
    assert_ne!(c["result"]["proposal"], json!(pid), "{c}");
}

#[test]
fn two_values_of_a_single_valued_link_are_marked_on_both() {
    let mut nx = somnus::demo::in_memory().expect("demo");
    let works_at = |who: &str, person: &str, org: &str| {
        let mut r = Request::command(
            "UPSERT { CONCEPT ?o { {type: \"Organization\", name: :org} } CONCEPT ?p { {type: \"Person\", name: :n} SET PROPOSITIONS { (\"works_at\", ?o) } } }",
        );
        r.args.parameters.insert("n".into(), json!(person));
        r.args.parameters.insert("org".into(), json!(org));
        (
            r,
            Identity {
                name: who.into(),
                role: Role::Subagent,
            },
        )
    };
    // a new person: two sub-agents say two employers
    let (r1, a) = works_at("researcher", "Ines Duarte", "Northwind");
    let first = gate::stage(&mut nx, &r1, &a).to_json();
    let (r2, b) = works_at("scheduler", "Ines Duarte", "Acme Labs");
    let second = gate::stage(&mut nx, &r2, &b).to_json();
    let notes = second["result"]["conflicts"].to_string();
    assert!(notes.contains("Person: Ines Duarte works_at"), "{second}");
    assert!(
        notes.contains("Acme Labs") && notes.contains("Northwind"),
        "{second}"
    );
    let p1 = first["result"]["proposal"].as_i64().expect("p1");
    let it = &somnus::review::proposals::items(&nx, p1).expect("items")[0];
    assert!(!it.conflicts.is_empty(), "marked on the first too");
    // and against the memory: Mira works at Northwind
    let (r3, c) = works_at("researcher", "Mira Chen", "Acme Labs");
    let third = gate::stage(&mut nx, &r3, &c).to_json();
    assert!(
        third["result"]["conflicts"]
            .to_string()
            .contains("Person: Mira Chen works_at is Organization: Northwind"),
        "{third}"
    );
}
